//! The shard's TLS session cache: what rustls keeps to resume a session
//! (TLS 1.3 tickets, a TLS 1.2 session, the key-exchange group the server
//! chose), keyed by server name *and port*, bounded by bytes.
//!
//! rustls asks its store by server name only. A [`SessionStore`] is one
//! shard's cache; each port gets a [`PortSessions`] view of it, set as the
//! resumption store of that port's `ClientConfig` (`super::TlsClient`
//! keeps one config per port), which adds the port to every key: two
//! servers on one name never resume each other's sessions.
//!
//! Bounded: at most `per_key` tickets a key (the oldest goes when another
//! arrives), and at most `limit` bytes in all, least recently used keys
//! evicted first. rustls gives no access to what a session holds, so the
//! bytes are an estimate: a fixed [`VALUE_BYTES`] a value (the ticket, its
//! secret and rustls' structure), plus the server's certificate chain,
//! which every value holds a copy of (its length as the last connection
//! to the key saw it, [`SessionStore::note_chain`], or [`FIRST_CHAIN`]
//! until one did), plus [`KEY_BYTES`] and the name for the key.
//!
//! Not here: whether a connection should wait for a session
//! (`super::sessions`); which config a connection uses (`super`).
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use lru::LruCache;
use rustls::client::{ClientSessionStore, Tls12ClientSessionValue, Tls13ClientSessionValue};
use rustls::NamedGroup;
use rustls_pki_types::{CertificateDer, ServerName};

/// Whose sessions: a server name and the port it was reached on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct SessionKey {
    pub name: ServerName<'static>,
    pub port: u16,
}

impl SessionKey {
    pub(crate) fn new(name: ServerName<'static>, port: u16) -> Self {
        SessionKey { name, port }
    }

    fn of(name: &ServerName<'_>, port: u16) -> Self {
        SessionKey {
            name: name.to_owned(),
            port,
        }
    }

    /// Heap bytes of the name.
    fn name_bytes(&self) -> usize {
        match &self.name {
            ServerName::DnsName(name) => name.as_ref().len(),
            _ => 0,
        }
    }
}

/// A stored value's bytes besides its certificate chain: rustls' value
/// (~200 bytes), its ticket (rustls' and OpenSSL's are 150-250 bytes) and
/// secret (48), and their allocations. An estimate: rustls shows none of it.
pub(super) const VALUE_BYTES: usize = 512;

/// A key's bytes besides its name and values: the key and entry structures
/// and the LRU's node, hash slot and allocation.
pub(super) const KEY_BYTES: usize = 256;

/// The chain charged to a value stored before any connection to its key
/// said how long the chain is: about the longest common web chain (a leaf
/// of ~1.5-2 KiB and an intermediate of ~1-1.5 KiB).
pub(super) const FIRST_CHAIN: usize = 4 << 10;

/// Bytes a stored value holds for `chain`: each certificate's DER and its
/// vector, and the chain's own vector and `Arc`.
pub(super) fn chain_bytes(chain: &[CertificateDer<'_>]) -> usize {
    chain.iter().map(|cert| cert.len() + 32).sum::<usize>() + 48
}

/// What the cache holds, for the report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(
    not(feature = "bench-hooks"),
    allow(unreachable_pub, reason = "for bench_hooks")
)]
pub struct StoreCounts {
    /// Keys (name, port) held.
    pub keys: usize,
    /// Their estimated bytes.
    pub bytes: usize,
    /// Keys evicted to stay within the bound.
    pub evictions: u64,
}

/// One shard's session cache (see the module doc), shared by the
/// [`PortSessions`] of its ports. A mutex because rustls wants a `Sync`
/// store; only the shard's thread ever takes it.
#[derive(Debug)]
pub(super) struct SessionStore {
    cache: Mutex<Cache<Tls13ClientSessionValue, Tls12ClientSessionValue>>,
}

impl SessionStore {
    /// A cache of at most `limit` bytes and `per_key` tickets a key.
    pub(super) fn new(limit: usize, per_key: usize) -> Self {
        SessionStore {
            cache: Mutex::new(Cache::new(limit, per_key)),
        }
    }

