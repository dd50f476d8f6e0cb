//! `cargo bench --bench tls_handshake`: the client's CPU cost of a full and
//! of a resumed TLS 1.3 handshake, and of TLS 1.2 ones against a server
//! that speaks only TLS 1.2 (`_tls12`), with the crawler's own client: the
//! config of a shard's `TlsClient` (built from `TlsOptions`: webpki-roots
//! plus the test CA, ALPN, TLS 1.2 and 1.3) and its session cache, bounded
//! by bytes and keyed by name and port, at its default size (rustls, the
//! `ring` provider, X25519, an ECDSA P-256 chain of two certificates as the
//! test site serves). A full handshake goes to a new name each time (as a
//! crawl meets new hosts: the cache fills, then evicts), a resumed one to
//! the same name. Client and server run in memory on one thread, bytes
//! handed over in buffers; only the time spent in client calls is counted
//! (no I/O, so that time is CPU), the server's work is not. The shard's
//! client, reached through the `bench-hooks` feature (not API).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "a benchmark's inputs are its own; the workspace's panic-free lints are for what servers send"
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use ringcrawl::bench_hooks::{tickets_per_key, TlsClient, TlsOptions};
use ringcrawl::defaults::TLS_SESSION_MEMORY;
use ringcrawl_site::tls::TestCa;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, HandshakeKind, ServerConnection};

/// One handshake (and the session tickets after it); the client's time and
/// the kind of handshake the server saw.
fn handshake(
    client: &Arc<ClientConfig>,
    server: &Arc<rustls::ServerConfig>,
    name: String,
) -> (Duration, Option<HandshakeKind>) {
    let mut spent = Duration::ZERO;
    let name = ServerName::try_from(name).unwrap();
    let t = Instant::now();
    let mut c = ClientConnection::new(client.clone(), name).unwrap();
    spent += t.elapsed();
    let mut s = ServerConnection::new(server.clone()).unwrap();
    let mut wire = Vec::with_capacity(16 * 1024);
    for _ in 0..10 {
        wire.clear();
        let t = Instant::now();
        while c.wants_write() {
            c.write_tls(&mut wire).unwrap();
        }
        spent += t.elapsed();
        if !wire.is_empty() {
            s.read_tls(&mut &wire[..]).unwrap();
            s.process_new_packets().unwrap();
        }
        wire.clear();
        while s.wants_write() {
            s.write_tls(&mut wire).unwrap();
        }
        if !wire.is_empty() {
            let t = Instant::now();
            let mut read = &wire[..];
            while !read.is_empty() {
                c.read_tls(&mut read).unwrap();
                c.process_new_packets().unwrap();
            }
            spent += t.elapsed();
        }
        if !c.is_handshaking() && !s.is_handshaking() && !c.wants_write() && !s.wants_write() {
            break;
        }
    }
    (spent, s.handshake_kind())
}

fn bench(c: &mut Criterion) {
    let ca = TestCa::new("bench CA").unwrap();
    let cert = ca.site_cert().unwrap();
    let options = TlsOptions::new(&[ca.cert().clone()], false).unwrap();
    let mut group = c.benchmark_group("tls_handshake_client");
    // TLS 1.3 (what a server offering both negotiates), then TLS 1.2 only
    // (a session resumed again and again: the other branch of the session
    // cache), each with a new shard's client at the crawl's defaults (two
    // fetches a host).
    for (label, versions) in [("", &[][..]), ("_tls12", &[&rustls::version::TLS12][..])] {
        let server = cert.server_config(versions).unwrap();
        let client = TlsClient::new(&options, TLS_SESSION_MEMORY, tickets_per_key(2));
        let config = client.config_for(443);
        let mut host = 0u64;
        group.bench_function(format!("full{label}"), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        host += 1;
                        let (spent, kind) =
                            handshake(&config, &server, format!("h{host}.site.test"));
                        assert_eq!(kind, Some(HandshakeKind::Full));
                        spent
                    })
                    .sum()
            })
        });
        let sessions = client.session_counts();
        println!(
            "after {host} full{label} handshakes to new names: {} sessions held, {} bytes, {} evicted",
            sessions.keys, sessions.bytes, sessions.evictions
        );
        // Prime the cache; every resumed TLS 1.3 handshake brings two new
        // tickets, a TLS 1.2 session is used again.
        let name = || "localhost".to_string();
        assert_eq!(
            handshake(&config, &server, name()).1,
            Some(HandshakeKind::Full)
        );
        group.bench_function(format!("resumed{label}"), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        let (spent, kind) = handshake(&config, &server, name());
                        assert_eq!(kind, Some(HandshakeKind::Resumed));
                        spent
                    })
                    .sum()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
