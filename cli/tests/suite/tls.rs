//! HTTPS against real TLS servers on 127.0.0.1:0: the site server with
//! rustls (good and broken certificates from a CA made per test), a blocking
//! rustls server with keep-alive, OpenSSL's `s_server` speaking TLS 1.0
//! only, and raw TCP servers that reset or stall mid-handshake or never
//! answer the ClientHello. Each bad server ends as a clear error on its
//! URL's record; the crawl goes on.
//! Sessions kept by name and port, within their bound: `tls_sessions`.

use ringcrawl::{ErrorKind, Record};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common;
use crate::common::*;
use ringcrawl::CrawlerBuilder;
use ringcrawl_site::server::{Reply, Request, Server, Step};
use ringcrawl_site::synth::{SiteSpec, SynthSite};
use ringcrawl_site::tls::{self_signed, ServerCert, TestCa, Validity, SITE_NAMES};

/// A page linking to `n` pages `/p/{i}`; those answer small pages.
pub(crate) fn pages(n: usize) -> impl Fn(&Request) -> Option<Reply> + Send + Sync + 'static {
    move |req: &Request| match req.path.as_str() {
        "/" => {
            let links: Vec<String> = (0..n).map(|i| format!("/p/{i}")).collect();
            let links: Vec<&str> = links.iter().map(String::as_str).collect();
            Some(page(&links))
        }
        p if p.starts_with("/p/") => Some(html(&format!("<p>page {p}</p>"))),
        _ => None,
    }
}

pub(crate) fn https_server(
    cert: &ServerCert,
    route: impl Fn(&Request) -> Option<Reply> + Send + Sync + 'static,
) -> Server {
    let tls = cert.server_config(&[]).expect("server config");
    Server::start_tls(
        Arc::new(move |req: &Request| route(req).unwrap_or_else(|| status(404))),
        tls,
    )
    .expect("TLS test server starts")
}

pub(crate) fn root(server: &Server) -> String {
    format!("https://{}/", server.addr())
}

/// A crawl config for `roots` trusting `ca` (plus the compiled-in roots).
pub(crate) fn trusting(roots: &[String], ca: &TestCa, insecure: bool) -> CrawlerBuilder {
    let mut config = settings(roots);
    config = config.ca_cert_der(ca.cert().to_vec()).insecure(insecure);
    config
}

pub(crate) fn record<'a>(outcome: &'a Outcome, url: &str) -> &'a Record {
    outcome
        .records
        .iter()
        .find(|r| r.url == url)
        .unwrap_or_else(|| panic!("no record of {url}: {:#?}", outcome.records))
}

#[test]
fn a_chain_to_a_ca_given_with_ca_cert_verifies_and_the_site_is_crawled() {
    let ca = TestCa::new("test CA").unwrap();
    let server = https_server(&ca.site_cert().unwrap(), pages(20));
    let outcome = crawl(trusting(&[root(&server)], &ca, false));
    assert_eq!(outcome.records.len(), 21);
    for r in &outcome.records {
        assert_eq!((r.status, &r.error), (Some(200), &None), "{r:?}");
    }
    // Without the CA, the same site is an unknown issuer.
    let outcome = crawl(settings(&[root(&server)]));
    let r = record(&outcome, &root(&server));
    assert_eq!(r.error_kind, Some(ErrorKind::TlsCertificate), "{r:?}");
    assert!(
        r.error.as_deref().unwrap().contains("unknown issuer"),
        "{r:?}"
    );
}

