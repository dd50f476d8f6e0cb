//! A crawl inside a tokio program: the crawl runs on threads of its own
//! (one glommio executor per core; a blocking task only waits for it), its
//! pages arrive through the `PageStream` turned into a `futures::Stream`, and
//! go on through a `tokio::sync::mpsc` channel to a worker task, as a
//! service would hand them on. Prints the pages by status.
//!
//! `cargo run --example tokio_stream -- http://localhost:8080/`
use std::collections::BTreeMap;

use futures_lite::StreamExt;

type Error = Box<dyn std::error::Error + Send + Sync>;

fn main() -> Result<(), Error> {
    // While the process has one thread, before the runtime starts its
    // workers (what `prepare` does, and why then: its docs).
    ringcrawl::process::prepare();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(crawl())
}

async fn crawl() -> Result<(), Error> {
    let root = std::env::args().nth(1).ok_or("usage: tokio_stream URL")?;
    let mut crawler = ringcrawl::Crawler::builder().root(root).build()?;
    // At most 8 MiB of pages wait for this task; past that the crawl
    // starts no new fetch until it catches up.
    let mut pages = crawler.pages(8 << 20).into_stream();
    let running = tokio::task::spawn_blocking(move || crawler.run());

    let (tx, mut rx) = tokio::sync::mpsc::channel::<(String, Option<u16>)>(64);
    let worker = tokio::spawn(async move {
        let mut by_status: BTreeMap<String, u64> = BTreeMap::new();
        while let Some((_url, status)) = rx.recv().await {
            let key = status.map_or("error".to_string(), |s| s.to_string());
            *by_status.entry(key).or_default() += 1;
        }
        by_status
    });
    while let Some(owned) = pages.next().await {
        let page = owned.page();
        tx.send((page.url().to_string(), page.status())).await?;
    }
    drop(tx);

    let by_status = worker.await?;
    let report = running.await??;
    for (status, n) in &by_status {
        println!("{status:>20} {n}");
    }
    println!("{} URLs in {:.2?}", report.urls(), report.elapsed());
    Ok(())
}
