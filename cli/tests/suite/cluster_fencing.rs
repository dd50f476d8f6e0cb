//! What a node that dies, or is cut off and comes back, may leave behind
//! in a cluster crawl, counted against the synthetic site's own request
//! counts: after a `kill -9`, URLs recorded twice are at most the killed
//! node's fetch slots (`--max-tasks`), as are pages fetched twice; a
//! process cut off while another joins under its name stops when it
//! reaches Redis again, writing nothing after the other's join; a node
//! stopped (SIGSTOP) past its leases archives and records nothing for the
//! partitions it lost when it runs again.
//!
//! Same harness as `cluster.rs`, with the test's proxy between the cut-off
//! node and its `redis-server`. What the store itself refuses a process
//! whose name joined again is tested beside it (src/cluster/store/tests.rs).

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::process::Command;
use std::time::{Instant, SystemTime};

use ringcrawl_warc::timestamp::parse_rfc3339;

use crate::cluster::{assert_complete, records, urls_of, wait_until, Node};
use crate::common::proxy::Proxy;
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
        fetched_twice <= TASKS,
        "{fetched_twice} pages fetched twice, more than the dead node's {TASKS} fetch slots"
    );
}

/// The generation of node `name` in crawl `crawl` (0: never joined).
fn generation(redis: &str, crawl: &str, name: &str) -> u64 {
    let mut con = redis::Client::open(redis)
        .unwrap()
        .get_connection()
        .unwrap();
    let g: Option<u64> = redis::cmd("HGET")
        .arg(format!("ringcrawl:{crawl}:generations"))
        .arg(name)
        .query(&mut con)
        .unwrap();
    g.unwrap_or(0)
}

/// Lines of `log` written by process `pid` (its records name its WARC
/// files, `ringcrawl-NODE-SECS-PID-...`).
fn lines_of(log: &std::path::Path, pid: u32) -> usize {
    let mark = format!("-{pid}-");
    crate::common::whole_lines(log)
        .lines()
        .filter(|line| {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            record["warc_file"]
                .as_str()
                .is_some_and(|f| f.contains(&mark))
        })
        .count()
}

#[test]
fn a_cut_off_node_that_comes_back_after_its_twin_joined_stops_and_writes_nothing_more() {
    let Some(redis) = redis_or_skip("twin") else {
        return;
    };
    let dir = crate::cluster::scratch("twin");
    let site = Site::with_delay(30_000, 64, 5);
    let expected = site.expected();
    let proxy = Proxy::start(SocketAddr::from(([127, 0, 0, 1], redis.port)));
    let start_at = Instant::now();
    let args = |roots: bool| {
        let mut args: Vec<String> = if roots { site.roots() } else { Vec::new() };
        args.extend(site.resolve_args());
        args.extend(["--ignore-robots".into(), "--warc".into()]);
        args.push(dir.join("warc").display().to_string());
        args
    };
    let mut first = Node::spawn("n1", &proxy.redis_url(), "twin", &dir, "1.5", args(true));
    let pid = first.pid().unwrap();
    wait_until("n1 has done some work", start_at, || {
        first.records() >= 1_000
    });
    proxy.cut();
    // The same name, the same files, while the first is only cut off: it
    // joins once the first's heartbeat ran out.
    let mut twin = Node::spawn("n1", &redis.url(), "twin", &dir, "1.5", args(false));
    wait_until("the twin joined", start_at, || {
        generation(&redis.url(), "twin", "n1") == 2
    });
    let first_at_join = lines_of(&first.log, pid);
    let then = twin.records();
    wait_until("the twin crawls", start_at, || {
        twin.records() >= then + 1_000
    });
    proxy.restore();
    let code = first.exit_code(start_at);
    let err = std::fs::read_to_string(&first.stderr).unwrap();
    assert_eq!(code, Some(1), "the first process stops: {err}");
    assert!(
        err.contains("another process joined the crawl under this node's name"),
        "{err}"
    );
    twin.finish(start_at);
    assert_eq!(
        lines_of(&first.log, pid),
        first_at_join,
        "no record of the first process after the twin joined"
    );
    let urls = records(std::slice::from_ref(&twin));
    let twice = assert_complete(&urls, &expected);
    let hits = site.page_hits();
    let fetched_twice = hits.values().filter(|&&n| n > 1).count();
    eprintln!(
        "twin: the first process recorded {first_at_join}; {} URLs recorded twice, {fetched_twice} pages fetched twice",
        twice.len()
    );
    assert!(twice.len() <= crate::cluster::TASKS, "{twice:?}");
    assert!(fetched_twice <= crate::cluster::TASKS);
}

