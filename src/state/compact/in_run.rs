//! Compaction within a run: at a checkpoint, once the journals no base
//! covers have grown past the last base ([`GROWTH`] times, and at least
//! [`MIN_UNCOVERED`] bytes), the checkpoints' thread computes new bases
//! from what is on disk, without the shards: a base is exactly "the URLs
//! journaled minus those logged (done)", and both halves are files.
//!
//! 1. Each shard's journal length synced so far (`L_s`, a chunk boundary:
//!    [`JournalLengths`], set by the shard after each `fdatasync`) and the
//!    done fingerprints `done.json` names (`shard-N/done.fp`, which the
//!    checkpoint's catch-up keeps current with the synced log) are taken.
//! 2. The last bases and this run's journals from where they cover up to
//!    `L_s` are read once, and every URL numbered in that order
//!    (discovery order); each becomes a (fingerprint, number) pair, each
//!    done fingerprint a (fingerprint, 0) pair.
//! 3. The pairs are sorted externally ([`super::sort`], a chunk of pairs
//!    in RAM at a time): per fingerprint, a 0 first means done, else the
//!    least number is the URL's first occurrence, and survives. The
//!    survivors' numbers are sorted the same way.
//! 4. The inputs are read again, in the same order, and each survivor is
//!    written, in discovery order, to the base of the shard that owns its
//!    host (`shard-N/base-R-k.bin`, journal chunks); the files and their
//!    folders are synced.
//! 5. `compacted.json` becomes `{run: R, seq: k, from: [L_s, ...]}`
//!    (atomically), then the bases it replaces go, and the blocks of run
//!    R's journals before `L_s` are freed (a hole punched; the file is
//!    still being written past it). A resume reads the bases and run R's
//!    journals from `L_s` on.
//!
//! A kill before step 5's marker leaves bases no marker names (a resume
//! removes them, and reads what the old marker names); after it, old
//! bases a resume removes. A URL logged after step 1 stays in the base;
//! its record makes the replay skip it: a base may be a superset of what
//! is left, never a subset. The prefix of run R's journal that a base
//! covers is never read again, so freeing it needs only the marker on disk.
//!
//! What it is not: the replay's compaction at a resume ([`super::Compaction`]),
//! the replay ([`super::super::replay`]), nor when checkpoints run
//! (`crate::crawl::checkpoints`).

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use ringcrawl_links::urls;

use crate::job::{chunk, Job};
use crate::keys::{shard_for, Fingerprinter};

use super::super::done::{self, Fingerprints};
use super::super::journal::{self, Reader};
use super::super::{io_err, sync_dir, write_atomically, Damaged, StateError};
use super::sort::{Sorted, Sorter};
use super::{base_path_seq, remove_covered, Marker, MARKER};

/// The uncovered journals must be this many times the last bases' size
/// before a compaction: each costs a read of what it covers, so the work
/// is amortised over the growth.
pub(crate) const GROWTH: u64 = 2;

/// Nor is there one before the uncovered journals hold this many bytes.
pub(crate) const MIN_UNCOVERED: u64 = 64 << 20;

/// Pairs (16 bytes each) held in RAM by the external sort: 16 MiB.
pub(crate) const CHUNK: usize = 1 << 20;

/// The folder of the state directory where the sort writes its runs,
/// removed after each compaction. Its name starts with the session's
/// prefix of spill folders, so the next run removes one a kill left.
pub(crate) const SCRATCH: &str = "ringcrawl-spill-compact";

/// Jobs in one chunk of a base.
const BATCH: usize = 1024;

/// Each shard's journal of this run: the bytes on disk (synced) so far,
/// always a chunk boundary. Set by the shards, read by the checkpoints.
#[derive(Debug)]
pub(crate) struct JournalLengths(Vec<AtomicU64>);

impl JournalLengths {
    /// Lengths of `shards` journals, all 0.
    pub(crate) fn new(shards: usize) -> JournalLengths {
        JournalLengths((0..shards).map(|_| AtomicU64::new(0)).collect())
    }

