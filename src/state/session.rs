//! One run of a crawl kept in a state directory: what `crawl::run` does
//! with `--state` or `--resume` before the shards start, and the
//! checkpoints it writes while they run and when they stop.
//!
//! A new crawl writes its manifest (roots, scope, shards, outputs, the
//! fingerprint key, the command line's flags) and runs as run 0.
//!
//! A resume opens and locks the directory, checks that the crawl's fixed
//! settings are the same, takes its outputs and key from the manifest,
//! then mends what a kill may have torn and learns what was done:
//!
//! 1. the log of records (JSONL) is repaired and read ([`super::done`]),
//!    from where the last resume's read ended: the URLs with a record,
//!    into a file in the folder of their owning shard, and the budgets
//!    they spent;
//! 2. the last WARC file of each shard and run is cut back to its last
//!    whole gzip member, then the CDXJ index keeps only the lines whose
//!    WARC bytes are there and whose records the log holds
//!    ([`super::index`]), and gets back the lines of the pages whose
//!    records a kill logged without them ([`super::reindex`]);
//! 3. the journals of the earlier runs ([`super::journal`]) are checked
//!    and named for the shards, which replay them minus what is done;
//!    after a compaction ([`super::compact`]), the bases of its run and
//!    the journals from that run on, the files it covers removed.
//!
//! Damage before the end of the log, the index or a journal (not a tail a
//! kill tore) stops the resume with [`super::Damaged`] before anything is
//! changed, unless the crawl accepts the loss (`--resume-discard-damaged`).
//!
//! The seen-sets and queues are not kept across runs: a resume rebuilds
//! them from the done fingerprints, the bases and the journals (what was still queued
//! at the last compaction, and what was found since; see docs/resume.md).
//! A resume whose replay ends compacts at its next checkpoint. Crawl time
//! spent comes from the last checkpoint.
//!
//! Not the shards' side (journal writing, replay: `crawl::shard`), and no
//! I/O on an executor: this runs on the main thread.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::config::{Config, Output};
use crate::sync::WriteBack;
use ringcrawl_warc::timestamp::rfc3339_millis;

use super::checks::Checks;
use super::compact::in_run::{self, InRun, JournalLengths};
use super::compact::{self, Compaction};
use super::done::{self, Done};
use super::journal::ToReplay;
use super::manifest::{OutputPaths, ScopeSettings, Spent, WarcOutput};
use super::repair::{repair_warc_in_place, warc_files};
use super::{io_err, journal, reindex, Checkpoint, Manifest, Refused, StateDir, StateError};

mod compacting;

/// The prefix of the spill directories (seen runs, spilled queues) a run
/// makes in the state directory; a killed run's is removed by the next.
pub(crate) const SPILL_PREFIX: &str = "ringcrawl-spill-";

/// The folder of the state directory where the seed lists are kept, split
/// by shard, with each shard's position (`crate::crawl::seeds::split`).
pub(crate) const SEEDS_DIR: &str = "seeds";

/// One run of a crawl with a state directory.
#[derive(Debug)]
pub(crate) struct Session {
    dir: StateDir,
    manifest: Manifest,
    /// This run's number: 0 for the crawl's first, then one more than the
    /// last run that left a journal. It names the journals and WARC files.
    pub run: u32,
    /// What earlier runs did (None for a new crawl).
    pub done: Option<Done>,
    /// Crawl time spent by earlier runs, by the last checkpoint.
    pub elapsed_before: Duration,
    /// Checkpoints written so far, over every run.
    seq: u64,
    /// What the resume found and mended, a line each.
    pub notes: Vec<String>,
    /// What a resume replays: the bases of the last compaction and the
    /// journals from its run on, checked.
    earlier: Vec<ToReplay>,
    /// A resume's compaction, written at a checkpoint once the shards'
    /// replay is on disk.
    compaction: Option<Arc<Compaction>>,
    /// A checkpoint's read of the log failed: done.json is left as it is
    /// for the rest of the run.
    catch_up_failed: bool,
    /// What this run's WARC writers' syncs said, which a checkpoint's
    /// read of the log must hear ([`done::catch_up`]).
    warc_write_back: Arc<WriteBack>,
    /// Each shard's journal of this run, synced so far.
    journal_lengths: Arc<JournalLengths>,
    /// The compactions within this run ([`compact::in_run`]).
    in_run: InRun,
}