/// The URLs of the pages a node's CDXJ index says it archived.
fn archived(index: &std::path::Path) -> BTreeSet<String> {
    crate::common::whole_lines(index)
        .lines()
        .filter_map(|line| {
            let json = line.splitn(3, ' ').nth(2)?;
            let entry: serde_json::Value = serde_json::from_str(json).ok()?;
            Some(entry["url"].as_str()?.to_string())
        })
        .collect()
}

fn signal(node: &Node, sig: &str) {
    let pid = node.pid().unwrap().to_string();
    let status = Command::new("kill").args([sig, &pid]).status().unwrap();
    assert!(status.success(), "kill {sig} {pid}");
}

#[test]
fn a_node_stopped_past_its_lease_archives_and_records_nothing_for_the_partitions_it_lost() {
    let Some(redis) = redis_or_skip("sigstop") else {
        return;
    };
    let dir = crate::cluster::scratch("sigstop");
    let site = Site::with_delay(30_000, 64, 5);
    let expected = site.expected();
    let start_at = Instant::now();
    let args = |roots: bool| {
        let mut args: Vec<String> = if roots { site.roots() } else { Vec::new() };
        args.extend(site.resolve_args());
        args.extend(["--ignore-robots".into(), "--warc".into()]);
        args.push(dir.join("warc").display().to_string());
        args.push("--cdxj".into());
        args.push(dir.join("index.cdxj").display().to_string());
        args
    };
    let mut nodes = vec![
        Node::spawn("n1", &redis.url(), "sigstop", &dir, "1.5", args(true)),
        Node::spawn("n2", &redis.url(), "sigstop", &dir, "1.5", args(false)),
    ];
    wait_until("n2 has done some work", start_at, || {
        nodes[1].records() >= 1_000
    });
    // Stopped with fetches in flight, until n1 holds every partition (n2's
    // leases ran out in Redis): on SIGCONT its fetches' answers come in
    // for partitions it lost.
    let stopped = SystemTime::now();
    signal(&nodes[1], "-STOP");
    wait_until("n1 took every partition", start_at, || {
        let s = ringcrawl::cluster_status(&redis.url(), "sigstop").unwrap();
        s.unowned == 0 && s.nodes.iter().all(|n| n.name == "n1" || n.partitions == 0)
    });
    let woke = SystemTime::now();
    signal(&nodes[1], "-CONT");
    for node in &mut nodes {
        node.finish(start_at);
    }
    let urls = records(&nodes);
    let twice = assert_complete(&urls, &expected);
    let recorded: BTreeSet<String> = urls_of(&nodes[1].log).into_iter().collect();
    let unrecorded: Vec<_> = archived(&dir.join("index.n2.cdxj"))
        .into_iter()
        .filter(|u| !recorded.contains(u))
        .collect();
    // What n2 recorded of the fetches it had in flight across the stop:
    // sent before it (`timestamp`, when the request went), done after it
    // (`elapsed_ms` later, counted from a little before the request, by
    // far less than the stop lasts). Every lease n2 held had run out here
    // by the time n1 held every partition, and a partition with URLs in
    // flight here is not taken again before they are answered: none of
    // these may have a record (nor an archived copy: `unrecorded`).
    //
    // Not the fetches n2 sent after waking, nor URLs it recorded twice:
    // it takes its share back, and a URL it recorded before the stop
    // whose report Redis then refused (the lease had run out) is recorded
    // again by its partition's next owner, which may be n2 itself in a
    // new tenure. That is the repeat a kill costs, bounded in `twice`.
    let (stopped_ms, woke_ms) = (unix_millis(stopped), unix_millis(woke));
    let across: Vec<String> = crate::common::whole_lines(&nodes[1].log)
        .lines()
        .filter_map(|line| {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            let timestamp = record["timestamp"].as_str().unwrap();
            let sent = unix_millis(parse_rfc3339(timestamp).unwrap());
            let done = sent + record["elapsed_ms"].as_f64().unwrap();
            let url = record["url"].as_str().unwrap();
            (sent < stopped_ms && done >= woke_ms).then(|| url.to_string())
        })
        .collect();
    let err = std::fs::read_to_string(&nodes[1].stderr).unwrap();
    eprintln!(
        "SIGSTOP past the lease: {} URLs recorded twice, {} archived by n2 without its record, {} recorded by n2 across the stop, n2: {}",
        twice.len(),
        unrecorded.len(),
        across.len(),
        err.lines()
            .find(|l| l.contains("cluster:") && l.contains("records acknowledged"))
            .unwrap_or("")
            .trim()
    );
    assert!(err.contains("ran out here"), "n2's leases ran out: {err}");
    assert!(
        unrecorded.is_empty(),
        "archived, not recorded: {unrecorded:?}"
    );
    assert!(
        across.is_empty(),
        "recorded after waking, fetched before the stop: {across:?}"
    );
    assert!(twice.len() <= crate::cluster::TASKS, "{twice:?}");
}

