//! TLS for `https://` fetches: rustls 0.23 (the `ring` provider) through
//! futures-rustls over the shard's glommio `TcpStream`.
//!
//! What it is: the crawl-wide trust settings ([`TlsOptions`]: webpki-roots
//! plus `--ca-cert` PEMs, `--insecure`), one [`TlsClient`] per shard (a
//! session cache of its own, which then holds the shard's own hosts,
//! keyed by name and port and bounded by bytes; a copy of the options'
//! `ClientConfig` per port, each resuming from that port's sessions), the
//! handshake, and the mapping of what can go wrong to the record's error
//! kinds ([`TlsError`]), and what a session agreed on in a record's words
//! (`negotiated`). The client offers TLS 1.2 and 1.3, SNI for host
//! names (none for IP addresses, as RFC 6066 says), and ALPN `http/1.1`
//! only.
//!
//! What is verified: the chain up to a trusted root, validity dates, the
//! name (DNS or IP SAN) and the handshake signatures, by rustls' webpki
//! verifier. With `--insecure` the handshake accepts any chain (it still
//! checks that the server holds the key of the certificate it sent, with
//! the provider's signature algorithms); the same webpki verifier then runs
//! on the chain the server sent, and its verdict travels with the
//! connection onto every record fetched over it: the page is fetched and
//! recorded with its `tls_certificate` error. Checking after the handshake
//! rather than inside the verifier keeps the verdict with its connection
//! (a verifier is shared by every connection of the config).
//!
//! Not here: the bytes of the HTTP exchange (`crate::net::fetch`), the
//! deadline of each read and write and so of the handshake
//! (`crate::net::stream`, set by `crate::net::fetch`), the session cache
//! (`store`), whether to wait for a session to resume (`sessions`).
pub(crate) mod error;
pub(crate) mod negotiated;
mod sessions;
mod store;
mod verify;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures_rustls::TlsConnector;
use ringcrawl_links::urls::canonical_host;
use rustls::client::WebPkiServerVerifier;
use rustls::{ClientConfig, RootCertStore};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};
use url::{Host, Url};

use crate::net::stream::{Timed, TlsConn};
#[cfg_attr(
    not(feature = "bench-hooks"),
    allow(unreachable_pub, reason = "for bench_hooks")
)]
pub use error::TlsError;
pub(crate) use sessions::Admission;
use sessions::Contacts;
pub(crate) use store::SessionKey;
#[cfg_attr(
    not(feature = "bench-hooks"),
    allow(unreachable_pub, reason = "for bench_hooks")
)]
pub use store::StoreCounts;
use store::{PortSessions, SessionStore};

/// TLS 1.3 tickets the session cache keeps per (name, port) when at most
/// `per_host` fetches to a host run at once: a shard opens at most that
/// many connections to a host at a time, each resuming with one ticket and
/// bringing one or two new ones, so more would only age in the cache. At
/// least 2 (a server's two tickets after a full handshake are both used),
/// at most 8 (rustls' own cache's count).
#[cfg_attr(
    not(feature = "bench-hooks"),
    allow(unreachable_pub, reason = "for bench_hooks")
)]
pub fn tickets_per_key(per_host: usize) -> usize {
    per_host.clamp(2, 8)
}

/// Ports a shard keeps a client config for (each holds the port's view of
/// the session cache); past it they are made again as needed.
const CONFIG_PORTS: usize = 64;

/// What every shard trusts, built once before the shards start: a
/// client config every shard copies (with a session cache of its own),
/// and under `--insecure` the verifier run after the handshake.
#[derive(Debug, Clone)]
#[cfg_attr(
    not(feature = "bench-hooks"),
    allow(unreachable_pub, reason = "for bench_hooks")
)]
pub struct TlsOptions {
    config: Arc<ClientConfig>,
    check_after: Option<Arc<WebPkiServerVerifier>>,
}

impl Default for TlsOptions {
    /// webpki-roots only, verified.
    fn default() -> Self {
        // Cannot fail: the compiled-in roots parse, and the ring provider
        // has suites for both versions (a test builds this).
        #[allow(clippy::expect_used)]
        TlsOptions::new(&[], false).expect("the default TLS client config builds")
    }
}

