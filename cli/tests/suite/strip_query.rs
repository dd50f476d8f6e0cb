//! `--strip-query`: tracking parameters left out of every URL before it
//! is deduplicated, so nginx is asked for each page once whatever link
//! led to it, and the records name the stripped URLs, the root's too.

use std::collections::BTreeMap;

use crate::cli::ringcrawl;
use crate::common::nginx::Nginx;
use crate::common::records_at;
use crate::common::tools;

#[test]
fn tracking_parameters_are_stripped_before_dedup_so_each_page_is_fetched_once() {
    if !tools::require(
        "nginx",
        "tracking_parameters_are_stripped_before_dedup_so_each_page_is_fetched_once",
    ) {
        return;
    }
    let dir = Nginx::dir();
    std::fs::write(
        dir.join("index.html"),
        "<a href='/p.html?utm_source=a'>1</a> <a href='/p.html?utm_source=b&amp;id=1'>2</a>\
         <a href='/p.html?id=1&amp;utm_medium=x'>3</a> <a href='/q.html?sessionid=9'>4</a>\
         <a href='/q.html?SessionId=9'>5</a>",
    )
    .unwrap();
    std::fs::write(dir.join("p.html"), "p").unwrap();
    std::fs::write(dir.join("q.html"), "q").unwrap();
    let mut nginx = Nginx::start(dir.clone(), |port| {
        format!("server {{ listen 127.0.0.1:{port}; root .; }}\n")
    });
    let origin = format!("http://127.0.0.1:{}", nginx.port());
    let root = format!("{origin}/?utm_campaign=launch");
    let out = dir.join("records.jsonl");
    let run = ringcrawl(&[
        &root,
        "--strip-query",
        "utm_*",
        "--strip-query",
        "sessionid",
        "--ignore-robots",
        "--no-sitemaps",
        "-q",
        "-o",
        out.to_str().unwrap(),
    ]);
    let seen = nginx.stop();
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let mut asked: BTreeMap<&str, usize> = BTreeMap::new();
    for s in &seen {
        *asked.entry(s.uri.as_str()).or_default() += 1;
    }
    assert_eq!(
        asked,
        BTreeMap::from([
            ("/", 1),
            ("/p.html", 1),
            ("/p.html?id=1", 1),
            ("/q.html", 1),
            // Letter case counts: another parameter to a server.
            ("/q.html?SessionId=9", 1),
        ])
    );
    let urls: Vec<String> = records_at(&out, &origin)
        .into_iter()
        .map(|(path, _)| path)
        .collect();
    assert_eq!(urls.len(), 5, "{urls:?}");
    assert!(urls.contains(&"/".to_string()), "{urls:?}");
}

#[test]
fn a_bad_pattern_is_a_usage_error() {
    for pattern in ["a=b", ",", "x&y"] {
        let run = ringcrawl(&["--strip-query", pattern, "http://example.test/"]);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{pattern}: {stderr}");
        assert!(stderr.contains("--strip-query: "), "{pattern}: {stderr}");
    }
}