    /// Shard `shard`'s journal is synced up to byte `len`.
    pub(crate) fn synced(&self, shard: usize, len: u64) {
        if let Some(at) = self.0.get(shard) {
            at.store(len, Ordering::Release);
        }
    }

    /// Each shard's synced length.
    pub(crate) fn get(&self) -> Vec<u64> {
        self.0.iter().map(|a| a.load(Ordering::Acquire)).collect()
    }
}

/// The in-run compactions of one run: what the last one covers.
#[derive(Debug)]
pub(crate) struct InRun {
    run: u32,
    /// The number of the bases the marker names (0: the resume's, or none).
    seq: u32,
    /// Whether bases of `seq` exist (false for a new crawl's first).
    based: bool,
    /// Each shard's journal of `run` is covered up to here.
    from: Vec<u64>,
    /// The bases' bytes, once measured.
    base_bytes: Option<u64>,
    min_uncovered: u64,
    chunk: usize,
    /// Set when the crawl stops: a compaction running gives up (its
    /// files go; the marker was not written, so nothing changed).
    pub(crate) stop: Arc<AtomicBool>,
    /// A compaction failed: none again this run.
    pub failed: bool,
}

/// What one compaction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Compacted {
    /// The new bases' number.
    pub seq: u32,
    /// URLs read (bases and journals), and of them, written to the bases.
    pub read: u64,
    pub kept: u64,
    /// The new bases' bytes.
    pub bytes: u64,
    /// The most pairs the sort held in RAM at once.
    pub most_held: usize,
}

impl InRun {
    /// The compactions of run `run` of `shards` shards; `based`: the
    /// marker names this run's bases (a resume whose replay compacted),
    /// else there are none yet (a new crawl).
    pub(crate) fn new(run: u32, shards: usize, based: bool) -> InRun {
        InRun {
            run,
            seq: 0,
            based,
            from: vec![0; shards],
            base_bytes: None,
            min_uncovered: MIN_UNCOVERED,
            chunk: CHUNK,
            failed: false,
            stop: Arc::new(AtomicBool::new(false)),
        }
    }

    /// With a smaller threshold or sort chunk (tests, small crawls).
    pub(crate) fn with_limits(mut self, min_uncovered: u64, chunk: usize) -> InRun {
        self.min_uncovered = min_uncovered;
        self.chunk = chunk;
        self
    }

    /// The bases the marker names now (none before the first).
    fn bases(&self, shard_dirs: &[PathBuf]) -> Vec<PathBuf> {
        match self.based {
            true => shard_dirs
                .iter()
                .map(|d| base_path_seq(d, self.run, self.seq))
                .collect(),
            false => Vec::new(),
        }
    }

    /// Whether a compaction is due, the journals synced up to `synced`.
    pub(crate) fn due(&mut self, shard_dirs: &[PathBuf], synced: &[u64]) -> bool {
        if self.failed {
            return false;
        }
        let uncovered: u64 = synced
            .iter()
            .zip(&self.from)
            .map(|(to, from)| to.saturating_sub(*from))
            .sum();
        let base = match self.base_bytes {
            Some(bytes) => bytes,
            None => {
                let bytes = self
                    .bases(shard_dirs)
                    .iter()
                    .filter_map(|b| fs::metadata(b).ok())
                    .map(|m| m.len())
                    .sum();
                self.base_bytes = Some(bytes);
                bytes
            }
        };
        uncovered >= self.min_uncovered && uncovered > base.saturating_mul(GROWTH)
    }

    /// What the next compaction reads and writes: step 1, with the
    /// journals synced up to `synced` and `done` bytes of each shard's
    /// `done.fp`.
    pub(crate) fn plan(
        &self,
        dir: &Path,
        shard_dirs: &[PathBuf],
        key: [u64; 2],
        synced: Vec<u64>,
        done: Vec<u64>,
    ) -> Plan {
        Plan {
            dir: dir.to_path_buf(),
            shard_dirs: shard_dirs.to_vec(),
            run: self.run,
            seq: self.seq.saturating_add(1),
            bases: self.bases(shard_dirs),
            from: self.from.clone(),
            to: synced
                .iter()
                .zip(&self.from)
                .map(|(to, from)| *to.max(from))
                .collect(),
            done,
            key,
            chunk: self.chunk,
            scratch: dir.join(SCRATCH),
            stop: self.stop.clone(),
        }
    }

