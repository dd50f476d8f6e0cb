//! The endless site: a web site of about a billion pages over thousands of
//! host names, each page generated per request from its URL alone, for
//! crawls at scale (`ringcrawl-site --endless`, `scripts/scale.sh`).
//!
//! Shape, for an [`EndlessSpec`] with `pages = N`, `hosts = H`, `links = L`:
//!
//! * Page `n` (`0 <= n < N`) lives on host `h{n % H}.endless.test`
//!   ([`host_name`]); pages `0..H` are the hosts' roots, served at `/`,
//!   and every other page at `/p/{n}`. A path asked of a host the page does
//!   not live on, `/p/{n}` for a root or an `n >= N`, and anything else is
//!   a 404. So a URL names exactly one page and a page has exactly one URL.
//! * Page `n` links to `L` pages chosen by a seeded hash of `(n, i)` among
//!   the non-root pages: even slots on `n`'s own host (relative links
//!   `/p/{m}`), odd slots on any host (absolute links
//!   `http://h{k}.endless.test:PORT/p/{m}` (`https` with
//!   [`EndlessSpec::tls`]), the port taken from the
//!   request's `Host`). With `N` near a billion almost every link of a
//!   crawl of millions of pages is to a page not yet seen: 10M fetched
//!   pages discover about 100M URLs.
//! * A page is HTML of about [`EndlessSpec::page_bytes`] bytes: a title,
//!   the links, and filler text.
//!
//! Nothing is stored per page. What the site keeps is its count of requests
//! (`Requests`): the set of pages served at least once (one `u64` each;
//! the page number is the URL, so the count is exact) and the number of
//! requests for a page already served, so a crawl can be checked to fetch
//! every page exactly once. It costs about 16 bytes per page served.
//!
//! What this is not: a model of real sites (no redirects, faults, robots.txt
//! or non-HTML resources: the synthetic site in [`crate::synth`] has those),
//! and not I/O: [`EndlessSite::reply`] is pure but for the count.

#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::unreachable
)]

use std::collections::HashSet;
use std::fmt::Write as _;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::server::{Handler, Reply, Request};
use crate::synth::Delay;

/// The endless site's parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndlessSpec {
    /// Pages in the site (`hosts` of them are roots).
    pub pages: u64,
    /// Host names `h0.endless.test` .. `h{hosts-1}.endless.test`.
    pub hosts: u64,
    /// Links per page.
    pub links: usize,
    /// Approximate size of a page in bytes.
    pub page_bytes: usize,
    /// Seed of the link choices.
    pub seed: u64,
    /// Latency before every answer (a page's is always the same).
    pub delay: Delay,
    /// Served over https: roots and absolute links say `https://` (the
    /// certificate is the caller's, valid for `*.endless.test`).
    pub tls: bool,
}

impl Default for EndlessSpec {
    fn default() -> EndlessSpec {
        EndlessSpec {
            pages: 1_000_000_000,
            hosts: 4096,
            links: 10,
            page_bytes: 2048,
            seed: 1,
            delay: Delay::None,
            tls: false,
        }
    }
}

/// Domain of the endless site's host names.
pub const DOMAIN: &str = "endless.test";

/// `h{k}.endless.test`.
pub fn host_name(k: u64) -> String {
    format!("h{k}.{DOMAIN}")
}

/// The host index of `h{k}.endless.test` (any case, no port), if it is one.
fn host_index(host: &str) -> Option<u64> {
    let label = host
        .strip_prefix('h')?
        .strip_suffix(DOMAIN)?
        .strip_suffix('.')?;
    parse_number(label)
}

/// A decimal number without sign or leading zeros (so one page has one URL).
fn parse_number(s: &str) -> Option<u64> {
    if s.is_empty() || (s.len() > 1 && s.starts_with('0')) || !s.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    s.parse().ok()
}

/// splitmix64's finaliser: a fixed, well-mixed hash of `x`.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Words the filler text is made of.
const FILLER: &str = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod \
tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud \
exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat duis aute irure dolor in \
reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla pariatur excepteur sint \
occaecat cupidatat non proident sunt in culpa qui officia deserunt mollit anim id est laborum ";

