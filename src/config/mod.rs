//! The validated crawl configuration, built once from the command line (or by
//! a test) before any thread starts, then cloned into every shard.
//!
//! Not the CLI: `cli/` parses flags and turns them into a [`Config`]; this
//! module only says what a crawl is allowed to do.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use url::Url;

use crate::defaults;
use crate::net::cookies::Jar;
use crate::net::dns::Families;
use crate::net::proxy::Proxies;
use crate::net::tls::TlsOptions;
use crate::web::query::StripQuery;
use crate::web::scope::{Scope, ScopeMode};
use ringcrawl_http1::{Credential, Headers, TypeRules};

pub(crate) mod budget;
pub(crate) mod host_rules;
pub(crate) mod secret;
pub(crate) mod sitemap;

/// A crawl kept in a state directory (`crate::state`), so that it can be
/// resumed after a stop or a kill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StateSettings {
    /// The directory.
    pub dir: PathBuf,
    /// Go on with the crawl it holds (else start a new one there).
    pub resume: bool,
    /// How often a checkpoint is written (and once more at the end).
    pub checkpoint_interval: Duration,
    /// A resume drops damaged lines or journal chunks (with the
    /// records, index lines or URLs they held) instead of stopping.
    pub discard_damaged: bool,
    /// The command line's flags that made the crawl, kept in its manifest
    /// so that `--resume` applies them again (empty from the library).
    pub args: Vec<String>,
    /// Compact within a run once this many journal bytes are not covered
    /// by a base, sorting this many pairs at a time (tests, to compact
    /// small crawls); None: `crate::state::compact::in_run`'s constants.
    pub compact_in_run: Option<(u64, usize)>,
}

/// A node of a crawl on many machines (`--cluster`, `crate::cluster`).
/// Its `Debug` hides the Redis password ([`secret::redacted`]).
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct ClusterSettings {
    /// The Redis server, `redis://HOST:PORT/` (`redis://:PASSWORD@…`,
    /// `rediss://` for TLS): never printed as it is.
    pub url: String,
    /// The crawl's name: nodes that give the same one crawl together.
    pub crawl: String,
    /// This node's name, unique among the crawl's live nodes.
    pub node: String,
    /// Partitions of a crawl this node creates (None: the default, or
    /// whatever the crawl has).
    pub partitions: Option<u32>,
    /// How long a lease lasts without renewal.
    pub lease_ttl: Duration,
}

impl std::fmt::Debug for ClusterSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterSettings")
            .field("url", &secret::redacted(&self.url))
            .field("crawl", &self.crawl)
            .field("node", &self.node)
            .field("partitions", &self.partitions)
            .field("lease_ttl", &self.lease_ttl)
            .finish()
    }
}

/// Where the per-URL records go as JSON Lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Output {
    /// No JSONL output.
    None,
    /// Standard output (`--output -`).
    Stdout,
    /// A file, created or truncated at start (appended to by a resumed
    /// crawl, after its repair).
    File(PathBuf),
}

/// Where a seed list (`--seeds`, `crate::crawl::seeds`) is read from.
#[derive(Clone)]
pub(crate) enum SeedSource {
    /// A file, one URL or host a line.
    File(PathBuf),
    /// Standard input (`--seeds -`).
    Stdin,
    /// A library caller's reader, read once by the first crawl that runs
    /// with it.
    Reader(SeedReader),
}

/// A reader of seed lines handed to the library (see [`SeedSource::Reader`]).
#[derive(Clone)]
pub(crate) struct SeedReader(
    std::sync::Arc<std::sync::Mutex<Option<Box<dyn std::io::Read + Send>>>>,
);

impl SeedReader {
    pub(crate) fn new(reader: Box<dyn std::io::Read + Send>) -> Self {
        SeedReader(std::sync::Arc::new(std::sync::Mutex::new(Some(reader))))
    }

    /// The reader, once.
    pub(crate) fn take(&self) -> Option<Box<dyn std::io::Read + Send>> {
        self.0.lock().ok().and_then(|mut r| r.take())
    }
}

impl SeedSource {
    /// How messages name it.
    pub(crate) fn name(&self) -> String {
        match self {
            SeedSource::File(path) => path.display().to_string(),
            SeedSource::Stdin => "standard input".to_string(),
            SeedSource::Reader(_) => "the seed reader".to_string(),
        }
    }
}

