//! The node's tenures: which partitions it holds, and how it takes,
//! renews, loses and gives them up. A tenure begins when the node takes
//! a partition's lease (its done log goes into the seen-sets under a new
//! salt, the entries its last owner left pending are claimed) and ends
//! when the lease runs out here, Redis says another node has it, or the
//! node gives it up (rebalancing, leaving): then nothing of the partition
//! is fetched, recorded or acknowledged here until a new tenure.
//!
//! Not the loop nor the streams (`mod.rs`).

use std::time::{Duration, Instant};

use super::super::clock::Moment;
use super::super::link::Intake;
use super::super::partition;
use super::super::store::{NodeStatus, Store};
use super::{Node, LEAVING_MAX, REBALANCE_RETRY, TAKES_PER_TURN};

impl Node {
    /// Forget the leases no renewal kept valid here.
    pub(super) fn expire(&mut self, now: Moment) {
        for p in self.leases.expire(now) {
            log::warn!("cluster: the lease of partition {p} ran out here; its fetches stop");
            self.forget(p);
        }
    }

    /// Partition `p` is no longer this node's: nothing of it is fetched,
    /// recorded or acknowledged here any more.
    pub(super) fn forget(&mut self, p: u32) {
        self.leases.lost(p);
        self.late.remove(&p);
        self.link.set_held(p, None);
        self.ledger.abandon(p);
        self.leaving.remove(&p);
        // A new tenure claims every entry pending here anyway.
        self.unsure.remove(&p);
        // Fenced in Redis anyway; what was recorded stays in the log.
        if let Some(f) = self.finished.remove(&p) {
            self.link.reported(f.done.len());
        }
        self.report.released += 1;
        let held = self.leases.held().len();
        self.gauge(|g| {
            g.released();
            g.set_held(held);
        });
    }

    /// Heartbeat, renew, publish, widen the scope, rebalance.
    pub(super) fn renew(&mut self) {
        let ttl = self.settings.lease_ttl;
        self.next_renew = Instant::now() + self.leases.renew_every();
        let sent = Instant::now();
        let sent_at = Moment::now();
        let held = self.leases.held();
        let Some(nodes) = self.with_store("heartbeat", |s| s.heartbeat(ttl)) else {
            self.gauge(|g| g.renewals(0, held.len()));
            return;
        };
        let Some(renewed) = self.with_store("renewing leases", |s| s.renew(&held, ttl)) else {
            self.gauge(|g| g.renewals(0, held.len()));
            return;
        };
        let done = renewed.iter().filter(|&&ok| ok).count();
        self.gauge(|g| g.renewals(done, renewed.len().saturating_sub(done)));
        self.link.set_cut_off(false);
        for (&p, ok) in held.iter().zip(renewed) {
            if ok {
                self.leases.granted(p, sent_at);
                if !self.late.contains(&p) {
                    self.link.set_held(p, self.leases.until(p));
                }
                self.link.set_draining(p, self.leaving.contains_key(&p));
            } else {
                log::warn!("cluster: partition {p} was taken by another node");
                self.forget(p);
            }
        }
        let (records, at) = self.rate_mark;
        let secs = sent.saturating_duration_since(at).as_secs_f64();
        let status = NodeStatus {
            name: self.settings.name.clone(),
            alive: true,
            records: self.report.records,
            pages_per_sec: if secs > 0.0 {
                (self.report.records - records) as f64 / secs
            } else {
                0.0
            },
            partitions: self.leases.held().len() as u64,
        };
        self.rate_mark = (self.report.records, sent);
        if self
            .with_store("reporting", |s| s.report(&status, ttl))
            .is_none()
        {
            return;
        }
        self.widen_scope();
        if self.link.over() {
            return;
        }
        let held: Vec<u32> = self
            .leases
            .held()
            .into_iter()
            .filter(|p| !self.leaving.contains_key(p))
            .collect();
        let Some(orphans) = self.with_store("sweeping streams", |s| s.sweep(&held, ttl)) else {
            // Its claims may have been made and the answer lost: entries
            // pending for this node, read again once it reconnects.
            self.unsure.extend(held);
            return;
        };
        if !orphans.is_empty() {
            log::warn!(
                "cluster: {} entries left pending for other nodes claimed",
                orphans.len()
            );
            self.deliver(orphans);
        }
        let Some(me) = nodes.iter().position(|n| *n == self.settings.node) else {
            return;
        };
        let share = partition::share(&nodes, me, self.link.partitions());
        let mut taken = 0;
        let turn = Instant::now();
        for &p in &share {
            // A few at a time, and for half a renewal period at most: a
            // turn that takes many (each a done log and a claim) would
            // come late to renew the others.
            if taken == TAKES_PER_TURN || turn.elapsed() >= self.leases.renew_every() / 2 {
                self.next_renew = Instant::now();
                break;
            }
            // A partition this node had before is taken again only once
            // every URL of its earlier tenure was answered (dropped, most
            // of them): an answer is matched to its entry by fingerprint,
            // and one of the old tenure must not count for the new.
            let answered = self.ledger.open_in(p) == 0;
            if !self.leases.holds(p, Moment::now()) && answered {
                if !self.take(p) {
                    return;
                }
                taken += 1;
                // What the shards finished meanwhile is not held back by
                // the takes (each a few round trips).
                self.take_messages(Duration::ZERO);
                self.flush();
            }
        }
        let now = Instant::now();
        for p in self.leases.held() {
            if !share.contains(&p) && !self.leaving.contains_key(&p) {
                log::info!("cluster: giving partition {p} up to another node");
                self.link.set_draining(p, true);
                self.leaving.insert(p, now + LEAVING_MAX.min(ttl));
            }
        }
        // Part of the share is still another node's (it is giving it up,
        // or its lease runs out): look again soon, not a third of the TTL
        // later.
        if share.iter().any(|&p| !self.leases.holds(p, Moment::now())) {
            self.next_renew = self.next_renew.min(now + REBALANCE_RETRY);
        }
    }

