//! The byte stream of one connection as a fetch sees it: plain TCP or TLS
//! over TCP ([`Stream`]), on a TCP stream whose every read and write ends by
//! the fetch's deadline ([`Timed`]).
//!
//! [`Timed`] sets glommio's per-operation time-out before each read and
//! write it passes on: the read time-out, or what is left of the deadline if
//! that is shorter. It sits under TLS, so the handshake and every TLS record
//! (which may take several socket reads) end in time too, without racing a
//! read against a timer (a dropped glommio read leaves a stale timer).
//!
//! A TLS peer that closes without `close_notify` reads here as an ordinary
//! end of stream, noted ([`Stream::closed_cleanly`]) so a body read until
//! the close can be marked truncated. Not here: what the bytes mean
//! (`crate::net::fetch`), the handshake (`crate::net::tls`).
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_lite::{AsyncRead, AsyncWrite};
use futures_rustls::client::TlsStream;
use glommio::net::TcpStream;

use crate::net::socket;
use crate::net::tls::error::TlsError;
use crate::net::tls::negotiated::Negotiated;

/// Shortest time an operation is started with; less left means the
/// deadline has passed.
const MIN_OPERATION: Duration = Duration::from_millis(1);

thread_local! {
    /// Connections open on this thread (a shard's executor): one for each
    /// [`Timed`] alive, whether fetching, in a handshake or idle in a pool.
    static OPEN: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Connections open now on the calling thread: every connection of the
/// shard that calls, from its TCP connect to its close.
pub(crate) fn open_here() -> u64 {
    OPEN.with(std::cell::Cell::get)
}

/// A TCP stream whose reads and writes each end by the read time-out or
/// the deadline, whichever comes first.
#[derive(Debug)]
pub(crate) struct Timed {
    tcp: TcpStream,
    deadline: Instant,
    read_timeout: Duration,
}

impl Timed {
    pub(crate) fn new(tcp: TcpStream, deadline: Instant, read_timeout: Duration) -> Self {
        OPEN.with(|open| open.set(open.get() + 1));
        Timed {
            tcp,
            deadline,
            read_timeout,
        }
    }

    /// Time the next operation may take; a time-out error once the
    /// deadline has passed.
    fn limit(&self) -> io::Result<Duration> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left < MIN_OPERATION {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "fetch deadline exceeded",
            ));
        }
        Ok(left.min(self.read_timeout))
    }

    /// Whether the deadline (rather than the read time-out) has passed.
    pub(crate) fn past_deadline(&self) -> bool {
        self.deadline.saturating_duration_since(Instant::now()) < MIN_OPERATION
    }
}

impl Drop for Timed {
    fn drop(&mut self) {
        OPEN.with(|open| open.set(open.get().saturating_sub(1)));
    }
}

impl AsyncRead for Timed {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let limit = this.limit()?;
        // Taken up by glommio when this read has to wait, not before.
        let _ = this.tcp.set_read_timeout(Some(limit));
        Pin::new(&mut this.tcp).poll_read(cx, buf)
    }
}

impl AsyncWrite for Timed {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let limit = this.limit()?;
        let _ = this.tcp.set_write_timeout(Some(limit));
        Pin::new(&mut this.tcp).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_flush(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_close(cx)
    }
}

/// An established TLS session, with what `--insecure` let through.
#[derive(Debug)]
pub(crate) struct TlsConn {
    tls: TlsStream<Timed>,
    /// The certificate error accepted under `--insecure`.
    warning: Option<TlsError>,
    /// The peer closed the TCP connection without `close_notify`.
    unclean_close: bool,
}

impl TlsConn {
    pub(crate) fn new(tls: TlsStream<Timed>, warning: Option<TlsError>) -> Self {
        TlsConn {
            tls,
            warning,
            unclean_close: false,
        }
    }
}

/// A connection: plain or TLS, always [`Timed`] underneath.
#[derive(Debug)]
pub(crate) enum Stream {
    Plain(Timed),
    Tls(Box<TlsConn>),
}

impl Stream {
    fn timed(&self) -> &Timed {
        match self {
            Stream::Plain(timed) => timed,
            Stream::Tls(conn) => conn.tls.get_ref().0,
        }
    }

