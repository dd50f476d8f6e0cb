//! The node's cluster thread: the one place that talks to Redis while the
//! shards crawl. Its loop, a few milliseconds a turn:
//!
//! 1. take what the shards handed back: links found, URLs done;
//! 2. flush: the links to their partitions' streams, then (once the
//!    records of the URLs done are written: a barrier on the records' and
//!    the index's writers) their done logs and the entries whose every URL is done
//!    acknowledged, in that order on one connection, so a URL's links are
//!    in Redis before the entry that brought it goes;
//! 3. every third of the lease TTL: heartbeat, renew the leases, take the
//!    partitions of this node's share that are free (load their done log
//!    into the seen-sets, claim what their last owner left pending), start
//!    giving up those no longer in its share, widen the scope if roots
//!    were added;
//! 4. read new entries of its partitions while the shards have room,
//!    and hand their URLs to the shards that own their hosts;
//! 5. when it has nothing to do: is every stream empty? Then the crawl is
//!    over, for every node at once.
//!
//! A command that fails (an error, a reply later than the command
//! timeout, a dropped connection) drops the connection, and the node
//! reconnects, backing off, while its leases hold: what was not written
//! is kept and written after the reconnection; no new fetch starts until
//! a renewal gets through; a read whose reply was lost is made good from
//! this node's own pending list (the entries Redis delivered and its
//! ledger never saw). Only when the leases run out here ([`Leases`],
//! earlier than in Redis) does the node give its partitions up, and the
//! shards stop fetching for them; other nodes then take them over. A
//! command Redis refuses because another process of this node's name
//! joined since (`StoreError::Superseded`) ends it all: the node acts
//! for no partition, sends nothing more, and stops its shards.
//!
//! Not the protocol (`store`), nor the shards' side (`crawl::shard`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ringcrawl_links::urls;

use crate::config::secret::redacted;
use crate::job::Job;
use crate::keys::Fingerprinter;
use crate::output::cluster_gauges::ClusterGauges;
use crate::output::writer::{WriterHandle, Written};
use crate::sync::Outstanding;
use crate::web::scope::Scope;

use super::clock::Moment;
use super::lease::Leases;
use super::ledger::{Ledger, Outcome};
use super::link::{Done, Link, ToNode};
use super::store::{Finished, Store, StoreError};
use super::wire;

mod gauges;
mod intake;
mod tenure;

/// How the node reaches the crawl, and its timings. Not `Debug`: the
/// URL may hold a password.
#[derive(Clone)]
pub(crate) struct Settings {
    /// `redis://host:port/`, perhaps with a password: printed only
    /// through [`redacted`].
    pub url: String,
    pub crawl: String,
    /// This node's name (`--node`).
    pub name: String,
    /// This process's identity in Redis ([`crate::cluster::incarnation`]).
    pub node: String,
    pub lease_ttl: Duration,
    pub shards: usize,
    /// The crawl's fingerprint key (from its meta).
    pub key: [u64; 2],
    /// The crawl's scope rules (mode, `--exclude`, `--include`,
    /// `--no-parent`), applied again to its roots as they grow.
    pub scope: Scope,
    /// URLs the node may have handed to its shards and not had answered
    /// ([`intake_limit`]).
    pub intake: usize,
    /// The link-local and metadata hosts this node's own roots name
    /// ([`super::admit::named_reserved`]): the only ones it fetches.
    pub named: Vec<String>,
    /// A status server's view of the node, kept current (None: nobody
    /// reads it, and the backlog is not asked for).
    pub gauges: Option<Arc<ClusterGauges>>,
}

/// What the node's ledger holds, at most, for a URL handed to the shards
/// and not answered: its fingerprint's place among the waiting (32 B in a
/// table at most half empty) and, for an entry of one URL, the entry's
/// slot and stream id.
pub(crate) const LEDGER_URL_BYTES: usize = 128;

/// The least intake a node takes, whatever the memory flags: enough for
/// every shard's fetches many times over.
const INTAKE_PER_SHARD: usize = 8 << 10;

/// URLs a node may hold unanswered with `bytes` for its ledger on
/// `shards` shards. The URLs themselves go to the shards' frontiers,
/// which spill a host's queue to disk past their memory: so a slow host
/// with a long queue holds only its ledger entries here, and the node
/// goes on reading its other partitions.
pub(crate) fn intake_limit(bytes: usize, shards: usize) -> usize {
    (bytes / LEDGER_URL_BYTES).max(INTAKE_PER_SHARD * shards.max(1))
}

