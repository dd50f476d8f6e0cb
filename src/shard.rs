//! One shard: the state of one core and the tasks that run on it.
//!
//! A shard owns the hosts that [`shard_for`] gives it: their seen-set and
//! queue (the [`Frontier`]), their politeness and robots.txt, their DNS
//! answers. It runs the chapter's loop — N workers take the next URL, fetch
//! it, record it, extract links and hand each link to its owner — plus one
//! receive task per peer (dedup + enqueue, never a send) and one flusher
//! task for batches that met a full channel. When all of its own fetch
//! slots are busy and a peer has one free, it lends the peer a ready page:
//! the peer fetches, records and routes it like its own and sends back the
//! host's release, so one busy host can keep every core fetching.
//! Everything here is `!Send` (`Rc`/`RefCell`) and no `RefCell` borrow is
//! held across an `.await`.
// Network data flows through here: a panic would take down a whole shard.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::unreachable
)]

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use glommio::channels::channel_mesh::Receivers;
use glommio::channels::shared_channel::ConnectedReceiver;
use glommio::task::JoinHandle;
use url::Url;

use crate::config::Config;
use crate::conn_pool::ConnPool;
use crate::dns::{Resolver, ResolverOptions};
use crate::fetch::{self, FetchError, Limits, Response};
use crate::frontier::{Frontier, Job, Next, Offer, Politeness};
use crate::mesh::{shard_for, Batch, FetchSlots, Outbox, Outstanding};
use crate::notify::Notify;
use crate::progress::{Progress, ShardCounters};
use crate::record::Record;
use crate::robots::{self, Rules, Verdict, MAX_ROBOTS_REDIRECTS};
use crate::sink::{RecordSink, SharedWriter};
use crate::stats::Stats;
use crate::url_set::UrlSet;
use crate::warc;
use crate::warc_file::{WarcFiles, WarcTarget};
use crate::{http, links, urls};

/// What a shard hands back when the crawl is over.
#[derive(Debug, Default)]
pub struct ShardResult {
    pub stats: Stats,
    /// Every record, if `Config::keep_records`.
    pub records: Vec<Record>,
    /// CPU time of this shard's thread.
    pub cpu: Duration,
    /// The JSONL output failed (the crawl went on).
    pub output_error: Option<String>,
}

/// What every shard of one crawl shares (cheap clones of `Arc`s).
#[derive(Clone)]
pub struct Shared {
    /// Crawl-wide count of unfinished URLs.
    pub outstanding: Arc<Outstanding>,
    /// JSONL destination, if any.
    pub records: Option<SharedWriter>,
    /// Set by SIGINT/SIGTERM.
    pub interrupt: Arc<AtomicBool>,
    /// Live counters for the progress line.
    pub progress: Arc<Progress>,
    /// WARC output (each shard fills in its own index).
    pub warc: Option<WarcTarget>,
    /// The crawl's fetch slots (`--max-tasks`), per shard.
    pub slots: Arc<FetchSlots>,
}

/// Per-core crawl state.
pub struct Shard {
    /// This shard's index, `0..shards`.
    id: usize,
    shards: usize,
    config: Arc<Config>,
    limits: Limits,
    /// Keep-alive connections idle between fetches of this shard (lent
    /// pages included: they are fetched here, on this shard's connections).
    connections: fetch::Pool,
    /// Seen-set and queue of the hosts this shard owns.
    frontier: RefCell<Frontier>,
    /// URLs this shard already sent to their owners (saves mesh traffic and
    /// gives `num_new_urls` for remote links).
    routed: RefCell<UrlSet>,
    /// Something a waiting dispatcher may care about changed: a URL was
    /// queued, a host slot freed, robots.txt arrived, or the shard stops.
    changed: Notify,
    /// Fetch tasks in flight, by id, so an interrupt can cancel them.
    fetches: RefCell<HashMap<u64, Option<JoinHandle<()>>>>,
    /// Id of the next fetch task.
    next_fetch: Cell<u64>,
    /// Notified when the last fetch task ends.
    fetches_done: Notify,
    /// The crawl's fetch slots (shared by all shards).
    slots: Arc<FetchSlots>,
    /// Notified when a fetch on this shard gives its slot back.
    slot_freed: Notify,
    /// Crawl-wide count of unfinished URLs (shared by all shards).
    outstanding: Arc<Outstanding>,
    /// Batches for other shards.
    outbox: Outbox,
    resolver: Resolver,
    stopping: Cell<bool>,
    /// Set by SIGINT/SIGTERM (shared by all shards).
    interrupt: Arc<AtomicBool>,
    /// Live counters for the progress line (this shard writes its own slot).
    progress: Arc<Progress>,
    /// URLs being fetched right now, to record them if the crawl is
    /// interrupted before they finish.
    in_flight: RefCell<HashSet<String>>,
    stats: RefCell<Stats>,
    records: RefCell<Vec<Record>>,
    sink: RecordSink,
    /// This shard's WARC files, if archiving.
    warc: Option<WarcFiles>,
    output_error: RefCell<Option<String>>,
}

