//! The crawl's budgets as settings ([`Limits`], `Config::budget`):
//! `--max-pages`, `--max-bytes`, `--max-time`. Spent by the engine
//! (`crate::crawl::budget`).

use std::time::Duration;

/// The limits of one crawl; `None` is unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// Pages fetched at most (robots.txt fetches do not count).
    pub pages: Option<u64>,
    /// Body bytes received at most; the fetches running when it is passed
    /// still finish, so a crawl ends a little past it.
    pub bytes: Option<u64>,
    /// Wall time from the start; the fetches running then still finish.
    pub time: Option<Duration>,
}
