//! Which proxy a host goes through ([`Rotation`]): the one its host key
//! picks among the candidates, so a host keeps its proxy (and with it its
//! keep-alive connections and its politeness) while that proxy works. A
//! proxy that fails [`FAILS_TO_PARK`] times in a row (it cannot be
//! reached, its handshake fails, it refuses the credentials) is parked,
//! passed over for a back-off that doubles each time (1 s up to
//! [`MAX_PARK`]), and its hosts go through the next proxy meanwhile; one
//! exchange through it that works ends its record. When every candidate
//! is parked the host's own is used all the same.
//!
//! It also counts, for the report and the metrics, each proxy's
//! exchanges, failures and parkings ([`Tally`]), never reset.
//!
//! One per shard (a host's fetches all run on its shard). Pure: given the
//! time.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Proxy;

/// Failures in a row that park a proxy.
pub(super) const FAILS_TO_PARK: u32 = 3;
/// The longest a proxy is parked.
pub(super) const MAX_PARK: Duration = Duration::from_secs(300);

/// The proxies' health on one shard.
#[derive(Debug, Default)]
pub(crate) struct Rotation {
    health: Vec<(Arc<Proxy>, Health, Tally)>,
}

/// What one shard saw of one proxy over the crawl.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tally {
    /// Exchanges tried through it (each try, failed or not).
    pub fetches: u64,
    /// Of those, the ones that failed at the proxy.
    pub failures: u64,
    /// Times it was parked.
    pub parks: u64,
    /// Parked at the instant asked about.
    pub parked: bool,
}

#[derive(Debug, Default, Clone, Copy)]
struct Health {
    /// Failures since the last exchange that worked.
    failures: u32,
    /// Times parked since then.
    parks: u32,
    until: Option<Instant>,
}

impl Rotation {
    /// The proxy for `host` among `candidates` at `now` (None if there
    /// are none).
    pub(crate) fn pick(
        &self,
        candidates: &[Arc<Proxy>],
        host: &str,
        now: Instant,
    ) -> Option<Arc<Proxy>> {
        let n = candidates.len();
        if n == 0 {
            return None;
        }
        let own = (crate::keys::host_key(host) % n as u64) as usize;
        let usable = (0..n)
            .map(|k| (own + k) % n)
            .find(|&i| candidates.get(i).is_some_and(|p| !self.parked(p, now)));
        candidates.get(usable.unwrap_or(own)).cloned()
    }

    /// The first usable proxy among `candidates` after `current` (in
    /// their order, round), if one is not parked at `now`.
    pub(crate) fn other_than(
        &self,
        candidates: &[Arc<Proxy>],
        current: &Arc<Proxy>,
        now: Instant,
    ) -> Option<Arc<Proxy>> {
        let n = candidates.len();
        let at = candidates.iter().position(|p| Arc::ptr_eq(p, current))?;
        (1..n)
            .filter_map(|k| candidates.get((at + k) % n))
            .find(|p| !self.parked(p, now))
            .cloned()
    }

    /// The health and tally of `proxy`, new if it had none.
    fn entry(&mut self, proxy: &Arc<Proxy>) -> Option<(&mut Health, &mut Tally)> {
        let at = match self.health.iter().position(|(p, ..)| Arc::ptr_eq(p, proxy)) {
            Some(at) => at,
            None => {
                self.health
                    .push((proxy.clone(), Health::default(), Tally::default()));
                self.health.len() - 1
            }
        };
        self.health.get_mut(at).map(|(_, h, t)| (h, t))
    }

    /// An exchange through `proxy` failed at the proxy.
    pub(crate) fn failed(&mut self, proxy: &Arc<Proxy>, now: Instant) {
        let Some((health, tally)) = self.entry(proxy) else {
            return;
        };
        tally.fetches += 1;
        tally.failures += 1;
        health.failures += 1;
        if health.failures >= FAILS_TO_PARK {
            let park = Duration::from_secs(1u64 << health.parks.min(16)).min(MAX_PARK);
            health.until = Some(now + park);
            health.parks += 1;
            health.failures = 0;
            tally.parks += 1;
        }
    }

    /// An exchange through `proxy` worked.
    pub(crate) fn worked(&mut self, proxy: &Arc<Proxy>) {
        if let Some((health, tally)) = self.entry(proxy) {
            tally.fetches += 1;
            *health = Health::default();
        }
    }

    /// Whether `proxy` is passed over at `now`.
    pub(crate) fn parked(&self, proxy: &Arc<Proxy>, now: Instant) -> bool {
        self.health
            .iter()
            .find(|(p, ..)| Arc::ptr_eq(p, proxy))
            .and_then(|(_, h, _)| h.until)
            .is_some_and(|until| now < until)
    }