impl Shard {
    pub fn new(id: usize, config: Arc<Config>, shared: Shared, outbox: Outbox) -> Rc<Self> {
        let limits = Limits {
            connect_timeout: config.connect_timeout,
            read_timeout: config.read_timeout,
            timeout: config.timeout,
            max_head: config.max_head,
            max_body: config.max_body,
            user_agent: config.user_agent.clone(),
            keep_raw: shared.warc.is_some(),
            keep_alive: config.keep_alive,
        };
        let warc = shared.warc.map(|target| {
            WarcFiles::start(WarcTarget {
                shard: id,
                ..target
            })
        });
        Rc::new(Shard {
            id,
            shards: config.cores,
            resolver: Resolver::with_options(
                config.resolve.clone(),
                ResolverOptions {
                    nameservers: (!config.dns_servers.is_empty())
                        .then(|| config.dns_servers.clone()),
                    ..ResolverOptions::default()
                },
            ),
            frontier: RefCell::new(Frontier::new(Politeness {
                per_host: config.per_host,
                delay: config.delay,
                max_pages_per_host: config.max_pages_per_host,
                robots: config.obey_robots,
                max_crawl_delay: config.max_crawl_delay,
            })),
            connections: RefCell::new(ConnPool::new(config.idle_connections)),
            config,
            limits,
            routed: RefCell::new(UrlSet::new()),
            changed: Notify::new(),
            fetches: RefCell::new(HashMap::new()),
            next_fetch: Cell::new(0),
            fetches_done: Notify::new(),
            slots: shared.slots,
            slot_freed: Notify::new(),
            outstanding: shared.outstanding,
            outbox,
            stopping: Cell::new(false),
            interrupt: shared.interrupt,
            progress: shared.progress,
            in_flight: RefCell::new(HashSet::new()),
            stats: RefCell::new(Stats::default()),
            records: RefCell::new(Vec::new()),
            sink: RecordSink::new(shared.records),
            warc,
            output_error: RefCell::new(None),
        })
    }

    /// Run the shard until the crawl is done: seed `roots` (already counted
    /// in `outstanding`), start workers, receivers and the flusher, and
    /// return this shard's results.
    pub async fn run(
        self: Rc<Self>,
        receivers: Option<Receivers<Batch>>,
        roots: Vec<Job>,
    ) -> ShardResult {
        let now = Instant::now();
        let duplicates = roots
            .into_iter()
            .map(|job| self.enqueue(job, now))
            .filter(|queued| !queued)
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

        // Normally the shard stops when the crawl is done and its last fetch
        // ends. On SIGINT/SIGTERM it stops taking URLs, gives in-flight
        // fetches a grace period, then cancels them and records them as
        // interrupted.
        let interrupted = futures_lite::future::or(
            async {
                self.wait_stopped().await;
                self.all_fetches_done().await;
                false
            },
            self.wait_for_interrupt(),
        )
        .await;
        if interrupted {
            let graceful = glommio::timer::timeout(INTERRUPT_GRACE, async {
                self.all_fetches_done().await;
                Ok(())
            })
            .await;
            if graceful.is_err() {
                let cut: Vec<JoinHandle<()>> = self
                    .fetches
                    .borrow_mut()
                    .drain()
                    .filter_map(|(_, h)| h)
                    .collect();
                for handle in cut {
                    handle.cancel();
                }
                let urls: Vec<String> = self.in_flight.borrow_mut().drain().collect();
                for url in urls {
                    self.emit(interrupted_record(url, self.id));
                }
            }
        }
        drop(dispatcher);
        self.outbox.overflow_added.notify_all();
        flusher.await;
        for task in receive_tasks {
            task.await;
        }
        if let Err(e) = self.sink.flush() {
            self.note_output_error(e);
        }
        if let Some(warc) = &self.warc {
            if let Err(e) = warc.close().await {
                self.output_error.borrow_mut().get_or_insert(e);
            }
        }
        ShardResult {
            stats: self.stats.take(),
            records: self.records.take(),
            cpu: thread_cpu_time(),
            output_error: self.output_error.take(),
        }
    }

