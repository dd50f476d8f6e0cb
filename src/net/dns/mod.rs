//! Per-shard name resolution that never blocks the executor thread.
//!
//! [`Resolver::resolve`] answers, in this order:
//!
//! 1. `--resolve` pins, by (host, port);
//! 2. IP literals (`127.0.0.1`, `[::1]`);
//! 3. the hosts file (`/etc/hosts`, read once when the resolver is built);
//!    `localhost` and `*.localhost` are loopback and `*.invalid` never
//!    exists even without one (RFC 6761);
//! 4. the cache: an answer lives its TTL clamped to
//!    [`min_ttl`, `max_ttl`]; a failure (NXDOMAIN, no address, SERVFAIL,
//!    timeout, ...) lives `negative_ttl`; expiry is checked with `Instant`;
//! 5. a miss: a DNS query. Concurrent misses for one name share one lookup,
//!    run by a detached task of this executor (so a caller that is cancelled
//!    cancels nobody else's lookup). The lookup asks the nameservers of
//!    `/etc/resolv.conf` (or of the options) in order over io_uring UDP
//!    sockets ([`glommio::net::UdpSocket`], a fresh socket and random id per
//!    query): AAAA and A at once (each only if its family is allowed); each attempt
//!    waits `timeout` (a read timeout on the socket, never a race against
//!    the read), `attempts` tries per server, then the next server; a
//!    truncated answer is asked again over TCP; a CNAME chain the server
//!    left unfinished is followed with new queries. At most
//!    `max_queries_in_flight` queries are out at once.
//!
//! Only when no nameserver is configured at all does a miss fall back to
//! the system resolver (getaddrinfo) on glommio's blocking thread pool.
//!
//! An answer is every address of the allowed families (`-4`, `-6`), in the
//! order a connection tries them ([`addresses`]: IPv6 first, families
//! alternating); [`Resolver::prefer`] puts the address that last connected
//! first for that host, so a host whose IPv6 is broken costs the Happy
//! Eyeballs delay once, not on every connection.
//!
//! Names are looked up as given (absolute): no `search` domains, no `ndots`.
//! A host name is taken in its canonical form ([`canonical_host`]: lower
//! case, no trailing dot, the rule URLs are normalised by), so `example.com.`
//! and `example.com` share pins, hosts-file entries, cache and winners.
//! The wire format is [`crate::net::dns::wire`].
// Network data flows through here: a panic would take down a whole shard.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::unreachable
)]

pub mod addresses;
pub mod journal;
pub mod wire;

pub use addresses::{Addresses, Families};
pub use journal::Lookup;
use journal::Journal;

use std::cell::{Cell, RefCell};
use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::future::Future;
use std::hash::BuildHasher;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::os::fd::{FromRawFd, IntoRawFd};
use std::path::PathBuf;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant, SystemTime};

use futures_lite::{AsyncReadExt, AsyncWriteExt};
use glommio::net::{TcpStream, UdpSocket};
use glommio::sync::Semaphore;
use thiserror::Error;

use crate::crawl::urls::canonical_host;
use addresses::happy_order;
use wire::{QType, Rcode, Response};

/// A host name that gave no usable address.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("cannot resolve {host}: {reason}")]
pub struct DnsError {
    pub host: String,
    /// One line: `NXDOMAIN`, `SERVFAIL`, `REFUSED`, `timeout`, `no address`,
    /// `invalid name: ...`, `connection refused ...`, `bad response: ...`.
    pub reason: String,
}

impl DnsError {
    /// The name has no address, by a definite answer (NXDOMAIN, no address
    /// of the families asked, an invalid name), not for want of one
    /// (timeout, SERVFAIL, REFUSED): asking again soon would not change it.
    pub fn is_definite(&self) -> bool {
        self.reason == Rcode::NxDomain.to_string()
            || self.reason == NO_ADDRESS
            || self.reason == WRONG_FAMILY
            || self.reason.starts_with("invalid name")
    }
}

