//! The crawl's words for the web: a URL in its one normal form and a host
//! in its one canonical spelling ([`urls`]), and which URLs belong to the
//! crawl ([`scope`]).
//!
//! A leaf: it imports no other module of the crate, and does no I/O. Every
//! layer names hosts and URLs (the resolver and TLS key by the canonical
//! host, the state directory and a cluster re-check scope, the engine
//! normalises every link), so this vocabulary sits under all of them
//! instead of in the engine (`crate::crawl`) that uses it most.

pub mod query;
pub mod scope;
pub mod urls;
