//! ringcrawl finds and downloads every page of a set of web sites, as fast as
//! the network and the servers allow. It is the crawler of "A Web Crawler
//! With asyncio Coroutines" (*500 Lines or Less*) — one queue, N workers, a
//! seen-set, stop when all work is done — rebuilt for Linux as a
//! thread-per-core io_uring program on glommio.
//!
//! # Map
//!
//! ```text
//! roots ──shard_for(host)──▶ owning shard's frontier ──▶ worker ──▶ fetch (HTTP/1.0, io_uring TcpStream)
//!                                  ▲                                   │
//!                                  │                        response head + body
//!                                  │                                   ▼
//!           mesh (bounded channels, batched) ◀──shard_for(host)── links ◀── record (stats, JSONL)
//! ```
//!
//! - [`cli`] flags → validated [`config::Config`], before any thread starts.
//! - [`crawl`] the only code that knows threads: executor pool, mesh, join.
//! - [`mesh`] everything cross-core: `shard_for`, batching (links, lent
//!   pages and their returns), the crawl-wide fetch slots, the outstanding
//!   counter that decides when the crawl is done.
//! - [`shard`] per-core state and its tasks (workers, receivers, flusher).
//! - [`frontier`] pure: seen-set, per-host queues and politeness (fair turns,
//!   per-host concurrency and delay, backoff, robots first); [`robots`] pure
//!   robots.txt policy.
//! - [`fetch`] one HTTP/1.0 exchange with limits and a deadline, on a reused
//!   keep-alive connection when the shard's [`conn_pool`] has one; [`dns`]
//!   the per-shard resolver; [`http`] pure request bytes, head parsing,
//!   framing.
//! - [`links`] pure HTML → absolute normalised URLs (a hand-written scanner,
//!   html5gum's tokenizer where the scanner is unsure); [`urls`]
//!   normalisation; [`scope`] strict/lenient hosts and `--exclude`.
//! - [`record`], [`stats`], [`sink`], [`progress`] what a crawl shows and
//!   leaves behind; [`warc`] WARC 1.1 records, [`warc_file`] per-shard
//!   WARC files.
//! - [`site`] a deterministic synthetic site and a scriptable HTTP/1.0
//!   server, for tests, the demo and benchmarks (not used by the crawler).
//!
//! # Invariants
//!
//! 1. A host belongs to exactly one shard for the whole crawl
//!    ([`mesh::shard_for`] is a fixed-key hash): its queue, seen-set,
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
//!    counted (or it was dropped as a duplicate). Zero means the crawl is
//!    done; the shard that sees zero stops and closes its senders, and every
//!    other shard stops when it sees them closed.
//! 4. No `RefCell` borrow is held across an `.await`.
//! 5. Pure code (request bytes, head parsing, link extraction, URL
//!    normalisation and scope, the frontier) does no I/O, so it is
//!    unit-tested and property-tested on its own. The I/O layer is thin.
//! 6. At most `--max-tasks` fetches run at once, over all shards: every
//!    fetch holds a slot of [`mesh::FetchSlots`] from start to end.

pub mod cli;
pub mod config;
pub mod conn_pool;
pub mod crawl;
pub mod dns;
pub mod dns_wire;
pub mod fetch;
pub mod frontier;
pub mod http;
pub mod links;
pub mod mesh;
pub mod notify;
pub mod progress;
pub mod record;
pub mod robots;
pub mod scope;
pub mod shard;
pub mod sink;
pub mod site;
pub mod stats;
pub mod url_set;
pub mod urls;
pub mod warc;
pub mod warc_file;
