//! Servers that say "slow down", as nginx's `limit_req` does: one request
//! a second, the rest answered 429 with `Retry-After: 1`. The crawl waits
//! as asked and fetches every page in the end, each 429 an attempt of its
//! page; with `--max-retry-after 0` the 429s are recorded as they came.

use std::collections::BTreeMap;

use crate::cli::ringcrawl;
use crate::common::nginx::Nginx;
use crate::common::records_at;
use crate::common::tools;

/// Per path: (status, tries).
type Records = BTreeMap<String, (u64, u64)>;

/// The records of a crawl with `flags`, and nginx's statuses in order.
fn crawl(test: &str, flags: &[&str]) -> Option<(Records, Vec<u16>)> {
    if !tools::require("nginx", test) {
        return None;
    }
    let dir = Nginx::dir();
    std::fs::write(
        dir.join("index.html"),
        "<a href=/a.html>a</a> <a href=/b.html>b</a> <a href=/c.html>c</a>",
    )
    .unwrap();
    for page in ["a", "b", "c"] {
        std::fs::write(dir.join(format!("{page}.html")), page).unwrap();
    }
    let mut nginx = Nginx::start(dir.clone(), |port| {
        format!(
            "limit_req_zone $binary_remote_addr zone=slow:1m rate=1r/s;\n\
             server {{ listen 127.0.0.1:{port}; root .;\n\
               limit_req zone=slow; limit_req_status 429;\n\
               add_header Retry-After 1 always; }}\n"
        )
    });
    let origin = format!("http://127.0.0.1:{}", nginx.port());
    let root = format!("{origin}/");
    let out = dir.join("records.jsonl");
    let mut args = vec![
        root.as_str(),
        "-q",
        "--ignore-robots",
        "--no-sitemaps",
        "--per-host",
        "1",
    ];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["-o", out.to_str().unwrap()]);
    let run = ringcrawl(&args);
    let seen = nginx.stop();
    assert!(
        run.status.code().is_some(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let records = records_at(&out, &origin)
        .into_iter()
        .map(|(path, r)| {
            let entry = (
                r["status"].as_u64().unwrap_or(0),
                r["tries"].as_u64().unwrap(),
            );
            (path, entry)
        })
        .collect();
    Some((records, seen.iter().map(|s| s.status).collect()))
}

#[test]
fn a_429_with_retry_after_is_waited_out_and_every_page_fetched() {
    let Some((records, statuses)) = crawl(
        "a_429_with_retry_after_is_waited_out_and_every_page_fetched",
        &["--max-tries", "6"],
    ) else {
        return;
    };
    assert_eq!(records.len(), 4, "{records:?}");
    for (path, (status, _)) in &records {
        assert_eq!(*status, 200, "{path}: {records:?}");
    }
    // nginx said "slow down" at least once, and each 429 was an attempt
    // of the page it answered.
    let refused = statuses.iter().filter(|s| **s == 429).count();
    assert!(refused > 0, "{statuses:?}");
    let tries: u64 = records.values().map(|(_, t)| t).sum();
    assert_eq!(tries as usize, statuses.len(), "{records:?} {statuses:?}");
}

#[test]
fn max_retry_after_0_records_the_429s_as_they_came() {
    let Some((records, statuses)) = crawl(
        "max_retry_after_0_records_the_429s_as_they_came",
        &["--max-retry-after", "0"],
    ) else {
        return;
    };
    assert_eq!(records.len(), 4, "{records:?}");
    assert!(
        records
            .values()
            .any(|(status, tries)| *status == 429 && *tries == 1),
        "{records:?} {statuses:?}"
    );
}

/// A host whose pages all fail (503, no Retry-After) is backed off after
/// 3 failures in a row, longer each time, and the report names it.
#[test]
fn a_host_that_keeps_failing_is_backed_off_and_named_in_the_report() {
    let test = "a_host_that_keeps_failing_is_backed_off";
    if !tools::require("nginx", test) {
        return;
    }
    let dir = Nginx::dir();
    std::fs::create_dir_all(dir.join("www")).unwrap();
    let links: String = (1..=5).map(|i| format!("<a href=/p{i}>p</a>")).collect();
    std::fs::write(dir.join("www/index.html"), links).unwrap();
    let mut nginx = Nginx::start(dir.clone(), |port| {
        format!(
            "server {{ listen 127.0.0.1:{port}; server_name down.test; root www;\n\
               location ~ ^/p {{ return 503; }} }}\n"
        )
    });
    let root = format!("http://down.test:{}/", nginx.port());
    let pin = format!("down.test:{}:127.0.0.1", nginx.port());
    let report = dir.join("report.json");
    let run = ringcrawl(&[
        &root,
        "--resolve",
        &pin,
        "--ignore-robots",
        "--no-sitemaps",
        "--max-tries",
        "1",
        "--report-json",
        report.to_str().unwrap(),
    ]);
    nginx.stop();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("backed off: 1 times a host failed 3 times in a row; most: down.test (5)"),
        "{stderr}"
    );
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(json["backed_off"]["count"], 1, "{json}");
    assert_eq!(
        json["backed_off"]["hosts"][0]["host"], "down.test",
        "{json}"
    );
    assert_eq!(json["backed_off"]["hosts"][0]["failures"], 5, "{json}");
}
