//! Why a URL is kept out without a fetch: a crawl limit ([`Limit`]) or
//! robots.txt ([`Verdict`]). Each names its record's [`ErrorKind`], so
//! the engine that decides and the state directory that reads records
//! back agree on the kinds.

use super::ErrorKind;

/// The crawl limit that keeps a URL out of the frontier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limit {
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
    pub(crate) const ALL: [Limit; 4] = [
        Limit::UrlTooLong,
        Limit::TooDeep,
        Limit::HostBudget,
        Limit::SitemapBudget,
    ];

    /// The record's `error_kind`.
    pub(crate) fn kind(self) -> ErrorKind {
        match self {
            Limit::UrlTooLong => ErrorKind::UrlTooLong,
            Limit::TooDeep => ErrorKind::TooDeep,
            Limit::HostBudget => ErrorKind::HostBudget,
            Limit::SitemapBudget => ErrorKind::SitemapBudget,
        }
    }

    /// The record's one-line `error`.
    pub(crate) fn message(self) -> &'static str {
        match self {
            Limit::UrlTooLong => "not queued: longer than --max-url-length",
            Limit::TooDeep => "not queued: more links from a root than --max-depth",
            Limit::HostBudget => "not queued: its host is at --max-pages-per-host",
            Limit::SitemapBudget => "sitemap not queued: its host is at its cap of sitemaps",
        }
    }
}

/// Whether robots.txt lets a URL be fetched: the `ringcrawl-robots`
/// crate's.
pub(crate) use ringcrawl_robots::Verdict;

impl From<Verdict> for ErrorKind {
    /// The `error_kind` of the record of a URL kept out (`Allowed` has
    /// none: it reads as disallowed).
    fn from(verdict: Verdict) -> ErrorKind {
        match verdict {
            Verdict::Unavailable => ErrorKind::RobotsUnavailable,
            _ => ErrorKind::RobotsDisallowed,
        }
    }
}
