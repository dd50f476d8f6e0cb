//! The recent history the status page charts: a sample of the crawl's
//! running totals a second, kept by a thread of the status server in a
//! bounded ring ([`HISTORY_LEN`] samples, an hour), and `/status.json`,
//! the numbers now with that history.
//!
//! Each sample also has the latency of the fetches that ended since the
//! one before (not the crawl's so far): the history keeps the snapshot of
//! its last sample, whose histograms the library subtracts from the next
//! one's ([`LiveSnapshot::latency_since`]), a copy of the histograms a
//! second on this thread (and one for each `/status.json`), none on the
//! shards'. So a history's `fetches` add up to the crawl's fetches.
//!
//! Not the numbers (the library's [`ringcrawl::Live`]) and not the page.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use ringcrawl::{Live, LiveSnapshot};
use serde::Serialize;

/// Samples kept: one a second for an hour.
pub const HISTORY_LEN: usize = 3600;
/// Time between samples.
const EVERY: Duration = Duration::from_secs(1);

/// The crawl's running totals at one second of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Sample {
    /// Seconds since the crawl started.
    pub t: f64,
    pub pages: u64,
    pub bytes: u64,
    pub errors: u64,
    pub in_flight: u64,
    pub queued: u64,
    pub rss: u64,
    /// Whole fetches that ended since the sample before, and their
    /// latency percentiles (ms; null when none ended).
    pub fetches: u64,
    pub p50_ms: Option<f64>,
    pub p90_ms: Option<f64>,
    pub p99_ms: Option<f64>,
}

impl Sample {
    /// The totals of `s`, from its live counters.
    pub fn of(s: &LiveSnapshot) -> Sample {
        Sample {
            t: s.elapsed_s,
            pages: s.shards.iter().map(|sh| sh.pages).sum(),
            bytes: s.shards.iter().map(|sh| sh.bytes).sum(),
            errors: s.shards.iter().map(|sh| sh.errors).sum(),
            in_flight: s.in_flight,
            queued: s.queued,
            rss: s.memory.rss,
            ..Sample::default()
        }
    }

    /// [`Sample::of`] `s`, with the latency of the fetches that ended
    /// since `earlier` (None: since the start).
    pub fn since(s: &LiveSnapshot, earlier: Option<&LiveSnapshot>) -> Sample {
        let latency = s.latency_since(earlier);
        Sample {
            fetches: latency.as_ref().map_or(0, |p| p.count),
            p50_ms: latency.as_ref().map(|p| p.p50_ms),
            p90_ms: latency.as_ref().map(|p| p.p90_ms),
            p99_ms: latency.as_ref().map(|p| p.p99_ms),
            ..Sample::of(s)
        }
    }
}

/// A bounded ring of samples, oldest first.
#[derive(Debug, Default)]
pub struct Ring {
    samples: VecDeque<Sample>,
}

impl Ring {
    /// Add `sample`, dropping the oldest past [`HISTORY_LEN`].
    pub fn push(&mut self, sample: Sample) {
        if self.samples.len() >= HISTORY_LEN {
            self.samples.pop_front();
        }
        self.samples.push_back(sample);
    }

    pub fn samples(&self) -> Vec<Sample> {
        self.samples.iter().copied().collect()
    }
}

/// `/status.json`: the numbers now and the history.
#[derive(Serialize)]
pub struct Status<'a> {
    pub now: &'a LiveSnapshot,
    pub history: Vec<Sample>,
    /// How many of `history`'s samples, from its first, the server keeps:
    /// a sample of the numbers now after them is not kept (the next one
    /// kept covers its second), so a page that asks only for what is
    /// newer (`since`) keeps these and drops that one.
    pub history_kept: usize,
}

/// The history, shared by its sampling thread and the server.
#[derive(Clone, Default)]
pub struct History {
    /// The snapshot of the ring's last sample. Locked before the ring.
    last: Arc<Mutex<Option<LiveSnapshot>>>,
    ring: Arc<Mutex<Ring>>,
    stop: Arc<AtomicBool>,
}

