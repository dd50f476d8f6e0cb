//! The flags, defined once (clap derive): their names, values, defaults
//! and help. What they mean to the crawl is `build.rs`'s.

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

use super::units;

/// Crawl every in-scope page reachable from the roots, thread-per-core over io_uring.
#[derive(Debug, Parser)]
#[command(name = "ringcrawl", version, about, args_override_self = true)]
pub struct Args {
    /// Root URLs; a root without a scheme gets http://
    #[arg(value_name = "ROOT")]
    pub roots: Vec<String>,

    /// Read more roots from FILE, one URL or bare host a line (- for standard input; repeatable); read as the crawl goes, its hosts in scope like the roots'
    #[arg(long, value_name = "FILE")]
    pub seeds: Vec<PathBuf>,

    /// Crawl the built-in synthetic site of N pages, served in-process on 127.0.0.1 (no roots needed)
    #[arg(long, value_name = "PAGES", num_args = 0..=1, default_missing_value = "2000")]
    pub demo: Option<usize>,

    /// With --demo: serve the synthetic site over https, with a certificate
    /// from a certificate authority made for the run (and trusted by it)
    #[arg(long, requires = "demo")]
    pub tls: bool,

    /// Shards (cores) to run; default: every CPU in the process's affinity mask
    #[arg(long)]
    pub cores: Option<usize>,

    /// Limit on redirect hops
    #[arg(long = "max-redirect", alias = "max_redirect", default_value_t = 10)]
    pub max_redirect: u32,

    /// Attempts per URL (network errors only)
    #[arg(long = "max-tries", alias = "max_tries", default_value_t = 4)]
    pub max_tries: u32,

    /// Concurrent fetches across all cores
    #[arg(long = "max-tasks", alias = "max_tasks", default_value_t = 100)]
    pub max_tasks: usize,

    /// Skip URLs matching this regular expression
    #[arg(long, value_name = "REGEX")]
    pub exclude: Option<String>,

    /// Only the roots' exact hosts, with or without a leading www. (default)
    #[arg(long, overrides_with = "lenient")]
    pub strict: bool,

    /// Any host of the roots' registered domains (public-suffix aware)
    #[arg(long, overrides_with = "strict")]
    pub lenient: bool,

    /// Pin HOST:PORT to ADDR (or ADDR,ADDR,... tried as Happy Eyeballs
    /// does), as curl's --resolve (repeatable)
    #[arg(long, value_name = "HOST:PORT:ADDR")]
    pub resolve: Vec<String>,

    /// Ask this DNS server (ADDR or ADDR:PORT, UDP then TCP) instead of
    /// those of /etc/resolv.conf (repeatable: tried in order)
    #[arg(long = "dns-server", value_name = "ADDR[:PORT]")]
    pub dns_server: Vec<String>,

    /// Resolve and connect over IPv4 only
    #[arg(short = '4', long = "ipv4", conflicts_with = "ipv6")]
    pub ipv4: bool,

    /// Resolve and connect over IPv6 only
    #[arg(short = '6', long = "ipv6")]
    pub ipv6: bool,

    /// Write one JSON record per URL to FILE (- for stdout)
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<String>,

    /// User-Agent header
    #[arg(long = "user-agent", alias = "user_agent")]
    pub user_agent: Option<String>,

