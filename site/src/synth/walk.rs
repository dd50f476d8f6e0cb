//! The walk of the link graph: breadth-first from `/` of host 0, following
//! only what a crawler can follow (links of pages served 2xx, redirects), it
//! gives the paths and URLs a complete in-scope crawl must fetch, which of
//! them must end badly, and the off-site links it must not fetch.
//!
//! [`SynthSite::expected_paths`] walks the link graph that the page generator
//! itself renders (`graph.rs`), so it cannot disagree with what is served.
//!
//! What this is not: a crawler (it never renders or parses a page; the tests
//! check that a crawl of the rendered pages agrees with it).

use std::collections::{BTreeSet, VecDeque};

use super::graph::{Resource, Target};
use super::SynthSite;

impl SynthSite {
    /// Every path a complete, in-scope crawl of the site starting at `/` must
    /// fetch (pages, redirect sources and intermediate hops, 404 targets,
    /// non-HTML resources, faulty pages), sorted. Paths only; the caller
    /// prefixes scheme and host. On a multi-host site the paths of all
    /// hosts are merged (`/` is on every host): use
    /// [`SynthSite::expected_urls`] there.
    pub fn expected_paths(&self) -> Vec<String> {
        self.paths(|_| true)
    }

    /// The expected paths whose fetch must end in an error or a status of
    /// 400 or more: the faulty pages and the `/missing/` pages (404).
    /// Redirects count as good. Sorted; merged over hosts like
    /// [`SynthSite::expected_paths`].
    pub fn faulty_paths(&self) -> Vec<String> {
        self.paths(|faulty| faulty)
    }

    /// The expected paths that are answered 2xx or 3xx, complete: the
    /// expected paths minus [`SynthSite::faulty_paths`].
    pub fn good_paths(&self) -> Vec<String> {
        self.paths(|faulty| !faulty)
    }

    fn paths(&self, keep: impl Fn(bool) -> bool) -> Vec<String> {
        let set: BTreeSet<String> = self
            .walk()
            .0
            .into_iter()
            .filter(|(host, path)| keep(self.is_faulty(*host, path)))
            .map(|(_, path)| path)
            .collect();
        set.into_iter().collect()
    }

    /// Full URLs of [`SynthSite::expected_paths`] as served at `authority`
    /// (`host:port` of the server): `http://{authority}{path}`, or for a
    /// multi-host site `http://h{k}.site.test:{port}{path}`. Sorted.
    pub fn expected_urls(&self, authority: &str) -> Vec<String> {
        self.urls(authority, |_| true)
    }

    /// Full URLs of [`SynthSite::faulty_paths`], like
    /// [`SynthSite::expected_urls`].
    pub fn faulty_urls(&self, authority: &str) -> Vec<String> {
        self.urls(authority, |faulty| faulty)
    }

    /// Full URLs of [`SynthSite::good_paths`], like
    /// [`SynthSite::expected_urls`].
    pub fn good_urls(&self, authority: &str) -> Vec<String> {
        self.urls(authority, |faulty| !faulty)
    }

    fn urls(&self, authority: &str, keep: impl Fn(bool) -> bool) -> Vec<String> {
        let mut out: Vec<String> = self
            .walk()
            .0
            .into_iter()
            .filter(|(host, path)| keep(self.is_faulty(*host, path)))
            .map(|(host, path)| format!("{}{path}", self.origin(host, authority)))
            .collect();
        out.sort();
        out
    }

    /// Whether the fetch of `path` on `host` ends in an error or a 4xx/5xx.
    fn is_faulty(&self, host: usize, path: &str) -> bool {
        match self.classify(host, path) {
            Resource::Page(i) => self.page_fault(i).is_some(),
            Resource::NotFound => true,
            _ => false,
        }
    }

    /// The off-site absolute URLs the site links to (a strict crawl must not
    /// fetch them), sorted. The footer's `mailto:` link is not included.
    pub fn offsite_urls(&self) -> Vec<String> {
        self.walk().1.into_iter().collect()
    }

    /// Breadth-first walk of what the site emits, from `/` of host 0 (which
    /// links to every other host's `/`), following only what a crawler can
    /// follow: links of pages served 2xx and redirects.
    fn walk(&self) -> (BTreeSet<(usize, String)>, BTreeSet<String>) {
        let mut seen = BTreeSet::new();
        let mut offsite = BTreeSet::new();
        let mut queue = VecDeque::new();
        let root = (0, "/".to_string());
        seen.insert(root.clone());
        queue.push_back(root);
        let mut visit = |target: Target, queue: &mut VecDeque<(usize, String)>| {
            let key = (target.host(self.hosts), target.path());
            if let (host, Some(path)) = key {
                if seen.insert((host, path.clone())) {
                    queue.push_back((host, path));
                }
            }
        };
        while let Some((host, path)) = queue.pop_front() {
            let targets = match self.classify(host, &path) {
                Resource::Page(i) if self.page_fault(i).is_none() => self.page_targets(i),
                Resource::Hub(k) => self.hub_targets(k),
                Resource::Redirect { to, .. } => vec![to],
                Resource::Page(_) | Resource::Css(_) | Resource::Png(_) | Resource::NotFound => {
                    Vec::new()
                }
            };
            for target in targets {
                match target.offsite_url() {
                    Some(url) => {
                        offsite.insert(url);
                    }
                    None => visit(target, &mut queue),
                }
            }
        }
        (seen, offsite)
    }
}