impl History {
    /// Start sampling `live` every second (until the crawl is over, and
    /// one sample after) on a thread of its own.
    pub fn start(live: Live) -> std::io::Result<(History, JoinHandle<()>)> {
        let history = History::default();
        let kept = history.clone();
        let thread = std::thread::Builder::new()
            .name("ringcrawl-status-history".into())
            .spawn(move || {
                while !kept.stop.load(Ordering::Relaxed) {
                    if let Some(snapshot) = live.snapshot() {
                        let finished = snapshot.finished;
                        kept.push(snapshot);
                        if finished {
                            break;
                        }
                    }
                    std::thread::park_timeout(EVERY);
                }
            })?;
        Ok((history, thread))
    }

    /// Add the sample of `snapshot`, and keep it for the next.
    fn push(&self, snapshot: LiveSnapshot) {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let sample = Sample::since(&snapshot, last.as_ref());
        self.ring
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(sample);
        *last = Some(snapshot);
    }

    /// The samples after second `since` (all: None), then `now`'s if it
    /// is newer than the last kept (so the history ends at the numbers it
    /// is served with); and how many of them are kept ones.
    pub fn with(&self, now: &LiveSnapshot, since: Option<f64>) -> (Vec<Sample>, usize) {
        let last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let ring = self.ring.lock().unwrap_or_else(|e| e.into_inner());
        let newest = ring.samples.back().map(|s| s.t);
        let mut samples: Vec<Sample> = match since {
            Some(since) => ring
                .samples
                .iter()
                .filter(|s| s.t > since)
                .copied()
                .collect(),
            None => ring.samples(),
        };
        let kept = samples.len();
        if newest.is_none_or(|t| t < now.elapsed_s) {
            samples.push(Sample::since(now, last.as_ref()));
        }
        (samples, kept)
    }

    /// Tell the sampling thread to stop (it ends within a second; unpark
    /// its handle to end it now).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// `/status.json`'s body, its history after second `since` (all: None).
pub fn status_json(now: &LiveSnapshot, history: &History, since: Option<f64>) -> Vec<u8> {
    let (history, history_kept) = history.with(now, since);
    serde_json::to_vec(&Status {
        now,
        history,
        history_kept,
    })
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_keeps_the_last_hour_oldest_first() {
        let mut ring = Ring::default();
        for i in 0..HISTORY_LEN + 10 {
            ring.push(Sample {
                t: i as f64,
                ..Sample::default()
            });
        }
        let samples = ring.samples();
        assert_eq!(samples.len(), HISTORY_LEN);
        assert_eq!(samples[0].t, 10.0);
        assert_eq!(samples[HISTORY_LEN - 1].t, (HISTORY_LEN + 9) as f64);
    }

    #[test]
    fn a_page_asking_since_a_second_gets_the_kept_samples_after_it_and_the_moment() {
        let history = History::default();
        let at = |t: f64| {
            let mut s = LiveSnapshot::default();
            s.elapsed_s = t;
            s
        };
        for t in 1..=5 {
            history.push(at(f64::from(t)));
        }
        let (all, kept) = history.with(&at(5.5), None);
        assert_eq!((all.len(), kept), (6, 5));
        let (newer, kept) = history.with(&at(5.5), Some(3.0));
        let seconds: Vec<f64> = newer.iter().map(|s| s.t).collect();
        assert_eq!(seconds, [4.0, 5.0, 5.5]);
        assert_eq!(kept, 2, "the moment's sample is not a kept one");
        // Nothing newer than the page has: nothing but the moment.
        let (none, kept) = history.with(&at(5.0), Some(5.0));
        assert_eq!((none.len(), kept), (0, 0));
        let body: serde_json::Value =
            serde_json::from_slice(&status_json(&at(5.5), &history, Some(4.0))).unwrap();
        assert_eq!(body["history_kept"], 1);
        assert_eq!(body["history"].as_array().unwrap().len(), 2);
    }
}
