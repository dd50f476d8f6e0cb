//! One shard: the state of one core and the tasks that run on it.
//!
//! A shard owns the hosts that [`shard_for`](crate::keys::shard_for)
//! gives it: their seen-set and
//! queue (the [`Frontier`]), their politeness and robots.txt, their DNS
//! answers. It runs the chapter's loop — N workers take the next URL, fetch
//! it, record it, extract links and hand each link to its owner — plus one
//! receive task per peer (dedup + enqueue, never a send) and one flusher
//! task for batches that met a full channel. When all of its own fetch
//! slots are busy and a peer has one free, it lends the peer a ready page:
//! the peer fetches, records and routes it like its own and sends back the
//! host's release, so one busy host can keep every core fetching. With a
//! state directory it also journals the URLs it routes and holds each
//! record until they are on disk (`journal.rs`), and a resume starts by
//! replaying the earlier runs' journals. An index line waits for its WARC
//! bytes, and a page's for its record (`index.rs`).
//! Everything here is `!Send` (`Rc`/`RefCell`) and no `RefCell` borrow is
//! held across an `.await`.
mod archive;
mod cluster;
mod decode;
mod deliver;
mod dispatch;
mod exchange;
mod failure;
mod index;
mod journal;
mod live;
mod page;
mod receive;
mod recrawl;
mod replay;
mod robots;
mod seeds;
mod seen;
mod sitemap;
mod spill;
mod watch;

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::cell::{Cell, RefCell};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use glommio::channels::channel_mesh::Receivers;
use glommio::task::JoinHandle;

use crate::cluster::link::Link;
use crate::config::Config;
use crate::crawl::budget::Budget;
use crate::crawl::frontier::{Frontier, Politeness};
use crate::crawl::hooks::{Handler, Hooks};
use crate::crawl::mesh::{Batch, FetchSlots, Outbox};
use crate::crawl::seeds::split::SeedFile;
use crate::crawl::seen::SeenSet;
use crate::crawl::url_set::RecentUrls;
use crate::job::Job;
use crate::net::conn_pool::ConnPool;
use crate::net::dns::{Addresses, Resolver, ResolverOptions};
use crate::net::fetch::{self, Limits};
use crate::net::proxy::{Proxies, Rotation};
use crate::net::tls::{tickets_per_key, TlsClient};
use crate::output::captures::Captures;
use crate::output::progress::{Progress, ShardCounters, Waiting};
use crate::output::record::Record;
use crate::output::sink::RecordSink;
use crate::output::stats::Stats;
use crate::output::warc::dedup::Dedup;
use crate::output::warc::file::{WarcFiles, WarcTarget};
use crate::output::writer::WriterHandle;
use crate::sync::notify::Notify;
use crate::sync::{Outstanding, PerIp};
use crate::web::scope::Scope;
use cluster::ShardCluster;
use failure::interrupted_record;
pub(crate) use journal::Durability;
use journal::Journal;
use ringcrawl_http1::TypeRules;
use ringcrawl_links::KnownLinks;
use seen::{Asker, Awaiting, Deferred, Enqueued, Pending, Routed};
use watch::Halt;

/// What a shard hands back when the crawl is over.
#[derive(Debug, Default)]
pub(crate) struct ShardResult {
    pub stats: Stats,
    /// Every record, if `Config::keep_records`.
    pub records: Vec<Record>,
    /// CPU time of this shard's thread.
    pub cpu: Duration,
    /// Closing the WARC files failed.
    pub output_error: Option<String>,
    /// The WARC files this shard wrote and closed.
    pub warc_files: Vec<PathBuf>,
}

