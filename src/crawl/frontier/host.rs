//! One host's state in the frontier: its queue and its politeness (slots
//! in flight, the clock of its next request, backoff, the robots.txt of
//! each of its origins), and the politeness knobs a host rule may set
//! ([`Knobs`]), looked up once when the host's state is made.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use ringcrawl_robots::Rules;

use super::queue::Queue;
use super::Politeness;
use crate::job::Job;

/// The politeness knobs of a host: the crawl's, or as its host rule
/// (`--host-rule`) sets them. The frontier keeps one set for the crawl's
/// settings (index 0) and one for each rule; a host holds the index.
#[derive(Debug, Clone, Copy)]
pub(super) struct Knobs {
    pub(super) per_host: usize,
    pub(super) delay: Duration,
    pub(super) delay_factor: f64,
    pub(super) max_delay: Duration,
    pub(super) max_pages_per_host: usize,
}

impl Knobs {
    /// The crawl's knobs, then each host rule's, in the rules' order.
    pub(super) fn all(p: &Politeness) -> Vec<Knobs> {
        let crawl = Knobs {
            per_host: p.per_host,
            delay: p.delay,
            delay_factor: p.delay_factor,
            max_delay: p.max_delay,
            max_pages_per_host: p.max_pages_per_host,
        };
        let rules = p.host_rules.rules().iter().map(|(_, r)| Knobs {
            per_host: r.per_host.unwrap_or(crawl.per_host),
            delay: r.delay.unwrap_or(crawl.delay),
            delay_factor: r.delay_factor.unwrap_or(crawl.delay_factor),
            max_delay: r.max_delay.unwrap_or(crawl.max_delay),
            max_pages_per_host: r.max_pages_per_host.unwrap_or(crawl.max_pages_per_host),
        });
        std::iter::once(crawl).chain(rules).collect()
    }

    /// The knobs at `at` (a host's [`Host::knobs`]), the crawl's if none.
    pub(super) fn of(all: &[Knobs], at: u16) -> Knobs {
        all.get(usize::from(at))
            .or(all.first())
            .copied()
            .unwrap_or(Knobs {
                per_host: 1,
                delay: Duration::ZERO,
                delay_factor: 0.0,
                max_delay: Duration::ZERO,
                max_pages_per_host: usize::MAX,
            })
    }
}

/// What a resting host costs beyond its name and rules: the `Host` itself
/// and the LRU's node and table slot, roughly (with the 8 bytes of its
/// counts for a status page, [`Host::fetched`] and [`Host::errors`]).
pub(super) const HOST_OVERHEAD: usize = 168;

/// What a live host costs beyond that: its map slot (with the table's
/// spare room), its queue's spill box and chunk list, and the copies of
/// its name a live host has (the ready ring or the timer heap, the list of
/// tails to seal) with their allocations. memory_tests.rs (beside this)
/// measures a live host and checks that this counts it high.
pub(super) const LIVE_OVERHEAD: usize = 240;

/// What a live host's origin whose robots.txt is not known yet is counted
/// at, for the rules to come: most robots.txt files take less parsed (as
/// [`Rules::weight`] counts them: a 2 KB file of 80 rules, all ours, some
/// 2.5 KB; other agents' groups are not kept). A larger one takes more
/// once it comes (at most three times the 500 KiB a robots.txt may have:
/// percent-encoding makes a control byte three), and the frontier lets no
/// new host in until that is made up.
pub(super) const ROBOTS_RESERVE: usize = 8 << 10;

/// robots.txt state of an origin; `failed` counts the tries that got no
/// rules (unreachable, 5xx).
pub(super) enum Robots {
    /// To be asked for, not before `retry_at`.
    Unknown {
        failed: u32,
        retry_at: Instant,
    },
    Fetching {
        failed: u32,
    },
    Known(Rules),
}

/// One origin (scheme, host, port) of a host: its robots.txt, and the URLs
/// that wait for it. While an origin's robots.txt is being fetched or is
/// waiting for its next try, its URLs are set aside here, so the host's
/// other origins go on (a filtered port 80 must not hold up the https
/// site); they go back to the front of the host's queue when the rules
/// arrive or the next try is due.
pub(super) struct Origin {
    pub(super) name: Box<str>,
    pub(super) robots: Robots,
    pub(super) parked: VecDeque<Job>,
    /// Why its last robots.txt fetch got no rules, while it waits to try
    /// again (for the progress line).
    pub(super) last_error: Option<Box<str>>,
}

impl Origin {
    /// Its robots.txt is being fetched, or its next try is not due yet.
    pub(super) fn waits(&self, now: Instant) -> bool {
        match self.robots {
            Robots::Fetching { .. } => true,
            Robots::Unknown { retry_at, .. } => retry_at > now,
            Robots::Known(_) => false,
        }
    }
}

