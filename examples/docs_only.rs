//! Crawl only what lies under /docs/ (plus the root and its /sitemap.xml,
//! whose pages go through the rule too), with a follow rule, and print
//! each URL as it arrives.
//!
//! `cargo run --example docs_only -- http://localhost:8080/`
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = std::env::args().nth(1).ok_or("usage: docs_only URL")?;
    let report = ringcrawl::Crawler::builder()
        .root(root)
        .follow(|link, _page| link.path().starts_with("/docs/"))
        .on_page(|page| match page.status() {
            Some(status) => println!("{status} {}", page.url()),
            None => println!("--- {} ({})", page.url(), page.error().unwrap_or("")),
        })
        .build()?
        .run()?;
    println!("{} URLs in {:.2?}", report.urls(), report.elapsed());
    Ok(())
}
