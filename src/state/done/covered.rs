//! What was read of the log: `DIR/done.json`, so a resume reads only the
//! records written since the last read, not the whole log.
//!
//! A resume (or a checkpoint, [`super::catch_up`]) reads the log from
//! where the last read stopped, appends the new records' fingerprints to
//! each shard's `done.fp`, adds their counts to the ones kept here, and then replaces this file ([`Covered`]: the
//! log's length read, a checksum of the bytes just before it, each
//! `done.fp`'s length, the counts). The order makes a kill at any moment
//! safe: the log and the `done.fp` files are synced before the file that
//! names their lengths is written (atomically), and the next resume cuts
//! each `done.fp` back to the length named here before it appends, so
//! fingerprints a killed resume appended are written again, not twice.
//!
//! A cache, not data: everything in it can be made again from the log.
//! So when it does not match what is on disk (no file, one that does not
//! parse, a log shorter than it says or whose bytes before that length
//! changed, a `done.fp` gone or short, another shard count), the log is
//! read whole, as a first resume does, and the resume says why.
//!
//! Not the reading of the log (`super::read`), nor the shards' use of the
//! fingerprints.

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::super::{io_err, write_atomically, StateError};

/// The file, in the state directory.
pub(crate) const FILE: &str = "done.json";

/// How many bytes before the covered length the checksum takes: enough
/// that another log (replaced, or cut and written again) does not pass
/// for the one read.
const WINDOW: u64 = 4096;

/// What the log's records say, summed: of the part read so far.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Counts {
    /// Records that count (interrupted ones left out).
    pub records: u64,
    /// Of those, fetches: what `--max-pages` counted.
    pub pages: u64,
    /// Body bytes of those fetches: what `--max-bytes` counted.
    pub bytes: u64,
    /// Records of fetches cut by an interrupt: their URLs are fetched again.
    pub interrupted: u64,
    /// Of each WARC file (by name) that logged records point into, where.
    pub warc: HashMap<String, WarcLogged>,
}

/// Where the logged records of one WARC file point.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct WarcLogged {
    /// The offset of the last record in the file: a record is logged only
    /// once its WARC bytes are in the file, so everything before it is
    /// whole, and a repair starts there.
    pub whole: u64,
    /// The offset of the record the log's last line pointing into the
    /// file points at: a page's index line follows its record, in the
    /// log's order, so the index lines of the file after that one's stand
    /// for records the log does not hold.
    pub last: u64,
    /// How many logged records point into the file.
    pub records: u64,
}

impl Counts {
    /// Count a logged record that points into the WARC file `file` at
    /// `offset`.
    pub(crate) fn archived(&mut self, file: &str, offset: u64) {
        match self.warc.get_mut(file) {
            Some(logged) => {
                logged.whole = logged.whole.max(offset);
                logged.last = offset;
                logged.records = logged.records.saturating_add(1);
            }
            None => {
                let first = WarcLogged {
                    whole: offset,
                    last: offset,
                    records: 1,
                };
                self.warc.insert(file.to_string(), first);
            }
        }
    }
}

/// The version of [`Covered`]'s rules (what counts as done, how a URL is
/// fingerprinted and sharded): a `done.json` of another is not used.
pub(crate) const VERSION: u32 = 1;

/// The contents of `done.json`.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Covered {
    /// [`VERSION`] when written (0: not read from a file).
    #[serde(default)]
    pub version: u32,
    /// The log's bytes read, from its start: whole lines.
    pub log_len: u64,
    /// CRC-32 of the (up to) [`WINDOW`] bytes of the log before `log_len`.
    pub log_crc: u32,
    /// Each shard's `done.fp` length: the fingerprints of those records.
    pub fingerprints: Vec<u64>,
    /// The records' counts.
    pub counts: Counts,
    /// What of the CDXJ index the last resume checked against them (none
    /// without an index, or before a resume has checked it).
    #[serde(default)]
    pub index: Option<IndexCovered>,
}

