//! Per-shard name resolution that never blocks the executor thread.
//!
//! [`Resolver::resolve`] answers, in this order:
//!
//! 1. `--resolve` pins, by (host, port);
//! 2. IP literals (`127.0.0.1`, `[::1]`); then, for a name, a `*` pin
//!    on its port (`--resolve '*:PORT:ADDR'`, curl's wildcard);
//! 3. the hosts file (`/etc/hosts`, read once when the resolver is built);
//!    `localhost` and `*.localhost` are loopback and `*.invalid` never
//!    exists even without one (RFC 6761);
//! 4. the cache ([`cache`]), bounded by `cache_capacity` names and
//!    `cache_bytes` bytes: an answer lives its TTL clamped to
//!    [`min_ttl`, `max_ttl`]; a definite absence (NXDOMAIN, no address) the
//!    negative TTL of the SOA that came with it (RFC 2308: the lesser of
//!    its TTL and MINIMUM), at least `min_ttl`, at most `negative_ttl`, and
//!    `negative_ttl` without one; a failure (SERVFAIL, timeout, ...)
//!    `negative_ttl`; expiry is checked with `Instant`;
//! 5. a miss: a DNS query. Concurrent misses for one name share one lookup,
//!    run by a detached task of this executor (so a caller that is cancelled
//!    cancels nobody else's lookup). The lookup asks the nameservers of
//!    `/etc/resolv.conf` (or of the options) in order over io_uring UDP
//!    sockets ([`glommio::net::UdpSocket`], a fresh socket and random id per
//!    query): AAAA and A at once (each only if its family is allowed), each
//!    family on its own; each attempt waits `timeout` (a read timeout on the
//!    socket, never a race against the read), `attempts` tries per server,
//!    then the next server; a truncated answer is asked again over TCP; a
//!    CNAME chain the server left unfinished is followed with new queries.
//!    The callers are answered on the first family that answers (RFC 8305
//!    §3: AAAA at once, A after a 50 ms resolution delay for AAAA), and one
//!    family's failure never discards the other's addresses
//!    ([`resolution`] has the rules, [`pending`] how a partial answer is
//!    cached and completed). At most `max_queries_in_flight` queries are
//!    out at once; lookups past that wait their turn.
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
//!
//! The parts: this file is the resolver (the order above, the winners, the
//! counters); [`cache`] the cached answers; [`lookup`] is a miss (what to
//! ask whom, CNAME chains); [`resolution`] when a miss answers and with
//! what (pure); [`query`] one question to one server (UDP, TCP after
//! truncation); [`pending`] the sharing of one lookup by many callers;
//! [`system`] the hosts file, resolv.conf and getaddrinfo; the message
//! format is the pure `ringcrawl_dns_wire` crate (`crates/dns-wire`);
//! [`addresses`] the order addresses are tried in;
//! [`journal`] the lookups kept for `--warc-dns`.
pub(crate) mod addresses;
mod cache;
pub(crate) mod journal;
mod lookup;
mod pending;
mod query;
mod resolution;
mod system;

pub(crate) use addresses::Addresses;
pub use addresses::Families;
use cache::Cache;
use journal::Journal;
pub(crate) use journal::Lookup;
use pending::{Completion, Pending, Wait};
pub(crate) use system::{parse_hosts, parse_resolv_conf};

use std::cell::{Cell, RefCell};
use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::PathBuf;
use std::rc::Rc;
use std::time::{Duration, Instant};

use glommio::sync::Semaphore;
use thiserror::Error;

use addresses::happy_order;
use ringcrawl_dns_wire::Rcode;
use ringcrawl_links::urls::canonical_host;

/// A host name that gave no usable address.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("cannot resolve {host}: {reason}")]
pub(crate) struct DnsError {
    pub host: String,
    /// One line: `NXDOMAIN`, `SERVFAIL`, `REFUSED`, `timeout`, `no address`,
    /// `invalid name: ...`, `connection refused ...`, `bad response: ...`.
    pub reason: String,
}