/// What the thread did, for the node's report.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct NodeReport {
    /// Every stream was drained: the crawl is over.
    pub over: bool,
    /// Records this node reported done.
    pub records: u64,
    /// Partitions taken.
    pub taken: u64,
    /// Partitions lost or given up.
    pub released: u64,
    /// Connections to Redis lost.
    pub disconnects: u64,
    /// Lines of stream entries that were not URLs (skipped).
    pub bad_lines: u64,
    /// URLs of stream entries refused (`cluster::admit`): not fetched.
    pub refused: u64,
    /// The last error, if the node left with work not written.
    pub error: Option<String>,
    /// Another process joined under this node's name while this one was
    /// cut off: this one stopped, writing nothing more.
    pub superseded: bool,
    /// The crawl's keys were gone from Redis when this node reconnected
    /// (deleted, or Redis started again without its data): it stopped,
    /// writing nothing more.
    pub crawl_gone: bool,
    /// URLs done (fetched, most) and not recorded nor archived: their
    /// partition was lost before their record (the next owner does them).
    pub lost: u64,
}

/// A node's cluster thread, running.
pub(crate) struct Running {
    thread: std::thread::JoinHandle<NodeReport>,
    finishing: Arc<AtomicBool>,
}

impl Running {
    /// The shards are gone (their last answers handed over, the records'
    /// writer finished): the thread writes what is left, gives its leases
    /// up and leaves; its report.
    pub(crate) fn finish(self) -> NodeReport {
        self.finishing.store(true, Ordering::Release);
        self.thread.join().unwrap_or_else(|_| NodeReport {
            error: Some("the cluster thread panicked".to_string()),
            ..NodeReport::default()
        })
    }
}

/// Start the cluster thread of a node connected (`store`) to its crawl,
/// with what it shares with its shards: `outstanding` holds one for the
/// node until the crawl is over; `writers` are the records' log's and the
/// CDXJ index's, those there are;
/// `roots_seen` the roots its scope was made of.
pub(crate) fn spawn(
    settings: Settings,
    store: Store,
    link: Arc<Link>,
    rx: Receiver<ToNode>,
    outstanding: Arc<Outstanding>,
    writers: Vec<WriterHandle>,
    roots_seen: u64,
) -> std::io::Result<Running> {
    let finishing = Arc::new(AtomicBool::new(false));
    let node = Node::new(
        settings,
        store,
        link,
        rx,
        outstanding,
        writers,
        finishing.clone(),
        roots_seen,
    );
    let thread = std::thread::Builder::new()
        .name("ringcrawl-cluster".into())
        .spawn(move || node.run())?;
    Ok(Running { thread, finishing })
}

/// The thread's state.
struct Node {
    settings: Settings,
    store: Option<Store>,
    link: Arc<Link>,
    rx: Receiver<ToNode>,
    outstanding: Arc<Outstanding>,
    /// The records' log's writer and the CDXJ index's, those there are.
    writers: Vec<WriterHandle>,
    /// Set once the shards are gone: write what is left and leave.
    finishing: Arc<AtomicBool>,
    leases: Leases,
    ledger: Ledger,
    fingerprints: Fingerprinter,
    /// Links to append, by partition.
    adds: BTreeMap<u32, Vec<Job>>,
    /// The add sent whose answer was lost: sent again, as it was and
    /// under its number, before anything new (Redis writes it once).
    unsent: Option<LinksAdd>,
    /// Adds of links made by this process (the last one's number).
    links_adds: u64,
    /// URLs answered, waiting for the writers' barriers.
    answered: Vec<Done>,
    /// What to report per partition, once written to the log.
    finished: BTreeMap<u32, Finished>,
    /// The report sent whose answer was lost: sent again, as it was and
    /// under its number, before anything new (Redis writes it once).
    unanswered: Option<DoneReport>,
    /// Reports of finished work made by this process (the last one's
    /// number).
    done_reports: u64,
    /// Partitions being given up, and until when to wait for their URLs.
    leaving: BTreeMap<u32, Instant>,
    /// Partitions whose fetches stopped while held (a renewal came late):
    /// nothing of them acts here any more, and each is given up once the
    /// URLs recorded for it are reported.
    late: BTreeSet<u32>,
    next_renew: Instant,
    /// When to read the backlog of the partitions held again (for the
    /// gauges).
    next_measure: Instant,
    next_read: Instant,
    next_backlog: Instant,
    /// Answers in a row that the streams still hold entries, since this
    /// node last read some (the backlog question's backoff).
    backlog_busy: u32,
    next_connect: Instant,
    /// Tries to reconnect since the connection was lost (the backoff).
    reconnects: u32,
    /// Partitions whose pending list here may hold entries the ledger
    /// never saw: a read or sweep of them failed after it was sent.
    unsure: BTreeSet<u32>,
    idle_reads: u32,
    roots_seen: u64,
    report: NodeReport,
    /// When a node finishing with work not written gives up.
    give_up_at: Option<Instant>,
    /// When the oldest of what waits to be written came.
    waiting_since: Option<Instant>,
    /// Records at the last heartbeat, and when, for the rate.
    rate_mark: (u64, Instant),
}

