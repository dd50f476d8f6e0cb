//! The frontier's words: a queued URL ([`Job`]), what became of an offered
//! one ([`Offer`], [`Limit`]) and what to do next ([`Next`]). Types only;
//! the frontier that deals in them is `mod.rs`.

use std::sync::Arc;
use std::time::Instant;

use crate::crawl::hops::Hops;
use crate::crawl::robots::Verdict;

/// A URL waiting to be fetched, with what it may still do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// Normalised absolute URL (the dedup key).
    pub url: String,
    /// Redirect hops this URL may still start (the chapter's `max_redirect`).
    pub redirects_left: u32,
    /// Links followed from a root to reach it.
    pub depth: u32,
    /// How it was reached from a root (the crawl log's `hops`).
    pub hops: Hops,
    /// The URL it was found on, or redirected from (the crawl log's
    /// `via`); shared by every link of one page.
    pub via: Option<Arc<str>>,
}

impl Job {
    /// A crawl root, with `redirects` hops of redirect allowed.
    pub fn root(url: String, redirects: u32) -> Job {
        Job {
            url,
            redirects_left: redirects,
            depth: 0,
            hops: Hops::root(),
            via: None,
        }
    }
}

/// What became of an offered URL (new to the crawl: the caller's seen-set
/// said so).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    /// Queued.
    New,
    /// A limit keeps it out: never queued (and, being seen, refused and
    /// recorded once).
    Refused(Limit),
}

/// The crawl limit that keeps a URL out of the frontier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Longer than `max_url_length`.
    UrlTooLong,
    /// Found more than `max_depth` links from a root (by the first path
    /// it was found by, as for queued URLs).
    TooDeep,
    /// Its host already has `max_pages_per_host` URLs.
    HostBudget,
    /// A sitemap of a host that already has `max_sitemaps_per_host`.
    SitemapBudget,
}

impl Limit {
    /// Every limit.
    pub const ALL: [Limit; 4] = [
        Limit::UrlTooLong,
        Limit::TooDeep,
        Limit::HostBudget,
        Limit::SitemapBudget,
    ];

    /// The record's `error_kind`.
    pub fn kind(self) -> &'static str {
        match self {
            Limit::UrlTooLong => "url_too_long",
            Limit::TooDeep => "too_deep",
            Limit::HostBudget => "host_budget",
            Limit::SitemapBudget => "sitemap_budget",
        }
    }

    /// The record's one-line `error`.
    pub fn message(self) -> &'static str {
        match self {
            Limit::UrlTooLong => "not queued: longer than --max-url-length",
            Limit::TooDeep => "not queued: more links from a root than --max-depth",
            Limit::HostBudget => "not queued: its host is at --max-pages-per-host",
            Limit::SitemapBudget => "sitemap not queued: its host is at its cap of sitemaps",
        }
    }
}

/// What to do next.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    /// Fetch this URL now; a slot of `host` is taken until [`Frontier::release`](super::Frontier::release).
    Fetch(Job),
    /// Fetch the robots.txt of the origin of `example` (a queued URL of
    /// `host`) and pass the answer to [`Frontier::set_robots`](super::Frontier::set_robots); a slot of
    /// the host is taken until then. `root`: `example` is at depth 0 (a
    /// root, a root's redirect target or a sitemap), so the origin is one
    /// whose `Sitemap:` lines the crawl reads.
    Robots {
        host: String,
        example: String,
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
