//! What a resume keeps across runs, through the binary: a `--wacz` made at
//! the end of a resume packages every run's WARC files, a killed run's
//! among them, and indexes every page; a resume on another number of cores
//! is refused in one line (exit 2) before anything is touched; a journal
//! one resume checked is not read again by the next, and damage found
//! since still stops the crawl; a run's checkpoints read its log, so its
//! resume reads only what was logged since the last.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::synth::Site;
use crate::resume::{
    assert_one_record_each, cli_crawl, done_json, hit_key, logged, ringcrawl, running_until_logged,
    scratch, wait, LIMIT,
};

/// A crawl with `--wacz`, killed (SIGKILL) a third of the way, then
/// resumed: the package holds both runs' WARC files and its index every
/// page of the site.
#[test]
fn a_wacz_made_at_a_resume_after_a_kill_holds_every_runs_warcs_and_indexes_every_page() {
    let site = Site::with_delay(3_000, 4, 5);
    let expected = site.expected();
    let dir = scratch("wacz-kill");
    let wacz = dir.join("crawl.wacz");
    let wacz_arg = wacz.display().to_string();
    let (state, _warc, log, args) = cli_crawl(&site, &dir, &["--wacz", &wacz_arg]);
    let mut child = ringcrawl(&args);
    if running_until_logged(&mut child, &log, 500) {
        child.kill().unwrap();
    }
    let (code, err) = wait(child);
    assert_ne!(code, Some(0), "killed before the end: {err}");
    assert!(!wacz.exists(), "no package from a killed run");
    let resume = vec![
        "--resume".to_string(),
        state.display().to_string(),
        "-q".into(),
    ];
    let (code, err) = wait(ringcrawl(&resume));
    assert_eq!(code, Some(0), "{err}");

    let mut zip = zip::ZipArchive::new(std::fs::File::open(&wacz).unwrap()).unwrap();
    let names: Vec<String> = (0..zip.len())
        .map(|i| zip.by_index(i).unwrap().name().unwrap().to_string())
        .collect();
    let warcs: Vec<&String> = names.iter().filter(|n| n.ends_with(".warc.gz")).collect();
    let resumed_run = warcs.iter().any(|n| n.contains("-r1-"));
    let first_run = warcs.iter().any(|n| !n.contains("-r1-"));
    assert!(first_run && resumed_run, "both runs' WARC files: {warcs:?}");
    let mut index = String::new();
    std::io::Read::read_to_string(&mut zip.by_name("indexes/index.cdxj").unwrap(), &mut index)
        .unwrap();
    let mut indexed = BTreeSet::new();
    for line in index.lines() {
        let json: serde_json::Value = serde_json::from_str(line.splitn(3, ' ').nth(2).unwrap())
            .unwrap_or_else(|e| panic!("{e}: {line}"));
        let file = json["filename"].as_str().unwrap();
        assert!(
            warcs.iter().any(|w| w.ends_with(file)),
            "indexed in a WARC file the package does not hold: {line}"
        );
        indexed.insert(json["url"].as_str().unwrap().to_string());
    }
    let missing: Vec<_> = expected.difference(&indexed).take(5).collect();
    assert!(
        missing.is_empty(),
        "not in the package's index: {missing:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A run killed before its journal existed may have begun its WARC files:
/// the next resume takes the run number after them, and writes no file
/// over (a WARC file of run 1 planted beside the state, as such a run
/// leaves it, is intact afterwards and the resume's files are run 2's).
#[test]
fn a_resume_writes_over_no_warc_file_of_a_run_that_left_no_journal() {
    let site = Site::new(300, 2);
    let dir = scratch("warc-run");
    let (state, warc, _log, args) = cli_crawl(&site, &dir, &["--max-pages", "100"]);
    let (code, err) = wait(ringcrawl(&args));
    assert_eq!(code, Some(0), "stopped by the budget: {err}");
    // Run 0's files are PREFIX-sS-SEQ.warc.gz.
    let first = std::fs::read_dir(&warc)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|n| n.ends_with("-00000.warc.gz"))
        .expect("run 0's first WARC file");
    let (prefix, shard) = first.rsplit_once("-s").unwrap();
    let planted = warc.join(format!("{prefix}-r1-s{shard}"));
    // Whole WARC members, as a run's file holds (a torn tail would be cut).
    let bytes = std::fs::read(warc.join(&first)).unwrap();
    std::fs::write(&planted, &bytes).unwrap();

    let resume = [
        "--resume",
        &state.display().to_string(),
        "--max-pages",
        "200",
    ]
    .map(String::from);
    let (code, err) = wait(ringcrawl(&resume));
    assert_eq!(code, Some(0), "stopped by the budget: {err}");
    assert_eq!(
        std::fs::read(&planted).unwrap(),
        bytes,
        "run 1's file written over"
    );
    let names: Vec<String> = std::fs::read_dir(&warc)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(
        names
            .iter()
            .any(|n| n.starts_with(&format!("{prefix}-r2-"))),
        "the resume is run 2: {names:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A crawl made on two cores, resumed with `--cores 1`: refused with one
/// line naming the cores to use, exit code 2; the crawl stays resumable.
#[test]
fn a_resume_on_another_number_of_cores_is_refused_in_one_line_with_exit_code_2() {
    let site = Site::new(50, 1);
    let dir = scratch("cores");
    let (state, _warc, _log, args) = cli_crawl(&site, &dir, &[]);
    let (code, err) = wait(ringcrawl(&args));
    assert_eq!(code, Some(0), "{err}");
    let state = state.display().to_string();
    let other = ["--resume", &state, "--cores", "1"].map(String::from);
    let (code, err) = wait(ringcrawl(&other));
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains("--cores 2"), "{err}");
    let again = ["--resume", &state].map(String::from);
    let (code, err) = wait(ringcrawl(&again));
    assert_eq!(code, Some(0), "the crawl is intact: {err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The journal and base files `checked.json` in `state` names.
fn checked_files(state: &std::path::Path) -> Vec<String> {
    let text = std::fs::read(state.join("checked.json")).unwrap();
    let json: serde_json::Value = serde_json::from_slice(&text).unwrap();
    json["files"].as_object().unwrap().keys().cloned().collect()
}

/// "checked N journal files (..) in ..; M (..) were checked by an earlier
/// resume": (N, M), from a resume's log.
fn checked(err: &str) -> (usize, usize) {
    let line = err
        .lines()
        .find(|l| l.contains("resume: checked"))
        .unwrap_or_else(|| panic!("no check in the log: {err}"));
    let number = |after: &str| -> usize {
        let rest = &line[line.find(after).unwrap() + after.len()..];
        rest.split_whitespace().next().unwrap().parse().unwrap()
    };
    (number("resume: checked "), number("; "))
}

/// A resume checks every journal before it starts; the next checks only
/// the files written since (a journal is written by one run). Damage that
/// no write explains (a journal's bytes changed with its length and time
/// kept, as a disk's) is found by the replay: the crawl stops with an
/// error naming the file, and goes on once the loss is accepted.
#[test]
fn a_second_resume_checks_only_new_journals_and_damage_found_since_still_stops_it() {
    let site = Site::new(2_000, 2);
    let dir = scratch("checked");
    let (state, _warc, _log, args) = cli_crawl(&site, &dir, &["--max-pages", "100"]);
    let (code, err) = wait(ringcrawl(&args));
    assert_eq!(code, Some(0), "{err}");
    let resume = |more: &[&str]| {
        let mut args = vec!["--resume".to_string(), state.display().to_string()];
        // -vv: the first run's -q is the crawl's; the check's line is at info.
        args.extend(["--max-pages", "300", "-vv"].map(String::from));
        args.extend(more.iter().map(|s| s.to_string()));
        ringcrawl(&args)
    };
    // A first resume, killed once it has checked the journals (long
    // before the end of its replay, which would compact them).
    let mut child = resume(&[]);
    let started = std::time::Instant::now();
    while !state.join("checked.json").exists() && child.try_wait().unwrap().is_none() {
        assert!(started.elapsed() < std::time::Duration::from_secs(60));
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    child.kill().unwrap();
    let (code, err) = wait(child);
    assert_ne!(code, Some(0), "killed: {err}");
    let first = checked_files(&state);
    assert!(!first.is_empty(), "run 0 left journals");

    // A byte of the largest checked journal's first chunk flipped, its
    // length and modification time kept: the check trusts what it found.
    let journal = first
        .iter()
        .map(|name| state.join(name))
        .max_by_key(|path| std::fs::metadata(path).map_or(0, |m| m.len()))
        .unwrap();
    let whole = std::fs::read(&journal).unwrap();
    let first_chunk = 16 + u32::from_le_bytes(whole[8..12].try_into().unwrap()) as usize;
    assert!(first_chunk < whole.len(), "whole chunks after the first");
    let modified = std::fs::metadata(&journal).unwrap().modified().unwrap();
    let mut damaged = whole.clone();
    damaged[17] ^= 0x55;
    std::fs::write(&journal, &damaged).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&journal)
        .unwrap()
        .set_modified(modified)
        .unwrap();
    let (code, err) = wait(resume(&[]));
    let (_, earlier) = checked(&err);
    assert_eq!(
        earlier,
        first.len(),
        "run 0's journals not read again: {err}"
    );
    assert_ne!(code, Some(0), "{err}");
    assert!(
        err.contains(&journal.display().to_string()) && err.contains("--resume-discard-damaged"),
        "names the journal and the way on: {err}"
    );
    // The failure took back what checked.json said: the next resume
    // checks every journal again and refuses before it fetches.
    assert!(!state.join("checked.json").exists());
    let (code, err) = wait(resume(&[]));
    assert_eq!(code, Some(2), "refused at the check: {err}");
    assert!(err.contains(&journal.display().to_string()), "{err}");
    let (code, err) = wait(resume(&["--resume-discard-damaged"]));
    assert_eq!(code, Some(0), "the loss accepted: {err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The bytes of the log that `done.json` in `state` says were read (0
/// without one).
fn log_read(state: &Path) -> u64 {
    done_json(state)
        .and_then(|covered| covered["log_len"].as_u64())
        .unwrap_or(0)
}

/// A run's checkpoints read the log it writes into `done.json` (as a
/// resume would, a stretch at a time): a first run killed after one is
/// resumed reading only the records logged since, and knows every page
/// as a read of the whole log would (none logged before the kill is
/// fetched again, every page has one record).
#[test]
fn a_first_run_killed_after_a_checkpoint_is_resumed_reading_only_the_log_written_since() {
    // 10 ms a page, 64 fetches, 16 a host: the first run lasts 3 s or
    // more, its checkpoints come every 100 ms.
    let site = Site::with_delay(20_000, 8, 10);
    let dir = scratch("caught-up");
    let (state, _warc, log, args) = cli_crawl(
        &site,
        &dir,
        &[
            "--max-tasks",
            "64",
            "--per-host",
            "16",
            "--checkpoint-interval",
            "0.1",
        ],
    );
    let mut child = ringcrawl(&args);
    let started = Instant::now();
    while log_read(&state) == 0 {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the crawl ended before a checkpoint read its log"
        );
        assert!(started.elapsed() < LIMIT, "no checkpoint read the log");
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap(); // SIGKILL
    let (code, err) = wait(child);
    assert_eq!(code, None, "killed, not ended: {err}");
    let covered = done_json(&state).expect("done.json");
    let read = covered["log_len"].as_u64().unwrap();
    // What it names: the records of the log's first `read` bytes, each
    // with its fingerprint in a done.fp.
    let bytes = std::fs::read(&log).unwrap();
    let records = bytes[..read as usize]
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u64;
    assert_eq!(covered["counts"]["records"], records);
    let named: u64 = covered["fingerprints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(named, 8 * records, "a fingerprint a record");
    let hits = site.page_hits();
    let before: Vec<String> = logged(&log).into_keys().map(|u| hit_key(&u)).collect();

    // -vv: the first run's -q is the crawl's; the read's line is at info,
    // as is a line a page (so to a file, not a pipe).
    let said = dir.join("resume.err");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_ringcrawl"))
        .args(["--resume", &state.display().to_string(), "-vv"])
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&said).unwrap())
        .status()
        .unwrap();
    let err = std::fs::read_to_string(&said).unwrap();
    assert!(status.success(), "{err}");
    let line = err
        .lines()
        .find(|l| l.contains("resume: read the log's"))
        .unwrap_or_else(|| panic!("no read of the log in: {err}"));
    assert!(
        line.contains(&format!("from byte {read} ")),
        "read from where the checkpoint left off ({read}): {line}"
    );
    assert_one_record_each(&log, &site.expected());
    let now = site.page_hits();
    let again: Vec<&String> = before
        .iter()
        .filter(|key| now.get(*key) != hits.get(*key))
        .take(5)
        .collect();
    assert!(
        again.is_empty(),
        "fetched again after its record was logged: {again:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