    fn cache(&self) -> MutexGuard<'_, Cache<Tls13ClientSessionValue, Tls12ClientSessionValue>> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The certificate chain a connection to `key` saw: what each of its
    /// stored values holds a copy of (a key not held is left alone: rustls
    /// stores what it stores during the handshake, before this is known,
    /// and TLS 1.3 tickets come after it).
    pub(super) fn note_chain(&self, key: &SessionKey, chain: &[CertificateDer<'_>]) {
        self.cache().note_chain(key, chain_bytes(chain));
    }

    /// Whether a new connection to `key` can resume; counts a ticket out
    /// for it (rustls takes it when the connection starts).
    pub(super) fn reserve(&self, key: &SessionKey) -> bool {
        self.cache().reserve(key)
    }

    /// TLS 1.3 tickets received for `key` while it was held.
    pub(super) fn received(&self, key: &SessionKey) -> u64 {
        self.cache().received(key)
    }

    pub(super) fn counts(&self) -> StoreCounts {
        self.cache().counts()
    }
}

/// The view of a [`SessionStore`] for connections to one port: what
/// rustls is given as a config's store.
#[derive(Debug)]
pub(super) struct PortSessions {
    port: u16,
    store: Arc<SessionStore>,
}

impl PortSessions {
    pub(super) fn new(port: u16, store: Arc<SessionStore>) -> Self {
        PortSessions { port, store }
    }

    fn key(&self, name: &ServerName<'_>) -> SessionKey {
        SessionKey::of(name, self.port)
    }
}

impl ClientSessionStore for PortSessions {
    fn set_kx_hint(&self, name: ServerName<'static>, group: NamedGroup) {
        let key = SessionKey::new(name, self.port);
        self.store
            .cache()
            .edit(&key, true, |e| e.kx_hint = Some(group));
    }

    fn kx_hint(&self, name: &ServerName<'_>) -> Option<NamedGroup> {
        self.store.cache().kx_hint(&self.key(name))
    }

    fn set_tls12_session(&self, name: ServerName<'static>, value: Tls12ClientSessionValue) {
        let key = SessionKey::new(name, self.port);
        self.store
            .cache()
            .edit(&key, true, |e| e.tls12 = Some(value));
    }

    fn tls12_session(&self, name: &ServerName<'_>) -> Option<Tls12ClientSessionValue> {
        self.store.cache().tls12(&self.key(name))
    }

    fn remove_tls12_session(&self, name: &ServerName<'static>) {
        self.store
            .cache()
            .edit(&self.key(name), false, |e| e.tls12 = None);
    }

    fn insert_tls13_ticket(&self, name: ServerName<'static>, value: Tls13ClientSessionValue) {
        let key = SessionKey::new(name, self.port);
        self.store.cache().insert_ticket(&key, value);
    }

    fn take_tls13_ticket(&self, name: &ServerName<'static>) -> Option<Tls13ClientSessionValue> {
        self.store.cache().take_ticket(&self.key(name))
    }
}

/// The cache itself, over any value types (the tests store small stand-ins:
/// rustls' values cannot be made outside rustls).
#[derive(Debug)]
pub(super) struct Cache<T13, T12> {
    entries: LruCache<SessionKey, Entry<T13, T12>>,
    /// Estimated bytes of all entries.
    bytes: usize,
    limit: usize,
    per_key: usize,
    evictions: u64,
}

/// What is held for one key.
#[derive(Debug)]
pub(super) struct Entry<T13, T12> {
    pub(super) kx_hint: Option<NamedGroup>,
    pub(super) tls12: Option<T12>,
    /// Oldest first; rustls takes the newest (as its own cache does).
    pub(super) tickets: VecDeque<T13>,
    /// Bytes of the chain each value holds.
    chain: usize,
    /// Tickets not yet counted out for a connection ([`Cache::reserve`]):
    /// at most `tickets.len()`.
    pub(super) unreserved: usize,
    /// TLS 1.3 tickets received, ever (while held).
    pub(super) received: u64,
    /// This entry's bytes as last counted into [`Cache::bytes`].
    weight: usize,
}

impl<T13, T12> Entry<T13, T12> {
    fn new() -> Self {
        Entry {
            kx_hint: None,
            tls12: None,
            tickets: VecDeque::new(),
            chain: chain_bytes(&[]) + FIRST_CHAIN,
            unreserved: 0,
            received: 0,
            weight: 0,
        }
    }

    fn weight(&self, key: &SessionKey) -> usize {
        let values = self.tickets.len() + usize::from(self.tls12.is_some());
        KEY_BYTES + key.name_bytes() + values * (VALUE_BYTES + self.chain)
    }
}

impl<T13, T12: Clone> Cache<T13, T12> {
    pub(super) fn new(limit: usize, per_key: usize) -> Self {
        Cache {
            entries: LruCache::unbounded(),
            bytes: 0,
            limit,
            per_key: per_key.max(1),
            evictions: 0,
        }
    }

