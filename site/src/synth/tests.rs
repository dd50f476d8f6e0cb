//! The site's scenarios that span files: determinism, reachability and
//! statuses, redirects, the HTML against the walk, an in-memory crawl against
//! the expected URLs (with faults and hosts), and the speed of rendering. The
//! reply helpers here are shared with the files' own tests.
//!
//! What this is not: the tests of one file (those sit in that file), or of
//! the site served over sockets (`server/tests.rs`, and the crawler's own
//! suite in `tests/`).

use super::*;
use crate::server::{Reply, Step};
use std::collections::{BTreeSet, HashSet, VecDeque};

pub(super) fn body_of(reply: &Reply) -> (u16, Vec<(String, String)>, Vec<u8>) {
    match reply {
        Reply::Http {
            status,
            headers,
            body,
        } => (*status, headers.clone(), body.clone()),
        _ => panic!("expected an HTTP reply"),
    }
}

pub(super) fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Minimal href/src extractor: handles the quoting styles the site emits.
fn extract(html: &str) -> Vec<String> {
    let lower = html.to_ascii_lowercase();
    let mut out = Vec::new();
    for attr in ["href=", "src="] {
        let mut from = 0;
        while let Some(pos) = lower[from..].find(attr) {
            let start = from + pos + attr.len();
            let rest = &html[start..];
            let value = match rest.as_bytes().first() {
                Some(b'"') => rest[1..].split('"').next().unwrap(),
                Some(b'\'') => rest[1..].split('\'').next().unwrap(),
                _ => rest
                    .split(|c: char| c.is_whitespace() || c == '>')
                    .next()
                    .unwrap(),
            };
            out.push(value.replace("&amp;", "&"));
            from = start;
        }
    }
    out
}

/// Resolves an href from `base_path` the way a browser would, for the
/// forms the site emits. Returns `Err(url)` for off-site or non-HTTP links.
fn resolve(base_path: &str, href: &str, authority: &str) -> Result<String, String> {
    let href = href.split('#').next().unwrap();
    if href.is_empty() {
        return Ok(base_path.to_string());
    }
    for prefix in [format!("http://{authority}"), format!("//{authority}")] {
        if let Some(rest) = href.strip_prefix(&prefix) {
            if rest.starts_with('/') {
                return Ok(rest.to_string());
            }
        }
    }
    if href.contains(':') || href.starts_with("//") {
        return Err(href.to_string());
    }
    if href.starts_with('/') {
        return Ok(href.to_string());
    }
    let dir = &base_path[..=base_path.rfind('/').unwrap()];
    let mut segs: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    let rel: Vec<&str> = href.split('/').collect();
    for (n, seg) in rel.iter().enumerate() {
        match *seg {
            "." => {}
            ".." => {
                segs.pop();
            }
            s if n + 1 == rel.len() => segs.push(s),
            s => segs.push(s),
        }
    }
    Ok(format!("/{}", segs.join("/")))
}

#[test]
fn deterministic_for_a_seed() {
    let spec = SiteSpec::default();
    let a = SynthSite::new(spec.clone());
    let b = SynthSite::new(spec.clone());
    assert_eq!(a.expected_paths(), b.expected_paths());
    assert_eq!(a.offsite_urls(), b.offsite_urls());
    for path in [
        "/",
        "/p/1.html",
        "/p/999.html",
        "/r/1",
        "/img/0.png",
        "/nope",
    ] {
        assert_eq!(body_of(&a.respond(path)), body_of(&b.respond(path)));
    }
    let other = SynthSite::new(SiteSpec { seed: 2, ..spec });
    assert_ne!(
        body_of(&a.respond("/p/5.html")).2,
        body_of(&other.respond("/p/5.html")).2
    );
}

#[test]
fn every_page_reachable_plus_extras() {
    for spec in [
        SiteSpec::default(),
        SiteSpec {
            pages: 1,
            links: 0,
            seed: 9,
            page_bytes: 100,
            ..SiteSpec::default()
        },
        SiteSpec {
            pages: 250,
            links: 3,
            seed: 42,
            page_bytes: 2000,
            ..SiteSpec::default()
        },
    ] {
        let site = SynthSite::new(spec.clone());
        let paths = site.expected_paths();
        let set: HashSet<&str> = paths.iter().map(|s| s.as_str()).collect();
        assert_eq!(set.len(), paths.len());
        assert!(paths.windows(2).all(|w| w[0] < w[1]), "sorted");
        let pages = spec.pages.max(1);
        for i in 0..pages {
            assert!(set.contains(SynthSite::page_path(i).as_str()), "page {i}");
        }
        let m = pages.div_ceil(100);
        let chained = (0..m).filter(|j| j % 3 == 1).count();
        // pages + missing + redirects + chain hops + css + png
        assert_eq!(paths.len(), pages + m + m + chained + m + m, "{spec:?}");
        assert!(!set.contains("/should-not-be-followed"));
        let off = site.offsite_urls();
        assert_eq!(off.len(), m + 1);
        assert!(off.contains(&"http://www.other.example/x".to_string()));
    }
}

