//! A [`LiveSnapshot`] as Prometheus text (exposition format 0.0.4): pure,
//! one function ([`prometheus`]) from the numbers to the text, so the names,
//! labels and values are unit-tested apart from any socket.
//!
//! Names follow Prometheus's conventions: the `ringcrawl_` prefix, base
//! units in the name (`_bytes`, `_seconds`), `_total` on counters; labels
//! for what adds up (`status_class`, `kind` with [`ErrorKind`]'s words,
//! `shard`). Every error kind is written from the start, at 0, so a rate
//! over it is defined before the first error. docs/status.md lists them.
//!
//! Not the server (the `ringcrawl` command serves the text) and not the
//! numbers (`live.rs`).

use crate::job::ErrorKind;
use crate::output::cluster_gauges::ClusterNow;
use crate::output::exposition::Text;
use crate::output::live::LiveSnapshot;
use crate::output::proxies::ProxyHealth;
use crate::output::stats::Percentiles;

/// The content type of [`prometheus`]'s text.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The snapshot as Prometheus text.
pub fn prometheus(s: &LiveSnapshot) -> String {
    let mut t = Text::default();
    let sum = &s.summary;

    t.family(
        "ringcrawl_pages_total",
        "counter",
        "Records written (one per URL taken up), by the class of their HTTP status (none: no answer).",
    );
    let mut classes = [0u64; 6];
    for (status, n) in &sum.statuses {
        let class = usize::from(*status / 100).clamp(1, 5);
        if let Some(c) = classes.get_mut(class) {
            *c += n;
        }
    }
    let answered: u64 = classes.iter().sum();
    for (class, n) in classes.iter().enumerate().skip(1) {
        t.sample(
            "ringcrawl_pages_total",
            &[("status_class", &format!("{class}xx"))],
            *n,
        );
    }
    t.sample(
        "ringcrawl_pages_total",
        &[("status_class", "none")],
        sum.urls.saturating_sub(answered),
    );

    t.family(
        "ringcrawl_responses_total",
        "counter",
        "Responses by HTTP status code.",
    );
    for (status, n) in &sum.statuses {
        t.sample(
            "ringcrawl_responses_total",
            &[("code", &status.to_string())],
            *n,
        );
    }

    t.family(
        "ringcrawl_records_total",
        "counter",
        "Records by what they hold: an HTML page, another page, a redirect, an error.",
    );
    for (kind, n) in [
        ("html", sum.html),
        ("other", sum.other),
        ("redirect", sum.redirects),
        ("error", sum.errors),
    ] {
        t.sample("ringcrawl_records_total", &[("kind", kind)], n);
    }

    t.family(
        "ringcrawl_errors_total",
        "counter",
        "Records without a whole answer, by error kind (the records' error_kind).",
    );
    for kind in ErrorKind::ALL {
        let n = sum.errors_by_kind.get(kind).copied().unwrap_or(0);
        t.sample("ringcrawl_errors_total", &[("kind", kind.name())], n);
    }
    t.family(
        "ringcrawl_warnings_total",
        "counter",
        "Pages fetched with something to know, by warning kind.",
    );
    for (kind, n) in &sum.warnings_by_kind {
        t.sample("ringcrawl_warnings_total", &[("kind", kind)], *n);
    }

    t.counter(
        "ringcrawl_body_bytes_total",
        "Body bytes received (as sent, before any content coding is undone).",
        sum.bytes,
    );
    t.family(
        "ringcrawl_truncated_total",
        "counter",
        "Bodies not whole: cut at a limit of the crawl's, or ended early in transfer.",
    );
    t.sample(
        "ringcrawl_truncated_total",
        &[("by", "limit")],
        sum.truncated_by_limit,
    );
    t.sample(
        "ringcrawl_truncated_total",
        &[("by", "transfer")],
        sum.truncated_in_transfer,
    );
    t.counter("ringcrawl_links_total", "Links found on pages.", sum.links);

    t.family(
        "ringcrawl_fetch_latency_seconds",
        "summary",
        "Fetch latency so far, by phase (connect, first byte, whole fetch); quantile 1 is the slowest.",
    );
    for (phase, p) in [
        ("connect", &sum.connect),
        ("first_byte", &sum.first_byte),
        ("total", &sum.total),
    ] {
        quantiles(&mut t, phase, p);
    }

    let dns = &sum.dns;
    t.counter(
        "ringcrawl_dns_lookups_total",
        "Name lookups started (names the cache did not answer).",
        dns.lookups,
    );
    t.counter(
        "ringcrawl_dns_queries_total",
        "DNS queries sent (AAAA and A, retries and TCP included).",
        dns.queries,
    );
    t.counter(
        "ringcrawl_dns_answers_total",
        "DNS answers received.",
        dns.answers,
    );
    t.counter(
        "ringcrawl_dns_timeouts_total",
        "DNS queries that got no answer in time.",
        dns.timeouts,
    );
    t.family(
        "ringcrawl_dns_cache_hits_total",
        "counter",
        "Lookups answered from the resolvers' caches: addresses (positive) or failures (negative).",
    );
    t.sample(
        "ringcrawl_dns_cache_hits_total",
        &[("result", "positive")],
        dns.cache_hits,
    );
    t.sample(
        "ringcrawl_dns_cache_hits_total",
        &[("result", "negative")],
        dns.negative_hits,
    );
    t.gauge(
        "ringcrawl_dns_cached_names",
        "Names the resolvers' caches hold.",
        dns.cached_names,
    );

    t.counter(
        "ringcrawl_robots_requests_total",
        "robots.txt requests made.",
        s.robots_requests,
    );
    t.counter(
        "ringcrawl_robots_answered_total",
        "robots.txt requests a server answered (any status).",
        s.robots_answered,
    );

    t.gauge(
        "ringcrawl_tls_sessions",
        "TLS sessions (name and port) the session caches hold.",
        sum.tls_sessions,
    );
    t.counter(
        "ringcrawl_tls_session_evictions_total",
        "TLS sessions evicted to stay within --tls-session-memory.",
        sum.tls_session_evictions,
    );
    t.family(
        "ringcrawl_tls_handshakes_total",
        "counter",
        "TLS handshakes, by how they ended: full, resumed (a cached session), failed.",
    );
    let h = &sum.tls_handshakes;
    for (result, n) in [
        ("full", h.full),
        ("resumed", h.resumed),
        ("failed", h.failed),
    ] {
        t.sample("ringcrawl_tls_handshakes_total", &[("result", result)], n);
    }

    t.gauge(
        "ringcrawl_fetches_in_flight",
        "Fetches running now.",
        s.in_flight,
    );
    t.gauge(
        "ringcrawl_connections_open",
        "Connections open: fetching, in a handshake or idle.",
        s.connections_open,
    );
    t.gauge(
        "ringcrawl_connections_idle",
        "Keep-alive connections held idle between fetches.",
        s.connections_idle,
    );
    t.family(
        "ringcrawl_queued_urls",
        "gauge",
        "URLs queued, in RAM and spilled to disk.",
    );
    let ram = s.queued.saturating_sub(s.queued_on_disk);
    t.sample("ringcrawl_queued_urls", &[("location", "ram")], ram);
    t.sample(
        "ringcrawl_queued_urls",
        &[("location", "disk")],
        s.queued_on_disk,
    );
    t.family(
        "ringcrawl_hosts",
        "gauge",
        "Hosts the frontiers hold: live (URLs queued or fetching) and resting (done, rules kept).",
    );
    t.sample("ringcrawl_hosts", &[("state", "live")], s.hosts_live);
    t.sample("ringcrawl_hosts", &[("state", "resting")], s.hosts_resting);
    t.gauge(
        "ringcrawl_seen_urls",
        "URLs the seen-sets know (in RAM and on disk; approximate).",
        s.seen_keys,
    );
    t.counter(
        "ringcrawl_seen_merges_total",
        "Merges of a seen-set's RAM bucket into its run on disk.",
        sum.seen_merges,
    );
    t.counter(
        "ringcrawl_seen_disk_lookups_total",
        "URLs whose newness took a lookup of a seen-set's run on disk.",
        sum.seen_lookups,
    );
    t.counter(
        "ringcrawl_spill_written_bytes_total",
        "Bytes of queued URLs written to the spill files.",
        sum.spill_bytes,
    );

    let m = &s.memory;
    t.gauge(
        "ringcrawl_resident_memory_bytes",
        "Resident memory of the process.",
        m.rss,
    );
    t.family(
        "ringcrawl_memory_bytes",
        "gauge",
        "Memory counted against each memory flag.",
    );
    for (budget, n) in [
        ("hosts", m.hosts),
        ("seen", m.seen),
        ("queues", m.queues),
        ("tls_sessions", m.tls_sessions),
        ("dns_cache", m.dns_cache),
    ] {
        t.sample("ringcrawl_memory_bytes", &[("budget", budget)], n);
    }
    if m.limits.cookies.is_some() {
        t.sample(
            "ringcrawl_memory_bytes",
            &[("budget", "cookies")],
            m.cookies,
        );
    }
    t.family(
        "ringcrawl_memory_limit_bytes",
        "gauge",
        "The memory flags (--host-memory, --seen-memory, --frontier-memory, --cookie-memory for the crawl; --tls-session-memory for all shards).",
    );
    let shards = s.shards.len() as u64;
    for (budget, n) in [
        ("hosts", m.limits.hosts),
        ("seen", m.limits.seen),
        ("queues", m.limits.queues),
        (
            "tls_sessions",
            m.limits.tls_sessions_per_shard.saturating_mul(shards),
        ),
    ] {
        t.sample("ringcrawl_memory_limit_bytes", &[("budget", budget)], n);
    }
    if let Some(n) = m.limits.cookies {
        t.sample("ringcrawl_memory_limit_bytes", &[("budget", "cookies")], n);
    }

    let b = &s.budgets;
    t.gauge(
        "ringcrawl_budget_pages_spent",
        "Page fetches granted so far (what --max-pages counts).",
        b.pages,
    );
    if let Some(max) = b.max_pages {
        t.gauge("ringcrawl_budget_pages_limit", "--max-pages.", max);
    }
    t.gauge(
        "ringcrawl_budget_spent_bytes",
        "Body bytes counted so far (what --max-bytes counts).",
        b.bytes,
    );
    if let Some(max) = b.max_bytes {
        t.gauge("ringcrawl_budget_limit_bytes", "--max-bytes.", max);
    }
    if let Some(max) = b.max_time_s {
        t.gauge("ringcrawl_budget_limit_seconds", "--max-time.", max);
    }

    t.counter(
        "ringcrawl_warc_written_bytes_total",
        "WARC bytes handed to the writers.",
        s.warc_bytes,
    );
    t.counter(
        "ringcrawl_warc_files_total",
        "WARC files started.",
        s.warc_files,
    );

    t.family(
        "ringcrawl_shard_pages_total",
        "counter",
        "Records written, by shard.",
    );
    for sh in &s.shards {
        t.sample(
            "ringcrawl_shard_pages_total",
            &[("shard", &sh.shard.to_string())],
            sh.pages,
        );
    }
    t.family(
        "ringcrawl_shard_cpu_seconds_total",
        "counter",
        "CPU time of each shard's thread.",
    );
    for sh in &s.shards {
        t.sample(
            "ringcrawl_shard_cpu_seconds_total",
            &[("shard", &sh.shard.to_string())],
            sh.cpu_s,
        );
    }
    t.family(
        "ringcrawl_shard_queued_urls",
        "gauge",
        "URLs queued, by shard.",
    );
    for sh in &s.shards {
        t.sample(
            "ringcrawl_shard_queued_urls",
            &[("shard", &sh.shard.to_string())],
            sh.queued,
        );
    }
    t.family(
        "ringcrawl_shard_fetches_in_flight",
        "gauge",
        "Fetches running now, by shard.",
    );
    for sh in &s.shards {
        t.sample(
            "ringcrawl_shard_fetches_in_flight",
            &[("shard", &sh.shard.to_string())],
            sh.in_flight,
        );
    }

    if !sum.proxies.is_empty() {
        let families: [ProxyFamily; 4] = [
            (
                "ringcrawl_proxy_fetches_total",
                "counter",
                "Exchanges tried through each proxy.",
                |p| p.fetches,
            ),
            (
                "ringcrawl_proxy_failures_total",
                "counter",
                "Exchanges that failed at each proxy.",
                |p| p.failures,
            ),
            (
                "ringcrawl_proxy_parks_total",
                "counter",
                "Times each proxy was parked after failing in a row.",
                |p| p.parked_times,
            ),
            (
                "ringcrawl_proxy_parked",
                "gauge",
                "1 while a shard has the proxy parked, else 0.",
                |p| u64::from(p.parked),
            ),
        ];
        for (name, kind, help, value) in families {
            t.family(name, kind, help);
            for p in &sum.proxies {
                t.sample(name, &[("proxy", &p.proxy)], value(p));
            }
        }
    }

    let v = &sum.revalidations;
    if !v.is_empty() {
        t.family(
            "ringcrawl_revalidations_total",
            "counter",
            "A recrawl's (--since) conditional requests, by what they came to.",
        );
        for (result, n) in [
            ("not_modified", v.not_modified),
            ("modified", v.modified),
            ("refetched", v.refetched),
        ] {
            t.sample("ringcrawl_revalidations_total", &[("result", result)], n);
        }
        t.counter(
            "ringcrawl_revalidation_saved_bytes_total",
            "Body bytes (as sent) of the earlier captures that 304s stood for.",
            v.bytes_saved,
        );
    }

    let w = &s.waiting;
    t.family(
        "ringcrawl_hosts_waiting",
        "gauge",
        "Hosts with URLs queued that cannot start one now: backing off after failures, or at --per-host.",
    );
    t.sample(
        "ringcrawl_hosts_waiting",
        &[("reason", "backing_off")],
        w.hosts_backing_off,
    );
    t.sample(
        "ringcrawl_hosts_waiting",
        &[("reason", "per_host")],
        w.hosts_at_per_host,
    );
    t.gauge(
        "ringcrawl_urls_waiting_for_hosts",
        "URLs waiting for room among the hosts (--host-memory).",
        w.urls_waiting_for_hosts,
    );

    t.gauge(
        "ringcrawl_elapsed_seconds",
        "Wall time since the crawl started.",
        s.elapsed_s,
    );
    t.gauge(
        "ringcrawl_finished",
        "1 once the crawl is over (the numbers are final), else 0.",
        u64::from(s.finished),
    );
    if let Some(c) = &s.cluster {
        cluster_node(&mut t, c);
    }
    t.into_string()
}