/// How a [`Resolver`] finds and caches answers. `Default` is the system's
/// setup: the nameservers of `/etc/resolv.conf` and `/etc/hosts`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolverOptions {
    /// Nameservers asked, in order; `None`: those of `resolv_conf`. An empty
    /// list (or a `resolv_conf` without any) means the system resolver on
    /// the blocking thread pool.
    pub nameservers: Option<Vec<SocketAddr>>,
    /// Read for `nameserver` lines when `nameservers` is `None`.
    pub resolv_conf: PathBuf,
    /// Hosts file read once at construction; `None`: none.
    pub hosts_file: Option<PathBuf>,
    /// Wait for an answer to one query.
    pub timeout: Duration,
    /// Tries per nameserver when it does not answer (2: retry once).
    pub attempts: u32,
    /// Least time an answer is kept, whatever its TTL.
    pub min_ttl: Duration,
    /// Most time an answer is kept, whatever its TTL.
    pub max_ttl: Duration,
    /// Time a failure (NXDOMAIN, no address, SERVFAIL, timeout) is kept.
    pub negative_ttl: Duration,
    /// Queries (UDP sockets or TCP connections) out at once.
    pub max_queries_in_flight: usize,
    /// Cached names kept; past this, expired entries go, then arbitrary ones.
    pub cache_capacity: usize,
    /// The address families asked for and returned.
    pub families: Families,
    /// Keep every fresh lookup for [`Resolver::take_lookups`] (`--warc-dns`).
    pub journal: bool,
}

impl Default for ResolverOptions {
    fn default() -> Self {
        ResolverOptions {
            nameservers: None,
            resolv_conf: PathBuf::from("/etc/resolv.conf"),
            hosts_file: Some(PathBuf::from("/etc/hosts")),
            timeout: Duration::from_secs(3),
            attempts: 2,
            min_ttl: Duration::from_secs(5),
            max_ttl: Duration::from_secs(3600),
            negative_ttl: Duration::from_secs(60),
            max_queries_in_flight: 64,
            cache_capacity: 100_000,
            families: Families::Both,
            journal: false,
        }
    }
}

/// Counters of one resolver (for tests and reports).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResolverStats {
    /// Answers from the cache.
    pub cache_hits: u64,
    /// Lookups started (one per name per miss, however many callers).
    pub lookups: u64,
    /// Callers that waited for a lookup another caller had started.
    pub shared: u64,
    /// Queries sent (UDP datagrams and TCP exchanges, retries included).
    pub queries: u64,
    /// Queries that got no answer in time.
    pub timeouts: u64,
}

/// Resolver of one shard (the shard owns every host it resolves).
pub struct Resolver {
    inner: Rc<Inner>,
}

/// What a lookup gives: the addresses in the order to try (never empty),
/// or the one-line reason it failed.
type Answer = Result<Rc<[IpAddr]>, String>;

struct Inner {
    /// `--resolve` pins, keyed by (canonical host, port), in the order to
    /// try.
    pins: HashMap<(String, u16), Rc<[IpAddr]>>,
    /// The hosts file, by canonical name, in the order to try.
    hosts: HashMap<String, Rc<[IpAddr]>>,
    nameservers: Vec<SocketAddr>,
    opts: ResolverOptions,
    cache: RefCell<HashMap<String, Entry>>,
    /// Lookups under way, by name.
    inflight: RefCell<HashMap<String, Rc<Pending>>>,
    /// Per name, the address that connected when one before it did not
    /// ([`Resolver::prefer`]).
    winners: RefCell<HashMap<String, IpAddr>>,
    /// Bounds the queries out at once.
    permits: Semaphore,
    /// Query ids: a keyed hash (SipHash, random key) of a counter.
    id_key: RandomState,
    id_counter: Cell<u64>,
    stats: Cell<ResolverStats>,
    /// Fresh lookups, with `ResolverOptions::journal`.
    journal: Journal,
}

struct Entry {
    answer: Answer,
    expires: Instant,
}

impl Resolver {
    /// The system's setup ([`ResolverOptions::default`]) with `pins`.
    pub fn new(pins: HashMap<(String, u16), Vec<IpAddr>>) -> Self {
        Resolver::with_options(pins, ResolverOptions::default())
    }

