//! One HTTP/1.1 exchange over plain TCP or TLS on a glommio (io_uring)
//! `TcpStream`: reuse an idle keep-alive connection to the endpoint (scheme,
//! address, TLS server name) or connect with a timeout (and for `https`
//! run the TLS handshake), send the request, read and parse the head
//! (skipping a few interim 1xx answers), read the body by its framing up to
//! the body cap (and the bytes on the wire up to the cap plus a framing
//! allowance), and leave the connection in the shard's [`ConnPool`] if the
//! server keeps it open and the answer ended exactly where its
//! `Content-Length` said. An idle connection is reused only if nothing
//! waits on it (no late bytes, no close: [`Stream::is_quiet`]); one the
//! server closed or spoke on after that, seen before any byte of the answer
//! or as an idle 408 or bytes that are no head, is stale: the fetch
//! connects afresh, and that costs no try.
//!
//! The overall deadline is enforced without racing futures: every connect,
//! write and read (the TLS handshake's too) is given the per-operation
//! timeout of what is left of the deadline ([`Timed`]), so no read is ever
//! dropped half-way (a dropped glommio read leaves a stale timer behind).
//! The TCP connect and the TLS handshake share one more deadline, the
//! connect time-out (as curl's `--connect-timeout` covers both): a server
//! that accepts and never finishes the handshake is given up on then, not
//! after a read time-out per handshake read. A
//! body cut short by a timeout, a reset, a short Content-Length or a TLS
//! close without `close_notify` is still returned, marked, so nothing
//! received is lost. Name resolution and retries are the caller's.
//!
//! Through a proxy ([`Route::Proxy`]) the connect goes to the proxy: an
//! `http` URL through an HTTP proxy is asked for in absolute form on a
//! connection that serves any target; otherwise a tunnel to the target
//! (`CONNECT` or SOCKS5) is opened within the connect time-out, and TLS,
//! if any, runs inside it. The exchange kept for the WARC is the target's
//! (origin-form, no `Proxy-Authorization`); a failure of the proxy itself
//! is [`FetchError::Proxy`], never the target's.
use std::cell::RefCell;
use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use futures_lite::{AsyncReadExt, AsyncWriteExt};
use glommio::net::TcpStream;
use rustls_pki_types::ServerName;
use url::{Position, Url};

mod error;

pub(crate) use error::FetchError;
use error::{handshake_error, io_error};

use crate::net::conn_pool::ConnPool;
use crate::net::connect::{self, ConnectError};
use crate::net::dns::Addresses;
use crate::net::proxy::socks::Target;
use crate::net::proxy::tunnel::{self, TunnelError};
use crate::net::proxy::{Proxy, ProxyKind};
use crate::net::stream::{Stream, Timed};
use crate::net::tls::negotiated::Negotiated;
use crate::net::tls::{HandshakeError, SessionKey, TlsClient, TlsError};
use ringcrawl_http1::{self as http, BodyDecoder, HeadError, Progress, ResponseHead};

/// Limits of one fetch.
#[derive(Debug, Clone)]
pub(crate) struct Limits {
    pub connect_timeout: Duration,
    pub read_timeout: Duration,
    /// Overall deadline, connect to last body byte.
    pub timeout: Duration,
    pub max_head: usize,
    pub max_body: usize,
    pub user_agent: String,
    /// Keep the raw request and response bytes (for WARC).
    pub keep_raw: bool,
    /// Keep the response head's bytes (for a library's page hooks).
    pub keep_head: bool,
    /// Ask for keep-alive and reuse connections the server keeps open.
    pub keep_alive: bool,
    /// Offer gzip, deflate, br and zstd (`Accept-Encoding`); else `identity`.
    pub compressed: bool,
    /// Headers added to every request (`-H`).
    pub headers: http::Headers,
    /// Basic credentials, each sent only to its own host (`--auth`).
    pub credentials: Vec<http::Credential>,
    /// Bodies cut by their media type (`--accept-type`, `--reject-type`,
    /// `--max-size-per-type`) within `max_body`.
    pub types: http::TypeRules,
    /// The crawl's cookie jar, if it keeps cookies: asked for each
    /// request's `Cookie`, given each answer's `Set-Cookie`.
    pub cookies: Option<std::sync::Arc<crate::net::cookies::Jar>>,
}

