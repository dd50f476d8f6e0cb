//! The recent history the status page charts: a sample of the crawl's
//! running totals a second, kept by a thread of the status server in a
//! bounded ring ([`HISTORY_LEN`] samples, an hour), and `/status.json`,
//! the numbers now with that history.
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
}

/// The history, shared by its sampling thread and the server.
#[derive(Clone, Default)]
pub struct History {
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
                        kept.push(Sample::of(&snapshot));
                        if snapshot.finished {
                            break;
                        }
                    }
                    std::thread::park_timeout(EVERY);
                }
            })?;
        Ok((history, thread))
    }

    fn push(&self, sample: Sample) {
        self.ring
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(sample);
    }

    /// The samples so far, then `now`'s (so the history ends at the
    /// numbers it is served with).
    pub fn with(&self, now: &LiveSnapshot) -> Vec<Sample> {
        let mut samples = self
            .ring
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .samples();
        let last = Sample::of(now);
        if samples.last().is_none_or(|s| s.t < last.t) {
            samples.push(last);
        }
        samples
    }

    /// Tell the sampling thread to stop (it ends within a second; unpark
    /// its handle to end it now).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// `/status.json`'s body.
pub fn status_json(now: &LiveSnapshot, history: &History) -> Vec<u8> {
    serde_json::to_vec(&Status {
        now,
        history: history.with(now),
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
}