    /// Reads the hosts file and, unless `opts.nameservers` is given, the
    /// nameservers of `opts.resolv_conf`; a file that cannot be read counts
    /// as empty.
    pub fn with_options(pins: HashMap<(String, u16), Vec<IpAddr>>, opts: ResolverOptions) -> Self {
        let families = opts.families;
        let hosts = opts
            .hosts_file
            .as_ref()
            .and_then(|path| std::fs::read_to_string(path).ok())
            .map(|text| parse_hosts(&text))
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(name, ips)| Some((name, happy_order(&ips, families)?)))
            .collect();
        let pins = pins
            .into_iter()
            .filter_map(|((host, port), ips)| {
                let host = canonical_host(&host).into_owned();
                Some(((host, port), happy_order(&ips, families)?))
            })
            .collect();
        let nameservers = match &opts.nameservers {
            Some(list) => list.clone(),
            None => std::fs::read_to_string(&opts.resolv_conf)
                .map(|text| parse_resolv_conf(&text))
                .unwrap_or_default(),
        };
        let permits = Semaphore::new(opts.max_queries_in_flight.max(1) as u64);
        let journal = Journal::new(opts.journal);
        Resolver {
            inner: Rc::new(Inner {
                pins,
                hosts,
                nameservers,
                opts,
                cache: RefCell::new(HashMap::new()),
                inflight: RefCell::new(HashMap::new()),
                winners: RefCell::new(HashMap::new()),
                permits,
                id_key: RandomState::new(),
                id_counter: Cell::new(0),
                stats: Cell::new(ResolverStats::default()),
                journal,
            }),
        }
    }

    /// The nameservers asked on a miss (empty: the system resolver).
    pub fn nameservers(&self) -> &[SocketAddr] {
        &self.inner.nameservers
    }

    pub fn stats(&self) -> ResolverStats {
        self.inner.stats.get()
    }

    /// The names resolved afresh since the last call, with
    /// [`ResolverOptions::journal`] (else none).
    pub fn take_lookups(&self) -> Vec<Lookup> {
        self.inner.journal.take()
    }

    /// The addresses to connect to for `host:port` (any case, trailing dot
    /// or not), in the order to try.
    pub async fn resolve(&self, host: &str, port: u16) -> Result<Addresses, DnsError> {
        let inner = &self.inner;
        let fail = |reason: String| DnsError {
            host: host.to_string(),
            reason,
        };
        let name = canonical_host(host);
        if let Some(ips) = inner.pins.get(&(name.to_string(), port)) {
            return Ok(self.winner_first(&name, addresses(ips.clone(), port)));
        }
        let bare = name.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = bare.parse::<IpAddr>() {
            if !inner.opts.families.allows(&ip) {
                return Err(fail(WRONG_FAMILY.to_string()));
            }
            return Ok(Addresses::One(SocketAddr::new(ip, port)));
        }
        self.lookup(&name)
            .await
            .map(|ips| self.winner_first(&name, addresses(ips, port)))
            .map_err(fail)
    }

    /// `ip` connected to `host` when an address before it in the answer
    /// did not: try it first from now on, whatever gave the addresses (a
    /// pin, the hosts file or DNS), so a broken IPv6 path costs the Happy
    /// Eyeballs delay once per host, not on every connection.
    pub fn prefer(&self, host: &str, ip: IpAddr) {
        let name = canonical_host(host).into_owned();
        let mut winners = self.inner.winners.borrow_mut();
        if winners.len() >= self.inner.opts.cache_capacity.max(1) {
            winners.clear();
        }
        winners.insert(name, ip);
    }

    /// `addrs` of `name` (canonical) with the address that last won first,
    /// if any.
    fn winner_first(&self, name: &str, addrs: Addresses) -> Addresses {
        let Addresses::Many(ips, port) = &addrs else {
            return addrs;
        };
        let winners = self.inner.winners.borrow();
        if winners.is_empty() {
            return addrs;
        }
        let Some(winner) = winners.get(name) else {
            return addrs;
        };
        match ips.iter().position(|a| a == winner) {
            Some(at) if at > 0 => {
                let mut reordered = ips.to_vec();
                if let Some(head) = reordered.get_mut(..=at) {
                    head.rotate_right(1);
                }
                Addresses::Many(reordered.into(), *port)
            }
            _ => addrs,
        }
    }

    /// `name` (lower-cased, no trailing dot) from the hosts file, the
    /// special names, the cache, or a shared lookup.
    async fn lookup(&self, name: &str) -> Answer {
        let inner = &self.inner;
        if let Some(ips) = inner.hosts.get(name) {
            return Ok(ips.clone());
        }
        if name == "localhost" || name.ends_with(".localhost") {
            let loopback = [
                IpAddr::V6(Ipv6Addr::LOCALHOST),
                IpAddr::V4(Ipv4Addr::LOCALHOST),
            ];
            return happy_order(&loopback, inner.opts.families).ok_or_else(|| WRONG_FAMILY.into());
        }
        if name == "invalid" || name.ends_with(".invalid") {
            return Err(Rcode::NxDomain.to_string());
        }
        if let Some(answer) = inner.cached(name) {
            inner.count(|s| s.cache_hits += 1);
            return answer;
        }
        let existing = inner.inflight.borrow().get(name).cloned();
        let pending = match existing {
            Some(pending) => {
                inner.count(|s| s.shared += 1);
                pending
            }
            None => self.start(name),
        };
        Wait(pending).await
    }

    /// Starts the lookup of `name` in a detached task.
    fn start(&self, name: &str) -> Rc<Pending> {
        let inner = self.inner.clone();
        inner.count(|s| s.lookups += 1);
        let pending = Rc::new(Pending::default());
        inner
            .inflight
            .borrow_mut()
            .insert(name.to_string(), pending.clone());
        let done = Completion {
            inner,
            name: name.to_string(),
            pending: pending.clone(),
        };
        glommio::spawn_local(async move {
            let (answer, ttl) = done.inner.query_name(&done.name).await;
            done.finish(answer, ttl);
        })
        .detach();
        pending
    }
}

