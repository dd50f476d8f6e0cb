//! Per-shard counters and latency histograms, merged once at the end, and
//! the numbers of the final report (JSON for scripts; the text for people
//! is `report.rs`'s).
//!
//! Counting is pure and cheap (one call per record); nothing here does I/O
//! except formatting the report into a string.

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::config::budget::Spent;
use crate::job::ErrorKind;
use crate::output::backoffs::Backoffs;
use crate::output::proxies::{self, ProxyHealth};
use crate::output::record::{Kind, Record, CUT_AT_LIMIT};
use crate::output::revalidations::Revalidations;

/// Counters of one shard, or of the whole crawl after [`Stats::merge`].
#[derive(Debug, Clone, Default)]
pub(crate) struct Stats {
    /// Records written (one per URL taken from a frontier).
    pub urls: u64,
    pub html: u64,
    pub other: u64,
    pub redirects: u64,
    pub errors: u64,
    /// Errors by `error_kind`.
    pub errors_by_kind: BTreeMap<ErrorKind, u64>,
    /// Warnings by kind (records not counted as errors).
    pub warnings_by_kind: BTreeMap<String, u64>,
    /// Why roots and seeds (and their redirects' targets) got no page:
    /// the first failure of each origin, [`MAX_FAILED_STARTS`] at most.
    pub failed_starts: Vec<StartFailure>,
    /// Hosts that failed several times in a row, and were backed off.
    pub backed_off: Backoffs,
    /// A recrawl's conditional requests (`--since`).
    pub revalidations: Revalidations,
    /// Each proxy's exchanges, failures and parkings.
    pub proxies: Vec<ProxyHealth>,
    /// Responses by HTTP status.
    pub statuses: BTreeMap<u16, u64>,
    /// Body bytes received.
    pub bytes: u64,
    /// Bodies cut short, for either reason: at a limit of the crawl's
    /// own, or by the transfer (the connection or a deadline).
    pub truncated: u64,
    pub truncated_by_limit: u64,
    pub truncated_in_transfer: u64,
    /// Links found on pages (sum of `num_urls`).
    pub links: u64,
    /// URLs not queued because of `--max-depth`, `--max-url-length`,
    /// `--max-pages-per-host`: the records of those kinds.
    pub skipped_depth: u64,
    pub skipped_url_length: u64,
    pub skipped_host_full: u64,
    /// robots.txt requests made.
    pub robots_fetches: u64,
    /// Of those, the ones a server answered (any status).
    pub robots_answered: u64,
    /// Hosts the frontiers still held when the crawl ended, live or resting
    /// (finished, rules kept): bounded by the host memory, not by the hosts
    /// ever met.
    pub hosts_held: u64,
    /// The most bytes the hosts' state took at once (each shard's peak,
    /// added), within `--host-memory` but for robots.txt files larger than
    /// their reserve; and the URLs that waited for room among the hosts.
    pub host_memory_peak: u64,
    pub urls_waited_for_hosts: u64,
    /// The TLS session caches when the crawl ended: (name, port) keys held,
    /// their estimated bytes (each shard's within its
    /// `tls_session_memory`), and keys evicted to stay within it.
    pub tls_sessions: u64,
    pub tls_session_bytes: u64,
    pub tls_session_evictions: u64,
    /// TLS handshakes, by how they ended.
    pub tls_handshakes: TlsHandshakes,
    /// URLs still queued when the crawl ended (after an interrupt or a
    /// spent budget; 0 when it ran out of work).
    pub queued_left: u64,
    /// Of those, the ones spilled to disk.
    pub queued_on_disk: u64,
    /// Chunks of queued URLs spilled, bytes written to the spill files,
    /// chunks read back from them.
    pub spill_chunks: u64,
    pub spill_bytes: u64,
    pub spill_reads: u64,
    /// Queued URLs lost to a spill file that could not be read back
    /// (logged; never fetched nor recorded).
    pub spill_lost: u64,
    /// Merges of a seen-set's RAM bucket into its run on disk.
    pub seen_merges: u64,
    /// URLs whose newness took a lookup of a seen-set's run on disk.
    pub seen_lookups: u64,
    /// Connect, first-byte and total latency of fetches.
    pub latency: Latencies,
    /// One entry per shard after merging.
    pub shards: Vec<ShardBalance>,
    /// Peak resident memory of the process (`VmHWM`), in KiB, read when the
    /// crawl ended; 0 if unknown.
    pub peak_rss_kib: u64,
    /// The resolvers' counters.
    pub dns: DnsCounts,
}

