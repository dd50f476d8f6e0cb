//! The HTML of the site: its pages, and the hubs (`/` of the other hosts) of
//! a multi-host site. Each page is seeded prose around the links
//! [`graph`](super::graph) gives it, each link written in its [`Style`].
//!
//! Links come in the styles real pages have: double, single and unquoted
//! attribute values, upper-case `<A HREF=...>`, document-relative
//! (`3.html`, `./3.html`, `../p/3.html`), absolute and protocol-relative
//! links to the same host (only when the request's `Host` is known),
//! `#fragment` links (one with an entity-encoded `&amp;` in the fragment),
//! and same-page `#top` / `#main` anchors. The footer has a `mailto:` link.
//!
//! What this is not: the choice of links (`graph.rs`), the bodies of the
//! non-HTML resources (`assets.rs`) or of faults (`faults.rs`).

use std::fmt::Write as _;

use super::graph::{Link, Style, Target};
use super::rng::{Rng, STREAM_TEXT};
use super::SynthSite;

impl SynthSite {
    /// How a page on host `here` refers to `target` outside the body text:
    /// root-relative (or absolute, if asked and the authority is known) on
    /// the same host, absolute to another host.
    pub(super) fn url_of(
        &self,
        target: Target,
        here: usize,
        authority: &str,
        absolute: bool,
    ) -> String {
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

    pub(super) fn render_page(&self, i: usize, authority: &str) -> String {
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
    pub(super) fn render_hub(&self, k: usize, authority: &str) -> String {
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
