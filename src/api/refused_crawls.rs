//! Crawls the builder refuses, run on the configuration it made: roots
//! of a scheme the crawler does not fetch (to see them fail with no I/O),
//! and a seen-set of less than its floor of 1 MiB a shard (to reach its
//! disk path within a test's 20,000 pages). Beside the builder, as no
//! public call makes such a crawl; the synthetic sites' crawls otherwise
//! are the suite's (cli/tests/suite/scale.rs, synthetic_site.rs).

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use ringcrawl_site::endless::{Counts, EndlessSite, EndlessSpec};
use ringcrawl_site::server::{Options, Server};
use ringcrawl_site::synth::{SiteSpec, SynthSite};

use super::testing::{settings, within_hang_limit};
use super::CrawlerBuilder;
use crate::config::budget::Spent;
use crate::config::Config;
use crate::crawl::run::{run, Outcome};
use crate::job::ErrorKind;

/// The configuration `settings` make, with its seen-set at `bytes` over
/// all shards (below the builder's floor).
fn with_seen_memory(settings: CrawlerBuilder, bytes: usize) -> Config {
    let mut config = settings.build().unwrap().config;
    config.seen_memory = bytes;
    config
}

/// The URLs of `outcome`'s records.
fn urls_of(outcome: &Outcome) -> BTreeSet<String> {
    outcome.records.iter().map(|r| r.url.clone()).collect()
}

/// Crawl `config` to its end with no hooks, within the suite's hang
/// limit; checked as the suite's `ran_out_of_work` checks it.
fn crawl_to_its_end(config: Config) -> Outcome {
    let interrupt = super::Interrupt::new();
    let flag = interrupt.flag();
    let outcome = within_hang_limit(interrupt, || run(config, flag.clone())).unwrap();
    assert!(!flag.load(Ordering::Relaxed));
    assert!(!outcome.aborted, "crawl must end by running out of work");
    assert_eq!(
        outcome.records.len() as u64,
        outcome.stats.urls,
        "one record per URL"
    );
    outcome
}

#[test]
fn roots_that_fail_at_once_end_the_crawl() {
    // No I/O at all before the error: the fetch task ends within its first
    // poll. On one core and on two. (The builder refuses such roots; the
    // engine records them.)
    for cores in [1, 2] {
        let crawler = settings(&["http://127.0.0.1:9/", "http://127.0.0.2:9/"])
            .cores(cores)
            .build()
            .unwrap();
        let mut config = crawler.config.clone();
        config.roots = ["ftp://127.0.0.1:9/", "ftp://127.0.0.2:9/"]
            .iter()
            .map(|u| url::Url::parse(u).unwrap())
            .collect();
        let outcome = crawl_to_its_end(config);
        let kinds: Vec<_> = outcome.records.iter().map(|r| r.error_kind).collect();
        assert_eq!(
            kinds,
            [Some(ErrorKind::UnsupportedScheme); 2],
            "{cores} cores"
        );
    }
}

/// Pages of the endless site crawled (cli/tests/suite/scale.rs's).
const ENDLESS_PAGES: u64 = 20_000;

/// cli/tests/suite/scale.rs's `crawl_endless` with a seen-set of
/// `seen_memory` bytes over the two shards: [`ENDLESS_PAGES`] pages of the
/// endless site, checked as it checks them.
fn crawl_endless(seen_memory: usize) -> Outcome {
    let site = Arc::new(EndlessSite::new(EndlessSpec::default()).unwrap());
    let options = Options {
        keep_alive: true,
        count_paths: false,
        ..Options::default()
    };
    let server = Server::start_with(
        &[std::net::SocketAddr::from(([127, 0, 0, 1], 0))],
        site.clone().handler(),
        None,
        options,
    )
    .unwrap();
    let port = server.port();
    let roots = site.roots(port);
    assert_eq!(roots.len(), 4096);
    let mut cfg = settings(&roots);
    for pin in site.pins(port, "127.0.0.1") {
        let host = pin.split(':').next().unwrap().to_string();
        cfg = cfg.resolve(&host, port, vec![[127, 0, 0, 1].into()]);
    }
    // The command line's defaults.
    cfg = cfg.max_tasks(100);
    cfg = cfg.per_host(2);
    cfg = cfg.max_pages(ENDLESS_PAGES);
    let started = std::time::Instant::now();
    let outcome = crawl_to_its_end(with_seen_memory(cfg, seen_memory));
    let took = started.elapsed();

    assert_eq!(outcome.spent, Some(Spent::Pages));
    assert_eq!(outcome.records.len() as u64, ENDLESS_PAGES);
    assert_eq!(
        urls_of(&outcome).len() as u64,
        ENDLESS_PAGES,
        "no URL twice"
    );
    let bad: Vec<_> = outcome
        .records
        .iter()
        .filter(|r| r.status != Some(200))
        .take(3)
        .collect();
    assert!(bad.is_empty(), "{bad:?}");
    // The site's own count: every page once, nothing else asked for.
    assert_eq!(
        site.counts(),
        Counts {
            pages: ENDLESS_PAGES,
            duplicates: 0,
            not_found: 0
        },
        "served twice: {:?}",
        site.duplicated(5)
    );
    assert_eq!(server.total_hits() as u64, ENDLESS_PAGES);
    // Links mostly to pages not yet seen: about ten new URLs a page.
    let summary = outcome
        .stats
        .report_data(outcome.elapsed, outcome.interrupted);
    let discovered = ENDLESS_PAGES + summary.queued_left;
    assert!(
        discovered > 9 * ENDLESS_PAGES,
        "{discovered} URLs discovered by {ENDLESS_PAGES} pages"
    );
    eprintln!(
        "{ENDLESS_PAGES} pages in {took:?}, {discovered} URLs discovered, peak RSS {} KiB",
        summary.peak_rss_kib
    );
    server.stop();
    outcome
}