    /// Completes once SIGINT/SIGTERM was seen, after stopping the shard
    /// (polled: a signal handler can only set a flag).
    async fn wait_for_interrupt(&self) -> bool {
        while !self.interrupt.load(Ordering::Relaxed) {
            glommio::timer::sleep(WATCH_INTERVAL).await;
        }
        self.outstanding.abort();
        self.stop();
        true
    }

    /// The chapter's N workers, as one dispatcher: whenever a fetch slot is
    /// free, take the next ready URL from the frontier and fetch it in a task
    /// of its own; when this shard's own slots are all busy and a peer has a
    /// free one, lend the page to that peer instead. Ends when the shard
    /// stops.
    async fn dispatch(self: Rc<Self>) {
        loop {
            let Some(slot) = self.take_slot().await else {
                return;
            };
            let Some(work) = self.next_work().await else {
                self.slots.give(slot);
                return;
            };
            match work {
                // Leases leave with the next flush, when the dispatcher
                // waits: pages lent in a row travel in one message.
                Work::Page(job) if slot != self.id => self.outbox.lend(slot, job),
                // robots.txt is fetched by its host's owner, on whichever
                // shard's slot it got: the crawl-wide count is what binds.
                work => self.spawn_work(work, slot),
            }
        }
    }

    /// A fetch slot: one of this shard's own, else one of a peer's; the
    /// shard whose slot it is. None once stopping.
    async fn take_slot(&self) -> Option<usize> {
        loop {
            if self.stopping.get() {
                return None;
            }
            if self.slots.try_take(self.id) {
                return Some(self.id);
            }
            if let Some(peer) = self.slots.take_other(self.id) {
                return Some(peer);
            }
            self.outbox.flush();
            if self.shards == 1 {
                self.slot_freed.notified().await;
            } else {
                // A return of a page lent to a peer wakes this (the slot is
                // free by then); a peer's own fetches free slots unseen
                // here: look again now and then.
                let nap = glommio::timer::sleep(SLOT_POLL);
                futures_lite::future::or(nap, self.slot_freed.notified()).await;
            }
        }
    }

    /// Run `work` in a task of its own, holding a slot of shard `slot` until
    /// it ends.
    fn spawn_work(self: &Rc<Self>, work: Work, slot: usize) {
        let id = self
            .next_fetch
            .replace(self.next_fetch.get().wrapping_add(1));
        // Registered before the spawn: a task that fails at once (bad
        // scheme, cached DNS failure) was seen to end before spawn_local
        // returned, and an entry added after that would never be removed
        // (the crawl then hung).
        self.fetches.borrow_mut().insert(id, None);
        let shard = self.clone();
        let handle = glommio::spawn_local(async move {
            shard.run_work(work).await;
            shard.slots.give(slot);
            if slot == shard.id {
                shard.slot_freed.notify_all();
            }
            // The page's links, and for a lent page its return, leave only
            // now: the owner that reads the return finds this slot already
            // free and can lend it the next page at once, not a SLOT_POLL
            // later.
            shard.outbox.flush();
            shard.fetch_ended(id);
        })
        .detach();
        if let Some(entry) = self.fetches.borrow_mut().get_mut(&id) {
            *entry = Some(handle);
        }
    }

