//! The frontier's side of the spill of queue tails to disk, pure: where a
//! new URL goes (its host's head in RAM, or its tail), when a tail is
//! sealed into a chunk (`super::chunk`) for the segment files
//! (`super::store`), when a host's next chunk is read back, and what the
//! completions of that I/O do. The shard's spill task carries out the
//! [`SpillIo`] requests and reports back ([`Frontier::spill_io`],
//! [`Frontier::spill_written`], [`Frontier::spill_read`]).
//!
//! The bound ([`Politeness::memory`](super::Politeness::memory)) counts
//! each queued job in RAM: the `Job`, its URL's and its referrer's heap
//! bytes (a referrer shared by a page's links counted for each, so the
//! bound errs high). A new URL goes to its host's head while the frontier
//! is under the bound and the host has nothing on disk or in its tail;
//! else to the tail. A tail of [`CHUNK_JOBS`] jobs or [`CHUNK_BYTES`]
//! bytes is sealed; when RAM is over the bound and tails hold more than a
//! sixteenth of it, the oldest tails are sealed, whatever their size,
//! until they hold a thirty-second. A host's next chunk is brought up when
//! its head drops below [`READ_AHEAD`] while it is served, or when its
//! turn comes with an empty head: from RAM at once if its bytes are still
//! in the block buffer, else by a read (at most [`MAX_READS`] in flight;
//! one per host). While a host's only URLs are on disk and its read is in
//! flight it is not ready, and not done either: the read's completion
//! gives it its turn back.
//!
//! While a write fails the spill is held back: tails stay in RAM, and
//! past the bound [`Frontier::spill_held_back`] tells the shard to start
//! no fetch until a retry writes again (or the shard gives up and stops
//! the crawl).
//!
//! So the RAM of queued URLs is the bound, plus a sixteenth for tails,
//! plus what reads bring up (at most [`READ_AHEAD`] + a chunk per host
//! being served), plus the ledger's block buffer (256 KiB); and while the
//! hosts' heads are over the bound no new host is made live
//! (`admission.rs`), so what reads bring up is bounded by the hosts live
//! when the heads last fit.

use std::collections::VecDeque;

use foldhash::HashMap;

use super::host::Host;
use super::queue::{Chunk, Queue};
use super::store::{Extent, Place, SpillIo, SpillStats, Store};
use super::Frontier;
use crate::job::{chunk, Job};

/// The key of the waiting queue where the spill names a queue by its host:
/// spaces and parentheses are never in a host name.
pub(super) const WAITING: &str = "(hosts waiting for room)";

/// A tail this long is sealed into a chunk.
pub(super) const CHUNK_JOBS: usize = 64;
/// A tail this heavy (as counted by [`weight`]) is sealed into a chunk.
pub(super) const CHUNK_BYTES: usize = 16 << 10;
/// A host being served whose head is shorter than this has its next chunk
/// brought up.
pub(super) const READ_AHEAD: usize = 8;
/// Reads of chunks in flight at most; more hosts wait their turn.
pub(super) const MAX_READS: usize = 32;

/// What a queued job costs in RAM, as counted against the bound.
pub(super) fn weight(job: &Job) -> usize {
    std::mem::size_of::<Job>()
        + job.url.capacity()
        + job.via.as_ref().map_or(0, |via| via.len() + 16)
}

/// The queue the spill names `host`: a live host's, or the queue of URLs
/// waiting for room among the hosts ([`WAITING`]).
fn queue_of<'a>(
    hosts: &'a mut HashMap<String, Host>,
    waiting: &'a mut Queue,
    host: &str,
) -> Option<&'a mut Queue> {
    if host == WAITING {
        return Some(waiting);
    }
    hosts.get_mut(host).map(|entry| &mut entry.queue)
}

/// Jobs lost to a chunk that could not be read back (an I/O error, a
/// corrupt chunk): never fetched, so the shard counts them out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Lost {
    pub host: String,
    pub jobs: usize,
    pub error: String,
}

