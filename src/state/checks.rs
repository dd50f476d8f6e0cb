//! Which journals earlier resumes checked: `DIR/checked.json`, so a
//! resume checks only the journals written since. (A compaction's bases
//! are checked at every resume: they hold what is queued, O(queued), and a
//! bad tail there is damage the replay would take for a kill's tear.)
//!
//! A resume checks every journal and base it will replay before anything
//! is changed or fetched ([`super::journal::check`]), so that damage
//! stops it cleanly. A journal is written by one run and never again, a
//! base once by a compaction: a file checked by one resume is the same
//! at the next, and reading it again (4 s for the 1.7 GB of journals of a
//! 3M-page crawl) would make every resume cost what the crawl ever found.
//!
//! A cache, like `done.json`: an entry holds for a file of the same path,
//! length, modification time and CRC-32 of its last 4 KiB; for any other
//! (no `checked.json`, one that does not parse or is of another version, a
//! file written to or replaced since) the file is checked again. What the
//! check found is kept with the entry, so a torn tail or damage accepted
//! once with `--resume-discard-damaged` reads the same at every resume
//! (the loss was accepted once). Damage that appears later without a
//! write (a disk's) in a journal is found by the replay, which decodes
//! every chunk again and stops the crawl on a file it does not find as
//! its check did (damage in its last chunk included, which alone would
//! read as a kill's torn tail).
//!
//! Not the check itself ([`super::journal`]), nor the log's cache
//! (`super::done::covered`).

use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};

use super::done::covered::tail_crc;
use super::journal::JournalRead;
use super::{io_err, write_atomically, StateError};

/// The file, in the state directory.
pub(crate) const FILE: &str = "checked.json";

/// The layout of the file; another is read as no file.
const VERSION: u32 = 1;

/// The files earlier resumes checked, and what each check found.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Checks {
    version: u32,
    /// By path relative to the state directory.
    files: BTreeMap<String, Entry>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Entry {
    len: u64,
    /// Nanoseconds since the epoch; 0 where the file system keeps none.
    modified: u128,
    crc: u32,
    read: JournalRead,
}

impl Checks {
    /// What `checked.json` in `dir` says; empty when there is none or it
    /// does not read (the files are then checked again, and it says why).
    pub(crate) fn load(dir: &Path) -> Checks {
        let path = dir.join(FILE);
        let loaded = match std::fs::read(&path) {
            Ok(text) => serde_json::from_slice::<Checks>(&text)
                .map_err(|e| format!("it does not parse ({e})")),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Checks::new(),
            Err(e) => Err(format!("it could not be read ({e})")),
        };
        match loaded {
            Ok(checks) if checks.version == VERSION => checks,
            Ok(checks) => {
                log::info!(
                    "{}: of version {}, this ringcrawl's is {VERSION}: every journal is checked again",
                    path.display(),
                    checks.version
                );
                Checks::new()
            }
            Err(why) => {
                log::warn!("{}: {why}: every journal is checked again", path.display());
                Checks::new()
            }
        }
    }

    fn new() -> Checks {
        Checks {
            version: VERSION,
            files: BTreeMap::new(),
        }
    }

    /// What an earlier check of the file at `path` (under `dir`) found, if
    /// the file is still the one it read.
    pub(crate) fn get(&self, dir: &Path, path: &Path) -> Option<JournalRead> {
        let entry = self.files.get(&key(dir, path)?)?;
        let (len, modified) = stat(path).ok()?;
        let same = entry.len == len
            && entry.modified == modified
            && tail_crc(path, len).ok() == Some(entry.crc);
        same.then_some(entry.read)
    }

    /// Keep what the check of the file at `path` (under `dir`) found. The
    /// file is synced first: what is said checked must outlive a power
    /// loss.
    pub(crate) fn insert(
        &mut self,
        dir: &Path,
        path: &Path,
        read: JournalRead,
    ) -> Result<(), StateError> {
        let Some(key) = key(dir, path) else {
            return Ok(());
        };
        File::open(path)
            .and_then(|f| f.sync_all())
            .map_err(io_err("syncing", path))?;
        let (len, modified) = stat(path).map_err(io_err("reading", path))?;
        let crc = tail_crc(path, len)?;
        self.files.insert(
            key,
            Entry {
                len,
                modified,
                crc,
                read,
            },
        );
        Ok(())
    }