/// What the shards' resolvers did: their counters when the crawl ended,
/// summed over the shards.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct DnsCounts {
    /// Lookups started: one per name the cache did not answer, however
    /// many fetches waited for it.
    pub lookups: u64,
    /// Queries sent (AAAA and A, retries and TCP after truncation
    /// included).
    pub queries: u64,
    /// Answers received to them.
    pub answers: u64,
    /// Queries that got no answer in time.
    pub timeouts: u64,
    /// Addresses answered from the cache.
    pub cache_hits: u64,
    /// Failures answered from the cache (NXDOMAIN, no address, a
    /// nameserver that failed), until their negative TTL ran out.
    pub negative_hits: u64,
    /// Queries that waited for a slot (the resolver's limit of queries in
    /// flight was reached).
    pub waited: u64,
    /// Lookups that answered on one family without waiting for the other
    /// (AAAA at once, A after the 50 ms resolution delay).
    pub early: u64,
    /// Names cached when the crawl ended.
    pub cached_names: u64,
    /// The bytes they held (an estimate).
    pub cache_bytes: u64,
}

impl DnsCounts {
    fn add(&mut self, other: &DnsCounts) {
        self.lookups += other.lookups;
        self.queries += other.queries;
        self.answers += other.answers;
        self.timeouts += other.timeouts;
        self.cache_hits += other.cache_hits;
        self.negative_hits += other.negative_hits;
        self.waited += other.waited;
        self.early += other.early;
        self.cached_names += other.cached_names;
        self.cache_bytes += other.cache_bytes;
    }
}

/// TLS handshakes the shards ran, by how they ended, summed over the
/// shards.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct TlsHandshakes {
    /// Full handshakes (a HelloRetryRequest included).
    pub full: u64,
    /// Handshakes that resumed a cached session (TLS 1.2 session ID or
    /// ticket, TLS 1.3 ticket).
    pub resumed: u64,
    /// Handshakes that failed: an alert, a certificate refused, a
    /// time-out, a socket error.
    pub failed: u64,
}

impl TlsHandshakes {
    fn add(&mut self, other: &TlsHandshakes) {
        self.full += other.full;
        self.resumed += other.resumed;
        self.failed += other.failed;
    }
}

/// Origins whose failures the report keeps (`Summary::failed_starts`) (one line of
/// stderr names them).
pub const MAX_FAILED_STARTS: usize = 8;

/// Why a root, a seed or a root's redirect target got no page: its URL
/// and its error (kind and message), or the status it was answered with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct StartFailure {
    /// The URL, as its record has it.
    pub url: String,
    /// Its record's `error_kind`, if it failed.
    pub error_kind: Option<ErrorKind>,
    /// Its record's `error` (the message), if it failed.
    pub error: Option<String>,
    /// The status it was answered with, if it was.
    pub status: Option<u16>,
}

impl StartFailure {
    /// Of a record that is a start of the crawl (a root, a seed, or a
    /// redirect target of one: its hop path is all `R`s) and got no page
    /// (an error, or a 4xx/5xx); None for any other record. A sitemap
    /// the crawl guessed (`M`) is not one: nobody asked for it.
    fn of(record: &Record) -> Option<StartFailure> {
        if !record.hops.bytes().all(|b| b == b'R') {
            return None;
        }
        let failed = match record.kind() {
            Kind::Error => true,
            Kind::Redirect => false,
            Kind::Html | Kind::Other => record.status.is_some_and(|s| s >= 400),
        };
        failed.then(|| StartFailure {
            url: record.url.clone(),
            error_kind: record.error_kind,
            error: record.error.clone(),
            status: record.status,
        })
    }

    /// `scheme://host:port` of its URL.
    fn origin(&self) -> String {
        match url::Url::parse(&self.url) {
            Ok(u) => u.origin().ascii_serialization(),
            Err(_) => self.url.clone(),
        }
    }

    /// Keep `failure` in `list` unless its origin has one already or the
    /// list is full.
    fn keep(list: &mut Vec<StartFailure>, failure: StartFailure) {
        if list.len() < MAX_FAILED_STARTS && list.iter().all(|f| f.origin() != failure.origin()) {
            list.push(failure);
        }
    }
}

/// What a crawl got back, as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fetched {
    /// At least one page was answered with a 2xx.
    Some,
    /// Servers answered, but no page with a 2xx (every root got an error
    /// status, or robots.txt kept it out, or a redirect led nowhere).
    OnlyErrors,
    /// No server answered anything (DNS, refused, time-outs, resets,
    /// unsupported schemes).
    NoAnswer,
}

