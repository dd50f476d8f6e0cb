//! The state directory (`--state DIR`, issue 18): what a crawl keeps on
//! disk so that `ringcrawl --resume DIR` can go on after a clean stop or a
//! `kill -9`.
//!
//! ```text
//! DIR/
//! ├── manifest.json     written once, when the crawl is created: the layout
//! │                     version, the settings a resume may not change (roots,
//! │                     scope mode and --exclude, shard count, output paths),
//! │                     the crawl's 128-bit fingerprint key, the creation time.
//! │                     Written last, so a directory with one holds a crawl.
//! ├── lock              flock(2)ed, exclusively, by the one process using DIR;
//! │                     holds its PID, for the error the next one gets.
//! ├── checked.json      the journals and bases earlier resumes checked, with
//! │                     what each check found ([`checks`]); a cache, written
//! │                     atomically by each resume; absent before the first.
//! ├── checkpoint.json   the last complete checkpoint: counters, budgets spent,
//! │                     elapsed time, where each output file ended. Replaced
//! │                     atomically (checkpoint.json.tmp, fsync, rename, fsync
//! │                     DIR); absent until the first checkpoint.
//! ├── compacted.json    the run whose bases replace the journals before it
//! │                     ([`compact`]); written atomically, as the checkpoint;
//! │                     absent until a resume's replay has ended.
//! ├── done.json         how much of the log of records has been read, and
//! │                     what it said ([`done::covered`]); written
//! │                     atomically by each resume and each checkpoint.
//! ├── seeds/            with --seeds: the lists split by owning shard, made
//! │                     once by the first run (seeds-complete says whole),
//! │                     and the bytes of each that its shard has taken.
//! └── shard-{i}/        one per shard: journal-{run}.bin of each run since the
//!                       last compaction and base-{run}.bin of that run
//!                       ([`journal`], [`compact`]); done.fp: the
//!                       fingerprints of the logged URLs the shard owns
//!                       ([`done`]).
//! ```
//!
//! What it is: [`StateDir`] (create, open and lock a directory, give each
//! shard its folder, write a checkpoint), the two files' contents
//! ([`manifest`]), and [`repair`], which makes the output files valid again
//! after a kill.
//!
//! What it is not: it runs on the main thread, with `std::fs`, before the
//! executors start and after they stop, never on a shard (DESIGN.md: a
//! blocking write on an executor stalls the shard). It does not decide when
//! to checkpoint nor what the shard folders hold, and it writes no output
//! file: the outputs are appended to by the crawl and only ever cut at a
//! tear by [`repair`], or, for the CDXJ index, rewritten without the lines
//! a resume drops ([`index`]) and appended to with the pages' lines a kill
//! lost, made again from their WARC records ([`reindex`]).
pub(crate) mod checks;
pub(crate) mod compact;
pub(crate) mod done;
pub(crate) mod index;
pub(crate) mod journal;
pub(crate) mod manifest;
pub(crate) mod reindex;
pub(crate) mod repair;
pub(crate) mod replay;
pub(crate) mod session;

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

pub(crate) use manifest::{Checkpoint, Manifest, FORMAT};

const MANIFEST: &str = "manifest.json";
const CHECKPOINT: &str = "checkpoint.json";
const LOCK: &str = "lock";

