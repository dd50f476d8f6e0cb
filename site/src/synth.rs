//! A deterministic synthetic web site (pure: no I/O).
//!
//! Shape, for a [`SiteSpec`] with `pages = N` and `links = L`:
//!
//! * `/` is page 0; page `i` for `i` in `1..N` is `/p/{i}.html` (page 0 is
//!   served at `/` only). Page `i > 0` is linked from its tree parent
//!   `(i - 1) / k` with fan-out `k = max(2, L / 2)`, so every page is
//!   reachable from `/`; the remaining `L - children` link slots of a page go
//!   to seeded pseudo-random pages. Every page also links to `/` and to its
//!   parent in the nav bar.
//! * About 1% of pages (at least one) carry each kind of extra link:
//!   missing pages `/missing/{j}.html` (404), redirects `/r/{j}` (301 to a
//!   page; every third one, `j % 3 == 1`, chains through `/r2/{j}` which
//!   answers 302 with an absolute `Location`), stylesheets
//!   `/static/{j}.css` (`text/css`), images `/img/{j}.png` (`image/png`, a
//!   real 1x1 PNG whose text chunk holds the bait
//!   `<a href="/should-not-be-followed">`, which a crawler must not follow
//!   since the body is not HTML), and off-site links `http://offsite-{j}.example/`
//!   and `http://www.other.example/x`. Redirect targets are ordinary pages
//!   that are also linked directly, so a crawler must coalesce them.
//! * Links come in the styles real pages have: double, single and unquoted
//!   attribute values, upper-case `<A HREF=...>`, document-relative
//!   (`3.html`, `./3.html`, `../p/3.html`), absolute and protocol-relative
//!   links to the same host (only when the request's `Host` is known),
//!   `#fragment` links (one with an entity-encoded `&amp;` in the fragment),
//!   and same-page `#top` / `#main` anchors. The footer has a `mailto:` link.
//!   No generated URL has a query string.
//!
//! Every page's head links a stylesheet `/static/{j}.css`, and images appear
//! both as `<a href>` and `<img src>`, but every such resource is also the
//! target of some `<a href>`, so the set of paths a crawl must fetch does not
//! depend on whether the crawler follows `<link href>` or `<img src>`.
//!
//! [`SynthSite::expected_paths`] walks the link graph that the page
//! generator itself renders, so it cannot disagree with what is served.
//!
//! Three options make the site hostile or big; all default to off, and with
//! all off the site is exactly the one described above:
//!
//! * **Faults** ([`SiteSpec::fault_percent`]): that percentage of pages
//!   (seeded; never `/`) is answered with a [`Fault`] instead of the page:
//!   a hang-up, a reset or a short body, a broken head, a 500 or 503, a body
//!   too slow to finish, bad chunking. A faulty page yields no links to a
//!   crawler (fault bodies hold no links, and the 500/503 bodies that do are
//!   not 2xx), so the walk does not follow them: a page reachable only
//!   through faulty pages is not expected. [`SynthSite::good_paths`] and
//!   [`SynthSite::faulty_paths`] split the expected set.
//! * **Latency** ([`SiteSpec::delay`]): a fixed, uniform or exponential
//!   delay (seeded per URL) before every response, served as a
//!   [`Step::Sleep`] so it costs the server nothing.
//! * **Hosts** ([`SiteSpec::hosts`]): the site is split over the names
//!   `h{k}.site.test` ([`SynthSite::host_name`]); page `i` lives on host
//!   `i % hosts`, extra `j` (redirect, stylesheet, image) on host
//!   `j % hosts`, every host has a `/` (host 0's is page 0; the others are
//!   small hubs linking to their host's first pages), page 0 links to every
//!   other host's `/`, and links across hosts are absolute
//!   (`http://h{k}.site.test:PORT/...`, the port taken from the request's
//!   `Host`). A request whose `Host` is not one of the names is served as
//!   host 0; a path asked of a host it does not live on is a 404. A
//!   crawler needs `--resolve h{k}.site.test:PORT:127.0.0.1` for every `k`,
//!   and either every root ([`SynthSite::roots`]) or `--lenient`.

use super::server::{Handler, Reply, Request, Step};
use std::collections::{BTreeSet, VecDeque};
use std::fmt::Write as _;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

/// Parameters of a synthetic site. The same spec gives the same site,
/// byte for byte, everywhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteSpec {
    /// Number of HTML pages, including `/` (values below 1 count as 1).
    pub pages: usize,
    /// Links per page to other pages (tree children plus random pages).
    pub links: usize,
    /// Seed of the pseudo-random choices.
    pub seed: u64,
    /// Approximate size in bytes of each HTML page.
    pub page_bytes: usize,
    /// Percentage (0..=100) of pages other than `/` answered with a
    /// [`Fault`] instead of the page (seeded).
    pub fault_percent: u32,
    /// Latency before every response.
    pub delay: Delay,
    /// Number of host names the site is split over (values below 1 count
    /// as 1). With 1 the site answers on any host.
    pub hosts: usize,
    /// Served over TLS: absolute links, expected URLs and roots are
    /// `https://` (the server must be started with TLS to match).
    pub tls: bool,
}

impl Default for SiteSpec {
    fn default() -> Self {
        SiteSpec {
            pages: 1000,
            links: 10,
            seed: 1,
            page_bytes: 5000,
            fault_percent: 0,
            delay: Delay::None,
            hosts: 1,
            tls: false,
        }
    }
}

/// Latency injected before every response, in whole milliseconds or more
/// precisely; the same URL always gets the same delay for a given seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Delay {
    /// Answer at once.
    #[default]
    None,
    /// Always this long.
    Fixed(Duration),
    /// Uniform in `low..=high`.
    Uniform(Duration, Duration),
    /// Exponential with this mean (capped at 20 times the mean).
    Exp(Duration),
}

impl FromStr for Delay {
    type Err = String;

    /// `N` (fixed), `A-B` (uniform) or `exp:MEAN`, all in milliseconds;
    /// `0` is no delay.
    fn from_str(s: &str) -> Result<Delay, String> {
        let ms = |v: &str| {
            v.trim()
                .parse::<u64>()
                .map(Duration::from_millis)
                .map_err(|_| format!("bad delay {s:?}: expected N, A-B or exp:MEAN (milliseconds)"))
        };
        let delay = if let Some(mean) = s.strip_prefix("exp:") {
            Delay::Exp(ms(mean)?)
        } else if let Some((a, b)) = s.split_once('-') {
            let (a, b) = (ms(a)?, ms(b)?);
            if a > b {
                return Err(format!("bad delay {s:?}: {a:?} > {b:?}"));
            }
            Delay::Uniform(a, b)
        } else {
            Delay::Fixed(ms(s)?)
        };
        Ok(match delay {
            Delay::Fixed(d) | Delay::Exp(d) | Delay::Uniform(_, d) if d.is_zero() => Delay::None,
            d => d,
        })
    }
}

impl Delay {
    /// The delay of the resource `key` of a site seeded `seed`: always
    /// the same for the same two.
    pub fn for_key(self, seed: u64, key: u64) -> Duration {
        let rng = || Rng::new(seed, STREAM_DELAY, key);
        match self {
            Delay::None => Duration::ZERO,
            Delay::Fixed(d) => d,
            Delay::Uniform(low, high) => {
                let span = (high - low).as_micros().min(u128::from(u64::MAX)) as usize;
                low + Duration::from_micros(rng().below(span.saturating_add(1)) as u64)
            }
            Delay::Exp(mean) => {
                let u = rng().unit();
                let factor = (-(1.0 - u).ln()).min(20.0);
                mean.mul_f64(factor)
            }
        }
    }
}

impl std::fmt::Display for Delay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Delay::None => write!(f, "0"),
            Delay::Fixed(d) => write!(f, "{}", d.as_millis()),
            Delay::Uniform(a, b) => write!(f, "{}-{}", a.as_millis(), b.as_millis()),
            Delay::Exp(m) => write!(f, "exp:{}", m.as_millis()),
        }
    }
}

