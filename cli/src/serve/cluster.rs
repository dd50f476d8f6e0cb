//! `ringcrawl cluster status --serve ADDR`: a whole cluster crawl, read
//! from its Redis about once a second by a thread of this server's own
//! ([`ringcrawl::ClusterStatusReader`], a few pipelined round trips, each
//! bounded by [`READ_TIMEOUT`]), served as `/metrics` (Prometheus text,
//! [`ringcrawl::cluster_prometheus_text`]), `/status.json` (the last read
//! and a second-by-second history kept here: records in all and per node,
//! so pages/s over time) and `/`, a live page made of the crawl page's
//! parts (`page.rs`).
//!
//! A Redis that cannot be read (down, unreachable, no such crawl yet) is
//! an error in the JSON and on the page, and `ringcrawl_cluster_redis_up
//! 0` in the metrics, beside the last numbers read; the server goes on,
//! and the next read connects again.
//!
//! Not the reading itself (the library's), nor the HTTP (`http.rs`).

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ringcrawl::{ClusterStatus, ClusterStatusReader};
use serde::Serialize;

use super::history::HISTORY_LEN;
use super::http::{self, Answer, Request};
use super::page;

/// Time between reads.
const EVERY: Duration = Duration::from_secs(1);
/// The longest one read (connecting included) may take.
const READ_TIMEOUT: Duration = Duration::from_secs(2);

/// The crawl at one second: records in all, and each node's.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Sample {
    /// Seconds since the server started.
    pub t: f64,
    pub records: u64,
    pub nodes: BTreeMap<String, NodeSample>,
}

/// A node at one second, as it reported itself at its last heartbeat
/// (every third of the lease TTL: its records move in steps, so the page
/// charts the rate it reported, not theirs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct NodeSample {
    pub records: u64,
    pub pages_per_sec: f64,
}

/// What the reading thread last learnt.
#[derive(Debug, Default)]
struct Watch {
    /// The last numbers read, and when (seconds since the start).
    last: Option<(ClusterStatus, f64)>,
    /// Why the last read failed (None: it did not).
    error: Option<String>,
    /// When the last read was tried.
    tried: Option<f64>,
    history: VecDeque<Sample>,
}

impl Watch {
    /// A read at `t` gave `status`.
    fn read(&mut self, t: f64, status: ClusterStatus) {
        if self.history.len() >= HISTORY_LEN {
            self.history.pop_front();
        }
        self.history.push_back(Sample {
            t,
            records: status.records,
            nodes: status
                .nodes
                .iter()
                .map(|n| {
                    let sample = NodeSample {
                        records: n.records,
                        pages_per_sec: n.pages_per_sec,
                    };
                    (n.name.clone(), sample)
                })
                .collect(),
        });
        self.last = Some((status, t));
        self.error = None;
        self.tried = Some(t);
    }

    /// A read at `t` failed for `why`.
    fn failed(&mut self, t: f64, why: String) {
        self.error = Some(why);
        self.tried = Some(t);
    }
}

/// `/status.json`.
#[derive(Serialize)]
struct StatusJson<'a> {
    crawl: &'a str,
    /// The Redis URL without its password.
    redis: &'a str,
    now: Now<'a>,
    history: Vec<&'a Sample>,
    /// All of `history` is kept (the page's loop asks only for what is
    /// newer than its last sample; see `history.rs`).
    history_kept: usize,
}

#[derive(Serialize)]
struct Now<'a> {
    /// Seconds since the server started.
    t: f64,
    /// The last read succeeded.
    redis_up: bool,
    error: Option<&'a str>,
    /// When the numbers below were read (None: never).
    read_at: Option<f64>,
    status: Option<&'a ClusterStatus>,
}

/// What the server serves: one crawl's numbers as last read.
struct Site {
    crawl: String,
    redis: String,
    started: Instant,
    watch: Arc<Mutex<Watch>>,
}

impl Site {
    fn watch(&self) -> MutexGuard<'_, Watch> {
        self.watch.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `/status.json`'s body, its history after second `since` (all:
    /// None).
    fn status_json(&self, since: Option<f64>) -> Vec<u8> {
        let watch = self.watch();
        let history: Vec<&Sample> = watch
            .history
            .iter()
            .filter(|s| since.is_none_or(|since| s.t > since))
            .collect();
        let body = StatusJson {
            crawl: &self.crawl,
            redis: &self.redis,
            now: Now {
                t: self.started.elapsed().as_secs_f64(),
                redis_up: watch.tried.is_some() && watch.error.is_none(),
                error: watch.error.as_deref(),
                read_at: watch.last.as_ref().map(|(_, t)| *t),
                status: watch.last.as_ref().map(|(s, _)| s),
            },
            history_kept: history.len(),
            history,
        };
        serde_json::to_vec(&body).unwrap_or_default()
    }

    fn metrics(&self) -> String {
        let watch = self.watch();
        let up = watch.tried.is_some() && watch.error.is_none();
        ringcrawl::cluster_prometheus_text(watch.last.as_ref().map(|(s, _)| s), up)
    }
}

