//! The resolver's cache: each name's answer (its addresses in the order to
//! try, or why it has none) until the answer expires, bounded both by the
//! number of names and by an estimate of the bytes they hold.
//!
//! Pure: the caller passes the time and says when each answer expires (how
//! long an answer is kept is the resolver's rule, [`super`]). When a name
//! would push the cache past a bound, expired answers go first, then
//! arbitrary ones until a tenth of each bound is free, so eviction is
//! amortised over many inserts. The other family's addresses, come late
//! ([`super::lookup`]), are merged into a name's answer with
//! [`Cache::merge`].

use std::collections::HashMap;
use std::mem::size_of;
use std::net::IpAddr;
use std::time::Instant;

use super::addresses::{happy_order, Families};
use super::Answer;

/// Bytes counted for a name besides its text and its addresses or reason:
/// the map's slot (key, answer, expiry, control byte) and the shared
/// address list's header, rounded up for the allocator.
pub(super) const ENTRY_OVERHEAD: usize = 96;

/// Cached answers by canonical name.
pub(super) struct Cache {
    map: HashMap<String, Entry>,
    /// Sum of [`cost`] over the map.
    bytes: usize,
    max_entries: usize,
    max_bytes: usize,
}

struct Entry {
    answer: Answer,
    expires: Instant,
}

impl Cache {
    /// An empty cache of at most `max_entries` names and `max_bytes` bytes
    /// (each at least 1).
    pub(super) fn new(max_entries: usize, max_bytes: usize) -> Self {
        Cache {
            map: HashMap::new(),
            bytes: 0,
            max_entries: max_entries.max(1),
            max_bytes: max_bytes.max(1),
        }
    }

    /// `name`'s answer, if cached and not expired at `now`.
    pub(super) fn get(&self, name: &str, now: Instant) -> Option<Answer> {
        let entry = self.map.get(name)?;
        (now < entry.expires).then(|| entry.answer.clone())
    }

    /// Keeps `answer` for `name` until `expires`, in place of any answer
    /// cached for it. An answer bigger than the whole byte bound is not
    /// kept.
    pub(super) fn insert(&mut self, name: &str, answer: Answer, expires: Instant, now: Instant) {
        self.remove(name);
        let size = cost(name, &answer);
        if size > self.max_bytes {
            return;
        }
        if self.map.len() >= self.max_entries || self.bytes + size > self.max_bytes {
            self.evict(size, now);
        }
        self.bytes += size;
        self.map.insert(name.to_string(), Entry { answer, expires });
    }

    /// Adds `ips` (addresses of the family that answered late, never
    /// empty), valid until `expires`, to `name`'s answer: to its addresses
    /// (Happy Eyeballs order again; the merged answer expires when either
    /// part does), or in place of a failure or an expired answer (one
    /// family's failure never hides the other's addresses).
    pub(super) fn merge(&mut self, name: &str, ips: &[IpAddr], expires: Instant, now: Instant) {
        let merged = match self.map.get(name) {
            Some(Entry {
                answer: Ok(known),
                expires: known_expires,
            }) if now < *known_expires => {
                let all: Vec<IpAddr> = known.iter().chain(ips).copied().collect();
                happy_order(&all, Families::Both).map(|ips| (ips, expires.min(*known_expires)))
            }
            _ => happy_order(ips, Families::Both).map(|ips| (ips, expires)),
        };
        if let Some((ips, expires)) = merged {
            self.insert(name, Ok(ips), expires, now);
        }
    }

    /// Names cached (expired ones included until evicted).
    pub(super) fn len(&self) -> usize {
        self.map.len()
    }

    /// The estimated bytes the cached names hold.
    pub(super) fn bytes(&self) -> usize {
        self.bytes
    }

    fn remove(&mut self, name: &str) {
        if let Some((key, entry)) = self.map.remove_entry(name) {
            self.bytes -= cost(&key, &entry.answer);
        }
    }

    /// Makes room for one more name of `size` bytes: expired answers go,
    /// then, if a bound would still be passed, arbitrary ones until a
    /// tenth of each bound is free besides the new name.
    fn evict(&mut self, size: usize, now: Instant) {
        let mut freed = 0;
        self.map.retain(|name, e| {
            let keep = e.expires > now;
            if !keep {
                freed += cost(name, &e.answer);
            }
            keep
        });
        self.bytes -= freed;
        if self.map.len() < self.max_entries && self.bytes + size <= self.max_bytes {
            return;
        }
        let entries_goal = self.max_entries - self.max_entries.div_ceil(10);
        let bytes_goal = (self.max_bytes - self.max_bytes.div_ceil(10)).saturating_sub(size);
        let mut victims = Vec::new();
        let (mut entries, mut bytes) = (self.map.len(), self.bytes);
        for (name, e) in &self.map {
            if entries <= entries_goal && bytes <= bytes_goal {
                break;
            }
            entries -= 1;
            bytes -= cost(name, &e.answer);
            victims.push(name.clone());
        }
        for name in victims {
            self.remove(&name);
        }
    }
}

