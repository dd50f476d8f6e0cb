//! What a node's shards and its cluster thread share: the URLs the thread
//! hands each shard, what the shards hand back (links found, URLs done),
//! and which partitions the node may act for right now.
//!
//! The shards never wait on it: handing over is a push under a short
//! lock or a send on an unbounded channel, and a shard takes what came
//! for it when its cluster task next looks. Which partitions are held is
//! a deadline per partition in an atomic, set by the thread from its
//! [`super::lease::Leases`]: a shard reads the clock against it, so a
//! node whose thread is stuck on a dead connection still stops acting for
//! a partition in time.
//!
//! Not the protocol (`store`), nor the thread's policy (`node`).

use crate::job::Job;
use crate::output::writer::lock;
use crate::web::scope::Scope;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};

use super::clock::Moment;
use super::ledger::Outcome;
use super::partition::partition_of;

/// What the thread hands a shard, in order.
#[derive(Debug)]
pub(crate) enum Intake {
    /// Seen-set keys of URLs done already (of a partition just taken).
    Seen(Vec<u64>),
    /// URLs to offer to the seen-set and queue, counted in already.
    Jobs(Vec<Job>),
}

/// One URL a shard is done with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Done {
    /// The URL's fingerprint (the crawl's key, not salted).
    pub fingerprint: u64,
    /// Its host's key (`keys::host_key`): picks the shard that
    /// takes it when a node loads the partition's done log.
    pub host: u64,
    pub partition: u32,
    pub outcome: Outcome,
}

/// What the shards hand the thread, in order per shard.
#[derive(Debug)]
pub(crate) enum ToNode {
    /// Links found, for their partitions' streams.
    Links(Vec<Job>),
    /// URLs done, each record (if any) handed to the writer already.
    Done(Vec<Done>),
}

/// The shared part.
pub(crate) struct Link {
    partitions: u32,
    /// Per partition: until when (ns of the boot clock) records may be
    /// written for it; 0 when not held.
    valid_until: Box<[AtomicU64]>,
    /// Per partition: no fetch starts for it (held, but being given up).
    draining: Box<[AtomicBool]>,
    /// Per partition: how many times this node took it (salts the
    /// seen-set's keys, see [`Link::seen_key`]).
    epochs: Box<[AtomicU32]>,
    inboxes: Box<[Mutex<Vec<Intake>>]>,
    to_node: Sender<ToNode>,
    /// Links handed to the thread and not yet in Redis.
    unsent: AtomicUsize,
    /// Records handed to the writers whose URLs are not yet in their
    /// partitions' done logs: what a `kill -9` now would have another
    /// node record again.
    unreported: AtomicUsize,
    /// URLs done (fetched, most) whose record was not written: their
    /// partition was no longer this node's by then.
    lost: AtomicU64,
    /// Fetches running on the node's shards.
    fetching: AtomicUsize,
    /// The most fetches and unreported records at once (`--max-tasks`):
    /// past it no fetch starts ([`Link::behind`]).
    open_limit: usize,
    /// The crawl is over (every stream empty): the shards stop.
    over: AtomicBool,
    /// The thread lost its connection to Redis: no fetch starts (URLs
    /// stay queued) until a renewal gets through.
    cut_off: AtomicBool,
    /// The crawl's scope, widened when roots are added by other nodes.
    scope: Mutex<Arc<Scope>>,
    scope_version: AtomicU64,
}

/// Links a node may hold unsent before its shards start no fetch.
const UNSENT_LIMIT: usize = 256 << 10;

