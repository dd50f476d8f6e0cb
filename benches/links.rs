//! `cargo bench --bench links`: link extraction (tokenizing, entity
//! decoding, URL resolution and normalisation) in MB/s of HTML, on a page of
//! the synthetic site (~6 KB) and on a generated ~500 KB page shaped like a
//! long encyclopedia article: `extract_links` as the crawler runs it (the
//! hand-written scanner) beside `tokenize_links` (html5gum, the reference and
//! fallback), side by side in one run; and `page_links` (the charset
//! sniffed first, as a shard reads a page) beside `page_links_known` with a
//! table that knows the page's links (counted, not resolved); and
//! `site_in_crawl_order`: `page_links_known` over every page of that site
//! in a fixed shuffled order, learning as a shard does, two tables of the
//! shards' size (2 MiB) taking the pages in turn, as two shards would.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "a benchmark's inputs are its own; the workspace's panic-free lints are for what servers send"
)]

use std::fmt::Write as _;
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ringcrawl_links::{
    extract_links, page_links, page_links_known, scan_links, tokenize_links, KnownLinks,
};
use ringcrawl_site::server::Reply;
use ringcrawl_site::synth::{SiteSpec, SynthSite};
use url::Url;

/// Page 1 of the site scripts/bench.sh crawls (20,000 pages, 10 links).
fn synth_page() -> Vec<u8> {
    let site = SynthSite::new(SiteSpec {
        pages: 20_000,
        links: 10,
        page_bytes: 6000,
        ..SiteSpec::default()
    });
    match site.respond("/p/1.html") {
        Reply::Http { body, .. } => body,
        other => panic!("unexpected reply {other:?}"),
    }
}

/// A ~500 KB article: head with styles and scripts, a long nav, sections of
/// prose dense with links (relative, absolute, fragments, entities), tables,
/// images, inline scripts holding markup that must not be followed, and a
/// footer of external links.
fn big_page(target: usize) -> Vec<u8> {
    let mut s = String::with_capacity(target + 4096);
    s.push_str(
        "<!DOCTYPE html>\n<html lang=\"en\" class=\"client-nojs\">\n<head>\n<meta charset=\"UTF-8\">\n\
         <title>Web crawler &mdash; The Free Encyclopedia</title>\n\
         <link rel=\"stylesheet\" href=\"/w/load.php?lang=en&amp;modules=site.styles&amp;only=styles\">\n\
         <link rel=\"canonical\" href=\"https://en.example.org/wiki/Web_crawler\">\n\
         <style>.mw-body{margin:0 auto;max-width:60em}a.new{color:#d33}</style>\n\
         <script>var RLCONF={\"wgTitle\":\"Web crawler\",\"html\":\"<a href='/wiki/Not_a_link'>x</a>\"};</script>\n\
         </head>\n<body class=\"mediawiki ltr skin-vector\">\n<nav id=\"mw-panel\"><ul>\n",
    );
    for i in 0..60 {
        let _ = writeln!(
            s,
            "<li id=\"n-{i}\"><a href=\"/wiki/Portal:Topic_{i}\" title=\"Portal {i}\">Topic {i}</a></li>"
        );
    }
    s.push_str("</ul></nav>\n<main id=\"content\">\n<h1 id=\"firstHeading\">Web crawler</h1>\n");
    let mut section = 0usize;
    while s.len() < target {
        section += 1;
        let _ = write!(
            s,
            "<h2><span class=\"mw-headline\" id=\"Section_{section}\">Section {section}</span></h2>\n<p>"
        );
        for k in 0..12 {
            let n = section * 31 + k * 7;
            let _ = write!(
                s,
                "A crawler visits <a href=\"/wiki/Article_{n}\" title=\"Article {n}\">article {n}</a>, \
                 follows <a href='./Article_{m}#History'>its history</a> and the \
                 <a class=\"external text\" href=\"https://www.example.org/ref/{n}?a=1&amp;b=2\" rel=\"nofollow\">reference</a>; \
                 politeness &amp; freshness matter, see <a href=#cite_note-{k}>[{k}]</a>. ",
                m = n + 1,
            );
        }
        s.push_str("</p>\n<table class=\"wikitable\"><tr><th>Name</th><th>Year</th></tr>\n");
        for r in 0..8 {
            let _ = writeln!(
                s,
                "<tr><td><a href=\"../wiki/Crawler_{section}_{r}\">Crawler {section}.{r}</a></td><td>{}</td></tr>",
                1993 + r
            );
        }
        let _ = write!(
            s,
            "</table>\n<figure><a href=\"/wiki/File:Diagram_{section}.png\" class=\"image\">\
             <img src=\"//upload.example.org/thumb/{section}.png\" width=\"220\" height=\"160\" alt=\"\"></a>\
             <figcaption>Figure {section}</figcaption></figure>\n\
             <script>document.write('<a href=\"/wiki/Script_{section}\">no</a>');</script>\n"
        );
    }
    s.push_str("</main>\n<footer><ul>\n");
    for i in 0..40 {
        let _ = writeln!(
            s,
            "<li><a href=\"https://mirror-{i}.example.net/\">Mirror {i}</a></li>"
        );
    }
    s.push_str("</ul></footer>\n</body>\n</html>\n");
    s.into_bytes()
}