/// The spill's state in a frontier.
#[derive(Debug, Default)]
pub(super) struct Spill {
    /// Bytes of queued jobs in RAM (heads and tails) and of tails alone.
    pub ram: usize,
    tails_ram: usize,
    /// Of `ram`, the head of the queue of URLs waiting for room.
    waiting_head: usize,
    /// Jobs in chunks (on disk, or in the ledger's RAM until written).
    pub on_disk: usize,
    /// Hosts with a tail, oldest first (some may have sealed it since).
    tails: VecDeque<String>,
    store: Store,
    /// Reads handed out and not done.
    reads: usize,
    /// Hosts whose next chunk waits for a read slot.
    wanting: VecDeque<String>,
    /// Hosts whose next chunk waits for its block's write.
    awaiting_write: Vec<String>,
    lost: Vec<Lost>,
    /// Scratch for encoding a chunk.
    scratch: Vec<u8>,
}

impl Spill {
    /// Bytes of the live hosts' heads in RAM: the queued jobs in RAM that
    /// are neither in tails (sealed past the bound) nor in the head of the
    /// queue of URLs waiting for room.
    pub(super) fn heads_ram(&self) -> usize {
        self.ram
            .saturating_sub(self.tails_ram)
            .saturating_sub(self.waiting_head)
    }

    /// `bytes` of jobs joined the head of `host`'s queue.
    fn up_to_head(&mut self, host: &str, bytes: usize) {
        if host == WAITING {
            self.waiting_head += bytes;
        }
    }

    /// A job of `bytes` left the head of the waiting queue.
    pub(super) fn left_waiting_head(&mut self, bytes: usize) {
        self.waiting_head = self.waiting_head.saturating_sub(bytes);
    }
}

impl Frontier {
    /// Queue `job` (accepted, counted) for `host`, a live host: at its head
    /// or its tail (see the module docs).
    pub(super) fn enqueue(&mut self, host: &str, job: Job) {
        let Some(queue) = queue_of(&mut self.hosts, &mut self.waiting, host) else {
            return;
        };
        let w = weight(&job);
        let spill = &mut self.spill;
        spill.ram += w;
        if !queue.has_chunks() && spill.ram <= self.politeness.memory {
            // Under the bound with nothing on disk: the tail (left from
            // a time over it) moves up first, to keep the order.
            if !queue.tail().is_empty() {
                let (tail, bytes) = queue.take_tail();
                spill.tails_ram = spill.tails_ram.saturating_sub(bytes);
                spill.up_to_head(host, bytes);
                queue.extend_head(tail);
            }
            spill.up_to_head(host, w);
            queue.push_head(job);
            return;
        }
        spill.tails_ram += w;
        let (len, bytes, newly) = queue.push_tail(job, w);
        if newly {
            spill.tails.push_back(host.to_string());
            if spill.tails.len() > 2 * self.hosts.len() + 1024 {
                // Names of hosts that rested since they were listed.
                let (hosts, waiting) = (&self.hosts, &self.waiting);
                spill.tails.retain(|h| match hosts.get(h) {
                    Some(entry) => entry.queue.listed(),
                    None => h == WAITING && waiting.listed(),
                });
            }
        }
        if len >= CHUNK_JOBS || bytes >= CHUNK_BYTES {
            self.seal(host);
        }
        let memory = self.politeness.memory;
        if self.spill.ram > memory
            && self.spill.tails_ram > memory / 16
            && self.spill.store.can_spill()
        {
            while self.spill.tails_ram > memory / 32 {
                let Some(oldest) = self.spill.tails.pop_front() else {
                    break;
                };
                if let Some(queue) = queue_of(&mut self.hosts, &mut self.waiting, &oldest) {
                    queue.unlist();
                }
                self.seal(&oldest);
            }
        }
    }

