//! [`Report`]: what a finished crawl hands back to its caller.
//!
//! Not the counting (`crate::output::stats`) nor any printing: the caller
//! decides what to show (the [`Summary`]'s `Display` is the end report
//! as text).

use std::time::Duration;

use crate::cluster::node::NodeReport;
use crate::config::budget::Spent;
use crate::crawl::run::Outcome;
use crate::output::record::Record;
use crate::output::stats::{Fetched, Summary};

/// The end of a crawl: its numbers, and how it ended.
#[derive(Debug)]
pub struct Report {
    outcome: Outcome,
}

impl Report {
    pub(crate) fn new(outcome: Outcome) -> Self {
        Report { outcome }
    }

    /// URLs taken up (each has a record).
    pub fn urls(&self) -> u64 {
        self.outcome.stats.urls
    }

    /// URLs whose record has an error.
    pub fn errors(&self) -> u64 {
        self.outcome.stats.errors
    }

    /// Wall time of the crawl.
    pub fn elapsed(&self) -> Duration {
        self.outcome.elapsed
    }

    /// Every number of the report (counts by kind, status and error kind,
    /// bytes, latency percentiles, shard balance, peak memory), ready to
    /// serialise.
    pub fn summary(&self) -> Summary {
        let mut summary = self
            .outcome
            .stats
            .report_data(self.outcome.elapsed, self.outcome.interrupted);
        summary.budget_spent = self.outcome.spent;
        summary
    }

    /// For a node of a cluster crawl ([`super::CrawlerBuilder::cluster`]):
    /// whether it saw the crawl end (every stream drained), not only its
    /// own part of it.
    pub fn cluster_over(&self) -> Option<bool> {
        self.outcome.cluster.as_ref().map(|n| n.over)
    }

    /// For a node of a cluster crawl: what its cluster thread did.
    pub fn cluster(&self) -> Option<&NodeReport> {
        self.outcome.cluster.as_ref()
    }

    /// The budget (`--max-pages`, `--max-bytes`, `--max-time`) that
    /// stopped the crawl, if one did: a clean stop, no fetch cut short.
    pub fn budget_spent(&self) -> Option<Spent> {
        self.outcome.spent
    }

    /// For a resumed crawl ([`super::CrawlerBuilder::resume`]): the
    /// records its earlier runs wrote.
    pub fn resumed(&self) -> Option<u64> {
        self.outcome.resumed
    }

    /// Whether anything was fetched, and if not, whether servers answered.
    pub fn fetched(&self) -> Fetched {
        self.outcome.stats.outcome()
    }

    /// Stopped by an [`Interrupt`](super::Interrupt) before work ran out.
    pub fn interrupted(&self) -> bool {
        self.outcome.interrupted
    }

    /// Ended before work ran out, for any reason (an interrupt, a shard
    /// that died, the JSONL output that ended).
    pub fn aborted(&self) -> bool {
        self.outcome.aborted
    }

    /// Writing the JSONL output or the WARC files failed (one line).
    pub fn output_error(&self) -> Option<&str> {
        self.outcome.output_error.as_deref()
    }

    /// The reader of `jsonl_stdout` went away (EPIPE), which ended the
    /// crawl.
    pub fn output_closed(&self) -> bool {
        self.outcome.output_closed
    }

    /// Every record, with [`keep_records`](super::CrawlerBuilder::keep_records)
    /// (in no particular order); else none.
    pub fn records(&self) -> &[Record] {
        &self.outcome.records
    }
}
