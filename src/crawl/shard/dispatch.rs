//! The shard's dispatcher: the chapter's N workers as one loop that takes a
//! fetch slot (its own, or a peer's to lend that peer a page), asks the
//! frontier for the next ready work and runs it in a task of its own; and
//! the bookkeeping of those tasks (so an interrupt can cancel them and the
//! shard knows when the last one ended).
//!
//! Not what a fetch does with its page: that is `page.rs`.

use std::rc::Rc;
use std::time::Instant;

use ringcrawl_links::urls;

use crate::cluster::ledger::Outcome;
use url::Url;

use crate::crawl::frontier::Next;
use crate::crawl::mesh::{Lease, PageEnd};
use crate::job::Job;

use super::exchange::fetch_target;
use super::{Shard, Work, BACKLOG_POLL, SLOT_POLL};

/// URLs the seen-set may hold beyond its buckets while a merge runs (some
/// 16 MB) before no new fetch starts.
const SEEN_OVERFLOW: usize = 1 << 20;

/// URLs that may wait for a lookup on disk (each holds its job, ~250
/// bytes, and may hold back its page's record) before no new fetch starts.
const PENDING_LIMIT: usize = 64 << 10;

/// Pages of this shard whose records may wait for their links' tallies
/// (each holds its record, ~800 bytes) before no new fetch starts. They
/// pile up when peers' lookups on disk lag: unbounded, they were 170K a
/// shard at the end of a 10M-page crawl.
const AWAITING_LIMIT: usize = 32 << 10;

