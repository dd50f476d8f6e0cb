//! The crawl's spill directory: a folder of its own in `config.spill_dir`
//! (default: the system's temporary directory; with `--state`, the state
//! directory), where the shards spill their queues (`shard-{id}`), their
//! seen-sets' runs (`seen-{id}`) and the split seed lists. It is made
//! before the shards start, so a parent that cannot hold it is an error at
//! once, not a failing spill in the middle of the crawl; it is removed
//! when dropped (every shard is done, or the start failed).
//!
//! A crawl killed with SIGKILL cannot remove its own, so each crawl first
//! removes the ones of crawls that are gone. Which are gone is told by a
//! lock, not by a process id (ids are reused, and a process in another
//! PID namespace sharing the folder has an id that means nothing here):
//! each directory holds a `lock` file its crawl keeps `flock`ed until it
//! ends, and the kernel drops the lock of a killed process. The directory
//! is made under a hidden name, locked, then renamed to its
//! `ringcrawl-spill-` name, so no crawl ever sees one of a live crawl
//! unlocked (a kill in that instant leaves a hidden, empty folder behind).
//! A `ringcrawl-spill-` directory without a lock file (made by an older
//! version) is removed when the process its name carries is not running.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{flock, FlockOperation};

use crate::config::Config;
use crate::crawl::error::CrawlError;
use crate::state::session::SPILL_PREFIX;

/// The lock file in a spill directory.
const LOCK: &str = "lock";

/// This crawl's spill directory, made and locked.
#[derive(Debug)]
pub(super) struct SpillDir {
    path: PathBuf,
    /// Holds the `flock` while the crawl runs (closed after the removal).
    _lock: File,
}

impl SpillDir {
    /// Remove the spill directories of crawls that are gone from
    /// `config.spill_dir`, then make and lock one of this crawl's own.
    pub(super) fn make(config: &Config) -> Result<SpillDir, CrawlError> {
        static CRAWLS: AtomicU64 = AtomicU64::new(0);
        let parent = config.spill_dir.clone().unwrap_or_else(std::env::temp_dir);
        remove_stale(&parent);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!(
            "{SPILL_PREFIX}{}-{}-{nanos}",
            std::process::id(),
            CRAWLS.fetch_add(1, Ordering::Relaxed)
        );
        let path = parent.join(&name);
        let hidden = parent.join(format!(".{name}"));
        let made = (|| {
            std::fs::create_dir_all(&hidden)?;
            let lock = File::create(hidden.join(LOCK))?;
            flock(&lock, FlockOperation::NonBlockingLockExclusive)?;
            std::fs::rename(&hidden, &path)?;
            Ok::<File, std::io::Error>(lock)
        })();
        match made {
            Ok(lock) => Ok(SpillDir { path, _lock: lock }),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&hidden);
                Err(CrawlError::output(
                    format!("making the spill directory {}", path.display()),
                    e,
                ))
            }
        }
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for SpillDir {
    /// Remove the directory and what the shards left in it.
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.path) {
            log::warn!("removing {}: {e}", self.path.display());
        }
    }
}

/// Remove the spill directories in `parent` whose crawl is gone (see the
/// module docs); what fails to go is only logged.
fn remove_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(SPILL_PREFIX)) else {
            continue;
        };
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let path = entry.path();
        // Held (if it was taken) until the directory is gone.
        let lock = match File::open(path.join(LOCK)) {
            Ok(lock) => match flock(&lock, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => Some(lock),
                // Held: its crawl runs. Another error (a file system
                // without locks): leave it.
                Err(_) => continue,
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if process_runs(rest) {
                    continue;
                }
                None
            }
            Err(_) => continue,
        };
        match std::fs::remove_dir_all(&path) {
            Ok(()) => log::info!("removed {}, left by a crawl that is gone", path.display()),
            Err(e) => log::warn!(
                "removing {}, left by a crawl that is gone: {e}",
                path.display()
            ),
        }
        drop(lock);
    }
}

/// Whether the process whose id starts `rest` (`{pid}-…`) runs; true if
/// the name carries no id.
fn process_runs(rest: &str) -> bool {
    let pid = rest
        .split('-')
        .next()
        .and_then(|p| p.parse::<i32>().ok())
        .and_then(rustix::process::Pid::from_raw);
    match pid {
        Some(pid) => rustix::process::test_kill_process(pid) != Err(rustix::io::Errno::SRCH),
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::compact::in_run::SCRATCH;

    #[test]
    fn another_crawls_cleanup_leaves_a_running_compactions_scratch_folder_in_a_state_directory() {
        // A state directory given to another crawl as its --spill-dir,
        // while the crawl that owns it compacts (its sort's scratch folder
        // has no lock file and no process id in its name).
        let parent =
            std::env::temp_dir().join(format!("ringcrawl-spill-dir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&parent);
        let scratch = parent.join(SCRATCH);
        std::fs::create_dir_all(&scratch).unwrap();
        std::fs::write(scratch.join("run-0"), b"sorted pairs").unwrap();
        // Beside it, one left by a killed crawl of an older version (no
        // lock, the id of no process).
        let gone = parent.join(format!("{SPILL_PREFIX}999999999-1"));
        std::fs::create_dir_all(&gone).unwrap();
        remove_stale(&parent);
        assert!(!gone.exists(), "a dead crawl's spill folder goes");
        assert!(scratch.join("run-0").exists(), "the compaction's stays");
        std::fs::remove_dir_all(&parent).unwrap();
    }
}
