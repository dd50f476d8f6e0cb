//! Misbehaving servers: every fault becomes a record with a named error
//! kind, and the crawl goes on to the end. Nothing panics, nothing hangs,
//! nothing already received is lost.

use ringcrawl::{ErrorKind, Record, ScopeMode};
use std::time::Duration;

use crate::common::*;
use ringcrawl::CrawlerBuilder;
use ringcrawl_site::server::{Reply, Step};

const HTML_HEAD: &str = "HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n";

fn raw(bytes: impl Into<Vec<u8>>) -> Reply {
    Reply::Script(vec![Step::Write(bytes.into()), Step::Close])
}

/// Crawl a site whose root links to `/bad` and `/good`, with `/bad`
/// answered by `bad`; return the record of `/bad` after checking that the
/// crawl also fetched `/good`.
fn crawl_fault(bad: fn() -> Reply, tweak: impl FnOnce(CrawlerBuilder) -> CrawlerBuilder) -> Record {
    let server = site(&[
        ("/", || page(&["/bad", "/good"])),
        ("/bad", bad),
        ("/good", || page(&[])),
    ]);
    let b = base(&server);
    let mut cfg = settings(&[&b]);
    cfg = cfg.read_timeout(Duration::from_millis(500));
    cfg = cfg.timeout(Duration::from_secs(3));
    let records = by_url(&crawl(tweak(cfg)));
    assert_eq!(
        records[&format!("{b}/good")].status,
        Some(200),
        "the crawl goes on past the fault"
    );
    records[&format!("{b}/bad")].clone()
}

/// The record's error kind's word, `-` for none.
fn kind(r: &Record) -> &'static str {
    r.error_kind.map_or("-", ErrorKind::name)
}

#[test]
fn server_that_never_answers_is_a_read_timeout() {
    let r = crawl_fault(
        || Reply::Script(vec![Step::Sleep(Duration::from_secs(20))]),
        |c| c,
    );
    assert_eq!(kind(&r), "read_timeout");
    assert_eq!(r.tries, 1, "time-outs are not retried");
}

#[test]
fn one_byte_a_while_forever_hits_the_fetch_deadline_and_keeps_the_bytes() {
    let r = crawl_fault(
        || {
            let mut steps = vec![Step::Write(
                format!("{HTML_HEAD}Content-Length: 100000\r\n\r\n").into_bytes(),
            )];
            for _ in 0..200 {
                steps.push(Step::Write(b"x".to_vec()));
                steps.push(Step::Sleep(Duration::from_millis(100)));
            }
            Reply::Script(steps)
        },
        |c| c.timeout(Duration::from_secs(1)),
    );
    assert_eq!(kind(&r), "deadline");
    assert_eq!(r.status, Some(200));
    assert!(r.truncated && r.size > 0 && r.size < 100, "{r:?}");
}

#[test]
fn reset_in_the_middle_of_the_body_is_recorded_truncated() {
    let r = crawl_fault(
        || {
            Reply::Script(vec![
                Step::Write(format!("{HTML_HEAD}Content-Length: 10000\r\n\r\n").into_bytes()),
                Step::Write(vec![b'a'; 3000]),
                Step::Sleep(Duration::from_millis(200)),
                Step::Reset,
            ])
        },
        |c| c,
    );
    assert_eq!(r.status, Some(200));
    assert!(r.truncated, "{r:?}");
    assert!(matches!(kind(&r), "reset" | "truncated" | "io"), "{r:?}");
}

#[test]
fn body_shorter_than_content_length_is_truncated() {
    let r = crawl_fault(
        || {
            raw(format!(
                "{HTML_HEAD}Content-Length: 100\r\n\r\n{}",
                "y".repeat(50)
            ))
        },
        |c| c,
    );
    assert_eq!(
        (kind(&r), r.status, r.size, r.truncated),
        ("truncated", Some(200), 50, true)
    );
}

#[test]
fn conflicting_content_lengths_are_refused() {
    let r = crawl_fault(
        || raw("HTTP/1.0 200 OK\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nhello"),
        |c| c,
    );
    assert_eq!(kind(&r), "conflicting_length");
}

#[test]
fn invalid_status_line_and_garbage_are_bad_heads() {
    assert_eq!(
        kind(&crawl_fault(|| raw("HTTP/1.1 abc OK\r\n\r\n"), |c| c)),
        "bad_head"
    );
    assert_eq!(
        kind(&crawl_fault(|| raw("SSH-2.0-OpenSSH_9.6\r\n"), |c| c)),
        "bad_head"
    );
    assert_eq!(
        kind(&crawl_fault(
            || raw(vec![0u8, 159, 146, 150, 255, 13, 10, 13, 10]),
            |c| c
        )),
        "bad_head"
    );
}

