//! The reply to one request: the resource the path names on the request's
//! host, or the page's [`Fault`](super::Fault), behind the spec's delay; and
//! the server [`Handler`] that serves the site.
//!
//! Latency ([`SiteSpec::delay`](super::SiteSpec::delay)): a fixed, uniform or
//! exponential delay (seeded per URL) before every response, served as a
//! [`Step::Sleep`](crate::server::Step::Sleep) so it costs the server nothing.
//!
//! What this is not: the server (no I/O here: [`crate::server`] does it),
//! or what a path is (`graph.rs`).

use std::sync::Arc;
use std::time::Duration;

use super::assets::{css_body, png_body};
use super::graph::Resource;
use super::rng::{fnv1a, mix64};
use super::SynthSite;
use crate::server::{Handler, Reply, Request};

impl SynthSite {
    /// The latency before the response to `path` on host `host`.
    fn delay_for(&self, host: usize, path: &str) -> Duration {
        let key = fnv1a(path.as_bytes()) ^ mix64(host as u64);
        self.spec.delay.for_key(self.spec.seed, key)
    }

    /// Serve one request path (host ignored; absolute and protocol-relative
    /// same-host links are written root-relative instead).
    pub fn respond(&self, path: &str) -> Reply {
        self.respond_to("", path)
    }

    /// Serve one request path for the given authority (`Host` header with
    /// port, e.g. `127.0.0.1:8080`), which absolute same-host links and the
    /// absolute `Location` of `/r2/{j}` use. An empty authority behaves
    /// like [`SynthSite::respond`]. The set of paths linked is the same
    /// either way. Faulty pages get their [`Fault`], and the spec's
    /// [`Delay`] is put in front of the reply (as a [`Reply::Script`]).
    ///
    /// [`Fault`]: super::Fault
    /// [`Delay`]: super::Delay
    pub fn respond_to(&self, authority: &str, path: &str) -> Reply {
        let host = self.host_index(authority);
        let reply = match self.classify(host, path) {
            Resource::Page(i) => match self.page_fault(i) {
                Some(fault) => self.fault_reply(fault, i, authority),
                None => Reply::html(200, self.render_page(i, authority)),
            },
            _ => self.respond_clean(authority, path),
        };
        match self.delay_for(host, path) {
            d if d.is_zero() => reply,
            d => reply.delayed(d),
        }
    }

    /// The reply without faults or delay: what the resource is.
    fn respond_clean(&self, authority: &str, path: &str) -> Reply {
        let host = self.host_index(authority);
        match self.classify(host, path) {
            Resource::Page(i) => Reply::html(200, self.render_page(i, authority)),
            Resource::Hub(k) => Reply::html(200, self.render_hub(k, authority)),
            Resource::Redirect {
                status,
                to,
                absolute,
            } => {
                let location = self.url_of(to, host, authority, absolute);
                Reply::redirect(status, &location)
            }
            Resource::Css(j) => Reply::with_type(200, "text/css", css_body(j)),
            Resource::Png(j) => Reply::with_type(200, "image/png", png_body(j)),
            Resource::NotFound => Reply::not_found(),
        }
    }

    /// The HTML of page `i` as served for `authority` (see
    /// [`SynthSite::respond_to`]), or `None` if there is no such page.
    /// Faults are not applied.
    pub fn page_html(&self, i: usize, authority: &str) -> Option<String> {
        (i < self.page_count()).then(|| self.render_page(i, authority))
    }

    /// A handler serving this site, using each request's `Host` for absolute
    /// links (and, on a multi-host site, to pick the host).
    pub fn handler(self: Arc<Self>) -> Handler {
        Arc::new(move |req: &Request| self.respond_to(&req.authority, &req.path))
    }

    /// The reply for `path` at `authority` without faults or delay (always
    /// a [`Reply::Http`]); for exporting the site as files.
    pub fn clean_reply(&self, authority: &str, path: &str) -> Reply {
        self.respond_clean(authority, path)
    }
}