/// A cluster node's own families: its partitions, lease renewals,
/// connection and its partitions' stream backlog.
fn cluster_node(t: &mut Text, c: &ClusterNow) {
    t.gauge(
        "ringcrawl_cluster_partitions",
        "Host partitions of the cluster crawl.",
        c.partitions,
    );
    t.gauge(
        "ringcrawl_cluster_partitions_held",
        "Partitions whose lease this node holds now.",
        c.partitions_held,
    );
    t.family(
        "ringcrawl_cluster_partition_changes_total",
        "counter",
        "Partitions this node took (a new tenure) and lost or gave up.",
    );
    for (change, n) in [
        ("taken", c.partitions_taken),
        ("released", c.partitions_released),
    ] {
        t.sample(
            "ringcrawl_cluster_partition_changes_total",
            &[("change", change)],
            n,
        );
    }
    t.family(
        "ringcrawl_cluster_lease_renewals_total",
        "counter",
        "Lease renewals, one a partition held a round: done, or failed (another node's lease now, or Redis did not answer).",
    );
    for (result, n) in [
        ("done", c.lease_renewals),
        ("failed", c.lease_renewals_failed),
    ] {
        t.sample(
            "ringcrawl_cluster_lease_renewals_total",
            &[("result", result)],
            n,
        );
    }
    t.counter(
        "ringcrawl_cluster_records_reported_total",
        "Records this node reported done to Redis (their URLs in their partitions' done logs).",
        c.records_reported,
    );
    t.gauge(
        "ringcrawl_cluster_connected",
        "1 while this node is connected to Redis, else 0.",
        u64::from(c.connected),
    );
    t.counter(
        "ringcrawl_cluster_disconnects_total",
        "Connections to Redis this node lost.",
        c.disconnects,
    );
    if let Some(b) = &c.backlog {
        t.family(
            "ringcrawl_cluster_held_stream_entries",
            "gauge",
            "Entries in the streams of the partitions this node holds (read about once a second): not read yet (unread), or read and not done (in_flight).",
        );
        for (state, n) in [("unread", b.unread), ("in_flight", b.in_flight)] {
            t.sample(
                "ringcrawl_cluster_held_stream_entries",
                &[("state", state)],
                n,
            );
        }
    }
}

