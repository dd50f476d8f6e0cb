//! `--per-ip N`: many host names on one server address are not fetched
//! all at once. Eight names on two servers of the test process, four on
//! 127.0.0.1 and four on 127.0.0.2 (`--resolve`), each name with
//! robots.txt (404) and a few pages; every reply is held a while, and the
//! servers log when each request arrived: requests to one address that
//! arrived within that hold of one another ran at once. The hosts live on
//! whichever shards their names hash to: the count is the crawl's. Every
//! page is fetched and recorded once, none counted as failed: a page held
//! back waits, its place is given back, and the crawl ends.

use std::net::SocketAddr;

use ringcrawl_site::server::Server;

use crate::cli::ringcrawl;
use crate::common::held::{held_site, peak};

/// Crawl eight names, four on each of the site's two addresses, with
/// `flags`; the records' URLs and statuses.
fn crawl(server: &Server, flags: &[&str]) -> Vec<(String, u64)> {
    let dir = std::env::temp_dir().join(format!(
        "ringcrawl-per-ip-{}-{}",
        std::process::id(),
        flags.join("")
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("records.jsonl");
    let mut roots = Vec::new();
    let mut resolves = Vec::new();
    for (i, addr) in (0..8).zip(server.addrs().iter().cycle()) {
        let host = format!("h{i}.test");
        roots.push(format!("http://{host}:{}/", addr.port()));
        resolves.push(format!("{host}:{}:{}", addr.port(), addr.ip()));
    }
    let mut args: Vec<&str> = roots.iter().map(String::as_str).collect();
    for r in &resolves {
        args.extend(["--resolve", r.as_str()]);
    }
    args.extend(["--per-host", "4", "--no-sitemaps", "-q", "-o"]);
    args.push(out.to_str().unwrap());
    args.extend(flags);
    let run = ringcrawl(&args);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let records = std::fs::read_to_string(&out).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    records
        .lines()
        .map(|line| {
            let r: serde_json::Value = serde_json::from_str(line).unwrap();
            (
                r["url"].as_str().unwrap().to_string(),
                r["status"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

#[test]
fn names_on_one_address_share_its_limit_whatever_their_shards() {
    let pages = 3;
    let addrs: [SocketAddr; 2] = [
        "127.0.0.1:0".parse().unwrap(),
        "127.0.0.2:0".parse().unwrap(),
    ];
    // The address a request came to, by the port it names.
    let (server, gauge) = held_site(&addrs, pages, |req| {
        req.authority.rsplit(':').next().unwrap_or("").to_string()
    });
    let mut records = crawl(&server, &["--per-ip", "2"]);
    records.sort();
    let before = records.len();
    records.dedup();
    assert_eq!(records.len(), before, "each URL recorded once");
    assert_eq!(records.len(), 8 * (1 + pages), "{records:?}");
    assert!(records.iter().all(|(_, s)| *s == 200), "{records:?}");
    for addr in server.addrs() {
        let key = addr.port().to_string();
        let asked = gauge.lock().unwrap()[&key].len();
        // Each name: robots.txt, its root, its pages.
        assert_eq!(asked, 4 * (2 + pages), "{addr}");
        let most = peak(&gauge, &key);
        assert!(most <= 2, "{most} requests at once to {addr}");
    }

    // The same crawl without the limit: more at once, as the limit held.
    let (server, gauge) = held_site(&addrs, pages, |req| {
        req.authority.rsplit(':').next().unwrap_or("").to_string()
    });
    assert_eq!(crawl(&server, &[]).len(), 8 * (1 + pages));
    let most = server
        .addrs()
        .iter()
        .map(|a| peak(&gauge, &a.port().to_string()))
        .max()
        .unwrap();
    assert!(most > 2, "without --per-ip: {most} at once");
}

#[test]
fn a_per_ip_of_zero_is_a_usage_error() {
    let out = ringcrawl(&["--per-ip", "0", "http://a.test/"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--per-ip: must be at least 1"), "{stderr}");
}
