//! TCP connect to a host's addresses with Happy Eyeballs (RFC 8305): the
//! first address is tried at once, each next one [`ATTEMPT_DELAY`] later
//! or as soon as the attempts before it have all failed, the first to
//! connect wins and the others are dropped (closing their sockets). The
//! addresses come ordered by the resolver (IPv6 first, families
//! alternating), so a host whose IPv6 is black-holed is reached over IPv4
//! after the delay, not after the whole connect timeout.
//!
//! Not name resolution (`dns`) and not TLS: the caller gets a connected
//! glommio `TcpStream` and the address it reached.
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use glommio::net::TcpStream;
use glommio::timer::Timer;

/// Wait between the start of one attempt and the next (RFC 8305 §5
/// recommends 250 ms).
pub(crate) const ATTEMPT_DELAY: Duration = Duration::from_millis(250);

/// Why no address could be connected to.
#[derive(Debug)]
pub(crate) enum ConnectError {
    /// `limit` passed before any attempt succeeded.
    Timeout,
    /// Every attempt failed; the last one's error.
    Failed(io::Error),
}

type Attempt = Pin<Box<dyn Future<Output = (SocketAddr, io::Result<TcpStream>)>>>;

/// Connect to one of `addrs` (tried in order) within `limit`: the stream
/// and the address it reached.
pub(crate) async fn connect(
    addrs: impl IntoIterator<Item = SocketAddr>,
    limit: Duration,
) -> Result<(TcpStream, SocketAddr), ConnectError> {
    let deadline = Instant::now() + limit;
    let mut pending = addrs.into_iter().peekable();
    let Some(first) = pending.next() else {
        return Err(ConnectError::Failed(io::Error::new(
            io::ErrorKind::AddrNotAvailable,
            "no address to connect to",
        )));
    };
    // The common case, one address, needs no race (and no allocation).
    if pending.peek().is_none() {
        let (addr, result) = attempt(first, deadline).await;
        return result.map(|s| (s, addr)).map_err(io_to);
    }
    let mut race = Race {
        pending,
        running: vec![Box::pin(attempt(first, deadline))],
        next_start: Some(Timer::new(ATTEMPT_DELAY)),
        deadline: Timer::new(limit),
        last_error: None,
        end: deadline,
    };
    std::future::poll_fn(|cx| race.poll(cx)).await
}

/// One connect attempt; says which address it was for.
async fn attempt(addr: SocketAddr, deadline: Instant) -> (SocketAddr, io::Result<TcpStream>) {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return (addr, Err(io::ErrorKind::TimedOut.into()));
    }
    let result = TcpStream::connect_timeout(addr, left)
        .await
        .map_err(io::Error::from);
    (addr, result)
}

fn io_to(e: io::Error) -> ConnectError {
    if e.kind() == io::ErrorKind::TimedOut {
        ConnectError::Timeout
    } else {
        ConnectError::Failed(e)
    }
}

/// The attempts of one connect: started ones, addresses not yet tried, the
/// timer for the next start and the overall deadline.
struct Race<I: Iterator<Item = SocketAddr>> {
    pending: std::iter::Peekable<I>,
    running: Vec<Attempt>,
    /// When the next address is tried if nothing happens first.
    next_start: Option<Timer>,
    deadline: Timer,
    last_error: Option<io::Error>,
    end: Instant,
}

impl<I: Iterator<Item = SocketAddr>> Race<I> {
    fn start_next(&mut self) -> bool {
        match self.pending.next() {
            Some(addr) => {
                self.running.push(Box::pin(attempt(addr, self.end)));
                self.next_start = Some(Timer::new(ATTEMPT_DELAY));
                true
            }
            None => {
                self.next_start = None;
                false
            }
        }
    }

    fn poll(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(TcpStream, SocketAddr), ConnectError>> {
        loop {
            let mut i = 0;
            while let Some(running) = self.running.get_mut(i) {
                match running.as_mut().poll(cx) {
                    Poll::Ready((addr, Ok(stream))) => return Poll::Ready(Ok((stream, addr))),
                    Poll::Ready((_, Err(e))) => {
                        self.last_error = Some(e);
                        drop(self.running.swap_remove(i));
                    }
                    Poll::Pending => i += 1,
                }
            }
            // Every attempt so far failed: the next address goes now.
            if self.running.is_empty() {
                if self.start_next() {
                    continue;
                }
                return Poll::Ready(Err(self.failure()));
            }
            let due = self
                .next_start
                .as_mut()
                .is_some_and(|timer| Pin::new(timer).poll(cx).is_ready());
            if due && self.start_next() {
                continue;
            }
            if Pin::new(&mut self.deadline).poll(cx).is_ready() {
                return Poll::Ready(Err(ConnectError::Timeout));
            }
            return Poll::Pending;
        }
    }

    fn failure(&mut self) -> ConnectError {
        match self.last_error.take() {
            Some(e) => io_to(e),
            None => ConnectError::Failed(io::Error::new(
                io::ErrorKind::AddrNotAvailable,
                "no address to connect to",
            )),
        }
    }
}