    /// Wait for the frontier to give something to do; None once stopping.
    async fn next_work(&self) -> Option<Work> {
        loop {
            if self.stopping.get() {
                return None;
            }
            let now = Instant::now();
            let next = self.frontier.borrow_mut().next(now);
            match next {
                Next::Fetch(job) => return Some(Work::Page(job)),
                Next::Robots { host, example } => return Some(Work::Robots { host, example }),
                Next::Refused(job, verdict) => self.refuse(job, verdict),
                Next::Wait(at) => {
                    self.outbox.flush();
                    let nap = glommio::timer::sleep(at.saturating_duration_since(now));
                    futures_lite::future::or(nap, self.changed.notified()).await;
                }
                Next::Idle => {
                    self.outbox.flush();
                    self.changed.notified().await;
                }
            }
        }
    }

    /// Do one piece of work, then give the host's slot back: to this
    /// shard's frontier, or to the owner that lent the page, in the same
    /// message as the page's links (sent by the caller's flush).
    async fn run_work(&self, work: Work) {
        match work {
            Work::Page(job) => {
                let host = urls::host_of(&job.url).to_string();
                let failed = self.process(job).await;
                self.frontier
                    .borrow_mut()
                    .release(&host, failed, Instant::now());
            }
            Work::Robots { host, example } => {
                let rules = self.fetch_robots(&example).await;
                self.frontier.borrow_mut().set_robots(&host, rules);
            }
            Work::Lent { job, owner } => {
                let host = urls::host_of(&job.url).to_string();
                let failed = self.process(job).await;
                self.outbox.give_back(owner, host, failed);
                return;
            }
        }
        self.changed.notify_all();
    }

    fn fetch_ended(&self, id: u64) {
        let mut fetches = self.fetches.borrow_mut();
        fetches.remove(&id);
        if fetches.is_empty() {
            drop(fetches);
            self.fetches_done.notify_all();
        }
    }

    async fn all_fetches_done(&self) {
        while !self.fetches.borrow().is_empty() {
            self.fetches_done.notified().await;
        }
    }

    async fn wait_stopped(&self) {
        while !self.stopping.get() {
            self.changed.notified().await;
        }
    }

    /// robots.txt of the origin of `example`, with Google's status rules
    /// and up to [`MAX_ROBOTS_REDIRECTS`] redirects followed.
    async fn fetch_robots(&self, example: &str) -> Rules {
        let token = robots::agent_token(&self.config.user_agent);
        let Some(mut url) = Url::parse(example)
            .ok()
            .and_then(|u| u.join("/robots.txt").ok())
        else {
            return Rules::AllowAll;
        };
        for _ in 0..=MAX_ROBOTS_REDIRECTS {
            if url.scheme() != "http" {
                // Not fetchable here; its pages are recorded as such anyway.
                return Rules::AllowAll;
            }
            let (result, _) = self.fetch_with_retries(&url).await;
            self.stats.borrow_mut().robots_fetches += 1;
            let Ok(response) = result else {
                return Rules::Unavailable;
            };
            let status = response.head.status;
            if (300..400).contains(&status) {
                match response
                    .head
                    .location
                    .as_deref()
                    .and_then(|l| urls::join_redirect(&url, l))
                {
                    Some(next) => {
                        url = next;
                        continue;
                    }
                    None => return Rules::AllowAll,
                }
            }
            return Rules::from_answer(Some(status), &response.body, token);
        }
        // Too many redirects: as if there were no robots.txt.
        Rules::AllowAll
    }

    /// Record a URL that robots.txt keeps out, and count it out.
    fn refuse(&self, job: Job, verdict: Verdict) {
        let mut record = Record::new(job.url, self.id);
        match verdict {
            Verdict::Unavailable => fail(
                &mut record,
                "robots_unavailable",
                "robots.txt unreachable or 5xx: host not crawled",
            ),
            _ => fail(&mut record, "robots_disallowed", "disallowed by robots.txt"),
        }
        self.emit(record);
        if self.outstanding.finish(1) {
            self.stop();
        }
    }

