//! `ringcrawl cluster status --cluster URL --crawl NAME`: what a cluster
//! crawl is doing, read from its Redis (the library's
//! [`ringcrawl::cluster_status`]), as a table or as JSON.
//!
//! Not the crawl itself, nor its flags (`cli/`).

use std::process::ExitCode;

use clap::Parser;

/// Show a cluster crawl: its nodes, partitions, backlog and records.
#[derive(Debug, Parser)]
#[command(name = "ringcrawl cluster status", version)]
pub struct StatusArgs {
    /// The crawl's Redis server (redis://HOST:PORT/)
    #[arg(long, value_name = "URL")]
    pub cluster: String,

    /// The crawl's name
    #[arg(long, value_name = "NAME")]
    pub crawl: String,

    /// Print JSON instead of a table
    #[arg(long)]
    pub json: bool,
}

/// Run `ringcrawl cluster ARGS...` (`args` after `cluster`).
pub fn main(args: &[String]) -> ExitCode {
    let Some((command, rest)) = args.split_first() else {
        eprintln!("ringcrawl cluster: a command is needed: status");
        return ExitCode::from(2);
    };
    if command != "status" {
        eprintln!("ringcrawl cluster: unknown command {command:?} (known: status)");
        return ExitCode::from(2);
    }
    let argv = std::iter::once("ringcrawl cluster status".to_string()).chain(rest.iter().cloned());
    let args = match StatusArgs::try_parse_from(argv) {
        Ok(args) => args,
        Err(e) => e.exit(),
    };
    let status = match ringcrawl::cluster_status(&args.cluster, &args.crawl) {
        Ok(status) => status,
        Err(e) => {
            eprintln!("ringcrawl cluster status: {e}");
            return ExitCode::from(1);
        }
    };
    if status.partitions == 0 {
        eprintln!(
            "ringcrawl cluster status: no crawl {:?} on {}",
            args.crawl, args.cluster
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