/// One host's queue and politeness state.
pub(super) struct Host {
    pub(super) queue: Queue,
    /// URLs accepted so far (for `max_pages_per_host`).
    pub(super) accepted: usize,
    /// Sitemaps accepted so far (for `max_sitemaps_per_host`).
    pub(super) sitemaps: usize,
    /// Fetches in flight.
    pub(super) active: usize,
    /// No request may start before this.
    pub(super) ready_at: Instant,
    /// Delay between request starts (the larger of `--delay` and Crawl-delay).
    pub(super) delay: Duration,
    /// Consecutive failed fetches.
    pub(super) failures: u32,
    /// Fetches of its pages that ended, and of those the failed ones (as
    /// `failures` counts them), for a status page's top hosts (`top.rs`);
    /// saturating.
    pub(super) fetched: u32,
    pub(super) errors: u32,
    /// Its [`Knobs`] among the frontier's: 0, the crawl's; else its
    /// host rule's, found when it was made.
    pub(super) knobs: u16,
    /// Its fetches held back in a row for their address (`hold.rs`).
    pub(super) held: u8,
    /// Each origin of the host met so far (with robots on).
    pub(super) origins: Vec<Origin>,
    /// In the ready ring or the timer heap.
    pub(super) scheduled: bool,
    /// Its bytes as counted in the frontier's live hosts' total (its
    /// [`Host::live_weight`] when last counted).
    pub(super) counted: usize,
}

impl Host {
    pub(super) fn new(now: Instant, delay: Duration, knobs: u16) -> Host {
        Host {
            knobs,
            held: 0,
            queue: Queue::default(),
            accepted: 0,
            sitemaps: 0,
            active: 0,
            ready_at: now,
            delay,
            failures: 0,
            fetched: 0,
            errors: 0,
            origins: Vec::new(),
            scheduled: false,
            counted: 0,
        }
    }

    /// It failed last and waits out its back-off at `now`.
    pub(super) fn backing_off(&self, now: Instant) -> bool {
        self.failures > 0 && self.ready_at > now
    }

    /// Nothing queued, set aside, in flight or scheduled: it may rest.
    pub(super) fn is_done(&self) -> bool {
        self.queue.is_empty()
            && self.active == 0
            && !self.scheduled
            && self.origins.iter().all(|o| o.parked.is_empty())
    }

    /// The soonest instant a set-aside URL may go on: the next try of the
    /// robots.txt of an origin that has some (None while each such
    /// origin's robots.txt is being fetched: its answer reschedules).
    pub(super) fn parked_due(&self) -> Option<Instant> {
        self.origins
            .iter()
            .filter(|o| !o.parked.is_empty())
            .filter_map(|o| match o.robots {
                Robots::Unknown { retry_at, .. } => Some(retry_at),
                _ => None,
            })
            .min()
    }

    /// Put the set-aside URLs of each origin whose rules are known, or
    /// whose next try is due at `now`, back at the front of the queue, in
    /// their order.
    pub(super) fn unpark(&mut self, now: Instant) {
        for origin in &mut self.origins {
            let due = match origin.robots {
                Robots::Known(_) => true,
                Robots::Unknown { retry_at, .. } => retry_at <= now,
                Robots::Fetching { .. } => false,
            };
            if due {
                while let Some(job) = origin.parked.pop_back() {
                    self.queue.push_front(job);
                }
            }
        }
    }

    /// Heap and bookkeeping bytes of a live host named `name`, its queued
    /// URLs aside (they count against the queue's bound), with
    /// [`ROBOTS_RESERVE`] for each origin whose rules are to come (one
    /// before it meets any, if `robots`).
    pub(super) fn live_weight(&self, name: &str, robots: bool) -> usize {
        let unknown = self
            .origins
            .iter()
            .filter(|o| !matches!(o.robots, Robots::Known(_)))
            .count();
        let reserves = if robots && self.origins.is_empty() {
            1
        } else {
            unknown
        };
        self.weight(name) + LIVE_OVERHEAD + 2 * name.len() + reserves * ROBOTS_RESERVE
    }

    /// What a host new to the frontier, named `name`, costs live at first.
    pub(super) fn new_weight(name: &str, robots: bool) -> usize {
        HOST_OVERHEAD + LIVE_OVERHEAD + 3 * name.len() + usize::from(robots) * ROBOTS_RESERVE
    }

