//! `cargo bench --bench top_hosts`: what a shard's once-a-second publish
//! pays for the status page's top hosts with `--status-addr` on
//! (`Frontier::top_hosts`, a look over every host it holds), for a shard
//! holding 1,000, 10,000 and 100,000 hosts, half of them live with URLs
//! queued and some failing, half resting. Criterion reports hosts/s; the
//! time per iteration is one publish's. The engine's frontier, reached
//! through the `bench-hooks` feature (not API).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "a benchmark's inputs are its own; the workspace's panic-free lints are for what servers send"
)]

use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ringcrawl::bench_hooks::{Frontier, Job, Next, Politeness};

/// A frontier of `hosts` hosts: each fetched once (one in seven failed),
/// the even ones with two URLs more queued (live), the odd ones resting.
fn frontier(hosts: usize) -> Frontier {
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
        let i: usize = host[1..host.find('.').unwrap()].parse().unwrap();
        f.release(&host, i.is_multiple_of(7), now);
    }
    for i in (0..hosts).step_by(2) {
        for page in 0..2 {
            f.offer(Job::root(format!("http://h{i}.bench.test/{page}"), 10), now);
        }
    }
    f
}

fn bench_top_hosts(c: &mut Criterion) {
    let mut group = c.benchmark_group("top_hosts");
    for hosts in [1_000, 10_000, 100_000] {
        let f = frontier(hosts);
        let now = Instant::now();
        group.throughput(Throughput::Elements(hosts as u64));
        group.bench_with_input(BenchmarkId::from_parameter(hosts), &f, |b, f| {
            b.iter(|| black_box(f.top_hosts(now, 10)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_top_hosts);
criterion_main!(benches);
