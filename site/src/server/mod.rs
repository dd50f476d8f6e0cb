//! A small scriptable HTTP/1.0 server for tests, the demo and benchmarks,
//! over plain TCP or TLS.
//!
//! One glommio executor thread (or several, see [`Server::start_many`])
//! accepts connections and runs one detached task per connection: with TLS
//! the handshake first (rustls through futures-rustls, within 10 s; full
//! and resumed handshakes are counted, [`Server::handshakes`]), then read
//! the request head (at most 16 KiB, within 10 s), count it, ask the
//! [`Handler`] for a [`Reply`], write the reply, close (with TLS
//! `close_notify` first, unless a script cuts the connection). Request
//! bodies are ignored. By default there is no keep-alive and every request
//! is counted per host and path ([`Server::hits`]); [`Options`] turns on
//! keep-alive (an [`Reply::Http`] answer to a client that asks for it is
//! `HTTP/1.1` and the connection waits, up to 10 s, for the next request)
//! and can turn off the per-path count, whose map grows with every URL
//! (the endless site counts its own requests more compactly).
//!
//! The listening sockets are made with std (so `start` reports bind errors
//! and returns only once the sockets listen) with a large backlog, then
//! handed to glommio: every executor accepts on a duplicate of every
//! listening socket, so the kernel spreads connections over the executors.
//! The sockets are non-blocking for good (the duplicates share their flags,
//! and glommio's accept flips `O_NONBLOCK` around a first try: on a
//! blocking socket two executors racing there could leave one blocked in
//! `accept(2)`).
//! [`Server::stop`] (and `Drop`) sets a flag and `shutdown(2)`s the listening
//! sockets, which makes the pending accepts fail; the accept loops see the
//! flag, each executor cancels every connection task still running (say, in
//! a long [`Step::Sleep`]), which closes its socket, and returns; the
//! executor threads end and `stop` joins them.
//!
//! What this is not: a general web server (no request bodies, no files from
//! disk), nor a site: what to answer is the [`Handler`]'s business.
//!
//! Files: `mod.rs` the [`Server`] handle (binding, starting, counts, stopping)
//! and its [`Options`]; `executor.rs` the executor threads, their accept
//! loops and the cancelling of connection tasks; `connection.rs` one
//! connection (TLS handshake, request after request, writing, closing);
//! `request.rs` reading and parsing a request head; `reply.rs` the [`Reply`]
//! and the bytes of a response; `tests.rs`.

use std::collections::HashMap;
use std::io;
use std::net::{SocketAddr, TcpListener as StdListener};
use std::os::unix::io::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use futures_rustls::TlsAcceptor;
use glommio::ExecutorJoinHandle;
use rustls::ServerConfig;

mod connection;
mod executor;
mod reply;
mod request;

#[cfg(test)]
mod tests;

pub use connection::{reset, HEAD_DEADLINE};
pub use reply::{Reply, Step};
pub(crate) use request::strip_port;
pub use request::{Request, MAX_HEAD};

/// Requested listen backlog (the kernel caps it at `net.core.somaxconn`).
const BACKLOG: libc::c_int = 65_535;

/// How a [`Server`] serves, besides its handler and TLS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Executor threads, all accepting on the listening socket(s).
    pub threads: usize,
    /// Keep a connection open after an [`Reply::Http`] answer when the
    /// client asks for it (HTTP/1.1 without `Connection: close`, or
    /// `Connection: keep-alive`) and sent nothing past its request head.
    pub keep_alive: bool,
    /// Count requests per host and path ([`Server::hits`],
    /// [`Request::attempt`]); off, `attempt` is 0 and only the total is
    /// counted.
    pub count_paths: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            threads: 1,
            keep_alive: false,
            count_paths: true,
        }
    }
}

/// Answers requests. Runs on the server thread: keep it fast; a panic in it
/// is caught and answered with a 500.
pub type Handler = Arc<dyn Fn(&Request) -> Reply + Send + Sync>;

struct Shared {
    handler: Handler,
    tls: Option<TlsAcceptor>,
    keep_alive: bool,
    count_paths: bool,
    /// TLS handshakes completed: full, resumed.
    handshakes: [AtomicUsize; 2],
    stopping: AtomicBool,
    hits: Mutex<HashMap<String, usize>>,
    total: AtomicUsize,
    /// Connections accepted and not yet closed, over all executors.
    open: AtomicUsize,
}

impl Shared {
    fn hits(&self) -> MutexGuard<'_, HashMap<String, usize>> {
        self.hits
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A running server. Stops on [`Server::stop`] or when dropped.
pub struct Server {
    addrs: Vec<SocketAddr>,
    /// Owns the listening sockets (the executors have duplicates), so the
    /// fds stay valid for `shutdown` until the threads have ended.
    listeners: Vec<StdListener>,
    shared: Arc<Shared>,
    threads: Vec<ExecutorJoinHandle<()>>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("addrs", &self.addrs)
            .field("total_hits", &self.total_hits())
            .finish()
    }
}

impl Server {
    /// Bind `127.0.0.1:0`, start the executor thread, return once listening.
    pub fn start(handler: Handler) -> io::Result<Server> {
        Server::start_on(SocketAddr::from(([127, 0, 0, 1], 0)), handler)
    }

