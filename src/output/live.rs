//! The live numbers of a running crawl, for a status page or a metrics
//! endpoint ([`Live`], read as a [`LiveSnapshot`]).
//!
//! Each shard publishes a copy of its counters (its [`Stats`], the same
//! ones the end report merges) and a few gauges into a slot of its own,
//! about once a second from its watch (never from the record path), and
//! once more when it is done; a reader on any thread merges the slots on
//! demand. So once the crawl is over, a snapshot's [`Summary`] is the end
//! report's, counted by the same code. A shard never waits for a reader:
//! it `try_lock`s its slot and skips a round if a reader holds it (only its
//! last publish waits, for one clone). The fetches in flight and the URLs
//! queued come from the progress counters (`progress.rs`), live. A
//! cluster node's thread keeps its own numbers (`cluster_gauges.rs`),
//! read with the shards'.
//!
//! Without a [`Live`] handle (no status server) the shards publish
//! nothing. Not a server (the `ringcrawl` command serves these numbers,
//! `cli/src/serve/`), not their text (`metrics.rs` renders them for
//! Prometheus), and not the end report (`stats.rs`).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::config::budget::Limits;
use crate::output::cluster_gauges::{ClusterGauges, ClusterNow};
use crate::output::progress::Progress;
use crate::output::stats::{Latencies, Percentiles, ShardBalance, Stats, Summary};
use crate::output::top_hosts::{Pace, TopHosts};

/// What one shard publishes besides its [`Stats`]: how much it holds now.
#[derive(Debug, Clone, Default)]
#[allow(missing_docs)]
pub(crate) struct ShardGauges {
    /// URLs queued in its frontier, and of those the ones spilled to disk.
    pub queued: u64,
    pub queued_on_disk: u64,
    /// Bytes the queued URLs in RAM take (`--frontier-memory`).
    pub queue_bytes: u64,
    /// Hosts live (URLs queued or fetching) and resting (done, rules
    /// kept), and the bytes they take (`--host-memory`).
    pub hosts_live: u64,
    pub hosts_resting: u64,
    pub host_bytes: u64,
    /// Keys in the seen-set (RAM and disk), and the RAM it takes
    /// (`--seen-memory`).
    pub seen_keys: u64,
    pub seen_bytes: u64,
    /// Connections open (fetching, in a handshake or idle), and of those
    /// the keep-alive ones held idle.
    pub connections_open: u64,
    pub connections_idle: u64,
    /// WARC bytes handed to the writer, and files started.
    pub warc_bytes: u64,
    pub warc_files: u64,
    /// CPU time of the shard's thread.
    pub cpu: Duration,
    /// The crawl-wide budget counters as this shard last read them: pages
    /// granted and body bytes counted.
    pub budget_pages: u64,
    pub budget_bytes: u64,
    /// Its hosts that stand out (`top_hosts.rs`).
    pub top_hosts: TopHosts,
}

/// One shard's last publish.
#[derive(Debug, Default)]
struct Slot {
    published: Mutex<Option<(Stats, ShardGauges)>>,
    /// When its shard looks over its hosts again (only its shard locks
    /// it).
    pace: Mutex<Pace>,
}

/// What a crawl knows once it starts.
#[derive(Debug)]
struct Running {
    started: Instant,
    slots: Box<[Slot]>,
    progress: Arc<Progress>,
    limits: Limits,
    memory: MemoryLimits,
    /// The cookie jar's bytes, kept current by the jar.
    cookies: Option<Arc<AtomicU64>>,
}

/// The live numbers of one crawl, shared by its shards and its readers
/// (cheap to clone). Made before the crawl runs; empty until it starts.
#[derive(Debug, Clone, Default)]
pub struct Live {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    running: OnceLock<Running>,
    /// Set when the crawl is over (every shard published its last).
    finished: AtomicBool,
    /// The crawl's wall time, once it is over.
    elapsed: Mutex<Option<Duration>>,
    /// A cluster node's numbers, kept by its cluster thread.
    cluster: OnceLock<Arc<ClusterGauges>>,
}

/// The memory limits of the crawl, as set (bytes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
#[allow(missing_docs)]
pub struct MemoryLimits {
    /// `--host-memory`, `--seen-memory`, `--frontier-memory`: the whole
    /// crawl's.
    pub hosts: u64,
    pub seen: u64,
    pub queues: u64,
    /// `--tls-session-memory`: each shard's.
    pub tls_sessions_per_shard: u64,
    /// `--cookie-memory`, if the crawl keeps cookies.
    pub cookies: Option<u64>,
}

