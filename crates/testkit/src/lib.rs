//! The test helpers that run real outside programs, shared by the
//! library's unit tests (`src/`, a dev-dependency) and the end-to-end
//! suite (`cli/tests/suite`): finding a tool, or skipping (failing under
//! `RINGCRAWL_REQUIRE_TOOLS=1`) where it is missing ([`tools`]); a
//! `redis-server` ([`redis`]) and a dnsmasq ([`dnsmasq`]) on free loopback
//! ports, stopped by their PIDs when dropped; DNS messages built by hand
//! with a nameserver that answers every name ([`dns`]); a WARC reader of
//! their own ([`warc`]) and the independent checkers from PyPI in venvs
//! (warcio, cdxj-indexer, py-wacz: [`warcio`]).
//!
//! Not published, and independent of ringcrawl and its crates on
//! purpose: what the tests check the crawler against is not built from
//! the crawler's own code.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test helpers: a failure to start a server or a tool is the test's failure"
)]

pub mod dns;
pub mod dnsmasq;
pub mod redis;
pub mod tools;
pub mod warc;
pub mod warcio;
