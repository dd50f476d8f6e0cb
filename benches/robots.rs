//! `cargo bench --bench robots`: what a crawl that obeys robots.txt does
//! for every URL it hands out (is this path allowed?), and once per origin
//! (parse the file), with ringcrawl's parser (`ringcrawl_robots::Robot`)
//! beside texting_robots 0.2 (what it used before, a dev-dependency now),
//! on a typical robots.txt: a `*` group of 30 rules, a few of them with
//! wildcards, and groups for other crawlers. Criterion reports paths/s;
//! ns/path is the time per iteration divided by the number of paths.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "a benchmark's inputs are its own; the workspace's panic-free lints are for what servers send"
)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ringcrawl_robots::Robot;

/// A robots.txt as a news or shop site writes it.
const TXT: &str = "\
# robots.txt for www.example.com
User-agent: Googlebot
Disallow: /search
Allow: /search/about
Disallow: /*?sessionid=

User-agent: Bingbot
Crawl-delay: 5
Disallow: /private/

User-agent: AhrefsBot
User-agent: SemrushBot
Disallow: /

User-agent: *
Disallow: /admin/
Disallow: /cart
Disallow: /checkout/
Disallow: /account/
Disallow: /login
Disallow: /logout
Disallow: /register
Disallow: /search
Disallow: /api/
Disallow: /cgi-bin/
Disallow: /tmp/
Disallow: /print/
Disallow: /*?sort=
Disallow: /*?filter=
Disallow: /*&page=
Disallow: /*.json$
Disallow: /*.xml$
Disallow: /wp-admin/
Allow: /wp-admin/admin-ajax.php
Disallow: /trackback/
Disallow: /feed/
Disallow: /comments/feed/
Disallow: /tag/*/page/
Disallow: /author/
Allow: /search/help
Disallow: /preview
Disallow: /drafts/
Disallow: /internal/
Disallow: /beta/
Disallow: /static/private/
Crawl-delay: 1

Sitemap: https://www.example.com/sitemap.xml
Sitemap: https://www.example.com/news-sitemap.xml
";

/// The paths of a typical page's links, most of them allowed.
const PATHS: &[&str] = &[
    "/",
    "/news/2024/05/some-article-title.html",
    "/products/widget-2000",
    "/products/widget-2000?sort=price",
    "/category/tools?page=2",
    "/cart",
    "/search?q=widgets",
    "/tag/tools/page/3",
    "/static/css/site.css",
    "/images/logo.png",
    "/about/contact",
    "/wp-admin/admin-ajax.php",
    "/feed.xml",
    "/blog/2023/12/31/year-in-review/",
    "/help/faq#shipping",
    "/author/jane",
];

fn bench_robots(c: &mut Criterion) {
    let ours = Robot::new("ringcrawl", TXT.as_bytes());
    let theirs = texting_robots::Robot::new("ringcrawl", TXT.as_bytes()).expect("parses");
    for path in PATHS {
        assert_eq!(ours.allowed(path), theirs.allowed(path), "{path}");
    }

    let mut group = c.benchmark_group("robots_allowed");
    group.throughput(Throughput::Elements(PATHS.len() as u64));
    group.bench_function("parse", |b| {
        b.iter(|| {
            PATHS
                .iter()
                .filter(|path| ours.allowed(black_box(path)))
                .count()
        })
    });
    group.bench_function("texting_robots", |b| {
        b.iter(|| {
            PATHS
                .iter()
                .filter(|path| theirs.allowed(black_box(path)))
                .count()
        })
    });
    group.finish();

    let mut group = c.benchmark_group("robots_parse");
    group.throughput(Throughput::Bytes(TXT.len() as u64));
    group.bench_function("parse", |b| {
        b.iter(|| Robot::new("ringcrawl", black_box(TXT.as_bytes())))
    });
    group.bench_function("texting_robots", |b| {
        b.iter(|| texting_robots::Robot::new("ringcrawl", black_box(TXT.as_bytes())))
    });
    group.finish();
}

criterion_group!(benches, bench_robots);
criterion_main!(benches);
