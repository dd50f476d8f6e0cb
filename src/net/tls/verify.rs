//! Certificate verdicts: the `--insecure` handshake verifier and the check
//! it is followed by.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::{ClientConnection, DigitallySignedStruct, Error, SignatureScheme};
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};

use super::error::{classify, TlsError};

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
