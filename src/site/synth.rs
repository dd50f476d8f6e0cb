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

use super::server::{Handler, Reply, Request};
use std::collections::{BTreeSet, VecDeque};
use std::fmt::Write as _;
use std::sync::Arc;

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
}

impl Default for SiteSpec {
    fn default() -> Self {
        SiteSpec {
            pages: 1000,
            links: 10,
            seed: 1,
            page_bytes: 5000,
        }
    }
}

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
}

// ---------------------------------------------------------------------------
// Pseudo-random numbers: splitmix64, self-contained so the site is the same
// everywhere for a given seed.

const STREAM_LINKS: u64 = 1;
const STREAM_TEXT: u64 = 2;
const STREAM_REDIRECT: u64 = 3;
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
}

// ---------------------------------------------------------------------------
// The link graph.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Page(usize),
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
            Target::Missing(j) => format!("/missing/{j}.html"),
            Target::Redirect(j) => format!("/r/{j}"),
            Target::Css(j) => format!("/static/{j}.css"),
            Target::Png(j) => format!("/img/{j}.png"),
            Target::Offsite(_) | Target::OtherSite => return None,
        })
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
    Redirect {
        status: u16,
        location: String,
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
        }
    }

    pub fn spec(&self) -> &SiteSpec {
        &self.spec
    }

    /// Number of HTML pages (`spec.pages`, at least 1).
    pub fn page_count(&self) -> usize {
        self.placed.len()
    }

    /// The path of page `i`: `/` for 0, `/p/{i}.html` otherwise.
    pub fn page_path(i: usize) -> String {
        page_path(i)
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

    /// Every target page `i` links to (including itself, for its `#top` and
    /// `#main` anchors).
    fn page_targets(&self, i: usize) -> Vec<Target> {
        let pl = self.page_links(i);
        let mut out = vec![Target::Css(pl.css), Target::Page(0), Target::Page(i)];
        out.extend(pl.parent.map(Target::Page));
        out.extend(pl.children.iter().map(|l| l.target));
        out.extend(pl.body.iter().map(|l| l.target));
        out.extend(pl.extras.iter().copied());
        out
    }

    fn classify(&self, path: &str) -> Resource {
        let path = path.split(['?', '#']).next().unwrap_or_default();
        let index = |prefix: &str, suffix: &str| {
            path.strip_prefix(prefix)
                .and_then(|rest| rest.strip_suffix(suffix))
                .and_then(parse_index)
        };
        if path == "/" {
            return Resource::Page(0);
        }
        if let Some(i) = index("/p/", ".html") {
            if i >= 1 && i < self.page_count() {
                return Resource::Page(i);
            }
            return Resource::NotFound;
        }
        if let Some(j) = index("/r/", "").filter(|&j| j < self.extras) {
            let location = if Self::redirect_chained(j) {
                format!("/r2/{j}")
            } else {
                page_path(self.redirect_target(j))
            };
            return Resource::Redirect {
                status: 301,
                location,
                absolute: false,
            };
        }
        if let Some(j) = index("/r2/", "").filter(|&j| j < self.extras && Self::redirect_chained(j))
        {
            return Resource::Redirect {
                status: 302,
                location: page_path(self.redirect_target(j)),
                absolute: true,
            };
        }
        if let Some(j) = index("/static/", ".css").filter(|&j| j < self.extras) {
            return Resource::Css(j);
        }
        if let Some(j) = index("/img/", ".png").filter(|&j| j < self.extras) {
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
    /// either way.
    pub fn respond_to(&self, authority: &str, path: &str) -> Reply {
        match self.classify(path) {
            Resource::Page(i) => Reply::Http {
                status: 200,
                headers: vec![(
                    "Content-Type".to_string(),
                    "text/html; charset=utf-8".to_string(),
                )],
                body: self.render_page(i, authority).into_bytes(),
            },
            Resource::Redirect {
                status,
                location,
                absolute,
            } => {
                let location = if absolute && !authority.is_empty() {
                    format!("http://{authority}{location}")
                } else {
                    location
                };
                Reply::redirect(status, &location)
            }
            Resource::Css(j) => Reply::with_type(200, "text/css", css_body(j)),
            Resource::Png(j) => Reply::with_type(200, "image/png", png_body(j)),
            Resource::NotFound => Reply::not_found(),
        }
    }

    /// The HTML of page `i` as served for `authority` (see
    /// [`SynthSite::respond_to`]), or `None` if there is no such page.
    pub fn page_html(&self, i: usize, authority: &str) -> Option<String> {
        (i < self.page_count()).then(|| self.render_page(i, authority))
    }

    /// Every path a complete, in-scope crawl of the site starting at `/` must
    /// fetch (pages, redirect sources and intermediate hops, 404 targets,
    /// non-HTML resources), sorted. Paths only; the caller prefixes
    /// scheme and host.
    pub fn expected_paths(&self) -> Vec<String> {
        self.walk().0.into_iter().collect()
    }

    /// The off-site absolute URLs the site links to (a strict crawl must not
    /// fetch them), sorted. The footer's `mailto:` link is not included.
    pub fn offsite_urls(&self) -> Vec<String> {
        self.walk().1.into_iter().collect()
    }

    /// Breadth-first walk of what the site emits, from `/`.
    fn walk(&self) -> (BTreeSet<String>, BTreeSet<String>) {
        let mut seen = BTreeSet::new();
        let mut offsite = BTreeSet::new();
        let mut queue = VecDeque::new();
        seen.insert("/".to_string());
        queue.push_back("/".to_string());
        let mut visit = |path: String, queue: &mut VecDeque<String>| {
            if seen.insert(path.clone()) {
                queue.push_back(path);
            }
        };
        while let Some(path) = queue.pop_front() {
            match self.classify(&path) {
                Resource::Page(i) => {
                    for target in self.page_targets(i) {
                        match target.path() {
                            Some(p) => visit(p, &mut queue),
                            None => {
                                offsite.extend(target.offsite_url());
                            }
                        }
                    }
                }
                Resource::Redirect { location, .. } => visit(location, &mut queue),
                Resource::Css(_) | Resource::Png(_) | Resource::NotFound => {}
            }
        }
        (seen, offsite)
    }

    /// A handler serving this site, using each request's `Host` for absolute
    /// links.
    pub fn handler(self: Arc<Self>) -> Handler {
        Arc::new(move |req: &Request| self.respond_to(&req.authority, &req.path))
    }

    // -----------------------------------------------------------------------
    // Rendering.

    fn href(&self, link: Link, here: usize, authority: &str) -> String {
        let path = match link.target.path() {
            Some(p) => p,
            None => return link.target.offsite_url().unwrap_or_default(),
        };
        let page = match link.target {
            Target::Page(j) if j > 0 => Some(j),
            _ => None,
        };
        match (link.style, page) {
            (Style::Absolute, _) if !authority.is_empty() => format!("http://{authority}{path}"),
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
             <link rel=\"stylesheet\" href=\"/static/{css}.css\">\n</head>\n<body id=\"top\">\n\
             <header>\n<nav class=\"site-nav\">\n<a href=\"/\">Home</a>\n",
            pages = self.page_count(),
            seed = self.spec.seed,
            css = pl.css,
        );
        if let Some(parent) = pl.parent {
            let _ = writeln!(out, "<a href=\"{}\">Up</a>", page_path(parent));
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
                let href = target
                    .path()
                    .or_else(|| target.offsite_url())
                    .unwrap_or_default();
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
                    Target::Page(_) => Ok(()),
                };
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
            },
            SiteSpec {
                pages: 250,
                links: 3,
                seed: 42,
                page_bytes: 2000,
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
