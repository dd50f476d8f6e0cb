//! Everything that crosses cores: the crawl-wide pool of fetch slots, and
//! the batched, deadlock-free sending of URLs, lent pages and their
//! returns to other shards. Which shard owns a host is `crate::keys`'s
//! `shard_for`; the count of outstanding URLs that decides when the crawl
//! is done is `crate::sync::Outstanding`.
//!
//! Invariants kept here:
//! - URLs go to the shard `shard_for` names, a fixed-key hash identical on
//!   every thread and run, so a host belongs to exactly one shard for the
//!   whole crawl. A shard may lend a page of its host to a peer to fetch
//!   ([`Batch::leases`]); the host's queue, politeness, robots and DNS
//!   answers stay with the owner, which sends the host's addresses with
//!   the page and learns from [`Batch::returns`] when the page is done.
//! - [`FetchSlots`] never lets more fetches run than `--max-tasks`, however
//!   they are spread over shards.
//! - Senders never block the receive path: [`Outbox::flush`] only
//!   `try_send`s; a full channel parks the batch in a local overflow queue
//!   that a separate flusher task drains with awaited sends.
//! - `Outstanding` is incremented before a URL is handed to any shard and
//!   decremented only after its children were counted, and after the
//!   shards its links went to said how many were new (the tallies).
use std::cell::RefCell;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use glommio::channels::channel_mesh::Senders;
use glommio::{GlommioError, ResourceType};

use crate::job::Job;
use crate::sync::notify::Notify;

/// What one shard sends another in one channel message.
#[derive(Debug, Default, Clone)]
pub(crate) struct Batch {
    /// URLs the receiver owns, to deduplicate and enqueue.
    pub jobs: Vec<Job>,
    /// `jobs` in order, grouped by the sender's page that found them: the
    /// page's token and how many of the jobs are its. The receiver answers
    /// each group with a tally.
    pub pages: Vec<(u64, u32)>,
    /// Answers to the receiver's groups: the page's token and how many of
    /// its jobs were new to the crawl (queued, not seen before), so the
    /// page's `num_new_urls` counts links new to the crawl.
    pub tallies: Vec<(u64, u32)>,
    /// Pages of the sender's hosts for the receiver to fetch, record and
    /// route on the sender's behalf. The receiver's fetch slot for each was
    /// already taken by the sender ([`FetchSlots::take_other`]).
    pub leases: Vec<Lease>,
    /// Leases of the receiver's hosts that the sender finished: the host,
    /// and whether it failed to answer usefully (for the owner's backoff).
    pub returns: Vec<Return>,
}

/// A page lent to a peer, and where its host is: the owner's DNS answer,
/// in the order to try (empty if the owner had none, and the peer looks
/// the host up itself). A host is owned by one shard, and so is its DNS
/// answer: with many hosts a peer's own lookup would double the queries.
#[derive(Debug, Clone)]
pub(crate) struct Lease {
    pub job: Job,
    pub addrs: Vec<SocketAddr>,
}

/// How the fetch of a page ended, for its host's owner.
#[derive(Debug, Clone)]
pub(crate) enum PageEnd {
    /// Recorded; `failed` if the host failed to answer usefully
    /// (network error, 5xx, 429), for its backoff; `took` from the
    /// fetch's start to its end, for an adaptive delay.
    Done { failed: bool, took: Duration },
    /// Not recorded: the server said to come back after `wait` (429 or
    /// 503 with `Retry-After`), so the job goes back to its host's queue.
    Later { job: Job, wait: Duration },
    /// Not started: its server's address had `--per-ip` fetches running,
    /// or `--max-time` was up before its name was known; the job goes back
    /// to its host's queue for a little while (`Frontier::hold`).
    Held { job: Job },
}

/// A lent page given back: its host, and how its fetch ended.
#[derive(Debug, Clone)]
pub(crate) struct Return {
    pub host: String,
    pub outcome: PageEnd,
}

impl Batch {
    pub(crate) fn is_empty(&self) -> bool {
        self.jobs.is_empty()
            && self.leases.is_empty()
            && self.returns.is_empty()
            && self.tallies.is_empty()
    }

    /// The jobs with the token of the page that found each (None for jobs
    /// outside any group).
    pub(crate) fn jobs_by_page(self) -> impl Iterator<Item = (Option<u64>, Job)> {
        let tokens = self
            .pages
            .into_iter()
            .flat_map(|(token, n)| std::iter::repeat_n(Some(token), n as usize));
        let tokens = tokens.chain(std::iter::repeat(None));
        tokens.zip(self.jobs)
    }
}