/// The endless site: pages generated per request, and the count of
/// requests.
#[derive(Debug)]
pub struct EndlessSite {
    spec: EndlessSpec,
    requests: Requests,
}

impl EndlessSite {
    /// The site for `spec`; an error if it has fewer pages than twice its
    /// hosts, no host, or no link.
    pub fn new(spec: EndlessSpec) -> Result<EndlessSite, String> {
        if spec.hosts == 0 || spec.links == 0 || spec.pages < spec.hosts.saturating_mul(2) {
            return Err(format!(
                "the endless site needs at least one host and one link per page, and at least \
                 twice as many pages as hosts (got {} pages, {} hosts, {} links)",
                spec.pages, spec.hosts, spec.links
            ));
        }
        Ok(EndlessSite {
            spec,
            requests: Requests::default(),
        })
    }

    pub fn spec(&self) -> &EndlessSpec {
        &self.spec
    }

    /// The page a request for `path` on `host` (no port) gets, if any.
    pub fn page_at(&self, host: &str, path: &str) -> Option<u64> {
        let k = host_index(&host.to_ascii_lowercase()).filter(|&k| k < self.spec.hosts)?;
        if path == "/" {
            return Some(k);
        }
        let n = parse_number(path.strip_prefix("/p/")?)?;
        (n >= self.spec.hosts && n < self.spec.pages && n % self.spec.hosts == k).then_some(n)
    }

    /// The path of page `n` on its host.
    pub fn path_of(&self, n: u64) -> String {
        if n < self.spec.hosts {
            "/".to_string()
        } else {
            format!("/p/{n}")
        }
    }

    /// The pages page `n` links to, in order (repeats possible).
    pub fn links(&self, n: u64) -> impl Iterator<Item = u64> + '_ {
        let EndlessSpec {
            pages, hosts, seed, ..
        } = self.spec;
        let per_host = pages / hosts; // >= 2: pages >= 2 * hosts
        let own = n % hosts;
        (0..self.spec.links as u64).map(move |i| {
            let r = mix(seed ^ mix(n.wrapping_mul(64).wrapping_add(i)));
            if i % 2 == 0 {
                // A non-root page of n's own host: own + hosts * j, 1 <= j < per_host.
                let j = 1 + r % (per_host - 1);
                own + hosts * j
            } else {
                hosts + r % (pages - hosts)
            }
        })
    }

    /// The HTML of page `n` as served with a `Host` port suffix `port`
    /// (`":8080"`, or `""`).
    pub fn page_html(&self, n: u64, port: &str) -> String {
        let hosts = self.spec.hosts;
        let own = n % hosts;
        let mut html = String::with_capacity(self.spec.page_bytes + 128);
        let _ = write!(
            html,
            "<!DOCTYPE html>\n<html><head><title>Page {n}</title></head>\n<body>\n\
             <h1>Page {n} of {}</h1>\n<ul>\n",
            host_name(own)
        );
        for m in self.links(n) {
            let k = m % hosts;
            if k == own {
                let _ = writeln!(html, "<li><a href=\"/p/{m}\">page {m}</a></li>");
            } else {
                let _ = writeln!(
                    html,
                    "<li><a href=\"{scheme}://h{k}.{DOMAIN}{port}/p/{m}\">page {m}</a></li>",
                    scheme = self.scheme()
                );
            }
        }
        html.push_str("</ul>\n<p>");
        const TAIL: &str = "</p>\n</body></html>\n";
        let mut want = self
            .spec
            .page_bytes
            .saturating_sub(html.len().saturating_add(TAIL.len()));
        // Start the filler at a word chosen by the page, for some variety.
        let words: Vec<usize> = FILLER.match_indices(' ').map(|(i, _)| i + 1).collect();
        let start = words
            .get((mix(n) % words.len().max(1) as u64) as usize)
            .copied()
            .unwrap_or(0);
        let mut text = FILLER.get(start..).unwrap_or(FILLER);
        while want > 0 {
            let take = text.len().min(want);
            html.push_str(text.get(..take).unwrap_or(""));
            want -= take;
            text = FILLER;
        }
        html.push_str(TAIL);
        html
    }

    /// Answer `request`, and count it.
    pub fn reply(&self, request: &Request) -> Reply {
        match self.page_at(&request.host, &request.path) {
            Some(n) => {
                self.requests.count(n);
                let port = request
                    .authority
                    .rfind(':')
                    .and_then(|i| request.authority.get(i..))
                    .filter(|p| !p.contains(']'))
                    .unwrap_or("");
                let reply = Reply::html(200, self.page_html(n, port));
                match self.spec.delay.for_key(self.spec.seed, n) {
                    d if d.is_zero() => reply,
                    d => reply.delayed(d),
                }
            }
            None => {
                self.requests.not_found.fetch_add(1, Ordering::Relaxed);
                Reply::not_found()
            }
        }
    }

    /// A server handler for the site.
    pub fn handler(self: Arc<Self>) -> Handler {
        Arc::new(move |request: &Request| self.reply(request))
    }

    /// `https` with [`EndlessSpec::tls`], else `http`.
    pub fn scheme(&self) -> &'static str {
        if self.spec.tls {
            "https"
        } else {
            "http"
        }
    }

    /// The root URL of every host, `http://h{k}.endless.test:PORT/`.
    pub fn roots(&self, port: u16) -> Vec<String> {
        let scheme = self.scheme();
        (0..self.spec.hosts)
            .map(|k| format!("{scheme}://{}:{port}/", host_name(k)))
            .collect()
    }

    /// `h{k}.endless.test:PORT:ADDR` for every host: the crawler's
    /// `--resolve` values that pin the site to `addr`.
    pub fn pins(&self, port: u16, addr: &str) -> Vec<String> {
        (0..self.spec.hosts)
            .map(|k| format!("{}:{port}:{addr}", host_name(k)))
            .collect()
    }

    /// The count of requests so far.
    pub fn counts(&self) -> Counts {
        self.requests.counts()
    }

    /// The pages served more than once so far (at most `limit` of them),
    /// as `host path`.
    pub fn duplicated(&self, limit: usize) -> Vec<String> {
        self.requests
            .duplicated(limit)
            .into_iter()
            .map(|n| format!("{} {}", host_name(n % self.spec.hosts), self.path_of(n)))
            .collect()
    }
}