/// The longest a turn waits for the shards when there is nothing else.
const TICK: Duration = Duration::from_millis(2);

/// How long links and answers gather before they are written: a flush
/// writes one entry to each partition that has links and one script for
/// all the answers, so the longer, the fewer and larger the commands, and
/// the later an entry is acknowledged (a node that dies leaves that much
/// more to fetch again). Measured, 2 nodes on a 20,000-page site over 256
/// hosts (2,300 pages/s): 10 ms, 6.0 Redis commands and 83 µs of Redis CPU
/// a page; 50 ms, 4.0 and 49 µs; 100 ms, 3.1 and 34 µs; the same pages/s.
const FLUSH_EVERY: Duration = Duration::from_millis(50);

/// Links and answers that are written at once, however recent.
const FLUSH_AT: usize = 4096;

/// The longest links and answers gather while the links make small
/// entries (see [`Node::flush_at`]).
const FLUSH_LATEST: Duration = Duration::from_millis(250);

/// Links an entry should carry, on average, to be written after only
/// [`FLUSH_EVERY`].
const ENTRY_URLS: usize = 4;

/// Entries read per stream at once.
const READ_COUNT: usize = 8;

/// Reads that found nothing back off up to this.
const IDLE_READ: Duration = Duration::from_millis(50);

/// How often an idle node asks whether the crawl is over, at first: each
/// answer that the streams still hold entries (other nodes' work) doubles
/// the wait, up to [`BACKLOG_MAX`], until this node has entries to read
/// again. The question sums every stream's length in a script, so at a
/// fixed 100 ms, 100 idle nodes of 256 partitions asked Redis for 256,000
/// lengths a second; at 2 s, 12,800.
const BACKLOG_EVERY: Duration = Duration::from_millis(100);

/// The longest wait between two such questions: how late an idle node
/// may learn that the crawl is over.
const BACKLOG_MAX: Duration = Duration::from_secs(2);

/// The wait before the next question, after `busy` answers in a row that
/// the streams still hold entries.
fn backlog_wait(busy: u32) -> Duration {
    doubled(BACKLOG_EVERY, busy, BACKLOG_MAX)
}

/// `base` doubled `n` times (8 at most), and at most `cap`: the waits of
/// the cluster thread's retries (reads that found nothing, the backlog
/// question, reconnects).
fn doubled(base: Duration, n: u32, cap: Duration) -> Duration {
    base.saturating_mul(1u32 << n.min(8)).min(cap)
}

/// Between tries to reconnect, at first; doubled each try, up to an
/// eighth of the lease TTL (many tries while the leases hold).
const RECONNECT_EVERY: Duration = Duration::from_millis(250);

/// How long to wait before try `n` (from 0) to reconnect, with leases of
/// `ttl`.
fn reconnect_wait(n: u32, ttl: Duration) -> Duration {
    doubled(RECONNECT_EVERY, n, (ttl / 8).max(RECONNECT_EVERY))
}

/// How long each writer may take to confirm a barrier before the
/// turn goes on (the answers wait for the next turn).
const BARRIER_WAIT: Duration = Duration::from_millis(100);