/// Moved from cli/tests/suite/scale.rs.
#[test]
fn with_a_small_seen_memory_the_urls_go_through_disk_and_each_page_is_fetched_once() {
    // 128 KiB a shard: buckets of ~6,000 URLs, so the ~200,000 URLs found
    // go through a dozen merges to disk per shard, and the pages' tallies wait
    // for lookups there. Below the builder's floor of 1 MiB a shard.
    let outcome = crawl_endless(256 << 10);
    let summary = outcome
        .stats
        .report_data(outcome.elapsed, outcome.interrupted);
    let (merges, lookups) = (summary.seen_merges, summary.seen_lookups);
    eprintln!("seen-set: {merges} merges, {lookups} lookups on disk");
    assert!(
        merges >= 20 && lookups > 0,
        "{merges} merges, {lookups} lookups on disk"
    );
    let new: u64 = outcome.records.iter().map(|r| r.num_new_urls as u64).sum();
    let discovered = ENDLESS_PAGES + summary.queued_left;
    // Every URL queued was new on one page (or a root); the last pages'
    // tallies may still be out when the budget stops the crawl.
    assert!(
        new + 4096 <= discovered && new + 4096 >= discovered - discovered / 50,
        "num_new_urls add up to {new} (+ 4096 roots) for {discovered} URLs queued"
    );
}

/// Moved from cli/tests/suite/synthetic_site.rs, with its helper
/// `crawl_synthetic_with` (20,000 pages, two cores, 100 tasks) and
/// `assert_every_url_once`.
#[test]
fn a_seen_set_mostly_on_disk_still_crawls_the_site_completely_once() {
    // 32 KiB a shard: buckets of ~1,300 URLs, so the 20,867 URLs go
    // through some fifteen merges to disk, and most links (nine in ten are
    // known) are looked up there: every URL still comes once, and each
    // page's num_new_urls waits for its lookups.
    let site = Arc::new(SynthSite::new(SiteSpec {
        pages: 20_000,
        ..SiteSpec::default()
    }));
    let server = Server::start(site.clone().handler()).expect("site starts");
    let b = format!("http://{}", server.addr());
    let cfg = settings(&[format!("{b}/")]).cores(2).max_tasks(100);
    // Below the builder's floor of 1 MiB a shard.
    let outcome = crawl_to_its_end(with_seen_memory(cfg, 64 << 10));
    let summary = outcome
        .stats
        .report_data(outcome.elapsed, outcome.interrupted);
    let disk = (summary.seen_merges, summary.seen_lookups);
    let fetched = urls_of(&outcome);
    // Every URL but the root was new to the crawl on exactly one page.
    let new: usize = outcome.records.iter().map(|r| r.num_new_urls).sum();
    assert_eq!(
        new,
        outcome.records.len() - 1,
        "num_new_urls over the crawl"
    );
    let expected: BTreeSet<String> = site
        .expected_paths()
        .into_iter()
        .map(|p| format!("{b}{p}"))
        .collect();
    for off in site.offsite_urls() {
        assert!(!fetched.contains(&off), "{off} is out of scope");
    }
    eprintln!("seen-set: {} merges, {} lookups on disk", disk.0, disk.1);
    assert!(
        disk.0 >= 10 && disk.1 > 10_000,
        "merges and lookups on disk: {disk:?}"
    );
    // Every expected URL fetched, nothing else, each requested exactly once.
    let missing: Vec<_> = expected.difference(&fetched).take(5).collect();
    let extra: Vec<_> = fetched.difference(&expected).take(5).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:?}, extra {extra:?}"
    );
    assert_eq!(
        server.total_hits(),
        expected.len(),
        "every URL requested exactly once"
    );
}
