//! The spill directories of crawls without `--state`: one killed with
//! SIGKILL leaves its directory behind, and the next crawl that spills in
//! the same place removes it; the directory of a crawl still running is
//! never touched.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::synth::Site;
use crate::resume::{wait, LIMIT};

/// The crawl spill directories in `parent`.
fn spill_dirs(parent: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(parent)
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("ringcrawl-spill-")
        })
        .map(|e| e.path())
        .collect();
    dirs.sort();
    dirs
}

/// `ringcrawl ARGS` with its temporary directory in `tmp`.
fn ringcrawl_in(tmp: &Path, args: &[String]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_ringcrawl"))
        .args(args)
        .env("TMPDIR", tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ringcrawl starts")
}

/// A crawl of a server that takes connections and never answers: it runs
/// until it is killed.
fn hanging_crawl(tmp: &Path, listener: &std::net::TcpListener) -> Child {
    let root = format!("http://{}/", listener.local_addr().unwrap());
    let args = [
        &root,
        "--cores",
        "1",
        "--ignore-robots",
        "--no-sitemaps",
        "--read-timeout",
        "600s",
        "-q",
    ]
    .map(String::from);
    ringcrawl_in(tmp, &args)
}

/// Wait until `parent` holds a spill directory not in `known`.
fn new_spill_dir(parent: &Path, known: &[PathBuf]) -> PathBuf {
    let start = Instant::now();
    loop {
        if let Some(dir) = spill_dirs(parent).into_iter().find(|d| !known.contains(d)) {
            return dir;
        }
        assert!(
            start.elapsed() < LIMIT,
            "no spill directory after {LIMIT:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_killed_crawls_spill_directory_is_removed_by_the_next_crawl_and_a_running_ones_is_kept() {
    let tmp = std::env::temp_dir().join(format!("ringcrawl-spill-dirs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();

    let mut killed = hanging_crawl(&tmp, &silent);
    let stale = new_spill_dir(&tmp, &[]);
    killed.kill().unwrap();
    killed.wait().unwrap();
    assert!(stale.exists(), "a SIGKILL leaves the directory");

    let mut running = hanging_crawl(&tmp, &silent);
    let live = new_spill_dir(&tmp, std::slice::from_ref(&stale));

    let site = Site::new(30, 1);
    let mut args = site.roots();
    args.extend(site.resolve_args());
    args.extend(["--cores", "1", "--ignore-robots", "--no-sitemaps", "-q"].map(String::from));
    let (code, err) = wait(ringcrawl_in(&tmp, &args));
    assert_eq!(code, Some(0), "{err}");

    let left = spill_dirs(&tmp);
    let _ = running.kill();
    let _ = running.wait();
    assert!(
        !left.contains(&stale),
        "the killed crawl's directory is removed: {left:?}"
    );
    assert_eq!(
        left,
        vec![live],
        "the running crawl's directory stays, and only it"
    );
    let _ = std::fs::remove_dir_all(&tmp);
}