/// A family of per-proxy samples: name, type, help, the value of a proxy.
type ProxyFamily = (
    &'static str,
    &'static str,
    &'static str,
    fn(&ProxyHealth) -> u64,
);

/// One phase's quantiles, in seconds.
fn quantiles(t: &mut Text, phase: &str, p: &Percentiles) {
    for (q, ms) in [
        ("0.5", p.p50_ms),
        ("0.9", p.p90_ms),
        ("0.99", p.p99_ms),
        ("1", p.max_ms),
    ] {
        t.sample(
            "ringcrawl_fetch_latency_seconds",
            &[("phase", phase), ("quantile", q)],
            ms / 1e3,
        );
    }
    t.sample(
        "ringcrawl_fetch_latency_seconds_count",
        &[("phase", phase)],
        p.count,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::live::ShardNow;

    fn snapshot() -> LiveSnapshot {
        let mut s = LiveSnapshot::default();
        s.summary.urls = 10;
        s.summary.statuses = [(200, 6), (301, 1), (404, 2)].into_iter().collect();
        s.summary.errors_by_kind = [(ErrorKind::ConnectRefused, 1)].into_iter().collect();
        s.summary.warnings_by_kind = [("odd \"kind\"\\".to_string(), 1)].into_iter().collect();
        s.summary.bytes = 12345;
        s.summary.total.p50_ms = 12.5;
        s.queued = 7;
        s.queued_on_disk = 3;
        s.shards = vec![ShardNow::default(), ShardNow::default()];
        s.shards[1].shard = 1;
        s.shards[1].pages = 4;
        s.budgets.max_pages = Some(100);
        s.summary.proxies = vec![crate::output::proxies::ProxyHealth::new(
            "http://p.test:3128".into(),
            7,
            3,
            1,
            true,
        )];
        s
    }

    /// The value of the sample line that starts with `series` (name and
    /// labels as written).
    fn value(text: &str, series: &str) -> Option<f64> {
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
            .map(|v| v.parse().unwrap())
    }

    #[test]
    fn pages_by_status_class_add_up_to_the_records() {
        let text = prometheus(&snapshot());
        let class = |c: &str| {
            value(
                &text,
                &format!("ringcrawl_pages_total{{status_class=\"{c}\"}}"),
            )
            .unwrap()
        };
        assert_eq!(
            (class("2xx"), class("3xx"), class("4xx"), class("none")),
            (6.0, 1.0, 2.0, 1.0)
        );
        assert_eq!(class("1xx") + class("5xx"), 0.0);
        assert_eq!(
            value(&text, "ringcrawl_responses_total{code=\"404\"}"),
            Some(2.0)
        );
        assert_eq!(value(&text, "ringcrawl_body_bytes_total"), Some(12345.0));
        assert_eq!(
            value(&text, "ringcrawl_queued_urls{location=\"ram\"}"),
            Some(4.0)
        );
        assert_eq!(
            value(&text, "ringcrawl_shard_pages_total{shard=\"1\"}"),
            Some(4.0)
        );
        assert_eq!(
            value(
                &text,
                "ringcrawl_fetch_latency_seconds{phase=\"total\",quantile=\"0.5\"}"
            ),
            Some(0.0125)
        );
        assert_eq!(value(&text, "ringcrawl_budget_pages_limit"), Some(100.0));
        let proxy = |family: &str| {
            value(&text, &format!("{family}{{proxy=\"http://p.test:3128\"}}")).unwrap()
        };
        assert_eq!(
            [
                proxy("ringcrawl_proxy_fetches_total"),
                proxy("ringcrawl_proxy_failures_total"),
                proxy("ringcrawl_proxy_parks_total"),
                proxy("ringcrawl_proxy_parked")
            ],
            [7.0, 3.0, 1.0, 1.0]
        );
        assert_eq!(value(&text, "ringcrawl_budget_limit_bytes"), None, "unset");
        assert_eq!(
            value(
                &text,
                "ringcrawl_revalidations_total{result=\"not_modified\"}"
            ),
            None,
            "not a recrawl"
        );
        let mut recrawl = snapshot();
        recrawl.summary.revalidations.not_modified = 5;
        recrawl.summary.revalidations.bytes_saved = 700;
        let text = prometheus(&recrawl);
        assert_eq!(
            value(
                &text,
                "ringcrawl_revalidations_total{result=\"not_modified\"}"
            ),
            Some(5.0)
        );
        assert_eq!(
            value(&text, "ringcrawl_revalidations_total{result=\"refetched\"}"),
            Some(0.0)
        );
        assert_eq!(
            value(&text, "ringcrawl_revalidation_saved_bytes_total"),
            Some(700.0)
        );
    }

    #[test]
    fn every_error_kind_is_written_from_the_start_by_its_name() {
        let text = prometheus(&snapshot());
        for kind in ErrorKind::ALL {
            let n = value(
                &text,
                &format!("ringcrawl_errors_total{{kind=\"{}\"}}", kind.name()),
            );
            let want = if *kind == ErrorKind::ConnectRefused {
                1.0
            } else {
                0.0
            };
            assert_eq!(n, Some(want), "{kind}");
        }
    }

    #[test]
    fn every_family_has_help_and_type_before_its_samples_and_labels_are_escaped() {
        let mut s = snapshot();
        let gauges = crate::output::cluster_gauges::ClusterGauges::default();
        gauges.set_backlog(1, 1);
        s.cluster = Some(gauges.now());
        let text = prometheus(&s);
        assert!(text.contains(r#"ringcrawl_warnings_total{kind="odd \"kind\"\\"} 1"#));
        let mut typed: Vec<String> = Vec::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, kind) = rest.split_once(' ').unwrap();
                assert!(["counter", "gauge", "summary"].contains(&kind), "{line}");
                assert_eq!(
                    name.ends_with("_total"),
                    kind == "counter",
                    "counters end in _total, and only they: {line}"
                );
                assert!(
                    !typed.contains(&name.to_string()),
                    "one family once: {name}"
                );
                typed.push(name.to_string());
            } else if !line.starts_with("# HELP ") {
                let name = line.split(['{', ' ']).next().unwrap();
                let family = typed.last().unwrap();
                assert!(
                    name == family || name == format!("{family}_count"),
                    "{line}"
                );
                assert!(name.starts_with("ringcrawl_"), "{line}");
            }
        }
        assert!(text.ends_with('\n'));
    }

    #[test]
    fn a_cluster_nodes_families_only_in_a_cluster_crawl() {
        let plain = prometheus(&snapshot());
        assert!(!plain.contains("ringcrawl_cluster_"), "{plain}");
        let gauges = crate::output::cluster_gauges::ClusterGauges::default();
        gauges.set_partitions(256);
        gauges.set_held(12);
        gauges.renewals(12, 1);
        gauges.set_backlog(5, 3);
        let mut s = snapshot();
        s.cluster = Some(gauges.now());
        let text = prometheus(&s);
        assert_eq!(
            value(&text, "ringcrawl_cluster_partitions_held"),
            Some(12.0)
        );
        assert_eq!(
            value(
                &text,
                "ringcrawl_cluster_lease_renewals_total{result=\"done\"}"
            ),
            Some(12.0)
        );
        assert_eq!(
            value(
                &text,
                "ringcrawl_cluster_held_stream_entries{state=\"in_flight\"}"
            ),
            Some(3.0)
        );
    }
}
