//! One accepted connection, start to end: the TLS handshake first if the
//! server has TLS (counted full or resumed), then request after request:
//! read the head within [`HEAD_DEADLINE`], count it, ask the handler (a panic
//! is a 500), write the reply or play its script, and close (draining
//! unread request bytes first, so the close is not a reset) unless the
//! connection is kept alive.
//!
//! What this is not: accepting connections or cancelling them at stop
//! (`executor.rs`), or parsing and encoding HTTP (`request.rs`, `reply.rs`).

use std::io;
use std::os::unix::io::AsRawFd;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use futures_lite::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use glommio::net::TcpStream;
use rustls::HandshakeKind;

use super::reply::{encode, encode_kept, Reply, Step};
use super::request::{read_head, Head, ReadHead};
use super::Shared;

/// Time a client has to send its whole request head.
pub const HEAD_DEADLINE: Duration = Duration::from_secs(10);
/// A single write that makes no progress for this long ends the connection.
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);
/// After a response, how long to drain unread request bytes before closing
/// (closing with unread bytes sends RST, which can destroy the response).
const LINGER: Duration = Duration::from_secs(2);

/// Serve one accepted connection: over TLS after a handshake, if the
/// server has TLS.
pub(super) async fn connection(stream: TcpStream, shared: Arc<Shared>) {
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let Some(acceptor) = shared.tls.clone() else {
        return serve(stream, shared).await;
    };
    // The handshake's flights, the answer and close_notify are separate
    // small writes: no Nagle delay between them.
    let _ = stream.set_nodelay(true);
    let handshake =
        glommio::timer::timeout(HEAD_DEADLINE, async { Ok(acceptor.accept(stream).await) }).await;
    let Ok(Ok(tls)) = handshake else {
        return;
    };
    let resumed = tls.get_ref().1.handshake_kind() == Some(HandshakeKind::Resumed);
    shared.handshakes[usize::from(resumed)].fetch_add(1, Ordering::SeqCst);
    serve(tls, shared).await
}

async fn serve<S>(mut stream: S, shared: Arc<Shared>)
where
    S: AsyncRead + AsyncWrite + Unpin + AsRawFd,
{
    loop {
        let head =
            glommio::timer::timeout(HEAD_DEADLINE, async { Ok(read_head(&mut stream).await) })
                .await;
        let (reply, unread, keep) = match head {
            Err(_) | Ok(ReadHead::Gone) => return,
            Ok(ReadHead::Bad) => (Reply::html(400, "<h1>Bad Request</h1>\n"), true, false),
            Ok(ReadHead::Ok(Head {
                mut request,
                unread,
                keep_alive,
            })) => {
                if shared.count_paths {
                    let key = format!("{} {}", request.host, request.path);
                    request.attempt = {
                        let mut hits = shared.hits();
                        let count = hits.entry(key).or_insert(0);
                        *count += 1;
                        *count
                    };
                }
                shared.total.fetch_add(1, Ordering::SeqCst);
                let reply = catch_unwind(AssertUnwindSafe(|| (shared.handler)(&request)))
                    .unwrap_or_else(|_| Reply::html(500, "<h1>Handler panicked</h1>\n"));
                (reply, unread, shared.keep_alive && keep_alive && !unread)
            }
        };
        match reply {
            Reply::Http {
                status,
                headers,
                body,
            } => {
                let bytes = if keep {
                    encode_kept(status, &headers, &body)
                } else {
                    encode(status, &headers, &body)
                };
                if write_flushed(&mut stream, &bytes).await.is_err() {
                    return;
                }
                if !keep {
                    return finish(stream, unread).await;
                }
            }
            Reply::Hangup => return,
            Reply::Script(steps) => {
                for step in steps {
                    match step {
                        Step::Write(bytes) => {
                            if write_flushed(&mut stream, &bytes).await.is_err() {
                                return;
                            }
                        }
                        Step::Sleep(d) => glommio::timer::sleep(d).await,
                        Step::Close => break,
                        Step::Cut => return,
                        Step::Reset => {
                            reset(&stream);
                            return;
                        }
                    }
                }
                return finish(stream, unread).await;
            }
        }
    }
}

/// Write all of `bytes` and flush them (over TLS a record could otherwise
/// wait in rustls' buffer, say through a script's sleep).
async fn write_flushed<S: AsyncWrite + Unpin>(stream: &mut S, bytes: &[u8]) -> io::Result<()> {
    stream.write_all(bytes).await?;
    stream.flush().await
}

/// Close after a response (FIN; with TLS `close_notify` first). If the
/// client sent more than we read, drain it for a while first, so the close
/// does not turn into a RST.
async fn finish<S: AsyncRead + AsyncWrite + Unpin>(mut stream: S, unread: bool) {
    let _ = stream.close().await;
    if !unread {
        return;
    }
    let _ = glommio::timer::timeout(LINGER, async {
        let mut sink = [0u8; 4096];
        let mut total = 0usize;
        while total < (1 << 20) {
            match stream.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(n) => total += n,
            }
        }
        Ok(())
    })
    .await;
}

/// Arrange for the close of `stream` to send RST instead of FIN
/// (`SO_LINGER` 0); tests' own raw servers use it too.
pub fn reset(stream: &impl AsRawFd) {
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: plain setsockopt on a socket we own, with a correctly sized value.
    unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
}
