//! Crawls on many machines (`--cluster`): `ringcrawl` processes on one
//! Redis (a real `redis-server` on a free loopback port; the tests skip,
//! saying so, where it is not installed) crawl a many-host synthetic site
//! served by this test. Each node writes its own log; their union must be
//! the site, every URL with exactly one record, or, when a node is killed
//! or cut off, every URL with a record and the duplicates limited to what
//! that node had in flight.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use crate::common;
use crate::common::proxy::Proxy;
use crate::common::redis::redis_or_skip;
use crate::common::scratch::Scratch;
use crate::common::synth::Site;

/// A crawl that runs longer than this has hung.
pub(crate) const LIMIT: Duration = Duration::from_secs(150);

/// Fetches in flight per node.
pub(crate) const TASKS: usize = 16;

/// How long before a node's death or cut its records may still be
/// unacknowledged: the acknowledgements trail the records by at most a
/// flush (250 ms) and a round trip; seen here within one second, and
/// twice that leaves room for a loaded machine.
const UNACKED: Duration = Duration::from_secs(2);

/// A node's process, killed if the test ends before it does.
pub(crate) struct Node {
    pub(crate) name: String,
    child: Option<Child>,
    pub(crate) log: PathBuf,
    pub(crate) stderr: PathBuf,
}

impl Drop for Node {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Node {
    /// Start node `name` of crawl `crawl` at `redis`, writing into `dir`;
    /// with the site's roots if `roots`.
    pub(crate) fn start(
        name: &str,
        redis: &str,
        crawl: &str,
        site: &Site,
        dir: &Path,
        roots: bool,
        ttl: &str,
    ) -> Node {
        let mut args: Vec<String> = if roots { site.roots() } else { Vec::new() };
        args.extend(site.resolve_args());
        args.push("--ignore-robots".into());
        Node::spawn(name, redis, crawl, dir, ttl, args)
    }

    /// Start node `name` with `args` beside the cluster's own flags.
    pub(crate) fn spawn(
        name: &str,
        redis: &str,
        crawl: &str,
        dir: &Path,
        ttl: &str,
        mut args: Vec<String>,
    ) -> Node {
        args.extend(
            [
                "--cluster",
                redis,
                "--crawl",
                crawl,
                "--node",
                name,
                "--lease-ttl",
                ttl,
                "--cores",
                "1",
                "--no-sitemaps",
                "--progress-interval",
                "3600",
            ]
            .map(String::from),
        );
        if !args.iter().any(|a| a == "--max-tasks") {
            args.extend(["--max-tasks".into(), TASKS.to_string()]);
        }
        args.extend(["-o".into(), dir.join("records.jsonl").display().to_string()]);
        let stderr = dir.join(format!("{name}.stderr"));
        let child = Command::new(env!("CARGO_BIN_EXE_ringcrawl"))
            .args(&args)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .expect("ringcrawl starts");
        Node {
            name: name.to_string(),
            child: Some(child),
            log: dir.join(format!("records.{name}.jsonl")),
            stderr,
        }
    }

    /// Records in its log so far.
    pub(crate) fn records(&self) -> usize {
        std::fs::read(&self.log)
            .map(|b| b.iter().filter(|&&c| c == b'\n').count())
            .unwrap_or(0)
    }

    /// Wait for it to exit within [`LIMIT`] of `start`; must exit 0.
    pub(crate) fn finish(&mut self, start: Instant) {
        let Some(child) = &mut self.child else {
            return;
        };
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                let err = std::fs::read_to_string(&self.stderr).unwrap_or_default();
                assert_eq!(status.code(), Some(0), "node {}: {err}", self.name);
                self.child = None;
                return;
            }
            if start.elapsed() > LIMIT {
                let err = std::fs::read_to_string(&self.stderr).unwrap_or_default();
                panic!("node {} still running after {LIMIT:?}: {err}", self.name);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Its exit code once it exits within [`LIMIT`] of `start`.
    pub(crate) fn exit_code(&mut self, start: Instant) -> Option<i32> {
        let child = self.child.as_mut()?;
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                self.child = None;
                return status.code();
            }
            assert!(start.elapsed() < LIMIT, "node {} still running", self.name);
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Its process id while it runs.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    pub(crate) fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().unwrap(); // SIGKILL
            child.wait().unwrap();
        }
    }
}

/// A fresh directory for one test.
pub(crate) fn scratch(name: &str) -> Scratch {
    Scratch::new(&format!("cluster-{name}"))
}

