//! Why a crawl could not run: [`CrawlError`], the one error
//! `crawl::run` (and the public `Crawler::run`) returns. Each variant is a
//! case a caller may act on differently (another state directory, a
//! resume that accepts the loss, a system without io_uring); its message
//! is whole, so `{}` says everything. Failures after the crawl has begun
//! (a page's error, an output that stopped being written) are not errors
//! of the run: they are in the report.
//!
//! Not here: why a setting is refused before anything runs (the builder's
//! `BuildError`), nor why one URL failed (`ErrorKind` on its record).

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::cluster::store::StoreError;
use crate::state::{held_by, Damaged, Refused, StateError};

/// Why [`Crawler::run`](crate::Crawler::run) could not crawl. Nothing
/// was fetched when it is returned, except by
/// [`IoUringUnavailable`](CrawlError::IoUringUnavailable), which comes
/// when no shard could start, and so fetched nothing either.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CrawlError {
    /// A root that the crawl's `--exclude` keeps out.
    #[error("root {0} is excluded by --exclude")]
    RootExcluded(String),
    /// Joining the cluster crawl failed: Redis unreachable or refusing,
    /// the crawl made with other settings, the node's name in use.
    #[error("joining crawl {crawl} on {redis}: {error}")]
    Cluster {
        /// The crawl's name.
        crawl: String,
        /// The Redis URL, its password hidden.
        redis: String,
        /// What failed.
        error: StoreError,
    },
    /// Another process holds the state directory.
    #[error("state directory: {} is in use by another process{}", .path.display(), held_by(.pid))]
    StateLocked {
        /// The state directory.
        path: PathBuf,
        /// The holder's PID, as it wrote it in the lock file.
        pid: Option<u32>,
    },
    /// Damage before the end of a file a resume reads; nothing was cut.
    /// A resume with `resume_discard_damaged(true)` drops it and goes on.
    #[error(transparent)]
    Damaged(#[from] Damaged),
    /// A resume asked for what the crawl cannot change (its roots, its
    /// scope, its number of shards); nothing was touched.
    #[error(transparent)]
    ResumeRefused(#[from] Refused),
    /// The state directory could not be made, opened, read or written,
    /// holds a crawl already (a new one), or holds none (a resume).
    #[error("state directory: {0}")]
    State(Cause),
    /// A seed list could not be read, or split for the shards.
    #[error("{0}")]
    Seeds(Cause),
    /// The records of the crawl a recrawl asks against (`--since`) could
    /// not be read.
    #[error("{0}")]
    Since(Cause),
    /// A file or directory the crawl writes (`--output`, `--cdxj`, the
    /// index of `--wacz`, `--warc`, the spill directory) could not be made
    /// or opened, or repaired before it is appended to.
    #[error("{what}: {error}")]
    Output {
        /// What was being done, with the path.
        what: String,
        /// Why it failed.
        error: io::Error,
    },
    /// A thread of the crawl (the cluster's) could not be started.
    #[error("starting the {what} thread: {error}")]
    Thread {
        /// Which thread.
        what: &'static str,
        /// Why it failed.
        error: io::Error,
    },
    /// No shard could start: io_uring is not available (a kernel before
    /// 5.8, `kernel.io_uring_disabled`, a container's seccomp profile) or
    /// could not lock memory for its rings. The message says what to
    /// change.
    #[error("{0}")]
    IoUringUnavailable(String),
    /// The shards' executor threads could not be started.
    #[error("starting the shard executors: {0}")]
    Executors(String),
}

impl CrawlError {
    /// A failure of the state directory, the lock and resume refusals
    /// apart.
    pub(crate) fn state(error: StateError) -> CrawlError {
        match error {
            StateError::Locked { path, pid } => CrawlError::StateLocked { path, pid },
            StateError::Damaged(damaged) => CrawlError::Damaged(damaged),
            StateError::Mismatch(refused) => CrawlError::ResumeRefused(refused),
            e => CrawlError::State(Cause::new(e)),
        }
    }

    /// An output that could not be made, opened or repaired.
    pub(crate) fn output(what: impl Into<String>, error: io::Error) -> CrawlError {
        CrawlError::Output {
            what: what.into(),
            error,
        }
    }
}

/// The cause of a [`CrawlError`] whose own type is not part of the API:
/// its message (`{}`) and, through [`source`](std::error::Error::source),
/// what caused it in turn.
pub struct Cause(Box<dyn std::error::Error + Send + Sync>);

impl Cause {
    pub(crate) fn new(error: impl std::error::Error + Send + Sync + 'static) -> Cause {
        Cause(Box::new(error))
    }
}

impl fmt::Debug for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for Cause {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_locked_state_directory_is_its_own_case_and_names_the_holder() {
        let e = CrawlError::state(StateError::Locked {
            path: PathBuf::from("/tmp/s"),
            pid: Some(42),
        });
        assert!(matches!(e, CrawlError::StateLocked { pid: Some(42), .. }));
        assert_eq!(
            e.to_string(),
            "state directory: /tmp/s is in use by another process (PID 42)"
        );
    }

    #[test]
    fn a_state_failure_says_what_failed_once() {
        let e = CrawlError::state(StateError::Exists {
            path: PathBuf::from("/tmp/s"),
        });
        assert!(matches!(e, CrawlError::State(_)));
        let shown = e.to_string();
        assert!(
            shown.starts_with("state directory: /tmp/s already holds a crawl"),
            "{shown}"
        );
        assert_eq!(shown.matches("already holds").count(), 1, "{shown}");
    }

    #[test]
    fn damage_and_a_refused_resume_keep_their_own_types() {
        let refused = Refused {
            path: PathBuf::from("/tmp/s"),
            what: "other roots".into(),
        };
        let e = CrawlError::state(StateError::Mismatch(refused.clone()));
        assert!(matches!(&e, CrawlError::ResumeRefused(r) if *r == refused));
        assert_eq!(e.to_string(), refused.to_string());
    }
}
