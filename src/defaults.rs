//! The default of every setting a user can change, each defined here and
//! nowhere else: a [`CrawlerBuilder`](crate::CrawlerBuilder) starts from
//! them, its setters' documentation links them, and the `ringcrawl`
//! command's flags take (and `--help` shows) their defaults from them.
//!
//! A leaf: constants only, no logic, no import of the crate. Not the
//! internal tunings the user cannot reach (buffer sizes, batch lengths:
//! those stay beside the code they tune).

use std::time::Duration;

/// Concurrent fetches over all shards (the chapter's 100 workers).
pub const MAX_TASKS: usize = 100;
/// Fetches in flight to one host.
pub const PER_HOST: usize = 2;
/// Redirect hops a chain may take from a link before it is cut.
pub const MAX_REDIRECT: u32 = 10;
/// Attempts per URL (network errors, a 429 or 503 with `Retry-After`).
pub const MAX_TRIES: u32 = 4;
/// Longest `Retry-After` honoured.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(5 * 60);
/// Links followed from a root beyond which links are not queued.
pub const MAX_DEPTH: u32 = 100;
/// URLs longer than this many bytes are not queued.
pub const MAX_URL_LENGTH: usize = 2048;
/// URLs queued per host at most (a bound on crawler traps).
pub const MAX_PAGES_PER_HOST: usize = 100_000;

/// Overall deadline of one fetch.
pub const TIMEOUT: Duration = Duration::from_secs(60);
/// The TCP connect and the TLS handshake.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Each read.
pub const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Least time between two request starts to one host.
pub const DELAY: Duration = Duration::ZERO;
/// Adaptive delay's factor (0: off).
pub const DELAY_FACTOR: f64 = 0.0;
/// Longest adaptive delay.
pub const MAX_DELAY: Duration = Duration::from_secs(30);
/// Cap on a robots.txt `Crawl-delay`.
pub const MAX_CRAWL_DELAY: Duration = Duration::from_secs(10);
/// Waits before each new try of a robots.txt that was unreachable or 5xx:
/// four more tries over 61 s, then the origin is given up.
pub const ROBOTS_RETRIES: [Duration; 4] = [
    Duration::from_secs(1),
    Duration::from_secs(5),
    Duration::from_secs(15),
    Duration::from_secs(40),
];

/// The User-Agent: the product token robots.txt rules are matched with
/// (`ringcrawl`), the version, and the page that tells a site owner what
/// ringcrawl is and how to block it (docs/bot.md, under the package's
/// `repository` in Cargo.toml).
pub const USER_AGENT: &str = concat!(
    "ringcrawl/",
    env!("CARGO_PKG_VERSION"),
    " (+",
    env!("CARGO_PKG_REPOSITORY"),
    "/blob/main/docs/bot.md)"
);

/// `<loc>`s kept of one sitemap: the protocol's 50,000.
pub const MAX_SITEMAP_URLS: usize = ringcrawl_sitemap::MAX_URLS;
/// Sitemaps a host may have fetched (guessed, named by robots.txt or by
/// indexes): an index of 50,000 indexes of 50,000 sitemaps stops here.
pub const MAX_SITEMAPS_PER_HOST: usize = 1_000;

/// Body bytes kept per response.
pub const MAX_BODY: usize = 16 << 20;
/// RAM for queued URLs over the whole crawl.
pub const FRONTIER_MEMORY: usize = 256 << 20;
/// RAM for the hosts' own state over the whole crawl: some 200,000 live
/// hosts (fewer with large robots.txt files).
pub const HOST_MEMORY: usize = 64 << 20;
/// The least share of the hosts' memory ([`HOST_MEMORY`] by default) a
/// shard may get: the builder refuses a setting that gives less. Room for
/// some eight hosts waiting for their robots.txt, at their 8 KiB reserve
/// each.
pub const MIN_HOST_MEMORY_PER_SHARD: usize = 64 << 10;
/// RAM for the seen-sets' buckets over the whole crawl: the two buckets of
/// a shard (one filling, one being merged) hold some 6 million URLs each
/// on two shards before a merge to disk.
pub const SEEN_MEMORY: usize = 128 << 20;
/// Bytes each shard's TLS session cache may hold: some 1,000 hosts'
/// sessions at two tickets and a 3-4 KiB certificate chain each.
pub const TLS_SESSION_MEMORY: usize = 8 << 20;
/// Bytes the cookie jar may hold: some 10,000 domains' session cookies,
/// or 35,000 cookies of a few domains.
pub const COOKIE_MEMORY: usize = 16 << 20;

/// Bytes of records the JSONL writer may have waiting before no new fetch
/// starts.
pub const JSONL_BACKLOG: usize = 4 << 20;
/// Size at which a WARC file is closed and the next one begun.
pub const WARC_MAX_SIZE: u64 = 1 << 30;
/// Time between checkpoints of a crawl kept in a state directory.
pub const CHECKPOINT_INTERVAL: Duration = Duration::from_secs(60);

/// Host partitions of a cluster crawl a node creates.
pub const PARTITIONS: u32 = 256;
/// How long a node's lease on a partition lasts without renewal.
pub const LEASE_TTL: Duration = Duration::from_secs(10);
