//! The shard's side of a resume's replay: it takes the URLs of its hosts
//! from the earlier runs' journals (read once, off the executors, and
//! routed by `crate::state::replay`) and offers each as a root is: a URL
//! with a record is seen, one without is queued again.
//!
//! It also writes the shard's *base* for the compaction
//! (`crate::state::compact`): every replayed URL it did not find seen,
//! in journal chunks, `fdatasync`ed when the replay ends; then, once every
//! shard's base is on disk, it waits for its journal to be on disk up to
//! that moment and says so. A URL a replay finds seen either has a record
//! (it is in the log), or was given to the base already, or was found by
//! a page of this run (it is in a journal of this run, on disk by then):
//! the bases and this run's journals hold every URL still to fetch.
//!
//! Not the reading of the files nor the marker and the removal of what a
//! compaction covers (`crate::state`), and not the journal of this run
//! (`journal.rs`).

use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use glommio::io::BufferedFile;

use crate::crawl::seen;
use crate::job::{chunk, Job};
use crate::state::compact::Compaction;
use crate::state::replay::Take;

use super::journal::{write_all, REPLAY_SLICE};
use super::seen::{Asker, Enqueued};
use super::Shard;

/// How long the replay waits for the disk, or for the readers, when they
/// are behind.
const REPLAY_WAIT: Duration = Duration::from_millis(1);

/// Jobs a base chunk holds.
const BASE_CHUNK: usize = 4096;

/// How often a shard looks whether the others are there, and whether its
/// journal is on disk, before it counts itself into the compaction.
const COMPACTION_POLL: Duration = Duration::from_millis(5);

/// A shard's base, written as its replay goes.
struct Base {
    path: PathBuf,
    file: BufferedFile,
    /// Where the next chunk goes.
    at: u64,
    jobs: Vec<Job>,
    bytes: Vec<u8>,
}

impl Base {
    async fn create(path: &Path) -> std::io::Result<Base> {
        let file = BufferedFile::create(path).await?;
        if let Some(dir) = path.parent() {
            seen::run::sync_dir(dir).await?;
        }
        Ok(Base {
            path: path.to_path_buf(),
            file,
            at: 0,
            jobs: Vec::new(),
            bytes: Vec::new(),
        })
    }

    /// Keep `job`; a chunk is written once enough gathered.
    async fn push(&mut self, job: Job) -> std::io::Result<()> {
        self.jobs.push(job);
        if self.jobs.len() >= BASE_CHUNK {
            self.write().await?;
        }
        Ok(())
    }

    async fn write(&mut self) -> std::io::Result<()> {
        if self.jobs.is_empty() {
            return Ok(());
        }
        self.bytes.clear();
        chunk::encode(&self.jobs, &mut self.bytes);
        self.jobs.clear();
        write_all(&self.file, &self.bytes, self.at).await?;
        self.at += self.bytes.len() as u64;
        Ok(())
    }

    /// Write what is left, `fdatasync`, close.
    async fn finish(mut self) -> std::io::Result<()> {
        self.write().await?;
        self.file.fdatasync().await?;
        self.file.close().await.map_err(std::io::Error::from)
    }

