//! One host's queue, FIFO across RAM and disk: a head in RAM (the URLs
//! next in line), then chunks on disk (in order), then a tail in RAM (the
//! newest URLs, sealed into a chunk when it grows). A host that never
//! spilled has only a head and pays one pointer for the rest.
//!
//! The queue only keeps the order; the frontier decides what goes where
//! (`super::Frontier::offer`), when a tail is sealed and when a chunk is
//! read back.

use std::collections::VecDeque;

use super::store::Extent;
use crate::job::Job;

/// A chunk of the queue on disk: where, and how many jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Chunk {
    pub at: Extent,
    pub jobs: u32,
}

#[derive(Debug, Default)]
pub(super) struct Queue {
    head: VecDeque<Job>,
    spill: Option<Box<Spilled>>,
}

#[derive(Debug, Default)]
struct Spilled {
    chunks: VecDeque<Chunk>,
    tail: Vec<Job>,
    /// The tail's weight (as the frontier counts it).
    tail_bytes: usize,
    /// The front chunk was asked for (a read, or the end of its write).
    reading: bool,
    /// The host is in the frontier's list of tails to seal.
    listed: bool,
}

impl Queue {
    /// Nothing queued, in RAM or on disk.
    pub(super) fn is_empty(&self) -> bool {
        self.head.is_empty() && !self.has_more()
    }

    /// Jobs queued after the head: chunks on disk or a tail.
    pub(super) fn has_more(&self) -> bool {
        self.spill
            .as_ref()
            .is_some_and(|s| !s.chunks.is_empty() || !s.tail.is_empty())
    }

    /// Chunks on disk.
    pub(super) fn has_chunks(&self) -> bool {
        self.spill.as_ref().is_some_and(|s| !s.chunks.is_empty())
    }

    /// Jobs queued: the head, the chunks on disk and the tail.
    pub(super) fn len(&self) -> usize {
        self.head.len()
            + self.spill.as_ref().map_or(0, |s| {
                s.tail.len() + s.chunks.iter().map(|c| c.jobs as usize).sum::<usize>()
            })
    }

    pub(super) fn head_len(&self) -> usize {
        self.head.len()
    }

    pub(super) fn front(&self) -> Option<&Job> {
        self.head.front()
    }

    pub(super) fn pop_front(&mut self) -> Option<Job> {
        self.head.pop_front()
    }

    pub(super) fn push_front(&mut self, job: Job) {
        self.head.push_front(job);
    }

    pub(super) fn push_head(&mut self, job: Job) {
        self.head.push_back(job);
    }

    /// Append to the head in order (a chunk read back, a tail moved up).
    pub(super) fn extend_head(&mut self, jobs: impl IntoIterator<Item = Job>) {
        self.head.extend(jobs);
    }

    /// Add `job`, of weight `weight`, to the tail; the tail's length and
    /// weight, and whether the host was not yet listed among the tails to
    /// seal (it is now).
    pub(super) fn push_tail(&mut self, job: Job, weight: usize) -> (usize, usize, bool) {
        let spill = self.spill.get_or_insert_with(Box::default);
        spill.tail.push(job);
        spill.tail_bytes += weight;
        let newly = !spill.listed;
        spill.listed = true;
        (spill.tail.len(), spill.tail_bytes, newly)
    }

    pub(super) fn tail(&self) -> &[Job] {
        self.spill.as_ref().map_or(&[], |s| &s.tail)
    }

    /// The tail and its weight, taken.
    pub(super) fn take_tail(&mut self) -> (Vec<Job>, usize) {
        self.spill.as_mut().map_or((Vec::new(), 0), |s| {
            (
                std::mem::take(&mut s.tail),
                std::mem::take(&mut s.tail_bytes),
            )
        })
    }

    pub(super) fn listed(&self) -> bool {
        self.spill.as_ref().is_some_and(|s| s.listed)
    }

    /// Taken off the list of tails to seal.
    pub(super) fn unlist(&mut self) {
        if let Some(s) = &mut self.spill {
            s.listed = false;
        }
    }

    pub(super) fn push_chunk(&mut self, chunk: Chunk) {
        self.spill
            .get_or_insert_with(Box::default)
            .chunks
            .push_back(chunk);
    }

    pub(super) fn front_chunk(&self) -> Option<Chunk> {
        self.spill.as_ref().and_then(|s| s.chunks.front().copied())
    }

    pub(super) fn pop_chunk(&mut self) -> Option<Chunk> {
        let chunk = self.spill.as_mut().and_then(|s| s.chunks.pop_front());
        if let Some(s) = &mut self.spill {
            s.reading = false;
        }
        chunk
    }

    pub(super) fn reading(&self) -> bool {
        self.spill.as_ref().is_some_and(|s| s.reading)
    }

    pub(super) fn set_reading(&mut self, reading: bool) {
        if let Some(s) = &mut self.spill {
            s.reading = reading;
        }
    }
}
