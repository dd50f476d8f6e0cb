//! A set of URLs kept as 128-bit fingerprints, in RAM, and ([`RecentUrls`],
//! bounded) a shard's memory of URLs already routed to peers.
//!
//! Nine in ten links a crawl finds are already known, so "seen?" is the
//! hottest lookup of a shard. Keeping the URL strings made each hit a hash,
//! a pointer chase to the heap copy and a byte comparison, and cost a copy
//! of every URL; a fingerprint is 16 bytes inline, compared in one step.
//!
//! The fingerprint is two 64-bit foldhash values of the URL. They are not
//! independently keyed: foldhash's `RandomState` has a 64-bit per-hasher
//! seed (the stack address mixed with a per-thread counter), different for
//! each half and each set, over one process-wide shared seed (from address
//! space layout and the time at start) that both halves use. For URLs
//! nobody chose to collide, a collision among n URLs is about as likely as
//! n² / 2¹²⁹ (under 10⁻²⁰ at a billion) if the halves behave as
//! independent, which their different seeds make plausible but nothing
//! proves. Against a site that aims URLs at a collision it is no defence:
//! foldhash is not a keyed PRF and says it does not resist interactive
//! attackers. Either way a collision only makes the crawler skip one URL as
//! already seen. Not for anything that needs the URLs back.

use std::hash::{BuildHasher, BuildHasherDefault, Hasher};

use foldhash::fast::RandomState;

/// URLs seen, as fingerprints.
pub(crate) struct UrlSet {
    /// Seeds of the two halves of the fingerprint (per-set seeds over
    /// foldhash's process-wide shared seed).
    high: RandomState,
    low: RandomState,
    fingerprints: std::collections::HashSet<u128, BuildHasherDefault<LowBits>>,
}

impl UrlSet {
    pub(crate) fn new() -> Self {
        UrlSet {
            high: RandomState::default(),
            low: RandomState::default(),
            fingerprints: Default::default(),
        }
    }

    fn fingerprint(&self, url: &str) -> u128 {
        (u128::from(self.high.hash_one(url)) << 64) | u128::from(self.low.hash_one(url))
    }

    pub(crate) fn contains(&self, url: &str) -> bool {
        self.fingerprints.contains(&self.fingerprint(url))
    }

    /// Adds `url`; false if it was already there.
    pub(crate) fn insert(&mut self, url: &str) -> bool {
        self.fingerprints.insert(self.fingerprint(url))
    }

    pub(crate) fn len(&self) -> usize {
        self.fingerprints.len()
    }

    /// Forgets every URL, keeping the table's memory.
    pub(crate) fn clear(&mut self) {
        self.fingerprints.clear();
    }
}

impl Default for UrlSet {
    fn default() -> Self {
        UrlSet::new()
    }
}

/// URLs met lately, as fingerprints in two generations of at most
/// `capacity` each: when the newer fills up, the older is forgotten as a
/// whole. A cache, not a seen-set: a URL it forgot is only asked about
/// again.
///
/// Each table grows once, in its first generation (so a small crawl pays
/// only for what it routes), and is reused from then on: the one forgotten
/// is cleared and becomes the newer. A fresh table each generation (as
/// this did) grew by doubling every time: `perf probe` on malloc counted
/// 804 MiB allocated by this set's resizes in a 3M-page crawl, up to 4.3
/// MiB each, all of it churn through the allocator.
pub(crate) struct RecentUrls {
    current: UrlSet,
    previous: UrlSet,
    capacity: usize,
}

impl RecentUrls {
    /// At most `2 × capacity` URLs remembered.
    pub(crate) fn new(capacity: usize) -> Self {
        RecentUrls {
            current: UrlSet::new(),
            previous: UrlSet::new(),
            capacity: capacity.max(1),
        }
    }

    pub(crate) fn contains(&self, url: &str) -> bool {
        self.current.contains(url) || self.previous.contains(url)
    }