/// A report of finished work, numbered so that Redis counts it once
/// however often it is sent ([`Store::finish`]).
struct DoneReport {
    number: u64,
    finished: Vec<Finished>,
}

/// Links to append, as sent: their entries' text per partition, under
/// the add's number.
struct LinksAdd {
    number: u64,
    batches: Vec<(u32, String)>,
    urls: usize,
}

/// What partition `p` has finished since the last report, made empty if
/// nothing yet.
fn finished_in(finished: &mut BTreeMap<u32, Finished>, p: u32) -> &mut Finished {
    finished.entry(p).or_insert_with(|| Finished {
        partition: p,
        ..Finished::default()
    })
}

/// Whether every line handed to `writers` so far is written: a barrier
/// on each, in turn (the first not confirmed or failed says so).
fn written(writers: &[WriterHandle]) -> Written {
    for writer in writers {
        match writer.barrier(BARRIER_WAIT) {
            Written::All => {}
            other => return other,
        }
    }
    Written::All
}

/// How soon a node whose share is not all its own yet looks again.
const REBALANCE_RETRY: Duration = Duration::from_millis(250);

/// Partitions taken at most in one turn of renewals.
const TAKES_PER_TURN: usize = 16;

/// The longest one command may take: well within the time a lease is
/// counted valid here, so that a stalled connection is dropped (and the
/// fetches stopped) while the leases still hold.
pub(crate) fn command_timeout(ttl: Duration) -> Duration {
    (ttl / 4).min(Duration::from_secs(5))
}

/// How long a node whose shards are gone tries to write what is left.
const FINISH_PATIENCE: Duration = Duration::from_secs(3);

/// A partition given up waits at most this long for its URLs in flight.
const LEAVING_MAX: Duration = Duration::from_secs(5);

impl Node {
    /// A node connected (`store`) to its crawl, with what it shares with
    /// its shards. `outstanding` holds one for the node until the crawl
    /// is over; `writers` are the records' log's and the index's.
    #[allow(clippy::too_many_arguments)]
    fn new(
        settings: Settings,
        store: Store,
        link: Arc<Link>,
        rx: Receiver<ToNode>,
        outstanding: Arc<Outstanding>,
        writers: Vec<WriterHandle>,
        finishing: Arc<AtomicBool>,
        roots_seen: u64,
    ) -> Node {
        let now = Instant::now();
        Node {
            leases: Leases::new(settings.lease_ttl),
            fingerprints: Fingerprinter::new(settings.key),
            settings,
            store: Some(store),
            link,
            rx,
            outstanding,
            writers,
            finishing,
            ledger: Ledger::new(),
            adds: BTreeMap::new(),
            unsent: None,
            links_adds: 0,
            answered: Vec::new(),
            finished: BTreeMap::new(),
            unanswered: None,
            done_reports: 0,
            leaving: BTreeMap::new(),
            late: BTreeSet::new(),
            next_renew: now,
            next_measure: now,
            next_read: now,
            next_backlog: now,
            backlog_busy: 0,
            next_connect: now,
            reconnects: 0,
            unsure: BTreeSet::new(),
            idle_reads: 0,
            roots_seen,
            report: NodeReport::default(),
            give_up_at: None,
            waiting_since: None,
            rate_mark: (0, now),
        }
    }

    /// Runs the loop until the shards are gone, then writes what is left,
    /// gives its leases up and leaves the crawl.
    fn run(mut self) -> NodeReport {
        self.gauge(|g| {
            g.set_partitions(self.link.partitions());
            g.set_connected(true);
        });
        loop {
            let finishing = self.finishing.load(Ordering::Acquire);
            let wait = match self.flush_at() {
                _ if finishing => Duration::ZERO,
                Some(at) => at.saturating_duration_since(Instant::now()).min(TICK),
                None => TICK,
            };
            self.take_messages(wait);
            if self.fenced() {
                // Nothing more is written; the shards are stopping.
                if finishing {
                    break;
                }
                continue;
            }
            let now = Instant::now();
            self.expire(Moment::now());
            if self.store.is_none() && now >= self.next_connect {
                self.reconnect();
            }
            let due = finishing || self.flush_at().is_some_and(|at| now >= at);
            let flushed = if due { self.flush() } else { !self.busy() };
            if finishing {
                if flushed || !self.leave_patiently() {
                    break;
                }
                continue;
            }
            if now >= self.next_renew {
                self.renew();
            }
            self.give_up_drained(now);
            self.read(now);
            self.check_over(now);
            self.measure(now);
        }
        self.leave();
        self.report.lost = self.link.lost();
        self.report
    }