/// The crawl's numbers at one instant (see the module docs).
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
#[allow(missing_docs)]
pub struct LiveSnapshot {
    /// The crawl is over: these are its final numbers.
    pub finished: bool,
    /// Wall time since the shards started.
    pub elapsed_s: f64,
    /// The end report's numbers so far (the same as `--report-json`'s
    /// once `finished`); `shards` in it holds each shard's URLs and CPU.
    pub summary: Summary,
    /// Fetches running now.
    pub in_flight: u64,
    /// URLs queued, and of those spilled to disk.
    pub queued: u64,
    pub queued_on_disk: u64,
    pub hosts_live: u64,
    pub hosts_resting: u64,
    pub seen_keys: u64,
    pub connections_open: u64,
    pub connections_idle: u64,
    pub warc_bytes: u64,
    pub warc_files: u64,
    /// robots.txt requests made, and answered (any status).
    pub robots_requests: u64,
    pub robots_answered: u64,
    /// Memory now, by what it is counted against (bytes).
    pub memory: MemoryUse,
    /// The budgets set and what is spent of them.
    pub budgets: Budgets,
    /// What each shard holds now, by shard.
    pub shards: Vec<ShardNow>,
    /// What the crawl waits for (as the progress line says it).
    pub waiting: Waits,
    /// A cluster node's partitions, lease renewals and stream backlog
    /// (None: not a cluster crawl).
    pub cluster: Option<ClusterNow>,
    /// The hosts fetched most, queued most, failing most and backing off
    /// now (of the hosts the frontiers hold; `output::top_hosts`).
    pub top_hosts: TopHosts,
    /// The fetch latencies so far, for [`LiveSnapshot::latency_since`].
    #[serde(skip)]
    latency: Latencies,
}

/// Memory now (bytes), beside the limits it is counted against.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
#[allow(missing_docs)]
pub struct MemoryUse {
    /// Resident set of the process (`VmRSS`), 0 if unknown.
    pub rss: u64,
    pub hosts: u64,
    pub seen: u64,
    pub queues: u64,
    pub tls_sessions: u64,
    pub dns_cache: u64,
    /// The cookie jar's (0 without one).
    pub cookies: u64,
    pub limits: MemoryLimits,
}

/// The budgets (`--max-pages`, `--max-bytes`, `--max-time`): the limits
/// set, and what is spent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[non_exhaustive]
#[allow(missing_docs)]
pub struct Budgets {
    pub max_pages: Option<u64>,
    pub pages: u64,
    pub max_bytes: Option<u64>,
    pub bytes: u64,
    pub max_time_s: Option<f64>,
}

/// One shard's numbers now.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
#[allow(missing_docs)]
pub struct ShardNow {
    pub shard: usize,
    /// Records written (live), and of those errors; body bytes.
    pub pages: u64,
    pub errors: u64,
    pub bytes: u64,
    pub in_flight: u64,
    pub queued: u64,
    pub queued_on_disk: u64,
    pub hosts_live: u64,
    pub cpu_s: f64,
}

/// What the crawl waits for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
#[allow(missing_docs)]
pub struct Waits {
    pub robots_fetching: u64,
    pub robots_retrying: u64,
    pub hosts_backing_off: u64,
    pub hosts_at_per_host: u64,
    pub urls_waiting_for_hosts: u64,
}

impl Live {
    /// A handle for a crawl not started yet.
    pub fn new() -> Live {
        Live::default()
    }

    /// The crawl starts with `shards` shards (once; later calls are
    /// ignored: a handle serves one crawl). `cookies`: the jar's gauge of
    /// the bytes it holds, if there is a jar.
    pub(crate) fn begin(
        &self,
        shards: usize,
        progress: Arc<Progress>,
        limits: Limits,
        memory: MemoryLimits,
        cookies: Option<Arc<AtomicU64>>,
    ) {
        let _ = self.inner.running.set(Running {
            started: Instant::now(),
            slots: (0..shards).map(|_| Slot::default()).collect(),
            progress,
            limits,
            memory,
            cookies,
        });
    }

