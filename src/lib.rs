//! ringcrawl finds and downloads every page of a set of web sites, as fast as
//! the network and the servers allow. It is the crawler of "A Web Crawler
//! With asyncio Coroutines" (*500 Lines or Less*) — one queue, N workers, a
//! seen-set, stop when all work is done — rebuilt for Linux as a
//! thread-per-core io_uring program on glommio.
//!
//! ```
//! use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
//! use std::sync::Arc;
//!
//! /// Crawls the site at `root`; returns how many of its pages were HTML.
//! fn count_html(root: &str) -> Result<u64, Box<dyn std::error::Error>> {
//!     let html = Arc::new(AtomicU64::new(0));
//!     let counter = html.clone();
//!     let report = ringcrawl::Crawler::builder()
//!         .root(root)
//!         .on_page(move |page| {
//!             if page.content_type() == Some("text/html") {
//!                 counter.fetch_add(1, Relaxed);
//!             }
//!         })
//!         .follow(|link, _page| !link.path().starts_with("/private/"))
//!         .build()?
//!         .run()?;
//!     println!("{} HTML pages of {} URLs", html.load(Relaxed), report.urls());
//!     Ok(html.load(Relaxed))
//! }
//! # let site = std::sync::Arc::new(ringcrawl_site::synth::SynthSite::new(Default::default()));
//! # let server = ringcrawl_site::server::Server::start(site.handler())?;
//! # assert!(count_html(&format!("http://{}/", server.addr()))? > 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! (The README's example: the same code, crawling a real site.)
//!
//! The public API is a handful of types: [`Crawler`] (built by
//! [`CrawlerBuilder`], run by [`Crawler::run`]), [`Page`] (each URL as it
//! arrives, to a handler on the shard that fetched it, or as an
//! [`OwnedPage`] through a bounded [`PageStream`]), [`Interrupt`] and
//! [`Report`]; [`process::prepare`] for a binary. Errors are types to
//! match: [`BuildError`] names the refused [`Setting`], [`CrawlError`] why
//! a crawl could not run, [`ErrorKind`] why a page has no whole answer. The library prints
//! nothing: diagnostics go to the [`log`] facade.
//!
//! # Map
//!
//! ```text
//! roots ──shard_for(host)──▶ owning shard's frontier ──▶ worker ──▶ fetch (HTTP/1.1, TLS or not, io_uring TcpStream)
//!                                  ▲                                   │
//!                                  │                        response head + body
//!                                  │                                   ▼
//!           mesh (bounded channels, batched) ◀──shard_for(host)── links ◀── record (stats, JSONL)
//! ```
//!
//! The tree is the map, one folder a module. Imports point one way, and
//! no two modules (nor two files) import each other in a circle:
//!
//! ```text
//! api  ->  crawl  ->  {net, output, state, cluster, config}  ->  leaves {web, job, keys, sync, process, defaults}
//! ```
//!
//! The middle row may import sideways (state and cluster use output,
//! output reads config, config holds net's settings types); a leaf
//! imports nothing of the crate. `tests/layers/` checks the rule from
//! the sources.
//!
//! - `api` the public face: the builder, the report, and re-exported from
//!   the engine the pages and the page stream (`crawl::page`,
//!   `crawl::stream`: the engine never imports `api`); it turns settings
//!   into a `config::Config`, the validated settings every shard reads
//!   (the `ringcrawl` command, a crate of its own in `cli/`, goes through
//!   the same builder). Pages reach the caller's hooks on the shard that
//!   fetched them (`crawl::shard`'s page path), before their links are
//!   routed, so a follow rule decides what is routed.
//! - [`process`] what a binary does to its process before a crawl (the
//!   open-file limit, `membarrier` registration); the library never does.
//!   A leaf.
//! - [`defaults`] the default of every setting a user can change, defined
//!   there once: the builder starts from them and the command's flags
//!   show them. A leaf.
//! - `crawl` the engine. `crawl::run()` is the only code that knows
//!   threads: executor pool, mesh, join. `crawl::mesh` is everything
//!   cross-core: batching (links, lent pages and their returns) and the
//!   crawl-wide fetch slots. `crawl::shard` is one core's state
//!   and tasks, a file a job: the dispatcher, the fetch-and-record path of a
//!   page, robots.txt, sitemaps, the spill of queues to disk (DMA I/O on
//!   per-shard segment files). The pure parts it decides with:
//!   `crawl::seen` (the seen-set in bounded memory: a RAM bucket of
//!   keyed 64-bit fingerprints merged into a sorted run on disk, with a
//!   Bloom filter that answers most new URLs without the disk; the shard's
//!   `seen.rs` holds the URLs it cannot answer at once as pending, and the
//!   tallies of their pages with them),
//!   `crawl::frontier` (per-host queues and politeness: fair
//!   turns, per-host concurrency and delay, backoff, robots first; queues
//!   in bounded RAM, their tails spilled to disk through I/O requests it
//!   hands out and completions it takes),
//!   `crawl::seeds` (seed lists). robots.txt (what an answer means, and
//!   whether a URL may be fetched) is `ringcrawl-robots` (`crates/robots`).
//!   HTML → absolute normalised URLs (a hand-written scanner, html5gum's
//!   tokenizer where the scanner is unsure), a page's charset and its
//!   robots `<meta>` tags are a crate of their own, `ringcrawl-links`
//!   (`crates/links`), which the page path calls; so are sitemaps
//!   (sitemaps.org urlsets and indexes, gzipped or not, → their `<loc>`s,
//!   bounded), `ringcrawl-sitemap` (`crates/sitemap`): a fetch is read as
//!   one when its hop path, `job::hops`, says it is.
//! - `net` one exchange with a server: `net::fetch` (one HTTP/1.1
//!   exchange with limits and a deadline, on a reused keep-alive connection
//!   when the shard's `net::conn_pool` has one for the endpoint),
//!   `net::tls` (the shard's rustls client for `https`: trust, session
//!   resumption from a cache keyed by name and port and bounded by bytes,
//!   TLS errors as record kinds), `net::stream` (plain or TLS
//!   over a TCP stream whose every read and write ends by the deadline),
//!   `net::dns` (the per-shard resolver). Request bytes, head parsing,
//!   body framing and content decoding are pure and a crate of their
//!   own, `ringcrawl-http1` (`crates/http1`), which the fetch drives;
//!   so are DNS messages, `ringcrawl-dns-wire` (`crates/dns-wire`).
//! - `output` what a crawl shows and leaves behind: `output::record`,
//!   `output::stats`, `output::sink` (a shard's buffered lines) and
//!   `output::writer` (the thread that writes them, so no shard waits on
//!   the output), `output::progress`, `output::warc` (the per-shard WARC
//!   files) and `output::wacz` (the WACZ package made of them once the
//!   crawl is over, on the thread that ran it); `output::captures`, an
//!   earlier crawl's captures read back from its records for a recrawl
//!   (`--since`). WARC records and reading one back, CDXJ lines, SURT and
//!   their timestamps are pure and a crate of their own,
//!   `ringcrawl-warc` (`crates/warc`).
//! - `state` what a crawl keeps to be resumed (`--state DIR`): the
//!   directory's layout, lock, manifest and atomic checkpoints
//!   (`state::StateDir`); `state::session`, one run's begin (create, or
//!   open, check, repair and read for a resume) and checkpoints;
//!   `state::repair`, which cuts the output files back to their last whole
//!   line or record after a `kill -9`; `state::index` and
//!   `state::reindex`, the CDXJ lines a resume keeps and those a kill
//!   lost after their pages' records, made again from the WARC records;
//!   `state::done` (the log of records
//!   read as the list of done URLs) and `state::journal` (the journals of
//!   discovered URLs, read back). Main-thread `std::fs` code, run before
//!   the shards start and after they stop; the shards' side (journal
//!   writing, replay) is `crawl::shard`'s `journal.rs`.
//! - `cluster` many machines on one Redis (`--cluster`): hosts fall
//!   into partitions, each owned by one node at a time through a lease;
//!   every URL found goes to its partition's stream, read by the owner.
//!   `cluster::partition`, `cluster::lease`, `cluster::wire`,
//!   `cluster::ledger` and `cluster::admit` are pure (which partition,
//!   which node, how long a lease holds here, a URL as a line, which
//!   entries may be acknowledged, whether a URL read from a stream may be
//!   queued: stream entries are untrusted input); `cluster::store` is the protocol (keys, commands,
//!   fenced scripts); `cluster::join` joins a crawl before the shards
//!   start; `cluster::node` is the node's cluster thread, the only code
//!   that talks to Redis while the shards crawl, and `cluster::link` what
//!   it shares with them (the shards' side: `crawl::shard`'s `cluster.rs`);
//!   `cluster::metrics` is the whole crawl as Prometheus text (what
//!   `ringcrawl cluster status --serve` serves).
//! - `config` the validated settings every shard reads (`config::Config`),
//!   with their own types: the budget and sitemap limits, the robots.txt
//!   retry schedule.
//! - The leaves, the vocabulary every layer names: `web` (`web::scope`:
//!   strict/lenient hosts, `--exclude`, `--include`, `--no-parent`, and
//!   the seed lists' hosts; `web::query`, the query parameters stripped),
//!   `job` (a queued URL, its hop path `job::hops`, why one is kept out,
//!   and `job::chunk`, jobs as bytes for the frontier's spill and the
//!   state journals), `keys` (`shard_for`
//!   and the seen-set's `Fingerprinter`: hashes every thread, process and
//!   run agree on) and `sync` (`Notify`; `Outstanding`, the count of
//!   outstanding URLs that decides when the crawl is done; and `PerIp`,
//!   the crawl-wide count of fetches in flight to each server address,
//!   `--per-ip`, whose places are given back on drop). Under them all,
//!   the one normal form of a URL and canonical spelling of a host:
//!   `ringcrawl_links::urls`.
//!
//! The synthetic site and its test server are a crate of their own
//! (`ringcrawl-site`, in `site/`), used by the tests, the demo and the
//! benchmarks; nothing in the crawler depends on it.
//!
//! # Invariants
//!
//! 1. A host belongs to exactly one shard for the whole crawl
//!    (`keys::shard_for` is a fixed-key hash): its queue, seen-set,
//!    politeness and robots.txt live there. The owner may lend a ready page
//!    of the host to a peer with a free fetch slot; the peer fetches, records
//!    and routes it like its own and sends the host's release back.
//! 2. The receive path of a shard only deduplicates and enqueues, starts
//!    lent pages and releases returned hosts; it never awaits a send. Cross-core sends use `try_send_to` with a local overflow
//!    queue drained by a separate task, so bounded all-to-all channels cannot
//!    deadlock.
//! 3. Termination is the chapter's `Queue.join()` made global: an atomic
//!    count of outstanding URLs is incremented *before* a URL is handed to
//!    any shard and decremented only after that URL's children have been
//!    counted (or it was dropped as a duplicate), and after the shards its
//!    links went to said how many were new to the crawl (a page's
//!    `num_new_urls` waits for them). A URL pending a lookup of the
//!    seen-set on disk stays counted until it is answered, and the tally
//!    of the page that found it waits for the answer too. Zero means the crawl is
//!    done; the shard that sees zero stops and closes its senders, and every
//!    other shard stops when it sees them closed.
//! 4. No `RefCell` borrow is held across an `.await`.
//! 5. Pure code (request bytes, head parsing, link extraction, URL
//!    normalisation and scope, the frontier) does no I/O, so it is
//!    unit-tested and property-tested on its own. The I/O layer is thin.
//! 6. At most `--max-tasks` fetches run at once, over all shards: every
//!    fetch holds a slot of `crawl::mesh::FetchSlots` from start to end.
//! 7. A URL is answered new by its shard's seen-set at most once in the
//!    crawl, whether it was in RAM, on disk or pending (a pending URL
//!    counts as seen); the seen-set's RAM is bounded by `--seen-memory`
//!    plus ~1.3 bytes per URL on disk.
//! 8. With a state directory, a page's record reaches the log only after
//!    every URL its shard journaled before it, and its WARC record, are
//!    on disk: a URL with a logged record is never fetched again, and its
//!    links survive any kill. The log is appended to, never rewritten.
//! 9. In a cluster crawl, a URL is in its partition's stream from the
//!    moment it is found until its record is written: a stream entry is
//!    acknowledged only once every URL in it is known or recorded (the
//!    record written, its links appended to their streams first). A node
//!    starts no fetch and writes no record and no archive for a partition
//!    whose lease it may have lost (by the boot clock, which counts a
//!    suspend), and Redis refuses its reports for it; a process whose
//!    name another process joined under since (a newer generation) is
//!    refused everything and stops. A node's fetches running and its
//!    records not yet in the done log share its `--max-tasks` slots: a
//!    `kill -9` repeats at most that many.