/// Messages each mesh channel holds before `try_send` reports it full
/// (the batch then waits in the sender's overflow queue), for a crawl on
/// `shards` shards: at most 8,192 slots into each shard, a power of two
/// (glommio rounds a capacity up to one) from 16 to 1,024 a channel.
/// glommio makes and writes every slot of the n(n-1) channels up front,
/// ~128 bytes each: a flat 1,024 was 124 MiB of slots at 32 shards and
/// 2 GiB at 128; this is at most 1 MiB a shard, and 1,024 (as before) up
/// to 9 shards.
pub(crate) fn channel_capacity(shards: usize) -> usize {
    let fair = 8_192 / shards.saturating_sub(1).max(1);
    (1usize << fair.max(1).ilog2()).clamp(16, 1_024)
}

/// The crawl's fetch slots, `--max-tasks` of them, each belonging to one
/// shard (`Config::workers_for`). A fetch holds a slot of the shard it runs
/// on from start to end, whoever started it; a shard whose own slots are
/// all busy may take a free one of a peer to lend that peer a page.
#[derive(Debug)]
pub(crate) struct FetchSlots {
    /// Per shard: slots taken (fetches running there, or lent to it and
    /// not yet finished).
    busy: Vec<Busy>,
    /// Per shard: its number of slots.
    capacity: Vec<usize>,
}

impl FetchSlots {
    pub(crate) fn new(capacity: Vec<usize>) -> Arc<Self> {
        Arc::new(FetchSlots {
            busy: capacity.iter().map(|_| Busy::default()).collect(),
            capacity,
        })
    }

    /// Take a slot of `shard` if one is free.
    pub(crate) fn try_take(&self, shard: usize) -> bool {
        let (Some(busy), Some(&capacity)) = (self.busy.get(shard), self.capacity.get(shard)) else {
            return false;
        };
        busy.taken
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < capacity).then_some(n + 1)
            })
            .is_ok()
    }

    /// Take a free slot of any shard but `me` that is not paused, trying
    /// them in turn from the one after `me`; the shard whose slot was taken.
    pub(crate) fn take_other(&self, me: usize) -> Option<usize> {
        let shards = self.busy.len();
        (1..shards)
            .map(|k| (me + k) % shards)
            .filter(|&peer| !self.paused(peer))
            .find(|&peer| self.try_take(peer))
    }

    /// Shard `shard` starts no fetch for now (its output or its seen-set is
    /// behind): its free slots are not lent pages either, which would add
    /// to what it is behind on.
    pub(crate) fn set_paused(&self, shard: usize, paused: bool) {
        if let Some(busy) = self.busy.get(shard) {
            busy.paused.store(paused, Ordering::Release);
        }
    }

    fn paused(&self, shard: usize) -> bool {
        self.busy
            .get(shard)
            .is_some_and(|b| b.paused.load(Ordering::Acquire))
    }

    /// Give back a slot of `shard`.
    pub(crate) fn give(&self, shard: usize) {
        if let Some(busy) = self.busy.get(shard) {
            let _ = busy
                .taken
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
        }
    }
}

/// One shard's count of taken slots, alone in its cache line: each shard
/// updates its own on every fetch, and sharing a line would make every
/// update on one core a cache miss on the other.
#[derive(Debug, Default)]
#[repr(align(128))]
struct Busy {
    taken: AtomicUsize,
    /// Set while the shard starts no fetch (see [`FetchSlots::set_paused`]);
    /// changes rarely, so it shares the line.
    paused: AtomicBool,
}

/// One shard's sending side of the mesh: per-peer batches being built,
/// batches that found a full channel, and the channel senders themselves.
pub(crate) struct Outbox {
    /// Channel senders to every other shard (`None` with one shard).
    senders: Option<Senders<Batch>>,
    /// Jobs, leases and returns for each peer since the last flush.
    pending: RefCell<Vec<Batch>>,
    /// Batches refused by a full channel, in order, per peer.
    overflow: RefCell<Vec<VecDeque<Batch>>>,
    /// Wakes the flusher task when `overflow` gains a batch.
    pub overflow_added: Notify,
}

impl Outbox {
    pub(crate) fn new(senders: Option<Senders<Batch>>, shards: usize) -> Self {
        Outbox {
            senders,
            pending: RefCell::new((0..shards).map(|_| Batch::default()).collect()),
            overflow: RefCell::new(vec![VecDeque::new(); shards]),
            overflow_added: Notify::new(),
        }
    }

    /// Queue `job`, found by this shard's page `page`, for `peer`; it
    /// leaves at the next [`Outbox::flush`], and `peer` answers with a
    /// tally for `page`.
    pub(crate) fn route(&self, peer: usize, job: Job, page: u64) {
        if let Some(batch) = self.pending.borrow_mut().get_mut(peer) {
            batch.jobs.push(job);
            match batch.pages.last_mut() {
                Some((token, n)) if *token == page => *n = n.saturating_add(1),
                _ => batch.pages.push((page, 1)),
            }
        }
    }

    /// Tell `peer` how many of the jobs its page `page` sent were new.
    pub(crate) fn tally(&self, peer: usize, page: u64, new: u32) {
        if let Some(batch) = self.pending.borrow_mut().get_mut(peer) {
            batch.tallies.push((page, new));
        }
    }

