//! Compaction of a crawl's journals: what makes a resume read what is
//! still queued, not every URL ever found.
//!
//! A resume (run R) replays the earlier runs' journals; each shard writes
//! every replayed URL it did not find seen (queued again, pending, or kept
//! out by a limit) to its *base*, `shard-{i}/base-{R}.bin` (journal
//! chunks), and `fdatasync`s it. The URLs those journals held are then
//! either in a base, or have a record in the log, or were found again in
//! this run (so they are in this run's journal). Once every shard's base
//! is on disk and every shard's journal is on disk up to the moment the
//! last shard finished its replay ([`Compaction`] counts both), the next
//! checkpoint writes `compacted.json` (`{"run": R}`, atomically) and
//! removes the journals and bases of the runs before R. A later resume
//! reads the bases of run R and the journals of runs R and after.
//!
//! A kill at any instant leaves a readable state: before `compacted.json`
//! names R, the bases of R are ignored (and removed by the next resume),
//! the old journals still there; after it, the files it covers are not
//! read (and removed, if a kill left them).
//!
//! Within a run, the checkpoints' thread compacts too, from the files
//! alone, once the journals no base covers outgrow the last bases
//! ([`in_run`]): its bases are `base-{R}-{seq}.bin`, and the marker then
//! says how much of run R's journals they cover (`{"run": R, "seq": k,
//! "from": [bytes, one a shard]}`); a resume reads run R's journals from
//! there. A marker without them (`{"run": R}`, the replay's) reads as
//! seq 0, from 0.
//!
//! What it is not: the writing of the replay's bases (the shard's
//! `replay.rs`, with glommio's file I/O), nor the replay
//! ([`super::replay`]). The seen-set and the spilled queues are not kept:
//! a resume rebuilds them from the log and from what the bases and
//! journals hold.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::{io_err, journal, write_atomically, StateError};

/// The file that names the run whose bases cover the journals before it.
pub(crate) const MARKER: &str = "compacted.json";

/// What `compacted.json` says: the run whose bases cover the journals
/// before it, the bases' number within that run (0: the resume's replay
/// wrote them; 1, 2, ...: in-run compactions), and how much of that run's
/// journals they cover (one length a shard; empty: none). A marker
/// without `seq` and `from` (`{"run": R}`) reads as seq 0, from 0.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Marker {
    /// The run.
    pub run: u32,
    /// The bases' number within the run.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub seq: u32,
    /// Each shard's journal of `run` is covered up to this byte (a chunk
    /// boundary).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub from: Vec<u64>,
}

fn is_zero(seq: &u32) -> bool {
    *seq == 0
}

impl Marker {
    /// Where the replay of shard `shard`'s journal of the marker's run
    /// starts.
    pub(crate) fn from(&self, shard: usize) -> u64 {
        self.from.get(shard).copied().unwrap_or(0)
    }

    /// The base of shard folder `shard_dir` this marker names.
    pub(crate) fn base(&self, shard_dir: &Path) -> PathBuf {
        base_path_seq(shard_dir, self.run, self.seq)
    }
}

/// The base shard `shard_dir`'s replay writes in run `run`.
pub(crate) fn base_path(shard_dir: &Path, run: u32) -> PathBuf {
    base_path_seq(shard_dir, run, 0)
}

/// The base of shard folder `shard_dir` numbered `seq` in run `run`: the
/// replay's is 0 (`base-{run}.bin`), an in-run compaction's more
/// (`base-{run}-{seq}.bin`).
pub(crate) fn base_path_seq(shard_dir: &Path, run: u32, seq: u32) -> PathBuf {
    match seq {
        0 => shard_dir.join(format!("base-{run:06}.bin")),
        seq => shard_dir.join(format!("base-{run:06}-{seq:06}.bin")),
    }
}

/// The runs whose bases `shard_dir` holds, in order (a run once per
/// base).
pub(crate) fn base_runs(shard_dir: &Path) -> Result<Vec<u32>, StateError> {
    Ok(bases(shard_dir)?.into_iter().map(|(run, _)| run).collect())
}

