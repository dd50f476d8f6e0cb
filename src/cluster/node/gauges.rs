//! The node's numbers for a status server (`--status-addr` on a cluster
//! node): the counters in [`ClusterGauges`] kept as the thread goes, and
//! the backlog of its partitions' streams, asked of Redis about once a
//! second, and only when a status server reads them.
//!
//! Not the loop (`mod.rs`), nor what the numbers mean
//! (`output::cluster_gauges`).

use std::time::{Duration, Instant};

use crate::output::cluster_gauges::ClusterGauges;

use super::Node;

/// How often a node read by a status server asks Redis for its
/// partitions' backlog (one pipeline of two commands a partition held).
const MEASURE_EVERY: Duration = Duration::from_secs(1);

impl Node {
    /// Update the status server's gauges, if there is one.
    pub(super) fn gauge(&self, update: impl FnOnce(&ClusterGauges)) {
        if let Some(g) = &self.settings.gauges {
            update(g);
        }
    }

    /// For a status server only, about once a second: the backlog of the
    /// streams of the partitions held (one round trip).
    pub(super) fn measure(&mut self, now: Instant) {
        if self.settings.gauges.is_none() || now < self.next_measure || self.store.is_none() {
            return;
        }
        self.next_measure = now + MEASURE_EVERY;
        let held = self.leases.held();
        if let Some((entries, pending)) =
            self.with_store("reading the backlog", |s| s.backlog_of(&held))
        {
            self.gauge(|g| g.set_backlog(entries.saturating_sub(pending), pending));
        }
    }
}
