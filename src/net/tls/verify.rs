//! Certificate verdicts: the `--insecure` handshake verifier, the check it
//! is followed by, and rustls errors in a record's words.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::{
    AlertDescription, CertificateError, ClientConnection, DigitallySignedStruct, Error,
    PeerIncompatible, SignatureScheme,
};
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};

use super::TlsError;

/// The `--insecure` verifier: any chain is accepted in the handshake, but
/// the handshake signatures are still checked against the certificate the
/// server sent (so the server holds its key and the session keys are
/// bound to it). The chain itself is judged after the handshake.
#[derive(Debug)]
pub(super) struct AnyChain {
    algorithms: WebPkiSupportedAlgorithms,
}

impl AnyChain {
    pub(super) fn new(provider: &Arc<CryptoProvider>) -> Self {
        AnyChain {
            algorithms: provider.signature_verification_algorithms,
        }
    }
}

impl ServerCertVerifier for AnyChain {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// The webpki verdict on the chain `connection`'s server sent (on a
/// resumed session: the chain of the session's first handshake), or None
/// if it verifies.
pub(super) fn check_after(
    webpki: &WebPkiServerVerifier,
    connection: &ClientConnection,
    name: &ServerName<'_>,
) -> Option<TlsError> {
    let Some((end_entity, intermediates)) = connection
        .peer_certificates()
        .and_then(|chain| chain.split_first())
    else {
        return Some(TlsError::Certificate(
            "the server sent no certificate".into(),
        ));
    };
    webpki
        .verify_server_cert(end_entity, intermediates, name, &[], UnixTime::now())
        .err()
        .map(|e| classify(&e, true))
}

/// A rustls error in a record's terms. `handshaking`: it ended the
/// handshake (else it ended an established session).
pub(super) fn classify(e: &Error, handshaking: bool) -> TlsError {
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
pub fn certificate_reason(e: &CertificateError) -> String {
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
#[allow(clippy::unwrap_used)]
mod tests {
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
        assert_eq!(mismatch.kind(), "tls_certificate");
    }

    #[test]
    fn old_protocol_versions_are_tls_version() {
        let e = Error::PeerIncompatible(PeerIncompatible::ServerDoesNotSupportTls12Or13);
        assert_eq!(classify(&e, true).kind(), "tls_version");
        let other = Error::AlertReceived(AlertDescription::HandshakeFailure);
        assert_eq!(classify(&other, true).kind(), "tls_handshake");
        assert_eq!(classify(&other, false).kind(), "tls_closed");
    }
}
