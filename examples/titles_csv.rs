//! Save every HTML page's `<title>` to titles.csv (URL, title), reading
//! pages from a stream on this thread while the crawl runs on others.
//!
//! `cargo run --example titles_csv -- http://localhost:8080/`
use std::io::Write;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = std::env::args().nth(1).ok_or("usage: titles_csv URL")?;
    let mut crawler = ringcrawl::Crawler::builder().root(root).build()?;
    let pages = crawler.pages(8 << 20);
    let running = crawler.spawn();
    let mut csv = std::io::BufWriter::new(std::fs::File::create("titles.csv")?);
    writeln!(csv, "url,title")?;
    for owned in pages {
        let page = owned.page();
        let html = String::from_utf8_lossy(page.body());
        let Some(start) = html.find("<title>").map(|i| i + "<title>".len()) else {
            continue;
        };
        let title = html[start..].split("</title>").next().unwrap_or("").trim();
        writeln!(csv, "\"{}\",\"{}\"", page.url(), title.replace('"', "\"\""))?;
    }
    csv.flush()?;
    let report = running.join().map_err(|_| "the crawl panicked")??;
    println!("{} URLs; titles in titles.csv", report.urls());
    Ok(())
}
