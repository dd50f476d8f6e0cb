//! A shard frontier's settings ([`Politeness`]): per-host concurrency and
//! delays, the page, sitemap, depth and URL-length limits, robots.txt,
//! the adaptive delay, and the memory bounds of hosts and queued URLs,
//! with their defaults. What they mean in motion is the frontier's
//! (`mod.rs`); not the host rules themselves (`config::host_rules`).

use std::sync::Arc;
use std::time::Duration;

use crate::config::host_rules::HostRules;
use crate::defaults;

/// Politeness settings.
#[derive(Debug, Clone)]
pub(crate) struct Politeness {
    /// Fetches in flight per host.
    pub per_host: usize,
    /// Least time between the starts of two requests to one host.
    pub delay: Duration,
    /// URLs accepted per host.
    pub max_pages_per_host: usize,
    /// Sitemaps accepted per host (URLs whose hop path makes them one:
    /// [`Hops::sitemap_level`](crate::job::hops::Hops::sitemap_level)), within `max_pages_per_host`.
    pub max_sitemaps_per_host: usize,
    /// Links followed from a root beyond which URLs are refused.
    pub max_depth: u32,
    /// URLs longer than this (bytes) are refused.
    pub max_url_length: usize,
    /// Fetch and obey robots.txt.
    pub robots: bool,
    /// Upper bound on a robots.txt `Crawl-delay`.
    pub max_crawl_delay: Duration,
    /// Heritrix's adaptive delay: after a fetch that took `t`, the host
    /// waits `delay_factor × t`, at least `delay` and at most
    /// `max_delay`, from the fetch's end. 0: off.
    pub delay_factor: f64,
    /// Upper bound of the adaptive delay.
    pub max_delay: Duration,
    /// Waits before each new try of an unreachable or 5xx robots.txt; when
    /// they are used up the origin's URLs are refused (`robots_unavailable`).
    pub robots_retries: Vec<Duration>,
    /// Bytes the hosts' own state may take, live and resting (names,
    /// politeness clocks, robots rules; not their queued URLs, which
    /// count against `memory`): past it, the least recently finished
    /// hosts are forgotten, and URLs of hosts not yet live wait until live
    /// hosts finish (see `admission.rs`).
    pub host_memory: usize,
    /// Bytes the queued URLs may take in RAM (the jobs, their URLs and
    /// referrers); past it, the newest URLs of each host go to disk
    /// through the spill (see `spill.rs`). `usize::MAX`: all in RAM.
    pub memory: usize,
    /// Hosts whose `per_host`, `delay`, `delay_factor`, `max_delay` or
    /// `max_pages_per_host` differ (`--host-rule`).
    pub host_rules: Arc<HostRules>,
}

impl Default for Politeness {
    fn default() -> Self {
        Politeness {
            per_host: defaults::PER_HOST,
            delay: defaults::DELAY,
            max_pages_per_host: defaults::MAX_PAGES_PER_HOST,
            max_sitemaps_per_host: defaults::MAX_SITEMAPS_PER_HOST,
            max_depth: defaults::MAX_DEPTH,
            max_url_length: defaults::MAX_URL_LENGTH,
            robots: true,
            max_crawl_delay: defaults::MAX_CRAWL_DELAY,
            delay_factor: defaults::DELAY_FACTOR,
            max_delay: defaults::MAX_DELAY,
            robots_retries: defaults::ROBOTS_RETRIES.to_vec(),
            host_memory: DEFAULT_HOST_MEMORY,
            memory: usize::MAX,
            host_rules: Arc::default(),
        }
    }
}

/// Default [`Politeness::host_memory`]: 32 MiB per shard, some 100,000
/// live hosts, or that many finished ones with a small robots.txt.
pub(super) const DEFAULT_HOST_MEMORY: usize = 32 << 20;
