//! Which hosts the frontier holds, within [`Politeness::host_memory`]
//! (`super::Politeness`): the live hosts (URLs queued or in flight), each
//! counted by [`Host::live_weight`]; the resting hosts (finished, kept for
//! their robots.txt rules and politeness clock) in an LRU that gets what
//! the live ones leave; and the queue of URLs whose hosts wait for room.
//!
//! A URL of a host that is neither live nor resting makes its host live
//! only if the live hosts leave room for it (or none is live, so a crawl
//! always goes on); else it joins `waiting`, a queue like a host's (a RAM
//! head, chunks spilled to disk, a tail), and keeps its place there: while
//! anything waits, every URL of a host not held joins it, so hosts become
//! live in the order their first URLs came. [`Frontier::next`] lets them
//! in, oldest first, as live hosts finish. A URL for a host that is held
//! goes to its host at once, whatever waits. The host's limits (page and
//! sitemap budgets) are applied when a URL leaves the wait; one they keep
//! out comes back from `next` as [`Next::Limited`](super::Next::Limited).
//!
//! What is bounded is the hosts' own state. Their queued URLs are the
//! spill's business (`spill.rs`), counted against `Politeness::memory`.
//! Not here either: DNS and TLS state, bounded by their own caches.

use std::mem;
use std::time::Instant;

use ringcrawl_links::urls;

use super::host::{Host, Knobs};
use super::spill::{weight, READ_AHEAD, WAITING};
use super::Frontier;
use crate::job::Job;

/// The hosts' state a frontier holds, against its bound.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct HostMemory {
    /// Live hosts, and their bytes.
    pub live: usize,
    pub live_bytes: usize,
    /// Resting hosts, and their bytes.
    pub resting: usize,
    pub resting_bytes: usize,
    /// URLs that wait for room among the hosts (in RAM and on disk), and
    /// all that ever did.
    pub waiting: usize,
    pub waited: u64,
    /// The most live and resting hosts took at once.
    pub peak_bytes: usize,
}

/// Count a live host again in `live_bytes` (the live hosts' total), at
/// `weight` (its [`Host::live_weight`] now) instead of what it was counted
/// at (`counted`, now `weight`): the new total.
pub(super) fn recount(counted: &mut usize, weight: usize, live_bytes: usize) -> usize {
    let old = mem::replace(counted, weight);
    live_bytes.saturating_sub(old).saturating_add(weight)
}

impl Frontier {
    /// `host` is live or resting.
    pub(super) fn is_held(&self, host: &str) -> bool {
        self.hosts.contains_key(host) || self.resting.contains(host)
    }

    /// A host named `host`, not held, may become live now: nothing waits
    /// before it, and it fits.
    pub(super) fn has_room_for(&self, host: &str) -> bool {
        self.waiting.is_empty() && self.fits(host)
    }

    /// A host named `host` fits among the live ones: none is live; or the
    /// live hosts leave room for it and their heads in RAM are within the
    /// queues' bound (a host being served brings its next URLs up from
    /// disk whatever the bound, so more live hosts would mean more RAM
    /// than `Politeness::memory`).
    fn fits(&self, host: &str) -> bool {
        self.hosts.is_empty()
            || (self
                .live_bytes
                .saturating_add(Host::new_weight(host, self.politeness.robots))
                <= self.politeness.host_memory
                && self.spill.heads_ram() <= self.politeness.memory)
    }

    /// Whether a host new to the frontier would be let in now (the seed
    /// feed takes no more seeds while not).
    pub(crate) fn has_room(&self) -> bool {
        self.has_room_for("")
    }

    /// Queue `job`, whose host is not held, to wait for room.
    pub(super) fn wait_for_room(&mut self, job: Job) {
        self.queued += 1;
        self.waiting_jobs += 1;
        self.waited += 1;
        self.enqueue(WAITING, job);
    }

