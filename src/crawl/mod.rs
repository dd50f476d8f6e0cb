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

pub(crate) mod budget;
pub(crate) mod checkpoints;
pub(crate) mod error;
pub(crate) mod frontier;
pub(crate) mod hooks;
pub(crate) mod mesh;
pub(crate) mod page;
pub(crate) mod run;
pub(crate) mod seeds;
pub(crate) mod seen;
pub(crate) mod shard;
pub(crate) mod stream;
pub(crate) mod url_set;
