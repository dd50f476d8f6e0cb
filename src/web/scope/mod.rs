//! Which URLs a crawl may fetch: the chapter's strict/lenient host rule,
//! the `--exclude` regex, and what narrows the links followed further:
//! `--include` regexes and `--no-parent`.
//!
//! A [`Scope`] is built once from the crawl roots and then asked about every
//! link found, so the question is answered with one or two hash-set lookups
//! (and, in lenient mode, one public-suffix lookup) and no allocation for
//! lower-case hosts as the `url` crate gives them.
//!
//! * [`ScopeMode::Strict`]: the host is a root's host, or that host with a
//!   leading `www.` added or removed (`example.com` allows `www.example.com`
//!   and the other way round, but not `sub.example.com`).
//! * [`ScopeMode::Lenient`]: the host has the same registrable domain as a
//!   root (public-suffix aware, so `a.example.co.uk` and `b.example.co.uk`
//!   match but `example.co.uk` and `other.co.uk` do not). Hosts without a
//!   registrable domain (`localhost`, a bare public suffix) fall back to the
//!   strict rule.
//! * IP addresses (v4 and v6) only ever match exactly, in both modes.
//! * The hosts of seed lists count as roots' hosts, by the same rules
//!   (kept compactly: [`SeedHosts`]).
//! * Ports are ignored, as in the chapter's crawler.
//! * Starts and follows differ ([`Scope::allows_start`], [`Scope::allows`]):
//!   roots, seeds and sitemaps (and the targets of their redirects) need
//!   only the host rule and `--exclude`; a followed link needs
//!   `--include` (one regex matches) and `--no-parent` too. wget and
//!   HTTrack fetch the URL they are given whatever their filters, and a
//!   sitemap is a list of pages, not one.
//! * `--no-parent` (wget's): on a root's host (or its `www.` twin), a link
//!   is followed only under the directory of a root on that host: its
//!   path up to and including the last `/`. Other hosts in scope (lenient
//!   siblings, seed lists' hosts) are not limited, as in wget.
//! * Page requisites are fetched from any host, with `--exclude` alone
//!   ([`Scope::allows_embed`]): `--include` and `--no-parent` choose pages,
//!   and a page needs its images wherever they are (wget's `-p` with
//!   `--no-parent` does the same).
//!
//! * Link-local hosts (169.254.0.0/16, fe80::/10) and cloud metadata
//!   endpoints ([`reserved`]) are out of scope, even as page requisites
//!   or redirect targets, unless a root or a seed list names the host:
//!   from a crawler in a cloud, a fetch of one can hand out the
//!   machine's credentials.
//!
//! What it is not: no robots.txt, no per-host politeness or limits, no URL
//! normalisation (see `ringcrawl_links::urls`), and no I/O or DNS: `example.com` and
//! an IP it resolves to are different hosts here.
use foldhash::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::Arc;

use regex::Regex;
use ringcrawl_links::urls;
use url::Url;

pub(crate) mod reserved;
mod seed_hosts;

pub(crate) use seed_hosts::{SeedHosts, SeedHostsBuilder};

/// How far from the roots' hosts a crawl may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScopeMode {
    /// Only the roots' hosts, with or without a leading `www.`.
    Strict,
    /// Any host under the same registrable domain as a root
    /// (`blog.example.co.uk` for a root on `example.co.uk`).
    Lenient,
}

/// Which URLs a crawl keeps: the set of URLs it may fetch, precomputed
/// from its roots, by the host rule of its [`ScopeMode`], its `exclude`
/// regex and (for links it follows) its `include` regexes and
/// `no_parent`. A built crawl's is [`Crawler::scope`](crate::Crawler::scope);
/// one can also be made from roots alone ([`Scope::new`]) to ask the same
/// questions without a crawl.
///
/// Not URL normalisation: ask it about URLs in their normal form
/// (`ringcrawl_links::urls`, as the crawl's links are), and not DNS: a
/// host and an address it resolves to are different hosts here.
///
/// ```
/// use ringcrawl::{Scope, ScopeMode, Url};
///
/// let roots = [Url::parse("http://example.com/docs/").unwrap()];
/// let scope = Scope::new(&roots, ScopeMode::Strict);
/// assert!(scope.allows(&Url::parse("http://www.example.com/about").unwrap()));
/// assert!(!scope.allows(&Url::parse("http://blog.example.com/").unwrap()));
/// let lenient = Scope::new(&roots, ScopeMode::Lenient);
/// assert!(lenient.allows(&Url::parse("http://blog.example.com/").unwrap()));
/// ```
#[derive(Debug, Clone)]
pub struct Scope {
    mode: ScopeMode,
    /// Hosts allowed by the strict rule: the roots' hosts and their `www.`
    /// twins (IP addresses alone).
    hosts: HashSet<String>,
    /// Registrable domains of the roots' hosts (lenient mode only).
    domains: HashSet<String>,
    /// The hosts of the seed lists, by the same rule (compact: a list may
    /// name millions; shared by every shard's copy of the scope).
    seeds: Option<Arc<SeedHosts>>,
    exclude: Option<Regex>,
    /// `--include`: a followed URL matches one of these (none: any URL).
    include: Vec<Regex>,
    /// `--no-parent` is on.
    no_parent: bool,
    /// The roots' directories by host (each root's host and its `www.`
    /// twin): what `--no-parent` keeps links under.
    dirs: HashMap<String, Vec<String>>,
}