    /// Bind `addr`, start the executor thread, return once listening.
    pub fn start_on(addr: SocketAddr, handler: Handler) -> io::Result<Server> {
        Server::start_many(&[addr], 1, handler)
    }

    /// Bind every address in `addrs` (at least one), start `threads`
    /// executor threads (at least one) that all accept on all of them, and
    /// return once listening. More threads let the server use more cores.
    pub fn start_many(
        addrs: &[SocketAddr],
        threads: usize,
        handler: Handler,
    ) -> io::Result<Server> {
        Server::start_many_with(addrs, threads, handler, None)
    }

    /// Bind `127.0.0.1:0` and serve over TLS with `tls`.
    pub fn start_tls(handler: Handler, tls: Arc<ServerConfig>) -> io::Result<Server> {
        Server::start_many_with(
            &[SocketAddr::from(([127, 0, 0, 1], 0))],
            1,
            handler,
            Some(tls),
        )
    }

    /// [`Server::start_many`], over TLS if `tls` is given.
    pub fn start_many_with(
        addrs: &[SocketAddr],
        threads: usize,
        handler: Handler,
        tls: Option<Arc<ServerConfig>>,
    ) -> io::Result<Server> {
        let options = Options {
            threads,
            ..Options::default()
        };
        Server::start_with(addrs, handler, tls, options)
    }

    /// Bind every address in `addrs` (at least one) and serve `handler`
    /// (over TLS if `tls` is given) as `options` say; return once listening.
    pub fn start_with(
        addrs: &[SocketAddr],
        handler: Handler,
        tls: Option<Arc<ServerConfig>>,
        options: Options,
    ) -> io::Result<Server> {
        if addrs.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "no address to listen on",
            ));
        }
        let mut listeners = Vec::with_capacity(addrs.len());
        let mut bound = Vec::with_capacity(addrs.len());
        for &addr in addrs {
            // std sets SO_REUSEADDR (not SO_REUSEPORT, unlike glommio's bind,
            // so a second server on a taken port fails instead of sharing it).
            let listener = StdListener::bind(addr)?;
            // Raise the backlog from std's 128; listen(2) again just updates it.
            if unsafe { libc::listen(listener.as_raw_fd(), BACKLOG) } != 0 {
                return Err(io::Error::last_os_error());
            }
            // Non-blocking for good: every executor accepts on a duplicate
            // of this socket, and duplicates share one open file
            // description, flags included. glommio's accept first tries a
            // non-blocking accept by setting O_NONBLOCK, accepting, and
            // restoring the old flags: with a blocking socket, one
            // executor's restore could land between another's set and its
            // accept, which then blocked that executor's thread in accept(2)
            // with its connections unserved (seen: a client of
            // `several_threads_and_addresses` waited out its 20 s). With the
            // flag always set, the restore keeps it; io_uring's accept still
            // waits for a connection (it polls; it does not return EAGAIN).
            listener.set_nonblocking(true)?;
            bound.push(listener.local_addr()?);
            listeners.push(listener);
        }
        let shared = Arc::new(Shared {
            handler,
            tls: tls.map(TlsAcceptor::from),
            keep_alive: options.keep_alive,
            count_paths: options.count_paths,
            handshakes: [AtomicUsize::new(0), AtomicUsize::new(0)],
            stopping: AtomicBool::new(false),
            hits: Mutex::new(HashMap::new()),
            total: AtomicUsize::new(0),
            open: AtomicUsize::new(0),
        });
        let mut server = Server {
            addrs: bound,
            listeners,
            shared,
            threads: Vec::new(),
        };
        for n in 0..options.threads.max(1) {
            // On error, dropping `server` stops the executors already started.
            let thread = server.spawn_executor(n)?;
            server.threads.push(thread);
        }
        Ok(server)
    }

    /// The (first) address listened on.
    pub fn addr(&self) -> SocketAddr {
        self.addrs[0]
    }

    /// Every address listened on.
    pub fn addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    pub fn port(&self) -> u16 {
        self.addr().port()
    }

    /// Connections accepted and not yet closed.
    pub fn open_connections(&self) -> usize {
        self.shared.open.load(Ordering::SeqCst)
    }

    /// Requests seen so far for `host` (without port; case-insensitive) and
    /// `path` (as sent).
    pub fn hits(&self, host: &str, path: &str) -> usize {
        let key = format!("{} {}", host.to_ascii_lowercase(), path);
        self.shared.hits().get(&key).copied().unwrap_or(0)
    }

    /// All requests seen so far, keyed `"host path"`.
    pub fn hit_counts(&self) -> HashMap<String, usize> {
        self.shared.hits().clone()
    }

    /// TLS handshakes completed so far: (full, resumed).
    pub fn handshakes(&self) -> (usize, usize) {
        let [full, resumed] = &self.shared.handshakes;
        (full.load(Ordering::SeqCst), resumed.load(Ordering::SeqCst))
    }

    /// Well-formed requests seen so far (malformed ones are not counted).
    pub fn total_hits(&self) -> usize {
        self.shared.total.load(Ordering::SeqCst)
    }

    /// Stop accepting and end the thread; connections still being served
    /// are closed. Also done on drop.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        // Makes the pending (and every later) accept fail at once.
        for listener in &self.listeners {
            unsafe {
                libc::shutdown(listener.as_raw_fd(), libc::SHUT_RDWR);
            }
        }
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown();
    }
}