impl Session {
    /// Start this run of the crawl `config.state` names (nothing to do
    /// without one): create or open its directory and set `config` from
    /// it (fingerprint key, and for a resume its outputs). `config.cores`
    /// must be final.
    pub(crate) fn begin(config: &mut Config) -> Result<Option<Session>, StateError> {
        let Some(mut settings) = config.state.clone() else {
            return Ok(None);
        };
        // Absolute: the shards open their folders from their own threads,
        // and a resume may start elsewhere.
        settings.dir = std::path::absolute(&settings.dir).map_err(|source| StateError::Io {
            what: "making absolute",
            path: settings.dir.clone(),
            source,
        })?;
        let session = if settings.resume {
            Session::resume(config, &settings.dir, settings.discard_damaged)?
        } else {
            Session::create(config, &settings.dir, settings.args)?
        };
        config.fingerprint_key = session.manifest.fingerprint_key.halves().into();
        remove_stale_spills(session.dir.path());
        config.spill_dir = Some(session.dir.path().to_path_buf());
        Ok(Some(session))
    }

    fn create(config: &mut Config, path: &Path, args: Vec<String>) -> Result<Session, StateError> {
        // --wacz needs the index of every run: without --cdxj it is kept
        // in the state directory (and appended to by each resume).
        if config.wacz.is_some() && config.cdxj.is_none() {
            config.cdxj = Some(path.join("index.cdxj"));
        }
        let jsonl = match &config.output {
            Output::File(path) => Some(path.clone()),
            _ => None,
        };
        let secs = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let outputs = OutputPaths {
            jsonl,
            warc: config.warc_dir.clone().map(|dir| WarcOutput {
                dir,
                prefix: format!("ringcrawl-{secs}-{}", std::process::id()),
            }),
            cdxj: config.cdxj.clone(),
        };
        let mut manifest = Manifest::new(
            config
                .roots
                .iter()
                .map(|r| r.as_str().to_string())
                .collect(),
            ScopeSettings::of(&config.scope),
            config.cores,
            outputs,
        )?;
        manifest.args = args;
        let dir = StateDir::create(path, &manifest)?;
        Ok(Session {
            dir,
            manifest,
            run: 0,
            done: None,
            elapsed_before: Duration::ZERO,
            seq: 0,
            notes: Vec::new(),
            earlier: Vec::new(),
            compaction: None,
            catch_up_failed: false,
            warc_write_back: Arc::default(),
            journal_lengths: Arc::new(JournalLengths::new(config.cores)),
            in_run: in_run::limited(
                InRun::new(0, config.cores, false),
                compacting::limits(config),
            ),
        })
    }

