//! The engine: threads and the join ([`run()`]), the mesh between cores, one
//! shard per core and the pure parts it decides with (frontier, seen-set,
//! sitemaps; robots.txt policy is the `ringcrawl-robots` crate's).
//!
//! Not the network (`crate::net`: one exchange with a server), not what a
//! crawl leaves behind (`crate::output`), not a page's links (the
//! `ringcrawl-links` crate, which the page path calls), and not the words
//! the layers under it share (scope: `crate::web`; a URL's normal form:
//! `ringcrawl_links::urls`; jobs: `crate::job`; the fixed hashes:
//! `crate::keys`; `crate::sync`).

pub mod budget;
pub mod checkpoints;
pub mod error;
pub mod frontier;
pub mod hooks;
pub mod mesh;
pub mod page;
pub mod run;
pub mod seeds;
pub mod seen;
pub mod shard;
pub mod stream;
pub mod url_set;

#[cfg(any(test, feature = "internals"))]
pub use run::{run, Outcome};