    /// Seal `host`'s tail into a chunk in the ledger (unless the spill
    /// stopped after a failed write: then tails stay in RAM).
    fn seal(&mut self, host: &str) {
        let Some(queue) = queue_of(&mut self.hosts, &mut self.waiting, host) else {
            return;
        };
        let spill = &mut self.spill;
        if queue.tail().is_empty() || !spill.store.can_spill() {
            return;
        }
        let (tail, w) = queue.take_tail();
        spill.scratch.clear();
        chunk::encode(&tail, &mut spill.scratch);
        let at = spill.store.append(&spill.scratch);
        queue.push_chunk(Chunk {
            at,
            jobs: tail.len() as u32,
        });
        spill.ram = spill.ram.saturating_sub(w);
        spill.tails_ram = spill.tails_ram.saturating_sub(w);
        spill.on_disk += tail.len();
    }

    /// Bring `host`'s next URLs up to its head: its next chunk (from RAM
    /// at once, else a read is asked for), or its tail if nothing is on
    /// disk. True if its head has URLs now.
    pub(super) fn refill(&mut self, host: &str) -> bool {
        let Some(queue) = queue_of(&mut self.hosts, &mut self.waiting, host) else {
            return false;
        };
        let spill = &mut self.spill;
        if queue.reading() {
            return queue.head_len() > 0;
        }
        let Some(chunk) = queue.front_chunk() else {
            let (tail, bytes) = queue.take_tail();
            spill.tails_ram = spill.tails_ram.saturating_sub(bytes);
            spill.up_to_head(host, bytes);
            queue.extend_head(tail);
            return queue.head_len() > 0;
        };
        let decoded = match spill.store.place(chunk.at) {
            Place::Ram(bytes) => chunk::decode(bytes).map_err(|e| e.to_string()),
            Place::Writing => {
                queue.set_reading(true);
                spill.awaiting_write.push(host.to_string());
                return queue.head_len() > 0;
            }
            Place::Disk => {
                queue.set_reading(true);
                if spill.reads < MAX_READS {
                    spill.reads += 1;
                    spill.store.read(host.to_string(), chunk.at);
                } else {
                    spill.wanting.push_back(host.to_string());
                }
                return queue.head_len() > 0;
            }
        };
        self.take_chunk(host, chunk, decoded);
        queue_of(&mut self.hosts, &mut self.waiting, host).is_some_and(|q| q.head_len() > 0)
    }

    /// `host`'s front chunk was read back (or could not be): its jobs join
    /// the head, or are lost.
    fn take_chunk(&mut self, host: &str, chunk: Chunk, decoded: Result<Vec<Job>, String>) {
        let spill = &mut self.spill;
        spill.store.release(chunk.at);
        spill.on_disk = spill.on_disk.saturating_sub(chunk.jobs as usize);
        let Some(queue) = queue_of(&mut self.hosts, &mut self.waiting, host) else {
            return;
        };
        queue.pop_chunk();
        match decoded {
            Ok(jobs) => {
                // A chunk holds what its header counts, which is what was
                // sealed; should they differ, the count follows the jobs.
                self.queued = self
                    .queued
                    .saturating_sub(chunk.jobs as usize)
                    .saturating_add(jobs.len());
                let bytes = jobs.iter().map(weight).sum::<usize>();
                spill.ram += bytes;
                spill.up_to_head(host, bytes);
                if host == WAITING {
                    self.waiting_jobs = self
                        .waiting_jobs
                        .saturating_sub(chunk.jobs as usize)
                        .saturating_add(jobs.len());
                }
                queue.extend_head(jobs);
            }
            Err(error) => {
                self.queued = self.queued.saturating_sub(chunk.jobs as usize);
                if host == WAITING {
                    self.waiting_jobs = self.waiting_jobs.saturating_sub(chunk.jobs as usize);
                }
                spill.lost.push(Lost {
                    host: host.to_string(),
                    jobs: chunk.jobs as usize,
                    error,
                });
            }
        }
    }

    /// The next I/O request of the spill, if any.
    pub(crate) fn spill_io(&mut self) -> Option<SpillIo> {
        self.spill.store.next_io()
    }