    /// Whether anything waits to be written.
    fn busy(&self) -> bool {
        !self.adds.is_empty()
            || self.unsent.is_some()
            || !self.answered.is_empty()
            || !self.finished.is_empty()
            || self.unanswered.is_some()
    }

    /// When what waits should be written: [`FLUSH_EVERY`] after the first
    /// of it came, or up to [`FLUSH_LATEST`] while the links gathered are
    /// fewer than [`ENTRY_URLS`] a partition (a slow node would otherwise
    /// write an entry, and later acknowledge it, for almost every link), or
    /// now if [`FLUSH_AT`] links and answers wait. None if nothing waits.
    fn flush_at(&self) -> Option<Instant> {
        let since = self.waiting_since?;
        // An add whose answer was lost counts with the links gathered
        // since: it goes first at the next flush.
        let links: usize = self.adds.values().map(Vec::len).sum::<usize>()
            + self.unsent.as_ref().map_or(0, |add| add.urls);
        if self.answered.len() + links >= FLUSH_AT {
            return Some(since);
        }
        // Records not yet in the done logs hold fetch slots
        // (`Link::behind`): half of them so held, and they go now.
        if self.link.unreported() * 2 >= self.link.open_limit() {
            return Some(since);
        }
        if links < ENTRY_URLS * self.adds.len() {
            return Some(since + FLUSH_LATEST);
        }
        Some(since + FLUSH_EVERY)
    }

    /// Take what the shards sent, waiting up to `wait` for the first.
    fn take_messages(&mut self, wait: Duration) {
        let first = if wait.is_zero() {
            self.rx.try_recv().ok()
        } else {
            self.rx.recv_timeout(wait).ok()
        };
        let Some(first) = first else {
            return;
        };
        let mut next = Some(first);
        while let Some(message) = next {
            match message {
                ToNode::Links(jobs) => {
                    self.waiting_since.get_or_insert_with(Instant::now);
                    for job in jobs {
                        let p = self.link.partition_of(urls::host_of(&job.url));
                        self.adds.entry(p).or_default().push(job);
                    }
                }
                ToNode::Done(done) => {
                    self.waiting_since.get_or_insert_with(Instant::now);
                    self.answered.extend(done);
                }
            }
            next = self.rx.try_recv().ok();
        }
    }

    fn reconnect(&mut self) {
        let s = &self.settings;
        let connected = Store::connect(&s.url, &s.crawl, &s.node, command_timeout(s.lease_ttl))
            .and_then(|mut store| store.check_generation().map(|()| store));
        match connected {
            Err(e @ (StoreError::Superseded | StoreError::CrawlGone { .. })) => self.fence(e),
            Ok(store) => {
                log::info!("cluster: reconnected to {}", redacted(&s.url));
                self.store = Some(store);
                self.reconnects = 0;
                self.next_renew = Instant::now();
                self.gauge(|g| g.set_connected(true));
            }
            Err(e) => {
                log::debug!("cluster: reconnecting to {}: {e}", redacted(&s.url));
                self.reconnects = self.reconnects.saturating_add(1);
                self.next_connect = Instant::now() + reconnect_wait(self.reconnects, s.lease_ttl);
            }
        }
    }

    /// Run `op` on the connection; on failure drop it (and say why).
    fn with_store<T>(
        &mut self,
        what: &str,
        op: impl FnOnce(&mut Store) -> Result<T, StoreError>,
    ) -> Option<T> {
        let store = self.store.as_mut()?;
        match op(store) {
            Ok(t) => Some(t),
            Err(StoreError::Superseded) => {
                self.store = None;
                self.fence(StoreError::Superseded);
                None
            }
            Err(e) => {
                log::warn!("cluster: {what}: {e}; reconnecting");
                self.report.error = Some(format!("{what}: {e}"));
                self.report.disconnects += 1;
                self.gauge(|g| g.set_connected(false));
                self.store = None;
                self.reconnects = 0;
                self.next_connect = Instant::now() + reconnect_wait(0, self.settings.lease_ttl);
                // Cut off: no new fetch until a renewal gets through (what
                // is fetched meanwhile could not be reported; the fetches
                // in flight finish and record while the leases last). The
                // URLs stay queued: a blip within the leases costs nothing.
                self.link.set_cut_off(true);
                None
            }
        }
    }

