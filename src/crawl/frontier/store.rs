//! The ledger of one shard's spill files, pure: where each chunk goes, which
//! bytes are still in RAM, which are being written, which file may go. It
//! does no I/O; it hands out [`SpillIo`] requests, and the shard's spill
//! task (`crawl::shard::spill`) does them and reports back.
//!
//! Chunks are appended, packed, to a block buffer in RAM; a full block
//! (about [`BLOCK_BYTES`]) is padded to [`ALIGN`] and written at the next
//! aligned offset of the current segment file `spill-{n}`, so every write
//! is one aligned DMA write and a small chunk costs no padding of its own.
//! A segment past [`SEGMENT_BYTES`] is sealed and the next one started.
//! Each segment counts its live chunks (appended, not yet taken back); a
//! sealed one with none, and no I/O in flight, is removed. A chunk still in
//! the block buffer is taken back from RAM, without I/O; when the buffer
//! holds no live chunk any more it is emptied in place, so a shard whose
//! spills are read back soon never writes at all.
//!
//! A write that failed keeps its block in RAM (its chunks are read from
//! there) and holds the spilling back: no chunk is sealed (queues stay in
//! RAM) until [`Store::retry`] has written the kept blocks again. How
//! often and how soon to retry, and when to give up, is the shard's
//! (`crawl::shard::spill`).

use std::collections::{BTreeMap, VecDeque};

/// Alignment of every write (offset and length): direct I/O's.
pub(super) const ALIGN: usize = 4096;
/// A block buffer this full is written.
pub(super) const BLOCK_BYTES: usize = 256 << 10;
/// A segment file this long is sealed: no more appends.
pub(super) const SEGMENT_BYTES: u32 = 64 << 20;

/// Where a chunk's bytes are: segment, offset, length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Extent {
    pub segment: u32,
    pub offset: u32,
    pub len: u32,
}

/// An I/O request of the frontier's spill, for the shard's spill task.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SpillIo {
    /// Write `bytes` (a multiple of [`ALIGN`]) at `offset` (aligned) of
    /// segment `segment`, creating the file if need be; then call
    /// `Frontier::spill_written`.
    Write {
        segment: u32,
        offset: u64,
        bytes: Vec<u8>,
    },
    /// Read the chunk at `at` for `host`; then call `Frontier::spill_read`.
    Read { host: String, at: Extent },
    /// The segment holds nothing live any more: remove its file.
    Remove { segment: u32 },
}

/// Where the bytes of a chunk are now.
pub(super) enum Place<'a> {
    /// In RAM (the block buffer, or a block whose write failed).
    Ram(&'a [u8]),
    /// In a block being written: read it once the write is done.
    Writing,
    /// On disk: read it.
    Disk,
}

#[derive(Debug, Default)]
struct Segment {
    /// Chunks appended and not taken back.
    live: u32,
    /// Writes and reads handed out and not reported back.
    in_flight: u32,
    /// No more appends.
    sealed: bool,
}

/// Counters of a shard's spill, for the report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SpillStats {
    /// Chunks appended.
    pub chunks: u64,
    /// Bytes written to segment files (padding included).
    pub written: u64,
    /// Reads handed out.
    pub reads: u64,
    /// Segment files started.
    pub segments: u64,
}

/// The ledger (see the module docs).
#[derive(Debug)]
pub(super) struct Store {
    segment_bytes: u32,
    block_bytes: usize,
    /// The segment appended to, and the file offset where the block
    /// buffer starts.
    current: u32,
    block_start: u32,
    block: Vec<u8>,
    /// Live chunks in `block`.
    block_live: u32,
    segments: BTreeMap<u32, Segment>,
    /// Blocks handed out to be written: segment, start, end.
    writing: Vec<(u32, u32, u32)>,
    /// Blocks whose write failed, kept: segment, start, bytes.
    rescued: Vec<(u32, u32, Vec<u8>)>,
    /// A write failed and no write succeeded since with no block kept.
    failing: bool,
    io: VecDeque<SpillIo>,
    stats: SpillStats,
}