/// What can go wrong with a state directory or an output being repaired.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StateError {
    /// A file system call failed.
    #[error("{what} {}: {source}", .path.display())]
    Io {
        /// What was being done (`reading`, `creating`, ...).
        what: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// Another process holds the directory's lock.
    #[error("{} is in use by another process{}", .path.display(), held_by(.pid))]
    Locked {
        /// The state directory.
        path: PathBuf,
        /// The holder's PID, as it wrote it in the lock file.
        pid: Option<u32>,
    },
    /// [`StateDir::create`] on a directory that already holds a crawl.
    #[error("{} already holds a crawl (resume it, or choose another directory)", .path.display())]
    Exists {
        /// The state directory.
        path: PathBuf,
    },
    /// [`StateDir::open`] on a directory that holds no crawl.
    #[error("{} holds no crawl state (no {MANIFEST})", .path.display())]
    NoCrawl {
        /// The state directory.
        path: PathBuf,
    },
    /// A state directory of another layout version.
    #[error("{} is state format {found}; this ringcrawl reads format {FORMAT}", .path.display())]
    Format {
        /// Its manifest.
        path: PathBuf,
        /// The version it says it is.
        found: u32,
    },
    /// A state file that does not parse.
    #[error("{} is not valid: {source}", .path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// An output file shorter than its checkpoint says: bytes known to be
    /// written are gone, which no repair can undo.
    #[error("{} is {len} bytes long, but the checkpoint says {from} were written", .path.display())]
    Shorter {
        /// The output file.
        path: PathBuf,
        /// Its length.
        len: u64,
        /// Its length at the checkpoint.
        from: u64,
    },
    /// A resume asked for what the crawl cannot change.
    #[error(transparent)]
    Mismatch(#[from] Refused),
    /// The fingerprint key could not be drawn.
    #[error("drawing the fingerprint key: {0}")]
    Random(#[source] io::Error),
    /// A resume found the journals of earlier runs but not the log of
    /// records (made before any journal): what was done is unknown.
    #[error(
        "{} is missing: it is the crawl's list of what is done, and the journals say pages were \
         crawled (restore it, or start a new crawl)",
        .path.display()
    )]
    LogMissing {
        /// The log.
        path: PathBuf,
    },
    /// A base the compaction marker names is gone: the URLs it held, and
    /// only it, are lost.
    #[error(
        "{} is missing: the compaction marker says it holds a shard's queued URLs \
         (restore it, or start a new crawl)",
        .path.display()
    )]
    BaseMissing {
        /// The base.
        path: PathBuf,
    },
    /// A journal the compaction marker reads from past its start is gone:
    /// the URLs found after the marker's bases were written are lost.
    #[error(
        "{} is missing: the compaction marker says a shard's URLs found from byte {from} on \
         are in it (restore it, or start a new crawl)",
        .path.display()
    )]
    JournalMissing {
        /// The journal.
        path: PathBuf,
        /// Where the marker says its replay starts.
        from: u64,
    },
    /// Damage before the end of a file a resume reads.
    #[error(transparent)]
    Damaged(#[from] Damaged),
}

/// A resume that asks for what the crawl cannot change (its roots, its
/// scope, its number of shards): refused before anything is touched, so
/// the crawl stays resumable as it was.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {what}", .path.display())]
#[non_exhaustive]
pub struct Refused {
    /// The state directory.
    pub path: PathBuf,
    /// What differs, and what to do.
    pub what: String,
}

/// A line of the log or the index, or a chunk of a journal, that does not
/// read, with whole data after it: not a tail a kill tore (a kill only
/// tears the end), but damage a repair must not cut, since everything
/// after it would go too. A resume stops on it unless told to accept the
/// loss (`--resume-discard-damaged`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{}: {} at byte {byte} is damaged ({what}) and whole data follows it; nothing was cut \
     (resume with --resume-discard-damaged to drop what is damaged and go on)",
    .path.display(),
    .place
)]
#[non_exhaustive]
pub struct Damaged {
    /// The file.
    pub path: PathBuf,
    /// What is damaged: `line N`, or `the chunk`.
    pub place: String,
    /// Where it starts.
    pub byte: u64,
    /// Why it does not read.
    pub what: String,
}

/// ` (PID n)` of a lock's holder, if it wrote its PID.
pub(crate) fn held_by(pid: &Option<u32>) -> String {
    pid.map(|pid| format!(" (PID {pid})")).unwrap_or_default()
}

/// `map_err` helper: an I/O error while doing `what` to `path`.
fn io_err<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> StateError + 'a {
    move |source| StateError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// An open, locked state directory. The lock is held until it is dropped.
#[derive(Debug)]
pub(crate) struct StateDir {
    path: PathBuf,
    shards: usize,
    /// Holds the `flock`; closing it releases the lock.
    _lock: File,
}

