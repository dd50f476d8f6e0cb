//! What the binary says when a crawl goes wrong, as a user reads it: a
//! certificate that is not trusted, pages fetched only because of
//! `--insecure`, output paths that cannot be written, a state directory in
//! use, a resume given another scope, a crawl that fetched nothing.

use std::sync::Arc;

use ringcrawl_site::server::{Reply, Request, Server};
use ringcrawl_site::tls::TestCa;

use super::ringcrawl;

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ringcrawl-msg-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn private_ca_server() -> Server {
    let ca = TestCa::new("private CA").unwrap();
    let tls = ca.site_cert().unwrap().server_config(&[]).unwrap();
    Server::start_tls(
        Arc::new(|_: &Request| Reply::html(200, "<p>behind a private CA</p>")),
        tls,
    )
    .unwrap()
}

#[test]
fn an_untrusted_certificate_says_so_and_hints_ca_cert_or_insecure() {
    let server = private_ca_server();
    let root = format!("https://{}/", server.addr());
    let out = ringcrawl(&["-q", "--ignore-robots", "--robots-retries", "none", &root]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("not trusted"), "{stderr}");
    assert!(stderr.contains(&root), "{stderr}");
    assert!(
        stderr.contains("--ca-cert FILE") && stderr.contains("--insecure"),
        "{stderr}"
    );
    assert!(!stderr.contains("no server answered"), "{stderr}");
}

#[test]
fn an_insecure_crawl_counts_accepted_certificates_as_warnings_not_errors() {
    let server = private_ca_server();
    let root = format!("https://{}/", server.addr());
    let dir = temp_dir("insecure");
    let report = dir.join("report.json");
    let out = ringcrawl(&[
        "--insecure",
        "--ignore-robots",
        "--no-sitemaps",
        "-o",
        "-",
        "--report-json",
        report.to_str().unwrap(),
        &root,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let record: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one record");
    assert_eq!(record["status"], 200, "{record}");
    assert!(
        record["error"].is_null() && record["error_kind"].is_null(),
        "{record}"
    );
    let warning = &record["warnings"][0];
    assert_eq!(warning["kind"], "tls_certificate_untrusted", "{record}");
    assert!(
        warning["message"].as_str().unwrap().contains("--insecure"),
        "{record}"
    );
    assert!(stderr.contains("error 0"), "{stderr}");
    assert!(!stderr.contains("errors:"), "{stderr}");
    assert!(
        stderr.contains("warnings: tls_certificate_untrusted 1"),
        "{stderr}"
    );
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(json["errors"], 0, "{json}");
    assert_eq!(
        json["warnings_by_kind"]["tls_certificate_untrusted"], 1,
        "{json}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn output_paths_that_cannot_be_written_are_named_and_exit_2() {
    let dir = temp_dir("paths");
    let missing = dir.join("nodir").join("out.jsonl");
    let file = dir.join("afile");
    std::fs::write(&file, "x").unwrap();
    for (args, path, words) in [
        (
            vec!["-o", missing.to_str().unwrap()],
            missing.to_str().unwrap(),
            "no such directory",
        ),
        (
            vec!["--warc", file.to_str().unwrap()],
            file.to_str().unwrap(),
            "not a directory",
        ),
        (
            vec!["-o", dir.to_str().unwrap()],
            dir.to_str().unwrap(),
            "is a directory",
        ),
    ] {
        let mut all = args.clone();
        all.push("http://127.0.0.1:1/");
        let out = ringcrawl(&all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(path), "{args:?}: {stderr}");
        assert!(stderr.contains(words), "{args:?}: {stderr}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_state_directory_in_use_exits_2_and_says_by_whom() {
    use std::os::fd::AsRawFd;
    let dir = temp_dir("busy");
    let state = dir.join("state");
    std::fs::create_dir_all(&state).unwrap();
    // This test holds the lock, as a running crawl would.
    let lock = std::fs::File::create(state.join("lock")).unwrap();
    std::fs::write(state.join("lock"), format!("{}\n", std::process::id())).unwrap();
    // SAFETY: flock(2) on a file this test opened and keeps open.
    assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0);
    let out = ringcrawl(&["--state", state.to_str().unwrap(), "http://127.0.0.1:1/"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("in use by another process"), "{stderr}");
    assert!(
        stderr.contains(&format!("PID {}", std::process::id())),
        "{stderr}"
    );
    drop(lock);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_resume_given_another_scope_says_what_differs_in_words() {
    let server =
        Server::start(Arc::new(|_: &Request| Reply::html(200, "<p>one page</p>"))).unwrap();
    let root = format!("http://{}/", server.addr());
    let dir = temp_dir("scope");
    let state = dir.join("state");
    let state = state.to_str().unwrap();
    let out = ringcrawl(&[
        "-q",
        "--ignore-robots",
        "--no-sitemaps",
        "--state",
        state,
        &root,
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (given, words) in [
        (
            vec!["--lenient"],
            "a resumed crawl keeps its scope: the crawl is --strict, this run --lenient",
        ),
        (
            vec!["--include", "/docs/"],
            "the crawl's --include is none, this run's \"/docs/\"",
        ),
        (
            vec!["--exclude", "x"],
            "the crawl's --exclude is none, this run's \"x\"",
        ),
        (
            vec!["--no-parent"],
            "the crawl has --no-parent off, this run on",
        ),
    ] {
        let mut all = vec!["--resume", state];
        all.extend_from_slice(&given);
        let out = ringcrawl(&all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{given:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(words), "{given:?}: {stderr}");
        for debug in ["Strict", "Lenient", "None", "Some("] {
            assert!(!stderr.contains(debug), "{given:?}: {stderr}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn nothing_fetched_names_the_roots_that_failed_and_not_the_sitemap_probe() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let root = format!("http://{closed}/");
    // Sitemaps on (the default): the crawl guesses /sitemap.xml too.
    let out = ringcrawl(&["-q", "--robots-retries", "none", "--max-tries", "1", &root]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("no server answered"), "{stderr}");
    assert!(stderr.contains(&format!("{root}: ")), "{stderr}");
    assert!(!stderr.contains("sitemap"), "{stderr}");

    // Answered, never with a 2xx: the root and its status, not the probe's.
    let not_found = Server::start(Arc::new(|_: &Request| Reply::not_found())).unwrap();
    let root = format!("http://{}/", not_found.addr());
    let out = ringcrawl(&["-q", &root]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(8), "{stderr}");
    assert!(stderr.contains(&format!("{root}: status 404")), "{stderr}");
    assert!(!stderr.contains("sitemap"), "{stderr}");
}