/// How much one shard did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
#[allow(missing_docs)]
pub struct ShardBalance {
    pub urls: u64,
    /// CPU time of the shard's thread, ms.
    pub cpu_ms: f64,
}

/// HDR histograms of fetch latencies, in microseconds (1 µs to 1 hour,
/// 3 significant digits).
#[derive(Debug, Clone)]
pub(crate) struct Latencies {
    pub connect: Histogram<u64>,
    pub first_byte: Histogram<u64>,
    pub total: Histogram<u64>,
}

impl Default for Latencies {
    fn default() -> Self {
        #[allow(clippy::expect_used, reason = "the bounds are constants, and valid")]
        let new =
            || Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("constant bounds are valid");
        Latencies {
            connect: new(),
            first_byte: new(),
            total: new(),
        }
    }
}

impl Latencies {
    fn record(histogram: &mut Histogram<u64>, ms: f64) {
        let us = (ms * 1e3).round().max(1.0) as u64;
        histogram.saturating_record(us);
    }

    fn merge(&mut self, other: &Latencies) {
        let _ = self.connect.add(&other.connect);
        let _ = self.first_byte.add(&other.first_byte);
        let _ = self.total.add(&other.total);
    }
}

/// p50/p90/p99/max of one histogram, in ms.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
#[allow(missing_docs)]
pub struct Percentiles {
    pub count: u64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl Percentiles {
    pub(crate) fn of(h: &Histogram<u64>) -> Self {
        let ms = |us: u64| us as f64 / 1e3;
        Percentiles {
            count: h.len(),
            p50_ms: ms(h.value_at_quantile(0.50)),
            p90_ms: ms(h.value_at_quantile(0.90)),
            p99_ms: ms(h.value_at_quantile(0.99)),
            max_ms: ms(h.max()),
        }
    }
}

/// The numbers of the end report (`--report-json` writes them as JSON).
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
#[allow(missing_docs)]
pub struct Summary {
    pub urls: u64,
    pub elapsed_s: f64,
    pub urls_per_s: f64,
    pub html: u64,
    pub other: u64,
    pub redirects: u64,
    pub errors: u64,
    pub errors_by_kind: BTreeMap<ErrorKind, u64>,
    /// Warnings by kind: pages fetched, with something to know
    /// (`tls_certificate_untrusted`: accepted only because of
    /// `--insecure`).
    pub warnings_by_kind: BTreeMap<String, u64>,
    /// Roots and seeds (or their redirects' targets) that got no page, the
    /// first of each origin, a few at most.
    pub failed_starts: Vec<StartFailure>,
    /// Hosts that failed several times in a row, and were backed off.
    pub backed_off: Backoffs,
    /// A recrawl's conditional requests (`--since`): pages unchanged,
    /// changed, fetched again, and the bytes the 304s spared.
    pub revalidations: Revalidations,
    /// Each proxy's exchanges, failures and parkings, and whether it was
    /// parked at the end (none without proxies).
    pub proxies: Vec<ProxyHealth>,
    pub statuses: BTreeMap<u16, u64>,
    pub bytes: u64,
    /// Bodies not whole, for either reason: cut at a limit of the crawl's
    /// (`--max-body`, a sitemap's bounds), or ended early in transfer.
    pub truncated: u64,
    pub truncated_by_limit: u64,
    pub truncated_in_transfer: u64,
    pub links: u64,
    pub skipped_depth: u64,
    pub skipped_url_length: u64,
    pub skipped_host_full: u64,
    /// robots.txt requests made, and of those the ones a server answered
    /// (any status).
    pub robots_requests: u64,
    pub robots_answered: u64,
    pub connect: Percentiles,
    pub first_byte: Percentiles,
    pub total: Percentiles,
    pub shards: Vec<ShardBalance>,
    pub peak_rss_kib: u64,
    pub interrupted: bool,
    /// The flag of the budget that stopped the crawl (`--max-pages`,
    /// `--max-bytes`, `--max-time`), if one did.
    pub budget_spent: Option<Spent>,
    /// URLs still queued when the crawl ended.
    pub queued_left: u64,
    /// Of those, the ones spilled to disk.
    pub queued_on_disk: u64,
    /// Chunks of queued URLs spilled to disk, their bytes, and the chunks
    /// read back.
    pub spill_chunks: u64,
    pub spill_bytes: u64,
    pub spill_reads: u64,
    /// Queued URLs lost to a spill file that could not be read back.
    pub spill_lost: u64,
    /// Merges of the seen-sets' buckets to disk.
    pub seen_merges: u64,
    /// The most bytes the hosts' state took (each shard's peak, added), and
    /// the URLs that waited for room among the hosts (`--host-memory`).
    pub host_memory_peak: u64,
    pub urls_waited_for_hosts: u64,
    /// Hosts held when the crawl ended, live or resting (finished, kept in
    /// case they come back): bounded by `--host-memory`, not by the hosts
    /// ever met.
    pub hosts_held: u64,
    /// URLs looked up in the seen-sets' runs on disk.
    pub seen_lookups: u64,
    /// Name resolution: lookups, queries, answers, time-outs, cache hits.
    pub dns: DnsCounts,
    /// (name, port) keys the TLS session caches held at the end, their
    /// estimated bytes, and the keys evicted to stay within
    /// `tls_session_memory` a shard.
    pub tls_sessions: u64,
    pub tls_session_bytes: u64,
    pub tls_session_evictions: u64,
    /// TLS handshakes, by how they ended.
    pub tls_handshakes: TlsHandshakes,
}

impl Stats {
    /// Count one record.
    pub(crate) fn add(&mut self, record: &Record) {
        self.urls += 1;
        match record.kind() {
            Kind::Html => self.html += 1,
            Kind::Other => self.other += 1,
            Kind::Redirect => self.redirects += 1,
            Kind::Error => self.errors += 1,
        }
        if let Some(kind) = record.error_kind {
            *self.errors_by_kind.entry(kind).or_default() += 1;
            match kind {
                ErrorKind::TooDeep => self.skipped_depth += 1,
                ErrorKind::UrlTooLong => self.skipped_url_length += 1,
                ErrorKind::HostBudget => self.skipped_host_full += 1,
                _ => {}
            }
        }
        for warning in &record.warnings {
            *self
                .warnings_by_kind
                .entry(warning.kind.clone())
                .or_default() += 1;
        }
        if self.failed_starts.len() < MAX_FAILED_STARTS {
            if let Some(failure) = StartFailure::of(record) {
                StartFailure::keep(&mut self.failed_starts, failure);
            }
        }
        if let Some(status) = record.status {
            *self.statuses.entry(status).or_default() += 1;
        }
        self.revalidations.add(record);
        self.bytes += record.size;
        self.truncated += u64::from(record.truncated);
        match record.truncated_by.as_deref() {
            Some(CUT_AT_LIMIT) => self.truncated_by_limit += 1,
            Some(_) => self.truncated_in_transfer += 1,
            None => {}
        }
        self.links += record.num_urls as u64;
        if let Some(ms) = record.connect_ms {
            Latencies::record(&mut self.latency.connect, ms);
        }
        if let Some(ms) = record.first_byte_ms {
            Latencies::record(&mut self.latency.first_byte, ms);
            Latencies::record(&mut self.latency.total, record.elapsed_ms);
        }
    }

