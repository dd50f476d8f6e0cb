//! Crawls whose journals are compacted while they run
//! (`crate::state::compact::in_run`), stopped, then resumed: every page
//! is logged once in the end, and the resume reads the bases and the
//! journal past them, not the prefix the bases cover. Beside the
//! builder, whose hidden `compact_in_run` makes a small crawl compact.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use ringcrawl_site::server::Server;
use ringcrawl_site::synth::{Delay, SiteSpec, SynthSite};

use super::testing::{settings, within_hang_limit};
use super::CrawlerBuilder;
use crate::state::compact;
use crate::state::journal;
use crate::state::session::Session;

/// The URLs of the log's records, with how many records each has.
fn logged(log: &Path) -> BTreeMap<String, usize> {
    let mut urls = BTreeMap::new();
    for line in std::fs::read_to_string(log).unwrap().lines() {
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        let url = record["url"].as_str().unwrap().to_string();
        *urls.entry(url).or_insert(0) += 1;
    }
    urls
}

/// `compacted.json` of a crawl that runs, if there is one: read, not
/// [`compact::marked`] (which removes a `.tmp` a kill would have left,
/// and here the crawl is writing it).
fn read_marker(state: &Path) -> Option<compact::Marker> {
    let bytes = std::fs::read(state.join(compact::MARKER)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

#[test]
fn a_crawl_compacted_in_its_run_then_stopped_resumes_from_the_bases_and_logs_each_page_once() {
    // 5 ms a page, four fetches at a time: the 3,000 pages take some 4 s,
    // and the checkpoints (every 100 ms, the least allowed) compact many
    // times before the crawl is stopped at the second compaction.
    let site = Arc::new(SynthSite::new(SiteSpec {
        pages: 3000,
        hosts: 4,
        page_bytes: 1500,
        delay: Delay::Fixed(Duration::from_millis(5)),
        ..SiteSpec::default()
    }));
    let server = Server::start(site.clone().handler()).expect("site starts");
    let authority = format!("127.0.0.1:{}", server.port());
    let dir = std::env::temp_dir().join(format!("ringcrawl-compacted-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let state = dir.join("state");
    let with_site = |b: CrawlerBuilder| {
        // Compact as soon as the journals outgrow the bases twice, sorting
        // 64 pairs at a time.
        let mut b = b
            .max_tasks(4)
            .checkpoint_interval(Duration::from_millis(100))
            .compact_in_run(0)
            .compact_sort_chunk(64);
        for k in 0..site.host_count() {
            b = b.resolve(
                &SynthSite::host_name(k),
                server.port(),
                vec!["127.0.0.1".parse().unwrap()],
            );
        }
        b
    };
    let roots = site.roots(&authority);

    // Run 0, stopped once a second compaction (which read the first's
    // bases) named its bases.
    let crawler = with_site(settings(&roots).state(&state)).build().unwrap();
    let interrupt = crawler.interrupt_handle();
    let running = crawler.spawn();
    let marker = within_hang_limit(interrupt.clone(), || loop {
        let marker = read_marker(&state);
        if marker.as_ref().is_some_and(|m| m.seq >= 2) || running.is_finished() {
            interrupt.interrupt();
            break marker;
        }
        std::thread::sleep(Duration::from_millis(2));
    });
    running.join().unwrap().unwrap();
    let marker = marker.expect("the crawl ended before two compactions");
    assert!(marker.seq >= 2 && marker.run == 0, "{marker:?}");
    let log = state.join("records.jsonl");
    let before = logged(&log);
    assert!(
        before.len() < 3000,
        "stopped before the end: {}",
        before.len()
    );

    // What a resume reads: each shard's base of the last compaction and
    // its journal from where the base ends; no more bytes than the
    // journals hold from their start.
    let mut config = with_site(settings(&roots).resume(&state))
        .build()
        .unwrap()
        .config;
    let session = Session::begin(&mut config).unwrap().unwrap();
    let marker = compact::marked(&state).unwrap().unwrap();
    let earlier = session.earlier_journals();
    let (mut replayed, mut journals) = (0, 0);
    for s in 0..2 {
        let shard = state.join(format!("shard-{s}"));
        let base = marker.base(&shard);
        let journal = journal::path(&shard, 0);
        let from = marker.from(s);
        let read: Vec<_> = earlier
            .iter()
            .filter(|e| e.path.starts_with(&shard))
            .map(|e| (e.path.clone(), e.from))
            .collect();
        assert_eq!(read, [(base.clone(), 0), (journal.clone(), from)]);
        let len = std::fs::metadata(&journal).unwrap().len();
        replayed += std::fs::metadata(&base).unwrap().len() + len - from;
        journals += len;
    }
    assert!(marker.from.iter().any(|from| *from > 0), "{marker:?}");
    assert!(
        replayed < journals,
        "the resume reads {replayed} bytes, the journals hold {journals}"
    );
    eprintln!(
        "after compaction {} of run 0 ({} pages logged): the resume reads {replayed} bytes \
         (bases and the journals past them), the journals hold {journals}",
        marker.seq,
        before.len()
    );
    drop(session);

    // A base or a journal the marker names gone: the resume is refused,
    // naming the file, before anything is fetched; put back, it goes on.
    let read_past = marker.from.iter().position(|from| *from > 0).unwrap();
    let shard = state.join(format!("shard-{read_past}"));
    for (gone, says) in [
        (journal::path(&shard, 0), "are in it"),
        (marker.base(&shard), "holds a shard's queued URLs"),
    ] {
        let aside = gone.with_extension("aside");
        std::fs::rename(&gone, &aside).unwrap();
        let mut config = with_site(settings(&roots).resume(&state))
            .build()
            .unwrap()
            .config;
        let refused = Session::begin(&mut config)
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains(&gone.display().to_string()) && refused.contains(says),
            "{refused}"
        );
        std::fs::rename(&aside, &gone).unwrap();
    }

    // The resume crawls the rest: every page of the site logged once.
    let crawler = with_site(settings(&roots).resume(&state)).build().unwrap();
    let interrupt = crawler.interrupt_handle();
    within_hang_limit(interrupt, || crawler.run()).unwrap();
    let after = logged(&log);
    let twice: Vec<_> = after.iter().filter(|(_, n)| **n > 1).take(5).collect();
    assert!(twice.is_empty(), "logged twice: {twice:?}");
    let expected: std::collections::BTreeSet<String> =
        site.expected_urls(&authority).into_iter().collect();
    let urls: std::collections::BTreeSet<String> = after.keys().cloned().collect();
    assert_eq!(urls, expected, "every page once, none lost");
    // Fetched again: at most the fetches the stop cut short.
    let hits = server.hit_counts();
    let again = hits.values().filter(|n| **n > 1).count();
    assert!(hits.values().all(|n| *n <= 2), "a page fetched three times");
    assert!(again <= 4, "{again} pages fetched twice");
    server.stop();
    std::fs::remove_dir_all(&dir).unwrap();
}
