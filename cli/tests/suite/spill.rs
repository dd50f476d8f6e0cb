//! The frontier in bounded memory: a crawl whose queue mostly goes through
//! the spill files (a 64 KiB `frontier_memory` for 20,000 pages) fetches
//! every page exactly once, by the site's own count, and leaves no file.
//! When the spill files fail (damaged under the crawl, or not writable),
//! nothing is dropped silently: the crawl ends with an error.

use std::sync::Arc;

use crate::common::*;
use ringcrawl::CrawlerBuilder;
use ringcrawl_site::server::Server;
use ringcrawl_site::synth::{SiteSpec, SynthSite};

#[test]
fn a_twenty_thousand_page_crawl_through_a_64_kib_frontier_fetches_each_page_once_and_leaves_no_file(
) {
    let Spilling {
        site,
        authority,
        server,
        cfg,
        parent: spill_parent,
    } = spilling_crawl(20_000, "spill");
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

/// A crawl of 16 hosts through a 64 KiB frontier, ready to run, that
/// spills into a folder of its own, and what a test checks it by.
struct Spilling {
    site: Arc<SynthSite>,
    /// The site's `127.0.0.1:PORT`.
    authority: String,
    /// Kept running while the crawl runs.
    server: Server,
    cfg: CrawlerBuilder,
    /// The (fresh) folder the crawl's spill directory goes in.
    parent: std::path::PathBuf,
}

/// The queues' RAM of a [`Spilling`] crawl: a few hundred URLs.
const FRONTIER_MEMORY: usize = 64 << 10;

/// A [`Spilling`] crawl of a site of `pages` pages, spilling into a fresh
/// folder named after `test`.
fn spilling_crawl(pages: usize, test: &str) -> Spilling {
    let site = Arc::new(SynthSite::new(SiteSpec {
        pages,
        hosts: 16,
        page_bytes: 2000,
        ..SiteSpec::default()
    }));
    let server = Server::start(site.clone().handler()).expect("site starts");
    let port = server.port();
    let authority = format!("127.0.0.1:{port}");
    let mut cfg = settings(&site.roots(&authority));
    for k in 0..16 {
        cfg = cfg.resolve(
            &SynthSite::host_name(k),
            port,
            vec!["127.0.0.1".parse().unwrap()],
        );
    }
    cfg = cfg.max_tasks(64);
    cfg = cfg.per_host(4);
    cfg = cfg.frontier_memory(FRONTIER_MEMORY);
    let spill_parent =
        std::env::temp_dir().join(format!("ringcrawl-test-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&spill_parent);
    std::fs::create_dir_all(&spill_parent).unwrap();
    cfg = cfg.spill_dir(spill_parent.clone());
    Spilling {
        site,
        authority,
        server,
        cfg,
        parent: spill_parent,
    }
}

/// Runs `damage` on every crawl spill directory in `parent` (`ringcrawl-spill-*`)
/// over and over, on a thread of its own, until the returned flag is set.
fn meddle(
    parent: std::path::PathBuf,
    damage: impl Fn(&std::path::Path) + Send + 'static,
) -> (
    Arc<std::sync::atomic::AtomicBool>,
    std::thread::JoinHandle<()>,
) {
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::spawn(move || {
        while !flag.load(std::sync::atomic::Ordering::Relaxed) {
            let Ok(entries) = std::fs::read_dir(&parent) else {
                return;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                if name.to_string_lossy().starts_with("ringcrawl-spill-") {
                    damage(&entry.path());
                }
            }
            std::thread::yield_now();
        }
    });
    (stop, thread)
}

/// Spill segments cut to nothing under the crawl (as a failing disk or
/// another program might): the URLs their chunks held cannot be read
/// back, and the crawl says so in its error, not only in a counter.
#[test]
fn spill_chunks_that_cannot_be_read_back_are_an_error_of_the_crawl() {
    let Spilling {
        server: _server,
        cfg,
        parent,
        ..
    } = spilling_crawl(20_000, "spill-damaged");
    let (stop, thread) = meddle(parent.clone(), |dir| {
        for shard in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            for seg in std::fs::read_dir(shard.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let is_segment = seg.file_name().to_string_lossy().starts_with("spill-");
                if is_segment {
                    if let Ok(file) = std::fs::OpenOptions::new().write(true).open(seg.path()) {
                        let _ = file.set_len(0);
                    }
                }
            }
        }
    });
    let outcome = crawl(cfg);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    thread.join().unwrap();
    let lost = outcome.stats.spill_lost;
    assert!(lost > 0, "the damage cost some queued URLs");
    let error = outcome.output_error.as_deref().unwrap_or_default();
    assert!(
        error.contains("lost") && error.contains("spill"),
        "{lost} URLs lost, and the error says: {error:?}"
    );
    let _ = std::fs::remove_dir_all(&parent);
}

/// A spill that cannot write (each shard's folder is a file) is tried
/// again, then stops the crawl with an error; meanwhile the frontier
/// waits for room rather than growing past its bound.
#[test]
fn a_spill_that_cannot_write_stops_the_crawl_with_an_error_and_loses_nothing_fetched() {
    let Spilling {
        server: _server,
        cfg,
        parent,
        ..
    } = spilling_crawl(20_000, "spill-unwritable");
    let memory = FRONTIER_MEMORY as u64;
    let (stop, thread) = meddle(parent.clone(), |dir| {
        for k in 0..64 {
            let shard = dir.join(format!("shard-{k}"));
            if !shard.exists() {
                let _ = std::fs::write(&shard, b"not a directory");
            }
        }
    });
    let outcome = crawl_to_its_end(cfg);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    thread.join().unwrap();
    assert!(outcome.aborted, "stopped before the work ran out");
    assert_eq!(
        outcome.records.len() as u64,
        outcome.stats.urls,
        "a record for every URL fetched"
    );
    let error = outcome.output_error.as_deref().unwrap_or_default();
    assert!(
        error.contains("spill") && error.contains("queued"),
        "the error says: {error:?}"
    );
    let stats = &outcome.stats;
    assert!(stats.queued_left > 0, "the crawl stopped before the end");
    assert_eq!(stats.spill_lost, 0, "nothing queued was dropped");
    eprintln!(
        "stopped with {} URLs queued, {} fetched; peak RSS {} KiB; bound {memory}",
        stats.queued_left, stats.urls, stats.peak_rss_kib
    );
    let _ = std::fs::remove_dir_all(&parent);
}