/// The part of the CDXJ index a resume checked ([`super::super::index`]):
/// its lines point at WARC bytes on disk and stand for logged records,
/// and the records the log held then have their lines. WARC files are a
/// run's own and earlier runs' are not written again, so these lines stay
/// so; a later resume checks only the lines after `len`.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct IndexCovered {
    /// The index's length checked: whole lines.
    pub len: u64,
    /// CRC-32 of the (up to) [`WINDOW`] bytes before `len`.
    pub crc: u32,
    /// Of each WARC file with a page's line, the offset the last one
    /// points at.
    pub indexed: HashMap<String, u64>,
}

impl IndexCovered {
    /// What was checked of the index at `path` made of what it is now and
    /// the lines `indexed` points at. The index is synced first: what is
    /// said checked must outlive a power loss.
    pub(crate) fn of(
        path: &Path,
        indexed: HashMap<String, u64>,
    ) -> Result<IndexCovered, StateError> {
        let file = File::open(path).map_err(io_err("opening", path))?;
        file.sync_all().map_err(io_err("syncing", path))?;
        let len = file.metadata().map_err(io_err("reading", path))?.len();
        Ok(IndexCovered {
            len,
            crc: tail_crc(path, len)?,
            indexed,
        })
    }

    /// Whether it still holds for the index at `path`: the same bytes
    /// before `len`.
    pub(crate) fn holds(&self, path: &Path) -> bool {
        changed("the index", path, self.len, self.crc).is_none()
    }
}

/// The checksum [`Covered::log_crc`] and [`IndexCovered::crc`] hold, of
/// the file at `path` up to `len`.
pub(crate) fn tail_crc(path: &Path, len: u64) -> Result<u32, StateError> {
    let from = len.saturating_sub(WINDOW);
    let mut bytes = vec![0u8; usize::try_from(len - from).unwrap_or(0)];
    File::open(path)
        .and_then(|f| f.read_exact_at(&mut bytes, from))
        .map_err(io_err("reading", path))?;
    Ok(crc32fast::hash(&bytes))
}

/// Why the file at `path` (`what`, for the message) is not the one read
/// up to `len`, whose bytes before it had the checksum `crc`: shorter, or
/// those bytes changed. None: it is, maybe with more after.
fn changed(what: &str, path: &Path, len: u64, crc: u32) -> Option<String> {
    let now = std::fs::metadata(path).map_or(0, |m| m.len());
    if now < len {
        return Some(format!(
            "{what} is {now} bytes long, shorter than the {len} read before"
        ));
    }
    match tail_crc(path, len) {
        Ok(found) if found == crc => None,
        Ok(_) => Some(format!(
            "{what}'s bytes before {len} are not the ones read before"
        )),
        Err(e) => Some(e.to_string()),
    }
}

/// What `done.json` in `dir` says was read of the log at `log`, if it
/// still holds for the log and the `done.fp` files (`fingerprints`, one a
/// shard); None when there is none (no resume has read the log yet).
/// `Err` says why it does not hold (the log is then read whole).
pub(crate) fn load(
    dir: &Path,
    log: &Path,
    fingerprints: &[PathBuf],
) -> Result<Option<Covered>, String> {
    let path = dir.join(FILE);
    let text = match std::fs::read(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{} could not be read ({e})", path.display())),
    };
    let covered: Covered = serde_json::from_slice(&text)
        .map_err(|e| format!("{} does not parse ({e})", path.display()))?;
    if covered.version != VERSION {
        return Err(format!(
            "{} is of version {}, this ringcrawl's is {VERSION}",
            path.display(),
            covered.version
        ));
    }
    if covered.fingerprints.len() != fingerprints.len() {
        return Err(format!(
            "{} is of {} shards, the crawl has {}",
            path.display(),
            covered.fingerprints.len(),
            fingerprints.len()
        ));
    }
    if let Some(why) = changed("the log", log, covered.log_len, covered.log_crc) {
        return Err(why);
    }
    for (file, &want) in fingerprints.iter().zip(&covered.fingerprints) {
        let len = std::fs::metadata(file).map_or(0, |m| m.len());
        if len < want {
            return Err(format!(
                "{} is {len} bytes long, {want} were written",
                file.display()
            ));
        }
    }
    Ok(Some(covered))
}

