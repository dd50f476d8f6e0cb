//! The journal of discovered URLs: its files and how they are read back.
//!
//! Each shard appends, to `shard-{i}/journal-{run}.bin`, every URL its
//! pages found and it sent on (to its own frontier or a peer's), before
//! the records of those pages may be written: a page with a record always
//! has its links here, on disk. The file is a sequence of the frontier's
//! chunks ([`chunk`]: a header with a CRC32, then the jobs), one per
//! flush; a run that was killed leaves at most its last chunk torn, and
//! reading stops there.
//!
//! A resume replays every journal of every run, minus the URLs that have
//! a record ([`super::done`]); the journals are never rewritten (a crawl
//! that is resumed many times reads them all again, see docs/resume.md).
//!
//! Not the writing (the shard's `journal.rs`, with glommio's file I/O) and
//! not the decision of what is journaled.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::job::chunk::{self, HEADER};
use crate::job::Job;

use super::{io_err, StateError};

/// The journal a shard writes in run `run`, in its folder `shard_dir`.
pub fn path(shard_dir: &Path, run: u32) -> PathBuf {
    shard_dir.join(format!("journal-{run:06}.bin"))
}

/// The runs whose journals `shard_dir` holds, in order.
pub fn runs(shard_dir: &Path) -> Result<Vec<u32>, StateError> {
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
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct JournalRead {
    /// Whole chunks read.
    pub chunks: u64,
    /// Jobs in them.
    pub jobs: u64,
    /// Bytes after the last whole chunk (a chunk torn by a kill), left
    /// unread.
    pub torn: u64,
}

/// A journal read a chunk at a time.
pub struct Reader {
    path: PathBuf,
    file: File,
    size: u64,
    /// End of the last whole chunk read.
    at: u64,
    read: JournalRead,
    /// A chunk was cut short or failed its checksum: nothing more is read.
    ended: bool,
    bytes: Vec<u8>,
}

impl Reader {
    /// Open the journal at `path`. Blocking reads: for the main thread, or
    /// a shard before its fetches start.
    pub fn open(path: &Path) -> Result<Reader, StateError> {
        let file = File::open(path).map_err(io_err("opening", path))?;
        let size = file.metadata().map_err(io_err("reading", path))?.len();
        Ok(Reader {
            path: path.to_path_buf(),
            file,
            size,
            at: 0,
            read: JournalRead::default(),
            ended: false,
            bytes: Vec::new(),
        })
    }

    /// The next whole chunk's jobs; None at the end, or at the first chunk
    /// that is cut short or fails its checksum (all that follows a tear is
    /// unreadable).
    pub fn next_chunk(&mut self) -> Result<Option<Vec<Job>>, StateError> {
        if self.ended {
            return Ok(None);
        }
        self.ended = true;
        let path = &self.path;
        let mut header = [0u8; HEADER];
        if read_full(&mut self.file, &mut header).map_err(io_err("reading", path))? < HEADER {
            return Ok(None);
        }
        let Some(len) = chunk::len(&header) else {
            return Ok(None);
        };
        self.bytes.clear();
        self.bytes.extend_from_slice(&header);
        self.bytes.resize(len, 0);
        let body = self.bytes.get_mut(HEADER..).unwrap_or_default();
        if read_full(&mut self.file, body).map_err(io_err("reading", path))? < body.len() {
            return Ok(None);
        }
        let Ok(jobs) = chunk::decode(&self.bytes) else {
            return Ok(None);
        };
        self.ended = false;
        self.read.chunks += 1;
        self.read.jobs += jobs.len() as u64;
        self.at += len as u64;
        Ok(Some(jobs))
    }

    /// What was read so far; `torn` counts the bytes after the last whole
    /// chunk once the end was reached.
    pub fn read(&self) -> JournalRead {
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

/// Fill `buf` from `file`; fewer bytes only at the end of the file.
fn read_full(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while let Some(rest) = buf.get_mut(filled..).filter(|r| !r.is_empty()) {
        match file.read(rest) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
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
        let dir = std::env::temp_dir().join(format!("ringcrawl-journal-{}-{name}", std::process::id()));
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
            assert_eq!(urls, ["http://a.test/1", "http://a.test/2", "http://b.test/3"]);
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
    fn runs_ignore_other_files_and_sort_numerically() {
        let dir = scratch("runs");
        for name in ["journal-000010.bin", "journal-000002.bin", "notes", "journal-x.bin"] {
            File::create(dir.join(name)).unwrap();
        }
        assert_eq!(runs(&dir).unwrap(), [2, 10]);
        assert!(runs(&dir.join("missing")).unwrap().is_empty());
        fs::remove_dir_all(&dir).unwrap();
    }
}
