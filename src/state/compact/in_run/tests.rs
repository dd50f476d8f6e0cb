//! In-run compaction: a kill after any step resumes to the same URLs, the
//! bases keep discovery order, and the sort's chunk bounds its memory.

use std::collections::{BTreeSet, HashSet};

use super::super::{marked, remove_unmarked_bases};
use super::*;

const KEY: [u64; 2] = [7, 11];

fn scratch(name: &str) -> (PathBuf, Vec<PathBuf>) {
    let dir = std::env::temp_dir().join(format!("ringcrawl-in-run-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let shards: Vec<PathBuf> = (0..2).map(|i| dir.join(format!("shard-{i}"))).collect();
    for shard in &shards {
        fs::create_dir_all(shard).unwrap();
    }
    (dir, shards)
}

fn url(host: usize, page: usize) -> String {
    format!("http://h{host}.test/{page}")
}

/// Append a chunk of `urls` to `path`: the length after it.
fn append(path: &Path, urls: &[String]) -> u64 {
    let jobs: Vec<Job> = urls.iter().map(|u| Job::root(u.clone(), 3)).collect();
    let mut bytes = Vec::new();
    chunk::encode(&jobs, &mut bytes);
    let mut file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    file.write_all(&bytes).unwrap();
    file.metadata().unwrap().len()
}

/// Mark `urls` done: their fingerprints into their owners' `done.fp`.
fn mark_done(shards: &[PathBuf], urls: &[String]) {
    let fingerprinter = Fingerprinter::new(KEY);
    for url in urls {
        let owner = shard_for(urls::host_of(url), shards.len());
        let mut file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(done::fingerprint_file(&shards[owner]))
            .unwrap();
        file.write_all(&fingerprinter.fingerprint(url).to_le_bytes())
            .unwrap();
    }
}

fn done_lengths(shards: &[PathBuf]) -> Vec<u64> {
    shards
        .iter()
        .map(|s| fs::metadata(done::fingerprint_file(s)).map_or(0, |m| m.len()))
        .collect()
}

/// Every URL of a file read from `from` on.
fn urls_of(path: &Path, from: u64) -> Vec<String> {
    let mut reader = Reader::open_from(path, from).unwrap();
    let mut urls = Vec::new();
    while let Some(jobs) = reader.next_chunk().unwrap() {
        urls.extend(jobs.into_iter().map(|j| j.url));
    }
    urls
}

/// What a resume of the state in `dir` would queue, as the session
/// reads it: the files the marker covers removed (or the bases no marker
/// names), the marker's bases, every journal (the marker's run's from
/// where its bases end), minus the done fingerprints.
fn resumable(dir: &Path, shards: &[PathBuf]) -> BTreeSet<String> {
    let marker = marked(dir).unwrap();
    match &marker {
        Some(m) => {
            remove_covered(shards, m.run, m.seq).unwrap();
        }
        None => remove_unmarked_bases(shards).unwrap(),
    }
    let fingerprinter = Fingerprinter::new(KEY);
    let mut done = HashSet::new();
    for shard in shards {
        if let Ok(bytes) = fs::read(done::fingerprint_file(shard)) {
            for word in bytes.chunks_exact(8) {
                done.insert(u64::from_le_bytes(word.try_into().unwrap()));
            }
        }
    }
    let mut urls = BTreeSet::new();
    for (i, shard) in shards.iter().enumerate() {
        if let Some(m) = &marker {
            urls.extend(urls_of(&m.base(shard), 0));
        }
        for run in journal::runs(shard).unwrap() {
            let from = match &marker {
                Some(m) if m.run == run => m.from(i),
                _ => 0,
            };
            urls.extend(urls_of(&journal::path(shard, run), from));
        }
    }
    urls.retain(|u| !done.contains(&fingerprinter.fingerprint(u)));
    urls
}

/// A run-0 state: each shard's journal holds URLs of both shards'
/// hosts, some found by both, some done; shard 1's last chunk is not yet
/// synced (past the length the compaction is given). The synced lengths.
fn crawl_so_far(shards: &[PathBuf]) -> Vec<u64> {
    let mut synced = Vec::new();
    for (s, shard) in shards.iter().enumerate() {
        let path = journal::path(shard, 0);
        let mut len = 0;
        for c in 0..3 {
            let urls: Vec<String> = (0..10).map(|p| url(p % 4, c * 10 + p + s * 5)).collect();
            len = append(&path, &urls);
        }
        synced.push(len);
    }
    let last = append(&journal::path(&shards[1], 0), &[url(9, 1), url(2, 99)]);
    assert!(last > synced[1]);
    let done: Vec<String> = (0..40).step_by(3).map(|p| url(p % 4, p)).collect();
    mark_done(shards, &done);
    synced
}

#[test]
fn an_in_run_compaction_killed_after_any_step_resumes_to_the_same_urls() {
    for stop in 0..=4 {
        let (dir, shards) = scratch(&format!("steps-{stop}"));
        let synced = crawl_so_far(&shards);
        let expected = {
            // What the state resumes to before any compaction.
            let (copy, copies) = scratch(&format!("steps-{stop}-before"));
            crawl_so_far(&copies);
            let urls = resumable(&copy, &copies);
            fs::remove_dir_all(&copy).unwrap();
            urls
        };
        assert!(expected.len() > 20, "{expected:?}");
        let in_run = InRun::new(0, 2, false).with_limits(0, 4);
        let plan = in_run.plan(&dir, &shards, KEY, synced.clone(), done_lengths(&shards));
        if stop >= 1 {
            let (mut survivors, _, _) = plan.survivors().unwrap();
            if stop >= 2 {
                plan.write_bases(&mut survivors).unwrap();
            }
        }
        if stop >= 3 {
            plan.mark().unwrap();
        }
        if stop >= 4 {
            plan.remove_covered().unwrap();
        }
        assert_eq!(
            resumable(&dir, &shards),
            expected,
            "stopped after step {stop}"
        );
        let marker = marked(&dir).unwrap();
        match stop {
            0..=2 => assert_eq!(marker, None),
            _ => assert_eq!(
                marker,
                Some(Marker {
                    run: 0,
                    seq: 1,
                    from: synced.clone()
                })
            ),
        }
        fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn a_second_compaction_reads_the_last_base_and_the_journal_past_it_and_keeps_discovery_order() {
    let (dir, shards) = scratch("twice");
    let synced = crawl_so_far(&shards);
    let mut in_run = InRun::new(0, 2, false).with_limits(0, 3);
    let plan = in_run.plan(&dir, &shards, KEY, synced.clone(), done_lengths(&shards));
    let first = in_run.compact(plan).unwrap();
    assert_eq!(first.seq, 1);
    assert!(first.most_held <= 3, "{first:?}");
    let expected = {
        let (copy, copies) = scratch("twice-before");
        crawl_so_far(&copies);
        let urls = resumable(&copy, &copies);
        fs::remove_dir_all(&copy).unwrap();
        urls
    };
    // Each URL once; the two of shard 1's chunk not yet synced are not in.
    assert_eq!(first.kept as usize + 2, expected.len());
    // Each base: its owner's URLs, in the order first found (the bases
    // are read first, then shard 0's journal, then shard 1's).
    let fingerprinter = Fingerprinter::new(KEY);
    let done: HashSet<u64> = (0..40)
        .step_by(3)
        .map(|p| fingerprinter.fingerprint(&url(p % 4, p)))
        .collect();
    for (owner, shard) in shards.iter().enumerate() {
        let mut order = Vec::new();
        for (s, other) in shards.iter().enumerate() {
            let synced_part = {
                let mut reader =
                    Reader::open_range(&journal::path(other, 0), 0, synced[s]).unwrap();
                let mut urls = Vec::new();
                while let Some(jobs) = reader.next_chunk().unwrap() {
                    urls.extend(jobs.into_iter().map(|j| j.url));
                }
                urls
            };
            for u in synced_part {
                let mine = shard_for(urls::host_of(&u), 2) == owner;
                if mine && !done.contains(&fingerprinter.fingerprint(&u)) && !order.contains(&u) {
                    order.push(u);
                }
            }
        }
        assert_eq!(
            urls_of(&base_path_seq(shard, 0, 1), 0),
            order,
            "shard {owner}"
        );
    }
    // The crawl goes on: more found, more done; the next compaction
    // covers the first's base and the journals past it.
    let mut synced2 = Vec::new();
    for shard in &shards {
        synced2.push(append(
            &journal::path(shard, 0),
            &[url(5, 1), url(6, 2), url(1, 3)],
        ));
    }
    mark_done(&shards, &[url(1, 3), url(0, 1)]);
    let expected = {
        let mut urls = expected;
        urls.extend([url(5, 1), url(6, 2), url(9, 1), url(2, 99)]);
        urls.remove(&url(1, 3));
        urls.remove(&url(0, 1));
        urls
    };
    let plan = in_run.plan(&dir, &shards, KEY, synced2.clone(), done_lengths(&shards));
    let second = in_run.compact(plan).unwrap();
    assert_eq!(second.seq, 2);
    for shard in &shards {
        assert!(
            !base_path_seq(shard, 0, 1).exists(),
            "the first base is gone"
        );
        assert!(base_path_seq(shard, 0, 2).exists());
    }
    assert_eq!(
        marked(&dir).unwrap(),
        Some(Marker {
            run: 0,
            seq: 2,
            from: synced2
        })
    );
    assert_eq!(resumable(&dir, &shards), expected);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_tiny_sort_chunk_writes_the_same_bases_holding_no_more_than_the_chunk() {
    let mut written = Vec::new();
    for chunk in [1, 2, CHUNK] {
        let (dir, shards) = scratch(&format!("chunk-{chunk}"));
        let synced = crawl_so_far(&shards);
        let mut in_run = InRun::new(0, 2, false).with_limits(0, chunk);
        let plan = in_run.plan(&dir, &shards, KEY, synced, done_lengths(&shards));
        let done = in_run.compact(plan).unwrap();
        assert!(done.most_held <= chunk, "{done:?}");
        let bases: Vec<Vec<u8>> = shards
            .iter()
            .map(|s| fs::read(base_path_seq(s, 0, 1)).unwrap())
            .collect();
        written.push(bases);
        assert!(
            !dir.join(SCRATCH).exists(),
            "the sort's scratch folder is removed"
        );
        fs::remove_dir_all(&dir).unwrap();
    }
    assert_eq!(written[0], written[2]);
    assert_eq!(written[1], written[2]);
}

#[test]
fn a_compaction_waits_for_the_journals_to_outgrow_the_base_twice() {
    let (dir, shards) = scratch("due");
    let mut in_run = InRun::new(0, 2, false).with_limits(100, 4);
    assert!(!in_run.due(&shards, &[40, 59]), "below the minimum");
    assert!(in_run.due(&shards, &[40, 60]));
    for shard in &shards {
        fs::write(base_path_seq(shard, 0, 1), vec![0u8; 100]).unwrap();
    }
    in_run.seq = 1;
    in_run.based = true;
    in_run.base_bytes = None;
    in_run.from = vec![1000, 1000];
    // 200 bytes of bases: past 400 uncovered bytes.
    assert!(!in_run.due(&shards, &[1200, 1200]));
    assert!(in_run.due(&shards, &[1200, 1201]));
    in_run.failed = true;
    assert!(!in_run.due(&shards, &[5000, 5000]), "not after a failure");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_damaged_journal_prefix_means_no_compaction_and_nothing_changed() {
    let (dir, shards) = scratch("damaged");
    let mut synced = crawl_so_far(&shards);
    let expected = resumable(&dir, &shards);
    // Said synced past the file's end.
    synced[0] += 100;
    let mut in_run = InRun::new(0, 2, false).with_limits(0, 4);
    let plan = in_run.plan(&dir, &shards, KEY, synced, done_lengths(&shards));
    assert!(matches!(in_run.compact(plan), Err(StateError::Damaged(_))));
    assert!(in_run.failed);
    assert_eq!(marked(&dir).unwrap(), None);
    assert_eq!(resumable(&dir, &shards), expected);
    assert_no_leftovers(&dir, &shards);
    fs::remove_dir_all(&dir).unwrap();
}

/// Neither the sort's scratch folder nor a base no marker names is
/// left: a failed or stopped compaction holds no disk for the rest of
/// the run.
fn assert_no_leftovers(dir: &Path, shards: &[PathBuf]) {
    assert!(
        !dir.join(SCRATCH).exists(),
        "the sort's scratch folder is gone"
    );
    for shard in shards {
        assert!(!base_path_seq(shard, 0, 1).exists(), "no unnamed base");
    }
}

#[test]
fn a_compaction_the_crawls_end_stops_gives_up_and_leaves_nothing() {
    let (dir, shards) = scratch("stopped");
    let synced = crawl_so_far(&shards);
    let expected = resumable(&dir, &shards);
    let mut in_run = InRun::new(0, 2, false).with_limits(0, 4);
    let plan = in_run.plan(&dir, &shards, KEY, synced, done_lengths(&shards));
    in_run.stop.store(true, Ordering::Relaxed);
    let stopped = in_run.compact(plan);
    assert!(
        matches!(&stopped, Err(StateError::Io { source, .. }) if source.kind() == std::io::ErrorKind::Interrupted),
        "{stopped:?}"
    );
    assert!(!in_run.failed, "a stop is no failure");
    assert_eq!(marked(&dir).unwrap(), None);
    assert_eq!(resumable(&dir, &shards), expected);
    assert_no_leftovers(&dir, &shards);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_old_marker_reads_as_the_runs_replay_bases_from_the_start() {
    let (dir, shards) = scratch("old-marker");
    fs::write(dir.join(MARKER), br#"{"run":3}"#).unwrap();
    let marker = marked(&dir).unwrap().unwrap();
    assert_eq!((marker.run, marker.seq, marker.from(1)), (3, 0, 0));
    assert_eq!(marker.base(&shards[0]), shards[0].join("base-000003.bin"));
    // The replay's compaction still writes the old form.
    let json = serde_json::to_string(&Marker {
        run: 3,
        seq: 0,
        from: Vec::new(),
    })
    .unwrap();
    assert_eq!(json, r#"{"run":3}"#);
    fs::remove_dir_all(&dir).unwrap();
}

/// Blocks the file `path` holds on disk, in bytes.
fn allocated(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    fs::metadata(path).unwrap().blocks() * 512
}

#[test]
fn a_compaction_frees_the_journal_prefix_it_covers_and_a_resume_reads_the_same_urls() {
    let (dir, shards) = scratch("freed");
    // Some 100 KiB of journal a shard, most of it done.
    let mut synced = Vec::new();
    for (s, shard) in shards.iter().enumerate() {
        let path = journal::path(shard, 0);
        let mut len = 0;
        for c in 0..300 {
            let urls: Vec<String> = (0..10).map(|p| url(p % 4, c * 10 + p + s)).collect();
            len = append(&path, &urls);
        }
        fs::File::open(&path).unwrap().sync_all().unwrap();
        synced.push(len);
    }
    let done: Vec<String> = (0..2900).map(|p| url(p % 4, p)).collect();
    mark_done(&shards, &done);
    let before: Vec<u64> = shards
        .iter()
        .map(|s| allocated(&journal::path(s, 0)))
        .collect();
    let expected = {
        let (copy, copies) = scratch("freed-before");
        for (shard, copied) in shards.iter().zip(&copies) {
            for name in ["journal-000000.bin", "done.fp"] {
                fs::copy(shard.join(name), copied.join(name)).unwrap();
            }
        }
        let urls = resumable(&copy, &copies);
        fs::remove_dir_all(&copy).unwrap();
        urls
    };
    assert!(!expected.is_empty());

    let mut in_run = InRun::new(0, 2, false).with_limits(0, 1024);
    let plan = in_run.plan(&dir, &shards, KEY, synced.clone(), done_lengths(&shards));
    in_run.compact(plan).unwrap();
    for (s, shard) in shards.iter().enumerate() {
        let path = journal::path(shard, 0);
        // The length stays; the blocks before the marker's `from` are
        // gone, unless this file system cannot punch holes (then nothing
        // changed at all).
        assert_eq!(fs::metadata(&path).unwrap().len(), synced[s]);
        let bytes = fs::read(&path).unwrap();
        let freed = (synced[s] - synced[s] % 4096) as usize;
        if bytes[..freed].iter().all(|b| *b == 0) {
            assert!(
                allocated(&path) + freed as u64 <= before[s] + 4096,
                "shard {s}: {} bytes allocated after, {} before",
                allocated(&path),
                before[s]
            );
        } else {
            let mode = rustix::fs::FallocateFlags::PUNCH_HOLE;
            let file = fs::OpenOptions::new().write(true).open(&path).unwrap();
            let punch =
                rustix::fs::fallocate(&file, mode | rustix::fs::FallocateFlags::KEEP_SIZE, 0, 4096);
            assert_eq!(
                punch,
                Err(rustix::io::Errno::OPNOTSUPP),
                "shard {s}: not freed"
            );
        }
    }
    // A resume reads the bases and the journals past the freed prefix: the
    // same URLs, and the journals grow on after it.
    for shard in &shards {
        append(&journal::path(shard, 0), &[url(7, 1)]);
    }
    let mut expected = expected;
    expected.insert(url(7, 1));
    assert_eq!(resumable(&dir, &shards), expected);
    fs::remove_dir_all(&dir).unwrap();
}
