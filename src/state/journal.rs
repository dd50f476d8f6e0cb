//! The journal of discovered URLs: its files and how they are read back.
//!
//! Each shard appends, to `shard-{i}/journal-{run}.bin`, every URL its
//! pages found and it sent on (to its own frontier or a peer's), before
//! the records of those pages may be written: a page with a record always
//! has its links here, on disk. The file is a sequence of the frontier's
//! chunks ([`chunk`]: a header with a CRC32, then the jobs), one per
//! flush; a run that was killed leaves at most its last chunk torn, and
//! reading stops there. A bad chunk with whole chunks after it is damage,
//! not a tear: the reader skips to the next whole chunk (found by its
//! magic and checksum) and counts what it skipped, and a resume stops on
//! it unless told to accept the loss ([`check`]). A compaction's base is
//! written whole and synced before the marker names it: a short tail
//! there is damage too ([`check_whole`]).
//!
//! A resume replays the journals of the earlier runs, minus the URLs that
//! have a record ([`super::done`]), each read once ([`super::replay`]);
//! a resume whose replay ends writes what was still queued to bases (in
//! the same chunks) and removes the journals they cover
//! ([`super::compact`]). A journal is never rewritten; the prefix an
//! in-run compaction's bases cover, which nothing reads again, has its
//! blocks freed ([`free_prefix`]).
//!
//! Not the writing (the shard's `journal.rs`, with glommio's file I/O) and
//! not the decision of what is journaled.

use std::fs::{self, File};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::job::chunk::{self, HEADER};
use crate::job::Job;

use super::{io_err, Damaged, StateError};

/// The journal a shard writes in run `run`, in its folder `shard_dir`.
pub(crate) fn path(shard_dir: &Path, run: u32) -> PathBuf {
    shard_dir.join(format!("journal-{run:06}.bin"))
}

/// The file system's block size the freed prefix is rounded down to: no
/// block the journal's writer may still write is touched.
const BLOCK: u64 = 4096;

/// Free the blocks of the journal `path` before byte `to` (a hole
/// punched, the length kept) once a compaction's marker says nothing
/// reads them: its disk then holds what the bases do not. `Ok(false)`: the
/// file system cannot punch holes (the bytes stay, as before).
pub(crate) fn free_prefix(path: &Path, to: u64) -> Result<bool, StateError> {
    use rustix::fs::{fallocate, FallocateFlags};
    let len = to - to % BLOCK;
    if len == 0 {
        return Ok(true);
    }
    let file = fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(io_err("opening", path))?;
    let mode = FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE;
    match fallocate(&file, mode, 0, len) {
        Ok(()) => Ok(true),
        Err(e) if e == rustix::io::Errno::OPNOTSUPP => Ok(false),
        Err(e) => Err(io_err("freeing the covered prefix of", path)(e.into())),
    }
}

/// The runs whose journals `shard_dir` holds, in order.
pub(crate) fn runs(shard_dir: &Path) -> Result<Vec<u32>, StateError> {
    let entries = match fs::read_dir(shard_dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err("listing", shard_dir)(e)),
    };
    let mut runs = Vec::new();
    for entry in entries {
        let entry = entry.map_err(io_err("listing", shard_dir))?;
        let name = entry.file_name();
        let run = name
            .to_str()
            .and_then(|n| n.strip_prefix("journal-"))
            .and_then(|n| n.strip_suffix(".bin"))
            .and_then(|n| n.parse::<u32>().ok());
        runs.extend(run);
    }
    runs.sort_unstable();
    Ok(runs)
}

/// What reading one journal found.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct JournalRead {
    /// Whole chunks read.
    pub chunks: u64,
    /// Jobs in them.
    pub jobs: u64,
    /// Bytes after the last whole chunk (a chunk torn by a kill), left
    /// unread.
    pub torn: u64,
    /// Damaged stretches skipped: bytes that are no whole chunk, with a
    /// whole chunk after them (a kill tears only the end: this is damage,
    /// and their URLs are lost).
    pub damaged: u64,
    /// Bytes in those stretches.
    pub skipped: u64,
    /// Where the first of them starts.
    pub first_damage: Option<u64>,
}