/// What the site has served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    /// Distinct pages served.
    pub pages: u64,
    /// Requests for a page served before.
    pub duplicates: u64,
    /// Requests answered 404.
    pub not_found: u64,
}

impl std::fmt::Display for Counts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "pages={} duplicates={} not_found={}",
            self.pages, self.duplicates, self.not_found
        )
    }
}

/// Shards of the set of pages served (so server threads seldom wait on
/// each other).
const SHARDS: usize = 64;
/// Pages served more than once that are remembered by number.
const DUPLICATES_KEPT: usize = 1000;

/// Hashes a page number, already a good key, with one multiply.
#[derive(Default)]
struct PageHasher(u64);

impl Hasher for PageHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = mix(n);
    }
}

type PageSet = HashSet<u64, BuildHasherDefault<PageHasher>>;

/// The count of requests: every page served, by number, in a sharded set.
#[derive(Debug)]
struct Requests {
    seen: Vec<Mutex<PageSet>>,
    duplicates: AtomicU64,
    duplicated: Mutex<Vec<u64>>,
    not_found: AtomicU64,
}

impl Default for Requests {
    fn default() -> Requests {
        Requests {
            seen: (0..SHARDS)
                .map(|_| Mutex::new(PageSet::default()))
                .collect(),
            duplicates: AtomicU64::new(0),
            duplicated: Mutex::new(Vec::new()),
            not_found: AtomicU64::new(0),
        }
    }
}

impl Requests {
    fn shard(&self, n: u64) -> Option<&Mutex<PageSet>> {
        self.seen.get((mix(n) >> 58) as usize % SHARDS)
    }

    fn count(&self, n: u64) {
        let Some(shard) = self.shard(n) else { return };
        let new = shard
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(n);
        if !new {
            self.duplicates.fetch_add(1, Ordering::Relaxed);
            let mut kept = self
                .duplicated
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if kept.len() < DUPLICATES_KEPT {
                kept.push(n);
            }
        }
    }

