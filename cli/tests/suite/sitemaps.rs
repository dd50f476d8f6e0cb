//! Sitemaps: pages no link reaches are found through the root origin's
//! `/sitemap.xml` and the `Sitemap:` lines of its robots.txt; indexes and
//! gzipped sitemaps are followed; loops, nesting, size, URL count and
//! sitemaps per host are bounded, each with a record that says so; a
//! sitemap names only its own host's URLs; `--no-sitemaps` reads none.

use ringcrawl::{ErrorKind, Record};
use std::io::Write;
use std::net::IpAddr;

use crate::common::*;
use flate2::write::GzEncoder;
use flate2::Compression;
use ringcrawl::CrawlerBuilder;
use ringcrawl_site::server::{Reply, Request};

const NS: &str = r#"xmlns="http://www.sitemaps.org/schemas/sitemap/0.9""#;

fn urlset(locs: &[String]) -> String {
    let entries: String = locs
        .iter()
        .map(|l| format!("<url><loc>{l}</loc><changefreq>daily</changefreq></url>\n"))
        .collect();
    format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset {NS}>\n{entries}</urlset>\n")
}

fn index(locs: &[String]) -> String {
    let entries: String = locs
        .iter()
        .map(|l| format!("<sitemap><loc>{l}</loc></sitemap>\n"))
        .collect();
    format!("<?xml version=\"1.0\"?>\n<sitemapindex {NS}>\n{entries}</sitemapindex>\n")
}

fn xml(body: String) -> Reply {
    Reply::with_type(200, "application/xml", body)
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

fn robots(lines: &str) -> Reply {
    Reply::with_type(200, "text/plain", format!("User-agent: *\n{lines}"))
}

/// `http://` + the authority the request was sent to + `path`.
fn at(req: &Request, path: &str) -> String {
    format!("http://{}{path}", req.authority)
}

fn with_sitemaps(roots: &[&str]) -> CrawlerBuilder {
    let mut cfg = settings(roots);
    cfg = cfg.sitemaps(true);
    cfg = cfg.obey_robots(true);
    cfg
}

fn record<'a>(records: &'a std::collections::BTreeMap<String, Record>, url: &str) -> &'a Record {
    records
        .get(url)
        .unwrap_or_else(|| panic!("no record of {url}; have {:?}", records.keys()))
}

#[test]
fn pages_no_link_reaches_are_found_in_the_sitemap_and_the_robots_txt_sitemaps() {
    let server = serve(|req| match req.path.as_str() {
        "/robots.txt" => Some(robots(&format!(
            "Disallow: /private/\nSitemap: {}\nSitemap: /private/hidden.xml\n",
            at(req, "/from-robots.xml")
        ))),
        "/" => Some(page(&["/linked"])),
        "/linked" | "/listed/1" | "/listed/2" | "/robots-listed" => Some(page(&[])),
        "/sitemap.xml" => Some(xml(urlset(&[
            at(req, "/listed/1"),
            at(req, "/listed/2"),
            at(req, "/linked"),
            at(req, "/private/page"),
        ]))),
        "/from-robots.xml" => Some(xml(urlset(&[at(req, "/robots-listed")]))),
        _ => None,
    });
    let b = base(&server);
    let outcome = crawl(with_sitemaps(&[&b]));
    let records = by_url(&outcome);

    let guessed = record(&records, &format!("{b}/sitemap.xml"));
    assert_eq!((guessed.status, guessed.error_kind), (Some(200), None));
    assert_eq!(guessed.hops, "M", "a sitemap is an M hop from the root");
    assert_eq!(guessed.depth, 0);
    assert_eq!(guessed.via.as_deref(), Some(format!("{b}/").as_str()));
    assert_eq!(guessed.num_urls, 4);

    let named = record(&records, &format!("{b}/from-robots.xml"));
    assert_eq!(named.status, Some(200));
    assert_eq!(named.hops, "PM", "named by robots.txt, a prerequisite");
    assert_eq!(
        named.via.as_deref(),
        Some(format!("{b}/robots.txt").as_str())
    );

    for (path, hops, via) in [
        ("/listed/1", "ML", "/sitemap.xml"),
        ("/listed/2", "ML", "/sitemap.xml"),
        ("/robots-listed", "PML", "/from-robots.xml"),
    ] {
        let r = record(&records, &format!("{b}{path}"));
        assert_eq!(r.status, Some(200), "{path}");
        assert_eq!(
            (r.hops.as_str(), r.depth),
            (hops, 1),
            "{path}: a link of depth 1"
        );
        assert_eq!(r.via.as_deref(), Some(format!("{b}{via}").as_str()));
        assert_eq!(server.hits("127.0.0.1", path), 1);
    }
    assert_eq!(
        record(&records, &format!("{b}/linked")).hops,
        "L",
        "found first by the root's link"
    );
    for path in ["/private/page", "/private/hidden.xml"] {
        assert_eq!(
            record(&records, &format!("{b}{path}")).error_kind,
            Some(ErrorKind::RobotsDisallowed),
            "{path}: sitemaps and their pages obey robots.txt"
        );
        assert_eq!(server.hits("127.0.0.1", path), 0);
    }
    assert_eq!(server.hits("127.0.0.1", "/robots.txt"), 1);
}