#[test]
fn statuses_and_types() {
    let site = SynthSite::new(SiteSpec::default());
    for path in site.expected_paths() {
        let (status, headers, body) = body_of(&site.respond_to("h:1", &path));
        let ctype = header(&headers, "content-type").unwrap_or("");
        if path == "/" || path.starts_with("/p/") {
            assert_eq!(status, 200, "{path}");
            assert!(ctype.starts_with("text/html"));
            let len = body.len();
            assert!((4000..8000).contains(&len), "{path}: {len} bytes");
        } else if path.starts_with("/missing/") {
            assert_eq!(status, 404);
        } else if path.starts_with("/r/") || path.starts_with("/r2/") {
            assert!(status == 301 || status == 302);
            assert!(header(&headers, "location").is_some());
        } else if path.starts_with("/static/") {
            assert_eq!((status, ctype), (200, "text/css"));
        } else if path.starts_with("/img/") {
            assert_eq!((status, ctype), (200, "image/png"));
        } else {
            panic!("unexpected path {path}");
        }
    }
    assert_eq!(body_of(&site.respond("/p/0.html")).0, 404);
    assert_eq!(body_of(&site.respond("/p/01.html")).0, 404);
    assert_eq!(body_of(&site.respond("/p/1000.html")).0, 404);
    assert_eq!(body_of(&site.respond("/r2/0")).0, 404);
    assert_eq!(body_of(&site.respond("/p/3.html?x=1")).0, 200);
}

#[test]
fn redirects_lead_to_existing_pages() {
    let site = SynthSite::new(SiteSpec::default());
    let expected: HashSet<String> = site.expected_paths().into_iter().collect();
    let mut chains = 0;
    for j in 0..10 {
        let mut path = format!("/r/{j}");
        let mut hops = 0;
        loop {
            let (status, headers, _) = body_of(&site.respond_to("example.test:81", &path));
            if status == 200 {
                break;
            }
            assert!(status == 301 || status == 302);
            let loc = header(&headers, "location").unwrap();
            path = loc
                .strip_prefix("http://example.test:81")
                .unwrap_or(loc)
                .to_string();
            assert!(expected.contains(&path), "{path}");
            hops += 1;
            assert!(hops <= 2);
        }
        assert!(path == "/" || path.starts_with("/p/"));
        chains += usize::from(hops == 2);
    }
    assert!(chains > 0);
    // /r/0 goes to a page "/" links to directly: fetched once, if coalesced.
    let root = String::from_utf8(body_of(&site.respond("/")).2).unwrap();
    assert!(extract(&root)
        .iter()
        .any(|h| h.trim_start_matches('.') == "p/1.html" || h.ends_with("/p/1.html")));
    assert_eq!(
        header(&body_of(&site.respond("/r/0")).1, "location"),
        Some("/p/1.html")
    );
}

/// The HTML really links exactly what the walk assumes: parse every
/// page's hrefs independently and compare with the expected sets.
#[test]
fn html_links_match_the_walk() {
    for authority in ["", "127.0.0.1:8080"] {
        let site = SynthSite::new(SiteSpec {
            pages: 400,
            links: 8,
            seed: 7,
            page_bytes: 3000,
            ..SiteSpec::default()
        });
        let mut found = BTreeSet::new();
        let mut off = BTreeSet::new();
        found.insert("/".to_string());
        let mut styles = HashSet::new();
        let expected = site.expected_paths();
        for path in &expected {
            let reply = site.respond_to(authority, path);
            let (status, headers, body) = body_of(&reply);
            let ctype = header(&headers, "content-type").unwrap_or("");
            if let Some(loc) = header(&headers, "location") {
                found.insert(resolve(path, loc, authority).unwrap());
            }
            if status != 200 || !ctype.starts_with("text/html") {
                continue;
            }
            let html = String::from_utf8(body).unwrap();
            let mut marks = vec![
                "<A HREF=".to_string(),
                "href='".to_string(),
                "href=/".to_string(),
                "href=\"./".to_string(),
                "href=\"../".to_string(),
            ];
            if !authority.is_empty() {
                marks.push(format!("href=\"//{authority}/"));
                marks.push(format!("href=\"http://{authority}/"));
            }
            for mark in marks {
                if html.contains(&mark) {
                    styles.insert(mark);
                }
            }
            for href in extract(&html) {
                match resolve(path, &href, authority) {
                    Ok(p) => {
                        found.insert(p);
                    }
                    Err(u) if u.starts_with("mailto:") => {}
                    Err(u) => {
                        off.insert(u);
                    }
                }
            }
        }
        assert_eq!(found.into_iter().collect::<Vec<_>>(), expected);
        assert_eq!(off.into_iter().collect::<Vec<_>>(), site.offsite_urls());
        let want = if authority.is_empty() { 5 } else { 7 };
        assert_eq!(styles.len(), want, "{styles:?}");
    }
}