    /// Heap and bookkeeping bytes of a resting host named `name`.
    pub(super) fn weight(&self, name: &str) -> usize {
        HOST_OVERHEAD
            + name.len()
            + self
                .origins
                .iter()
                .map(|origin| {
                    origin.name.len()
                        + match &origin.robots {
                            Robots::Known(rules) => rules.weight(),
                            _ => 0,
                        }
                })
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use super::super::{Frontier, Next, Offer, Politeness};
    use crate::config::host_rules::{HostRule, HostRules};
    use crate::job::{Job, Limit};

    fn with_rules(base: Politeness, rules: &[(&str, HostRule)]) -> Frontier {
        let mut table = HostRules::default();
        for (pattern, rule) in rules {
            table.add(pattern, *rule).unwrap();
        }
        Frontier::new(Politeness {
            robots: false,
            host_rules: Arc::new(table),
            ..base
        })
    }

    fn offer(f: &mut Frontier, urls: &[&str], now: Instant) {
        for u in urls {
            assert_eq!(f.offer(Job::root(u.to_string(), 10), now), Offer::New);
        }
    }

    /// The hosts of the fetches `next` hands out at `now` until it has none.
    fn fetches(f: &mut Frontier, now: Instant) -> Vec<String> {
        let mut hosts = Vec::new();
        while let Next::Fetch(job) = f.next(now) {
            hosts.push(ringcrawl_links::urls::host_of(&job.url).to_string());
        }
        hosts.sort();
        hosts
    }

    #[test]
    fn a_host_rule_sets_its_hosts_fetches_in_flight_and_no_other() {
        let now = Instant::now();
        let base = Politeness {
            per_host: 1,
            ..Politeness::default()
        };
        let mut f = with_rules(base, &[("*.big.test", HostRule::new().per_host(3))]);
        offer(
            &mut f,
            &[
                "http://a.big.test/1",
                "http://a.big.test/2",
                "http://a.big.test/3",
                "http://a.big.test/4",
                "http://small.test/1",
                "http://small.test/2",
                "http://big.test/1",
                "http://big.test/2",
            ],
            now,
        );
        assert_eq!(
            fetches(&mut f, now),
            [
                "a.big.test",
                "a.big.test",
                "a.big.test",
                "big.test",
                "small.test"
            ],
            "the wildcard's three for its subdomain, the flag's one elsewhere"
        );
        assert_eq!(f.waits(now).full_hosts, 3);
    }

    #[test]
    fn a_host_rule_delay_spaces_its_hosts_requests_only() {
        let now = Instant::now();
        let second = Duration::from_secs(1);
        let mut f = with_rules(
            Politeness::default(),
            &[("slow.test", HostRule::new().delay(second))],
        );
        offer(
            &mut f,
            &[
                "http://slow.test/1",
                "http://slow.test/2",
                "http://fast.test/1",
                "http://fast.test/2",
            ],
            now,
        );
        assert_eq!(
            fetches(&mut f, now),
            ["fast.test", "fast.test", "slow.test"]
        );
        assert_eq!(f.next(now), Next::Wait(now + second));
        assert_eq!(fetches(&mut f, now + second), ["slow.test"]);
    }

    #[test]
    fn a_host_rule_sets_its_hosts_page_budget_and_adaptive_delay() {
        let now = Instant::now();
        let base = Politeness {
            per_host: 1,
            max_pages_per_host: 10,
            ..Politeness::default()
        };
        let rule = HostRule::new()
            .max_pages_per_host(2)
            .delay_factor(2.0)
            .max_delay(Duration::from_secs(5));
        let mut f = with_rules(base, &[("a.test", rule)]);
        offer(&mut f, &["http://a.test/1", "http://a.test/2"], now);
        assert_eq!(
            f.offer(Job::root("http://a.test/3".into(), 10), now),
            Offer::Refused(Limit::HostBudget)
        );
        offer(&mut f, &["http://b.test/1", "http://b.test/2"], now);
        assert_eq!(fetches(&mut f, now), ["a.test", "b.test"]);
        let took = Duration::from_secs(1);
        let end = now + took;
        f.release_after("a.test", false, took, end);
        f.release_after("b.test", false, took, end);
        // b has no rule: no adaptive delay, its next URL at once; a waits
        // twice its fetch's time.
        assert_eq!(fetches(&mut f, end), ["b.test"]);
        assert_eq!(f.next(end), Next::Wait(end + 2 * took));
    }

    #[test]
    fn a_resting_host_keeps_its_rule_when_it_comes_back() {
        let now = Instant::now();
        let mut f = with_rules(
            Politeness {
                per_host: 1,
                ..Politeness::default()
            },
            &[("a.test", HostRule::new().per_host(2))],
        );
        offer(&mut f, &["http://a.test/1"], now);
        assert_eq!(fetches(&mut f, now), ["a.test"]);
        f.release("a.test", false, now);
        assert_eq!(f.hosts().1, 1, "resting");
        offer(&mut f, &["http://a.test/2", "http://a.test/3"], now);
        assert_eq!(fetches(&mut f, now), ["a.test", "a.test"]);
    }
}
