//! Command-line flags (clap derive), turned into the library's
//! [`CrawlerBuilder`]: the command line has no crawl path of its own.
//!
//! The flags are the chapter's (`--max-redirect`, `--max-tries`,
//! `--max-tasks`, `--exclude`, `--strict`/`--lenient`, `-v`/`-q`, with the
//! chapter's underscore spellings accepted too) plus what a crawler on a
//! modern machine needs. Nothing here starts a thread or opens a socket.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use thiserror::Error;

use ringcrawl::{BuildError, Crawler, CrawlerBuilder, Families, ScopeMode};

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

    /// Overall deadline per fetch, in seconds
    #[arg(long, default_value_t = 60.0)]
    pub timeout: f64,

    /// Connect timeout (the TCP connect and the TLS handshake), in seconds
    #[arg(long = "connect-timeout", default_value_t = 10.0)]
    pub connect_timeout: f64,

    /// Timeout of each read, in seconds
    #[arg(long = "read-timeout", default_value_t = 30.0)]
    pub read_timeout: f64,

    /// Body bytes kept per response (larger bodies are cut and marked truncated)
    #[arg(long = "max-body", default_value_t = 16 << 20)]
    pub max_body: usize,

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

    /// Milliseconds between two request starts to one host
    #[arg(long, value_name = "MS", default_value_t = 0)]
    pub delay: u64,

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

    /// Cap on a robots.txt Crawl-delay, in seconds
    #[arg(long = "max-crawl-delay", default_value_t = 10.0)]
    pub max_crawl_delay: f64,

    /// Seconds to wait before each new try of a robots.txt that was
    /// unreachable or 5xx (its pages wait meanwhile); when used up, the
    /// origin's pages are refused. "none" gives up at the first failure
    #[arg(
        long = "robots-retries",
        value_name = "SECONDS,...",
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
    #[arg(long = "frontier-memory", value_name = "SIZE", default_value = "256M", value_parser = parse_size)]
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
    #[arg(long = "warc-max-size", default_value = "1G", value_parser = parse_size)]
    pub warc_max_size: u64,

    /// RAM for the seen-set's buckets (K, M, G suffixes); URLs past it are
    /// kept on disk
    #[arg(long = "seen-memory", value_name = "SIZE", default_value = "128M", value_parser = parse_size)]
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

    /// With --cluster: seconds a node's lease on a partition lasts without
    /// renewal; a node that dies or is cut off loses its partitions after
    /// this long
    #[arg(
        long = "lease-ttl",
        value_name = "S",
        requires = "cluster",
        default_value_t = 10.0
    )]
    pub lease_ttl: f64,

    /// Seconds between checkpoints of a crawl with --state
    #[arg(
        long = "checkpoint-interval",
        value_name = "SECS",
        default_value_t = 60.0
    )]
    pub checkpoint_interval: f64,

    /// Stop after N page fetches (robots.txt not counted): running fetches
    /// finish, the rest stays queued
    #[arg(long = "max-pages", value_name = "N")]
    pub max_pages: Option<u64>,

    /// Stop once SIZE body bytes were received (K, M, G suffixes)
    #[arg(long = "max-bytes", value_name = "SIZE", value_parser = parse_size)]
    pub max_bytes: Option<u64>,

    /// Stop starting fetches S seconds after the start
    #[arg(long = "max-time", value_name = "S")]
    pub max_time: Option<f64>,

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

    /// Seconds between progress lines when stderr is not a terminal
    #[arg(long = "progress-interval", default_value_t = 5.0)]
    pub progress_interval: f64,

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

