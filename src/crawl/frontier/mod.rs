//! Pure per-shard crawl frontier: the per-host queues of the hosts this
//! shard owns, and the politeness that decides which URL is *ready* next.
//!
//! It is the chapter's `Queue`, made fair and polite (the chapter's
//! `seen_urls` is the shard's seen-set, asked before a URL is offered here,
//! so a URL enters at most once for the whole crawl): each host has its own
//! FIFO queue; hosts take turns
//! (round robin over ready hosts, one URL per turn), so one huge host cannot
//! starve the others; a host has at most `per_host` fetches in flight, at
//! least `delay` between request starts (or its robots.txt `Crawl-delay`),
//! backs off after consecutive failures (a host rule, `--host-rule`, may
//! set its own `per_host`, delay, adaptive delay and page budget: looked up
//! once when the host's state is made, `host.rs`'s `Knobs`), and has robots.txt fetched before
//! its first page of each origin: robots.txt belongs to an origin (scheme,
//! host, port: RFC 9309), so `http://h/` and `https://h/` each have their
//! own rules, while politeness stays with the host across schemes and
//! ports. A robots.txt that could not be had (unreachable, 5xx) is asked
//! again on a schedule while the origin's pages wait; they wait aside
//! (`host.rs`), so the host's other origins go on meanwhile. It also caps the URLs
//! accepted per host, a bound on generated-URL traps. No I/O and no clock:
//! the caller passes `now`.
//!
//! Memory: a host with URLs queued or in flight is *live* (the map `hosts`);
//! one with neither *rests* in an LRU (`resting`) that keeps its robots.txt
//! rules, politeness clock and page count, so it may come back at no cost.
//! Both count against [`Politeness::host_memory`] (`admission.rs`): resting
//! hosts get what live ones leave, the least recently finished forgotten
//! first (one that comes back fetches robots.txt again and starts a new
//! page budget and delay); and when live hosts fill it, the URLs of hosts
//! not yet live wait in a queue of their own, spilled like any host's,
//! until live hosts finish. So a million hosts, or a `--lenient` crawl of a
//! subdomain trap, holds the hosts' state within the bound.
//!
//! Queued URLs are bounded by [`Politeness::memory`]: past it, each host's
//! newest URLs are spilled to disk and read back when its turn nears
//! (`spill.rs`; a host's queue is a RAM head, chunks on disk and a RAM
//! tail, `queue.rs`; the chunks' encoding is `chunk.rs`, the ledger of the
//! segment files `store.rs`). Still no I/O: the frontier hands out
//! [`SpillIo`] requests and takes their completions.
//!
//! Files: `mod.rs` the turns and politeness, `host.rs` a host's state,
//! `politeness.rs` its settings, `types.rs` the words it deals in (`Job`, `Offer`, `Limit`, `Next`),
//! `admission.rs` the hosts held within their bound, `hold.rs` fetches
//! held back for their server's address (`--per-ip`), `waits.rs` what the
//! hosts wait for, `top.rs` the hosts that stand out (for a status page), `queue.rs`, `spill.rs`, `chunk.rs`, `store.rs` the spill, `tests.rs`.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

// Seeded per map (foldhash): fast; hard to aim hosts at collisions without
// knowing the seeds, though foldhash claims no resistance to a determined attacker.
use foldhash::{HashMap, HashMapExt};
use lru::LruCache;
use std::time::{Duration, Instant};

use ringcrawl_links::urls;
use ringcrawl_robots::Rules;

use crate::job::{Job, Limit, Verdict};

mod admission;
mod hold;
mod host;
mod politeness;
mod queue;
mod spill;
mod store;
mod top;
mod types;
mod waits;

use admission::recount;
#[cfg(test)]
pub(crate) use admission::HostMemory;
use host::{Host, Knobs, Origin, Robots};
pub(crate) use politeness::Politeness;
use queue::Queue;
use spill::{weight, Spill, READ_AHEAD};
pub(crate) use store::{Extent, SpillIo};
pub(crate) use types::{Next, Offer};

