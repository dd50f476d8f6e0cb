//! `ringcrawl report RECORDS.jsonl... -o report.html`: one self-contained
//! HTML file from the records of a finished crawl (one node's, or the
//! union of a cluster's nodes': give every file).
//!
//! The records are streamed, a line at a time, into counters
//! ([`Tally`]): by status, error kind, MIME type and host, pages and
//! bytes a second of the crawl (from each record's `timestamp`), and the
//! redirect chains (`chains.rs`, which follows a bounded number at once).
//! Memory grows with the hosts and the crawl's seconds, not with the
//! records. `html.rs` writes the page: tables and SVG drawn here, so it
//! opens anywhere and every number is in the file; its one small inline
//! script only sorts the hosts' table when a column's head is clicked.
//!
//! Not the live page (`serve/`) and not the end report (the library's).

use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;
use std::path::PathBuf;

use anyhow::Context;

mod chains;
mod html;

use chains::Chains;

/// The fields of a record (docs/formats.md) the report reads; the others
/// are skipped.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct Line {
    url: String,
    next_url: Option<String>,
    status: Option<u16>,
    error_kind: Option<String>,
    size: u64,
    content_type: Option<String>,
    elapsed_ms: f64,
    timestamp: String,
}

/// What one host did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostRow {
    pub urls: u64,
    pub bytes: u64,
    pub errors: u64,
    pub redirects: u64,
    /// Sum of the fetches' total times, ms (for the mean), and the
    /// longest.
    pub total_ms: f64,
    pub max_ms: f64,
}

/// The records' counters.
#[derive(Debug, Default)]
pub struct Tally {
    pub records: u64,
    pub bytes: u64,
    pub errors: u64,
    pub redirects: u64,
    /// Lines that were not records (cut or foreign).
    pub unreadable: u64,
    pub statuses: BTreeMap<u16, u64>,
    pub error_kinds: BTreeMap<String, u64>,
    pub mime: BTreeMap<String, u64>,
    pub hosts: HashMap<String, HostRow>,
    /// Pages and bytes by second since the Unix epoch.
    pub seconds: BTreeMap<i64, (u64, u64)>,
    /// The redirect chains.
    pub chains: Chains,
}

impl Tally {
    /// Count one line of a records file.
    pub fn line(&mut self, line: &str) {
        if line.trim().is_empty() {
            return;
        }
        let Ok(r) = serde_json::from_str::<Line>(line) else {
            self.unreadable += 1;
            return;
        };
        self.records += 1;
        self.bytes += r.size;
        if let Some(status) = r.status {
            *self.statuses.entry(status).or_default() += 1;
        }
        if let Some(kind) = &r.error_kind {
            self.errors += 1;
            *self.error_kinds.entry(kind.clone()).or_default() += 1;
        }
        if r.next_url.is_some() {
            self.redirects += 1;
        }
        if let Some(ct) = &r.content_type {
            let mime = ct
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            *self.mime.entry(mime).or_default() += 1;
        }
        let host = url::Url::parse(&r.url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_default();
        self.chains.record(
            &r.url,
            r.next_url.as_deref(),
            r.status,
            r.error_kind.as_deref(),
        );
        let row = self.hosts.entry(host).or_default();
        row.urls += 1;
        row.bytes += r.size;
        row.errors += u64::from(r.error_kind.is_some());
        row.redirects += u64::from(r.next_url.is_some());
        row.total_ms += r.elapsed_ms;
        row.max_ms = row.max_ms.max(r.elapsed_ms);
        if let Some(second) = epoch_second(&r.timestamp) {
            let slot = self.seconds.entry(second).or_default();
            slot.0 += 1;
            slot.1 += r.size;
        }
    }
}

/// Seconds since the Unix epoch of an RFC 3339 UTC time
/// (`YYYY-MM-DDThh:mm:ss[.fff]Z`, the records' `timestamp`).
pub fn epoch_second(t: &str) -> Option<i64> {
    let num = |range: std::ops::Range<usize>| t.get(range)?.parse::<i64>().ok();
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hh * 3600 + mm * 60 + ss)
}

/// Read every file (`-` is standard input) into one tally and write the
/// page to `out`.
pub fn main(files: &[PathBuf], out: &std::path::Path) -> anyhow::Result<()> {
    let mut tally = Tally::default();
    for path in files {
        let reader: Box<dyn BufRead> = if path.as_os_str() == "-" {
            Box::new(std::io::stdin().lock())
        } else {
            let file = std::fs::File::open(path)
                .with_context(|| format!("{}: cannot open", path.display()))?;
            Box::new(std::io::BufReader::with_capacity(1 << 16, file))
        };
        for line in reader.lines() {
            let line = line.with_context(|| format!("{}: cannot read", path.display()))?;
            tally.line(&line);
        }
    }
    tally.chains.finish();
    let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    std::fs::write(out, html::page(&tally, &names))
        .with_context(|| format!("-o {}: cannot write", out.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_seconds_since_the_epoch() {
        assert_eq!(epoch_second("1970-01-01T00:00:00.000Z"), Some(0));
        assert_eq!(epoch_second("2000-03-01T00:00:01Z"), Some(951_868_801));
        assert_eq!(
            epoch_second("2026-11-27T09:50:20.123Z"),
            Some(1_795_773_020)
        );
        assert_eq!(epoch_second("not a time"), None);
    }

    #[test]
    fn records_are_counted_by_status_kind_mime_host_and_second() {
        let mut t = Tally::default();
        t.line(r#"{"url":"http://a.test/","status":200,"size":10,"content_type":"text/html; charset=utf-8","timestamp":"2026-11-27T09:50:20.123Z","elapsed_ms":2.0}"#);
        t.line(r#"{"url":"http://a.test/x","status":301,"next_url":"http://a.test/y","size":0,"timestamp":"2026-11-27T09:50:20.900Z","elapsed_ms":1.0}"#);
        t.line(r#"{"url":"http://b.test/","error":"refused","error_kind":"connect_refused","size":0,"timestamp":"2026-11-27T09:50:21.000Z","elapsed_ms":1.0}"#);
        t.line("{cut");
        t.line("");
        assert_eq!(
            (t.records, t.unreadable, t.errors, t.redirects),
            (3, 1, 1, 1)
        );
        assert_eq!(t.statuses[&200], 1);
        assert_eq!(t.error_kinds["connect_refused"], 1);
        assert_eq!(t.mime["text/html"], 1);
        assert_eq!(t.hosts["a.test"].urls, 2);
        assert_eq!(t.hosts["a.test"].redirects, 1);
        assert_eq!(t.hosts["a.test"].max_ms, 2.0);
        t.chains.finish();
        assert_eq!(t.chains.unresolved, 1, "a.test/y has no record");
        assert_eq!(
            t.seconds.values().copied().collect::<Vec<_>>(),
            [(2, 10), (1, 0)]
        );
    }
}