impl Inner {
    fn count(&self, f: impl FnOnce(&mut ResolverStats)) {
        let mut stats = self.stats.get();
        f(&mut stats);
        self.stats.set(stats);
    }

    fn cached(&self, name: &str) -> Option<Answer> {
        let cache = self.cache.borrow();
        let entry = cache.get(name)?;
        (Instant::now() < entry.expires).then(|| entry.answer.clone())
    }

    fn store(&self, name: &str, answer: Answer, ttl: Duration) {
        let now = Instant::now();
        let mut cache = self.cache.borrow_mut();
        let capacity = self.opts.cache_capacity.max(1);
        if cache.len() >= capacity && !cache.contains_key(name) {
            cache.retain(|_, e| e.expires > now);
            if cache.len() >= capacity {
                let excess = cache.len() + 1 - capacity * 9 / 10;
                let victims: Vec<String> = cache.keys().take(excess).cloned().collect();
                for key in victims {
                    cache.remove(&key);
                }
            }
        }
        let expires = now.checked_add(ttl).unwrap_or(now);
        cache.insert(name.to_string(), Entry { answer, expires });
    }

    fn next_id(&self) -> u16 {
        let n = self.id_counter.get().wrapping_add(1);
        self.id_counter.set(n);
        (self.id_key.hash_one(n) & 0xFFFF) as u16
    }

    /// Looks `name` up and says how long the answer may be kept.
    async fn query_name(&self, name: &str) -> (Answer, Duration) {
        if self.nameservers.is_empty() {
            let owned = name.to_string();
            let families = self.opts.families;
            let answer = glommio::executor()
                .spawn_blocking(move || system_lookup(&owned))
                .await
                .and_then(|ips| happy_order(&ips, families).ok_or_else(|| WRONG_FAMILY.into()));
            if let Ok(ips) = &answer {
                self.journal.push(|| Lookup {
                    name: name.to_string(),
                    at: SystemTime::now(),
                    server: None,
                    answers: ips.iter().map(|&ip| (ip, 0)).collect(),
                });
            }
            let keep = match answer {
                Ok(_) => self.opts.max_ttl,
                Err(_) => self.opts.negative_ttl,
            };
            return (answer, keep);
        }
        match self.resolve_addrs(name).await {
            Ok((ips, ttl, server)) => {
                self.journal.push(|| Lookup {
                    name: name.to_string(),
                    at: SystemTime::now(),
                    server,
                    answers: ips.iter().map(|&ip| (ip, ttl)).collect(),
                });
                let keep = Duration::from_secs(u64::from(ttl))
                    .min(self.opts.max_ttl)
                    .max(self.opts.min_ttl);
                (Ok(ips), keep)
            }
            Err(reason) => (Err(reason), self.opts.negative_ttl),
        }
    }