/// What every shard of one crawl shares (cheap clones of `Arc`s).
#[derive(Clone)]
pub(crate) struct Shared {
    /// Crawl-wide count of unfinished URLs.
    pub outstanding: Arc<Outstanding>,
    /// The JSONL writer, if records are written.
    pub records: Option<WriterHandle>,
    /// Set by SIGINT/SIGTERM.
    pub interrupt: Arc<AtomicBool>,
    /// Set when a shard's thread died: every other shard stops at once.
    pub shard_died: Arc<AtomicBool>,
    /// The crawl's budgets (`--max-pages`, `--max-bytes`, `--max-time`).
    pub budget: Arc<Budget>,
    /// Live counters for the progress line.
    pub progress: Arc<Progress>,
    /// WARC output (each shard fills in its own index).
    pub warc: Option<WarcTarget>,
    /// The crawl's fetch slots (`--max-tasks`), per shard.
    pub slots: Arc<FetchSlots>,
    /// What the library's caller gets of each page.
    pub hooks: Arc<Hooks>,
    /// Payloads archived so far, with `--warc-dedup`.
    pub dedup: Option<Arc<Dedup>>,
    /// In a recrawl (`--since`), the captures its pages are asked
    /// against.
    pub captures: Option<Arc<Captures>>,
    /// The CDXJ index writer, with `--cdxj`.
    pub cdxj: Option<WriterHandle>,
    /// The crawl's spill directory (made on the first spill; `crawl::run`
    /// removes it): each shard's segment files go in `shard-{id}` there.
    pub spill_dir: PathBuf,
    /// With seed lists: each shard's file of their roots (`seeds.rs`).
    pub seed_files: Option<Arc<[SeedFile]>>,
    /// With a state directory: the journals, and what a resume replays.
    pub durability: Option<Arc<Durability>>,
    /// In a cluster crawl: what the shards share with the cluster thread.
    pub cluster: Option<Arc<Link>>,
    /// With `--per-ip`: fetches in flight to each server address, over
    /// all shards.
    pub per_ip: Option<Arc<PerIp>>,
}

/// Per-core crawl state: what every task of the shard shares, and the own
/// state of each phase a page goes through (fetch, routing, record).
pub(crate) struct Shard {
    /// This shard's index, `0..shards`.
    id: usize,
    shards: usize,
    config: Arc<Config>,
    /// Queues and politeness of the hosts this shard owns.
    frontier: RefCell<Frontier>,
    /// Something a waiting dispatcher may care about changed: a URL was
    /// queued, a host slot freed, robots.txt arrived, or the shard stops.
    changed: Notify,
    /// The crawl's fetch slots (shared by all shards).
    slots: Arc<FetchSlots>,
    /// Crawl-wide count of unfinished URLs (shared by all shards).
    outstanding: Arc<Outstanding>,
    /// Batches for other shards.
    outbox: Outbox,
    stopping: Cell<bool>,
    /// Set by SIGINT/SIGTERM (shared by all shards).
    interrupt: Arc<AtomicBool>,
    /// Set when a shard's thread died (shared by all shards).
    shard_died: Arc<AtomicBool>,
    budget: Arc<Budget>,
    /// Live counters for the progress line (this shard writes its own slot).
    progress: Arc<Progress>,
    /// What the library's caller gets of each page (shared by all shards).
    hooks: Arc<Hooks>,
    /// This shard's page handler, made on this thread.
    handler: RefCell<Option<Handler>>,
    /// The crawl's spill directory (see [`Shared::spill_dir`]).
    spill_dir: PathBuf,
    /// This shard's file of seeds, read as the crawl goes (`seeds.rs`).
    seed_file: Option<SeedFile>,
    /// With a state directory: this shard's journal of routed URLs.
    journal: Option<Journal>,
    durability: Option<Arc<Durability>>,
    /// The crawl's scope (in a cluster crawl, see [`Shard::scope`]).
    scope: Arc<Scope>,
    /// In a cluster crawl: links and answers for the cluster thread.
    cluster: Option<ShardCluster>,
    /// The fetch phase's own state.
    fetching: Fetching,
    /// The routing phase's own state: new or not, and the tallies.
    newness: Newness,
    /// The record phase's own state: what the shard leaves behind.
    recording: Recording,
}