/// Per-host queues and scheduling of one shard.
pub(crate) struct Frontier {
    politeness: Politeness,
    /// The crawl's politeness knobs, then each host rule's.
    knobs: Vec<Knobs>,
    /// Live hosts: URLs queued or in flight.
    hosts: HashMap<String, Host>,
    /// Their bytes ([`Host::live_weight`] each, as last counted).
    live_bytes: usize,
    /// Finished hosts, least recently finished first out, with their
    /// weight; with the live hosts, at most `politeness.host_memory`.
    resting: LruCache<String, (Host, usize)>,
    resting_bytes: usize,
    /// URLs of hosts neither live nor resting, accepted while the live
    /// hosts filled `host_memory`: they wait, in order, for room.
    waiting: Queue,
    /// Of the queued URLs, those in `waiting`; and all that ever were.
    waiting_jobs: usize,
    waited: u64,
    /// URLs that a limit kept out when they left `waiting`, to be handed
    /// out by [`Frontier::next`] as [`Next::Limited`].
    limited: VecDeque<(Job, Limit)>,
    /// The most the hosts' state took at once.
    peak_host_bytes: usize,
    /// Hosts that may be ready, in turn order.
    ring: VecDeque<String>,
    /// Hosts waiting for their `ready_at`.
    timers: BinaryHeap<Reverse<(Instant, String)>>,
    /// URLs queued over all hosts, in RAM and on disk.
    queued: usize,
    /// The spill of queue tails to disk: RAM used, the ledger of the
    /// files, reads in flight.
    spill: Spill,
}

impl Frontier {
    /// An empty frontier with the crawl's politeness and bounds (a
    /// shard's share of them).
    pub(crate) fn new(politeness: Politeness) -> Self {
        Frontier {
            knobs: Knobs::all(&politeness),
            politeness,
            hosts: HashMap::new(),
            live_bytes: 0,
            resting: LruCache::unbounded(),
            resting_bytes: 0,
            waiting: Queue::default(),
            waiting_jobs: 0,
            waited: 0,
            limited: VecDeque::new(),
            peak_host_bytes: 0,
            ring: VecDeque::new(),
            timers: BinaryHeap::new(),
            queued: 0,
            spill: Spill::default(),
        }
    }

    /// Accept `job`, a normalised URL new to the crawl (the shard's
    /// seen-set decides that, before it is offered), unless a limit
    /// (length, depth, its host's budget) keeps it out. A URL of a host
    /// that is not held while the hosts' memory is full is accepted to
    /// wait for room; its host's limits apply when it leaves the wait
    /// ([`Next::Limited`]).
    pub(crate) fn offer(&mut self, job: Job, now: Instant) -> Offer {
        if job.url.len() > self.politeness.max_url_length {
            return Offer::Refused(Limit::UrlTooLong);
        }
        if job.depth > self.politeness.max_depth {
            return Offer::Refused(Limit::TooDeep);
        }
        let host = urls::host_of(&job.url);
        if !self.is_held(host) && !self.has_room_for(host) {
            self.wait_for_room(job);
            return Offer::New;
        }
        match self.place(job, now) {
            Ok(()) => Offer::New,
            Err((_, limit)) => Offer::Refused(limit),
        }
    }

    /// Queue `job` for its host, live or made live, unless its host's
    /// limits keep it out.
    fn place(&mut self, job: Job, now: Instant) -> Result<(), (Job, Limit)> {
        let host = urls::host_of(&job.url).to_string();
        if !self.hosts.contains_key(&host) {
            self.make_live(&host, now);
        }
        let Some(entry) = self.hosts.get_mut(&host) else {
            return Err((job, Limit::HostBudget));
        };
        if entry.accepted >= Knobs::of(&self.knobs, entry.knobs).max_pages_per_host {
            return Err((job, Limit::HostBudget));
        }
        if job.hops.sitemap_level() > 0 {
            if entry.sitemaps >= self.politeness.max_sitemaps_per_host {
                return Err((job, Limit::SitemapBudget));
            }
            entry.sitemaps += 1;
        }
        entry.accepted += 1;
        if !entry.scheduled {
            entry.scheduled = true;
            self.ring.push_back(host.clone());
        }
        self.queued += 1;
        self.enqueue(&host, job);
        Ok(())
    }

