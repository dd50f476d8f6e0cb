//! `cargo bench --bench tls_handshake`: the client's CPU cost of a full and
//! of a resumed TLS 1.3 handshake, with the crawler's choices (rustls, the
//! `ring` provider, X25519, an ECDSA P-256 chain of two certificates as the
//! test site serves). Client and server run in memory on one thread, bytes
//! handed over in buffers; only the time spent in client calls is counted
//! (no I/O, so that time is CPU), the server's work is not.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use ringcrawl_site::tls::TestCa;
use rustls::client::{ClientSessionMemoryCache, Resumption};
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, HandshakeKind, RootCertStore, ServerConnection};

/// One handshake (and the session tickets after it); the client's time and
/// the kind of handshake the server saw.
fn handshake(
    client: &Arc<ClientConfig>,
    server: &Arc<rustls::ServerConfig>,
) -> (Duration, Option<HandshakeKind>) {
    let mut spent = Duration::ZERO;
    let name = ServerName::try_from("localhost").unwrap();
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

fn configs() -> (
    Arc<ClientConfig>,
    Arc<ClientConfig>,
    Arc<rustls::ServerConfig>,
) {
    let ca = TestCa::new("bench CA").unwrap();
    let server = ca.site_cert().unwrap().server_config(&[]).unwrap();
    let mut roots = RootCertStore::empty();
    roots.add(ca.cert().clone()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let build = |resume: bool| {
        let mut config = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots.clone())
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        config.resumption = if resume {
            Resumption::store(Arc::new(ClientSessionMemoryCache::new(256)))
        } else {
            Resumption::disabled()
        };
        Arc::new(config)
    };
    (build(false), build(true), server)
}

fn bench(c: &mut Criterion) {
    let (full, resuming, server) = configs();
    let mut group = c.benchmark_group("tls_handshake_client");
    group.bench_function("full", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| {
                    let (spent, kind) = handshake(&full, &server);
                    assert_eq!(kind, Some(HandshakeKind::Full));
                    spent
                })
                .sum()
        })
    });
    // Prime the cache; every resumed handshake brings two new tickets.
    assert_eq!(handshake(&resuming, &server).1, Some(HandshakeKind::Full));
    group.bench_function("resumed", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| {
                    let (spent, kind) = handshake(&resuming, &server);
                    assert_eq!(kind, Some(HandshakeKind::Resumed));
                    spent
                })
                .sum()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
