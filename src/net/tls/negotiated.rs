//! What a TLS session agreed on, in the words a record uses: the protocol
//! version as OpenSSL and nginx write it (`TLSv1.3`) and the cipher suite
//! by its IANA name (`TLS_AES_128_GCM_SHA256`). Pure: it reads what
//! rustls says of a connection.
//!
//! Not the handshake (`mod.rs`) nor where a connection keeps it
//! (`crate::net::stream`).
// Lints: those of `tls` (this module's parent) apply here too.

use rustls::{CipherSuite, ProtocolVersion};

/// The version and cipher suite of an established TLS session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Negotiated {
    /// `TLSv1.2` or `TLSv1.3`.
    pub version: &'static str,
    /// The suite's IANA name.
    pub cipher: &'static str,
}

impl Negotiated {
    /// What `connection` agreed on; None before its handshake ended.
    pub(crate) fn of(connection: &rustls::ClientConnection) -> Option<Negotiated> {
        Some(Negotiated {
            version: version_name(connection.protocol_version()?),
            cipher: cipher_name(connection.negotiated_cipher_suite()?.suite()),
        })
    }
}

/// A protocol version as OpenSSL names it (nginx's `$ssl_protocol`).
fn version_name(version: ProtocolVersion) -> &'static str {
    match version {
        ProtocolVersion::TLSv1_3 => "TLSv1.3",
        ProtocolVersion::TLSv1_2 => "TLSv1.2",
        ProtocolVersion::TLSv1_1 => "TLSv1.1",
        ProtocolVersion::TLSv1_0 => "TLSv1",
        _ => "unknown",
    }
}

/// A cipher suite's IANA name. rustls names TLS 1.3's suites `TLS13_...`;
/// IANA's names are `TLS_...`, as the TLS 1.2 ones are in both.
fn cipher_name(suite: CipherSuite) -> &'static str {
    match suite {
        CipherSuite::TLS13_AES_128_GCM_SHA256 => "TLS_AES_128_GCM_SHA256",
        CipherSuite::TLS13_AES_256_GCM_SHA384 => "TLS_AES_256_GCM_SHA384",
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256 => "TLS_CHACHA20_POLY1305_SHA256",
        other => other.as_str().unwrap_or("unknown"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_suites_have_the_names_openssl_and_iana_give_them() {
        assert_eq!(version_name(ProtocolVersion::TLSv1_3), "TLSv1.3");
        assert_eq!(version_name(ProtocolVersion::TLSv1_2), "TLSv1.2");
        assert_eq!(
            cipher_name(CipherSuite::TLS13_AES_256_GCM_SHA384),
            "TLS_AES_256_GCM_SHA384"
        );
        assert_eq!(
            cipher_name(CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256),
            "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"
        );
        assert_eq!(cipher_name(CipherSuite::Unknown(0x0a0a)), "unknown");
    }
}