/// How a faulty page is answered. Fault bodies hold no links.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fault {
    /// Close without sending a byte, on every attempt.
    Hangup,
    /// Head and part of the body, then a reset (RST).
    ResetMidBody,
    /// Fewer body bytes than `Content-Length`, then a normal close.
    ShortBody,
    /// A status line that is not one (`HTTP/1.1 abc OK`).
    BadStatusLine,
    /// Bytes that are not HTTP at all (an SSH banner or binary noise).
    Garbage,
    /// A response head of more than 64 KiB.
    HugeHead,
    /// Two different `Content-Length` headers.
    ConflictingLength,
    /// A 500 whose body is the page (with its links).
    ServerError,
    /// A 503 with `Retry-After` whose body is the page (with its links).
    Unavailable,
    /// A body trickled out (a few bytes every 250 ms, never more than 1 s
    /// apart) for 10 s, then a close short of `Content-Length`: a fetch
    /// deadline under 10 s ends it, and a longer one sees it truncated.
    /// Writing stops as soon as the client is gone.
    SlowBody,
    /// `Transfer-Encoding: chunked` with a chunk-size line that is not hex.
    BadChunk,
}

impl Fault {
    /// Every kind, in the order the seeded choice indexes.
    pub const ALL: [Fault; 11] = [
        Fault::Hangup,
        Fault::ResetMidBody,
        Fault::ShortBody,
        Fault::BadStatusLine,
        Fault::Garbage,
        Fault::HugeHead,
        Fault::ConflictingLength,
        Fault::ServerError,
        Fault::Unavailable,
        Fault::SlowBody,
        Fault::BadChunk,
    ];

    /// A short name (`snake_case`), used by `ringcrawl-site --list-faults`.
    pub fn name(self) -> &'static str {
        match self {
            Fault::Hangup => "hangup",
            Fault::ResetMidBody => "reset_mid_body",
            Fault::ShortBody => "short_body",
            Fault::BadStatusLine => "bad_status_line",
            Fault::Garbage => "garbage",
            Fault::HugeHead => "huge_head",
            Fault::ConflictingLength => "conflicting_length",
            Fault::ServerError => "status_500",
            Fault::Unavailable => "status_503",
            Fault::SlowBody => "slow_body",
            Fault::BadChunk => "bad_chunk",
        }
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

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

// ---------------------------------------------------------------------------
// Pseudo-random numbers: splitmix64, self-contained so the site is the same
// everywhere for a given seed.

const STREAM_LINKS: u64 = 1;
const STREAM_TEXT: u64 = 2;
const STREAM_REDIRECT: u64 = 3;
const STREAM_FAULT: u64 = 4;
const STREAM_DELAY: u64 = 5;
const STREAM_PLACE: u64 = 16;

fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

struct Rng(u64);

impl Rng {
    fn new(seed: u64, stream: u64, index: u64) -> Rng {
        Rng(mix64(
            seed ^ mix64(stream.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ mix64(index)),
        ))
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.0)
    }

    /// Uniform-ish in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// FNV-1a, to turn a URL into a stream index.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

// ---------------------------------------------------------------------------
// The link graph.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Page(usize),
    /// `/` of host `k >= 1` of a multi-host site.
    Hub(usize),
    /// `/r2/{j}`, the second hop of a redirect chain.
    Chain(usize),
    Missing(usize),
    Redirect(usize),
    Css(usize),
    Png(usize),
    Offsite(usize),
    OtherSite,
}

impl Target {
    /// The on-site path, or `None` for off-site targets.
    fn path(self) -> Option<String> {
        Some(match self {
            Target::Page(i) => page_path(i),
            Target::Hub(_) => "/".to_string(),
            Target::Chain(j) => format!("/r2/{j}"),
            Target::Missing(j) => format!("/missing/{j}.html"),
            Target::Redirect(j) => format!("/r/{j}"),
            Target::Css(j) => format!("/static/{j}.css"),
            Target::Png(j) => format!("/img/{j}.png"),
            Target::Offsite(_) | Target::OtherSite => return None,
        })
    }

    /// The host (index) an on-site target lives on.
    fn host(self, hosts: usize) -> usize {
        let hosts = hosts.max(1);
        match self {
            Target::Page(i) => i % hosts,
            Target::Hub(k) => k,
            Target::Chain(j)
            | Target::Missing(j)
            | Target::Redirect(j)
            | Target::Css(j)
            | Target::Png(j) => j % hosts,
            Target::Offsite(_) | Target::OtherSite => 0,
        }
    }

    /// The off-site URL, or `None` for on-site targets.
    fn offsite_url(self) -> Option<String> {
        match self {
            Target::Offsite(j) => Some(format!("http://offsite-{j}.example/")),
            Target::OtherSite => Some("http://www.other.example/x".to_string()),
            _ => None,
        }
    }
}

/// How a link is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Double,
    Single,
    Unquoted,
    Upper,
    ExtraAttrs,
    Relative,
    DotRelative,
    ParentRelative,
    Absolute,
    ProtocolRelative,
    Fragment,
    FragmentEntity,
}

