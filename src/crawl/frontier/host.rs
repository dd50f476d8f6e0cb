//! One host's state in the frontier: its queue and its politeness (slots
//! in flight, the clock of its next request, backoff, the robots.txt of
//! each of its origins).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::queue::Queue;
use crate::crawl::robots::Rules;
use crate::job::Job;

/// What a resting host costs beyond its name and rules: the `Host` itself
/// and the LRU's node and table slot, roughly.
pub(super) const HOST_OVERHEAD: usize = 160;

/// What a live host costs beyond that: its map slot (with the table's
/// spare room), its queue's spill box and chunk list, and the copies of
/// its name a live host has (the ready ring or the timer heap, the list of
/// tails to seal) with their allocations. tests/frontier_memory.rs
/// measures a live host and checks that this counts it high.
pub(super) const LIVE_OVERHEAD: usize = 240;

/// What a live host's origin whose robots.txt is not known yet is counted
/// at, for the rules to come: most robots.txt files take less parsed (as
/// [`Rules::weight`] counts them: a 2 KB file of 80 lines, some 6 KB). A
/// larger one takes more once it comes (up to the 500 KiB a robots.txt may
/// have), and the frontier lets no new host in until that is made up.
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
    /// Each origin of the host met so far (with robots on).
    pub(super) origins: Vec<Origin>,
    /// In the ready ring or the timer heap.
    pub(super) scheduled: bool,
    /// Its bytes as counted in the frontier's live hosts' total (its
    /// [`Host::live_weight`] when last counted).
    pub(super) counted: usize,
}

impl Host {
    pub(super) fn new(now: Instant, delay: Duration) -> Host {
        Host {
            queue: Queue::default(),
            accepted: 0,
            sitemaps: 0,
            active: 0,
            ready_at: now,
            delay,
            failures: 0,
            origins: Vec::new(),
            scheduled: false,
            counted: 0,
        }
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