    /// Run every step of `plan` and take its bases as the last.
    pub(crate) fn compact(&mut self, plan: Plan) -> Result<Compacted, StateError> {
        let result = plan.run();
        match &result {
            Ok(done) => {
                self.seq = plan.seq;
                self.based = true;
                self.from = plan.to.clone();
                self.base_bytes = Some(done.bytes);
            }
            // Stopped with the crawl: nothing failed.
            Err(_) if self.stop.load(Ordering::Relaxed) => {}
            Err(_) => self.failed = true,
        }
        result
    }
}

/// `in_run` with the limits `limits` (min_uncovered, chunk), if any
/// (tests set small ones to compact small crawls; else the constants).
pub(crate) fn limited(in_run: InRun, limits: Option<(u64, usize)>) -> InRun {
    match limits {
        Some((min_uncovered, chunk)) => in_run.with_limits(min_uncovered, chunk),
        None => in_run,
    }
}

/// One compaction's inputs and outputs.
#[derive(Debug)]
pub(crate) struct Plan {
    dir: PathBuf,
    shard_dirs: Vec<PathBuf>,
    run: u32,
    /// The new bases' number.
    seq: u32,
    /// The bases read.
    bases: Vec<PathBuf>,
    /// Each shard's journal is read from here up to `to`.
    from: Vec<u64>,
    to: Vec<u64>,
    /// Bytes of each shard's `done.fp` read.
    done: Vec<u64>,
    key: [u64; 2],
    chunk: usize,
    scratch: PathBuf,
    /// The crawl stops: give up.
    stop: Arc<AtomicBool>,
}

impl Plan {
    /// Every step: the survivors, the bases, the marker, the removal. On
    /// any failure before the marker (or a stop), the sort's scratch
    /// files and the new bases go: they would hold disk for the rest of
    /// the run, which makes no more compactions.
    pub(crate) fn run(&self) -> Result<Compacted, StateError> {
        let written = self
            .survivors()
            .and_then(|(mut survivors, read, most_held)| {
                let (kept, bytes) = self.write_bases(&mut survivors)?;
                Ok((read, most_held, kept, bytes))
            });
        self.remove_scratch();
        let (read, most_held, kept, bytes) = match written {
            Ok(written) => written,
            Err(e) => {
                self.remove_new_bases();
                return Err(e);
            }
        };
        if let Err(e) = self.mark() {
            self.remove_new_bases();
            return Err(e);
        }
        self.remove_covered()?;
        self.free_covered();
        Ok(Compacted {
            seq: self.seq,
            read,
            kept,
            bytes,
            most_held,
        })
    }

