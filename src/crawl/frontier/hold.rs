//! A fetch held back before it started because its server's address had
//! `--per-ip` fetches running (`crate::sync::PerIp`): the page, or the
//! origin's robots.txt, goes back where it was, its host's slot is free,
//! and the host waits a little before its next try: [`HELD_WAIT`] at
//! first, twice as long each time in a row up to 16 times that, spread by
//! a factor from 0.8 to 1.2 so hosts of one server do not all come back in
//! the same instant. No failure is counted: the server did nothing wrong.
//! A fetch that runs (or a robots.txt answer) ends the run of waits.
//!
//! Pure, as the rest of the frontier: the caller passes `now`.

use std::time::{Duration, Instant};

use ringcrawl_links::urls;

use super::host::Robots;
use super::spill::weight;
use super::{jitter, later, Frontier};
use crate::job::Job;

/// The first wait of a host whose fetch was held back.
pub(super) const HELD_WAIT: Duration = Duration::from_millis(50);

/// Doublings of [`HELD_WAIT`] at most: 800 ms.
const MAX_DOUBLINGS: u8 = 4;

impl Frontier {
    /// The [`Next::Fetch`](super::Next::Fetch) of `job` was not started:
    /// its address was full. It goes back to the head of its host's
    /// queue, and the host waits (see the module docs).
    pub(crate) fn hold(&mut self, job: Job, now: Instant) {
        let host = urls::host_of(&job.url).to_string();
        let Some(entry) = self.hosts.get_mut(&host) else {
            return;
        };
        entry.active = entry.active.saturating_sub(1);
        entry.held = entry.held.saturating_add(1);
        let wait = held_wait(&host, entry.held);
        entry.ready_at = entry.ready_at.max(later(now, wait));
        self.spill.ram += weight(&job);
        entry.queue.push_front(job);
        self.queued += 1;
        self.reschedule(&host);
        self.settle(&host);
    }

    /// The [`Next::Robots`](super::Next::Robots) of the origin of
    /// `example` was not started: its address was full. The origin asks
    /// again after the host's wait, its pages waiting aside meanwhile, as
    /// for a robots.txt retry (no try of `robots_retries` is spent).
    pub(crate) fn hold_robots(&mut self, example: &str, now: Instant) {
        let host = urls::host_of(example);
        let origin = urls::origin_of(example);
        let Some(entry) = self.hosts.get_mut(host) else {
            return;
        };
        entry.active = entry.active.saturating_sub(1);
        entry.held = entry.held.saturating_add(1);
        let retry_at = later(now, held_wait(host, entry.held));
        if let Some(found) = entry.origins.iter_mut().find(|o| *o.name == *origin) {
            if let Robots::Fetching { failed } = found.robots {
                found.robots = Robots::Unknown { failed, retry_at };
            }
        }
        let host = host.to_string();
        self.reschedule(&host);
        self.settle(&host);
    }
}

/// The wait of `host` after its `held`-th fetch held back in a row.
fn held_wait(host: &str, held: u8) -> Duration {
    let doublings = held.saturating_sub(1).min(MAX_DOUBLINGS);
    HELD_WAIT
        .saturating_mul(1 << doublings)
        .mul_f64(jitter(host, u32::from(held)))
}

#[cfg(test)]
mod tests {
    use super::super::{Next, Politeness};
    use super::*;
    use ringcrawl_robots::Rules;

    fn job(url: &str) -> Job {
        Job::root(url.into(), 10)
    }

    #[test]
    fn a_held_page_comes_back_first_after_a_wait_that_grows_and_counts_no_failure() {
        let now = Instant::now();
        let mut f = Frontier::new(Politeness {
            robots: false,
            ..Politeness::default()
        });
        f.offer(job("http://a.test/1"), now);
        f.offer(job("http://a.test/2"), now);
        let Next::Fetch(first) = f.next(now) else {
            panic!("a fetch")
        };
        f.hold(first, now);
        assert_eq!(f.active("a.test"), 0);
        let Next::Wait(at) = f.next(now) else {
            panic!("the host waits")
        };
        let waited = at - now;
        assert!(
            waited >= HELD_WAIT.mul_f64(0.8) && waited <= HELD_WAIT.mul_f64(1.2),
            "{waited:?}"
        );
        let Next::Fetch(again) = f.next(at) else {
            panic!("the held page, first")
        };
        assert_eq!(again.url, "http://a.test/1");
        f.hold(again, at);
        let Next::Wait(later) = f.next(at) else {
            panic!("waits again")
        };
        assert!(later - at > waited, "longer in a row");
        assert_eq!(f.waits(at).backing_off, 0, "no failure counted");
        // A fetch that runs ends the run of waits.
        let Next::Fetch(third) = f.next(later) else {
            panic!("a fetch")
        };
        f.release("a.test", false, later);
        let Next::Fetch(_) = f.next(later) else {
            panic!("the next page at once")
        };
        assert_eq!(third.url, "http://a.test/1");
        assert_eq!(f.queued(), 0);
    }

    #[test]
    fn a_held_robots_txt_is_asked_again_after_the_wait_its_pages_aside() {
        let now = Instant::now();
        let mut f = Frontier::new(Politeness::default());
        f.offer(job("http://a.test/1"), now);
        let Next::Robots { example, .. } = f.next(now) else {
            panic!("robots.txt first")
        };
        f.hold_robots(&example, now);
        let Next::Wait(at) = f.next(now) else {
            panic!("the origin waits")
        };
        assert!(at > now && at <= now + HELD_WAIT.mul_f64(1.2));
        let Next::Robots { example, .. } = f.next(at) else {
            panic!("robots.txt again")
        };
        f.set_robots(&example, Rules::AllowAll, at);
        let Next::Fetch(page) = f.next(at) else {
            panic!("then the page")
        };
        assert_eq!(page.url, "http://a.test/1");
    }

    #[test]
    fn held_waits_grow_to_a_bound_and_spread_by_host() {
        let w = |held| held_wait("a.test", held);
        assert!(w(1) < w(2) && w(2) < w(3));
        assert!(w(200) <= HELD_WAIT.saturating_mul(16).mul_f64(1.2));
        assert_ne!(held_wait("a.test", 1), held_wait("b.test", 1));
    }
}
