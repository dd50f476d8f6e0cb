//! `ringcrawl report`, the page made from a finished crawl's records: the
//! demo site's records (with a cut last line, as a killed crawl leaves)
//! made into a page, its numbers checked against what the records say,
//! counted here another way: statuses, bytes, hosts, and the redirect
//! chains (the demo site has chains of one and two redirects). The page
//! is read in headless Chromium (`--dump-dom`, a screenshot at
//! target/report.png), sorted by a column through its address
//! (`#sort=errors`); skipped without Chromium unless
//! `RINGCRAWL_REQUIRE_TOOLS=1`, the numbers then read from the file.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::process::Command;

use serde_json::Value;

use crate::common::tools::require_tool;
use crate::status_server::{dom_value, render_in_chromium};

/// The redirect chains of `records`, followed through a map of every
/// record by URL (all in memory: the test's records are few): each
/// redirect that no other redirect leads to starts a chain, which goes
/// on while its target's record redirects. Their lengths (redirects).
fn chain_lengths(records: &[Value]) -> Vec<u32> {
    let by_url: HashMap<&str, &Value> = records
        .iter()
        .map(|r| (r["url"].as_str().unwrap(), r))
        .collect();
    let targets: std::collections::HashSet<&str> = records
        .iter()
        .filter_map(|r| r["next_url"].as_str())
        .collect();
    let mut lengths = Vec::new();
    for start in records.iter().filter(|r| r["next_url"].is_string()) {
        if targets.contains(start["url"].as_str().unwrap()) {
            continue;
        }
        let mut hops = 1;
        let mut at = start["next_url"].as_str().unwrap();
        while let Some(next) = by_url.get(at).and_then(|r| r["next_url"].as_str()) {
            hops += 1;
            at = next;
        }
        lengths.push(hops);
    }
    lengths
}

