//! Not API: what `cargo bench` times of the engine, where no public call
//! reaches it alone (criterion benchmarks are crates of their own and see
//! only what is `pub`): the host hash every link is routed by
//! (benches/routing.rs), a shard's frontier looked over for the status
//! page's top hosts (benches/top_hosts.rs), and a shard's TLS client with
//! its session cache (benches/tls_handshake.rs).
//!
//! Behind the `bench-hooks` feature, which only the crate's own
//! dev-dependency enables; hidden from the docs, and free to change with
//! the engine. The frontier is handed out whole, built here, so that its
//! jobs and politeness settings stay crate-private.

use std::time::Instant;

use crate::crawl::frontier::{Frontier, Next, Politeness};
use crate::job::Job;
use crate::output::top_hosts::TopHosts;

pub use crate::keys::shard_for;
pub use crate::net::tls::{tickets_per_key, StoreCounts, TlsClient, TlsError, TlsOptions};

/// A shard's frontier holding `hosts` hosts (`h{i}.bench.test`), as a
/// crawl leaves it: each fetched once (one in seven failed), the even ones
/// live with two URLs more queued, the odd ones resting.
pub struct HostsFrontier(Frontier);

impl HostsFrontier {
    /// The frontier of `hosts` hosts.
    pub fn new(hosts: usize) -> Self {
        let now = Instant::now();
        let mut f = Frontier::new(Politeness {
            robots: false,
            per_host: 1,
            host_memory: usize::MAX,
            ..Politeness::default()
        });
        for i in 0..hosts {
            f.offer(Job::root(format!("http://h{i}.bench.test/"), 10), now);
        }
        while let Next::Fetch(job) = f.next(now) {
            let host = ringcrawl_links::urls::host_of(&job.url).to_string();
            let failed = host
                .strip_prefix('h')
                .and_then(|rest| rest.split('.').next())
                .and_then(|i| i.parse::<usize>().ok())
                .is_some_and(|i| i.is_multiple_of(7));
            f.release(&host, failed, now);
        }
        for i in (0..hosts).step_by(2) {
            for page in 0..2 {
                f.offer(Job::root(format!("http://h{i}.bench.test/{page}"), 10), now);
            }
        }
        HostsFrontier(f)
    }

    /// What a shard's status publish computes: the `n` hosts of each list
    /// at `now`.
    pub fn top_hosts(&self, now: Instant, n: usize) -> TopHosts {
        self.0.top_hosts(now, n)
    }
}
