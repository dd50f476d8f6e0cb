//! [`WriteBack`]: whether the WARC writers' syncs of their files went
//! through, for another thread that syncs the same files and must not
//! trust its own sync alone (the checkpoints' catch-up of `done.json`).
//!
//! Linux reports a failed write-back to one `fsync` only: once a writer's
//! sync (glommio's, as it closes a file) has seen the error, another file
//! descriptor's sync of the same file succeeds, the lost bytes still lost.
//! So each writer counts itself in before its sync and out after it,
//! marking a failure before it counts out; a reader that checks after its
//! own sync sees either the failure or a sync still under way
//! ([`Syncs::Busy`]), never a clean state that hides a failure its own
//! sync missed.
//!
//! Not the syncs themselves (`crate::output::warc::file`,
//! `crate::state::done`).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};

/// The syncs of a crawl's WARC files, over every shard's writer.
#[derive(Debug, Default)]
pub(crate) struct WriteBack {
    syncing: AtomicUsize,
    failed: AtomicBool,
}

/// What a reader may conclude from the writers' syncs so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Syncs {
    /// Every sync that ended went through, and none is under way.
    Clean,
    /// A sync is under way: ask again later.
    Busy,
    /// A sync, or a write, failed: what the files hold is not known.
    Failed,
}

/// One sync under way; [`Syncing::end`] counts it out.
#[must_use = "a sync counted in is counted out by end()"]
pub(crate) struct Syncing<'a>(&'a WriteBack);

impl WriteBack {
    /// A sync begins.
    pub(crate) fn begin(&self) -> Syncing<'_> {
        self.syncing.fetch_add(1, SeqCst);
        Syncing(self)
    }

    /// A write failed (outside a sync): the files are not to be trusted.
    pub(crate) fn fail(&self) {
        self.failed.store(true, SeqCst);
    }

    /// What the writers' syncs say, read after the reader's own sync.
    pub(crate) fn syncs(&self) -> Syncs {
        if self.failed.load(SeqCst) {
            Syncs::Failed
        } else if self.syncing.load(SeqCst) > 0 {
            Syncs::Busy
        } else {
            Syncs::Clean
        }
    }
}

impl Syncing<'_> {
    /// The sync ended, `ok` or not: a failure is marked before the sync
    /// counts out, so no reader sees it gone and unmarked.
    pub(crate) fn end(self, ok: bool) {
        if !ok {
            self.0.fail();
        }
        self.0.syncing.fetch_sub(1, SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sync_under_way_is_busy_then_clean_or_failed_as_it_ended() {
        let w = WriteBack::default();
        assert_eq!(w.syncs(), Syncs::Clean);
        let first = w.begin();
        let second = w.begin();
        assert_eq!(w.syncs(), Syncs::Busy);
        first.end(true);
        assert_eq!(w.syncs(), Syncs::Busy, "one still under way");
        second.end(true);
        assert_eq!(w.syncs(), Syncs::Clean);
        w.begin().end(false);
        assert_eq!(w.syncs(), Syncs::Failed, "for good");
        w.begin().end(true);
        assert_eq!(w.syncs(), Syncs::Failed);
    }

    #[test]
    fn a_failed_write_is_a_failure_without_a_sync() {
        let w = WriteBack::default();
        w.fail();
        assert_eq!(w.syncs(), Syncs::Failed);
    }
}
