//! A node's own view of its leases, pure (the time is given): which
//! partitions it may still act for, and when to renew.
//!
//! Redis fences a stale owner's writes ([`super::store`]); this is the
//! other half, on the node: it must stop fetching for a partition before
//! anyone else can have taken it. A lease that Redis extended by `ttl` at
//! some moment after the node *sent* the request is counted valid here
//! until `sent + ttl − ttl / 5`: earlier than Redis lets it expire, by a
//! fifth of the TTL for clock-rate drift and scheduling. So when renewals
//! fail (Redis down, the network cut), [`Leases::expire`] hands the
//! partitions back before another node can acquire them. Time here is the
//! boot clock ([`super::clock`]), which counts a system suspend: a node
//! that slept past its leases wakes up holding none.

use std::collections::BTreeMap;
use std::time::Duration;

use super::clock::Moment;

/// The leases a node holds and until when it may act on each.
#[derive(Debug)]
pub(crate) struct Leases {
    ttl: Duration,
    valid_until: BTreeMap<u32, Moment>,
}

impl Leases {
    pub(crate) fn new(ttl: Duration) -> Self {
        Leases {
            ttl,
            valid_until: BTreeMap::new(),
        }
    }

    /// How often to renew: three tries within a lease's life.
    pub(crate) fn renew_every(&self) -> Duration {
        self.ttl / 3
    }

    /// Redis granted or extended `partition`'s lease in answer to a request
    /// sent at `sent`.
    pub(crate) fn granted(&mut self, partition: u32, sent: Moment) {
        let until = sent + (self.ttl - self.ttl / 5);
        let entry = self.valid_until.entry(partition).or_insert(until);
        *entry = (*entry).max(until);
    }

    /// Redis says the lease is another node's, or it was given up.
    pub(crate) fn lost(&mut self, partition: u32) {
        self.valid_until.remove(&partition);
    }

    /// Whether the node may still fetch and record for `partition` at `now`.
    pub(crate) fn holds(&self, partition: u32, now: Moment) -> bool {
        self.valid_until
            .get(&partition)
            .is_some_and(|&until| now < until)
    }

    /// Until when the node may act for `partition` (None: not held).
    pub(crate) fn until(&self, partition: u32) -> Option<Moment> {
        self.valid_until.get(&partition).copied()
    }

    /// The partitions held, in order.
    pub(crate) fn held(&self) -> Vec<u32> {
        self.valid_until.keys().copied().collect()
    }

    /// Forgets and returns the leases no renewal kept valid until `now`.
    pub(crate) fn expire(&mut self, now: Moment) -> Vec<u32> {
        let gone: Vec<u32> = self
            .valid_until
            .iter()
            .filter(|&(_, &until)| until <= now)
            .map(|(&p, _)| p)
            .collect();
        for p in &gone {
            self.valid_until.remove(p);
        }
        gone
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTL: Duration = Duration::from_secs(10);

    #[test]
    fn a_lease_is_valid_here_for_four_fifths_of_its_ttl_from_the_request() {
        let t0 = Moment::now();
        let mut leases = Leases::new(TTL);
        leases.granted(7, t0);
        assert!(leases.holds(7, t0 + Duration::from_millis(7_999)));
        assert!(
            !leases.holds(7, t0 + Duration::from_secs(8)),
            "Redis keeps it 2 s longer"
        );
        assert!(!leases.holds(8, t0));
        assert_eq!(leases.held(), [7]);
    }

    #[test]
    fn renewals_extend_and_a_late_answer_to_an_old_request_does_not_shorten() {
        let t0 = Moment::now();
        let mut leases = Leases::new(TTL);
        leases.granted(1, t0);
        leases.granted(1, t0 + Duration::from_secs(3));
        assert!(leases.holds(1, t0 + Duration::from_secs(10)));
        leases.granted(1, t0 + Duration::from_secs(1));
        assert!(leases.holds(1, t0 + Duration::from_secs(10)));
        assert_eq!(leases.renew_every(), TTL / 3);
    }

    #[test]
    fn without_renewals_the_leases_expire_here_before_anyone_else_can_take_them() {
        let t0 = Moment::now();
        let mut leases = Leases::new(TTL);
        leases.granted(1, t0);
        leases.granted(2, t0 + Duration::from_secs(5));
        assert!(leases.expire(t0 + Duration::from_secs(7)).is_empty());
        assert_eq!(leases.expire(t0 + Duration::from_secs(8)), [1]);
        assert_eq!(leases.held(), [2]);
        leases.lost(2);
        assert!(leases.held().is_empty());
    }
}