/// The fetch phase of a shard's pages: one exchange each, on this shard's
/// connections, TLS sessions and resolver, and the tasks that run them.
struct Fetching {
    /// The limits of a page's fetch.
    limits: Limits,
    /// The same without the media type rules: robots.txt and sitemaps
    /// are read whole.
    whole: Limits,
    /// Keep-alive connections idle between fetches of this shard (lent
    /// pages included: they are fetched here, on this shard's connections).
    connections: fetch::Pool,
    /// This shard's TLS client: its session cache holds this shard's hosts.
    tls: TlsClient,
    /// Fetch tasks in flight, by id, so an interrupt can cancel them.
    fetches: RefCell<HashMap<u64, Option<JoinHandle<()>>>>,
    /// Id of the next fetch task.
    next_fetch: Cell<u64>,
    /// Notified when the last fetch task ends.
    fetches_done: Notify,
    /// Notified when a fetch on this shard gives its slot back.
    slot_freed: Notify,
    resolver: Resolver,
    /// The crawl's proxies, and which of them this shard's hosts go
    /// through (a host keeps its own while it works).
    proxies: Proxies,
    rotation: RefCell<Rotation>,
    /// In a recrawl: the captures its pages are asked against, and their
    /// WARC files, read back on 304s.
    captures: Option<Arc<Captures>>,
    capture_files: recrawl::CaptureFiles,
    /// With `--per-ip`: the crawl-wide count of fetches in flight to each
    /// server address.
    per_ip: Option<Arc<PerIp>>,
    /// URLs being fetched right now, to record them if the crawl is
    /// interrupted before they finish.
    in_flight: RefCell<HashSet<String>>,
}

/// The routing phase of a shard's pages: whether a URL is new to the crawl
/// (the seen-set and the URLs pending its answer on disk), what was routed
/// lately, and the tallies a page's record waits for (`seen.rs`).
struct Newness {
    /// Every URL of this shard's hosts ever accepted (queued or refused):
    /// the chapter's `seen_urls`, asked before the frontier; in bounded
    /// memory, its runs on disk.
    seen: RefCell<SeenSet>,
    /// URLs whose newness waits for a lookup on disk (`seen.rs`).
    pending: RefCell<Vec<Pending>>,
    /// Woken when `pending` gains a URL.
    pending_added: Notify,
    /// Woken when the seen-set's RAM bucket is full.
    merge_due: Notify,
    /// Tallies held back while some URLs of their page are pending, by
    /// (shard of the page, page token).
    deferred: RefCell<HashMap<(usize, u64), Deferred>>,
    /// URLs this shard sent to their owners lately (saves mesh traffic:
    /// one sent again could not be new to the crawl); bounded, a cache.
    routed: RefCell<RecentUrls>,
    /// Links of this shard's pages it routed lately, by what they resolve
    /// from: met again, each is counted, not resolved nor routed (it could
    /// not be new to the crawl); fixed in size, a cache.
    known_links: RefCell<KnownLinks>,
    /// Token of the next page whose links are routed (see [`Batch::pages`]).
    next_page: Cell<u64>,
    /// Records of pages whose links went to other shards, waiting for those
    /// shards to say how many were new; by page token.
    awaiting: RefCell<HashMap<u64, Awaiting>>,
}

/// The record phase of a shard's pages: what it leaves behind (stats,
/// records, JSONL and CDXJ lines, WARC files) and whether writing it failed.
struct Recording {
    stats: RefCell<Stats>,
    records: RefCell<Vec<Record>>,
    sink: RecordSink,
    /// This shard's lines of the CDXJ index (`--cdxj`).
    cdxj: RecordSink,
    /// Index lines waiting for their WARC bytes (with `--warc --cdxj`).
    index: Option<index::Index>,
    /// This shard's WARC files, if archiving.
    warc: Option<WarcFiles>,
    /// Payloads archived so far, crawl-wide (`--warc-dedup`).
    dedup: Option<Arc<Dedup>>,
    output_error: RefCell<Option<String>>,
}