    /// Whether [`Frontier::spill_io`] has a request.
    pub(crate) fn has_spill_io(&self) -> bool {
        self.spill.store.has_io()
    }

    /// A [`SpillIo::Write`] is done; `Err` gives its bytes back (they stay
    /// in RAM, and tails are not spilled until a [`Frontier::retry_spill`]
    /// succeeds).
    pub(crate) fn spill_written(&mut self, segment: u32, offset: u64, result: Result<(), Vec<u8>>) {
        self.spill.store.written(segment, offset, result);
        let waiting = std::mem::take(&mut self.spill.awaiting_write);
        for host in waiting {
            if let Some(queue) = queue_of(&mut self.hosts, &mut self.waiting, &host) {
                queue.set_reading(false);
            }
            self.refill(&host);
            self.reschedule(&host);
        }
    }

    /// A [`SpillIo::Read`] for `host` is done: the chunk's bytes, or why
    /// not. The host gets its turn back; a chunk that cannot be had is
    /// lost ([`Frontier::take_lost`]).
    pub(crate) fn spill_read(&mut self, host: &str, at: Extent, bytes: Result<&[u8], String>) {
        self.spill.store.read_done(at);
        self.spill.reads = self.spill.reads.saturating_sub(1);
        let front = queue_of(&mut self.hosts, &mut self.waiting, host)
            .filter(|q| q.reading())
            .and_then(|q| q.front_chunk())
            .filter(|c| c.at == at);
        match front {
            Some(chunk) => {
                let decoded = bytes.and_then(|b| chunk::decode(b).map_err(|e| e.to_string()));
                self.take_chunk(host, chunk, decoded);
            }
            None => {
                // Not the read this host waits for (it cannot be): ask
                // again for what it does wait for, so it never stalls.
                if let Some(queue) = queue_of(&mut self.hosts, &mut self.waiting, host) {
                    queue.set_reading(false);
                }
                self.refill(host);
            }
        }
        self.reschedule(host);
        self.settle(host);
        while self.spill.reads < MAX_READS {
            let Some(next) = self.spill.wanting.pop_front() else {
                break;
            };
            let chunk = queue_of(&mut self.hosts, &mut self.waiting, &next)
                .filter(|q| q.reading())
                .and_then(|q| q.front_chunk());
            if let Some(chunk) = chunk {
                self.spill.reads += 1;
                self.spill.store.read(next, chunk.at);
            }
        }
    }

    /// Whether a write of the spill failed and none has succeeded since:
    /// tails stay in RAM.
    pub(crate) fn spill_failing(&self) -> bool {
        !self.spill.store.can_spill()
    }

    /// Whether the spill is failing and the queued URLs in RAM are past
    /// the bound: the shard starts no fetch (whose links would add more)
    /// until the spill writes again.
    pub(crate) fn spill_held_back(&self) -> bool {
        self.spill_failing() && self.spill.ram > self.politeness.memory
    }

    /// Write again the blocks whose write failed.
    pub(crate) fn retry_spill(&mut self) {
        self.spill.store.retry();
    }

    /// Whether jobs were lost since [`Frontier::take_lost`] was called.
    pub(crate) fn has_lost(&self) -> bool {
        !self.spill.lost.is_empty()
    }

    /// Jobs lost since the last call, for the shard to count out.
    pub(crate) fn take_lost(&mut self) -> Vec<Lost> {
        std::mem::take(&mut self.spill.lost)
    }

    /// Counters of the spill.
    pub(crate) fn spill_stats(&self) -> SpillStats {
        self.spill.store.stats()
    }

    /// Use `store` as the ledger (small blocks, for the tests).
    #[cfg(test)]
    pub(super) fn set_spill_store(&mut self, store: Store) {
        self.spill.store = store;
    }

    /// Bytes the spill's ledger holds in RAM (its block buffer, writes not
    /// yet taken).
    pub(crate) fn spill_ram(&self) -> usize {
        self.spill.store.ram()
    }
}

#[cfg(test)]
mod tests;
