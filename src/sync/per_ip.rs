//! The crawl-wide count of fetches in flight to each server address
//! (`--per-ip`): [`PerIp`], shared by every shard through an `Arc`, and
//! [`IpSlot`], one fetch's place in it, given back when dropped.
//!
//! Hosts are spread over the shards by a hash of their name, so the
//! hundreds of names of one shared server live on every shard: the count
//! has to be one for the crawl. It is a map from address to count behind
//! one mutex, held for a lookup and an add (never across an `.await`, and
//! no other lock is taken under it, so it cannot deadlock); a shard that
//! finds an address full does not wait: [`PerIp::try_acquire`] says no and
//! the caller puts the page back for later. An address is in the map only
//! while a fetch to it runs, so the map holds at most one entry a fetch in
//! flight (`--max-tasks`), whatever the number of hosts. The slot gives
//! its place back in `Drop`: on every path out of a fetch, an error, a
//! panic unwinding, or the fetch's task dropped (cancelled) at an `.await`.
//!
//! A leaf: it knows addresses, not hosts, fetches or the frontier.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// At most `limit` fetches in flight to one address, over all shards.
#[derive(Debug)]
pub(crate) struct PerIp {
    limit: u32,
    in_flight: Mutex<HashMap<IpAddr, u32>>,
}

/// A fetch's place among those of its address; given back on drop.
#[derive(Debug)]
#[must_use = "the place is given back when this is dropped"]
pub(crate) struct IpSlot {
    table: Arc<PerIp>,
    ip: IpAddr,
}

impl PerIp {
    /// A table letting `limit` (at least 1) fetches at once to an address.
    pub(crate) fn new(limit: u32) -> Arc<PerIp> {
        Arc::new(PerIp {
            limit: limit.max(1),
            in_flight: Mutex::new(HashMap::new()),
        })
    }

    /// The most fetches at once to one address.
    pub(crate) fn limit(&self) -> u32 {
        self.limit
    }

    /// A place for a fetch to `ip`, if fewer than the limit run there now;
    /// never waits (but for the lock, held by others for a map lookup).
    pub(crate) fn try_acquire(self: &Arc<Self>, ip: IpAddr) -> Option<IpSlot> {
        let mut map = self.lock();
        let count = map.entry(ip).or_insert(0);
        if *count >= self.limit {
            return None;
        }
        *count += 1;
        Some(IpSlot {
            table: self.clone(),
            ip,
        })
    }

    /// Fetches in flight to `ip` now.
    pub(crate) fn in_flight(&self, ip: IpAddr) -> u32 {
        self.lock().get(&ip).copied().unwrap_or(0)
    }

    /// Addresses with a fetch in flight now (the map's size).
    #[cfg(test)]
    pub(crate) fn addresses(&self) -> usize {
        self.lock().len()
    }

    /// The map; a panic elsewhere while it was held (there is none that
    /// can: a lookup, an add) leaves the counts as they were.
    fn lock(&self) -> MutexGuard<'_, HashMap<IpAddr, u32>> {
        self.in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl IpSlot {
    /// The address this place is at.
    #[cfg(test)]
    pub(crate) fn ip(&self) -> IpAddr {
        self.ip
    }
}

impl Drop for IpSlot {
    fn drop(&mut self) {
        let mut map = self.table.lock();
        if let Some(count) = map.get_mut(&self.ip) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                map.remove(&self.ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    #[test]
    fn an_address_takes_its_limit_and_no_more_others_are_apart() {
        let t = PerIp::new(2);
        let one = t.try_acquire(ip(1)).unwrap();
        let two = t.try_acquire(ip(1)).unwrap();
        assert!(t.try_acquire(ip(1)).is_none(), "full");
        let other = t.try_acquire(ip(2)).unwrap();
        assert_eq!((t.in_flight(ip(1)), t.in_flight(ip(2))), (2, 1));
        drop(one);
        let three = t.try_acquire(ip(1)).unwrap();
        assert_eq!(three.ip(), ip(1));
        drop((two, three, other));
        assert_eq!(t.addresses(), 0, "an address leaves with its last fetch");
    }

    #[test]
    fn a_place_is_given_back_on_every_path_out() {
        let t = PerIp::new(1);
        // An error path: the slot lives in a function that returns early.
        let fetch = |fail: bool| -> Result<(), ()> {
            let _slot = t.try_acquire(ip(1)).ok_or(())?;
            if fail {
                return Err(());
            }
            Ok(())
        };
        assert!(fetch(true).is_err());
        assert!(fetch(false).is_ok());
        // A panic unwinding through the holder.
        let held = t.clone();
        let _ = std::thread::spawn(move || {
            let _slot = held.try_acquire(ip(1)).unwrap();
            panic!("the fetch's task dies");
        })
        .join();
        // A future dropped at an await (a cancelled task).
        let pending = {
            let slot = t.try_acquire(ip(1)).unwrap();
            async move {
                std::future::pending::<()>().await;
                drop(slot);
            }
        };
        assert!(t.try_acquire(ip(1)).is_none(), "held by the future");
        drop(pending);
        assert_eq!(t.in_flight(ip(1)), 0);
        assert!(t.try_acquire(ip(1)).is_some());
    }

    #[test]
    fn the_map_holds_only_addresses_with_fetches_in_flight() {
        let t = PerIp::new(3);
        for round in 0..1000u32 {
            let addr = IpAddr::from(round.to_be_bytes());
            let slot = t.try_acquire(addr).unwrap();
            assert_eq!(t.addresses(), 1);
            drop(slot);
        }
        assert_eq!(t.addresses(), 0);
    }

    #[test]
    fn threads_never_hold_more_than_the_limit_at_once() {
        use std::sync::atomic::{AtomicU32, Ordering};
        let t = PerIp::new(3);
        let now = Arc::new(AtomicU32::new(0));
        let most = Arc::new(AtomicU32::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (t, now, most) = (t.clone(), now.clone(), most.clone());
                std::thread::spawn(move || {
                    for _ in 0..2000 {
                        if let Some(slot) = t.try_acquire(ip(9)) {
                            let n = now.fetch_add(1, Ordering::SeqCst) + 1;
                            most.fetch_max(n, Ordering::SeqCst);
                            now.fetch_sub(1, Ordering::SeqCst);
                            drop(slot);
                        }
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert!(most.load(Ordering::SeqCst) <= 3);
        assert_eq!(t.addresses(), 0);
    }
}