/// A journal or base a resume replays, with what its check found: the
/// replay decodes every chunk again, and finding other than that (more
/// damage, or a last chunk that no longer reads whole) is damage since
/// the check, which stops the crawl unless the crawl accepts any loss
/// (`--resume-discard-damaged`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToReplay {
    /// The file.
    pub path: PathBuf,
    /// Where its replay starts: 0, or for the journal of the run an
    /// in-run compaction covered, the end of the prefix its base holds
    /// (a chunk boundary).
    pub from: u64,
    /// What its check found (its damage accepted).
    pub checked: JournalRead,
    /// Any damage is accepted.
    pub discard: bool,
}

impl ToReplay {
    /// Damaged stretches accepted.
    pub(crate) fn accepted(&self) -> u64 {
        match self.discard {
            true => u64::MAX,
            false => self.checked.damaged,
        }
    }
}

/// A journal read a chunk at a time.
pub(crate) struct Reader {
    path: PathBuf,
    file: File,
    size: u64,
    /// Where the next chunk starts.
    at: u64,
    read: JournalRead,
    /// Where the last damaged stretch found starts.
    last_damage: Option<u64>,
    /// The end was reached, or a torn tail: nothing more is read.
    ended: bool,
    /// Decode the jobs; else check each chunk by its checksum only and
    /// hand out no jobs ([`Reader::checking`]).
    decode: bool,
    bytes: Vec<u8>,
}

impl Reader {
    /// Open the journal at `path`. Blocking reads: for the main thread, or
    /// a shard before its fetches start.
    pub(crate) fn open(path: &Path) -> Result<Reader, StateError> {
        Reader::new(path, true)
    }

    /// [`Reader::open`], reading from byte `from` (a chunk boundary) on.
    pub(crate) fn open_from(path: &Path, from: u64) -> Result<Reader, StateError> {
        let mut reader = Reader::new(path, true)?;
        reader.at = from;
        Ok(reader)
    }

    /// [`Reader::open`], reading the bytes from `from` up to `to` (both
    /// chunk boundaries) as if the file ended there: the prefix of a
    /// journal still being written that is known to be on disk.
    pub(crate) fn open_range(path: &Path, from: u64, to: u64) -> Result<Reader, StateError> {
        let mut reader = Reader::open_from(path, from)?;
        reader.size = reader.size.min(to);
        Ok(reader)
    }

    /// Open the journal at `path` to check it: each chunk is read and
    /// checked by its header and checksum, and [`Reader::next_chunk`]
    /// hands out no jobs (a check does not pay for decoding them).
    pub(crate) fn checking(path: &Path) -> Result<Reader, StateError> {
        Reader::new(path, false)
    }

    fn new(path: &Path, decode: bool) -> Result<Reader, StateError> {
        let file = File::open(path).map_err(io_err("opening", path))?;
        let size = file.metadata().map_err(io_err("reading", path))?.len();
        Ok(Reader {
            path: path.to_path_buf(),
            file,
            size,
            at: 0,
            read: JournalRead::default(),
            last_damage: None,
            ended: false,
            decode,
            bytes: Vec::new(),
        })
    }

    /// The next whole chunk's jobs; None at the end, or at a torn tail (a
    /// chunk cut short or failing its checksum with no whole chunk after
    /// it). A bad chunk with whole chunks after it is skipped: the reader
    /// finds the next whole chunk and goes on from there, counting what
    /// it skipped ([`JournalRead::damaged`]).
    pub(crate) fn next_chunk(&mut self) -> Result<Option<Vec<Job>>, StateError> {
        if self.ended {
            return Ok(None);
        }
        if let Some((jobs, count, len)) = self.chunk_at(self.at)? {
            self.take(count, len);
            return Ok(Some(jobs));
        }
        // Not a whole chunk here: the next one that is, if any.
        let mut from = self.at.saturating_add(1);
        while let Some(candidate) = self.find_magic(from)? {
            if let Some((jobs, count, len)) = self.chunk_at(candidate)? {
                let skipped = candidate.saturating_sub(self.at);
                self.read.damaged += 1;
                self.read.skipped = self.read.skipped.saturating_add(skipped);
                self.read.first_damage.get_or_insert(self.at);
                self.last_damage = Some(self.at);
                log::warn!(
                    "{}: {skipped} damaged bytes at byte {} skipped (their URLs are lost)",
                    self.path.display(),
                    self.at
                );
                self.at = candidate;
                self.take(count, len);
                return Ok(Some(jobs));
            }
            from = candidate.saturating_add(1);
        }
        self.ended = true;
        Ok(None)
    }