impl StateDir {
    /// Make `path` (and its parents, if missing) the state directory of a
    /// new crawl described by `manifest`: lock it, make a folder per shard,
    /// then write the manifest. Fails with [`StateError::Exists`] if it
    /// already holds a crawl, [`StateError::Locked`] if another process
    /// uses it. A directory left without a manifest by a crash during this
    /// call is taken over.
    pub(crate) fn create(
        path: impl AsRef<Path>,
        manifest: &Manifest,
    ) -> Result<StateDir, StateError> {
        let path = path.as_ref().to_path_buf();
        let existed = path.exists();
        fs::create_dir_all(&path).map_err(io_err("creating", &path))?;
        if !existed {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                sync_dir(parent)?;
            }
        }
        let lock = lock(&path)?;
        if path.join(MANIFEST).exists() {
            return Err(StateError::Exists { path });
        }
        let dir = StateDir {
            shards: manifest.shards,
            path,
            _lock: lock,
        };
        dir.make_shard_dirs()?;
        let stored = Manifest {
            outputs: manifest.outputs.within(&dir.path),
            ..manifest.clone()
        };
        let json = to_json(&stored, &dir.path.join(MANIFEST))?;
        write_atomically(&dir.path, MANIFEST, &json)?;
        Ok(dir)
    }

    /// Open the state directory of an existing crawl and lock it: its
    /// manifest, and its last checkpoint if one was taken. A checkpoint
    /// torn by a crash while it was written (its `.tmp`) is removed: the
    /// one before it stands.
    pub(crate) fn open(
        path: impl AsRef<Path>,
    ) -> Result<(StateDir, Manifest, Option<Checkpoint>), StateError> {
        let path = path.as_ref().to_path_buf();
        if !path.is_dir() {
            return Err(StateError::NoCrawl { path });
        }
        let lock = lock(&path)?;
        let manifest_path = path.join(MANIFEST);
        let manifest: Manifest = match read(&manifest_path)? {
            Some(bytes) => parse_manifest(&manifest_path, &bytes)?,
            None => return Err(StateError::NoCrawl { path }),
        };
        let checkpoint_path = path.join(CHECKPOINT);
        let checkpoint = match read(&checkpoint_path)? {
            Some(bytes) => {
                Some(
                    serde_json::from_slice(&bytes).map_err(|source| StateError::Corrupt {
                        path: checkpoint_path,
                        source,
                    })?,
                )
            }
            None => None,
        };
        let tmp = path.join(format!("{CHECKPOINT}.tmp"));
        match fs::remove_file(&tmp) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                return Err(io_err("removing", &tmp)(e))
            }
            _ => {}
        }
        let dir = StateDir {
            shards: manifest.shards,
            path,
            _lock: lock,
        };
        dir.make_shard_dirs()?;
        Ok((dir, manifest, checkpoint))
    }

    /// The directory.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The folder of shard `shard` (`DIR/shard-{shard}`); it exists for
    /// every shard of the manifest.
    pub(crate) fn shard_dir(&self, shard: usize) -> PathBuf {
        self.path.join(format!("shard-{shard}"))
    }

    /// The folders of shards `0..shards`.
    pub(crate) fn shard_dirs(&self, shards: usize) -> Vec<PathBuf> {
        (0..shards).map(|i| self.shard_dir(i)).collect()
    }

    /// Replace the checkpoint with `checkpoint`, atomically: once this
    /// returns it is on disk, and a crash at any moment leaves either the
    /// old checkpoint or the new one, whole.
    pub(crate) fn write_checkpoint(&self, checkpoint: &Checkpoint) -> Result<(), StateError> {
        let json = to_json(checkpoint, &self.path.join(CHECKPOINT))?;
        write_atomically(&self.path, CHECKPOINT, &json)
    }

    fn make_shard_dirs(&self) -> Result<(), StateError> {
        for shard in 0..self.shards {
            let dir = self.shard_dir(shard);
            fs::create_dir_all(&dir).map_err(io_err("creating", &dir))?;
        }
        Ok(())
    }
}

/// The manifest of the crawl in `dir`, read without taking its lock (a
/// resume reads its settings before the crawl starts; the crawl then
/// opens the directory with [`StateDir::open`]).
pub(crate) fn read_manifest(dir: &Path) -> Result<Manifest, StateError> {
    let path = dir.join(MANIFEST);
    match read(&path)? {
        Some(bytes) => parse_manifest(&path, &bytes),
        None => Err(StateError::NoCrawl {
            path: dir.to_path_buf(),
        }),
    }
}