impl Shard {
    pub(crate) fn new(id: usize, config: Arc<Config>, shared: Shared, outbox: Outbox) -> Rc<Self> {
        let tls = TlsClient::new(
            &config.tls,
            config.tls_session_memory,
            tickets_per_key(config.per_host),
        );
        let limits = Limits {
            connect_timeout: config.connect_timeout,
            read_timeout: config.read_timeout,
            timeout: config.timeout,
            max_head: config.max_head,
            max_body: config.max_body,
            user_agent: config.user_agent.clone(),
            keep_raw: shared.warc.is_some(),
            keep_head: shared.hooks.wants_pages(),
            keep_alive: config.keep_alive,
            compressed: config.compression,
            headers: config.headers.clone(),
            credentials: config.credentials.clone(),
            types: config.types.clone(),
            cookies: config.cookies.clone(),
        };
        let config_scope = config.scope.clone();
        let warc = shared.warc.map(|target| {
            WarcFiles::start(WarcTarget {
                shard: id,
                ..target
            })
        });
        let seed_file = shared
            .seed_files
            .as_ref()
            .and_then(|files| files.get(id).cloned());
        Rc::new(Shard {
            fetching: Fetching {
                tls,
                resolver: Resolver::with_options(
                    config.resolve.clone(),
                    ResolverOptions {
                        nameservers: (!config.dns_servers.is_empty())
                            .then(|| config.dns_servers.clone()),
                        families: config.families,
                        journal: config.warc_dns && config.warc_dir.is_some(),
                        ..ResolverOptions::default()
                    },
                ),
                connections: RefCell::new(ConnPool::new(config.idle_connections)),
                proxies: config.proxies.clone(),
                rotation: RefCell::default(),
                captures: shared.captures.clone(),
                capture_files: recrawl::CaptureFiles::default(),
                per_ip: shared.per_ip.clone(),
                whole: Limits {
                    types: TypeRules::default(),
                    ..limits.clone()
                },
                limits,
                fetches: RefCell::new(HashMap::new()),
                next_fetch: Cell::new(0),
                fetches_done: Notify::new(),
                slot_freed: Notify::new(),
                in_flight: RefCell::new(HashSet::new()),
            },
            newness: Newness {
                seen: RefCell::new(SeenSet::new(
                    Some(shared.spill_dir.join(format!("seen-{id}"))),
                    config.seen_memory / config.cores.max(1),
                    config.fingerprint_key,
                )),
                pending: RefCell::new(Vec::new()),
                pending_added: Notify::new(),
                merge_due: Notify::new(),
                deferred: RefCell::new(HashMap::new()),
                routed: RefCell::new(RecentUrls::new(ROUTED_MEMORY)),
                known_links: RefCell::new(KnownLinks::with_slots(KNOWN_LINK_SLOTS)),
                next_page: Cell::new(0),
                awaiting: RefCell::new(HashMap::new()),
            },
            recording: Recording {
                stats: RefCell::new(Stats::default()),
                records: RefCell::new(Vec::new()),
                sink: RecordSink::new(shared.records),
                index: (shared.cdxj.is_some() && warc.is_some()).then(index::Index::default),
                cdxj: RecordSink::new(shared.cdxj),
                warc,
                dedup: shared.dedup,
                output_error: RefCell::new(None),
            },
            id,
            shards: config.cores,
            frontier: RefCell::new(Frontier::new(Politeness {
                per_host: config.per_host,
                delay: config.delay,
                max_pages_per_host: config.max_pages_per_host,
                max_sitemaps_per_host: config.sitemap_limits.max_per_host,
                max_depth: config.max_depth,
                max_url_length: config.max_url_length,
                robots: config.obey_robots,
                max_crawl_delay: config.max_crawl_delay,
                delay_factor: config.delay_factor,
                max_delay: config.max_delay,
                robots_retries: config.robots_retries.clone(),
                host_memory: (config.host_memory / config.cores.max(1))
                    .max(crate::defaults::MIN_HOST_MEMORY_PER_SHARD),
                memory: (config.frontier_memory / config.cores.max(1)).max(1),
                host_rules: config.host_rules.clone(),
            })),
            config,
            changed: Notify::new(),
            slots: shared.slots,
            outstanding: shared.outstanding,
            outbox,
            stopping: Cell::new(false),
            interrupt: shared.interrupt,
            shard_died: shared.shard_died,
            budget: shared.budget,
            progress: shared.progress,
            handler: RefCell::new(shared.hooks.handler.as_ref().map(|make| make(id))),
            hooks: shared.hooks,
            spill_dir: shared.spill_dir,
            journal: shared
                .durability
                .as_ref()
                .and_then(|d| d.journals.get(id).cloned())
                .map(|path| {
                    let seeds = seed_file.as_ref();
                    Journal::new(
                        path,
                        seeds.and_then(|f| f.position.clone()),
                        seeds.map_or(0, |f| f.start),
                    )
                }),
            seed_file,
            durability: shared.durability,
            scope: Arc::new(config_scope),
            cluster: shared.cluster.map(ShardCluster::new),
        })
    }

