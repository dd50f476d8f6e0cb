//! Scale, the small size `scripts/scale.sh` runs by hand at 100k and 1M
//! pages: a crawl of 20,000 pages of the endless site (a billion pages over
//! 4096 hosts, each page linking to ten mostly unseen pages) through the
//! library, checked against the site's own count of requests.

use std::sync::Arc;

use crate::common::*;
use ringcrawl::Spent;
use ringcrawl_site::endless::{Counts, EndlessSite, EndlessSpec};
use ringcrawl_site::server::{Options, Server};

const PAGES: u64 = 20_000;

#[test]
fn a_crawl_of_twenty_thousand_endless_pages_fetches_each_once_and_finds_ten_urls_a_page() {
    crawl_endless();
}

/// The crawl of [`PAGES`] pages of the endless site, checked. (With a
/// seen-set below the builder's floor, so that the URLs go through disk:
/// the library's unit test, src/api/refused_crawls.rs.)
fn crawl_endless() -> Outcome {
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
    cfg = cfg.max_pages(PAGES);
    let started = std::time::Instant::now();
    let outcome = crawl(cfg);
    let took = started.elapsed();

    assert_eq!(outcome.spent, Some(Spent::Pages));
    assert_eq!(outcome.records.len() as u64, PAGES);
    assert_eq!(urls_of(&outcome).len() as u64, PAGES, "no URL twice");
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
            pages: PAGES,
            duplicates: 0,
            not_found: 0
        },
        "served twice: {:?}",
        site.duplicated(5)
    );
    assert_eq!(server.total_hits() as u64, PAGES);
    // Links mostly to pages not yet seen: about ten new URLs a page.
    let discovered = PAGES + outcome.stats.queued_left;
    assert!(
        discovered > 9 * PAGES,
        "{discovered} URLs discovered by {PAGES} pages"
    );
    eprintln!(
        "{PAGES} pages in {took:?}, {discovered} URLs discovered, peak RSS {} KiB",
        outcome.stats.peak_rss_kib
    );
    server.stop();
    outcome
}