    /// Shard `id`'s numbers now. Skipped if a reader holds the slot,
    /// unless `last` (the shard is done: this is its final word). Whether
    /// they were published.
    pub(crate) fn publish(
        &self,
        id: usize,
        last: bool,
        now: impl FnOnce() -> (Stats, ShardGauges),
    ) -> bool {
        let Some(slot) = self.inner.running.get().and_then(|r| r.slots.get(id)) else {
            return false;
        };
        let guard = if last {
            Some(slot.published.lock().unwrap_or_else(|e| e.into_inner()))
        } else {
            slot.published.try_lock().ok()
        };
        match guard {
            Some(mut guard) => {
                *guard = Some(now());
                true
            }
            None => false,
        }
    }

    /// Shard `id`'s top hosts at `now`: `look`'s, when a look is due
    /// ([`Pace`]) or `last`, else the last look's.
    pub(crate) fn top_hosts(
        &self,
        id: usize,
        now: Instant,
        last: bool,
        look: impl FnOnce() -> TopHosts,
    ) -> TopHosts {
        match self.inner.running.get().and_then(|r| r.slots.get(id)) {
            Some(slot) => slot
                .pace
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .lists(now, last, look),
            None => look(),
        }
    }

    /// The counters a cluster node's thread keeps for the snapshots (made
    /// on the first call: a crawl that is no cluster's has none).
    pub(crate) fn cluster_gauges(&self) -> Arc<ClusterGauges> {
        self.inner.cluster.get_or_init(Default::default).clone()
    }

    /// The crawl is over, after `elapsed`: snapshots are final.
    pub(crate) fn end(&self, elapsed: Duration) {
        *self.inner.elapsed.lock().unwrap_or_else(|e| e.into_inner()) = Some(elapsed);
        self.inner.finished.store(true, Ordering::Release);
    }

    /// Whether the crawl is over.
    pub fn finished(&self) -> bool {
        self.inner.finished.load(Ordering::Acquire)
    }

    /// The numbers now; None before the crawl starts.
    pub fn snapshot(&self) -> Option<LiveSnapshot> {
        let running = self.inner.running.get()?;
        let finished = self.finished();
        let elapsed = match *self.inner.elapsed.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(elapsed) if finished => elapsed,
            _ => running.started.elapsed(),
        };
        let mut merged = Stats::default();
        let mut all = ShardGauges::default();
        let mut shards = Vec::with_capacity(running.slots.len());
        let mut tops = Vec::with_capacity(running.slots.len());
        for (id, slot) in running.slots.iter().enumerate() {
            let published = slot.published.lock().unwrap_or_else(|e| e.into_inner());
            let (stats, gauges) = match published.as_ref() {
                Some((stats, gauges)) => (Some(stats), gauges.clone()),
                None => (None, ShardGauges::default()),
            };
            let balance = ShardBalance {
                urls: stats.map_or(0, |s| s.urls),
                cpu_ms: gauges.cpu.as_secs_f64() * 1e3,
            };
            if let Some(stats) = stats {
                merged.merge(stats, Some(balance.clone()));
            } else {
                merged.shards.push(balance.clone());
            }
            drop(published);
            let counters = running.progress.shard(id);
            let load =
                |f: fn(&crate::output::progress::ShardCounters) -> u64| counters.map_or(0, f);
            shards.push(ShardNow {
                shard: id,
                pages: load(|c| c.pages.load(Ordering::Relaxed)),
                errors: load(|c| c.errors.load(Ordering::Relaxed)),
                bytes: load(|c| c.bytes.load(Ordering::Relaxed)),
                in_flight: load(|c| c.in_flight.load(Ordering::Relaxed)),
                queued: load(|c| c.queued.load(Ordering::Relaxed)),
                queued_on_disk: gauges.queued_on_disk,
                hosts_live: gauges.hosts_live,
                cpu_s: gauges.cpu.as_secs_f64(),
            });
            all.add(&gauges);
            tops.push(gauges.top_hosts);
        }
        let waiting = running.progress.waiting();
        let summary = merged.report_data(elapsed, false);
        let latency = std::mem::take(&mut merged.latency);
        Some(LiveSnapshot {
            finished,
            elapsed_s: elapsed.as_secs_f64(),
            in_flight: shards.iter().map(|s| s.in_flight).sum(),
            queued: shards.iter().map(|s| s.queued).sum(),
            queued_on_disk: all.queued_on_disk,
            hosts_live: all.hosts_live,
            hosts_resting: all.hosts_resting,
            seen_keys: all.seen_keys,
            connections_open: all.connections_open,
            connections_idle: all.connections_idle,
            warc_bytes: all.warc_bytes,
            warc_files: all.warc_files,
            robots_requests: merged.robots_fetches,
            robots_answered: merged.robots_answered,
            memory: MemoryUse {
                rss: rss_bytes().unwrap_or(0),
                hosts: all.host_bytes,
                seen: all.seen_bytes,
                queues: all.queue_bytes,
                tls_sessions: merged.tls_session_bytes,
                dns_cache: merged.dns.cache_bytes,
                cookies: running
                    .cookies
                    .as_ref()
                    .map_or(0, |bytes| bytes.load(Ordering::Relaxed)),
                limits: running.memory,
            },
            budgets: Budgets {
                max_pages: running.limits.pages,
                pages: all.budget_pages,
                max_bytes: running.limits.bytes,
                bytes: all.budget_bytes,
                max_time_s: running.limits.time.map(|t| t.as_secs_f64()),
            },
            shards,
            waiting: Waits {
                robots_fetching: waiting.robots_fetching,
                robots_retrying: waiting.robots_retrying,
                hosts_backing_off: waiting.backing_off,
                hosts_at_per_host: waiting.full_hosts,
                urls_waiting_for_hosts: waiting.waiting_for_room,
            },
            top_hosts: TopHosts::merge(&tops),
            cluster: self.inner.cluster.get().map(|g| g.now()),
            summary,
            latency,
        })
    }
}

