//! Bodies chosen by media type, against nginx: `--reject-type` and
//! `--accept-type` record an answer of an unwanted type with its head and
//! no bytes, `--max-size-per-type` cuts a type's bodies at its size, and
//! HTML is read whatever the rules say, so the crawl still finds every
//! page.

use std::collections::BTreeMap;

use crate::cli::ringcrawl;
use crate::common::nginx::Nginx;
use crate::common::records_at;
use crate::common::tools;

/// Per path: (status, size, truncated_by).
type Records = BTreeMap<String, (u64, u64, Option<String>)>;

/// A crawl with `flags` of a site of a page linking a PDF, a video, an
/// image and another page (which links one more).
fn crawl(test: &str, flags: &[&str]) -> Option<Records> {
    if !tools::require("nginx", test) {
        return None;
    }
    let dir = Nginx::dir();
    let files: [(&str, Vec<u8>); 6] = [
        (
            "index.html",
            b"<a href=/doc.pdf>d</a> <a href=/movie.mp4>m</a> <a href=/pic.png>p</a> <a href=/page.html>h</a>"
                .to_vec(),
        ),
        ("page.html", b"<a href=/more.pdf>more</a>".to_vec()),
        ("doc.pdf", vec![b'%'; 5000]),
        ("more.pdf", vec![b'%'; 5000]),
        ("movie.mp4", vec![0; 20_000]),
        ("pic.png", vec![0x89; 3000]),
    ];
    for (name, body) in &files {
        std::fs::write(dir.join(name), body).unwrap();
    }
    let mut nginx = Nginx::start(dir.clone(), |port| {
        format!(
            "server {{ listen 127.0.0.1:{port}; root .;\n\
               types {{ text/html html; application/pdf pdf; video/mp4 mp4; image/png png; }} }}\n"
        )
    });
    let origin = format!("http://127.0.0.1:{}", nginx.port());
    let out = dir.join("records.jsonl");
    let root = format!("{origin}/");
    let mut args = vec![root.as_str(), "-q", "--no-sitemaps", "--ignore-robots"];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["-o", out.to_str().unwrap()]);
    let run = ringcrawl(&args);
    nginx.stop();
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    Some(
        records_at(&out, &origin)
            .into_iter()
            .map(|(path, r)| {
                let cut = r["truncated_by"].as_str().map(str::to_string);
                let entry = (
                    r["status"].as_u64().unwrap(),
                    r["size"].as_u64().unwrap(),
                    cut,
                );
                (path, entry)
            })
            .collect(),
    )
}

fn whole(size: u64) -> (u64, u64, Option<String>) {
    (200, size, None)
}

fn cut(size: u64) -> (u64, u64, Option<String>) {
    (200, size, Some("limit".to_string()))
}

#[test]
fn rejected_types_are_recorded_without_their_bodies_and_sizes_cut_per_type() {
    let Some(records) = crawl(
        "rejected_types_are_recorded_without_their_bodies_and_sizes_cut_per_type",
        &[
            "--reject-type",
            "video/*,application/pdf",
            "--reject-type",
            "text/html",
            "--max-size-per-type",
            "image/*=1K",
        ],
    ) else {
        return;
    };
    assert_eq!(records["/doc.pdf"], cut(0));
    assert_eq!(records["/more.pdf"], cut(0), "found through page.html");
    assert_eq!(records["/movie.mp4"], cut(0));
    assert_eq!(records["/pic.png"], cut(1024));
    assert_eq!(records["/page.html"], whole(26), "HTML is never refused");
}

#[test]
fn accepted_types_only_and_html_still_read() {
    let Some(records) = crawl(
        "accepted_types_only_and_html_still_read",
        &["--accept-type", "image/png"],
    ) else {
        return;
    };
    assert_eq!(records["/pic.png"], whole(3000));
    assert_eq!(records["/doc.pdf"], cut(0));
    assert_eq!(records["/movie.mp4"], cut(0));
    assert_eq!(records["/more.pdf"], cut(0));
}

#[test]
fn no_rules_download_every_body() {
    let Some(records) = crawl("no_rules_download_every_body", &[]) else {
        return;
    };
    assert_eq!(records["/movie.mp4"], whole(20_000));
    assert_eq!(records["/doc.pdf"], whole(5000));
}

#[test]
fn bad_types_are_usage_errors() {
    for args in [
        ["--accept-type", "pdf"],
        ["--reject-type", "*/html"],
        ["--max-size-per-type", "image/*"],
        ["--max-size-per-type", "image/*=lots"],
    ] {
        let mut argv = args.to_vec();
        argv.push("http://example.test/");
        let run = ringcrawl(&argv);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(args[0]), "{args:?}: {stderr}");
    }
}