/// Where a connection leads: the address connected to (the server's or
/// the proxy's), over TLS the name the certificate was checked for, and
/// through a proxy what it reaches (so plain and TLS connections, names
/// sharing an address, and tunnels to different targets never stand in
/// for each other).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Endpoint {
    pub addr: SocketAddr,
    pub tls: Option<ServerName<'static>>,
    pub via: Via,
}

/// What a connection to a proxy carries.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Via {
    /// No proxy: the connection is the server's.
    Direct,
    /// An HTTP proxy's connection, asked for any `http` URL in absolute
    /// form; the proxy as its URL names it, user included (two users of
    /// one proxy are two proxies to its provider).
    Forward(Box<str>),
    /// A tunnel through a proxy (its URL, user included) to one target
    /// (`host:port`).
    Tunnel(Box<str>, Box<str>),
}

/// How a fetch reaches the server.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Route<'a> {
    /// Straight to one of the server's addresses.
    Direct(&'a Addresses),
    /// Through `proxy`, at one of its addresses `at`; `target` is the
    /// server's address when the crawler resolved it (`socks5://`),
    /// otherwise the proxy resolves the URL's name.
    Proxy {
        proxy: &'a Proxy,
        at: &'a Addresses,
        target: Option<SocketAddr>,
    },
}

impl Route<'_> {
    /// The addresses connected to.
    fn addrs(&self) -> &Addresses {
        match self {
            Route::Direct(addrs) => addrs,
            Route::Proxy { at, .. } => at,
        }
    }
}

/// A shard's idle connections.
pub(crate) type Pool = RefCell<ConnPool<Endpoint, Stream>>;

/// A response as received: maybe cut short, never discarded.
#[derive(Debug)]
pub(crate) struct Response {
    pub head: ResponseHead,
    /// Decoded payload (de-chunked), at most `max_body` bytes.
    pub body: Vec<u8>,
    /// The body reached the cap before its end.
    pub capped: bool,
    /// The body ended early (reset, timeout, short Content-Length, bad chunk).
    pub body_error: Option<FetchError>,
    /// The server's address the answer came from; None through a proxy
    /// that resolved the name itself.
    pub peer: Option<SocketAddr>,
    /// Time of the TCP connect; zero on a reused keep-alive connection.
    pub connect: Duration,
    /// Time from the start of the fetch to the first response byte.
    pub first_byte: Duration,
    /// Bytes as sent and received, if `Limits::keep_raw`.
    pub raw: Option<RawExchange>,
    /// The head's bytes as received, if `Limits::keep_head`.
    pub head_bytes: Option<Vec<u8>>,
    /// The certificate error `--insecure` let through on this connection.
    pub tls_warning: Option<TlsError>,
    /// The TLS version and cipher suite of the exchange; None over plain
    /// TCP.
    pub tls: Option<Negotiated>,
}

/// One exchange exactly as it crossed the wire (the response up to where
/// reading stopped: the body cap, the end, or the error).
#[derive(Debug, Default)]
pub(crate) struct RawExchange {
    pub request: Vec<u8>,
    pub response: Vec<u8>,
    /// Wall-clock time the request was sent.
    pub sent_at: Option<std::time::SystemTime>,
}

