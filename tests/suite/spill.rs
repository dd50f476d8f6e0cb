//! The frontier in bounded memory: a crawl whose queue mostly goes through
//! the spill files (a 64 KiB `frontier_memory` for 20,000 pages) fetches
//! every page exactly once, by the site's own count, and leaves no file.

use std::sync::Arc;

use crate::common::*;
use ringcrawl_site::server::Server;
use ringcrawl_site::synth::{SiteSpec, SynthSite};

#[test]
fn a_twenty_thousand_page_crawl_through_a_64_kib_frontier_fetches_each_page_once_and_leaves_no_file(
) {
    let site = Arc::new(SynthSite::new(SiteSpec {
        pages: 20_000,
        hosts: 16,
        page_bytes: 2000,
        ..SiteSpec::default()
    }));
    let server = Server::start(site.clone().handler()).expect("site starts");
    let port = server.port();
    let authority = format!("127.0.0.1:{port}");
    let mut cfg = config(&site.roots(&authority));
    for k in 0..16 {
        cfg.resolve.insert(
            (SynthSite::host_name(k), port),
            vec!["127.0.0.1".parse().unwrap()],
        );
    }
    cfg.max_tasks = 64;
    cfg.per_host = 4;
    cfg.frontier_memory = 64 << 10;
    let spill_parent =
        std::env::temp_dir().join(format!("ringcrawl-test-spill-{}", std::process::id()));
    std::fs::create_dir_all(&spill_parent).unwrap();
    cfg.spill_dir = Some(spill_parent.clone());

    let outcome = crawl(cfg);

    let fetched = urls_of(&outcome);
    let expected: std::collections::BTreeSet<String> =
        site.expected_urls(&authority).into_iter().collect();
    assert!(expected.len() > 20_000);
    let missing: Vec<_> = expected.difference(&fetched).take(5).collect();
    let extra: Vec<_> = fetched.difference(&expected).take(5).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:?}, extra {extra:?}"
    );
    let twice: Vec<_> = server
        .hit_counts()
        .into_iter()
        .filter(|(_, n)| *n != 1)
        .take(5)
        .collect();
    assert!(twice.is_empty(), "asked more than once: {twice:?}");
    assert_eq!(server.total_hits(), expected.len(), "every URL asked once");
    let stats = &outcome.stats;
    eprintln!(
        "{} URLs; spilled {} chunks, {} bytes, {} reads back; peak RSS {} KiB",
        fetched.len(),
        stats.spill_chunks,
        stats.spill_bytes,
        stats.spill_reads,
        stats.peak_rss_kib
    );
    assert!(
        stats.spill_bytes > 500_000 && stats.spill_reads > 100,
        "most of the queue went through the disk"
    );
    assert_eq!(
        (stats.queued_left, stats.queued_on_disk, stats.spill_lost),
        (0, 0, 0)
    );
    let left: Vec<_> = std::fs::read_dir(&spill_parent)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(left.is_empty(), "spill files left: {left:?}");
    std::fs::remove_dir(&spill_parent).unwrap();
}
