//! Compaction of the journals within a run (the hidden
//! `--compact-in-run-after`, which makes a small crawl compact at every
//! checkpoint where the journals outgrew the bases twice): a crawl killed
//! with SIGKILL after such a compaction resumes from the bases and the
//! journal past what they cover, and every page ends with one record.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::common::synth::Site;
use crate::compaction::marker;
use crate::resume::{
    assert_fetched_once, assert_one_record_each, cli_crawl, logged, ringcrawl, scratch, wait, LIMIT,
};

#[test]
fn a_crawl_killed_after_an_in_run_compaction_resumes_from_its_bases_with_every_page_once() {
    // 5 ms a page with 8 fetches at once: the 3,000 pages take seconds,
    // and the checkpoints (every 0.1 s) compact long before the end.
    let site = Site::with_delay(3_000, 4, 5);
    let expected = site.expected();
    let dir = scratch("in-run-compaction");
    let (state, _warc, log, args) = cli_crawl(
        &site,
        &dir,
        &[
            "--max-tasks",
            "8",
            "--checkpoint-interval",
            "0.1",
            "--compact-in-run-after",
            "0",
        ],
    );
    let mut child = ringcrawl(&args);
    let start = Instant::now();
    // Killed once a compaction named its bases.
    let compacted = |m: &serde_json::Value| m["seq"].as_u64().is_some_and(|s| s >= 1);
    while !marker(&state).as_ref().is_some_and(compacted) {
        assert!(start.elapsed() < LIMIT, "no compaction after {LIMIT:?}");
        assert!(
            child.try_wait().unwrap().is_none(),
            "ended before a compaction"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before: BTreeSet<String> = logged(&log).into_keys().collect();
    assert!(before.len() < expected.len(), "killed before the end");

    // The marker names run 0's bases (a later compaction the kill cut
    // may have left others) and where in each journal they end.
    let marker = marker(&state).unwrap();
    assert_eq!(marker["run"], 0);
    let seq = marker["seq"].as_u64().unwrap();
    let from: Vec<u64> = marker["from"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_u64().unwrap())
        .collect();
    assert_eq!(from.len(), 2);
    for (shard, from) in from.iter().enumerate() {
        let shard_dir = state.join(format!("shard-{shard}"));
        assert!(shard_dir.join(format!("base-000000-{seq:06}.bin")).exists());
        let journal = std::fs::metadata(shard_dir.join("journal-000000.bin")).unwrap();
        assert!(journal.len() >= *from);
    }
    // The prefix the bases cover is not read again: spoilt, it would stop
    // the resume as damage before the end of a journal.
    let (shard, covered) = from
        .iter()
        .enumerate()
        .max_by_key(|(_, f)| **f)
        .map(|(s, f)| (s, *f))
        .unwrap();
    assert!(covered > 0, "{marker}");
    let journal = state.join(format!("shard-{shard}/journal-000000.bin"));
    let mut bytes = std::fs::read(&journal).unwrap();
    for b in bytes.iter_mut().take(covered as usize) {
        *b = 0xA5;
    }
    std::fs::write(&journal, bytes).unwrap();

    let (code, stderr) = wait(ringcrawl(&[
        "--resume".to_string(),
        state.display().to_string(),
        "-q".into(),
    ]));
    assert_eq!(code, Some(0), "{stderr}");
    assert_one_record_each(&log, &expected);
    assert_fetched_once(&site, &before);
    // Run 1's own compaction replaced run 0's files.
    assert_eq!(crate::compaction::marker(&state).unwrap()["run"], 1);
    std::fs::remove_dir_all(&dir).unwrap();
}