    fn resume(config: &mut Config, path: &Path, discard: bool) -> Result<Session, StateError> {
        let (dir, manifest, checkpoint) = StateDir::open(path)?;
        let mismatch = |what: String| {
            StateError::Mismatch(Refused {
                path: path.to_path_buf(),
                what,
            })
        };
        if manifest.shards != config.cores {
            return Err(mismatch(format!(
                "the crawl runs on {} shards, this run on {} (resume with --cores {0}, and --max-tasks at least {0})",
                manifest.shards, config.cores
            )));
        }
        let roots: Vec<String> = config
            .roots
            .iter()
            .map(|r| r.as_str().to_string())
            .collect();
        if roots != manifest.roots {
            return Err(mismatch(format!(
                "a resumed crawl keeps its roots ({}); give none",
                manifest.roots.join(" ")
            )));
        }
        // Queued URLs were admitted under the crawl's scope, and are
        // replayed without another look: it may not change.
        let differences = manifest
            .scope
            .differences(&ScopeSettings::of(&config.scope));
        if !differences.is_empty() {
            return Err(mismatch(format!(
                "a resumed crawl keeps its scope: {}; give the crawl's own (or none of these flags)",
                differences.join("; ")
            )));
        }
        // The outputs are the crawl's, wherever this run was started.
        let jsonl = log_of(&manifest, dir.path());
        config.output = Output::File(jsonl.clone());
        config.warc_dir = manifest.outputs.warc.as_ref().map(|w| w.dir.clone());
        config.cdxj = manifest.outputs.cdxj.clone();

        let mut notes = Vec::new();
        let shard_dirs = dir.shard_dirs(manifest.shards);
        // A compaction whose marker is written is done: the files it
        // covers go (a kill may have left them); one that did not end
        // leaves bases nothing reads.
        let marked = compact::marked(dir.path())?;
        let compacted = marked.as_ref().map(|m| m.run);
        match &marked {
            Some(m) => {
                let removed = compact::remove_covered(&shard_dirs, m.run, m.seq)?;
                if !removed.is_empty() {
                    notes.push(format!(
                        "removed {} files the compaction of run {} covers",
                        removed.len(),
                        m.run
                    ));
                }
            }
            None => compact::remove_unmarked_bases(&shard_dirs)?,
        }
        let last_run = compact::last_run(&shard_dirs, compacted)?;
        let started = Instant::now();
        let mut checks = Checks::load(dir.path());
        let mut checked = Checked::default();
        let mut earlier = Vec::new();
        for (shard, shard_dir) in shard_dirs.iter().enumerate() {
            let runs = journal::runs(shard_dir)?;
            // The marker's run's journal read from past its start holds
            // what was found after the bases: gone, it is lost URLs too.
            if let Some(m) = marked.as_ref().filter(|m| m.from(shard) > 0) {
                if !runs.contains(&m.run) {
                    return Err(StateError::JournalMissing {
                        path: journal::path(shard_dir, m.run),
                        from: m.from(shard),
                    });
                }
            }
            let bases = marked.as_ref().map(|m| m.base(shard_dir));
            // The marker's run's journal is read past what its bases hold
            // (an in-run compaction's), the others whole.
            let from = |run: u32| match &marked {
                Some(m) if m.run == run => m.from(shard),
                _ => 0,
            };
            let journals = runs
                .into_iter()
                .map(|run| (journal::path(shard_dir, run), false, from(run)));
            // Damage stops the resume before anything is changed or
            // fetched (the shards replay the files once the crawl runs).
            // Every shard wrote its base, if only an empty one, before the
            // marker named it: one gone is lost URLs, not a kill.
            if let Some(base) = bases.as_ref().filter(|b| !b.exists()) {
                return Err(StateError::BaseMissing { path: base.clone() });
            }
            let bases = bases.into_iter().map(|path| (path, true, 0));
            for (path, whole, from) in bases.chain(journals) {
                // A journal an earlier resume checked is the same file
                // (written by one run): not read again. A base is always
                // checked (it is what is queued, and a short or bad tail
                // is damage there, which the replay would take for a
                // kill's tear).
                // A journal read from past its start is checked from
                // there, every time (a cached check is of the whole file).
                let cacheable = !whole && from == 0;
                let cached = cacheable.then(|| checks.get(dir.path(), &path)).flatten();
                let read = match cached {
                    Some(read) => {
                        checked.add(&path, true);
                        read
                    }
                    None => {
                        let read = match whole {
                            true => journal::check_whole(&path, discard)?,
                            false => journal::check_from(&path, from, discard)?,
                        };
                        if cacheable {
                            checks.insert(dir.path(), &path, read)?;
                        }
                        checked.add(&path, false);
                        read
                    }
                };
                if whole && read.torn > 0 {
                    notes.push(format!(
                        "{}: a short tail of {} bytes accepted (its URLs are lost)",
                        path.display(),
                        read.torn
                    ));
                }
                if read.damaged > 0 {
                    notes.push(format!(
                        "{}: {} damaged bytes in {} stretches skipped (their URLs are lost)",
                        path.display(),
                        read.skipped,
                        read.damaged
                    ));
                }
                earlier.push(ToReplay {
                    path,
                    from,
                    checked: read,
                    discard,
                });
            }
        }
        let replayed: Vec<PathBuf> = earlier.iter().map(|e| e.path.clone()).collect();
        checks.retain(dir.path(), &replayed);
        checks.save(dir.path())?;
        log::info!(
            "resume: checked {} journal files ({} MiB) in {:.1} s; {} ({} MiB) were checked by an earlier resume",
            checked.files,
            checked.bytes >> 20,
            started.elapsed().as_secs_f64(),
            checked.earlier_files,
            checked.earlier_bytes >> 20,
        );
        let started = Instant::now();
        let mut done = if jsonl.exists() {
            done::read(
                &jsonl,
                manifest.fingerprint_key.halves().into(),
                dir.path(),
                &shard_dirs,
                discard,
            )?
        } else if last_run.is_some() {
            // The log is made before any journal: gone, not yet written.
            return Err(StateError::LogMissing { path: jsonl });
        } else {
            done::Done::empty(manifest.shards)
        };
        log::info!(
            "resume: read the log's {} MiB from byte {} ({} records in all) in {:.1} s",
            (done.repaired.len.saturating_sub(done.from)) >> 20,
            done.from,
            done.counts.records,
            started.elapsed().as_secs_f64()
        );
        if let Some(why) = &done.reread {
            notes.push(format!("{}: read whole: {why}", jsonl.display()));
        }
        let started = Instant::now();
        if let Some(why) = &done.repaired.torn {
            notes.push(format!(
                "{}: cut {} bytes at {} ({why})",
                jsonl.display(),
                done.repaired.cut(),
                done.repaired.len
            ));
        }
        if let Some(warc) = &manifest.outputs.warc {
            for file in last_warc_files(&warc.dir, &warc.prefix)? {
                let len = fs::metadata(&file).map_err(io_err("reading", &file))?.len();
                let mut whole = file
                    .file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| done.counts.warc.get(n))
                    .map(|w| w.whole)
                    .unwrap_or(0);
                if whole > len {
                    // Logged records point past the end (a power loss, or
                    // a log written before this rule): read it all, and
                    // the index's lines checked before are checked again.
                    notes.push(format!(
                        "{}: the log points at byte {whole}, past its end ({len}): checked whole",
                        file.display()
                    ));
                    whole = 0;
                    done.index = None;
                }
                // The crawl syncs a WARC file when it closes it; a kill
                // leaves the last ones unsynced. The repair syncs them,
                // before the index is said checked against them (a power
                // loss must not take bytes its lines point at).
                let repaired = repair_warc_in_place(&file, whole)?;
                if let Some(why) = &repaired.torn {
                    notes.push(format!(
                        "{}: cut {} bytes ({why})",
                        file.display(),
                        repaired.cut()
                    ));
                }
            }
        }
        // After the WARC files' repair: a line must point at bytes still
        // there.
        let warc_dir = manifest.outputs.warc.as_ref().map(|w| w.dir.as_path());
        if let Some(cdxj) = &manifest.outputs.cdxj {
            let mended =
                reindex::mend(cdxj, warc_dir, &jsonl, &mut done, discard, config.max_head)?;
            notes.extend(mended.notes(cdxj));
        }
        log::info!(
            "resume: the WARC files and the index mended in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        let (elapsed_before, seq) = checkpoint
            .map(|c| (Duration::from_millis(c.elapsed_ms), c.seq))
            .unwrap_or_default();
        // A resume is never run 0, and comes after every run that left a
        // journal, a base, the marker or a WARC file (a run killed before
        // its journal existed may have begun its WARC files): no run's
        // files are written over.
        let last_warc_run = match &manifest.outputs.warc {
            Some(warc) => warc_runs(&warc.dir, &warc.prefix)?.into_iter().max(),
            None => None,
        };
        let run = last_run
            .max(last_warc_run)
            .map_or(1, |r| r.saturating_add(1));
        let shards = manifest.shards;
        Ok(Session {
            dir,
            manifest,
            run,
            done: Some(done),
            elapsed_before,
            seq,
            notes,
            earlier,
            compaction: Some(Arc::new(Compaction::new(run, &shard_dirs))),
            catch_up_failed: false,
            warc_write_back: Arc::default(),
            journal_lengths: Arc::new(JournalLengths::new(shards)),
            // After the replay's compaction, whose bases the first
            // in-run compaction reads.
            in_run: in_run::limited(InRun::new(run, shards, true), compacting::limits(config)),
        })
    }