    /// Apply `f` to `key`'s entry (made if `create`), mark it the most
    /// recently used, count its bytes again, and evict past the limit.
    pub(super) fn edit(
        &mut self,
        key: &SessionKey,
        create: bool,
        f: impl FnOnce(&mut Entry<T13, T12>),
    ) {
        let entry = if create {
            self.entries.get_or_insert_mut(key.clone(), Entry::new)
        } else {
            match self.entries.get_mut(key) {
                Some(entry) => entry,
                None => return,
            }
        };
        let before = entry.weight;
        f(entry);
        entry.unreserved = entry.unreserved.min(entry.tickets.len());
        entry.weight = entry.weight(key);
        self.bytes = self.bytes.saturating_sub(before) + entry.weight;
        while self.bytes > self.limit {
            let Some((_, evicted)) = self.entries.pop_lru() else {
                break;
            };
            self.bytes = self.bytes.saturating_sub(evicted.weight);
            self.evictions += 1;
        }
    }

    pub(super) fn insert_ticket(&mut self, key: &SessionKey, ticket: T13) {
        let per_key = self.per_key;
        self.edit(key, true, |e| {
            e.tickets.push_back(ticket);
            while e.tickets.len() > per_key {
                e.tickets.pop_front();
            }
            e.unreserved += 1;
            e.received += 1;
        });
    }

    pub(super) fn take_ticket(&mut self, key: &SessionKey) -> Option<T13> {
        let mut ticket = None;
        self.edit(key, false, |e| ticket = e.tickets.pop_back());
        ticket
    }

    pub(super) fn tls12(&mut self, key: &SessionKey) -> Option<T12> {
        self.entries.get(key).and_then(|e| e.tls12.clone())
    }

    fn kx_hint(&mut self, key: &SessionKey) -> Option<NamedGroup> {
        self.entries.get(key).and_then(|e| e.kx_hint)
    }

    /// Reweigh `key`'s values, if it is held, for a chain of `bytes`.
    pub(super) fn note_chain(&mut self, key: &SessionKey, bytes: usize) {
        self.edit(key, false, |e| e.chain = bytes);
    }

    pub(super) fn reserve(&mut self, key: &SessionKey) -> bool {
        let Some(entry) = self.entries.peek_mut(key) else {
            return false;
        };
        if entry.tls12.is_some() {
            return true;
        }
        if entry.unreserved > 0 {
            entry.unreserved -= 1;
            return true;
        }
        false
    }

    pub(super) fn received(&self, key: &SessionKey) -> u64 {
        self.entries.peek(key).map_or(0, |e| e.received)
    }

