//! TLS sessions: kept per (name, port), within a byte bound however many
//! hosts a crawl meets, and resumed against servers that are not ours:
//! OpenSSL's `s_server` speaking only TLS 1.2 (a session resumed again and
//! again: the TLS 1.2 branch of the session logic) or only TLS 1.3
//! (single-use tickets), with certificates for DNS names (one a wildcard)
//! and the names pinned to loopback as `--resolve` does. The openssl tests
//! skip when openssl is missing, unless RINGCRAWL_REQUIRE_TOOLS is set.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, Mutex};

use crate::common::*;
use crate::tls::{https_server, pages, root, trusting};
use ringcrawl::defaults::TLS_SESSION_MEMORY;
use ringcrawl_site::tls::TestCa;

const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

#[test]
fn two_servers_on_one_name_each_resume_their_own_sessions() {
    let ca = TestCa::new("test CA").unwrap();
    let cert = ca.site_cert().unwrap();
    // Two servers, two ticket keys: a ticket of one is no use to the other.
    let servers = [
        https_server(&cert, pages(60)),
        https_server(&cert, pages(60)),
    ];
    let roots: Vec<String> = servers.iter().map(root).collect();
    let mut config = trusting(&roots, &ca, false);
    config = config.keep_alive(false);
    let outcome = crawl(config);
    assert_eq!(outcome.records.len(), 2 * 61);
    assert!(outcome.records.iter().all(|r| r.error.is_none()));
    for server in &servers {
        let prefix = root(server);
        let shards: BTreeSet<usize> = outcome
            .records
            .iter()
            .filter(|r| r.url.starts_with(&prefix))
            .map(|r| r.shard)
            .collect();
        let (full, resumed) = server.handshakes();
        println!("{prefix}: {full} full handshakes, {resumed} resumed");
        assert_eq!(full + resumed, 61, "one connection a page");
        assert_eq!(
            full,
            shards.len(),
            "{prefix}: one full handshake per shard, none for a ticket of the other port"
        );
    }
}

#[test]
fn twenty_thousand_https_hosts_sessions_stay_within_the_cache_bound() {
    const HOSTS: usize = 20_000;
    let ca = TestCa::new("test CA").unwrap();
    // One server for every name: its certificate is for *.site.test.
    let server = https_server(&ca.site_cert().unwrap(), |_| Some(html("<p>a host</p>")));
    let port = server.port();
    let roots: Vec<String> = (0..HOSTS)
        .map(|i| format!("https://h{i}.site.test:{port}/"))
        .collect();
    let shards = 2;
    let mut config = trusting(&roots, &ca, false).per_host(2).cores(shards);
    for i in 0..HOSTS {
        config = config.resolve(&format!("h{i}.site.test"), port, vec![LOOPBACK]);
    }
    let shards = shards as u64;
    let outcome = crawl(config);
    assert_eq!(outcome.records.len(), HOSTS);
    let failed: Vec<_> = outcome
        .records
        .iter()
        .filter(|r| r.status != Some(200))
        .collect();
    assert!(
        failed.is_empty(),
        "{} failed, first {:?}",
        failed.len(),
        failed.first()
    );
    let stats = &outcome.stats;
    println!(
        "{HOSTS} hosts: {} sessions held in {} bytes ({} a host), {} evicted; {:?} handshakes",
        stats.tls_sessions,
        stats.tls_session_bytes,
        stats.tls_session_bytes / stats.tls_sessions.max(1),
        stats.tls_session_evictions,
        server.handshakes()
    );
    assert!(
        stats.tls_session_bytes <= shards * TLS_SESSION_MEMORY as u64,
        "within {TLS_SESSION_MEMORY} bytes a shard"
    );
    assert!(stats.tls_session_evictions > 0, "the bound was reached");
    assert_eq!(
        stats.tls_sessions + stats.tls_session_evictions,
        HOSTS as u64,
        "every host's sessions were kept, then held or evicted once"
    );
}

