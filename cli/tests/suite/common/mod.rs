//! Shared helpers for the integration tests: small scripted sites on
//! 127.0.0.1:0 and a crawl runner that keeps every record, through the
//! public builder.

#![allow(dead_code)]

pub mod held;
pub mod hosts;
pub mod nginx;
pub mod openssl;
pub mod proxy;
pub mod pywb;
pub mod scratch;
pub mod squid;
pub mod synth;
pub mod warcio;

// The real tools shared with the library's unit tests (crates/testkit):
// how a tool is found or skipped, redis-server, dnsmasq, DNS messages by
// hand, and a WARC reader of the tests' own.
pub use ringcrawl_testkit::{dns, dnsmasq, redis, tools, warc};

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use ringcrawl::{Crawler, CrawlerBuilder, Interrupt, Record, Report, Spent, Summary};
use ringcrawl_site::server::{Reply, Request, Server};

/// An HTML page linking to `links`.
pub fn page(links: &[&str]) -> Reply {
    let body: String = links
        .iter()
        .map(|l| format!("<a href=\"{l}\">{l}</a>\n"))
        .collect();
    html(&format!("<!doctype html><html><body>{body}</body></html>"))
}

pub fn html(body: &str) -> Reply {
    Reply::Http {
        status: 200,
        headers: vec![("Content-Type".into(), "text/html; charset=utf-8".into())],
        body: body.as_bytes().to_vec(),
    }
}

pub fn redirect(status: u16, location: &str) -> Reply {
    Reply::Http {
        status,
        headers: vec![("Location".into(), location.into())],
        body: Vec::new(),
    }
}

pub fn status(code: u16) -> Reply {
    Reply::Http {
        status: code,
        headers: vec![("Content-Type".into(), "text/html".into())],
        body: format!("<html><body>{code} <a href=\"/from-error-page\">x</a></body></html>")
            .into_bytes(),
    }
}

/// A server answering from a routing function; unknown paths get 404.
pub fn serve(route: impl Fn(&Request) -> Option<Reply> + Send + Sync + 'static) -> Server {
    Server::start(Arc::new(move |req: &Request| {
        route(req).unwrap_or_else(|| status(404))
    }))
    .expect("test server starts")
}

/// A server with a fixed path → reply table.
/// A canned reply for one path.
pub type Route = fn() -> Reply;

pub fn site(table: &[(&str, Route)]) -> Server {
    let table: BTreeMap<String, Route> = table.iter().map(|(p, r)| (p.to_string(), *r)).collect();
    serve(move |req| table.get(&req.path).map(|reply| reply()))
}

/// The settings of a crawl of `roots` with test-friendly timeouts and
/// records kept: two cores, 16 fetches at once and 16 a host, robots.txt
/// and sitemaps off (each test counts the URLs its site has: no guessed
/// /sitemap.xml; tests/suite/sitemaps.rs turns sitemaps on).
pub fn settings<S: AsRef<str>>(roots: &[S]) -> CrawlerBuilder {
    Crawler::builder()
        .roots(roots.iter().map(|r| r.as_ref().to_string()))
        .keep_records(true)
        .cores(2)
        .max_tasks(16)
        .per_host(16)
        .obey_robots(false)
        .sitemaps(false)
        .connect_timeout(Duration::from_secs(2))
        .read_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(10))
}

/// What a test checks of a crawl: its records, the numbers of its report,
/// and how it ended.
#[derive(Debug)]
pub struct Outcome {
    /// Every record, in no particular order.
    pub records: Vec<Record>,
    pub stats: Summary,
    pub elapsed: Duration,
    /// Ended before work ran out (an interrupt, a shard that died, an
    /// output that failed).
    pub aborted: bool,
    pub interrupted: bool,
    /// The budget that stopped the crawl, if one did.
    pub spent: Option<Spent>,
    pub output_error: Option<String>,
}