    /// The next thing to do at `now`: the next ready host in turn gives
    /// its oldest URL.
    pub(crate) fn next(&mut self, now: Instant) -> Next {
        self.admit_waiting(now);
        if let Some((job, limit)) = self.limited.pop_front() {
            return Next::Limited(job, limit);
        }
        while let Some(Reverse((at, _))) = self.timers.peek() {
            if *at > now {
                break;
            }
            if let Some(Reverse((_, host))) = self.timers.pop() {
                self.ring.push_back(host);
            }
        }
        while let Some(name) = self.ring.pop_front() {
            let Some(host) = self.hosts.get_mut(&name) else {
                continue;
            };
            host.unpark(now);
            if host.queue.head_len() == 0 && host.queue.has_more() {
                // Its turn came and its next URLs are on disk (or in its
                // tail): bring them up. From RAM it takes its turn now;
                // a read gives it a turn when it is done.
                let ready = self.refill(&name);
                let Some(host) = self.hosts.get_mut(&name) else {
                    continue;
                };
                if ready || !host.queue.reading() {
                    // Ready; or a chunk was lost: on to the next.
                    self.ring.push_front(name);
                } else {
                    host.scheduled = false;
                }
                continue;
            }
            let per_host = Knobs::of(&self.knobs, host.knobs).per_host;
            if host.queue.head_len() == 0 || host.active >= per_host {
                // Rescheduled by the next offer or release; a host whose
                // URLs all wait for a robots.txt retry, when it is due.
                host.scheduled = false;
                if host.queue.is_empty() {
                    if let Some(at) = host.parked_due() {
                        host.scheduled = true;
                        self.timers.push(Reverse((at, name)));
                        continue;
                    }
                }
                self.settle(&name);
                continue;
            }
            if host.ready_at > now {
                self.timers.push(Reverse((host.ready_at, name)));
                continue;
            }
            let Some(front) = host.queue.front() else {
                continue;
            };
            let at = if self.politeness.robots {
                let origin = urls::origin_of(&front.url);
                match host.origins.iter().position(|o| *o.name == *origin) {
                    Some(at) => Some(at),
                    None => {
                        host.origins.push(Origin {
                            name: origin.into(),
                            robots: Robots::Unknown {
                                failed: 0,
                                retry_at: now,
                            },
                            parked: VecDeque::new(),
                            last_error: None,
                        });
                        let weight = host.live_weight(&name, self.politeness.robots);
                        self.live_bytes = recount(&mut host.counted, weight, self.live_bytes);
                        Some(host.origins.len() - 1)
                    }
                }
            } else {
                None
            };
            let verdict = match at.and_then(|at| host.origins.get_mut(at)) {
                Some(origin) if origin.waits(now) => {
                    // Its origin waits for robots.txt: the URL waits with
                    // it, and the host's next URL (another origin's, maybe)
                    // takes the turn. The answer, or the next try's time,
                    // puts it back.
                    if let Some(job) = host.queue.pop_front() {
                        origin.parked.push_back(job);
                    }
                    self.ring.push_front(name);
                    continue;
                }
                Some(Origin {
                    robots: robots @ Robots::Unknown { .. },
                    ..
                }) => {
                    let failed = match robots {
                        Robots::Unknown { failed, .. } => *failed,
                        _ => 0,
                    };
                    *robots = Robots::Fetching { failed };
                    host.active += 1;
                    // A request to the host like any: --delay counts from it.
                    host.ready_at = later(now, host.delay);
                    let example = front.url.clone();
                    let root = front.depth == 0;
                    // It keeps its turns: its other origins' URLs may go
                    // while this robots.txt is fetched.
                    self.ring.push_back(name.clone());
                    return Next::Robots {
                        host: name,
                        example,
                        root,
                    };
                }
                Some(Origin {
                    robots: Robots::Known(rules),
                    ..
                }) => rules.verdict(&front.url),
                _ => Verdict::Allowed,
            };
            let Some(job) = host.queue.pop_front() else {
                continue;
            };
            self.queued = self.queued.saturating_sub(1);
            let low = host.queue.head_len() < READ_AHEAD && host.queue.has_more();
            // Nothing left to give: out of the ring, so its last release
            // (or this refusal) settles it. Left in the ring, a host the
            // crawl ends before its next turn would stay live.
            let drained = host.queue.is_empty();
            if drained {
                host.scheduled = false;
            }
            if verdict == Verdict::Allowed {
                host.active += 1;
                host.ready_at = later(now, host.delay);
            }
            self.spill.ram = self.spill.ram.saturating_sub(weight(&job));
            if low {
                // The host is being served: its next chunk comes up
                // before its head runs out.
                self.refill(&name);
            }
            if drained {
                if verdict != Verdict::Allowed {
                    self.settle(&name);
                    return Next::Refused(job, verdict);
                }
                return Next::Fetch(job);
            }
            if verdict != Verdict::Allowed {
                self.ring.push_front(name);
                return Next::Refused(job, verdict);
            }
            // Round robin: back of the line; it may still have room.
            self.ring.push_back(name);
            return Next::Fetch(job);
        }
        match self.timers.peek() {
            Some(Reverse((at, _))) => Next::Wait(*at),
            None => Next::Idle,
        }
    }

