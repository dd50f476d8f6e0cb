//! Why a fetch produced no (complete) response ([`FetchError`]), its kind
//! as records and the report name it, whether it is worth another try, and
//! how a stream's I/O error reads as one.
use std::io;
use std::time::{Duration, Instant};

use thiserror::Error;

use crate::job::ErrorKind;
use crate::net::proxy::tunnel::TunnelError;
use crate::net::proxy::Proxy;
use crate::net::tls::TlsError;
use ringcrawl_http1::{BodyError, HeadError};

/// Why a fetch produced no (complete) response.
#[derive(Debug, Error)]
pub(crate) enum FetchError {
    #[error("{0}")]
    Dns(#[from] crate::net::dns::DnsError),
    #[error("unsupported scheme {0} (ringcrawl fetches http and https)")]
    Scheme(String),
    /// The name resolved only to link-local or metadata addresses (the
    /// ones given) and no root names the host or one of them: refused
    /// before connecting.
    #[error("resolves only to link-local or metadata addresses ({0}), which no root names: not connected to")]
    Reserved(String),
    #[error("connect: {0}")]
    Connect(io::Error),
    #[error("connect timed out")]
    ConnectTimeout,
    /// The TLS handshake did not end within the connect time-out (counted
    /// from the start of the TCP connect).
    #[error("TLS handshake not done within the connect time-out")]
    HandshakeTimeout,
    #[error("no data for the read timeout")]
    ReadTimeout,
    #[error("fetch deadline exceeded")]
    Deadline,
    #[error("{0}")]
    Io(io::Error),
    #[error("connection closed before any response")]
    Empty,
    /// A reused keep-alive connection failed before any byte of the answer:
    /// the server closed it while idle. [`fetch`](super::fetch) then
    /// connects afresh.
    #[error("reused connection closed before any response")]
    Stale,
    #[error("connection closed inside the response head")]
    HeadCut,
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// A body read until the close, closed without TLS `close_notify`.
    #[error("connection closed without TLS close_notify: the body may be cut short")]
    NoCloseNotify,
    #[error(transparent)]
    Head(#[from] HeadError),
    #[error(transparent)]
    Body(#[from] BodyError),
    /// The proxy could not be reached or spoken with, refused the
    /// credentials, or could not reach the target. `proxy` is its URL
    /// without the password.
    #[error("proxy {proxy}: {error}")]
    Proxy { proxy: String, error: TunnelError },
}

impl FetchError {
    /// `error` from `proxy`.
    pub(crate) fn proxy(proxy: &Proxy, error: TunnelError) -> FetchError {
        FetchError::Proxy {
            proxy: proxy.to_string(),
            error,
        }
    }

    /// Short machine-readable class, used in records and the report.
    pub(crate) fn kind(&self) -> ErrorKind {
        match self {
            FetchError::Dns(_) => ErrorKind::Dns,
            FetchError::Scheme(_) => ErrorKind::UnsupportedScheme,
            FetchError::Reserved(_) => ErrorKind::ReservedAddress,
            FetchError::Connect(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                ErrorKind::ConnectRefused
            }
            FetchError::Connect(_) => ErrorKind::Connect,
            FetchError::ConnectTimeout => ErrorKind::ConnectTimeout,
            FetchError::HandshakeTimeout => ErrorKind::TlsTimeout,
            FetchError::ReadTimeout => ErrorKind::ReadTimeout,
            FetchError::Deadline => ErrorKind::Deadline,
            FetchError::Io(e) if e.kind() == io::ErrorKind::ConnectionReset => ErrorKind::Reset,
            FetchError::Io(_) => ErrorKind::Io,
            FetchError::Empty => ErrorKind::EmptyResponse,
            FetchError::Stale => ErrorKind::StaleConnection,
            FetchError::HeadCut => ErrorKind::HeadCut,
            FetchError::Head(HeadError::TooLarge(_)) => ErrorKind::HeadTooLarge,
            FetchError::Head(HeadError::ConflictingLength) => ErrorKind::ConflictingLength,
            FetchError::Head(HeadError::BadLength) => ErrorKind::BadLength,
            // `HeadError` is non_exhaustive: a head it cannot read is bad.
            FetchError::Head(HeadError::Invalid(_) | _) => ErrorKind::BadHead,
            FetchError::Body(BodyError::Truncated) | FetchError::NoCloseNotify => {
                ErrorKind::Truncated
            }
            FetchError::Tls(e) => e.kind(),
            // `BodyError` is non_exhaustive: a body it cannot frame is a
            // bad chunk's kind.
            FetchError::Body(BodyError::BadChunk(_) | _) => ErrorKind::BadChunk,
            FetchError::Proxy { error, .. } => match error {
                TunnelError::Auth(_) => ErrorKind::ProxyAuth,
                TunnelError::Refused(_) => ErrorKind::ProxyRefused,
                _ => ErrorKind::ProxyConnect,
            },
        }
    }

    /// Worth another try: the chapter retries network errors only. Time-outs
    /// are not retried (a slow server would cost `max_tries` deadlines), nor
    /// are answers that were wrong rather than missing.
    pub(crate) fn is_retryable(&self) -> bool {
        matches!(
            self,
            FetchError::Connect(_)
                | FetchError::Io(_)
                | FetchError::Empty
                | FetchError::Stale
                | FetchError::HeadCut
        ) || matches!(self, FetchError::Tls(e) if e.is_retryable())
            || matches!(
                self,
                FetchError::Proxy {
                    error: TunnelError::Unreachable(_)
                        | TunnelError::Io(_)
                        | TunnelError::Closed
                        | TunnelError::Refused(_),
                    ..
                }
            )
    }

    /// The proxy itself failed (not reached, broke off, spoke no protocol,
    /// refused the credentials): its fault, not the target host's.
    pub(crate) fn is_proxys(&self) -> bool {
        matches!(self, FetchError::Proxy { error, .. } if !matches!(error, TunnelError::Refused(_)))
    }

    /// Raised before any packet was sent: says nothing about the host.
    pub(crate) fn is_before_network(&self) -> bool {
        matches!(self, FetchError::Scheme(_) | FetchError::Reserved(_))
    }
}

/// An I/O error of a stream as a fetch error: a time-out is the deadline's
/// if less than a millisecond of it was `left`, else the read time-out's.
pub(super) fn io_error(e: io::Error, left: Duration) -> FetchError {
    match e.kind() {
        io::ErrorKind::TimedOut if left < Duration::from_millis(1) => FetchError::Deadline,
        io::ErrorKind::TimedOut => FetchError::ReadTimeout,
        _ => match TlsError::from_io(e, false) {
            Ok(tls) => FetchError::Tls(tls),
            Err(e) => FetchError::Io(e),
        },
    }
}

/// An I/O error that ended a TLS handshake whose every operation had to
/// end by `connected_by`: a time-out is the fetch's deadline's if that
/// has passed, else the connect time-out's if `connected_by` has, else a
/// read time-out.
pub(super) fn handshake_error(
    e: io::Error,
    deadline: Instant,
    connected_by: Instant,
) -> FetchError {
    let now = Instant::now();
    let left = deadline.saturating_duration_since(now);
    if e.kind() == io::ErrorKind::TimedOut
        && left >= Duration::from_millis(1)
        && connected_by.saturating_duration_since(now) < Duration::from_millis(1)
    {
        return FetchError::HandshakeTimeout;
    }
    io_error(e, left)
}
