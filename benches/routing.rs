//! `cargo bench --bench routing`: `keys::shard_for`, the host hash every
//! link goes through to find the shard that owns it, on a mix of host names
//! (short, long, IP, multi-label) for 2 and 16 shards. The engine's hash,
//! reached through the `bench-hooks` feature (not API).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ringcrawl::bench_hooks::shard_for;

fn hosts() -> Vec<String> {
    let mut hosts = Vec::new();
    for i in 0..256 {
        hosts.push(match i % 8 {
            0 => format!("h{i}.site.test"),
            1 => format!("www.example-{i}.com"),
            2 => format!("127.0.0.{}", i % 250 + 1),
            3 => format!("cdn-{i}.static.images.example.co.uk"),
            4 => format!("blog{i}.example.org"),
            5 => format!("a{i}.b.c.d.example.net"),
            6 => format!("Mixed-Case-{i}.Example.COM"),
            _ => format!("xn--bcher-{i}kva.example"),
        });
    }
    hosts
}

fn bench_routing(c: &mut Criterion) {
    let hosts = hosts();
    let mut group = c.benchmark_group("shard_for");
    group.throughput(Throughput::Elements(hosts.len() as u64));
    for shards in [2usize, 16] {
        group.bench_function(format!("{}_hosts/{shards}_shards", hosts.len()), |b| {
            b.iter(|| {
                hosts
                    .iter()
                    .map(|h| shard_for(black_box(h), shards))
                    .sum::<usize>()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_routing);
criterion_main!(benches);
