use super::manifest::*;
use super::*;
use crate::web::scope::ScopeMode;

/// A fresh, empty path under the temp dir for one test.
fn temp(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("ringcrawl-state-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&path);
    path
}

fn manifest(shards: usize) -> Manifest {
    Manifest::new(
        vec!["http://a.test/".into()],
        ScopeSettings {
            mode: ScopeMode::Lenient,
            exclude: Some("/private/".into()),
            include: Vec::new(),
            no_parent: false,
        },
        shards,
        OutputPaths {
            jsonl: Some("pages.jsonl".into()),
            warc: Some(WarcOutput {
                dir: "warc".into(),
                prefix: "ringcrawl-20250101000000-42".into(),
            }),
            cdxj: None,
        },
    )
    .unwrap()
}

/// Outputs inside the state directory are kept relative to it: a copy
/// of the directory resumes into its own files, not the original's; an
/// output outside stays where it is for both.
#[test]
fn a_copied_directory_names_its_own_outputs_inside_it_and_the_same_ones_outside() {
    let path = std::path::absolute(temp("copy-original")).unwrap();
    let copy = std::path::absolute(temp("copy-copied")).unwrap();
    let outside = std::env::temp_dir().join("ringcrawl-elsewhere.cdxj");
    let made = Manifest {
        outputs: OutputPaths {
            jsonl: Some(path.join("records.jsonl")),
            warc: Some(WarcOutput {
                dir: path.join("warc"),
                prefix: "p".into(),
            }),
            cdxj: Some(outside.clone()),
        },
        ..manifest(1)
    };
    drop(StateDir::create(&path, &made).unwrap());
    let text = fs::read_to_string(path.join("manifest.json")).unwrap();
    assert!(text.contains("\"jsonl\": \"records.jsonl\""), "{text}");
    let (_, read, _) = StateDir::open(&path).unwrap();
    assert_eq!(read, made, "read back as it was made");
    fs::create_dir_all(&copy).unwrap();
    fs::copy(path.join("manifest.json"), copy.join("manifest.json")).unwrap();
    let (_, copied, _) = StateDir::open(&copy).unwrap();
    assert_eq!(copied.outputs.jsonl, Some(copy.join("records.jsonl")));
    assert_eq!(copied.outputs.warc.unwrap().dir, copy.join("warc"));
    assert_eq!(copied.outputs.cdxj, Some(outside), "outside: the same file");
    fs::remove_dir_all(&path).unwrap();
    fs::remove_dir_all(&copy).unwrap();
}

#[test]
fn a_created_directory_opens_again_with_its_manifest_and_no_checkpoint_yet() {
    let path = temp("roundtrip");
    let made = manifest(3);
    let dir = StateDir::create(&path, &made).unwrap();
    for shard in 0..3 {
        assert!(dir.shard_dir(shard).is_dir(), "shard-{shard} is made");
    }
    drop(dir);
    let (dir, read, checkpoint) = StateDir::open(&path).unwrap();
    assert_eq!(read, made);
    assert_eq!(read.format, FORMAT);
    assert_eq!(read.scope.mode, ScopeMode::Lenient);
    assert!(checkpoint.is_none());
    assert_eq!(dir.shard_dir(2), path.join("shard-2"));
    // Readable by people and jq: the key as hex, the mode as a word.
    let text = fs::read_to_string(path.join("manifest.json")).unwrap();
    assert!(text.contains("\"mode\": \"lenient\""), "{text}");
    let key = serde_json::to_string(&made.fingerprint_key).unwrap();
    assert!(
        text.contains(&format!("\"fingerprint_key\": {key}")),
        "{text}"
    );
    fs::remove_dir_all(&path).unwrap();
}

#[test]
fn output_paths_are_kept_absolute_so_a_resume_may_run_from_elsewhere() {
    let made = manifest(1);
    let jsonl = made.outputs.jsonl.as_ref().unwrap();
    assert!(jsonl.is_absolute() && jsonl.ends_with("pages.jsonl"));
    assert!(made.outputs.warc.as_ref().unwrap().dir.is_absolute());
}

#[test]
fn each_crawl_draws_its_own_fingerprint_key() {
    let a = manifest(1).fingerprint_key;
    let b = manifest(1).fingerprint_key;
    assert_ne!(a, b);
    assert_ne!(a.halves(), (0, 0));
    let json = serde_json::to_string(&a).unwrap();
    assert_eq!(json.len(), 34, "32 hex digits in quotes: {json}");
    assert_eq!(serde_json::from_str::<FingerprintKey>(&json).unwrap(), a);
    assert!(serde_json::from_str::<FingerprintKey>("\"00\"").is_err());
    assert!(serde_json::from_str::<FingerprintKey>(&format!("\"{}\"", "g".repeat(32))).is_err());
    assert!(serde_json::from_str::<FingerprintKey>(&format!("\"{}\"", "é".repeat(16))).is_err());
}

#[test]
fn a_directory_that_holds_a_crawl_is_not_created_again() {
    let path = temp("exists");
    drop(StateDir::create(&path, &manifest(1)).unwrap());
    let err = StateDir::create(&path, &manifest(1)).unwrap_err();
    assert!(matches!(err, StateError::Exists { .. }), "{err}");
    assert!(err.to_string().contains("already holds a crawl"), "{err}");
    fs::remove_dir_all(&path).unwrap();
}

#[test]
fn a_directory_left_without_a_manifest_is_taken_over_by_create() {
    let path = temp("half-made");
    fs::create_dir_all(path.join("shard-0")).unwrap();
    fs::write(path.join("lock"), "999999\n").unwrap();
    StateDir::create(&path, &manifest(2)).unwrap();
    assert!(path.join("shard-1").is_dir());
    fs::remove_dir_all(&path).unwrap();
}

#[test]
fn a_second_user_of_the_directory_is_refused_and_told_the_holders_pid() {
    let path = temp("locked");
    let held = StateDir::create(&path, &manifest(1)).unwrap();
    // flock locks belong to an open file: a second open in this process
    // is refused as another process would be.
    let err = StateDir::open(&path).unwrap_err();
    match &err {
        StateError::Locked { pid, .. } => assert_eq!(*pid, Some(std::process::id())),
        other => panic!("{other}"),
    }
    let message = err.to_string();
    assert!(
        message.contains(&format!("PID {}", std::process::id())) && message.contains("in use"),
        "{message}"
    );
    assert!(matches!(
        StateDir::create(&path, &manifest(1)).unwrap_err(),
        StateError::Locked { .. }
    ));
    drop(held);
    StateDir::open(&path).expect("the lock goes with its holder");
    fs::remove_dir_all(&path).unwrap();
}

#[test]
fn a_lock_left_by_a_killed_process_does_not_keep_the_directory() {
    let path = temp("stale-lock");
    drop(StateDir::create(&path, &manifest(1)).unwrap());
    // A kill -9 leaves the PID in the file; the kernel drops the flock.
    fs::write(path.join("lock"), "4194304\n").unwrap();
    StateDir::open(&path).unwrap();
    let pid = fs::read_to_string(path.join("lock")).unwrap();
    assert_eq!(pid.trim(), std::process::id().to_string());
    fs::remove_dir_all(&path).unwrap();
}

#[test]
fn a_directory_without_a_crawl_does_not_open() {
    let path = temp("none");
    let err = StateDir::open(&path).unwrap_err();
    assert!(matches!(err, StateError::NoCrawl { .. }), "{err}");
    fs::create_dir_all(&path).unwrap();
    let err = StateDir::open(&path).unwrap_err();
    assert!(err.to_string().contains("holds no crawl state"), "{err}");
    fs::remove_dir_all(&path).unwrap();
}

#[test]
fn a_directory_of_another_format_is_refused_by_its_version() {
    let path = temp("format");
    drop(StateDir::create(&path, &manifest(1)).unwrap());
    fs::write(
        path.join("manifest.json"),
        r#"{"format": 2, "whatever": "a later layout"}"#,
    )
    .unwrap();
    let err = StateDir::open(&path).unwrap_err();
    assert!(matches!(err, StateError::Format { found: 2, .. }), "{err}");
    fs::write(path.join("manifest.json"), "{\"format\": 1, \"roo").unwrap();
    let err = StateDir::open(&path).unwrap_err();
    assert!(matches!(err, StateError::Corrupt { .. }), "{err}");
    fs::remove_dir_all(&path).unwrap();
}

fn checkpoint(seq: u64) -> Checkpoint {
    Checkpoint {
        seq,
        taken: "2025-01-01T00:00:00.000Z".into(),
        elapsed_ms: 60_000 * seq,
        spent: Spent {
            pages: 100 * seq,
            bytes: 1 << 20,
        },
        counters: [("urls".to_string(), 100 * seq)].into_iter().collect(),
    }
}

#[test]
fn the_last_checkpoint_written_is_the_one_a_resume_reads() {
    let path = temp("checkpoint");
    let dir = StateDir::create(&path, &manifest(1)).unwrap();
    dir.write_checkpoint(&checkpoint(1)).unwrap();
    dir.write_checkpoint(&checkpoint(2)).unwrap();
    assert!(!path.join("checkpoint.json.tmp").exists());
    drop(dir);
    let (_dir, _, read) = StateDir::open(&path).unwrap();
    assert_eq!(read, Some(checkpoint(2)));
    fs::remove_dir_all(&path).unwrap();
}

#[test]
fn a_checkpoint_torn_while_it_was_written_leaves_the_one_before() {
    let path = temp("torn-checkpoint");
    let dir = StateDir::create(&path, &manifest(1)).unwrap();
    dir.write_checkpoint(&checkpoint(1)).unwrap();
    drop(dir);
    // Killed between writing the new one and its rename.
    fs::write(path.join("checkpoint.json.tmp"), "{\"seq\": 2, \"ta").unwrap();
    let (_dir, _, read) = StateDir::open(&path).unwrap();
    assert_eq!(read, Some(checkpoint(1)));
    assert!(
        !path.join("checkpoint.json.tmp").exists(),
        "the torn one goes"
    );
    fs::remove_dir_all(&path).unwrap();
}

#[test]
fn a_scope_mismatch_is_said_in_words_one_difference_at_a_time() {
    let then = manifest(1).scope;
    assert!(then.differences(&then).is_empty());
    let now = ScopeSettings {
        mode: ScopeMode::Strict,
        exclude: None,
        include: vec!["/docs/".into()],
        no_parent: true,
    };
    let words = then.differences(&now);
    assert_eq!(
        words,
        vec![
            "the crawl is --lenient, this run --strict",
            "the crawl's --exclude is \"/private/\", this run's none",
            "the crawl's --include is none, this run's \"/docs/\"",
            "the crawl has --no-parent off, this run on",
        ]
    );
    for phrase in &words {
        assert!(
            !phrase.contains("Some(") && !phrase.contains("Strict"),
            "{phrase}"
        );
    }
}

#[test]
fn a_manifest_made_before_include_and_no_parent_reads_without_them() {
    let old = r#"{"mode": "strict", "exclude": null}"#;
    let scope: ScopeSettings = serde_json::from_str(old).unwrap();
    assert!(scope.include.is_empty() && !scope.no_parent);
    let text = serde_json::to_string(&scope).unwrap();
    assert_eq!(text, r#"{"mode":"strict","exclude":null}"#);
}