/// Milliseconds since the Unix epoch.
fn unix_millis(t: SystemTime) -> f64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        * 1000.0
}

#[test]
fn a_fetch_that_ends_after_its_lease_ran_out_leaves_no_archived_copy() {
    let Some(redis) = redis_or_skip("late_fetch") else {
        return;
    };
    let dir = crate::cluster::scratch("late_fetch");
    // Answers 1.5 s late, longer than a lease is valid here (1.2 s of a
    // 1.5 s TTL): every fetch in flight when n2 is cut off ends after its
    // partitions' leases ran out here.
    let site = Site::with_delay(400, 16, 1_500);
    let expected = site.expected();
    let proxy = Proxy::start(SocketAddr::from(([127, 0, 0, 1], redis.port)));
    let start_at = Instant::now();
    let args = |roots: bool| {
        let mut args: Vec<String> = if roots { site.roots() } else { Vec::new() };
        args.extend(site.resolve_args());
        args.extend(["--ignore-robots".into(), "--warc".into()]);
        args.push(dir.join("warc").display().to_string());
        args.push("--cdxj".into());
        args.push(dir.join("index.cdxj").display().to_string());
        args
    };
    let mut nodes = vec![
        Node::spawn("n1", &redis.url(), "late_fetch", &dir, "1.5", args(true)),
        Node::spawn(
            "n2",
            &proxy.redis_url(),
            "late_fetch",
            &dir,
            "1.5",
            args(false),
        ),
    ];
    wait_until("n2 has done some work", start_at, || {
        nodes[1].records() >= 20
    });
    proxy.cut();
    wait_until("n1 took every partition", start_at, || {
        let s = ringcrawl::cluster_status(&redis.url(), "late_fetch").unwrap();
        s.unowned == 0 && s.nodes.iter().all(|n| n.name == "n1" || n.partitions == 0)
    });
    proxy.restore();
    for node in &mut nodes {
        node.finish(start_at);
    }
    let urls = records(&nodes);
    let twice = assert_complete(&urls, &expected);
    let recorded: BTreeSet<String> = urls_of(&nodes[1].log).into_iter().collect();
    let unrecorded: Vec<_> = archived(&dir.join("index.n2.cdxj"))
        .into_iter()
        .filter(|u| !recorded.contains(u))
        .collect();
    let err = std::fs::read_to_string(&nodes[1].stderr).unwrap();
    eprintln!(
        "fetches ending after the lease: {} URLs recorded twice, {} archived by n2 without its record",
        twice.len(),
        unrecorded.len()
    );
    assert!(err.contains("ran out here"), "n2's leases ran out: {err}");
    assert!(
        unrecorded.is_empty(),
        "archived, not recorded: {unrecorded:?}"
    );
    assert!(twice.len() <= crate::cluster::TASKS, "{twice:?}");
}
