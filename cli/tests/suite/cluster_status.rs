//! A cluster crawl watched: `ringcrawl cluster status --serve` (the whole
//! crawl, read from Redis) and a node's own `--status-addr` (its
//! partitions, lease renewals and stream backlog), while two nodes crawl
//! the synthetic site on a real `redis-server`.
//!
//! The numbers of a running crawl move; to compare two readers, the
//! tests freeze the crawl: both nodes are stopped (SIGSTOP), so Redis
//! holds still, and every reader is polled until it agrees (a deadline,
//! never a sleep); then they go on (SIGCONT) and finish. A node's own
//! server cannot answer while it is stopped, so its partitions are
//! compared while it runs, polled until two reads of its `/metrics`
//! around one of `cluster status --json` agree (its share is stable once
//! both nodes hold theirs).

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cluster::{scratch, Node, LIMIT};
use crate::common::redis::{redis_or_skip, RedisServer};
use crate::common::scratch::Scratch;
use crate::common::synth::Site;
use crate::common::tools::require_tool;
use crate::status_server::{dom_value, get, promtool_passes, render_in_chromium};

/// `ringcrawl cluster status --serve 127.0.0.1:0`, and where it serves.
struct Watcher {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Watcher {
    fn start(redis: &str, crawl: &str) -> Watcher {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ringcrawl"))
            .args(["cluster", "status", "--cluster", redis, "--crawl", crawl])
            .args(["--serve", "127.0.0.1:0"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.strip_prefix("status: serving http://") {
                    let _ = tx.send(rest.split('/').next().unwrap().to_string());
                }
            }
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the status line on stderr")
            .parse()
            .unwrap();
        Watcher { child, addr }
    }

    fn json(&self) -> Value {
        let (code, body) = get(self.addr, "/status.json");
        assert_eq!(code, 200, "{body}");
        serde_json::from_str(&body).unwrap()
    }

    fn metrics(&self) -> String {
        let (code, body) = get(self.addr, "/metrics");
        assert_eq!(code, 200, "{body}");
        body
    }

    /// SIGINT: it stops, exit 0.
    fn interrupt(mut self) {
        // SAFETY: a plain kill(2) of the child this test started.
        assert_eq!(
            unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) },
            0
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert_eq!(status.code(), Some(0), "a watcher's Ctrl-C is its end");
                return;
            }
            assert!(Instant::now() < deadline, "the watcher did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// `ringcrawl cluster status --json`.
fn status_json(redis: &str, crawl: &str) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_ringcrawl"))
        .args(["cluster", "status", "--cluster", redis, "--crawl", crawl])
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The value of the sample `series` (name and labels as written), if any.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .map(|v| v.parse().unwrap())
}

/// The address a node's status server printed on its stderr.
fn node_status_addr(node: &Node, start: Instant) -> SocketAddr {
    loop {
        let err = std::fs::read_to_string(&node.stderr).unwrap_or_default();
        if let Some(addr) = err
            .lines()
            .find_map(|l| l.strip_prefix("status: serving http://"))
        {
            return addr.split('/').next().unwrap().parse().unwrap();
        }
        assert!(start.elapsed() < LIMIT, "no status line: {err}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Send `signal` to each node.
fn signal(nodes: &[Node], signal: i32) {
    for node in nodes {
        let pid = node.pid().expect("running") as i32;
        // SAFETY: a plain kill(2) of a child this test started.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    }
}

/// Two nodes (n1 with a status server of its own) crawling a slow
/// synthetic site, watched by `cluster status --serve`.
struct Crawl {
    redis: RedisServer,
    site: Site,
    nodes: Vec<Node>,
    watcher: Watcher,
    start: Instant,
    crawl: &'static str,
    /// Last, so the nodes stop before their folder goes.
    _dir: Scratch,
}

impl Crawl {
    fn start(redis: RedisServer, crawl: &'static str) -> Crawl {
        let dir = scratch(crawl);
        // 20,000 pages answered 20 ms late: the crawl takes seconds at 16
        // fetches a node, long enough to watch.
        let site = Site::with_delay(20_000, 64, 20);
        let start = Instant::now();
        let watcher = Watcher::start(&redis.url(), crawl);
        let nodes: Vec<Node> = ["n1", "n2"]
            .iter()
            .map(|&name| {
                let mut args: Vec<String> = if name == "n1" {
                    site.roots()
                } else {
                    Vec::new()
                };
                args.extend(site.resolve_args());
                args.push("--ignore-robots".into());
                if name == "n1" {
                    args.extend(["--status-addr".into(), "127.0.0.1:0".into()]);
                }
                Node::spawn(name, &redis.url(), crawl, &dir, "6", args)
            })
            .collect();
        Crawl {
            redis,
            site,
            nodes,
            watcher,
            start,
            crawl,
            _dir: dir,
        }
    }

    /// Stop both nodes, and wait until the watcher's numbers of them are
    /// `cluster status --json`'s (two reads of its `/status.json` around
    /// one of the command's, agreeing); `cluster status --json`'s then.
    fn freeze(&self) -> Value {
        signal(&self.nodes, libc::SIGSTOP);
        let deadline = Instant::now() + LIMIT;
        loop {
            let before = self.watcher.json()["now"]["status"].clone();
            let json = status_json(&self.redis.url(), self.crawl);
            let after = self.watcher.json()["now"]["status"].clone();
            if before == json && after == json {
                return json;
            }
            assert!(Instant::now() < deadline, "{before}\n{json}\n{after}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Let the nodes go on, wait for them to finish (exit 0), and check
    /// the crawl is whole, as the watcher says too; stop the watcher.
    fn finish(mut self) {
        signal(&self.nodes, libc::SIGCONT);
        for node in &mut self.nodes {
            node.finish(self.start);
        }
        let expected = self.site.expected().len() as u64;
        let end = status_json(&self.redis.url(), self.crawl);
        assert_eq!(end["records"], expected, "{end}");
        assert_eq!(end["entries"], 0, "{end}");
        let deadline = Instant::now() + LIMIT;
        while self.watcher.json()["now"]["status"] != end {
            assert!(Instant::now() < deadline, "the watcher never read the end");
            std::thread::sleep(Duration::from_millis(100));
        }
        let text = self.watcher.metrics();
        assert_eq!(
            sample(&text, "ringcrawl_cluster_records_total"),
            Some(expected as f64)
        );
        let Crawl { watcher, .. } = self;
        watcher.interrupt();
    }
}

/// Node `name` of `status` (the JSON of `cluster status`).
fn node<'a>(status: &'a Value, name: &str) -> &'a Value {
    status["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == name)
        .unwrap_or_else(|| panic!("no node {name} in {status}"))
}

#[test]
fn cluster_status_serve_and_a_nodes_metrics_agree_with_cluster_status_json() {
    let test = "cluster_status_serve_and_a_nodes_metrics_agree_with_cluster_status_json";
    let Some(redis) = redis_or_skip("cluster_status_serve") else {
        return;
    };
    let crawl = Crawl::start(redis, "watched");
    let n1 = node_status_addr(&crawl.nodes[0], crawl.start);

    // n1's own /metrics, while it runs: the partitions it holds are the
    // ones Redis says it holds, and it has renewed leases.
    let held = |text: &str| sample(text, "ringcrawl_cluster_partitions_held");
    let renewed = |text: &str| {
        sample(
            text,
            "ringcrawl_cluster_lease_renewals_total{result=\"done\"}",
        )
        .unwrap_or(0.0)
    };
    let deadline = Instant::now() + LIMIT;
    let node_text = loop {
        let (_, before) = get(n1, "/metrics");
        let json = status_json(&crawl.redis.url(), crawl.crawl);
        let (_, after) = get(n1, "/metrics");
        let both_hold = json["nodes"].as_array().unwrap().len() == 2
            && json["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .all(|n| n["partitions"].as_u64().unwrap() > 0);
        let says = node(&json, "n1")["partitions"].as_f64();
        if both_hold && held(&before) == says && held(&after) == says && renewed(&after) > 0.0 {
            break after;
        }
        assert!(
            Instant::now() < deadline && !after.lines().any(|l| l == "ringcrawl_finished 1"),
            "n1 never agreed with cluster status --json while both nodes held partitions:\n{json}\n{after}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(
        sample(&node_text, "ringcrawl_cluster_partitions"),
        Some(256.0)
    );
    assert_eq!(sample(&node_text, "ringcrawl_cluster_connected"), Some(1.0));
    promtool_passes(test, &node_text);

    // The watcher, the crawl frozen: per node, what --json says.
    let json = crawl.freeze();
    let text = crawl.watcher.metrics();
    for name in ["n1", "n2"] {
        let n = node(&json, name);
        for (family, key) in [
            ("ringcrawl_cluster_node_records_total", "records"),
            ("ringcrawl_cluster_node_partitions", "partitions"),
        ] {
            assert_eq!(
                sample(&text, &format!("{family}{{node=\"{name}\"}}")),
                n[key].as_f64(),
                "{family} of {name}:\n{text}"
            );
        }
    }
    assert_eq!(sample(&text, "ringcrawl_cluster_redis_up"), Some(1.0));
    assert_eq!(
        sample(&text, "ringcrawl_cluster_partitions_unowned"),
        json["unowned"].as_f64()
    );
    assert_eq!(
        sample(
            &text,
            "ringcrawl_cluster_stream_entries{state=\"in_flight\"}"
        ),
        json["in_flight"].as_f64()
    );
    promtool_passes(test, &text);
    crawl.finish();
}

#[test]
fn cluster_status_page_renders_the_numbers_of_its_status_json_in_headless_chromium() {
    let test = "cluster_status_page_renders_the_numbers_of_its_status_json_in_headless_chromium";
    let Some(chromium) = require_tool(test, "chromium", "apt-get install chromium") else {
        return;
    };
    let Some(redis) = redis_or_skip("cluster_status_page") else {
        return;
    };
    let crawl = Crawl::start(redis, "paged");
    // Both nodes at work before the freeze.
    let deadline = Instant::now() + LIMIT;
    while crawl.watcher.json()["now"]["status"]["nodes"]
        .as_array()
        .map_or(0, |n| {
            n.iter().filter(|n| n["records"].as_u64() > Some(0)).count()
        })
        < 2
    {
        assert!(
            Instant::now() < deadline,
            "the nodes never reported records"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    crawl.freeze();

    let shot = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/cluster_status.png");
    let profile = std::env::temp_dir().join(format!(
        "ringcrawl-cluster-page-chromium-{}",
        std::process::id()
    ));
    // The numbers the page was made with are the ones read before and
    // after it (frozen; the reads are polled until they agree).
    let (dom, status) = loop {
        let before = crawl.watcher.json();
        let dom = render_in_chromium(
            &chromium,
            &profile,
            &format!("http://{}/", crawl.watcher.addr),
            &shot,
        );
        let after = crawl.watcher.json();
        if before["now"]["status"] == after["now"]["status"] {
            break (dom, after);
        }
        assert!(Instant::now() < deadline, "the numbers never held still");
    };
    std::fs::remove_dir_all(&profile).ok();
    let s = &status["now"]["status"];
    let number = |id: &str| -> f64 {
        dom_value(&dom, id)
            .unwrap_or_else(|| panic!("no #{id} with a data-value in:\n{dom}"))
            .parse()
            .unwrap()
    };
    for (id, key) in [
        ("records", "records"),
        ("partitions", "partitions"),
        ("unowned", "unowned"),
        ("entries", "entries"),
        ("in-flight", "in_flight"),
        ("urls-added", "urls_added"),
        ("roots", "roots"),
    ] {
        assert_eq!(Some(number(id)), s[key].as_f64(), "#{id}");
    }
    let nodes = s["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 2, "{s}");
    for n in nodes {
        let name = n["name"].as_str().unwrap();
        for (key, field) in [
            ("records", "records"),
            ("partitions", "partitions"),
            ("rate", "pages_per_sec"),
        ] {
            let id = format!("node-{name}-{key}");
            assert_eq!(Some(number(&id)), n[field].as_f64(), "#{id}");
        }
    }
    let alive = nodes.iter().filter(|n| n["alive"] == true).count();
    assert_eq!(number("nodes-alive"), alive as f64);
    assert!(
        dom.contains("id=\"chart-nodes\"") && dom.contains("data-points="),
        "the charts were drawn"
    );
    assert!(
        !dom.contains("class=\"error\">Redis"),
        "no error shown: {dom}"
    );
    crawl.finish();
}
