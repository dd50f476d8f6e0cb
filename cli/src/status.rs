//! `ringcrawl cluster status --cluster URL --crawl NAME`: what a cluster
//! crawl is doing, read from its Redis (the library's
//! [`ringcrawl::cluster_status`]), as a table or as JSON; or, with
//! `--serve ADDR`, served live until interrupted (`serve::cluster`).
//!
//! Not the crawl itself, nor its flags (`cli/`, with the crawl's).

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::cli::{cluster_url, StatusArgs};
use crate::serve::cluster::ClusterServer;

/// Run `ringcrawl cluster status`.
pub fn main(args: StatusArgs) -> ExitCode {
    let url = match cluster_url(&args.cluster, args.cluster_password_file.as_deref()) {
        Ok(url) => url,
        Err(e) => {
            eprintln!("ringcrawl cluster status: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(addr) = args.serve {
        return serve(addr, &url, &args);
    }
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

/// `--serve ADDR`: serve the crawl's numbers until SIGINT or SIGTERM
/// (exit 0: the watcher's normal end; a second signal from someone else
/// exits at once, as for a crawl).
fn serve(addr: std::net::SocketAddr, url: &str, args: &StatusArgs) -> ExitCode {
    let interrupted = Arc::new(AtomicBool::new(false));
    if let Err(e) = crate::signals::watch(interrupted.clone()) {
        eprintln!("ringcrawl cluster status: {e}");
        return ExitCode::from(1);
    }
    let shown = ringcrawl::redacted_url(&args.cluster);
    let server = match ClusterServer::start(addr, url, &shown, &args.crawl, false) {
        Ok(server) => server,
        Err(e) => {
            eprintln!("ringcrawl cluster status: {e:#}");
            return ExitCode::from(2);
        }
    };
    while !interrupted.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(50));
    }
    server.stop();
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