    /// Keep only the entries of `paths` (under `dir`): files a compaction
    /// removed are forgotten.
    pub(crate) fn retain(&mut self, dir: &Path, paths: &[PathBuf]) {
        let keep: std::collections::HashSet<String> =
            paths.iter().filter_map(|p| key(dir, p)).collect();
        self.files.retain(|k, _| keep.contains(k));
    }

    /// Replace `checked.json` in `dir` with these entries, atomically.
    pub(crate) fn save(&self, dir: &Path) -> Result<(), StateError> {
        let bytes = serde_json::to_vec_pretty(self).map_err(|source| StateError::Corrupt {
            path: dir.join(FILE),
            source,
        })?;
        write_atomically(dir, FILE, &bytes)
    }
}

/// The path of `path` relative to `dir`, as the file's key.
fn key(dir: &Path, path: &Path) -> Option<String> {
    path.strip_prefix(dir)
        .ok()
        .and_then(|p| p.to_str())
        .map(str::to_string)
}

/// The length and the modification time of the file at `path`.
fn stat(path: &Path) -> io::Result<(u64, u128)> {
    let meta = std::fs::metadata(path)?;
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    Ok((meta.len(), modified))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn temp(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("ringcrawl-checks-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("shard-0")).unwrap();
        dir
    }

    fn read(chunks: u64) -> JournalRead {
        JournalRead {
            chunks,
            jobs: chunks * 10,
            ..JournalRead::default()
        }
    }

    #[test]
    fn a_check_holds_at_the_next_resume_for_the_same_file_only() {
        let dir = temp("holds");
        let journal = dir.join("shard-0/journal-0");
        std::fs::write(&journal, vec![7u8; 10_000]).unwrap();
        let mut checks = Checks::load(&dir);
        assert_eq!(checks.get(&dir, &journal), None, "nothing checked yet");
        checks.insert(&dir, &journal, read(3)).unwrap();
        checks.save(&dir).unwrap();

        let checks = Checks::load(&dir);
        assert_eq!(checks.get(&dir, &journal), Some(read(3)));

        // Written to since (even bytes of the same length): checked again.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&journal)
            .unwrap()
            .write_all(b"more")
            .unwrap();
        assert_eq!(checks.get(&dir, &journal), None, "longer");
        std::fs::write(&journal, vec![8u8; 10_000]).unwrap();
        assert_eq!(checks.get(&dir, &journal), None, "other bytes");
        std::fs::remove_file(&journal).unwrap();
        assert_eq!(checks.get(&dir, &journal), None, "gone");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_cache_that_does_not_read_or_names_removed_files_is_no_cache() {
        let dir = temp("unread");
        let (a, b) = (dir.join("shard-0/journal-0"), dir.join("shard-0/journal-1"));
        std::fs::write(&a, b"a").unwrap();
        std::fs::write(&b, b"b").unwrap();
        let mut checks = Checks::load(&dir);
        checks.insert(&dir, &a, read(1)).unwrap();
        checks.insert(&dir, &b, read(2)).unwrap();
        checks.retain(&dir, std::slice::from_ref(&b));
        checks.save(&dir).unwrap();
        let checks = Checks::load(&dir);
        assert_eq!(checks.get(&dir, &a), None, "forgotten by retain");
        assert_eq!(checks.get(&dir, &b), Some(read(2)));

        std::fs::write(dir.join(FILE), b"{ torn").unwrap();
        assert_eq!(Checks::load(&dir).get(&dir, &b), None);
        let other = serde_json::json!({ "version": VERSION + 1, "files": {} });
        std::fs::write(dir.join(FILE), other.to_string()).unwrap();
        assert_eq!(Checks::load(&dir).get(&dir, &b), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