/// Fetch `url` by `route`: on an idle connection from `pool` if there is
/// one (with `limits.keep_alive`), else on a new connection made with
/// Happy Eyeballs (to the server, or to the proxy and through it); `https`
/// over a TLS session of `tls`. With `validators`, only if it changed
/// since the capture they are of (else `304 Not Modified`).
pub(crate) async fn fetch(
    route: Route<'_>,
    url: &Url,
    validators: Option<&http::Validators>,
    limits: &Limits,
    pool: &Pool,
    tls: &TlsClient,
) -> Result<Response, FetchError> {
    let name = match url.scheme() {
        "http" => None,
        "https" => Some(crate::net::tls::server_name(url)?),
        other => return Err(FetchError::Scheme(other.to_string())),
    };
    let addrs = route.addrs();
    let Some(first) = addrs.first() else {
        return Err(FetchError::Connect(io::Error::new(
            io::ErrorKind::AddrNotAvailable,
            "no address to connect to",
        )));
    };
    let port = url.port_or_known_default().unwrap_or(443);
    // What a proxy is asked for, and how (None: no proxy, or a forward
    // proxy's request).
    let (via, tunnel_to) = match route {
        Route::Direct(_) => (Via::Direct, None),
        Route::Proxy { proxy, .. } if name.is_none() && proxy.kind() == ProxyKind::Http => {
            (Via::Forward(proxy.identity().into()), None)
        }
        Route::Proxy { proxy, target, .. } => {
            let host = url.host_str().unwrap_or("");
            let to = match target {
                Some(addr) => Target::Addr(addr),
                None => Target::Name(host, port),
            };
            let label = match target {
                Some(addr) => addr.to_string(),
                None => format!("{host}:{port}"),
            };
            (
                Via::Tunnel(proxy.identity().into(), label.into()),
                Some((proxy, to)),
            )
        }
    };
    let forward = match (&via, route) {
        (Via::Forward(_), Route::Proxy { proxy, .. }) => Some(proxy),
        _ => None,
    };
    let mut endpoint = Endpoint {
        addr: first,
        tls: name,
        via,
    };
    let started = Instant::now();
    // Flags are bounded (a day at most); a library caller's larger value
    // means no deadline worth the name, not a panic.
    let deadline = started
        .checked_add(limits.timeout)
        .unwrap_or(started + Duration::from_secs(1 << 32));
    let idle = if limits.keep_alive {
        addrs.iter().find_map(|addr| {
            endpoint.addr = addr;
            take_quiet(pool, &endpoint, started)
        })
    } else {
        None
    };
    // The server's address, given the address connected to.
    let peer = |connected: SocketAddr| match route {
        Route::Direct(_) => Some(connected),
        Route::Proxy { target, .. } => target,
    };
    if let Some(mut stream) = idle {
        stream.renew(deadline, limits.read_timeout);
        let conn = Conn { stream };
        let ends = Ends {
            endpoint: &endpoint,
            peer: peer(endpoint.addr),
            forward,
        };
        match exchange(conn, ends, (url, validators), limits, pool, started, None).await {
            Err(FetchError::Stale) => {}
            done => return done,
        }
    }
    let connect_for = limits.connect_timeout.min(limits.timeout);
    // Sessions are kept by name and port: two servers on one name never
    // resume each other's.
    let session_key = endpoint
        .tls
        .as_ref()
        .map(|name| SessionKey::new(name.clone(), port));
    // Held until the exchange ends: its TLS session tickets come with it.
    let _admission = match &session_key {
        Some(key) => Some(tls.admit(key, connect_for).await),
        None => None,
    };
    let connecting = Instant::now();
    let left = deadline.saturating_duration_since(connecting);
    let connect_limit = connect_for.min(left);
    let (tcp, reached) = match (connect(addrs, connect_limit).await, route) {
        (Ok(connected), _) => connected,
        (Err(e), Route::Proxy { proxy, .. }) => {
            return Err(FetchError::proxy(
                proxy,
                TunnelError::Unreachable(e.to_string()),
            ))
        }
        (Err(e), Route::Direct(_)) => return Err(e),
    };
    endpoint.addr = reached;
    if endpoint.tls.is_some() || tunnel_to.is_some() {
        // TLS and the tunnels write in several small pieces (the
        // handshake's last flight, then the request): without this, Nagle
        // holds the second until the first is acknowledged, and a delayed
        // ACK costs 40 ms.
        let _ = tcp.set_nodelay(true);
    }
    // The TCP connect alone: a wait for a TLS session, a tunnel and the
    // handshake show in the time to the first byte.
    let connect = connecting.elapsed();
    // The tunnel and the handshake end by the connect time-out (from the
    // start of the connect), which is never past the deadline; each of
    // their reads by the read time-out too.
    let connected_by = connecting + connect_limit;
    let mut timed = Timed::new(tcp, connected_by, limits.read_timeout);
    if let Some((proxy, to)) = tunnel_to {
        tunnel::open(&mut timed, proxy, to, &limits.user_agent)
            .await
            .map_err(|e| FetchError::proxy(proxy, e))?;
    }
    let stream = match &session_key {
        None => Stream::Plain(timed),
        Some(key) => match tls.handshake(timed, key).await {
            Ok(conn) => Stream::Tls(Box::new(conn)),
            Err(HandshakeError::Tls(e)) => return Err(e.into()),
            Err(HandshakeError::Io(e)) => return Err(handshake_error(e, deadline, connected_by)),
        },
    };
    let mut stream = stream;
    stream.renew(deadline, limits.read_timeout);
    let ends = Ends {
        endpoint: &endpoint,
        peer: peer(endpoint.addr),
        forward,
    };
    exchange(
        Conn { stream },
        ends,
        (url, validators),
        limits,
        pool,
        started,
        Some(connect),
    )
    .await
}