/// Follows a site the way a crawler does, over full URLs: links of
/// 2xx HTML pages and redirect targets, in scope (`*.site.test` or the
/// authority). Returns the fetched URLs and the status-or-fault of each.
fn crawl_in_memory(
    site: &SynthSite,
    authority: &str,
) -> std::collections::BTreeMap<String, Result<u16, String>> {
    let mut out = std::collections::BTreeMap::new();
    let mut queue: VecDeque<url::Url> = site
        .roots(authority)
        .iter()
        .map(|r| url::Url::parse(r).unwrap())
        .collect();
    let mut seen: HashSet<String> = queue.iter().map(|u| u.to_string()).collect();
    while let Some(url) = queue.pop_front() {
        let host_auth = format!("{}:{}", url.host_str().unwrap(), url.port().unwrap());
        let reply = site.respond_to(&host_auth, url.path());
        let mut links = Vec::new();
        let outcome = match &reply {
            Reply::Http {
                status,
                headers,
                body,
            } => {
                if let Some(loc) = header(headers, "location") {
                    links.push(loc.to_string());
                }
                let ctype = header(headers, "content-type").unwrap_or("");
                if (200..300).contains(status) && ctype.starts_with("text/html") {
                    links.extend(extract(std::str::from_utf8(body).unwrap()));
                }
                Ok(*status)
            }
            Reply::Hangup => Err("hangup".to_string()),
            Reply::Script(steps) => {
                let bytes: Vec<u8> = steps
                    .iter()
                    .filter_map(|s| match s {
                        Step::Write(b) => Some(b.clone()),
                        _ => None,
                    })
                    .flatten()
                    .collect();
                let text = String::from_utf8_lossy(&bytes).to_ascii_lowercase();
                assert!(!text.contains("href"), "fault body with a link: {url}");
                Err(format!("script of {} bytes", bytes.len()))
            }
        };
        out.insert(url.to_string(), outcome);
        for href in links {
            let Ok(mut link) = url.join(&href) else {
                continue;
            };
            link.set_fragment(None);
            let host = link.host_str().unwrap_or("").to_string();
            let in_scope = link.scheme() == "http"
                && (host.ends_with(".site.test")
                    || format!("{host}:{}", link.port().unwrap_or(80)) == authority);
            if in_scope && seen.insert(link.to_string()) {
                queue.push_back(link);
            }
        }
    }
    out
}

#[test]
fn walk_with_faults_matches_what_a_crawler_finds() {
    for (faults, hosts) in [(0, 1), (20, 1), (20, 5), (0, 13)] {
        let site = SynthSite::new(SiteSpec {
            pages: 1500,
            links: 6,
            seed: 11,
            fault_percent: faults,
            hosts,
            ..SiteSpec::default()
        });
        let authority = "127.0.0.1:4321";
        let fetched = crawl_in_memory(&site, authority);
        let urls: Vec<String> = fetched.keys().cloned().collect();
        assert_eq!(
            urls,
            site.expected_urls(authority),
            "{faults}% {hosts} hosts"
        );
        let faulty: Vec<String> = fetched
            .iter()
            .filter(|(_, o)| !matches!(o, Ok(200..=399)))
            .map(|(u, _)| u.clone())
            .collect();
        assert_eq!(faulty, site.faulty_urls(authority));
        let good = site.good_urls(authority);
        assert_eq!(good.len() + faulty.len(), urls.len());
        assert!(good.iter().all(|u| matches!(fetched[u], Ok(200..=399))));
        if hosts == 1 {
            let paths = |urls: &[String]| -> Vec<String> {
                urls.iter()
                    .map(|u| u.strip_prefix("http://127.0.0.1:4321").unwrap().to_string())
                    .collect()
            };
            assert_eq!(paths(&urls), site.expected_paths());
            assert_eq!(paths(&faulty), site.faulty_paths());
            assert_eq!(paths(&good), site.good_paths());
        }
        if faults > 0 {
            // Faults cost some reachability, but not much.
            let pages = urls.iter().filter(|u| u.contains("/p/")).count();
            assert!(pages > 1400 && pages < 1500, "{pages}");
            assert!(faulty.len() > 200, "{}", faulty.len());
        } else {
            assert_eq!(faulty.iter().filter(|u| u.contains("/p/")).count(), 0);
        }
    }
}

#[test]
fn page_generation_is_fast() {
    let site = SynthSite::new(SiteSpec {
        pages: 20_000,
        ..SiteSpec::default()
    });
    let start = std::time::Instant::now();
    let mut bytes = 0;
    for i in 0..2000 {
        bytes += site.page_html(i * 10, "127.0.0.1:1").unwrap().len();
    }
    let per_page = start.elapsed() / 2000;
    assert!(bytes > 2000 * 4500);
    // Generous bound for debug builds on a loaded machine.
    assert!(
        per_page < std::time::Duration::from_millis(2),
        "{per_page:?}"
    );
    assert_eq!(site.expected_paths().len(), 20_000 + 4 * 200 + 67);
}