#[test]
fn head_larger_than_the_cap_is_refused() {
    let r = crawl_fault(
        || {
            raw(format!(
                "HTTP/1.0 200 OK\r\nX-Big: {}\r\n\r\n",
                "b".repeat(100_000)
            ))
        },
        |c| c,
    );
    assert_eq!(kind(&r), "head_too_large");
}

#[test]
fn more_headers_than_the_parser_array_still_parse() {
    let r = crawl_fault(
        || {
            let headers: String = (0..500).map(|i| format!("X-H{i}: v\r\n")).collect();
            raw(format!("{HTML_HEAD}{headers}Content-Length: 2\r\n\r\nok"))
        },
        |c| c,
    );
    assert_eq!((r.status, r.size, r.error.as_deref()), (Some(200), 2, None));
}

#[test]
fn body_over_max_body_is_cut_marked_and_its_links_used() {
    let server = site(&[
        ("/", || {
            let filler = "<p>filler</p>".repeat(4000);
            html(&format!(
                "<a href=\"/early\">e</a>{filler}<a href=\"/late\">l</a>"
            ))
        }),
        ("/early", || page(&[])),
        ("/late", || page(&[])),
    ]);
    let b = base(&server);
    let mut cfg = settings(&[&b]);
    cfg = cfg.max_body(10_000);
    let records = by_url(&crawl(cfg));
    let root = &records[&format!("{b}/")];
    assert_eq!(
        (root.size, root.truncated, root.error.as_deref()),
        (10_000, true, None)
    );
    assert!(records.contains_key(&format!("{b}/early")));
    assert!(!records.contains_key(&format!("{b}/late")));
}

#[test]
fn endless_body_stops_at_the_cap() {
    let r = crawl_fault(
        || {
            let mut steps = vec![Step::Write(format!("{HTML_HEAD}\r\n").into_bytes())];
            steps.extend((0..400).map(|_| Step::Write(vec![b'z'; 16 * 1024])));
            Reply::Script(steps)
        },
        |c| c.max_body(64 * 1024),
    );
    assert_eq!(
        (r.size, r.truncated, r.status),
        (64 * 1024, true, Some(200))
    );
}

#[test]
fn chunked_body_to_an_http10_request_is_decoded_and_parsed() {
    let server = site(&[
        ("/", || {
            raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/html\r\n\r\n\
                 6\r\n<a hre\r\n10;ext=1\r\nf=\"/in-chunks\">x\r\n4\r\n</a>\r\n0\r\nX-Trailer: 1\r\n\r\n")
        }),
        ("/in-chunks", || page(&[])),
    ]);
    let b = base(&server);
    let records = by_url(&crawl(settings(&[&b])));
    assert_eq!(records[&format!("{b}/")].size, 26);
    assert_eq!(records[&format!("{b}/in-chunks")].status, Some(200));
}

/// 100 Continue and 103 Early Hints before the answer are skipped, however
/// the reads split them; the final answer is the page.
#[test]
fn interim_1xx_responses_are_skipped() {
    let r = crawl_fault(
        || {
            Reply::Script(vec![
                Step::Write(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early".to_vec()),
                Step::Sleep(Duration::from_millis(30)),
                Step::Write(
                    format!(
                        " Hints\r\nLink: </s.css>; rel=preload\r\n\r\n\
                         {HTML_HEAD}Content-Length: 28\r\n\r\n<a href=\"/after-hints\">x</a>"
                    )
                    .into_bytes(),
                ),
                Step::Close,
            ])
        },
        |c| c,
    );
    assert_eq!((r.status, r.error_kind), (Some(200), None), "{r:?}");
    assert_eq!(r.size, 28);
    assert_eq!(r.num_urls, 1, "the links of the final answer are used");
}

#[test]
fn endless_interim_responses_are_a_bad_head() {
    let r = crawl_fault(|| raw("HTTP/1.1 100 Continue\r\n\r\n".repeat(1000)), |c| c);
    assert_eq!(kind(&r), "bad_head");
}

#[test]
fn bad_chunked_encoding_is_recorded() {
    let r = crawl_fault(
        || raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nboom\r\n"),
        |c| c,
    );
    assert_eq!(kind(&r), "bad_chunk");
}

/// A server that stays overloaded: its `Retry-After: 1` is waited out
/// each time, and the last of `--max-tries` answers is recorded.
#[test]
fn an_overloaded_503_with_retry_after_is_tried_again_after_the_wait_then_recorded() {
    let started = std::time::Instant::now();
    let r = crawl_fault(
        || Reply::Http {
            status: 503,
            headers: vec![("Retry-After".into(), "1".into())],
            body: b"busy".to_vec(),
        },
        |c| c.max_tries(2),
    );
    assert_eq!(
        (r.status, r.tries, r.error.as_deref()),
        (Some(503), 2, None)
    );
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "the wait was kept"
    );
}