impl Link {
    /// A link for `shards` shards of a crawl of `partitions` partitions,
    /// and the receiving end of what the shards hand back.
    /// At most `open_limit` fetches and records not yet in Redis at once
    /// (the node's `--max-tasks`).
    pub(crate) fn new(
        partitions: u32,
        shards: usize,
        open_limit: usize,
        scope: Scope,
    ) -> (Arc<Link>, Receiver<ToNode>) {
        let (tx, rx) = mpsc::channel();
        let n = partitions as usize;
        let link = Link {
            partitions,
            valid_until: (0..n).map(|_| AtomicU64::new(0)).collect(),
            draining: (0..n).map(|_| AtomicBool::new(false)).collect(),
            epochs: (0..n).map(|_| AtomicU32::new(0)).collect(),
            inboxes: (0..shards).map(|_| Mutex::new(Vec::new())).collect(),
            to_node: tx,
            unsent: AtomicUsize::new(0),
            unreported: AtomicUsize::new(0),
            fetching: AtomicUsize::new(0),
            open_limit: open_limit.max(1),
            lost: AtomicU64::new(0),
            over: AtomicBool::new(false),
            cut_off: AtomicBool::new(false),
            scope: Mutex::new(Arc::new(scope)),
            scope_version: AtomicU64::new(0),
        };
        (Arc::new(link), rx)
    }

    pub(crate) fn partitions(&self) -> u32 {
        self.partitions
    }

    /// The partition of `host`.
    pub(crate) fn partition_of(&self, host: &str) -> u32 {
        partition_of(host, self.partitions)
    }

    /// Whether records may be written for `partition` at `now`.
    pub(crate) fn holds(&self, partition: u32, now: Moment) -> bool {
        self.valid_until
            .get(partition as usize)
            .is_some_and(|v| now.as_nanos() < v.load(Ordering::Acquire))
    }

    /// Whether a fetch may start for `partition` at `now`.
    pub(crate) fn fetches(&self, partition: u32, now: Moment) -> bool {
        self.holds(partition, now)
            && !self
                .draining
                .get(partition as usize)
                .is_some_and(|d| d.load(Ordering::Acquire))
    }

    /// The thread's view: `partition` is held until `until` (None: not).
    pub(crate) fn set_held(&self, partition: u32, until: Option<Moment>) {
        if let Some(v) = self.valid_until.get(partition as usize) {
            // Never 0 for a held lease (0 is "not held").
            v.store(until.map_or(0, |t| t.as_nanos().max(1)), Ordering::Release);
        }
        if until.is_none() {
            self.set_draining(partition, false);
        }
    }

    /// Start no fetch for `partition` (it is being given up), or again.
    pub(crate) fn set_draining(&self, partition: u32, draining: bool) {
        if let Some(d) = self.draining.get(partition as usize) {
            d.store(draining, Ordering::Release);
        }
    }

