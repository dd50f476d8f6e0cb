//! The live progress line on stderr: pages done, recent pages/s, in flight,
//! queued, errors, bytes, and what the crawl waits for (robots.txt fetches
//! and retries with the last failure's cause, back-offs, hosts at their
//! slot limit, URLs waiting for room among the hosts). Shards bump
//! per-shard atomic counters (one cache line each, so cores do not
//! contend) and set what they wait for a few times a second; a reporter
//! thread samples them.
//!
//! On a terminal the line is redrawn in place a few times a second; when
//! stderr is not a terminal a plain line is printed every interval. Not the
//! end report (`stats.rs`).

use std::collections::VecDeque;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Counters of one shard, written only by that shard's thread.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct ShardCounters {
    pub pages: AtomicU64,
    pub errors: AtomicU64,
    pub bytes: AtomicU64,
    pub in_flight: AtomicU64,
    pub queued: AtomicU64,
    /// What the shard waits for, as it last said.
    waiting: Mutex<Waiting>,
}

impl ShardCounters {
    /// Say what this shard waits for now.
    pub(crate) fn set_waiting(&self, waiting: Waiting) {
        *self.waiting.lock().unwrap_or_else(|e| e.into_inner()) = waiting;
    }
}

/// What a crawl waits for (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Waiting {
    /// Origins whose robots.txt is being fetched.
    pub robots_fetching: u64,
    /// Origins whose URLs wait for their robots.txt to be tried again; the
    /// soonest try, and why that origin's last one failed.
    pub robots_retrying: u64,
    pub next_retry: Option<Instant>,
    pub retry_cause: Option<String>,
    /// Hosts backing off after failures.
    pub backing_off: u64,
    /// Hosts with URLs queued and every slot taken.
    pub full_hosts: u64,
    /// URLs waiting for room among the hosts (`--host-memory`).
    pub waiting_for_room: u64,
    /// Shards of a resume still loading what earlier runs did and
    /// replaying their journals (the pages and queue counts are low until
    /// they are through).
    pub replaying: u64,
}

impl Waiting {
    /// This and `other` (another shard's) together.
    fn add(&mut self, other: &Waiting) {
        self.robots_fetching += other.robots_fetching;
        self.robots_retrying += other.robots_retrying;
        if let Some(at) = other.next_retry {
            if self.next_retry.is_none_or(|soonest| at < soonest) {
                self.next_retry = Some(at);
                self.retry_cause.clone_from(&other.retry_cause);
            }
        }
        self.backing_off += other.backing_off;
        self.full_hosts += other.full_hosts;
        self.waiting_for_room += other.waiting_for_room;
        self.replaying += other.replaying;
    }

    /// The line's part for it at `now`: empty when nothing waits.
    pub(crate) fn describe(&self, now: Instant) -> String {
        let mut parts = Vec::new();
        if self.replaying > 0 {
            parts.push(format!(
                "{} shards replaying the earlier runs",
                self.replaying
            ));
        }
        if self.robots_fetching > 0 {
            parts.push(format!("robots.txt of {} fetching", self.robots_fetching));
        }
        if self.robots_retrying > 0 {
            let when = self
                .next_retry
                .map(|at| {
                    format!(
                        " in {:.0}s",
                        at.saturating_duration_since(now).as_secs_f64().ceil()
                    )
                })
                .unwrap_or_default();
            let why = self
                .retry_cause
                .as_deref()
                .map(|c| format!(" ({c})"))
                .unwrap_or_default();
            parts.push(format!(
                "robots.txt of {} to retry{when}{why}",
                self.robots_retrying
            ));
        }
        if self.backing_off > 0 {
            parts.push(format!("{} hosts backing off", self.backing_off));
        }
        if self.full_hosts > 0 {
            parts.push(format!("{} hosts at --per-host", self.full_hosts));
        }
        if self.waiting_for_room > 0 {
            parts.push(format!(
                "{} URLs wait for --host-memory",
                self.waiting_for_room
            ));
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!("  waiting: {}", parts.join(", "))
        }
    }
}

/// Counters of every shard.
#[derive(Debug)]
pub(crate) struct Progress {
    shards: Box<[ShardCounters]>,
}

/// A sum over all shards at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Snapshot {
    pub pages: u64,
    pub errors: u64,
    pub bytes: u64,
    pub in_flight: u64,
    pub queued: u64,
}

impl Progress {
    pub(crate) fn new(shards: usize) -> Self {
        Progress {
            shards: (0..shards).map(|_| ShardCounters::default()).collect(),
        }
    }

    /// The counters shard `id` writes to.
    pub(crate) fn shard(&self, id: usize) -> Option<&ShardCounters> {
        self.shards.get(id)
    }

    /// What every shard waits for, together.
    pub(crate) fn waiting(&self) -> Waiting {
        let mut all = Waiting::default();
        for c in self.shards.iter() {
            all.add(&c.waiting.lock().unwrap_or_else(|e| e.into_inner()));
        }
        all
    }

    pub(crate) fn snapshot(&self) -> Snapshot {
        let mut s = Snapshot::default();
        for c in self.shards.iter() {
            s.pages += c.pages.load(Ordering::Relaxed);
            s.errors += c.errors.load(Ordering::Relaxed);
            s.bytes += c.bytes.load(Ordering::Relaxed);
            s.in_flight += c.in_flight.load(Ordering::Relaxed);
            s.queued += c.queued.load(Ordering::Relaxed);
        }
        s
    }
}

