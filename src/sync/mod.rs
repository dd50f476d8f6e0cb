//! What the layers share to wait and to count across tasks and threads:
//! [`Notify`], a shard's single-threaded "something changed" signal,
//! [`Outstanding`], the crawl-wide count of outstanding URLs, and
//! [`PerIp`], the crawl-wide count of fetches in flight to each address.
//!
//! A leaf: it imports no other module of the crate, so the network layer
//! (TLS session caches), the output (WARC files), a cluster node and the
//! engine all use the same primitives without one importing another.

pub mod notify;
mod outstanding;
mod per_ip;

pub use notify::Notify;
pub use outstanding::Outstanding;
pub use per_ip::PerIp;
