//! Checkpoint and resume (`--state DIR`, `--resume DIR`): a crawl stopped
//! by a budget, by SIGINT or by `kill -9` goes on where it was. In the end
//! every URL has exactly one record in the log, no URL with a record was
//! fetched again (only fetches that had no record yet at a kill are), and
//! the WARC files pass warcio's check.
//!
//! The killed crawls run the `ringcrawl` binary (a kill needs a process of
//! its own) against a multi-host synthetic site served by this test; page
//! fetches are counted by the site itself.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use crate::common::scratch::Scratch;
use crate::common::synth::Site;
use ringcrawl::{Crawler, Spent};

/// A crawl that runs longer than this has hung.
pub(crate) const LIMIT: Duration = Duration::from_secs(120);

/// A fresh directory for one test.
pub(crate) fn scratch(name: &str) -> Scratch {
    Scratch::new(&format!("resume-{name}"))
}

/// The log's URLs, each with its count of records (interrupted ones
/// would count too: none may be there). After a `kill -9` the last line
/// may be torn (a batch of lines can take more than one write): it is
/// not a record, and the resume cuts it off, so it is left out here.
pub(crate) fn logged(log: &Path) -> BTreeMap<String, usize> {
    let mut urls = BTreeMap::new();
    for line in common::whole_lines(log).lines() {
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_ne!(record["error_kind"], "interrupted", "{line}");
        *urls
            .entry(record["url"].as_str().unwrap().to_string())
            .or_insert(0) += 1;
    }
    urls
}

/// Every expected URL exactly once in the log, nothing else.
pub(crate) fn assert_one_record_each(log: &Path, expected: &BTreeSet<String>) {
    let urls = logged(log);
    let twice: Vec<_> = urls.iter().filter(|(_, n)| **n > 1).take(5).collect();
    assert!(
        twice.is_empty(),
        "URLs with more than one record: {twice:?}"
    );
    let got: BTreeSet<String> = urls.into_keys().collect();
    let missing: Vec<_> = expected.difference(&got).take(5).collect();
    let extra: Vec<_> = got.difference(expected).take(5).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:?}, extra {extra:?} ({} logged, {} expected)",
        got.len(),
        expected.len()
    );
}

/// Each of `urls` (logged before a stop) was fetched once by `site`: the
/// runs after the stop fetched none of them again.
pub(crate) fn assert_fetched_once<'a>(site: &Site, urls: impl IntoIterator<Item = &'a String>) {
    let hits = site.page_hits();
    for url in urls {
        assert_eq!(
            hits.get(&hit_key(url)),
            Some(&1),
            "{url} fetched again after its record"
        );
    }
}

/// The site's key of a URL's requests: `"host path"`.
pub(crate) fn hit_key(url: &str) -> String {
    let url = ringcrawl::Url::parse(url).unwrap();
    let path = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    };
    format!("{} {path}", url.host_str().unwrap_or(""))
}

/// The command line of a crawl of `site` on two cores with a state
/// directory and WARC files in `dir`, plus `flags`: the state directory,
/// the WARC directory, the log, the arguments.
pub(crate) fn cli_crawl(
    site: &Site,
    dir: &Path,
    flags: &[&str],
) -> (PathBuf, PathBuf, PathBuf, Vec<String>) {
    let (state, warc) = (dir.join("state"), dir.join("warc"));
    let mut args: Vec<String> = site.roots();
    args.extend(site.resolve_args());
    args.extend(["--cores", "2", "--ignore-robots", "--no-sitemaps", "-q"].map(String::from));
    args.extend(flags.iter().map(|f| f.to_string()));
    args.extend(["--state".into(), state.display().to_string()]);
    args.extend(["--warc".into(), warc.display().to_string()]);
    let log = state.join("records.jsonl");
    (state, warc, log, args)
}

pub(crate) fn ringcrawl(args: &[String]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_ringcrawl"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ringcrawl starts")
}

