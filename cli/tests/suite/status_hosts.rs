//! `--status-addr`'s top hosts and latency history: a crawl of the
//! synthetic site split over twelve hosts, some of its pages faulty, whose
//! `/status.json` top hosts must equal what the crawl's records say of
//! each host, and whose history's latency intervals must add up to the
//! crawl's fetches; then the live page in headless Chromium must show the
//! same top hosts (skipped without Chromium unless
//! `RINGCRAWL_REQUIRE_TOOLS=1`).

use std::collections::BTreeMap;
use std::sync::Arc;

use ringcrawl_site::server::Server;
use ringcrawl_site::synth::{SiteSpec, SynthSite};
use serde_json::Value;

use crate::common::tools::require_tool;
use crate::status_server::{dom_value, render_in_chromium, Crawl};

/// Hosts of the site: more than a list holds.
const HOSTS: usize = 12;

/// What one host's records say: records (fetches) and those its host
/// failed (network errors, 5xx, 429: what backs a host off).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Counted {
    fetched: u64,
    errors: u64,
}

/// Each host's [`Counted`], from the records.
fn by_host(records: &str) -> BTreeMap<String, Counted> {
    let mut hosts = BTreeMap::<String, Counted>::new();
    for line in records.lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        let url = url::Url::parse(r["url"].as_str().unwrap()).unwrap();
        let c = hosts
            .entry(url.host_str().unwrap().to_string())
            .or_default();
        c.fetched += 1;
        let failed = match r["status"].as_u64() {
            Some(status) => status >= 500 || status == 429,
            None => r["error_kind"].is_string(),
        };
        c.errors += u64::from(failed);
    }
    hosts
}

/// The ten hosts with the most of `key`, most first, ties by name, none
/// at 0: the order the status server lists them in.
fn top(hosts: &BTreeMap<String, Counted>, key: fn(&Counted) -> u64) -> Vec<(String, u64)> {
    let mut all: Vec<(String, u64)> = hosts
        .iter()
        .map(|(h, c)| (h.clone(), key(c)))
        .filter(|(_, n)| *n > 0)
        .collect();
    all.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    all.truncate(ringcrawl::TOP_HOSTS);
    all
}

/// A list of `/status.json`'s `top_hosts` as (host, its `key`).
fn listed(now: &Value, list: &str, key: &str) -> Vec<(String, u64)> {
    now["top_hosts"][list]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["host"].as_str().unwrap().to_string(),
                h[key].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn top_hosts_on_the_live_page_match_the_records() {
    let test = "top_hosts_on_the_live_page_match_the_records";
    let site = Arc::new(SynthSite::new(SiteSpec {
        pages: 1200,
        hosts: HOSTS,
        page_bytes: 1500,
        fault_percent: 6,
        ..SiteSpec::default()
    }));
    let server = Server::start(site.clone().handler()).expect("site starts");
    let authority = format!("127.0.0.1:{}", server.port());
    let mut args: Vec<String> = site.roots(&authority);
    for k in 0..HOSTS {
        args.push("--resolve".into());
        args.push(format!(
            "{}:{}:127.0.0.1",
            SynthSite::host_name(k),
            server.port()
        ));
    }
    // One try each, a slow body cut at 2 s: every faulty page is one
    // failed record, soon. One shard: a page a shard lends a peer is
    // counted for its host when the peer gives it back, and the give-back
    // of the crawl's very last page can be cut off by the end (the peer's
    // senders close first), which would make its host one short here.
    args.extend(
        [
            "--max-tries",
            "1",
            "--timeout",
            "2s",
            "--max-tasks",
            "16",
            "--cores",
            "1",
        ]
        .map(String::from),
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let crawl = Crawl::run("status-hosts", &args);
    let _ = crawl.final_metrics();
    // The records are whole once the report is written.
    let _ = crawl.report_written();
    let (code, json) = crawl.get("/status.json");
    assert_eq!(code, 200);
    let status: Value = serde_json::from_str(&json).unwrap();
    let now = &status["now"];
    let records = std::fs::read_to_string(crawl.dir.join("records.jsonl")).unwrap();
    let hosts = by_host(&records);
    assert_eq!(hosts.len(), HOSTS, "every host crawled");

    let fetched = top(&hosts, |c| c.fetched);
    assert_eq!(
        fetched.len(),
        ringcrawl::TOP_HOSTS,
        "twelve hosts, ten listed"
    );
    assert_eq!(listed(now, "fetched", "fetched"), fetched);
    let failing = top(&hosts, |c| c.errors);
    assert!(!failing.is_empty(), "faulty pages fail: {hosts:?}");
    assert_eq!(listed(now, "failing", "errors"), failing);
    for h in now["top_hosts"]["failing"].as_array().unwrap() {
        let host = &hosts[h["host"].as_str().unwrap()];
        assert_eq!(h["fetched"].as_u64().unwrap(), host.fetched, "{h}");
    }
    assert!(
        listed(now, "queued", "queued").is_empty(),
        "the crawl is over: nothing queued"
    );

    // Each sample's latency is of the fetches since the sample before:
    // together, every fetch of the crawl once.
    let history = status["history"].as_array().unwrap();
    let fetches: u64 = history.iter().map(|s| s["fetches"].as_u64().unwrap()).sum();
    assert_eq!(fetches, now["summary"]["total"]["count"].as_u64().unwrap());
    for s in history {
        assert_eq!(s["p50_ms"].is_null(), s["fetches"] == 0, "{s}");
        if let (Some(p50), Some(p99)) = (s["p50_ms"].as_f64(), s["p99_ms"].as_f64()) {
            assert!(p50 <= p99, "{s}");
        }
    }

    let Some(chromium) = require_tool(test, "chromium", "apt-get install chromium") else {
        crawl.stop();
        return;
    };
    let shot = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/status-hosts.png");
    let dom = render_in_chromium(
        &chromium,
        &crawl.dir.join("chromium-profile"),
        &format!("http://{}/", crawl.status),
        &shot,
    );
    let number = |id: &str| -> u64 {
        dom_value(&dom, id)
            .unwrap_or_else(|| panic!("no #{id} in:\n{dom}"))
            .parse()
            .unwrap()
    };
    for (list, table, key) in [
        ("fetched", "top-fetched", "fetched"),
        ("failing", "top-failing", "errors"),
    ] {
        for (host, n) in listed(now, list, key) {
            assert_eq!(number(&format!("{table}-{host}")), n, "{table} {host}");
        }
        let rows = dom.matches(&format!("id=\"{table}-")).count();
        assert_eq!(
            rows,
            listed(now, list, key).len(),
            "{table}: one row a host"
        );
    }
    assert!(
        dom.contains("id=\"chart-latency\"") && dom.contains("class=\"p99\""),
        "the latency chart was drawn"
    );
    let (code, report) = crawl.stop();
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(
        report["urls"].as_u64().unwrap(),
        records.lines().count() as u64
    );
}