    /// Roots were added by some node: the wider scope, for the shards.
    pub(super) fn widen_scope(&mut self) {
        if let Some(count) = self.with_store("counting roots", Store::root_count) {
            self.widen_scope_to(count);
        }
    }

    /// The crawl has `count` roots: if that is more than the scope knows,
    /// the scope they make. Before the shards get any URL read with the
    /// count: a node that joined before another added its roots would
    /// take those roots' links for out of scope, and drop them.
    pub(super) fn widen_scope_to(&mut self, count: u64) {
        if count == self.roots_seen {
            return;
        }
        let Some(roots) = self.with_store("reading roots", Store::roots) else {
            return;
        };
        self.roots_seen = count;
        let roots: Vec<url::Url> = roots
            .iter()
            .filter_map(|r| url::Url::parse(r).ok())
            .collect();
        let scope = self.settings.scope.with_roots(&roots);
        self.link.set_scope(scope);
        log::info!("cluster: the crawl has {count} roots now; scope widened");
    }

    /// Take partition `p` if it is free: a new tenure (load its done log
    /// into the seen-sets, claim its entries left pending). False if the
    /// connection failed.
    pub(super) fn take(&mut self, p: u32) -> bool {
        let ttl = self.settings.lease_ttl;
        let sent = Moment::now();
        let Some(got) = self.with_store("taking a lease", |s| s.acquire(p, ttl)) else {
            return false;
        };
        if !got {
            return true;
        }
        self.leases.granted(p, sent);
        self.link.new_epoch(p);
        // Held from now: the shards take what follows in order (the done
        // log's keys, then the claimed URLs), and none of this partition's
        // URLs of an earlier tenure is left with them (see `renew`).
        self.link.set_held(p, self.leases.until(p));
        let Some(done) = self.with_store("loading a done log", |s| s.load_done(p)) else {
            self.forget(p);
            return false;
        };
        // A log so long that loading it outlasted the lease: nothing of
        // the partition may be acted on; it is taken again later.
        if !self.leases.holds(p, Moment::now()) {
            log::warn!(
                "cluster: partition {p}: its done log ({} URLs) took longer to load than its lease; taking it again later",
                done.len()
            );
            self.forget(p);
            return true;
        }
        let shards = self.settings.shards.max(1);
        let mut keys = vec![Vec::new(); shards];
        for (fp, host) in done {
            if let Some(k) = keys.get_mut((host % shards as u64) as usize) {
                k.push(self.link.seen_key(p, fp));
            }
        }
        for (shard, k) in keys.into_iter().enumerate() {
            if !k.is_empty() {
                self.link.deliver(shard, Intake::Seen(k));
            }
        }
        let Some(claimed) = self.with_store("claiming entries", |s| s.claim(p)) else {
            self.forget(p);
            return false;
        };
        self.widen_scope();
        if self.store.is_none() {
            // Not checked against a scope that may be narrower than the
            // crawl's: a new tenure claims them again.
            self.forget(p);
            return false;
        }
        let n = claimed.len();
        self.deliver(claimed);
        self.report.taken += 1;
        let held = self.leases.held().len();
        self.gauge(|g| {
            g.taken();
            g.set_held(held);
        });
        log::info!("cluster: took partition {p} ({n} entries claimed)");
        true
    }

    /// Give up the partitions being left once their URLs are answered (or
    /// they waited long enough), after writing what they finished.
    pub(super) fn give_up_drained(&mut self, now: Instant) {
        let ready: Vec<u32> = self
            .leaving
            .iter()
            .filter(|&(&p, &until)| self.ledger.open_in(p) == 0 || now >= until)
            .map(|(&p, _)| p)
            .collect();
        if ready.is_empty() || !self.flush() {
            return;
        }
        for p in ready {
            // No longer acted for here before Redis may give it to
            // another node: a fetch of it still running (the wait ran
            // out) must find it gone when it ends, not write its record
            // while the next owner holds the lease. Not released (the
            // connection failed): its lease runs out in Redis instead.
            self.forget(p);
            if self
                .with_store("releasing a lease", |s| s.release(p))
                .is_none()
            {
                return;
            }
        }
    }

    /// Give every lease up and leave the crawl's live nodes, so the
    /// others take the partitions at once instead of after the TTL.
    pub(super) fn leave(&mut self) {
        if self.fenced() {
            return;
        }
        for p in self.leases.held() {
            if self
                .with_store("releasing a lease", |s| s.release(p))
                .is_none()
            {
                break;
            }
            self.forget(p);
        }
        let _ = self.with_store("leaving", Store::leave);
    }
}