impl std::fmt::Debug for SeedSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// Everything a crawl needs to know; shared read-only by all shards.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// Normalised crawl roots; their hosts define the scope.
    pub roots: Vec<Url>,
    /// Seed lists: more roots, read as the crawl goes; their hosts are in
    /// scope too.
    pub seeds: Vec<SeedSource>,
    /// Which URLs may be fetched (strict/lenient hosts, `--exclude`).
    pub scope: Scope,
    /// Number of shards (one glommio executor per core); `crawl::run`
    /// lowers it to `max_tasks` if that is smaller.
    pub cores: usize,
    /// Concurrent fetches across all shards (split evenly between shards).
    pub max_tasks: usize,
    /// Redirect hops a chain may take from a link before it is cut.
    pub max_redirect: u32,
    /// Attempts per URL: network errors are tried again at once, a 429 or
    /// 503 with `Retry-After` after the wait it asks.
    pub max_tries: u32,
    /// Longest `Retry-After` honoured (the page is queued again after
    /// it); a longer one is recorded as the failure it is.
    pub max_retry_after: Duration,
    /// `--resolve HOST:PORT:ADDR[,ADDR...]` pins, keyed by (lower-cased
    /// host, port).
    pub resolve: HashMap<(String, u16), Vec<IpAddr>>,
    /// `--dns-server` nameservers asked on a cache miss; empty: those of
    /// `/etc/resolv.conf`.
    pub dns_servers: Vec<SocketAddr>,
    /// Address families to resolve and connect over (`-4`, `-6`).
    pub families: Families,
    /// Sent as `User-Agent`.
    pub user_agent: String,
    /// Headers added to every request (`-H`), checked.
    pub headers: Headers,
    /// Basic credentials, each sent only to URLs of its own host (and
    /// port, if it names one), never on a redirect elsewhere (`--auth`).
    pub credentials: Vec<Credential>,
    /// The proxies URLs go out through (`--proxy`, or `http_proxy` and
    /// its kin), and the hosts that go direct; empty: every fetch direct.
    pub proxies: Proxies,
    /// The cookie jar, if the crawl keeps cookies (`--cookies`,
    /// `--save-cookies`): one for every shard.
    pub cookies: Option<Arc<Jar>>,
    /// Where the jar is written at the end (`--save-cookies`).
    pub save_cookies: Option<PathBuf>,
    /// Bytes the jar may hold (`--cookie-memory`).
    pub cookie_memory: usize,
    /// An earlier crawl's record files (`--since`): its pages are asked
    /// for only if they changed.
    pub since: Vec<PathBuf>,
    /// Where that crawl's WARC files are looked for (`--since-warc`),
    /// before the record files' directories and `warc_dir`.
    pub since_warc: Vec<PathBuf>,
    /// Limit for the TCP connect and the TLS handshake together.
    pub connect_timeout: Duration,
    /// Limit for each single read from the socket.
    pub read_timeout: Duration,
    /// Overall deadline for one fetch (connect + request + whole response).
    pub timeout: Duration,
    /// Links followed from a root beyond which links are not queued.
    pub max_depth: u32,
    /// Fetch each page's requisites (images, scripts, stylesheets, media
    /// and what CSS loads) from any host, as leaves at the page's depth.
    pub page_requisites: bool,
    /// Bodies cut by their media type (`--accept-type`, `--reject-type`,
    /// `--max-size-per-type`): robots.txt and sitemaps are read whole.
    pub types: TypeRules,
    /// Query parameters left out of every URL found (`--strip-query`).
    pub strip_query: StripQuery,
    /// URLs longer than this (bytes, normalised) are not queued.
    pub max_url_length: usize,
    /// URLs accepted per host; a bound on generated-URL traps.
    pub max_pages_per_host: usize,
    /// Fetches in flight per host.
    pub per_host: usize,
    /// Ask servers to keep connections open and reuse the ones they do.
    pub keep_alive: bool,
    /// Offer compressed bodies (`Accept-Encoding: gzip, deflate, br, zstd`);
    /// bodies are decoded by their `Content-Encoding` either way.
    pub compression: bool,
    /// What `https` servers are trusted with (roots, `--insecure`).
    pub tls: TlsOptions,
    /// Bytes each shard's TLS session cache may hold (estimated: each
    /// session holds a copy of its server's certificate chain); past it,
    /// the least recently used (name, port)'s sessions are forgotten.
    pub tls_session_memory: usize,
    /// Idle keep-alive connections each shard may hold (each is an open
    /// file); `crawl::run` lowers it to fit the open-file limit.
    pub idle_connections: usize,
    /// Least time between two request starts to one host.
    pub delay: Duration,
    /// Adaptive delay (Heritrix's): after a fetch that took `t`, its host
    /// waits `delay_factor × t` (at least `delay`, at most `max_delay`)
    /// from the fetch's end; 0 turns it off.
    pub delay_factor: f64,
    /// Upper bound of the adaptive delay.
    pub max_delay: Duration,
    /// Fetches in flight to one server address at most, over all shards
    /// and hosts (`--per-ip`); None: no such limit.
    pub per_ip: Option<u32>,
    /// Hosts with politeness of their own (`--host-rule`): their
    /// `per_host`, `delay`, adaptive delay and page budget.
    pub host_rules: Arc<host_rules::HostRules>,
    /// Fetch robots.txt first and obey it.
    pub obey_robots: bool,
    /// Leave out links whose `rel` says `nofollow` (`--skip-nofollow`).
    pub skip_nofollow: bool,
    /// Follow no link of a page whose `<meta name="robots">` or
    /// `X-Robots-Tag` says `nofollow` (wget's default).
    pub obey_meta_robots: bool,
    /// Upper bound on a robots.txt `Crawl-delay`.
    pub max_crawl_delay: Duration,
    /// Waits before each new try of a robots.txt that was unreachable or
    /// 5xx (its origin's pages wait); when used up, the origin is given up.
    pub robots_retries: Vec<Duration>,
    /// Read sitemaps: the `/sitemap.xml` of each root's origin and the
    /// `Sitemap:` lines of the robots.txt of the origins of roots (and of
    /// their redirect targets), their indexes followed; the URLs they list
    /// are queued like links of depth 1.
    pub sitemaps: bool,
    /// What sitemaps may cost (size, URLs, index levels, sitemaps per host).
    pub sitemap_limits: sitemap::Limits,
    /// Bytes the hosts' own state may take, over all shards (each gets its
    /// share, at least [`crate::defaults::MIN_HOST_MEMORY_PER_SHARD`]): names, politeness
    /// clocks, page counts and robots.txt rules of the hosts with URLs
    /// queued or in flight, and of finished hosts kept in case they come
    /// back (`--host-memory`). Past it, the least recently finished are
    /// forgotten, and URLs of hosts not yet live wait for room.
    pub host_memory: usize,
    /// Bytes of RAM the seen-sets' buckets may hold, over all shards
    /// (`--seen-memory`); the URLs past it are kept on disk.
    pub seen_memory: usize,
    /// The crawl's key of URL fingerprints: drawn at random for each crawl
    /// (a site cannot aim URLs at a collision it cannot compute), kept by
    /// a crawl that is resumed.
    pub fingerprint_key: [u64; 2],
    /// Bytes the queued URLs may take in RAM, over all shards (each gets
    /// its share); past it, the newest URLs of each host are spilled to
    /// files in `spill_dir` and read back when their turn nears.
    pub frontier_memory: usize,
    /// Where the crawl makes its directory for what does not fit in RAM
    /// (the frontier's spilled queues, the seen-sets' runs; removed at its
    /// end): `None`, the system's temporary directory.
    pub spill_dir: Option<PathBuf>,
    /// `--state DIR` / `--resume DIR`: keep what a resume needs there.
    pub state: Option<StateSettings>,
    /// With `--cluster`: the crawl this node joins.
    pub cluster: Option<ClusterSettings>,
    /// Largest response head accepted.
    pub max_head: usize,
    /// Body bytes kept per response; the rest is not read and the record is
    /// marked truncated.
    pub max_body: usize,
    /// JSON Lines destination for records.
    pub output: Output,
    /// Bytes of records the JSONL writer may have waiting before shards
    /// stop starting fetches until it catches up.
    pub output_backlog: usize,
    /// Keep every record in memory and return it from `crawl::run` (tests,
    /// the demo's completeness check).
    pub keep_records: bool,
    /// Write WARC files of every exchange into this directory.
    pub warc_dir: Option<PathBuf>,
    /// Rotate a shard's WARC file before it grows past this many bytes.
    pub warc_max_size: u64,
    /// Pages, body bytes and wall time the crawl may spend (none by
    /// default); the first one spent stops it cleanly.
    pub budget: budget::Limits,
    /// Archive a payload already archived once as a `revisit` record
    /// referring to the first (`--warc-dedup`), crawl-wide.
    pub warc_dedup: bool,
    /// Archive each name's DNS answer as a `resource` record (`--warc-dns`).
    pub warc_dns: bool,
    /// Write a CDXJ index line for each WARC response, revisit and resource
    /// record here, as the records are written (unsorted).
    pub cdxj: Option<PathBuf>,
    /// Package the WARC files, their sorted index and a page list as a
    /// WACZ file here once the crawl is over (`--wacz`).
    pub wacz: Option<PathBuf>,
    /// Live progress on stderr: redrawn in place on a terminal, else a line
    /// every this often; `None` for none.
    pub progress: Option<Duration>,
    /// Pin each shard's thread to a CPU of the process's affinity mask.
    pub pin_threads: bool,
}

