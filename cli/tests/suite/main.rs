//! The end-to-end suite: the `ringcrawl` command and the library it is
//! built on, against real servers. It sits in the command's package
//! because Cargo gives a test the path of its own package's binaries only
//! (`CARGO_BIN_EXE_ringcrawl`). One binary: a module per area, each a file
//! named for what it covers, and `common` the helpers they share (scripted
//! sites, real servers started on loopback: dnsmasq, redis-server, a TCP
//! proxy, warcio and pywb in a venv). One binary, not one per file, because
//! each test binary links the whole crate with LTO: thirty of them were
//! most of the suite's time. The tests that measure the process itself (its
//! allocator, its peak memory) and `tests/layers` are the library's, in
//! its own `tests/`.
//!
//! Run one area with `cargo test --release --test suite cluster::`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "a test's helpers may panic too (clippy.toml allows it only in #[test] functions); the workspace's panic-free lints are for what servers send"
)]

mod common;

mod adaptive_delay;
mod archives;
mod body_types;
mod budgets;
mod charsets;
mod cli;
mod cluster;
mod cluster_faults;
mod cluster_fencing;
mod cluster_security;
mod cluster_status;
mod compaction;
mod compaction_in_run;
mod compression;
mod cookies;
mod crawl_scenarios;
mod dns_resolver;
mod examples;
mod faults;
mod host_rules;
mod hostile_servers;
mod ipv6;
mod keep_alive;
mod library;
mod meta_robots;
mod nginx;
mod output;
mod per_ip;
mod politeness;
mod proxies;
mod recrawl;
mod report_page;
mod request_headers;
mod requisites;
mod reserved_addresses;
mod resume;
mod resume_runs;
mod retry_after;
mod scale;
mod seeds;
mod sitemaps;
mod spill;
mod spill_dirs;
mod status_hosts;
mod status_server;
mod strip_query;
mod synthetic_site;
mod tls;
mod tls_sessions;
mod toolchain;
mod wacz;
mod warc_crawl;
mod warc_format;
