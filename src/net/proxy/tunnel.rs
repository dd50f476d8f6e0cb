//! A way to the target through a proxy, opened on a stream already
//! connected to the proxy: an HTTP `CONNECT` (its answer's head read, and
//! nothing after it, so TLS starts on a clean stream) or SOCKS5's
//! greeting, credentials and `CONNECT` (each answer read to its exact
//! length). Afterwards the stream carries the target's bytes.
//!
//! Every read and write ends by the stream's own deadline (the fetch
//! gives a [`crate::net::stream::Timed`] bound by the connect time-out).
//! Not the choice of proxy ([`super::Rotation`]) and not the forward
//! proxy's absolute-form requests (the fetch writes those).

use std::io;

use futures_lite::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use thiserror::Error;

use super::socks::{self, SocksError, Target};
use super::{Proxy, ProxyKind};

/// The most bytes of a `CONNECT` answer's head read.
const MAX_CONNECT_HEAD: usize = 16 * 1024;

/// Why no way through the proxy was opened.
#[derive(Debug, Error)]
#[non_exhaustive]
pub(crate) enum TunnelError {
    /// The proxy could not be connected to.
    #[error("cannot connect to the proxy: {0}")]
    Unreachable(String),
    /// Reading from or writing to the proxy failed (a time-out included).
    #[error("talking to the proxy: {0}")]
    Io(#[from] io::Error),
    /// The proxy closed the connection before it answered.
    #[error("the proxy closed the connection before it answered")]
    Closed,
    /// The proxy answered with something that is no answer.
    #[error("{0}")]
    Protocol(String),
    /// The proxy refused the credentials (or wants some).
    #[error("{0}")]
    Auth(String),
    /// The proxy worked but did not reach the target.
    #[error("{0}")]
    Refused(String),
}

/// Ask `proxy`, on `stream` connected to it, for a way to `target`.
/// `user_agent` goes with an HTTP `CONNECT`.
pub(crate) async fn open<S>(
    stream: &mut S,
    proxy: &Proxy,
    target: Target<'_>,
    user_agent: &str,
) -> Result<(), TunnelError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    match proxy.kind() {
        ProxyKind::Http => http_connect(stream, proxy, target, user_agent).await,
        ProxyKind::Socks5 { .. } => socks5(stream, proxy, target).await,
    }
}

/// `target` as the authority of a `CONNECT` (`[v6]:port`).
fn authority(target: Target<'_>) -> String {
    match target {
        Target::Name(name, port) => format!("{name}:{port}"),
        Target::Addr(addr) => addr.to_string(),
    }
}

async fn http_connect<S>(
    stream: &mut S,
    proxy: &Proxy,
    target: Target<'_>,
    user_agent: &str,
) -> Result<(), TunnelError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let authority = authority(target);
    let clean = |s: &str| s.replace(['\r', '\n', '\0'], "");
    let authority = clean(&authority);
    let mut request = format!(
        "CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: {}\r\n",
        clean(user_agent)
    );
    if let Some(auth) = proxy.authorization() {
        request.push_str("Proxy-Authorization: ");
        request.push_str(auth);
        request.push_str("\r\n");
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).await?;
    stream.flush().await?;

    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(TunnelError::Closed);
        }
        buf.extend_from_slice(chunk.get(..n).unwrap_or(&[]));
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut response = httparse::Response::new(&mut headers);
        match response.parse(&buf) {
            Ok(httparse::Status::Complete(len)) => {
                let status = response.code.unwrap_or(0);
                let reason = response.reason.unwrap_or("").to_string();
                return match status {
                    200..=299 if len == buf.len() => Ok(()),
                    200..=299 => Err(TunnelError::Protocol(
                        "the proxy sent bytes after its CONNECT answer".into(),
                    )),
                    407 => Err(TunnelError::Auth(format!(
                        "the proxy wants credentials or refused them: {status} {reason}"
                    ))),
                    _ => Err(TunnelError::Refused(format!(
                        "the proxy answered CONNECT {authority} with {status} {reason}"
                    ))),
                };
            }
            Ok(httparse::Status::Partial) if buf.len() < MAX_CONNECT_HEAD => {}
            Ok(httparse::Status::Partial) => {
                return Err(TunnelError::Protocol(format!(
                    "the proxy's CONNECT answer has no end within {MAX_CONNECT_HEAD} bytes"
                )))
            }
            Err(e) => {
                return Err(TunnelError::Protocol(format!(
                    "the proxy's CONNECT answer does not parse: {e}"
                )))
            }
        }
    }
}

async fn socks5<S>(stream: &mut S, proxy: &Proxy, target: Target<'_>) -> Result<(), TunnelError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let credentials = proxy.socks_credentials();
    let request = socks::connect(target).map_err(socks_error)?;
    stream
        .write_all(&socks::greeting(credentials.is_some()))
        .await?;
    stream.flush().await?;
    let mut two = [0u8; 2];
    read_exact(stream, &mut two).await?;
    if socks::method_chosen(two, credentials.is_some()).map_err(socks_error)? {
        let (user, password) = credentials.unwrap_or_default();
        stream
            .write_all(&socks::credentials(user, password))
            .await?;
        stream.flush().await?;
        read_exact(stream, &mut two).await?;
        socks::credentials_accepted(two).map_err(socks_error)?;
    }
    stream.write_all(&request).await?;
    stream.flush().await?;
    let mut first = [0u8; 5];
    read_exact(stream, &mut first).await?;
    let rest = socks::reply_rest(first).map_err(socks_error)?;
    let mut bound = vec![0u8; rest];
    read_exact(stream, &mut bound).await
}