fn bench_links(c: &mut Criterion) {
    let small = synth_page();
    let small_url = Url::parse("http://127.0.0.1:8080/p/1.html").expect("url");
    let big = big_page(500_000);
    let big_url = Url::parse("https://en.example.org/wiki/Web_crawler").expect("url");
    let cases = [
        ("synth_page", &small, &small_url),
        ("big_article", &big, &big_url),
    ];
    let mut group = c.benchmark_group("extract_links");
    for (name, html, url) in cases {
        let links = extract_links(html, url);
        assert_eq!(
            scan_links(html, url).as_ref(),
            Some(&links),
            "{name}: the scanner must handle the page and agree"
        );
        assert_eq!(tokenize_links(html, url), links, "{name}");
        let kb = html.len() / 1000;
        let n = links.len();
        group.throughput(Throughput::Bytes(html.len() as u64));
        group.bench_function(format!("{name}/{kb}KB_{n}links/scanner"), |b| {
            b.iter(|| extract_links(black_box(html), url))
        });
        group.bench_function(format!("{name}/{kb}KB_{n}links/html5gum"), |b| {
            b.iter(|| tokenize_links(black_box(html), url))
        });
        // What a shard does: the page's charset sniffed, then its links;
        // and the same with a table that knows the page's links already
        // (every later sight of a link the crawl routed).
        group.bench_function(format!("{name}/{kb}KB_{n}links/page_links"), |b| {
            b.iter(|| page_links(black_box(html), url, None))
        });
        let mut known = KnownLinks::with_slots(64 << 10);
        let first = page_links_known(html, url, None, false, &known);
        for (key, link) in first.keys.iter().zip(&first.links) {
            if let Some(key) = key {
                known.learn(*key, link);
            }
        }
        let again = page_links_known(html, url, None, false, &known);
        assert_eq!(again.links.len() + again.known, n, "{name}");
        let k = again.known;
        group.bench_function(
            format!("{name}/{kb}KB_{n}links/page_links_known_{k}"),
            |b| b.iter(|| page_links_known(black_box(html), url, None, false, &known)),
        );
    }
    group.finish();
}

/// A table of `bytes` (the most slots that fit, whatever a slot's size).
fn table_of(bytes: usize) -> KnownLinks {
    let mut slots = bytes;
    loop {
        let table = KnownLinks::with_slots(slots);
        if table.memory() <= bytes {
            return table;
        }
        slots /= 2;
    }
}

fn bench_site(c: &mut Criterion) {
    let site = SynthSite::new(SiteSpec {
        pages: 20_000,
        links: 10,
        page_bytes: 6000,
        ..SiteSpec::default()
    });
    let mut pages: Vec<(Url, Vec<u8>)> = (1..20_000)
        .filter_map(|i| match site.respond(&format!("/p/{i}.html")) {
            Reply::Http { body, .. } => Some((
                Url::parse(&format!("http://127.0.0.1:8080/p/{i}.html")).unwrap(),
                body,
            )),
            _ => None,
        })
        .collect();
    // A crawl does not take the pages in their numbers' order.
    let mut x: u64 = 12345;
    for i in (1..pages.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        pages.swap(i, (x % (i as u64 + 1)) as usize);
    }
    let crawl = |pages: &[(Url, Vec<u8>)]| {
        let mut tables = [table_of(2 << 20), table_of(2 << 20)];
        let (mut links, mut known) = (0, 0);
        for (i, (url, body)) in pages.iter().enumerate() {
            let table = &mut tables[i % 2];
            let found = page_links_known(body, url, None, false, table);
            links += found.links.len() + found.known;
            known += found.known;
            for (key, link) in found.keys.iter().zip(&found.links) {
                if let Some(key) = key {
                    table.learn(*key, link);
                }
            }
        }
        (links, known)
    };
    let (links, known) = crawl(&pages);
    eprintln!(
        "site_in_crawl_order: {} pages, {links} links, {known} known ({:.1}%)",
        pages.len(),
        100.0 * known as f64 / links as f64
    );
    let mut group = c.benchmark_group("site_in_crawl_order");
    group.sample_size(10);
    group.throughput(Throughput::Elements(pages.len() as u64));
    group.bench_function("page_links_known/2_tables_of_2MiB", |b| {
        b.iter(|| crawl(black_box(&pages)))
    });
    group.finish();
}

criterion_group!(benches, bench_links, bench_site);
criterion_main!(benches);