impl Style {
    fn pick(rng: &mut Rng) -> Style {
        match rng.below(100) {
            0..=44 => Style::Double,
            45..=54 => Style::Single,
            55..=60 => Style::Unquoted,
            61..=64 => Style::Upper,
            65..=69 => Style::ExtraAttrs,
            70..=75 => Style::Relative,
            76..=78 => Style::DotRelative,
            79..=81 => Style::ParentRelative,
            82..=86 => Style::Absolute,
            87..=89 => Style::ProtocolRelative,
            90..=96 => Style::Fragment,
            _ => Style::FragmentEntity,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Link {
    target: Target,
    style: Style,
}

/// Everything page `i` links to, in the places the renderer puts it.
struct PageLinks {
    css: usize,
    parent: Option<usize>,
    children: Vec<Link>,
    body: Vec<Link>,
    extras: Vec<Target>,
}

/// What a path serves.
enum Resource {
    Page(usize),
    Hub(usize),
    Redirect {
        status: u16,
        to: Target,
        absolute: bool,
    },
    Css(usize),
    Png(usize),
    NotFound,
}

fn page_path(i: usize) -> String {
    if i == 0 {
        "/".to_string()
    } else {
        format!("/p/{i}.html")
    }
}

/// Parses a canonical decimal index (no sign, no leading zeros).
fn parse_index(s: &str) -> Option<usize> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || (s.len() > 1 && s.starts_with('0'))
    {
        return None;
    }
    s.parse().ok()
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

    /// The fault page `i` is answered with, if any (never for page 0).
    pub fn page_fault(&self, i: usize) -> Option<Fault> {
        if i == 0 || i >= self.page_count() || self.spec.fault_percent == 0 {
            return None;
        }
        let mut rng = Rng::new(self.spec.seed, STREAM_FAULT, i as u64);
        if rng.below(100) >= self.spec.fault_percent as usize {
            return None;
        }
        Some(Fault::ALL[rng.below(Fault::ALL.len())])
    }

    /// The fault a path is answered with on the host it lives on, if any.
    pub fn fault_at(&self, path: &str) -> Option<Fault> {
        let path = path.split(['?', '#']).next().unwrap_or_default();
        let i = path
            .strip_prefix("/p/")
            .and_then(|rest| rest.strip_suffix(".html"))
            .and_then(parse_index)?;
        self.page_fault(i)
    }

    /// The latency before the response to `path` on host `host`.
    fn delay_for(&self, host: usize, path: &str) -> Duration {
        let key = fnv1a(path.as_bytes()) ^ mix64(host as u64);
        self.spec.delay.for_key(self.spec.seed, key)
    }

    /// The host (index) a request with this `Host` (port optional) is for:
    /// `h{k}.site.test` is `k`; anything else, and any host of a
    /// single-host site, is 0.
    pub fn host_index(&self, authority: &str) -> usize {
        if self.hosts == 1 {
            return 0;
        }
        let host = strip_port(authority).to_ascii_lowercase();
        host.strip_suffix(HOST_DOMAIN)
            .and_then(|h| h.strip_suffix('.'))
            .and_then(|h| h.strip_prefix('h'))
            .and_then(parse_index)
            .filter(|&k| k < self.hosts)
            .unwrap_or(0)
    }

    /// `scheme://authority` of host `k` for a request to `authority`: the
    /// authority itself on a single-host site, else `h{k}.site.test` with
    /// the authority's port.
    fn origin(&self, k: usize, authority: &str) -> String {
        let scheme = self.scheme();
        if self.hosts == 1 {
            return format!("{scheme}://{authority}");
        }
        let port = authority
            .rsplit_once(':')
            .filter(|(_, p)| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            .map(|(_, p)| format!(":{p}"))
            .unwrap_or_default();
        format!("{scheme}://{}{port}", Self::host_name(k))
    }

    /// `https` for a site served over TLS, else `http`.
    fn scheme(&self) -> &'static str {
        if self.spec.tls {
            "https"
        } else {
            "http"
        }
    }

    fn redirect_chained(j: usize) -> bool {
        j % 3 == 1
    }

    fn redirect_target(&self, j: usize) -> usize {
        let pages = self.page_count();
        if j == 0 {
            // A page that "/" links to directly as well.
            usize::from(pages > 1)
        } else {
            Rng::new(self.spec.seed, STREAM_REDIRECT, j as u64).below(pages)
        }
    }

    fn page_links(&self, i: usize) -> PageLinks {
        let pages = self.page_count();
        let mut rng = Rng::new(self.spec.seed, STREAM_LINKS, i as u64);
        let first_child = i.saturating_mul(self.fanout).saturating_add(1);
        let children: Vec<Link> = (first_child..first_child.saturating_add(self.fanout))
            .take_while(|&c| c < pages)
            .map(|c| Link {
                target: Target::Page(c),
                style: Style::pick(&mut rng),
            })
            .collect();
        let random = self.spec.links.saturating_sub(children.len());
        let body = (0..random)
            .map(|_| {
                let target = Target::Page(rng.below(pages));
                Link {
                    target,
                    style: Style::pick(&mut rng),
                }
            })
            .collect();
        PageLinks {
            css: i % self.extras,
            parent: (i > 0).then(|| (i - 1) / self.fanout),
            children,
            body,
            extras: self.placed[i].clone(),
        }
    }

    /// The `/` of page `i`'s host: page 0, or the host's hub.
    fn home_of(&self, i: usize) -> Target {
        match i % self.hosts {
            0 => Target::Page(0),
            k => Target::Hub(k),
        }
    }

    /// The other hosts' roots, linked from page 0 of a multi-host site.
    fn hubs(&self) -> impl Iterator<Item = Target> {
        (1..self.hosts).map(Target::Hub)
    }

    /// The pages the hub of host `k` links to: the host's first pages.
    fn hub_pages(&self, k: usize) -> impl Iterator<Item = usize> {
        (k..self.page_count())
            .step_by(self.hosts)
            .take(self.spec.links.max(1))
    }

    /// Every target page `i` links to (including itself, for its `#top` and
    /// `#main` anchors).
    fn page_targets(&self, i: usize) -> Vec<Target> {
        let pl = self.page_links(i);
        let mut out = vec![Target::Css(pl.css), self.home_of(i), Target::Page(i)];
        if i == 0 {
            out.extend(self.hubs());
        }
        out.extend(pl.parent.map(Target::Page));
        out.extend(pl.children.iter().map(|l| l.target));
        out.extend(pl.body.iter().map(|l| l.target));
        out.extend(pl.extras.iter().copied());
        out
    }

    /// Every target the hub of host `k` links to.
    fn hub_targets(&self, k: usize) -> Vec<Target> {
        let mut out = vec![Target::Page(0)];
        out.extend(self.hub_pages(k).map(Target::Page));
        out
    }

    fn classify(&self, host: usize, path: &str) -> Resource {
        let path = path.split(['?', '#']).next().unwrap_or_default();
        let index = |prefix: &str, suffix: &str| {
            path.strip_prefix(prefix)
                .and_then(|rest| rest.strip_suffix(suffix))
                .and_then(parse_index)
        };
        // An extra lives on one host only.
        let here = |j: &usize| j % self.hosts == host;
        if path == "/" {
            return match host {
                0 => Resource::Page(0),
                k => Resource::Hub(k),
            };
        }
        if let Some(i) = index("/p/", ".html") {
            if i >= 1 && i < self.page_count() && i % self.hosts == host {
                return Resource::Page(i);
            }
            return Resource::NotFound;
        }
        if let Some(j) = index("/r/", "").filter(|&j| j < self.extras && here(&j)) {
            let to = if Self::redirect_chained(j) {
                Target::Chain(j)
            } else {
                Target::Page(self.redirect_target(j))
            };
            return Resource::Redirect {
                status: 301,
                to,
                absolute: false,
            };
        }
        if let Some(j) =
            index("/r2/", "").filter(|&j| j < self.extras && Self::redirect_chained(j) && here(&j))
        {
            return Resource::Redirect {
                status: 302,
                to: Target::Page(self.redirect_target(j)),
                absolute: true,
            };
        }
        if let Some(j) = index("/static/", ".css").filter(|&j| j < self.extras && here(&j)) {
            return Resource::Css(j);
        }
        if let Some(j) = index("/img/", ".png").filter(|&j| j < self.extras && here(&j)) {
            return Resource::Png(j);
        }
        Resource::NotFound
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

    /// A faulty page's reply.
    fn fault_reply(&self, fault: Fault, i: usize, authority: &str) -> Reply {
        const HEAD: &str = "HTTP/1.0 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n";
        let mut rng = Rng::new(self.spec.seed, STREAM_FAULT, i as u64 ^ (1 << 63));
        let raw = |bytes: Vec<u8>| Reply::Script(vec![Step::Write(bytes), Step::Close]);
        match fault {
            Fault::Hangup => Reply::Hangup,
            Fault::ResetMidBody => {
                let sent = 1000 + rng.below(3000);
                let mut bytes = format!("{HEAD}Content-Length: {}\r\n\r\n", sent * 4).into_bytes();
                bytes.extend(filler(sent));
                Reply::Script(vec![
                    Step::Write(bytes),
                    Step::Sleep(Duration::from_millis(100)),
                    Step::Reset,
                ])
            }
            Fault::ShortBody => {
                let sent = 500 + rng.below(3000);
                let mut bytes = format!("{HEAD}Content-Length: {}\r\n\r\n", sent * 2).into_bytes();
                bytes.extend(filler(sent));
                raw(bytes)
            }
            Fault::BadStatusLine => {
                let line = *[
                    "HTTP/1.1 abc OK",
                    "HTTP/1.0 2000 OK",
                    "HTTP/9 200 OK",
                    "HTTP/1.0200 OK",
                ]
                .get(rng.below(4))
                .unwrap_or(&"HTTP/1.1 abc OK");
                raw(
                    format!("{line}\r\nContent-Type: text/html\r\n\r\n<p>status</p>\n")
                        .into_bytes(),
                )
            }
            Fault::Garbage => raw(if rng.below(2) == 0 {
                b"SSH-2.0-OpenSSH_9.6\r\n".to_vec()
            } else {
                let mut noise: Vec<u8> = (0..64).map(|_| rng.next() as u8 | 0x80).collect();
                noise.extend_from_slice(b"\r\n\r\n");
                noise
            }),
            Fault::HugeHead => {
                let mut head = String::from(HEAD);
                head.push_str("X-Padding: ");
                head.push_str(&"p".repeat(70_000 + rng.below(30_000)));
                head.push_str("\r\nContent-Length: 2\r\n\r\nok");
                raw(head.into_bytes())
            }
            Fault::ConflictingLength => raw(format!(
                "{HEAD}Content-Length: 5\r\nContent-Length: {}\r\n\r\nhello",
                6 + rng.below(100)
            )
            .into_bytes()),
            Fault::ServerError => Reply::html(500, self.render_page(i, authority)),
            Fault::Unavailable => Reply::Http {
                status: 503,
                headers: vec![
                    ("Retry-After".to_string(), (1 + rng.below(120)).to_string()),
                    (
                        "Content-Type".to_string(),
                        "text/html; charset=utf-8".to_string(),
                    ),
                ],
                body: self.render_page(i, authority).into_bytes(),
            },
            Fault::SlowBody => {
                let mut steps = vec![Step::Write(
                    format!("{HEAD}Content-Length: 100000\r\n\r\n").into_bytes(),
                )];
                for _ in 0..40 {
                    steps.push(Step::Write(filler(64)));
                    steps.push(Step::Sleep(Duration::from_millis(250)));
                }
                steps.push(Step::Close);
                Reply::Script(steps)
            }
            Fault::BadChunk => raw(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\
                  Transfer-Encoding: chunked\r\n\r\n\
                  5\r\n<p>x \r\nzz\r\nboom\r\n0\r\n\r\n"
                .to_vec()),
        }
    }

    /// The HTML of page `i` as served for `authority` (see
    /// [`SynthSite::respond_to`]), or `None` if there is no such page.
    /// Faults are not applied.
    pub fn page_html(&self, i: usize, authority: &str) -> Option<String> {
        (i < self.page_count()).then(|| self.render_page(i, authority))
    }

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

    /// The roots of a crawl at `authority`: `http://{authority}/`, or every
    /// host's `/` for a multi-host site.
    pub fn roots(&self, authority: &str) -> Vec<String> {
        (0..self.hosts)
            .map(|k| format!("{}/", self.origin(k, authority)))
            .collect()
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

    // -----------------------------------------------------------------------
    // Rendering.

    /// How a page on host `here` refers to `target` outside the body text:
    /// root-relative (or absolute, if asked and the authority is known) on
    /// the same host, absolute to another host.
    fn url_of(&self, target: Target, here: usize, authority: &str, absolute: bool) -> String {
        let Some(path) = target.path() else {
            return target.offsite_url().unwrap_or_default();
        };
        let host = target.host(self.hosts);
        if host != here {
            format!("{}{path}", self.origin(host, authority))
        } else if absolute && !authority.is_empty() {
            format!("{}://{authority}{path}", self.scheme())
        } else {
            path
        }
    }

    fn href(&self, link: Link, here: usize, authority: &str) -> String {
        let path = match link.target.path() {
            Some(p) => p,
            None => return link.target.offsite_url().unwrap_or_default(),
        };
        let here_host = here % self.hosts;
        if link.target.host(self.hosts) != here_host {
            return self.url_of(link.target, here_host, authority, true);
        }
        let page = match link.target {
            Target::Page(j) if j > 0 => Some(j),
            _ => None,
        };
        match (link.style, page) {
            (Style::Absolute, _) if !authority.is_empty() => {
                format!("{}://{authority}{path}", self.scheme())
            }
            (Style::ProtocolRelative, _) if !authority.is_empty() => format!("//{authority}{path}"),
            (Style::Relative, Some(j)) if here == 0 => format!("p/{j}.html"),
            (Style::DotRelative, Some(j)) if here == 0 => format!("./p/{j}.html"),
            (Style::ParentRelative, Some(j)) if here == 0 => format!("p/{j}.html"),
            (Style::Relative, Some(j)) => format!("{j}.html"),
            (Style::DotRelative, Some(j)) => format!("./{j}.html"),
            (Style::ParentRelative, Some(j)) => format!("../p/{j}.html"),
            (Style::Fragment, _) => format!("{path}#section-{}", path.len() % 7),
            (Style::FragmentEntity, _) => format!("{path}#notes&amp;refs"),
            _ => path,
        }
    }

    fn anchor(&self, out: &mut String, link: Link, here: usize, authority: &str, text: &str) {
        let href = self.href(link, here, authority);
        let style = match link.style {
            // `<a href=/>` reads as a self-closing tag to naive parsers.
            Style::Unquoted if href == "/" => Style::Double,
            s => s,
        };
        let _ = match style {
            Style::Single => write!(out, "<a href='{href}'>{text}</a>"),
            Style::Unquoted => write!(out, "<a href={href}>{text}</a>"),
            Style::Upper => write!(out, "<A HREF=\"{href}\">{text}</A>"),
            Style::ExtraAttrs => write!(
                out,
                "<a class=\"internal\" title=\"{text}\"\n   href=\"{href}\">{text}</a>"
            ),
            _ => write!(out, "<a href=\"{href}\">{text}</a>"),
        };
    }

    fn render_page(&self, i: usize, authority: &str) -> String {
        let pl = self.page_links(i);
        let here = i % self.hosts;
        let mut rng = Rng::new(self.spec.seed, STREAM_TEXT, i as u64);
        let budget = self.spec.page_bytes;
        let mut out = String::with_capacity(budget + 2048);
        let topic = format!("{} {}", cap(rng.pick(WORDS)), cap(rng.pick(WORDS)));
        let title = if i == 0 {
            format!("Welcome: {topic}")
        } else {
            format!("Page {i}: {topic}")
        };
        let _ = write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{title} &middot; Synthetic Site</title>\n\
             <meta name=\"description\" content=\"Synthetic page {i} of {pages}, seed {seed}.\">\n\
             <link rel=\"stylesheet\" href=\"{css}\">\n</head>\n<body id=\"top\">\n\
             <header>\n<nav class=\"site-nav\">\n<a href=\"/\">Home</a>\n",
            pages = self.page_count(),
            seed = self.spec.seed,
            css = self.url_of(Target::Css(pl.css), here, authority, false),
        );
        if let Some(parent) = pl.parent {
            let up = self.url_of(Target::Page(parent), here, authority, false);
            let _ = writeln!(out, "<a href=\"{up}\">Up</a>");
        }
        let _ = write!(
            out,
            "<a href=\"#main\">Skip to content</a>\n</nav>\n</header>\n<main id=\"main\">\n\
             <h1>{title}</h1>\n<p class=\"lede\">"
        );
        let words = 18 + rng.below(12);
        push_words(&mut out, &mut rng, words, &mut Vec::new());
        out.push_str("</p>\n");

        if !pl.children.is_empty() {
            out.push_str("<h2>Sections</h2>\n<ul class=\"toc\">\n");
            for &link in &pl.children {
                let text = anchor_text(&mut rng, link.target);
                out.push_str("<li>");
                self.anchor(&mut out, link, i, authority, &text);
                out.push_str("</li>\n");
            }
            out.push_str("</ul>\n");
        }

        for chunk in pl.body.chunks(2) {
            let mut anchors: Vec<String> = chunk
                .iter()
                .map(|&link| {
                    let text = anchor_text(&mut rng, link.target);
                    let mut a = String::new();
                    self.anchor(&mut a, link, i, authority, &text);
                    a
                })
                .collect();
            out.push_str("<p>");
            let words = 25 + rng.below(35);
            push_words(&mut out, &mut rng, words, &mut anchors);
            out.push_str("</p>\n");
        }

        if !pl.extras.is_empty() {
            out.push_str("<aside class=\"related\">\n<h2>See also</h2>\n<ul>\n");
            for &target in &pl.extras {
                let href = self.url_of(target, here, authority, false);
                let _ = match target {
                    Target::Missing(j) => {
                        writeln!(out, "<li><a href=\"{href}\">Archived article {j}</a></li>")
                    }
                    Target::Redirect(j) => {
                        writeln!(out, "<li><a href=\"{href}\">Moved article {j}</a></li>")
                    }
                    Target::Css(j) => writeln!(
                        out,
                        "<li><a href=\"{href}\" type=\"text/css\">Print stylesheet {j}</a></li>"
                    ),
                    Target::Png(j) => writeln!(
                        out,
                        "<li><a href=\"{href}\"><img src=\"{href}\" alt=\"Figure {j}\" \
                         width=\"1\" height=\"1\"></a></li>"
                    ),
                    Target::Offsite(j) => writeln!(
                        out,
                        "<li><a href=\"{href}\" rel=\"nofollow\">Partner site {j}</a></li>"
                    ),
                    Target::OtherSite => {
                        writeln!(out, "<li><a href='{href}'>Elsewhere on the web</a></li>")
                    }
                    Target::Page(_) | Target::Hub(_) | Target::Chain(_) => Ok(()),
                };
            }
            out.push_str("</ul>\n</aside>\n");
        }

        if i == 0 && self.hosts > 1 {
            out.push_str("<aside class=\"hosts\">\n<h2>Our other hosts</h2>\n<ul>\n");
            for hub in self.hubs() {
                let _ = writeln!(
                    out,
                    "<li><a href=\"{}\">Host {}</a></li>",
                    self.url_of(hub, 0, authority, false),
                    hub.host(self.hosts)
                );
            }
            out.push_str("</ul>\n</aside>\n");
        }

        const FOOTER: &str = "</main>\n<footer>\n<p>&copy; 2024 Synthetic Site &amp; Friends. \
             <a href=\"#top\">Back to top</a> &middot; \
             <a href=\"mailto:webmaster@site.example\">Contact</a></p>\n</footer>\n</body>\n</html>\n";
        while out.len() + FOOTER.len() + 40 < budget {
            let room = (budget - out.len() - FOOTER.len()) / 7;
            let words = (30 + rng.below(40)).min(room.max(4));
            out.push_str("<p>");
            push_words(&mut out, &mut rng, words, &mut Vec::new());
            out.push_str("</p>\n");
        }
        out.push_str(FOOTER);
        out
    }

    /// The `/` of host `k >= 1`: links to host 0's `/` and to the host's
    /// first pages.
    fn render_hub(&self, k: usize, authority: &str) -> String {
        let mut out = format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <title>Host {k} &middot; Synthetic Site</title>\n</head>\n<body>\n\
             <h1>Host {k}</h1>\n<p><a href=\"{home}\">The front page</a></p>\n<ul>\n",
            home = self.url_of(Target::Page(0), k, authority, false),
        );
        for i in self.hub_pages(k) {
            let _ = writeln!(
                out,
                "<li><a href=\"{}\">Page {i}</a></li>",
                self.url_of(Target::Page(i), k, authority, false)
            );
        }
        out.push_str("</ul>\n</body>\n</html>\n");
        out
    }
}

/// `host:port` -> `host`, `[::1]:80` -> `[::1]`.
fn strip_port(authority: &str) -> &str {
    if authority.starts_with('[') {
        return match authority.find(']') {
            Some(end) => &authority[..=end],
            None => authority,
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => authority,
    }
}

/// About `n` bytes of HTML prose without a single link, for fault bodies.
fn filler(n: usize) -> Vec<u8> {
    const TEXT: &[u8] = b"<p>Nothing to see here, the rest of this page never arrives.</p>\n";
    TEXT.iter().copied().cycle().take(n.max(1)).collect()
}

const WORDS: &[&str] = &[
    "harbor", "quiet", "river", "lantern", "market", "signal", "garden", "orbit", "copper",
    "meadow", "archive", "window", "thread", "stone", "ledger", "winter", "compass", "bridge",
    "harvest", "echo", "velvet", "canyon", "ember", "pattern", "folio", "marble", "beacon",
    "anchor", "willow", "summit", "parcel", "cinder", "mosaic", "tundra", "prism", "hollow",
    "fable", "quarry", "ripple", "saddle", "timber", "vessel", "zephyr", "amber", "basin",
    "cobalt", "delta", "fjord", "glacier", "hamlet", "island", "jetty", "kestrel", "lagoon",
    "mirror", "nectar", "oasis", "pillar", "quill", "rampart", "sable", "tannery", "umber",
    "valley", "wharf", "yonder",
];
const SMALL: &[&str] = &[
    "the", "and", "of", "to", "in", "with", "for", "on", "by", "from", "near", "over", "a",
];
const ENTITIES: &[&str] = &[
    "&amp;",
    "&mdash;",
    "caf&eacute;",
    "&lt;br&gt;",
    "&#169;",
    "&quot;so-called&quot;",
    "&nbsp;",
];

fn cap(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn anchor_text(rng: &mut Rng, target: Target) -> String {
    match target {
        Target::Page(0) => "the front page".to_string(),
        Target::Page(j) => format!("{} {} ({j})", cap(rng.pick(WORDS)), rng.pick(WORDS)),
        _ => cap(rng.pick(WORDS)),
    }
}

/// Appends `n` words of filler prose with inline markup and entities,
/// spreading the given (already rendered) anchors evenly through it.
fn push_words(out: &mut String, rng: &mut Rng, n: usize, anchors: &mut Vec<String>) {
    let n = n.max(1);
    let slots = anchors.len();
    anchors.reverse();
    let mut start = true;
    for w in 0..n {
        if w > 0 {
            out.push(' ');
        }
        if slots > 0 && !anchors.is_empty() && w == n * (slots - anchors.len() + 1) / (slots + 1) {
            if let Some(a) = anchors.pop() {
                out.push_str(&a);
                out.push(' ');
            }
        }
        let word = if rng.below(4) == 0 {
            rng.pick(SMALL)
        } else {
            rng.pick(WORDS)
        };
        let word = if start { cap(word) } else { word.to_string() };
        match rng.below(100) {
            0..=2 => {
                let _ = write!(out, "<em>{word}</em>");
            }
            3..=4 => {
                let _ = write!(out, "<strong>{word}</strong>");
            }
            5 => {
                let _ = write!(out, "<code>{word}</code>");
            }
            6..=7 => {
                let _ = write!(out, "{word} {}", rng.pick(ENTITIES));
            }
            _ => out.push_str(&word),
        }
        start = false;
        if w + 1 < n && rng.below(11) == 0 {
            out.push('.');
            start = true;
        }
    }
    // Anchors that did not find a slot (cannot happen, but never drop one).
    while let Some(a) = anchors.pop() {
        out.push(' ');
        out.push_str(&a);
    }
    out.push('.');
}

fn css_body(j: usize) -> Vec<u8> {
    format!(
        "/* synthetic stylesheet {j} */\n\
         body {{ font-family: Georgia, serif; margin: 0 auto; max-width: 42em; color: #2{d}2; }}\n\
         .site-nav a {{ margin-right: 1em; }}\n\
         .toc li {{ list-style: square; }}\n\
         aside.related {{ border-left: 3px solid #{d}{d}{d}; padding-left: 1em; }}\n\
         footer {{ font-size: small; border-top: 1px solid #ccc; }}\n",
        d = j % 10
    )
    .into_bytes()
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                0xedb8_8320 ^ (crc >> 1)
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn png_chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// A valid 1x1 grey PNG whose `tEXt` chunk holds [`PNG_BAIT`].
fn png_body(j: usize) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    png_chunk(&mut out, b"IHDR", &[0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0]);
    let text = format!("Comment\0figure {j}: {PNG_BAIT}bait</a>");
    png_chunk(&mut out, b"tEXt", text.as_bytes());
    // zlib stream with one stored deflate block: filter byte 0, one grey pixel.
    let raw = [0u8, (j * 37 % 256) as u8];
    let (mut a, mut b) = (1u32, 0u32);
    for &x in &raw {
        a = (a + u32::from(x)) % 65521;
        b = (b + a) % 65521;
    }
    let mut zlib = vec![0x78, 0x01, 0x01, 0x02, 0x00, 0xfd, 0xff, raw[0], raw[1]];
    zlib.extend_from_slice(&((b << 16) | a).to_be_bytes());
    png_chunk(&mut out, b"IDAT", &zlib);
    png_chunk(&mut out, b"IEND", &[]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn body_of(reply: &Reply) -> (u16, Vec<(String, String)>, Vec<u8>) {
        match reply {
            Reply::Http {
                status,
                headers,
                body,
            } => (*status, headers.clone(), body.clone()),
            _ => panic!("expected an HTTP reply"),
        }
    }

    fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Minimal href/src extractor: handles the quoting styles the site emits.
    fn extract(html: &str) -> Vec<String> {
        let lower = html.to_ascii_lowercase();
        let mut out = Vec::new();
        for attr in ["href=", "src="] {
            let mut from = 0;
            while let Some(pos) = lower[from..].find(attr) {
                let start = from + pos + attr.len();
                let rest = &html[start..];
                let value = match rest.as_bytes().first() {
                    Some(b'"') => rest[1..].split('"').next().unwrap(),
                    Some(b'\'') => rest[1..].split('\'').next().unwrap(),
                    _ => rest
                        .split(|c: char| c.is_whitespace() || c == '>')
                        .next()
                        .unwrap(),
                };
                out.push(value.replace("&amp;", "&"));
                from = start;
            }
        }
        out
    }

    /// Resolves an href from `base_path` the way a browser would, for the
    /// forms the site emits. Returns `Err(url)` for off-site or non-HTTP links.
    fn resolve(base_path: &str, href: &str, authority: &str) -> Result<String, String> {
        let href = href.split('#').next().unwrap();
        if href.is_empty() {
            return Ok(base_path.to_string());
        }
        for prefix in [format!("http://{authority}"), format!("//{authority}")] {
            if let Some(rest) = href.strip_prefix(&prefix) {
                if rest.starts_with('/') {
                    return Ok(rest.to_string());
                }
            }
        }
        if href.contains(':') || href.starts_with("//") {
            return Err(href.to_string());
        }
        if href.starts_with('/') {
            return Ok(href.to_string());
        }
        let dir = &base_path[..=base_path.rfind('/').unwrap()];
        let mut segs: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
        let rel: Vec<&str> = href.split('/').collect();
        for (n, seg) in rel.iter().enumerate() {
            match *seg {
                "." => {}
                ".." => {
                    segs.pop();
                }
                s if n + 1 == rel.len() => segs.push(s),
                s => segs.push(s),
            }
        }
        Ok(format!("/{}", segs.join("/")))
    }

    #[test]
    fn deterministic_for_a_seed() {
        let spec = SiteSpec::default();
        let a = SynthSite::new(spec.clone());
        let b = SynthSite::new(spec.clone());
        assert_eq!(a.expected_paths(), b.expected_paths());
        assert_eq!(a.offsite_urls(), b.offsite_urls());
        for path in [
            "/",
            "/p/1.html",
            "/p/999.html",
            "/r/1",
            "/img/0.png",
            "/nope",
        ] {
            assert_eq!(body_of(&a.respond(path)), body_of(&b.respond(path)));
        }
        let other = SynthSite::new(SiteSpec { seed: 2, ..spec });
        assert_ne!(
            body_of(&a.respond("/p/5.html")).2,
            body_of(&other.respond("/p/5.html")).2
        );
    }

    #[test]
    fn every_page_reachable_plus_extras() {
        for spec in [
            SiteSpec::default(),
            SiteSpec {
                pages: 1,
                links: 0,
                seed: 9,
                page_bytes: 100,
                ..SiteSpec::default()
            },
            SiteSpec {
                pages: 250,
                links: 3,
                seed: 42,
                page_bytes: 2000,
                ..SiteSpec::default()
            },
        ] {
            let site = SynthSite::new(spec.clone());
            let paths = site.expected_paths();
            let set: HashSet<&str> = paths.iter().map(|s| s.as_str()).collect();
            assert_eq!(set.len(), paths.len());
            assert!(paths.windows(2).all(|w| w[0] < w[1]), "sorted");
            let pages = spec.pages.max(1);
            for i in 0..pages {
                assert!(set.contains(SynthSite::page_path(i).as_str()), "page {i}");
            }
            let m = pages.div_ceil(100);
            let chained = (0..m).filter(|j| j % 3 == 1).count();
            // pages + missing + redirects + chain hops + css + png
            assert_eq!(paths.len(), pages + m + m + chained + m + m, "{spec:?}");
            assert!(!set.contains("/should-not-be-followed"));
            let off = site.offsite_urls();
            assert_eq!(off.len(), m + 1);
            assert!(off.contains(&"http://www.other.example/x".to_string()));
        }
    }

    #[test]
    fn statuses_and_types() {
        let site = SynthSite::new(SiteSpec::default());
        for path in site.expected_paths() {
            let (status, headers, body) = body_of(&site.respond_to("h:1", &path));
            let ctype = header(&headers, "content-type").unwrap_or("");
            if path == "/" || path.starts_with("/p/") {
                assert_eq!(status, 200, "{path}");
                assert!(ctype.starts_with("text/html"));
                let len = body.len();
                assert!((4000..8000).contains(&len), "{path}: {len} bytes");
            } else if path.starts_with("/missing/") {
                assert_eq!(status, 404);
            } else if path.starts_with("/r/") || path.starts_with("/r2/") {
                assert!(status == 301 || status == 302);
                assert!(header(&headers, "location").is_some());
            } else if path.starts_with("/static/") {
                assert_eq!((status, ctype), (200, "text/css"));
            } else if path.starts_with("/img/") {
                assert_eq!((status, ctype), (200, "image/png"));
            } else {
                panic!("unexpected path {path}");
            }
        }
        assert_eq!(body_of(&site.respond("/p/0.html")).0, 404);
        assert_eq!(body_of(&site.respond("/p/01.html")).0, 404);
        assert_eq!(body_of(&site.respond("/p/1000.html")).0, 404);
        assert_eq!(body_of(&site.respond("/r2/0")).0, 404);
        assert_eq!(body_of(&site.respond("/p/3.html?x=1")).0, 200);
    }

    #[test]
    fn redirects_lead_to_existing_pages() {
        let site = SynthSite::new(SiteSpec::default());
        let expected: HashSet<String> = site.expected_paths().into_iter().collect();
        let mut chains = 0;
        for j in 0..10 {
            let mut path = format!("/r/{j}");
            let mut hops = 0;
            loop {
                let (status, headers, _) = body_of(&site.respond_to("example.test:81", &path));
                if status == 200 {
                    break;
                }
                assert!(status == 301 || status == 302);
                let loc = header(&headers, "location").unwrap();
                path = loc
                    .strip_prefix("http://example.test:81")
                    .unwrap_or(loc)
                    .to_string();
                assert!(expected.contains(&path), "{path}");
                hops += 1;
                assert!(hops <= 2);
            }
            assert!(path == "/" || path.starts_with("/p/"));
            chains += usize::from(hops == 2);
        }
        assert!(chains > 0);
        // /r/0 goes to a page "/" links to directly: fetched once, if coalesced.
        let root = String::from_utf8(body_of(&site.respond("/")).2).unwrap();
        assert!(extract(&root)
            .iter()
            .any(|h| h.trim_start_matches('.') == "p/1.html" || h.ends_with("/p/1.html")));
        assert_eq!(
            header(&body_of(&site.respond("/r/0")).1, "location"),
            Some("/p/1.html")
        );
    }

    #[test]
    fn png_holds_bait_and_is_a_png() {
        let site = SynthSite::new(SiteSpec::default());
        let (_, _, body) = body_of(&site.respond("/img/3.png"));
        assert!(body.starts_with(b"\x89PNG\r\n\x1a\n"));
        assert!(body
            .windows(PNG_BAIT.len())
            .any(|w| w == PNG_BAIT.as_bytes()));
        assert!(body.ends_with(&[0xae, 0x42, 0x60, 0x82]), "IEND crc");
    }

    /// The HTML really links exactly what the walk assumes: parse every
    /// page's hrefs independently and compare with the expected sets.
    #[test]
    fn html_links_match_the_walk() {
        for authority in ["", "127.0.0.1:8080"] {
            let site = SynthSite::new(SiteSpec {
                pages: 400,
                links: 8,
                seed: 7,
                page_bytes: 3000,
                ..SiteSpec::default()
            });
            let mut found = BTreeSet::new();
            let mut off = BTreeSet::new();
            found.insert("/".to_string());
            let mut styles = HashSet::new();
            let expected = site.expected_paths();
            for path in &expected {
                let reply = site.respond_to(authority, path);
                let (status, headers, body) = body_of(&reply);
                let ctype = header(&headers, "content-type").unwrap_or("");
                if let Some(loc) = header(&headers, "location") {
                    found.insert(resolve(path, loc, authority).unwrap());
                }
                if status != 200 || !ctype.starts_with("text/html") {
                    continue;
                }
                let html = String::from_utf8(body).unwrap();
                let mut marks = vec![
                    "<A HREF=".to_string(),
                    "href='".to_string(),
                    "href=/".to_string(),
                    "href=\"./".to_string(),
                    "href=\"../".to_string(),
                ];
                if !authority.is_empty() {
                    marks.push(format!("href=\"//{authority}/"));
                    marks.push(format!("href=\"http://{authority}/"));
                }
                for mark in marks {
                    if html.contains(&mark) {
                        styles.insert(mark);
                    }
                }
                for href in extract(&html) {
                    match resolve(path, &href, authority) {
                        Ok(p) => {
                            found.insert(p);
                        }
                        Err(u) if u.starts_with("mailto:") => {}
                        Err(u) => {
                            off.insert(u);
                        }
                    }
                }
            }
            assert_eq!(found.into_iter().collect::<Vec<_>>(), expected);
            assert_eq!(off.into_iter().collect::<Vec<_>>(), site.offsite_urls());
            let want = if authority.is_empty() { 5 } else { 7 };
            assert_eq!(styles.len(), want, "{styles:?}");
        }
    }

    /// Follows a site the way a crawler does, over full URLs: links of
    /// 2xx HTML pages and redirect targets, in scope (`*.site.test` or the
    /// authority). Returns the fetched URLs and the status-or-fault of each.
    fn crawl_in_memory(
        site: &SynthSite,
        authority: &str,
    ) -> std::collections::BTreeMap<String, Result<u16, String>> {
        let mut out = std::collections::BTreeMap::new();
        let mut queue: VecDeque<url::Url> = site
            .roots(authority)
            .iter()
            .map(|r| url::Url::parse(r).unwrap())
            .collect();
        let mut seen: HashSet<String> = queue.iter().map(|u| u.to_string()).collect();
        while let Some(url) = queue.pop_front() {
            let host_auth = format!("{}:{}", url.host_str().unwrap(), url.port().unwrap());
            let reply = site.respond_to(&host_auth, url.path());
            let mut links = Vec::new();
            let outcome = match &reply {
                Reply::Http {
                    status,
                    headers,
                    body,
                } => {
                    if let Some(loc) = header(headers, "location") {
                        links.push(loc.to_string());
                    }
                    let ctype = header(headers, "content-type").unwrap_or("");
                    if (200..300).contains(status) && ctype.starts_with("text/html") {
                        links.extend(extract(std::str::from_utf8(body).unwrap()));
                    }
                    Ok(*status)
                }
                Reply::Hangup => Err("hangup".to_string()),
                Reply::Script(steps) => {
                    let bytes: Vec<u8> = steps
                        .iter()
                        .filter_map(|s| match s {
                            Step::Write(b) => Some(b.clone()),
                            _ => None,
                        })
                        .flatten()
                        .collect();
                    let text = String::from_utf8_lossy(&bytes).to_ascii_lowercase();
                    assert!(!text.contains("href"), "fault body with a link: {url}");
                    Err(format!("script of {} bytes", bytes.len()))
                }
            };
            out.insert(url.to_string(), outcome);
            for href in links {
                let Ok(mut link) = url.join(&href) else {
                    continue;
                };
                link.set_fragment(None);
                let host = link.host_str().unwrap_or("").to_string();
                let in_scope = link.scheme() == "http"
                    && (host.ends_with(".site.test")
                        || format!("{host}:{}", link.port().unwrap_or(80)) == authority);
                if in_scope && seen.insert(link.to_string()) {
                    queue.push_back(link);
                }
            }
        }
        out
    }

    #[test]
    fn faults_are_seeded_varied_and_linkless() {
        let spec = SiteSpec {
            pages: 3000,
            fault_percent: 20,
            ..SiteSpec::default()
        };
        let site = SynthSite::new(spec.clone());
        let faulty: Vec<usize> = (0..3000)
            .filter(|&i| site.page_fault(i).is_some())
            .collect();
        assert!((500..700).contains(&faulty.len()), "{}", faulty.len());
        assert!(site.page_fault(0).is_none());
        let kinds: HashSet<Fault> = faulty.iter().filter_map(|&i| site.page_fault(i)).collect();
        assert_eq!(kinds.len(), Fault::ALL.len());
        let again = SynthSite::new(spec.clone());
        for i in 0..3000 {
            assert_eq!(site.page_fault(i), again.page_fault(i));
            assert_eq!(site.fault_at(&SynthSite::page_path(i)), site.page_fault(i));
        }
        let none = SynthSite::new(SiteSpec {
            fault_percent: 0,
            ..spec.clone()
        });
        assert!((0..3000).all(|i| none.page_fault(i).is_none()));
        let all = SynthSite::new(SiteSpec {
            fault_percent: 100,
            ..spec
        });
        assert!((1..3000).all(|i| all.page_fault(i).is_some()));
        // Only `/` serves links: `/`, its links, and nothing further.
        let expected = all.expected_paths();
        assert!(expected.len() < 30, "{expected:?}");
    }

    #[test]
    fn fault_replies_break_as_described() {
        let site = SynthSite::new(SiteSpec {
            pages: 3000,
            fault_percent: 30,
            ..SiteSpec::default()
        });
        for fault in Fault::ALL {
            let i = (1..3000)
                .find(|&i| site.page_fault(i) == Some(fault))
                .unwrap();
            let reply = site.respond_to("h:1", &SynthSite::page_path(i));
            let bytes: Vec<u8> = match &reply {
                Reply::Script(steps) => steps
                    .iter()
                    .filter_map(|s| match s {
                        Step::Write(b) => Some(b.clone()),
                        _ => None,
                    })
                    .flatten()
                    .collect(),
                _ => Vec::new(),
            };
            let text = String::from_utf8_lossy(&bytes);
            match fault {
                Fault::Hangup => assert_eq!(reply, Reply::Hangup),
                Fault::ResetMidBody => {
                    let Reply::Script(steps) = &reply else {
                        panic!()
                    };
                    assert_eq!(steps.last(), Some(&Step::Reset));
                }
                Fault::ShortBody => {
                    let head_end = text.find("\r\n\r\n").unwrap() + 4;
                    let len: usize = text
                        .lines()
                        .find_map(|l| l.strip_prefix("Content-Length: "))
                        .unwrap()
                        .trim()
                        .parse()
                        .unwrap();
                    assert!(bytes.len() - head_end < len);
                }
                Fault::BadStatusLine => {
                    assert!(text.starts_with("HTTP/") && !text.starts_with("HTTP/1.1 200 "))
                }
                Fault::Garbage => assert!(!text.starts_with("HTTP/")),
                Fault::HugeHead => {
                    assert!(text.find("\r\n\r\n").unwrap() > 64 * 1024)
                }
                Fault::ConflictingLength => {
                    assert_eq!(text.matches("Content-Length:").count(), 2)
                }
                Fault::ServerError | Fault::Unavailable => {
                    let (status, headers, body) = body_of(&reply);
                    let want = if fault == Fault::ServerError {
                        500
                    } else {
                        503
                    };
                    assert_eq!(status, want);
                    assert_eq!(
                        header(&headers, "retry-after").is_some(),
                        fault == Fault::Unavailable
                    );
                    // The page, links and all (a crawler must not follow them).
                    assert!(String::from_utf8(body).unwrap().contains("href"));
                }
                Fault::SlowBody => {
                    let Reply::Script(steps) = &reply else {
                        panic!()
                    };
                    let sleeps: Vec<Duration> = steps
                        .iter()
                        .filter_map(|s| match s {
                            Step::Sleep(d) => Some(*d),
                            _ => None,
                        })
                        .collect();
                    let total: Duration = sleeps.iter().sum();
                    assert!(sleeps.iter().all(|d| *d < Duration::from_secs(1)));
                    assert!(total >= Duration::from_secs(5), "{total:?}");
                    assert!(text.contains("Content-Length: 100000"));
                    assert!(bytes.len() < 100_000);
                }
                Fault::BadChunk => assert!(text.contains("chunked") && text.contains("zz\r\n")),
            }
        }
    }

    #[test]
    fn walk_with_faults_matches_what_a_crawler_finds() {
        for (faults, hosts) in [(0, 1), (20, 1), (20, 5), (0, 13)] {
            let site = SynthSite::new(SiteSpec {
                pages: 1500,
                links: 6,
                seed: 11,
                fault_percent: faults,
                hosts,
                ..SiteSpec::default()
            });
            let authority = "127.0.0.1:4321";
            let fetched = crawl_in_memory(&site, authority);
            let urls: Vec<String> = fetched.keys().cloned().collect();
            assert_eq!(
                urls,
                site.expected_urls(authority),
                "{faults}% {hosts} hosts"
            );
            let faulty: Vec<String> = fetched
                .iter()
                .filter(|(_, o)| !matches!(o, Ok(200..=399)))
                .map(|(u, _)| u.clone())
                .collect();
            assert_eq!(faulty, site.faulty_urls(authority));
            let good = site.good_urls(authority);
            assert_eq!(good.len() + faulty.len(), urls.len());
            assert!(good.iter().all(|u| matches!(fetched[u], Ok(200..=399))));
            if hosts == 1 {
                let paths = |urls: &[String]| -> Vec<String> {
                    urls.iter()
                        .map(|u| u.strip_prefix("http://127.0.0.1:4321").unwrap().to_string())
                        .collect()
                };
                assert_eq!(paths(&urls), site.expected_paths());
                assert_eq!(paths(&faulty), site.faulty_paths());
                assert_eq!(paths(&good), site.good_paths());
            }
            if faults > 0 {
                // Faults cost some reachability, but not much.
                let pages = urls.iter().filter(|u| u.contains("/p/")).count();
                assert!(pages > 1400 && pages < 1500, "{pages}");
                assert!(faulty.len() > 200, "{}", faulty.len());
            } else {
                assert_eq!(faulty.iter().filter(|u| u.contains("/p/")).count(), 0);
            }
        }
    }

    #[test]
    fn many_hosts_split_the_site() {
        let site = SynthSite::new(SiteSpec {
            pages: 500,
            hosts: 7,
            ..SiteSpec::default()
        });
        let auth = "h3.site.test:8080";
        assert_eq!(site.host_index(auth), 3);
        assert_eq!(site.host_index("H6.Site.Test"), 6);
        assert_eq!(site.host_index("h7.site.test:8080"), 0);
        assert_eq!(site.host_index("127.0.0.1:8080"), 0);
        let roots = site.roots("127.0.0.1:8080");
        assert_eq!(roots.len(), 7);
        assert_eq!(roots[6], "http://h6.site.test:8080/");
        // Page 10 lives on host 3 only.
        assert_eq!(body_of(&site.respond_to(auth, "/p/10.html")).0, 200);
        assert_eq!(
            body_of(&site.respond_to("h2.site.test:8080", "/p/10.html")).0,
            404
        );
        // Links to other hosts are absolute, with the request's port.
        let html = site.page_html(10, auth).unwrap();
        assert!(html.contains("http://h0.site.test:8080/"), "{html}");
        let hub = String::from_utf8(body_of(&site.respond_to(auth, "/")).2).unwrap();
        assert!(hub.contains("href=\"/p/3.html\"") && hub.contains("href=\"/p/10.html\""));
        let urls = site.expected_urls("127.0.0.1:8080");
        for i in 0..500 {
            let want = format!("http://h{}.site.test:8080{}", i % 7, page_path(i));
            assert!(urls.binary_search(&want).is_ok(), "{want}");
        }
        for root in &roots {
            assert!(urls.binary_search(root).is_ok(), "{root}");
        }
        // Single-host sites ignore the host.
        let one = SynthSite::new(SiteSpec::default());
        assert_eq!(
            body_of(&one.respond_to("h3.site.test:1", "/p/10.html")).0,
            200
        );
        assert_eq!(one.roots("127.0.0.1:9"), vec!["http://127.0.0.1:9/"]);
    }

    #[test]
    fn a_site_served_over_tls_lists_and_links_https() {
        let site = SynthSite::new(SiteSpec {
            pages: 60,
            tls: true,
            ..SiteSpec::default()
        });
        let at = "127.0.0.1:9";
        assert_eq!(site.roots(at), vec!["https://127.0.0.1:9/"]);
        assert!(site
            .expected_urls(at)
            .iter()
            .all(|u| u.starts_with("https://127.0.0.1:9/")));
        let html: String = (0..60).filter_map(|i| site.page_html(i, at)).collect();
        assert!(html.contains("https://127.0.0.1:9/"), "absolute links");
        assert!(!html.contains("http://127.0.0.1:9/"));
    }

    #[test]
    fn delays_parse_and_are_seeded_per_url() {
        assert_eq!("0".parse::<Delay>(), Ok(Delay::None));
        assert_eq!(
            "250".parse::<Delay>(),
            Ok(Delay::Fixed(Duration::from_millis(250)))
        );
        assert_eq!(
            "10-20".parse::<Delay>(),
            Ok(Delay::Uniform(
                Duration::from_millis(10),
                Duration::from_millis(20)
            ))
        );
        assert_eq!(
            "exp:100".parse::<Delay>(),
            Ok(Delay::Exp(Duration::from_millis(100)))
        );
        for bad in ["", "x", "20-10", "exp:", "-5", "1-2-3"] {
            assert!(bad.parse::<Delay>().is_err(), "{bad}");
        }
        for d in ["0", "250", "10-20", "exp:100"] {
            assert_eq!(d.parse::<Delay>().unwrap().to_string(), d);
        }
        let delay_of = |reply: Reply| match reply {
            Reply::Script(steps) => match steps.first() {
                Some(Step::Sleep(d)) => *d,
                s => panic!("{s:?}"),
            },
            _ => Duration::ZERO,
        };
        let spec = |delay: &str| SiteSpec {
            pages: 300,
            delay: delay.parse().unwrap(),
            ..SiteSpec::default()
        };
        let fixed = SynthSite::new(spec("250"));
        assert_eq!(
            delay_of(fixed.respond("/p/5.html")),
            Duration::from_millis(250)
        );
        assert_eq!(delay_of(fixed.respond("/nope")), Duration::from_millis(250));
        let uniform = SynthSite::new(spec("10-20"));
        let ds: Vec<Duration> = (1..300)
            .map(|i| delay_of(uniform.respond(&page_path(i))))
            .collect();
        assert!(ds
            .iter()
            .all(|d| (Duration::from_millis(10)..=Duration::from_millis(20)).contains(d)));
        assert!(ds.iter().collect::<HashSet<_>>().len() > 100, "varied");
        assert_eq!(ds[7], delay_of(uniform.respond(&page_path(8))), "seeded");
        let exp = SynthSite::new(spec("exp:100"));
        let ds: Vec<f64> = (1..300)
            .map(|i| delay_of(exp.respond(&page_path(i))).as_secs_f64())
            .collect();
        let mean = ds.iter().sum::<f64>() / ds.len() as f64;
        assert!((0.07..0.13).contains(&mean), "{mean}");
        assert!(ds.iter().all(|&d| d <= 2.0));
        // The delayed reply is the plain one after a sleep.
        let plain = SynthSite::new(spec("0")).respond("/p/5.html");
        assert_eq!(
            fixed.respond("/p/5.html"),
            plain.delayed(Duration::from_millis(250))
        );
    }

    #[test]
    fn page_generation_is_fast() {
        let site = SynthSite::new(SiteSpec {
            pages: 20_000,
            ..SiteSpec::default()
        });
        let start = std::time::Instant::now();
        let mut bytes = 0;
        for i in 0..2000 {
            bytes += site.page_html(i * 10, "127.0.0.1:1").unwrap().len();
        }
        let per_page = start.elapsed() / 2000;
        assert!(bytes > 2000 * 4500);
        // Generous bound for debug builds on a loaded machine.
        assert!(
            per_page < std::time::Duration::from_millis(2),
            "{per_page:?}"
        );
        assert_eq!(site.expected_paths().len(), 20_000 + 4 * 200 + 67);
    }
}
