//! A built crawl's settings, read back ([`Crawler::settings`]): what the
//! builder made of what it was given (defaults filled in, units and
//! spellings resolved), for a program that shows or logs the crawl it is
//! about to run, and for the `ringcrawl` command's tests of its flags.
//!
//! Read-only, and a view, not a second configuration: it borrows the
//! crawler, holds nothing of its own, and offers no way back into a
//! builder. Not every setting is here: the ones a caller checks after
//! building (limits, timing, politeness, memory, where the output goes).

use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::time::Duration;

use url::Url;

use crate::config::Config;

use super::Crawler;

/// The settings a built crawl runs with, as
/// [`CrawlerBuilder`](crate::CrawlerBuilder) made them: each accessor is
/// named as the builder's setting it reads.
///
/// ```
/// use std::time::Duration;
///
/// let crawler = ringcrawl::Crawler::builder()
///     .root("example.com")
///     .max_tasks(8)
///     .build()?;
/// let settings = crawler.settings();
/// assert_eq!(settings.roots()[0].as_str(), "http://example.com/");
/// assert_eq!(settings.max_tasks(), 8);
/// assert_eq!(settings.max_tries(), ringcrawl::defaults::MAX_TRIES);
/// # Ok::<(), ringcrawl::BuildError>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Settings<'a> {
    config: &'a Config,
}

impl Crawler {
    /// The settings this crawl runs with, read back.
    pub fn settings(&self) -> Settings<'_> {
        Settings {
            config: &self.config,
        }
    }
}

impl<'a> Settings<'a> {
    /// The roots, normalised (a root given without a scheme has `http://`).
    pub fn roots(&self) -> &'a [Url] {
        &self.config.roots
    }

    /// Shards (threads) asked for; the crawl lowers it to `max_tasks` if
    /// that is smaller.
    pub fn cores(&self) -> usize {
        self.config.cores
    }

    /// Concurrent fetches across all shards.
    pub fn max_tasks(&self) -> usize {
        self.config.max_tasks
    }

    /// Concurrent fetches to one host.
    pub fn per_host(&self) -> usize {
        self.config.per_host
    }

    /// Redirect hops a chain may take from a link.
    pub fn max_redirect(&self) -> u32 {
        self.config.max_redirect
    }

    /// Attempts per URL.
    pub fn max_tries(&self) -> u32 {
        self.config.max_tries
    }

    /// Longest `Retry-After` honoured.
    pub fn max_retry_after(&self) -> Duration {
        self.config.max_retry_after
    }

    /// Links followed from a root at most.
    pub fn max_depth(&self) -> u32 {
        self.config.max_depth
    }

    /// Longest URL queued, in bytes.
    pub fn max_url_length(&self) -> usize {
        self.config.max_url_length
    }

    /// URLs of one host taken at most.
    pub fn max_pages_per_host(&self) -> usize {
        self.config.max_pages_per_host
    }

    /// Deadline of a whole fetch.
    pub fn timeout(&self) -> Duration {
        self.config.timeout
    }

    /// Deadline of a connection's setup.
    pub fn connect_timeout(&self) -> Duration {
        self.config.connect_timeout
    }

    /// Longest wait for the next bytes of an answer.
    pub fn read_timeout(&self) -> Duration {
        self.config.read_timeout
    }

    /// Least time between two request starts to one host.
    pub fn delay(&self) -> Duration {
        self.config.delay
    }

    /// The adaptive delay's factor (0: off).
    pub fn delay_factor(&self) -> f64 {
        self.config.delay_factor
    }

    /// Upper bound of the adaptive delay.
    pub fn max_delay(&self) -> Duration {
        self.config.max_delay
    }

    /// Upper bound on a robots.txt `Crawl-delay`.
    pub fn max_crawl_delay(&self) -> Duration {
        self.config.max_crawl_delay
    }

    /// Waits before each new try of an unreachable robots.txt.
    pub fn robots_retries(&self) -> &'a [Duration] {
        &self.config.robots_retries
    }

    /// Sent as `User-Agent`.
    pub fn user_agent(&self) -> &'a str {
        &self.config.user_agent
    }

    /// Whether a header named `name` (any letter case) is added to every
    /// request.
    pub fn has_header(&self, name: &str) -> bool {
        self.config.headers.has(name)
    }

    /// Basic credentials given, one per [`auth`](crate::CrawlerBuilder::auth).
    pub fn credential_count(&self) -> usize {
        self.config.credentials.len()
    }

    /// Whether a credential is sent to `host` on `port`.
    pub fn has_credentials_for(&self, host: &str, port: u16) -> bool {
        self.config
            .credentials
            .iter()
            .any(|c| c.applies_to(host, port))
    }

    /// The addresses `host` on `port` is pinned to
    /// ([`resolve`](crate::CrawlerBuilder::resolve)), by the host as URLs
    /// name it (lower case, no trailing dot; `*` for any host).
    pub fn resolve(&self, host: &str, port: u16) -> Option<&'a [IpAddr]> {
        self.config
            .resolve
            .get(&(host.to_owned(), port))
            .map(Vec::as_slice)
    }

    /// Nameservers asked on a cache miss; empty: those of
    /// `/etc/resolv.conf`.
    pub fn dns_servers(&self) -> &'a [SocketAddr] {
        &self.config.dns_servers
    }

    /// Body bytes kept per response.
    pub fn max_body(&self) -> usize {
        self.config.max_body
    }

    /// Bytes the queued URLs may take in RAM, over all shards.
    pub fn frontier_memory(&self) -> usize {
        self.config.frontier_memory
    }

    /// Bytes the hosts' own state may take, over all shards.
    pub fn host_memory(&self) -> usize {
        self.config.host_memory
    }

    /// Bytes of RAM the seen-sets may hold, over all shards.
    pub fn seen_memory(&self) -> usize {
        self.config.seen_memory
    }

    /// Bytes the cookie jar may hold.
    pub fn cookie_memory(&self) -> usize {
        self.config.cookie_memory
    }

    /// Where what does not fit in RAM goes; `None`: the system's
    /// temporary directory.
    pub fn spill_dir(&self) -> Option<&'a Path> {
        self.config.spill_dir.as_deref()
    }

    /// Whether sitemaps are read.
    pub fn sitemaps(&self) -> bool {
        self.config.sitemaps
    }

    /// The WARC directory, if archiving.
    pub fn warc(&self) -> Option<&'a Path> {
        self.config.warc_dir.as_deref()
    }

    /// A shard's WARC file is rotated before it grows past this.
    pub fn warc_max_size(&self) -> u64 {
        self.config.warc_max_size
    }

    /// The CDXJ index written as the crawl goes, if asked for.
    pub fn cdxj(&self) -> Option<&'a Path> {
        self.config.cdxj.as_deref()
    }

    /// The WACZ file made at the end, if asked for.
    pub fn wacz(&self) -> Option<&'a Path> {
        self.config.wacz.as_deref()
    }
}
