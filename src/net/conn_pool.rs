//! Idle keep-alive connections of one shard, by endpoint (for the crawler:
//! scheme, server address and TLS server name): where a fetch finds a
//! connection to reuse and leaves one the server kept open.
//!
//! Pure bookkeeping, generic over the key and the connection type and given
//! the time, so it is tested without sockets. It does not decide whether a connection may
//! be reused (that is [`crate::net::fetch`]'s reading of the response) nor try it.
//! Dropping a connection closes it.

use std::hash::Hash;
use std::time::{Duration, Instant};

/// How long a connection may sit idle and still be handed out. Servers close
/// idle keep-alive connections after their own timeout (5 s is common:
/// Apache, Node; nginx's default is 75 s); staying well under it means a
/// reused connection has rarely been closed under us, and when it has, the
/// fetch notices before any byte of the answer and reconnects.
pub(crate) const IDLE_FOR: Duration = Duration::from_secs(2);

/// How often [`ConnPool::put`] closes the connections idle longer than
/// [`IDLE_FOR`]: those to hosts the crawl is done with would otherwise hold
/// a file descriptor, a server slot and a place in the pool until the end.
pub(crate) const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// Idle connections, newest last per key, at most `cap` in all.
#[derive(Debug)]
pub(crate) struct ConnPool<K, C> {
    idle: foldhash::HashMap<K, Vec<(C, Instant)>>,
    /// Connections held, over all keys.
    held: usize,
    /// Most connections held at once: each is an open file descriptor.
    cap: usize,
    /// When `put` next closes what has been idle too long; set by the first.
    next_sweep: Option<Instant>,
}

impl<K: Hash + Eq, C> ConnPool<K, C> {
    pub(crate) fn new(cap: usize) -> Self {
        ConnPool {
            idle: foldhash::HashMap::default(),
            held: 0,
            cap,
            next_sweep: None,
        }
    }

    /// The most recently idled connection to `key` that has been idle less
    /// than [`IDLE_FOR`] at `now`; older ones to `key` are dropped.
    pub(crate) fn take(&mut self, key: &K, now: Instant) -> Option<C> {
        let conns = self.idle.get_mut(key)?;
        let fresh = conns
            .iter()
            .position(|(_, since)| now.saturating_duration_since(*since) < IDLE_FOR);
        let stale = fresh.unwrap_or(conns.len());
        conns.drain(..stale);
        let taken = conns.pop().map(|(conn, _)| conn);
        let left = conns.len();
        if left == 0 {
            self.idle.remove(key);
        }
        self.held = self
            .held
            .saturating_sub(stale + usize::from(taken.is_some()));
        taken
    }

    /// Keep `conn` to `key`, idle since `now`; dropped (closed) instead if
    /// the pool is full. At most every [`SWEEP_EVERY`], first closes every
    /// connection idle for [`IDLE_FOR`] or more.
    pub(crate) fn put(&mut self, key: K, conn: C, now: Instant) {
        match self.next_sweep {
            Some(at) if now >= at => self.close_idle_too_long(now),
            Some(_) => {}
            None => self.next_sweep = Some(now + SWEEP_EVERY),
        }
        if self.held < self.cap {
            self.idle.entry(key).or_default().push((conn, now));
            self.held += 1;
        }
    }

    fn close_idle_too_long(&mut self, now: Instant) {
        self.idle.retain(|_, conns| {
            conns.retain(|(_, since)| now.saturating_duration_since(*since) < IDLE_FOR);
            !conns.is_empty()
        });
        self.held = self.idle.values().map(Vec::len).sum();
        self.next_sweep = Some(now + SWEEP_EVERY);
    }

    /// Connections held now.
    pub(crate) fn held(&self) -> usize {
        self.held
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    #[test]
    fn the_newest_connection_to_the_same_address_comes_back() {
        let now = Instant::now();
        let mut pool = ConnPool::new(8);
        pool.put(addr(1), "old", now);
        pool.put(addr(1), "new", now + Duration::from_millis(1));
        pool.put(addr(2), "other", now);
        let later = now + Duration::from_millis(5);
        assert_eq!(pool.take(&addr(1), later), Some("new"));
        assert_eq!(pool.take(&addr(1), later), Some("old"));
        assert_eq!(pool.take(&addr(1), later), None);
        assert_eq!(pool.take(&addr(3), later), None);
        assert_eq!(pool.held(), 1);
    }

    #[test]
    fn connections_idle_too_long_are_dropped_not_handed_out() {
        let now = Instant::now();
        let mut pool = ConnPool::new(8);
        let soon = now + SWEEP_EVERY / 2;
        pool.put(addr(1), 1, now);
        pool.put(addr(1), 2, soon);
        assert_eq!(pool.held(), 2, "no sweep yet: take must drop the old one");
        assert_eq!(pool.take(&addr(1), now + IDLE_FOR), Some(2));
        assert_eq!(pool.held(), 0);
        pool.put(addr(1), 3, now);
        assert_eq!(pool.take(&addr(1), now + IDLE_FOR * 2), None);
        assert_eq!(pool.held(), 0);
    }

    #[test]
    fn a_full_pool_closes_what_it_cannot_hold() {
        let now = Instant::now();
        let mut pool = ConnPool::new(2);
        for n in 0..5 {
            pool.put(addr(1), n, now);
        }
        assert_eq!(pool.held(), 2);
        let mut none = ConnPool::new(0);
        none.put(addr(1), 0, now);
        assert_eq!(none.take(&addr(1), now), None);
    }

    #[test]
    fn a_pool_full_of_connections_to_finished_hosts_makes_room() {
        let now = Instant::now();
        let mut pool = ConnPool::new(3);
        for port in 1..=3 {
            pool.put(addr(port), port, now);
        }
        let later = now + IDLE_FOR * 2;
        pool.put(addr(9), 9, later);
        assert_eq!(pool.held(), 1);
        assert_eq!(pool.take(&addr(9), later), Some(9));
    }

    #[test]
    fn a_connection_is_handed_out_only_for_its_own_key() {
        let now = Instant::now();
        let mut pool = ConnPool::new(8);
        pool.put((addr(1), Some("a.test")), "tls a", now);
        pool.put((addr(1), None), "plain", now);
        assert_eq!(pool.take(&(addr(1), Some("b.test")), now), None);
        assert_eq!(pool.take(&(addr(1), Some("a.test")), now), Some("tls a"));
        assert_eq!(pool.take(&(addr(1), None), now), Some("plain"));
    }

    #[test]
    fn connections_nobody_asks_for_are_closed_once_too_old() {
        let now = Instant::now();
        let mut pool = ConnPool::new(8);
        pool.put(addr(1), 1, now);
        pool.put(addr(2), 2, now + IDLE_FOR);
        pool.put(addr(3), 3, now + IDLE_FOR + SWEEP_EVERY);
        assert_eq!(pool.held(), 2);
        assert_eq!(pool.take(&addr(2), now + IDLE_FOR + SWEEP_EVERY), Some(2));
    }
}
