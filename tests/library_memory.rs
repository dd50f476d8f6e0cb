//! A slow consumer of a `PageStream` through the public API alone, with
//! the process's peak memory measured: alone in its file, so that no other
//! test's crawl shares the process (and its VmHWM).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "a test's helpers may panic too (clippy.toml allows it only in #[test] functions); the workspace's panic-free lints are for what servers send"
)]

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use ringcrawl::Crawler;
use ringcrawl_site::server::Server;
use ringcrawl_site::synth::{SiteSpec, SynthSite};

/// Peak resident memory of this process (VmHWM), in KiB.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn a_slow_stream_consumer_gets_every_page_in_bounded_memory() {
    // 1,500 pages of 64 KB: ~100 MB of bodies, all of which would pile up
    // in the queue if the crawl did not wait for the consumer.
    const PAGE: usize = 64_000;
    const BUDGET: usize = 2 << 20;
    const TASKS: usize = 16;
    let site = Arc::new(SynthSite::new(SiteSpec {
        pages: 1500,
        page_bytes: PAGE,
        ..SiteSpec::default()
    }));
    let _server = Server::start(site.clone().handler()).expect("site starts");
    let base = format!("http://{}", _server.addr());
    let before = peak_rss_kib();
    // Two shards: the channels between shards grow with the square of
    // their count, and the bound is for the pages held, not the machine.
    let mut crawler = Crawler::builder()
        .root(format!("{base}/"))
        .cores(2)
        .max_tasks(TASKS)
        .per_host(TASKS)
        .build()
        .unwrap();
    let mut pages = crawler.pages(BUDGET);
    let running = crawler.spawn();
    let mut urls = BTreeSet::new();
    let mut most_queued = 0;
    let mut bytes = 0;
    while let Some(page) = pages.next() {
        most_queued = most_queued.max(pages.queued_bytes());
        bytes += page.page().body().len();
        assert!(urls.insert(page.page().url().to_string()), "no page twice");
        std::thread::sleep(Duration::from_millis(1));
    }
    let report = running.join().unwrap().unwrap();
    let grown_mib = peak_rss_kib().saturating_sub(before) / 1024;
    eprintln!("peak RSS grew {grown_mib} MiB; at most {most_queued} bytes queued");
    assert_eq!(urls.len() as u64, report.urls());
    assert_eq!(
        urls.len(),
        site.expected_paths().len() + 1,
        "every page arrived, and the root's guessed /sitemap.xml (a 404)"
    );
    assert!(bytes > 90_000_000, "{bytes} bytes of bodies went through");
    // The queue: the budget plus a page per running fetch, a few MiB; the
    // rest is the crawl's own working set. Seen here: 9 MiB, and 2.8 MB
    // queued at most; with the crawl not held back, 54 MiB and more.
    assert!(
        grown_mib < 32,
        "peak RSS grew {grown_mib} MiB for {} MiB of pages",
        bytes >> 20
    );
    // Held back at the budget; what was running when it was reached came
    // in on top (a page of ~64 KB per fetch slot, twice for slack).
    let bound = BUDGET + 2 * TASKS * (PAGE + (8 << 10));
    assert!(
        most_queued <= bound,
        "{most_queued} bytes queued, bound {bound}"
    );
}