    /// The [`Next::Fetch`] of a job of `host` is dropped unfetched (a
    /// cluster node that no longer owns the host): its slot is free, and
    /// its turn comes again at once, not after its delay.
    pub(crate) fn drop_fetch(&mut self, host: &str, now: Instant) {
        let Some(entry) = self.hosts.get_mut(host) else {
            return;
        };
        entry.active = entry.active.saturating_sub(1);
        entry.ready_at = entry.ready_at.min(now);
        self.reschedule(host);
        self.settle(host);
    }

    /// The fetch of `job` was answered "come back later" (429 or 503 with
    /// `Retry-After`): the job goes back to the head of its host's queue,
    /// the host's slot is free, and the host waits `wait` (or its
    /// backoff, if longer) before its next request.
    pub(crate) fn retry_later(&mut self, job: Job, wait: Duration, now: Instant) {
        let host = urls::host_of(&job.url).to_string();
        let Some(entry) = self.hosts.get_mut(&host) else {
            return;
        };
        entry.active = entry.active.saturating_sub(1);
        entry.failures = entry.failures.saturating_add(1);
        entry.ready_at = entry.ready_at.max(later(now, wait));
        self.spill.ram += weight(&job);
        entry.queue.push_front(job);
        self.queued += 1;
        self.reschedule(&host);
        self.settle(&host);
    }

    /// Undo the [`Next::Fetch`] of `job`: it goes back to the head of its
    /// host's queue and the host's slot is free again.
    pub(crate) fn put_back(&mut self, job: Job) {
        let host = urls::host_of(&job.url).to_string();
        let Some(entry) = self.hosts.get_mut(&host) else {
            return;
        };
        entry.active = entry.active.saturating_sub(1);
        self.spill.ram += weight(&job);
        entry.queue.push_front(job);
        self.queued += 1;
        self.reschedule(&host);
    }

    /// A fetch of `host` ended; `failed` if it got no usable answer (network
    /// error, 5xx, 429). Consecutive failures back the host off
    /// exponentially, up to [`MAX_BACKOFF`]. (The tests' and benchmarks'
    /// form of [`Frontier::release_after`].)
    #[cfg(any(test, feature = "bench-hooks"))]
    pub(crate) fn release(&mut self, host: &str, failed: bool, now: Instant) {
        let _ = self.release_after(host, failed, Duration::ZERO, now);
    }

    /// [`Frontier::release`] of a fetch that took `took`: with an adaptive
    /// delay ([`Politeness::delay_factor`]), the host waits a multiple of
    /// it, so a slow server is asked less often.
    /// Returns the host's failures in a row, this one included (0 after
    /// an answer).
    pub(crate) fn release_after(
        &mut self,
        host: &str,
        failed: bool,
        took: Duration,
        now: Instant,
    ) -> u32 {
        let Some(entry) = self.hosts.get_mut(host) else {
            return 0;
        };
        let knobs = Knobs::of(&self.knobs, entry.knobs);
        if knobs.delay_factor > 0.0 {
            let floor = entry.delay;
            let wait = took
                .mul_f64(knobs.delay_factor)
                .min(knobs.max_delay.max(floor))
                .max(floor);
            entry.ready_at = entry.ready_at.max(later(now, wait));
        }
        entry.active = entry.active.saturating_sub(1);
        entry.held = 0;
        entry.fetched = entry.fetched.saturating_add(1);
        entry.errors = entry.errors.saturating_add(u32::from(failed));
        if failed {
            entry.failures = entry.failures.saturating_add(1);
            let backoff = BASE_BACKOFF
                .saturating_mul(1 << entry.failures.min(16))
                .min(MAX_BACKOFF)
                .mul_f64(jitter(host, entry.failures));
            entry.ready_at = entry.ready_at.max(later(now, backoff));
        } else {
            entry.failures = 0;
        }
        let streak = entry.failures;
        self.reschedule(host);
        self.settle(host);
        streak
    }

