//! The crawl's words for the web: which URLs belong to the crawl
//! ([`scope`]) and the query parameters it strips ([`query`]). A URL's one
//! normal form and a host's one canonical spelling are
//! `ringcrawl_links::urls` (`crates/links`), under this and every layer.
//!
//! A leaf: it imports no other module of the crate, and does no I/O. Every
//! layer names hosts and URLs (the state directory and a cluster re-check
//! scope, the engine checks every link against it), so this vocabulary
//! sits under all of them instead of in the engine (`crate::crawl`) that
//! uses it most.

pub(crate) mod query;
pub(crate) mod scope;
