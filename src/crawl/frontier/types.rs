//! The frontier's words: what became of an offered URL ([`Offer`]) and
//! what to do next ([`Next`]). Types only; the frontier that deals in them
//! is `mod.rs`, the jobs it queues are `crate::job`'s.

use std::time::Instant;

use crate::job::{Job, Limit, Verdict};

/// What became of an offered URL (new to the crawl: the caller's seen-set
/// said so).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Offer {
    /// Queued.
    New,
    /// A limit keeps it out: never queued (and, being seen, refused and
    /// recorded once).
    Refused(Limit),
}

/// What to do next.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// Fetch this URL now; a slot of `host` is taken until [`Frontier::release`](super::Frontier::release).
    Fetch(Job),
    /// Fetch the robots.txt of the origin of `example` (a queued URL of
    /// `host`) and pass the answer to [`Frontier::set_robots`](super::Frontier::set_robots); a slot of
    /// the host is taken until then. `root`: `example` is at depth 0 (a
    /// root, a root's redirect target or a sitemap), so the origin is one
    /// whose `Sitemap:` lines the crawl reads.
    Robots {
        /// The host whose slot is taken.
        host: String,
        /// A queued URL of the host: its origin's robots.txt is fetched.
        example: String,
        /// `example` is at depth 0: its origin's `Sitemap:` lines are read.
        root: bool,
    },
    /// robots.txt forbids this URL (or was unavailable): record it, don't
    /// fetch it. No slot is taken.
    Refused(Job, Verdict),
    /// Nothing is ready before this instant.
    Wait(Instant),
    /// Nothing is queued.
    Idle,
    /// A URL that waited for room among the hosts is kept out by its
    /// host's limit, met when it left the wait: record it, don't fetch
    /// it. No slot is taken.
    Limited(Job, Limit),
}