    /// The robots.txt answer for the origin of `example` arrived (releases
    /// the host's slot). Its Crawl-delay, if longer, becomes the host's.
    /// Unavailable rules with tries left in `robots_retries` are asked for
    /// again after the next wait of the schedule; the pages wait too.
    pub(crate) fn set_robots(&mut self, example: &str, rules: Rules, now: Instant) {
        let cap = self.politeness.max_crawl_delay;
        let host = urls::host_of(example);
        let origin = urls::origin_of(example);
        let Some(entry) = self.hosts.get_mut(host) else {
            return;
        };
        entry.active = entry.active.saturating_sub(1);
        entry.held = 0;
        if let Some(crawl_delay) = rules.crawl_delay(cap) {
            if crawl_delay > entry.delay {
                // The next request waits the longer delay from the last
                // one's start (this robots.txt's, as a rule).
                entry.ready_at = later(entry.ready_at, crawl_delay - entry.delay);
                entry.delay = crawl_delay;
            }
        }
        if let Some(found) = entry.origins.iter_mut().find(|o| *o.name == *origin) {
            let failed = match found.robots {
                Robots::Fetching { failed } | Robots::Unknown { failed, .. } => failed,
                Robots::Known(_) => 0,
            };
            let wait = self.politeness.robots_retries.get(failed as usize).copied();
            let retry = match rules.unreachable() {
                // Nothing listens there: a few quick tries, not an hour's.
                Some(why) if why.refused => wait
                    .filter(|_| failed < REFUSED_TRIES)
                    .map(|w| w.min(REFUSED_WAIT)),
                Some(_) => wait,
                None => None,
            };
            // The wait is the origin's: the host's other origins go on.
            found.last_error = rules.unreachable().map(|why| why.cause.clone());
            found.robots = match retry {
                Some(wait) => Robots::Unknown {
                    failed: failed.saturating_add(1),
                    retry_at: later(now, wait),
                },
                None => Robots::Known(rules),
            };
        }
        entry.unpark(now);
        let weight = entry.live_weight(host, self.politeness.robots);
        self.live_bytes = recount(&mut entry.counted, weight, self.live_bytes);
        self.note_host_bytes();
        self.reschedule(host);
        self.settle(host);
    }

    fn reschedule(&mut self, host: &str) {
        if let Some(entry) = self.hosts.get_mut(host) {
            if entry.scheduled {
                return;
            }
            if !entry.queue.is_empty() {
                entry.scheduled = true;
                self.ring.push_back(host.to_string());
            } else if let Some(at) = entry.parked_due() {
                entry.scheduled = true;
                self.timers.push(Reverse((at, host.to_string())));
            }
        }
    }

    /// Why the robots.txt of `url`'s origin could not be had, if its rules
    /// are known to be unavailable (for the record of a URL it keeps out).
    pub(crate) fn robots_cause(&self, url: &str) -> Option<&str> {
        let origin = urls::origin_of(url);
        let name = urls::host_of(url);
        // The refused URL may have been its host's last: it rests now.
        let host = match self.hosts.get(name) {
            Some(host) => host,
            None => &self.resting.peek(name)?.0,
        };
        host.origins
            .iter()
            .find(|o| *o.name == *origin)
            .and_then(|o| match &o.robots {
                Robots::Known(rules) => rules.unreachable().map(|why| &*why.cause),
                _ => None,
            })
    }

    /// URLs waiting, in RAM and on disk.
    pub(crate) fn queued(&self) -> usize {
        self.queued
    }

    /// Of those, the URLs on disk.
    pub(crate) fn queued_on_disk(&self) -> usize {
        self.spill.on_disk
    }

    /// Bytes the queued URLs in RAM take, as counted against
    /// [`Politeness::memory`].
    pub(crate) fn queued_ram(&self) -> usize {
        self.spill.ram
    }

    /// Fetches in flight for `host`.
    #[cfg(test)]
    pub(crate) fn active(&self, host: &str) -> usize {
        self.hosts.get(host).map_or(0, |h| h.active)
    }
}

/// `now + wait`, or a year from `now` if that overflows the clock (a
/// library caller's delay far beyond what the flags allow).
fn later(now: Instant, wait: Duration) -> Instant {
    now.checked_add(wait)
        .unwrap_or(now + Duration::from_secs(365 * 24 * 3600))
}

/// Tries of a robots.txt whose connection is refused, after the first
/// (within `robots_retries`), and the longest wait before each: a mistyped
/// port is known in seconds, not after the minute of the 5xx schedule.
const REFUSED_TRIES: u32 = 2;
const REFUSED_WAIT: Duration = Duration::from_secs(1);

/// A factor from 0.8 to 1.2, the same for a host at the same count of
/// failures: hosts that fail together (a network outage) come back spread
/// out, not all in the same instant.
fn jitter(host: &str, failures: u32) -> f64 {
    use std::hash::BuildHasher;
    let hash = foldhash::fast::FixedState::with_seed(0x6a69_7474_6572).hash_one((host, failures));
    0.8 + 0.4 * (hash % 4096) as f64 / 4096.0
}

/// First backoff step after a failure.
const BASE_BACKOFF: Duration = Duration::from_millis(50);
/// Longest backoff of a failing host.
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(10);

#[cfg(test)]
mod memory_tests;
#[cfg(test)]
mod tests;