    /// Make `host` live: back from the resting hosts, or new.
    pub(super) fn make_live(&mut self, host: &str, now: Instant) {
        let mut entry = match self.resting.pop(host) {
            Some((entry, weight)) => {
                self.resting_bytes = self.resting_bytes.saturating_sub(weight);
                entry
            }
            None => {
                // The host's rule, once: its index is all it keeps.
                let at = self.politeness.host_rules.find(host).map_or(0, |i| i + 1);
                Host::new(now, Knobs::of(&self.knobs, at).delay, at)
            }
        };
        let weight = entry.live_weight(host, self.politeness.robots);
        self.live_bytes = recount(&mut entry.counted, weight, self.live_bytes);
        self.hosts.insert(host.to_string(), entry);
        self.trim_resting();
        self.note_host_bytes();
    }

    /// Let the URLs that wait for room in, oldest first, while their hosts
    /// are held or fit; those a limit keeps out go to `limited`.
    pub(super) fn admit_waiting(&mut self, now: Instant) {
        loop {
            if self.waiting.head_len() == 0 && !self.refill(WAITING) {
                // Empty, or its next chunk is being read.
                return;
            }
            let Some(front) = self.waiting.front() else {
                return;
            };
            let host = urls::host_of(&front.url);
            if !self.is_held(host) && !self.fits(host) {
                return;
            }
            let Some(job) = self.waiting.pop_front() else {
                return;
            };
            self.queued = self.queued.saturating_sub(1);
            self.waiting_jobs = self.waiting_jobs.saturating_sub(1);
            let bytes = weight(&job);
            self.spill.ram = self.spill.ram.saturating_sub(bytes);
            self.spill.left_waiting_head(bytes);
            if self.waiting.head_len() < READ_AHEAD && self.waiting.has_more() {
                self.refill(WAITING);
            }
            let host = urls::host_of(&job.url).to_string();
            if let Err(refused) = self.place(job, now) {
                self.limited.push_back(refused);
                // A host made live for a URL it then refused.
                self.settle(&host);
            }
        }
    }

    /// Move `host` to the resting hosts if it is done, forgetting the least
    /// recently finished ones past the bound.
    pub(super) fn settle(&mut self, host: &str) {
        if !self.hosts.get(host).is_some_and(Host::is_done) {
            return;
        }
        let Some((name, mut entry)) = self.hosts.remove_entry(host) else {
            return;
        };
        self.live_bytes = self.live_bytes.saturating_sub(entry.counted);
        entry.counted = 0;
        // A drained queue keeps its buffer: give it back.
        drop(mem::take(&mut entry.queue));
        let weight = entry.weight(&name);
        self.resting_bytes += weight;
        self.resting.put(name, (entry, weight));
        self.trim_resting();
    }

    /// Forget the least recently finished hosts while the hosts' state is
    /// over its bound.
    fn trim_resting(&mut self) {
        while self.live_bytes.saturating_add(self.resting_bytes) > self.politeness.host_memory {
            let Some((_, (_, weight))) = self.resting.pop_lru() else {
                break;
            };
            self.resting_bytes = self.resting_bytes.saturating_sub(weight);
        }
    }

    /// Keep the peak of the hosts' bytes.
    pub(super) fn note_host_bytes(&mut self) {
        let now = self.live_bytes.saturating_add(self.resting_bytes);
        self.peak_host_bytes = self.peak_host_bytes.max(now);
    }

    /// Hosts held: live (queued or in flight) and resting (finished, their
    /// rules kept), with the resting ones' bytes.
    pub(crate) fn hosts(&self) -> (usize, usize, usize) {
        (self.hosts.len(), self.resting.len(), self.resting_bytes)
    }

    /// The hosts' state against its bound.
    pub(crate) fn host_memory(&self) -> HostMemory {
        HostMemory {
            live: self.hosts.len(),
            live_bytes: self.live_bytes,
            resting: self.resting.len(),
            resting_bytes: self.resting_bytes,
            waiting: self.waiting_jobs,
            waited: self.waited,
            peak_bytes: self.peak_host_bytes,
        }
    }
}

#[cfg(test)]
mod tests;
