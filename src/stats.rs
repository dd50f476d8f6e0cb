//! Per-shard counters, merged once at the end, and the final report.
//!
//! Counting is pure and cheap (one call per record); nothing here does I/O
//! except formatting the report into a string.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use crate::record::{Kind, Record};

/// Counters of one shard, or of the whole crawl after [`Stats::merge`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// Records written (one per URL taken from a frontier).
    pub urls: u64,
    pub html: u64,
    pub other: u64,
    pub redirects: u64,
    pub errors: u64,
    /// Errors by `error_kind`.
    pub errors_by_kind: BTreeMap<String, u64>,
    /// Responses by HTTP status.
    pub statuses: BTreeMap<u16, u64>,
    /// Body bytes received.
    pub bytes: u64,
    /// Bodies cut short.
    pub truncated: u64,
    /// Links found on pages (sum of `num_urls`).
    pub links: u64,
    /// Links not queued because of `--max-depth`, `--max-url-length`,
    /// `--max-pages-per-host`.
    pub skipped_depth: u64,
    pub skipped_url_length: u64,
    pub skipped_host_full: u64,
    /// Sum of per-URL elapsed time, ms (busy time of the shard's workers).
    pub fetch_ms: f64,
    /// Records per shard (one entry per shard after merging).
    pub per_shard: Vec<u64>,
}

impl Stats {
    /// Count one record.
    pub fn add(&mut self, record: &Record) {
        self.urls += 1;
        match record.kind() {
            Kind::Html => self.html += 1,
            Kind::Other => self.other += 1,
            Kind::Redirect => self.redirects += 1,
            Kind::Error => self.errors += 1,
        }
        if let Some(kind) = &record.error_kind {
            *self.errors_by_kind.entry(kind.clone()).or_default() += 1;
        }
        if let Some(status) = record.status {
            *self.statuses.entry(status).or_default() += 1;
        }
        self.bytes += record.size;
        self.truncated += u64::from(record.truncated);
        self.links += record.num_urls as u64;
        self.fetch_ms += record.elapsed_ms;
    }

    /// Fold another shard's counters into these.
    pub fn merge(&mut self, other: &Stats) {
        self.urls += other.urls;
        self.html += other.html;
        self.other += other.other;
        self.redirects += other.redirects;
        self.errors += other.errors;
        for (k, v) in &other.errors_by_kind {
            *self.errors_by_kind.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &other.statuses {
            *self.statuses.entry(*k).or_default() += v;
        }
        self.bytes += other.bytes;
        self.truncated += other.truncated;
        self.links += other.links;
        self.fetch_ms += other.fetch_ms;
        self.skipped_depth += other.skipped_depth;
        self.skipped_url_length += other.skipped_url_length;
        self.skipped_host_full += other.skipped_host_full;
        if other.per_shard.is_empty() {
            self.per_shard.push(other.urls);
        } else {
            self.per_shard.extend(&other.per_shard);
        }
    }

    /// The chapter's end report, plus bytes and balance across shards.
    pub fn report(&self, elapsed: Duration) -> String {
        let secs = elapsed.as_secs_f64();
        let rate = if secs > 0.0 {
            self.urls as f64 / secs
        } else {
            0.0
        };
        let mut out = String::new();
        let _ = writeln!(
            out,
            "Finished {} urls in {:.3} secs ({:.1} urls/sec)",
            self.urls, secs, rate
        );
        let _ = writeln!(
            out,
            "  html {}  other {}  redirect {}  error {}  truncated {}",
            self.html, self.other, self.redirects, self.errors, self.truncated
        );
        if !self.errors_by_kind.is_empty() {
            let kinds: Vec<String> = self
                .errors_by_kind
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            let _ = writeln!(out, "  errors: {}", kinds.join(", "));
        }
        let statuses: Vec<String> = self
            .statuses
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        let _ = writeln!(
            out,
            "  status: {}",
            if statuses.is_empty() {
                "-".into()
            } else {
                statuses.join(", ")
            }
        );
        let _ = writeln!(
            out,
            "  {} bytes ({:.1} MB/s), {} links",
            self.bytes,
            if secs > 0.0 {
                self.bytes as f64 / secs / 1e6
            } else {
                0.0
            },
            self.links
        );
        if self.skipped_depth + self.skipped_url_length + self.skipped_host_full > 0 {
            let _ = writeln!(
                out,
                "  not queued: {} past --max-depth, {} past --max-url-length, {} past --max-pages-per-host",
                self.skipped_depth, self.skipped_url_length, self.skipped_host_full
            );
        }
        if self.per_shard.len() > 1 {
            let shards: Vec<String> = self.per_shard.iter().map(u64::to_string).collect();
            let _ = writeln!(out, "  urls per shard: {}", shards.join(" / "));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(status: Option<u16>, error: Option<&str>) -> Record {
        Record {
            url: "http://a.test/".into(),
            next_url: None,
            status,
            error: error.map(str::to_string),
            error_kind: error.map(|_| "connect".to_string()),
            size: 100,
            content_type: Some("text/html".into()),
            encoding: None,
            num_urls: 2,
            num_new_urls: 1,
            truncated: false,
            tries: 1,
            elapsed_ms: 2.0,
            shard: 0,
        }
    }

    #[test]
    fn merged_counts_equal_the_sum_of_shards() {
        let mut a = Stats::default();
        a.add(&record(Some(200), None));
        a.add(&record(Some(404), None));
        let mut b = Stats::default();
        b.add(&record(None, Some("refused")));
        let mut total = Stats::default();
        total.merge(&a);
        total.merge(&b);
        assert_eq!(total.urls, 3);
        assert_eq!(total.errors, 1);
        assert_eq!(total.errors_by_kind["connect"], 1);
        assert_eq!(total.statuses[&404], 1);
        assert_eq!(total.bytes, 300);
        assert_eq!(total.per_shard, vec![2, 1]);
    }

    #[test]
    fn report_names_the_chapter_line() {
        let mut s = Stats::default();
        s.add(&record(Some(200), None));
        let text = s.report(Duration::from_secs(2));
        assert!(
            text.starts_with("Finished 1 urls in 2.000 secs (0.5 urls/sec)"),
            "{text}"
        );
        assert!(text.contains("200: 1"));
    }
}