// Panic-free outside the tests: a panic takes down a shard (and every
// fetch on it), and most of this code reads what servers send. The lints
// (no indexing, unwrap, expect, panic, unreachable, todo, unimplemented;
// missing_docs) are the workspace's, in Cargo.toml's [workspace.lints].
// Where an index, unwrap or expect cannot fail, it says why in an `allow`
// with a `reason`; clippy.toml lets the tests unwrap, index and panic.
// Modules that parse numbers off the wire also deny unchecked arithmetic.

// The layers are crate-private, and dead code and unreachable `pub`
// warn: what only the library's tests use is `#[cfg(test)]`, and the
// handful of engine items the benchmarks time are `pub` for
// `bench_hooks` below.
#![warn(unreachable_pub)]

mod api;
pub mod defaults;
pub mod process;

// The internal layers (see the map above).
mod cluster;
mod config;
mod crawl;
mod job;
mod keys;
mod net;
mod output;
mod state;
mod sync;
mod web;

#[cfg(feature = "bench-hooks")]
#[doc(hidden)]
pub mod bench_hooks;

pub use api::{
    BuildError, Cause, CrawlError, Crawler, CrawlerBuilder, Interrupt, OwnedPage, Page, PageStream,
    Report, Setting, Settings,
};
pub use cluster::metrics::prometheus as cluster_prometheus_text;
pub use cluster::node::NodeReport as ClusterNodeReport;
pub use cluster::status as cluster_status;
pub use cluster::store::{
    NodeStatus as ClusterNode, RedisFailure, Status as ClusterStatus, StoreError as ClusterError,
};
pub use cluster::StatusReader as ClusterStatusReader;
pub use config::budget::Spent;
pub use config::host_rules::HostRule;
pub use config::secret::redacted as redacted_url;
pub use job::ErrorKind;
pub use net::dns::Families;
pub use output::cluster_gauges::{Backlog as ClusterBacklog, ClusterNow};
pub use output::live::{
    Budgets as LiveBudgets, Live, LiveSnapshot, MemoryLimits, MemoryUse, ShardNow, Waits,
};
pub use output::metrics::{prometheus as prometheus_text, CONTENT_TYPE as PROMETHEUS_CONTENT_TYPE};
pub use output::record::Record;
pub use output::record::{Earlier, Warning};
pub use output::revalidations::Revalidations;
pub use output::stats::{
    DnsCounts, Fetched, Percentiles, ShardBalance, StartFailure, Summary, TlsHandshakes,
    MAX_FAILED_STARTS,
};
pub use output::top_hosts::{HostCounts, TopHost, TopHosts, TOP_HOSTS};
pub use state::Damaged as DamagedState;
pub use state::Refused as ResumeRefused;
pub use url::Url;
pub use web::scope::{Scope, ScopeMode};

/// The README's Rust examples, compiled by `cargo test --doc`, and a check
/// that its library example is the crate docs' first example (the code a
/// reader sees there), so the two cannot drift apart.
///
/// ```
/// let readme = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"));
/// let lib = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/lib.rs"));
/// let shown: String = lib
///     .lines()
///     .filter_map(|line| line.strip_prefix("//!"))
///     .map(|line| line.strip_prefix(' ').unwrap_or(line))
///     .skip_while(|line| !line.starts_with("```"))
///     .skip(1)
///     .take_while(|line| !line.starts_with("```"))
///     .filter(|line| !line.starts_with("# ") && *line != "#")
///     .map(|line| format!("{line}\n"))
///     .collect();
/// let example = readme
///     .split("```rust")
///     .nth(1)
///     .and_then(|block| block.split_once('\n'))
///     .map(|(_, code)| code)
///     .expect("a Rust example in the README");
/// assert!(
///     example.starts_with(&shown),
///     "README.md's library example must begin with src/lib.rs's:\n{shown}"
/// );
/// ```
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// docs/library.md's examples, compiled by `cargo test --doc`.
#[cfg(doctest)]
#[doc = include_str!("../docs/library.md")]
pub struct LibraryDocDoctests;
