//! Where the results go: records (JSON Lines), WARC, CDXJ and WACZ,
//! progress, and the handle that stops the crawl.
//!
//! Settings of [`CrawlerBuilder`], checked at [`CrawlerBuilder::build`].

use std::path::Path;
use std::time::Duration;

use crate::api::Interrupt;
use crate::config::Output;

use super::CrawlerBuilder;

impl CrawlerBuilder {
    /// Write one JSON record per URL to this file (created or truncated).
    pub fn jsonl(mut self, path: impl AsRef<Path>) -> Self {
        self.config.output = Output::File(path.as_ref().to_path_buf());
        self
    }

    /// Write one JSON record per URL to standard output.
    pub fn jsonl_stdout(mut self) -> Self {
        self.config.output = Output::Stdout;
        self
    }

    /// Bytes of records the JSONL writer may have waiting before the crawl
    /// starts no new fetch until it catches up (default
    /// [`defaults::JSONL_BACKLOG`](crate::defaults::JSONL_BACKLOG)).
    pub fn jsonl_backlog(mut self, bytes: usize) -> Self {
        self.config.output_backlog = bytes;
        self
    }

    /// Archive every exchange as WARC 1.1 in this directory (a file per
    /// shard).
    pub fn warc(mut self, dir: impl AsRef<Path>) -> Self {
        self.config.warc_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Rotate WARC files before they grow past this many bytes (default
    /// [`defaults::WARC_MAX_SIZE`](crate::defaults::WARC_MAX_SIZE)).
    pub fn warc_max_size(mut self, bytes: u64) -> Self {
        self.config.warc_max_size = bytes;
        self
    }

    /// Archive a payload seen before as a `revisit` record referring to
    /// its first copy (profile identical-payload-digest), crawl-wide; with
    /// [`warc`](Self::warc).
    pub fn warc_dedup(mut self, dedup: bool) -> Self {
        self.config.warc_dedup = dedup;
        self
    }

    /// Archive each name's DNS answer as a `resource` record (`dns:` URI,
    /// as Heritrix does); with [`warc`](Self::warc).
    pub fn warc_dns(mut self, dns: bool) -> Self {
        self.config.warc_dns = dns;
        self
    }

    /// Write a CDXJ index of the WARC records to this file as they are
    /// written (cdxj-indexer's fields, unsorted); with [`warc`](Self::warc).
    pub fn cdxj(mut self, path: impl AsRef<Path>) -> Self {
        self.config.cdxj = Some(path.as_ref().to_path_buf());
        self
    }

    /// Package the WARC files, their index (sorted) and the list of HTML
    /// pages as a WACZ 1.1.1 file here when the crawl is over (written to
    /// `FILE.tmp`, renamed when whole); with [`warc`](Self::warc). The
    /// crawl writes the index for it even without [`cdxj`](Self::cdxj).
    pub fn wacz(mut self, path: impl AsRef<Path>) -> Self {
        self.config.wacz = Some(path.as_ref().to_path_buf());
        self
    }

    /// Keep every record and return them with the report (memory grows
    /// with the crawl: for tests and small crawls).
    pub fn keep_records(mut self, keep: bool) -> Self {
        self.config.keep_records = keep;
        self
    }

    /// Print live progress on stderr: redrawn in place on a terminal, else
    /// a line every `interval` (off by default).
    pub fn progress(mut self, interval: Option<Duration>) -> Self {
        self.config.progress = interval;
        self
    }

    /// Stop the crawl when `handle` is interrupted: made before the
    /// crawler, so a page handler or a follow rule can hold a clone and
    /// end the crawl from inside it (the same as
    /// [`Crawler::interrupt_handle`](crate::Crawler::interrupt_handle) from outside). Fetches running then
    /// get their grace period; what is left is recorded as interrupted.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use ringcrawl::{Crawler, Interrupt};
    /// let stop = Interrupt::new();
    /// let handle = stop.clone();
    /// let report = Crawler::builder()
    ///     .root("https://example.com/")
    ///     .interrupt(stop)
    ///     .on_page(move |page| {
    ///         if page.body().windows(6).any(|w| w == b"needle") {
    ///             handle.interrupt();
    ///         }
    ///     })
    ///     .build()?
    ///     .run()?;
    /// assert!(report.interrupted() || report.errors() <= report.urls());
    /// # Ok(()) }
    /// ```
    pub fn interrupt(mut self, handle: Interrupt) -> Self {
        self.interrupt = handle;
        self
    }
}