    /// The journal shard `shard` writes in this run.
    pub(crate) fn journal(&self, shard: usize) -> PathBuf {
        journal::path(&self.dir.shard_dir(shard), self.run)
    }

    /// What a resume replays, of every shard: the bases of the last
    /// compaction, and the journals of the earlier runs (from that
    /// compaction's run on), as its check found them.
    pub(crate) fn earlier_journals(&self) -> Vec<ToReplay> {
        self.earlier.clone()
    }

    /// A resume's compaction, shared with the shards that write the bases
    /// (None for a new crawl).
    pub(crate) fn compaction(&self) -> Option<Arc<Compaction>> {
        self.compaction.clone()
    }

    /// The prefix of this run's WARC files' names: the crawl's, and the
    /// run's number after the first run, so no run writes over another's.
    pub(crate) fn warc_prefix(&self) -> Option<String> {
        self.manifest.outputs.warc.as_ref().map(|w| match self.run {
            0 => w.prefix.clone(),
            run => format!("{}-r{run}", w.prefix),
        })
    }

    /// The WARC files earlier runs wrote (a resumed crawl's WACZ packages
    /// them with this run's).
    pub(crate) fn earlier_warc_files(&self) -> Result<Vec<PathBuf>, StateError> {
        let Some(warc) = self.manifest.outputs.warc.as_ref().filter(|_| self.run > 0) else {
            return Ok(Vec::new());
        };
        let mut files: Vec<PathBuf> = crawl_warc_files(&warc.dir, &warc.prefix)?
            .into_iter()
            .map(|(_, path)| path)
            .collect();
        files.sort();
        Ok(files)
    }