/// Wait for `child` to exit within [`LIMIT`]; its exit code and stderr.
pub(crate) fn wait(mut child: Child) -> (Option<i32>, String) {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                use std::io::Read;
                let _ = e.read_to_string(&mut err);
            }
            return (status.code(), err);
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            panic!("ringcrawl still running after {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What `done.json` in the state directory `state` says was read of the
/// log (None without one, or one that does not parse).
pub(crate) fn done_json(state: &Path) -> Option<serde_json::Value> {
    let bytes = std::fs::read(state.join("done.json")).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Lines in `log` (0 if it is not there yet).
pub(crate) fn lines(log: &Path) -> usize {
    std::fs::read(log)
        .map(|b| b.iter().filter(|&&c| c == b'\n').count())
        .unwrap_or(0)
}

/// The WARC `response` records of every file in `dir`, by target URI,
/// after warcio's `check` passed on each file.
pub(crate) fn warc_responses(warcio: &Path, dir: &Path) -> BTreeMap<String, usize> {
    let mut responses = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let out = Command::new(warcio.join("warcio"))
            .arg("check")
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "warcio check {}: {}",
            path.display(),
            String::from_utf8_lossy(&out.stdout)
        );
        let out = Command::new(warcio.join("warcio"))
            .args(["index", "-f", "warc-type,warc-target-uri"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(out.status.success(), "warcio index {}", path.display());
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let entry: serde_json::Value = serde_json::from_str(line).unwrap();
            if entry["warc-type"] == "response" {
                let uri = entry["warc-target-uri"].as_str().unwrap().to_string();
                *responses.entry(uri).or_insert(0) += 1;
            }
        }
    }
    responses
}

#[test]
fn a_crawl_stopped_by_max_pages_resumes_with_a_larger_budget_and_fetches_no_url_twice() {
    let site = Site::new(5_000, 4);
    let dir = scratch("budget");
    let state = dir.join("state");
    let resolve = |mut b: ringcrawl::CrawlerBuilder| {
        for k in 0..site.site.host_count() {
            b = b.resolve(
                &ringcrawl_site::synth::SynthSite::host_name(k),
                site.server.port(),
                vec!["127.0.0.1".parse().unwrap()],
            );
        }
        b.cores(2).obey_robots(false).sitemaps(false).progress(None)
    };

    let first = resolve(
        Crawler::builder()
            .roots(site.roots())
            .state(&state)
            .max_pages(1000),
    )
    .build()
    .unwrap()
    .run()
    .unwrap();
    assert_eq!(first.budget_spent(), Some(Spent::Pages));
    let log = state.join("records.jsonl");
    assert_eq!(lines(&log), 1000, "--max-pages 1000: 1,000 records");
    // The logged URLs' fingerprints are kept, with how much of the log
    // they cover: the crawl's last checkpoint read its log, so a resume
    // reads only the records after it.
    let fingerprints = |state: &std::path::Path| -> u64 {
        (0..2)
            .map(|shard| {
                let done = state.join(format!("shard-{shard}/done.fp"));
                std::fs::metadata(&done).map_or(0, |m| m.len())
            })
            .sum()
    };
    let covered = |state: &std::path::Path| done_json(state).expect("done.json");
    let log_len = || std::fs::metadata(&log).unwrap().len();
    assert_eq!(fingerprints(&state), 8 * 1000, "a fingerprint a record");
    assert_eq!(covered(&state)["log_len"], log_len());
    assert_eq!(covered(&state)["counts"]["pages"], 1000);

    // No roots: the crawl's own, from its manifest.
    let second = resolve(Crawler::builder().resume(&state).max_pages(2000))
        .build()
        .unwrap()
        .run()
        .unwrap();
    assert_eq!(second.resumed(), Some(1000));
    assert_eq!(second.budget_spent(), Some(Spent::Pages));
    assert_eq!(fingerprints(&state), 8 * 2000);
    assert_eq!(covered(&state)["log_len"], log_len());
    assert_eq!(covered(&state)["counts"]["pages"], 2000);
    assert_eq!(
        second.urls(),
        1000,
        "the budget counts the first run's pages"
    );
    let urls = logged(&log);
    assert_eq!(urls.len(), 2000, "2,000 records, no URL twice");
    assert!(urls.values().all(|n| *n == 1));
    let hits = site.page_hits();
    assert_eq!(hits.values().sum::<usize>(), 2000, "2,000 fetches in all");
    assert!(hits.values().all(|n| *n == 1), "no page fetched twice");

    // A third run without a budget finishes the site.
    let third = resolve(Crawler::builder().resume(&state))
        .build()
        .unwrap()
        .run()
        .unwrap();
    assert_eq!(third.budget_spent(), None);
    assert!(!third.aborted());
    assert_eq!(third.resumed(), Some(2000), "the first two runs' records");
    let all = site.expected().len();
    assert_eq!(fingerprints(&state), 8 * all as u64);
    assert_eq!(covered(&state)["counts"]["records"], all);
    assert_one_record_each(&log, &site.expected());
    assert!(
        site.page_hits().values().all(|n| *n == 1),
        "no page fetched twice"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sigint_stops_the_crawl_cleanly_and_the_resume_repeats_nothing() {
    let Some(warcio) = common::warcio::warcio_or_skip(
        "sigint_stops_the_crawl_cleanly_and_the_resume_repeats_nothing",
    ) else {
        return;
    };
    let site = Site::new(20_000, 8);
    let dir = scratch("sigint");
    let (state, warc, log, args) = cli_crawl(&site, &dir, &["--max-tasks", "64"]);

    let child = ringcrawl(&args);
    let start = Instant::now();
    while lines(&log) < 3000 {
        assert!(start.elapsed() < LIMIT, "no progress");
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: kill(2) on the PID of a child this test spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let (code, err) = wait(child);
    assert_eq!(code, Some(130), "{err}");
    let stopped_at = lines(&log);
    assert!(
        stopped_at < site.expected().len(),
        "stopped early: {stopped_at}"
    );

    let (code, err) = wait(ringcrawl(&[
        "--resume".into(),
        state.display().to_string(),
        "-q".into(),
    ]));
    assert_eq!(code, Some(0), "{err}");
    assert_one_record_each(&log, &site.expected());
    let twice: Vec<_> = site
        .page_hits()
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .take(5)
        .collect();
    assert!(
        twice.is_empty(),
        "fetched again after a clean stop: {twice:?}"
    );
    let responses = warc_responses(&warcio, &warc);
    let archived_twice: Vec<_> = responses.iter().filter(|(_, n)| **n > 1).take(5).collect();
    assert!(
        archived_twice.is_empty(),
        "archived twice: {archived_twice:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_state_directory_is_never_taken_over_nor_resumed_with_other_roots() {
    let site = Site::new(50, 1);
    let dir = scratch("misuse");
    let state = dir.join("state");
    let builder = || {
        Crawler::builder()
            .roots(site.roots())
            .cores(2)
            .obey_robots(false)
            .sitemaps(false)
            .progress(None)
    };
    builder().state(&state).build().unwrap().run().unwrap();
    let again = builder().state(&state).build().unwrap().run().unwrap_err();
    assert!(
        format!("{again:#}").contains("already holds a crawl"),
        "{again:#}"
    );
    let other = Crawler::builder()
        .root("http://127.0.0.1:9/")
        .cores(2)
        .resume(&state)
        .build()
        .unwrap()
        .run()
        .unwrap_err();
    assert!(
        format!("{other:#}").contains("keeps its roots"),
        "{other:#}"
    );
    let shards = builder()
        .cores(1)
        .resume(&state)
        .build()
        .unwrap()
        .run()
        .unwrap_err();
    assert!(format!("{shards:#}").contains("--cores 2"), "{shards:#}");
    // The crawl itself is intact: a resume finds nothing left to do.
    let done = builder().resume(&state).build().unwrap().run().unwrap();
    assert_eq!(done.urls(), 0);
    assert_eq!(done.resumed(), Some(site.expected().len() as u64));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--wacz` without `--cdxj`: the index of every run is kept in the state
/// directory, so the package made at the end of a resume holds every
/// run's WARC files and indexes every page of them.
#[test]
fn a_resumed_crawl_packages_every_runs_pages_in_its_wacz() {
    let site = Site::new(300, 1);
    let dir = scratch("wacz");
    let (state, warc, wacz) = (dir.join("state"), dir.join("warc"), dir.join("crawl.wacz"));
    let builder = || {
        Crawler::builder()
            .cores(2)
            .obey_robots(false)
            .sitemaps(false)
            .progress(None)
            .warc(&warc)
            .wacz(&wacz)
    };
    let first = builder().roots(site.roots()).state(&state).max_pages(100);
    first.build().unwrap().run().unwrap();
    let second = builder().resume(&state).build().unwrap().run().unwrap();
    assert!(
        second.output_error().is_none(),
        "{:?}",
        second.output_error()
    );
    let mut zip = zip::ZipArchive::new(std::fs::File::open(&wacz).unwrap()).unwrap();
    let warcs = (0..zip.len())
        .filter(|&i| {
            zip.by_index(i)
                .unwrap()
                .name()
                .unwrap()
                .ends_with(".warc.gz")
        })
        .count();
    assert!(warcs >= 2, "both runs' WARC files: {warcs}");
    let mut index = String::new();
    std::io::Read::read_to_string(&mut zip.by_name("indexes/index.cdxj").unwrap(), &mut index)
        .unwrap();
    let indexed: BTreeSet<String> = index
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l.splitn(3, ' ').nth(2)?).ok())
        .filter_map(|j| j["url"].as_str().map(str::to_string))
        .collect();
    let missing: Vec<_> = site
        .expected()
        .into_iter()
        .filter(|u| !indexed.contains(u))
        .take(5)
        .collect();
    assert!(
        missing.is_empty(),
        "not in the package's index: {missing:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A crawl from a seed list (every page of the site, one a line), killed
/// with SIGKILL when a third is logged: the resume takes the list the
/// state directory kept (the file itself is gone by then), and every seed
/// ends with one record; no page logged before the kill is fetched again.
#[test]
fn a_seed_list_crawl_killed_halfway_resumes_with_every_seed_once() {
    // 5 ms a page with 8 fetches at once: at most 1,600 pages/s, so the
    // kill lands long before the 3,000 pages are done.
    let site = Site::with_delay(3_000, 4, 5);
    let expected = site.expected();
    let dir = scratch("seeds");
    let list = dir.join("seeds.txt");
    let mut text = String::from("# every page of the site\n");
    for url in &expected {
        text.push_str(url);
        text.push('\n');
    }
    std::fs::write(&list, text).unwrap();
    let state = dir.join("state");
    let log = state.join("records.jsonl");
    let mut args = site.resolve_args();
    args.extend(
        [
            "--cores",
            "2",
            "--max-tasks",
            "8",
            "--ignore-robots",
            "--no-sitemaps",
            "-q",
        ]
        .map(String::from),
    );
    args.extend(["--seeds".into(), list.display().to_string()]);
    args.extend(["--state".into(), state.display().to_string()]);
    let mut child = ringcrawl(&args);
    let start = Instant::now();
    while lines(&log) < expected.len() / 3 {
        assert!(start.elapsed() < LIMIT, "no progress");
        assert!(child.try_wait().unwrap().is_none(), "ended before the kill");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before: BTreeSet<String> = logged(&log).into_keys().collect();
    assert!(before.len() < expected.len(), "killed before the end");
    std::fs::remove_file(&list).unwrap();

    let (code, stderr) = wait(ringcrawl(&[
        "--resume".to_string(),
        state.display().to_string(),
        "-q".into(),
    ]));
    assert_eq!(code, Some(0), "{stderr}");
    assert_one_record_each(&log, &expected);
    assert_fetched_once(&site, &before);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A resumed crawl's report counts its own run, and says where the whole
/// crawl stands.
#[test]
fn a_resumed_crawl_reports_the_whole_crawls_records_too() {
    let site = Site::new(60, 2);
    let dir = scratch("totals");
    let (state, _warc, log, mut args) = cli_crawl(&site, &dir, &["--max-pages", "20"]);
    args.retain(|a| a != "-q");
    let (code, err) = wait(ringcrawl(&args));
    assert_eq!(code, Some(0), "{err}");
    let first = lines(&log);
    let (code, err) = wait(ringcrawl(&[
        "--resume".into(),
        state.display().to_string(),
        "--max-pages".into(),
        "1000".into(),
    ]));
    assert_eq!(code, Some(0), "{err}");
    let all = lines(&log);
    assert!(first < all, "the resume fetched more: {first} then {all}");
    let this_run = all - first;
    assert!(
        err.contains(&format!(
            "the whole crawl: {all} records ({first} from earlier runs, {this_run} from this one)"
        )),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `path` with its line `n` (from 1) replaced by bytes that are no
/// record, the lines after it whole.
fn damage_line(path: &Path, n: usize) {
    let text = std::fs::read(path).unwrap();
    let mut lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
    assert!(
        lines.len() > n + 2,
        "{} has lines after line {n}",
        path.display()
    );
    lines[n - 1] = b"{\"url\": \"http://damaged\x00\x00\x00 block\n";
    std::fs::write(path, lines.concat()).unwrap();
}

#[test]
fn damage_in_the_middle_of_the_log_or_the_index_stops_the_resume_until_the_loss_is_accepted() {
    let site = Site::new(400, 2);
    let dir = scratch("damaged");
    let index = dir.join("index.cdxj");
    let (state, _warc, log, args) = cli_crawl(
        &site,
        &dir,
        &["--max-pages", "100", "--cdxj", &index.display().to_string()],
    );
    let (code, err) = wait(ringcrawl(&args));
    assert_eq!(code, Some(0), "{err}");
    let resume = |more: &[&str]| {
        let mut args = vec!["--resume".to_string(), state.display().to_string()];
        args.extend(["-q", "--max-pages", "200"].map(String::from));
        args.extend(more.iter().map(|s| s.to_string()));
        wait(ringcrawl(&args))
    };
    for file in [&log, &index] {
        let whole = std::fs::read(file).unwrap();
        damage_line(file, 5);
        let damaged = std::fs::read(file).unwrap();
        let (code, err) = resume(&[]);
        assert_eq!(code, Some(2), "{err}");
        assert!(
            err.contains(&file.display().to_string()) && err.contains("line 5"),
            "names the file and the line: {err}"
        );
        assert!(err.contains("--resume-discard-damaged"), "{err}");
        assert_eq!(std::fs::read(file).unwrap(), damaged, "nothing cut");
        std::fs::write(file, whole).unwrap();
    }
    assert_eq!(lines(&log), 100, "the log is as it was");

    // A journal chunk damaged between whole ones (its magic and length
    // kept, a byte of its URLs flipped).
    // The first run's larger journal (a shard whose hosts found no link
    // may have written none).
    let journal = (0..2)
        .map(|shard| state.join(format!("shard-{shard}/journal-000000.bin")))
        .max_by_key(|path| std::fs::metadata(path).map_or(0, |m| m.len()))
        .unwrap();
    let whole = std::fs::read(&journal).unwrap();
    let mut starts = Vec::new();
    let mut at = 0;
    while at + 16 <= whole.len() {
        starts.push(at);
        at += 16 + u32::from_le_bytes(whole[at + 8..at + 12].try_into().unwrap()) as usize;
    }
    assert!(starts.len() >= 3, "chunks: {starts:?}");
    let mut damaged = whole.clone();
    damaged[starts[1] + 17] ^= 0x55;
    std::fs::write(&journal, &damaged).unwrap();
    let (code, err) = resume(&[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(&journal.display().to_string())
            && err.contains(&format!("byte {}", starts[1])),
        "names the journal and the byte: {err}"
    );
    assert_eq!(std::fs::read(&journal).unwrap(), damaged, "nothing changed");
    assert_eq!(lines(&log), 100, "nothing fetched");
    std::fs::write(&journal, &whole).unwrap();

    // The loss accepted: the resume goes on.
    damage_line(&log, 5);
    std::fs::write(&journal, &damaged).unwrap();
    let (code, err) = resume(&["--resume-discard-damaged"]);
    assert_eq!(code, Some(0), "{err}");
    let urls = logged(&log);
    assert!(urls.values().all(|n| *n == 1), "no URL logged twice");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Wait until `log` holds at least `n` lines, or `child` ended; whether
/// it is still running.
pub(crate) fn running_until_logged(child: &mut Child, log: &Path, n: usize) -> bool {
    let start = Instant::now();
    while lines(log) < n {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        assert!(start.elapsed() < LIMIT, "no {n} records after {LIMIT:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

#[test]
fn a_resume_whose_log_is_gone_is_an_error_not_a_crawl_with_nothing_done() {
    let site = Site::new(200, 2);
    let dir = scratch("no-log");
    let (state, _warc, log, args) = cli_crawl(&site, &dir, &["--max-pages", "50"]);
    let (code, err) = wait(ringcrawl(&args));
    assert_eq!(code, Some(0), "{err}");
    std::fs::remove_file(&log).unwrap();
    let hits = site.page_hits().values().sum::<usize>();
    let (code, err) = wait(ringcrawl(&[
        "--resume".to_string(),
        state.display().to_string(),
        "-q".to_string(),
    ]));
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(&log.display().to_string()) && err.contains("missing"),
        "{err}"
    );
    assert_eq!(
        site.page_hits().values().sum::<usize>(),
        hits,
        "nothing fetched again"
    );
    assert!(!log.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