/// The two ends of an exchange: the connection's endpoint, the server's
/// address if known, and the forward proxy the request is written for.
#[derive(Clone, Copy)]
struct Ends<'a> {
    endpoint: &'a Endpoint,
    peer: Option<SocketAddr>,
    forward: Option<&'a Proxy>,
}

/// A TCP connection to one of `addrs` within `limit` (Happy Eyeballs,
/// [`connect::connect`]), and the address it reached.
async fn connect(
    addrs: &Addresses,
    limit: Duration,
) -> Result<(TcpStream, SocketAddr), FetchError> {
    if limit.is_zero() {
        return Err(FetchError::Deadline);
    }
    connect::connect(addrs.iter(), limit)
        .await
        .map_err(|e| match e {
            ConnectError::Timeout => FetchError::ConnectTimeout,
            ConnectError::Failed(e) => FetchError::Connect(e),
        })
}

/// The newest idle connection to `endpoint` with nothing waiting on it.
/// One with bytes the server sent after its last answer (excess body, an
/// idle 408, an answer nobody asked for) or a close is out of step: dropped.
fn take_quiet(pool: &Pool, endpoint: &Endpoint, now: Instant) -> Option<Stream> {
    let mut pool = pool.borrow_mut();
    while let Some(mut stream) = pool.take(endpoint, now) {
        if stream.is_quiet() {
            return Some(stream);
        }
    }
    None
}

