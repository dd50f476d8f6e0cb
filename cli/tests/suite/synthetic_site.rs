//! Crawls of the shipped synthetic site: complete (every expected URL
//! exactly once, nothing out of scope) on one core, on two, at 20,000
//! pages. (With a seen-set kept mostly on disk, below the builder's
//! floor: the library's unit test, src/api/refused_crawls.rs.)

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::common::*;
use ringcrawl_site::server::Server;
use ringcrawl_site::synth::{SiteSpec, SynthSite};

fn crawl_synthetic(
    pages: usize,
    cores: usize,
    max_tasks: usize,
) -> (BTreeSet<String>, BTreeSet<String>, Server) {
    let site = Arc::new(SynthSite::new(SiteSpec {
        pages,
        ..SiteSpec::default()
    }));
    let server = Server::start(site.clone().handler()).expect("site starts");
    let b = base(&server);
    let mut cfg = settings(&[format!("{b}/")]);
    cfg = cfg.cores(cores);
    cfg = cfg.max_tasks(max_tasks);
    let outcome = crawl(cfg);
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
    (fetched, expected, server)
}

#[test]
fn same_pages_on_one_and_two_cores() {
    let (one, expected_one, _s1) = crawl_synthetic(500, 1, 20);
    let (two, expected_two, _s2) = crawl_synthetic(500, 2, 20);
    assert_eq!(one, expected_one);
    assert_eq!(two, expected_two);
    let strip = |set: &BTreeSet<String>| -> BTreeSet<String> {
        set.iter()
            .map(|u| u.splitn(4, '/').nth(3).unwrap_or("").to_string())
            .collect()
    };
    assert_eq!(
        strip(&one),
        strip(&two),
        "same paths whatever the core count"
    );
}

#[test]
fn twenty_thousand_page_site_is_crawled_completely_once() {
    let (fetched, expected, server) = crawl_synthetic(20_000, 2, 100);
    assert!(expected.len() >= 20_000);
    assert_every_url_once(&fetched, &expected, &server);
}

/// Every expected URL fetched, nothing else, each requested exactly once.
fn assert_every_url_once(fetched: &BTreeSet<String>, expected: &BTreeSet<String>, server: &Server) {
    let missing: Vec<_> = expected.difference(fetched).take(5).collect();
    let extra: Vec<_> = fetched.difference(expected).take(5).collect();
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