    /// The state directory.
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Write a checkpoint: `elapsed` is this run's crawl time so far.
    pub(crate) fn checkpoint(
        &mut self,
        elapsed: Duration,
        spent: Spent,
        counters: BTreeMap<String, u64>,
    ) -> Result<(), StateError> {
        self.seq = self.seq.saturating_add(1);
        let total = self.elapsed_before.saturating_add(elapsed);
        self.dir.write_checkpoint(&Checkpoint {
            seq: self.seq,
            taken: rfc3339_millis(SystemTime::now()),
            elapsed_ms: u64::try_from(total.as_millis()).unwrap_or(u64::MAX),
            spent,
            counters,
        })?;
        // The next resume reads only what is logged after this. After a
        // failure, not again this run: a sync that failed once may say
        // nothing the next time (the kernel reports a lost write back
        // once), so done.json stays where it was and that resume reads
        // the log from there.
        if !self.catch_up_failed {
            let started = Instant::now();
            match self.catch_up_done() {
                Ok(0) => {}
                Ok(records) => log::debug!(
                    "done.json: {records} more records read from the log in {:.3} s",
                    started.elapsed().as_secs_f64()
                ),
                Err(e) => {
                    self.catch_up_failed = true;
                    log::warn!(
                        "reading the log's new records into done.json: {e} (not tried again this run: the next resume reads the log from the last read)"
                    );
                }
            }
        }
        // A failed compaction loses nothing: the marker is written before
        // anything is removed, and a resume removes what it covers.
        if let Some(compaction) = &self.compaction {
            match compaction.compact(self.dir.path()) {
                Ok(Some(removed)) => log::info!(
                    "compacted: the bases of run {} replace {removed} earlier files",
                    self.run
                ),
                Ok(None) => {}
                Err(e) => log::warn!("compacting the journals: {e}"),
            }
        }
        Ok(())
    }
}

impl Session {
    /// What this run's WARC writers tell of their syncs: theirs to mark,
    /// the checkpoints' to read.
    pub(crate) fn warc_write_back(&self) -> Arc<WriteBack> {
        self.warc_write_back.clone()
    }

    /// Bring `done.json` up to the log written so far
    /// ([`done::catch_up`]), so that a resume reads only what is logged
    /// after: at every checkpoint, the last once every record is written.
    /// The records read.
    fn catch_up_done(&self) -> Result<u64, StateError> {
        let log = log_of(&self.manifest, self.dir.path());
        if !log.is_file() {
            return Ok(0);
        }
        let shard_dirs = self.dir.shard_dirs(self.manifest.shards);
        let warc = self
            .manifest
            .outputs
            .warc
            .as_ref()
            .map(|w| (w.dir.as_path(), &*self.warc_write_back));
        done::catch_up(
            &log,
            self.manifest.fingerprint_key.halves().into(),
            self.dir.path(),
            &shard_dirs,
            warc,
        )
    }
}

/// The crawl's log of records: the manifest's, or `DIR/records.jsonl`.
fn log_of(manifest: &Manifest, dir: &Path) -> PathBuf {
    manifest
        .outputs
        .jsonl
        .clone()
        .unwrap_or_else(|| dir.join("records.jsonl"))
}

/// The journal files a resume checked, those an earlier resume had, and
/// their bytes (for its log).
#[derive(Default)]
struct Checked {
    files: usize,
    bytes: u64,
    earlier_files: usize,
    earlier_bytes: u64,
}

impl Checked {
    fn add(&mut self, path: &Path, earlier: bool) {
        let bytes = fs::metadata(path).map_or(0, |m| m.len());
        match earlier {
            true => {
                self.earlier_files += 1;
                self.earlier_bytes += bytes;
            }
            false => {
                self.files += 1;
                self.bytes += bytes;
            }
        }
    }
}