    fn counts(&self) -> Counts {
        let pages = self
            .seen
            .iter()
            .map(|s| {
                s.lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .len() as u64
            })
            .sum();
        Counts {
            pages,
            duplicates: self.duplicates.load(Ordering::Relaxed),
            not_found: self.not_found.load(Ordering::Relaxed),
        }
    }

    fn duplicated(&self, limit: usize) -> Vec<u64> {
        let kept = self
            .duplicated
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        kept.iter().take(limit).copied().collect()
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    fn site(pages: u64, hosts: u64) -> EndlessSite {
        EndlessSite::new(EndlessSpec {
            pages,
            hosts,
            ..EndlessSpec::default()
        })
        .unwrap()
    }

    fn request(host: &str, port: &str, path: &str) -> Request {
        Request {
            host: host.to_string(),
            authority: format!("{host}{port}"),
            path: path.to_string(),
            attempt: 0,
            headers: Vec::new(),
        }
    }

    /// The targets of a page's `<a href>`s, as `(host, path)`.
    fn hrefs(html: &str, own: &str) -> Vec<(String, String)> {
        html.split("href=\"")
            .skip(1)
            .map(|rest| {
                let href = &rest[..rest.find('"').unwrap()];
                match href.strip_prefix("http://") {
                    Some(abs) => {
                        let (authority, path) = abs.split_at(abs.find('/').unwrap());
                        let host = authority.split(':').next().unwrap();
                        (host.to_string(), path.to_string())
                    }
                    None => (own.to_string(), href.to_string()),
                }
            })
            .collect()
    }

    #[test]
    fn every_page_has_one_url_and_every_url_one_page() {
        let s = site(1_000_000, 100);
        assert_eq!(s.page_at("h7.endless.test", "/"), Some(7));
        assert_eq!(s.page_at("H7.Endless.Test", "/"), Some(7));
        assert_eq!(s.page_at("h7.endless.test", "/p/107"), Some(107));
        assert_eq!(s.path_of(107), "/p/107");
        assert_eq!(s.path_of(7), "/");
        for (host, path) in [
            ("h7.endless.test", "/p/7"),                       // a root has only `/`
            ("h8.endless.test", "/p/107"),                     // on another host
            ("h7.endless.test", "/p/0107"),                    // leading zero
            ("h7.endless.test", "/p/+107"),                    // sign
            ("h7.endless.test", "/p/1000007"),                 // past the last page
            ("h7.endless.test", "/p/107?x"),                   // query
            ("h100.endless.test", "/"),                        // no such host
            ("h07.endless.test", "/"),                         // leading zero
            ("h7.endless.testx", "/"),                         // other domain
            ("h7endless.test", "/"),                           // no dot
            ("endless.test", "/"),                             // no label
            ("h7.endless.test", "/p/"),                        // no number
            ("h7.endless.test", "/p/99999999999999999999999"), // overflow
        ] {
            assert_eq!(s.page_at(host, path), None, "{host} {path}");
        }
    }

    #[test]
    fn links_land_on_pages_of_the_site_half_of_them_on_the_same_host() {
        let s = site(1_000_000_000, 4096);
        for n in [0, 1, 4095, 4096, 123_456_789, 999_999_999] {
            let html = s.page_html(n, ":8080");
            let own = host_name(n % 4096);
            let links = hrefs(&html, &own);
            assert_eq!(links.len(), 10, "{html}");
            let same = links.iter().filter(|(h, _)| *h == own).count();
            assert!(same >= 5, "{links:?}");
            for (host, path) in &links {
                let m = s.page_at(host, path).unwrap();
                assert!(m >= 4096, "a link to a root: {host} {path}");
            }
            assert!(html.contains(":8080/p/"), "{html}");
            // The same page every time.
            assert_eq!(html, s.page_html(n, ":8080"));
        }
    }

    #[test]
    fn pages_are_about_the_size_asked() {
        let s = site(1_000_000_000, 4096);
        for n in [0, 77, 999_999_999] {
            let len = s.page_html(n, ":8080").len();
            assert!((2048..2048 + 64).contains(&len), "{len}");
        }
        let big = EndlessSite::new(EndlessSpec {
            page_bytes: 10_000,
            ..EndlessSpec::default()
        })
        .unwrap();
        assert_eq!(big.page_html(5, "").len(), 10_000);
    }

    #[test]
    fn a_walk_of_a_hundred_thousand_pages_mostly_finds_new_urls() {
        // Breadth-first from every root, as a crawler goes: the URLs found
        // per page fetched stay near the links per page.
        let s = site(1_000_000_000, 4096);
        let mut seen: HashSet<u64> = (0..4096).collect();
        let mut queue: std::collections::VecDeque<u64> = (0..4096).collect();
        let mut fetched = 0u64;
        while fetched < 100_000 {
            let n = queue.pop_front().unwrap();
            fetched += 1;
            for m in s.links(n) {
                if seen.insert(m) {
                    queue.push_back(m);
                }
            }
        }
        let per_page = seen.len() as f64 / fetched as f64;
        assert!(per_page > 9.9, "{per_page} URLs per page");
    }

    #[test]
    fn the_count_says_which_pages_were_served_twice() {
        let s = site(1_000_000, 100);
        let reply = s.reply(&request("h3.endless.test", ":8080", "/"));
        let Reply::Http { status, body, .. } = reply else {
            panic!("{reply:?}")
        };
        assert_eq!(status, 200);
        let html = String::from_utf8(body).unwrap();
        assert!(html.contains("http://h"), "{html}");
        assert!(html.contains(".endless.test:8080/p/"), "{html}");
        s.reply(&request("h3.endless.test", ":8080", "/p/103"));
        s.reply(&request("h3.endless.test", "", "/p/103"));
        s.reply(&request("h3.endless.test", "", "/nothing"));
        assert_eq!(
            s.counts(),
            Counts {
                pages: 2,
                duplicates: 1,
                not_found: 1
            }
        );
        assert_eq!(s.duplicated(10), ["h3.endless.test /p/103"]);
    }

    #[test]
    fn answers_wait_the_delay_asked_the_same_for_a_page_each_time() {
        let slow = EndlessSite::new(EndlessSpec {
            delay: "20-40".parse().unwrap(),
            ..EndlessSpec::default()
        })
        .unwrap();
        let delay_of = |reply: Reply| match reply {
            Reply::Script(steps) => match steps.first() {
                Some(crate::server::Step::Sleep(d)) => *d,
                s => panic!("{s:?}"),
            },
            _ => std::time::Duration::ZERO,
        };
        let root = request(&host_name(3), ":80", "/");
        let first = delay_of(slow.reply(&root));
        assert!((20..=40).contains(&first.as_millis()), "{first:?}");
        assert_eq!(delay_of(slow.reply(&root)), first);
        assert_eq!(
            delay_of(site(1000, 10).reply(&root)),
            std::time::Duration::ZERO
        );
    }

    #[test]
    fn a_site_served_over_tls_lists_and_links_https_urls() {
        let secure = EndlessSite::new(EndlessSpec {
            hosts: 8,
            tls: true,
            ..EndlessSpec::default()
        })
        .unwrap();
        assert_eq!(secure.roots(8443)[3], "https://h3.endless.test:8443/");
        let html = secure.page_html(3, ":8443");
        assert!(html.contains("href=\"https://h"), "{html}");
        assert!(!html.contains("http://"), "{html}");
    }

    #[test]
    fn a_site_too_small_for_its_hosts_is_refused() {
        for (pages, hosts, links) in [(10, 6, 10), (10, 0, 10), (100, 10, 0)] {
            let spec = EndlessSpec {
                pages,
                hosts,
                links,
                ..EndlessSpec::default()
            };
            assert!(EndlessSite::new(spec).is_err());
        }
        let smallest = EndlessSite::new(EndlessSpec {
            pages: 12,
            hosts: 6,
            ..EndlessSpec::default()
        })
        .unwrap();
        for n in 0..12 {
            for m in smallest.links(n) {
                assert!((6..12).contains(&m));
                let host = host_name(m % 6);
                assert_eq!(smallest.page_at(&host, &smallest.path_of(m)), Some(m));
            }
        }
    }
}
