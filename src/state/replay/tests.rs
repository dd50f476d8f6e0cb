//! The replay: each journal read once, every job to its owning shard.

use super::*;
use crate::job::chunk;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ringcrawl-replay-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A journal at `path` of `urls`, in chunks of `per` jobs; where each
/// chunk starts.
fn write_journal(path: &std::path::Path, urls: &[String], per: usize) -> Vec<usize> {
    let mut bytes = Vec::new();
    let mut starts = Vec::new();
    for part in urls.chunks(per) {
        starts.push(bytes.len());
        let jobs: Vec<Job> = part.iter().map(|u| Job::root(u.clone(), 3)).collect();
        chunk::encode(&jobs, &mut bytes);
    }
    std::fs::File::create(path)
        .unwrap()
        .write_all(&bytes)
        .unwrap();
    starts
}

/// Files as their checks find them now (damage refused).
fn clean(paths: Vec<PathBuf>) -> Vec<ToReplay> {
    paths
        .into_iter()
        .map(|path| ToReplay {
            from: 0,
            checked: journal::check(&path, false).unwrap(),
            path,
            discard: false,
        })
        .collect()
}

/// Take everything shard `shard` is handed, waiting for the readers.
fn drain(replay: &Replay, shard: usize) -> Result<Vec<String>, String> {
    let mut urls = Vec::new();
    loop {
        match replay.take(shard) {
            Take::Jobs(jobs) => urls.extend(jobs.into_iter().map(|j| j.url)),
            Take::Empty => std::thread::sleep(Duration::from_millis(1)),
            Take::Ended => return Ok(urls),
            Take::Failed(e) => return Err(e),
        }
    }
}