/// The answer to `request`.
fn route(request: &Request, site: &Site) -> Answer {
    if let Some((content_type, body)) = page::asset(&request.path) {
        return Answer::ok(content_type, body);
    }
    match request.path.as_str() {
        "/metrics" => Answer::ok(ringcrawl::PROMETHEUS_CONTENT_TYPE, site.metrics()),
        "/status.json" => Answer::ok("application/json", site.status_json(request.since)),
        "/" => Answer::ok(
            "text/html; charset=utf-8",
            page::html(page::CLUSTER, &site.status_json(None)),
        ),
        _ => Answer::error(404),
    }
}

/// The running server and its reading thread.
pub struct ClusterServer {
    server: http::Server,
}

impl ClusterServer {
    /// Bind `addr` (port 0: one the system picks) and serve crawl `crawl`
    /// of the Redis at `url` (with its password, if any; `shown` is the
    /// URL as printed); say where on stderr unless `quiet`.
    pub fn start(
        addr: SocketAddr,
        url: &str,
        shown: &str,
        crawl: &str,
        quiet: bool,
    ) -> anyhow::Result<ClusterServer> {
        let listener = http::bind(addr, "--serve")?;
        let started = Instant::now();
        let watch = Arc::new(Mutex::new(Watch::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let reader = read_each_second(
            ClusterStatusReader::new(url, crawl, READ_TIMEOUT),
            format!("no crawl {crawl:?} on {shown} (yet)"),
            started,
            watch.clone(),
            stop.clone(),
        )?;
        let site = Site {
            crawl: crawl.to_string(),
            redis: shown.to_string(),
            started,
            watch,
        };
        let server = http::Server::start(
            listener,
            "ringcrawl-cluster-status",
            move |request| route(request, &site),
            move || {
                stop.store(true, Ordering::Relaxed);
                reader.thread().unpark();
                let _ = reader.join();
            },
        )?;
        http::announce(
            "--serve",
            addr,
            server.addr(),
            "the cluster crawl's numbers are",
            quiet,
        );
        Ok(ClusterServer { server })
    }

    /// Stop listening and reading.
    pub fn stop(self) {
        self.server.stop();
    }
}

/// Read the crawl about once a second into `watch` until `stop`; `none`
/// is the error for a crawl that does not exist (yet).
fn read_each_second(
    mut reader: ClusterStatusReader,
    none: String,
    started: Instant,
    watch: Arc<Mutex<Watch>>,
    stop: Arc<AtomicBool>,
) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("ringcrawl-cluster-read".into())
        .spawn(move || {
            let mut next = Instant::now();
            while !stop.load(Ordering::Relaxed) {
                let read = reader.read();
                let t = started.elapsed().as_secs_f64();
                {
                    let mut watch = watch.lock().unwrap_or_else(|e| e.into_inner());
                    match read {
                        Ok(status) if status.partitions == 0 => watch.failed(t, none.clone()),
                        Ok(status) => watch.read(t, status),
                        Err(e) => watch.failed(t, e.to_string()),
                    }
                }
                // A read that took longer than a second is followed by
                // the next at once, not by a burst that catches up.
                next = (next + EVERY).max(Instant::now());
                std::thread::park_timeout(next.saturating_duration_since(Instant::now()));
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site() -> Site {
        Site {
            crawl: "c".into(),
            redis: "redis://127.0.0.1:1/".into(),
            started: Instant::now(),
            watch: Arc::default(),
        }
    }

    #[test]
    fn a_failed_read_keeps_the_last_numbers_and_says_why() {
        let site = site();
        let body: serde_json::Value = serde_json::from_slice(&site.status_json(None)).unwrap();
        assert_eq!(body["now"]["redis_up"], false, "nothing read yet");
        assert!(body["now"]["status"].is_null());
        let metrics = site.metrics();
        assert!(
            metrics.contains("\nringcrawl_cluster_redis_up 0\n"),
            "{metrics}"
        );

        let mut status = ClusterStatus::default();
        (status.partitions, status.records) = (256, 7);
        site.watch().read(1.0, status.clone());
        site.watch().read(2.0, status.clone());
        site.watch().failed(3.0, "redis: connection refused".into());
        let body: serde_json::Value = serde_json::from_slice(&site.status_json(None)).unwrap();
        assert_eq!(body["now"]["redis_up"], false);
        assert_eq!(body["now"]["error"], "redis: connection refused");
        assert_eq!(body["now"]["status"]["records"], 7, "the last read");
        assert_eq!(body["now"]["read_at"], 2.0);
        assert_eq!(body["history"].as_array().unwrap().len(), 2);
        let since: serde_json::Value =
            serde_json::from_slice(&site.status_json(Some(1.0))).unwrap();
        assert_eq!(since["history_kept"], 1);
        let metrics = site.metrics();
        assert!(
            metrics.contains("\nringcrawl_cluster_records_total 7\n"),
            "{metrics}"
        );
        assert!(
            metrics.contains("ringcrawl_cluster_redis_up 0\n"),
            "{metrics}"
        );
        assert_eq!(
            route(
                &Request {
                    path: "/cluster.js".into(),
                    ..Request::default()
                },
                &site
            )
            .status,
            200
        );
    }

    #[test]
    fn the_history_keeps_the_last_hour() {
        let mut watch = Watch::default();
        for t in 0..HISTORY_LEN + 5 {
            watch.read(t as f64, ClusterStatus::default());
        }
        assert_eq!(watch.history.len(), HISTORY_LEN);
        assert_eq!(watch.history.front().unwrap().t, 5.0);
    }
}