    /// Receive batches from one peer: dedup and enqueue its jobs, start the
    /// pages it lent, release the hosts of pages it fetched for this shard.
    /// Never sends and never waits.
    async fn receive(self: Rc<Self>, peer: usize, rx: ConnectedReceiver<Batch>) {
        while let Some(batch) = rx.recv().await {
            let now = Instant::now();
            let dropped = batch
                .jobs
                .into_iter()
                .map(|job| self.enqueue(job, now))
                .filter(|queued| !queued)
                .count();
            if dropped > 0 && self.outstanding.finish(dropped) {
                self.stop();
            }
            for job in batch.leases {
                if self.stopping.get() {
                    // Only when the crawl was interrupted: like a URL still
                    // queued, a page not started is not recorded.
                    self.slots.give(self.id);
                } else {
                    self.spawn_work(Work::Lent { job, owner: peer }, self.id);
                }
            }
            if !batch.returns.is_empty() {
                let mut frontier = self.frontier.borrow_mut();
                for (host, failed) in &batch.returns {
                    frontier.release(host, *failed, now);
                }
                drop(frontier);
                self.changed.notify_all();
                // The peer gave each lent page's slot back before sending
                // its return: a dispatcher waiting for a slot may find one.
                self.slot_freed.notify_all();
            }
        }
        // The peer closed its senders: the crawl is over, or the peer died
        // and its work is lost, so nothing can finish the count any more.
        if !self.outstanding.is_done() {
            self.outstanding.abort();
        }
        self.stop();
    }

    /// Stop this shard: wake idle workers (they exit), end the flusher, and
    /// close the senders so every peer's receive loop ends and it stops too.
    fn stop(&self) {
        if self.stopping.replace(true) {
            return;
        }
        self.changed.notify_all();
        self.slot_freed.notify_all();
        self.outbox.close();
        self.outbox.overflow_added.notify_all();
    }

    /// Put a job this shard owns into its frontier; false if it was not
    /// queued (a duplicate, or its host is full).
    fn enqueue(&self, job: Job, now: Instant) -> bool {
        let offer = self.frontier.borrow_mut().offer(job, now);
        match offer {
            Offer::New => {
                self.changed.notify_all();
                true
            }
            Offer::Seen => false,
            Offer::HostFull => {
                self.stats.borrow_mut().skipped_host_full += 1;
                false
            }
        }
    }

    /// Hand a new URL to its owning shard, counting it in first; false if
    /// this shard already knew it or a crawl limit keeps it out.
    fn route(&self, job: Job, now: Instant) -> bool {
        if job.depth > self.config.max_depth {
            self.stats.borrow_mut().skipped_depth += 1;
            return false;
        }
        if job.url.len() > self.config.max_url_length {
            self.stats.borrow_mut().skipped_url_length += 1;
            return false;
        }
        let owner = shard_for(urls::host_of(&job.url), self.shards);
        if owner == self.id {
            // Counting in after the enqueue is safe here: no other task runs
            // before this one awaits, and this page is still counted.
            let queued = self.enqueue(job, now);
            if queued {
                self.outstanding.add(1);
            }
            queued
        } else {
            if !self.routed.borrow_mut().insert(&job.url) {
                return false;
            }
            self.outstanding.add(1);
            self.outbox.route(owner, job);
            true
        }
    }

    /// Fetch one URL, record it, route its links or its redirect target,
    /// then count it out (after its children were counted in). True if the
    /// host failed to answer usefully (network error, 5xx, 429). The routed
    /// links wait in the outbox for the caller's flush (while they do, the
    /// outstanding count holds them, so the crawl cannot end without them).
    async fn process(&self, job: Job) -> bool {
        let started = Instant::now();
        self.in_flight.borrow_mut().insert(job.url.clone());
        self.counters(|c| {
            c.in_flight.fetch_add(1, Ordering::Relaxed);
        });
        let mut record = Record::new(job.url.clone(), self.id);
        match Url::parse(&job.url) {
            Err(e) => fail(&mut record, "bad_url", &e.to_string()),
            Ok(url) => {
                let (result, tries) = self.fetch_with_retries(&url).await;
                record.tries = tries;
                match result {
                    Err(e) => fail(&mut record, e.kind(), &e.to_string()),
                    Ok(mut response) => {
                        let archived =
                            self.warc.as_ref().zip(response.raw.take()).map(|(_, raw)| {
                                let mut encoded = Vec::new();
                                let truncated = warc_truncation(&response);
                                warc::exchange_truncated(
                                    &warc::Exchange {
                                        target_uri: &job.url,
                                        ip: Some(response.peer.ip()),
                                        date: raw
                                            .sent_at
                                            .unwrap_or_else(std::time::SystemTime::now),
                                        request: &raw.request,
                                        response: &raw.response,
                                        payload_offset: response.head.head_len,
                                    },
                                    truncated,
                                    &mut encoded,
                                );
                                encoded
                            });
                        self.handle_response(&job, &url, response, &mut record);
                        if let (Some(warc), Some(encoded)) = (&self.warc, archived) {
                            warc.write(encoded).await;
                        }
                    }
                }
            }
        }
        record.elapsed_ms = started.elapsed().as_secs_f64() * 1e3;
        self.in_flight.borrow_mut().remove(&record.url);
        self.counters(|c| {
            c.in_flight.fetch_sub(1, Ordering::Relaxed);
        });
        let failed = record
            .status
            .map_or(record.error.is_some(), |s| s >= 500 || s == 429);
        self.emit(record);
        if self.outstanding.finish(1) {
            self.stop();
        }
        failed
    }