impl Config {
    /// A configuration with the chapter's defaults for the given roots.
    pub(crate) fn new(roots: Vec<Url>) -> Self {
        let scope = Scope::build(&roots, ScopeMode::Strict, None);
        Config {
            roots,
            seeds: Vec::new(),
            scope,
            cores: available_cpus().len().max(1),
            max_tasks: defaults::MAX_TASKS,
            max_redirect: defaults::MAX_REDIRECT,
            max_tries: defaults::MAX_TRIES,
            max_retry_after: defaults::MAX_RETRY_AFTER,
            resolve: HashMap::new(),
            dns_servers: Vec::new(),
            families: Families::Both,
            user_agent: defaults::USER_AGENT.to_string(),
            headers: Headers::default(),
            credentials: Vec::new(),
            proxies: Proxies::default(),
            cookies: None,
            save_cookies: None,
            cookie_memory: defaults::COOKIE_MEMORY,
            since: Vec::new(),
            since_warc: Vec::new(),
            connect_timeout: defaults::CONNECT_TIMEOUT,
            read_timeout: defaults::READ_TIMEOUT,
            timeout: defaults::TIMEOUT,
            max_depth: defaults::MAX_DEPTH,
            page_requisites: false,
            strip_query: StripQuery::default(),
            types: TypeRules::default(),
            max_url_length: defaults::MAX_URL_LENGTH,
            max_pages_per_host: defaults::MAX_PAGES_PER_HOST,
            per_host: defaults::PER_HOST,
            keep_alive: true,
            compression: true,
            tls: TlsOptions::default(),
            tls_session_memory: defaults::TLS_SESSION_MEMORY,
            idle_connections: 256,
            delay: defaults::DELAY,
            delay_factor: defaults::DELAY_FACTOR,
            max_delay: defaults::MAX_DELAY,
            host_rules: Arc::default(),
            per_ip: None,
            obey_robots: true,
            obey_meta_robots: true,
            skip_nofollow: false,
            max_crawl_delay: defaults::MAX_CRAWL_DELAY,
            robots_retries: defaults::ROBOTS_RETRIES.to_vec(),
            host_memory: defaults::HOST_MEMORY,
            seen_memory: defaults::SEEN_MEMORY,
            fingerprint_key: [fastrand::u64(..), fastrand::u64(..)],
            frontier_memory: defaults::FRONTIER_MEMORY,
            spill_dir: None,
            state: None,
            cluster: None,
            sitemaps: true,
            sitemap_limits: sitemap::Limits::default(),
            max_head: ringcrawl_http1::DEFAULT_MAX_HEAD,
            max_body: defaults::MAX_BODY,
            output: Output::None,
            output_backlog: defaults::JSONL_BACKLOG,
            keep_records: false,
            progress: None,
            warc_dir: None,
            warc_max_size: defaults::WARC_MAX_SIZE,
            budget: budget::Limits::default(),
            pin_threads: false,
            warc_dedup: false,
            warc_dns: false,
            cdxj: None,
            wacz: None,
        }
    }

