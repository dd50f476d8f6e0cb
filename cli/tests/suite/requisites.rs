//! Page requisites (`--page-requisites`, wget's `-p`): the images, scripts,
//! stylesheets and media a page loads, and what its CSS loads, fetched from
//! any host as leaves at the page's depth, with Heritrix's `E` hops.

use std::collections::BTreeMap;

use crate::common;
use crate::common::*;
use ringcrawl::CrawlerBuilder;
use ringcrawl::{Record, ScopeMode};
use ringcrawl_site::server::{Reply, Request, Server};

/// Pages of the site: `/` links to `/p1` ..= `/p{PAGES}`.
const PAGES: usize = 100;

fn reply(content_type: &str, body: &[u8]) -> Reply {
    Reply::Http {
        status: 200,
        headers: vec![("Content-Type".into(), content_type.into())],
        body: body.to_vec(),
    }
}

/// One server for two hosts, both pinned to it: `site.test` (the pages)
/// and `cdn.test` (stylesheets, scripts, fonts, an off-site page).
fn two_host_site() -> Server {
    serve(|req: &Request| {
        let port = req.authority.rsplit(':').next().unwrap_or("80");
        let cdn = format!("http://cdn.test:{port}");
        let path = req.path.as_str();
        match (req.host.as_str(), path) {
            ("site.test", "/") => {
                let links: Vec<String> = (1..=PAGES).map(|i| format!("/p{i}")).collect();
                let links: Vec<&str> = links.iter().map(String::as_str).collect();
                Some(page(&links))
            }
            ("site.test", p) if p.starts_with("/p") => {
                let n = &p[2..];
                Some(html(&format!(
                    r#"<!doctype html><html><head>
                    <link rel=stylesheet href="{cdn}/css/site.css">
                    <link rel=icon href=/favicon.ico>
                    <script src="{cdn}/js/app.js"></script>
                    <style>h1 {{ background: url(/img/h{n}.png) }}</style>
                    </head><body>
                    <img src=/img/{n}.png srcset="/img/{n}-2x.png 2x, /img/{n}-3x.png 3x">
                    <div style="background-image:url('/img/bg{n}.png')"></div>
                    <video src=/media/{n}.mp4 poster=/img/poster.png></video>
                    <img src=/img/moved.png>
                    <embed src=/widget.html>
                    <a href="{cdn}/offsite.html">not a requisite</a>
                    </body></html>"#
                )))
            }
            ("site.test", "/img/moved.png") => Some(redirect(302, &format!("{cdn}/img/moved.png"))),
            ("site.test", "/widget.html") => Some(page(&["/only-from-the-widget"])),
            ("site.test", p) if p.starts_with("/img/") || p == "/favicon.ico" => {
                Some(reply("image/png", b"\x89PNG"))
            }
            ("site.test", p) if p.starts_with("/media/") => Some(reply("video/mp4", b"mp4")),
            ("cdn.test", "/css/site.css") => Some(reply(
                "text/css",
                br#"@import "base.css"; body { background: url(../img/body.png) }"#,
            )),
            ("cdn.test", "/css/base.css") => Some(reply(
                "text/css; charset=utf-8",
                br#"@font-face { src: url("/fonts/f.woff2") format("woff2") }"#,
            )),
            ("cdn.test", "/js/app.js") => Some(reply(
                "application/javascript",
                b"var a = '<img src=/no-from-script.png>';",
            )),
            ("cdn.test", p) if p.starts_with("/img/") || p.starts_with("/fonts/") => {
                Some(reply("application/octet-stream", b"bytes"))
            }
            ("cdn.test", "/offsite.html") => Some(page(&[])),
            _ => None,
        }
    })
}

fn site_config(server: &Server, requisites: bool) -> CrawlerBuilder {
    site_config_from(server, "/", requisites)
}

/// [`site_config`] with its root at `path` of site.test.
fn site_config_from(server: &Server, path: &str, requisites: bool) -> CrawlerBuilder {
    let mut cfg = settings(&[format!("http://site.test:{}{path}", server.port())]);
    cfg = cfg.scope(ScopeMode::Strict);
    for host in ["site.test", "cdn.test"] {
        cfg = cfg.resolve(host, server.port(), vec!["127.0.0.1".parse().unwrap()]);
    }
    cfg = cfg.page_requisites(requisites);
    cfg
}

