//! Process-wide preparation a crawler binary wants and a library must not
//! do behind its caller's back: raise the open-file limit, register for
//! `membarrier(2)` before the shard threads start. The `ringcrawl` binary
//! calls [`prepare`]; a library user may.
//!
//! Not the crawl: [`crate::Crawler::run`] only reads the open-file limit
//! (to fit `max_tasks` under it) and changes nothing.

use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
use rustix::thread::{membarrier, MembarrierCommand};

/// What [`prepare`] left in force.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Prepared {
    /// The soft open-file limit now (every fetch holds a socket).
    pub open_files: u64,
}

/// Raise the soft open-file limit to the hard one and register the process
/// for private expedited `membarrier(2)`. Call it before any crawl, while
/// the process has one thread: a glommio executor registers on its first
/// sleep, and once the process has several threads the kernel makes that
/// wait an RCU grace period (14 ms measured here, which stalled the first
/// shard at the start of every crawl); with one thread it is immediate.
/// Both are best effort.
pub fn prepare() -> Prepared {
    let _ = membarrier(MembarrierCommand::RegisterPrivateExpedited);
    let limit = getrlimit(Resource::Nofile);
    if limit.current != limit.maximum {
        let _ = setrlimit(
            Resource::Nofile,
            Rlimit {
                current: limit.maximum,
                maximum: limit.maximum,
            },
        );
    }
    Prepared {
        open_files: open_file_limit(),
    }
}

/// The soft open-file limit in force.
pub fn open_file_limit() -> u64 {
    getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX)
}
