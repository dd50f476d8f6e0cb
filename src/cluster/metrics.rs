//! A whole cluster crawl as Prometheus text: what `ringcrawl cluster status`
//! reads from Redis ([`Status`]), for `ringcrawl cluster status --serve`'s
//! `/metrics`. Pure: one function from the numbers to the text.
//!
//! Per-node series carry a `node` label (the `--node` name); crawl-wide
//! series none. The names are not a node's own (`ringcrawl_cluster_held_*`
//! and the others in `output::metrics`): a scrape of every node and of
//! the watcher never adds the same number twice.
//!
//! Not the reading (`store::status`), nor the server (the command's).

use crate::output::exposition::Text;

use super::store::Status;

/// `status` as Prometheus text; `redis_up`: whether it was read just now
/// (false: these are the last numbers read, or none were).
pub fn prometheus(status: Option<&Status>, redis_up: bool) -> String {
    let mut t = Text::default();
    t.gauge(
        "ringcrawl_cluster_redis_up",
        "1 if the last read of the crawl from Redis succeeded, else 0 (the numbers are the last read).",
        u64::from(redis_up),
    );
    let Some(s) = status else {
        return t.into_string();
    };
    t.gauge(
        "ringcrawl_cluster_partitions",
        "Host partitions of the crawl.",
        u64::from(s.partitions),
    );
    t.gauge(
        "ringcrawl_cluster_partitions_unowned",
        "Partitions whose lease no node holds.",
        u64::from(s.unowned),
    );
    t.family(
        "ringcrawl_cluster_stream_entries",
        "gauge",
        "Entries in the crawl's streams: not read yet (unread), or read by a node and not done (in_flight).",
    );
    for (state, n) in [
        ("unread", s.entries.saturating_sub(s.in_flight)),
        ("in_flight", s.in_flight),
    ] {
        t.sample("ringcrawl_cluster_stream_entries", &[("state", state)], n);
    }
    t.counter(
        "ringcrawl_cluster_urls_added_total",
        "URLs appended to the streams, duplicates included.",
        s.urls_added,
    );
    t.counter(
        "ringcrawl_cluster_records_total",
        "Records written, crawl-wide (as the nodes reported them done).",
        s.records,
    );
    t.gauge("ringcrawl_cluster_roots", "Roots given so far.", s.roots);
    t.gauge(
        "ringcrawl_cluster_nodes",
        "Nodes alive (by their heartbeats).",
        s.nodes.iter().filter(|n| n.alive).count() as u64,
    );
    type PerNode = (
        &'static str,
        &'static str,
        &'static str,
        fn(&super::store::NodeStatus) -> f64,
    );
    let families: [PerNode; 4] = [
        (
            "ringcrawl_cluster_node_up",
            "gauge",
            "1 while the node's heartbeat is live, else 0 (a node lately gone).",
            |n| f64::from(u8::from(n.alive)),
        ),
        (
            "ringcrawl_cluster_node_partitions",
            "gauge",
            "Partitions whose lease the node holds.",
            |n| n.partitions as f64,
        ),
        (
            "ringcrawl_cluster_node_records_total",
            "counter",
            "Records the node reported done (as of its last heartbeat).",
            |n| n.records as f64,
        ),
        (
            "ringcrawl_cluster_node_pages_per_second",
            "gauge",
            "The node's records a second, between its last two heartbeats.",
            |n| n.pages_per_sec,
        ),
    ];
    for (name, kind, help, value) in families {
        t.family(name, kind, help);
        for n in &s.nodes {
            t.sample(name, &[("node", &n.name)], value(n));
        }
    }
    t.into_string()
}

#[cfg(test)]
mod tests {
    use super::super::store::NodeStatus;
    use super::*;

    #[test]
    fn per_node_series_are_labelled_and_the_backlog_adds_up() {
        let s = Status {
            partitions: 8,
            unowned: 1,
            entries: 10,
            in_flight: 4,
            records: 99,
            nodes: vec![
                NodeStatus {
                    name: "a\"b".into(),
                    alive: true,
                    records: 60,
                    pages_per_sec: 2.5,
                    partitions: 4,
                },
                NodeStatus {
                    name: "c".into(),
                    alive: false,
                    records: 39,
                    pages_per_sec: 0.0,
                    partitions: 3,
                },
            ],
            ..Status::default()
        };
        let text = prometheus(Some(&s), true);
        for line in [
            "ringcrawl_cluster_redis_up 1",
            "ringcrawl_cluster_stream_entries{state=\"unread\"} 6",
            "ringcrawl_cluster_stream_entries{state=\"in_flight\"} 4",
            "ringcrawl_cluster_nodes 1",
            "ringcrawl_cluster_node_records_total{node=\"a\\\"b\"} 60",
            "ringcrawl_cluster_node_partitions{node=\"c\"} 3",
            "ringcrawl_cluster_node_pages_per_second{node=\"a\\\"b\"} 2.5",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in:\n{text}");
        }
        let down = prometheus(None, false);
        assert_eq!(
            down.lines()
                .filter(|l| !l.starts_with('#'))
                .collect::<Vec<_>>(),
            ["ringcrawl_cluster_redis_up 0"]
        );
    }
}