impl DnsError {
    /// The name has no address, by a definite answer (NXDOMAIN, no address
    /// of the families asked, an invalid name), not for want of one
    /// (timeout, SERVFAIL, REFUSED): asking again soon would not change it.
    pub(crate) fn is_definite(&self) -> bool {
        self.reason == Rcode::NxDomain.to_string()
            || self.reason == NO_ADDRESS
            || self.reason == WRONG_FAMILY
            || self.reason.starts_with("invalid name")
    }
}

/// How a [`Resolver`] finds and caches answers. `Default` is the system's
/// setup: the nameservers of `/etc/resolv.conf` and `/etc/hosts`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResolverOptions {
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
    /// Time a failure (SERVFAIL, timeout) is kept, and the most time a
    /// definite absence (NXDOMAIN, no address) is, whatever its SOA says.
    pub negative_ttl: Duration,
    /// Queries (UDP sockets or TCP connections) out at once; more wait
    /// their turn, so a burst of new hosts does not flood the nameserver.
    pub max_queries_in_flight: usize,
    /// Cached names kept; past this, expired entries go, then arbitrary ones.
    pub cache_capacity: usize,
    /// Bytes the cached names may hold (an estimate: the name, the
    /// addresses and ~100 bytes of bookkeeping each); past this, entries go
    /// as for `cache_capacity`.
    pub cache_bytes: usize,
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
            cache_bytes: 8 << 20,
            families: Families::Both,
            journal: false,
        }
    }
}

/// Counters of one resolver (for tests and the end report).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ResolverStats {
    /// Addresses from the cache.
    pub cache_hits: u64,
    /// Failures from the cache (a name known not to resolve, for now).
    pub negative_hits: u64,
    /// Lookups started (one per name per miss, however many callers).
    pub lookups: u64,
    /// Callers that waited for a lookup another caller had started.
    pub shared: u64,
    /// Queries sent (UDP datagrams and TCP exchanges, retries included).
    pub queries: u64,
    /// Answers received to them (any RCODE).
    pub answers: u64,
    /// Queries that got no answer in time.
    pub timeouts: u64,
    /// Queries that waited for a slot (`max_queries_in_flight` were out).
    pub waited: u64,
    /// Lookups that answered before both families were in (AAAA at once,
    /// A after the resolution delay, NXDOMAIN after it).
    pub early: u64,
    /// Families that answered after their lookup had, merged into the
    /// cached answer.
    pub late: u64,
}