    /// The tally of `proxy` on this shard, and whether it is parked at
    /// `now` (zeros for a proxy no exchange went through).
    pub(crate) fn tally(&self, proxy: &Arc<Proxy>, now: Instant) -> Tally {
        let tally = self
            .health
            .iter()
            .find(|(p, ..)| Arc::ptr_eq(p, proxy))
            .map_or_else(Tally::default, |(_, _, t)| *t);
        Tally {
            parked: self.parked(proxy, now),
            ..tally
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proxies(n: usize) -> Vec<Arc<Proxy>> {
        (0..n)
            .map(|i| Arc::new(Proxy::parse(&format!("http://p{i}.test:3128")).unwrap()))
            .collect()
    }

    #[test]
    fn a_host_keeps_its_proxy_and_hosts_spread_over_all() {
        let list = proxies(4);
        let r = Rotation::default();
        let now = Instant::now();
        let first = r.pick(&list, "a.test", now).unwrap();
        for _ in 0..10 {
            assert!(Arc::ptr_eq(&r.pick(&list, "a.test", now).unwrap(), &first));
        }
        let used: std::collections::HashSet<String> = (0..200)
            .map(|i| {
                r.pick(&list, &format!("h{i}.test"), now)
                    .unwrap()
                    .host()
                    .to_string()
            })
            .collect();
        assert_eq!(used.len(), 4);
        assert!(r.pick(&[], "a.test", now).is_none());
    }

    #[test]
    fn a_proxy_that_keeps_failing_is_passed_over_then_comes_back() {
        let list = proxies(2);
        let mut r = Rotation::default();
        let now = Instant::now();
        let own = r.pick(&list, "a.test", now).unwrap();
        for _ in 0..FAILS_TO_PARK - 1 {
            r.failed(&own, now);
        }
        assert!(Arc::ptr_eq(&r.pick(&list, "a.test", now).unwrap(), &own));
        r.failed(&own, now);
        let other = r.pick(&list, "a.test", now).unwrap();
        assert!(!Arc::ptr_eq(&other, &own));
        let later = now + Duration::from_secs(1);
        assert!(Arc::ptr_eq(&r.pick(&list, "a.test", later).unwrap(), &own));
        // Parked again: twice as long.
        for _ in 0..FAILS_TO_PARK {
            r.failed(&own, later);
        }
        assert!(r.parked(&own, later + Duration::from_millis(1500)));
        assert!(!r.parked(&own, later + Duration::from_secs(2)));
        r.worked(&own);
        assert!(!r.parked(&own, later));
    }

    #[test]
    fn each_proxy_counts_its_tries_failures_and_parkings_whatever_comes_after() {
        let list = proxies(2);
        let mut r = Rotation::default();
        let now = Instant::now();
        assert_eq!(r.tally(&list[0], now), Tally::default());
        for _ in 0..FAILS_TO_PARK {
            r.failed(&list[0], now);
        }
        r.worked(&list[1]);
        let parked = r.tally(&list[0], now);
        assert_eq!(
            parked,
            Tally {
                fetches: 3,
                failures: 3,
                parks: 1,
                parked: true
            }
        );
        // Back after its second; one exchange that works ends its
        // record but not its tally.
        let later = now + Duration::from_secs(1);
        r.worked(&list[0]);
        let after = r.tally(&list[0], later);
        assert_eq!((after.fetches, after.failures, after.parks), (4, 3, 1));
        assert!(!after.parked);
        assert_eq!(r.tally(&list[1], now).fetches, 1);
    }

    #[test]
    fn another_usable_proxy_is_the_next_one_not_parked() {
        let list = proxies(3);
        let mut r = Rotation::default();
        let now = Instant::now();
        let next = r.other_than(&list, &list[0], now).unwrap();
        assert!(Arc::ptr_eq(&next, &list[1]));
        for _ in 0..FAILS_TO_PARK {
            r.failed(&list[1], now);
        }
        let next = r.other_than(&list, &list[0], now).unwrap();
        assert!(Arc::ptr_eq(&next, &list[2]));
        for _ in 0..FAILS_TO_PARK {
            r.failed(&list[2], now);
        }
        assert!(r.other_than(&list, &list[0], now).is_none());
        assert!(r.other_than(&list[..1], &list[0], now).is_none());
    }

    #[test]
    fn with_every_proxy_parked_a_host_uses_its_own() {
        let list = proxies(2);
        let mut r = Rotation::default();
        let now = Instant::now();
        for p in &list {
            for _ in 0..FAILS_TO_PARK {
                r.failed(p, now);
            }
        }
        let own = r.pick(&list, "a.test", now).unwrap();
        let fresh = Rotation::default().pick(&list, "a.test", now).unwrap();
        assert!(Arc::ptr_eq(&own, &fresh));
    }
}
