//! HTTPS and compression against nginx, a server that is not ours (and
//! whose TLS is OpenSSL's): TLS 1.2 only, resuming by session ID or by
//! ticket; TLS 1.3 only, resuming by ticket; certificates for DNS names,
//! wildcards among them, picked by the SNI name the crawler sends, with
//! the names pinned to loopback as `--resolve` does; `gzip on`. What the
//! server saw of each request (TLS version, session resumed, SNI name,
//! Host, gzip ratio) comes from its access log. The tests skip when nginx
//! is missing, unless RINGCRAWL_REQUIRE_TOOLS is set.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::time::Duration;

use crate::common::nginx::{Nginx, Seen};
use crate::common::*;
use crate::tls::trusting;
use ringcrawl::CrawlerBuilder;
use ringcrawl_site::tls::{ServerCert, TestCa, Validity};

const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// Pages of the static site: `/index.html` and `/p/{i}.html`.
const PAGES: usize = 12;

/// A static site in `dir/site`: the index links to every page, each page
/// to the next one, with enough text that compressing it pays. Its files,
/// by URL path.
fn write_site(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let filler =
        "<p>The quick brown fox jumps over the lazy dog, again and again.</p>\n".repeat(40);
    let mut files = BTreeMap::new();
    let links: String = (0..PAGES)
        .map(|i| format!("<li><a href=\"/p/{i}.html\">page {i}</a></li>\n"))
        .collect();
    files.insert(
        "/index.html".to_string(),
        format!("<!doctype html><html><body><ul>\n{links}</ul>\n{filler}</body></html>\n"),
    );
    for i in 0..PAGES {
        let next = (i + 1) % PAGES;
        files.insert(
            format!("/p/{i}.html"),
            format!(
                "<!doctype html><html><body><h1>page {i}</h1>\n\
                 <a href=\"/p/{next}.html\">next</a>\n{filler}</body></html>\n"
            ),
        );
    }
    let files: BTreeMap<String, Vec<u8>> = files
        .into_iter()
        .map(|(path, body)| (path, body.into_bytes()))
        .collect();
    for (path, body) in &files {
        let file = dir.join("site").join(path.trim_start_matches('/'));
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, body).unwrap();
    }
    files
}

/// Writes `cert` as `{name}.pem` and `{name}.key` in `dir`; the two
/// directives that serve it.
fn write_cert(dir: &Path, name: &str, cert: &ServerCert) -> String {
    std::fs::write(dir.join(format!("{name}.pem")), cert.chain_pem()).unwrap();
    std::fs::write(dir.join(format!("{name}.key")), cert.key_pem()).unwrap();
    format!("ssl_certificate {name}.pem; ssl_certificate_key {name}.key;")
}

/// The crawl of `roots` trusting `ca`, every name pinned to loopback at
/// `port`, one connection a request (each one a handshake the log shows).
fn crawl_config(roots: &[String], names: &[&str], port: u16, ca: &TestCa) -> CrawlerBuilder {
    let mut config = trusting(roots, ca, false);
    config = config.keep_alive(false);
    // A connection waits for the first one's session at most its connect
    // time-out: on a busy machine, 2 s could turn a wait into a second
    // full handshake, and the counts below are exact.
    config = config.connect_timeout(Duration::from_secs(10));
    for name in names {
        config = config.resolve(name, port, vec![LOOPBACK]);
    }
    config
}

/// The URLs a crawl of the site from `origin` finds: all of its pages,
/// the index as `/`.
fn site_urls(origin: &str, files: &BTreeMap<String, Vec<u8>>) -> BTreeSet<String> {
    files
        .keys()
        .map(|p| format!("{origin}{}", p.trim_end_matches("index.html")))
        .collect()
}

/// Every URL of the site fetched with 200 and no error.
fn assert_site_crawled(outcome: &Outcome, origin: &str, files: &BTreeMap<String, Vec<u8>>) {
    let bad: Vec<_> = outcome
        .records
        .iter()
        .filter(|r| r.status != Some(200) || r.error.is_some())
        .collect();
    assert!(bad.is_empty(), "failed: {bad:#?}");
    assert_eq!(urls_of(outcome), site_urls(origin, files));
}

/// Full handshakes in `log` (connections that resumed no session).
fn full_handshakes(log: &[Seen]) -> usize {
    log.iter().filter(|s| !s.resumed).count()
}