/// Every https record names the TLS version and cipher suite its exchange
/// used (IANA's names); an http record names none.
#[test]
fn records_name_the_tls_version_and_cipher_suite_their_exchange_used() {
    let ca = TestCa::new("test CA").unwrap();
    let cert = ca.site_cert().unwrap();
    let tls13 = [
        "TLS_AES_128_GCM_SHA256",
        "TLS_AES_256_GCM_SHA384",
        "TLS_CHACHA20_POLY1305_SHA256",
    ];
    for (version, name) in [
        (&rustls::version::TLS12, "TLSv1.2"),
        (&rustls::version::TLS13, "TLSv1.3"),
    ] {
        let route = pages(2);
        let server = Server::start_tls(
            Arc::new(move |req: &Request| route(req).unwrap_or_else(|| status(404))),
            cert.server_config(&[version]).unwrap(),
        )
        .unwrap();
        let outcome = crawl(trusting(&[root(&server)], &ca, false));
        assert_eq!(outcome.records.len(), 3, "{name}");
        for r in &outcome.records {
            assert_eq!(
                (r.status, r.tls_version.as_deref()),
                (Some(200), Some(name)),
                "{r:?}"
            );
            let cipher = r.tls_cipher.as_deref().unwrap_or_default();
            if name == "TLSv1.3" {
                assert!(tls13.contains(&cipher), "{r:?}");
            } else {
                assert!(
                    cipher.starts_with("TLS_ECDHE_") && cipher.contains("_WITH_"),
                    "{r:?}"
                );
            }
        }
    }
    let plain = serve(pages(1));
    let outcome = crawl(settings(&[format!("http://{}/", plain.addr())]));
    assert_eq!(outcome.records.len(), 2);
    for r in &outcome.records {
        assert_eq!(
            (r.tls_version.as_deref(), r.tls_cipher.as_deref()),
            (None, None),
            "{r:?}"
        );
    }
}

#[test]
fn bad_certificates_are_recorded_with_their_reason_and_fetched_under_insecure() {
    let ca = TestCa::new("trusted CA").unwrap();
    let stranger = TestCa::new("untrusted CA").unwrap();
    let cases: Vec<(&str, ServerCert, &str)> = vec![
        (
            "expired",
            ca.issue(SITE_NAMES, Validity::Expired).unwrap(),
            "expired",
        ),
        (
            "wrong name",
            ca.issue(&["other.example"], Validity::Current).unwrap(),
            "name mismatch",
        ),
        (
            "unknown issuer",
            stranger.site_cert().unwrap(),
            "unknown issuer",
        ),
        (
            "self-signed",
            self_signed(SITE_NAMES).unwrap(),
            "unknown issuer",
        ),
    ];
    let servers: Vec<Server> = cases
        .iter()
        .map(|(_, cert, _)| https_server(cert, pages(3)))
        .collect();
    let roots: Vec<String> = servers.iter().map(root).collect();

    // Verified: each root fails with its reason; nothing else is fetched.
    let outcome = crawl(trusting(&roots, &ca, false));
    assert_eq!(outcome.records.len(), cases.len(), "{:#?}", outcome.records);
    for ((case, _, reason), url) in cases.iter().zip(&roots) {
        let r = record(&outcome, url);
        assert_eq!(
            r.error_kind,
            Some(ErrorKind::TlsCertificate),
            "{case}: {r:?}"
        );
        let message = r.error.as_deref().unwrap();
        assert!(message.contains(reason), "{case}: {message}");
        assert_eq!((r.status, r.tries), (None, 1), "{case}: not retried");
    }

    // --insecure: every page is fetched, with the failure as a warning.
    let outcome = crawl(trusting(&roots, &ca, true));
    assert_eq!(
        outcome.records.len(),
        cases.len() * 4,
        "{:#?}",
        outcome.records
    );
    for r in &outcome.records {
        assert_eq!(r.status, Some(200), "{r:?}");
        assert_eq!((&r.error, &r.error_kind), (&None, &None), "{r:?}");
        assert_eq!(r.warnings.len(), 1, "{r:?}");
        assert_eq!(r.warnings[0].kind, "tls_certificate_untrusted", "{r:?}");
        assert!(r.warnings[0].message.contains("--insecure"), "{r:?}");
    }
    for ((case, _, reason), url) in cases.iter().zip(&roots) {
        let message = record(&outcome, &format!("{url}p/2")).warnings[0]
            .message
            .clone();
        assert!(message.contains(reason), "{case}: {message}");
    }
}

