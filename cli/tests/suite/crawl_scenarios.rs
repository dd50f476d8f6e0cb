//! End-to-end crawls of small scripted sites on 127.0.0.1: the chapter's
//! behaviour (links, cycles, redirects, retries, scope) on one and two cores.

use ringcrawl::{ErrorKind, ScopeMode};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::Arc;

use crate::common::*;
use ringcrawl_site::server::{Reply, Request};

#[test]
fn link_fan_out_fetches_every_page_once() {
    let server = site(&[
        ("/", || page(&["/a", "/b", "/c"])),
        ("/a", || page(&["/a1", "/a2", "/b"])),
        ("/b", || page(&["/b1", "/"])),
        ("/c", || page(&[])),
        ("/a1", || page(&["/b1"])),
        ("/a2", || page(&[])),
        ("/b1", || page(&["/a1"])),
    ]);
    let b = base(&server);
    let outcome = crawl(settings(&[format!("{b}/")]));
    let expected: BTreeSet<String> = ["/", "/a", "/b", "/c", "/a1", "/a2", "/b1"]
        .iter()
        .map(|p| format!("{b}{p}"))
        .collect();
    assert_eq!(urls_of(&outcome), expected);
    for p in ["/", "/a", "/b", "/c", "/a1", "/a2", "/b1"] {
        assert_eq!(server.hits("127.0.0.1", p), 1, "{p} fetched once");
    }
    let root = &by_url(&outcome)[&format!("{b}/")];
    assert_eq!(
        (root.status, root.num_urls, root.content_type.as_deref()),
        (Some(200), 3, Some("text/html"))
    );
    assert_eq!(root.encoding.as_deref(), Some("utf-8"));
}

#[test]
fn link_cycle_terminates() {
    let server = site(&[
        ("/", || page(&["/x"])),
        ("/x", || page(&["/y"])),
        ("/y", || page(&["/", "/x"])),
    ]);
    let outcome = crawl(settings(&[base(&server)]));
    assert_eq!(outcome.records.len(), 3);
    assert_eq!(server.total_hits(), 3);
}

#[test]
fn redirect_target_is_queued_not_followed_inline() {
    let server = site(&[
        ("/", || page(&["/old"])),
        ("/old", || redirect(301, "/new")),
        ("/new", || page(&[])),
    ]);
    let b = base(&server);
    let records = by_url(&crawl(settings(&[&b])));
    let old = &records[&format!("{b}/old")];
    assert_eq!(old.status, Some(301));
    assert_eq!(old.next_url.as_deref(), Some(format!("{b}/new").as_str()));
    assert_eq!(records[&format!("{b}/new")].status, Some(200));
}

#[test]
fn redirect_cycle_terminates() {
    let server = site(&[
        ("/", || redirect(302, "/r1")),
        ("/r1", || redirect(302, "/r2")),
        ("/r2", || redirect(302, "/")),
    ]);
    let outcome = crawl(settings(&[base(&server)]));
    assert_eq!(outcome.records.len(), 3);
    assert_eq!(server.total_hits(), 3);
    assert!(outcome.records.iter().all(|r| r.error.is_none()));
}

#[test]
fn redirect_chain_longer_than_the_limit_is_cut() {
    let server = serve(|req| {
        let n: u32 = req.path.strip_prefix("/r/")?.parse().ok()?;
        Some(redirect(301, &format!("/r/{}", n + 1)))
    });
    let b = base(&server);
    let mut cfg = settings(&[format!("{b}/r/0")]);
    cfg = cfg.max_redirect(3);
    let records = by_url(&crawl(cfg));
    let fetched: BTreeSet<String> = records.keys().cloned().collect();
    let expected: BTreeSet<String> = (0..=3).map(|n| format!("{b}/r/{n}")).collect();
    assert_eq!(fetched, expected);
    let last = &records[&format!("{b}/r/3")];
    assert_eq!(last.error_kind, Some(ErrorKind::RedirectLimit));
    assert_eq!(last.next_url.as_deref(), Some(format!("{b}/r/4").as_str()));
}

#[test]
fn links_of_a_redirect_target_resolve_against_its_own_url() {
    let server = serve(|req| {
        Some(match req.path.as_str() {
            "/old/dir/" => redirect(301, "/new/dir/"),
            "/new/dir/" => {
                let authority = &req.authority;
                html(&format!(
                    "<a href=\"page\">a</a><a href=\"../Up\">b</a>\
                     <a href=\"q?a=1&amp;b=2\">c</a><a href=\"//{authority}/Abs/Path\">d</a>"
                ))
            }
            "/new/dir/page" | "/new/Up" | "/new/dir/q?a=1&b=2" | "/Abs/Path" => page(&[]),
            _ => return None,
        })
    });
    let b = base(&server);
    let records = by_url(&crawl(settings(&[format!("{b}/old/dir/")])));
    let fetched: BTreeSet<String> = records.keys().cloned().collect();
    let expected: BTreeSet<String> = [
        "/old/dir/",
        "/new/dir/",
        "/new/dir/page",
        "/new/Up",
        "/new/dir/q?a=1&b=2",
        "/Abs/Path",
    ]
    .iter()
    .map(|p| format!("{b}{p}"))
    .collect();
    assert_eq!(fetched, expected);
    assert!(
        records.values().all(|r| r.status.is_some_and(|s| s < 400)),
        "{records:?}"
    );
    assert_eq!(
        server.hits("127.0.0.1", "/old/dir/page"),
        0,
        "not the first URL's"
    );
}