impl From<Report> for Outcome {
    fn from(report: Report) -> Self {
        Outcome {
            records: report.records().to_vec(),
            stats: report.summary(),
            elapsed: report.elapsed(),
            aborted: report.aborted(),
            interrupted: report.interrupted(),
            spent: report.budget_spent(),
            output_error: report.output_error().map(str::to_string),
        }
    }
}

/// A crawl still running after this long has hung: it is interrupted and
/// the test fails, instead of hanging the suite.
pub const HANG_LIMIT: Duration = Duration::from_secs(120);

/// Run a crawl that must end by running out of work (within [`HANG_LIMIT`]).
pub fn crawl(settings: CrawlerBuilder) -> Outcome {
    ran_out_of_work(crawl_to_its_end(settings))
}

/// `outcome`, checked to be of a crawl that ran out of work.
pub fn ran_out_of_work(outcome: Outcome) -> Outcome {
    assert!(!outcome.aborted, "crawl must end by running out of work");
    assert_eq!(
        outcome.records.len() as u64,
        outcome.stats.urls,
        "one record per URL"
    );
    outcome
}

/// Run a crawl that must end, by running out of work or by stopping
/// itself (within [`HANG_LIMIT`]).
pub fn crawl_to_its_end(settings: CrawlerBuilder) -> Outcome {
    run_to_its_end(settings.build().expect("valid settings"))
}

/// [`crawl_to_its_end`] of a crawler built already (a test that changes
/// the world between the builder's checks and the crawl).
pub fn run_to_its_end(crawler: Crawler) -> Outcome {
    within_hang_limit(crawler.interrupt_handle(), || {
        ringcrawl::process::prepare();
        crawler.run().expect("crawl runs").into()
    })
}

/// Run `crawl`, interrupting it through `interrupt` if it has not
/// returned after [`HANG_LIMIT`] (and then failing the test).
pub fn within_hang_limit<T>(interrupt: Interrupt, crawl: impl FnOnce() -> T) -> T {
    let (returned, finished) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        // Disconnected: the crawl returned; Timeout: it did not.
        let hung = matches!(
            finished.recv_timeout(HANG_LIMIT),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout)
        );
        if hung {
            interrupt.interrupt();
        }
        hung
    });
    let outcome = crawl();
    drop(returned);
    let hung = watchdog.join().unwrap();
    assert!(!hung, "crawl hung: interrupted after {HANG_LIMIT:?}");
    outcome
}

/// Records by URL; panics if a URL was recorded twice.
pub fn by_url(outcome: &Outcome) -> BTreeMap<String, Record> {
    let mut map = BTreeMap::new();
    for r in &outcome.records {
        assert!(
            map.insert(r.url.clone(), r.clone()).is_none(),
            "{} recorded twice",
            r.url
        );
    }
    map
}

pub fn urls_of(outcome: &Outcome) -> BTreeSet<String> {
    by_url(outcome).into_keys().collect()
}

pub fn base(server: &Server) -> String {
    format!("http://{}", server.addr())
}

/// The records of a JSON Lines file (`-o`), in order, each with its URL
/// less `origin` at its front (`/a.html` for `http://host:port/a.html`).
pub fn records_at(path: &std::path::Path, origin: &str) -> Vec<(String, serde_json::Value)> {
    whole_lines(path)
        .lines()
        .map(|line| {
            let record: serde_json::Value = serde_json::from_str(line).expect("a JSON record");
            let url = record["url"].as_str().expect("a record's url");
            (url.trim_start_matches(origin).to_string(), record)
        })
        .collect()
}

/// A JSONL file's whole lines: up to its last newline, so a line a
/// `kill -9` tore mid-write (not a record) is left out. Empty if missing.
pub fn whole_lines(path: &std::path::Path) -> String {
    let mut bytes = std::fs::read(path).unwrap_or_default();
    bytes.truncate(bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1));
    String::from_utf8(bytes).expect("whole lines are UTF-8")
}
