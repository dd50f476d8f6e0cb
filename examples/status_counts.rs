//! Count the pages of a site by HTTP status (errors by kind).
//!
//! `cargo run --example status_counts -- http://localhost:8080/`

#![allow(
    clippy::unwrap_used,
    reason = "the tally's lock is poisoned only if a callback panicked, which this example does not"
)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = std::env::args().nth(1).ok_or("usage: status_counts URL")?;
    let counts: Arc<Mutex<BTreeMap<String, u64>>> = Arc::default();
    let tally = counts.clone();
    let report = ringcrawl::Crawler::builder()
        .root(root)
        .on_page(move |page| {
            let key = match (page.status(), page.error_kind()) {
                (Some(status), _) => status.to_string(),
                (None, kind) => kind.map_or("error".to_string(), |k| k.to_string()),
            };
            *tally.lock().unwrap().entry(key).or_default() += 1;
        })
        .build()?
        .run()?;
    for (status, n) in counts.lock().unwrap().iter() {
        println!("{status:>20} {n}");
    }
    println!("{} URLs in {:.2?}", report.urls(), report.elapsed());
    Ok(())
}