/// Send the request for `url` (with `validators`, if given) on `conn` and
/// read the answer. `connected` is the time
/// the connect took, or None for a reused connection: one of those closed or
/// reset before any byte of the answer, or whose answer is a server's idle
/// `408` or not an HTTP head at all (bytes of an earlier answer that came
/// late), is [`FetchError::Stale`].
async fn exchange(
    mut conn: Conn,
    ends: Ends<'_>,
    (url, validators): (&Url, Option<&http::Validators>),
    limits: &Limits,
    pool: &Pool,
    started: Instant,
    connected: Option<Duration>,
) -> Result<Response, FetchError> {
    let reused = connected.is_none();
    // Closed or reset by the server while idle, or out of step with it; a
    // time-out is the server's slowness, kept as such.
    let stale = |e: FetchError| match e {
        FetchError::Io(_)
        | FetchError::Empty
        | FetchError::Tls(TlsError::Closed(_))
        | FetchError::Head(HeadError::Invalid(_))
            if reused =>
        {
            FetchError::Stale
        }
        e => e,
    };
    let target = &url[Position::BeforePath..Position::AfterQuery];
    let host = &url[Position::BeforeHost..Position::AfterPort];
    let authorization = url
        .host_str()
        .zip(url.port_or_known_default())
        .and_then(|(h, p)| {
            limits
                .credentials
                .iter()
                .find(|c| c.applies_to(h, p))
                .map(http::Credential::authorization)
        });
    let cookie = limits.cookies.as_ref().and_then(|jar| jar.header_for(url));
    let request = http::Request {
        target,
        host,
        user_agent: &limits.user_agent,
        keep_alive: limits.keep_alive,
        compressed: limits.compressed,
        headers: &limits.headers,
        authorization,
        proxy_authorization: None,
        cookie: cookie.as_deref(),
        validators,
    };
    // To a forward proxy: the absolute URL and its credentials; the
    // origin-form request is the one kept (the target's exchange).
    let absolute;
    let (sent, request) = match ends.forward {
        None => (request.to_bytes(), None),
        Some(proxy) => {
            absolute = format!("{}://{host}{target}", url.scheme());
            let to_proxy = http::Request {
                target: &absolute,
                proxy_authorization: proxy.authorization(),
                ..request
            };
            (to_proxy.to_bytes(), Some(request))
        }
    };
    let sent_at = std::time::SystemTime::now();
    // Flushed: a TLS record could otherwise wait in rustls' buffer.
    conn.write_all(&sent).await.map_err(stale)?;

    // Small at first: thousands of fetches may wait on a slow server, each
    // holding this buffer until its answer comes.
    let mut buf = Vec::new();
    let mut first_byte = None;
    let mut scan = http::HeadScan::new(limits.max_head);
    let mut interim = 0;
    let head = loop {
        if let Some(head) = scan.parse(&buf).map_err(|e| stale(e.into()))? {
            if reused && head.status == 408 {
                return Err(FetchError::Stale);
            }
            // Only a proxy answers 407: its credentials, not the page's.
            if let (Some(proxy), 407) = (ends.forward, head.status) {
                let refused = TunnelError::Auth(
                    "the proxy wants credentials or refused them: 407".to_string(),
                );
                return Err(FetchError::proxy(proxy, refused));
            }
            if !head.is_interim() {
                if let Some(jar) = &limits.cookies {
                    jar.store(url, &head.set_cookies);
                }
                break head;
            }
            // 100 Continue, 103 Early Hints: the answer is still to come.
            interim += 1;
            if interim > MAX_INTERIM {
                return Err(HeadError::Invalid(format!(
                    "more than {MAX_INTERIM} interim (1xx) responses"
                ))
                .into());
            }
            buf.drain(..head.head_len.min(buf.len()));
            scan = http::HeadScan::new(limits.max_head);
            continue;
        }
        let want = if buf.is_empty() {
            FIRST_READ
        } else {
            HEAD_READ
        };
        let read = conn.read_more(&mut buf, want).await;
        match read {
            Err(e) if first_byte.is_none() => return Err(stale(e)),
            Ok(0) if first_byte.is_none() => return Err(stale(FetchError::Empty)),
            Ok(0) => return Err(FetchError::HeadCut),
            read => read?,
        };
        first_byte.get_or_insert_with(|| started.elapsed());
    };

    let mut raw = limits.keep_raw.then(|| RawExchange {
        request: request.map_or(sent, http::Request::to_bytes),
        response: buf.clone(),
        sent_at: Some(sent_at),
    });
    let head_bytes = limits
        .keep_head
        .then(|| buf.get(..head.head_len).unwrap_or(&buf).to_vec());
    let max_body = limits
        .types
        .body_cap(head.content_type.as_deref(), limits.max_body);
    let mut body = Vec::new();
    if let http::Framing::Length(n) = head.framing {
        body.reserve(usize::try_from(n).unwrap_or(usize::MAX).min(max_body));
    }
    let mut decoder = BodyDecoder::new(head.framing, max_body);
    let mut body_error = None;
    let after_head = buf.get(head.head_len..).unwrap_or(&[]);
    // Bytes received after the head: a reusable connection has exactly the
    // Content-Length, nothing of a next answer the server sent unasked.
    let mut received = after_head.len() as u64;
    let mut progress = match decoder.feed(after_head, &mut body) {
        Ok(p) => p,
        Err(e) => {
            body_error = Some(e.into());
            Progress::Complete
        }
    };
    // Framing (chunk sizes, extensions, trailers) does not count toward the
    // body cap; this bounds what is read, and kept raw, all the same.
    let max_wire = u64::try_from(wire_cap(max_body)).unwrap_or(u64::MAX);
    let mut chunk = Chunk::take();
    while progress == Progress::NeedMore {
        if received >= max_wire {
            progress = Progress::Capped;
            break;
        }
        match conn.read_into(chunk.bytes()).await {
            Ok(0) => {
                if let Err(e) = decoder.at_eof() {
                    body_error = Some(e.into());
                } else if !conn.stream.closed_cleanly() {
                    body_error = Some(FetchError::NoCloseNotify);
                }
                break;
            }
            Ok(n) => {
                let room = usize::try_from(max_wire.saturating_sub(received)).unwrap_or(usize::MAX);
                received += n as u64;
                let read = chunk.bytes().get(..n.min(room)).unwrap_or(&[]);
                if let Some(raw) = raw.as_mut() {
                    raw.response.extend_from_slice(read);
                }
                match decoder.feed(read, &mut body) {
                    Ok(p) => progress = p,
                    Err(e) => {
                        body_error = Some(e.into());
                        break;
                    }
                }
            }
            Err(e) => {
                body_error = Some(e);
                break;
            }
        }
    }
    let reusable = limits.keep_alive
        && head.keep_alive
        && head.status >= 200
        && progress == Progress::Complete
        && body_error.is_none()
        && decoder.ended_exactly();
    let tls_warning = conn.stream.tls_warning().cloned();
    let tls = conn.stream.negotiated();
    if reusable {
        pool.borrow_mut()
            .put(ends.endpoint.clone(), conn.stream, Instant::now());
    }
    Ok(Response {
        head,
        body,
        capped: progress == Progress::Capped,
        body_error,
        peer: ends.peer,
        connect: connected.unwrap_or_default(),
        first_byte: first_byte.unwrap_or_default(),
        raw,
        head_bytes,
        tls_warning,
        tls,
    })
}