    /// Lend `peer` a page of one of this shard's hosts, for which a slot of
    /// `peer` was taken; it leaves at the next [`Outbox::flush`].
    pub(crate) fn lend(&self, peer: usize, lease: Lease) {
        if let Some(batch) = self.pending.borrow_mut().get_mut(peer) {
            batch.leases.push(lease);
        }
    }

    /// Tell `owner` that a page it lent, of `host`, is done or is to be
    /// tried again later.
    pub(crate) fn give_back(&self, owner: usize, host: String, outcome: PageEnd) {
        if let Some(batch) = self.pending.borrow_mut().get_mut(owner) {
            batch.returns.push(Return { host, outcome });
        }
    }

    /// Send every pending batch without awaiting; batches that meet a full
    /// channel go to the overflow queue for the flusher task.
    pub(crate) fn flush(&self) {
        let Some(senders) = &self.senders else { return };
        let mut pending = self.pending.borrow_mut();
        let mut overflow = self.overflow.borrow_mut();
        let mut parked = false;
        for (peer, (batch, parked_batches)) in
            pending.iter_mut().zip(overflow.iter_mut()).enumerate()
        {
            if batch.is_empty() {
                continue;
            }
            let batch = std::mem::take(batch);
            if !parked_batches.is_empty() {
                parked_batches.push_back(batch);
                parked = true;
                continue;
            }
            match senders.try_send_to(peer, batch) {
                Ok(()) => {}
                Err(GlommioError::WouldBlock(ResourceType::Channel(batch))) => {
                    parked_batches.push_back(batch);
                    parked = true;
                }
                // The peer is gone: only at the end of the crawl, or after
                // it failed (then the crawl is aborted elsewhere).
                Err(_) => {}
            }
        }
        drop((pending, overflow));
        if parked {
            self.overflow_added.notify_all();
        }
    }

    /// The flusher task: send parked batches with awaited sends until
    /// `stop` says the shard is done. Runs apart from the receive path, so
    /// awaiting here cannot deadlock the mesh.
    pub(crate) async fn drain_overflow(&self, stopped: impl Fn() -> bool) {
        let Some(senders) = &self.senders else { return };
        loop {
            let next = {
                let mut overflow = self.overflow.borrow_mut();
                overflow
                    .iter_mut()
                    .enumerate()
                    .find_map(|(peer, q)| q.pop_front().map(|b| (peer, b)))
            };
            match next {
                // No RefCell borrow is held across this await.
                Some((peer, batch)) => {
                    let _ = senders.send_to(peer, batch).await;
                }
                None if stopped() => return,
                None => self.overflow_added.notified().await,
            }
        }
    }

    /// Close this shard's senders, so peers' receive loops end.
    pub(crate) fn close(&self) {
        if let Some(senders) = &self.senders {
            senders.close();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_keep_the_page_that_found_them() {
        let job = |u: &str| Job::root(u.into(), 0);
        let batch = Batch {
            jobs: vec![job("a"), job("b"), job("c"), job("d")],
            pages: vec![(7, 2), (9, 1)],
            ..Batch::default()
        };
        let got: Vec<(Option<u64>, String)> =
            batch.jobs_by_page().map(|(p, j)| (p, j.url)).collect();
        assert_eq!(
            got,
            [
                (Some(7), "a".into()),
                (Some(7), "b".into()),
                (Some(9), "c".into()),
                (None, "d".into())
            ]
        );
    }

    #[test]
    fn channel_slots_grow_with_the_shards_not_their_square() {
        assert_eq!(channel_capacity(1), 1_024);
        assert_eq!(channel_capacity(2), 1_024);
        assert_eq!(channel_capacity(9), 1_024);
        for shards in [10, 16, 17, 32, 64, 128, 512] {
            let capacity = channel_capacity(shards);
            assert!(
                capacity.is_power_of_two(),
                "glommio would round {capacity} up"
            );
            let into_each = (shards - 1) * capacity;
            assert!(into_each <= 8_192, "{shards} shards: {into_each} slots");
        }
        assert_eq!(channel_capacity(16), 512);
        assert_eq!(channel_capacity(10_000), 16, "never below 16");
    }

    #[test]
    fn no_page_is_lent_to_a_paused_shard() {
        let slots = FetchSlots::new(vec![1, 2, 2]);
        assert!(slots.try_take(0));
        slots.set_paused(1, true);
        assert_eq!(slots.take_other(0), Some(2), "shard 1 is passed over");
        assert_eq!(slots.take_other(0), Some(2));
        assert_eq!(slots.take_other(0), None, "2 is full, 1 paused");
        slots.set_paused(1, false);
        assert_eq!(slots.take_other(0), Some(1));
        assert!(
            slots.try_take(1),
            "a paused shard's own take is its own choice"
        );
    }
}