/// Fill `buf`; the proxy closing first is [`TunnelError::Closed`].
async fn read_exact<S: AsyncRead + Unpin>(
    stream: &mut S,
    buf: &mut [u8],
) -> Result<(), TunnelError> {
    stream.read_exact(buf).await.map_err(|e| {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            TunnelError::Closed
        } else {
            TunnelError::Io(e)
        }
    })
}

fn socks_error(e: SocksError) -> TunnelError {
    match e {
        SocksError::NoMethod { .. } | SocksError::BadCredentials => {
            TunnelError::Auth(e.to_string())
        }
        SocksError::Protocol(_) => TunnelError::Protocol(e.to_string()),
        // It would not or could not connect (a name too long for it too).
        SocksError::Refused(_) | SocksError::NameTooLong => TunnelError::Refused(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_lite::future::block_on;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    /// A proxy's side of the conversation, scripted: what it answers, in
    /// reads of at most `step` bytes; what the client wrote is kept.
    struct Script {
        answer: Vec<u8>,
        at: usize,
        step: usize,
        written: Vec<u8>,
    }

    impl Script {
        fn new(answer: &[u8], step: usize) -> Self {
            Script {
                answer: answer.to_vec(),
                at: 0,
                step,
                written: Vec::new(),
            }
        }
    }

    impl AsyncRead for Script {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &mut [u8],
        ) -> Poll<io::Result<usize>> {
            let left = self.answer.get(self.at..).unwrap_or(&[]);
            let n = left.len().min(buf.len()).min(self.step);
            buf.get_mut(..n)
                .unwrap()
                .copy_from_slice(left.get(..n).unwrap());
            self.at += n;
            Poll::Ready(Ok(n))
        }
    }

    impl AsyncWrite for Script {
        fn poll_write(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            self.written.extend_from_slice(buf);
            Poll::Ready(Ok(buf.len()))
        }
        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
        fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    fn run(
        proxy: &str,
        answer: &[u8],
        step: usize,
        target: Target<'_>,
    ) -> (Result<(), TunnelError>, Vec<u8>) {
        let proxy = Proxy::parse(proxy).unwrap();
        let mut script = Script::new(answer, step);
        let result = block_on(open(&mut script, &proxy, target, "bot/1"));
        (result, script.written)
    }

    #[test]
    fn an_http_connect_names_the_target_and_reads_its_answer_in_pieces() {
        let (result, written) = run(
            "http://me:pw@p.test:3128",
            b"HTTP/1.1 200 Connection established\r\n\r\n",
            3,
            Target::Name("a.test", 443),
        );
        result.unwrap();
        let written = String::from_utf8(written).unwrap();
        assert!(
            written.starts_with("CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n"),
            "{written}"
        );
        assert!(written.contains("Proxy-Authorization: Basic bWU6cHc=\r\n"));
        assert!(written.ends_with("\r\n\r\n"));
    }

    #[test]
    fn an_http_proxys_refusals_say_whose_fault_they_are() {
        let target = Target::Name("a.test", 443);
        let (r, _) = run(
            "p.test",
            b"HTTP/1.1 407 Proxy Authentication Required\r\n\r\n",
            64,
            target,
        );
        assert!(matches!(r, Err(TunnelError::Auth(_))), "{r:?}");
        let (r, _) = run(
            "p.test",
            b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n",
            64,
            target,
        );
        assert!(matches!(r, Err(TunnelError::Refused(_))), "{r:?}");
        let (r, _) = run("p.test", b"HTTP/1.1 200 OK\r\n\r\nextra", 64, target);
        assert!(matches!(r, Err(TunnelError::Protocol(_))), "{r:?}");
        let (r, _) = run("p.test", b"HTTP/1.1 200", 64, target);
        assert!(matches!(r, Err(TunnelError::Closed)), "{r:?}");
        let (r, _) = run("p.test", b"SSH-2.0-OpenSSH\r\n\r\n", 64, target);
        assert!(matches!(r, Err(TunnelError::Protocol(_))), "{r:?}");
    }

    #[test]
    fn a_socks5_exchange_with_credentials_reads_each_answer_whole() {
        let answer = [
            &[5u8, 2][..],
            &[1, 0],
            &[5, 0, 0, 3, 6],
            b"b.test",
            &[0, 80],
        ]
        .concat();
        let (result, written) = run(
            "socks5h://me:pw@p.test:1080",
            &answer,
            1,
            Target::Name("a.test", 80),
        );
        result.unwrap();
        let expected = [
            &[5u8, 2, 0, 2][..],
            b"\x01\x02me\x02pw",
            b"\x05\x01\x00\x03\x06a.test\x00\x50",
        ]
        .concat();
        assert_eq!(written, expected);
    }

    #[test]
    fn a_socks5_proxy_that_refuses_says_why() {
        let target = Target::Name("a.test", 80);
        let (r, _) = run("socks5h://p.test", &[5, 0xff], 64, target);
        assert!(matches!(r, Err(TunnelError::Auth(_))), "{r:?}");
        let (r, _) = run("socks5h://me:bad@p.test", &[5, 2, 1, 1], 64, target);
        assert!(matches!(r, Err(TunnelError::Auth(_))), "{r:?}");
        let (r, _) = run(
            "socks5h://p.test",
            &[5, 0, 5, 5, 0, 1, 0, 0, 0, 0, 0, 0],
            64,
            target,
        );
        assert!(
            matches!(r, Err(TunnelError::Refused(ref m)) if m.contains("connection refused")),
            "{r:?}"
        );
        let (r, _) = run("socks5h://p.test", &[5, 0, 5, 0], 64, target);
        assert!(matches!(r, Err(TunnelError::Closed)), "{r:?}");
    }
}