/// Replace `done.json` in `dir` with `covered`, atomically. The log and
/// the `done.fp` files must be synced up to the lengths it names.
pub(crate) fn save(dir: &Path, covered: &Covered) -> Result<(), StateError> {
    let bytes = serde_json::to_vec(covered).map_err(|source| StateError::Corrupt {
        path: dir.join(FILE),
        source,
    })?;
    write_atomically(dir, FILE, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("ringcrawl-covered-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_record_into_a_warc_file_moves_its_last_offset_and_keeps_the_highest_whole() {
        let mut counts = Counts::default();
        counts.archived("w.warc.gz", 900);
        counts.archived("w.warc.gz", 300);
        counts.archived("v.warc.gz", 5);
        assert_eq!(
            counts.warc.get("w.warc.gz"),
            Some(&WarcLogged {
                whole: 900,
                last: 300,
                records: 2
            })
        );
        assert_eq!(counts.warc.get("v.warc.gz").map(|w| w.records), Some(1));
    }

    #[test]
    fn what_was_read_holds_only_for_the_same_log_and_fingerprint_files() {
        let dir = temp("load");
        let log = dir.join("log.jsonl");
        let fp = dir.join("done.fp");
        std::fs::write(&log, b"{\"url\":\"http://a/\"}\n{\"url\":\"http://b/\"}\n").unwrap();
        std::fs::write(&fp, [0u8; 16]).unwrap();
        let fps = [fp.clone()];
        assert_eq!(load(&dir, &log, &fps), Ok(None), "no file yet");
        let covered = Covered {
            version: VERSION,
            log_len: 20,
            log_crc: tail_crc(&log, 20).unwrap(),
            fingerprints: vec![16],
            counts: Counts {
                records: 1,
                ..Counts::default()
            },
            index: None,
        };
        save(&dir, &covered).unwrap();
        assert_eq!(load(&dir, &log, &fps), Ok(Some(covered.clone())));
        // Appended to: still the same log.
        let mut longer = std::fs::read(&log).unwrap();
        longer.extend_from_slice(b"{\"url\":\"http://c/\"}\n");
        std::fs::write(&log, &longer).unwrap();
        assert_eq!(load(&dir, &log, &fps), Ok(Some(covered.clone())));
        // Another shard count, a short done.fp, a changed or short log.
        assert!(load(&dir, &log, &[fp.clone(), fp.clone()]).is_err());
        std::fs::write(&fp, [0u8; 8]).unwrap();
        let short = load(&dir, &log, &fps).unwrap_err();
        assert!(short.contains("16 were written"), "{short}");
        std::fs::write(&fp, [0u8; 16]).unwrap();
        longer[3] = b'X';
        std::fs::write(&log, &longer).unwrap();
        let changed = load(&dir, &log, &fps).unwrap_err();
        assert!(changed.contains("not the ones read before"), "{changed}");
        std::fs::write(&log, b"{}\n").unwrap();
        let shorter = load(&dir, &log, &fps).unwrap_err();
        assert!(shorter.contains("shorter"), "{shorter}");
        let mut old = covered.clone();
        old.version = 0;
        save(&dir, &old).unwrap();
        assert!(load(&dir, &log, &fps).unwrap_err().contains("version 0"));
        std::fs::write(dir.join(FILE), b"{").unwrap();
        assert!(load(&dir, &log, &fps)
            .unwrap_err()
            .contains("does not parse"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
