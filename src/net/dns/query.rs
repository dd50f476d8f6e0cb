//! One question to one nameserver: a datagram over UDP, or the same
//! question over TCP after a truncated answer.
//!
//! Not the choice of server, the retries or the meaning of the answer
//! ([`super::lookup`]).

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::{FromRawFd, IntoRawFd};
use std::time::{Duration, Instant};

use futures_lite::{AsyncReadExt, AsyncWriteExt};
use glommio::net::{TcpStream, UdpSocket};

use ringcrawl_dns_wire::{self as wire, QType, Response};

/// Why one query got no usable answer.
pub(super) enum Failure {
    Timeout,
    Other(String),
}

impl Failure {
    fn io(what: &str, e: impl Into<io::Error>) -> Failure {
        let e: io::Error = e.into();
        if e.kind() == io::ErrorKind::TimedOut {
            Failure::Timeout
        } else {
            Failure::Other(format!("{what}: {e}"))
        }
    }
}

/// One query to one server.
pub(super) struct Query<'a> {
    pub(super) server: SocketAddr,
    pub(super) bytes: &'a [u8],
    pub(super) id: u16,
    pub(super) name: &'a str,
    pub(super) qtype: QType,
    pub(super) timeout: Duration,
}

impl Query<'_> {
    /// Over UDP: datagrams that are not the answer (wrong id or question)
    /// are dropped and the wait goes on until `timeout` from the send.
    pub(super) async fn udp(&self) -> Result<Response, Failure> {
        let socket = udp_socket(self.server).map_err(|e| Failure::io("socket", e))?;
        socket
            .send(self.bytes)
            .await
            .map_err(|e| Failure::io("send", e))?;
        let deadline = Instant::now() + self.timeout;
        let mut buf = vec![0u8; 4096];
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Failure::Timeout);
            }
            socket
                .set_read_timeout(Some(left))
                .map_err(|e| Failure::io("socket", e))?;
            let n = socket
                .recv(&mut buf)
                .await
                .map_err(|e| Failure::io("recv", e))?;
            let reply = buf.get(..n).unwrap_or_default();
            match wire::parse_response(reply, self.id, self.name, self.qtype) {
                Ok(r) => return Ok(r),
                Err(e) if e.is_mismatch() => continue,
                Err(e) => return Err(Failure::Other(format!("bad response: {e}"))),
            }
        }
    }

    /// Over TCP (after a truncated UDP answer): two-byte length framing.
    pub(super) async fn tcp(&self) -> Result<Response, Failure> {
        let len = u16::try_from(self.bytes.len())
            .map_err(|_| Failure::Other("query too long".to_string()))?;
        let mut stream = TcpStream::connect_timeout(self.server, self.timeout)
            .await
            .map_err(|e| Failure::io("tcp connect", e))?;
        stream
            .set_read_timeout(Some(self.timeout))
            .and_then(|()| stream.set_write_timeout(Some(self.timeout)))
            .map_err(|e| Failure::io("tcp", e))?;
        let mut framed = Vec::with_capacity(self.bytes.len() + 2);
        framed.extend_from_slice(&len.to_be_bytes());
        framed.extend_from_slice(self.bytes);
        stream
            .write_all(&framed)
            .await
            .map_err(|e| Failure::io("tcp write", e))?;
        let mut head = [0u8; 2];
        stream
            .read_exact(&mut head)
            .await
            .map_err(|e| Failure::io("tcp read", e))?;
        let mut body = vec![0u8; usize::from(u16::from_be_bytes(head))];
        stream
            .read_exact(&mut body)
            .await
            .map_err(|e| Failure::io("tcp read", e))?;
        wire::parse_response(&body, self.id, self.name, self.qtype)
            .map_err(|e| Failure::Other(format!("bad response: {e}")))
    }
}

/// A UDP socket on an ephemeral port, connected to `server`, handed to
/// glommio. Made with std rather than `glommio::net::UdpSocket::bind`,
/// which sets SO_REUSEPORT: with it two sockets bound to port 0 can get the
/// same port and take each other's answers. Binding and connecting a UDP
/// socket send nothing and do not block.
fn udp_socket(server: SocketAddr) -> io::Result<UdpSocket> {
    let local = match server {
        SocketAddr::V4(_) => SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0),
        SocketAddr::V6(_) => SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), 0),
    };
    let socket = std::net::UdpSocket::bind(local)?;
    socket.connect(server)?;
    socket.set_nonblocking(true)?;
    // SAFETY: the descriptor was just taken out of an open socket that no
    // longer owns it, so the glommio socket is its only owner.
    Ok(unsafe { UdpSocket::from_raw_fd(socket.into_raw_fd()) })
}
