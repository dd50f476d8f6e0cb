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

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::{SocketAddr, TcpListener as StdListener};
use std::os::unix::io::{AsRawFd, FromRawFd, IntoRawFd};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use futures_lite::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use futures_rustls::TlsAcceptor;
use glommio::net::{TcpListener, TcpStream};
use glommio::{ExecutorJoinHandle, LocalExecutorBuilder, Placement};
use rustls::{HandshakeKind, ServerConfig};

/// Largest request head accepted; longer ones get a 400.
pub const MAX_HEAD: usize = 16 * 1024;
/// Time a client has to send its whole request head.
pub const HEAD_DEADLINE: Duration = Duration::from_secs(10);
/// A single write that makes no progress for this long ends the connection.
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);
/// After a response, how long to drain unread request bytes before closing
/// (closing with unread bytes sends RST, which can destroy the response).
const LINGER: Duration = Duration::from_secs(2);
/// Requested listen backlog (the kernel caps it at `net.core.somaxconn`).
const BACKLOG: libc::c_int = 65_535;
/// Memory glommio registers with io_uring (counted against RLIMIT_MEMLOCK).
const IO_MEMORY: usize = 1 << 20;
/// Accepts in a row before the accept loop lets connection tasks run.
const ACCEPT_BURST: usize = 32;

/// One request, as the handler sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// `Host` header without the port, lower-cased; `""` if absent.
    pub host: String,
    /// `Host` header as sent (port kept), lower-cased; `""` if absent.
    /// Handlers that write absolute links to themselves use this.
    pub authority: String,
    /// Request target as sent, e.g. `/a?b=1`.
    pub path: String,
    /// 1 for the first request of this host+path, 2 for the second, ...
    pub attempt: usize,
    /// Every header as sent, names lower-cased, values trimmed (lossy
    /// UTF-8), in order.
    pub headers: Vec<(String, String)>,
}

impl Request {
    /// The first value of header `name` (lower-case), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One step of a fault-injection [`Reply::Script`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Write these bytes (all of them).
    Write(Vec<u8>),
    /// Wait, keeping the connection open.
    Sleep(Duration),
    /// Close normally (FIN; with TLS `close_notify` first) now, skipping
    /// the remaining steps.
    Close,
    /// Close the TCP connection now without TLS `close_notify` (a truncation
    /// for a TLS client; as [`Step::Close`] without TLS), skipping the
    /// remaining steps.
    Cut,
    /// Close with RST (`SO_LINGER` 0) now, skipping the remaining steps.
    Reset,
}

/// What the server does with a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// A complete response: `HTTP/1.0 {status} {reason}`, the headers, a
    /// `Content-Length` (unless a `Content-Length` or `Transfer-Encoding`
    /// header is given), a blank line, the body; then close. Headers are
    /// written verbatim (no validation), so they can be used to send broken
    /// responses on purpose.
    Http {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// Close the connection without writing anything (a network error for
    /// the client).
    Hangup,
    /// Fault injection: perform the steps in order, then close.
    Script(Vec<Step>),
}

impl Reply {
    /// The same reply after a pause: a [`Reply::Script`] that sleeps for
    /// `delay` (without holding up the server) and then does what `self`
    /// does.
    pub fn delayed(self, delay: Duration) -> Reply {
        let mut steps = vec![Step::Sleep(delay)];
        match self {
            Reply::Http {
                status,
                headers,
                body,
            } => steps.push(Step::Write(encode(status, &headers, &body))),
            Reply::Hangup => steps.push(Step::Close),
            Reply::Script(more) => steps.extend(more),
        }
        Reply::Script(steps)
    }