/// The bases `shard_dir` holds, as (run, seq), in order.
pub(crate) fn bases(shard_dir: &Path) -> Result<Vec<(u32, u32)>, StateError> {
    let entries = match fs::read_dir(shard_dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err("listing", shard_dir)(e)),
    };
    let mut bases = Vec::new();
    for entry in entries {
        let entry = entry.map_err(io_err("listing", shard_dir))?;
        let name = entry.file_name();
        let Some(stem) = name
            .to_str()
            .and_then(|n| n.strip_prefix("base-"))
            .and_then(|n| n.strip_suffix(".bin"))
        else {
            continue;
        };
        let (run, seq) = match stem.split_once('-') {
            Some((run, seq)) => (run.parse::<u32>().ok(), seq.parse::<u32>().ok()),
            None => (stem.parse::<u32>().ok(), Some(0)),
        };
        if let (Some(run), Some(seq)) = (run, seq) {
            bases.push((run, seq));
        }
    }
    bases.sort_unstable();
    Ok(bases)
}

/// The run `compacted.json` in the state directory `dir` names, if there
/// is one. A marker torn by a kill while it was written (its `.tmp`) is
/// removed: the one before it stands.
#[cfg(test)]
pub(crate) fn marker(dir: &Path) -> Result<Option<u32>, StateError> {
    Ok(marked(dir)?.map(|m| m.run))
}

/// What `compacted.json` in the state directory `dir` says, if there is
/// one ([`marker`], whole).
pub(crate) fn marked(dir: &Path) -> Result<Option<Marker>, StateError> {
    let tmp = dir.join(format!("{MARKER}.tmp"));
    match fs::remove_file(&tmp) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(io_err("removing", &tmp)(e)),
        _ => {}
    }
    let path = dir.join(MARKER);
    match fs::read(&path) {
        Ok(bytes) => serde_json::from_slice::<Marker>(&bytes)
            .map(Some)
            .map_err(|source| StateError::Corrupt { path, source }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err("reading", &path)(e)),
    }
}

/// The last run that left a file in `shard_dirs` or named by the
/// marker (`marker`, its run): the most of the journals', the bases' and
/// the marker's runs, so the next run's files never take an earlier run's
/// names, whichever of them a compaction removed. None for a crawl that
/// left none (it never got past its start).
pub(crate) fn last_run(
    shard_dirs: &[PathBuf],
    marker: Option<u32>,
) -> Result<Option<u32>, StateError> {
    let mut last = marker;
    for dir in shard_dirs {
        last = last.max(journal::runs(dir)?.last().copied());
        last = last.max(base_runs(dir)?.last().copied());
    }
    Ok(last)
}

/// Remove what the marker's run `run` and seq `seq` cover from the
/// folders `shard_dirs`: the journals of the runs before it, and every
/// base but its own (older ones, and those of compactions that did not
/// end). The names of the files removed. (The prefix of run `run`'s
/// journal its bases cover stays: that file is still written, and a
/// resume starts reading it past that prefix.)
pub(crate) fn remove_covered(
    shard_dirs: &[PathBuf],
    run: u32,
    seq: u32,
) -> Result<Vec<PathBuf>, StateError> {
    let mut removed = Vec::new();
    for dir in shard_dirs {
        let journals = journal::runs(dir)?.into_iter().filter(|r| *r < run);
        let journals: Vec<PathBuf> = journals.map(|r| journal::path(dir, r)).collect();
        let bases = bases(dir)?.into_iter().filter(|b| *b != (run, seq));
        let bases: Vec<PathBuf> = bases.map(|(r, s)| base_path_seq(dir, r, s)).collect();
        for path in journals.into_iter().chain(bases) {
            fs::remove_file(&path).map_err(io_err("removing", &path))?;
            removed.push(path);
        }
    }
    Ok(removed)
}

