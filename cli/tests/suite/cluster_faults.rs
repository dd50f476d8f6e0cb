//! A cluster node against a flaky Redis: replies held back past the
//! command timeout, connections dropped, the server killed and started
//! again from its append-only file. Within its leases a node rides them
//! out: it reconnects and goes on, keeps its partitions, and fetches no
//! page twice.
//!
//! Same harness as `cluster.rs`, with the test's proxy between the node
//! and its `redis-server`.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::cluster::{assert_each_page_once, Node, LIMIT};
use crate::common::proxy::Proxy;
use crate::common::redis::{redis_or_skip, redis_with_or_skip, RedisServer};
use crate::common::scratch::Scratch;
use crate::common::synth::Site;

fn wait_for_records(node: &Node, n: usize, start: Instant) {
    while node.records() < n {
        assert!(
            start.elapsed() < LIMIT,
            "no progress: {} records",
            node.records()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_node_keeps_its_partitions_through_a_late_reply_and_a_dropped_connection() {
    let Some(redis) = redis_or_skip("flaky") else {
        return;
    };
    let dir = crate::cluster::scratch("flaky");
    let site = Site::with_delay(8_000, 32, 10);
    let proxy = Proxy::start(SocketAddr::from(([127, 0, 0, 1], redis.port)));
    let start = Instant::now();
    // Leases of 12 s: a command may take 3 s, a lease is renewed every
    // 4 s and counted valid here for 9.6 s after its renewal was sent.
    let mut node = Node::start("n1", &proxy.redis_url(), "flaky", &site, &dir, true, "12");
    wait_for_records(&node, 300, start);
    // Replies 3.5 s late: the command in flight times out, the connection
    // is dropped, reconnections fail until the replies come again.
    proxy.hold_replies(Duration::from_millis(3_500));
    std::thread::sleep(Duration::from_millis(3_500));
    let then = node.records();
    wait_for_records(&node, then + 300, start);
    // A dropped connection.
    proxy.cut();
    std::thread::sleep(Duration::from_millis(50));
    proxy.restore();
    node.finish(start);
    assert_each_page_once(std::slice::from_ref(&node), &site);
    let err = std::fs::read_to_string(&node.stderr).unwrap();
    assert!(
        err.contains("reconnecting"),
        "the faults reached the node: {err}"
    );
    assert!(!err.contains("ran out here"), "no lease ran out: {err}");
}

/// Crawl `crawl` with two nodes (12 s leases) until the second has
/// recorded 300 pages, then restart `redis` ([`RedisServer::restart`]).
fn restarted_under_two_nodes(
    redis: &mut RedisServer,
    crawl: &str,
) -> (Scratch, Site, Instant, Vec<Node>) {
    let dir = crate::cluster::scratch(crawl);
    let site = Site::with_delay(8_000, 32, 5);
    let start = Instant::now();
    let nodes = vec![
        Node::start("n1", &redis.url(), crawl, &site, &dir, true, "12"),
        Node::start("n2", &redis.url(), crawl, &site, &dir, false, "12"),
    ];
    wait_for_records(&nodes[1], 300, start);
    redis.restart();
    (dir, site, start, nodes)
}

/// Redis killed (SIGKILL, a crash) mid-crawl and started again from its
/// append-only file, synced at every write (`appendfsync always`: what it
/// acknowledged is on disk). Two nodes with leases longer than the outage
/// reconnect to the same data, keep their partitions and go on: every
/// page recorded once and fetched once. (Started again empty, without the
/// file, the nodes stop: the next test.)
#[test]
fn a_redis_restarted_from_its_append_only_file_mid_crawl_loses_and_repeats_nothing() {
    let aof = ["--appendonly", "yes", "--appendfsync", "always"];
    let Some(mut redis) = redis_with_or_skip("aof", &aof, None) else {
        return;
    };
    let (_dir, site, start, mut nodes) = restarted_under_two_nodes(&mut redis, "aof");
    let then: Vec<usize> = nodes.iter().map(Node::records).collect();
    for (node, then) in nodes.iter().zip(&then) {
        wait_for_records(node, then + 200, start);
    }
    for node in &mut nodes {
        node.finish(start);
    }
    assert_each_page_once(&nodes, &site);
    for node in &nodes {
        let err = std::fs::read_to_string(&node.stderr).unwrap();
        assert!(
            err.contains("reconnecting"),
            "{}: the crash reached it: {err}",
            node.name
        );
        assert!(
            !err.contains("ran out here"),
            "{}: no lease ran out: {err}",
            node.name
        );
    }
}

/// Redis killed and started again without its data (no persistence): the
/// crawl's keys are gone, so nothing tells a node what is done or queued.
/// Each node says so and exits 1 once it reconnects, rather than wait for
/// work that will never come; the records it wrote stay.
#[test]
fn a_redis_started_again_without_its_data_stops_each_node_with_an_error_naming_the_crawl() {
    let Some(mut redis) = redis_or_skip("no_aof") else {
        return;
    };
    // `_site`, not `_`: the site serves until the end of the test.
    let (_dir, _site, start, mut nodes) = restarted_under_two_nodes(&mut redis, "gone");
    for node in &mut nodes {
        let code = node.exit_code(start);
        let err = std::fs::read_to_string(&node.stderr).unwrap();
        assert_eq!(code, Some(1), "{}: {err}", node.name);
        assert!(
            err.contains("crawl gone is gone from Redis"),
            "{}: names the crawl: {err}",
            node.name
        );
        assert!(node.records() >= 1, "{}: its records stay", node.name);
    }
}
