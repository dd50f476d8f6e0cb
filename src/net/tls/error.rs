//! Why a TLS connection failed, in a record's words ([`TlsError`]): from
//! a rustls error ([`classify`]), from an I/O error of a TLS stream
//! ([`TlsError::from_io`]), and a failed certificate's reason
//! ([`certificate_reason`]). The stream (`crate::net::stream`) and the
//! handshake (`super`) both speak it.

use std::io;

use rustls::{AlertDescription, CertificateError, Error, PeerIncompatible};
use thiserror::Error;

use crate::job::ErrorKind;

/// Why a TLS connection failed, as a record shows it.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
#[cfg_attr(
    not(feature = "bench-hooks"),
    allow(unreachable_pub, reason = "for bench_hooks")
)]
pub enum TlsError {
    /// The certificate did not verify: expired, unknown issuer, name
    /// mismatch, ... (the reason in words).
    #[error("TLS certificate: {0}")]
    Certificate(String),
    /// No TLS version in common (the server speaks only TLS 1.1 or older).
    #[error("TLS version: {0}")]
    Version(String),
    /// The handshake failed otherwise (alert, no cipher in common, garbage).
    #[error("TLS handshake: {0}")]
    Handshake(String),
    /// The connection ended abnormally: closed or reset during the
    /// handshake, or a fatal TLS error after it.
    #[error("TLS connection closed: {0}")]
    Closed(String),
}

impl TlsError {
    /// Record error kind.
    pub(crate) fn kind(&self) -> ErrorKind {
        match self {
            TlsError::Certificate(_) => ErrorKind::TlsCertificate,
            TlsError::Version(_) => ErrorKind::TlsVersion,
            TlsError::Handshake(_) => ErrorKind::TlsHandshake,
            TlsError::Closed(_) => ErrorKind::TlsClosed,
        }
    }

    /// A network failure worth another try (the chapter retries those).
    pub(crate) fn is_retryable(&self) -> bool {
        matches!(self, TlsError::Closed(_))
    }

    /// The TLS error inside an I/O error from a TLS stream, if it is one;
    /// else the I/O error back (a time-out, a reset after the handshake).
    /// `handshaking`: the error ended the handshake, where a close or reset
    /// means the server would not talk TLS with us.
    pub(crate) fn from_io(e: io::Error, handshaking: bool) -> Result<TlsError, io::Error> {
        if let Some(tls) = e.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>()) {
            return Ok(classify(tls, handshaking));
        }
        match e.kind() {
            io::ErrorKind::UnexpectedEof if handshaking => Ok(TlsError::Closed(
                "the server closed the connection during the handshake".into(),
            )),
            io::ErrorKind::ConnectionReset if handshaking => Ok(TlsError::Closed(
                "the server reset the connection during the handshake".into(),
            )),
            _ => Err(e),
        }
    }
}

/// A rustls error in a record's terms. `handshaking`: it ended the
/// handshake (else it ended an established session).
pub(crate) fn classify(e: &Error, handshaking: bool) -> TlsError {
    match e {
        Error::InvalidCertificate(cert) => TlsError::Certificate(certificate_reason(cert)),
        Error::PeerIncompatible(
            PeerIncompatible::ServerDoesNotSupportTls12Or13
            | PeerIncompatible::ServerTlsVersionIsDisabledByOurConfig
            | PeerIncompatible::SupportedVersionsExtensionRequired,
        ) => TlsError::Version("the server speaks neither TLS 1.2 nor TLS 1.3".into()),
        Error::AlertReceived(AlertDescription::ProtocolVersion) => TlsError::Version(
            "the server refused TLS 1.2 and TLS 1.3 (protocol_version alert)".into(),
        ),
        Error::AlertReceived(
            alert @ (AlertDescription::BadCertificate
            | AlertDescription::CertificateExpired
            | AlertDescription::CertificateUnknown
            | AlertDescription::UnknownCA),
        ) => TlsError::Certificate(format!("the server sent a {alert:?} alert")),
        _ if handshaking => TlsError::Handshake(e.to_string()),
        _ => TlsError::Closed(e.to_string()),
    }
}

/// Why a certificate failed, in a few words: `expired`, `unknown issuer`,
/// `name mismatch (...)`, ...
pub(crate) fn certificate_reason(e: &CertificateError) -> String {
    match e {
        CertificateError::Expired => "expired".into(),
        CertificateError::ExpiredContext { time, not_after } => format!(
            "expired ({} s ago)",
            time.as_secs().saturating_sub(not_after.as_secs())
        ),
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
            "not valid yet".into()
        }
        CertificateError::UnknownIssuer => "unknown issuer".into(),
        CertificateError::NotValidForName => "name mismatch".into(),
        CertificateError::NotValidForNameContext {
            expected,
            presented,
        } => format!(
            "name mismatch: {} is not among {}",
            expected.to_str(),
            if presented.is_empty() {
                "no names".to_string()
            } else {
                presented.join(", ")
            }
        ),
        CertificateError::BadSignature => "bad signature".into(),
        CertificateError::Revoked => "revoked".into(),
        CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => {
            "not valid for server authentication".into()
        }
        CertificateError::BadEncoding => "badly encoded".into(),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use rustls_pki_types::ServerName;

    use super::*;

    #[test]
    fn certificate_errors_name_their_reason() {
        let reason = |e: CertificateError| classify(&Error::InvalidCertificate(e), true);
        assert_eq!(
            reason(CertificateError::Expired),
            TlsError::Certificate("expired".into())
        );
        assert_eq!(
            reason(CertificateError::UnknownIssuer),
            TlsError::Certificate("unknown issuer".into())
        );
        let mismatch = reason(CertificateError::NotValidForNameContext {
            expected: ServerName::try_from("a.test").unwrap(),
            presented: vec!["DnsName(\"b.test\")".into()],
        });
        assert!(
            matches!(&mismatch, TlsError::Certificate(r) if r.starts_with("name mismatch: a.test")),
            "{mismatch:?}"
        );
        assert_eq!(mismatch.kind(), ErrorKind::TlsCertificate);
    }

    #[test]
    fn old_protocol_versions_are_tls_version() {
        let e = Error::PeerIncompatible(PeerIncompatible::ServerDoesNotSupportTls12Or13);
        assert_eq!(classify(&e, true).kind(), ErrorKind::TlsVersion);
        let other = Error::AlertReceived(AlertDescription::HandshakeFailure);
        assert_eq!(classify(&other, true).kind(), ErrorKind::TlsHandshake);
        assert_eq!(classify(&other, false).kind(), ErrorKind::TlsClosed);
    }

    #[test]
    fn io_errors_during_the_handshake_are_tls_closed_and_retryable() {
        let eof = io::Error::new(io::ErrorKind::UnexpectedEof, "tls handshake eof");
        let closed = TlsError::from_io(eof, true).unwrap();
        assert_eq!(closed.kind(), ErrorKind::TlsClosed);
        assert!(closed.is_retryable());
        let timeout = io::Error::new(io::ErrorKind::TimedOut, "timed out");
        assert!(
            TlsError::from_io(timeout, true).is_err(),
            "a time-out stays one"
        );
        let alert = io::Error::new(
            io::ErrorKind::InvalidData,
            rustls::Error::AlertReceived(rustls::AlertDescription::ProtocolVersion),
        );
        assert_eq!(
            TlsError::from_io(alert, true).unwrap().kind(),
            ErrorKind::TlsVersion
        );
    }
}
