//! Command-line flags (clap derive), turned into the library's
//! [`CrawlerBuilder`](ringcrawl::CrawlerBuilder): the command line has no
//! crawl path of its own.
//!
//! The flags are the chapter's (`--max-redirect`, `--max-tries`,
//! `--max-tasks`, `--exclude`, `--strict`/`--lenient`, `-v`/`-q`, with the
//! chapter's underscore spellings accepted too) plus what a crawler on a
//! modern machine needs. Nothing here starts a thread or opens a socket.
//!
//! - `args`: the flags, defined once (names, values, defaults, help);
//! - `build`: the flags as the library's builder;
//! - `values`: the syntax of `--resolve`, `--dns-server`, `--robots-retries`;
//! - `units`: sizes.

mod args;
mod build;
mod units;
mod values;

#[cfg(test)]
mod tests;

use thiserror::Error;

use ringcrawl::BuildError;

pub use args::Args;

/// A flag whose value cannot be used; the message is one line for the user.
#[derive(Debug, Error)]
pub enum ArgsError {
    #[error("no roots given (pass at least one URL, or --demo)")]
    NoRoots,
    #[error("--robots-retries {0:?}: expected SECONDS,... or none")]
    Retries(String),
    #[error("--resolve {0:?}: expected HOST:PORT:ADDR[,ADDR...]")]
    Resolve(String),
    #[error("--dns-server {0:?}: expected an IP address, optionally with :PORT")]
    DnsServer(String),
    #[error("--{0}: {1} is not a number of seconds")]
    Seconds(&'static str, f64),
    /// A value the crawl's builder refused (the root's own message, or the
    /// flag named after the setting).
    #[error("{}", build_message(.0))]
    Build(#[from] BuildError),
}

fn build_message(e: &BuildError) -> String {
    match e.setting {
        "root" => e.problem.clone(),
        flag => format!("--{flag}: {}", e.problem),
    }
}
