//! The shard's side of a crawl with a state directory (`--state`): the
//! journal of the URLs it sends on, the records that wait for it, and the
//! replay of earlier runs' journals at a resume.
//!
//! The rule that makes a resume lose nothing: **a page's record is written
//! only once every URL journaled before it is on disk**. Every URL a page
//! of this shard finds and sends on (to this shard's frontier or to a
//! peer) is journaled here when it is routed, so a page that has a record
//! in the log has its links in a journal, whatever was in RAM at a kill.
//! The journal task writes what gathered as one chunk, `fdatasync`s it,
//! then lets the records held behind it go to the log: a record waits a
//! few milliseconds, the fetch slot does not wait at all.
//!
//! At a resume, before the shard's tasks start, the fingerprints of the
//! URLs with a record (read from the log on the main thread) go into the
//! seen-set; then each URL of this shard's hosts in the earlier runs'
//! journals is offered as a root is: a URL with a record is seen, a URL
//! without one is queued again (the fetches in flight at a kill are among
//! them, and so are fetched once more). The journals are read once, off
//! the executors, and their URLs routed to their shards
//! (`crate::state::replay`): the shard takes batches of its own.
//!
//! Not the file format nor the reading (`crate::state::journal`,
//! `crate::state::replay`), and not the log's writer
//! (`crate::output::writer`).

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use glommio::io::BufferedFile;

use crate::crawl::seen;
use crate::job::{chunk, Job};
use crate::output::io_error::plain;
use crate::output::record::Record;
use crate::state::compact::in_run::JournalLengths;
use crate::state::compact::Compaction;
use crate::state::replay::Replay;
use crate::sync::notify::Notify;

use super::Shard;

/// Jobs replayed between two yields to the shard's other tasks.
pub(super) const REPLAY_SLICE: usize = 4096;

/// What the shards of a crawl with a state directory share.
#[derive(Debug)]
pub(crate) struct Durability {
    /// This run's journal of each shard.
    pub journals: Vec<PathBuf>,
    /// The reading of the earlier runs' journals, replayed at the start
    /// (None for a new crawl).
    pub replay: Option<Replay>,
    /// A resume's compaction: the shards write their bases and count
    /// themselves in (None for a new crawl).
    pub compaction: Option<Arc<Compaction>>,
    /// The file of fingerprints of the URLs with a record, by owning
    /// shard; each shard takes its own and reads it (the file stays, for
    /// the next resume to append to).
    pub done: Mutex<Vec<Option<PathBuf>>>,
    /// This run resumes a crawl (the count of outstanding URLs holds one
    /// per shard until it has replayed the journals).
    pub resuming: bool,
    /// Each shard's journal, synced so far: what an in-run compaction
    /// may cover.
    pub journal_lengths: Arc<JournalLengths>,
}

/// One shard's journal: URLs routed since the last write, and records
/// that wait for them to be on disk.
pub(super) struct Journal {
    path: PathBuf,
    /// Routed since the last write.
    jobs: RefCell<Vec<Job>>,
    /// Jobs journaled in this run, and of those, on disk.
    appended: Cell<u64>,
    durable: Cell<u64>,
    /// Records in emit order, each with what must be on disk before it is
    /// written.
    held: RefCell<VecDeque<Held>>,
    /// Jobs or records were added, or the journal is to close.
    added: Notify,
    /// No more jobs: write what is left, then end.
    closing: Cell<bool>,
    /// Writing the journal or the WARC files failed: the crawl stops, and
    /// records are no longer logged (their links or archive may be
    /// missing; a resume fetches those pages again).
    failed: Cell<bool>,
    /// Records not logged since the failure.
    unlogged: Cell<u64>,
    /// With seed lists: the file where the position in this shard's seed
    /// file is kept, the position this run started at, and the bytes of
    /// it taken so far.
    seed_position: Option<PathBuf>,
    seeds_start: u64,
    seeds_taken: Cell<u64>,
}

/// A record that waits.
struct Held {
    /// Jobs journaled before it.
    jobs: u64,
    /// The WARC bytes queued before it (its own among them).
    warc: u64,
    record: Record,
}

impl Journal {
    /// A journal at `path`; `seed_position` (with seed lists) is where it
    /// keeps the position reached in the shard's seed file, from `start`.
    pub(super) fn new(path: PathBuf, seed_position: Option<PathBuf>, start: u64) -> Journal {
        Journal {
            seed_position,
            seeds_start: start,
            seeds_taken: Cell::new(start),
            path,
            jobs: RefCell::new(Vec::new()),
            appended: Cell::new(0),
            durable: Cell::new(0),
            held: RefCell::new(VecDeque::new()),
            added: Notify::new(),
            closing: Cell::new(false),
            failed: Cell::new(false),
            unlogged: Cell::new(0),
        }
    }
}