/// The bytes counted for `name`'s `answer`: an estimate of what the entry
/// holds on the heap.
pub(super) fn cost(name: &str, answer: &Answer) -> usize {
    let data = match answer {
        Ok(ips) => ips.len() * size_of::<IpAddr>(),
        Err(reason) => reason.len(),
    };
    ENTRY_OVERHEAD + name.len() + data
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn ips(list: &str) -> Answer {
        let v: Vec<IpAddr> = list.split(' ').map(|s| s.parse().unwrap()).collect();
        Ok(v.into())
    }

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    #[test]
    fn answers_live_until_they_expire() {
        let now = Instant::now();
        let mut c = Cache::new(10, 1 << 20);
        c.insert("a.test", ips("127.0.0.1"), now + secs(5), now);
        c.insert("gone.test", Err("NXDOMAIN".into()), now + secs(1), now);
        assert_eq!(c.get("a.test", now + secs(4)), Some(ips("127.0.0.1")));
        assert_eq!(c.get("a.test", now + secs(5)), None, "expired");
        assert_eq!(c.get("gone.test", now), Some(Err("NXDOMAIN".to_string())));
        assert_eq!(c.get("b.test", now), None);
        assert_eq!(
            c.bytes(),
            cost("a.test", &ips("127.0.0.1")) + cost("gone.test", &Err("NXDOMAIN".into()))
        );
        // A new answer for a name replaces the old one and its bytes.
        c.insert("a.test", ips("::1 127.0.0.1"), now + secs(5), now);
        assert_eq!(c.len(), 2);
        assert_eq!(
            c.bytes(),
            cost("a.test", &ips("::1 127.0.0.1")) + cost("gone.test", &Err("NXDOMAIN".into()))
        );
    }

    #[test]
    fn the_byte_bound_holds_whatever_the_names() {
        let now = Instant::now();
        let per_name = cost("h0000.test", &ips("127.0.0.1"));
        let bound = 50 * per_name;
        let mut c = Cache::new(1_000_000, bound);
        for i in 0..1000 {
            c.insert(
                &format!("h{i:04}.test"),
                ips("127.0.0.1"),
                now + secs(60),
                now,
            );
            assert!(c.bytes() <= bound, "{} > {bound}", c.bytes());
        }
        assert!(
            c.len() >= 40,
            "eviction frees a tenth, not all: {}",
            c.len()
        );
        assert!(c.get("h0999.test", now).is_some(), "the newest is kept");
        // The byte count stays the sum of what is there.
        let sum: usize = c.map.iter().map(|(n, e)| cost(n, &e.answer)).sum();
        assert_eq!(c.bytes(), sum);
        // An answer bigger than the bound is not kept.
        let huge: Vec<IpAddr> = (0..1000u32)
            .map(|i| IpAddr::from((0x0a00_0000 + i).to_be_bytes()))
            .collect();
        c.insert("huge.test", Ok(huge.into()), now + secs(60), now);
        assert_eq!(c.get("huge.test", now), None);
    }

    #[test]
    fn expired_answers_go_first_and_the_entry_bound_holds() {
        let now = Instant::now();
        let mut c = Cache::new(10, 1 << 20);
        for i in 0..5 {
            c.insert(&format!("old{i}"), ips("127.0.0.1"), now + secs(1), now);
        }
        for i in 0..5 {
            c.insert(&format!("new{i}"), ips("127.0.0.1"), now + secs(60), now);
        }
        let later = now + secs(2);
        c.insert("newest", ips("127.0.0.2"), later + secs(60), later);
        assert_eq!(c.len(), 6, "the expired ones went, no live one");
        for i in 0..5 {
            assert!(c.get(&format!("new{i}"), later).is_some());
        }
        for i in 0..100 {
            c.insert(
                &format!("more{i}"),
                ips("127.0.0.3"),
                later + secs(60),
                later,
            );
            assert!(c.len() <= 10);
        }
    }

    #[test]
    fn a_late_family_merges_in_or_replaces_a_failure() {
        let now = Instant::now();
        let mut c = Cache::new(10, 1 << 20);
        let late: Vec<IpAddr> = vec!["127.0.0.1".parse().unwrap()];
        c.insert("both.test", ips("::1 ::2"), now + secs(300), now);
        c.merge("both.test", &late, now + secs(60), now);
        assert_eq!(
            c.get("both.test", now),
            Some(ips("::1 127.0.0.1 ::2")),
            "families alternate again"
        );
        assert_eq!(
            c.get("both.test", now + secs(61)),
            None,
            "the sooner expiry"
        );
        c.insert("nx6.test", Err("NXDOMAIN".into()), now + secs(300), now);
        c.merge("nx6.test", &late, now + secs(60), now);
        assert_eq!(c.get("nx6.test", now), Some(ips("127.0.0.1")));
        c.merge("evicted.test", &late, now + secs(60), now);
        assert_eq!(c.get("evicted.test", now), Some(ips("127.0.0.1")));
        let sum: usize = c.map.iter().map(|(n, e)| cost(n, &e.answer)).sum();
        assert_eq!(c.bytes(), sum);
    }
}