    /// Give the stream to a new fetch with its own deadline (a reused
    /// keep-alive connection).
    pub(crate) fn renew(&mut self, deadline: Instant, read_timeout: Duration) {
        let timed = match self {
            Stream::Plain(timed) => timed,
            Stream::Tls(conn) => conn.tls.get_mut().0,
        };
        timed.deadline = deadline;
        timed.read_timeout = read_timeout;
    }

    /// Whether the fetch's deadline has passed (a time-out error is then
    /// the deadline's, not the read time-out's).
    pub(crate) fn past_deadline(&self) -> bool {
        self.timed().past_deadline()
    }

    /// True if nothing waits to be read and the peer has not closed: an
    /// idle keep-alive connection that may carry the next request. For TLS
    /// the records rustls holds undecoded are processed first, so a late
    /// byte it buffered (or a `close_notify`) counts too; the session
    /// tickets a TLS 1.3 server sends after the handshake came before the
    /// first answer and were read with it.
    pub(crate) fn is_quiet(&mut self) -> bool {
        match self {
            Stream::Plain(timed) => socket::is_quiet(&timed.tcp),
            Stream::Tls(conn) => {
                let (timed, session) = conn.tls.get_mut();
                let buffered = match session.process_new_packets() {
                    Ok(state) => state.plaintext_bytes_to_read() > 0 || state.peer_has_closed(),
                    Err(_) => true,
                };
                !buffered && socket::is_quiet(&timed.tcp)
            }
        }
    }

    /// False once a TLS peer has closed without `close_notify`: what was
    /// read until the close may have been cut short.
    pub(crate) fn closed_cleanly(&self) -> bool {
        match self {
            Stream::Plain(_) => true,
            Stream::Tls(conn) => !conn.unclean_close,
        }
    }

    /// The TLS version and cipher suite of this connection; None for
    /// plain TCP.
    pub(crate) fn negotiated(&self) -> Option<Negotiated> {
        match self {
            Stream::Plain(_) => None,
            Stream::Tls(conn) => Negotiated::of(conn.tls.get_ref().1),
        }
    }

    /// The certificate error `--insecure` accepted on this connection.
    pub(crate) fn tls_warning(&self) -> Option<&TlsError> {
        match self {
            Stream::Plain(_) => None,
            Stream::Tls(conn) => conn.warning.as_ref(),
        }
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(timed) => Pin::new(timed).poll_read(cx, buf),
            Stream::Tls(conn) => match Pin::new(&mut conn.tls).poll_read(cx, buf) {
                // rustls: a TCP close without close_notify.
                Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    conn.unclean_close = true;
                    Poll::Ready(Ok(0))
                }
                other => other,
            },
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(timed) => Pin::new(timed).poll_write(cx, buf),
            Stream::Tls(conn) => Pin::new(&mut conn.tls).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(timed) => Pin::new(timed).poll_flush(cx),
            Stream::Tls(conn) => Pin::new(&mut conn.tls).poll_flush(cx),
        }
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(timed) => Pin::new(timed).poll_close(cx),
            Stream::Tls(conn) => Pin::new(&mut conn.tls).poll_close(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_counts_as_open_from_its_wrapping_to_its_drop_on_its_own_thread() {
        glommio::LocalExecutor::default().run(async {
            let listener = glommio::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let addr = listener.local_addr().unwrap();
            let deadline = Instant::now() + Duration::from_secs(10);
            let before = open_here();
            let first = TcpStream::connect(addr).await.unwrap();
            let second = TcpStream::connect(addr).await.unwrap();
            assert_eq!(open_here(), before, "a bare TCP stream is not counted");
            let first = Timed::new(first, deadline, Duration::from_secs(1));
            let second = Stream::Plain(Timed::new(second, deadline, Duration::from_secs(1)));
            assert_eq!(open_here(), before + 2);
            let other = std::thread::spawn(open_here).join().unwrap();
            assert_eq!(other, 0, "another thread counts its own");
            drop(first);
            assert_eq!(open_here(), before + 1);
            drop(second);
            assert_eq!(open_here(), before);
        });
    }
}
