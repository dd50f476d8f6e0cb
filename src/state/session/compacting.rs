//! The session's side of compaction within a run
//! ([`crate::state::compact::in_run`]): the journal lengths the shards
//! publish, and the compaction the checkpoints' thread runs when one is
//! due.
//!
//! Not the compaction itself (`compact/in_run.rs`), nor when the
//! checkpoints run (`crate::crawl::checkpoints`).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use crate::config::Config;

use super::super::compact::in_run::{self, JournalLengths};
use super::super::done;
use super::{log_of, Session};

impl Session {
    /// Each shard's journal of this run, synced so far: the shards set
    /// it, an in-run compaction reads it.
    pub(crate) fn journal_lengths(&self) -> Arc<JournalLengths> {
        self.journal_lengths.clone()
    }

    /// Set when the crawl stops: an in-run compaction running gives up
    /// (the checkpoints' thread is joined then, and must not wait for it).
    pub(crate) fn compaction_stop(&self) -> Arc<AtomicBool> {
        self.in_run.stop.clone()
    }

    /// An in-run compaction, if one is due ([`in_run`]): for the
    /// checkpoints' thread, after a checkpoint (whose catch-up brought
    /// the done fingerprints up to the synced log). Not before a resume's
    /// own compaction is done (its bases are the first one's input). A
    /// failure loses nothing (the marker is written last) and stops
    /// in-run compactions for this run. What it did, if anything.
    pub(crate) fn compact_in_run(&mut self) -> Option<in_run::Compacted> {
        if self.compaction.as_ref().is_some_and(|c| !c.is_done()) {
            return None;
        }
        let shard_dirs = self.dir.shard_dirs(self.manifest.shards);
        let synced = self.journal_lengths.get();
        if !self.in_run.due(&shard_dirs, &synced) {
            return None;
        }
        let log = log_of(&self.manifest, self.dir.path());
        let done = done::covered_fingerprints(self.dir.path(), &log, &shard_dirs);
        let key = self.manifest.fingerprint_key.halves().into();
        let plan = self
            .in_run
            .plan(self.dir.path(), &shard_dirs, key, synced, done);
        let started = Instant::now();
        match self.in_run.compact(plan) {
            Ok(done) => {
                log::info!(
                    "compacted in run {}: {} URLs still queued of {} read, {} bytes of bases (seq {}), in {:.1} s",
                    self.run,
                    done.kept,
                    done.read,
                    done.bytes,
                    done.seq,
                    started.elapsed().as_secs_f64()
                );
                Some(done)
            }
            Err(e) => {
                log::warn!("compacting the journals in this run: {e} (not tried again this run)");
                None
            }
        }
    }
}

/// The limits of in-run compactions `config` sets, if any.
pub(super) fn limits(config: &Config) -> Option<(u64, usize)> {
    config.state.as_ref().and_then(|s| s.compact_in_run)
}