#[test]
fn a_retry_after_longer_than_max_retry_after_is_recorded_at_once() {
    let r = crawl_fault(
        || Reply::Http {
            status: 429,
            headers: vec![("Retry-After".into(), "3600".into())],
            body: b"come back in an hour".to_vec(),
        },
        |c| c,
    );
    assert_eq!((r.status, r.tries), (Some(429), 1));
}

#[test]
fn redirect_faults_are_recorded_and_the_crawl_goes_on() {
    let server = site(&[
        ("/", || {
            page(&[
                "/no-location",
                "/empty",
                "/relative",
                "/garbage",
                "/other-host",
                "/ftp",
            ])
        }),
        ("/no-location", || Reply::Http {
            status: 302,
            headers: vec![],
            body: vec![],
        }),
        ("/empty", || redirect(301, "")),
        ("/relative", || redirect(301, "sub/../target")),
        ("/garbage", || redirect(301, "http://[::bad")),
        ("/other-host", || redirect(302, "http://elsewhere.example/")),
        ("/ftp", || redirect(302, "ftp://files.example/x")),
        ("/target", || page(&[])),
    ]);
    let b = base(&server);
    let r = by_url(&crawl(settings(&[&b])));
    let at = |p: &str| r[&format!("{b}{p}")].clone();
    assert_eq!(kind(&at("/no-location")), "redirect_no_location");
    assert_eq!(
        at("/empty").next_url.as_deref(),
        Some(format!("{b}/empty").as_str()),
        "to itself: seen"
    );
    assert_eq!(server.hits("127.0.0.1", "/empty"), 1);
    assert_eq!(at("/target").status, Some(200));
    assert_eq!(kind(&at("/garbage")), "redirect_bad_location");
    assert_eq!(
        at("/other-host").next_url.as_deref(),
        Some("http://elsewhere.example/")
    );
    assert!(!r.contains_key("http://elsewhere.example/"), "out of scope");
    assert_eq!(kind(&at("/ftp")), "redirect_bad_location");
    assert_eq!(r.len(), 8);
}

#[test]
fn endless_generated_path_ends_under_default_limits() {
    let server = serve(|req| req.path.ends_with('/').then(|| page(&["a/", "b/"])));
    let b = base(&server);
    let mut cfg = settings(&[&b]);
    cfg = cfg.max_depth(8);
    let outcome = crawl(cfg);
    let fetched = outcome
        .records
        .iter()
        .filter(|r| r.status.is_some())
        .count();
    assert_eq!(fetched, (1 << 9) - 1, "a full binary tree of depth 8");
    assert_eq!(
        outcome.stats.skipped_depth,
        1 << 9,
        "the next level is recorded, not fetched"
    );
    assert_eq!(outcome.records.len(), fetched + (1 << 9));

    let mut cfg = settings(&[&b]);
    cfg = cfg.max_pages_per_host(300);
    let outcome = crawl(cfg);
    let fetched = outcome
        .records
        .iter()
        .filter(|r| r.status.is_some())
        .count();
    assert_eq!(fetched, 300);
    assert_eq!(
        outcome.stats.skipped_host_full as usize,
        outcome.records.len() - 300
    );
}

#[test]
fn calendar_with_endless_next_links_ends_by_itself() {
    let server = serve(|req| {
        let day: u64 = req.path.strip_prefix("/cal/")?.parse().ok()?;
        Some(page(&[&format!("/cal/{}", day + 1)]))
    });
    let b = base(&server);
    let outcome = crawl(settings(&[format!("{b}/cal/0")]));
    assert_eq!(
        outcome.records.len(),
        102,
        "default --max-depth 100 ends the trap"
    );
    let last = &by_url(&outcome)[&format!("{b}/cal/101")];
    assert_eq!(last.error_kind, Some(ErrorKind::TooDeep));
}

/// Links a limit keeps out are recorded once each, with the limit's name,
/// and never requested; the report's counts are those records.
#[test]
fn urls_refused_by_depth_or_length_get_one_record_each_and_no_fetch() {
    let long = format!("/{}", "y".repeat(120));
    let server = serve(move |req| match req.path.as_str() {
        "/" => Some(page(&["/a", "/b", &long])),
        "/a" | "/b" => Some(page(&["/c", &long])),
        "/c" => Some(page(&[])),
        _ => None,
    });
    let b = base(&server);
    let mut cfg = settings(&[&b]);
    cfg = cfg.max_depth(1);
    cfg = cfg.max_url_length(100);
    let outcome = crawl(cfg);
    let records = by_url(&outcome);
    assert_eq!(records.len(), 5, "{:?}", records.keys());
    let c = &records[&format!("{b}/c")];
    assert_eq!((c.error_kind, c.status), (Some(ErrorKind::TooDeep), None));
    let long_url = records
        .keys()
        .find(|u| u.len() > 100)
        .expect("the long URL has a record");
    assert_eq!(records[long_url].error_kind, Some(ErrorKind::UrlTooLong));
    assert_eq!(server.hits("127.0.0.1", "/c"), 0, "never requested");
    assert_eq!(outcome.stats.skipped_depth, 1);
    assert_eq!(outcome.stats.skipped_url_length, 1);
}