    /// The new bases, which no marker names (a failed or stopped
    /// compaction's).
    fn remove_new_bases(&self) {
        for dir in &self.shard_dirs {
            let path = base_path_seq(dir, self.run, self.seq);
            match fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    log::warn!("removing {}: {e}", path.display());
                }
                _ => {}
            }
        }
    }

    /// An error if the crawl stops (checked as the inputs are read).
    fn go_on(&self) -> Result<(), StateError> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(StateError::Io {
                what: "compacting",
                path: self.dir.clone(),
                source: std::io::Error::new(std::io::ErrorKind::Interrupted, "the crawl stops"),
            });
        }
        Ok(())
    }

    /// The scratch folder of the sort, emptied.
    fn fresh_scratch(&self) -> Result<(), StateError> {
        self.remove_scratch();
        fs::create_dir_all(&self.scratch).map_err(io_err("creating", &self.scratch))
    }

    fn remove_scratch(&self) {
        match fs::remove_dir_all(&self.scratch) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                log::warn!("removing {}: {e}", self.scratch.display());
            }
            _ => {}
        }
    }

    /// Hand every URL of the inputs to `each`, in discovery order: the
    /// bases, then each shard's journal from `from` to `to`. Any damage,
    /// or a journal shorter than `to`, is an error: the compaction does
    /// not happen, and nothing is lost.
    fn each_job(
        &self,
        mut each: impl FnMut(&Job) -> Result<(), StateError>,
    ) -> Result<(), StateError> {
        let mut n = 0u32;
        let mut each = |job: &Job| {
            n = n.wrapping_add(1);
            if n.is_multiple_of(4096) {
                self.go_on()?;
            }
            each(job)
        };
        for base in &self.bases {
            self.go_on()?;
            let reader = Reader::open(base)?;
            drain(reader, base, &mut each)?;
        }
        for ((shard_dir, from), to) in self.shard_dirs.iter().zip(&self.from).zip(&self.to) {
            if to <= from {
                continue;
            }
            self.go_on()?;
            let path = journal::path(shard_dir, self.run);
            let len = fs::metadata(&path).map_err(io_err("reading", &path))?.len();
            if len < *to {
                return Err(Damaged {
                    path,
                    place: "a journal's end".to_string(),
                    byte: len,
                    what: format!("shorter than the {to} bytes said synced"),
                }
                .into());
            }
            let reader = Reader::open_range(&path, *from, *to)?;
            drain(reader, &path, &mut each)?;
        }
        Ok(())
    }

    /// Steps 2 and 3: the numbers of the URLs to keep, in order; the URLs
    /// read, and the most pairs held in RAM.
    pub(crate) fn survivors(&self) -> Result<(Sorted, u64, usize), StateError> {
        self.fresh_scratch()?;
        let fingerprinter = Fingerprinter::new(self.key);
        let mut pairs = Sorter::new(&self.scratch, "pairs", self.chunk);
        for (shard_dir, bytes) in self.shard_dirs.iter().zip(&self.done) {
            let count = usize::try_from(bytes / 8).unwrap_or(usize::MAX);
            if count == 0 {
                continue;
            }
            for fingerprint in Fingerprints::open(&done::fingerprint_file(shard_dir))?.take(count) {
                pairs.push((fingerprint?, 0))?;
            }
        }
        let mut n = 0u64;
        self.each_job(|job| {
            n += 1;
            pairs.push((fingerprinter.fingerprint(&job.url), n))
        })?;
        let mut most_held = pairs.most_held;
        let mut sorted = pairs.finish()?;
        let mut kept = Sorter::new(&self.scratch, "kept", self.chunk);
        let mut last = None;
        let mut seen = 0u32;
        while let Some((fingerprint, number)) = sorted.next()? {
            seen = seen.wrapping_add(1);
            if seen.is_multiple_of(4096) {
                self.go_on()?;
            }
            // The least of a fingerprint's comes first: 0 if done, else
            // its first occurrence.
            if last == Some(fingerprint) {
                continue;
            }
            last = Some(fingerprint);
            if number != 0 {
                kept.push((number, 0))?;
            }
        }
        most_held = most_held.max(kept.most_held);
        Ok((kept.finish()?, n, most_held))
    }

    /// Step 4: write the URLs numbered in `survivors` to the bases of
    /// their owners, sync them and their folders. The URLs written, and
    /// the bases' bytes.
    pub(crate) fn write_bases(&self, survivors: &mut Sorted) -> Result<(u64, u64), StateError> {
        let shards = self.shard_dirs.len();
        let mut bases = Vec::with_capacity(shards);
        for dir in &self.shard_dirs {
            bases.push(Base::create(base_path_seq(dir, self.run, self.seq))?);
        }
        let mut next = survivors.next()?.map(|(number, _)| number);
        let (mut n, mut kept) = (0u64, 0u64);
        self.each_job(|job| {
            n += 1;
            if next != Some(n) {
                return Ok(());
            }
            let owner = shard_for(urls::host_of(&job.url), shards);
            if let Some(base) = bases.get_mut(owner) {
                base.push(job.clone())?;
                kept += 1;
            }
            next = survivors.next()?.map(|(number, _)| number);
            Ok(())
        })?;
        if next.is_some() {
            // The second reading numbered fewer URLs than the first.
            return Err(StateError::Io {
                what: "compacting",
                path: self.dir.clone(),
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "the journals read differently the second time",
                ),
            });
        }
        let mut bytes = 0;
        for base in bases {
            bytes += base.finish()?;
        }
        for dir in &self.shard_dirs {
            sync_dir(dir)?;
        }
        Ok((kept, bytes))
    }

    /// Step 5: the marker names the new bases.
    pub(crate) fn mark(&self) -> Result<(), StateError> {
        let marker = Marker {
            run: self.run,
            seq: self.seq,
            from: self.to.clone(),
        };
        let json = serde_json::to_vec(&marker).map_err(|source| StateError::Corrupt {
            path: self.dir.join(MARKER),
            source,
        })?;
        write_atomically(&self.dir, MARKER, &json)
    }

    /// Then the bases it replaces go (a resume removes them if a kill
    /// left them).
    pub(crate) fn remove_covered(&self) -> Result<usize, StateError> {
        Ok(remove_covered(&self.shard_dirs, self.run, self.seq)?.len())
    }

    /// And the prefix of this run's journals the new bases cover is
    /// freed: a long run's disk holds what is queued and what the last
    /// compaction did not cover, not everything ever found. A failure
    /// here costs disk, not URLs: it is said, and the crawl goes on.
    fn free_covered(&self) {
        for (shard_dir, to) in self.shard_dirs.iter().zip(&self.to) {
            let path = journal::path(shard_dir, self.run);
            match journal::free_prefix(&path, *to) {
                Ok(true) => {}
                Ok(false) => log::debug!(
                    "{}: the file system cannot punch holes; the covered prefix stays",
                    path.display()
                ),
                Err(e) => log::warn!("{e} (the bytes stay; the next resume removes the file)"),
            }
        }
    }
}

