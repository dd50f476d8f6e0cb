//! Compaction of the journals at a resume: a resume whose replay ends
//! writes each shard's base (the URLs still to fetch), and its checkpoint
//! names the run in `compacted.json` and removes the journals before it.
//! A kill during a compaction leaves one of three states, made here by
//! hand from the files a crawl wrote, and each resumes with every page of
//! the site fetched once (the site's own count) and recorded once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::synth::Site;
use crate::resume::scratch;
use ringcrawl::Crawler;

/// The files of the shards' folders of `state`, by name, with their
/// bytes.
fn shard_files(state: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    for shard in 0..2 {
        let dir = state.join(format!("shard-{shard}"));
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with("journal-") || name.starts_with("base-") {
                files.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

/// The names (`shard-0/journal-000001.bin`) of `files`.
fn names(files: &BTreeMap<PathBuf, Vec<u8>>) -> Vec<String> {
    files
        .keys()
        .map(|p| {
            let shard = p.parent().unwrap().file_name().unwrap().to_string_lossy();
            format!("{shard}/{}", p.file_name().unwrap().to_string_lossy())
        })
        .collect()
}

/// `compacted.json` of `state`, if there is one (written atomically, so
/// whole when there).
pub(crate) fn marker(state: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(state.join("compacted.json")).ok()?;
    Some(serde_json::from_str(&text).unwrap())
}

/// Put `files` back, as a kill before their removal would have left them.
fn restore(files: &BTreeMap<PathBuf, Vec<u8>>) {
    for (path, bytes) in files {
        std::fs::write(path, bytes).unwrap();
    }
}

/// The records of the log, by URL.
fn logged(log: &Path) -> BTreeMap<String, usize> {
    let mut urls = BTreeMap::new();
    for line in std::fs::read_to_string(log).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        *urls
            .entry(v["url"].as_str().unwrap().to_string())
            .or_insert(0) += 1;
    }
    urls
}

#[test]
fn a_kill_at_any_step_of_a_compaction_resumes_with_every_page_fetched_once() {
    // 5 ms a page and 10 fetches at a time: a run's 1,000 pages take half
    // a second, and its replay (some thousands of URLs) ends long before.
    let site = Site::with_delay(5_000, 4, 5);
    let dir = scratch("compaction");
    let state = dir.join("state");
    let log = state.join("records.jsonl");
    let crawl = |b: ringcrawl::CrawlerBuilder, pages: Option<u64>| {
        let mut b = b
            .cores(2)
            .max_tasks(10)
            .obey_robots(false)
            .sitemaps(false)
            .progress(None)
            .checkpoint_interval(Duration::from_millis(100));
        for k in 0..site.site.host_count() {
            b = b.resolve(
                &ringcrawl_site::synth::SynthSite::host_name(k),
                site.server.port(),
                vec!["127.0.0.1".parse().unwrap()],
            );
        }
        if let Some(pages) = pages {
            b = b.max_pages(pages);
        }
        b.build().unwrap().run().unwrap()
    };
    let resume = |pages: Option<u64>| crawl(Crawler::builder().resume(&state), pages);
    let once = |when: &str| {
        let hits = site.page_hits();
        let twice: Vec<_> = hits.iter().filter(|(_, n)| **n > 1).take(5).collect();
        assert!(twice.is_empty(), "{when}: fetched twice: {twice:?}");
        let urls = logged(&log);
        assert!(urls.values().all(|n| *n == 1), "{when}: a URL logged twice");
    };

    crawl(
        Crawler::builder().roots(site.roots()).state(&state),
        Some(1000),
    );
    assert_eq!(marker(&state), None, "a first run compacts nothing");
    let run0 = shard_files(&state);
    assert_eq!(
        names(&run0),
        ["shard-0/journal-000000.bin", "shard-1/journal-000000.bin"]
    );

    // Run 1 replays run 0's journals and compacts them into its bases.
    resume(Some(2000));
    once("run 1");
    assert_eq!(marker(&state).unwrap()["run"], 1);
    let run1 = shard_files(&state);
    assert_eq!(
        names(&run1),
        [
            "shard-0/base-000001.bin",
            "shard-0/journal-000001.bin",
            "shard-1/base-000001.bin",
            "shard-1/journal-000001.bin"
        ],
        "run 0's journals are gone"
    );

    // Killed after the marker, before the removal: run 0's journals are
    // back, and covered, so the resume removes them and does not read them.
    restore(&run0);
    resume(Some(3000));
    once("run 2, after a kill after the marker");
    assert_eq!(marker(&state).unwrap()["run"], 2);
    assert!(shard_files(&state).keys().all(|p| !run0.contains_key(p)));

    // Killed after run 3's bases were on disk, before its marker: the
    // marker names run 1, and run 1's and 2's files are there, run 3's
    // bases too (whole, but not named): they are removed and not read.
    let run2 = shard_files(&state);
    restore(&run1);
    std::fs::write(state.join("compacted.json"), br#"{"run":1}"#).unwrap();
    for shard in 0..2 {
        let base2 = state.join(format!("shard-{shard}/base-000002.bin"));
        let bytes = run2.get(&base2).unwrap();
        std::fs::write(state.join(format!("shard-{shard}/base-000003.bin")), bytes).unwrap();
        std::fs::remove_file(&base2).unwrap();
    }
    // And a marker torn while it was written.
    std::fs::write(state.join("compacted.json.tmp"), b"{\"ru").unwrap();
    resume(Some(4000));
    once("run 3, after a kill before the marker");
    assert_eq!(marker(&state).unwrap()["run"], 3);
    assert!(!state.join("compacted.json.tmp").exists());

    // A damaged marker stops the resume, naming it.
    let good = std::fs::read(state.join("compacted.json")).unwrap();
    std::fs::write(state.join("compacted.json"), b"{\"run\": \"x\"}").unwrap();
    let e = Crawler::builder()
        .resume(&state)
        .cores(2)
        .progress(None)
        .build()
        .unwrap()
        .run()
        .unwrap_err();
    assert!(e.to_string().contains("compacted.json"), "{e}");
    std::fs::write(state.join("compacted.json"), good).unwrap();

    // The last run finishes the site: every page once.
    let last = resume(None);
    assert!(!last.aborted());
    once("the end");
    let urls: std::collections::BTreeSet<String> = logged(&log).into_keys().collect();
    assert_eq!(urls, site.expected(), "every page of the site, once");
    std::fs::remove_dir_all(&dir).unwrap();
}