/// Records that may wait for the journal (each holds its record, some 800
/// bytes) before no new fetch starts: they pile up while `fdatasync` is
/// slow, a page's record behind each sync.
const HELD_LIMIT: usize = 16 << 10;

/// Jobs routed and not yet handed to a write (each some 250 bytes) before
/// no new fetch starts: a page routes its links whatever the disk does.
const JOBS_LIMIT: usize = 64 << 10;

impl Journal {
    /// Whether the journal is behind the pages: more than [`HELD_LIMIT`]
    /// records wait for it, or more than [`JOBS_LIMIT`] jobs for a write.
    /// The dispatcher starts no fetch meanwhile (`dispatch.rs`), so a slow
    /// disk holds the crawl back instead of filling memory; the journal
    /// task catches up whatever the dispatcher does.
    pub(super) fn behind(&self) -> bool {
        self.held.borrow().len() > HELD_LIMIT || self.jobs.borrow().len() > JOBS_LIMIT
    }
}

/// How long the journal task lets jobs gather before it writes them.
const GATHER: Duration = Duration::from_millis(2);

impl Shard {
    /// Jobs journaled in this run so far; None without a journal, or
    /// after it failed.
    pub(super) fn journal_appended(&self) -> Option<u64> {
        let journal = self.journal.as_ref().filter(|j| !j.failed.get())?;
        Some(journal.appended.get())
    }

    /// Jobs journaled in this run that are on disk; None as above.
    pub(super) fn journal_durable(&self) -> Option<u64> {
        let journal = self.journal.as_ref().filter(|j| !j.failed.get())?;
        Some(journal.durable.get())
    }

    /// Whether this shard's journal is behind ([`Journal::behind`]).
    pub(super) fn journal_behind(&self) -> bool {
        self.journal.as_ref().is_some_and(Journal::behind)
    }

    /// Journal a job this shard sends on (with `--state`).
    pub(super) fn journal_job(&self, job: &Job) {
        if let Some(journal) = &self.journal {
            journal.jobs.borrow_mut().push(job.clone());
            journal.appended.set(journal.appended.get() + 1);
            journal.added.notify_all();
        }
    }

    /// The seed file has been taken up to byte `at` (its seeds queued and
    /// journaled, its bad lines recorded).
    pub(super) fn seeds_taken_to(&self, at: u64) {
        if let Some(journal) = &self.journal {
            journal.seeds_taken.set(at);
        }
    }

    /// Write a record to the log, or hold it until the jobs journaled
    /// before it are on disk.
    pub(super) fn write_record(&self, record: Record) {
        match &self.journal {
            Some(journal) if journal.failed.get() => self.unlogged(journal, record),
            Some(journal) if !self.journal_clear(journal) => {
                journal.held.borrow_mut().push_back(Held {
                    jobs: journal.appended.get(),
                    warc: self.recording.warc.as_ref().map_or(0, |w| w.placed()),
                    record,
                });
                journal.added.notify_all();
            }
            _ => self.log_record(record),
        }
    }

    /// Write a record to the log (and keep it, for the library's report).
    fn log_record(&self, record: Record) {
        self.recording.sink.write(&record);
        self.index_logged(&record);
        if self.config.keep_records {
            self.recording.records.borrow_mut().push(record);
        }
    }

    /// Whether a record emitted now may be written at once: nothing it
    /// may depend on is still only in RAM.
    fn journal_clear(&self, journal: &Journal) -> bool {
        journal.durable.get() == journal.appended.get()
            && journal.held.borrow().is_empty()
            && self
                .recording
                .warc
                .as_ref()
                .is_none_or(|w| w.is_flushed_past(w.placed()))
    }