/// Read `reader` (of `path`) through, handing each job to `each`; damage
/// or a tail that is no whole chunk is an error.
fn drain(
    mut reader: Reader,
    path: &Path,
    each: &mut impl FnMut(&Job) -> Result<(), StateError>,
) -> Result<(), StateError> {
    while let Some(jobs) = reader.next_chunk()? {
        for job in &jobs {
            each(job)?;
        }
    }
    let read = reader.read();
    if read.damaged > 0 || read.torn > 0 {
        return Err(Damaged {
            path: path.to_path_buf(),
            place: "a chunk a compaction reads".to_string(),
            byte: read.first_damage.unwrap_or(0),
            what: format!(
                "{} damaged stretches and {} bytes of a torn chunk where all is synced",
                read.damaged, read.torn
            ),
        }
        .into());
    }
    Ok(())
}

/// A base being written: jobs gather into chunks.
struct Base {
    path: PathBuf,
    out: BufWriter<File>,
    jobs: Vec<Job>,
    bytes: Vec<u8>,
}

impl Base {
    fn create(path: PathBuf) -> Result<Base, StateError> {
        let file = File::create(&path).map_err(io_err("creating", &path))?;
        Ok(Base {
            out: BufWriter::with_capacity(1 << 16, file),
            path,
            jobs: Vec::with_capacity(BATCH),
            bytes: Vec::new(),
        })
    }

    fn push(&mut self, job: Job) -> Result<(), StateError> {
        self.jobs.push(job);
        if self.jobs.len() >= BATCH {
            self.write_chunk()?;
        }
        Ok(())
    }

    fn write_chunk(&mut self) -> Result<(), StateError> {
        if self.jobs.is_empty() {
            return Ok(());
        }
        self.bytes.clear();
        chunk::encode(&self.jobs, &mut self.bytes);
        self.jobs.clear();
        self.out
            .write_all(&self.bytes)
            .map_err(io_err("writing", &self.path))
    }

    /// Write the rest and sync the file: its bytes.
    fn finish(mut self) -> Result<u64, StateError> {
        self.write_chunk()?;
        let file = self
            .out
            .into_inner()
            .map_err(|e| e.into_error())
            .map_err(io_err("writing", &self.path))?;
        file.sync_all().map_err(io_err("syncing", &self.path))?;
        Ok(file
            .metadata()
            .map_err(io_err("reading", &self.path))?
            .len())
    }
}

#[cfg(test)]
mod tests;
