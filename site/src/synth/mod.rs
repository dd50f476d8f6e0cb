//! A deterministic synthetic web site (pure: no I/O).
//!
//! A [`SiteSpec`] (page count, links per page, seed, page size, and three
//! options) gives a [`SynthSite`]: it answers any request path
//! ([`SynthSite::respond_to`], or as a server
//! [`Handler`](crate::server::Handler), [`SynthSite::handler`]) and says
//! exactly which paths and URLs a complete in-scope crawl must fetch
//! ([`SynthSite::expected_paths`], [`SynthSite::expected_urls`]) and which
//! of them must end badly ([`SynthSite::faulty_paths`]). Pages are rendered
//! on each request.
//!
//! What this is not: a server (no I/O here; [`crate::server`] serves a
//! site), nor a site at scale (that is [`crate::endless`]).
//!
//! Invariants:
//!
//! * The same spec gives byte-for-byte the same site everywhere: every choice
//!   is drawn from a generator seeded with (seed, kind of choice, index)
//!   (`rng.rs`), never from the clock, the machine or a map's order.
//! * [`SynthSite::expected_paths`] walks the link graph that the page
//!   generator itself renders, so it cannot disagree with what is served.
//! * Every page is linked from its parent in a spanning tree rooted at `/`,
//!   so without faults every page is reachable.
//! * Every page's head links a stylesheet `/static/{j}.css`, and images
//!   appear both as `<a href>` and `<img src>`, but every such resource is
//!   also the target of some `<a href>`, so the set of paths a crawl must
//!   fetch does not depend on whether the crawler follows `<link href>` or
//!   `<img src>`.
//! * No generated URL has a query string.
//! * Three options make the site hostile or big; all default to off, and with
//!   all off the site is exactly the one `graph.rs` and `render.rs` describe:
//!   **faults** ([`SiteSpec::fault_percent`], `faults.rs`), **latency**
//!   ([`SiteSpec::delay`], `respond.rs`) and **hosts** ([`SiteSpec::hosts`],
//!   `hosts.rs`).
//!
//! Files:
//!
//! * `spec.rs`: the parameters, [`SiteSpec`], [`Delay`] and [`Fault`], with
//!   their parsing and display.
//! * `rng.rs`: the seeded pseudo-random numbers (splitmix64) and the stream of
//!   each kind of choice.
//! * `graph.rs`: the shape of the site: what each page links to, and what
//!   each path serves.
//! * `hosts.rs`: the split over the host names `h{k}.site.test`: which host a
//!   request is for, each host's origin, the roots of a crawl.
//! * `render.rs`: the HTML of pages and hubs, links written in the styles
//!   real pages have.
//! * `assets.rs`: the stylesheet and PNG bodies.
//! * `faults.rs`: which pages are faulty, and how each fault is served.
//! * `respond.rs`: the reply to a request (resource, fault, delay) and the
//!   server handler.
//! * `walk.rs`: the walk of the link graph: the paths and URLs a crawl must
//!   fetch, and the off-site links it must not.
//! * `tests.rs`: the scenarios that span files (determinism, reachability,
//!   the HTML against the walk, an in-memory crawl against the expected URLs).

mod assets;
mod faults;
mod graph;
mod hosts;
mod render;
mod respond;
mod rng;
mod spec;
mod walk;

#[cfg(test)]
mod tests;

pub use spec::{Delay, Fault, SiteSpec};

use graph::{page_path, Target};
use rng::{Rng, STREAM_PLACE};

/// The domain of the host names of a multi-host site.
pub const HOST_DOMAIN: &str = "site.test";

/// The bait link inside every PNG body.
pub const PNG_BAIT: &str = "<a href=\"/should-not-be-followed\">";

/// A generated site. Cheap to build (it only places the extra links);
/// pages are rendered on each request (a few microseconds each).
#[derive(Debug, Clone)]
pub struct SynthSite {
    spec: SiteSpec,
    /// Number of each kind of extra (missing, redirect, css, png, off-site).
    extras: usize,
    /// Fan-out of the spanning tree.
    fanout: usize,
    /// Extra link targets per page.
    placed: Vec<Vec<Target>>,
    /// Number of hosts (at least 1).
    hosts: usize,
}

impl SynthSite {
    pub fn new(spec: SiteSpec) -> Self {
        let pages = spec.pages.max(1);
        let extras = pages.div_ceil(100);
        let fanout = (spec.links / 2).max(2);
        let hosts = spec.hosts.max(1);
        let mut placed = vec![Vec::new(); pages];
        let kinds: [fn(usize) -> Target; 6] = [
            Target::Missing,
            Target::Redirect,
            Target::Css,
            Target::Png,
            Target::Offsite,
            |_| Target::OtherSite,
        ];
        for (k, make) in kinds.iter().enumerate() {
            for j in 0..extras {
                let page = Rng::new(spec.seed, STREAM_PLACE + k as u64, j as u64).below(pages);
                placed[page].push(make(j));
            }
        }
        SynthSite {
            spec,
            extras,
            fanout,
            placed,
            hosts,
        }
    }

    pub fn spec(&self) -> &SiteSpec {
        &self.spec
    }

    /// Number of HTML pages (`spec.pages`, at least 1).
    pub fn page_count(&self) -> usize {
        self.placed.len()
    }

    /// Number of hosts (`spec.hosts`, at least 1).
    pub fn host_count(&self) -> usize {
        self.hosts
    }

    /// The name of host `k` of a multi-host site: `h{k}.site.test`.
    pub fn host_name(k: usize) -> String {
        format!("h{k}.{HOST_DOMAIN}")
    }

    /// The path of page `i`: `/` for 0, `/p/{i}.html` otherwise.
    pub fn page_path(i: usize) -> String {
        page_path(i)
    }
}