#[test]
fn a_server_that_speaks_only_tls_1_0_is_a_tls_version_error() {
    let test = "a_server_that_speaks_only_tls_1_0_is_a_tls_version_error";
    if !common::tools::require("openssl", test) {
        return;
    }
    let ca = TestCa::new("test CA").unwrap();
    // A real TLS 1.0-only server (Debian's OpenSSL 3 needs security level 0
    // for TLS 1.0): rustls cannot serve TLS 1.0.
    let server = common::openssl::SServer::start(
        &ca.site_cert().unwrap(),
        &["-tls1", "-cipher", "DEFAULT@SECLEVEL=0", "-www"],
    );
    let url = format!("https://127.0.0.1:{}/", server.port());
    let outcome = crawl(trusting(std::slice::from_ref(&url), &ca, false));
    let r = record(&outcome, &url);
    assert_eq!(r.error_kind, Some(ErrorKind::TlsVersion), "{r:?}");
    assert_eq!(r.tries, 1, "not retried: {r:?}");
}

/// A TCP server that reads the ClientHello, then does `then` with the
/// connection; runs until `connections` have been handled.
fn mid_handshake(connections: usize, then: fn(TcpStream)) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(connections).flatten() {
            std::thread::spawn(move || {
                let mut stream = stream;
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let mut hello = [0u8; 512];
                if stream.read(&mut hello).is_ok() {
                    then(stream);
                }
            });
        }
    });
    addr
}

fn reset(stream: TcpStream) {
    ringcrawl_site::server::reset(&stream);
}

fn stall(stream: TcpStream) {
    std::thread::sleep(Duration::from_secs(8));
    drop(stream);
}

#[test]
fn a_reset_mid_handshake_is_tls_closed_after_the_retries() {
    let addr = mid_handshake(8, reset);
    let url = format!("https://{addr}/");
    let mut config = settings(std::slice::from_ref(&url));
    config = config.max_tries(3);
    let outcome = crawl(config);
    let r = record(&outcome, &url);
    assert_eq!(r.error_kind, Some(ErrorKind::TlsClosed), "{r:?}");
    assert!(r.error.as_deref().unwrap().contains("reset"), "{r:?}");
    assert_eq!(r.tries, 3, "a network error: retried");
}

#[test]
fn a_stall_mid_handshake_times_out_instead_of_hanging() {
    let addr = mid_handshake(2, stall);
    let url = format!("https://{addr}/");
    let mut config = settings(std::slice::from_ref(&url));
    config = config.read_timeout(Duration::from_millis(500));
    config = config.timeout(Duration::from_secs(5));
    let started = Instant::now();
    let outcome = crawl(config);
    let took = started.elapsed();
    let r = record(&outcome, &url);
    assert_eq!(r.error_kind, Some(ErrorKind::ReadTimeout), "{r:?}");
    assert!(took < Duration::from_secs(3), "{took:?}");

    // The deadline binds the handshake too, not only each read.
    let mut config = common::settings(std::slice::from_ref(&url));
    config = config.read_timeout(Duration::from_secs(5));
    config = config.timeout(Duration::from_millis(700));
    let started = Instant::now();
    let outcome = crawl(config);
    let took = started.elapsed();
    let r = record(&outcome, &url);
    assert_eq!(r.error_kind, Some(ErrorKind::Deadline), "{r:?}");
    assert!(took < Duration::from_secs(3), "{took:?}");
}

/// A TCP server that accepts and never reads nor answers, until dropped.
fn silent() -> (SocketAddr, std::sync::mpsc::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        listener.set_nonblocking(true).unwrap();
        // Until the test ends (its sender dropped): hold what connects.
        while let Err(std::sync::mpsc::TryRecvError::Empty) = stopped.try_recv() {
            match listener.accept() {
                Ok((stream, _)) => held.push(stream),
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    });
    (addr, stop)
}