impl TlsOptions {
    /// Trust webpki-roots (Mozilla's list, compiled in) plus `extra` (DER
    /// certificates of private CAs, `--ca-cert`); `insecure`: fetch over
    /// connections whose certificate fails, and say so on the record.
    #[cfg_attr(
        not(feature = "bench-hooks"),
        allow(unreachable_pub, reason = "for bench_hooks")
    )]
    pub fn new(extra: &[CertificateDer<'static>], insecure: bool) -> Result<Self, TlsError> {
        let mut roots = RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        for cert in extra {
            roots
                .add(cert.clone())
                .map_err(|e| TlsError::Certificate(format!("unusable CA certificate: {e}")))?;
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
            .build()
            .map_err(|e| TlsError::Certificate(format!("no usable roots: {e}")))?;
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
            .map_err(|e| TlsError::Handshake(e.to_string()))?;
        let builder = if insecure {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(verify::AnyChain::new(&provider)))
        } else {
            builder.with_webpki_verifier(webpki.clone())
        };
        let mut config = builder.with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(TlsOptions {
            config: Arc::new(config),
            check_after: insecure.then_some(webpki),
        })
    }

    /// Whether certificate failures are let through (`--insecure`).
    #[cfg(test)]
    pub fn insecure(&self) -> bool {
        self.check_after.is_some()
    }
}

/// Every certificate of a PEM file (`--ca-cert`), or a one-line reason.
pub(crate) fn read_pem_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("{}: no CERTIFICATE in the file", path.display()));
    }
    Ok(certs)
}

/// One shard's TLS client: its session cache (bounded by bytes, keyed by
/// name and port), a client config per port that resumes from that port's
/// sessions, the verifier `--insecure` runs after the handshake, and its
/// first contacts.
#[cfg_attr(
    not(feature = "bench-hooks"),
    allow(unreachable_pub, reason = "for bench_hooks")
)]
pub struct TlsClient {
    /// `options`' config, copied for each port with the port's store.
    config: ClientConfig,
    connectors: RefCell<HashMap<u16, TlsConnector>>,
    sessions: Arc<SessionStore>,
    contacts: Contacts,
    /// With `--insecure`: the real verifier, run after the handshake.
    check_after: Option<Arc<WebPkiServerVerifier>>,
    handshakes: Cell<Handshakes>,
}

/// Handshakes a shard ran, by how they ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Handshakes {
    /// Completed with a full handshake (a HelloRetryRequest included).
    pub full: u64,
    /// Completed by resuming a cached session.
    pub resumed: u64,
    /// Failed: a TLS alert or error, a time-out, a socket error.
    pub failed: u64,
}

impl TlsClient {
    /// A client with `options`' trust and a session cache of its own of
    /// at most `session_memory` bytes and `tickets_per_key` TLS 1.3
    /// tickets a (name, port).
    #[cfg_attr(
        not(feature = "bench-hooks"),
        allow(unreachable_pub, reason = "for bench_hooks")
    )]
    pub fn new(options: &TlsOptions, session_memory: usize, tickets_per_key: usize) -> Self {
        TlsClient {
            config: ClientConfig::clone(&options.config),
            connectors: RefCell::new(HashMap::new()),
            sessions: Arc::new(SessionStore::new(session_memory, tickets_per_key)),
            contacts: Contacts::default(),
            check_after: options.check_after.clone(),
            handshakes: Cell::default(),
        }
    }

    /// The client config for connections to `port`: `options`' config
    /// with this shard's sessions for that port. (Public for the
    /// handshake benchmark.)
    #[cfg_attr(
        not(feature = "bench-hooks"),
        allow(unreachable_pub, reason = "for bench_hooks")
    )]
    pub fn config_for(&self, port: u16) -> Arc<ClientConfig> {
        let mut config = self.config.clone();
        config.resumption = rustls::client::Resumption::store(Arc::new(PortSessions::new(
            port,
            self.sessions.clone(),
        )));
        Arc::new(config)
    }

    fn connector(&self, port: u16) -> TlsConnector {
        if let Some(connector) = self.connectors.borrow().get(&port) {
            return connector.clone();
        }
        let connector = TlsConnector::from(self.config_for(port));
        let mut connectors = self.connectors.borrow_mut();
        if connectors.len() >= CONFIG_PORTS {
            connectors.clear();
        }
        connectors.insert(port, connector.clone());
        connector
    }

    /// Wait (at most `patience`) until a new connection to `key` can
    /// resume a session, if one is coming; see `sessions`. Hold the
    /// admission until the exchange on the connection has ended.
    pub(crate) async fn admit(&self, key: &SessionKey, patience: Duration) -> Admission<'_> {
        self.contacts.admit(&*self.sessions, key, patience).await
    }

    /// Run the handshake over `tcp` for `key`'s name, resuming a session
    /// of `key`'s if the cache has one. I/O errors other than the TLS ones
    /// (time-outs) come back as they are, for the caller to name.
    pub(crate) async fn handshake(
        &self,
        tcp: Timed,
        key: &SessionKey,
    ) -> Result<TlsConn, HandshakeError> {
        let connected = self
            .connector(key.port)
            .connect(key.name.clone(), tcp)
            .await;
        let tls = match connected {
            Ok(tls) => tls,
            Err(e) => {
                self.count(|h| h.failed += 1);
                return Err(match TlsError::from_io(e, true) {
                    Ok(tls) => HandshakeError::Tls(tls),
                    Err(io) => HandshakeError::Io(io),
                });
            }
        };
        let connection = tls.get_ref().1;
        match connection.handshake_kind() {
            Some(rustls::HandshakeKind::Resumed) => self.count(|h| h.resumed += 1),
            _ => self.count(|h| h.full += 1),
        }
        if let Some(chain) = connection.peer_certificates() {
            self.sessions.note_chain(key, chain);
        }
        let warning = self
            .check_after
            .as_ref()
            .and_then(|webpki| verify::check_after(webpki, connection, &key.name));
        Ok(TlsConn::new(tls, warning))
    }

    /// What the session cache holds, and what it evicted.
    #[cfg_attr(
        not(feature = "bench-hooks"),
        allow(unreachable_pub, reason = "for bench_hooks")
    )]
    pub fn session_counts(&self) -> StoreCounts {
        self.sessions.counts()
    }

    /// The handshakes run so far.
    pub(crate) fn handshakes(&self) -> Handshakes {
        self.handshakes.get()
    }

    /// Count a handshake that ended (never across an await: the shard's
    /// other handshakes count too).
    fn count(&self, how: impl FnOnce(&mut Handshakes)) {
        let mut counts = self.handshakes.get();
        how(&mut counts);
        self.handshakes.set(counts);
    }
}