#[test]
fn an_index_pointing_to_gzipped_sitemaps_is_followed() {
    let server = serve(|req| match req.path.as_str() {
        "/" => Some(page(&[])),
        "/sitemap.xml" => Some(xml(index(&[
            at(req, "/sitemaps/a.xml.gz"),
            at(req, "/sitemaps/b.xml"),
        ]))),
        // A gzip file: gzip in the body itself.
        "/sitemaps/a.xml.gz" => Some(Reply::with_type(
            200,
            "application/x-gzip",
            gzip(urlset(&[at(req, "/from-a")]).as_bytes()),
        )),
        // Compressed in transit instead.
        "/sitemaps/b.xml" => Some(Reply::Http {
            status: 200,
            headers: vec![
                ("Content-Type".into(), "text/xml".into()),
                ("Content-Encoding".into(), "gzip".into()),
            ],
            body: gzip(urlset(&[at(req, "/from-b")]).as_bytes()),
        }),
        "/from-a" | "/from-b" => Some(page(&[])),
        _ => None,
    });
    let b = base(&server);
    let records = by_url(&crawl(with_sitemaps(&[&b])));
    let a = record(&records, &format!("{b}/sitemaps/a.xml.gz"));
    assert_eq!(
        (a.hops.as_str(), a.num_urls, a.error.as_deref()),
        ("MM", 1, None)
    );
    let gz = record(&records, &format!("{b}/sitemaps/b.xml"));
    assert_eq!(gz.content_encoding.as_deref(), Some("gzip"));
    assert_eq!((gz.hops.as_str(), gz.num_urls), ("MM", 1));
    for path in ["/from-a", "/from-b"] {
        let r = record(&records, &format!("{b}{path}"));
        assert_eq!((r.status, r.hops.as_str(), r.depth), (Some(200), "MML", 1));
    }
}

#[test]
fn a_looping_index_is_fetched_once_and_nesting_stops_two_levels_down() {
    let server = serve(|req| match req.path.as_str() {
        "/" => Some(page(&[])),
        // Names itself, and a second index that names it back.
        "/sitemap.xml" => Some(xml(index(&[
            at(req, "/sitemap.xml"),
            at(req, "/loop.xml"),
            at(req, "/nested-1.xml"),
        ]))),
        "/loop.xml" => Some(xml(index(&[at(req, "/sitemap.xml")]))),
        "/nested-1.xml" => Some(xml(index(&[at(req, "/nested-2.xml")]))),
        "/nested-2.xml" => Some(xml(index(&[at(req, "/nested-3.xml")]))),
        "/nested-3.xml" => Some(xml(urlset(&[at(req, "/too-deep")]))),
        _ => None,
    });
    let b = base(&server);
    let records = by_url(&crawl(with_sitemaps(&[&b])));
    for path in [
        "/sitemap.xml",
        "/loop.xml",
        "/nested-1.xml",
        "/nested-2.xml",
    ] {
        assert_eq!(server.hits("127.0.0.1", path), 1, "{path} fetched once");
    }
    let level_3 = record(&records, &format!("{b}/nested-2.xml"));
    assert_eq!(level_3.hops, "MMM");
    assert_eq!(level_3.error_kind, Some(ErrorKind::SitemapTooDeep));
    assert!(
        level_3.error.as_deref().unwrap().contains("not followed"),
        "{:?}",
        level_3.error
    );
    assert!(!records.contains_key(&format!("{b}/nested-3.xml")));
    assert_eq!(server.hits("127.0.0.1", "/nested-3.xml"), 0);
    assert_eq!(server.hits("127.0.0.1", "/too-deep"), 0);
}