    pub(super) fn counts(&self) -> StoreCounts {
        StoreCounts {
            keys: self.entries.len(),
            bytes: self.bytes,
            evictions: self.evictions,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in for rustls' values.
    type Fake = Cache<u32, u32>;

    fn key(name: &str, port: u16) -> SessionKey {
        SessionKey::new(ServerName::try_from(name.to_string()).unwrap(), port)
    }

    fn chain(len: usize) -> usize {
        chain_bytes(&[CertificateDer::from(vec![0u8; len])])
    }

    /// The bytes counted are the sum of what the entries weigh now.
    fn recount(cache: &Fake) -> usize {
        cache.entries.iter().map(|(k, e)| e.weight(k)).sum()
    }

    #[test]
    fn twenty_thousand_hosts_sessions_stay_within_the_bytes_bound() {
        let limit = 8 << 20;
        let mut cache = Fake::new(limit, 2);
        let mut peak = 0;
        for host in 0..20_000u32 {
            let k = key(&format!("h{host}.example.com"), 443);
            cache.edit(&k, true, |e| e.kx_hint = Some(NamedGroup::X25519));
            // Two tickets a full handshake, each holding a 3 KiB chain.
            cache.insert_ticket(&k, 1);
            cache.note_chain(&k, chain(3 << 10));
            cache.insert_ticket(&k, 2);
            peak = peak.max(cache.counts().bytes);
            assert!(cache.counts().bytes <= limit);
        }
        let counts = cache.counts();
        assert_eq!(counts.bytes, recount(&cache), "the count is exact");
        // Each host: 256 + ~16 of key, 2 x (512 + 3,152) of tickets.
        let per_host = KEY_BYTES + 16 + 2 * (VALUE_BYTES + chain(3 << 10));
        assert!(
            counts.keys >= limit / per_host - 1 && counts.keys <= limit / per_host + 1,
            "{counts:?}, {per_host} bytes a host"
        );
        assert_eq!(counts.evictions, 20_000 - counts.keys as u64);
        assert!(peak <= limit && peak > limit - per_host, "{peak}");
        println!("20,000 hosts: {counts:?}, peak {peak} bytes, {per_host} bytes a host");
        // The most recent hosts are the ones held.
        assert!(cache
            .entries
            .peek(&key("h19999.example.com", 443))
            .is_some());
        assert!(cache.entries.peek(&key("h0.example.com", 443)).is_none());
    }

    #[test]
    fn a_used_key_outlives_newer_unused_ones() {
        let per_host = KEY_BYTES + 6 + VALUE_BYTES + chain_bytes(&[]) + FIRST_CHAIN;
        let mut cache = Fake::new(3 * per_host, 4);
        for name in ["a.test", "b.test", "c.test"] {
            cache.insert_ticket(&key(name, 443), 1);
        }
        assert_eq!(cache.counts().keys, 3);
        // a.test resumes (and gets a new ticket): b.test is now the least
        // recently used.
        assert_eq!(cache.take_ticket(&key("a.test", 443)), Some(1));
        cache.insert_ticket(&key("a.test", 443), 2);
        cache.insert_ticket(&key("d.test", 443), 1);
        assert!(cache.entries.peek(&key("b.test", 443)).is_none());
        assert!(cache.entries.peek(&key("a.test", 443)).is_some());
        assert_eq!(cache.counts().evictions, 1);
        assert_eq!(cache.counts().bytes, recount(&cache));
    }

    #[test]
    fn tickets_are_kept_per_name_and_port_and_a_few_a_key() {
        let mut cache = Fake::new(1 << 20, 2);
        let (https, alt) = (key("a.test", 443), key("a.test", 8443));
        for t in 1..=5 {
            cache.insert_ticket(&https, t);
        }
        assert_eq!(cache.take_ticket(&alt), None, "another port's tickets");
        assert_eq!(cache.take_ticket(&https), Some(5), "the newest first");
        assert_eq!(cache.take_ticket(&https), Some(4));
        assert_eq!(cache.take_ticket(&https), None, "two kept a key");
        assert_eq!(cache.received(&https), 5);
        assert_eq!(cache.received(&alt), 0);
        cache.edit(&alt, true, |e| e.tls12 = Some(7));
        assert_eq!(cache.tls12(&alt), Some(7));
        assert_eq!(cache.tls12(&alt), Some(7), "a TLS 1.2 session is reused");
        assert_eq!(cache.tls12(&https), None);
        assert_eq!(cache.counts().bytes, recount(&cache));
    }

    #[test]
    fn a_noted_chain_reweighs_the_values_already_held() {
        let mut cache = Fake::new(1 << 20, 4);
        let k = key("a.test", 443);
        cache.insert_ticket(&k, 1);
        let first = cache.counts().bytes;
        assert_eq!(
            first,
            KEY_BYTES + 6 + VALUE_BYTES + chain_bytes(&[]) + FIRST_CHAIN
        );
        cache.note_chain(&k, chain(10_000));
        assert_eq!(
            cache.counts().bytes,
            KEY_BYTES + 6 + VALUE_BYTES + chain(10_000)
        );
        cache.take_ticket(&k);
        assert_eq!(cache.counts().bytes, KEY_BYTES + 6);
        cache.edit(&k, false, |e| e.tls12 = None);
        // Removing what is not there makes no entry.
        cache.edit(&key("b.test", 443), false, |e| e.tls12 = None);
        assert_eq!(cache.counts().keys, 1);
    }

    #[test]
    fn one_entry_larger_than_the_bound_is_not_kept() {
        let mut cache = Fake::new(1000, 2);
        cache.insert_ticket(&key("a.test", 443), 1);
        assert_eq!(
            cache.counts(),
            StoreCounts {
                keys: 0,
                bytes: 0,
                evictions: 1
            }
        );
        assert_eq!(cache.take_ticket(&key("a.test", 443)), None);
    }

    #[test]
    fn reserving_counts_tickets_out_and_tls12_sessions_are_reusable() {
        let mut cache = Fake::new(1 << 20, 4);
        let a = key("a.test", 443);
        assert!(!cache.reserve(&a));
        cache.insert_ticket(&a, 1);
        cache.insert_ticket(&a, 2);
        assert!(cache.reserve(&a) && cache.reserve(&a));
        assert!(!cache.reserve(&a), "two tickets, two resumptions");
        // Taken by connections that reserved them: nothing left to count.
        cache.take_ticket(&a);
        cache.take_ticket(&a);
        cache.insert_ticket(&a, 3);
        assert!(cache.reserve(&a));
        assert!(!cache.reserve(&a));
        cache.edit(&a, true, |e| e.tls12 = Some(1));
        assert!(cache.reserve(&a) && cache.reserve(&a));
    }
}