    /// Close without writing more: the replay was cut, and no marker
    /// will name this base (the next resume removes it).
    async fn abandon(self) {
        if let Err(e) = self.file.close().await {
            log::debug!("closing {}: {e}", self.path.display());
        }
    }
}

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
    pub(super) async fn replay(self: &Rc<Self>) {
        let Some(durability) = &self.durability else {
            return;
        };
        if !durability.resuming {
            return;
        }
        let Some(replay) = &durability.replay else {
            return self.replayed();
        };
        let compaction = durability.compaction.clone();
        let mut base = match compaction.as_ref().and_then(|c| c.base(self.id)) {
            Some(path) => match Base::create(path).await {
                Ok(base) => Some(base),
                Err(e) => {
                    log::warn!("{}: {e} (no compaction in this run)", path.display());
                    None
                }
            },
            None => None,
        };
        let mut queued = 0u64;
        let ended = loop {
            // A budget the earlier runs spent: nothing will be fetched.
            if self.replay_cut() || self.budget.reached().is_some() {
                replay.abandon(self.id);
                break false;
            }
            match replay.take(self.id) {
                Take::Jobs(jobs) => {
                    if !self.replay_jobs(jobs, &mut queued, &mut base).await {
                        replay.abandon(self.id);
                        break false;
                    }
                }
                Take::Empty => glommio::timer::sleep(REPLAY_WAIT).await,
                Take::Ended => break true,
                Take::Failed(e) => {
                    self.seen_failed(&format!("replaying the journal: {e}"));
                    break false;
                }
            }
        };
        log::info!(
            "shard {}: {queued} URLs queued again from the journals",
            self.id
        );
        if let Some(compaction) = compaction {
            self.base_done(ended, base, compaction).await;
        }
        self.replayed();
    }

    /// The replay is over: this shard's hold on the outstanding count goes.
    fn replayed(&self) {
        if self.outstanding.finish(1) {
            self.stop();
        }
    }

    /// Offer `jobs` (of this shard's hosts), counting those queued again
    /// into `queued`, and giving those not seen to `base`; false if the
    /// replay was cut meanwhile.
    async fn replay_jobs(&self, jobs: Vec<Job>, queued: &mut u64, base: &mut Option<Base>) -> bool {
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
            // A copy for the base: a URL kept out by a limit goes in too
            // (its record may not reach the log), one pending is decided
            // later (a base may hold a URL that turns out seen: it is
            // seen again at the next resume).
            let copy = base.is_some().then(|| job.clone());
            let known = match self.enqueue(job, Instant::now(), Asker::Nobody) {
                Enqueued::New | Enqueued::Pending => {
                    self.outstanding.add(1);
                    *queued += 1;
                    false
                }
                Enqueued::Refused => false,
                Enqueued::Known => true,
            };
            if let (Some(writer), Some(job), false) = (base.as_mut(), copy, known) {
                if let Err(e) = writer.push(job).await {
                    log::warn!(
                        "shard {}: writing {}: {e} (no compaction in this run)",
                        self.id,
                        writer.path.display()
                    );
                    if let Some(failed) = base.take() {
                        failed.abandon().await;
                    }
                }
            }
            if (offered + 1).is_multiple_of(REPLAY_SLICE) {
                glommio::yield_if_needed().await;
            }
        }
        glommio::yield_if_needed().await;
        true
    }

    /// The replay ended (`ended`: read to its end) with `base` written so
    /// far: finish it and count this shard into the compaction, or give
    /// the compaction up.
    async fn base_done(
        self: &Rc<Self>,
        ended: bool,
        base: Option<Base>,
        compaction: Arc<Compaction>,
    ) {
        let base = match base {
            Some(base) if ended => base,
            Some(cut) => {
                cut.abandon().await;
                return compaction.give_up();
            }
            None => return compaction.give_up(),
        };
        let path = base.path.clone();
        if let Err(e) = base.finish().await {
            log::warn!(
                "shard {}: writing {}: {e} (no compaction in this run)",
                self.id,
                path.display()
            );
            return compaction.give_up();
        }
        compaction.replayed();
        glommio::spawn_local(self.clone().journal_covers(compaction)).detach();
    }

    /// Once every shard's base is on disk, wait for this shard's journal
    /// to be on disk up to that moment (a URL some replay found seen
    /// because a page of this run had found it is then in a journal on
    /// disk), and count this shard in. Gives up when the shard stops.
    async fn journal_covers(self: Rc<Self>, compaction: Arc<Compaction>) {
        while !compaction.all_replayed() {
            if self.stopping.get() || compaction.given_up() {
                return;
            }
            glommio::timer::sleep(COMPACTION_POLL).await;
        }
        let Some(mark) = self.journal_appended() else {
            return compaction.give_up();
        };
        loop {
            match self.journal_durable() {
                Some(durable) if durable >= mark => break,
                Some(_) if !self.stopping.get() => glommio::timer::sleep(COMPACTION_POLL).await,
                _ => return,
            }
        }
        compaction.synced();
    }

    /// The replay ends early: the shard stops, or SIGINT/SIGTERM came (the
    /// watch that would see it starts after the replay); what is left of
    /// the journals is read by the next resume.
    fn replay_cut(&self) -> bool {
        self.stopping.get() || self.interrupt.load(std::sync::atomic::Ordering::Relaxed)
    }
}