    /// Adds `url`; false if it was remembered already.
    pub(crate) fn insert(&mut self, url: &str) -> bool {
        if self.previous.contains(url) {
            return false;
        }
        if self.current.len() >= self.capacity && !self.current.contains(url) {
            std::mem::swap(&mut self.current, &mut self.previous);
            self.current.clear();
        }
        self.current.insert(url)
    }

    /// URLs remembered now.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.current.len() + self.previous.len()
    }

    /// URLs the two tables hold without reallocating.
    #[cfg(test)]
    fn room(&self) -> usize {
        self.current.fingerprints.capacity() + self.previous.fingerprints.capacity()
    }
}

/// The table's hash of a fingerprint: its low 64 bits, already a seeded
/// hash, so hashing them again would only cost time.
#[derive(Default)]
pub(crate) struct LowBits(u64);

impl Hasher for LowBits {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only u128 keys are hashed (through write_u128); kept total anyway.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u128(&mut self, n: u128) {
        self.0 = n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserted_urls_are_seen_and_others_are_not() {
        let mut set = UrlSet::new();
        assert_eq!(set.len(), 0);
        assert!(set.insert("http://a.test/"));
        assert!(
            !set.insert("http://a.test/"),
            "second insert reports a duplicate"
        );
        assert!(set.contains("http://a.test/"));
        assert!(!set.contains("http://a.test"));
        assert!(!set.contains("http://b.test/"));
        assert_eq!(set.len(), 1);
    }

    #[test]
    fn a_hundred_thousand_urls_stay_distinct() {
        let mut set = UrlSet::new();
        for i in 0..100_000 {
            assert!(set.insert(&format!("http://site.test/p/{i}.html")));
        }
        assert_eq!(set.len(), 100_000);
        for i in 0..100_000 {
            assert!(set.contains(&format!("http://site.test/p/{i}.html")));
            assert!(!set.contains(&format!("http://site.test/q/{i}.html")));
        }
    }

    #[test]
    fn recent_urls_remember_at_most_two_generations_and_forget_the_older_whole() {
        let mut recent = RecentUrls::new(1_000);
        for i in 0..1_000 {
            assert!(recent.insert(&format!("http://a.test/{i}")));
        }
        assert!(!recent.insert("http://a.test/0"), "remembered");
        for i in 0..1_000 {
            assert!(recent.insert(&format!("http://b.test/{i}")));
        }
        assert!(
            recent.contains("http://a.test/999"),
            "the older generation is still asked"
        );
        assert!(recent.contains("http://b.test/999"));
        assert_eq!(recent.len(), 2_000);
        for i in 0..1_000 {
            recent.insert(&format!("http://c.test/{i}"));
        }
        assert!(!recent.contains("http://a.test/5"), "forgotten as a whole");
        assert!(recent.contains("http://b.test/5"));
        assert!(recent.len() <= 2_000);
    }

    #[test]
    fn recent_urls_keep_their_two_tables_across_generations() {
        let mut recent = RecentUrls::new(1_000);
        assert_eq!(recent.room(), 0, "nothing allocated before the first URL");
        for i in 0..2_001 {
            recent.insert(&format!("http://a.test/{i}"));
        }
        let room = recent.room();
        assert!(
            room >= 2_000,
            "both tables grown in their first generation: {room}"
        );
        for i in 2_001..20_000 {
            recent.insert(&format!("http://a.test/{i}"));
        }
        assert_eq!(
            recent.room(),
            room,
            "eighteen generations more, no new table"
        );
        assert!(recent.contains("http://a.test/19999"));
        assert!(recent.len() <= 2_000);
    }

    #[test]
    fn sets_draw_their_own_keys_and_halves_differ() {
        let (a, b) = (UrlSet::new(), UrlSet::new());
        assert_ne!(
            a.fingerprint("http://a.test/"),
            b.fingerprint("http://a.test/")
        );
        let f = a.fingerprint("http://a.test/");
        assert_ne!(f >> 64, f & u128::from(u64::MAX), "two keys, not one twice");
    }
}
