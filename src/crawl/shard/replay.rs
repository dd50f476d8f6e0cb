//! The shard's side of a resume's replay: it takes the URLs of its hosts
//! from the earlier runs' journals (read once, off the executors, and
//! routed by `crate::state::replay`) and offers each as a root is: a URL
//! with a record is seen, one without is queued again.
//!
//! Not the reading of the files (`crate::state`), and not the journal of
//! this run (`journal.rs`).

use std::time::{Duration, Instant};

use crate::job::Job;
use crate::state::replay::Take;

use super::seen::{Asker, Enqueued};
use super::Shard;

/// How long the replay waits for the disk, or for the readers, when they
/// are behind.
const REPLAY_WAIT: Duration = Duration::from_millis(1);

/// Jobs replayed between two yields to the shard's other tasks.
pub(super) const REPLAY_SLICE: usize = 4096;

impl Shard {
    /// Whether the spill has writes to do, or is failing with the queues
    /// past their bound: the replay waits.
    fn spill_behind(&self) -> bool {
        let frontier = self.frontier.borrow();
        frontier.has_spill_io() || frontier.spill_held_back()
    }

    /// At a resume: offer every URL of this shard's hosts in the earlier
    /// runs' journals (those with a record are seen already), then let go
    /// of this shard's hold on the outstanding count.
    pub(super) async fn replay(&self) {
        let Some(durability) = &self.durability else {
            return;
        };
        if !durability.resuming {
            return;
        }
        let Some(replay) = &durability.replay else {
            return self.replayed();
        };
        let mut queued = 0u64;
        loop {
            // A budget the earlier runs spent: nothing will be fetched.
            if self.replay_cut() || self.budget.reached().is_some() {
                replay.abandon(self.id);
                break;
            }
            match replay.take(self.id) {
                Take::Jobs(jobs) => {
                    if !self.replay_jobs(jobs, &mut queued).await {
                        replay.abandon(self.id);
                        break;
                    }
                }
                Take::Empty => glommio::timer::sleep(REPLAY_WAIT).await,
                Take::Ended => break,
                Take::Failed(e) => {
                    self.seen_failed(&format!("replaying the journal: {e}"));
                    break;
                }
            }
        }
        log::info!(
            "shard {}: {queued} URLs queued again from the journals",
            self.id
        );
        self.replayed();
    }

    /// The replay is over: this shard's hold on the outstanding count goes.
    fn replayed(&self) {
        if self.outstanding.finish(1) {
            self.stop();
        }
    }

    /// Offer `jobs` (of this shard's hosts), counting those queued again
    /// into `queued`; false if the replay was cut meanwhile.
    async fn replay_jobs(&self, jobs: Vec<Job>, queued: &mut u64) -> bool {
        for (offered, job) in jobs.into_iter().enumerate() {
            // As fast as the disk takes it: the seen-set's merges and
            // lookups, and the spill's writes of the queues past
            // --frontier-memory (else they would wait in RAM; and while
            // those writes fail and are retried, not at all).
            while (self.seen_behind() || self.spill_behind()) && !self.replay_cut() {
                self.changed.notify_all();
                futures_lite::future::yield_now().await;
                if self.seen_behind() || self.spill_behind() {
                    glommio::timer::sleep(REPLAY_WAIT).await;
                }
            }
            if self.replay_cut() {
                return false;
            }
            match self.enqueue(job, Instant::now(), Asker::Nobody) {
                Enqueued::New | Enqueued::Pending => {
                    self.outstanding.add(1);
                    *queued += 1;
                }
                Enqueued::Known | Enqueued::Refused => {}
            }
            if (offered + 1).is_multiple_of(REPLAY_SLICE) {
                glommio::yield_if_needed().await;
            }
        }
        glommio::yield_if_needed().await;
        true
    }

    /// The replay ends early: the shard stops, or SIGINT/SIGTERM came (the
    /// watch that would see it starts after the replay); what is left of
    /// the journals is read by the next resume.
    fn replay_cut(&self) -> bool {
        self.stopping.get() || self.interrupt.load(std::sync::atomic::Ordering::Relaxed)
    }
}