    /// A response with a `Content-Type` and a body.
    pub fn with_type(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Reply {
        Reply::Http {
            status,
            headers: vec![("Content-Type".to_string(), content_type.to_string())],
            body: body.into(),
        }
    }

    /// A `text/html; charset=utf-8` response.
    pub fn html(status: u16, body: impl Into<Vec<u8>>) -> Reply {
        Reply::with_type(status, "text/html; charset=utf-8", body)
    }

    /// A redirect to `location` (written verbatim) with a small HTML body.
    pub fn redirect(status: u16, location: &str) -> Reply {
        let body = format!(
            "<!DOCTYPE html>\n<html><head><title>Moved</title></head>\n\
             <body><p>Moved to <a href=\"{location}\">{location}</a>.</p></body></html>\n"
        );
        Reply::Http {
            status,
            headers: vec![
                ("Location".to_string(), location.to_string()),
                (
                    "Content-Type".to_string(),
                    "text/html; charset=utf-8".to_string(),
                ),
            ],
            body: body.into_bytes(),
        }
    }

    /// A 404 with a small HTML body (no links).
    pub fn not_found() -> Reply {
        Reply::html(
            404,
            "<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head>\n\
             <body><h1>Not Found</h1><p>No such page.</p></body></html>\n",
        )
    }
}

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

    /// Start one executor accepting on duplicates of all listeners; return
    /// once it runs.
    fn spawn_executor(&self, n: usize) -> io::Result<ExecutorJoinHandle<()>> {
        let for_executor = self
            .listeners
            .iter()
            .map(StdListener::try_clone)
            .collect::<io::Result<Vec<_>>>()?;
        let (ready_tx, ready_rx) = mpsc::channel::<()>();
        let shared = self.shared.clone();
        let name = if n == 0 {
            "site".to_string()
        } else {
            format!("site-{n}")
        };
        let thread = LocalExecutorBuilder::new(Placement::Unbound)
            .io_memory(IO_MEMORY)
            .name(&name)
            .spawn(move || async move {
                let conns = Rc::new(Connections::default());
                let loops: Vec<_> = for_executor
                    .into_iter()
                    .map(|l| {
                        // SAFETY: the fd is a listening TCP socket we own (a dup).
                        let listener = unsafe { TcpListener::from_raw_fd(l.into_raw_fd()) };
                        glommio::spawn_local(accept_loop(listener, shared.clone(), conns.clone()))
                    })
                    .collect();
                let _ = ready_tx.send(());
                for accept in loops {
                    accept.await;
                }
                // Executor teardown does not drop detached tasks (their
                // sockets would stay open), so cancel every connection and
                // wait until they are gone.
                conns.stop();
                for _ in 0..1000 {
                    if conns.live.get() == 0 {
                        break;
                    }
                    glommio::timer::sleep(Duration::from_millis(1)).await;
                }
            })
            .map_err(io::Error::from)?;
        if ready_rx.recv().is_err() {
            // The executor could not start (e.g. io_uring setup failed).
            return Err(match thread.join() {
                Err(e) => io::Error::other(format!("site server executor failed: {e}")),
                Ok(()) => io::Error::other("site server executor exited early"),
            });
        }
        Ok(thread)
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

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>, conns: Rc<Connections>) {
    let mut burst = 0;
    loop {
        let accepted = listener.accept().await;
        if shared.stopping.load(Ordering::SeqCst) {
            break;
        }
        match accepted {
            Ok(stream) => {
                let conns2 = conns.clone();
                conns.live.set(conns.live.get() + 1);
                shared.open.fetch_add(1, Ordering::SeqCst);
                let shared = shared.clone();
                glommio::spawn_local(async move {
                    let open = shared.clone();
                    futures_lite::future::or(connection(stream, shared), conns2.stopped()).await;
                    conns2.live.set(conns2.live.get() - 1);
                    open.open.fetch_sub(1, Ordering::SeqCst);
                })
                .detach();
                burst += 1;
                if burst >= ACCEPT_BURST {
                    // accept() returns at once while the backlog is non-empty;
                    // let the connection tasks run now and then.
                    burst = 0;
                    futures_lite::future::yield_now().await;
                }
            }
            Err(_) => {
                // EMFILE and the like: back off instead of spinning.
                burst = 0;
                glommio::timer::sleep(Duration::from_millis(5)).await;
            }
        }
    }
}

/// The live connection tasks of one server, and a signal that ends them.
#[derive(Default)]
struct Connections {
    live: Cell<usize>,
    stopping: Cell<bool>,
    next_id: Cell<u64>,
    wakers: RefCell<HashMap<u64, Waker>>,
}

impl Connections {
    /// Resolves once [`Connections::stop`] is called.
    fn stopped(self: &Rc<Self>) -> Stopped {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        Stopped {
            conns: self.clone(),
            id,
        }
    }