impl Default for Store {
    fn default() -> Self {
        Store::new(SEGMENT_BYTES, BLOCK_BYTES)
    }
}

impl Store {
    /// A ledger with segments of `segment_bytes` and blocks of
    /// `block_bytes` (both rounded up to [`ALIGN`]).
    pub(super) fn new(segment_bytes: u32, block_bytes: usize) -> Store {
        Store {
            segment_bytes: align_up(segment_bytes as usize).min(u32::MAX as usize / 2) as u32,
            block_bytes: align_up(block_bytes.max(1)),
            current: 0,
            block_start: 0,
            block: Vec::new(),
            block_live: 0,
            segments: BTreeMap::new(),
            writing: Vec::new(),
            rescued: Vec::new(),
            failing: false,
            io: VecDeque::new(),
            stats: SpillStats::default(),
        }
    }

    /// Whether chunks may be appended: no write is failing.
    pub(super) fn can_spill(&self) -> bool {
        !self.failing
    }

    /// Hand the blocks whose write failed out to be written again (they
    /// stay readable: from RAM until then, as being written after).
    pub(super) fn retry(&mut self) {
        for (segment, start, bytes) in std::mem::take(&mut self.rescued) {
            let end = start.saturating_add(bytes.len() as u32);
            self.writing.push((segment, start, end));
            self.segments.entry(segment).or_default().in_flight += 1;
            self.io.push_back(SpillIo::Write {
                segment,
                offset: u64::from(start),
                bytes,
            });
        }
    }

    /// Append one encoded chunk; where it went.
    pub(super) fn append(&mut self, chunk: &[u8]) -> Extent {
        if self.block.capacity() == 0 {
            self.block.reserve_exact(self.block_bytes + ALIGN);
        }
        let at = Extent {
            segment: self.current,
            offset: self.block_start.saturating_add(self.block.len() as u32),
            len: chunk.len() as u32,
        };
        self.block.extend_from_slice(chunk);
        self.block_live += 1;
        if !self.segments.contains_key(&self.current) {
            self.stats.segments += 1;
        }
        self.segments.entry(self.current).or_default().live += 1;
        self.stats.chunks += 1;
        if self.block.len() >= self.block_bytes {
            self.flush();
        }
        at
    }

    /// Hand the block buffer out to be written and start the next one
    /// (in the next segment if this one is full).
    fn flush(&mut self) {
        let len = align_up(self.block.len());
        let mut bytes = std::mem::take(&mut self.block);
        bytes.resize(len, 0);
        let end = self.block_start.saturating_add(len as u32);
        self.writing.push((self.current, self.block_start, end));
        self.segments.entry(self.current).or_default().in_flight += 1;
        self.stats.written += len as u64;
        self.io.push_back(SpillIo::Write {
            segment: self.current,
            offset: u64::from(self.block_start),
            bytes,
        });
        self.block_live = 0;
        self.block_start = end;
        if self.block_start >= self.segment_bytes {
            if let Some(segment) = self.segments.get_mut(&self.current) {
                segment.sealed = true;
            }
            self.current = self.current.wrapping_add(1);
            self.block_start = 0;
        }
    }

