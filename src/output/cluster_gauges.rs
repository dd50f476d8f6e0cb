//! A cluster node's live numbers (`--cluster` with a status server): the
//! partitions it holds, its lease renewals, and the backlog of its
//! partitions' streams, kept by the node's cluster thread in relaxed
//! atomics ([`ClusterGauges`]) and read into a [`LiveSnapshot`]'s
//! `cluster` ([`ClusterNow`]).
//!
//! The cluster thread writes them as it goes (a store a renewal, a take,
//! a loss), and asks Redis for its partitions' backlog about once a
//! second only while someone can read them (a [`Live`] handle exists):
//! the shards never touch them.
//!
//! Not the whole crawl's numbers (`ringcrawl cluster status`, read from
//! Redis by `cluster::store`), nor their Prometheus text (`metrics.rs`).
//!
//! [`LiveSnapshot`]: crate::output::live::LiveSnapshot
//! [`Live`]: crate::output::live::Live

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

use serde::Serialize;

/// The cluster thread's counters, shared with the readers of a [`Live`].
///
/// [`Live`]: crate::output::live::Live
#[derive(Debug, Default)]
pub(crate) struct ClusterGauges {
    partitions: AtomicU64,
    held: AtomicU64,
    taken: AtomicU64,
    released: AtomicU64,
    renewed: AtomicU64,
    renewals_failed: AtomicU64,
    records: AtomicU64,
    disconnects: AtomicU64,
    connected: AtomicBool,
    unread: AtomicU64,
    in_flight: AtomicU64,
    backlog_read: AtomicBool,
}

impl ClusterGauges {
    /// The crawl has `n` partitions.
    pub(crate) fn set_partitions(&self, n: u32) {
        self.partitions.store(u64::from(n), Relaxed);
    }

    /// The node holds `n` leases now.
    pub(crate) fn set_held(&self, n: usize) {
        self.held.store(n as u64, Relaxed);
    }

    /// A partition was taken (a new tenure).
    pub(crate) fn taken(&self) {
        self.taken.fetch_add(1, Relaxed);
    }

    /// A partition was lost or given up.
    pub(crate) fn released(&self) {
        self.released.fetch_add(1, Relaxed);
    }

    /// Leases renewed (`done`) and not (`failed`: another node's now, or
    /// the round trip failed) in one round.
    pub(crate) fn renewals(&self, done: usize, failed: usize) {
        self.renewed.fetch_add(done as u64, Relaxed);
        self.renewals_failed.fetch_add(failed as u64, Relaxed);
    }

    /// Records reported done in all (the node's report's count).
    pub(crate) fn set_records(&self, n: u64) {
        self.records.store(n, Relaxed);
    }

    /// The connection to Redis is up, or was lost (counted).
    pub(crate) fn set_connected(&self, up: bool) {
        if !up && self.connected.swap(false, Relaxed) {
            self.disconnects.fetch_add(1, Relaxed);
        }
        self.connected.store(up, Relaxed);
    }

    /// The streams of the partitions held, as last read: entries not read
    /// yet, and read and not done.
    pub(crate) fn set_backlog(&self, unread: u64, in_flight: u64) {
        self.unread.store(unread, Relaxed);
        self.in_flight.store(in_flight, Relaxed);
        self.backlog_read.store(true, Relaxed);
    }

    /// The numbers now.
    pub(crate) fn now(&self) -> ClusterNow {
        ClusterNow {
            partitions: self.partitions.load(Relaxed),
            partitions_held: self.held.load(Relaxed),
            partitions_taken: self.taken.load(Relaxed),
            partitions_released: self.released.load(Relaxed),
            lease_renewals: self.renewed.load(Relaxed),
            lease_renewals_failed: self.renewals_failed.load(Relaxed),
            records_reported: self.records.load(Relaxed),
            connected: self.connected.load(Relaxed),
            disconnects: self.disconnects.load(Relaxed),
            backlog: self.backlog_read.load(Relaxed).then(|| Backlog {
                unread: self.unread.load(Relaxed),
                in_flight: self.in_flight.load(Relaxed),
            }),
        }
    }
}

/// A cluster node's numbers at one instant (see the module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
#[allow(missing_docs)]
pub struct ClusterNow {
    /// The crawl's partitions.
    pub partitions: u64,
    /// Partitions whose lease this node holds now.
    pub partitions_held: u64,
    /// Partitions taken, and lost or given up, since it started.
    pub partitions_taken: u64,
    pub partitions_released: u64,
    /// Leases renewed, one a partition a round, and renewals that failed
    /// (the partition was another node's, or Redis did not answer).
    pub lease_renewals: u64,
    pub lease_renewals_failed: u64,
    /// Records this node reported done to Redis.
    pub records_reported: u64,
    /// Connected to Redis now; connections lost since it started.
    pub connected: bool,
    pub disconnects: u64,
    /// Its partitions' streams as last read (about once a second); None
    /// before the first read.
    pub backlog: Option<Backlog>,
}

/// The entries of a node's partitions' streams.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Backlog {
    /// Not read by any node yet.
    pub unread: u64,
    /// Read by a node, not done yet (pending in the stream's group).
    pub in_flight: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renewals_add_up_and_a_lost_connection_counts_once() {
        let g = ClusterGauges::default();
        assert_eq!(g.now().backlog, None, "not read yet");
        g.set_connected(true);
        g.renewals(3, 0);
        g.renewals(2, 1);
        g.set_connected(false);
        g.set_connected(false);
        g.set_backlog(7, 2);
        let now = g.now();
        assert_eq!((now.lease_renewals, now.lease_renewals_failed), (5, 1));
        assert_eq!((now.connected, now.disconnects), (false, 1));
        assert_eq!(
            now.backlog,
            Some(Backlog {
                unread: 7,
                in_flight: 2
            })
        );
    }
}