impl LiveSnapshot {
    /// The whole fetches' latency between `earlier` (a snapshot of the
    /// same crawl taken before this one; None: the crawl's start) and
    /// this one: the histograms so far less the earlier ones. None if no
    /// fetch ended in between.
    pub fn latency_since(&self, earlier: Option<&LiveSnapshot>) -> Option<Percentiles> {
        let mut interval = self.latency.total.clone();
        if let Some(earlier) = earlier {
            // Both are sums of the shards' histograms, which only grow:
            // it cannot fail unless `earlier` is another crawl's.
            interval.subtract(&earlier.latency.total).ok()?;
        }
        (!interval.is_empty()).then(|| Percentiles::of(&interval))
    }
}

impl ShardGauges {
    /// This and another shard's together (the budget counters are
    /// crawl-wide: the latest read, the largest, wins).
    fn add(&mut self, other: &ShardGauges) {
        self.queued += other.queued;
        self.queued_on_disk += other.queued_on_disk;
        self.queue_bytes += other.queue_bytes;
        self.hosts_live += other.hosts_live;
        self.hosts_resting += other.hosts_resting;
        self.host_bytes += other.host_bytes;
        self.seen_keys += other.seen_keys;
        self.seen_bytes += other.seen_bytes;
        self.connections_open += other.connections_open;
        self.connections_idle += other.connections_idle;
        self.warc_bytes += other.warc_bytes;
        self.warc_files += other.warc_files;
        self.cpu += other.cpu;
        self.budget_pages = self.budget_pages.max(other.budget_pages);
        self.budget_bytes = self.budget_bytes.max(other.budget_bytes);
    }
}

