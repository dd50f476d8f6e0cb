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

pub(crate) mod backoffs;
pub(crate) mod captures;
pub(crate) mod cluster_gauges;
pub(crate) mod exposition;
pub(crate) mod io_error;
pub(crate) mod live;
pub(crate) mod metrics;
pub(crate) mod progress;
pub(crate) mod proxies;
pub(crate) mod rebuild;
pub(crate) mod record;
pub(crate) mod report;
pub(crate) mod revalidations;
pub(crate) mod sink;
pub(crate) mod stats;
pub(crate) mod top_hosts;
pub(crate) mod wacz;
pub(crate) mod warc;
pub(crate) mod writer;
