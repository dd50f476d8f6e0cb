//! A URL on its way through the crawl, in the words every layer uses: the
//! queued [`Job`], the path that reached it ([`hops`]), why one is kept
//! out ([`Limit`], [`Verdict`]), why its record has no whole answer
//! ([`ErrorKind`]) and jobs as bytes ([`chunk`], the format of
//! the frontier's spilled queues and of the state directory's journals).
//!
//! A leaf: it imports no other module of the crate. The frontier queues
//! jobs, the state directory journals them, a cluster sends them between
//! nodes and the output records their hops; none of those has to reach up
//! into the engine (`crate::crawl`) to name one.

pub(crate) mod chunk;
pub(crate) mod hops;
mod kind;
mod refused;

use std::sync::Arc;

use hops::Hops;

pub use kind::ErrorKind;
pub(crate) use refused::{Limit, Verdict};

/// A URL waiting to be fetched, with what it may still do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Job {
    /// Normalised absolute URL (the dedup key).
    pub url: String,
    /// Redirect hops this URL may still start (the chapter's
    /// `max_redirect`, at most 65,535: a u16 keeps a queued job at 56
    /// bytes with [`Job::retries`]).
    pub redirects_left: u16,
    /// Links followed from a root to reach it.
    pub depth: u32,
    /// How it was reached from a root (the crawl log's `hops`).
    pub hops: Hops,
    /// The URL it was found on, or redirected from (the crawl log's
    /// `via`); shared by every link of one page.
    pub via: Option<Arc<str>>,
    /// Attempts already made that a server answered with "come back
    /// later" (429 or 503 with `Retry-After`), which count toward
    /// `--max-tries`. Not written with the job (spill files, journals,
    /// cluster streams): a job read back starts again from 0.
    pub retries: u16,
}

impl Job {
    /// A crawl root, with `redirects` hops of redirect allowed.
    pub(crate) fn root(url: String, redirects: u32) -> Job {
        Job {
            retries: 0,
            url,
            redirects_left: u16::try_from(redirects).unwrap_or(u16::MAX),
            depth: 0,
            hops: Hops::root(),
            via: None,
        }
    }
}