impl Shard {
    /// The chapter's N workers, as one dispatcher: whenever a fetch slot is
    /// free, take the next ready URL from the frontier and fetch it in a task
    /// of its own; when this shard's own slots are all busy and a peer has a
    /// free one, lend the page to that peer instead. Ends when the shard
    /// stops.
    pub(super) async fn dispatch(self: Rc<Self>) {
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
                Work::Page(job) if slot != self.id => self.lend(slot, job),
                // robots.txt is fetched by its host's owner, on whichever
                // shard's slot it got: the crawl-wide count is what binds.
                work => self.spawn_work(work, slot),
            }
        }
    }

    /// A fetch slot: one of this shard's own, else one of a peer's; the
    /// shard whose slot it is. None once stopping. While the records'
    /// writer or the caller's page stream is behind, or the seen-set's
    /// disk is (see [`Self::seen_behind`]), or the journal's `fdatasync`
    /// is (`journal.rs`), or the frontier is past its bound with its spill
    /// failing (`spill.rs`), none is
    /// taken: no fetch starts (the running ones go on), so a slow output
    /// or disk holds the crawl back instead of filling memory.
    pub(super) async fn take_slot(&self) -> Option<usize> {
        loop {
            if self.stopping.get() {
                return None;
            }
            let behind = self.recording.sink.behind()
                || self.recording.cdxj.behind()
                || self.hooks.stream.as_ref().is_some_and(|s| s.behind())
                || self.seen_behind()
                || self.tallies_behind()
                || self.frontier.borrow().spill_held_back()
                || self.journal_behind()
                || self.cluster.as_ref().is_some_and(|c| c.link.behind());
            self.slots.set_paused(self.id, behind);
            if behind {
                self.outbox.flush();
                glommio::timer::sleep(BACKLOG_POLL).await;
                continue;
            }
            if self.slots.try_take(self.id) {
                return Some(self.id);
            }
            if let Some(peer) = self.slots.take_other(self.id) {
                return Some(peer);
            }
            self.outbox.flush();
            if self.shards == 1 {
                self.fetching.slot_freed.notified().await;
            } else {
                // A return of a page lent to a peer wakes this (the slot is
                // free by then); a peer's own fetches free slots unseen
                // here: look again now and then.
                let nap = glommio::timer::sleep(SLOT_POLL);
                futures_lite::future::or(nap, self.fetching.slot_freed.notified()).await;
            }
        }
    }

    /// Whether this shard's seen-set disk is behind: its overflow past
    /// [`SEEN_OVERFLOW`] URLs while it merges, or more than
    /// [`PENDING_LIMIT`] URLs waiting for lookups. Its own merger and
    /// resolver catch up, whatever the dispatcher does (the resume's replay
    /// waits on this too).
    pub(super) fn seen_behind(&self) -> bool {
        self.newness.seen.borrow().overflow_len() > SEEN_OVERFLOW
            || self.newness.pending.borrow().len() > PENDING_LIMIT
    }

    /// Whether more than [`AWAITING_LIMIT`] pages of this shard wait for
    /// tallies (from lookups anywhere). Not for the replay to wait on: the
    /// tallies come through outboxes that only dispatchers and fetches
    /// flush, and a replay adds no waiting page.
    fn tallies_behind(&self) -> bool {
        self.newness.awaiting.borrow().len() > AWAITING_LIMIT
    }

    /// Lend `job`, a page of one of this shard's hosts, to `peer`, whose
    /// slot was taken, with the host's addresses from this shard's
    /// resolver: at once when it knows them, else after its lookup, in a
    /// task of its own so the dispatcher goes on (the peer's slot stays
    /// taken meanwhile). Without an answer (a failed lookup, `--max-time`
    /// up first, a URL that is not http) the peer resolves the host itself.
    fn lend(self: &Rc<Self>, peer: usize, job: Job) {
        let url = Url::parse(&job.url).ok();
        let target = url
            .as_ref()
            .and_then(fetch_target)
            .map(|(host, port)| (host.to_string(), port));
        let Some((host, port)) = target else {
            self.outbox.lend(
                peer,
                Lease {
                    job,
                    addrs: Vec::new(),
                },
            );
            return;
        };
        if let Some(known) = self.fetching.resolver.resolve_now(&host, port) {
            let addrs = known.map(|a| a.to_vec()).unwrap_or_default();
            self.outbox.lend(peer, Lease { job, addrs });
            return;
        }
        let shard = self.clone();
        glommio::spawn_local(async move {
            let resolved = shard.resolve_in_time(&host, port).await;
            shard.archive_lookups().await;
            let addrs = match resolved {
                Some(Ok(addrs)) => addrs.to_vec(),
                _ => Vec::new(),
            };
            shard.outbox.lend(peer, Lease { job, addrs });
            shard.outbox.flush();
        })
        .detach();
    }

    /// Run `work` in a task of its own, holding a slot of shard `slot` until
    /// it ends.
    pub(super) fn spawn_work(self: &Rc<Self>, work: Work, slot: usize) {
        let id = self
            .fetching
            .next_fetch
            .replace(self.fetching.next_fetch.get().wrapping_add(1));
        // Registered before the spawn: a task that fails at once (bad
        // scheme, cached DNS failure) was seen to end before spawn_local
        // returned, and an entry added after that would never be removed
        // (the crawl then hung).
        self.fetching.fetches.borrow_mut().insert(id, None);
        // Counted node-wide until its record is counted (`Link::behind`).
        let link = self.cluster.as_ref().map(|c| c.link.clone());
        if let Some(link) = &link {
            link.fetch_started();
        }
        let shard = self.clone();
        let handle = glommio::spawn_local(async move {
            shard.run_work(work).await;
            if let Some(link) = link {
                link.fetch_ended();
            }
            shard.slots.give(slot);
            if slot == shard.id {
                shard.fetching.slot_freed.notify_all();
            }
            // The page's links, and for a lent page its return, leave only
            // now: the owner that reads the return finds this slot already
            // free and can lend it the next page at once, not a SLOT_POLL
            // later.
            shard.outbox.flush();
            shard.fetch_ended(id);
        })
        .detach();
        if let Some(entry) = self.fetching.fetches.borrow_mut().get_mut(&id) {
            *entry = Some(handle);
        }
    }

    /// Wait for the frontier to give something to do; None once stopping.
    pub(super) async fn next_work(&self) -> Option<Work> {
        loop {
            if self.stopping.get() {
                return None;
            }
            let now = Instant::now();
            let next = self.frontier.borrow_mut().next(now);
            let (io, lost) = {
                let frontier = self.frontier.borrow();
                (frontier.has_spill_io(), frontier.has_lost())
            };
            if lost {
                self.spilled();
            } else if io {
                // A host's next chunk is to be read: wake the spill task.
                self.changed.notify_all();
            }
            match next {
                // A cluster crawl: the partition is no longer this node's.
                Next::Fetch(job) if !self.may_fetch(&job.url) => self.drop_unowned(job, now),
                Next::Refused(Job { url, .. }, _) | Next::Limited(Job { url, .. }, _)
                    if !self.may_record(&url) =>
                {
                    self.answer_url(&url, Outcome::Dropped);
                    if self.outstanding.finish(1) {
                        self.stop();
                    }
                }
                Next::Limited(job, limit) => self.limited(job, limit),
                // --per-ip: an address known full now waits without a
                // task, a page of the budget or a slot.
                Next::Fetch(job) if self.address_full(&job.url) => {
                    self.frontier.borrow_mut().hold(job, now);
                }
                Next::Robots { example, .. } if self.address_full(&example) => {
                    self.frontier.borrow_mut().hold_robots(&example, now);
                }
                Next::Fetch(job) if self.budget.take_page() => return Some(Work::Page(job)),
                Next::Fetch(job) => {
                    // A budget is spent: the crawl stops (the watch sees
                    // it); the page stays queued. Pages already lent leave
                    // now, before the watch closes the channels.
                    self.frontier.borrow_mut().put_back(job);
                    self.outbox.flush();
                    return None;
                }
                Next::Robots { example, root, .. } => {
                    return Some(Work::Robots {
                        example,
                        sitemaps: root && self.config.sitemaps,
                    })
                }
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

    /// Whether `url`'s server address, as this shard's resolver knows it
    /// now, has `--per-ip` fetches running (false when unknown, or when
    /// the fetch would go through a proxy that resolves names itself:
    /// the fetch's own place decides, `page.rs`).
    fn address_full(&self, url: &str) -> bool {
        let Some(per_ip) = &self.fetching.per_ip else {
            return false;
        };
        let Ok(parsed) = Url::parse(url) else {
            return false;
        };
        let Some((host, port)) = fetch_target(&parsed) else {
            return false;
        };
        let candidates = self.fetching.proxies.candidates(parsed.scheme(), host);
        let proxy = self
            .fetching
            .rotation
            .borrow()
            .pick(candidates, host, Instant::now());
        if proxy.is_some_and(|p| !p.resolves_locally()) {
            return false;
        }
        match self.fetching.resolver.resolve_now(host, port) {
            Some(Ok(addrs)) => addrs
                .first()
                .is_some_and(|a| per_ip.in_flight(a.ip()) >= per_ip.limit()),
            _ => false,
        }
    }

    /// Do one piece of work, then give the host's slot back: to this
    /// shard's frontier, or to the owner that lent the page, in the same
    /// message as the page's links (sent by the caller's flush).
    pub(super) async fn run_work(&self, work: Work) {
        match work {
            Work::Page(job) => {
                let host = urls::host_of(&job.url).to_string();
                let ended = self.process(job, None).await;
                let mut frontier = self.frontier.borrow_mut();
                match ended {
                    PageEnd::Done { failed, took } => {
                        let streak = frontier.release_after(&host, failed, took, Instant::now());
                        self.recording
                            .stats
                            .borrow_mut()
                            .backed_off
                            .note(&host, streak);
                    }
                    PageEnd::Later { job, wait } => frontier.retry_later(job, wait, Instant::now()),
                    PageEnd::Held { job } => frontier.hold(job, Instant::now()),
                }
            }
            Work::Robots { example, sitemaps } => {
                let rules = self.fetch_robots(&example, sitemaps).await;
                let mut frontier = self.frontier.borrow_mut();
                match rules {
                    Some(rules) => frontier.set_robots(&example, rules, Instant::now()),
                    None => frontier.hold_robots(&example, Instant::now()),
                }
            }
            Work::Lent { job, owner, addrs } => {
                let host = urls::host_of(&job.url).to_string();
                let ended = self.process(job, addrs).await;
                self.outbox.give_back(owner, host, ended);
                return;
            }
        }
        self.changed.notify_all();
    }

    pub(super) fn fetch_ended(&self, id: u64) {
        let mut fetches = self.fetching.fetches.borrow_mut();
        fetches.remove(&id);
        if fetches.is_empty() {
            drop(fetches);
            self.fetching.fetches_done.notify_all();
        }
    }

    pub(super) async fn all_fetches_done(&self) {
        while !self.fetching.fetches.borrow().is_empty() {
            self.fetching.fetches_done.notified().await;
        }
    }

    pub(super) async fn wait_stopped(&self) {
        while !self.stopping.get() {
            self.changed.notified().await;
        }
    }
}
