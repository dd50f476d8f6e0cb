//! Command-line flags (clap derive), turned into the library's
//! [`CrawlerBuilder`](ringcrawl::CrawlerBuilder): the command line has no
//! crawl path of its own.
//!
//! The flags are the chapter's (`--max-redirect`, `--max-tries`,
//! `--max-tasks`, `--exclude`, `--strict`/`--lenient`, `-v`/`-q`, with the
//! chapter's underscore spellings accepted too) plus what a crawler on a
//! modern machine needs. Nothing here starts a thread or opens a socket.
//!
//! - `args`: the flags, defined once (names, values, defaults, help),
//!   and the subcommands;
//! - `build`: the flags as the library's builder;
//! - `cluster_auth`: the cluster's Redis password from a file or the
//!   environment, off the command line;
//! - `help`: the help's closing text, shell completions, the man page;
//! - `host_rule`: the syntax of `--host-rule`;
//! - `outcome`: the line of a crawl that fetched nothing;
//! - `resume`: the flags a resume refuses;
//! - `values`: the syntax of `--resolve`, `--dns-server`, `--robots-retries`;
//! - `units`: durations, sizes and rates.

mod args;
mod build;
mod cluster_auth;
mod help;
mod host_rule;
mod outcome;
mod proxy_env;
mod resume;
mod units;
mod values;

#[cfg(test)]
mod tests;

use thiserror::Error;

use ringcrawl::{BuildError, Setting};

pub use args::{Args, ClusterCommand, Command, StatusArgs};
pub use cluster_auth::cluster_url;
pub use help::{completions, man};
pub use outcome::{failed_starts, untrusted_certificate};
pub use resume::{refused_at_resume, stored_args};

/// A flag whose value cannot be used; the message is one line for the user.
#[derive(Debug, Error)]
pub enum ArgsError {
    #[error("no roots given (pass at least one URL, or --demo)")]
    NoRoots,
    #[error("--robots-retries {0:?}: expected DURATION,... (1,5,15,40 or 500ms,2s; bare numbers are seconds) or none")]
    Retries(String),
    #[error("--resolve {0:?}: expected HOST:PORT:ADDR[,ADDR...]")]
    Resolve(String),
    #[error("--resolve {0:?}: HOST is a name, an IPv4 address or * (any name)")]
    ResolveHost(String),
    #[error("--dns-server {0:?}: expected an IP address, optionally with :PORT")]
    DnsServer(String),
    #[error("--header {0:?}: expected 'Name: value'")]
    Header(String),
    #[error("--auth: expected HOST[:PORT]:USER:PASSWORD (the password hidden here)")]
    Auth,
    #[error("--max-size-per-type {0:?}: expected TYPE=SIZE (image/*=1M)")]
    TypeSize(String),
    /// The cluster's password could not be had or put in its URL (the
    /// message names no password).
    #[error("{0}")]
    ClusterPassword(String),
    #[error("--host-rule {0:?}: {1}")]
    HostRule(String, String),
    /// A value the crawl's builder refused (the root's own message, or the
    /// flag named after the setting).
    #[error("{}", build_message(.0))]
    Build(#[from] BuildError),
}

fn build_message(e: &BuildError) -> String {
    match e.setting() {
        Setting::Root => e.problem().to_string(),
        setting => format!("--{setting}: {}", e.problem()),
    }
}

/// A usage error of clap's in one line, as the crawl's own errors are:
/// its text without `error: `, the usage and the pointer to --help, its
/// lines (a list of missing flags, tips) joined.
pub fn one_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let mut out = String::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        let line = line.strip_prefix("error: ").unwrap_or(line);
        match line.strip_prefix("tip: ") {
            Some(tip) => {
                out.push_str("; ");
                out.push_str(tip);
            }
            None => {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(line);
            }
        }
    }
    out
}