    /// Fold another shard's counters into these. A shard's own `shards`
    /// list is empty; its balance comes as `balance`.
    pub(crate) fn merge(&mut self, other: &Stats, balance: Option<ShardBalance>) {
        self.urls += other.urls;
        self.html += other.html;
        self.other += other.other;
        self.redirects += other.redirects;
        self.errors += other.errors;
        for (k, v) in &other.errors_by_kind {
            *self.errors_by_kind.entry(*k).or_default() += v;
        }
        for (k, v) in &other.warnings_by_kind {
            *self.warnings_by_kind.entry(k.clone()).or_default() += v;
        }
        for failure in &other.failed_starts {
            StartFailure::keep(&mut self.failed_starts, failure.clone());
        }
        self.backed_off.merge(&other.backed_off);
        self.revalidations.merge(&other.revalidations);
        proxies::merge(&mut self.proxies, &other.proxies);
        for (k, v) in &other.statuses {
            *self.statuses.entry(*k).or_default() += v;
        }
        self.bytes += other.bytes;
        self.truncated += other.truncated;
        self.truncated_by_limit += other.truncated_by_limit;
        self.truncated_in_transfer += other.truncated_in_transfer;
        self.links += other.links;
        self.skipped_depth += other.skipped_depth;
        self.skipped_url_length += other.skipped_url_length;
        self.skipped_host_full += other.skipped_host_full;
        self.robots_fetches += other.robots_fetches;
        self.robots_answered += other.robots_answered;
        self.hosts_held += other.hosts_held;
        self.host_memory_peak += other.host_memory_peak;
        self.urls_waited_for_hosts += other.urls_waited_for_hosts;
        self.tls_sessions += other.tls_sessions;
        self.tls_session_bytes += other.tls_session_bytes;
        self.tls_session_evictions += other.tls_session_evictions;
        self.tls_handshakes.add(&other.tls_handshakes);
        self.queued_left += other.queued_left;
        self.seen_merges += other.seen_merges;
        self.seen_lookups += other.seen_lookups;
        self.queued_on_disk += other.queued_on_disk;
        self.spill_chunks += other.spill_chunks;
        self.spill_bytes += other.spill_bytes;
        self.spill_reads += other.spill_reads;
        self.spill_lost += other.spill_lost;
        self.dns.add(&other.dns);
        self.latency.merge(&other.latency);
        self.shards.extend(other.shards.iter().cloned());
        self.shards.extend(balance);
    }