    /// AAAA and A for `name` at once (each if its family is allowed),
    /// following CNAME chains the servers left unfinished. The addresses in
    /// the order to try, their TTL (seconds, the least of the answers) and
    /// the nameserver that gave them.
    async fn resolve_addrs(
        &self,
        name: &str,
    ) -> Result<(Rc<[IpAddr]>, u32, Option<IpAddr>), String> {
        const MAX_FOLLOW: usize = 8;
        let families = self.opts.families;
        let mut qname = name.to_string();
        let mut chain_ttl = u32::MAX;
        for _ in 0..MAX_FOLLOW {
            let ask = |wanted: bool, qtype| {
                let qname = &qname;
                async move {
                    match wanted {
                        true => Some(self.ask(qname, qtype).await),
                        false => None,
                    }
                }
            };
            let (aaaa, a) = futures_lite::future::zip(
                ask(families.v6(), QType::Aaaa),
                ask(families.v4(), QType::A),
            )
            .await;
            let answers: Vec<Result<(Response, SocketAddr), String>> = [aaaa, a].into_iter().flatten().collect();
            let mut ips = Vec::new();
            // The TTL of the answers that gave addresses (an empty answer
            // for the other family says nothing about how long they last).
            let mut ttl = chain_ttl;
            let mut canonical = None;
            let mut failure = None;
            let mut server = None;
            for answer in answers {
                match answer {
                    Ok((r, _)) if r.rcode == Rcode::NxDomain => {
                        return Err(Rcode::NxDomain.to_string())
                    }
                    Ok((r, from)) => {
                        let answer_ttl = r.ttl.unwrap_or(0);
                        if !r.addrs.is_empty() {
                            ttl = ttl.min(answer_ttl);
                            server = server.or(Some(from.ip()));
                        }
                        ips.extend(r.addrs);
                        if canonical.is_none() {
                            canonical = r.canonical.map(|target| (target, answer_ttl));
                        }
                    }
                    Err(reason) => failure = failure.or(Some(reason)),
                }
            }
            if let Some(ordered) = happy_order(&ips, families) {
                return Ok((ordered, ttl, server));
            }
            if let Some(reason) = failure {
                return Err(reason);
            }
            match canonical {
                Some((target, answer_ttl)) => {
                    qname = target;
                    chain_ttl = chain_ttl.min(answer_ttl);
                }
                None => return Err(NO_ADDRESS.to_string()),
            }
        }
        Err("CNAME chain too long".to_string())
    }

    /// One question to the nameservers in turn: the first NOERROR or
    /// NXDOMAIN answer and the server that gave it, or why none came.
    async fn ask(&self, name: &str, qtype: QType) -> Result<(Response, SocketAddr), String> {
        let mut last = "no nameserver".to_string();
        for &server in &self.nameservers {
            for _ in 0..self.opts.attempts.max(1) {
                let id = self.next_id();
                let query = wire::build_query(id, name, qtype).map_err(|e| e.to_string())?;
                let q = Query {
                    server,
                    bytes: &query,
                    id,
                    name,
                    qtype,
                    timeout: self.opts.timeout,
                };
                let outcome = {
                    let _permit = self
                        .permits
                        .acquire_permit(1)
                        .await
                        .map_err(|e| e.to_string())?;
                    self.count(|s| s.queries += 1);
                    match q.udp().await {
                        Ok(r) if r.truncated && r.addrs.is_empty() && r.rcode == Rcode::NoError => {
                            self.count(|s| s.queries += 1);
                            q.tcp().await
                        }
                        other => other,
                    }
                };
                match outcome {
                    Ok(r) if matches!(r.rcode, Rcode::NoError | Rcode::NxDomain) => {
                        return Ok((r, server))
                    }
                    Ok(r) => {
                        // SERVFAIL, REFUSED, ...: the next server may do better.
                        last = r.rcode.to_string();
                        break;
                    }
                    Err(Failure::Timeout) => {
                        self.count(|s| s.timeouts += 1);
                        last = "timeout".to_string();
                    }
                    Err(Failure::Other(reason)) => {
                        last = reason;
                        break;
                    }
                }
            }
        }
        Err(last)
    }
}

/// Why one query got no usable answer.
enum Failure {
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
struct Query<'a> {
    server: SocketAddr,
    bytes: &'a [u8],
    id: u16,
    name: &'a str,
    qtype: QType,
    timeout: Duration,
}

