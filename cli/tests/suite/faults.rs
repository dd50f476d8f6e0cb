//! Faults a crawl kept with `--state` must come through with nothing lost
//! and nothing forged, judged against the synthetic site's own count of
//! the requests it served: `kill -9` at random instants, run after run of
//! one crawl with every archive (`--warc --cdxj --wacz`) and small memory
//! budgets (so queues spill and the seen-sets merge to disk); and a state
//! directory whose file system fills up (ENOSPC).
//!
//! Also a crawl killed each time it has logged a hundred pages more, so
//! WARC bytes are in flight at every kill: the index points only at
//! written bytes, once a URL; and an index whose last pages' lines a kill
//! lost after their records: the resume makes them again, as the crawl
//! wrote them. After every kill test, each logged page with a WARC record
//! has exactly one index line, at that record.
//!
//! Not here: damage in the middle of the log, the index or a journal, and
//! the clean stops (`resume.rs`); cluster faults (`cluster_faults.rs`).
//! `scripts/faults.sh` runs the kill test with more kills, round after
//! round (`RINGCRAWL_FAULT_KILLS`, `RESUME_SEED`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common;
use crate::common::scratch::Scratch;
use crate::common::synth::Site;
use crate::resume::{
    assert_fetched_once, assert_one_record_each, cli_crawl, hit_key, lines, logged, ringcrawl,
    running_until_logged, scratch, wait, warc_responses, LIMIT,
};

/// Kills of the kill test: `RINGCRAWL_FAULT_KILLS`, or 6.
fn kills() -> usize {
    std::env::var("RINGCRAWL_FAULT_KILLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(6)
}

/// A source of random numbers below a bound, from `RESUME_SEED` or the
/// clock (printed, for a rerun).
fn random() -> impl FnMut(u64) -> u64 {
    let seed = std::env::var("RESUME_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap();
            u64::from(now.subsec_nanos()) ^ u64::from(std::process::id())
        });
    println!("RESUME_SEED={seed}");
    let mut rng = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
    move |range: u64| {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (rng >> 33) % range
    }
}

/// Whether a seen-set of the crawl in `state` has a merged run on disk
/// (`ringcrawl-spill-*/seen-N/run-G`, left by a killed run until the next
/// one starts, or there while a run goes on).
fn seen_run_on_disk(state: &Path) -> bool {
    let entries = |dir: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
            .unwrap_or_default()
    };
    let name = |p: &Path| {
        p.file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned()
    };
    entries(state)
        .iter()
        .filter(|p| name(p).starts_with("ringcrawl-spill-"))
        .flat_map(|spill| entries(spill))
        .filter(|p| name(p).starts_with("seen-"))
        .flat_map(|seen| entries(&seen))
        .any(|run| {
            let n = name(&run);
            n.starts_with("run-") && !n.ends_with(".tmp")
        })
}

