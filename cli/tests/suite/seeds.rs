//! Seed lists (`--seeds FILE`, `-` for standard input; the builder's
//! `seeds_file` and `seeds_reader`): comments, bare hosts, duplicates and
//! bad lines; their hosts in scope; read from disk as the crawl goes.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use ringcrawl_site::server::Server;

use crate::common::{page, serve};

/// Three names on one server: a.test links to b.test and c.test.
fn three_hosts() -> Server {
    serve(|req| {
        let port = req.authority.rsplit(':').next().unwrap_or("").to_string();
        match (req.host.as_str(), req.path.as_str()) {
            ("a.test", "/") => Some(page(&[
                "/a2",
                &format!("http://b.test:{port}/b-page"),
                &format!("http://c.test:{port}/c-page"),
            ])),
            ("a.test", "/a2") | ("b.test", "/") | ("b.test", "/b-page") => Some(page(&[])),
            ("c.test", _) => Some(page(&["/c2"])),
            _ => None,
        }
    })
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ringcrawl-seeds-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The binary's flags for a crawl of `server`'s three names, records in
/// `dir/out.jsonl`.
fn flags(server: &Server, dir: &Path) -> Vec<String> {
    let port = server.addr().port();
    let mut args = vec![
        "--ignore-robots".to_string(),
        "--no-sitemaps".to_string(),
        "-o".to_string(),
        dir.join("out.jsonl").display().to_string(),
    ];
    for host in ["a.test", "b.test", "c.test"] {
        args.push("--resolve".into());
        args.push(format!("{host}:{port}:127.0.0.1"));
    }
    args
}

/// The records of `dir/out.jsonl`, by URL.
fn records(dir: &Path) -> BTreeMap<String, Vec<serde_json::Value>> {
    let mut by_url: BTreeMap<String, Vec<serde_json::Value>> = BTreeMap::new();
    for line in std::fs::read_to_string(dir.join("out.jsonl"))
        .unwrap()
        .lines()
    {
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        let url = record["url"].as_str().unwrap().to_string();
        by_url.entry(url).or_default().push(record);
    }
    by_url
}

/// Run the binary with `args`, `input` on its standard input; it must
/// exit 0.
fn crawl_from_stdin(args: &[String], input: &str) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ringcrawl"))
        .args(args)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

#[test]
fn a_seed_file_with_comments_duplicates_bare_hosts_and_bad_lines() {
    let server = three_hosts();
    let port = server.addr().port();
    let dir = tmp("file");
    let list = dir.join("seeds.txt");
    std::fs::write(
        &list,
        format!(
            "# hosts to crawl\n\
             a.test:{port}\n\
             http://b.test:{port}/\r\n\
             \n\
             A.TEST:{port}   # the same host again\n\
             ftp://bad.test/\n\
             two words\n"
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ringcrawl"))
        .args(flags(&server, &dir))
        .arg("--seeds")
        .arg(&list)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let by_url = records(&dir);
    let a = format!("http://a.test:{port}/");
    let b = format!("http://b.test:{port}/");
    for url in [a.clone(), format!("{a}a2"), b.clone(), format!("{b}b-page")] {
        let got = by_url.get(&url).map_or(0, Vec::len);
        assert_eq!(got, 1, "{url} recorded once: {by_url:#?}");
        assert_eq!(by_url[&url][0]["status"], 200, "{url}");
    }
    assert!(
        !by_url.keys().any(|u| u.contains("c.test")),
        "c.test is no seed's host: out of scope: {by_url:#?}"
    );
    let bad: Vec<&serde_json::Value> = by_url
        .values()
        .flatten()
        .filter(|r| r["error_kind"] == "bad_root")
        .collect();
    assert_eq!(bad.len(), 2, "{bad:#?}");
    let errors: Vec<&str> = bad.iter().map(|r| r["error"].as_str().unwrap()).collect();
    assert!(
        errors
            .iter()
            .any(|e| e.contains("line 6") && e.contains("scheme")),
        "{errors:?}"
    );
    assert!(errors.iter().any(|e| e.contains("line 7")), "{errors:?}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn seeds_from_standard_input_mix_with_roots() {
    let server = three_hosts();
    let port = server.addr().port();
    let dir = tmp("stdin");
    let mut args = flags(&server, &dir);
    args.extend([
        "--seeds".into(),
        "-".into(),
        format!("http://a.test:{port}/"),
    ]);
    crawl_from_stdin(&args, &format!("b.test:{port}\n"));
    let by_url = records(&dir);
    assert!(
        by_url.contains_key(&format!("http://a.test:{port}/a2")),
        "{by_url:#?}"
    );
    assert!(
        by_url.contains_key(&format!("http://b.test:{port}/")),
        "{by_url:#?}"
    );
    assert!(by_url.values().all(|r| r.len() == 1), "{by_url:#?}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn seeds_from_a_library_reader_are_crawled_and_widen_the_scope() {
    let server = three_hosts();
    let port = server.addr().port();
    let list = format!("a.test:{port}\nc.test:{port}\n");
    let report = ringcrawl::Crawler::builder()
        .seeds_reader(std::io::Cursor::new(list.into_bytes()))
        .resolve("a.test", port, [std::net::Ipv4Addr::LOCALHOST.into()])
        .resolve("c.test", port, [std::net::Ipv4Addr::LOCALHOST.into()])
        .obey_robots(false)
        .sitemaps(false)
        .keep_records(true)
        .build()
        .unwrap()
        .run()
        .unwrap();
    let mut urls: Vec<String> = report.records().iter().map(|r| r.url.clone()).collect();
    urls.sort();
    let want = vec![
        format!("http://a.test:{port}/"),
        format!("http://a.test:{port}/a2"),
        format!("http://c.test:{port}/"),
        format!("http://c.test:{port}/c-page"),
        format!("http://c.test:{port}/c2"),
    ];
    assert_eq!(urls, want, "b.test is no seed's host");
}

/// A list read from standard input with `--state` is kept in the state
/// directory: the resume queues the seeds the first run took but did not
/// fetch, and needs no list (its standard input is empty).
#[test]
fn a_seed_list_on_standard_input_is_kept_in_the_state_directory_for_the_resume() {
    let server = three_hosts();
    let port = server.addr().port();
    let dir = tmp("state");
    let state = dir.join("state");
    let mut args = flags(&server, &dir);
    args.extend(["--seeds", "-", "--max-pages", "2", "--state"].map(String::from));
    args.push(state.display().to_string());
    crawl_from_stdin(
        &args,
        &format!("a.test:{port}\nb.test:{port}\nc.test:{port}\n"),
    );
    let first = records(&dir).len();
    assert!(
        (1..7).contains(&first),
        "{first} records after the first run"
    );

    let out = Command::new(env!("CARGO_BIN_EXE_ringcrawl"))
        .arg("--resume")
        .arg(&state)
        .args(["--max-pages", "100"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let by_url = records(&dir);
    let want: Vec<String> = [
        "a.test/",
        "a.test/a2",
        "b.test/",
        "b.test/b-page",
        "c.test/",
        "c.test/c-page",
        "c.test/c2",
    ]
    .iter()
    .map(|p| {
        let (host, path) = p.split_once('/').unwrap();
        format!("http://{host}:{port}/{path}")
    })
    .collect();
    assert_eq!(by_url.keys().cloned().collect::<Vec<_>>(), want, "{stderr}");
    assert!(by_url.values().all(|r| r.len() == 1), "{by_url:#?}");
    // Each shard kept the position it reached: the end of its file.
    let kept = state.join("seeds");
    let mut files = 0;
    for entry in std::fs::read_dir(&kept).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if name.starts_with("seeds-") && name[6..].chars().all(|c| c.is_ascii_digit()) {
            files += 1;
            let len = std::fs::metadata(&path).unwrap().len();
            let at = std::fs::read(kept.join(format!("{name}.pos"))).unwrap_or_default();
            let at = at
                .get(..8)
                .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap()));
            assert_eq!(at, len, "{name}");
        }
    }
    assert!(files >= 1, "no kept seed files in {}", kept.display());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_seed_list_that_cannot_be_read_is_refused_before_the_crawl() {
    let missing = Command::new(env!("CARGO_BIN_EXE_ringcrawl"))
        .args(["--seeds", "/nonexistent/seeds.txt"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(missing.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("/nonexistent/seeds.txt"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// The peak RSS of a crawl of one page seeded by `lines` copies of its URL.
fn peak_rss_kib(server: &Server, dir: &Path, lines: usize) -> u64 {
    let list = dir.join(format!("seeds-{lines}.txt"));
    let mut file = std::io::BufWriter::new(std::fs::File::create(&list).unwrap());
    for _ in 0..lines {
        writeln!(file, "http://127.0.0.1:{}/", server.addr().port()).unwrap();
    }
    file.flush().unwrap();
    drop(file);
    let report = dir.join("report.json");
    let out = Command::new(env!("CARGO_BIN_EXE_ringcrawl"))
        .args([
            "--ignore-robots",
            "--no-sitemaps",
            "--cores",
            "2",
            "--seeds",
        ])
        .arg(&list)
        .arg("--report-json")
        .arg(&report)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(
        report["urls"], 1,
        "every copy but one is a duplicate: {report}"
    );
    report["peak_rss_kib"].as_u64().unwrap()
}

/// A million seed lines (30 MB) are read from disk as the crawl goes, not
/// into memory: the peak RSS is that of a one-line list, give or take.
#[test]
fn a_million_line_seed_list_is_read_with_a_flat_peak_rss() {
    let server = serve(|req| (req.path == "/").then(|| page(&[])));
    let dir = tmp("million");
    let one = peak_rss_kib(&server, &dir, 1);
    let million = peak_rss_kib(&server, &dir, 1_000_000);
    assert!(
        million < one + 16 * 1024,
        "peak RSS {million} KiB with a million lines against {one} KiB with one"
    );
    std::fs::remove_dir_all(&dir).ok();
}
