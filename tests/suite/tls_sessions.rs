//! TLS sessions: kept per (name, port), within a byte bound however many
//! hosts a crawl meets (names pinned to loopback as `--resolve` does, one
//! server with a wildcard certificate for all of them).

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr};

use crate::common::*;
use crate::tls::{https_server, pages, root, trusting};
use ringcrawl::net::tls::DEFAULT_SESSION_MEMORY;
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
    config.keep_alive = false;
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
    let mut config = trusting(&roots, &ca, false);
    config.per_host = 2;
    for i in 0..HOSTS {
        config
            .resolve
            .insert((format!("h{i}.site.test"), port), vec![LOOPBACK]);
    }
    let shards = config.cores as u64;
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
        stats.tls_session_bytes <= shards * DEFAULT_SESSION_MEMORY as u64,
        "within {DEFAULT_SESSION_MEMORY} bytes a shard"
    );
    assert!(stats.tls_session_evictions > 0, "the bound was reached");
    assert_eq!(
        stats.tls_sessions + stats.tls_session_evictions,
        HOSTS as u64,
        "every host's sessions were kept, then held or evicted once"
    );
}