    /// Count a whole chunk of `jobs` jobs, `len` bytes long, at `at`.
    fn take(&mut self, jobs: u64, len: u64) {
        self.read.chunks += 1;
        self.read.jobs += jobs;
        self.at = self.at.saturating_add(len);
    }

    /// The jobs (none when only checking), their count and the length of
    /// the whole chunk at `at`, if one is there. A header is trusted no
    /// further than the file's end: a damaged length allocates nothing
    /// past it.
    fn chunk_at(&mut self, at: u64) -> Result<Option<(Vec<Job>, u64, u64)>, StateError> {
        let path = &self.path;
        let mut header = [0u8; HEADER];
        if read_at(&self.file, &mut header, at).map_err(io_err("reading", path))? < HEADER {
            return Ok(None);
        }
        let Some(len) = chunk::len(&header) else {
            return Ok(None);
        };
        if len as u64 > self.size.saturating_sub(at) {
            return Ok(None);
        }
        self.bytes.clear();
        self.bytes.resize(len, 0);
        if read_at(&self.file, &mut self.bytes, at).map_err(io_err("reading", path))? < len {
            return Ok(None);
        }
        if !self.decode {
            return Ok(chunk::verify(&self.bytes)
                .ok()
                .map(|count| (Vec::new(), u64::from(count), len as u64)));
        }
        Ok(chunk::decode(&self.bytes)
            .ok()
            .map(|jobs| (jobs.len() as u64, jobs))
            .map(|(count, jobs)| (jobs, count, len as u64)))
    }

    /// The offset of the next chunk magic at or after `from`, if any.
    fn find_magic(&self, from: u64) -> Result<Option<u64>, StateError> {
        const BLOCK: usize = 1 << 16;
        let magic = chunk::MAGIC;
        let mut block = vec![0u8; BLOCK];
        let mut at = from;
        while at < self.size {
            let n = read_at(&self.file, &mut block, at).map_err(io_err("reading", &self.path))?;
            let Some(window) = block.get(..n) else {
                return Ok(None);
            };
            if let Some(i) = window.windows(magic.len()).position(|w| w == magic) {
                return Ok(Some(at.saturating_add(i as u64)));
            }
            if n < BLOCK {
                return Ok(None);
            }
            // The next block overlaps this one's last bytes, so a magic
            // across the boundary is found.
            at = at.saturating_add((n - magic.len() + 1) as u64);
        }
        Ok(None)
    }

    /// Where the last damaged stretch found so far starts.
    pub(crate) fn last_damage(&self) -> Option<u64> {
        self.last_damage
    }

    /// What was read so far; `torn` counts the bytes after the last whole
    /// chunk once the end was reached.
    pub(crate) fn read(&self) -> JournalRead {
        JournalRead {
            torn: if self.ended {
                self.size.saturating_sub(self.at)
            } else {
                0
            },
            ..self.read
        }
    }
}

/// Read the journal at `path` through, checking every chunk (its
/// checksum, and its records walked as a replay decodes them): what a
/// resume replays of it. Damage (a bad stretch with whole chunks after
/// it) is an error naming the file and the byte, unless `discard`.
#[cfg(test)]
pub(crate) fn check(path: &Path, discard: bool) -> Result<JournalRead, StateError> {
    check_from(path, 0, discard)
}

/// [`check`] from byte `from` on (where an in-run compaction's base ends
/// for this journal). A file shorter than that lost bytes its base no
/// longer holds: damage, unless `discard`.
pub(crate) fn check_from(path: &Path, from: u64, discard: bool) -> Result<JournalRead, StateError> {
    let mut reader = Reader::checking(path)?;
    if reader.size < from && !discard {
        return Err(Damaged {
            path: path.to_path_buf(),
            place: "a journal's end".to_string(),
            byte: reader.size,
            what: format!("the file ends before byte {from}, which a compaction covered"),
        }
        .into());
    }
    reader.at = from;
    while reader.next_chunk()?.is_some() {}
    damage(path, reader.read(), discard)
}