#[test]
fn every_job_of_every_journal_reaches_its_owning_shard_once() {
    let dir = scratch("route");
    let shards = 3;
    let mut all = Vec::new();
    let mut journals = Vec::new();
    for j in 0..6 {
        let urls: Vec<String> = (0..3000)
            .map(|i| format!("http://h{}.test/{j}/{i}", i % 97))
            .collect();
        let path = dir.join(format!("journal-{j}.bin"));
        write_journal(&path, &urls, 37);
        journals.push(path);
        all.extend(urls);
    }
    let replay = Replay::start(clean(journals), shards, None);
    // Shards take in turn, as they would, each a batch at a time.
    let mut got: Vec<Vec<String>> = vec![Vec::new(); shards];
    let mut ended = [false; 3];
    while !ended.iter().all(|e| *e) {
        for (shard, done) in ended.iter_mut().enumerate() {
            match replay.take(shard) {
                Take::Jobs(jobs) => got[shard].extend(jobs.into_iter().map(|j| j.url)),
                Take::Empty => std::thread::sleep(Duration::from_micros(100)),
                Take::Ended => *done = true,
                Take::Failed(e) => panic!("{e}"),
            }
        }
    }
    let mut seen = BTreeSet::new();
    for (shard, urls) in got.iter().enumerate() {
        for url in urls {
            assert_eq!(shard_for(urls::host_of(url), shards), shard, "{url}");
            assert!(seen.insert(url.clone()), "{url} twice");
        }
    }
    assert_eq!(seen.len(), all.len());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_shard_that_gives_up_holds_no_reader_back_and_a_missing_journal_fails_every_shard() {
    let dir = scratch("abandon");
    let urls: Vec<String> = (0..50_000)
        .map(|i| format!("http://h{}.test/{i}", i % 13))
        .collect();
    let path = dir.join("journal-0.bin");
    write_journal(&path, &urls, 500);
    let replay = Replay::start(clean(vec![path.clone()]), 2, None);
    replay.abandon(1);
    let mine = drain(&replay, 0).unwrap();
    let expected = urls
        .iter()
        .filter(|u| shard_for(urls::host_of(u), 2) == 0)
        .count();
    assert_eq!(mine.len(), expected);
    assert!(matches!(replay.take(1), Take::Ended));

    // Gone since its check.
    let missing = dir.join("journal-9.bin");
    let mut files = clean(vec![path.clone(), path]);
    files[1].path = missing.clone();
    let replay = Replay::start(files, 2, None);
    for shard in 0..2 {
        let e = drain(&replay, shard).unwrap_err();
        assert!(e.contains(&missing.display().to_string()), "{e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn no_journal_ends_at_once_and_a_dropped_replay_stops_its_readers() {
    let replay = Replay::start(Vec::new(), 2, None);
    assert!(matches!(replay.take(0), Take::Ended));
    let dir = scratch("dropped");
    let urls: Vec<String> = (0..100_000).map(|i| format!("http://a.test/{i}")).collect();
    let path = dir.join("journal-0.bin");
    write_journal(&path, &urls, 1000);
    let replay = Replay::start(clean(vec![path]), 1, None);
    let shared = replay.shared.clone();
    drop(replay);
    let started = std::time::Instant::now();
    while shared.readers.load(Ordering::Acquire) > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "a reader waits on"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn damage_a_check_did_not_accept_stops_the_replay_naming_the_file_and_accepted_damage_does_not() {
    let dir = scratch("damaged-since");
    let urls: Vec<String> = (0..1000).map(|i| format!("http://a.test/{i}")).collect();
    let path = dir.join("journal-0.bin");
    let starts = write_journal(&path, &urls, 100);
    let checked = clean(vec![path.clone()]);
    // A byte of the sixth chunk, as a disk may lose it after
    // a resume checked the file.
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[starts[5] + 20] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();

    let e = drain(&Replay::start(checked.clone(), 1, None), 0).unwrap_err();
    assert!(e.contains(&path.display().to_string()), "{e}");
    assert!(e.contains("--resume-discard-damaged"), "{e}");
    assert!(
        e.contains(&format!("at byte {} ", starts[5])),
        "names where the new damage starts: {e}"
    );

    // Accepted by a check after it (with the flag), it is not refused
    // again.
    let accepted = vec![ToReplay {
        from: 0,
        path: path.clone(),
        checked: journal::check(&path, true).unwrap(),
        discard: false,
    }];
    let urls = drain(&Replay::start(accepted.clone(), 1, None), 0).unwrap();
    assert_eq!(urls.len(), 900, "one chunk of 100 lost, the rest replayed");

    // New damage after accepted damage, or before it: named where it
    // starts, not where the accepted one does.
    for chunk in [8, 2] {
        let mut again = bytes.clone();
        again[starts[chunk] + 20] ^= 0xff;
        std::fs::write(&path, &again).unwrap();
        let e = drain(&Replay::start(accepted.clone(), 1, None), 0).unwrap_err();
        assert!(e.contains(&format!("at byte {} ", starts[chunk])), "{e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_last_chunk_damaged_since_its_check_stops_the_replay_where_a_kills_tear_does_not() {
    let dir = scratch("last-since");
    let urls: Vec<String> = (0..1000).map(|i| format!("http://a.test/{i}")).collect();
    let (path, torn) = (dir.join("journal-0.bin"), dir.join("journal-1.bin"));
    let starts = write_journal(&path, &urls, 100);
    // A kill's tear, there at the check: replayed up to it.
    let mut bytes = std::fs::read(&path).unwrap();
    std::fs::write(&torn, &bytes[..bytes.len() - 7]).unwrap();
    let checked = clean(vec![path.clone(), torn.clone()]);
    let last_chunk = bytes.len() - starts[9];
    assert_eq!(checked[1].checked.torn, last_chunk as u64 - 7);
    // The whole file's last chunk damaged after the check: without its
    // check's counts it would read as a tear, and its URLs go silently.
    let last = bytes.len() - 5;
    bytes[last] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let e = drain(&Replay::start(checked.clone(), 1, None), 0).unwrap_err();
    assert!(e.contains(&path.display().to_string()), "{e}");
    assert!(e.contains("then 10 whole chunks"), "{e}");
    let tear = drain(&Replay::start(checked[1..].to_vec(), 1, None), 0).unwrap();
    assert_eq!(tear.len(), 900, "the tear there at the check is no damage");
    let discard: Vec<ToReplay> = checked
        .into_iter()
        .map(|file| ToReplay {
            discard: true,
            ..file
        })
        .collect();
    let urls = drain(&Replay::start(discard, 1, None), 0).unwrap();
    assert_eq!(
        urls.len(),
        900 + 900,
        "the loss accepted: each file's last chunk gone"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
