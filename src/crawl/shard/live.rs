//! The shard's side of the live numbers (`output::live`), when a status
//! server asked for them: the tallies of what the shard holds (the same
//! ones its end result carries) and the publish of a copy of its counters
//! and of its top hosts, from its watch about once a second and once when
//! it is done.
//!
//! Not the record path: nothing here runs per page, and a crawl without a
//! `Live` handle does none of it.

use std::time::Instant;

use crate::output::live::{Live, ShardGauges};
use crate::output::proxies::ProxyHealth;
use crate::output::stats::{DnsCounts, Stats, TlsHandshakes};
use crate::output::top_hosts::TOP_HOSTS;

use super::{thread_cpu_time, Shard};

impl Shard {
    /// Fill in what `stats` says of the state the shard holds now (hosts,
    /// seen-set merges, TLS sessions, queues and spill, resolver).
    pub(super) fn tally(&self, stats: &mut Stats) {
        let hosts = self.frontier.borrow().host_memory();
        stats.hosts_held = (hosts.live + hosts.resting) as u64;
        stats.host_memory_peak = hosts.peak_bytes as u64;
        stats.urls_waited_for_hosts = hosts.waited;
        stats.seen_merges = self.newness.seen.borrow().merges();
        let now = Instant::now();
        let rotation = self.fetching.rotation.borrow();
        stats.proxies = (self.fetching.proxies.all().iter())
            .map(|p| {
                let t = rotation.tally(p, now);
                ProxyHealth::new(p.to_string(), t.fetches, t.failures, t.parks, t.parked)
            })
            .collect();
        drop(rotation);
        let sessions = self.fetching.tls.session_counts();
        stats.tls_sessions = sessions.keys as u64;
        stats.tls_session_bytes = sessions.bytes as u64;
        stats.tls_session_evictions = sessions.evictions;
        let handshakes = self.fetching.tls.handshakes();
        stats.tls_handshakes = TlsHandshakes {
            full: handshakes.full,
            resumed: handshakes.resumed,
            failed: handshakes.failed,
        };
        {
            let frontier = self.frontier.borrow();
            stats.queued_left = frontier.queued() as u64;
            stats.queued_on_disk = frontier.queued_on_disk() as u64;
            let spill = frontier.spill_stats();
            stats.spill_chunks = spill.chunks;
            stats.spill_bytes = spill.written;
            stats.spill_reads = spill.reads;
        }
        let dns = self.fetching.resolver.stats();
        let (names, bytes) = self.fetching.resolver.cache_usage();
        stats.dns = DnsCounts {
            lookups: dns.lookups,
            queries: dns.queries,
            answers: dns.answers,
            timeouts: dns.timeouts,
            cache_hits: dns.cache_hits,
            negative_hits: dns.negative_hits,
            waited: dns.waited,
            early: dns.early,
            cached_names: names as u64,
            cache_bytes: bytes as u64,
        };
    }

    /// Publish this shard's numbers, if a status server wants them, at
    /// most every [`LIVE_INTERVAL`] unless `last`; `said` is when it last
    /// did (a round skipped because a reader held the slot is tried again
    /// at the next watch, 50 ms on).
    pub(super) fn publish_live(&self, said: &mut Option<Instant>, last: bool) {
        let Some(live) = &self.hooks.live else {
            return;
        };
        if !last && said.is_some_and(|at| at.elapsed() < LIVE_INTERVAL) {
            return;
        }
        let published = live.publish(self.id, last, || {
            let mut stats = self.recording.stats.borrow().clone();
            self.tally(&mut stats);
            (stats, self.gauges(live, last))
        });
        if published {
            *said = Some(Instant::now());
        }
    }

    /// How much this shard holds now, and its top hosts (looked for
    /// again when `live`'s pace says so, or `last`).
    fn gauges(&self, live: &Live, last: bool) -> ShardGauges {
        let frontier = self.frontier.borrow();
        let hosts = frontier.host_memory();
        let seen = self.newness.seen.borrow();
        let warc = self.recording.warc.as_ref();
        ShardGauges {
            queued: frontier.queued() as u64,
            queued_on_disk: frontier.queued_on_disk() as u64,
            queue_bytes: (frontier.queued_ram() + frontier.spill_ram()) as u64,
            hosts_live: hosts.live as u64,
            hosts_resting: hosts.resting as u64,
            host_bytes: (hosts.live_bytes + hosts.resting_bytes) as u64,
            seen_keys: seen.len(),
            seen_bytes: seen.memory() as u64,
            connections_open: crate::net::stream::open_here(),
            connections_idle: self.fetching.connections.borrow().held() as u64,
            warc_bytes: warc.map_or(0, |w| w.placed()),
            warc_files: warc.map_or(0, |w| w.files() as u64),
            cpu: thread_cpu_time(),
            budget_pages: self.budget.pages(),
            budget_bytes: self.budget.bytes(),
            // A look over every host it holds, at most once a second and
            // 1% of the shard's time, and only here: the page path keeps
            // two integers a host.
            top_hosts: live.top_hosts(self.id, Instant::now(), last, || {
                frontier.top_hosts(Instant::now(), TOP_HOSTS)
            }),
        }
    }
}

/// How often a shard publishes its numbers for a status server: a copy of
/// its counters (a few hundred KiB with the latency histograms) a second.
const LIVE_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);