/// A TLS 1.2-only nginx for `*.example.test` resuming with `resumption`
/// (its directives); crawled by name: one full handshake, then resumed
/// sessions only, and the name sent as SNI.
fn tls_1_2_resumes(test: &str, resumption: &str) {
    if !tools::require("nginx", test) {
        return;
    }
    let ca = TestCa::new("test CA").unwrap();
    let dir = Nginx::dir();
    let files = write_site(&dir);
    let cert = write_cert(
        &dir,
        "wild",
        &ca.issue(&["*.example.test"], Validity::Current).unwrap(),
    );
    let mut nginx = Nginx::start(dir, |port| {
        format!(
            "server {{ listen 127.0.0.1:{port} ssl; server_name www.example.test;\n\
             {cert}\nssl_protocols TLSv1.2;\n{resumption}\nroot site; }}"
        )
    });
    let origin = format!("https://www.example.test:{}", nginx.port());
    let mut config = crawl_config(
        &[format!("{origin}/")],
        &["www.example.test"],
        nginx.port(),
        &ca,
    );
    // Two connections at a time: a TLS 1.2 session may be resumed by both.
    config = config.per_host(2);
    let outcome = crawl(config);
    let log = nginx.stop();
    assert_site_crawled(&outcome, &origin, &files);
    // One request a page, each its own connection.
    assert_eq!(log.len(), PAGES + 1, "{log:#?}");
    for seen in &log {
        assert_eq!(seen.protocol, "TLSv1.2", "{seen:?}");
        assert_eq!(seen.server_name, "www.example.test", "SNI: {seen:?}");
        assert_eq!(seen.host, "www.example.test", "{seen:?}");
    }
    assert_eq!(
        full_handshakes(&log),
        1,
        "the first connection alone is a full handshake: {log:#?}"
    );
    assert_handshakes_counted(&outcome, &log);
}

/// The crawl's own count of its handshakes is nginx's.
fn assert_handshakes_counted(outcome: &Outcome, log: &[Seen]) {
    let counted = outcome.stats.tls_handshakes;
    let full = full_handshakes(log) as u64;
    assert_eq!(
        (counted.full, counted.resumed, counted.failed),
        (full, log.len() as u64 - full, 0),
        "{log:#?}"
    );
}

#[test]
fn a_tls_1_2_only_nginx_resumes_its_sessions_by_id_from_its_session_cache() {
    tls_1_2_resumes(
        "a_tls_1_2_only_nginx_resumes_its_sessions_by_id_from_its_session_cache",
        "ssl_session_tickets off; ssl_session_cache shared:tls:1m;",
    );
}

#[test]
fn a_tls_1_2_only_nginx_resumes_its_sessions_by_ticket_without_a_cache() {
    tls_1_2_resumes(
        "a_tls_1_2_only_nginx_resumes_its_sessions_by_ticket_without_a_cache",
        "ssl_session_tickets on; ssl_session_cache off;",
    );
}

#[test]
fn a_tls_1_3_only_nginx_by_a_wildcard_name_resumes_with_its_tickets() {
    let test = "a_tls_1_3_only_nginx_by_a_wildcard_name_resumes_with_its_tickets";
    if !tools::require("nginx", test) {
        return;
    }
    let ca = TestCa::new("test CA").unwrap();
    let dir = Nginx::dir();
    let files = write_site(&dir);
    let cert = write_cert(
        &dir,
        "wild",
        &ca.issue(&["*.example.test"], Validity::Current).unwrap(),
    );
    let mut nginx = Nginx::start(dir, |port| {
        format!(
            "server {{ listen 127.0.0.1:{port} ssl; server_name _;\n\
             {cert}\nssl_protocols TLSv1.3;\nssl_session_tickets on;\nroot site; }}"
        )
    });
    let origin = format!("https://crawl.example.test:{}", nginx.port());
    let mut config = crawl_config(
        &[format!("{origin}/")],
        &["crawl.example.test"],
        nginx.port(),
        &ca,
    );
    // One connection at a time: OpenSSL leaves two tickets after a full
    // handshake and one after a resumption, so each connection finds one.
    config = config.per_host(1);
    let outcome = crawl(config);
    let log = nginx.stop();
    assert_site_crawled(&outcome, &origin, &files);
    assert_eq!(log.len(), PAGES + 1, "{log:#?}");
    for seen in &log {
        assert_eq!(seen.protocol, "TLSv1.3", "{seen:?}");
        assert_eq!(seen.server_name, "crawl.example.test", "SNI: {seen:?}");
    }
    assert_eq!(
        full_handshakes(&log),
        1,
        "every connection after the first resumes: {log:#?}"
    );
    assert_handshakes_counted(&outcome, &log);
}