/// Resolver of one shard (the shard owns every host it resolves).
pub(crate) struct Resolver {
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
    cache: RefCell<Cache>,
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

impl Resolver {
    /// Reads the hosts file and, unless `opts.nameservers` is given, the
    /// nameservers of `opts.resolv_conf`; a file that cannot be read counts
    /// as empty.
    pub(crate) fn with_options(
        pins: HashMap<(String, u16), Vec<IpAddr>>,
        opts: ResolverOptions,
    ) -> Self {
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
                cache: RefCell::new(Cache::new(opts.cache_capacity, opts.cache_bytes)),
                opts,
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

    pub(crate) fn stats(&self) -> ResolverStats {
        self.inner.stats.get()
    }

    /// Names in the cache and the bytes they hold (an estimate).
    pub(crate) fn cache_usage(&self) -> (usize, usize) {
        let cache = self.inner.cache.borrow();
        (cache.len(), cache.bytes())
    }

    /// The names resolved afresh since the last call, with
    /// [`ResolverOptions::journal`] (else none).
    pub(crate) fn take_lookups(&self) -> Vec<Lookup> {
        self.inner.journal.take()
    }

    /// The addresses to connect to for `host:port` (any case, trailing dot
    /// or not), in the order to try.
    pub(crate) async fn resolve(&self, host: &str, port: u16) -> Result<Addresses, DnsError> {
        let name = canonical_host(host);
        let answer = match self.answer_now(&name, port) {
            Some(answer) => answer,
            None => self
                .lookup(&name)
                .await
                .map(|ips| self.winner_first(&name, addresses(ips, port))),
        };
        answer.map_err(|reason| DnsError {
            host: host.to_string(),
            reason,
        })
    }

    /// What [`Resolver::resolve`] would answer without asking a
    /// nameserver: from a pin, an IP literal, the hosts file, a special
    /// name or the cache (a failure too); None if only a query can tell.
    /// A shard that lends a page of its host to a peer sends these along,
    /// so a host is looked up by its owner only.
    pub(crate) fn resolve_now(&self, host: &str, port: u16) -> Option<Result<Addresses, DnsError>> {
        let name = canonical_host(host);
        let answer = self.answer_now(&name, port)?;
        Some(answer.map_err(|reason| DnsError {
            host: host.to_string(),
            reason,
        }))
    }

    /// `name` (canonical) on `port` from what is known without a query.
    fn answer_now(&self, name: &str, port: u16) -> Option<Result<Addresses, String>> {
        let inner = &self.inner;
        if let Some(ips) = inner.pins.get(&(name.to_string(), port)) {
            return Some(Ok(self.winner_first(name, addresses(ips.clone(), port))));
        }
        let bare = name.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = bare.parse::<IpAddr>() {
            if !inner.opts.families.allows(&ip) {
                return Some(Err(WRONG_FAMILY.to_string()));
            }
            return Some(Ok(Addresses::One(SocketAddr::new(ip, port))));
        }
        // `--resolve '*:PORT:ADDR'`: every name on PORT without a pin of
        // its own, as curl's wildcard.
        if let Some(ips) = inner.pins.get(&("*".to_string(), port)) {
            return Some(Ok(self.winner_first(name, addresses(ips.clone(), port))));
        }
        let answer = self.known(name)?;
        Some(answer.map(|ips| self.winner_first(name, addresses(ips, port))))
    }

    /// `ip` connected to `host` when an address before it in the answer
    /// did not: try it first from now on, whatever gave the addresses (a
    /// pin, the hosts file or DNS), so a broken IPv6 path costs the Happy
    /// Eyeballs delay once per host, not on every connection.
    pub(crate) fn prefer(&self, host: &str, ip: IpAddr) {
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
    /// special names or the cache; None if it takes a lookup.
    fn known(&self, name: &str) -> Option<Answer> {
        let inner = &self.inner;
        if let Some(ips) = inner.hosts.get(name) {
            return Some(Ok(ips.clone()));
        }
        if name == "localhost" || name.ends_with(".localhost") {
            let loopback = [
                IpAddr::V6(Ipv6Addr::LOCALHOST),
                IpAddr::V4(Ipv4Addr::LOCALHOST),
            ];
            return Some(
                happy_order(&loopback, inner.opts.families).ok_or_else(|| WRONG_FAMILY.into()),
            );
        }
        if name == "invalid" || name.ends_with(".invalid") {
            return Some(Err(Rcode::NxDomain.to_string()));
        }
        let answer = inner.cached(name)?;
        match answer {
            Ok(_) => inner.count(|s| s.cache_hits += 1),
            Err(_) => inner.count(|s| s.negative_hits += 1),
        }
        Some(answer)
    }

    /// `name` (lower-cased, no trailing dot): [`Self::known`], else from a
    /// lookup shared with every caller that asks meanwhile.
    async fn lookup(&self, name: &str) -> Answer {
        if let Some(answer) = self.known(name) {
            return answer;
        }
        let inner = &self.inner;
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
            let inner = done.inner.clone();
            inner.run_lookup(&done).await;
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
        self.cache.borrow().get(name, Instant::now())
    }

    fn store(&self, name: &str, answer: Answer, ttl: Duration) {
        let now = Instant::now();
        let expires = now.checked_add(ttl).unwrap_or(now);
        self.cache.borrow_mut().insert(name, answer, expires, now);
    }
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
mod server_tests;

#[cfg(test)]
mod tests {
    use super::*;

    /// `f` on a glommio executor of its own (the resolver's tests'
    /// and `server_tests`').
    pub(super) fn run<T>(f: impl std::future::Future<Output = T>) -> T {
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
                (stats.lookups, stats.negative_hits, stats.queries),
                (1, 1, 2),
                "one lookup: an A and an AAAA query, refused at once"
            );
            assert_eq!((stats.cache_hits, stats.answers), (0, 0));
        });
    }
}