    /// Overall deadline per fetch (500ms, 2s, 5m; a bare number is seconds)
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = units::seconds)]
    pub timeout: Duration,

    /// Connect timeout: the TCP connect and the TLS handshake (a bare
    /// number is seconds)
    #[arg(long = "connect-timeout", value_name = "DURATION", default_value = "10s", value_parser = units::seconds)]
    pub connect_timeout: Duration,

    /// Timeout of each read (a bare number is seconds)
    #[arg(long = "read-timeout", value_name = "DURATION", default_value = "30s", value_parser = units::seconds)]
    pub read_timeout: Duration,

    /// Body bytes kept per response (K, M, G suffixes); larger bodies are
    /// cut and marked truncated
    #[arg(long = "max-body", value_name = "SIZE", default_value = "16M", value_parser = units::size)]
    pub max_body: u64,

    /// Fetches in flight per host (default 2; with --demo, all of --max-tasks)
    #[arg(long = "per-host", alias = "per_host")]
    pub per_host: Option<usize>,

    /// One connection per request (`Connection: close`) instead of reusing
    /// the connections servers keep alive
    #[arg(long = "no-keep-alive")]
    pub no_keep_alive: bool,

    /// Ask for uncompressed bodies (`Accept-Encoding: identity`); bodies a
    /// server compresses anyway are still decoded
    #[arg(long = "no-compression")]
    pub no_compression: bool,

    /// Least time between two request starts to one host (250ms, 1s; a
    /// bare number is milliseconds)
    #[arg(long, value_name = "DURATION", default_value = "0", value_parser = units::millis, overrides_with = "rate")]
    pub delay: Duration,

    /// Requests a second (N/s), a minute (N/m) or an hour (N/h) to one
    /// host at most: --delay of one second, minute or hour divided by N
    #[arg(long, value_name = "N/s", value_parser = units::rate, overrides_with = "delay")]
    pub rate: Option<Duration>,

    /// Trust the CA certificates in this PEM file for https, besides the
    /// compiled-in Mozilla roots (repeatable)
    #[arg(long = "ca-cert", value_name = "FILE")]
    pub ca_cert: Vec<PathBuf>,

    /// Fetch https pages even when their certificate fails verification;
    /// the failure is still recorded on each page's record
    #[arg(long)]
    pub insecure: bool,

    /// Do not fetch or obey robots.txt
    #[arg(long = "ignore-robots")]
    pub ignore_robots: bool,

    /// Read sitemaps: /sitemap.xml and the robots.txt Sitemap: lines of the
    /// roots' origins, and the indexes they name; their pages are queued
    /// like links (default, but with --demo)
    #[arg(long, overrides_with = "no_sitemaps")]
    pub sitemaps: bool,

    /// Read no sitemap
    #[arg(long = "no-sitemaps", overrides_with = "sitemaps")]
    pub no_sitemaps: bool,

    /// Cap on a robots.txt Crawl-delay (a bare number is seconds)
    #[arg(long = "max-crawl-delay", value_name = "DURATION", default_value = "10s", value_parser = units::seconds)]
    pub max_crawl_delay: Duration,

    /// Waits before each new try of a robots.txt that was unreachable or
    /// 5xx (its pages wait meanwhile; bare numbers are seconds); when used
    /// up, the origin's pages are refused. "none" gives up at the first
    /// failure
    #[arg(
        long = "robots-retries",
        value_name = "DURATION,...",
        default_value = "1,5,15,40"
    )]
    pub robots_retries: String,

    /// Links followed from a root beyond which links are not queued
    #[arg(long = "max-depth", alias = "max_depth", default_value_t = 100)]
    pub max_depth: u32,

    /// Fetch each page's requisites too, as wget -p: images (src, srcset),
    /// scripts, stylesheets, icons, media, objects and what CSS loads, from
    /// any host (--exclude still applies), at the page's depth; their own
    /// links are not followed, except a stylesheet's url() and @import
    #[arg(short = 'p', long = "page-requisites")]
    pub page_requisites: bool,

    /// URLs longer than this many bytes are not queued
    #[arg(
        long = "max-url-length",
        alias = "max_url_length",
        default_value_t = 2048
    )]
    pub max_url_length: usize,

    /// RAM for queued URLs, over all cores (K, M, G suffixes); past it,
    /// each host's newest URLs go to files in the temporary directory
    #[arg(long = "frontier-memory", value_name = "SIZE", default_value = "256M", value_parser = units::nonzero_size)]
    pub frontier_memory: u64,

    /// URLs queued per host at most (a bound on crawler traps)
    #[arg(
        long = "max-pages-per-host",
        alias = "max_pages_per_host",
        default_value_t = 100_000
    )]
    pub max_pages_per_host: usize,

    /// Archive every exchange as WARC 1.1 in DIR (one file per shard)
    #[arg(long, value_name = "DIR")]
    pub warc: Option<PathBuf>,

    /// Rotate WARC files at this size (bytes; K, M, G suffixes)
    #[arg(long = "warc-max-size", value_name = "SIZE", default_value = "1G", value_parser = units::nonzero_size)]
    pub warc_max_size: u64,

    /// RAM for the seen-set's buckets (K, M, G suffixes); URLs past it are
    /// kept on disk
    #[arg(long = "seen-memory", value_name = "SIZE", default_value = "128M", value_parser = units::nonzero_size)]
    pub seen_memory: u64,

    /// Keep the crawl's state in DIR (made if missing) so that --resume DIR
    /// can go on after a stop, a spent budget or a kill; records go to
    /// -o FILE, else DIR/records.jsonl
    #[arg(long, value_name = "DIR")]
    pub state: Option<PathBuf>,

    /// Go on with the crawl kept in DIR (no roots): its flags apply again,
    /// then those given here (a larger budget, other memory settings)
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,

    /// Crawl as one node of a crawl on many machines, sharing it through
    /// this Redis server (redis://HOST:PORT/); with --crawl
    #[arg(long, value_name = "URL", requires = "crawl")]
    pub cluster: Option<String>,

    /// With --cluster: the crawl to make or join (nodes that give the same
    /// name crawl together; roots given to any node are added to it)
    #[arg(long, value_name = "NAME", requires = "cluster")]
    pub crawl: Option<String>,

    /// With --cluster: this node's name, unique among the crawl's live
    /// nodes (default HOSTNAME-PID); its output files are named after it
    #[arg(long, value_name = "NAME", requires = "cluster")]
    pub node: Option<String>,

    /// With --cluster: host partitions of a crawl this node makes (fixed
    /// when it is made)
    #[arg(long, value_name = "N", requires = "cluster")]
    pub partitions: Option<u32>,

    /// With --cluster: how long a node's lease on a partition lasts
    /// without renewal (a bare number is seconds); a node that dies or is
    /// cut off loses its partitions after this long
    #[arg(
        long = "lease-ttl",
        value_name = "DURATION",
        requires = "cluster",
        default_value = "10s",
        value_parser = units::seconds
    )]
    pub lease_ttl: Duration,

    /// Time between checkpoints of a crawl with --state (a bare number is
    /// seconds)
    #[arg(
        long = "checkpoint-interval",
        value_name = "DURATION",
        default_value = "60s",
        value_parser = units::seconds
    )]
    pub checkpoint_interval: Duration,

    /// Stop after N page fetches (robots.txt not counted): running fetches
    /// finish, the rest stays queued
    #[arg(long = "max-pages", value_name = "N")]
    pub max_pages: Option<u64>,

    /// Stop once SIZE body bytes were received (K, M, G suffixes)
    #[arg(long = "max-bytes", value_name = "SIZE", value_parser = units::nonzero_size)]
    pub max_bytes: Option<u64>,

    /// Stop starting fetches this long after the start (a bare number is
    /// seconds)
    #[arg(long = "max-time", value_name = "DURATION", value_parser = units::seconds)]
    pub max_time: Option<Duration>,

    /// With --warc: archive a payload seen before as a `revisit` record
    /// referring to its first copy (profile identical-payload-digest)
    #[arg(long = "warc-dedup", requires = "warc")]
    pub warc_dedup: bool,

    /// With --warc: archive each host's DNS answer as a `resource` record
    /// (`dns:` URI, as Heritrix does)
    #[arg(long = "warc-dns", requires = "warc")]
    pub warc_dns: bool,

    /// With --warc: write a CDXJ index of the WARC records to FILE as they
    /// are written (cdxj-indexer's fields; unsorted)
    #[arg(long, value_name = "FILE", requires = "warc")]
    pub cdxj: Option<PathBuf>,

    /// With --warc: when the crawl is over, package the WARC files, their
    /// CDXJ index (sorted) and the list of HTML pages as a WACZ 1.1.1 file
    /// (written to FILE.tmp, renamed when whole; replayable in
    /// ReplayWeb.page)
    #[arg(long, value_name = "FILE", requires = "warc")]
    pub wacz: Option<PathBuf>,

    /// Time between progress lines when stderr is not a terminal (a bare
    /// number is seconds)
    #[arg(long = "progress-interval", value_name = "DURATION", default_value = "5s", value_parser = units::seconds)]
    pub progress_interval: Duration,

    /// Also write the end report as JSON to FILE
    #[arg(long = "report-json", value_name = "FILE")]
    pub report_json: Option<PathBuf>,

    /// More output (-v: one line per URL)
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// Less output (-q: no report)
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub quiet: u8,
}