/// Remove the bases in `shard_dirs` no marker names (of a compaction that
/// did not end): without a marker, a resume reads the journals only.
pub(crate) fn remove_unmarked_bases(shard_dirs: &[PathBuf]) -> Result<(), StateError> {
    for dir in shard_dirs {
        for (run, seq) in bases(dir)? {
            let path = base_path_seq(dir, run, seq);
            fs::remove_file(&path).map_err(io_err("removing", &path))?;
        }
    }
    Ok(())
}

/// A resume's compaction under way: which shards have their base on disk
/// and their journal on disk past the end of every replay. Shared by the
/// shards and the checkpoints' thread.
#[derive(Debug)]
pub(crate) struct Compaction {
    run: u32,
    bases: Vec<PathBuf>,
    /// Shards whose base is on disk.
    replayed: AtomicUsize,
    /// Shards whose journal is on disk up to a moment after every shard's
    /// base was.
    synced: AtomicUsize,
    /// A shard did not replay to the end (it stopped, or a write failed):
    /// no compaction in this run.
    given_up: AtomicBool,
    /// The marker is written.
    done: AtomicBool,
}

impl Compaction {
    /// The compaction of run `run`, whose shards' folders are `shard_dirs`.
    pub(crate) fn new(run: u32, shard_dirs: &[PathBuf]) -> Compaction {
        Compaction {
            run,
            bases: shard_dirs.iter().map(|d| base_path(d, run)).collect(),
            replayed: AtomicUsize::new(0),
            synced: AtomicUsize::new(0),
            given_up: AtomicBool::new(false),
            done: AtomicBool::new(false),
        }
    }

    /// The base shard `shard` writes.
    pub(crate) fn base(&self, shard: usize) -> Option<&Path> {
        self.bases.get(shard).map(PathBuf::as_path)
    }

    /// A shard's base is on disk.
    pub(crate) fn replayed(&self) {
        self.replayed.fetch_add(1, Ordering::AcqRel);
    }

    /// Whether every shard's base is on disk.
    pub(crate) fn all_replayed(&self) -> bool {
        self.replayed.load(Ordering::Acquire) >= self.bases.len()
    }

    /// A shard's journal is on disk up to a moment after
    /// [`Self::all_replayed`] said yes.
    pub(crate) fn synced(&self) {
        self.synced.fetch_add(1, Ordering::AcqRel);
    }

    /// A shard will not get there: no compaction in this run.
    pub(crate) fn give_up(&self) {
        self.given_up.store(true, Ordering::Release);
    }

    /// Whether a shard gave up.
    pub(crate) fn given_up(&self) -> bool {
        self.given_up.load(Ordering::Acquire)
    }

    /// Whether the marker names this run's bases (from then on, in-run
    /// compactions may follow).
    pub(crate) fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    /// Whether the marker may be written now (and was not yet).
    fn ready(&self) -> bool {
        self.synced.load(Ordering::Acquire) >= self.bases.len()
            && !self.given_up()
            && !self.done.load(Ordering::Acquire)
    }

    /// At a checkpoint, in the state directory `dir`: if every shard is
    /// there, write the marker, then remove the files it covers. The
    /// number of files removed, or None if it is not time yet.
    pub(crate) fn compact(&self, dir: &Path) -> Result<Option<usize>, StateError> {
        if !self.ready() {
            return Ok(None);
        }
        let marker = Marker {
            run: self.run,
            seq: 0,
            from: Vec::new(),
        };
        let json = serde_json::to_vec(&marker).map_err(|source| StateError::Corrupt {
            path: dir.join(MARKER),
            source,
        })?;
        write_atomically(dir, MARKER, &json)?;
        self.done.store(true, Ordering::Release);
        let dirs: Vec<PathBuf> = self
            .bases
            .iter()
            .filter_map(|b| b.parent().map(Path::to_path_buf))
            .collect();
        Ok(Some(remove_covered(&dirs, self.run, 0)?.len()))
    }
}

pub(crate) mod in_run;
mod sort;

#[cfg(test)]
mod tests;