/// Crawls `urls` (names pinned to loopback at `port`, one shard, `per_host`
/// fetches at once, one connection each) trusting `ca`; each URL's page.
fn crawl_bodies(urls: &[String], port: u16, ca: &TestCa, per_host: usize) -> Vec<(String, String)> {
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let seen = bodies.clone();
    let mut builder = ringcrawl::Crawler::builder()
        .roots(urls.iter().cloned())
        .cores(1)
        .per_host(per_host)
        .keep_alive(false)
        .obey_robots(false)
        .sitemaps(false)
        .ca_cert_der(ca.cert().to_vec())
        .on_page(move |page| {
            let body = String::from_utf8_lossy(page.body()).into_owned();
            seen.lock().unwrap().push((page.url().to_string(), body));
        });
    let names: BTreeSet<String> = urls
        .iter()
        .map(|u| {
            ringcrawl::Url::parse(u)
                .unwrap()
                .host_str()
                .unwrap()
                .to_string()
        })
        .collect();
    for name in names {
        builder = builder.resolve(&name, port, [LOOPBACK]);
    }
    let report = builder.build().unwrap().run().unwrap();
    assert_eq!(report.errors(), 0, "{}", report.summary());
    let mut bodies = std::mem::take(&mut *bodies.lock().unwrap());
    bodies.sort();
    bodies
}

/// What `s_server -www` says of the session a page came over: `New,
/// TLSv1.2, Cipher is ...` or `Reused, TLSv1.3, ...`.
fn session_line(body: &str) -> &str {
    body.lines()
        .find(|l| l.contains(", Cipher is "))
        .unwrap_or_else(|| panic!("no session line in {body}"))
}

#[test]
fn a_tls_1_2_only_openssl_server_by_name_is_crawled_and_its_session_resumed() {
    let test = "a_tls_1_2_only_openssl_server_by_name_is_crawled_and_its_session_resumed";
    if !tools::require("openssl", test) {
        return;
    }
    let ca = TestCa::new("test CA").unwrap();
    let server = openssl::SServer::start(&ca.site_cert().unwrap(), &["-tls1_2", "-www"]);
    let urls: Vec<String> = (0..8)
        .map(|i| format!("https://site.test:{}/{i}", server.port()))
        .collect();
    // Two at a time: a TLS 1.2 session may be resumed by both.
    let bodies = crawl_bodies(&urls, server.port(), &ca, 2);
    assert_eq!(bodies.len(), urls.len());
    let lines: Vec<&str> = bodies.iter().map(|(_, b)| session_line(b)).collect();
    assert!(lines.iter().all(|l| l.contains("TLSv1.2")), "{lines:#?}");
    let new = lines.iter().filter(|l| l.starts_with("New")).count();
    assert_eq!(
        new, 1,
        "the first contact alone is a full handshake: {lines:#?}"
    );
}

#[test]
fn a_tls_1_3_only_openssl_server_by_a_wildcard_name_resumes_with_its_tickets() {
    let test = "a_tls_1_3_only_openssl_server_by_a_wildcard_name_resumes_with_its_tickets";
    if !tools::require("openssl", test) {
        return;
    }
    let ca = TestCa::new("test CA").unwrap();
    let server = openssl::SServer::start(&ca.site_cert().unwrap(), &["-tls1_3", "-www"]);
    let urls: Vec<String> = (0..8)
        .map(|i| format!("https://www.site.test:{}/{i}", server.port()))
        .collect();
    // One at a time: OpenSSL leaves two tickets after a full handshake and
    // one after a resumption, so each connection finds one.
    let bodies = crawl_bodies(&urls, server.port(), &ca, 1);
    assert_eq!(bodies.len(), urls.len());
    let lines: Vec<&str> = bodies.iter().map(|(_, b)| session_line(b)).collect();
    assert!(lines.iter().all(|l| l.contains("TLSv1.3")), "{lines:#?}");
    let new = lines.iter().filter(|l| l.starts_with("New")).count();
    assert_eq!(
        new, 1,
        "every connection after the first resumes: {lines:#?}"
    );
}