/// Whether another process holds the state directory `dir` now
/// ([`StateError::Locked`]): a check before a crawl starts, so a busy
/// directory is refused with the other usage errors. Taking the lock (and
/// so the last word) is [`StateDir::create`]'s and [`StateDir::open`]'s.
pub(crate) fn check_not_in_use(dir: &Path) -> Result<(), StateError> {
    use rustix::fs::{flock, FlockOperation};
    let path = dir.join(LOCK);
    // Read only: a directory nobody made yet, or a lock file nobody
    // holds, is free; this leaves no file behind.
    let Ok(mut file) = File::open(&path) else {
        return Ok(());
    };
    match flock(&file, FlockOperation::NonBlockingLockShared) {
        Err(rustix::io::Errno::WOULDBLOCK) => {
            let mut text = String::new();
            let pid = file
                .read_to_string(&mut text)
                .ok()
                .and_then(|_| text.trim().parse().ok());
            Err(StateError::Locked {
                path: dir.to_path_buf(),
                pid,
            })
        }
        // Free (the shared lock goes with the file), or a file system
        // without locks: the crawl's own lock decides.
        _ => Ok(()),
    }
}

/// Take the exclusive lock of the state directory `dir` (without waiting)
/// and write our PID into the lock file; or say who holds it.
fn lock(dir: &Path) -> Result<File, StateError> {
    use rustix::fs::{flock, FlockOperation};
    let path = dir.join(LOCK);
    // Not truncated on open: the holder's PID is the error's best part.
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io_err("opening", &path))?;
    match flock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {}
        Err(rustix::io::Errno::WOULDBLOCK) => {
            let mut text = String::new();
            let pid = file
                .read_to_string(&mut text)
                .ok()
                .and_then(|_| text.trim().parse().ok());
            return Err(StateError::Locked {
                path: dir.to_path_buf(),
                pid,
            });
        }
        Err(e) => return Err(io_err("locking", &path)(e.into())),
    }
    file.set_len(0).map_err(io_err("writing", &path))?;
    writeln!(file, "{}", std::process::id()).map_err(io_err("writing", &path))?;
    Ok(file)
}

/// The manifest in `bytes`, its format checked before anything else (a
/// future layout may have other fields).
fn parse_manifest(path: &Path, bytes: &[u8]) -> Result<Manifest, StateError> {
    #[derive(serde::Deserialize)]
    struct Version {
        format: u32,
    }
    let corrupt = |source| StateError::Corrupt {
        path: path.to_path_buf(),
        source,
    };
    let version: Version = serde_json::from_slice(bytes).map_err(corrupt)?;
    if version.format != FORMAT {
        return Err(StateError::Format {
            path: path.to_path_buf(),
            found: version.format,
        });
    }
    let mut manifest: Manifest = serde_json::from_slice(bytes).map_err(corrupt)?;
    // Outputs inside the directory are kept relative to it.
    if let Some(dir) = path.parent() {
        manifest.outputs = manifest.outputs.resolved_in(dir);
    }
    Ok(manifest)
}

/// The contents of `path`, or None if there is no such file.
fn read(path: &Path) -> Result<Option<Vec<u8>>, StateError> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err("reading", path)(e)),
    }
}

fn to_json<T: serde::Serialize>(value: &T, path: &Path) -> Result<Vec<u8>, StateError> {
    let mut json = serde_json::to_vec_pretty(value).map_err(|source| StateError::Corrupt {
        path: path.to_path_buf(),
        source,
    })?;
    json.push(b'\n');
    Ok(json)
}

/// Replace `dir/name` with `bytes` so that a crash leaves the old file or
/// the new one: write `name.tmp`, fsync it, rename it over `name`, fsync
/// the directory (which makes the rename durable).
pub(crate) fn write_atomically(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), StateError> {
    let tmp = dir.join(format!("{name}.tmp"));
    let dest = dir.join(name);
    let mut file = File::create(&tmp).map_err(io_err("creating", &tmp))?;
    file.write_all(bytes).map_err(io_err("writing", &tmp))?;
    file.sync_all().map_err(io_err("syncing", &tmp))?;
    drop(file);
    fs::rename(&tmp, &dest).map_err(io_err("renaming", &tmp))?;
    sync_dir(dir)
}

/// fsync a directory, so the names created or renamed in it last.
fn sync_dir(dir: &Path) -> Result<(), StateError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err("syncing", dir))
}

#[cfg(test)]
mod tests;