/// The resident set of this process, in bytes (`VmRSS` of
/// `/proc/self/status`, in KiB).
fn rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::record::Record;

    fn stats(urls: u64) -> Stats {
        let mut s = Stats::default();
        for _ in 0..urls {
            let mut r = Record::new("http://a.test/".into(), 0);
            r.status = Some(200);
            r.size = 10;
            s.add(&r);
        }
        s
    }

    #[test]
    fn nothing_before_the_crawl_starts_then_the_shards_merged() {
        let live = Live::new();
        assert!(live.snapshot().is_none());
        assert!(!live.publish(0, false, || panic!("no slot before begin")));
        let jar_bytes = Arc::new(AtomicU64::new(0));
        live.begin(
            2,
            Arc::new(Progress::new(2)),
            Limits::default(),
            MemoryLimits::default(),
            Some(jar_bytes.clone()),
        );
        jar_bytes.store(1234, Ordering::Relaxed);
        let gauges = |queued| ShardGauges {
            queued_on_disk: queued,
            hosts_live: 1,
            budget_pages: queued,
            ..ShardGauges::default()
        };
        assert!(live.publish(0, false, || (stats(3), gauges(1))));
        assert!(live.publish(1, false, || (stats(4), gauges(2))));
        let snap = live.snapshot().unwrap();
        assert!(!snap.finished);
        assert_eq!(snap.summary.urls, 7);
        assert_eq!(snap.summary.statuses[&200], 7);
        assert_eq!(snap.summary.bytes, 70);
        assert_eq!(snap.summary.shards.len(), 2);
        assert_eq!((snap.queued_on_disk, snap.hosts_live), (3, 2));
        assert_eq!(snap.budgets.pages, 2, "crawl-wide: the largest read");
        assert_eq!(snap.shards.len(), 2);
        assert_eq!(snap.memory.cookies, 1234, "read from the jar's gauge");
        live.end(Duration::from_secs(2));
        let snap = live.snapshot().unwrap();
        assert!(snap.finished);
        assert_eq!(snap.elapsed_s, 2.0);
        assert_eq!(snap.summary.urls_per_s, 3.5);
    }

    /// `fast` records of 10 ms and `slow` of 100 ms (whole fetch).
    fn timed(fast: u64, slow: u64) -> Stats {
        let mut s = Stats::default();
        for ms in std::iter::repeat_n(10.0, fast as usize)
            .chain(std::iter::repeat_n(100.0, slow as usize))
        {
            let mut r = Record::new("http://a.test/".into(), 0);
            r.status = Some(200);
            r.first_byte_ms = Some(1.0);
            r.elapsed_ms = ms;
            s.add(&r);
        }
        s
    }

    #[test]
    fn latency_since_an_earlier_snapshot_is_the_intervals_not_the_crawls() {
        let live = Live::new();
        live.begin(
            2,
            Arc::new(Progress::new(2)),
            Limits::default(),
            MemoryLimits::default(),
            None,
        );
        assert!(live.publish(0, false, || (timed(100, 0), ShardGauges::default())));
        let first = live.snapshot().unwrap();
        assert_eq!(first.latency_since(None).unwrap().count, 100);
        assert_eq!(
            first.latency_since(Some(&first)),
            None,
            "nothing ended between"
        );
        // Shard 0 gets 100 slow fetches more, and shard 1 publishes 50.
        assert!(live.publish(0, false, || (timed(100, 100), ShardGauges::default())));
        assert!(live.publish(1, false, || (timed(0, 50), ShardGauges::default())));
        let second = live.snapshot().unwrap();
        let interval = second.latency_since(Some(&first)).unwrap();
        assert_eq!(interval.count, 150);
        assert!((interval.p50_ms - 100.0).abs() < 0.1, "{interval:?}");
        assert!((second.summary.total.p50_ms - 100.0).abs() < 0.1);
        assert!(
            (first.summary.total.p50_ms - 10.0).abs() < 0.1,
            "so far: the fast ones"
        );
    }

    #[test]
    fn the_shards_top_hosts_merge_in_the_snapshot() {
        use crate::output::top_hosts::{HostCounts, Picker};
        let live = Live::new();
        live.begin(
            2,
            Arc::new(Progress::new(2)),
            Limits::default(),
            MemoryLimits::default(),
            None,
        );
        let top = |host: &str, fetched: u64| {
            let mut pick = Picker::new(10);
            pick.offer(
                host,
                HostCounts {
                    fetched,
                    ..HostCounts::default()
                },
            );
            ShardGauges {
                top_hosts: pick.finish(),
                ..ShardGauges::default()
            }
        };
        assert!(live.publish(0, false, || (stats(1), top("a.test", 3))));
        assert!(live.publish(1, false, || (stats(1), top("b.test", 5))));
        let snap = live.snapshot().unwrap();
        let fetched: Vec<(&str, u64)> = (snap.top_hosts.fetched.iter())
            .map(|h| (&*h.host, h.counts.fetched))
            .collect();
        assert_eq!(fetched, [("b.test", 5), ("a.test", 3)]);
    }

    #[test]
    fn a_publish_never_waits_for_a_reader_but_the_last_one_does() {
        let live = Live::new();
        live.begin(
            1,
            Arc::new(Progress::new(1)),
            Limits::default(),
            MemoryLimits::default(),
            None,
        );
        let slot = &live.inner.running.get().unwrap().slots[0];
        let held = slot.published.lock().unwrap();
        assert!(!live.publish(0, false, || panic!("skipped while a reader holds the slot")));
        drop(held);
        assert!(live.publish(0, true, || (stats(1), ShardGauges::default())));
        assert_eq!(live.snapshot().unwrap().summary.urls, 1);
    }
}
