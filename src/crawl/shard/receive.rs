//! The receive path of a shard, one task per peer: it only deduplicates
//! and enqueues, starts lent pages and releases returned hosts; it never
//! awaits a send (the crate's invariant 2).

use std::rc::Rc;
use std::time::Instant;

use glommio::channels::shared_channel::ConnectedReceiver;

use super::{Shard, Work};
use crate::crawl::mesh::{Batch, Lease, PageEnd, Return};
use crate::net::dns::Addresses;

impl Shard {
    /// Receive batches from one peer: dedup and enqueue its jobs (and tell
    /// it, per page, how many were new), take its tallies for this shard's
    /// pages, start the pages it lent, release the hosts of pages it
    /// fetched for this shard. Never sends and never waits.
    pub(super) async fn receive(self: Rc<Self>, peer: usize, rx: ConnectedReceiver<Batch>) {
        while let Some(mut batch) = rx.recv().await {
            let now = Instant::now();
            let (leases, returns, tallies) = (
                std::mem::take(&mut batch.leases),
                std::mem::take(&mut batch.returns),
                std::mem::take(&mut batch.tallies),
            );
            let (dropped, tallied) = self.take_jobs(peer, batch.jobs_by_page(), now);
            if tallied {
                // The dispatcher flushes the tallies before it next waits.
                self.changed.notify_all();
            }
            if dropped > 0 && self.outstanding.finish(dropped) {
                self.stop();
            }
            for (token, new) in tallies {
                self.tallied(token, new);
            }
            for Lease { job, addrs } in leases {
                if self.stopping.get() && !self.spending_budget() {
                    // Only when the crawl was interrupted: like a URL still
                    // queued, a page not started is not recorded.
                    self.slots.give(self.id);
                } else {
                    let addrs = Addresses::from_slice(&addrs);
                    self.spawn_work(
                        Work::Lent {
                            job,
                            owner: peer,
                            addrs,
                        },
                        self.id,
                    );
                }
            }
            if !returns.is_empty() {
                let mut frontier = self.frontier.borrow_mut();
                for Return { host, outcome } in returns {
                    match outcome {
                        PageEnd::Done { failed, took } => {
                            let streak = frontier.release_after(&host, failed, took, now);
                            self.recording
                                .stats
                                .borrow_mut()
                                .backed_off
                                .note(&host, streak);
                        }
                        PageEnd::Later { job, wait } => frontier.retry_later(job, wait, now),
                        PageEnd::Held { job } => frontier.hold(job, now),
                    }
                }
                drop(frontier);
                self.changed.notify_all();
                // The peer gave each lent page's slot back before sending
                // its return: a dispatcher waiting for a slot may find one.
                self.fetching.slot_freed.notify_all();
            }
        }
        // The peer closed its senders: the crawl is over, or the peer died
        // and its work is lost, so nothing can finish the count any more.
        if !self.outstanding.is_done() {
            self.outstanding.abort();
        }
        self.stop();
    }
}
