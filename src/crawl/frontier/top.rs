//! The hosts of this frontier that stand out, for a status page: one look
//! over the hosts it holds (live and resting), their counts fed to a
//! [`Picker`]. The caller decides how often (a shard: in its once-a-second
//! publish, only with a status server, paced by `output::top_hosts::Pace`
//! to 1% of its time); nothing here changes the frontier,
//! and the counts it reads are two integers a host keeps on the way
//! ([`Frontier::release_after`]).
//!
//! Not the choice of the lists (`output::top_hosts`).

use std::time::Instant;

use super::host::Host;
use super::Frontier;
use crate::output::top_hosts::{HostCounts, Picker, TopHosts};

impl Frontier {
    /// The `n` hosts of each list at `now`: fetched most, queued most,
    /// failing most, backing off (live hosts only: a resting one has
    /// nothing to wait for).
    pub(crate) fn top_hosts(&self, now: Instant, n: usize) -> TopHosts {
        let mut pick = Picker::new(n);
        for (name, host) in &self.hosts {
            pick.offer(name, counts(host, now, true));
        }
        for (name, (host, _)) in self.resting.iter() {
            pick.offer(name, counts(host, now, false));
        }
        pick.finish()
    }
}

/// What `host` shows at `now`.
fn counts(host: &Host, now: Instant, live: bool) -> HostCounts {
    let backing_off = live && host.backing_off(now);
    let parked: usize = host.origins.iter().map(|o| o.parked.len()).sum();
    HostCounts {
        fetched: u64::from(host.fetched),
        errors: u64::from(host.errors),
        queued: (host.queue.len() + parked) as u64,
        failures: host.failures,
        backoff_ms: if backing_off {
            // At least 1: a wait of under a millisecond is still one.
            (host.ready_at.duration_since(now).as_millis() as u64).max(1)
        } else {
            0
        },
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::super::{Frontier, Next, Politeness};
    use crate::job::Job;

    fn fetch(f: &mut Frontier, now: Instant) -> String {
        match f.next(now) {
            Next::Fetch(job) => ringcrawl_links::urls::host_of(&job.url).to_string(),
            other => panic!("a fetch, not {other:?}"),
        }
    }

    #[test]
    fn hosts_are_listed_by_fetches_queue_failures_and_backoff() {
        let now = Instant::now();
        let mut f = Frontier::new(Politeness {
            per_host: 1,
            robots: false,
            ..Politeness::default()
        });
        for url in [
            "http://a.test/1",
            "http://a.test/2",
            "http://a.test/3",
            "http://b.test/1",
            "http://b.test/2",
            "http://c.test/1",
        ] {
            f.offer(Job::root(url.into(), 10), now);
        }
        let top = f.top_hosts(now, 10);
        assert!(top.fetched.is_empty(), "nothing fetched yet");
        let queued: Vec<(&str, u64)> = top
            .queued
            .iter()
            .map(|h| (&*h.host, h.counts.queued))
            .collect();
        assert_eq!(queued, [("a.test", 3), ("b.test", 2), ("c.test", 1)]);

        // a answers, b fails, c answers and rests.
        for _ in 0..3 {
            let host = fetch(&mut f, now);
            f.release(&host, host == "b.test", now);
        }
        let top = f.top_hosts(now, 10);
        let fetched: Vec<(&str, u64)> = top
            .fetched
            .iter()
            .map(|h| (&*h.host, h.counts.fetched))
            .collect();
        assert_eq!(fetched, [("a.test", 1), ("b.test", 1), ("c.test", 1)]);
        assert_eq!(f.hosts().1, 1, "c rests, its counts kept");
        assert_eq!(top.failing.len(), 1);
        assert_eq!(
            (&*top.failing[0].host, top.failing[0].counts.errors),
            ("b.test", 1)
        );
        assert_eq!(top.backing_off.len(), 1);
        let b = &top.backing_off[0];
        assert_eq!((&*b.host, b.counts.failures), ("b.test", 1));
        assert!(b.counts.backoff_ms > 0);
        // Its back-off over, b is not listed as backing off, still failing.
        let later = now + Duration::from_secs(60);
        let top = f.top_hosts(later, 10);
        assert!(top.backing_off.is_empty());
        assert_eq!(top.failing[0].host, "b.test");
        let top = f.top_hosts(later, 1);
        assert_eq!(top.fetched.len(), 1, "n a list");
    }
}