impl Query<'_> {
    /// Over UDP: datagrams that are not the answer (wrong id or question)
    /// are dropped and the wait goes on until `timeout` from the send.
    async fn udp(&self) -> Result<Response, Failure> {
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
    async fn tcp(&self) -> Result<Response, Failure> {
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

/// A lookup under way: its answer once known, and the callers waiting.
#[derive(Default)]
struct Pending {
    answer: RefCell<Option<Answer>>,
    waiters: RefCell<Vec<Waker>>,
}

/// Waits for a [`Pending`] answer.
struct Wait(Rc<Pending>);

impl Future for Wait {
    type Output = Answer;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Answer> {
        if let Some(answer) = self.0.answer.borrow().as_ref() {
            return Poll::Ready(answer.clone());
        }
        let mut waiters = self.0.waiters.borrow_mut();
        if !waiters.iter().any(|w| w.will_wake(cx.waker())) {
            waiters.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

/// Owned by the lookup task: publishes its answer, and on drop (finished
/// or cancelled) removes the lookup from the in-flight map and wakes the
/// waiters, so no caller waits forever.
struct Completion {
    inner: Rc<Inner>,
    name: String,
    pending: Rc<Pending>,
}

impl Completion {
    fn finish(self, answer: Answer, keep: Duration) {
        self.inner.store(&self.name, answer.clone(), keep);
        *self.pending.answer.borrow_mut() = Some(answer);
    }
}

impl Drop for Completion {
    fn drop(&mut self) {
        {
            let mut answer = self.pending.answer.borrow_mut();
            if answer.is_none() {
                *answer = Some(Err("lookup cancelled".to_string()));
            }
        }
        self.inner.inflight.borrow_mut().remove(&self.name);
        let waiters = std::mem::take(&mut *self.pending.waiters.borrow_mut());
        for waker in waiters {
            waker.wake();
        }
    }
}

/// Hosts-file text to a map of lower-cased names to their addresses, in
/// the order the file lists them.
pub fn parse_hosts(text: &str) -> HashMap<String, Vec<IpAddr>> {
    let mut map: HashMap<String, Vec<IpAddr>> = HashMap::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or_default();
        let mut fields = line.split_whitespace();
        let Some(Ok(ip)) = fields.next().map(str::parse::<IpAddr>) else {
            continue;
        };
        for name in fields {
            let ips = map.entry(canonical_host(name).into_owned()).or_default();
            if !ips.contains(&ip) {
                ips.push(ip);
            }
        }
    }
    map
}

/// The `nameserver` addresses of resolv.conf text, port 53 (scoped IPv6
/// addresses are skipped).
pub fn parse_resolv_conf(text: &str) -> Vec<SocketAddr> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            match (fields.next(), fields.next()) {
                (Some("nameserver"), Some(addr)) => addr.parse::<IpAddr>().ok(),
                _ => None,
            }
        })
        .map(|ip| SocketAddr::new(ip, 53))
        .collect()
}

/// Blocking system lookup (getaddrinfo). Runs on the blocking thread pool,
/// only when no nameserver is configured.
fn system_lookup(host: &str) -> Result<Vec<IpAddr>, String> {
    let ips: Vec<IpAddr> = (host, 0)
        .to_socket_addrs()
        .map_err(|e| e.to_string())?
        .map(|a| a.ip())
        .collect();
    if ips.is_empty() {
        return Err(NO_ADDRESS.to_string());
    }
    Ok(ips)
}

/// Why a name that has addresses gives none: `-4` or `-6` keeps them out.
const WRONG_FAMILY: &str = "no address of the allowed family";
/// Why a name that exists gave no address.
const NO_ADDRESS: &str = "no address";

/// `ips` (never empty) on `port`, without an allocation for one address.
fn addresses(ips: Rc<[IpAddr]>, port: u16) -> Addresses {
    match &ips[..] {
        [one] => Addresses::One(SocketAddr::new(*one, port)),
        _ => Addresses::Many(ips, port),
    }
}

#[cfg(test)]
#[allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]
mod tests {
    use super::*;

    fn run<T>(f: impl std::future::Future<Output = T>) -> T {
        glommio::LocalExecutorBuilder::new(glommio::Placement::Unbound)
            .io_memory(1 << 20)
            .make()
            .unwrap()
            .run(f)
    }

    /// No hosts file, and a nameserver that refuses at once (a closed
    /// loopback port), so nothing leaves the machine.
    fn offline() -> ResolverOptions {
        let closed = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let addr = closed.local_addr().unwrap();
        drop(closed);
        ResolverOptions {
            nameservers: Some(vec![addr]),
            hosts_file: None,
            timeout: Duration::from_millis(300),
            ..ResolverOptions::default()
        }
    }

    #[test]
    fn pins_literals_and_localhost_resolve() {
        let pins = HashMap::from([
            (
                ("site.test".to_string(), 8080),
                vec!["127.0.0.9".parse().unwrap()],
            ),
            (
                ("both.test".to_string(), 80),
                vec!["127.0.0.9".parse().unwrap(), "::9".parse().unwrap()],
            ),
        ]);
        run(async move {
            let r = Resolver::with_options(pins, offline());
            assert_eq!(
                r.resolve("site.test", 8080).await.unwrap().to_string(),
                "127.0.0.9:8080"
            );
            assert_eq!(
                r.resolve("Site.Test", 8080).await.unwrap().to_string(),
                "127.0.0.9:8080"
            );
            assert!(
                r.resolve("site.test", 9090).await.is_err(),
                "a pin is for one port"
            );
            assert_eq!(
                r.resolve("127.0.0.1", 80).await.unwrap().to_string(),
                "127.0.0.1:80"
            );
            assert_eq!(
                r.resolve("[::1]", 80).await.unwrap().to_string(),
                "[::1]:80"
            );
            assert_eq!(
                r.resolve("both.test", 80).await.unwrap().to_string(),
                "[::9]:80, 127.0.0.9:80",
                "IPv6 first"
            );
            for name in ["localhost", "a.localhost."] {
                assert_eq!(
                    r.resolve(name, 80).await.unwrap().to_string(),
                    "[::1]:80, 127.0.0.1:80"
                );
            }
        });
    }

    #[test]
    fn invalid_names_fail_without_a_query() {
        run(async {
            let r = Resolver::with_options(HashMap::new(), offline());
            let err = r.resolve("no-such-host.invalid", 80).await.unwrap_err();
            assert_eq!(err.host, "no-such-host.invalid");
            assert_eq!(err.reason, "NXDOMAIN");
            assert!(err.is_definite(), "asking again cannot help");
            assert_eq!(r.stats().queries, 0);
        });
    }

    #[test]
    fn refused_nameserver_fails_fast_and_is_cached() {
        run(async {
            let r = Resolver::with_options(HashMap::new(), offline());
            let start = Instant::now();
            let err = r.resolve("a.example", 80).await.unwrap_err();
            assert!(err.reason.contains("refused"), "{err}");
            assert!(!err.is_definite(), "a nameserver may come back");
            assert!(
                start.elapsed() < Duration::from_millis(250),
                "no wait for a timeout"
            );
            assert!(r.resolve("a.example", 80).await.is_err());
            let stats = r.stats();
            assert_eq!(
                (stats.lookups, stats.cache_hits, stats.queries),
                (1, 1, 2),
                "one lookup: an A and an AAAA query, refused at once"
            );
        });
    }

    #[test]
    fn hosts_file_text() {
        let hosts = parse_hosts(
            "# comment\n127.0.0.1 localhost\n::1 localhost ip6-localhost\n\n\
             10.1.2.3  Web.Example.   web # trailing\nnot-an-ip foo\n\
             fe80::1 v6only\n10.9.9.9 web\n",
        );
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(hosts["localhost"], [ip("127.0.0.1"), ip("::1")]);
        assert_eq!(hosts["ip6-localhost"], [ip("::1")]);
        assert_eq!(hosts["web.example"], [ip("10.1.2.3")]);
        assert_eq!(
            hosts["web"],
            [ip("10.1.2.3"), ip("10.9.9.9")],
            "in file order"
        );
        assert_eq!(hosts["v6only"], [ip("fe80::1")]);
        assert!(!hosts.contains_key("foo"));
    }

    #[test]
    fn resolv_conf_text() {
        let servers = parse_resolv_conf(
            "# x\nsearch example.com\nnameserver 192.0.2.53\nnameserver  2001:db8::53\n\
             nameserver fe80::1%eth0\noptions ndots:2\nnameserver\n",
        );
        assert_eq!(
            servers,
            vec![
                "192.0.2.53:53".parse::<SocketAddr>().unwrap(),
                "[2001:db8::53]:53".parse().unwrap()
            ]
        );
    }
}
