//! One host's state in the frontier: its queue and its politeness (slots
//! in flight, the clock of its next request, backoff, the robots.txt of
//! each of its origins).

use std::time::{Duration, Instant};

use super::queue::Queue;
use crate::crawl::robots::Rules;

/// What a resting host costs beyond its name and rules: the `Host` itself
/// and the LRU's node and table slot, roughly.
pub(super) const HOST_OVERHEAD: usize = 160;

/// robots.txt state of an origin; `failed` counts the tries that got no
/// rules (unreachable, 5xx).
pub(super) enum Robots {
    Unknown { failed: u32 },
    Fetching { failed: u32 },
    Known(Rules),
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
    /// robots.txt of each origin of the host met so far (with robots on).
    pub(super) origins: Vec<(Box<str>, Robots)>,
    /// In the ready ring or the timer heap.
    pub(super) scheduled: bool,
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
        }
    }

    /// Nothing queued, in flight or scheduled: it may rest.
    pub(super) fn is_done(&self) -> bool {
        self.queue.is_empty() && self.active == 0 && !self.scheduled
    }

    /// Heap and bookkeeping bytes of a resting host named `name`.
    pub(super) fn weight(&self, name: &str) -> usize {
        HOST_OVERHEAD
            + name.len()
            + self
                .origins
                .iter()
                .map(|(origin, robots)| {
                    origin.len()
                        + match robots {
                            Robots::Known(rules) => rules.weight(),
                            _ => 0,
                        }
                })
                .sum::<usize>()
    }
}
