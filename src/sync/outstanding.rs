//! The crawl-wide count of outstanding URLs that decides when the crawl is
//! done (the crate's invariant 3). Shared by every shard through an `Arc`,
//! and by a cluster node's thread, which counts in the URLs it takes from
//! the partitions' streams.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The chapter's `Queue.join()`, made global: URLs handed to any shard and
/// not yet finished. Zero means the crawl is done.
#[derive(Debug)]
pub(crate) struct Outstanding {
    /// URLs counted in and not yet counted out.
    count: AtomicUsize,
    /// Set once, when the count reached zero or the crawl was aborted.
    done: AtomicBool,
}

impl Outstanding {
    pub(crate) fn new(initial: usize) -> Self {
        Outstanding {
            count: AtomicUsize::new(initial),
            done: AtomicBool::new(initial == 0),
        }
    }

    /// Count in `n` URLs about to be handed to a shard.
    pub(crate) fn add(&self, n: usize) {
        self.count.fetch_add(n, Ordering::AcqRel);
    }

    /// Count out `n` finished (or dropped) URLs; true if that ended the crawl.
    pub(crate) fn finish(&self, n: usize) -> bool {
        let before = self.count.fetch_sub(n, Ordering::AcqRel);
        debug_assert!(before >= n, "outstanding count went below zero");
        if before == n {
            self.done.store(true, Ordering::Release);
            true
        } else {
            false
        }
    }

    /// Stop the crawl without waiting for the count (a shard failed).
    pub(crate) fn abort(&self) {
        self.done.store(true, Ordering::Release);
    }

    pub(crate) fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    pub(crate) fn count(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crawl_is_done_exactly_when_the_count_reaches_zero() {
        let outstanding = Outstanding::new(1);
        outstanding.add(2);
        assert!(!outstanding.finish(1));
        assert!(!outstanding.finish(1));
        assert!(!outstanding.is_done());
        assert!(outstanding.finish(1));
        assert!(outstanding.is_done());
        assert!(Outstanding::new(0).is_done(), "no roots: nothing to do");
    }
}