/// A flag whose value cannot be used; the message is one line for the user.
#[derive(Debug, Error)]
pub enum ArgsError {
    #[error("no roots given (pass at least one URL, or --demo)")]
    NoRoots,
    #[error("--robots-retries {0:?}: expected SECONDS,... or none")]
    Retries(String),
    #[error("--resolve {0:?}: expected HOST:PORT:ADDR[,ADDR...]")]
    Resolve(String),
    #[error("--dns-server {0:?}: expected an IP address, optionally with :PORT")]
    DnsServer(String),
    #[error("--{0}: {1} is not a number of seconds")]
    Seconds(&'static str, f64),
    /// A value the crawl's builder refused (the root's own message, or the
    /// flag named after the setting).
    #[error("{}", build_message(.0))]
    Build(#[from] BuildError),
}

fn build_message(e: &BuildError) -> String {
    match e.setting {
        "root" => e.problem.clone(),
        flag => format!("--{flag}: {}", e.problem),
    }
}

impl Args {
    /// The crawl these flags ask for, through the library's builder (the
    /// same path a library user takes). `extra_roots` come from elsewhere
    /// (the demo's in-process site). Values are checked by
    /// [`CrawlerBuilder::build`]; only what is the command line's own
    /// (syntax of `--resolve`, seconds as numbers) is checked here.
    pub fn into_builder(self, extra_roots: &[String]) -> Result<CrawlerBuilder, ArgsError> {
        // A resumed crawl's roots are its manifest's.
        // So are a cluster crawl's (a node may join with none).
        if self.roots.is_empty()
            && self.seeds.is_empty()
            && extra_roots.is_empty()
            && self.resume.is_none()
            && self.cluster.is_none()
        {
            return Err(ArgsError::NoRoots);
        }
        let verbosity = self.verbosity();
        let mut b = Crawler::builder();
        for path in &self.seeds {
            b = match path.to_str() {
                Some("-") => b.seeds_stdin(),
                _ => b.seeds_file(path),
            };
        }
        let mut b = b
            .roots(self.roots.iter().chain(extra_roots).cloned())
            .scope(if self.lenient {
                ScopeMode::Lenient
            } else {
                ScopeMode::Strict
            })
            .pin_threads(true)
            .max_tasks(self.max_tasks)
            .max_tries(self.max_tries)
            .max_redirect(self.max_redirect)
            .ip_families(match (self.ipv4, self.ipv6) {
                (true, _) => Families::V4,
                (_, true) => Families::V6,
                _ => Families::Both,
            })
            .timeout(seconds("timeout", self.timeout)?)
            .connect_timeout(seconds("connect-timeout", self.connect_timeout)?)
            .read_timeout(seconds("read-timeout", self.read_timeout)?)
            .max_body(self.max_body)
            .max_depth(self.max_depth)
            .page_requisites(self.page_requisites)
            .delay(Duration::from_millis(self.delay))
            .keep_alive(!self.no_keep_alive)
            .compression(!self.no_compression)
            .insecure(self.insecure)
            .obey_robots(!self.ignore_robots)
            .max_crawl_delay(seconds("max-crawl-delay", self.max_crawl_delay)?)
            .robots_retries(parse_retries(&self.robots_retries)?)
            .max_url_length(self.max_url_length)
            .max_pages_per_host(self.max_pages_per_host)
            .warc_max_size(self.warc_max_size)
            .seen_memory(usize::try_from(self.seen_memory).unwrap_or(usize::MAX))
            .frontier_memory(usize::try_from(self.frontier_memory).unwrap_or(usize::MAX));
        if let Some(pages) = self.max_pages {
            b = b.max_pages(pages);
        }
        if let Some(bytes) = self.max_bytes {
            b = b.max_bytes(bytes);
        }
        if let Some(time) = self.max_time {
            b = b.max_time(seconds("max-time", time)?);
        }
        // --resume wins over the --state of the flags it applies again.
        match (&self.resume, &self.state) {
            (Some(dir), _) => b = b.resume(dir),
            (None, Some(dir)) => b = b.state(dir),
            (None, None) => {}
        }
        b = b.checkpoint_interval(seconds("checkpoint-interval", self.checkpoint_interval)?);
        if let (Some(url), Some(crawl)) = (&self.cluster, &self.crawl) {
            b = b
                .cluster(url, crawl)
                .lease_ttl(seconds("lease-ttl", self.lease_ttl)?);
            if let Some(node) = &self.node {
                b = b.node_name(node);
            }
            if let Some(n) = self.partitions {
                b = b.partitions(n);
            }
        }
        if let Some(regex) = self.exclude {
            b = b.exclude(regex);
        }
        if let Some(cores) = self.cores {
            b = b.cores(cores);
        }
        for ((host, port), addrs) in parse_resolves(&self.resolve)? {
            b = b.resolve(&host, port, addrs);
        }
        for text in &self.dns_server {
            b = b.dns_server(parse_dns_server(text)?);
        }
        if let Some(agent) = self.user_agent {
            b = b.user_agent(agent);
        }
        // The synthetic site has no sitemap, and the demo's check counts
        // every URL recorded: it reads none unless asked.
        b = b.sitemaps(!self.no_sitemaps && (self.sitemaps || self.demo.is_none()));
        match (self.per_host, self.demo) {
            (Some(n), _) => b = b.per_host(n),
            (None, Some(_)) => b = b.per_host(self.max_tasks),
            (None, None) => {}
        }
        for path in &self.ca_cert {
            b = b.ca_cert_file(path);
        }
        b = match self.output.as_deref() {
            None => b,
            Some("-") => b.jsonl_stdout(),
            Some(path) => b.jsonl(path),
        };
        if let Some(dir) = self.warc {
            b = b.warc(dir);
        }
        b = b.warc_dedup(self.warc_dedup).warc_dns(self.warc_dns);
        if let Some(path) = self.cdxj {
            b = b.cdxj(path);
        }
        if let Some(path) = self.wacz {
            b = b.wacz(path);
        }
        if verbosity >= 0 {
            b = b.progress(Some(seconds("progress-interval", self.progress_interval)?));
        }
        Ok(b)
    }

    /// -1 quiet, 0 normal, 1+ verbose.
    pub fn verbosity(&self) -> i8 {
        (self.verbose as i8).saturating_sub(self.quiet as i8)
    }
}

/// A number of seconds as a duration (whether it is in range is the
/// builder's to say).
fn seconds(flag: &'static str, value: f64) -> Result<Duration, ArgsError> {
    Duration::try_from_secs_f64(value).map_err(|_| ArgsError::Seconds(flag, value))
}

/// `SECONDS,...` or `none`.
fn parse_retries(list: &str) -> Result<Vec<Duration>, ArgsError> {
    if list.trim() == "none" {
        return Ok(Vec::new());
    }
    list.split(',')
        .map(|s| {
            let value: f64 = s
                .trim()
                .parse()
                .map_err(|_| ArgsError::Retries(list.to_string()))?;
            seconds("robots-retries", value)
        })
        .collect()
}

/// `HOST:PORT:ADDR[,ADDR...]`, an IPv6 ADDR possibly in brackets.
fn parse_resolves(specs: &[String]) -> Result<HashMap<(String, u16), Vec<IpAddr>>, ArgsError> {
    specs
        .iter()
        .map(|spec| {
            let bad = || ArgsError::Resolve(spec.clone());
            let (host, rest) = spec.split_once(':').ok_or_else(bad)?;
            let (port, addrs) = rest.split_once(':').ok_or_else(bad)?;
            let port: u16 = port.parse().map_err(|_| bad())?;
            let addrs = addrs
                .split(',')
                .map(|addr| {
                    let addr = addr.trim().trim_start_matches('[').trim_end_matches(']');
                    addr.parse::<IpAddr>().map_err(|_| bad())
                })
                .collect::<Result<Vec<_>, _>>()?;
            if host.trim_end_matches('.').is_empty() {
                return Err(bad());
            }
            Ok(((host.to_string(), port), addrs))
        })
        .collect()
}

/// `ADDR` (port 53) or `ADDR:PORT`, an IPv6 ADDR in brackets with a port.
fn parse_dns_server(text: &str) -> Result<SocketAddr, ArgsError> {
    text.parse::<SocketAddr>()
        .or_else(|_| text.parse::<IpAddr>().map(|ip| SocketAddr::new(ip, 53)))
        .map_err(|_| ArgsError::DnsServer(text.to_string()))
}

/// `1048576`, `512K`, `64M`, `1G` (powers of 1024).
fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let (digits, shift) = match text.char_indices().last() {
        Some((i, 'k' | 'K')) => (&text[..i], 10),
        Some((i, 'm' | 'M')) => (&text[..i], 20),
        Some((i, 'g' | 'G')) => (&text[..i], 30),
        _ => (text, 0),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{text:?} is not a size (e.g. 1G, 64M, 1048576)"))?;
    n.checked_mul(1 << shift)
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("{text:?} is out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(args: &[&str]) -> Result<ringcrawl::config::Config, ArgsError> {
        let argv = std::iter::once("ringcrawl").chain(args.iter().copied());
        let crawler = Args::try_parse_from(argv)
            .expect("flags parse")
            .into_builder(&[])?
            .build()?;
        Ok(crawler.config().clone())
    }

    #[test]
    fn chapter_defaults_apply() {
        let c = config(&["example.com"]).unwrap();
        assert_eq!(c.roots[0].as_str(), "http://example.com/");
        assert_eq!((c.max_redirect, c.max_tries, c.max_tasks), (10, 4, 100));
    }

    #[test]
    fn underscore_spellings_are_accepted() {
        let c = config(&[
            "--max_redirect",
            "3",
            "--max_tries=2",
            "--max_tasks",
            "7",
            "x.org",
        ])
        .unwrap();
        assert_eq!((c.max_redirect, c.max_tries, c.max_tasks), (3, 2, 7));
    }

    #[test]
    fn resolve_pins_host_and_port() {
        let c = config(&[
            "--resolve",
            "Site.Test:8080:127.0.0.2",
            "--resolve",
            "v6.test:80:[::1]",
            "--resolve",
            "both.test:80:[::1],127.0.0.1",
            "--resolve",
            "Dot.Test.:80:127.0.0.3",
            "site.test",
        ])
        .unwrap();
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(c.resolve[&("site.test".into(), 8080)], [ip("127.0.0.2")]);
        assert_eq!(c.resolve[&("v6.test".into(), 80)], [ip("::1")]);
        assert_eq!(
            c.resolve[&("both.test".into(), 80)],
            [ip("::1"), ip("127.0.0.1")]
        );
        assert_eq!(
            c.resolve[&("dot.test".into(), 80)],
            [ip("127.0.0.3")],
            "the host as URLs name it: no trailing dot"
        );
    }

    #[test]
    fn dns_servers_take_an_optional_port() {
        let c = config(&[
            "--dns-server",
            "127.0.0.1:5353",
            "--dns-server",
            "10.0.0.1",
            "--dns-server",
            "[::1]:53",
            "site.test",
        ])
        .unwrap();
        let want: Vec<SocketAddr> = ["127.0.0.1:5353", "10.0.0.1:53", "[::1]:53"]
            .iter()
            .map(|a| a.parse().unwrap())
            .collect();
        assert_eq!(c.dns_servers, want);
        assert!(matches!(
            config(&["--dns-server", "ns.example", "site.test"]),
            Err(ArgsError::DnsServer(_))
        ));
    }

    #[test]
    fn bad_inputs_are_one_line_errors() {
        for args in [
            vec!["--exclude", "(", "x.org"],
            vec!["--resolve", "nope", "x.org"],
            vec!["--max-tasks", "0", "x.org"],
            vec!["--timeout=-1", "x.org"],
            vec!["--timeout", "0", "x.org"],
            vec!["ftp://x.org/"],
            vec!["--ca-cert", "/nonexistent/ca.pem", "x.org"],
            vec![],
        ] {
            let err = config(&args).expect_err("must be rejected").to_string();
            assert!(!err.contains('\n'), "{args:?}: {err}");
        }
    }

    #[test]
    fn wacz_takes_a_file_and_needs_a_warc_directory() {
        let c = config(&["--warc", "/tmp/w", "--wacz", "/tmp/c.wacz", "x.org"]).unwrap();
        assert_eq!(c.wacz.as_deref(), Some(std::path::Path::new("/tmp/c.wacz")));
        assert_eq!(c.cdxj, None, "the index it needs is the crawl's business");
        let argv = ["ringcrawl", "--wacz", "/tmp/c.wacz", "x.org"];
        assert!(Args::try_parse_from(argv).is_err(), "--wacz without --warc");
    }

    /// Values that parse but would overflow a clock or a buffer later, in
    /// the middle of the crawl, are refused here.
    #[test]
    fn out_of_range_durations_and_sizes_are_refused() {
        let huge = u64::MAX.to_string();
        for args in [
            vec!["--timeout", "1e19"],
            vec!["--connect-timeout", "1e19"],
            vec!["--read-timeout", "1e19"],
            vec!["--max-crawl-delay", "1e19"],
            vec!["--progress-interval", "1e19"],
            vec!["--delay", &huge],
            vec!["--max-body", &huge],
            vec!["--max-url-length", &huge],
            vec!["--cores", "1000000"],
        ] {
            let argv: Vec<&str> = args.iter().copied().chain(["x.org"]).collect();
            let err = config(&argv).expect_err("must be rejected").to_string();
            assert!(!err.contains('\n'), "{args:?}: {err}");
        }
    }

    #[test]
    fn sizes_take_binary_suffixes() {
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("64m"), Ok(64 << 20));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(
            parse_size("0").is_err()
                && parse_size("x").is_err()
                && parse_size("99999999999G").is_err()
        );
    }

    #[test]
    fn sitemaps_are_read_by_default_but_in_the_demo_and_the_last_flag_wins() {
        assert!(config(&["x.org"]).unwrap().sitemaps);
        assert!(!config(&["--no-sitemaps", "x.org"]).unwrap().sitemaps);
        assert!(
            config(&["--no-sitemaps", "--sitemaps", "x.org"])
                .unwrap()
                .sitemaps
        );
        assert!(
            !config(&["--sitemaps", "--no-sitemaps", "x.org"])
                .unwrap()
                .sitemaps
        );
        let demo = |args: &[&str]| {
            let argv = ["ringcrawl", "--demo"]
                .into_iter()
                .chain(args.iter().copied());
            let args = Args::try_parse_from(argv).unwrap();
            let builder = args.into_builder(&["http://127.0.0.1:1/".into()]).unwrap();
            builder.build().unwrap().config().sitemaps
        };
        assert!(!demo(&[]));
        assert!(demo(&["--sitemaps"]));
    }

    #[test]
    fn lenient_and_strict_override_each_other() {
        let args = Args::try_parse_from(["ringcrawl", "--strict", "--lenient", "a.example.co.uk"])
            .unwrap();
        assert!(args.lenient && !args.strict);
    }
}