    /// Resolve, then fetch, retrying network errors up to `max_tries`.
    async fn fetch_with_retries(&self, url: &Url) -> (Result<Response, FetchError>, u32) {
        if url.scheme() != "http" {
            return (Err(FetchError::Scheme(url.scheme().to_string())), 1);
        }
        let port = url.port_or_known_default().unwrap_or(80);
        let addr = match self.resolver.resolve(urls::host(url), port).await {
            Ok(addr) => addr,
            Err(e) => return (Err(e.into()), 1),
        };
        let mut tries = 0;
        loop {
            tries += 1;
            match fetch::fetch(addr, url, &self.limits, &self.connections).await {
                Err(e) if e.is_retryable() && tries < self.config.max_tries => {
                    if self.config.verbosity > 0 {
                        eprintln!("try {tries} for {url} failed: {e}");
                    }
                    glommio::timer::sleep(Duration::from_millis(10 << tries.min(6))).await;
                }
                result => return (result, tries),
            }
        }
    }

    /// Fill the record from a response and route what it points to.
    fn handle_response(&self, job: &Job, url: &Url, response: Response, record: &mut Record) {
        let head = &response.head;
        record.status = Some(head.status);
        record.connect_ms = Some(response.connect.as_secs_f64() * 1e3);
        record.first_byte_ms = Some(response.first_byte.as_secs_f64() * 1e3);
        record.size = response.body.len() as u64;
        if let Some(ct) = &head.content_type {
            let (media, charset) = http::media_type(ct);
            record.content_type = Some(media);
            record.encoding = charset;
        }
        record.truncated = response.capped || response.body_error.is_some();
        if let Some(e) = &response.body_error {
            fail(record, e.kind(), &e.to_string());
        }
        if matches!(head.status, 301 | 302 | 303 | 307 | 308) {
            self.follow_redirect(job, url, head.location.as_deref(), record);
        } else if (200..300).contains(&head.status) && http::is_html(head.content_type.as_deref()) {
            let links: Vec<Url> = links::extract_links(&response.body, url)
                .into_iter()
                .filter(|l| self.config.scope.allows(l))
                .collect();
            record.num_urls = links.len();
            let now = Instant::now();
            for link in links {
                let job = Job {
                    url: link.into(),
                    redirects_left: self.config.max_redirect,
                    depth: job.depth.saturating_add(1),
                };
                record.num_new_urls += usize::from(self.route(job, now));
            }
        }
    }

    /// The chapter's redirect rule: not followed inline; the target is
    /// queued with one redirect fewer, so chains to one page coalesce.
    fn follow_redirect(&self, job: &Job, url: &Url, location: Option<&str>, record: &mut Record) {
        let Some(location) = location else {
            return fail(
                record,
                "redirect_no_location",
                "redirect without a Location header",
            );
        };
        let Some(target) = urls::join_redirect(url, location) else {
            return fail(
                record,
                "redirect_bad_location",
                &format!("unusable redirect Location {location:?}"),
            );
        };
        record.next_url = Some(target.as_str().to_string());
        if !self.config.scope.allows(&target) {
            return;
        }
        let next = Job {
            url: target.as_str().to_string(),
            redirects_left: job.redirects_left.saturating_sub(1),
            depth: job.depth,
        };
        if self.already_known(&next.url, urls::host(&target)) {
            return;
        }
        if job.redirects_left == 0 {
            return fail(
                record,
                "redirect_limit",
                &format!("redirect limit reached at {}", next.url),
            );
        }
        record.num_new_urls = usize::from(self.route(next, Instant::now()));
    }