    /// Write the links, then the answered URLs whose records are written;
    /// true when nothing is left to write.
    fn flush(&mut self) -> bool {
        if self.unsent.is_none() && !self.adds.is_empty() {
            let adds = std::mem::take(&mut self.adds);
            self.links_adds += 1;
            self.unsent = Some(LinksAdd {
                number: self.links_adds,
                batches: adds
                    .iter()
                    .map(|(&p, jobs)| (p, wire::encode(jobs)))
                    .collect(),
                urls: adds.values().map(Vec::len).sum(),
            });
        }
        if let Some(add) = self.unsent.take() {
            if self
                .with_store("appending links", |s| s.add(add.number, &add.batches))
                .is_none()
            {
                // Kept for the next try; no acknowledgement may go before.
                self.unsent = Some(add);
                return false;
            }
            self.link.sent(add.urls);
        }
        if !self.answered.is_empty() {
            match written(&self.writers) {
                Written::All => self.settle(),
                Written::NotYet => {}
                // Records that may not be written (or indexed) must not
                // count as done.
                Written::Failed => self.settle_unrecorded(),
            }
        }
        if self.unanswered.is_none() && !self.finished.is_empty() {
            self.done_reports += 1;
            self.unanswered = Some(DoneReport {
                number: self.done_reports,
                finished: std::mem::take(&mut self.finished).into_values().collect(),
            });
        }
        if let Some(report) = self.unanswered.take() {
            match self.with_store("reporting URLs done", |s| {
                s.finish(report.number, &report.finished)
            }) {
                Some(written) => {
                    for (f, ok) in report.finished.iter().zip(written) {
                        // In the done log, or never from here: either
                        // way no longer this node's to count.
                        self.link.reported(f.done.len());
                        if !ok {
                            log::warn!("cluster: partition {} is another node's now", f.partition);
                            self.forget(f.partition);
                        }
                    }
                }
                None => {
                    self.unanswered = Some(report);
                    return false;
                }
            }
        }
        self.give_up_late();
        let done = !self.busy();
        if done {
            self.waiting_since = None;
        }
        done
    }

    /// The answered URLs' records are written: to the ledger, and what it
    /// lets go to the per-partition reports.
    fn settle(&mut self) {
        let mut dropped = Vec::new();
        for done in std::mem::take(&mut self.answered) {
            if done.outcome == Outcome::Dropped {
                dropped.push(done.partition);
            }
            let f = finished_in(&mut self.finished, done.partition);
            if done.outcome == Outcome::Recorded {
                f.done.push((done.fingerprint, done.host));
                self.report.records += 1;
            }
            if let Some((p, id)) = self.ledger.answer(done.fingerprint, done.outcome) {
                finished_in(&mut self.finished, p).acks.push(id);
            }
        }
        self.finished
            .retain(|_, f| !f.done.is_empty() || !f.acks.is_empty());
        let records = self.report.records;
        self.gauge(|g| g.set_records(records));
        // A URL dropped while the partition is still held: its shard saw
        // the lease lapse (this thread was late to renew it) and stopped.
        // Its entry is abandoned, and only a new tenure claims it: the
        // partition is given up, to be taken again, but only once the
        // URLs recorded for it (some filed just above) are reported, or
        // their next owner would fetch them again.
        dropped.sort_unstable();
        dropped.dedup();
        for p in dropped {
            if self.leases.holds(p, Moment::now())
                && !self.leaving.contains_key(&p)
                && self.late.insert(p)
            {
                log::warn!("cluster: partition {p}: its fetches stopped while held (a renewal came late); giving it up, once what it recorded is reported, to take it again");
                self.link.set_held(p, None);
            }
        }
    }