#[test]
fn report_page_of_the_demo_records_shows_their_counts_in_headless_chromium() {
    let test = "report_page_of_the_demo_records_shows_their_counts_in_headless_chromium";
    let dir = std::env::temp_dir().join(format!("ringcrawl-report-page-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (records, page) = (dir.join("records.jsonl"), dir.join("report.html"));
    // One shard: its records are in the order it made them, so a
    // chain's redirect comes before its target's record (two shards hand
    // their lines to the writer each at its own time).
    let out = Command::new(env!("CARGO_BIN_EXE_ringcrawl"))
        .args(["--demo", "2000", "--cores", "1", "-q", "-o"])
        .arg(&records)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A cut last line, as a killed crawl leaves: counted, not fatal.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&records)
        .unwrap();
    file.write_all(b"{\"url\":\"http://cut").unwrap();
    drop(file);
    let out = Command::new(env!("CARGO_BIN_EXE_ringcrawl"))
        .arg("report")
        .arg(&records)
        .arg("-o")
        .arg(&page)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<script").count(), 1, "the sort's, inline");
    assert!(
        !html.contains("<script src") && !html.contains("http-equiv") && !html.contains("<link"),
        "self-contained: nothing fetched"
    );

    // What the records say, counted here.
    let lines: Vec<Value> = std::fs::read_to_string(&records)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let mut statuses = BTreeMap::<u64, u64>::new();
    for r in &lines {
        if let Some(s) = r["status"].as_u64() {
            *statuses.entry(s).or_default() += 1;
        }
    }
    let bytes: u64 = lines.iter().map(|r| r["size"].as_u64().unwrap()).sum();
    let host = url::Url::parse(lines[0]["url"].as_str().unwrap())
        .unwrap()
        .host_str()
        .unwrap()
        .to_string();
    let redirects = lines.iter().filter(|r| r["next_url"].is_string()).count() as u64;
    let chains = chain_lengths(&lines);
    assert!(
        chains.contains(&2),
        "the demo has chains of two: {chains:?}"
    );
    let longest = *chains.iter().max().unwrap();

    let Some(chromium) = require_tool(test, "chromium", "apt-get install chromium") else {
        // The page's numbers, read from the file instead.
        assert!(html.contains(&format!("id=\"records\" data-value=\"{}\"", lines.len())));
        assert!(html.contains(&format!("id=\"chain-longest-0\" data-value=\"{longest}\"")));
        std::fs::remove_dir_all(&dir).ok();
        return;
    };
    let shot = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/report.png");
    let dom = render_in_chromium(
        &chromium,
        &dir.join("chromium-profile"),
        &format!("file://{}", page.display()),
        &shot,
    );
    let number = |id: &str| {
        dom_value(&dom, id)
            .unwrap_or_else(|| panic!("no #{id} in:\n{dom}"))
            .parse::<u64>()
            .unwrap()
    };
    assert_eq!(number("records"), lines.len() as u64);
    assert_eq!(number("unreadable"), 1);
    assert_eq!(number("bytes"), bytes);
    assert_eq!(number("hosts"), 1);
    for (status, n) in &statuses {
        assert_eq!(number(&format!("status-{status}")), *n, "{status}");
    }
    assert!(dom.contains("id=\"chart-pages\""));

    // The hosts' table: the one host, all its numbers.
    let errors = lines.iter().filter(|r| r["error_kind"].is_string()).count() as u64;
    assert_eq!(number(&format!("host-{host}-urls")), lines.len() as u64);
    assert_eq!(number(&format!("host-{host}-errors")), errors);
    assert_eq!(number(&format!("host-{host}-redirects")), redirects);
    assert_eq!(number(&format!("host-{host}-bytes")), bytes);
    assert_eq!(number("hosts-shown"), 1);

    // The chains: every one started is counted once, as a chain or as
    // joined to another at its target; the longest is listed first.
    let counted = number("chains") + number("chain-joined") + number("chain-not-followed");
    assert_eq!(counted, chains.len() as u64, "{chains:?}");
    let by_hops: u64 = (1..=longest)
        .filter_map(|h| dom_value(&dom, &format!("chain-hops-{h}")))
        .map(|v| v.parse::<u64>().unwrap())
        .sum();
    assert_eq!(by_hops, number("chains"));
    assert_eq!(number("chain-longest-0"), u64::from(longest));
    assert_eq!(number("chain-loops"), 0, "the demo has no loops");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn report_hosts_table_sorts_by_a_column_in_headless_chromium() {
    let test = "report_hosts_table_sorts_by_a_column_in_headless_chromium";
    let dir = std::env::temp_dir().join(format!("ringcrawl-report-sort-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (records, page) = (dir.join("records.jsonl"), dir.join("report.html"));
    // Three hosts: most URLs on a, most errors on c, most bytes on b.
    let mut lines = String::new();
    let mut add = |host: &str, n: usize, size: u64, error: bool| {
        for i in 0..n {
            let outcome = if error {
                r#""error":"refused","error_kind":"connect_refused""#.to_string()
            } else {
                r#""status":200"#.to_string()
            };
            lines.push_str(&format!(
                "{{\"url\":\"http://{host}/{i}\",{outcome},\"size\":{size},\"elapsed_ms\":1.0,\"timestamp\":\"2026-11-27T09:50:20.000Z\"}}\n"
            ));
        }
    };
    add("a.test", 5, 10, false);
    add("b.test", 2, 1000, false);
    add("c.test", 3, 0, true);
    std::fs::write(&records, lines).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ringcrawl"))
        .arg("report")
        .arg(&records)
        .arg("-o")
        .arg(&page)
        .output()
        .unwrap();
    assert!(out.status.success());
    let html = std::fs::read_to_string(&page).unwrap();
    let order = |dom: &str| -> Vec<String> {
        ["a.test", "b.test", "c.test"]
            .iter()
            .map(|h| {
                (
                    dom.find(&format!("id=\"host-{h}-urls\"")).unwrap(),
                    h.to_string(),
                )
            })
            .collect::<BTreeMap<_, _>>()
            .into_values()
            .collect()
    };
    assert_eq!(
        order(&html),
        ["a.test", "c.test", "b.test"],
        "most URLs first"
    );
    let Some(chromium) = require_tool(test, "chromium", "apt-get install chromium") else {
        std::fs::remove_dir_all(&dir).ok();
        return;
    };
    for (column, want) in [
        ("errors", ["c.test", "a.test", "b.test"]),
        ("bytes", ["b.test", "a.test", "c.test"]),
        ("host", ["a.test", "b.test", "c.test"]),
    ] {
        let dom = render_in_chromium(
            &chromium,
            &dir.join("chromium-profile"),
            &format!("file://{}#sort={column}", page.display()),
            &dir.join("shot.png"),
        );
        assert_eq!(order(&dom), want, "sorted by {column}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
