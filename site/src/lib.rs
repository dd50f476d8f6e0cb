//! The test site: a deterministic synthetic web site and a small scriptable
//! HTTP/1.0 server to serve it (or anything else) on loopback.
//!
//! What this is:
//!
//! * [`synth`] generates a site from a [`synth::SiteSpec`] (page count, links
//!   per page, seed, page size). The same spec gives byte-for-byte the same
//!   site on every machine. It mixes in the things a crawler has to get right:
//!   relative, absolute and protocol-relative links, fragments, different
//!   quoting styles, redirects and redirect chains, missing pages, non-HTML
//!   resources that contain bait links, and off-site links. It also says
//!   exactly which paths a complete in-scope crawl must fetch
//!   ([`synth::SynthSite::expected_paths`]), computed from the same
//!   generation code, so the answer cannot drift from what is served.
//!   Optionally it misbehaves and grows: a seeded percentage of faulty pages
//!   (hang-ups, resets, short bodies, broken heads, 500/503, slow bodies, bad
//!   chunking; [`synth::SynthSite::good_paths`] and
//!   [`synth::SynthSite::faulty_paths`] say which URL must end how), a
//!   latency before every response ([`synth::Delay`]), and a split over many
//!   host names `h{k}.site.test` ([`synth::SynthSite::expected_urls`],
//!   [`synth::SynthSite::roots`]).
//! * [`server`] is an HTTP/1.0 server, plain or over TLS, on its own
//!   glommio executor thread (or several, accepting on one or more
//!   addresses). Each
//!   request is answered by a [`server::Handler`] closure with a
//!   [`server::Reply`]: a complete response, a hang-up, or a fault-injection
//!   script (write some bytes, sleep, close, reset; [`server::Reply::delayed`]
//!   puts a pause in front of any reply). It counts requests per
//!   host and path so tests can assert what a crawler fetched and how often.
//!
//! The tests, the demo (`ringcrawl-site` binary), the benchmarks and
//! `scripts/soak.sh` / `scripts/c10k.sh` use it.
//!
//! * [`endless`] is a site of about a billion pages over thousands of host
//!   names, each generated per request from its URL, for crawls at scale
//!   (`ringcrawl-site --endless`, `scripts/scale.sh`); it counts the pages
//!   it served and the requests for a page served before.
//! * [`tls`] makes a certificate authority for the run and the server
//!   certificates it issues (good, or broken on purpose) with rcgen, and
//!   the rustls server config that serves one.
//!
//! What this is not: a general web server (one request per connection
//! unless keep-alive is asked for, no request bodies, no files from disk), and not part of
//! the crawler: nothing in the crawler itself depends on this module.

pub mod endless;
pub mod server;
pub mod synth;
pub mod tls;