    /// Where the chunk at `at` is now.
    pub(super) fn place(&self, at: Extent) -> Place<'_> {
        let start = at.offset as usize;
        let end = start.saturating_add(at.len as usize);
        if at.segment == self.current && at.offset >= self.block_start {
            let from = start.saturating_sub(self.block_start as usize);
            let to = end.saturating_sub(self.block_start as usize);
            return self.block.get(from..to).map_or(Place::Disk, Place::Ram);
        }
        let inside =
            |seg: u32, s: u32, e: u32| seg == at.segment && s <= at.offset && end <= e as usize;
        if let Some((_, s, bytes)) = self
            .rescued
            .iter()
            .find(|(seg, s, bytes)| inside(*seg, *s, s.saturating_add(bytes.len() as u32)))
        {
            let from = start.saturating_sub(*s as usize);
            return bytes
                .get(from..from.saturating_add(at.len as usize))
                .map_or(Place::Disk, Place::Ram);
        }
        if self.writing.iter().any(|&(seg, s, e)| inside(seg, s, e)) {
            return Place::Writing;
        }
        Place::Disk
    }

    /// Ask for the chunk at `at` to be read for `host`.
    pub(super) fn read(&mut self, host: String, at: Extent) {
        self.segments.entry(at.segment).or_default().in_flight += 1;
        self.stats.reads += 1;
        self.io.push_back(SpillIo::Read { host, at });
    }

    /// A read handed out by [`Store::read`] is over.
    pub(super) fn read_done(&mut self, at: Extent) {
        if let Some(segment) = self.segments.get_mut(&at.segment) {
            segment.in_flight = segment.in_flight.saturating_sub(1);
        }
        self.maybe_remove(at.segment);
    }

    /// The chunk at `at` was taken back (or lost): it is no longer live.
    pub(super) fn release(&mut self, at: Extent) {
        if at.segment == self.current && at.offset >= self.block_start {
            self.block_live = self.block_live.saturating_sub(1);
            if self.block_live == 0 {
                self.block.clear();
            }
        }
        if let Some(segment) = self.segments.get_mut(&at.segment) {
            segment.live = segment.live.saturating_sub(1);
        }
        self.maybe_remove(at.segment);
    }

    /// The write of the block at `offset` of `segment` is over; `Err`
    /// gives its bytes back, kept in RAM until [`Store::retry`] (and no
    /// chunk is appended until a write succeeds again with none kept).
    pub(super) fn written(&mut self, segment: u32, offset: u64, result: Result<(), Vec<u8>>) {
        let start = u32::try_from(offset).unwrap_or(u32::MAX);
        self.writing
            .retain(|&(seg, s, _)| !(seg == segment && s == start));
        if let Some(seg) = self.segments.get_mut(&segment) {
            seg.in_flight = seg.in_flight.saturating_sub(1);
        }
        match result {
            Err(bytes) => {
                self.failing = true;
                self.rescued.push((segment, start, bytes));
            }
            Ok(()) if self.rescued.is_empty() => self.failing = false,
            Ok(()) => {}
        }
        self.maybe_remove(segment);
    }

    fn maybe_remove(&mut self, segment: u32) {
        let dead = self
            .segments
            .get(&segment)
            .is_some_and(|s| s.sealed && s.live == 0 && s.in_flight == 0);
        if dead {
            self.segments.remove(&segment);
            self.rescued.retain(|(seg, _, _)| *seg != segment);
            self.io.push_back(SpillIo::Remove { segment });
        }
    }

    /// Bytes this ledger holds in RAM: the block buffer, rescued blocks
    /// and writes not yet taken by the spill task.
    pub(super) fn ram(&self) -> usize {
        self.block.capacity()
            + self.rescued.iter().map(|(_, _, b)| b.len()).sum::<usize>()
            + self
                .io
                .iter()
                .map(|io| match io {
                    SpillIo::Write { bytes, .. } => bytes.len(),
                    _ => 0,
                })
                .sum::<usize>()
    }

    /// The next request to carry out.
    pub(super) fn next_io(&mut self) -> Option<SpillIo> {
        self.io.pop_front()
    }

    pub(super) fn has_io(&self) -> bool {
        !self.io.is_empty()
    }

    pub(super) fn stats(&self) -> SpillStats {
        self.stats
    }

    /// Segment files that exist (live, or written and not yet removed).
    #[cfg(test)]
    pub(super) fn segments(&self) -> usize {
        self.segments.len()
    }
}