    /// Run the shard until the crawl is done: seed `roots` (already counted
    /// in `outstanding`), start workers, receivers and the flusher, and
    /// return this shard's results.
    pub(crate) async fn run(
        self: Rc<Self>,
        receivers: Option<Receivers<Batch>>,
        roots: Vec<Job>,
    ) -> ShardResult {
        // A resume: the URLs with a record are seen before anything else
        // is offered (the peers' batches wait in the channels). The
        // progress line says so until the replay is over.
        if self.durability.as_ref().is_some_and(|d| d.resuming) {
            self.counters(|c| {
                c.set_waiting(Waiting {
                    replaying: 1,
                    ..Waiting::default()
                })
            });
        }
        self.take_done().await;
        let journal = glommio::spawn_local(self.clone().keep_journal());
        let index = glommio::spawn_local(self.clone().keep_index());
        let now = Instant::now();
        let duplicates = roots
            .into_iter()
            .map(|job| self.enqueue(job, now, Asker::Nobody))
            .filter(|enqueued| matches!(enqueued, Enqueued::Known | Enqueued::Refused))
            .count();
        if duplicates > 0 {
            self.outstanding.finish(duplicates);
        }
        if self.outstanding.is_done() {
            self.stop();
        }

        let receive_tasks: Vec<_> = receivers
            .map(|mut r| r.streams())
            .unwrap_or_default()
            .into_iter()
            .map(|(peer, rx)| glommio::spawn_local(self.clone().receive(peer, rx)))
            .collect();
        let flusher = glommio::spawn_local({
            let shard = self.clone();
            async move { shard.outbox.drain_overflow(|| shard.stopping.get()).await }
        });
        let dispatcher = glommio::spawn_local(self.clone().dispatch());
        let resolver = glommio::spawn_local(self.clone().resolve_pending());
        let merger = glommio::spawn_local(self.clone().merge_seen());
        let spill = glommio::spawn_local(self.clone().spill());
        let cluster = glommio::spawn_local(self.clone().keep_cluster());
        let seeds = glommio::spawn_local(self.clone().feed_seeds());
        // A resume: the earlier runs' URLs without a record are queued
        // again (the workers already fetch what comes first).
        self.replay().await;
        self.say_waiting();

        // Normally the shard stops when the crawl is done and its last fetch
        // ends. On SIGINT/SIGTERM it stops taking URLs, gives in-flight
        // fetches a grace period, then cancels them and records them as
        // interrupted; when the output ended (its reader left, a write
        // failed) or another shard died, it cancels them at once.
        let halt = futures_lite::future::or(
            async {
                self.wait_stopped().await;
                self.all_fetches_done().await;
                None
            },
            async { Some(self.watch().await) },
        )
        .await;
        if let Some(halt) = halt {
            let graceful = match halt {
                Halt::Signal => glommio::timer::timeout(INTERRUPT_GRACE, async {
                    self.all_fetches_done().await;
                    Ok(())
                })
                .await
                .is_ok(),
                Halt::Now => self.fetching.fetches.borrow().is_empty(),
                Halt::Budget => {
                    self.all_fetches_done().await;
                    true
                }
            };
            if !graceful {
                let cut: Vec<JoinHandle<()>> = self
                    .fetching
                    .fetches
                    .borrow_mut()
                    .drain()
                    .filter_map(|(_, h)| h)
                    .collect();
                for handle in cut {
                    handle.cancel();
                }
                let urls: Vec<String> = self.fetching.in_flight.borrow_mut().drain().collect();
                // With a state directory they get no record: they are in
                // a journal, and a resume fetches them; in a cluster crawl
                // they are in their streams, for the next owner.
                if self.journal.is_none() && self.cluster.is_none() {
                    for url in urls {
                        self.emit(interrupted_record(url, self.id));
                    }
                }
            }
        }
        drop(dispatcher);
        // The resolver and the merger end at their next turn (the stop woke
        // them). They are awaited, not cancelled: a merge cut short would
        // drop glommio's DMA writer while it closes, which aborts.
        resolver.await;
        merger.await;
        seeds.await;
        self.outbox.overflow_added.notify_all();
        flusher.await;
        // The spill's reads and writes in flight end; its files go with
        // the crawl's spill directory.
        self.changed.notify_all();
        spill.await;
        // A dead peer's tasks are never dropped (glommio leaks a panicked
        // executor's tasks), so its senders never close: waiting for the
        // channel from it to end would wait forever.
        let peer_died = self.shard_died.load(Ordering::Acquire);
        for task in receive_tasks {
            if peer_died {
                task.cancel().await;
            } else {
                task.await;
            }
        }
        // Pages peers lent before a budget was spent arrive until their
        // channels close, and run (see `receive`): their records too are
        // written before the sink is handed off.
        self.all_fetches_done().await;
        // Only when the crawl ended early: pages still waiting for a tally
        // are recorded with the links known to be new so far.
        let waiting: Vec<Awaiting> = self
            .newness
            .awaiting
            .borrow_mut()
            .drain()
            .map(|(_, a)| a)
            .collect();
        for page in waiting {
            if let Some(mut record) = page.record {
                record.num_new_urls += page.new;
                self.emit(*record);
            }
        }
        self.close_journal(journal).await;
        // The last links and answers, now that every record is emitted
        // (while the WARC files are open: answers wait for their bytes).
        cluster.await;
        self.hand_to_node().await;
        self.recording.sink.hand_off();
        let mut warc_files = Vec::new();
        if let Some(warc) = &self.recording.warc {
            match warc.close().await {
                Ok(files) => warc_files = files,
                Err(e) => {
                    self.recording.output_error.borrow_mut().get_or_insert(e);
                }
            }
        }
        // The index lines whose bytes are in the files now, and only those.
        self.finish_index(index);
        {
            let mut stats = self.recording.stats.borrow_mut();
            self.tally(&mut stats);
        }
        // The status server's last word from this shard: the numbers its
        // result carries.
        self.publish_live(&mut None, true);
        self.recording.cdxj.hand_off();
        ShardResult {
            stats: self.recording.stats.take(),
            records: self.recording.records.take(),
            cpu: thread_cpu_time(),
            output_error: self.recording.output_error.take(),
            warc_files,
        }
    }

