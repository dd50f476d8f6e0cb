//! The flags, defined once (clap derive): their names, values, defaults,
//! help and headings (wget's groups, in the order of docs/cli.md), and the
//! subcommands. What the flags mean to the crawl is `build.rs`'s; the help's
//! closing text and the completions and man page are `help.rs`'s.
//!
//! Each doc comment's first paragraph is the line of `-h`; `--help` shows
//! the rest too. A default the library has is taken from
//! [`ringcrawl::defaults`] (written as the flag takes it: `30s`, `16M`),
//! never restated here; defaults clap cannot show (they depend on other
//! flags or on the machine) are written as `[default: ...]` at the end of
//! the first paragraph, from the same constants where there is one. The
//! command's own defaults (progress lines, the status server) are here.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};
use ringcrawl::defaults;

use super::{help, units, values};

const INPUT: &str = "Input";
const SCOPE: &str = "Scope";
const POLITENESS: &str = "Politeness";
const NETWORK: &str = "Network and TLS";
const LIMITS: &str = "Limits and budgets";
const OUTPUT: &str = "Output and archives";
const STATE: &str = "State and resume";
const CLUSTER: &str = "Cluster";
const LOGGING: &str = "Logging";

/// The pages of `--demo`'s site when the flag names no number.
const DEMO_PAGES: &str = "2000";