    /// Whether this shard knows `url` was already queued (seen locally or
    /// routed to its owner before).
    fn already_known(&self, url: &str, host: &str) -> bool {
        if shard_for(host, self.shards) == self.id {
            self.frontier.borrow().has_seen(url)
        } else {
            self.routed.borrow().contains(url)
        }
    }

    /// Count, keep and write one record.
    fn emit(&self, record: Record) {
        if self.config.verbosity > 0 {
            let what = match (&record.status, &record.error) {
                (_, Some(e)) => e.clone(),
                (Some(s), None) => s.to_string(),
                (None, None) => String::new(),
            };
            eprintln!(
                "[{}] {} {} ({} links)",
                self.id, record.url, what, record.num_urls
            );
        }
        self.stats.borrow_mut().add(&record);
        let queued = self.frontier.borrow().queued() as u64;
        self.counters(|c| {
            c.pages.fetch_add(1, Ordering::Relaxed);
            c.errors
                .fetch_add(u64::from(record.error.is_some()), Ordering::Relaxed);
            c.bytes.fetch_add(record.size, Ordering::Relaxed);
            c.queued.store(queued, Ordering::Relaxed);
        });
        if let Err(e) = self.sink.write(&record) {
            self.note_output_error(e);
        }
        if self.config.keep_records {
            self.records.borrow_mut().push(record);
        }
    }

    /// Update this shard's progress counters.
    fn counters(&self, update: impl FnOnce(&ShardCounters)) {
        if let Some(c) = self.progress.shard(self.id) {
            update(c);
        }
    }

    fn note_output_error(&self, e: std::io::Error) {
        self.output_error
            .borrow_mut()
            .get_or_insert_with(|| format!("writing records: {e}"));
    }
}

/// Why an archived response is incomplete, for `WARC-Truncated`.
fn warc_truncation(response: &Response) -> Option<warc::Truncated> {
    match &response.body_error {
        None if response.capped => Some(warc::Truncated::Length),
        None => None,
        Some(FetchError::Deadline | FetchError::ReadTimeout) => Some(warc::Truncated::Time),
        Some(FetchError::Io(_) | FetchError::Body(crate::http::BodyError::Truncated)) => {
            Some(warc::Truncated::Disconnect)
        }
        Some(_) => Some(warc::Truncated::Unspecified),
    }
}

/// One piece of work for a fetch task.
enum Work {
    /// A page of one of this shard's hosts.
    Page(Job),
    /// robots.txt of one of this shard's hosts.
    Robots { host: String, example: String },
    /// A page a peer, the owner of its host, lent this shard to fetch.
    Lent { job: Job, owner: usize },
}

/// CPU time the calling thread has used.
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// Poll interval of the interrupt flag.
const WATCH_INTERVAL: Duration = Duration::from_millis(50);

/// How often a dispatcher whose own slots are all busy looks for a peer's
/// free slot, when no return of a lent page wakes it first (a peer's own
/// fetches free slots on its thread, without waking this one).
const SLOT_POLL: Duration = Duration::from_millis(1);

/// How long in-flight fetches may finish after SIGINT/SIGTERM.
pub const INTERRUPT_GRACE: Duration = Duration::from_millis(800);

/// The record of a fetch cancelled by an interrupt.
fn interrupted_record(url: String, shard: usize) -> Record {
    let mut record = Record::new(url, shard);
    fail(
        &mut record,
        "interrupted",
        "interrupted before the fetch finished",
    );
    record
}

/// Mark a record failed with a class and a one-line message.
fn fail(record: &mut Record, kind: &str, message: &str) {
    record.error_kind = Some(kind.to_string());
    record.error = Some(message.to_string());
}