/// Why a handshake failed.
#[derive(Debug)]
pub(crate) enum HandshakeError {
    Tls(TlsError),
    /// Not a TLS matter: a time-out or another socket error.
    Io(io::Error),
}

/// The name to verify and send as SNI for `url`'s host: a domain in its
/// canonical form (no trailing dot: RFC 6066 has none in a server name;
/// normalised URLs have none already).
pub(crate) fn server_name(url: &Url) -> Result<ServerName<'static>, TlsError> {
    match url.host() {
        Some(Host::Domain(domain)) => ServerName::try_from(canonical_host(domain).into_owned())
            .map_err(|_| TlsError::Handshake(format!("{domain:?} is not a valid TLS server name"))),
        Some(Host::Ipv4(ip)) => Ok(ServerName::IpAddress(std::net::IpAddr::V4(ip).into())),
        Some(Host::Ipv6(ip)) => Ok(ServerName::IpAddress(std::net::IpAddr::V6(ip).into())),
        None => Err(TlsError::Handshake("the URL has no host".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_options_build_and_verify() {
        let options = TlsOptions::default();
        assert!(!options.insecure());
        assert!(TlsOptions::new(&[], true).unwrap().insecure());
        let bad = CertificateDer::from(b"not DER".to_vec());
        assert_eq!(
            TlsOptions::new(&[bad], false).unwrap_err().kind(),
            crate::job::ErrorKind::TlsCertificate
        );
    }

    #[test]
    fn host_names_and_addresses_become_server_names() {
        let name = |u: &str| server_name(&Url::parse(u).unwrap());
        assert_eq!(
            name("https://Example.COM/x").unwrap(),
            ServerName::try_from("example.com").unwrap()
        );
        assert_eq!(
            name("https://example.com./x").unwrap(),
            ServerName::try_from("example.com").unwrap(),
            "a server name has no trailing dot"
        );
        assert!(matches!(
            name("https://127.0.0.1:8443/").unwrap(),
            ServerName::IpAddress(_)
        ));
        assert!(matches!(
            name("https://[::1]/").unwrap(),
            ServerName::IpAddress(_)
        ));
    }

    #[test]
    fn a_pem_file_without_certificates_is_refused_in_one_line() {
        let dir = std::env::temp_dir().join(format!("ringcrawl-pem-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let err = read_pem_certificates(&empty).unwrap_err();
        assert!(
            err.contains("no CERTIFICATE") && !err.contains('\n'),
            "{err}"
        );
        let missing = read_pem_certificates(&dir.join("missing.pem")).unwrap_err();
        assert!(missing.contains("missing.pem"), "{missing}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
