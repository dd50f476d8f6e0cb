//! The shard's watch and its stop: every [`WATCH_INTERVAL`] the watch
//! hands the buffered lines on, tells the progress line what the hosts
//! wait for, publishes the live numbers for a status server (`live.rs`), and ends the crawl early when it must ([`Halt`]); `stop` wakes
//! every task of the shard and closes its senders.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::Shard;

impl Shard {
    /// The shard's watch, every [`WATCH_INTERVAL`]: hand the lines buffered
    /// so far to the writer (so they do not wait for a full block), and see
    /// whether the crawl must end early (polled: a signal handler can only
    /// set a flag, and the writer and a dying shard run on other threads).
    /// Completes, after stopping the shard, with why.
    pub(super) async fn watch(&self) -> Halt {
        let mut said: Option<Instant> = None;
        let mut published: Option<Instant> = None;
        let halt = loop {
            self.recording.sink.hand_off();
            self.recording.cdxj.hand_off();
            self.publish_live(&mut published, false);
            if (self.config.progress.is_some() || self.hooks.live.is_some())
                && said.is_none_or(|at| at.elapsed() >= WAITS_INTERVAL)
            {
                self.say_waiting();
                said = Some(Instant::now());
            }
            if self.interrupt.load(Ordering::Relaxed) {
                break Halt::Signal;
            }
            if self.recording.sink.stopped().is_some()
                || self.recording.cdxj.stopped().is_some()
                || self.shard_died.load(Ordering::Acquire)
            {
                break Halt::Now;
            }
            if self.budget.reached().is_some() {
                break Halt::Budget;
            }
            // Set from another thread (a cluster's node, when the crawl
            // is over everywhere): a normal end.
            if self.outstanding.is_done() && !self.stopping.get() {
                self.stop();
            }
            glommio::timer::sleep(WATCH_INTERVAL).await;
        };
        self.outstanding.abort();
        self.stop();
        halt
    }

    /// Whether the crawl is stopping only because a budget is spent: the
    /// pages already granted (some still on their way to this shard as
    /// leases) are fetched and recorded, as `--max-pages N` promises N.
    pub(super) fn spending_budget(&self) -> bool {
        self.budget.reached().is_some()
            && !self.interrupt.load(Ordering::Relaxed)
            && self.recording.sink.stopped().is_none()
            && self.recording.cdxj.stopped().is_none()
            && !self.shard_died.load(Ordering::Acquire)
    }

    /// Stop this shard: wake idle workers (they exit), end the flusher, and
    /// close the senders so every peer's receive loop ends and it stops too.
    pub(super) fn stop(&self) {
        if self.stopping.replace(true) {
            return;
        }
        self.changed.notify_all();
        self.fetching.slot_freed.notify_all();
        self.newness.pending_added.notify_all();
        self.newness.merge_due.notify_all();
        self.outbox.close();
        self.outbox.overflow_added.notify_all();
    }

    /// Tell the progress line what this shard's hosts wait for.
    pub(super) fn say_waiting(&self) {
        let (waits, queued) = {
            let frontier = self.frontier.borrow();
            (frontier.waits(Instant::now()), frontier.queued() as u64)
        };
        self.counters(|c| {
            c.queued.store(queued, Ordering::Relaxed);
            c.set_waiting(waits);
        });
    }
}

/// Why a shard stops before the crawl ran out of work.
pub(super) enum Halt {
    /// SIGINT/SIGTERM: running fetches get
    /// [`INTERRUPT_GRACE`](super::INTERRUPT_GRACE) to finish.
    Signal,
    /// The output ended (its reader left, or a write failed) or a shard
    /// died: what runs is cancelled at once.
    Now,
    /// A budget was spent: no fetch starts, the running ones finish.
    Budget,
}

/// Period of the shard's watch: the interrupt flag, the output's state, a
/// dead shard; and the longest a record waits in the shard's buffer.
const WATCH_INTERVAL: Duration = Duration::from_millis(50);

/// How often a shard tells the progress line what its hosts wait for (a
/// look over its live hosts).
const WAITS_INTERVAL: Duration = Duration::from_millis(250);