#[test]
fn a_crawl_killed_at_random_instants_ends_with_every_page_recorded_once_indexed_once_and_replayable(
) {
    let test = "a_crawl_killed_at_random_instants_ends_with_every_page_recorded_once_indexed_once_and_replayable";
    let Some(warcio) = common::warcio::warcio_or_skip(test) else {
        return;
    };
    let kills = kills();
    // 10 ms a page: at most 10,000 pages/s with 100 fetches (16 a host),
    // so the runs (0.15-0.65 s each) are killed before the crawl can end
    // on any machine; the larger of the two shards holds at least 4 of the
    // 8 hosts, 60,000 URLs or more, past the 49,152 fingerprints at which
    // a seen-set of 1 MiB a shard merges to disk.
    let site = Site::with_delay(120_000.max(kills * 8_000), 8, 10);
    let expected = site.expected();
    let dir = scratch("faults-kill");
    let (index, wacz) = (dir.join("index.cdxj"), dir.join("crawl.wacz"));
    let (index_arg, wacz_arg) = (index.display().to_string(), wacz.display().to_string());
    // Checkpoints every 100 ms and a small frontier (its queues go through
    // spill files): kills land during checkpoints and spill I/O too.
    let (state, warc, log, args) = cli_crawl(
        &site,
        &dir,
        &[
            "--max-tasks",
            "100",
            "--per-host",
            "16",
            "--checkpoint-interval",
            "0.1",
            "--frontier-memory",
            "256K",
            "--seen-memory",
            "2M",
            "--cdxj",
            &index_arg,
            "--wacz",
            &wacz_arg,
        ],
    );
    let resume = vec![
        "--resume".to_string(),
        state.display().to_string(),
        "-q".into(),
    ];

    let mut next = random();
    let mut progress = Vec::new();
    let mut merged = false;
    // The site's count of requests for each logged page when it was first
    // seen logged after a kill: it must not grow after that.
    let mut when_logged: BTreeMap<String, usize> = BTreeMap::new();
    for kill in 0..kills {
        let mut child = ringcrawl(if kill == 0 { &args } else { &resume });
        std::thread::sleep(Duration::from_millis(150 + next(500)));
        child.kill().unwrap(); // SIGKILL
        let (code, err) = wait(child);
        assert_eq!(code, None, "killed by a signal, not ended: {err}");
        progress.push(lines(&log));
        merged |= seen_run_on_disk(&state);
        let hits = site.page_hits();
        for url in logged(&log).into_keys() {
            let key = hit_key(&url);
            when_logged
                .entry(key.clone())
                .or_insert_with(|| hits.get(&key).copied().unwrap_or(0));
        }
    }
    println!("records after each kill: {progress:?}");
    let mut last = ringcrawl(&resume);
    let start = Instant::now();
    while last.try_wait().unwrap().is_none() && start.elapsed() < LIMIT {
        merged |= seen_run_on_disk(&state);
        std::thread::sleep(Duration::from_millis(20));
    }
    let (code, err) = wait(last);
    assert_eq!(code, Some(0), "{err}");
    assert!(merged, "a seen-set merged to disk in some run");

    // Nothing lost, nothing twice: every page of the site has one record.
    assert_one_record_each(&log, &expected);
    let hits = site.page_hits();
    // A page whose record was on disk at a kill is never fetched again.
    for (key, then) in &when_logged {
        let now = hits.get(key).copied().unwrap_or(0);
        assert_eq!(
            now, *then,
            "{key}: fetched again after its record was logged"
        );
    }
    let again: usize = hits.values().map(|n| n - 1).sum();
    println!("{again} fetches repeated over {kills} kills");
    assert!(
        hits.values().all(|n| *n <= 1 + kills),
        "a page fetched more than once a run"
    );

    // The WARC files pass warcio's check, and every logged page is in one.
    let responses = warc_responses(&warcio, &warc);
    let records: Vec<serde_json::Value> = common::whole_lines(&log)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let unarchived: Vec<&str> = records
        .iter()
        .filter(|r| r["status"].is_u64())
        .map(|r| r["url"].as_str().unwrap())
        .filter(|url| !responses.contains_key(*url))
        .take(5)
        .collect();
    assert!(
        unarchived.is_empty(),
        "logged but not in a WARC file: {unarchived:?}"
    );
    assert!(responses.values().all(|n| *n <= 1 + kills));

    // The index: inside the WARC files, at its URL's record, once a URL;
    // every logged page archived has its line, a kill between the record
    // and the line notwithstanding (the resume makes it again).
    let indexed = assert_index_points_at_written_records(&index, &warc);
    println!("{} of {} pages indexed", indexed.len(), expected.len());
    assert_every_archived_page_indexed_once(&log, &index);
    if let Some(bin) = common::warcio::wacz_or_skip(test) {
        let out = common::warcio::tool(&bin, "wacz", &["validate", "-f"], &wacz);
        assert!(out.contains("Validation succeeded"), "{out}");
    }
    replay_a_sample(test, &site, &index, &warc);

    // A killed run's spill directory is removed by the next run.
    let stale: Vec<_> = std::fs::read_dir(&state)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("ringcrawl-spill-")
        })
        .collect();
    assert!(stale.is_empty(), "spill directories left: {stale:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_crawl_killed_mid_warc_write_resumes_with_an_index_that_points_only_at_written_bytes_once_a_url(
) {
    // Slow pages: the crawl is still running at each kill, whatever the
    // machine.
    let site = Site::with_delay(3_000, 4, 5);
    let dir = scratch("index-kill");
    let index = dir.join("index.cdxj");
    let wacz = dir.join("crawl.wacz");
    let (state, warc, log, args) = cli_crawl(
        &site,
        &dir,
        &[
            "--cdxj",
            &index.display().to_string(),
            "--wacz",
            &wacz.display().to_string(),
        ],
    );
    let resume = vec![
        "--resume".to_string(),
        state.display().to_string(),
        "-q".into(),
    ];
    for kill in 0..3 {
        let mut child = ringcrawl(if kill == 0 { &args } else { &resume });
        // SIGKILL once this run has logged some pages (WARC bytes are in
        // flight at any moment of a crawl this busy).
        let target = lines(&log) + 100;
        let alive = running_until_logged(&mut child, &log, target);
        child.kill().unwrap();
        let (code, err) = wait(child);
        assert!(alive && code.is_none(), "killed mid-crawl: {code:?} {err}");
    }
    let (code, err) = wait(ringcrawl(&resume));
    assert_eq!(code, Some(0), "{err}");
    assert_one_record_each(&log, &site.expected());

    assert_index_points_at_written_records(&index, &warc);
    assert_every_archived_page_indexed_once(&log, &index);
    // The package built from them passes py-wacz's check.
    if let Some(bin) = common::warcio::wacz_or_skip("resume: wacz validate") {
        let out = common::warcio::tool(&bin, "wacz", &["validate", "-f"], &wacz);
        assert!(out.contains("Validation succeeded"), "{out}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every line of the CDXJ `index` points inside its WARC file in `warc`
/// (its bytes written), at one whole record of its URL, and no URL is
/// indexed twice: the index's URLs, each with its count (1).
pub(crate) fn assert_index_points_at_written_records(
    index: &Path,
    warc: &Path,
) -> BTreeMap<String, usize> {
    let text = std::fs::read_to_string(index).unwrap();
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut indexed: BTreeMap<String, usize> = BTreeMap::new();
    for line in text.lines() {
        let json: serde_json::Value =
            serde_json::from_str(line.splitn(3, ' ').nth(2).unwrap()).unwrap();
        let url = json["url"].as_str().unwrap().to_string();
        let name = json["filename"].as_str().unwrap();
        let offset: usize = json["offset"].as_str().unwrap().parse().unwrap();
        let length: usize = json["length"].as_str().unwrap().parse().unwrap();
        let bytes = files
            .entry(name.to_string())
            .or_insert_with(|| std::fs::read(warc.join(name)).unwrap());
        assert!(
            offset + length <= bytes.len(),
            "{url}: {name} bytes {offset}+{length} past its end ({})",
            bytes.len()
        );
        let records = common::warc::read_records(&bytes[offset..offset + length])
            .unwrap_or_else(|e| panic!("{url}: {name} at {offset}: {e}"));
        assert_eq!(records.len(), 1, "{url}");
        assert_eq!(records[0].header("WARC-Target-URI"), Some(url.as_str()));
        *indexed.entry(url).or_insert(0) += 1;
    }
    let twice: Vec<_> = indexed.iter().filter(|(_, n)| **n > 1).take(5).collect();
    assert!(twice.is_empty(), "indexed more than once: {twice:?}");
    indexed
}

/// Whether an index line's URL is of a record no page's log line stands
/// for (the crawl's robots.txt and DNS records).
fn without_record(url: &str) -> bool {
    url.starts_with("dns:")
        || url
            .split(['?', '#'])
            .next()
            .unwrap()
            .ends_with("/robots.txt")
}

/// Every page whose record in `log` points at a WARC record has exactly
/// one line in `index`, pointing at that record (its file and offset),
/// and every page's line in `index` is of a record in `log`.
pub(crate) fn assert_every_archived_page_indexed_once(log: &Path, index: &Path) {
    let mut lines: BTreeMap<String, Vec<(String, u64)>> = BTreeMap::new();
    for line in std::fs::read_to_string(index).unwrap().lines() {
        let json: serde_json::Value =
            serde_json::from_str(line.splitn(3, ' ').nth(2).unwrap()).unwrap();
        let url = json["url"].as_str().unwrap();
        if without_record(url) {
            continue;
        }
        lines.entry(url.to_string()).or_default().push((
            json["filename"].as_str().unwrap().to_string(),
            json["offset"].as_str().unwrap().parse().unwrap(),
        ));
    }
    let (mut archived, mut unindexed) = (0, Vec::new());
    for line in common::whole_lines(log).lines() {
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        let (Some(file), Some(offset)) =
            (record["warc_file"].as_str(), record["warc_offset"].as_u64())
        else {
            continue;
        };
        archived += 1;
        let url = record["url"].as_str().unwrap();
        match lines.remove(url) {
            Some(at) => assert_eq!(
                at,
                vec![(file.to_string(), offset)],
                "{url}: one line, at its record"
            ),
            None => unindexed.push(url.to_string()),
        }
    }
    println!("{archived} archived pages logged, each indexed once");
    assert!(
        unindexed.is_empty(),
        "{} logged pages archived without an index line: {:?}",
        unindexed.len(),
        &unindexed[..unindexed.len().min(5)]
    );
    let extra: Vec<_> = lines.keys().take(5).collect();
    assert!(
        extra.is_empty(),
        "index lines of no logged record: {extra:?}"
    );
}

/// A crawl's index with its last pages' lines gone, as a `kill -9`
/// between their records and their lines leaves it: the resume makes them
/// again from the WARC records, byte for byte the lines the crawl wrote,
/// and says how many.
#[test]
fn a_page_logged_before_its_index_line_is_indexed_at_resume_as_the_crawl_wrote_it() {
    const LOST: usize = 7;
    let site = Site::new(300, 2);
    let dir = scratch("index-rebuilt");
    let index = dir.join("index.cdxj");
    let (state, _warc, log, args) =
        cli_crawl(&site, &dir, &["--cdxj", &index.display().to_string()]);
    let (code, err) = wait(ringcrawl(&args));
    assert_eq!(code, Some(0), "{err}");
    let whole = std::fs::read(&index).unwrap();
    let mut lines: Vec<&[u8]> = whole.split_inclusive(|&b| b == b'\n').collect();
    // The last pages' lines go (each WARC file's lines are in the log's
    // order: the last of them are a tail of each file's).
    let mut lost = 0;
    for at in (0..lines.len()).rev() {
        let url = std::str::from_utf8(lines[at]).unwrap();
        let url = url
            .split("\"url\": \"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        if lost < LOST && !without_record(url) {
            lines.remove(at);
            lost += 1;
        }
    }
    std::fs::write(&index, lines.concat()).unwrap();
    // `-v` against the stored `-q`: the resume's notes are warnings.
    let resume = ["--resume", &state.display().to_string(), "-v"].map(String::from);
    let (code, err) = wait(ringcrawl(&resume));
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains(&format!("rebuilt {LOST} lines of pages")),
        "says what it rebuilt: {err}"
    );
    let sorted = |bytes: &[u8]| {
        let mut lines: Vec<Vec<u8>> = bytes
            .split_inclusive(|&b| b == b'\n')
            .map(<[u8]>::to_vec)
            .collect();
        lines.sort();
        lines
    };
    assert!(
        sorted(&std::fs::read(&index).unwrap()) == sorted(&whole),
        "the index is again the one the crawl wrote, byte for byte"
    );
    assert_every_archived_page_indexed_once(&log, &index);
    // Made once: the next resume has none to make.
    let (code, err) = wait(ringcrawl(&resume));
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("rebuilt"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// pywb, given the first WARC file a killed run wrote (its torn tail cut
/// at a resume) and the last one, replays up to 10 pages of each as the
/// site serves them.
fn replay_a_sample(test: &str, site: &Site, index: &Path, warc: &Path) {
    let text = std::fs::read_to_string(index).unwrap();
    let mut by_file: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for line in text.lines() {
        let mut parts = line.splitn(3, ' ');
        let (_, timestamp, json) = (parts.next(), parts.next().unwrap(), parts.next().unwrap());
        let json: serde_json::Value = serde_json::from_str(json).unwrap();
        if json["status"] == "200" && json["mime"] == "text/html" {
            by_file
                .entry(json["filename"].as_str().unwrap().to_string())
                .or_default()
                .push((timestamp.to_string(), json["url"].as_str().unwrap().into()));
        }
    }
    let mut chosen: Vec<&String> = [by_file.keys().next(), by_file.keys().last()]
        .into_iter()
        .flatten()
        .collect();
    chosen.dedup();
    assert!(!chosen.is_empty(), "pages indexed in {}", index.display());
    let warcs: Vec<PathBuf> = chosen.iter().map(|name| warc.join(name)).collect();
    let Some(pywb) = common::pywb::Pywb::serve_or_skip(test, &warcs) else {
        return;
    };
    let mut replayed = 0;
    for name in chosen {
        let pages = &by_file[name];
        for (timestamp, url) in pages.iter().step_by(pages.len().div_ceil(10)) {
            let parsed = ringcrawl::Url::parse(url).unwrap();
            let authority = format!(
                "{}:{}",
                parsed.host_str().unwrap(),
                parsed.port_or_known_default().unwrap()
            );
            let ringcrawl_site::server::Reply::Http { body, .. } =
                site.site.clean_reply(&authority, parsed.path())
            else {
                panic!("{url}: the site has no plain reply");
            };
            let got = pywb.get(timestamp, url);
            assert_eq!(got.status, 200, "{url} at {timestamp} in {name}");
            assert!(got.body == body, "{url} replays as the site served it");
            replayed += 1;
        }
    }
    println!("pywb replayed {replayed} pages");
    assert!(replayed > 0);
}

/// Whether this machine lets a process make a user and mount namespace
/// and mount a tmpfs in it (`unshare -rm`); if not, the test that needs
/// it skips, saying so, or fails under `RINGCRAWL_REQUIRE_TOOLS`.
fn unshare_or_skip(test: &str) -> bool {
    if common::tools::require_tool(test, "unshare", "util-linux").is_none() {
        return false;
    }
    let probe = tempdir_for("probe");
    let ok = std::process::Command::new("unshare")
        .args(["-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs \"$1\""])
        .arg("sh")
        .arg(probe.as_os_str())
        .stderr(std::process::Stdio::piped())
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os(common::tools::REQUIRE_TOOLS).is_none(),
            "{test}: unshare -rm cannot mount a tmpfs here and {} is set",
            common::tools::REQUIRE_TOOLS
        );
        println!("SKIPPED {test}: unshare -rm cannot mount a tmpfs on this machine");
    }
    ok
}

fn tempdir_for(name: &str) -> Scratch {
    Scratch::new(&format!("faults-{name}"))
}

/// The state directory on a tmpfs of 256 KiB, in a mount namespace of its
/// own: the crawl fills it, stops with the error and no panic; the same
/// tmpfs made larger, the resume completes with every page recorded once
/// and no page logged before the stop fetched again.
#[test]
fn a_full_disk_under_the_state_directory_stops_the_crawl_cleanly_and_the_resume_completes() {
    let test =
        "a_full_disk_under_the_state_directory_stops_the_crawl_cleanly_and_the_resume_completes";
    if !unshare_or_skip(test) {
        return;
    }
    // 2 ms a page: the crawl is still running when the disk fills.
    let site = Site::with_delay(3_000, 4, 2);
    let dir = scratch("faults-enospc");
    let (mnt, out) = (dir.join("mnt"), dir.join("out"));
    std::fs::create_dir_all(&mnt).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    // The WARC files elsewhere: only the state directory's disk fills.
    let (state, _warc, _log, mut args) = cli_crawl(&site, &mnt, &[]);
    let warc = dir.join("warc");
    let at = args.iter().position(|a| a == "--warc").unwrap();
    args[at + 1] = warc.display().to_string();
    // One namespace for both runs (the tmpfs lives as long as it): the
    // first on 256 KiB, the log copied out, then the resume on 64 MiB.
    let script = r#"
        mount -t tmpfs -o size=256k tmpfs "$MNT" || exit 90
        timeout -s KILL 100 "$BIN" "$@" 2>"$OUT/first.err"
        echo $? >"$OUT/first.code"
        cp "$MNT/state/records.jsonl" "$OUT/first.jsonl"
        mount -o remount,size=64m "$MNT" || exit 91
        timeout -s KILL 100 "$BIN" --resume "$MNT/state" -q 2>"$OUT/second.err"
        echo $? >"$OUT/second.code"
        cp "$MNT/state/records.jsonl" "$OUT/final.jsonl"
    "#;
    let status = std::process::Command::new("unshare")
        .args(["-rm", "sh", "-c", script, "sh"])
        .args(&args)
        .env("MNT", &mnt)
        .env("OUT", &out)
        .env("BIN", env!("CARGO_BIN_EXE_ringcrawl"))
        .status()
        .unwrap();
    assert!(status.success(), "the script: {status}");
    let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap_or_default();
    let (first_code, first_err) = (read("first.code"), read("first.err"));
    println!("first run: exit {first_code}{first_err}");
    assert!(
        !first_err.contains("panicked"),
        "no panic on a full disk: {first_err}"
    );
    assert!(
        !matches!(first_code.trim(), "0" | "101" | "137"),
        "a full disk is an error the exit code shows (not a success, a panic or the time-out's kill): {first_code}{first_err}"
    );
    assert!(
        first_err.contains("No space left on device"),
        "says why: {first_err}"
    );
    assert!(
        first_err.contains(&state.display().to_string()),
        "names the file: {first_err}"
    );
    // Once (not once a shard, nor again for the log), in words: not
    // glommio's operation, path and file descriptor.
    assert_eq!(
        first_err.matches("No space left on device").count(),
        1,
        "said once: {first_err}"
    );
    assert!(
        !first_err.contains("op: ") && !first_err.contains("fd: ") && !first_err.contains("Some("),
        "without glommio's op, path and fd: {first_err}"
    );
    let (second_code, second_err) = (read("second.code"), read("second.err"));
    assert_eq!(second_code.trim(), "0", "{second_err}");

    // Every page once; none logged at the stop fetched again.
    let final_log = out.join("final.jsonl");
    assert_one_record_each(&final_log, &site.expected());
    let before = logged(&out.join("first.jsonl"));
    assert!(
        !before.is_empty() && before.len() < site.expected().len(),
        "stopped part of the way: {} records",
        before.len()
    );
    assert_fetched_once(&site, before.keys());
    std::fs::remove_dir_all(&dir).unwrap();
}