/// Crawl every in-scope page reachable from the roots, thread-per-core over io_uring.
#[derive(Debug, Parser)]
#[command(
    name = "ringcrawl",
    version,
    about,
    args_override_self = true,
    args_conflicts_with_subcommands = true,
    disable_help_subcommand = true,
    after_help = help::AFTER_HELP
)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<Command>,

    // Input
    /// Root URLs; a root without a scheme gets http://
    #[arg(value_name = "ROOT")]
    pub roots: Vec<String>,

    /// Read more roots from FILE (- for standard input; repeatable)
    ///
    /// One URL or bare host a line, read as the crawl goes; the seeds'
    /// hosts are in scope as the roots' are.
    #[arg(long, value_name = "FILE", help_heading = INPUT)]
    pub seeds: Vec<PathBuf>,

    #[arg(
        long,
        value_name = "PAGES",
        num_args = 0..=1,
        default_missing_value = DEMO_PAGES,
        help = format!("Crawl the built-in synthetic site of PAGES pages (no roots needed) [default PAGES: {DEMO_PAGES}]"),
        long_help = format!("Crawl the built-in synthetic site of PAGES pages (no roots needed) [default PAGES: {DEMO_PAGES}]\n\nThe site is served in-process on 127.0.0.1; the crawl checks that every expected URL was fetched."),
        help_heading = INPUT
    )]
    pub demo: Option<usize>,

    /// With --demo: serve the synthetic site over https
    ///
    /// With a certificate from a certificate authority made for the run
    /// and trusted by this crawl only.
    #[arg(long, requires = "demo", help_heading = INPUT)]
    pub tls: bool,

    /// Read sitemaps [default: on; off with --demo]
    ///
    /// /sitemap.xml and the robots.txt Sitemap: lines of the roots'
    /// origins, and the indexes they name; their pages are queued like
    /// links.
    #[arg(long, overrides_with = "no_sitemaps", help_heading = INPUT)]
    pub sitemaps: bool,

    /// Read no sitemap
    #[arg(long = "no-sitemaps", overrides_with = "sitemaps", help_heading = INPUT)]
    pub no_sitemaps: bool,

    /// Recrawl: ask only for what changed since the crawl that wrote these records (-o of it; repeatable)
    ///
    /// A page it captured whole with an ETag or Last-Modified is asked for
    /// with If-None-Match / If-Modified-Since. On 304 its links are read
    /// from its earlier WARC record and, with --warc, a revisit record
    /// (server-not-modified) refers to it; a capture that cannot be read
    /// back is fetched again in full. The report counts pages unchanged,
    /// changed, and the bytes spared.
    #[arg(long, value_name = "RECORDS", help_heading = INPUT)]
    pub since: Vec<PathBuf>,

    /// Where the --since crawl's WARC files are (repeatable) [looked in first; then the records' directory, then --warc]
    #[arg(long = "since-warc", value_name = "DIR", requires = "since", help_heading = INPUT)]
    pub since_warc: Vec<PathBuf>,

    // Scope
    /// Only the roots' exact hosts, with or without a leading www. [default]
    #[arg(long, overrides_with = "lenient", help_heading = SCOPE)]
    pub strict: bool,

    /// Any host of the roots' registered domains (public-suffix aware)
    #[arg(long, overrides_with = "strict", help_heading = SCOPE)]
    pub lenient: bool,

    /// Skip URLs matching this regular expression (searched anywhere in the URL)
    #[arg(long, value_name = "REGEX", help_heading = SCOPE)]
    pub exclude: Option<String>,

    /// Follow only links matching this regular expression (searched anywhere in the URL; repeatable: any one)
    ///
    /// Roots, seeds, robots.txt and sitemaps are fetched whatever it says,
    /// and so are the targets of their redirects and page requisites;
    /// --exclude still wins. Links kept out are not recorded.
    #[arg(long, value_name = "REGEX", help_heading = SCOPE)]
    pub include: Vec<String>,

    /// Follow no link above a root's directory on its host, as wget --no-parent
    ///
    /// The directory is the root's path up to and including its last /
    /// (/docs/ for /docs/index.html); links to the root's host (or its
    /// www. twin) elsewhere are not followed; other hosts in scope are
    /// not limited.
    #[arg(long = "no-parent", help_heading = SCOPE)]
    pub no_parent: bool,

    /// Leave these query parameters out of every URL (repeatable, comma-separated), e.g. 'utm_*,sessionid'
    ///
    /// A * stands for any run of characters; letter case counts. Applied
    /// before a URL is looked up among those seen, so the stripped URL is
    /// the one fetched and recorded, and one page behind many tracking
    /// links is fetched once.
    #[arg(long = "strip-query", value_name = "PARAM[,PARAM...]", help_heading = SCOPE)]
    pub strip_query: Vec<String>,

    /// Links followed from a root beyond which links are not queued
    #[arg(long = "max-depth", alias = "max_depth", value_name = "N", default_value_t = defaults::MAX_DEPTH, help_heading = SCOPE)]
    pub max_depth: u32,

    /// Fetch each page's requisites too, as wget -p
    ///
    /// Images (src, srcset), scripts, stylesheets, icons, media, objects
    /// and what CSS loads, from any host (--exclude still applies), at the
    /// page's depth; their own links are not followed, except a
    /// stylesheet's url() and @import.
    #[arg(short = 'p', long = "page-requisites", help_heading = SCOPE)]
    pub page_requisites: bool,

    /// Limit on redirect hops
    #[arg(long = "max-redirect", alias = "max_redirect", value_name = "N", default_value_t = defaults::MAX_REDIRECT, help_heading = SCOPE)]
    pub max_redirect: u32,

    // Politeness
    #[arg(
        long = "per-host",
        alias = "per_host",
        value_name = "N",
        help = format!("Fetches in flight per host [default: {}; with --demo: --max-tasks]", defaults::PER_HOST),
        help_heading = POLITENESS
    )]
    pub per_host: Option<usize>,

    /// Least time between two request starts to one host (250ms, 1s; a bare number is milliseconds)
    #[arg(long, value_name = "DURATION", default_value = units::show_duration(defaults::DELAY), value_parser = units::millis, overrides_with = "rate", help_heading = POLITENESS)]
    pub delay: Duration,

    /// Adaptive delay: after a fetch that took T, its host waits F x T (at least --delay, at most --max-delay)
    ///
    /// Heritrix's rule (its default factor is 5), so a slow server is
    /// asked less often; counted from the fetch's end. 0 (the default)
    /// turns it off.
    #[arg(long = "delay-factor", value_name = "F", default_value_t = defaults::DELAY_FACTOR, help_heading = POLITENESS)]
    pub delay_factor: f64,

    /// Longest adaptive delay (a bare number is seconds)
    #[arg(long = "max-delay", value_name = "DURATION", default_value = units::show_duration(defaults::MAX_DELAY), value_parser = units::seconds, help_heading = POLITENESS)]
    pub max_delay: Duration,

    /// Requests to one host at most, a second (N/s), a minute (N/m) or an hour (N/h)
    ///
    /// The same as --delay of one second, minute or hour divided by N; of
    /// --rate and --delay, the last one given wins.
    #[arg(long, value_name = "N/s", value_parser = units::rate, overrides_with = "delay", help_heading = POLITENESS)]
    pub rate: Option<Duration>,

    /// Fetches in flight to one server address at most, over all hosts [default: no limit]
    ///
    /// Hundreds of names served by one machine are not all fetched at
    /// once. The address is the one a host's name resolves to first; a
    /// fetch through an http:// or socks5h:// proxy (which resolves the
    /// name itself) is not counted. A page whose address is full waits a
    /// little in its host's queue and is tried again.
    #[arg(long = "per-ip", value_name = "N", help_heading = POLITENESS)]
    pub per_ip: Option<u32>,

    /// Politeness of its own for some hosts (repeatable), e.g. 'example.com:per-host=4,delay=500ms'
    ///
    /// PATTERN is a host name or address, *.example.com (its subdomains,
    /// not example.com itself) or * (every host). Keys, each overriding
    /// its flag for those hosts: per-host=N, delay=DURATION, rate=N/s,
    /// delay-factor=F, max-delay=DURATION, max-pages-per-host=N. An exact
    /// name beats a wildcard and the longest wildcard wins; only that one
    /// rule applies, the keys it does not set being the flags'.
    #[arg(long = "host-rule", value_name = "PATTERN:KEY=VALUE,...", help_heading = POLITENESS)]
    pub host_rule: Vec<String>,

    /// Do not fetch or obey robots.txt
    #[arg(long = "ignore-robots", help_heading = POLITENESS)]
    pub ignore_robots: bool,

    /// Follow the links of pages whose <meta name="robots"> or X-Robots-Tag says nofollow
    ///
    /// By default, as wget does, such a page is fetched and archived but
    /// its links are not followed (its requisites still are); its record
    /// says `"robots": "nofollow"` either way.
    #[arg(long = "ignore-meta-robots", help_heading = POLITENESS)]
    pub ignore_meta_robots: bool,

    /// Do not follow links whose rel says nofollow (<a rel="nofollow" ...>)
    #[arg(long = "skip-nofollow", help_heading = POLITENESS)]
    pub skip_nofollow: bool,

    /// Cap on a robots.txt Crawl-delay (a bare number is seconds)
    #[arg(long = "max-crawl-delay", value_name = "DURATION", default_value = units::show_duration(defaults::MAX_CRAWL_DELAY), value_parser = units::seconds, help_heading = POLITENESS)]
    pub max_crawl_delay: Duration,

    /// Waits before each new try of a robots.txt that was unreachable or 5xx (bare numbers are seconds), or none
    ///
    /// The origin's pages wait meanwhile; when the waits are used up, or
    /// at the first failure with "none", its pages are refused.
    #[arg(
        long = "robots-retries",
        value_name = "DURATION,...",
        default_value = values::show_retries(&defaults::ROBOTS_RETRIES),
        help_heading = POLITENESS
    )]
    pub robots_retries: String,

    // The User-Agent's default is a constant, which a doc comment cannot name.
    #[arg(
        long = "user-agent",
        alias = "user_agent",
        value_name = "UA",
        help = format!(
            "User-Agent header; say who you are and where to learn more, e.g. \"mybot/1.0 (+https://example.org/bot)\" [default: {}]",
            defaults::USER_AGENT
        ),
        long_help = format!(
            "User-Agent header; say who you are and where to learn more, e.g. \"mybot/1.0 (+https://example.org/bot)\" [default: {}]\n\nIts product token (up to the first / or space) is the name robots.txt rules are matched with. The default's URL is a page telling site owners what ringcrawl is and how to block it.",
            defaults::USER_AGENT
        ),
        help_heading = POLITENESS
    )]
    pub user_agent: Option<String>,

    // Network and TLS
    /// Overall deadline per fetch (500ms, 2s, 5m; a bare number is seconds)
    #[arg(long, value_name = "DURATION", default_value = units::show_duration(defaults::TIMEOUT), value_parser = units::seconds, help_heading = NETWORK)]
    pub timeout: Duration,

    /// Connect timeout: the TCP connect and the TLS handshake (a bare number is seconds)
    #[arg(long = "connect-timeout", value_name = "DURATION", default_value = units::show_duration(defaults::CONNECT_TIMEOUT), value_parser = units::seconds, help_heading = NETWORK)]
    pub connect_timeout: Duration,

    /// Timeout of each read (a bare number is seconds)
    #[arg(long = "read-timeout", value_name = "DURATION", default_value = units::show_duration(defaults::READ_TIMEOUT), value_parser = units::seconds, help_heading = NETWORK)]
    pub read_timeout: Duration,

    /// Attempts per URL: network errors, and 429 or 503 answers with a Retry-After
    #[arg(long = "max-tries", alias = "max_tries", value_name = "N", default_value_t = defaults::MAX_TRIES, help_heading = NETWORK)]
    pub max_tries: u32,

    /// Longest Retry-After honoured (a bare number is seconds; 0 honours none)
    ///
    /// A 429 or 503 that asks to come back within it is not recorded: the
    /// page is queued again and its host waits that long (the attempts
    /// count in --max-tries). A longer wait, or none given, is recorded as
    /// the answer it is.
    #[arg(long = "max-retry-after", value_name = "DURATION", default_value = units::show_duration(defaults::MAX_RETRY_AFTER), value_parser = units::seconds, help_heading = POLITENESS)]
    pub max_retry_after: Duration,

    /// Pin HOST:PORT to ADDR, as curl's --resolve (repeatable; * for any host)
    ///
    /// Several addresses (ADDR,ADDR,...) are tried as Happy Eyeballs does;
    /// an IPv6 ADDR may be in brackets. A HOST of * pins every name on
    /// PORT that has no pin of its own.
    #[arg(long, value_name = "HOST:PORT:ADDR", help_heading = NETWORK)]
    pub resolve: Vec<String>,

    /// Ask this DNS server (UDP, then TCP) instead of those of /etc/resolv.conf (repeatable: tried in order)
    #[arg(long = "dns-server", value_name = "ADDR[:PORT]", help_heading = NETWORK)]
    pub dns_server: Vec<String>,

    /// Resolve and connect over IPv4 only
    #[arg(short = '4', long = "ipv4", conflicts_with = "ipv6", help_heading = NETWORK)]
    pub ipv4: bool,

    /// Resolve and connect over IPv6 only
    #[arg(short = '6', long = "ipv6", help_heading = NETWORK)]
    pub ipv6: bool,

    /// One connection per request (Connection: close) instead of reusing those servers keep alive
    #[arg(long = "no-keep-alive", help_heading = NETWORK)]
    pub no_keep_alive: bool,

    /// Ask for uncompressed bodies (Accept-Encoding: identity)
    ///
    /// Bodies a server compresses anyway are still decoded.
    #[arg(long = "no-compression", help_heading = NETWORK)]
    pub no_compression: bool,

    /// Add this header to every request (repeatable), e.g. -H 'Accept-Language: fr'
    ///
    /// Sent to every host, redirects included (credentials for one host
    /// go with --auth). An Accept replaces the crawler's Accept: */*.
    /// Refused: the headers the crawler writes itself (Host, Connection,
    /// Content-Length, Transfer-Encoding and the other hop-by-hop ones,
    /// User-Agent: see --user-agent, Accept-Encoding: see
    /// --no-compression).
    #[arg(short = 'H', long, value_name = "'NAME: VALUE'", help_heading = NETWORK)]
    pub header: Vec<String>,

    /// HTTP Basic credentials for one host (repeatable): HOST[:PORT]:USER:PASSWORD
    ///
    /// Sent only to URLs of HOST (on PORT, if given), never to another
    /// host, a redirect's target included. The password may hold ':';
    /// an IPv6 HOST is in brackets. The WARC request records keep the
    /// Authorization header as it was sent, and a crawl with --state
    /// keeps its flags (this one too) in the state directory.
    #[arg(long, value_name = "HOST[:PORT]:USER:PASSWORD", help_heading = NETWORK)]
    pub auth: Vec<String>,

    /// Fetch through this proxy (repeatable: hosts spread over them)
    ///
    /// http://[USER:PASSWORD@]HOST[:PORT] (CONNECT for https),
    /// socks5://... (names resolved here) or socks5h://... (by the proxy);
    /// no scheme is http://, no port 1080. Each host keeps its proxy while
    /// it works; one that fails 3 times in a row is passed over for a
    /// while. Without --proxy, http_proxy, https_proxy (or HTTPS_PROXY)
    /// and all_proxy (or ALL_PROXY) are read as curl does, except with
    /// --demo. Failures of the proxy are the error kinds proxy_connect,
    /// proxy_auth and proxy_refused, never counted against the host.
    #[arg(long, value_name = "URL", help_heading = NETWORK)]
    pub proxy: Vec<String>,

    /// Hosts that go direct although a proxy is set, e.g. 'localhost,.internal,10.0.0.0/8'
    ///
    /// curl's rules: names (each with the names under it), addresses and
    /// ranges, separated by commas or spaces; '*' for every host. Without
    /// it, no_proxy (or NO_PROXY) is read.
    #[arg(long = "no-proxy", value_name = "LIST", help_heading = NETWORK)]
    pub no_proxy: Option<String>,

    /// Keep cookies, starting with those of this Netscape cookies.txt file (curl's and wget's format)
    ///
    /// Off by default. What servers set is sent back by RFC 6265's rules
    /// (domain, path, Secure, expiry), never to another site; a Domain
    /// that is a public suffix is refused; at most 50 a domain, 4 KiB a
    /// cookie, and what fits in --cookie-memory. An empty file starts an
    /// empty jar.
    #[arg(long, value_name = "FILE", help_heading = NETWORK)]
    pub cookies: Option<PathBuf>,

    /// Keep cookies and write them to this file (Netscape format) when the crawl ends
    #[arg(long = "save-cookies", value_name = "FILE", help_heading = NETWORK)]
    pub save_cookies: Option<PathBuf>,

    /// RAM for the cookie jar (with --cookies or --save-cookies); past it, new cookies are refused until expired ones are swept
    ///
    /// Each cookie counts as its name, value, domain and path plus some
    /// 400 bytes of the jar's own. Cookies refused are counted and said
    /// when the crawl ends; a --cookies file larger than this is refused.
    #[arg(long = "cookie-memory", value_name = "SIZE", default_value = units::show_size(defaults::COOKIE_MEMORY as u64), value_parser = units::nonzero_size, help_heading = LIMITS)]
    pub cookie_memory: u64,

    /// Trust the CA certificates in this PEM file for https too (repeatable)
    ///
    /// The compiled-in Mozilla roots stay trusted.
    #[arg(long = "ca-cert", value_name = "FILE", help_heading = NETWORK)]
    pub ca_cert: Vec<PathBuf>,

    /// Fetch https pages even when their certificate fails verification
    ///
    /// The failure is a warning on each page's record
    /// (tls_certificate_untrusted), not an error.
    #[arg(long, help_heading = NETWORK)]
    pub insecure: bool,

    // Limits and budgets
    /// Shards (cores) to run [default: every CPU in the process's affinity mask]
    #[arg(long, value_name = "N", help_heading = LIMITS)]
    pub cores: Option<usize>,

    /// Concurrent fetches across all cores
    #[arg(long = "max-tasks", alias = "max_tasks", value_name = "N", default_value_t = defaults::MAX_TASKS, help_heading = LIMITS)]
    pub max_tasks: usize,

    /// Body bytes kept per response (512K, 16M, 1G); larger bodies are cut (truncated_by: limit)
    #[arg(long = "max-body", value_name = "SIZE", default_value = units::show_size(defaults::MAX_BODY as u64), value_parser = units::size, help_heading = LIMITS)]
    pub max_body: u64,

    /// Download only bodies of these media types (repeatable, comma-separated), e.g. 'text/*,image/png'
    ///
    /// An answer of another type is recorded with its head and cut at 0
    /// bytes (truncated_by: limit). HTML is always read, for its links;
    /// robots.txt and sitemaps are read whole. A type is type/subtype,
    /// type/* or */*; no Content-Type counts as application/octet-stream.
    #[arg(long = "accept-type", value_name = "TYPE[,TYPE...]", help_heading = LIMITS)]
    pub accept_type: Vec<String>,

    /// Do not download bodies of these media types (repeatable, comma-separated), e.g. 'video/*,application/pdf'
    ///
    /// An answer of one is recorded with its head and cut at 0 bytes. HTML
    /// is always read.
    #[arg(long = "reject-type", value_name = "TYPE[,TYPE...]", help_heading = LIMITS)]
    pub reject_type: Vec<String>,

    /// Body bytes kept for a media type (repeatable, comma-separated), e.g. 'image/*=1M,text/html=4M'
    ///
    /// Within --max-body; the first TYPE that matches wins.
    #[arg(long = "max-size-per-type", value_name = "TYPE=SIZE[,...]", help_heading = LIMITS)]
    pub max_size_per_type: Vec<String>,

    /// URLs longer than this many bytes are not queued
    #[arg(
        long = "max-url-length",
        alias = "max_url_length",
        value_name = "N",
        default_value_t = defaults::MAX_URL_LENGTH,
        help_heading = LIMITS
    )]
    pub max_url_length: usize,

    /// URLs queued per host at most (a bound on crawler traps)
    #[arg(
        long = "max-pages-per-host",
        alias = "max_pages_per_host",
        value_name = "N",
        default_value_t = defaults::MAX_PAGES_PER_HOST,
        help_heading = LIMITS
    )]
    pub max_pages_per_host: usize,

    /// RAM for queued URLs, over all cores; past it, each host's newest URLs go to disk (with --cluster, an eighth of it holds the URLs read from the streams and not yet done)
    #[arg(long = "frontier-memory", value_name = "SIZE", default_value = units::show_size(defaults::FRONTIER_MEMORY as u64), value_parser = units::nonzero_size, help_heading = LIMITS)]
    pub frontier_memory: u64,

    /// RAM for the hosts' own state (names, politeness, robots.txt rules), over all cores; past it, finished hosts are forgotten and new hosts wait, their URLs on disk
    #[arg(long = "host-memory", value_name = "SIZE", default_value = units::show_size(defaults::HOST_MEMORY as u64), value_parser = units::nonzero_size, help_heading = LIMITS)]
    pub host_memory: u64,

    /// RAM for the seen-set's buckets; URLs past it are kept on disk
    #[arg(long = "seen-memory", value_name = "SIZE", default_value = units::show_size(defaults::SEEN_MEMORY as u64), value_parser = units::nonzero_size, help_heading = LIMITS)]
    pub seen_memory: u64,

    /// Directory for what does not fit in RAM: queued URLs past --frontier-memory, the seen-set's runs past --seen-memory [default: $TMPDIR or /tmp]
    ///
    /// The crawl makes a folder of its own in it (made if missing),
    /// removed at its end; a killed crawl's is removed by the next crawl
    /// that uses the same directory. With --state the state directory is
    /// used instead.
    #[arg(long = "spill-dir", value_name = "DIR", help_heading = LIMITS)]
    pub spill_dir: Option<PathBuf>,

    /// Stop after N page fetches (robots.txt not counted)
    ///
    /// Running fetches finish, the rest stays queued.
    #[arg(long = "max-pages", value_name = "N", help_heading = LIMITS)]
    pub max_pages: Option<u64>,

    /// Stop once SIZE body bytes were received
    #[arg(long = "max-bytes", value_name = "SIZE", value_parser = units::nonzero_size, help_heading = LIMITS)]
    pub max_bytes: Option<u64>,

    /// Stop starting fetches this long after the start (a bare number is seconds)
    #[arg(long = "max-time", value_name = "DURATION", value_parser = units::seconds, help_heading = LIMITS)]
    pub max_time: Option<Duration>,

    /// Stop cleanly when a file system the crawl writes to has less than SIZE free (exit code 3)
    ///
    /// Checked once a second where the records, WARC files, index, WACZ,
    /// state directory and spill directory are. The running fetches
    /// finish, the rest stays queued: with --state, free some space and
    /// --resume.
    #[arg(long = "min-free-disk", value_name = "SIZE", value_parser = units::size, help_heading = LIMITS)]
    pub min_free_disk: Option<u64>,

    // Output and archives
    /// Write one JSON record per URL to FILE (- for stdout)
    #[arg(long, short = 'o', value_name = "FILE", help_heading = OUTPUT)]
    pub output: Option<String>,

    /// Also write the end report as JSON to FILE
    #[arg(long = "report-json", value_name = "FILE", help_heading = OUTPUT)]
    pub report_json: Option<PathBuf>,

    /// Save each page (2xx, decoded) as a file under DIR, laid out as wget -x -P DIR: DIR/HOST[:PORT]/PATH, index.html for a path ending in /
    #[arg(long, value_name = "DIR", help_heading = OUTPUT)]
    pub save: Option<PathBuf>,

    /// Archive every exchange as WARC 1.1 in DIR (one file per shard)
    #[arg(long, value_name = "DIR", help_heading = OUTPUT)]
    pub warc: Option<PathBuf>,

    /// Rotate WARC files at this size
    #[arg(long = "warc-max-size", value_name = "SIZE", default_value = units::show_size(defaults::WARC_MAX_SIZE), value_parser = units::nonzero_size, help_heading = OUTPUT)]
    pub warc_max_size: u64,

    /// With --warc: archive a payload seen before as a revisit record
    ///
    /// Referring to its first copy (profile identical-payload-digest).
    #[arg(long = "warc-dedup", requires = "warc", help_heading = OUTPUT)]
    pub warc_dedup: bool,

    /// With --warc: archive each host's DNS answer as a resource record
    ///
    /// A dns: URI, as Heritrix does.
    #[arg(long = "warc-dns", requires = "warc", help_heading = OUTPUT)]
    pub warc_dns: bool,

    /// With --warc: write a CDXJ index of the WARC records to FILE as they are written
    ///
    /// cdxj-indexer's fields; unsorted.
    #[arg(long, value_name = "FILE", requires = "warc", help_heading = OUTPUT)]
    pub cdxj: Option<PathBuf>,

    /// With --warc: when the crawl is over, package it as a WACZ 1.1.1 file
    ///
    /// The WARC files, their CDXJ index (sorted) and the list of HTML
    /// pages, written to FILE.tmp and renamed when whole; replayable in
    /// ReplayWeb.page.
    #[arg(long, value_name = "FILE", requires = "warc", help_heading = OUTPUT)]
    pub wacz: Option<PathBuf>,

    // State and resume
    /// Keep the crawl's state in DIR so that --resume DIR can go on after a stop, a spent budget or a kill
    ///
    /// DIR is made if missing; records go to -o FILE, else
    /// DIR/records.jsonl.
    #[arg(long, value_name = "DIR", help_heading = STATE)]
    pub state: Option<PathBuf>,

    /// Go on with the crawl kept in DIR (no roots or outputs: the crawl's own)
    ///
    /// Its flags apply again, then those given here (a larger budget,
    /// other memory settings); -o, --warc and --cdxj may only repeat the
    /// crawl's, and --state is refused.
    #[arg(long, value_name = "DIR", help_heading = STATE)]
    pub resume: Option<PathBuf>,

    /// With --resume: drop damaged lines of the log or the index and damaged journal chunks instead of stopping
    ///
    /// A resume cuts a tail torn by a kill on its own. Damage before the
    /// end (a bad disk block, an edit) stops it with exit code 2, naming
    /// the file and the line or byte, and changes nothing; with this flag
    /// the damaged records and index lines are dropped (their pages are
    /// fetched again) and the URLs of a damaged journal chunk are lost.
    #[arg(long = "resume-discard-damaged", requires = "resume", help_heading = STATE)]
    pub resume_discard_damaged: bool,

    /// Time between checkpoints of a crawl with --state (a bare number is seconds)
    #[arg(
        long = "checkpoint-interval",
        value_name = "DURATION",
        default_value = units::show_duration(defaults::CHECKPOINT_INTERVAL),
        value_parser = units::seconds,
        help_heading = STATE
    )]
    pub checkpoint_interval: Duration,

    /// With --state: compact the journals within a run once this many bytes of them are not covered by a base (and more than twice the last bases); for tests, which make small crawls compact [default: 64 MiB]
    #[arg(long = "compact-in-run-after", value_name = "BYTES", hide = true, help_heading = STATE)]
    pub compact_in_run_after: Option<u64>,

    // Cluster
    /// Crawl as one node of a crawl on many machines sharing this Redis server (redis://HOST:PORT/); with --crawl
    #[arg(long, value_name = "URL", requires = "crawl", help_heading = CLUSTER)]
    pub cluster: Option<String>,

    /// With --cluster: the Redis password, read from FILE's first line, so it is not on the command line for `ps` to show [default: $RINGCRAWL_CLUSTER_PASSWORD, when the URL has none]
    #[arg(long = "cluster-password-file", value_name = "FILE", requires = "cluster", help_heading = CLUSTER)]
    pub cluster_password_file: Option<PathBuf>,

    /// With --cluster: the crawl to make or join
    ///
    /// Nodes that give the same name crawl together; roots given to any
    /// node are added to it.
    #[arg(long, value_name = "NAME", requires = "cluster", help_heading = CLUSTER)]
    pub crawl: Option<String>,

    /// With --cluster: this node's name, unique among the crawl's live nodes [default: HOSTNAME-PID]
    ///
    /// Its output files are named after it.
    #[arg(long, value_name = "NAME", requires = "cluster", help_heading = CLUSTER)]
    pub node: Option<String>,

    #[arg(
        long,
        value_name = "N",
        requires = "cluster",
        help = format!("With --cluster: host partitions of a crawl this node makes (fixed when it is made) [default: {}]", defaults::PARTITIONS),
        help_heading = CLUSTER
    )]
    pub partitions: Option<u32>,

    /// With --cluster: how long a node's lease on a partition lasts without renewal (a bare number is seconds)
    ///
    /// A node that dies or is cut off loses its partitions after this
    /// long.
    #[arg(
        long = "lease-ttl",
        value_name = "DURATION",
        requires = "cluster",
        default_value = units::show_duration(defaults::LEASE_TTL),
        value_parser = units::seconds,
        help_heading = CLUSTER
    )]
    pub lease_ttl: Duration,

    // Logging
    /// More output (-v: a line per URL, [shard N] first; -vv: retries too, and more per URL)
    #[arg(short, long, action = clap::ArgAction::Count, help_heading = LOGGING)]
    pub verbose: u8,

    /// Less output (-q: no progress line, no report)
    #[arg(short, long, action = clap::ArgAction::Count, help_heading = LOGGING)]
    pub quiet: u8,

    /// Time between progress lines when stderr is not a terminal (a bare number is seconds)
    #[arg(long = "progress-interval", value_name = "DURATION", default_value = "5s", value_parser = units::seconds, help_heading = LOGGING)]
    pub progress_interval: Duration,

    /// Serve the crawl's live numbers over HTTP at ADDR (IP:PORT; port 0: any free one): a live page at /, /status.json, /metrics for Prometheus [default: off]
    ///
    /// Binds exactly ADDR: 127.0.0.1:9898 or [::1]:9898 for this machine
    /// only; an address others reach only when you name one (there is no
    /// authentication). The address bound is printed on stderr. See
    /// docs/status.md.
    #[arg(long = "status-addr", value_name = "ADDR", help_heading = LOGGING)]
    pub status_addr: Option<std::net::SocketAddr>,

    /// With --status-addr: keep serving the final numbers this long after the crawl ends, so a scraper gets them (Ctrl-C ends it early)
    #[arg(long = "status-linger", value_name = "DURATION", default_value = "0s", value_parser = units::seconds, requires = "status_addr", help_heading = LOGGING)]
    pub status_linger: Duration,
}