    /// Fetch slots of shard `shard`: `max_tasks` split evenly (a shard
    /// past the `max_tasks`-th gets none, so `crawl::run` runs no more
    /// shards than that).
    pub(crate) fn workers_for(&self, shard: usize) -> usize {
        let cores = self.cores.max(1);
        let base = self.max_tasks / cores;
        let extra = usize::from(shard < self.max_tasks % cores);
        base + extra
    }
}

/// CPUs this process may run on, from its affinity mask (so `taskset` and
/// containers are honoured; glommio's own placement reads sysfs instead).
pub(crate) fn available_cpus() -> Vec<usize> {
    match rustix::thread::sched_getaffinity(None) {
        Ok(set) => (0..rustix::thread::CpuSet::MAX_CPU)
            .filter(|&cpu| set.is_set(cpu))
            .collect(),
        Err(_) => vec![0],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_tasks_split_between_shards_adds_up() {
        let mut config = Config::new(vec![]);
        config.cores = 3;
        config.max_tasks = 100;
        let total: usize = (0..3).map(|s| config.workers_for(s)).sum();
        assert_eq!(total, 100);
        config.max_tasks = 2;
        let slots: Vec<usize> = (0..3).map(|s| config.workers_for(s)).collect();
        assert_eq!(slots, [1, 1, 0], "never more slots than --max-tasks");
    }

    #[test]
    fn affinity_mask_lists_at_least_one_cpu() {
        assert!(!available_cpus().is_empty());
    }
}