#[test]
fn urls_over_the_host_budget_get_one_record_each() {
    let server = serve(|req| match req.path.as_str() {
        "/" => Some(page(&["/p1", "/p2", "/p3", "/p4", "/p5"])),
        _ => Some(page(&["/p3", "/p4", "/p5", "/p6"])),
    });
    let b = base(&server);
    let mut cfg = settings(&[&b]);
    cfg = cfg.max_pages_per_host(3);
    let outcome = crawl(cfg);
    let records = by_url(&outcome);
    let refused: Vec<&str> = records
        .values()
        .filter(|r| r.error_kind == Some(ErrorKind::HostBudget))
        .map(|r| r.url.as_str())
        .collect();
    assert_eq!(records.len(), 7, "{:?}", records.keys());
    assert_eq!(refused.len(), 4, "{refused:?}");
    assert_eq!(outcome.stats.skipped_host_full, 4);
    for url in refused {
        let path = &url[b.len()..];
        assert_eq!(server.hits("127.0.0.1", path), 0, "{path} never requested");
    }
}

#[test]
fn urls_longer_than_the_limit_are_not_queued() {
    let server = serve(|req| {
        req.path
            .starts_with("/x")
            .then(|| page(&[&format!("{}x", req.path)]))
    });
    let b = base(&server);
    let mut cfg = settings(&[format!("{b}/x")]);
    cfg = cfg.max_url_length(100);
    let outcome = crawl(cfg);
    for r in &outcome.records {
        if r.url.len() > 100 {
            assert_eq!(r.error_kind, Some(ErrorKind::UrlTooLong), "{r:?}");
            assert_eq!(r.status, None, "not fetched");
        }
    }
    assert_eq!(outcome.stats.skipped_url_length, 1);
}

#[test]
fn hostile_content_is_survived() {
    let server = site(&[
        ("/", || {
            page(&["/latin1", "/binary", "/one-line", "/nested", "/million"])
        }),
        ("/latin1", || {
            let mut body =
                b"<html><body>caf\xe9 \xff\xfe <a href=\"/found-in-latin1\">x</a>".to_vec();
            body.extend_from_slice(b"</body></html>");
            Reply::Http {
                status: 200,
                headers: vec![(
                    "Content-Type".into(),
                    "text/html; charset=iso-8859-1".into(),
                )],
                body,
            }
        }),
        ("/found-in-latin1", || page(&[])),
        ("/binary", || {
            let body: Vec<u8> = (0..100_000u32)
                .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
                .collect();
            Reply::Http {
                status: 200,
                headers: vec![("Content-Type".into(), "text/html".into())],
                body,
            }
        }),
        ("/one-line", || {
            html(&format!(
                "{}<a href=\"/end-of-line\">e</a>",
                "<b>x</b>".repeat(1_300_000)
            ))
        }),
        ("/end-of-line", || page(&[])),
        ("/nested", || {
            html(&format!(
                "{}<a href=\"/deep\">d</a>",
                "<div>".repeat(100_000)
            ))
        }),
        ("/deep", || page(&[])),
        ("/million", || {
            let links: String = (0..1_000_000).map(|i| format!("<a href=/m/{i}>")).collect();
            html(&links)
        }),
    ]);
    let b = base(&server);
    let mut cfg = settings(&[&b]);
    cfg = cfg.scope(ScopeMode::Strict).exclude("/m/");
    let records = by_url(&crawl(cfg));
    // The label iso-8859-1 names windows-1252 in the WHATWG Encoding
    // Standard, which is what the page is read in.
    let latin1 = &records[&format!("{b}/latin1")];
    assert_eq!(
        (
            latin1.encoding.as_deref(),
            latin1.encoding_source.as_deref()
        ),
        (Some("windows-1252"), Some("header"))
    );
    for p in ["/found-in-latin1", "/end-of-line", "/deep", "/binary"] {
        assert_eq!(records[&format!("{b}{p}")].status, Some(200), "{p}");
    }
    assert_eq!(records[&format!("{b}/one-line")].size, 10_400_000 + 28);
    assert_eq!(
        records[&format!("{b}/million")].num_urls,
        0,
        "links excluded"
    );
}
