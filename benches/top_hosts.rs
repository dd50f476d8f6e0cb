//! `cargo bench --bench top_hosts`: what a shard's once-a-second publish
//! pays for the status page's top hosts with `--status-addr` on
//! (`Frontier::top_hosts`, a look over every host it holds; the frontier
//! is `bench_hooks::HostsFrontier`'s), for a shard
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
use ringcrawl::bench_hooks::HostsFrontier;

fn bench_top_hosts(c: &mut Criterion) {
    let mut group = c.benchmark_group("top_hosts");
    for hosts in [1_000, 10_000, 100_000] {
        let f = HostsFrontier::new(hosts);
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