impl Scope {
    /// The scope of a crawl started from `roots` in `mode`, with no
    /// `exclude`, `include` or `no_parent`. Roots without a host are
    /// skipped; with no usable root nothing is allowed.
    pub fn new(roots: &[Url], mode: ScopeMode) -> Scope {
        Scope::build(roots, mode, None)
    }

    /// The scope of a crawl started from `roots`.
    ///
    /// `exclude`, when given, takes out every URL whose text it matches
    /// anywhere (search, not full match, as Python's `re.search` in the
    /// chapter). Roots without a host are skipped; with no usable root
    /// nothing is allowed.
    pub(crate) fn build(roots: &[Url], mode: ScopeMode, exclude: Option<Regex>) -> Self {
        let mut hosts = HashSet::default();
        let mut domains = HashSet::default();
        let mut dirs: HashMap<String, Vec<String>> = HashMap::default();
        for root in roots {
            let host = urls::canonical_host(urls::host(root));
            if host.is_empty() {
                continue;
            }
            let path = root.path();
            let dir = path
                .rfind('/')
                .map_or("/", |end| path.get(..=end).unwrap_or("/"));
            for name in std::iter::once(host.to_string()).chain(www_twin(&host)) {
                let list = dirs.entry(name).or_default();
                if !list.iter().any(|d| d == dir) {
                    list.push(dir.to_string());
                }
            }
            if is_ip_like(&host) {
                hosts.insert(host.into_owned());
                continue;
            }
            if mode == ScopeMode::Lenient {
                if let Some(domain) = psl::domain_str(&host) {
                    domains.insert(domain.to_owned());
                }
            }
            match host.strip_prefix("www.") {
                Some(bare) if !bare.is_empty() => {
                    hosts.insert(bare.to_owned());
                }
                Some(_) => {}
                None => {
                    hosts.insert(format!("www.{host}"));
                }
            }
            hosts.insert(host.into_owned());
        }
        Scope {
            mode,
            hosts,
            domains,
            seeds: None,
            exclude,
            include: Vec::new(),
            no_parent: false,
            dirs,
        }
    }

    /// This scope with `exclude` (`--exclude`) in place of its own.
    pub(crate) fn with_exclude(mut self, exclude: Option<Regex>) -> Self {
        self.exclude = exclude;
        self
    }

    /// This scope with `--include`: a followed URL must match one of
    /// `include` (searched anywhere, as `--exclude`); none: any URL.
    pub(crate) fn with_include(mut self, include: Vec<Regex>) -> Self {
        self.include = include;
        self
    }

    /// This scope with `--no-parent` on or off.
    pub(crate) fn with_no_parent(mut self, on: bool) -> Self {
        self.no_parent = on;
        self
    }

    /// The same rules over other roots (a cluster crawl's roots grow as
    /// nodes join): mode, `--exclude`, `--include`, `--no-parent` and the
    /// seed lists' hosts kept.
    pub(crate) fn with_roots(&self, roots: &[Url]) -> Scope {
        let mut scope = Scope::build(roots, self.mode, self.exclude.clone())
            .with_include(self.include.clone())
            .with_no_parent(self.no_parent);
        scope.seeds = self.seeds.clone();
        scope
    }

    /// The `include` regexes, as given.
    pub fn include(&self) -> Vec<&str> {
        self.include.iter().map(Regex::as_str).collect()
    }

    /// Whether `no_parent` is on.
    pub fn no_parent(&self) -> bool {
        self.no_parent
    }

    /// Widen this scope by the hosts of the seed lists.
    pub(crate) fn add_seeds(&mut self, seeds: SeedHosts) {
        self.seeds = Some(Arc::new(seeds));
    }

    /// Strict or lenient.
    pub fn mode(&self) -> ScopeMode {
        self.mode
    }

    /// The `exclude` regex, as given.
    pub fn exclude(&self) -> Option<&str> {
        self.exclude.as_ref().map(Regex::as_str)
    }