/// Records per URL over the nodes' logs.
pub(crate) fn records(nodes: &[Node]) -> BTreeMap<String, usize> {
    let mut urls = BTreeMap::new();
    for node in nodes {
        for url in urls_of(&node.log) {
            *urls.entry(url).or_insert(0) += 1;
        }
    }
    urls
}

/// The URLs of a node's records (a killed node's torn last line is none).
pub(crate) fn urls_of(log: &Path) -> Vec<String> {
    common::whole_lines(log)
        .lines()
        .map(|line| {
            let record: serde_json::Value = serde_json::from_str(line).expect("whole JSON lines");
            assert_ne!(record["error_kind"], "interrupted", "{line}");
            record["url"].as_str().unwrap().to_string()
        })
        .collect()
}

/// Every expected URL has a record, nothing else; the URLs with more than
/// one.
pub(crate) fn assert_complete(
    urls: &BTreeMap<String, usize>,
    expected: &BTreeSet<String>,
) -> BTreeMap<String, usize> {
    let got: BTreeSet<&String> = urls.keys().collect();
    let missing: Vec<_> = expected
        .iter()
        .filter(|u| !got.contains(u))
        .take(5)
        .collect();
    let extra: Vec<_> = got
        .iter()
        .filter(|u| !expected.contains(**u))
        .take(5)
        .collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:?}, extra {extra:?} ({} recorded, {} expected)",
        got.len(),
        expected.len()
    );
    urls.iter()
        .filter(|(_, &n)| n > 1)
        .map(|(u, &n)| (u.clone(), n))
        .collect()
}

/// Every page of `site` recorded once by one of `nodes`, and served by
/// the site once; the URLs recorded.
pub(crate) fn assert_each_page_once(nodes: &[Node], site: &Site) -> BTreeMap<String, usize> {
    let urls = records(nodes);
    let twice = assert_complete(&urls, &site.expected());
    assert!(
        twice.is_empty(),
        "URLs recorded twice: {:?}",
        twice.iter().take(5).collect::<Vec<_>>()
    );
    let hits = site.page_hits();
    let fetched_twice: Vec<_> = hits.iter().filter(|(_, &n)| n > 1).take(5).collect();
    assert!(
        fetched_twice.is_empty(),
        "pages fetched twice: {fetched_twice:?}"
    );
    urls
}

/// Every URL recorded twice was recorded by the node that died or was
/// cut off at `at`, and recently: a fetch in flight then, or a record not
/// yet acknowledged. Nothing it had reported done is repeated.
fn assert_repeats_are_in_flight(twice: &BTreeMap<String, usize>, node: &Node, at: SystemTime) {
    assert!(
        twice.values().all(|&n| n == 2),
        "at most one extra record each"
    );
    let since = ringcrawl_warc::timestamp::rfc3339_millis(at - UNACKED);
    let until = ringcrawl_warc::timestamp::rfc3339_millis(at + UNACKED);
    let mut recent = BTreeSet::new();
    for line in common::whole_lines(&node.log).lines() {
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        let time = record["timestamp"].as_str().unwrap();
        if (since.as_str()..until.as_str()).contains(&time) {
            recent.insert(record["url"].as_str().unwrap().to_string());
        }
    }
    let old: Vec<_> = twice
        .keys()
        .filter(|u| !recent.contains(*u))
        .take(5)
        .collect();
    assert!(
        old.is_empty(),
        "recorded again though {} had recorded them over {UNACKED:?} before it went: {old:?}",
        node.name
    );
    eprintln!(
        "{}: {} URLs recorded again, of {} it recorded within {UNACKED:?} of going ({TASKS} fetch slots)",
        node.name,
        twice.len(),
        recent.len()
    );
}