/// Records by URL with the server's `host:port` taken out.
fn records(outcome: &Outcome, server: &Server) -> BTreeMap<String, Record> {
    let port = format!(":{}", server.port());
    by_url(outcome)
        .into_iter()
        .map(|(url, r)| (url.replace(&port, "").replace("http://", ""), r))
        .collect()
}

#[test]
fn requisites_are_fetched_from_any_host_as_leaves_at_the_page_depth() {
    let server = two_host_site();
    let outcome = crawl(site_config(&server, true));
    let records = records(&outcome, &server);
    let hops = |url: &str| {
        let r = records
            .get(url)
            .unwrap_or_else(|| panic!("{url} was not fetched: {:?}", records.keys()));
        (r.hops.as_str(), r.depth)
    };
    assert_eq!(hops("site.test/p3"), ("L", 1));
    // Images (src, srcset, inline CSS), icons, media, posters: same host.
    for image in [
        "site.test/img/3.png",
        "site.test/img/3-2x.png",
        "site.test/img/3-3x.png",
        "site.test/img/h3.png",
        "site.test/img/bg3.png",
        "site.test/media/3.mp4",
        "site.test/img/poster.png",
        "site.test/favicon.ico",
        "site.test/widget.html",
    ] {
        assert_eq!(hops(image), ("LE", 1), "{image}");
    }
    // Stylesheets and scripts from the CDN, out of the crawl's scope.
    assert_eq!(hops("cdn.test/css/site.css"), ("LE", 1));
    assert_eq!(hops("cdn.test/js/app.js"), ("LE", 1));
    // What the stylesheet loads, and what its import loads.
    assert_eq!(hops("cdn.test/css/base.css"), ("LEE", 1));
    assert_eq!(hops("cdn.test/img/body.png"), ("LEE", 1));
    assert_eq!(hops("cdn.test/fonts/f.woff2"), ("LEEE", 1));
    // A requisite redirected to another host is followed there.
    assert_eq!(hops("site.test/img/moved.png").0, "LE");
    assert_eq!(hops("cdn.test/img/moved.png"), ("LER", 1));
    // Leaves: an embedded page's links are not followed, nor is an
    // off-scope link, nor anything a script's text holds.
    assert!(!records.contains_key("site.test/only-from-the-widget"));
    assert!(!records.contains_key("cdn.test/offsite.html"));
    assert!(!records.keys().any(|u| u.contains("no-from-script")));
    // The page's record counts its requisites among its URLs.
    let p3 = &records["site.test/p3"];
    assert_eq!(p3.num_urls, 12, "{p3:?}");
    let site_css = &records["cdn.test/css/site.css"];
    assert_eq!(site_css.num_urls, 2);
    assert_eq!(
        site_css.via.as_deref().map(|v| v.contains("/p")),
        Some(true)
    );
    // Every page's requisites, and each fetched once (by_url checks).
    let images = records
        .keys()
        .filter(|u| u.starts_with("site.test/img/") && u.ends_with("-3x.png"))
        .count();
    assert_eq!(images, PAGES);
    assert!(records.values().all(|r| r.error.is_none()), "no errors");
}

#[test]
fn without_the_flag_only_pages_in_scope_are_fetched() {
    let server = two_host_site();
    let outcome = crawl(site_config(&server, false));
    let records = records(&outcome, &server);
    // The root, its pages, and what `<a>`/`<link>` point to in scope.
    let mut expected: Vec<String> = (1..=PAGES).map(|i| format!("site.test/p{i}")).collect();
    expected.push("site.test/".into());
    expected.push("site.test/favicon.ico".into());
    expected.sort();
    let fetched: Vec<String> = records.keys().cloned().collect();
    assert_eq!(fetched, expected);
    assert!(records.values().all(|r| !r.hops.contains('E')));
}

