//! A page's record when it failed: marking one failed, the record of a
//! fetch an interrupt cancelled, and whether a failure counts against the
//! host (for its backoff).

use crate::job::ErrorKind;
use crate::output::record::Record;

/// Whether a record says its host failed to answer usefully (a network
/// error, 5xx, 429): consecutive failures back the host off. A certificate
/// or TLS version refusal is not such a failure: waiting does not mend it.
pub(super) fn host_failed(record: &Record) -> bool {
    match record.status {
        Some(status) => status >= 500 || status == 429,
        None => !matches!(
            record.error_kind,
            None | Some(
                ErrorKind::TlsCertificate
                    | ErrorKind::TlsVersion
                    | ErrorKind::ProxyConnect
                    | ErrorKind::ProxyAuth
            )
        ),
    }
}

/// The record of a fetch cancelled by an interrupt.
pub(super) fn interrupted_record(url: String, shard: usize) -> Record {
    let mut record = Record::new(url, shard);
    fail(
        &mut record,
        ErrorKind::Interrupted,
        "interrupted before the fetch finished",
    );
    record
}

/// Mark a record failed with a class and a one-line message.
pub(super) fn fail(record: &mut Record, kind: ErrorKind, message: &str) {
    record.error_kind = Some(kind);
    record.error = Some(message.to_string());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(status: Option<u16>, kind: Option<ErrorKind>) -> Record {
        let mut record = Record::new("https://a.test/".into(), 0);
        record.status = status;
        if let Some(kind) = kind {
            fail(&mut record, kind, "x");
        }
        record
    }

    #[test]
    fn server_errors_and_network_errors_count_against_the_host_certificates_do_not() {
        assert!(host_failed(&record(Some(503), None)));
        assert!(host_failed(&record(Some(429), None)));
        assert!(!host_failed(&record(
            Some(200),
            Some(ErrorKind::TlsCertificate)
        )));
        assert!(!host_failed(&record(Some(404), None)));
        assert!(host_failed(&record(None, Some(ErrorKind::ConnectRefused))));
        assert!(host_failed(&record(None, Some(ErrorKind::TlsClosed))));
        assert!(!host_failed(&record(None, Some(ErrorKind::TlsCertificate))));
        assert!(!host_failed(&record(None, Some(ErrorKind::TlsVersion))));
    }
}
