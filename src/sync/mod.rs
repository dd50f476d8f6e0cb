//! What the layers share to wait and to count across tasks and threads:
//! [`Notify`], a shard's single-threaded "something changed" signal, and
//! [`Outstanding`], the crawl-wide count of outstanding URLs.
//!
//! A leaf: it imports no other module of the crate, so the network layer
//! (TLS session caches), the output (WARC files), a cluster node and the
//! engine all use the same primitives without one importing another.

pub mod notify;
mod outstanding;

pub use notify::Notify;
pub use outstanding::Outstanding;