    /// Update this shard's progress counters.
    fn counters(&self, update: impl FnOnce(&ShardCounters)) {
        if let Some(c) = self.progress.shard(self.id) {
            update(c);
        }
    }
}

/// One piece of work for a fetch task.
enum Work {
    /// A page of one of this shard's hosts.
    Page(Job),
    /// robots.txt of the origin of `example`, a URL of one of this shard's
    /// hosts; with `sitemaps`, its `Sitemap:` lines are queued.
    Robots { example: String, sitemaps: bool },
    /// A page a peer, the owner of its host, lent this shard to fetch,
    /// with the host's addresses as the owner resolved them.
    Lent {
        job: Job,
        owner: usize,
        addrs: Option<Addresses>,
    },
}

/// CPU time the calling thread has used.
fn thread_cpu_time() -> Duration {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(
        u64::try_from(ts.tv_sec).unwrap_or(0),
        u32::try_from(ts.tv_nsec).unwrap_or(0).min(999_999_999),
    )
}

/// How often a dispatcher held back by a writer that is behind looks again.
const BACKLOG_POLL: Duration = Duration::from_millis(5);

/// How often a dispatcher whose own slots are all busy looks for a peer's
/// free slot, when no return of a lent page wakes it first (a peer's own
/// fetches free slots on its thread, without waking this one).
const SLOT_POLL: Duration = Duration::from_millis(1);

/// URLs a shard remembers having routed to peers, per generation (two are
/// kept, 17 bytes a table slot, 256 Ki slots each: 9 MB at most); more
/// would only save a few mesh messages.
const ROUTED_MEMORY: usize = 128 << 10;

/// Links a shard remembers having routed (16 bytes a slot: 2 MiB): the
/// links its pages share (menus, footers, the pages every page links to)
/// are the ones met most often and stay.
const KNOWN_LINK_SLOTS: usize = 128 << 10;

/// How long in-flight fetches may finish after SIGINT/SIGTERM.
pub(crate) const INTERRUPT_GRACE: Duration = Duration::from_millis(800);