    /// The journal task: write the jobs that gathered as one chunk,
    /// `fdatasync`, let the records behind them go; until closed, then
    /// write what is left. A write that fails stops the crawl (the records
    /// are written anyway: they were fetched).
    pub(super) async fn keep_journal(self: Rc<Self>) {
        let Some(journal) = &self.journal else {
            return;
        };
        let file = match BufferedFile::create(&journal.path).await {
            Ok(file) => file,
            Err(e) => {
                self.journal_failed(
                    journal,
                    &format!(
                        "the journal failed: creating {}: {}",
                        journal.path.display(),
                        plain(e)
                    ),
                );
                return;
            }
        };
        if let Some(dir) = journal.path.parent() {
            if let Err(e) = seen::run::sync_dir(dir).await {
                log::warn!("shard {}: syncing {}: {e}", self.id, dir.display());
            }
        }
        let mut at = 0u64;
        let mut bytes = Vec::new();
        let mut seeds = SeedPosition::open(journal).await;
        loop {
            let idle = journal.jobs.borrow().is_empty() && journal.held.borrow().is_empty();
            if idle {
                if journal.closing.get() {
                    break;
                }
                journal.added.notified().await;
                continue;
            }
            if !journal.closing.get() {
                glommio::timer::sleep(GATHER).await;
            }
            let jobs = std::mem::take(&mut *journal.jobs.borrow_mut());
            let upto = journal.appended.get();
            let seeds_taken = journal.seeds_taken.get();
            let warc_upto = self.recording.warc.as_ref().map_or(0, |w| w.placed());
            if !jobs.is_empty() {
                bytes.clear();
                chunk::encode(&jobs, &mut bytes);
                drop(jobs);
                if let Err(e) = write_all(&file, &bytes, at).await {
                    self.journal_failed(
                        journal,
                        &format!(
                            "the journal failed: writing {}: {e}",
                            journal.path.display()
                        ),
                    );
                    break;
                }
                at += bytes.len() as u64;
                if let Err(e) = file.fdatasync().await {
                    self.journal_failed(
                        journal,
                        &format!(
                            "the journal failed: syncing {}: {}",
                            journal.path.display(),
                            plain(e)
                        ),
                    );
                    break;
                }
                if let Some(durability) = &self.durability {
                    durability.journal_lengths.synced(self.id, at);
                }
            }
            journal.durable.set(upto);
            if let Some(warc) = &self.recording.warc {
                if !warc.flushed_past(warc_upto).await {
                    self.journal_failed(journal, "the WARC files could not be written");
                    break;
                }
            }
            self.release_records(journal, upto, warc_upto);
            // To the writers now, not at the next watch: a kill then
            // finds few fetched pages without their record. The index
            // first: a line a kill leaves without its record is dropped
            // by the resume, a record without its line stays unindexed.
            self.recording.cdxj.hand_off();
            self.recording.sink.hand_off();
            if let Some(seeds) = &mut seeds {
                seeds.reached(seeds_taken).await;
            }
        }
        if let Some(seeds) = seeds {
            // Closed cleanly, every record is with the log's writer, which
            // is finished before the process ends.
            let clean = !journal.failed.get();
            seeds.close(clean.then(|| journal.seeds_taken.get())).await;
        }
        if let Err(e) = file.close().await {
            log::warn!("shard {}: closing {}: {e}", self.id, journal.path.display());
        }
    }

    /// Write the held records whose jobs (`upto`) and WARC bytes
    /// (`warc_upto`) are on disk by now.
    fn release_records(&self, journal: &Journal, upto: u64, warc_upto: u64) {
        loop {
            let next = {
                let mut held = journal.held.borrow_mut();
                match held.front() {
                    Some(h) if h.jobs <= upto && h.warc <= warc_upto => held.pop_front(),
                    _ => None,
                }
            };
            let Some(Held { record, .. }) = next else {
                return;
            };
            self.log_record(record);
        }
    }

    /// A record that may not be logged (after a failure): counted, kept
    /// for the library's report, not written.
    fn unlogged(&self, journal: &Journal, record: Record) {
        journal.unlogged.set(journal.unlogged.get() + 1);
        self.index_unlogged(&record);
        if self.config.keep_records {
            self.recording.records.borrow_mut().push(record);
        }
    }

    /// Close the journal: the task writes what is left and ends, with
    /// every held record written (or, after a failure, not logged).
    pub(super) async fn close_journal(&self, task: glommio::Task<()>) {
        if let Some(journal) = &self.journal {
            journal.closing.set(true);
            journal.added.notify_all();
            task.await;
            // Left only after a failure.
            let held: Vec<Held> = journal.held.borrow_mut().drain(..).collect();
            for Held { record, .. } in held {
                self.unlogged(journal, record);
            }
            let unlogged = journal.unlogged.get();
            if unlogged > 0 {
                if let Some(e) = self.recording.output_error.borrow_mut().as_mut() {
                    e.push_str(&format!(
                        "; {unlogged} records of shard {} not logged (a resume fetches them again)",
                        self.id
                    ));
                }
            }
        }
    }