/// What `ringcrawl` does instead of a crawl (a root of the same name is
/// written `http://NAME/`, or after `--`).
#[derive(Debug, Subcommand)]
pub enum Command {
    /// A crawl on many machines: show what it is doing
    Cluster {
        #[command(subcommand)]
        command: ClusterCommand,
    },
    /// Print a completion script for SHELL (e.g. ringcrawl completions bash > /etc/bash_completion.d/ringcrawl)
    Completions {
        #[arg(value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// Print the man page (e.g. ringcrawl man > ringcrawl.1; man ./ringcrawl.1)
    Man,
    /// Write one self-contained HTML report of a finished crawl from its records (e.g. ringcrawl report pages.jsonl -o report.html)
    Report(ReportArgs),
}

/// `ringcrawl report`'s arguments.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The crawl's records (-o's JSON lines; a cluster's: every node's file; - is standard input)
    #[arg(value_name = "RECORDS.jsonl", required = true)]
    pub files: Vec<std::path::PathBuf>,

    /// The HTML file to write
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: std::path::PathBuf,
}

/// `ringcrawl cluster ...`.
#[derive(Debug, Subcommand)]
pub enum ClusterCommand {
    /// Show a cluster crawl: its nodes, partitions, backlog and records
    Status(StatusArgs),
}

/// `ringcrawl cluster status`'s flags.
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// The crawl's Redis server (redis://HOST:PORT/)
    #[arg(long, value_name = "URL")]
    pub cluster: String,

    /// The Redis password, read from FILE's first line [default: $RINGCRAWL_CLUSTER_PASSWORD, when the URL has none]
    #[arg(long = "cluster-password-file", value_name = "FILE")]
    pub cluster_password_file: Option<PathBuf>,

    /// The crawl's name
    #[arg(long, value_name = "NAME")]
    pub crawl: String,

    /// Print JSON instead of a table
    #[arg(long, conflicts_with = "serve")]
    pub json: bool,

    /// Serve the crawl's numbers at ADDR (HOST:PORT; port 0 picks one, printed on stderr) instead of printing them once: a live page at /, /status.json, Prometheus /metrics; read from Redis each second until Ctrl-C or SIGTERM. docs/status.md
    #[arg(long, value_name = "ADDR")]
    pub serve: Option<std::net::SocketAddr>,
}