    /// This node takes `partition` (again): a new epoch, so the seen-set's
    /// keys of its earlier tenures no longer match. Call before handing
    /// the shards anything of the new tenure.
    pub(crate) fn new_epoch(&self, partition: u32) {
        if let Some(e) = self.epochs.get(partition as usize) {
            e.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// The seen-set key of a URL of `partition` with fingerprint `fp`.
    ///
    /// A node that loses a partition and later takes it again must not
    /// take a URL for known because it was queued in the earlier tenure
    /// (that queue was dropped, the URL's entry left for the next owner,
    /// and the entry is back now): keys are salted by the partition and
    /// its epoch here, and the done log is loaded again at each tenure.
    pub(crate) fn seen_key(&self, partition: u32, fp: u64) -> u64 {
        let epoch = self
            .epochs
            .get(partition as usize)
            .map_or(0, |e| e.load(Ordering::Acquire));
        fp ^ mix((u64::from(partition) << 32) | u64::from(epoch))
    }

    /// Hand `intake` to shard `shard`.
    pub(crate) fn deliver(&self, shard: usize, intake: Intake) {
        if let Some(inbox) = self.inboxes.get(shard) {
            lock(inbox).push(intake);
        }
    }

    /// What came for shard `shard`, in order.
    pub(crate) fn take(&self, shard: usize) -> Vec<Intake> {
        self.inboxes
            .get(shard)
            .map(|inbox| std::mem::take(&mut *lock(inbox)))
            .unwrap_or_default()
    }

    /// Hand something to the thread (dropped if it is gone).
    pub(crate) fn send(&self, message: ToNode) {
        if let ToNode::Links(links) = &message {
            self.unsent.fetch_add(links.len(), Ordering::AcqRel);
        }
        let _ = self.to_node.send(message);
    }

    /// The thread put `n` links into Redis.
    pub(crate) fn sent(&self, n: usize) {
        let _ = self
            .unsent
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |u| {
                Some(u.saturating_sub(n))
            });
    }

    /// Too many links wait for Redis, or the node is cut off from it, or
    /// its fetches and the records not yet in the done logs fill
    /// `--max-tasks`: start no fetch (the URLs stay queued; the fetches
    /// running go on).
    ///
    /// The last is the bound on what a `kill -9` repeats: a record is
    /// written before its URL reaches its partition's done log (a record
    /// never goes missing), so another node records again exactly the
    /// URLs recorded here and not yet reported; counting them against
    /// the fetch slots keeps them, with the fetches in flight, at most
    /// `--max-tasks`. The price, on a site that answers at once: a slot
    /// waits for a round trip to Redis after its page (3 nodes of 16
    /// slots on a local site: 15.7 s for 52,230 pages, 8.1 s without).
    /// Counting the records alone against `--max-tasks` (a bound of
    /// twice that) did not win it back (13.1-13.6 s).
    pub(crate) fn behind(&self) -> bool {
        self.unsent.load(Ordering::Acquire) > UNSENT_LIMIT
            || self.cut_off.load(Ordering::Acquire)
            || self.open_full()
    }

    /// Whether the fetches running and the records not yet reported fill
    /// the limit.
    fn open_full(&self) -> bool {
        let unreported = self.unreported.load(Ordering::Acquire);
        unreported > 0 && self.fetching.load(Ordering::Acquire) + unreported >= self.open_limit
    }

    /// Records written here and not yet in Redis's done logs.
    pub(crate) fn unreported(&self) -> usize {
        self.unreported.load(Ordering::Acquire)
    }

    /// The most fetches and unreported records at once.
    pub(crate) fn open_limit(&self) -> usize {
        self.open_limit
    }

    /// A URL done whose partition was lost before its record: neither
    /// recorded nor archived here.
    pub(crate) fn count_lost(&self) {
        self.lost.fetch_add(1, Ordering::Relaxed);
    }

    /// URLs done and not recorded: their partition was lost meanwhile.
    pub(crate) fn lost(&self) -> u64 {
        self.lost.load(Ordering::Relaxed)
    }

    /// A shard starts a fetch (counted until [`Link::fetch_ended`]).
    pub(crate) fn fetch_started(&self) {
        self.fetching.fetch_add(1, Ordering::AcqRel);
    }

    /// A fetch ended (its record, if any, counted by [`Link::recorded`]
    /// before).
    pub(crate) fn fetch_ended(&self) {
        let _ = self
            .fetching
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                Some(n.saturating_sub(1))
            });
    }

    /// A shard handed a record to its writer: unreported until the
    /// thread says [`Link::reported`].
    pub(crate) fn recorded(&self) {
        self.unreported.fetch_add(1, Ordering::AcqRel);
    }

    /// The thread is done with `n` records: their URLs are in the done
    /// logs, or will never be from this node (partition lost, writer
    /// failed).
    pub(crate) fn reported(&self, n: usize) {
        if n == 0 {
            return;
        }
        let _ = self
            .unreported
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |u| {
                Some(u.saturating_sub(n))
            });
    }

    /// The thread lost its connection (true) or a renewal got through
    /// again (false).
    pub(crate) fn set_cut_off(&self, cut_off: bool) {
        self.cut_off.store(cut_off, Ordering::Release);
    }

    /// The crawl is over: every stream is drained and nothing is in flight.
    pub(crate) fn over(&self) -> bool {
        self.over.load(Ordering::Acquire)
    }

    pub(crate) fn set_over(&self) {
        self.over.store(true, Ordering::Release);
    }

    /// The crawl's scope now, and its version (to see it change).
    pub(crate) fn scope(&self) -> (u64, Arc<Scope>) {
        let scope = lock(&self.scope).clone();
        (self.scope_version.load(Ordering::Acquire), scope)
    }

    /// The version of [`Link::scope`]: a shard that has this one is up to date.
    pub(crate) fn scope_version(&self) -> u64 {
        self.scope_version.load(Ordering::Acquire)
    }

    /// Roots were added: the wider scope.
    pub(crate) fn set_scope(&self, scope: Scope) {
        *lock(&self.scope) = Arc::new(scope);
        self.scope_version.fetch_add(1, Ordering::AcqRel);
    }
}

