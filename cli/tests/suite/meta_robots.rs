//! Pages that speak for themselves, served by nginx: a
//! `<meta name="robots" content="nofollow">` page and an `X-Robots-Tag:
//! nofollow` page are fetched and recorded but their links are not
//! followed; directives for another agent change nothing;
//! `--ignore-meta-robots` follows them all; `--skip-nofollow` leaves out
//! a link whose `rel` says `nofollow`, which is followed by default.

use std::collections::BTreeMap;

use crate::cli::ringcrawl;
use crate::common::nginx::Nginx;
use crate::common::records_at;
use crate::common::tools;

/// The site: (file, body).
const SITE: &[(&str, &str)] = &[
    (
        "index.html",
        "<a href=/meta.html>m</a> <a href=/header.html>h</a> <a href=/other.html>o</a> \
         <a rel='ugc nofollow' href=/commented.html>c</a>",
    ),
    ("commented.html", "reached by a rel=nofollow link"),
    (
        "meta.html",
        r#"<head><meta name="Robots" content="noindex, nofollow"></head><a href=/behind-meta.html>b</a>"#,
    ),
    ("header.html", "<a href=/behind-header.html>b</a>"),
    (
        "other.html",
        r#"<meta name="otherbot" content="nofollow"><a href=/behind-other.html>b</a>"#,
    ),
    ("behind-meta.html", "reached by a nofollow page's link"),
    ("behind-header.html", "reached by a nofollow header's page"),
    ("behind-other.html", "reached past another agent's nofollow"),
];

/// The records of a crawl of the site with `flags`, by path: (status,
/// robots).
fn crawl(flags: &[&str]) -> Option<BTreeMap<String, (u64, Option<String>)>> {
    if !tools::require("nginx", "meta_robots") {
        return None;
    }
    let dir = Nginx::dir();
    for (name, body) in SITE {
        std::fs::write(dir.join(name), body).unwrap();
    }
    let mut nginx = Nginx::start(dir.clone(), |port| {
        format!(
            "server {{ listen 127.0.0.1:{port}; root .;\n\
               location = /header.html {{ add_header X-Robots-Tag \"nofollow\"; }}\n\
               location = /other.html {{ add_header X-Robots-Tag \"otherbot: nofollow\"; }} }}\n"
        )
    });
    let root = format!("http://127.0.0.1:{}/", nginx.port());
    let out = dir.join("records.jsonl");
    let mut args = vec![
        root.as_str(),
        "-q",
        "--no-sitemaps",
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(flags);
    let run = ringcrawl(&args);
    nginx.stop();
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    Some(
        records_at(&out, &root)
            .into_iter()
            .map(|(path, r)| {
                let robots = r["robots"].as_str().map(str::to_string);
                (path, (r["status"].as_u64().unwrap_or(0), robots))
            })
            .collect(),
    )
}

#[test]
fn a_nofollow_page_is_recorded_but_its_links_are_not_followed() {
    let Some(records) = crawl(&[]) else { return };
    let robots = |path: &str| records[path].1.as_deref();
    assert_eq!(records["meta.html"].0, 200);
    assert_eq!(robots("meta.html"), Some("noindex, nofollow"));
    assert_eq!(robots("header.html"), Some("nofollow"));
    assert_eq!(robots("other.html"), None);
    assert_eq!(robots(""), None);
    assert!(!records.contains_key("behind-meta.html"), "{records:?}");
    assert!(!records.contains_key("behind-header.html"), "{records:?}");
    assert_eq!(records["behind-other.html"].0, 200, "{records:?}");
    assert_eq!(
        records["commented.html"].0, 200,
        "rel=nofollow is followed by default"
    );
}

#[test]
fn skip_nofollow_leaves_out_links_whose_rel_says_so() {
    let Some(records) = crawl(&["--skip-nofollow"]) else {
        return;
    };
    assert!(!records.contains_key("commented.html"), "{records:?}");
    assert_eq!(records["other.html"].0, 200, "{records:?}");
}

#[test]
fn ignore_meta_robots_follows_them_and_still_records_what_they_said() {
    let Some(records) = crawl(&["--ignore-meta-robots"]) else {
        return;
    };
    for page in [
        "behind-meta.html",
        "behind-header.html",
        "behind-other.html",
    ] {
        assert_eq!(records[page].0, 200, "{page}: {records:?}");
    }
    assert_eq!(records["meta.html"].1.as_deref(), Some("noindex, nofollow"));
}