pub(crate) fn wait_until(what: &str, start: Instant, mut done: impl FnMut() -> bool) {
    while !done() {
        assert!(start.elapsed() < LIMIT, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn status(redis: &str, crawl: &str) -> ringcrawl::ClusterStatus {
    ringcrawl::cluster_status(redis, crawl).unwrap()
}

#[test]
fn three_nodes_crawl_a_many_host_site_with_one_record_per_url() {
    let Some(redis) = redis_or_skip("three_nodes") else {
        return;
    };
    let dir = scratch("three");
    let site = Site::new(50_000, 64);
    let start = Instant::now();
    // Only one node is given the roots, and it starts last: the others
    // join a crawl that has none yet (nothing is in scope for them until
    // they learn the roots).
    let mut nodes: Vec<Node> = ["n2", "n3"]
        .iter()
        .map(|n| Node::start(n, &redis.url(), "three", &site, &dir, false, "2"))
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    nodes.insert(
        0,
        Node::start("n1", &redis.url(), "three", &site, &dir, true, "2"),
    );
    for node in &mut nodes {
        node.finish(start);
    }
    let urls = assert_each_page_once(&nodes, &site);
    for node in &nodes {
        let n = node.records();
        assert!(n > 5_000, "node {} did its share: {n} records", node.name);
    }
    let s = status(&redis.url(), "three");
    assert_eq!((s.partitions, s.entries, s.in_flight), (256, 0, 0), "{s:?}");
    assert_eq!(s.records as usize, urls.len());
    eprintln!("three nodes: {} URLs in {:?}", urls.len(), start.elapsed());
}

#[test]
fn a_killed_node_loses_nothing_and_a_node_that_joins_late_takes_its_share() {
    let Some(redis) = redis_or_skip("killed_node") else {
        return;
    };
    let dir = scratch("killed");
    let site = Site::new(50_000, 64);
    let expected = site.expected();
    let start = Instant::now();
    let mut nodes: Vec<Node> = ["n1", "n2", "n3"]
        .iter()
        .map(|n| Node::start(n, &redis.url(), "killed", &site, &dir, *n == "n1", "1.5"))
        .collect();
    // n3 dies mid-crawl, with fetches in flight and records not yet
    // reported; its partitions go to n1 and n2 after the lease's TTL.
    wait_until("n3 has done some work", start, || {
        nodes[2].records() >= 3_000
    });
    let killed = SystemTime::now();
    nodes[2].kill();
    let killed_at = nodes[2].records();
    // Later a fourth node joins, and takes its share from n1 and n2.
    let total = |nodes: &[Node]| nodes.iter().map(Node::records).sum::<usize>();
    wait_until("the crawl is half done", start, || {
        total(&nodes) >= expected.len() / 2
    });
    nodes.push(Node::start(
        "n4",
        &redis.url(),
        "killed",
        &site,
        &dir,
        false,
        "1.5",
    ));
    for node in &mut nodes {
        node.finish(start);
    }
    let urls = records(&nodes);
    let twice = assert_complete(&urls, &expected);
    // A URL recorded twice was recorded by the dead node, whose report of
    // it never reached Redis.
    assert_repeats_are_in_flight(&twice, &nodes[2], killed);
    assert!(
        nodes[3].records() > 1_000,
        "n4 took its share: {}",
        nodes[3].records()
    );
    eprintln!(
        "killed node: {killed_at} records at the kill; n4 {} records",
        nodes[3].records()
    );
}

#[test]
fn a_node_cut_off_from_redis_stops_fetching_and_rejoins_when_it_comes_back() {
    let Some(redis) = redis_or_skip("cut_off") else {
        return;
    };
    let dir = scratch("cut");
    // Slow answers: the crawl lasts long enough to cut a node and let it
    // come back.
    let site = Site::with_delay(30_000, 64, 5);
    let expected = site.expected();
    let proxy = Proxy::start(SocketAddr::from(([127, 0, 0, 1], redis.port)));
    let start = Instant::now();
    let mut nodes = vec![
        Node::start("n1", &redis.url(), "cut", &site, &dir, true, "1.5"),
        Node::start("n2", &proxy.redis_url(), "cut", &site, &dir, false, "1.5"),
    ];
    wait_until("n2 has done some work", start, || {
        nodes[1].records() >= 1_500
    });
    // Meanwhile, a second process under a live node's name: refused once
    // the first's heartbeat outlasted its patience (two lease TTLs).
    let twin = Command::new(env!("CARGO_BIN_EXE_ringcrawl"))
        .args(["--cluster", &redis.url(), "--crawl", "cut", "--node", "n1"])
        .args(["--lease-ttl", "1.5", "-q"])
        .arg("-o")
        .arg(dir.join("twin.jsonl"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let cut_at = SystemTime::now();
    proxy.cut();
    // Its leases run out here within 0.8 TTL (1.2 s) of the last renewal
    // answered; the records of its last fetches reach the file within the
    // flush window after that; no new fetch starts.
    std::thread::sleep(Duration::from_millis(1_800));
    let (n1_then, n2_then) = (nodes[0].records(), nodes[1].records());
    std::thread::sleep(Duration::from_millis(2_000));
    let (n1_now, n2_now) = (nodes[0].records(), nodes[1].records());
    assert_eq!(n2_now, n2_then, "the cut-off node recorded nothing");
    assert!(
        n1_now > n1_then,
        "the other took over: {n1_then} → {n1_now}"
    );
    let s = status(&redis.url(), "cut");
    let n2 = s.nodes.iter().find(|n| n.name == "n2");
    assert!(n2.is_none_or(|n| n.partitions == 0 && !n.alive), "{s:?}");
    assert_eq!(s.unowned, 0, "n1 holds every partition: {s:?}");
    proxy.restore();
    wait_until("n2 rejoined and crawls again", start, || {
        nodes[1].records() > n2_now
            || nodes[0]
                .child
                .as_mut()
                .is_some_and(|c| c.try_wait().unwrap().is_some())
    });
    for node in &mut nodes {
        node.finish(start);
    }
    let twin = twin.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&twin.stderr);
    assert_eq!(twin.status.code(), Some(1), "{err}");
    assert!(
        err.contains("node n1 is running in crawl cut already"),
        "{err}"
    );
    assert!(
        nodes[1].records() > n2_now,
        "n2 crawled again after the cut"
    );
    let urls = records(&nodes);
    let twice = assert_complete(&urls, &expected);
    assert_repeats_are_in_flight(&twice, &nodes[1], cut_at);
    eprintln!(
        "cut node: {n2_then} records at the cut, {} at the end",
        nodes[1].records(),
    );
}

#[test]
fn a_node_that_comes_back_to_its_crawl_appends_to_its_files_repaired() {
    let Some(redis) = redis_or_skip("comes_back") else {
        return;
    };
    let dir = scratch("back");
    let site = Site::new(300, 3);
    let node = |crawl: &str, roots: bool| {
        let out = Command::new(env!("CARGO_BIN_EXE_ringcrawl"))
            .args(if roots { site.roots() } else { Vec::new() })
            .args(site.resolve_args())
            .args(["--cluster", &redis.url(), "--crawl", crawl, "--node", "a"])
            .args([
                "--ignore-robots",
                "--no-sitemaps",
                "--progress-interval",
                "3600",
            ])
            .arg("-o")
            .arg(dir.join("records.jsonl"))
            .arg("--warc")
            .arg(dir.join("warc"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{err}");
        err
    };
    node("back", true);
    let log = dir.join("records.a.jsonl");
    let first = std::fs::read(&log).unwrap();
    assert_eq!(urls_of(&log).len(), site.expected().len());
    // As a `kill -9` mid-write leaves them; then the node comes back (the
    // crawl is over, so it only joins and sees that).
    let mut torn = first.clone();
    torn.extend_from_slice(br#"{"url":"http://torn"#);
    std::fs::write(&log, &torn).unwrap();
    let warcs: Vec<PathBuf> = std::fs::read_dir(dir.join("warc"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let warc = warcs
        .iter()
        .max_by_key(|p| p.metadata().unwrap().len())
        .unwrap();
    let whole = std::fs::read(warc).unwrap();
    std::fs::write(warc, &whole[..whole.len() - 100]).unwrap();
    assert!(common::warc::read_records(&std::fs::read(warc).unwrap()).is_err());
    let err = node("back", false);
    assert!(err.contains("torn last line"), "{err}");
    assert_eq!(
        std::fs::read(&log).unwrap(),
        first,
        "the records it reported are kept, the torn line cut"
    );
    assert!(err.contains(&format!("{}: cut", warc.display())), "{err}");
    for file in &warcs {
        let records = common::warc::read_records(&std::fs::read(file).unwrap());
        assert!(records.is_ok_and(|r| !r.is_empty()), "{}", file.display());
    }
    // The same name in another crawl is a new member there: its file
    // starts afresh (no record of the other crawl in it).
    node("another", true);
    assert_eq!(urls_of(&log).len(), site.expected().len());
}

#[test]
fn a_node_with_another_partition_count_or_a_bad_setting_is_refused() {
    let Some(redis) = redis_or_skip("refused") else {
        return;
    };
    let dir = scratch("refused");
    let site = Site::new(100, 1);
    let run = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_ringcrawl"))
            .args(site.roots())
            .args(site.resolve_args())
            .args([
                "--cluster",
                &redis.url(),
                "--crawl",
                "r",
                "-q",
                "--ignore-robots",
                "--no-sitemaps",
            ])
            .args(extra)
            .arg("-o")
            .arg(dir.join("records.jsonl"))
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = run(&["--partitions", "8", "--node", "a"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        urls_of(&dir.join("records.a.jsonl")).len(),
        site.expected().len()
    );
    let (code, err) = run(&["--partitions", "16", "--node", "b"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("8 partitions, not 16"), "{err}");
    for bad in [
        ["--node", "a b"],
        ["--lease-ttl", "0.01"],
        ["--partitions", "0"],
    ] {
        let (code, err) = run(&bad);
        assert_eq!(code, Some(2), "{bad:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{bad:?}: {err}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_ringcrawl"))
        .args(["--cluster", "redis://127.0.0.1:1/", "--crawl", "x", "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "no server there");
    assert!(String::from_utf8_lossy(&out.stderr).contains("joining crawl x"));
}

/// One slow host (robots.txt asks a second between fetches) with 50,000
/// URLs, all found at once, beside 255 fast hosts: two nodes fetch every
/// fast page while the slow host has done a handful. The slow host's URLs
/// wait in its node's frontier (spilled to disk past its memory), not in
/// the node's intake, so that node goes on reading its other partitions.
#[test]
fn a_slow_host_with_a_long_queue_does_not_stop_a_node_reading_its_other_partitions() {
    let Some(redis) = redis_or_skip("slow_host") else {
        return;
    };
    const FAST: usize = 256;
    const SLOW: usize = 50_000;
    const HUBS: usize = 5;
    let server = common::serve(|req| {
        let port = req.authority.rsplit(':').next().unwrap_or("").to_string();
        let host = req.host.as_str();
        let path = req.path.as_str();
        if path == "/robots.txt" {
            return (host == "slow.test").then(|| ringcrawl_site::server::Reply::Http {
                status: 200,
                headers: vec![("Content-Type".into(), "text/plain".into())],
                body: b"User-agent: *\nCrawl-delay: 1\n".to_vec(),
            });
        }
        if host == "slow.test" {
            return Some(common::page(&[]));
        }
        match (host, path) {
            ("h0.test", "/") => {
                let mut links: Vec<String> = (1..FAST)
                    .map(|i| format!("http://h{i}.test:{port}/"))
                    .collect();
                links.extend((0..HUBS).map(|k| format!("/hub{k}")));
                links.extend(["/a", "/b", "/c"].map(String::from));
                let links: Vec<&str> = links.iter().map(String::as_str).collect();
                Some(common::page(&links))
            }
            ("h0.test", hub) if hub.starts_with("/hub") => {
                let k: usize = hub[4..].parse().ok()?;
                let per = SLOW / HUBS;
                let links: Vec<String> = (k * per..(k + 1) * per)
                    .map(|n| format!("http://slow.test:{port}/p{n}"))
                    .collect();
                let links: Vec<&str> = links.iter().map(String::as_str).collect();
                Some(common::page(&links))
            }
            (_, "/") => Some(common::page(&["/a", "/b", "/c"])),
            (_, "/a" | "/b" | "/c") => Some(common::page(&[])),
            _ => None,
        }
    });
    let port = server.addr().port();
    let mut fast: BTreeSet<String> = BTreeSet::new();
    for i in 0..FAST {
        for path in ["", "a", "b", "c"] {
            fast.insert(format!("http://h{i}.test:{port}/{path}"));
        }
    }
    for k in 0..HUBS {
        fast.insert(format!("http://h0.test:{port}/hub{k}"));
    }
    let dir = scratch("slow");
    let resolve = vec!["--resolve".to_string(), format!("*:{port}:127.0.0.1")];
    let mut nodes = vec![Node::spawn(
        "s2",
        &redis.url(),
        "slow",
        &dir,
        "2",
        resolve.clone(),
    )];
    // Every host is a root, so in scope; h0's pages link the rest.
    let mut args: Vec<String> = (0..FAST)
        .map(|i| format!("http://h{i}.test:{port}/"))
        .collect();
    args.push(format!("http://slow.test:{port}/"));
    args.extend(resolve);
    nodes.insert(0, Node::spawn("s1", &redis.url(), "slow", &dir, "2", args));
    let start = Instant::now();
    let mut left = fast.len();
    while left > 0 {
        let urls = records(&nodes);
        left = fast.iter().filter(|u| !urls.contains_key(*u)).count();
        if start.elapsed() > LIMIT {
            let slow = urls.keys().filter(|u| u.contains("slow.test")).count();
            panic!("{left} fast pages not fetched after {LIMIT:?} ({slow} slow ones fetched)");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let urls = records(&nodes);
    let slow = urls.keys().filter(|u| u.contains("slow.test")).count();
    eprintln!(
        "slow host: every fast page fetched in {:?}, with {slow} slow ones",
        start.elapsed()
    );
    assert!(
        slow < SLOW / 10,
        "{slow} of the slow host's pages fetched already"
    );
    let twice: Vec<_> = urls.iter().filter(|(_, &n)| n > 1).take(5).collect();
    assert!(twice.is_empty(), "URLs recorded twice: {twice:?}");
    for node in &nodes {
        assert!(node.records() > 0, "node {} fetched nothing", node.name);
    }
}