#[test]
fn a_sitemap_with_too_many_urls_is_cut_with_a_clear_record() {
    let server = serve(|req| match req.path.as_str() {
        "/" => Some(page(&[])),
        "/sitemap.xml" => Some(xml(urlset(
            &(0..80)
                .map(|i| at(req, &format!("/p/{i}")))
                .collect::<Vec<_>>(),
        ))),
        p if p.starts_with("/p/") => Some(page(&[])),
        _ => None,
    });
    let b = base(&server);
    let mut cfg = with_sitemaps(&[&b]);
    cfg = cfg.max_sitemap_urls(50);
    let records = by_url(&crawl(cfg));
    let sitemap = record(&records, &format!("{b}/sitemap.xml"));
    assert_eq!(sitemap.status, Some(200));
    assert_eq!(sitemap.error_kind, Some(ErrorKind::SitemapTooLarge));
    assert_eq!(
        sitemap.error.as_deref(),
        Some("urlset more than 50 URLs: the first 50 used")
    );
    assert!(sitemap.truncated);
    assert_eq!((sitemap.num_urls, sitemap.num_new_urls), (50, 50));
    assert!(records.contains_key(&format!("{b}/p/49")));
    assert!(!records.contains_key(&format!("{b}/p/50")));
    assert_eq!(server.hits("127.0.0.1", "/p/50"), 0);
}

#[test]
fn a_100_mb_gzip_bomb_sitemap_is_read_to_50_mb_only() {
    // 100 MB of whitespace between two entries: some 100 KB gzipped.
    let bomb = {
        let mut doc = format!("<urlset {NS}><url><loc>/first</loc></url>").into_bytes();
        doc.resize(doc.len() + 100_000_000, b'\n');
        doc.extend_from_slice(b"<url><loc>/past-the-cap</loc></url></urlset>");
        gzip(&doc)
    };
    let server = serve(move |req| match req.path.as_str() {
        "/" => Some(page(&[])),
        "/sitemap.xml" => Some(Reply::with_type(200, "application/gzip", bomb.clone())),
        "/first" | "/past-the-cap" => Some(page(&[])),
        _ => None,
    });
    let b = base(&server);
    let records = by_url(&crawl(with_sitemaps(&[&b])));
    let sitemap = record(&records, &format!("{b}/sitemap.xml"));
    assert_eq!(sitemap.error_kind, Some(ErrorKind::SitemapTooLarge));
    assert_eq!(
        sitemap.error.as_deref(),
        Some("urlset larger than 52428800 bytes inflated: read that far")
    );
    assert!(
        sitemap.size < 1 << 20,
        "the record counts the bytes received"
    );
    assert_eq!(record(&records, &format!("{b}/first")).status, Some(200));
    assert_eq!(server.hits("127.0.0.1", "/past-the-cap"), 0);
}

#[test]
fn sitemaps_past_a_hosts_cap_are_refused_with_a_record() {
    let server = serve(|req| match req.path.as_str() {
        "/" => Some(page(&[])),
        "/sitemap.xml" => Some(xml(index(
            &(0..6)
                .map(|i| at(req, &format!("/s/{i}.xml")))
                .collect::<Vec<_>>(),
        ))),
        p if p.starts_with("/s/") => Some(xml(urlset(&[]))),
        _ => None,
    });
    let b = base(&server);
    let mut cfg = with_sitemaps(&[&b]);
    cfg = cfg.max_sitemaps_per_host(3);
    let outcome = crawl(cfg);
    let budget: Vec<&Record> = outcome
        .records
        .iter()
        .filter(|r| r.error_kind == Some(ErrorKind::SitemapBudget))
        .collect();
    assert_eq!(budget.len(), 4, "/sitemap.xml and two of its six: three");
    assert!(budget.iter().all(|r| r.status.is_none() && r.hops == "MM"));
    let fetched = (0..6)
        .map(|i| server.hits("127.0.0.1", &format!("/s/{i}.xml")))
        .sum::<usize>();
    assert_eq!(fetched, 2);
}

#[test]
fn no_sitemaps_reads_none() {
    let server = serve(|req| match req.path.as_str() {
        "/robots.txt" => Some(robots(&format!("Sitemap: {}\n", at(req, "/named.xml")))),
        "/" => Some(page(&[])),
        "/sitemap.xml" | "/named.xml" => Some(xml(urlset(&[at(req, "/listed")]))),
        "/listed" => Some(page(&[])),
        _ => None,
    });
    let b = base(&server);
    let mut cfg = with_sitemaps(&[&b]);
    cfg = cfg.sitemaps(false);
    let outcome = crawl(cfg);
    assert_eq!(
        urls_of(&outcome).into_iter().collect::<Vec<_>>(),
        [format!("{b}/")]
    );
    for path in ["/sitemap.xml", "/named.xml", "/listed"] {
        assert_eq!(server.hits("127.0.0.1", path), 0, "{path}");
    }
}

