//! `spider-bench ROOT [CONCURRENCY] [LINKS_FILE]`: crawl ROOT with the
//! spider crate (same host only, no robots.txt, no depth limit) and print
//! `pages N` (URLs visited) and `seconds S`. With LINKS_FILE, the visited URLs
//! are written there, one per line, for bench.sh to check against the
//! expected list.

use std::io::Write;
use std::time::Instant;

use spider::tokio;
use spider::website::Website;

#[tokio::main(crate = "spider::tokio")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(root) = args.get(1) else {
        eprintln!("usage: spider-bench ROOT [CONCURRENCY] [LINKS_FILE]");
        std::process::exit(2);
    };
    let concurrency: usize = args.get(2).and_then(|c| c.parse().ok()).unwrap_or(100);

    let mut website = Website::new(root);
    website
        .with_respect_robots_txt(false)
        .with_subdomains(false)
        .with_tld(false)
        .with_depth(0)
        .with_concurrency_limit(Some(concurrency));

    let start = Instant::now();
    website.crawl().await;
    let elapsed = start.elapsed().as_secs_f64();

    let links = website.get_links();
    if let Some(path) = args.get(3) {
        let mut out = std::io::BufWriter::new(std::fs::File::create(path).expect("links file"));
        for link in &links {
            writeln!(out, "{}", link.as_ref()).expect("write links file");
        }
    }
    println!("pages {}", links.len());
    println!("seconds {elapsed:.3}");
}
