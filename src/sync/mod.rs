//! What the layers share to wait and to count across tasks and threads:
//! [`Notify`], a shard's single-threaded "something changed" signal,
//! [`Outstanding`], the crawl-wide count of outstanding URLs,
//! [`PerIp`], the crawl-wide count of fetches in flight to each address,
//! and [`WriteBack`], whether the WARC writers' syncs went through.
//!
//! A leaf: it imports no other module of the crate, so the network layer
//! (TLS session caches), the output (WARC files), a cluster node and the
//! engine all use the same primitives without one importing another.

pub(crate) mod notify;
mod outstanding;
mod per_ip;
mod write_back;

pub(crate) use notify::Notify;
pub(crate) use outstanding::Outstanding;
pub(crate) use per_ip::PerIp;
pub(crate) use write_back::{Syncs, WriteBack};
