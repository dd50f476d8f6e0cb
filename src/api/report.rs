//! [`Report`]: what a finished crawl hands back to its caller.
//!
//! Not the counting (`crate::output::stats`) nor any printing: the caller
//! decides what to show ([`Report::text`] is the command line's report).

use std::time::Duration;

use crate::crawl::budget::Spent;
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
        summary.budget_spent = self.outcome.spent.map(Spent::flag);
        summary
    }

    /// The command line's end report: a few lines of text.
    pub fn text(&self) -> String {
        let mut text = self
            .outcome
            .stats
            .report(self.outcome.elapsed, self.outcome.interrupted);
        if let Some(spent) = self.outcome.spent {
            text.push_str(&format!(
                "  stopped: {} reached, {} URLs left queued\n",
                spent.flag(),
                self.outcome.stats.queued_left
            ));
        }
        if let Some(node) = &self.outcome.cluster {
            text.push_str(&format!(
                "  cluster: {} records acknowledged, partitions taken {} and given up {}, {} lost connections{}{}\n",
                node.records,
                node.taken,
                node.released,
                node.disconnects,
                match node.refused {
                    0 => String::new(),
                    n => format!(", {n} URLs from the streams refused"),
                },
                if node.over { "; the crawl is over" } else { "; this node left before the end" },
            ));
        }
        text
    }

    /// For a node of a cluster crawl ([`super::CrawlerBuilder::cluster`]):
    /// whether it saw the crawl end (every stream drained), not only its
    /// own part of it.
    pub fn cluster_over(&self) -> Option<bool> {
        self.outcome.cluster.as_ref().map(|n| n.over)
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

    /// Records written by this run.
    pub fn records_written(&self) -> u64 {
        self.outcome.stats.urls
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