/// [`check`] for a file written whole and synced before anything named
/// it (a compaction's base): a short or bad tail is no kill's tear but
/// damage too, refused unless `discard` (its URLs are then lost).
pub(crate) fn check_whole(path: &Path, discard: bool) -> Result<JournalRead, StateError> {
    let mut reader = Reader::checking(path)?;
    while reader.next_chunk()?.is_some() {}
    let read = reader.read();
    if read.torn > 0 && !discard {
        let byte = reader.at;
        return Err(Damaged {
            path: path.to_path_buf(),
            place: "a base's last chunk".to_string(),
            byte,
            what: format!(
                "{} bytes that are no whole chunk at the end of a file written whole",
                read.torn
            ),
        }
        .into());
    }
    damage(path, read, discard)
}

/// `read`, or the error its damage is unless `discard`.
fn damage(path: &Path, read: JournalRead, discard: bool) -> Result<JournalRead, StateError> {
    if let (Some(byte), false) = (read.first_damage, discard) {
        return Err(Damaged {
            path: path.to_path_buf(),
            place: "a journal chunk".to_string(),
            byte,
            what: format!(
                "{} stretches, {} bytes, that are no whole chunk, with whole chunks after them",
                read.damaged, read.skipped
            ),
        }
        .into());
    }
    Ok(read)
}