fn align_up(n: usize) -> usize {
    n.div_ceil(ALIGN).saturating_mul(ALIGN)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ram(store: &Store, at: Extent) -> Option<Vec<u8>> {
        match store.place(at) {
            Place::Ram(bytes) => Some(bytes.to_vec()),
            _ => None,
        }
    }

    #[test]
    fn chunks_are_packed_into_aligned_blocks_and_read_from_ram_until_written() {
        let mut s = Store::new(64 << 10, 8192);
        let a = s.append(&[1; 3000]);
        let b = s.append(&[2; 3000]);
        assert_eq!((a.offset, b.offset), (0, 3000), "packed");
        assert_eq!(ram(&s, b).unwrap(), vec![2; 3000]);
        assert!(!s.has_io(), "nothing written below a block");
        let c = s.append(&[3; 3000]);
        let Some(SpillIo::Write {
            segment: 0,
            offset: 0,
            bytes,
        }) = s.next_io()
        else {
            panic!("a full block is written")
        };
        assert_eq!(bytes.len(), 12288, "padded to 4 KiB");
        assert_eq!(&bytes[6000..9000], &[3; 3000][..]);
        assert!(matches!(s.place(c), Place::Writing));
        let d = s.append(&[4; 10]);
        assert_eq!(d.offset, 12288, "the next block starts aligned");
        s.written(0, 0, Ok(()));
        assert!(matches!(s.place(a), Place::Disk));
        assert_eq!(ram(&s, d).unwrap(), vec![4; 10]);
    }

    #[test]
    fn a_block_whose_chunks_were_all_taken_back_is_emptied_in_place() {
        let mut s = Store::new(64 << 10, 8192);
        let a = s.append(&[1; 100]);
        let b = s.append(&[2; 100]);
        s.release(a);
        s.release(b);
        let c = s.append(&[3; 100]);
        assert_eq!(c.offset, 0, "the space is reused");
        assert!(!s.has_io());
    }

    #[test]
    fn a_sealed_segment_with_nothing_live_is_removed_once_its_io_is_over() {
        let mut s = Store::new(8192, 8192);
        let a = s.append(&[1; 8192]);
        assert!(matches!(
            s.next_io(),
            Some(SpillIo::Write { segment: 0, .. })
        ));
        let b = s.append(&[2; 10]);
        assert_eq!(b.segment, 1, "segment 0 is full");
        s.written(0, 0, Ok(()));
        s.read("a.test".into(), a);
        assert!(matches!(s.next_io(), Some(SpillIo::Read { .. })));
        s.release(a);
        assert!(!s.has_io(), "a read is in flight");
        s.read_done(a);
        assert_eq!(s.next_io(), Some(SpillIo::Remove { segment: 0 }));
        assert_eq!(s.segments(), 1);
    }

    #[test]
    fn a_failed_write_is_retried_and_the_spill_resumes_once_it_succeeds() {
        let mut s = Store::new(64 << 10, 4096);
        let a = s.append(&[7; 5000]);
        let Some(SpillIo::Write { bytes, .. }) = s.next_io() else {
            panic!("written")
        };
        s.written(0, 0, Err(bytes));
        assert!(!s.can_spill());
        s.retry();
        assert!(matches!(s.place(a), Place::Writing));
        let Some(SpillIo::Write {
            segment: 0,
            offset: 0,
            bytes,
        }) = s.next_io()
        else {
            panic!("the kept block is written again")
        };
        s.written(0, 0, Err(bytes));
        assert!(!s.can_spill(), "still failing");
        assert_eq!(ram(&s, a).unwrap(), vec![7; 5000]);
        s.retry();
        let Some(SpillIo::Write { .. }) = s.next_io() else {
            panic!("written again")
        };
        s.written(0, 0, Ok(()));
        assert!(s.can_spill(), "the disk took it: spilling again");
        assert!(matches!(s.place(a), Place::Disk));
    }

    #[test]
    fn a_failed_write_keeps_its_block_in_ram_and_holds_the_spill_back() {
        let mut s = Store::new(64 << 10, 4096);
        let a = s.append(&[7; 5000]);
        let Some(SpillIo::Write {
            segment,
            offset,
            bytes,
        }) = s.next_io()
        else {
            panic!("written")
        };
        s.written(segment, offset, Err(bytes));
        assert!(!s.can_spill());
        assert_eq!(ram(&s, a).unwrap(), vec![7; 5000]);
    }
}
