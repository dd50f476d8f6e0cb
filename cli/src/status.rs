//! `ringcrawl cluster status --cluster URL --crawl NAME`: what a cluster
//! crawl is doing, read from its Redis (the library's
//! [`ringcrawl::cluster_status`]), as a table or as JSON.
//!
//! Not the crawl itself, nor its flags (`cli/`, with the crawl's).

use std::process::ExitCode;

use crate::cli::{cluster_url, StatusArgs};

/// Run `ringcrawl cluster status`.
pub fn main(args: StatusArgs) -> ExitCode {
    let url = match cluster_url(&args.cluster, args.cluster_password_file.as_deref()) {
        Ok(url) => url,
        Err(e) => {
            eprintln!("ringcrawl cluster status: {e}");
            return ExitCode::from(2);
        }
    };
    let status = match ringcrawl::cluster_status(&url, &args.crawl) {
        Ok(status) => status,
        Err(e) => {
            eprintln!("ringcrawl cluster status: {e}");
            return ExitCode::from(1);
        }
    };
    if status.partitions == 0 {
        eprintln!(
            "ringcrawl cluster status: no crawl {:?} on {}",
            args.crawl,
            ringcrawl::redacted_url(&args.cluster)
        );
        return ExitCode::from(1);
    }
    if args.json {
        match serde_json::to_string_pretty(&status) {
            Ok(json) => println!("{json}"),
            Err(e) => {
                eprintln!("ringcrawl cluster status: {e}");
                return ExitCode::from(1);
            }
        }
    } else {
        print!("{}", table(&args.crawl, &status));
    }
    ExitCode::SUCCESS
}

/// The status as text.
fn table(crawl: &str, s: &ringcrawl::ClusterStatus) -> String {
    let mut out = format!(
        "crawl {crawl}: {} partitions ({} without an owner), {} roots\n\
         streams: {} entries ({} read by an owner, not done yet), {} URLs appended in all\n\
         records: {}\n\n",
        s.partitions, s.unowned, s.roots, s.entries, s.in_flight, s.urls_added, s.records
    );
    out.push_str(&format!(
        "{:<32} {:>6} {:>10} {:>12} {:>10}\n",
        "node", "alive", "partitions", "records", "pages/s"
    ));
    for n in &s.nodes {
        out.push_str(&format!(
            "{:<32} {:>6} {:>10} {:>12} {:>10.1}\n",
            n.name,
            if n.alive { "yes" } else { "no" },
            n.partitions,
            n.records,
            n.pages_per_sec
        ));
    }
    let rate: f64 = s
        .nodes
        .iter()
        .filter(|n| n.alive)
        .map(|n| n.pages_per_sec)
        .sum();
    out.push_str(&format!(
        "{:<32} {:>6} {:>10} {:>12} {:>10.1}\n",
        "all", "", "", s.records, rate
    ));
    out
}