#[test]
fn a_server_that_never_answers_the_client_hello_is_given_up_at_the_connect_timeout() {
    let (addr, _server) = silent();
    let url = format!("https://{addr}/");
    let mut config = settings(std::slice::from_ref(&url));
    // curl's --connect-timeout covers the TLS handshake: so does ours, not
    // a read time-out per handshake read.
    config = config.connect_timeout(Duration::from_secs(1));
    config = config.read_timeout(Duration::from_secs(30));
    config = config.timeout(Duration::from_secs(60));
    let started = Instant::now();
    let outcome = crawl(config);
    let took = started.elapsed();
    let r = record(&outcome, &url);
    assert_eq!(r.error_kind, Some(ErrorKind::TlsTimeout), "{r:?}");
    assert_eq!(r.tries, 1, "a time-out is not retried: {r:?}");
    assert!(
        took < Duration::from_secs(15),
        "given up at the 1 s connect time-out, not the 30 s read time-out: {took:?}"
    );
}

#[test]
fn a_body_read_until_a_close_without_close_notify_is_truncated() {
    let ca = TestCa::new("test CA").unwrap();
    let head = b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n".to_vec();
    let server = https_server(&ca.site_cert().unwrap(), move |req| {
        let body = b"<html><body>some of the page".to_vec();
        let mut answer = head.clone();
        answer.extend_from_slice(&body);
        match req.path.as_str() {
            "/" => Some(page(&["/cut", "/clean", "/sized-cut"])),
            "/cut" => Some(Reply::Script(vec![Step::Write(answer), Step::Cut])),
            "/clean" => Some(Reply::Script(vec![Step::Write(answer), Step::Close])),
            // Complete by its Content-Length: a missing close_notify after
            // it loses nothing.
            "/sized-cut" => Some(Reply::Script(vec![
                Step::Write(
                    format!("HTTP/1.0 200 OK\r\nContent-Length: {}\r\n\r\n", body.len())
                        .into_bytes(),
                ),
                Step::Write(body),
                Step::Cut,
            ])),
            _ => None,
        }
    });
    let b = root(&server);
    let outcome = crawl(trusting(std::slice::from_ref(&b), &ca, false));
    let cut = record(&outcome, &format!("{b}cut"));
    assert_eq!(cut.error_kind, Some(ErrorKind::Truncated), "{cut:?}");
    assert!(
        cut.error.as_deref().unwrap().contains("close_notify"),
        "{cut:?}"
    );
    assert!(cut.truncated && cut.size > 0, "what came is kept: {cut:?}");
    for clean in ["clean", "sized-cut"] {
        let r = record(&outcome, &format!("{b}{clean}"));
        assert_eq!(
            (r.status, &r.error, r.truncated),
            (Some(200), &None, false),
            "{r:?}"
        );
    }
}

#[test]
fn sessions_resume_one_full_handshake_per_shard_over_a_thousand_pages() {
    let ca = TestCa::new("test CA").unwrap();
    let site = Arc::new(SynthSite::new(SiteSpec {
        pages: 1000,
        tls: true,
        ..SiteSpec::default()
    }));
    let tls = ca.site_cert().unwrap().server_config(&[]).unwrap();
    let server = Server::start_tls(site.clone().handler(), tls).unwrap();
    let mut config = trusting(&[root(&server)], &ca, false);
    config = config.keep_alive(false);
    let outcome = crawl(config);
    let authority = server.addr().to_string();
    let fetched = urls_of(&outcome);
    let expected: std::collections::BTreeSet<String> =
        site.expected_urls(&authority).into_iter().collect();
    assert_eq!(fetched, expected);
    assert!(
        outcome.records.iter().all(|r| r.error.is_none()),
        "no errors"
    );
    let shards: std::collections::BTreeSet<usize> =
        outcome.records.iter().map(|r| r.shard).collect();
    let (full, resumed) = server.handshakes();
    println!(
        "{} pages, {} shards: {full} full handshakes, {resumed} resumed",
        fetched.len(),
        shards.len()
    );
    assert_eq!(
        full + resumed,
        server.total_hits(),
        "one connection a request"
    );
    assert_eq!(full, shards.len(), "one full handshake per shard");
}