    fn stop(&self) {
        self.stopping.set(true);
        let wakers: Vec<Waker> = self.wakers.borrow_mut().drain().map(|(_, w)| w).collect();
        wakers.into_iter().for_each(Waker::wake);
    }
}

struct Stopped {
    conns: Rc<Connections>,
    id: u64,
}

impl Future for Stopped {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.conns.stopping.get() {
            return Poll::Ready(());
        }
        let mut wakers = self.conns.wakers.borrow_mut();
        match wakers.get_mut(&self.id) {
            Some(w) if w.will_wake(cx.waker()) => {}
            Some(w) => w.clone_from(cx.waker()),
            None => {
                wakers.insert(self.id, cx.waker().clone());
            }
        }
        Poll::Pending
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        self.conns.wakers.borrow_mut().remove(&self.id);
    }
}

struct Head {
    request: Request,
    /// The client sent (or announced) bytes we did not read.
    unread: bool,
    /// The client asked to keep the connection: HTTP/1.1 without
    /// `Connection: close`, or a `keep-alive` token.
    keep_alive: bool,
}

enum ReadHead {
    Ok(Head),
    Bad,
    Gone,
}

/// Serve one accepted connection: over TLS after a handshake, if the
/// server has TLS.
async fn connection(stream: TcpStream, shared: Arc<Shared>) {
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

async fn read_head(stream: &mut (impl AsyncRead + Unpin)) -> ReadHead {
    let mut buf = vec![0u8; 2048];
    let mut filled = 0;
    loop {
        if filled == buf.len() {
            if buf.len() >= MAX_HEAD {
                return ReadHead::Bad;
            }
            buf.resize((buf.len() * 2).min(MAX_HEAD), 0);
        }
        match stream.read(&mut buf[filled..]).await {
            Ok(0) | Err(_) => return ReadHead::Gone,
            Ok(n) => filled += n,
        }
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut req = httparse::Request::new(&mut headers);
        match req.parse(&buf[..filled]) {
            Ok(httparse::Status::Partial) => continue,
            Err(_) => return ReadHead::Bad,
            Ok(httparse::Status::Complete(len)) => {
                return match parse_head(&req, filled > len) {
                    Some(head) => ReadHead::Ok(head),
                    None => ReadHead::Bad,
                }
            }
        }
    }
}

fn parse_head(req: &httparse::Request<'_, '_>, extra_bytes: bool) -> Option<Head> {
    let path = req.path?.to_string();
    let mut authority = String::new();
    let mut unread = extra_bytes;
    let (mut close, mut keep) = (false, false);
    for h in req.headers.iter() {
        if h.name.eq_ignore_ascii_case("connection") {
            for token in h.value.split(|&b| b == b',') {
                close |= token.trim_ascii().eq_ignore_ascii_case(b"close");
                keep |= token.trim_ascii().eq_ignore_ascii_case(b"keep-alive");
            }
        } else if h.name.eq_ignore_ascii_case("host") {
            authority = std::str::from_utf8(h.value)
                .ok()?
                .trim()
                .to_ascii_lowercase();
        } else if h.name.eq_ignore_ascii_case("transfer-encoding")
            || (h.name.eq_ignore_ascii_case("content-length") && h.value.trim_ascii() != b"0")
        {
            unread = true;
        }
    }
    Some(Head {
        request: Request {
            host: strip_port(&authority).to_string(),
            authority,
            path,
            attempt: 0,
            headers: req
                .headers
                .iter()
                .map(|h| {
                    (
                        h.name.to_ascii_lowercase(),
                        String::from_utf8_lossy(h.value.trim_ascii()).into_owned(),
                    )
                })
                .collect(),
        },
        unread,
        keep_alive: !close && (keep || req.version == Some(1)),
    })
}

/// `example.com:80` -> `example.com`, `[::1]:80` -> `[::1]`.
fn strip_port(authority: &str) -> &str {
    if authority.starts_with('[') {
        return match authority.find(']') {
            Some(end) => &authority[..=end],
            None => authority,
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => authority,
    }
}

fn encode(status: u16, headers: &[(String, String)], body: &[u8]) -> Vec<u8> {
    encode_as("HTTP/1.0", status, headers, body)
}

/// A response on a connection that stays open: HTTP/1.1 and
/// `Connection: keep-alive` (for an HTTP/1.0 client that asked for it).
fn encode_kept(status: u16, headers: &[(String, String)], body: &[u8]) -> Vec<u8> {
    let mut kept = Vec::with_capacity(headers.len() + 1);
    kept.extend_from_slice(headers);
    kept.push(("Connection".to_string(), "keep-alive".to_string()));
    encode_as("HTTP/1.1", status, &kept, body)
}

fn encode_as(version: &str, status: u16, headers: &[(String, String)], body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(128 + body.len() + headers.len() * 48);
    out.extend_from_slice(format!("{version} {status} {}\r\n", reason(status)).as_bytes());
    let mut framed = false;
    for (name, value) in headers {
        framed |= name.eq_ignore_ascii_case("content-length")
            || name.eq_ignore_ascii_case("transfer-encoding");
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if !framed {
        out.extend_from_slice(format!("Content-Length: {}\r\n", body.len()).as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    out
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        206 => "Partial Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        410 => "Gone",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::{SiteSpec, SynthSite};
    use std::io::{Read, Write};
    use std::net::TcpStream as StdStream;
    use std::time::Instant;

    /// Sends `request` and reads until EOF (or error); returns the bytes and
    /// whether the read ended in an error (e.g. a reset).
    fn exchange(addr: SocketAddr, request: &[u8]) -> (Vec<u8>, bool) {
        let mut s = StdStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s.write_all(request).unwrap();
        let mut out = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            match s.read(&mut buf) {
                Ok(0) => return (out, false),
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(_) => return (out, true),
            }
        }
    }

    fn get(addr: SocketAddr, path: &str, host: &str) -> (Vec<u8>, bool) {
        let req = format!("GET {path} HTTP/1.0\r\nHost: {host}\r\nUser-Agent: test\r\n\r\n");
        exchange(addr, req.as_bytes())
    }

    fn split(resp: &[u8]) -> (String, Vec<u8>) {
        let end = resp.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        (
            String::from_utf8(resp[..end].to_vec()).unwrap(),
            resp[end + 4..].to_vec(),
        )
    }

    fn scripted() -> Handler {
        Arc::new(|req: &Request| match req.path.as_str() {
            "/hangup" => Reply::Hangup,
            "/slow" => Reply::Script(vec![
                Step::Sleep(Duration::from_millis(100)),
                Step::Write(b"HTTP/1.0 200 OK\r\n\r\npartial".to_vec()),
                Step::Sleep(Duration::from_millis(50)),
                Step::Write(b" body".to_vec()),
            ]),
            "/forever" => Reply::Script(vec![
                Step::Write(b"HTTP/1.0 200 OK\r\n".to_vec()),
                Step::Sleep(Duration::from_secs(3600)),
            ]),
            "/reset" => Reply::Script(vec![
                Step::Write(b"HTTP/1.0 200 OK\r\n".to_vec()),
                Step::Sleep(Duration::from_millis(20)),
                Step::Reset,
            ]),
            "/attempt" => Reply::html(200, format!("{} {}", req.host, req.attempt)),
            "/panic" => panic!("handler panic (expected by a test)"),
            _ => Reply::not_found(),
        })
    }

    #[test]
    fn serves_the_synthetic_site() {
        let site = Arc::new(SynthSite::new(SiteSpec::default()));
        let server = Server::start(site.clone().handler()).unwrap();
        let authority = format!("127.0.0.1:{}", server.port());
        let (resp, err) = get(server.addr(), "/", &authority);
        assert!(!err);
        let (head, body) = split(&resp);
        assert!(head.starts_with("HTTP/1.0 200 OK\r\n"), "{head}");
        assert!(head.contains(&format!("Content-Length: {}", body.len())));
        assert!(head.contains("Content-Type: text/html"));
        let expected = site.page_html(0, &authority).unwrap();
        assert_eq!(String::from_utf8(body).unwrap(), expected);
        assert!(expected.starts_with("<!DOCTYPE html>"));

        let (resp, _) = get(server.addr(), "/r/0", "127.0.0.1");
        let (head, _) = split(&resp);
        assert!(head.starts_with("HTTP/1.0 301 Moved Permanently\r\n"));
        assert!(head.contains("\r\nLocation: /p/1.html"));
        let (resp, _) = get(server.addr(), "/missing/0.html", "127.0.0.1");
        assert!(resp.starts_with(b"HTTP/1.0 404 Not Found\r\n"));

        assert_eq!(server.hits("127.0.0.1", "/"), 1);
        assert_eq!(server.hits("127.0.0.1", "/r/0"), 1);
        assert_eq!(server.total_hits(), 3);
        server.stop();
    }

    #[test]
    fn hangup_script_attempts_and_errors() {
        let server = Server::start(scripted()).unwrap();
        let addr = server.addr();

        let (resp, err) = get(addr, "/hangup", "a.test");
        assert!(resp.is_empty() && !err, "{resp:?} {err}");

        let start = Instant::now();
        let (resp, err) = get(addr, "/slow", "a.test");
        assert!(!err);
        assert_eq!(resp, b"HTTP/1.0 200 OK\r\n\r\npartial body");
        assert!(start.elapsed() >= Duration::from_millis(150));

        let (resp, err) = get(addr, "/reset", "a.test");
        assert!(err, "expected a reset, got {resp:?}");

        for n in 1..=3 {
            let (resp, _) = get(addr, "/attempt", "B.Test:8080");
            let (_, body) = split(&resp);
            assert_eq!(body, format!("b.test {n}").as_bytes());
        }
        assert_eq!(server.hits("b.test", "/attempt"), 3);
        assert_eq!(server.hits("B.TEST", "/attempt"), 3);
        assert_eq!(server.hits("a.test", "/hangup"), 1);

        // No Host header: host "".
        let (resp, _) = exchange(addr, b"GET /attempt HTTP/1.0\r\n\r\n");
        assert!(
            resp.ends_with(b"\r\n\r\n 1"),
            "{:?}",
            String::from_utf8_lossy(&resp)
        );

        // Malformed request and oversized head: 400, not counted.
        let total = server.total_hits();
        let (resp, _) = exchange(addr, b"GET\x01 / HTTP/1.0\r\n\r\n");
        assert!(resp.starts_with(b"HTTP/1.0 400 "));
        let big = format!("GET / HTTP/1.0\r\nX: {}\r\n\r\n", "x".repeat(20_000));
        let (resp, _) = exchange(addr, big.as_bytes());
        assert!(resp.starts_with(b"HTTP/1.0 400 "));
        assert_eq!(server.total_hits(), total);

        // A panicking handler gives a 500 and the server keeps going.
        let (resp, _) = get(addr, "/panic", "a.test");
        assert!(resp.starts_with(b"HTTP/1.0 500 "));
        let (resp, _) = get(addr, "/nothing", "a.test");
        assert!(resp.starts_with(b"HTTP/1.0 404 "));

        // A request with a body: the response still arrives intact.
        let (resp, err) = exchange(
            addr,
            b"POST /attempt HTTP/1.0\r\nHost: c.test\r\nContent-Length: 5\r\n\r\nhello",
        );
        assert!(!err && resp.ends_with(b"c.test 1"));
        server.stop();
    }

    #[test]
    fn stop_is_prompt_with_a_sleeping_connection() {
        let server = Server::start(scripted()).unwrap();
        let addr = server.addr();
        let mut client = StdStream::connect(addr).unwrap();
        client
            .write_all(b"GET /forever HTTP/1.0\r\nHost: x\r\n\r\n")
            .unwrap();
        client
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut buf = [0u8; 64];
        let n = client.read(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"HTTP/1.0 200 OK\r\n");
        let start = Instant::now();
        server.stop();
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );
        // The sleeping connection was closed (not leaked), and nothing
        // listens any more.
        let n = client.read(&mut buf);
        assert!(matches!(n, Ok(0)), "{n:?}");
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );
        assert!(StdStream::connect(addr).is_err());
    }

    #[test]
    fn drop_stops_and_port_is_reusable() {
        let server = Server::start(scripted()).unwrap();
        let addr = server.addr();
        // A second server on the same port must fail, not share it.
        assert!(Server::start_on(addr, scripted()).is_err());
        drop(server);
        let again = Server::start_on(addr, scripted()).unwrap();
        let (resp, _) = get(addr, "/attempt", "z");
        assert!(resp.ends_with(b"z 1"));
        drop(again);
    }

    #[test]
    fn many_concurrent_connections() {
        let site = Arc::new(SynthSite::new(SiteSpec {
            pages: 100,
            ..SiteSpec::default()
        }));
        let server = Server::start(site.handler()).unwrap();
        let addr = server.addr();
        // Open many connections before sending anything, then use them all.
        let mut conns: Vec<StdStream> = (0..256)
            .map(|_| StdStream::connect(addr).unwrap())
            .collect();
        for (i, c) in conns.iter_mut().enumerate() {
            let req = format!("GET /p/{}.html HTTP/1.0\r\nHost: h\r\n\r\n", i % 99 + 1);
            c.write_all(req.as_bytes()).unwrap();
        }
        for c in &mut conns {
            c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
            let mut out = Vec::new();
            c.read_to_end(&mut out).unwrap();
            assert!(out.starts_with(b"HTTP/1.0 200 OK\r\n"));
        }
        assert_eq!(server.total_hits(), 256);
    }

    #[test]
    fn delayed_replies_wait_without_blocking_the_server() {
        let server = Server::start(Arc::new(|req: &Request| {
            let reply = match req.path.as_str() {
                "/gone" => Reply::Hangup,
                _ => Reply::html(200, "late"),
            };
            reply.delayed(Duration::from_millis(300))
        }))
        .unwrap();
        let addr = server.addr();
        let start = Instant::now();
        let clients: Vec<_> = (0..20)
            .map(|_| std::thread::spawn(move || get(addr, "/x", "d")))
            .collect();
        for c in clients {
            let (resp, err) = c.join().unwrap();
            assert!(!err && resp.starts_with(b"HTTP/1.0 200 OK\r\n") && resp.ends_with(b"late"));
        }
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(300) && took < Duration::from_millis(2500),
            "{took:?}: delays overlap"
        );
        let start = Instant::now();
        let (resp, err) = get(addr, "/gone", "d");
        assert!(resp.is_empty() && !err);
        assert!(start.elapsed() >= Duration::from_millis(300));
    }

    #[test]
    fn several_threads_and_addresses() {
        let addrs = [
            SocketAddr::from(([127, 0, 0, 1], 0)),
            SocketAddr::from(([127, 0, 0, 2], 0)),
        ];
        let server = Server::start_many(
            &addrs,
            3,
            Arc::new(|req: &Request| Reply::html(200, req.path.clone())),
        )
        .unwrap();
        assert_eq!(server.addrs().len(), 2);
        assert_eq!(server.addr(), server.addrs()[0]);
        for addr in server.addrs().to_vec() {
            assert_ne!(addr.port(), 0);
            let clients: Vec<_> = (0..50)
                .map(|i| std::thread::spawn(move || get(addr, &format!("/{i}"), "t")))
                .collect();
            for (i, c) in clients.into_iter().enumerate() {
                let (resp, _) = c.join().unwrap();
                assert!(resp.ends_with(format!("/{i}").as_bytes()));
            }
        }
        assert_eq!(server.total_hits(), 100);
        let first = server.addr();
        let start = Instant::now();
        server.stop();
        assert!(start.elapsed() < Duration::from_secs(2));
        assert!(StdStream::connect(first).is_err());
    }

    #[test]
    fn listening_sockets_shared_by_executors_stay_non_blocking() {
        // The executors' duplicates share these sockets' flags: a blocking
        // one let a racing accept block an executor thread (see
        // `start_many_with`).
        let server = Server::start_many(
            &[SocketAddr::from(([127, 0, 0, 1], 0))],
            2,
            Arc::new(|req: &Request| Reply::html(200, req.path.clone())),
        )
        .unwrap();
        let (resp, _) = get(server.addr(), "/x", "t");
        assert!(resp.ends_with(b"/x"));
        for listener in &server.listeners {
            let flags = unsafe { libc::fcntl(listener.as_raw_fd(), libc::F_GETFL) };
            assert!(flags >= 0 && flags & libc::O_NONBLOCK != 0, "{flags:#x}");
        }
    }

    #[test]
    fn slow_script_stops_writing_when_the_client_is_gone() {
        let site = Arc::new(SynthSite::new(SiteSpec {
            pages: 300,
            fault_percent: 100,
            ..SiteSpec::default()
        }));
        let slow = (1..300)
            .find(|&i| site.page_fault(i) == Some(crate::synth::Fault::SlowBody))
            .unwrap();
        let server = Server::start(site.handler()).unwrap();
        let mut client = StdStream::connect(server.addr()).unwrap();
        let req = format!("GET /p/{slow}.html HTTP/1.0\r\nHost: h\r\n\r\n");
        client.write_all(req.as_bytes()).unwrap();
        client
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut buf = [0u8; 256];
        let n = client.read(&mut buf).unwrap();
        assert!(buf[..n].starts_with(b"HTTP/1.0 200 OK\r\n"));
        assert_eq!(server.open_connections(), 1);
        drop(client);
        let start = Instant::now();
        while server.open_connections() > 0 {
            assert!(
                start.elapsed() < Duration::from_secs(3),
                "still writing to a closed connection"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Reads one response with a `Content-Length` body from `s`.
    fn read_response(s: &mut StdStream) -> Vec<u8> {
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            if let Some(end) = out.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&out[..end]).to_ascii_lowercase();
                let len: usize = head
                    .split("content-length: ")
                    .nth(1)
                    .and_then(|v| v.split("\r\n").next())
                    .unwrap()
                    .parse()
                    .unwrap();
                if out.len() >= end + 4 + len {
                    return out;
                }
            }
            let n = s.read(&mut buf).unwrap();
            assert!(
                n > 0,
                "closed mid-response: {:?}",
                String::from_utf8_lossy(&out)
            );
            out.extend_from_slice(&buf[..n]);
        }
    }

    #[test]
    fn a_kept_connection_serves_requests_in_turn_until_the_client_says_close() {
        let options = Options {
            keep_alive: true,
            count_paths: false,
            ..Options::default()
        };
        let server = Server::start_with(
            &[SocketAddr::from(([127, 0, 0, 1], 0))],
            Arc::new(|req: &Request| Reply::html(200, format!("{} {}", req.path, req.attempt))),
            None,
            options,
        )
        .unwrap();
        let mut s = StdStream::connect(server.addr()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        for path in ["/a", "/b", "/a"] {
            let req = format!("GET {path} HTTP/1.1\r\nHost: k\r\n\r\n");
            s.write_all(req.as_bytes()).unwrap();
            let resp = read_response(&mut s);
            assert!(resp.starts_with(b"HTTP/1.1 200 OK\r\n"));
            // Not counted per path: attempt stays 0.
            assert!(resp.ends_with(format!("{path} 0").as_bytes()));
        }
        // HTTP/1.0 asking for keep-alive is kept too.
        s.write_all(b"GET /c HTTP/1.0\r\nHost: k\r\nConnection: keep-alive\r\n\r\n")
            .unwrap();
        let resp = read_response(&mut s);
        assert!(String::from_utf8_lossy(&resp).contains("\r\nConnection: keep-alive\r\n"));
        // `Connection: close`: an HTTP/1.0 answer, then EOF.
        s.write_all(b"GET /d HTTP/1.1\r\nHost: k\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut rest = Vec::new();
        s.read_to_end(&mut rest).unwrap();
        assert!(rest.starts_with(b"HTTP/1.0 200 OK\r\n") && rest.ends_with(b"/d 0"));
        assert_eq!(server.total_hits(), 5);
        assert_eq!(server.hits("k", "/a"), 0);
        assert!(server.hit_counts().is_empty());

        // A plain HTTP/1.0 request is answered and closed, as without keep-alive.
        let (resp, err) = get(server.addr(), "/e", "k");
        assert!(!err && resp.starts_with(b"HTTP/1.0 200 OK\r\n"));
        server.stop();
    }

    #[test]
    fn encode_and_strip_port() {
        let bytes = encode(
            299,
            &[("Transfer-Encoding".into(), "chunked".into())],
            b"0\r\n\r\n",
        );
        assert_eq!(
            bytes,
            b"HTTP/1.0 299 Unknown\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
        );
        assert_eq!(strip_port("a.b:80"), "a.b");
        assert_eq!(strip_port("a.b"), "a.b");
        assert_eq!(strip_port("[::1]:8080"), "[::1]");
        assert_eq!(strip_port(""), "");
    }
}
