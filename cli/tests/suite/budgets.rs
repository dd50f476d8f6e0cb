//! Crawl budgets: `--max-pages`, `--max-bytes`, `--max-time` and
//! `--min-free-disk` stop a crawl cleanly (no new fetch, the running ones
//! finish, the rest stays queued), on a site far larger than the budget.

use std::time::{Duration, Instant};

use crate::common::*;
use ringcrawl::Spent;
use ringcrawl_site::server::{Request, Server};

/// A site without end: page N links to pages 10N+1 ..= 10N+10, each page
/// about 1 KB.
fn endless_site() -> Server {
    serve(|req: &Request| {
        let n: u64 = match req.path.as_str() {
            "/" => 0,
            path => path.strip_prefix("/p")?.parse().ok()?,
        };
        let links: Vec<String> = (1..=10).map(|i| format!("/p{}", 10 * n + i)).collect();
        let links: Vec<&str> = links.iter().map(String::as_str).collect();
        let mut reply = page(&links);
        if let ringcrawl_site::server::Reply::Http { body, .. } = &mut reply {
            body.extend(std::iter::repeat_n(b' ', 1000));
        }
        Some(reply)
    })
}

#[test]
fn max_pages_stops_at_exactly_that_many_fetches_each_url_once() {
    let server = endless_site();
    let mut cfg = settings(&[base(&server)]);
    cfg = cfg.max_pages(1000);
    let outcome = crawl(cfg);
    assert_eq!(outcome.records.len(), 1000);
    assert_eq!(urls_of(&outcome).len(), 1000, "no URL twice");
    assert_eq!(server.total_hits(), 1000, "no fetch past the budget");
    assert!(outcome.records.iter().all(|r| r.status == Some(200)));
    assert_eq!(outcome.spent, Some(Spent::Pages));
    assert!(!outcome.aborted, "a budget is a clean stop");
    assert!(
        outcome.stats.queued_left > 1000,
        "the rest stays queued: {}",
        outcome.stats.queued_left
    );
}

#[test]
fn max_bytes_stops_new_fetches_once_passed() {
    let server = endless_site();
    let mut cfg = settings(&[base(&server)]);
    cfg = cfg.max_bytes(100_000);
    let outcome = crawl(cfg);
    let bytes: u64 = outcome.records.iter().map(|r| r.size).sum();
    assert!(bytes >= 100_000, "{bytes} bytes");
    // The fetches running when it was passed finish: at most max-tasks
    // (16) pages past it.
    let largest = outcome.records.iter().map(|r| r.size).max().unwrap_or(0);
    assert!(
        bytes < 100_000 + 16 * largest,
        "{bytes} bytes, pages up to {largest}"
    );
    assert_eq!(outcome.spent, Some(Spent::Bytes));
    assert!(!outcome.aborted);
}

#[test]
fn max_time_stops_starting_fetches_when_the_time_is_up() {
    let server = serve(|req: &Request| {
        let links: Vec<String> = (0..10).map(|i| format!("{}/{i}", req.path)).collect();
        let links: Vec<&str> = links.iter().map(|s| s.trim_start_matches("//")).collect();
        Some(page(&links).delayed(Duration::from_millis(50)))
    });
    let mut cfg = settings(&[base(&server)]);
    cfg = cfg.per_host(2);
    cfg = cfg.max_time(Duration::from_millis(500));
    let started = Instant::now();
    let outcome = crawl(cfg);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(3), "took {took:?}");
    assert_eq!(outcome.spent, Some(Spent::Time));
    assert!(
        outcome.records.iter().all(|r| r.status == Some(200)),
        "running fetches finished, none cut"
    );
    let n = outcome.records.len();
    // Two at a time, 50 ms each: about 20 in 500 ms.
    assert!((5..=40).contains(&n), "{n} records");
}

/// A nameserver that takes every question and never answers: the hosts
/// it is asked about wait for the resolver's time-outs (3 s a try), the
/// pinned host is crawled, and `--max-time` ends the crawl on time all
/// the same, the others' pages left queued.
#[test]
fn a_silent_nameserver_does_not_hold_the_crawl_past_max_time() {
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let server = serve(|_: &Request| Some(page(&[])));
    let port = server.addr().port();
    let mut roots = vec![format!("http://pinned.test:{port}/")];
    roots.extend((0..4).map(|i| format!("http://silent{i}.test:{port}/")));
    let mut cfg = settings(&roots);
    cfg = cfg.resolve(
        "pinned.test",
        port,
        vec![std::net::Ipv4Addr::LOCALHOST.into()],
    );
    cfg = cfg.dns_server(silent.local_addr().unwrap());
    cfg = cfg.max_time(Duration::from_millis(300));
    let started = Instant::now();
    let outcome = crawl(cfg);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(3), "took {took:?}");
    assert_eq!(outcome.spent, Some(Spent::Time));
    let records = by_url(&outcome);
    assert_eq!(
        records[&format!("http://pinned.test:{port}/")].status,
        Some(200)
    );
    // The silent hosts' pages never started: not recorded, still queued
    // (a resume fetches them), not fetched by their hosts' counts.
    assert_eq!(records.len(), 1, "{:?}", records.keys());
    assert_eq!(outcome.stats.queued_left, 4);
    drop(silent);
}

/// `--min-free-disk` more than any disk has: the crawl stops at once as at
/// a spent budget, with exit code 3 and its state kept; the resume, given
/// a bound the disk meets, finishes the site with each URL once.
#[test]
fn too_little_free_disk_stops_the_crawl_with_code_3_and_the_resume_finishes_it() {
    use crate::cli::ringcrawl;
    use crate::common::synth::Site;
    let site = Site::new(300, 2);
    let dir = std::env::temp_dir().join(format!("ringcrawl-disk-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let state = dir.join("state");
    let mut args: Vec<String> = site.roots();
    args.extend(site.resolve_args());
    let state_arg = state.to_str().unwrap().to_string();
    args.extend(
        [
            "--ignore-robots",
            "--no-sitemaps",
            "-q",
            "--state",
            &state_arg,
        ]
        .map(String::from),
    );
    args.extend(["--min-free-disk".into(), "100000T".into()]);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let first = ringcrawl(&argv);
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert_eq!(first.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("--min-free-disk"), "{stderr}");
    let log = state.join("records.jsonl");
    let before = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .count();
    assert!(before < site.expected().len(), "stopped early: {before}");

    let resume = ringcrawl(&["--resume", &state_arg, "--min-free-disk", "0", "-q"]);
    let stderr = String::from_utf8_lossy(&resume.stderr);
    assert_eq!(resume.status.code(), Some(0), "{stderr}");
    let records = std::fs::read_to_string(&log).unwrap();
    let mut urls: Vec<String> = records
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["url"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    urls.sort();
    let count = urls.len();
    urls.dedup();
    assert_eq!(urls.len(), count, "a URL recorded twice");
    let expected: Vec<String> = site.expected().into_iter().collect();
    assert_eq!(urls, expected);
    assert!(
        site.page_hits().values().all(|n| *n == 1),
        "a page fetched twice"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
