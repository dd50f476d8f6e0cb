//! TLS for the test site: a certificate authority made on the spot (rcgen,
//! ECDSA P-256), the server certificates it issues (good ones, and broken
//! ones on purpose: expired, for another name, from an authority nobody
//! trusts, self-signed), and the rustls server config that serves one.
//!
//! Nothing here is secret or lasting: keys live in memory (or in files a
//! caller asks for) for one test, demo or benchmark run.

use std::sync::Arc;

use rcgen::{
    date_time_ymd, BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::ServerConfig;
use rustls::SupportedProtocolVersion;

/// The names the site's certificate is valid for: loopback by name and
/// address, the multi-host site's `h{k}.site.test` and the endless site's
/// `h{k}.endless.test`.
pub const SITE_NAMES: &[&str] = &[
    "localhost",
    "127.0.0.1",
    "::1",
    "site.test",
    "*.site.test",
    "*.endless.test",
];

/// Any failure of certificate generation or server configuration.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// A certificate authority for one run.
pub struct TestCa {
    issuer: Issuer<'static, KeyPair>,
    cert: CertificateDer<'static>,
    pem: String,
}

impl std::fmt::Debug for TestCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestCa").finish_non_exhaustive()
    }
}

/// A server certificate chain and its key.
#[derive(Debug)]
pub struct ServerCert {
    /// The server's certificate first, then its issuer's (if not self-signed).
    pub chain: Vec<CertificateDer<'static>>,
    pub key: PrivatePkcs8KeyDer<'static>,
    chain_pem: String,
    key_pem: String,
}

/// How long a certificate is valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Validity {
    /// From 1975 to 4096 (rcgen's default): valid now.
    Current,
    /// During the year 2000 only: expired.
    Expired,
}

impl TestCa {
    /// A new authority named `name`.
    pub fn new(name: &str) -> Result<TestCa, Error> {
        let mut params = CertificateParams::default();
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate()?;
        let cert = params.self_signed(&key)?;
        Ok(TestCa {
            pem: cert.pem(),
            cert: cert.der().clone(),
            issuer: Issuer::new(params, key),
        })
    }

    /// The authority's certificate (what a client trusts).
    pub fn cert(&self) -> &CertificateDer<'static> {
        &self.cert
    }

    /// The authority's certificate, PEM.
    pub fn pem(&self) -> &str {
        &self.pem
    }

    /// A server certificate for `names` (DNS names or IP addresses).
    pub fn issue(&self, names: &[&str], validity: Validity) -> Result<ServerCert, Error> {
        let (params, key) = leaf(names, validity)?;
        let cert = params.signed_by(&key, &self.issuer)?;
        Ok(ServerCert {
            chain: vec![cert.der().clone(), self.cert.clone()],
            key: PrivatePkcs8KeyDer::from(key.serialize_der()),
            chain_pem: cert.pem() + &self.pem,
            key_pem: key.serialize_pem(),
        })
    }

    /// The site's certificate: [`SITE_NAMES`], valid now.
    pub fn site_cert(&self) -> Result<ServerCert, Error> {
        self.issue(SITE_NAMES, Validity::Current)
    }
}

/// A self-signed server certificate for `names`.
pub fn self_signed(names: &[&str]) -> Result<ServerCert, Error> {
    let (params, key) = leaf(names, Validity::Current)?;
    let cert = params.self_signed(&key)?;
    Ok(ServerCert {
        chain: vec![cert.der().clone()],
        key: PrivatePkcs8KeyDer::from(key.serialize_der()),
        chain_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    })
}

fn leaf(names: &[&str], validity: Validity) -> Result<(CertificateParams, KeyPair), Error> {
    let mut params =
        CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())?;
    params
        .distinguished_name
        .push(DnType::CommonName, names.first().copied().unwrap_or("site"));
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    if validity == Validity::Expired {
        params.not_before = date_time_ymd(2000, 1, 1);
        params.not_after = date_time_ymd(2001, 1, 1);
    }
    Ok((params, KeyPair::generate()?))
}

impl ServerCert {
    /// The chain, PEM (for nginx's `ssl_certificate`).
    pub fn chain_pem(&self) -> &str {
        &self.chain_pem
    }

    /// The key, PEM (for nginx's `ssl_certificate_key`).
    pub fn key_pem(&self) -> &str {
        &self.key_pem
    }

    /// A rustls server config serving this certificate: TLS 1.2 and 1.3
    /// (or just `versions`), ALPN `http/1.1`, stateless session tickets (as
    /// nginx), two TLS 1.3 tickets per handshake (rustls' and OpenSSL's
    /// default).
    pub fn server_config(
        &self,
        versions: &[&'static SupportedProtocolVersion],
    ) -> Result<Arc<ServerConfig>, Error> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let versions = if versions.is_empty() {
            rustls::DEFAULT_VERSIONS
        } else {
            versions
        };
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(versions)?
            .with_no_client_auth()
            .with_single_cert(
                self.chain.clone(),
                PrivateKeyDer::Pkcs8(self.key.clone_key()),
            )?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        config.ticketer = rustls::crypto::ring::Ticketer::new()?;
        Ok(Arc::new(config))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::pki_types::pem::PemObject;

    #[test]
    fn pem_blocks_read_back_as_the_same_der() {
        let ca = TestCa::new("test CA").unwrap();
        let cert = ca.site_cert().unwrap();
        let chain: Vec<CertificateDer> =
            CertificateDer::pem_slice_iter(cert.chain_pem().as_bytes())
                .collect::<Result<_, _>>()
                .unwrap();
        assert_eq!(chain, cert.chain);
        let key = PrivatePkcs8KeyDer::from_pem_slice(cert.key_pem().as_bytes()).unwrap();
        assert_eq!(key.secret_pkcs8_der(), cert.key.secret_pkcs8_der());
        assert_eq!(
            CertificateDer::from_pem_slice(ca.pem().as_bytes()).unwrap(),
            *ca.cert()
        );
        assert!(cert.server_config(&[]).is_ok());
    }
}