#[test]
fn a_sitemap_lists_only_its_own_hosts_urls() {
    // a.test and www.a.test are both in the strict scope of a.test, and
    // both this server; a sitemap of one may not list the other's pages.
    let server = serve(|req| match (req.host.as_str(), req.path.as_str()) {
        (_, "/robots.txt") => Some(robots(&format!(
            "Sitemap: http://www.{}/www-sitemap.xml\n",
            req.authority
        ))),
        (_, "/") => Some(page(&[])),
        ("a.test", "/sitemap.xml") => Some(xml(urlset(&[
            at(req, "/own"),
            format!("http://www.{}/www-page-from-a", req.authority),
            "http://elsewhere.test/x".into(),
        ]))),
        ("www.a.test", "/www-sitemap.xml") => Some(xml(urlset(&[
            at(req, "/www-own"),
            format!(
                "http://{}/a-page-from-www",
                req.authority.trim_start_matches("www.")
            ),
        ]))),
        _ => Some(page(&[])),
    });
    let port = server.port();
    let root = format!("http://a.test:{port}/");
    let mut cfg = with_sitemaps(&[&root]);
    let local: IpAddr = "127.0.0.1".parse().unwrap();
    for host in ["a.test", "www.a.test"] {
        cfg = cfg.resolve(host, port, vec![local]);
    }
    let records = by_url(&crawl(cfg));
    let own = format!("http://a.test:{port}/own");
    assert_eq!(record(&records, &own).status, Some(200));
    let sitemap = record(&records, &format!("http://a.test:{port}/sitemap.xml"));
    assert_eq!(sitemap.num_urls, 1, "the other two are not on its host");
    let www = record(
        &records,
        &format!("http://www.a.test:{port}/www-sitemap.xml"),
    );
    assert_eq!(
        (www.status, www.hops.as_str(), www.num_urls),
        (Some(200), "PM", 1),
        "robots.txt may name a sitemap on another host in scope"
    );
    assert_eq!(
        record(&records, &format!("http://www.a.test:{port}/www-own")).status,
        Some(200)
    );
    assert_eq!(server.hits("www.a.test", "/www-page-from-a"), 0);
    assert_eq!(server.hits("a.test", "/a-page-from-www"), 0);
    assert_eq!(server.hits("elsewhere.test", "/x"), 0);
    assert!(!records
        .keys()
        .any(|u| u.contains("from-") || u.contains("elsewhere")));
}

#[test]
fn listed_pages_keep_to_the_crawls_depth_limit_and_no_sitemap_is_no_error() {
    let server = serve(|req| match req.path.as_str() {
        "/" => Some(page(&[])),
        "/sitemap.xml" => Some(xml(urlset(&[at(req, "/listed")]))),
        _ => None,
    });
    let b = base(&server);
    let mut cfg = with_sitemaps(&[&b]);
    cfg = cfg.max_depth(0);
    let records = by_url(&crawl(cfg));
    assert_eq!(
        record(&records, &format!("{b}/listed")).error_kind,
        Some(ErrorKind::TooDeep)
    );
    assert_eq!(server.hits("127.0.0.1", "/listed"), 0);

    // A site without one: its /sitemap.xml is a plain 404 record.
    let bare = serve(|req| (req.path == "/").then(|| page(&[])));
    let b = base(&bare);
    let records = by_url(&crawl(with_sitemaps(&[&b])));
    let missing = record(&records, &format!("{b}/sitemap.xml"));
    assert_eq!((missing.status, missing.error_kind), (Some(404), None));
    assert_eq!(records.len(), 2);
}

#[test]
fn an_html_page_where_a_sitemap_should_be_is_recorded_as_none() {
    let server = serve(|req| match req.path.as_str() {
        "/" => Some(page(&[])),
        // A soft 404: HTML with 200. Its links are not followed.
        "/sitemap.xml" => Some(page(&["/from-soft-404"])),
        _ => None,
    });
    let b = base(&server);
    let records = by_url(&crawl(with_sitemaps(&[&b])));
    let soft = record(&records, &format!("{b}/sitemap.xml"));
    assert_eq!(soft.error_kind, Some(ErrorKind::SitemapInvalid));
    assert_eq!(
        soft.error.as_deref(),
        Some("not a sitemap: the root element is <html>")
    );
    assert_eq!(server.hits("127.0.0.1", "/from-soft-404"), 0);
}