    /// Give up the late partitions (see `late`) with no recorded URL
    /// waiting to be reported; the others wait for the next report.
    fn give_up_late(&mut self) {
        let reported: Vec<u32> = (self.late.iter().copied())
            .filter(|p| !self.finished.contains_key(p))
            .collect();
        for p in reported {
            // Forgotten here first (no record of it after Redis may give
            // it away), then released, or left to run out in Redis if the
            // connection is down: either way a new tenure claims the
            // entries.
            self.forget(p);
            let _ = self.with_store("releasing a lease", |s| s.release(p));
        }
    }

    /// The records could not be written: every answer counts as a drop,
    /// so the entries stay for the next owner.
    fn settle_unrecorded(&mut self) {
        for done in std::mem::take(&mut self.answered) {
            if done.outcome == Outcome::Recorded {
                self.link.reported(1);
            }
            let _ = self.ledger.answer(done.fingerprint, Outcome::Dropped);
        }
    }

    /// When this node has nothing in hand: is every stream empty? Then the
    /// crawl is over: the shards stop (the node's hold on the count goes).
    fn check_over(&mut self, now: Instant) {
        if self.link.over()
            || now < self.next_backlog
            || self.idle_reads == 0
            || self.ledger.open_urls() > 0
            || self.busy()
        {
            return;
        }
        self.next_backlog = now + backlog_wait(self.backlog_busy);
        self.backlog_busy = self.backlog_busy.saturating_add(1);
        let partitions = self.link.partitions();
        if let Some(Some(0)) = self.with_store("counting the backlog", |s| s.backlog(partitions)) {
            log::info!("cluster: every stream is drained; the crawl is over");
            self.link.set_over();
            self.report.over = true;
            // The shards see the count at zero on their next watch.
            self.outstanding.finish(1);
        }
    }

    /// Another process of this node's name joined the crawl, or the
    /// crawl is gone from Redis (`why`): this one acts for no partition
    /// any more (its shards write no record, start no fetch), sends Redis
    /// nothing more, and stops the crawl here.
    fn fence(&mut self, why: StoreError) {
        if self.fenced() {
            return;
        }
        match &why {
            StoreError::CrawlGone { .. } => {
                log::error!("cluster: {why}");
                self.report.crawl_gone = true;
            }
            _ => {
                log::error!(
                    "cluster: another process joined crawl {} as node {} while this one was cut off from Redis; this one stops, writing nothing more",
                    self.settings.crawl,
                    self.settings.name
                );
                self.report.superseded = true;
            }
        }
        self.report.error = Some(why.to_string());
        self.store = None;
        self.link.set_cut_off(true);
        for p in self.leases.held() {
            self.forget(p);
        }
        self.adds.clear();
        self.unsent = None;
        self.answered.clear();
        self.finished.clear();
        self.unanswered = None;
        self.waiting_since = None;
        // The shards see the crawl done on their next watch, and stop.
        self.outstanding.abort();
    }

    /// Redis said this process may write nothing more (superseded, or
    /// the crawl gone).
    pub(super) fn fenced(&self) -> bool {
        self.report.superseded || self.report.crawl_gone
    }

    /// While finishing with work not written: try to reconnect for a
    /// while; false once it is time to give up.
    fn leave_patiently(&mut self) -> bool {
        let now = Instant::now();
        let give_up = *self.give_up_at.get_or_insert(now + FINISH_PATIENCE);
        if now >= give_up {
            log::warn!("cluster: leaving with work not written to Redis (its entries stay; their next owner fetches them)");
            return false;
        }
        if self.store.is_none() {
            std::thread::sleep(RECONNECT_EVERY);
            self.reconnect();
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idle_node_asks_for_the_backlog_less_often_while_others_work() {
        assert_eq!(backlog_wait(0), BACKLOG_EVERY);
        assert_eq!(backlog_wait(1), BACKLOG_EVERY * 2);
        assert_eq!(backlog_wait(4), BACKLOG_EVERY * 16);
        assert_eq!(backlog_wait(5), BACKLOG_MAX);
        assert_eq!(backlog_wait(u32::MAX), BACKLOG_MAX);
    }

    #[test]
    fn reconnects_back_off_within_an_eighth_of_the_lease() {
        let ttl = Duration::from_secs(16);
        assert_eq!(reconnect_wait(0, ttl), RECONNECT_EVERY);
        assert_eq!(reconnect_wait(2, ttl), RECONNECT_EVERY * 4);
        assert_eq!(reconnect_wait(30, ttl), ttl / 8);
    }
}
