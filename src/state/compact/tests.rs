//! The marker and what it covers.

use super::*;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ringcrawl-compact-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn touch(dir: &Path, names: &[&str]) {
    for name in names {
        fs::write(dir.join(name), b"").unwrap();
    }
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn the_marker_is_written_only_once_every_shard_is_in_and_then_covers_the_runs_before() {
    let dir = scratch("marker");
    let shards: Vec<PathBuf> = (0..2).map(|i| dir.join(format!("shard-{i}"))).collect();
    for shard in &shards {
        fs::create_dir_all(shard).unwrap();
        touch(
            shard,
            &[
                "journal-000000.bin",
                "journal-000002.bin",
                "base-000001.bin",
                "base-000002.bin",
            ],
        );
    }
    assert_eq!(marker(&dir).unwrap(), None);
    let compaction = Compaction::new(2, &shards);
    assert_eq!(
        compaction.base(1),
        Some(shards[1].join("base-000002.bin").as_path())
    );
    compaction.replayed();
    compaction.replayed();
    assert!(compaction.all_replayed());
    compaction.synced();
    assert_eq!(
        compaction.compact(&dir).unwrap(),
        None,
        "one shard not in yet"
    );
    assert_eq!(marker(&dir).unwrap(), None);
    compaction.synced();
    assert_eq!(compaction.compact(&dir).unwrap(), Some(4));
    assert_eq!(marker(&dir).unwrap(), Some(2));
    for shard in &shards {
        assert_eq!(listing(shard), ["base-000002.bin", "journal-000002.bin"]);
    }
    assert_eq!(compaction.compact(&dir).unwrap(), None, "once");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_shard_that_gives_up_means_no_marker_and_unmarked_bases_go() {
    let dir = scratch("given-up");
    let shard = dir.join("shard-0");
    fs::create_dir_all(&shard).unwrap();
    touch(&shard, &["journal-000000.bin", "base-000001.bin"]);
    let compaction = Compaction::new(1, std::slice::from_ref(&shard));
    compaction.replayed();
    compaction.give_up();
    compaction.synced();
    assert_eq!(compaction.compact(&dir).unwrap(), None);
    remove_unmarked_bases(std::slice::from_ref(&shard)).unwrap();
    assert_eq!(listing(&shard), ["journal-000000.bin"]);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_torn_marker_is_removed_and_a_damaged_one_is_an_error_naming_it() {
    let dir = scratch("damaged");
    fs::write(dir.join("compacted.json.tmp"), b"{\"ru").unwrap();
    assert_eq!(marker(&dir).unwrap(), None);
    assert!(!dir.join("compacted.json.tmp").exists());
    fs::write(dir.join("compacted.json"), br#"{"run":7}"#).unwrap();
    assert_eq!(marker(&dir).unwrap(), Some(7));
    for bad in [&b"{\"run\": -1}"[..], b"", b"\xff\x00"] {
        fs::write(dir.join("compacted.json"), bad).unwrap();
        let e = marker(&dir).unwrap_err().to_string();
        assert!(e.contains("compacted.json"), "{e}");
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_last_run_is_the_most_of_the_journals_the_bases_and_the_marker() {
    let dir = scratch("last-run");
    let shards: Vec<PathBuf> = (0..2).map(|i| dir.join(format!("shard-{i}"))).collect();
    for shard in &shards {
        fs::create_dir_all(shard).unwrap();
    }
    assert_eq!(last_run(&shards, None).unwrap(), None);
    assert_eq!(
        last_run(&shards, Some(4)).unwrap(),
        Some(4),
        "the marker alone"
    );
    touch(&shards[0], &["journal-000002.bin"]);
    assert_eq!(last_run(&shards, None).unwrap(), Some(2));
    // A base of a later run than any journal left (its run's journals
    // empty and gone): the next run is after it.
    touch(&shards[1], &["base-000005.bin"]);
    assert_eq!(last_run(&shards, Some(3)).unwrap(), Some(5));
    touch(&shards[1], &["journal-000007.bin"]);
    assert_eq!(last_run(&shards, Some(5)).unwrap(), Some(7));
    fs::remove_dir_all(&dir).unwrap();
}