/// The progress line for `now`, with the rate over `window` (oldest sample
/// first).
pub(crate) fn line(now: Snapshot, rate: f64, elapsed: Duration) -> String {
    format!(
        "{:>6.1}s  {} pages  {:.0}/s  in flight {}  queued {}  errors {}  {}",
        elapsed.as_secs_f64(),
        now.pages,
        rate,
        now.in_flight,
        now.queued,
        now.errors,
        crate::output::report::binary_size(now.bytes as f64)
    )
}

/// Pages per second over the samples kept (the last few seconds).
fn recent_rate(samples: &VecDeque<(Instant, u64)>) -> f64 {
    match (samples.front(), samples.back()) {
        (Some((t0, p0)), Some((t1, p1))) if t1 > t0 => (p1 - p0) as f64 / (*t1 - *t0).as_secs_f64(),
        _ => 0.0,
    }
}

/// Start the reporter thread; it ends as soon as `done` is set and the
/// thread is unparked (`JoinHandle::thread().unpark()`), not a tick later.
/// `redraw`: in place on a terminal, else one plain line per `interval`.
pub(crate) fn spawn_reporter(
    progress: Arc<Progress>,
    done: Arc<AtomicBool>,
    redraw: bool,
    interval: Duration,
) -> JoinHandle<()> {
    std::thread::Builder::new()
        .name("ringcrawl-progress".into())
        .spawn(move || {
            let started = Instant::now();
            let tick = if redraw {
                Duration::from_millis(250)
            } else {
                interval.min(Duration::from_millis(100))
            };
            let mut samples: VecDeque<(Instant, u64)> = VecDeque::new();
            let mut last_print = Instant::now();
            let mut next_tick = Instant::now() + tick;
            loop {
                std::thread::park_timeout(next_tick.saturating_duration_since(Instant::now()));
                if done.load(Ordering::Relaxed) {
                    break;
                }
                let now = Instant::now();
                if now < next_tick {
                    continue; // a spurious wake-up
                }
                next_tick = now + tick;
                let snap = progress.snapshot();
                samples.push_back((now, snap.pages));
                while samples
                    .front()
                    .is_some_and(|(t, _)| now.duration_since(*t) > Duration::from_secs(5))
                {
                    samples.pop_front();
                }
                let mut text = line(snap, recent_rate(&samples), started.elapsed());
                text.push_str(&progress.waiting().describe(now));
                let mut err = std::io::stderr().lock();
                if redraw {
                    let _ = write!(err, "\r\x1b[K{text}");
                } else if now.duration_since(last_print) >= interval {
                    let _ = writeln!(err, "{text}");
                    last_print = now;
                }
            }
            if redraw {
                let _ = write!(std::io::stderr(), "\r\x1b[K");
            }
        })
        .unwrap_or_else(|_| std::thread::spawn(|| ()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_sums_every_shard() {
        let p = Progress::new(2);
        p.shard(0).unwrap().pages.fetch_add(3, Ordering::Relaxed);
        p.shard(1).unwrap().pages.fetch_add(4, Ordering::Relaxed);
        p.shard(1).unwrap().errors.fetch_add(1, Ordering::Relaxed);
        assert_eq!(p.snapshot().pages, 7);
        assert_eq!(p.snapshot().errors, 1);
        assert!(p.shard(2).is_none());
    }

    #[test]
    fn what_the_shards_wait_for_is_summed_with_the_soonest_retry_and_its_cause() {
        let now = Instant::now();
        let p = Progress::new(2);
        assert_eq!(p.waiting().describe(now), "", "nothing waits: nothing said");
        p.shard(0).unwrap().set_waiting(Waiting {
            robots_retrying: 1,
            next_retry: Some(now + Duration::from_secs(40)),
            retry_cause: Some("HTTP 503".into()),
            ..Waiting::default()
        });
        p.shard(1).unwrap().set_waiting(Waiting {
            robots_fetching: 2,
            robots_retrying: 1,
            next_retry: Some(now + Duration::from_millis(4500)),
            retry_cause: Some("connection refused".into()),
            backing_off: 3,
            ..Waiting::default()
        });
        assert_eq!(
            p.waiting().describe(now),
            "  waiting: robots.txt of 2 fetching, robots.txt of 2 to retry in 5s \
             (connection refused), 3 hosts backing off"
        );
        p.shard(0).unwrap().set_waiting(Waiting {
            replaying: 1,
            ..Waiting::default()
        });
        assert!(
            p.waiting()
                .describe(now)
                .starts_with("  waiting: 1 shards replaying the earlier runs, robots.txt of 2"),
            "{}",
            p.waiting().describe(now)
        );
    }

    #[test]
    fn rate_is_measured_over_the_window() {
        let t0 = Instant::now();
        let samples = VecDeque::from([(t0, 100), (t0 + Duration::from_secs(2), 300)]);
        assert!((recent_rate(&samples) - 100.0).abs() < 1e-9);
        assert!(line(
            Snapshot {
                pages: 300,
                ..Default::default()
            },
            100.0,
            Duration::from_secs(2)
        )
        .contains("300 pages  100/s"));
    }
}
