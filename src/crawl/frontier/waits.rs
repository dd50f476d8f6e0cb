//! What the frontier's hosts wait for at an instant, for the progress line:
//! robots.txt fetches and their retries, hosts backing off after failures,
//! hosts with every slot taken, URLs waiting for room among the hosts. A
//! look over the live hosts (the caller decides how often), not state kept
//! on the way: nothing here changes the frontier.

use std::time::Instant;

use super::host::{Knobs, Robots};
use super::Frontier;
use crate::output::progress::Waiting;

impl Frontier {
    /// What the live hosts wait for at `now`, as the progress line says it.
    pub(crate) fn waits(&self, now: Instant) -> Waiting {
        let mut waits = Waiting {
            waiting_for_room: self.waiting_jobs as u64,
            ..Waiting::default()
        };
        for host in self.hosts.values() {
            if host.backing_off(now) {
                waits.backing_off += 1;
            }
            let per_host = Knobs::of(&self.knobs, host.knobs).per_host;
            if host.active >= per_host && !host.queue.is_empty() {
                waits.full_hosts += 1;
            }
            for origin in &host.origins {
                match origin.robots {
                    Robots::Fetching { .. } => waits.robots_fetching += 1,
                    Robots::Unknown { retry_at, .. } if !origin.parked.is_empty() => {
                        waits.robots_retrying += 1;
                        if waits.next_retry.is_none_or(|at| retry_at < at) {
                            waits.next_retry = Some(retry_at);
                            waits.retry_cause = origin.last_error.as_deref().map(str::to_string);
                        }
                    }
                    _ => {}
                }
            }
        }
        waits
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::super::{Frontier, Next, Politeness};
    use crate::job::Job;
    use ringcrawl_robots::Rules;

    #[test]
    fn an_origin_whose_robots_txt_failed_says_why_and_when_it_is_tried_again() {
        let now = Instant::now();
        let mut f = Frontier::new(Politeness {
            robots_retries: vec![Duration::from_secs(5)],
            ..Politeness::default()
        });
        f.offer(Job::root("http://a.test/".into(), 10), now);
        let Next::Robots { example, .. } = f.next(now) else {
            panic!("robots.txt first");
        };
        assert_eq!(f.waits(now).robots_fetching, 1);
        f.set_robots(&example, Rules::unavailable("HTTP 503"), now);
        // Its page is set aside until the next try.
        assert!(matches!(f.next(now), Next::Wait(_)));
        let waits = f.waits(now);
        assert_eq!((waits.robots_fetching, waits.robots_retrying), (0, 1));
        assert_eq!(waits.next_retry, Some(now + Duration::from_secs(5)));
        assert_eq!(waits.retry_cause.as_deref(), Some("HTTP 503"));
    }

    #[test]
    fn a_host_with_every_slot_taken_and_a_host_backing_off_are_counted() {
        let now = Instant::now();
        let mut f = Frontier::new(Politeness {
            per_host: 1,
            robots: false,
            ..Politeness::default()
        });
        for url in [
            "http://a.test/1",
            "http://a.test/2",
            "http://b.test/1",
            "http://b.test/2",
        ] {
            f.offer(Job::root(url.into(), 10), now);
        }
        assert!(matches!(f.next(now), Next::Fetch(_)));
        assert!(matches!(f.next(now), Next::Fetch(_)));
        assert_eq!(f.waits(now).full_hosts, 2);
        f.release("b.test", true, now);
        let waits = f.waits(now);
        assert_eq!((waits.full_hosts, waits.backing_off), (1, 1));
    }
}