#[test]
fn redirect_to_an_already_seen_page_fetches_it_once() {
    let server = site(&[
        ("/", || page(&["/target", "/go", "/go2"])),
        ("/go", || redirect(302, "/target")),
        ("/go2", || redirect(301, "/go")),
        ("/target", || page(&[])),
    ]);
    let outcome = crawl(settings(&[base(&server)]));
    assert_eq!(server.hits("127.0.0.1", "/target"), 1);
    assert_eq!(server.hits("127.0.0.1", "/go"), 1);
    assert_eq!(outcome.records.len(), 4);
}

fn flaky(req: &Request) -> Option<Reply> {
    match req.path.as_str() {
        "/" => Some(page(&["/flaky"])),
        "/flaky" if req.attempt < 3 => Some(Reply::Hangup),
        "/flaky" => Some(page(&[])),
        _ => None,
    }
}

#[test]
fn network_errors_are_retried_until_max_tries() {
    let server = serve(flaky);
    let b = base(&server);
    let records = by_url(&crawl(settings(&[&b])));
    let r = &records[&format!("{b}/flaky")];
    assert_eq!(
        (r.status, r.tries, r.error.as_deref()),
        (Some(200), 3, None)
    );

    let server = serve(flaky);
    let b = base(&server);
    let mut cfg = settings(&[&b]);
    cfg = cfg.max_tries(2);
    let records = by_url(&crawl(cfg));
    let r = &records[&format!("{b}/flaky")];
    assert_eq!(
        (r.status, r.tries, r.error_kind),
        (None, 2, Some(ErrorKind::EmptyResponse))
    );
}

#[test]
fn server_errors_are_recorded_not_retried_and_not_parsed() {
    let server = site(&[("/", || page(&["/404", "/500"])), ("/500", || status(500))]);
    let b = base(&server);
    let records = by_url(&crawl(settings(&[&b])));
    assert_eq!(records[&format!("{b}/404")].status, Some(404));
    assert_eq!(records[&format!("{b}/500")].status, Some(500));
    assert_eq!(
        server.hits("127.0.0.1", "/500"),
        1,
        "5xx is an answer, not a network error"
    );
    assert_eq!(
        server.hits("127.0.0.1", "/from-error-page"),
        0,
        "links of error pages are not followed"
    );
}

#[test]
fn non_html_bodies_are_not_parsed_for_links() {
    let server = site(&[
        ("/", || page(&["/img.png", "/data.json"])),
        ("/img.png", || Reply::Http {
            status: 200,
            headers: vec![("Content-Type".into(), "image/png".into())],
            body: b"\x89PNG <a href=\"/bait\">".to_vec(),
        }),
        ("/data.json", || Reply::Http {
            status: 200,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: b"{\"x\": \"<a href='/bait2'>\"}".to_vec(),
        }),
    ]);
    let b = base(&server);
    let records = by_url(&crawl(settings(&[&b])));
    assert_eq!(records.len(), 3);
    assert_eq!(
        records[&format!("{b}/img.png")].content_type.as_deref(),
        Some("image/png")
    );
    assert_eq!(
        server.hits("127.0.0.1", "/bait") + server.hits("127.0.0.1", "/bait2"),
        0
    );
}

#[test]
fn exclude_skips_matching_urls() {
    let server = site(&[
        ("/", || page(&["/keep", "/private/x", "/keep2"])),
        ("/keep", || page(&["/private/y"])),
    ]);
    let mut cfg = settings(&[base(&server)]);
    cfg = cfg.scope(ScopeMode::Strict).exclude("/private/");
    let outcome = crawl(cfg);
    assert!(outcome.records.iter().all(|r| !r.url.contains("/private/")));
    assert_eq!(outcome.records.len(), 3);
}

