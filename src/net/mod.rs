//! One exchange with a server: name resolution ([`dns`]), the connection
//! ([`connect`] with Happy Eyeballs, [`fetch`], reusing idle keep-alive
//! connections from [`conn_pool`] that [`socket`] finds still quiet; plain
//! or TLS ([`tls`]) over a deadline-bound TCP [`stream`]), speaking
//! HTTP/1.x through the pure `ringcrawl_http1` crate (`crates/http1`);
//! through a [`proxy`] when the crawl has one, with a jar of [`cookies`]
//! when it keeps them.
//!
//! Not crawl policy: what to fetch, when and how often is `crate::crawl`'s;
//! retries are the shard's.

pub(crate) mod conn_pool;
pub(crate) mod connect;
pub(crate) mod cookies;
pub(crate) mod dns;
pub(crate) mod fetch;
pub(crate) mod proxy;
pub(crate) mod socket;
pub(crate) mod stream;
pub(crate) mod tls;