    /// Whether the crawl may follow a link to `url`: it may start there
    /// ([`Scope::allows_start`]), an `--include` regex (if any) matches it,
    /// and with `--no-parent` it is under a root's directory on a root's
    /// host.
    pub fn allows(&self, url: &Url) -> bool {
        self.allows_start(url) && self.included(url) && self.under_a_root(url)
    }

    /// Whether the crawl may fetch `url` as a root, a seed, a sitemap or
    /// a redirect target of one: its host is in scope (see
    /// [`Scope::allows_host`]; the port does not matter) and, if an
    /// exclude regex is set, the regex matches nowhere in the URL's text.
    /// URLs without a host are never allowed.
    pub fn allows_start(&self, url: &Url) -> bool {
        let host = urls::host(url);
        if host.is_empty() || !self.allows_host(host) || !self.reaches(host) {
            return false;
        }
        match &self.exclude {
            Some(re) => !re.is_match(url.as_str()),
            None => true,
        }
    }

    fn included(&self, url: &Url) -> bool {
        self.include.is_empty() || self.include.iter().any(|re| re.is_match(url.as_str()))
    }

    /// `--no-parent`: on a root's host, under one of its roots' directories.
    fn under_a_root(&self, url: &Url) -> bool {
        if !self.no_parent {
            return true;
        }
        let host = urls::canonical_host(urls::host(url));
        match self.dirs.get(host.as_ref()) {
            Some(dirs) => dirs.iter().any(|d| url.path().starts_with(d.as_str())),
            None => true,
        }
    }

    /// Whether the crawl may fetch `url` as a page requisite: from any host
    /// (Heritrix's transclusion: a page's images may live on a CDN), but
    /// not if the exclude regex matches it.
    pub fn allows_embed(&self, url: &Url) -> bool {
        !urls::host(url).is_empty()
            && self.reaches(urls::host(url))
            && self
                .exclude
                .as_ref()
                .is_none_or(|re| !re.is_match(url.as_str()))
    }

    /// Whether `host` (a bare host as [`urls::host`] gives it: no port, IPv6
    /// in brackets) is in scope by the strict or lenient rule of this
    /// scope's mode. The exclude regex is not consulted. ASCII case and
    /// trailing dots are ignored ([`urls::canonical_host`]).
    pub fn allows_host(&self, host: &str) -> bool {
        let host = urls::canonical_host(host);
        if host.is_empty() {
            return false;
        }
        if self.hosts.contains(host.as_ref()) {
            return true;
        }
        if self.seeds.as_ref().is_some_and(|s| s.contains(&host)) {
            return true;
        }
        self.mode == ScopeMode::Lenient
            && !is_ip_like(&host)
            && psl::domain_str(&host).is_some_and(|d| self.domains.contains(d))
    }
}

impl Scope {
    /// Whether a fetch of `host` may connect to `ip`, which its name
    /// resolved to: not a link-local or metadata address
    /// ([`reserved::is_reserved_ip`]), unless a root or a seed list names
    /// the host or the address itself.
    pub(crate) fn may_connect(&self, host: &str, ip: IpAddr) -> bool {
        if !reserved::is_reserved_ip(ip) {
            return true;
        }
        let literal = match ip {
            IpAddr::V4(v4) => v4.to_string(),
            IpAddr::V6(v6) => format!("[{v6}]"),
        };
        [urls::canonical_host(host).into_owned(), literal]
            .iter()
            .any(|h| self.hosts.contains(h) || self.seeds.as_ref().is_some_and(|s| s.contains(h)))
    }

    /// Whether the crawl may reach `host` at all: not a link-local or
    /// metadata host ([`reserved`]), unless a root or a seed list names it.
    fn reaches(&self, host: &str) -> bool {
        let host = urls::canonical_host(host);
        !reserved::is_reserved(&host)
            || self.hosts.contains(host.as_ref())
            || self.seeds.as_ref().is_some_and(|s| s.contains(&host))
    }
}

/// `host` with a leading `www.` added or removed (none for an IP address).
fn www_twin(host: &str) -> Option<String> {
    if is_ip_like(host) {
        return None;
    }
    match host.strip_prefix("www.") {
        Some(bare) if !bare.is_empty() => Some(bare.to_string()),
        Some(_) => None,
        None => Some(format!("www.{host}")),
    }
}

/// IPv6 (`[::1]`, or unbracketed with colons) or IPv4-like: the last label is
/// all digits, which the URL standard only accepts for IPv4 addresses. Such
/// hosts have no registrable domain and only match exactly.
pub(crate) fn is_ip_like(host: &str) -> bool {
    if host.starts_with('[') || host.contains(':') {
        return true;
    }
    let last = host.rsplit('.').next().unwrap_or(host);
    !last.is_empty() && last.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests;
