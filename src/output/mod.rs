//! What a crawl shows and leaves behind: one [`record`] per URL, buffered
//! as JSON Lines by a shard's [`sink`] and written by the [`writer`]
//! thread; the counters ([`stats`]) and the end report as text ([`report`]); the live progress line
//! ([`progress`]); the live numbers for a status server ([`live`], a
//! cluster node's in [`cluster_gauges`]) and
//! their Prometheus text ([`metrics`], written by [`exposition`]), the hosts that stand out in them ([`top_hosts`]); the WARC files ([`warc`];
//! their records, CDXJ lines and timestamps are the `ringcrawl-warc`
//! crate), a page's index line made again from its record ([`rebuild`]),
//! the WACZ package made of them at the end ([`wacz`]); an earlier
//! crawl's captures read back for a recrawl ([`captures`]) and what its
//! conditional requests came to ([`revalidations`]); glommio's I/O
//! errors in plain words ([`io_error`]).
//!
//! Not the crawl itself: shards hand finished records here and go on.

pub mod backoffs;
pub mod captures;
pub mod cluster_gauges;
pub mod exposition;
pub mod io_error;
pub mod live;
pub mod metrics;
pub mod progress;
pub mod proxies;
pub mod rebuild;
pub mod record;
pub mod report;
pub mod revalidations;
pub mod sink;
pub mod stats;
pub mod top_hosts;
pub mod wacz;
pub mod warc;
pub mod writer;