/// splitmix64's finaliser.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::web::scope::ScopeMode;
    use std::time::Duration;

    fn link() -> (Arc<Link>, Receiver<ToNode>) {
        Link::new(8, 2, 4, Scope::build(&[], ScopeMode::Strict, None))
    }

    #[test]
    fn a_partition_is_held_until_its_deadline_and_draining_stops_fetches_only() {
        let (link, _rx) = link();
        let now = Moment::now();
        assert!(!link.holds(3, now));
        link.set_held(3, Some(now + Duration::from_secs(1)));
        assert!(link.holds(3, now) && link.fetches(3, now));
        assert!(
            !link.holds(3, now + Duration::from_secs(1)),
            "the deadline is the end"
        );
        link.set_draining(3, true);
        assert!(link.holds(3, now) && !link.fetches(3, now));
        link.set_held(3, None);
        assert!(!link.holds(3, now));
        link.set_held(3, Some(now + Duration::from_secs(1)));
        assert!(link.fetches(3, now), "a new tenure does not drain");
        assert!(!link.holds(99, now), "no such partition");
    }

    #[test]
    fn a_new_epoch_changes_every_key_of_its_partition_only() {
        let (link, _rx) = link();
        let (a, b) = (link.seen_key(1, 42), link.seen_key(2, 42));
        assert_ne!(a, b);
        link.new_epoch(1);
        assert_ne!(link.seen_key(1, 42), a);
        assert_eq!(link.seen_key(2, 42), b);
    }

    #[test]
    fn intake_comes_out_in_order_and_links_count_until_sent() {
        let (link, rx) = link();
        link.deliver(1, Intake::Seen(vec![1]));
        link.deliver(1, Intake::Jobs(vec![Job::root("http://a.test/".into(), 1)]));
        let got = link.take(1);
        assert!(matches!(got.as_slice(), [Intake::Seen(_), Intake::Jobs(_)]));
        assert!(link.take(1).is_empty() && link.take(0).is_empty());
        link.send(ToNode::Links(vec![Job::root("http://a.test/".into(), 1)]));
        assert!(matches!(rx.recv().unwrap(), ToNode::Links(l) if l.len() == 1));
        link.sent(5);
        assert!(!link.behind());
    }

    #[test]
    fn fetches_and_unreported_records_together_stay_within_the_limit() {
        let (link, _rx) = link();
        for _ in 0..4 {
            link.fetch_started();
        }
        assert!(!link.behind(), "fetch slots alone are the shards' business");
        link.recorded();
        assert!(link.behind(), "4 fetches and a record not in Redis");
        link.fetch_ended();
        assert!(link.behind(), "3 and 1");
        link.fetch_ended();
        assert!(!link.behind(), "2 and 1");
        link.recorded();
        link.recorded();
        assert!(link.behind(), "2 and 3");
        link.reported(3);
        assert_eq!(link.unreported(), 0);
        link.reported(1);
        assert_eq!(link.unreported(), 0, "never below zero");
        assert!(!link.behind());
    }
}