    /// The journal or the WARC files failed: the crawl stops with the
    /// error, and no record is logged from now on (one whose links or
    /// archive may be missing must not count as done).
    fn journal_failed(&self, journal: &Journal, what: &str) {
        journal.failed.set(true);
        let message = format!("shard {}: {what}", self.id);
        // Said once, by the report's output error (every shard may fail
        // alike: a full disk fills each one's journal).
        log::debug!("{message}");
        self.recording
            .output_error
            .borrow_mut()
            .get_or_insert(message);
        self.outstanding.abort();
        self.stop();
    }

    /// At a resume: count the URLs with a record as seen (before anything
    /// else is offered to the seen-set).
    pub(super) async fn take_done(&self) {
        let Some(durability) = &self.durability else {
            return;
        };
        let done = durability
            .done
            .lock()
            .map(|mut d| d.get_mut(self.id).and_then(Option::take))
            .unwrap_or_default();
        let Some(path) = done else {
            return;
        };
        let failed = |e: crate::state::StateError| {
            self.seen_failed(&format!("reading the done URLs: {e}"));
        };
        // Blocking reads, before this shard's fetches start (as the
        // replay's).
        let fingerprints = match crate::state::done::Fingerprints::open(&path) {
            Ok(fingerprints) => fingerprints,
            Err(e) => return failed(e),
        };
        for (i, fp) in fingerprints.enumerate() {
            let fp = match fp {
                Ok(fp) => fp,
                Err(e) => return failed(e),
            };
            let merge = {
                let mut seen = self.newness.seen.borrow_mut();
                seen.insert(fp);
                seen.wants_merge()
            };
            if merge {
                if let Err(e) = seen::merge(&self.newness.seen).await {
                    self.seen_failed(&format!("merging its bucket to disk: {e}"));
                    return;
                }
            }
            if i.is_multiple_of(REPLAY_SLICE) {
                glommio::yield_if_needed().await;
            }
        }
    }
}

/// The position kept in a shard's seed file, written by the journal task.
///
/// A position is kept one round of the journal late: when it is written,
/// the seeds before it have been on disk in the journal for a round, and
/// the bad lines' records before it were handed to the log's writer a
/// round ago. A position that is behind costs a resume nothing but a few
/// lines read again (their seeds are seen); one that is ahead would lose
/// seeds, so a position that could not be written stays behind.
struct SeedPosition {
    file: BufferedFile,
    path: PathBuf,
    /// Reached by the last round, to be written by the next.
    pending: u64,
    written: u64,
}

impl SeedPosition {
    async fn open(journal: &Journal) -> Option<SeedPosition> {
        let path = journal.seed_position.clone()?;
        let start = journal.seeds_start;
        let opened = glommio::io::OpenOptions::new()
            .create(true)
            .write(true)
            .buffered_open(&path)
            .await;
        match opened {
            Ok(file) => Some(SeedPosition {
                file,
                path,
                pending: start,
                written: start,
            }),
            Err(e) => {
                log::warn!(
                    "{}: {e} (a resume reads this shard's seeds again)",
                    path.display()
                );
                None
            }
        }
    }

    /// A round ended with the seed file taken up to `taken`: write what
    /// the round before reached.
    async fn reached(&mut self, taken: u64) {
        let due = std::mem::replace(&mut self.pending, taken);
        self.write(due).await;
    }

    /// The journal closed; `last` is the position reached if it closed
    /// cleanly (every seed before it journaled, every record handed on).
    async fn close(mut self, last: Option<u64>) {
        if let Some(last) = last {
            self.write(last).await;
        }
        if let Err(e) = self.file.close().await {
            log::warn!("{}: {e}", self.path.display());
        }
    }

    async fn write(&mut self, at: u64) {
        if at <= self.written {
            return;
        }
        match write_all(&self.file, &at.to_le_bytes(), 0).await {
            Ok(()) => self.written = at,
            Err(e) => log::warn!(
                "{}: {e} (a resume reads more of this shard's seeds again)",
                self.path.display()
            ),
        }
    }
}

/// Write all of `bytes` at `at`.
pub(super) async fn write_all(
    file: &BufferedFile,
    bytes: &[u8],
    mut at: u64,
) -> std::io::Result<()> {
    let mut rest = bytes;
    while !rest.is_empty() {
        let n = file.write_at(rest.to_vec(), at).await.map_err(plain)?;
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::WriteZero,
                "wrote nothing",
            ));
        }
        rest = rest.get(n..).unwrap_or_default();
        at += n as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
