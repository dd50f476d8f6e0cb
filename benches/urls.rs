//! `cargo bench --bench urls`: what happens to every link found on a page:
//! resolve it against the page (`urls::join`, which also normalises) and
//! check it against the crawl's scope (`Scope::allows`), on the mix of link
//! forms the synthetic site writes. Criterion reports links/s; ns/link is
//! the time per iteration divided by the number of links.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "a benchmark's inputs are its own; the workspace's panic-free lints are for what servers send"
)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ringcrawl::{Scope, ScopeMode};
use ringcrawl_links::urls;
use url::Url;

/// The href values of a typical page, as written in the HTML.
const HREFS: &[&str] = &[
    "/",
    "/p/4.html",
    "/static/12.css",
    "/p/21.html",
    "/p/22.html#section-3",
    "22.html",
    "./23.html",
    "../p/24.html",
    "http://127.0.0.1:8080/p/25.html",
    "//127.0.0.1:8080/p/26.html",
    "/p/9120.html#notes&refs",
    "/p/17342.html",
    "/r/44",
    "/img/7.png",
    "/missing/3.html",
    "#top",
    "#main",
    "http://offsite-17.example/",
    "http://www.other.example/x",
    "mailto:webmaster@example.com",
];

fn bench_urls(c: &mut Criterion) {
    let page = Url::parse("http://127.0.0.1:8080/p/4.html").expect("url");
    let roots = [Url::parse("http://127.0.0.1:8080/").expect("url")];
    let strict = Scope::new(&roots, ScopeMode::Strict);
    let excluding = Scope::new(&roots, ScopeMode::Strict)
        .excluding(r"\.(pdf|zip)$")
        .expect("regex");
    let lenient_roots = [Url::parse("http://www.example.co.uk/").expect("url")];
    let lenient = Scope::new(&lenient_roots, ScopeMode::Lenient);

    let mut group = c.benchmark_group("join_and_scope");
    group.throughput(Throughput::Elements(HREFS.len() as u64));
    group.bench_function("join_only", |b| {
        b.iter(|| {
            HREFS
                .iter()
                .filter_map(|href| urls::join(&page, black_box(href)))
                .count()
        })
    });
    for (name, scope) in [
        ("strict", &strict),
        ("strict+exclude", &excluding),
        ("lenient_psl", &lenient),
    ] {
        group.bench_function(format!("join+allows/{name}"), |b| {
            b.iter(|| {
                HREFS
                    .iter()
                    .filter_map(|href| urls::join(&page, black_box(href)))
                    .filter(|url| scope.allows(url))
                    .count()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_urls);
criterion_main!(benches);