/// The WARC files of the crawl whose names start with `prefix` that a
/// kill may have torn: of each run and shard (`PREFIX[-rN]-sS-SEQ`), the
/// one with the highest `SEQ` (the files before it were closed whole).
fn last_warc_files(dir: &Path, prefix: &str) -> Result<Vec<PathBuf>, StateError> {
    let mut last: BTreeMap<String, (u32, PathBuf)> = BTreeMap::new();
    for (stem, path) in crawl_warc_files(dir, prefix)? {
        let Some((series, seq)) = stem
            .rsplit_once('-')
            .and_then(|(series, seq)| Some((series, seq.parse::<u32>().ok()?)))
        else {
            continue;
        };
        match last.get(series) {
            Some((best, _)) if *best >= seq => {}
            _ => {
                last.insert(series.to_string(), (seq, path));
            }
        }
    }
    Ok(last.into_values().map(|(_, path)| path).collect())
}

/// The runs whose WARC files (`PREFIX-rN-sS-SEQ`; run 0's have no `-rN`)
/// are in `dir`.
fn warc_runs(dir: &Path, prefix: &str) -> Result<Vec<u32>, StateError> {
    Ok(warc_files(dir, prefix)?
        .into_iter()
        .filter_map(|(stem, _)| run_of_warc(&stem, prefix))
        .collect())
}

/// The crawl's WARC files in `dir`, stem and path: those named as a run of
/// the crawl whose prefix is `prefix` names them, not another crawl's whose
/// prefix only begins like it (`ringcrawl-T-42-...` beside the crawl
/// `ringcrawl-T-4`).
fn crawl_warc_files(dir: &Path, prefix: &str) -> Result<Vec<(String, PathBuf)>, StateError> {
    let mut files = warc_files(dir, prefix)?;
    files.retain(|(stem, _)| run_of_warc(stem, prefix).is_some());
    Ok(files)
}

/// The run a WARC file's stem names: `PREFIX-rN-sS-SEQ` is run N,
/// `PREFIX-sS-SEQ` run 0.
fn run_of_warc(stem: &str, prefix: &str) -> Option<u32> {
    let rest = stem.strip_prefix(prefix)?.strip_prefix('-')?;
    match rest.strip_prefix('r') {
        Some(numbered) => numbered.split_once('-')?.0.parse().ok(),
        None => rest.starts_with('s').then_some(0),
    }
}

/// Remove the spill directories earlier runs left in `dir` (a killed run
/// cannot remove its own); what fails to go is only logged.
fn remove_stale_spills(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let stale = entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.starts_with(SPILL_PREFIX));
        if stale {
            if let Err(e) = fs::remove_dir_all(entry.path()) {
                log::warn!("removing {}: {e}", entry.path().display());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compactions_scratch_folder_is_a_spill_folder_a_kill_leaves_for_the_next_run() {
        assert!(in_run::SCRATCH.starts_with(SPILL_PREFIX));
    }

    #[test]
    fn a_warc_files_run_is_read_from_its_name_and_other_crawls_files_are_not_counted() {
        for (stem, run) in [
            ("P-s0-00000", Some(0)),
            ("P-s12-00003", Some(0)),
            ("P-r1-s0-00000", Some(1)),
            ("P-r27-s1-00002", Some(27)),
            ("P2-r5-s0-00000", None),
            ("P-rx-s0-00000", None),
            ("P-x", None),
            ("Q-r3-s0-00000", None),
        ] {
            assert_eq!(run_of_warc(stem, "P"), run, "{stem}");
        }
    }

    #[test]
    fn the_files_a_kill_may_have_torn_are_the_last_of_each_run_and_shard_of_this_crawl() {
        let dir = std::env::temp_dir().join(format!("ringcrawl-session-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        for name in [
            "P-s0-00000.warc.gz",
            "P-s0-00001.warc.gz",
            "P-s1-00000.warc.gz",
            "P-r1-s0-00000.warc.gz",
            "P-r1-s0-00002.warc.gz",
            "Q-s0-00007.warc.gz",
            "P2-s0-00009.warc.gz",
            "P2-r4-s0-00009.warc.gz",
            "P-s0-00003.cdxj",
        ] {
            fs::write(dir.join(name), b"").unwrap();
        }
        let mut last: Vec<String> = last_warc_files(&dir, "P")
            .unwrap()
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        last.sort();
        assert_eq!(
            last,
            [
                "P-r1-s0-00002.warc.gz",
                "P-s0-00001.warc.gz",
                "P-s1-00000.warc.gz"
            ]
        );
        assert_eq!(warc_runs(&dir, "P").unwrap().into_iter().max(), Some(1));
        assert!(last_warc_files(&dir.join("none"), "P").unwrap().is_empty());
        fs::remove_dir_all(&dir).unwrap();
    }
}
