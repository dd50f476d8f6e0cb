//! What a node that dies may leave behind in a cluster crawl, counted
//! against the synthetic site's own request counts: after a `kill -9`,
//! URLs recorded twice are at most the killed node's fetch slots
//! (`--max-tasks`), pages fetched twice at most twice that (its fetches
//! in flight too).
//!
//! Same harness as `cluster.rs`.

use std::time::Instant;

use crate::cluster::{assert_complete, records, wait_until, Node};
use crate::common::redis::redis_or_skip;
use crate::common::synth::Site;

/// Fetch slots per node here: as many as the runs had.
const TASKS: usize = 100;

fn start(name: &str, redis: &str, crawl: &str, site: &Site, dir: &std::path::Path) -> Node {
    let mut args: Vec<String> = if name == "n1" {
        site.roots()
    } else {
        Vec::new()
    };
    args.extend(site.resolve_args());
    args.extend([
        "--ignore-robots".into(),
        "--max-tasks".into(),
        TASKS.to_string(),
    ]);
    Node::spawn(name, redis, crawl, dir, "1.5", args)
}

#[test]
fn after_a_kill_9_urls_recorded_twice_are_at_most_the_dead_nodes_fetch_slots() {
    let Some(redis) = redis_or_skip("kill_bound") else {
        return;
    };
    let dir = crate::cluster::scratch("kill_bound");
    let site = Site::with_delay(40_000, 64, 5);
    let expected = site.expected();
    let start_at = Instant::now();
    let mut nodes: Vec<Node> = ["n1", "n2", "n3"]
        .iter()
        .map(|n| start(n, &redis.url(), "kill_bound", &site, &dir))
        .collect();
    wait_until("n3 has done some work", start_at, || {
        nodes[2].records() >= 2_000
    });
    nodes[2].kill();
    let total = |nodes: &[Node]| nodes.iter().map(Node::records).sum::<usize>();
    wait_until("the crawl is half done", start_at, || {
        total(&nodes) >= expected.len() / 2
    });
    nodes.push(start("n4", &redis.url(), "kill_bound", &site, &dir));
    for node in &mut nodes {
        node.finish(start_at);
    }
    let urls = records(&nodes);
    let twice = assert_complete(&urls, &expected);
    let hits = site.page_hits();
    let fetched_twice = hits.values().filter(|&&n| n > 1).count();
    eprintln!(
        "kill -9 with {TASKS} fetch slots a node: {} URLs recorded twice, {fetched_twice} pages fetched twice",
        twice.len()
    );
    assert!(
        twice.values().all(|&n| n == 2),
        "at most one extra record each"
    );
    assert!(
        twice.len() <= TASKS,
        "{} URLs recorded twice, more than the dead node's {TASKS} fetch slots",
        twice.len()
    );
    assert!(
        fetched_twice <= 2 * TASKS,
        "{fetched_twice} pages fetched twice, more than the dead node's {TASKS} fetch slots and as many records not reported"
    );
}