#[test]
fn a_root_at_max_depth_zero_still_gets_its_requisites() {
    let server = two_host_site();
    let mut cfg = site_config_from(&server, "/p5", true);
    cfg = cfg.max_depth(0);
    let outcome = crawl(cfg);
    let records = records(&outcome, &server);
    assert!(records.contains_key("site.test/img/5-2x.png"));
    assert_eq!(records["cdn.test/fonts/f.woff2"].depth, 0);
    assert_eq!(records["cdn.test/fonts/f.woff2"].hops, "EEE");
    // Its links are one level too deep; the off-site link is out of scope.
    assert!(records
        .keys()
        .all(|u| !u.ends_with(".html") || u.ends_with("/widget.html")));
}

#[test]
fn the_exclude_regex_still_applies_to_requisites() {
    let server = two_host_site();
    let mut cfg = site_config(&server, true);
    cfg = cfg.scope(ScopeMode::Strict).exclude(r"\.(js|woff2)$");
    let outcome = crawl(cfg);
    let records = records(&outcome, &server);
    assert!(records.contains_key("cdn.test/css/base.css"));
    assert!(!records
        .keys()
        .any(|u| u.ends_with(".js") || u.ends_with(".woff2")));
}

/// A page and everything it loads replay from the archive as they were
/// served: the crawl's WARC files in pywb, each of the 100 pages and every
/// requisite asked for in `id_` mode and compared with the live site's
/// bytes, redirects replayed as redirects to their targets; the crawl's
/// WACZ passes py-wacz's `wacz validate`.
#[test]
fn a_crawl_with_requisites_replays_in_pywb_byte_for_byte() {
    let server = two_host_site();
    let mut cfg = site_config(&server, true);
    let dir = std::env::temp_dir().join(format!("ringcrawl-requisites-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    cfg = cfg.warc(dir.clone());
    let wacz = dir.with_extension("wacz");
    cfg = cfg.wacz(wacz.clone());
    let outcome = crawl(cfg);
    if let Some(bin) = common::warcio::wacz_or_skip("requisites wacz validate") {
        let out = common::warcio::tool(&bin, "wacz", &["validate", "-f"], &wacz);
        assert!(
            out.contains("Validation succeeded, the passed WACZ is valid"),
            "{out}"
        );
    }
    let _ = std::fs::remove_file(&wacz);
    let warcs: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".warc.gz"))
        .collect();
    assert!(!warcs.is_empty());
    let test = "a_crawl_with_requisites_replays_in_pywb_byte_for_byte";
    let Some(pywb) = common::pywb::Pywb::serve_or_skip(test, &warcs) else {
        return;
    };
    let (mut pages, mut redirects) = (0, 0);
    for record in &outcome.records {
        let digits: String = record
            .timestamp
            .chars()
            .filter(char::is_ascii_digit)
            .collect();
        let timestamp = digits.get(..14).unwrap_or_else(|| panic!("{record:?}"));
        let replayed = pywb.get(timestamp, &record.url);
        let url = url::Url::parse(&record.url).unwrap();
        match record.status {
            Some(200) => {
                let authority = format!("{}:{}", url.host_str().unwrap(), server.port());
                let live = common::pywb::get(server.port(), &authority, url.path());
                assert_eq!(replayed.status, 200, "{}", record.url);
                assert!(
                    replayed.body == live.body,
                    "{}: replayed {} bytes, served {}",
                    record.url,
                    replayed.body.len(),
                    live.body.len()
                );
                pages += 1;
            }
            Some(302) => {
                assert_eq!(replayed.status, 302, "{}", record.url);
                let location = replayed
                    .headers
                    .iter()
                    .find(|(k, _)| k == "location")
                    .map(|(_, v)| v.as_str())
                    .unwrap_or_default();
                let target = record.next_url.as_deref().unwrap();
                assert!(location.ends_with(target), "{location} for {target}");
                redirects += 1;
            }
            status => panic!("{} answered {status:?}", record.url),
        }
    }
    assert_eq!(pages + redirects, outcome.records.len());
    assert!(
        redirects == 1 && pages > 7 * PAGES,
        "{pages} pages, {redirects} redirects"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