    /// Whether the crawl fetched anything: some page answered 2xx (or 304
    /// to a recrawl's conditional request), or else
    /// whether any server answered at all (a page or a robots.txt, any
    /// status). The binary's exit code says which.
    pub(crate) fn outcome(&self) -> Fetched {
        // A page a recrawl found unchanged is one its earlier crawl fetched.
        if self.statuses.keys().any(|s| (200..300).contains(s))
            || self.revalidations.not_modified > 0
        {
            Fetched::Some
        } else if !self.statuses.is_empty() || self.robots_answered > 0 {
            Fetched::OnlyErrors
        } else {
            Fetched::NoAnswer
        }
    }

    /// The numbers of the report.
    pub(crate) fn report_data(&self, elapsed: Duration, interrupted: bool) -> Summary {
        // Rounded to the microsecond, and the rate to a thousandth, as the
        // records' timings are.
        let secs = elapsed.as_micros() as f64 / 1e6;
        Summary {
            urls: self.urls,
            elapsed_s: secs,
            urls_per_s: if secs > 0.0 {
                (self.urls as f64 / secs * 1e3).round() / 1e3
            } else {
                0.0
            },
            html: self.html,
            other: self.other,
            redirects: self.redirects,
            errors: self.errors,
            errors_by_kind: self.errors_by_kind.clone(),
            warnings_by_kind: self.warnings_by_kind.clone(),
            failed_starts: self.failed_starts.clone(),
            backed_off: self.backed_off.clone(),
            revalidations: self.revalidations.clone(),
            proxies: self.proxies.clone(),
            statuses: self.statuses.clone(),
            bytes: self.bytes,
            truncated: self.truncated,
            truncated_by_limit: self.truncated_by_limit,
            truncated_in_transfer: self.truncated_in_transfer,
            links: self.links,
            skipped_depth: self.skipped_depth,
            skipped_url_length: self.skipped_url_length,
            skipped_host_full: self.skipped_host_full,
            robots_requests: self.robots_fetches,
            robots_answered: self.robots_answered,
            connect: Percentiles::of(&self.latency.connect),
            first_byte: Percentiles::of(&self.latency.first_byte),
            total: Percentiles::of(&self.latency.total),
            shards: self.shards.clone(),
            peak_rss_kib: self.peak_rss_kib,
            interrupted,
            budget_spent: None,
            queued_left: self.queued_left,
            seen_merges: self.seen_merges,
            host_memory_peak: self.host_memory_peak,
            urls_waited_for_hosts: self.urls_waited_for_hosts,
            hosts_held: self.hosts_held,
            seen_lookups: self.seen_lookups,
            tls_sessions: self.tls_sessions,
            tls_session_bytes: self.tls_session_bytes,
            tls_session_evictions: self.tls_session_evictions,
            tls_handshakes: self.tls_handshakes,
            queued_on_disk: self.queued_on_disk,
            spill_chunks: self.spill_chunks,
            spill_bytes: self.spill_bytes,
            spill_reads: self.spill_reads,
            spill_lost: self.spill_lost,
            dns: self.dns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(status: Option<u16>, error: Option<&str>) -> Record {
        let mut r = Record::new("http://a.test/".into(), 0);
        r.status = status;
        r.error = error.map(str::to_string);
        r.error_kind = error.map(|_| ErrorKind::Connect);
        r.size = 100;
        r.content_type = Some("text/html".into());
        r.num_urls = 2;
        r.elapsed_ms = 2.0;
        if status.is_some() {
            r.connect_ms = Some(0.5);
            r.first_byte_ms = Some(1.0);
        }
        r
    }

    #[test]
    fn merged_counts_equal_the_sum_of_shards() {
        let mut a = Stats::default();
        a.add(&record(Some(200), None));
        a.add(&record(Some(404), None));
        let mut b = Stats::default();
        b.add(&record(None, Some("refused")));
        let mut total = Stats::default();
        total.merge(
            &a,
            Some(ShardBalance {
                urls: a.urls,
                cpu_ms: 1.0,
            }),
        );
        total.merge(
            &b,
            Some(ShardBalance {
                urls: b.urls,
                cpu_ms: 2.0,
            }),
        );
        assert_eq!(total.urls, 3);
        assert_eq!(total.errors, 1);
        assert_eq!(total.errors_by_kind[&ErrorKind::Connect], 1);
        assert_eq!(total.statuses[&404], 1);
        assert_eq!(total.bytes, 300);
        assert_eq!(
            total.shards.iter().map(|s| s.urls).collect::<Vec<_>>(),
            vec![2, 1]
        );
        assert_eq!(
            total.latency.connect.len(),
            2,
            "only fetches that connected"
        );
    }

    #[test]
    fn dns_counts_add_up_and_show_only_when_names_were_resolved() {
        let mut a = Stats::default();
        a.add(&record(Some(200), None));
        let text = a.report_data(Duration::from_secs(1), false).to_string();
        assert!(!text.contains("dns:"), "{text}");
        a.dns = DnsCounts {
            lookups: 3,
            queries: 6,
            answers: 5,
            timeouts: 1,
            cache_hits: 10,
            negative_hits: 2,
            waited: 4,
            early: 1,
            cached_names: 3,
            cache_bytes: 400,
        };
        let mut total = Stats::default();
        total.merge(&a, None);
        total.merge(&a, None);
        assert_eq!((total.dns.queries, total.dns.cache_bytes), (12, 800));
        let text = total.report_data(Duration::from_secs(2), false).to_string();
        assert!(
            text.contains(
                "dns: 6 lookups, 12 queries (6.0/s), 10 answers, 2 time-outs, 20 cache hits, \
                 4 negative hits, 8 waited for a slot, 2 answered on one family"
            ),
            "{text}"
        );
        let json = serde_json::to_value(total.report_data(Duration::from_secs(2), false)).unwrap();
        assert_eq!(json["dns"]["timeouts"], 2);
        assert_eq!(json["dns"]["negative_hits"], 4);
    }

    /// The counters a caller checks a crawl's memory bounds and robots.txt
    /// requests by are in the summary (and its JSON) under their names.
    #[test]
    fn the_summary_has_the_robots_hosts_and_spill_counters() {
        let s = Stats {
            robots_fetches: 7,
            robots_answered: 6,
            hosts_held: 40,
            spill_chunks: 3,
            spill_bytes: 3000,
            spill_reads: 2,
            ..Stats::default()
        };
        let data = s.report_data(Duration::from_secs(1), false);
        assert_eq!((data.robots_requests, data.robots_answered), (7, 6));
        assert_eq!(data.hosts_held, 40);
        assert_eq!(
            (data.spill_chunks, data.spill_bytes, data.spill_reads),
            (3, 3000, 2)
        );
        let json = serde_json::to_value(&data).unwrap();
        for (key, value) in [
            ("robots_requests", 7),
            ("robots_answered", 6),
            ("hosts_held", 40),
            ("spill_chunks", 3),
            ("spill_reads", 2),
        ] {
            assert_eq!(json[key], value, "{key}");
        }
    }

    #[test]
    fn report_names_the_chapter_line_and_percentiles() {
        let mut s = Stats::default();
        for ms in 1..=100 {
            let mut r = record(Some(200), None);
            r.elapsed_ms = ms as f64;
            s.add(&r);
        }
        let text = s.report_data(Duration::from_secs(2), false).to_string();
        assert!(
            text.starts_with("Finished 100 urls in 2.000 secs (50.0 urls/sec)"),
            "{text}"
        );
        assert!(text.contains("200: 100"));
        let data = s.report_data(Duration::from_secs(2), false);
        assert!((data.total.p50_ms - 50.0).abs() < 0.1, "{:?}", data.total);
        assert!((data.total.max_ms - 100.0).abs() < 0.1);
        assert!(serde_json::to_string(&data).unwrap().contains("\"p99_ms\""));
    }
}
