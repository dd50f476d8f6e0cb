//! The shape of the site: what each page links to ([`PageLinks`], and the
//! [`Target`]s the walk follows) and what each path serves ([`Resource`],
//! `SynthSite::classify`). The renderer writes exactly these links and the
//! walk follows exactly these, so the two cannot drift apart.
//!
//! Shape, for a [`SiteSpec`](super::SiteSpec) with `pages = N` and `links = L`:
//!
//! * `/` is page 0; page `i` for `i` in `1..N` is `/p/{i}.html` (page 0 is
//!   served at `/` only). Page `i > 0` is linked from its tree parent
//!   `(i - 1) / k` with fan-out `k = max(2, L / 2)`, so every page is
//!   reachable from `/`; the remaining `L - children` link slots of a page go
//!   to seeded pseudo-random pages. Every page also links to `/` and to its
//!   parent in the nav bar.
//! * About 1% of pages (at least one) carry each kind of extra link (placed
//!   by `SynthSite::new`):
//!   missing pages `/missing/{j}.html` (404), redirects `/r/{j}` (301 to a
//!   page; every third one, `j % 3 == 1`, chains through `/r2/{j}` which
//!   answers 302 with an absolute `Location`), stylesheets
//!   `/static/{j}.css` (`text/css`), images `/img/{j}.png` (`image/png`, a
//!   real 1x1 PNG whose text chunk holds the bait
//!   `<a href="/should-not-be-followed">`, which a crawler must not follow
//!   since the body is not HTML), and off-site links `http://offsite-{j}.example/`
//!   and `http://www.other.example/x`. Redirect targets are ordinary pages
//!   that are also linked directly, so a crawler must coalesce them.
//!
//! What this is not: how a link is written out (`render.rs`; only its
//! [`Style`] is chosen here), which host a request is for (`hosts.rs`), or
//! whether a page is faulty (`faults.rs`).

use super::rng::{Rng, STREAM_LINKS, STREAM_REDIRECT};
use super::SynthSite;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Target {
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
    pub(super) fn path(self) -> Option<String> {
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
    pub(super) fn host(self, hosts: usize) -> usize {
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
    pub(super) fn offsite_url(self) -> Option<String> {
        match self {
            Target::Offsite(j) => Some(format!("http://offsite-{j}.example/")),
            Target::OtherSite => Some("http://www.other.example/x".to_string()),
            _ => None,
        }
    }
}

/// How a link is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Style {
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
pub(super) struct Link {
    pub(super) target: Target,
    pub(super) style: Style,
}

/// Everything page `i` links to, in the places the renderer puts it.
pub(super) struct PageLinks {
    pub(super) css: usize,
    pub(super) parent: Option<usize>,
    pub(super) children: Vec<Link>,
    pub(super) body: Vec<Link>,
    pub(super) extras: Vec<Target>,
}

/// What a path serves.
pub(super) enum Resource {
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

pub(super) fn page_path(i: usize) -> String {
    if i == 0 {
        "/".to_string()
    } else {
        format!("/p/{i}.html")
    }
}

/// Parses a canonical decimal index (no sign, no leading zeros).
pub(super) fn parse_index(s: &str) -> Option<usize> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || (s.len() > 1 && s.starts_with('0'))
    {
        return None;
    }
    s.parse().ok()
}

impl SynthSite {
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

    pub(super) fn page_links(&self, i: usize) -> PageLinks {
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
    pub(super) fn hubs(&self) -> impl Iterator<Item = Target> {
        (1..self.hosts).map(Target::Hub)
    }

    /// The pages the hub of host `k` links to: the host's first pages.
    pub(super) fn hub_pages(&self, k: usize) -> impl Iterator<Item = usize> {
        (k..self.page_count())
            .step_by(self.hosts)
            .take(self.spec.links.max(1))
    }

    /// Every target page `i` links to (including itself, for its `#top` and
    /// `#main` anchors).
    pub(super) fn page_targets(&self, i: usize) -> Vec<Target> {
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
    pub(super) fn hub_targets(&self, k: usize) -> Vec<Target> {
        let mut out = vec![Target::Page(0)];
        out.extend(self.hub_pages(k).map(Target::Page));
        out
    }

    pub(super) fn classify(&self, host: usize, path: &str) -> Resource {
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
}