#[test]
fn nginx_picks_each_name_s_certificate_by_the_sni_the_crawler_sends() {
    let test = "nginx_picks_each_name_s_certificate_by_the_sni_the_crawler_sends";
    if !tools::require("nginx", test) {
        return;
    }
    let ca = TestCa::new("test CA").unwrap();
    let dir = Nginx::dir();
    // Two sites on one port, each with a certificate for its names only:
    // a client that sent no SNI, or the wrong one, would get the default
    // server's certificate and fail to verify the other name. An IP
    // address is no SNI name (RFC 6066): it gets the default server, whose
    // certificate also names 127.0.0.1, and nginx logs `-` for the name.
    let example = write_cert(
        &dir,
        "example",
        &ca.issue(&["*.example.test", "127.0.0.1"], Validity::Current)
            .unwrap(),
    );
    let other = write_cert(
        &dir,
        "other",
        &ca.issue(&["other.test"], Validity::Current).unwrap(),
    );
    for (site, body) in [("example", "the example site"), ("other", "the other site")] {
        std::fs::create_dir_all(dir.join(site)).unwrap();
        std::fs::write(
            dir.join(site).join("index.html"),
            format!("<html><body><p>{body}</p></body></html>"),
        )
        .unwrap();
    }
    let mut nginx = Nginx::start(dir, |port| {
        format!(
            "server {{ listen 127.0.0.1:{port} ssl default_server; server_name *.example.test;\n\
             {example}\nroot example; }}\n\
             server {{ listen 127.0.0.1:{port} ssl; server_name other.test;\n\
             {other}\nroot other; }}"
        )
    });
    let port = nginx.port();
    let roots = [
        format!("https://a.example.test:{port}/"),
        format!("https://other.test:{port}/"),
        format!("https://127.0.0.1:{port}/"),
    ];
    let config = crawl_config(&roots, &["a.example.test", "other.test"], port, &ca);
    let outcome = crawl(config);
    let log = nginx.stop();
    let records = by_url(&outcome);
    for root in &roots {
        let r = &records[root];
        assert_eq!((r.status, &r.error), (Some(200), &None), "{r:#?}");
    }
    let sni: BTreeMap<&str, &str> = log
        .iter()
        .map(|s| (s.host.as_str(), s.server_name.as_str()))
        .collect();
    assert_eq!(
        sni,
        BTreeMap::from([
            ("127.0.0.1", "-"),
            ("a.example.test", "a.example.test"),
            ("other.test", "other.test"),
        ]),
        "Host to SNI name: {log:#?}"
    );
}

#[test]
fn gzip_pages_from_nginx_are_decoded_and_their_links_followed() {
    let test = "gzip_pages_from_nginx_are_decoded_and_their_links_followed";
    if !tools::require("nginx", test) {
        return;
    }
    let ca = TestCa::new("test CA").unwrap();
    let dir = Nginx::dir();
    let files = write_site(&dir);
    let cert = write_cert(
        &dir,
        "wild",
        &ca.issue(&["*.example.test"], Validity::Current).unwrap(),
    );
    let mut nginx = Nginx::start(dir, |port| {
        format!(
            "server {{ listen 127.0.0.1:{port} ssl; server_name _;\n\
             {cert}\ngzip on; gzip_min_length 1;\nroot site; }}"
        )
    });
    let origin = format!("https://gz.example.test:{}", nginx.port());
    let config = crawl_config(
        &[format!("{origin}/")],
        &["gz.example.test"],
        nginx.port(),
        &ca,
    );
    let outcome = crawl(config);
    let log = nginx.stop();
    // Every page's links are in its compressed body: found means decoded.
    assert_site_crawled(&outcome, &origin, &files);
    for r in &outcome.records {
        let path = r.url.strip_prefix(&origin).unwrap();
        let file = if path == "/" { "/index.html" } else { path };
        assert_eq!(r.content_encoding.as_deref(), Some("gzip"), "{r:#?}");
        assert_eq!(r.size, files[file].len() as u64, "decoded size: {r:#?}");
        assert!(
            r.encoded_size > 0 && r.encoded_size * 4 < r.size,
            "compressed on the wire: {r:#?}"
        );
    }
    for seen in &log {
        assert!(seen.accept_encoding.contains("gzip"), "{seen:?}");
        assert_ne!(seen.gzip_ratio, "-", "nginx compressed it: {seen:?}");
    }
}
