//! The checkpoints of a crawl with a state directory: a thread that
//! writes one every `--checkpoint-interval` while the shards run (crawl
//! time spent over all runs, budgets, counters), and the last one when
//! they stopped, once every record is written.
//!
//! After each periodic checkpoint the thread runs an in-run compaction of
//! the journals when one is due (`crate::state::compact::in_run`).
//!
//! Not what a checkpoint holds nor how it is written atomically
//! (`crate::state`), and no shard state: a resume rebuilds that from the
//! journals and the log.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::crawl::budget::Budget;
use crate::output::progress::Progress;
use crate::state::session::Session;
use crate::state::StateError;

/// The checkpoint thread of a crawl with a state directory: one every
/// interval while the shards run, and the last one at [`Self::finish`].
pub(crate) struct Checkpoints {
    thread: std::thread::JoinHandle<Session>,
    stop: Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>,
    /// Set at `finish`: an in-run compaction running gives up.
    compaction_stop: Arc<AtomicBool>,
    budget: Arc<Budget>,
    progress: Arc<Progress>,
    started: Instant,
}

impl Checkpoints {
    /// Start the thread: a checkpoint of `session` every `every`.
    pub(crate) fn start(
        mut session: Session,
        every: Duration,
        budget: Arc<Budget>,
        progress: Arc<Progress>,
        started: Instant,
    ) -> Checkpoints {
        let stop = Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
        let compaction_stop = session.compaction_stop();
        let thread = std::thread::spawn({
            let (stop, budget, progress) = (stop.clone(), budget.clone(), progress.clone());
            move || {
                let (lock, wake) = &*stop;
                let mut stopped = lock.lock().unwrap_or_else(|p| p.into_inner());
                loop {
                    if *stopped {
                        return session;
                    }
                    let (guard, _) = wake
                        .wait_timeout(stopped, every)
                        .unwrap_or_else(|p| p.into_inner());
                    if *guard {
                        return session;
                    }
                    // Not held while working: `finish` must not wait.
                    drop(guard);
                    if let Err(e) = checkpoint(&mut session, &budget, &progress, started) {
                        log::warn!("checkpoint: {e}");
                    }
                    // On this thread, off the executors: the journals and
                    // the done fingerprints are read from disk, the shards
                    // go on. Not at the last checkpoint (the next resume
                    // compacts anyway), and given up when the crawl stops
                    // (`compaction_stop`), so its end does not wait.
                    session.compact_in_run();
                    stopped = lock.lock().unwrap_or_else(|p| p.into_inner());
                }
            }
        });
        Checkpoints {
            thread,
            stop,
            compaction_stop,
            budget,
            progress,
            started,
        }
    }

    /// Stop the thread and write the last checkpoint.
    pub(crate) fn finish(self) -> Result<(), StateError> {
        self.compaction_stop.store(true, Ordering::Relaxed);
        let (lock, wake) = &*self.stop;
        *lock.lock().unwrap_or_else(|p| p.into_inner()) = true;
        wake.notify_all();
        match self.thread.join() {
            Ok(mut session) => checkpoint(&mut session, &self.budget, &self.progress, self.started),
            Err(_) => Ok(()),
        }
    }
}

/// Write one checkpoint of `session`.
fn checkpoint(
    session: &mut Session,
    budget: &Budget,
    progress: &Progress,
    started: Instant,
) -> Result<(), StateError> {
    let now = progress.snapshot();
    let counters = [
        ("records_this_run", now.pages),
        ("errors_this_run", now.errors),
        ("bytes_this_run", now.bytes),
        ("queued", now.queued),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let spent = crate::state::manifest::Spent {
        pages: budget.pages(),
        bytes: budget.bytes(),
    };
    session.checkpoint(started.elapsed(), spent, counters)
}