/// Bytes read after the head at most: the body cap plus an allowance for
/// chunked framing (an eighth of the cap, plus 64 KiB for chunk lines and
/// trailers). An ordinary chunked body spends well under 1% on framing; a
/// hostile one of 1-byte chunks with 4 KiB extensions would need ~4000x.
fn wire_cap(max_body: usize) -> usize {
    max_body
        .saturating_add(max_body / 8)
        .saturating_add(64 << 10)
}

/// Interim (1xx) responses skipped before the answer; more is an error.
const MAX_INTERIM: usize = 8;
/// Bytes asked of the first read of a response.
const FIRST_READ: usize = 8 * 1024;
/// Bytes asked of each further read of the head.
const HEAD_READ: usize = 16 * 1024;
/// Bytes asked of each read of a body.
const READ_CHUNK: usize = 64 * 1024;
/// Body read buffers kept for reuse per thread.
const POOLED_CHUNKS: usize = 64;

thread_local! {
    /// Zeroed-once body read buffers, reused across fetches so a fetch
    /// neither allocates nor clears 64 KiB.
    static CHUNKS: std::cell::RefCell<Vec<Box<[u8]>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A body read buffer from the thread's pool, returned to it on drop.
struct Chunk(Box<[u8]>);

impl Chunk {
    fn take() -> Chunk {
        let pooled = CHUNKS.with(|pool| pool.borrow_mut().pop());
        Chunk(pooled.unwrap_or_else(|| vec![0; READ_CHUNK].into_boxed_slice()))
    }

    fn bytes(&mut self) -> &mut [u8] {
        &mut self.0
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        let buffer = std::mem::take(&mut self.0);
        CHUNKS.with(|pool| {
            let mut pool = pool.borrow_mut();
            if pool.len() < POOLED_CHUNKS {
                pool.push(buffer);
            }
        });
    }
}

/// A connected stream, its errors in fetch terms.
struct Conn {
    stream: Stream,
}

impl Conn {
    fn error(&self, e: io::Error) -> FetchError {
        let left = if self.stream.past_deadline() {
            Duration::ZERO
        } else {
            Duration::MAX
        };
        io_error(e, left)
    }

    /// Write all of `bytes` and flush them.
    async fn write_all(&mut self, bytes: &[u8]) -> Result<(), FetchError> {
        let mut result = self.stream.write_all(bytes).await;
        if result.is_ok() {
            result = self.stream.flush().await;
        }
        result.map_err(|e| self.error(e))
    }

    /// Read into `into`; Ok(0) at EOF.
    async fn read_into(&mut self, into: &mut [u8]) -> Result<usize, FetchError> {
        let result = self.stream.read(into).await;
        result.map_err(|e| self.error(e))
    }

    /// Append up to `want` bytes to `buf`; Ok(0) at EOF.
    async fn read_more(&mut self, buf: &mut Vec<u8>, want: usize) -> Result<usize, FetchError> {
        let start = buf.len();
        buf.resize(start + want, 0);
        let result = self
            .stream
            .read(buf.get_mut(start..).unwrap_or(&mut []))
            .await;
        let n = *result.as_ref().unwrap_or(&0);
        buf.truncate(start + n);
        result.map_err(|e| self.error(e))
    }
}