/// Fill `buf` from `file` at `at`; fewer bytes only at the end of the
/// file.
fn read_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    let mut filled = 0;
    while let Some(rest) = buf.get_mut(filled..).filter(|r| !r.is_empty()) {
        match file.read_at(rest, at.saturating_add(filled as u64)) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Read the journal at `path`, handing each whole chunk's jobs to `each`
    /// in order, up to its end or its first torn chunk.
    fn read(path: &Path, mut each: impl FnMut(Vec<Job>)) -> Result<JournalRead, StateError> {
        let mut reader = Reader::open(path)?;
        while let Some(jobs) = reader.next_chunk()? {
            each(jobs);
        }
        Ok(reader.read())
    }

    /// A fresh, empty directory for one test.
    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("ringcrawl-journal-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn jobs(urls: &[&str]) -> Vec<Job> {
        urls.iter()
            .map(|u| Job::root((*u).to_string(), 3))
            .collect()
    }

    #[test]
    fn a_journal_torn_in_its_last_chunk_reads_every_whole_chunk_before_it() {
        let dir = scratch("torn");
        let path = path(&dir, 2);
        let mut bytes = Vec::new();
        chunk::encode(&jobs(&["http://a.test/1", "http://a.test/2"]), &mut bytes);
        chunk::encode(&jobs(&["http://b.test/3"]), &mut bytes);
        let whole = bytes.len();
        chunk::encode(&jobs(&["http://c.test/4"]), &mut bytes);
        for cut in [whole, whole + 3, whole + HEADER + 2, bytes.len() - 1] {
            File::create(&path)
                .unwrap()
                .write_all(&bytes[..cut])
                .unwrap();
            let mut urls = Vec::new();
            let read = read(&path, |jobs| urls.extend(jobs.into_iter().map(|j| j.url))).unwrap();
            assert_eq!(
                urls,
                ["http://a.test/1", "http://a.test/2", "http://b.test/3"]
            );
            assert_eq!((read.chunks, read.jobs), (2, 3));
            assert_eq!(read.torn, (cut - whole) as u64, "cut at {cut}");
        }
        File::create(&path).unwrap().write_all(&bytes).unwrap();
        let read = read(&path, |_| {}).unwrap();
        assert_eq!((read.chunks, read.jobs, read.torn), (3, 4, 0));
        assert_eq!(runs(&dir).unwrap(), [2]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_chunk_with_a_flipped_bit_ends_the_journal_there() {
        let dir = scratch("flipped");
        let path = path(&dir, 0);
        let mut bytes = Vec::new();
        chunk::encode(&jobs(&["http://a.test/1"]), &mut bytes);
        let first = bytes.len();
        chunk::encode(&jobs(&["http://a.test/2"]), &mut bytes);
        bytes[first + HEADER + 1] ^= 1;
        File::create(&path).unwrap().write_all(&bytes).unwrap();
        let read = read(&path, |_| {}).unwrap();
        assert_eq!((read.chunks, read.torn), (1, (bytes.len() - first) as u64));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_damaged_chunk_between_whole_ones_is_skipped_and_reported_not_the_end() {
        let dir = scratch("damaged");
        let path = path(&dir, 0);
        let mut bytes = Vec::new();
        chunk::encode(&jobs(&["http://a.test/1"]), &mut bytes);
        let first = bytes.len();
        chunk::encode(&jobs(&["http://a.test/2", "http://a.test/3"]), &mut bytes);
        let second = bytes.len();
        chunk::encode(&jobs(&["http://a.test/4"]), &mut bytes);
        // A flipped bit in the second chunk's records; then a header with
        // its magic intact and a length of 4 GiB.
        let mut flipped = bytes.clone();
        flipped[first + HEADER + 1] ^= 1;
        let mut huge = bytes.clone();
        huge[first + 8..first + 12].copy_from_slice(&u32::MAX.to_le_bytes());
        for damaged in [flipped, huge] {
            File::create(&path).unwrap().write_all(&damaged).unwrap();
            let mut urls = Vec::new();
            let read = read(&path, |jobs| urls.extend(jobs.into_iter().map(|j| j.url))).unwrap();
            assert_eq!(urls, ["http://a.test/1", "http://a.test/4"]);
            assert_eq!((read.chunks, read.damaged, read.torn), (2, 1, 0));
            assert_eq!(read.skipped, (second - first) as u64);
            assert_eq!(read.first_damage, Some(first as u64));
            match check(&path, false).unwrap_err() {
                StateError::Damaged(d) => {
                    assert_eq!(d.byte, first as u64);
                    assert!(d.to_string().contains(&path.display().to_string()));
                }
                e => panic!("not damage: {e}"),
            }
            assert_eq!(check(&path, true).unwrap().chunks, 2);
            assert_eq!(fs::read(&path).unwrap(), damaged, "nothing changed");
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_chunk_whose_checksum_holds_but_whose_count_is_off_is_damage_found_by_the_check() {
        let dir = scratch("count");
        let path = path(&dir, 0);
        let mut bytes = Vec::new();
        chunk::encode(&jobs(&["http://a.test/1"]), &mut bytes);
        let first = bytes.len();
        chunk::encode(&jobs(&["http://a.test/2", "http://a.test/3"]), &mut bytes);
        chunk::encode(&jobs(&["http://a.test/4"]), &mut bytes);
        // The count is outside the checksum.
        bytes[first + 4] = 9;
        File::create(&path).unwrap().write_all(&bytes).unwrap();
        match check(&path, false).unwrap_err() {
            StateError::Damaged(d) => assert_eq!(d.byte, first as u64),
            e => panic!("not damage: {e}"),
        }
        let accepted = check(&path, true).unwrap();
        assert_eq!((accepted.chunks, accepted.damaged), (2, 1));
        let mut urls = Vec::new();
        read(&path, |jobs| urls.extend(jobs.into_iter().map(|j| j.url))).unwrap();
        assert_eq!(urls, ["http://a.test/1", "http://a.test/4"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_base_with_a_short_tail_is_refused_where_a_journal_is_cut() {
        let dir = scratch("base-tail");
        let path = dir.join("base-000003.bin");
        let mut bytes = Vec::new();
        chunk::encode(&jobs(&["http://a.test/1"]), &mut bytes);
        let whole = bytes.len();
        chunk::encode(&jobs(&["http://a.test/2"]), &mut bytes);
        File::create(&path)
            .unwrap()
            .write_all(&bytes[..bytes.len() - 3])
            .unwrap();
        // As a journal: a torn tail, read up to it.
        let read = check(&path, false).unwrap();
        assert_eq!(
            (read.chunks, read.torn),
            (1, (bytes.len() - 3 - whole) as u64)
        );
        // As a base: damage, at the byte the short chunk starts.
        match check_whole(&path, false).unwrap_err() {
            StateError::Damaged(d) => {
                assert_eq!(d.byte, whole as u64);
                assert!(d.to_string().contains("base-000003.bin"), "{d}");
            }
            e => panic!("not damage: {e}"),
        }
        assert_eq!(check_whole(&path, true).unwrap().chunks, 1);
        File::create(&path).unwrap().write_all(&bytes).unwrap();
        assert_eq!(check_whole(&path, false).unwrap().chunks, 2);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn runs_ignore_other_files_and_sort_numerically() {
        let dir = scratch("runs");
        for name in [
            "journal-000010.bin",
            "journal-000002.bin",
            "notes",
            "journal-x.bin",
        ] {
            File::create(dir.join(name)).unwrap();
        }
        assert_eq!(runs(&dir).unwrap(), [2, 10]);
        assert!(runs(&dir.join("missing")).unwrap().is_empty());
        fs::remove_dir_all(&dir).unwrap();
    }
}