/// A blocking rustls server with keep-alive: answers every request on a
/// connection with a Content-Length answer, counts connections.
fn keep_alive_server(cert: &ServerCert, served: Arc<AtomicUsize>) -> SocketAddr {
    let config = cert.server_config(&[]).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for tcp in listener.incoming().flatten() {
            served.fetch_add(1, Ordering::SeqCst);
            let config = config.clone();
            std::thread::spawn(move || {
                let _ = tcp.set_read_timeout(Some(Duration::from_secs(10)));
                let Ok(conn) = rustls::ServerConnection::new(config) else {
                    return;
                };
                let mut tls = rustls::StreamOwned::new(conn, tcp);
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                        match tls.read(&mut chunk) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                        continue;
                    };
                    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
                    buf.drain(..end + 4);
                    let path = head.split(' ').nth(1).unwrap_or("/").to_string();
                    let body = if path == "/" {
                        (0..30)
                            .map(|i| format!("<a href=\"/p/{i}\">{i}</a>\n"))
                            .collect()
                    } else {
                        format!("<p>{path}</p>")
                    };
                    let answer = format!(
                        "HTTP/1.0 200 OK\r\nContent-Type: text/html\r\nConnection: keep-alive\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if tls
                        .write_all(answer.as_bytes())
                        .and_then(|_| tls.flush())
                        .is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    addr
}

#[test]
fn keep_alive_reuses_tls_connections() {
    let ca = TestCa::new("test CA").unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let addr = keep_alive_server(&ca.site_cert().unwrap(), connections.clone());
    let url = format!("https://{addr}/");
    let mut config = trusting(&[url], &ca, false);
    config = config.max_tasks(4);
    let outcome = crawl(config);
    assert_eq!(outcome.records.len(), 31);
    assert!(outcome
        .records
        .iter()
        .all(|r| r.status == Some(200) && r.error.is_none()));
    let connections = connections.load(Ordering::SeqCst);
    assert!(
        connections <= 8,
        "31 pages over at most 4 connections a shard, got {connections}"
    );
}

#[test]
fn an_http_to_https_redirect_of_the_same_host_is_followed_and_coalesces() {
    let ca = TestCa::new("test CA").unwrap();
    let secure = https_server(&ca.site_cert().unwrap(), |req| match req.path.as_str() {
        "/x" => Some(html("<p>secure</p>")),
        _ => None,
    });
    let target = format!("https://127.0.0.1:{}/x", secure.port());
    let plain = serve(move |req| match req.path.as_str() {
        "/" => Some(page(&["/a", "/b"])),
        "/a" | "/b" => Some(redirect(301, &target)),
        _ => None,
    });
    let outcome = crawl(trusting(&[format!("{}/", base(&plain))], &ca, false));
    let x = format!("https://127.0.0.1:{}/x", secure.port());
    assert_eq!(record(&outcome, &x).status, Some(200));
    assert_eq!(secure.hits("127.0.0.1", "/x"), 1, "both redirects coalesce");
    for from in ["a", "b"] {
        let r = record(&outcome, &format!("{}/{from}", base(&plain)));
        assert_eq!(r.next_url.as_deref(), Some(x.as_str()));
    }
}

#[test]
fn robots_txt_belongs_to_each_origin() {
    let ca = TestCa::new("test CA").unwrap();
    let robots = |deny: bool| {
        move |req: &Request| match req.path.as_str() {
            "/robots.txt" if deny => Some(Reply::with_type(
                200,
                "text/plain",
                "User-agent: *\nDisallow: /private/\n",
            )),
            "/" => Some(page(&["/private/x"])),
            "/private/x" => Some(html("<p>private</p>")),
            _ => None,
        }
    };
    let plain = serve(robots(true));
    let secure = https_server(&ca.site_cert().unwrap(), robots(false));
    let roots = [format!("{}/", base(&plain)), root(&secure)];
    let mut config = trusting(&roots, &ca, false);
    config = config.obey_robots(true);
    let outcome = crawl(config);
    let denied = record(&outcome, &format!("{}/private/x", base(&plain)));
    assert_eq!(denied.error_kind, Some(ErrorKind::RobotsDisallowed));
    let allowed = record(&outcome, &format!("{}private/x", root(&secure)));
    assert_eq!((allowed.status, &allowed.error), (Some(200), &None));
    assert_eq!(plain.hits("127.0.0.1", "/robots.txt"), 1);
    assert_eq!(secure.hits("127.0.0.1", "/robots.txt"), 1);
}
