//! What `--include` and `--no-parent` let a crawl follow, as a user sees
//! it in the records: links kept out are neither fetched nor recorded;
//! roots and sitemaps are fetched whatever the filters say.

use std::collections::BTreeSet;
use std::sync::Arc;

use ringcrawl_site::server::{Reply, Request, Server};

use super::ringcrawl;

/// A site of a few sections, each page linking to the others, and a
/// sitemap that lists two pages.
fn site() -> Server {
    Server::start(Arc::new(|req: &Request| {
        let page = |links: &[&str]| {
            let body: String = links.iter().map(|l| format!("<a href=\"{l}\">x</a>")).collect();
            Reply::html(200, body)
        };
        match req.path.as_str() {
            "/" => page(&["/docs/guide/", "/blog/post"]),
            "/docs/guide/" | "/docs/guide/index.html" => page(&[
                "/docs/guide/part1",
                "/docs/guide/sub/part2",
                "/docs/other",
                "/",
                "/blog/post",
            ]),
            "/sitemap.xml" => Reply::Http {
                status: 200,
                headers: vec![("Content-Type".into(), "application/xml".into())],
                body: format!(
                    "<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
                     <url><loc>http://{host}/docs/guide/listed</loc></url>\
                     <url><loc>http://{host}/top-listed</loc></url></urlset>",
                    host = req.authority
                )
                .into_bytes(),
            },
            _ => page(&[]),
        }
    }))
    .unwrap()
}

/// The paths of the records a crawl of `root` with `args` writes.
fn recorded(root: &str, args: &[&str]) -> BTreeSet<String> {
    let mut all = vec!["--ignore-robots", "-q", "-o", "-"];
    all.extend_from_slice(args);
    all.push(root);
    let out = ringcrawl(&all);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The origin: `http://HOST:PORT`, up to the path.
    let base: String = root.split('/').take(3).collect::<Vec<_>>().join("/");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let r: serde_json::Value = serde_json::from_str(l).unwrap();
            let url = r["url"].as_str().unwrap();
            url.strip_prefix(&base).unwrap_or(url).to_string()
        })
        .collect()
}

fn set(paths: &[&str]) -> BTreeSet<String> {
    paths.iter().map(|p| p.to_string()).collect()
}

#[test]
fn include_follows_only_matching_links_and_still_fetches_the_root() {
    let server = site();
    let root = format!("http://{}/", server.addr());
    let got = recorded(
        &root,
        &[
            "--no-sitemaps",
            "--include",
            "/guide/$",
            "--include",
            "/part1",
        ],
    );
    assert_eq!(
        got,
        set(&["/", "/docs/guide/", "/docs/guide/part1"]),
        "the root matches neither and is fetched; of the links, only those one matches"
    );
    let got = recorded(&root, &["--no-sitemaps", "--include", "/docs/"]);
    assert_eq!(
        got,
        set(&[
            "/",
            "/docs/guide/",
            "/docs/guide/part1",
            "/docs/guide/sub/part2",
            "/docs/other"
        ])
    );
}

#[test]
fn no_parent_stays_under_the_roots_directory() {
    let server = site();
    let root = format!("http://{}/docs/guide/index.html", server.addr());
    let got = recorded(&root, &["--no-sitemaps", "--no-parent"]);
    assert_eq!(
        got,
        set(&[
            "/docs/guide/index.html",
            "/docs/guide/part1",
            "/docs/guide/sub/part2"
        ]),
        "/docs/other, / and /blog/post are above /docs/guide/"
    );
}

#[test]
fn sitemaps_are_read_under_include_and_no_parent_but_list_only_pages_in_scope() {
    let server = site();
    let root = format!("http://{}/docs/guide/", server.addr());
    let got = recorded(
        &root,
        &["--sitemaps", "--no-parent", "--include", "/docs/guide/"],
    );
    assert!(
        got.contains("/sitemap.xml"),
        "the guessed sitemap is read: {got:?}"
    );
    assert!(got.contains("/docs/guide/listed"), "{got:?}");
    assert!(!got.contains("/top-listed"), "{got:?}");
    assert!(
        !got.contains("/docs/other") && !got.contains("/"),
        "{got:?}"
    );
}

#[test]
fn a_resumed_crawl_keeps_its_include_and_no_parent() {
    let server = site();
    let root = format!("http://{}/docs/guide/", server.addr());
    let dir = std::env::temp_dir().join(format!("ringcrawl-scope-resume-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let state = dir.join("state");
    let records = dir.join("records.jsonl");
    let first = ringcrawl(&[
        "-q",
        "--ignore-robots",
        "--no-sitemaps",
        "--no-parent",
        "--include",
        "/part1|/other",
        "--max-pages",
        "1",
        "--state",
        state.to_str().unwrap(),
        "-o",
        records.to_str().unwrap(),
        &root,
    ]);
    assert_eq!(
        first.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    // The flags are the crawl's; a larger budget is this run's.
    let out = ringcrawl(&[
        "-q",
        "--resume",
        state.to_str().unwrap(),
        "--max-pages",
        "100",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let paths: BTreeSet<String> = std::fs::read_to_string(&records)
        .unwrap()
        .lines()
        .map(|l| {
            let r: serde_json::Value = serde_json::from_str(l).unwrap();
            let url = r["url"].as_str().unwrap().to_string();
            url.split_once(&server.addr().to_string())
                .map_or(url.clone(), |(_, p)| p.to_string())
        })
        .collect();
    // /docs/guide/sub/part2: not --include'd; /docs/other: above the root.
    assert_eq!(paths, set(&["/docs/guide/", "/docs/guide/part1"]));
    std::fs::remove_dir_all(&dir).ok();
}