/// One server answering for several host names, all pinned to it with
/// `--resolve`; the home page of a.example.co.uk links to the others.
fn multi_host_crawl(mode: ScopeMode) -> BTreeSet<String> {
    let port = Arc::new(AtomicU16::new(0));
    let server = serve({
        let port = port.clone();
        move |req| match (req.host.as_str(), req.path.as_str()) {
            ("a.example.co.uk", "/") => {
                let p = port.load(Ordering::SeqCst);
                let links: Vec<String> = HOSTS[1..]
                    .iter()
                    .map(|h| format!("http://{h}:{p}/"))
                    .collect();
                Some(page(&links.iter().map(String::as_str).collect::<Vec<_>>()))
            }
            (_, "/") => Some(page(&[])),
            _ => None,
        }
    });
    port.store(server.port(), Ordering::SeqCst);
    let mut cfg = settings(&[format!("http://a.example.co.uk:{}/", server.port())]);
    cfg = cfg.scope(mode);
    for host in HOSTS {
        cfg = cfg.resolve(host, server.port(), vec!["127.0.0.1".parse().unwrap()]);
    }
    let outcome = crawl(cfg);
    outcome
        .records
        .iter()
        .map(|r| {
            url::Url::parse(&r.url)
                .unwrap()
                .host_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

const HOSTS: [&str; 5] = [
    "a.example.co.uk",
    "www.a.example.co.uk",
    "b.example.co.uk",
    "other.co.uk",
    "example.co.uk",
];

#[test]
fn strict_takes_www_but_lenient_takes_the_registered_domain() {
    let strict = multi_host_crawl(ScopeMode::Strict);
    assert_eq!(
        strict,
        BTreeSet::from(["a.example.co.uk".into(), "www.a.example.co.uk".into()])
    );
    let lenient = multi_host_crawl(ScopeMode::Lenient);
    let expected: BTreeSet<String> = [
        "a.example.co.uk",
        "www.a.example.co.uk",
        "b.example.co.uk",
        "example.co.uk",
    ]
    .iter()
    .map(|h| h.to_string())
    .collect();
    assert_eq!(
        lenient, expected,
        "other.co.uk is another registered domain"
    );
}

#[test]
fn several_roots_on_several_hosts() {
    let one = site(&[("/", || page(&["/one"])), ("/one", || page(&[]))]);
    let two = site(&[
        ("/", || page(&["/two", "/three"])),
        ("/two", || page(&[])),
        ("/three", || page(&[])),
    ]);
    let outcome = crawl(settings(&[base(&one), base(&two)]));
    assert_eq!(outcome.records.len(), 5);
    assert_eq!(one.total_hits() + two.total_hits(), 5);
}

#[test]
fn empty_site_and_dead_root_end_the_crawl() {
    let empty = site(&[("/", || html(""))]);
    let outcome = crawl(settings(&[base(&empty)]));
    assert_eq!(outcome.records.len(), 1);
    assert_eq!(outcome.records[0].size, 0);

    let dead = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let mut cfg = settings(&[format!("http://{dead}/")]);
    cfg = cfg.max_tries(2);
    let outcome = crawl(cfg);
    assert_eq!(outcome.records.len(), 1);
    assert_eq!(
        outcome.records[0].error_kind,
        Some(ErrorKind::ConnectRefused)
    );
    assert_eq!(outcome.records[0].tries, 2);
}

#[test]
fn duplicate_roots_are_fetched_once() {
    let server = site(&[("/", || page(&[]))]);
    let b = base(&server);
    let outcome = crawl(settings(&[b.clone(), format!("{b}/"), format!("{b}/#top")]));
    assert_eq!(outcome.records.len(), 1);
}

/// `num_new_urls` is the chapter's: the links of a page that were new to
/// the crawl. Every URL but a root is queued from exactly one page, so over
/// all records they add up to the number of those URLs, however the hosts
/// are spread over the shards and however often a link is found.
#[test]
fn new_links_are_counted_once_for_the_whole_crawl() {
    const HOSTS: usize = 6;
    const PAGES: usize = 5;
    let server = serve(|req| {
        let port = req.authority.rsplit(':').next().unwrap_or("80").to_string();
        let links: Vec<String> = (0..HOSTS)
            .flat_map(|h| (0..PAGES).map(move |p| (h, p)))
            .map(|(h, p)| format!("http://h{h}.test:{port}/p{p}"))
            .collect();
        Some(page(&links.iter().map(String::as_str).collect::<Vec<_>>()))
    });
    let port = server.port();
    let roots: Vec<String> = (0..HOSTS)
        .map(|h| format!("http://h{h}.test:{port}/"))
        .collect();
    let cores = 2;
    let mut cfg = settings(&roots).cores(cores);
    for h in 0..HOSTS {
        cfg = cfg.resolve(
            &format!("h{h}.test"),
            port,
            vec!["127.0.0.1".parse().unwrap()],
        );
    }
    let owners: BTreeSet<usize> = (0..HOSTS)
        .map(|h| crate::common::hosts::shard_for(&format!("h{h}.test"), cores))
        .collect();
    assert_eq!(owners.len(), 2, "hosts on both shards");
    let outcome = crawl(cfg);
    assert!(
        outcome.stats.shards.len() == cores && outcome.stats.shards.iter().all(|s| s.urls > 0),
        "both shards took URLs: {:?}",
        outcome.stats.shards
    );
    let records = by_url(&outcome);
    assert_eq!(records.len(), HOSTS * (PAGES + 1));
    let new: usize = records.values().map(|r| r.num_new_urls).sum();
    assert_eq!(new, HOSTS * PAGES, "links new to the crawl, counted once");
}
