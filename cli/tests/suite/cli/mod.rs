//! The `ringcrawl` binary as a user meets it: exit codes, one-line errors,
//! the demo crawl and its report, JSON Lines output; what it says when
//! something goes wrong (`messages`), and what it follows (`scope`).

use std::process::Command;

mod messages;
mod report;
mod scope;

/// The environment variables the command reads its proxies from.
pub(crate) const PROXY_VARS: [&str; 7] = [
    "http_proxy",
    "https_proxy",
    "HTTPS_PROXY",
    "all_proxy",
    "ALL_PROXY",
    "no_proxy",
    "NO_PROXY",
];

pub(crate) fn ringcrawl(args: &[&str]) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ringcrawl"));
    // The tests' crawls go direct unless a test says otherwise.
    for var in PROXY_VARS {
        command.env_remove(var);
    }
    command.args(args).output().expect("binary runs")
}

#[test]
fn bad_flags_give_a_one_line_error_and_exit_code_2() {
    for args in [
        vec!["--exclude", "(", "example.com"],
        vec!["--include", "(", "example.com"],
        vec!["--max-tasks", "0", "example.com"],
        vec!["--resolve", "bad", "example.com"],
        vec!["ftp://example.com/"],
        vec!["http://"],
        vec![],
    ] {
        let out = ringcrawl(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// A duration that would overflow the clock in every fetch (and a delay a
/// hostile Crawl-delay could push past it) is a usage error, not a panic in
/// the middle of the crawl.
#[test]
fn out_of_range_flags_exit_2_before_crawling() {
    let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let root = format!("http://{}/", server.local_addr().unwrap());
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for mut conn in server.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            let _ = conn.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok");
        }
    });
    for flag in [
        "--timeout=1e19",
        "--read-timeout=1e19",
        "--max-crawl-delay=1e19",
        "--delay=18446744073709551615",
    ] {
        let out = ringcrawl(&[flag, "--ignore-robots", &root]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{flag}: {stderr}");
    }
}

/// A crawl that fetched nothing is not a success, as for wget: 4 when no
/// server answered at all, 8 when servers answered but no page came back
/// with a 2xx; a crawl where only some pages failed still exits 0.
#[test]
fn a_crawl_that_fetched_nothing_exits_non_zero() {
    use ringcrawl_site::server::{Reply, Request, Server};
    use std::sync::Arc;

    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let not_found = Server::start(Arc::new(|_: &Request| Reply::not_found())).unwrap();
    let partly = Server::start(Arc::new(|req: &Request| match req.path.as_str() {
        "/" => Reply::html(200, "<a href=\"/gone\">gone</a>"),
        _ => Reply::not_found(),
    }))
    .unwrap();
    for (root, code) in [
        (format!("http://{closed}/"), 4),
        ("http://no-such-host.invalid/".to_string(), 4),
        (format!("http://{}/", not_found.addr()), 8),
        (format!("http://{}/", partly.addr()), 0),
    ] {
        // No robots.txt retries: the closed port would wait a minute.
        let out = ringcrawl(&["-q", "--robots-retries", "none", &root]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{root}: {stderr}");
        let lines = stderr.trim_end().lines().count();
        assert_eq!(lines, usize::from(code != 0), "{root}: {stderr}");
    }
}

#[test]
fn unknown_flag_is_a_usage_error() {
    let out = ringcrawl(&["--no-such-flag", "example.com"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn demo_crawl_finds_every_page_and_reports() {
    let dir = std::env::temp_dir().join(format!("ringcrawl-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let jsonl = dir.join("records.jsonl");
    let out = ringcrawl(&["--demo", "300", "--output", jsonl.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("Finished "), "{stderr}");
    assert!(stderr.contains(" 0 missing, 0 unexpected"), "{stderr}");
    let text = std::fs::read_to_string(&jsonl).unwrap();
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("whole JSON line"))
        .collect();
    assert!(records.len() > 300);
    assert!(records
        .iter()
        .all(|r| r["url"].is_string() && r.get("num_new_urls").is_some()));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn max_pages_stops_the_demo_crawl_cleanly_and_says_so() {
    let dir = std::env::temp_dir().join(format!("ringcrawl-cli-budget-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let jsonl = dir.join("records.jsonl");
    let out = ringcrawl(&[
        "--demo",
        "3000",
        "--max-pages",
        "100",
        "--output",
        jsonl.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("stopped: --max-pages reached"), "{stderr}");
    let text = std::fs::read_to_string(&jsonl).unwrap();
    let urls: std::collections::BTreeSet<&str> = text
        .lines()
        .map(|l| l.split('"').nth(3).unwrap_or_default())
        .collect();
    assert_eq!(text.lines().count(), 100);
    assert_eq!(urls.len(), 100, "each URL once");
    std::fs::remove_dir_all(&dir).ok();
}

/// SIGINT mid-crawl: in-flight fetches are cancelled within about a second,
/// every finished record and the report are written, exit code 130.
#[test]
fn sigint_stops_the_crawl_and_keeps_every_finished_record() {
    use ringcrawl_site::server::{Reply, Server, Step};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    let server = Server::start(Arc::new(|req: &ringcrawl_site::server::Request| {
        if req.path == "/" {
            let links: String = (0..50)
                .map(|i| format!("<a href=\"/slow/{i}\">s</a><a href=\"/fast/{i}\">f</a>"))
                .collect();
            Reply::Http {
                status: 200,
                headers: vec![("Content-Type".into(), "text/html".into())],
                body: links.into_bytes(),
            }
        } else if req.path.starts_with("/fast/") {
            Reply::Http {
                status: 200,
                headers: vec![],
                body: b"fast".to_vec(),
            }
        } else {
            Reply::Script(vec![Step::Sleep(Duration::from_secs(30))])
        }
    }))
    .unwrap();
    let dir = std::env::temp_dir().join(format!("ringcrawl-sigint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let jsonl = dir.join("records.jsonl");
    let child = Command::new(env!("CARGO_BIN_EXE_ringcrawl"))
        .args([
            "--max-tasks",
            "20",
            "--per-host",
            "20",
            "--ignore-robots",
            "-o",
            jsonl.to_str().unwrap(),
            &format!("http://{}/", server.addr()),
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let sent = Instant::now();
    // SAFETY: plain kill(2) on the child we started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let took = sent.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    // 0.8 s of grace for the fetches in flight, then the records and the
    // report; the rest is room for a loaded machine.
    assert!(took < Duration::from_secs(5), "stopped in {took:?}");
    assert!(
        stderr.contains("Interrupted after ") && !stderr.contains("Finished "),
        "the report is printed, and says it was interrupted: {stderr}"
    );
    let text = std::fs::read_to_string(&jsonl).unwrap();
    assert!(text.ends_with('\n'), "no half-written line");
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("whole line"))
        .collect();
    let fast = records
        .iter()
        .filter(|r| r["url"].as_str().is_some_and(|u| u.contains("/fast/")))
        .count();
    let cut = records
        .iter()
        .filter(|r| r["error_kind"] == "interrupted")
        .count();
    assert!(fast > 0, "finished fetches are recorded");
    assert!(cut > 0, "in-flight fetches are recorded as interrupted");
    std::fs::remove_dir_all(&dir).ok();
}

/// The JSON report says what the records say, and progress is printed as
/// plain lines (no carriage returns or escapes) when stderr is not a TTY.
#[test]
fn report_json_agrees_with_the_records_and_progress_is_plain_lines() {
    let dir = std::env::temp_dir().join(format!("ringcrawl-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (jsonl, report) = (dir.join("r.jsonl"), dir.join("report.json"));
    let out = ringcrawl(&[
        "--demo",
        "1500",
        "--max-tasks",
        "4",
        // A line a millisecond: the crawl of 1,500 pages may take less
        // than 50 ms on a fast machine, and no line is printed before the
        // first interval.
        "--progress-interval",
        "0.001",
        "-o",
        jsonl.to_str().unwrap(),
        "--report-json",
        report.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        !stderr.contains('\r') && !stderr.contains('\x1b'),
        "{stderr}"
    );
    assert!(
        stderr
            .lines()
            .any(|l| l.contains(" pages ") && l.contains("in flight")),
        "{stderr}"
    );

    let records: Vec<serde_json::Value> = std::fs::read_to_string(&jsonl)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(report["urls"].as_u64().unwrap() as usize, records.len());
    let count = |pred: &dyn Fn(&serde_json::Value) -> bool| {
        records.iter().filter(|r| pred(r)).count() as u64
    };
    for (status, n) in report["statuses"].as_object().unwrap() {
        assert_eq!(
            count(&|r| r["status"].as_u64().map(|s| s.to_string()).as_deref()
                == Some(status.as_str())),
            n.as_u64().unwrap(),
            "status {status}"
        );
    }
    assert_eq!(
        report["errors"].as_u64().unwrap(),
        count(&|r| !r["error"].is_null() && r["next_url"].is_null())
    );
    let bytes: u64 = records.iter().map(|r| r["size"].as_u64().unwrap()).sum();
    assert_eq!(report["bytes"].as_u64().unwrap(), bytes);
    assert_eq!(
        report["first_byte"]["count"].as_u64().unwrap(),
        count(&|r| !r["first_byte_ms"].is_null())
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn demo_over_tls_crawls_https_offline_without_a_warning() {
    let dir = std::env::temp_dir().join(format!("ringcrawl-cli-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let jsonl = dir.join("records.jsonl");
    let out = ringcrawl(&["--demo", "200", "--tls", "-o", jsonl.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("on https://127.0.0.1:"), "{stderr}");
    assert!(stderr.contains(" 0 missing, 0 unexpected"), "{stderr}");
    assert!(stderr.contains("error 0"), "{stderr}");
    assert!(!stderr.to_lowercase().contains("warning"), "{stderr}");
    let text = std::fs::read_to_string(&jsonl).unwrap();
    assert!(text
        .lines()
        .all(|l| l.starts_with("{\"url\":\"https://127.0.0.1:")));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn ca_cert_trusts_a_private_ca_and_insecure_fetches_anyway() {
    use ringcrawl_site::server::{Reply, Request, Server};
    use ringcrawl_site::tls::TestCa;
    use std::sync::Arc;

    let ca = TestCa::new("private CA").unwrap();
    let tls = ca.site_cert().unwrap().server_config(&[]).unwrap();
    let server = Server::start_tls(
        Arc::new(|_: &Request| Reply::html(200, "<p>secret garden</p>")),
        tls,
    )
    .unwrap();
    let dir = std::env::temp_dir().join(format!("ringcrawl-cli-ca-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pem = dir.join("ca.pem");
    std::fs::write(&pem, ca.pem()).unwrap();
    let root = format!("https://{}/", server.addr());
    let record = |args: &[&str], code: i32| -> serde_json::Value {
        // One record: the server's one page answers every path, a
        // guessed /sitemap.xml too.
        let mut all = vec!["--ignore-robots", "--no-sitemaps", "-q", "-o", "-"];
        all.extend_from_slice(args);
        all.push(&root);
        let out = ringcrawl(&all);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("one record")
    };
    let trusted = record(&["--ca-cert", pem.to_str().unwrap()], 0);
    assert_eq!(trusted["status"], 200, "{trusted}");
    assert!(trusted["error"].is_null(), "{trusted}");
    // Nothing fetched, for a refused certificate: wget's 5.
    let untrusted = record(&[], 5);
    assert_eq!(untrusted["error_kind"], "tls_certificate", "{untrusted}");
    assert!(untrusted["status"].is_null(), "{untrusted}");
    let insecure = record(&["--insecure"], 0);
    assert_eq!(insecure["status"], 200, "{insecure}");
    assert!(insecure["error_kind"].is_null(), "{insecure}");
    assert_eq!(
        insecure["warnings"][0]["kind"], "tls_certificate_untrusted",
        "{insecure}"
    );

    // A file with no certificate is a usage error, in one line.
    let junk = dir.join("junk.pem");
    std::fs::write(&junk, "hello\n").unwrap();
    let out = ringcrawl(&["--ca-cert", junk.to_str().unwrap(), &root]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}

/// What cannot be resumed is refused before anything is crawled: records
/// on stdout, the in-process demo site, roots given to a resume, a state
/// directory that is not there.
#[test]
fn state_and_resume_misuse_exits_2_with_one_line() {
    let dir = std::env::temp_dir().join(format!("ringcrawl-cli-state-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let state = dir.join("st");
    let state = state.to_str().unwrap();
    let missing = dir.join("missing");
    let missing = missing.to_str().unwrap();
    for (args, says) in [
        (
            vec!["--state", state, "-o", "-", "http://127.0.0.1:9/"],
            "standard output",
        ),
        (vec!["--demo", "--state", state], "--demo"),
        (
            vec!["--resume", state, "http://127.0.0.1:9/"],
            "keeps its roots",
        ),
        (vec!["--resume", missing], "no crawl state"),
    ] {
        let out = ringcrawl(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    assert!(
        !dir.join("st").join("manifest.json").exists(),
        "nothing was made"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Docker's default locked-memory limit (64 KiB) used to stop every crawl
/// at its start (glommio wanted 512 KiB); no limit at all works too.
#[test]
fn a_crawl_runs_under_a_containers_64_kib_memlock_limit() {
    let Some(prlimit) = crate::common::tools::require_tool(
        "a_crawl_runs_under_a_containers_64_kib_memlock_limit",
        "prlimit",
        "apt-get install util-linux",
    ) else {
        return;
    };
    for limit in ["65536:65536", "0:0"] {
        let out = Command::new(&prlimit)
            .arg(format!("--memlock={limit}"))
            .arg(env!("CARGO_BIN_EXE_ringcrawl"))
            .args(["--demo", "300", "--cores", "2", "--frontier-memory", "1M"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "memlock {limit}: {stderr}");
        assert!(stderr.contains("0 missing"), "memlock {limit}: {stderr}");
    }
}

/// A crawl of 50 pages that answer at once and 50 that never finish, with
/// its records and JSON report in `dir`: it runs until it is signalled.
fn endless_crawl(dir: &std::path::Path) -> (ringcrawl_site::server::Server, Vec<String>) {
    use ringcrawl_site::server::{Reply, Server, Step};
    use std::sync::Arc;
    use std::time::Duration;

    let server = Server::start(Arc::new(|req: &ringcrawl_site::server::Request| {
        if req.path == "/" {
            let links: String = (0..50)
                .map(|i| format!("<a href=\"/slow/{i}\">s</a><a href=\"/fast/{i}\">f</a>"))
                .collect();
            Reply::Http {
                status: 200,
                headers: vec![("Content-Type".into(), "text/html".into())],
                body: links.into_bytes(),
            }
        } else if req.path.starts_with("/fast/") {
            Reply::Http {
                status: 200,
                headers: vec![],
                body: b"fast".to_vec(),
            }
        } else {
            Reply::Script(vec![Step::Sleep(Duration::from_secs(60))])
        }
    }))
    .unwrap();
    std::fs::create_dir_all(dir).unwrap();
    let args = vec![
        "--max-tasks".to_string(),
        "20".to_string(),
        "--per-host".to_string(),
        "20".to_string(),
        "--ignore-robots".to_string(),
        "-o".to_string(),
        dir.join("records.jsonl").display().to_string(),
        "--report-json".to_string(),
        dir.join("report.json").display().to_string(),
        format!("http://{}/", server.addr()),
    ];
    (server, args)
}

/// coreutils `timeout` signals the crawler, then its whole process group:
/// two SIGTERMs microseconds apart. The second is a copy, not a "stop at
/// once": the crawl still stops cleanly, with its report.
#[test]
fn two_sigterms_at_once_as_timeout_sends_them_keep_the_report() {
    use std::time::Duration;
    let dir = std::env::temp_dir().join(format!("ringcrawl-twice-{}", std::process::id()));
    let (_server, args) = endless_crawl(&dir);
    for round in 0..3 {
        let _ = std::fs::remove_file(dir.join("report.json"));
        let child = Command::new(env!("CARGO_BIN_EXE_ringcrawl"))
            .args(&args)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        // SAFETY: plain kill(2) on the child we started.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGTERM);
            libc::kill(child.id() as i32, libc::SIGTERM);
        }
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "round {round}: {stderr}");
        assert!(stderr.contains("interrupted"), "round {round}: {stderr}");
        let report = std::fs::read_to_string(dir.join("report.json"))
            .unwrap_or_else(|e| panic!("round {round}: no report ({e}): {stderr}"));
        let report: serde_json::Value = serde_json::from_str(&report).unwrap();
        assert!(
            report["urls"].as_u64().unwrap_or(0) > 0,
            "round {round}: {report}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The same through coreutils `timeout` itself.
#[test]
fn a_crawl_under_timeout_writes_its_report() {
    let Some(timeout) = crate::common::tools::require_tool(
        "a_crawl_under_timeout_writes_its_report",
        "timeout",
        "apt-get install coreutils",
    ) else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("ringcrawl-timeout-{}", std::process::id()));
    let (_server, args) = endless_crawl(&dir);
    for round in 0..3 {
        let _ = std::fs::remove_file(dir.join("report.json"));
        let out = Command::new(&timeout)
            .arg("2")
            .arg(env!("CARGO_BIN_EXE_ringcrawl"))
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        // timeout's own code for "timed out".
        assert_eq!(out.status.code(), Some(124), "round {round}: {stderr}");
        assert!(stderr.contains("interrupted"), "round {round}: {stderr}");
        assert!(
            dir.join("report.json").exists(),
            "round {round}: no report: {stderr}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A mistyped port (nothing listens there): robots.txt is refused, tried
/// again a few times within seconds (not on the minute-long schedule for
/// 5xx and time-outs), and the record says why the page was not crawled.
#[test]
fn a_root_on_a_closed_port_fails_within_seconds_and_says_refused() {
    use std::time::{Duration, Instant};
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let dir = std::env::temp_dir().join(format!("ringcrawl-refused-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out_file = dir.join("out.jsonl");
    let started = Instant::now();
    let out = ringcrawl(&[
        "--no-sitemaps",
        "-o",
        out_file.to_str().unwrap(),
        &format!("http://127.0.0.1:{port}/"),
    ]);
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    // The robots.txt schedule for 5xx and time-outs alone is 61 s.
    assert!(took < Duration::from_secs(30), "took {took:?}");
    let text = std::fs::read_to_string(&out_file).unwrap();
    let record: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(record["error_kind"], "robots_unavailable", "{record}");
    let error = record["error"].as_str().unwrap();
    assert!(error.contains("connect_refused"), "{error}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Durations and sizes take units (`1s`, `5m`, `16M`), a bare number
/// means what it did (`--delay` milliseconds, `--timeout` seconds), and
/// `--rate N/s` spaces one host's requests 1/N s apart; a bad value is one
/// line naming it, exit code 2.
#[test]
fn durations_sizes_and_rates_take_units() {
    use ringcrawl_site::server::{Reply, Request, Server};
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    let seen: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let log = seen.clone();
    let server = Server::start(Arc::new(move |req: &Request| {
        log.lock().unwrap().push(Instant::now());
        match req.path.as_str() {
            "/" => Reply::html(200, "<a href=/a>a</a><a href=/b>b</a><a href=/c>c</a>"),
            _ => Reply::html(200, "<p>leaf</p>"),
        }
    }))
    .unwrap();
    let root = format!("http://{}/", server.addr());
    let crawl = |flags: &[&str]| {
        let mut args = vec!["-q", "--ignore-robots", "--no-sitemaps", "-o", "-"];
        args.extend_from_slice(flags);
        args.push(&root);
        seen.lock().unwrap().clear();
        let out = ringcrawl(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{flags:?}: {stderr}");
        assert_eq!(out.stdout.iter().filter(|&&b| b == b'\n').count(), 4);
        seen.lock().unwrap().clone()
    };
    crawl(&[
        "--timeout",
        "5m",
        "--connect-timeout",
        "2s",
        "--max-body",
        "16M",
    ]);
    crawl(&["--delay", "50", "--timeout", "60", "--max-body", "1048576"]);
    // 4/s: 250 ms between request starts (less a little for when each
    // request reaches the server).
    let times = crawl(&["--rate", "4/s", "--per-host", "4"]);
    assert_eq!(times.len(), 4);
    for gap in times.windows(2).map(|w| w[1] - w[0]) {
        assert!(gap >= Duration::from_millis(200), "{times:?}");
    }

    for (flag, value) in [
        ("--delay", "1x"),
        ("--timeout", "5 minutes"),
        ("--max-body", "16Q"),
        ("--rate", "0/s"),
        ("--rate", "2"),
    ] {
        let out = ringcrawl(&[flag, value, &root]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(value) && stderr.contains(flag), "{stderr}");
    }

    let help = String::from_utf8_lossy(&ringcrawl(&["--help"]).stdout).into_owned();
    for says in [
        "bare number is milliseconds",
        "bare number is seconds",
        "N/s",
    ] {
        assert!(help.contains(says), "--help says {says:?}: {help}");
    }
}

/// `--help` groups the flags under wget's headings, shows the defaults,
/// and ends with the exit codes and examples; `cluster` is a subcommand
/// with help of its own; completions and the man page come from the same
/// definitions.
#[test]
fn help_is_grouped_and_completions_and_man_page_are_generated() {
    let out = ringcrawl(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut at = 0;
    for heading in [
        "Commands:",
        "Input:",
        "Scope:",
        "Politeness:",
        "Network and TLS:",
        "Limits and budgets:",
        "Output and archives:",
        "State and resume:",
        "Cluster:",
        "Logging:",
        "Exit codes:",
        "Examples:",
    ] {
        let found = help[at..]
            .find(&format!("\n{heading}\n"))
            .unwrap_or_else(|| panic!("{heading} after byte {at}: {help}"));
        at += found + 1;
    }
    for says in [
        "  cluster ",
        "[default: 1m]",
        "[default: 16M]",
        "[default: 2; with --demo: --max-tasks]",
        "[default: every CPU",
        &format!("[default: {}]", ringcrawl::defaults::USER_AGENT),
        "  130 ",
    ] {
        assert!(help.contains(says), "--help says {says:?}: {help}");
    }
    // -h is the same, one line a flag.
    let short = String::from_utf8_lossy(&ringcrawl(&["-h"]).stdout).into_owned();
    assert!(short.contains("Limits and budgets:") && short.contains("Exit codes:"));
    assert!(short.lines().count() < help.lines().count(), "{short}");

    for (args, says) in [
        (vec!["cluster", "--help"], "status"),
        (vec!["cluster", "status", "--help"], "--crawl <NAME>"),
    ] {
        let out = ringcrawl(&args);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {text}");
        assert!(text.contains(says), "{args:?}: {text}");
    }
    // The subcommand runs: Redis is not there, in one line, exit code 1.
    let out = ringcrawl(&[
        "cluster",
        "status",
        "--cluster",
        "redis://127.0.0.1:1/",
        "--crawl",
        "week48",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    let out = ringcrawl(&["cluster", "stats"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr)
            .trim_end()
            .lines()
            .count(),
        1
    );

    let out = ringcrawl(&["completions", "bash"]);
    assert_eq!(out.status.code(), Some(0));
    let script = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        script.contains("--seeds") && script.contains("--rate"),
        "{script}"
    );
    if let Some(bash) = crate::common::tools::require_tool(
        "help_is_grouped_and_completions_and_man_page_are_generated",
        "bash",
        "apt-get install bash",
    ) {
        let dir =
            std::env::temp_dir().join(format!("ringcrawl-completions-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("ringcrawl.bash");
        std::fs::write(&file, &script).unwrap();
        let check = Command::new(bash).arg("-n").arg(&file).output().unwrap();
        assert!(
            check.status.success(),
            "{}",
            String::from_utf8_lossy(&check.stderr)
        );
        std::fs::remove_dir_all(&dir).ok();
    }
    for shell in ["zsh", "fish"] {
        let out = ringcrawl(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("seeds"),
            "{shell}"
        );
    }
    let out = ringcrawl(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));

    let out = ringcrawl(&["man"]);
    assert_eq!(out.status.code(), Some(0));
    let page = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        page.lines().any(|l| l.starts_with(".TH ringcrawl 1")),
        "{page}"
    );
    for section in [".SH OPTIONS", ".SH SCOPE", ".SH POLITENESS"] {
        assert!(page.contains(section), "{section}: {page}");
    }
    assert!(
        page.contains("\\-\\-seeds") && page.contains("Exit codes"),
        "{page}"
    );
}

/// A resume writes to the outputs its crawl was made with: another `-o`,
/// `--warc` or `--cdxj`, or a `--state`, used to be accepted and ignored
/// (new.jsonl never made); now refused in one line, exit code 2. The
/// crawl's own `-o` given again is fine.
#[test]
fn a_resume_refuses_outputs_it_would_not_write() {
    use ringcrawl_site::server::{Reply, Request, Server};
    use std::sync::Arc;

    let server =
        Server::start(Arc::new(|_: &Request| Reply::html(200, "<p>one page</p>"))).unwrap();
    let root = format!("http://{}/", server.addr());
    let dir = std::env::temp_dir().join(format!("ringcrawl-cli-resume-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = |name: &str| dir.join(name).display().to_string();
    let (state, out, new, warc) = (path("st"), path("out.jsonl"), path("new.jsonl"), path("w"));
    let quiet = ["-q", "--ignore-robots", "--no-sitemaps"];
    let made = ringcrawl(&[&quiet[..], &["--state", &state, "-o", &out, &root]].concat());
    assert_eq!(
        made.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );

    for (args, says) in [
        (vec!["--resume", &state, "-o", &new], "-o"),
        (vec!["--resume", &state, "--warc", &warc], "--warc"),
        (vec!["--resume", &state, "--state", &state], "--state"),
    ] {
        let got = ringcrawl(&args);
        let stderr = String::from_utf8_lossy(&got.stderr);
        assert_eq!(got.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    assert!(
        !std::path::Path::new(&new).exists(),
        "new.jsonl was not made"
    );
    assert!(
        !std::path::Path::new(&warc).exists(),
        "no WARC directory was made"
    );

    let again = ringcrawl(&["--resume", &state, "-o", &out]);
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("nothing left to crawl"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}

/// curl's wildcard `--resolve '*:PORT:ADDR'` used to be accepted and not
/// applied; it pins every name on PORT, after the names' own pins.
#[test]
fn resolve_wildcard_pins_every_name_on_its_port() {
    use ringcrawl_site::server::{Reply, Request, Server};
    use std::sync::{Arc, Mutex};

    let hosts: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = hosts.clone();
    let server = Server::start(Arc::new(move |req: &Request| {
        log.lock().unwrap().push(req.host.clone());
        Reply::html(200, "<p>pinned</p>")
    }))
    .unwrap();
    let port = server.addr().port();
    let wildcard = format!("*:{port}:127.0.0.1");
    let root = format!("http://anything.test:{port}/");
    let crawl = |pins: &[&str], code: i32| {
        let mut args = vec![
            "-q",
            "--ignore-robots",
            "--no-sitemaps",
            "--max-tries",
            "1",
            "-o",
            "-",
        ];
        for pin in pins {
            args.extend(["--resolve", pin]);
        }
        args.push(&root);
        let out = ringcrawl(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{pins:?}: {stderr}");
        let record: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one record");
        record
    };
    let record = crawl(&[&wildcard], 0);
    assert_eq!(record["status"], 200, "{record}");
    assert_eq!(hosts.lock().unwrap().as_slice(), ["anything.test"]);
    // The name's own pin wins: 127.0.0.2, where nothing listens.
    let own = format!("anything.test:{port}:127.0.0.2");
    let record = crawl(&[&wildcard, &own], 4);
    assert!(record["status"].is_null(), "{record}");
    assert_eq!(hosts.lock().unwrap().len(), 1);

    for spec in [
        format!("+anything.test:{port}:127.0.0.1"),
        format!("*.test:{port}:127.0.0.1"),
    ] {
        let out = ringcrawl(&["--resolve", &spec, &root]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{spec}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    }
}

/// A site whose robots.txt answers 503: its pages wait for the next try,
/// and the progress line says so, with the cause and when, instead of
/// `0 pages 0/s in flight 0` and nothing else.
#[test]
fn the_progress_line_says_what_the_crawl_waits_for() {
    use ringcrawl_site::server::{Reply, Request, Server};
    use std::sync::Arc;

    let server = Server::start(Arc::new(|req: &Request| match req.path.as_str() {
        "/robots.txt" => Reply::html(503, "busy"),
        _ => Reply::html(200, "<p>page</p>"),
    }))
    .unwrap();
    let root = format!("http://127.0.0.1:{}/", server.port());
    // The retries are 1, 5, 15 and 40 s: the budget ends the crawl while
    // it waits for the second.
    let out = ringcrawl(&[
        "--no-sitemaps",
        "-o",
        "/dev/null",
        "--progress-interval",
        "300ms",
        "--max-time",
        "4s",
        &root,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let waiting: Vec<&str> = stderr.lines().filter(|l| l.contains("waiting: ")).collect();
    assert!(
        waiting
            .iter()
            .any(|l| l.contains("robots.txt of 1 to retry in") && l.contains("(HTTP 503)")),
        "{stderr}"
    );
}

/// `--save DIR` keeps every 2xx page as a file, laid out as wget's
/// `-x -P DIR`: a directory per host and port, `index.html` for `/`, the
/// query in the name; a page that is also a directory is its
/// `index.html`; a 404 and a redirect are not saved.
#[test]
fn save_writes_each_page_as_a_file_laid_out_as_wget_does() {
    use ringcrawl_site::server::{Reply, Request, Server};
    use std::sync::Arc;

    let server = Server::start(Arc::new(|req: &Request| match req.path.as_str() {
        "/" => Reply::html(200, "<a href=/a>a</a> <a href=/a/b?x=1>b</a> <a href=/img.png>i</a> <a href=/gone>g</a> <a href=/moved>m</a>"),
        "/a" => Reply::html(200, "page a"),
        "/a/b?x=1" => Reply::html(200, "page b"),
        "/img.png" => Reply::with_type(200, "image/png", vec![0x89, b'P', b'N', b'G', 0, 1, 2]),
        "/moved" => Reply::redirect(301, "/a"),
        _ => Reply::not_found(),
    }))
    .unwrap();
    let port = server.port();
    let dir = std::env::temp_dir().join(format!("ringcrawl-save-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = ringcrawl(&[
        "--no-sitemaps",
        "-o",
        "/dev/null",
        "--save",
        dir.to_str().unwrap(),
        &format!("http://127.0.0.1:{port}/"),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let site = dir.join(format!("127.0.0.1:{port}"));
    let read =
        |p: &str| std::fs::read(site.join(p)).unwrap_or_else(|e| panic!("{p}: {e}\n{stderr}"));
    assert!(String::from_utf8_lossy(&read("index.html")).contains("href=/a/b?x=1"));
    assert_eq!(read("a/index.html"), b"page a");
    assert_eq!(read("a/b?x=1"), b"page b");
    assert_eq!(read("img.png"), [0x89, b'P', b'N', b'G', 0, 1, 2]);
    assert!(!site.join("gone").exists() && !site.join("moved").exists());
    let mut files = 0;
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(d).unwrap().flatten() {
            if entry.path().is_dir() {
                stack.push(entry.path());
            } else {
                files += 1;
            }
        }
    }
    assert_eq!(files, 4, "{stderr}");
    assert!(stderr.contains("saved 4 files"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}
