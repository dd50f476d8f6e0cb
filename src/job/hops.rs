//! The hop path of a URL, as Heritrix's crawl log writes it: one letter per
//! hop from a root, `L` a link, `R` a redirect, `E` an embed (a page
//! requisite), `P` a prerequisite (robots.txt, DNS), `M` a manifest (a
//! sitemap). A root's path is empty.
//!
//! Sitemaps: the hop *to* a sitemap is `M` (a root's guessed
//! `/sitemap.xml`, a robots.txt `Sitemap:` line after its `P`, an index's
//! entry), and a page a sitemap lists is an `L` from it. So the path alone
//! says whether a URL is to be read as a sitemap ([`Hops::sitemap_level`]:
//! its last hop but redirects is `M`) and how deep in indexes it is, and a
//! queued job needs no flag of its own. Heritrix writes `M` for a listed
//! page too and marks sitemaps with an annotation instead; ringcrawl's
//! records have no annotations and its jobs no room for one.
//!
//! Kept small because every queued URL carries one: one `u64` holding the
//! last [`Hops::KEPT`] letters, three bits each, and the total count in
//! the top 7 bits (counted up to [`Hops::MAX_COUNTED`]); a longer path is
//! shown as Heritrix shows it, `N+` and the last letters (`5+LLLE` read
//! "5 more hops, then LLLE"). Pure, no allocation but the text it
//! renders.
#![deny(clippy::arithmetic_side_effects)]

use std::fmt;

/// One hop's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hop {
    /// A link (`a`, `area`, `link`, frames).
    Link,
    /// A redirect's target.
    Redirect,
    /// A page requisite: an image, script, stylesheet, a CSS `url()`.
    Embed,
    /// A prerequisite fetched before the URL (robots.txt).
    Prerequisite,
    /// A sitemap: named by a robots.txt `Sitemap:` line or a sitemap
    /// index, or guessed (`/sitemap.xml` of a root's origin).
    Manifest,
}

impl Hop {
    pub(crate) fn letter(self) -> char {
        match self {
            Hop::Link => 'L',
            Hop::Redirect => 'R',
            Hop::Embed => 'E',
            Hop::Prerequisite => 'P',
            Hop::Manifest => 'M',
        }
    }

    fn code(self) -> u64 {
        match self {
            Hop::Link => 1,
            Hop::Redirect => 2,
            Hop::Embed => 3,
            Hop::Prerequisite => 4,
            Hop::Manifest => 5,
        }
    }

    fn from_code(code: u64) -> Option<Hop> {
        match code {
            1 => Some(Hop::Link),
            2 => Some(Hop::Redirect),
            3 => Some(Hop::Embed),
            4 => Some(Hop::Prerequisite),
            5 => Some(Hop::Manifest),
            _ => None,
        }
    }
}

/// The hops from a root to a URL (see the module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Hops(u64);

impl Hops {
    /// Letters kept; older ones are only counted.
    pub(crate) const KEPT: u32 = 19;
    /// Hops counted; a longer path counts as this long.
    pub(crate) const MAX_COUNTED: u32 = 127;
    /// Bits of the kept letters (the count is above them).
    const LETTER_BITS: u32 = Hops::KEPT * 3;
    const LETTER_MASK: u64 = (1 << Hops::LETTER_BITS) - 1;

    /// A root's empty path.
    pub(crate) fn root() -> Hops {
        Hops::default()
    }

    /// This path and one hop more.
    pub(crate) fn then(self, hop: Hop) -> Hops {
        // The oldest kept letter falls off the top of the letter bits.
        let letters = (self.0.wrapping_shl(3) | hop.code()) & Hops::LETTER_MASK;
        let len = self.len().saturating_add(1).min(Hops::MAX_COUNTED);
        Hops(letters | u64::from(len).wrapping_shl(Hops::LETTER_BITS))
    }

    /// The path as the one `u64` it is kept in (a spilled job stores it).
    pub(crate) fn to_u64(self) -> u64 {
        self.0
    }

    /// The path [`Hops::to_u64`] gave. Any value reads as some path:
    /// letters it does not know are left out when shown.
    pub(crate) fn from_u64(bits: u64) -> Hops {
        Hops(bits)
    }

    /// Hops from the root (at most [`Hops::MAX_COUNTED`]).
    pub(crate) fn len(self) -> u32 {
        // The top 7 bits: at most 127.
        self.0.wrapping_shr(Hops::LETTER_BITS) as u32
    }

    /// The last hop, if any.
    #[cfg(test)]
    pub(crate) fn last(self) -> Option<Hop> {
        Hop::from_code(self.0 & 7)
    }

    /// Whether the URL starts the crawl: a root or a seed (no hop), or a
    /// redirect target of one (`R`, `RR`, ...).
    pub(crate) fn is_start(self) -> bool {
        let len = self.len();
        if len > Hops::KEPT {
            return false;
        }
        let mut letters = self.0 & Hops::LETTER_MASK;
        for _ in 0..len {
            if Hop::from_code(letters & 7) != Some(Hop::Redirect) {
                return false;
            }
            letters = letters.wrapping_shr(3);
        }
        true
    }

    /// Whether the URL is a page requisite: its last hop other than
    /// redirects is an embed (`E`, `ER`, `ERR`). A requisite is a leaf: its
    /// links are not followed.
    pub(crate) fn is_embed(self) -> bool {
        let mut letters = self.0 & Hops::LETTER_MASK;
        for _ in 0..self.len().min(Hops::KEPT) {
            match Hop::from_code(letters & 7) {
                Some(Hop::Redirect) => letters = letters.wrapping_shr(3),
                Some(Hop::Embed) => return true,
                _ => return false,
            }
        }
        false
    }

    /// How deep in sitemaps this URL is: the `M` hops in the run of `M`
    /// and `R` hops that ends the path (0: not a sitemap; 1: a sitemap
    /// named by robots.txt or guessed, or its redirect target; 2: one an
    /// index of those names; ...). Only the kept letters are read.
    pub(crate) fn sitemap_level(self) -> u32 {
        let kept = self.len().min(Hops::KEPT);
        let mut level: u32 = 0;
        for i in 0..kept {
            match Hop::from_code(self.0.wrapping_shr(i.saturating_mul(3)) & 7) {
                Some(Hop::Manifest) => level = level.saturating_add(1),
                Some(Hop::Redirect) => {}
                _ => break,
            }
        }
        level
    }
}

impl fmt::Display for Hops {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let len = self.len();
        let kept = len.min(Hops::KEPT);
        if len > kept {
            write!(f, "{}+", len.saturating_sub(kept))?;
        }
        for i in (0..kept).rev() {
            let code = self.0.wrapping_shr(i.saturating_mul(3)) & 7;
            if let Some(hop) = Hop::from_code(code) {
                write!(f, "{}", hop.letter())?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    #[test]
    fn a_root_and_its_redirects_are_starts_and_nothing_after_a_link_is() {
        let root = Hops::root();
        assert!(root.is_start());
        assert!(root.then(Hop::Redirect).then(Hop::Redirect).is_start());
        assert!(!root.then(Hop::Link).is_start());
        assert!(!root.then(Hop::Link).then(Hop::Redirect).is_start());
        assert!(!root.then(Hop::Manifest).is_start());
        assert!(!root.then(Hop::Redirect).then(Hop::Embed).is_start());
        // Past the kept letters the path is not known to be all redirects.
        let long = (0..=Hops::KEPT).fold(root, |h, _| h.then(Hop::Redirect));
        assert!(!long.is_start());
    }

    #[test]
    fn a_path_reads_root_first_as_heritrix_writes_it() {
        let hops = Hops::root()
            .then(Hop::Link)
            .then(Hop::Link)
            .then(Hop::Redirect)
            .then(Hop::Embed);
        assert_eq!(hops.to_string(), "LLRE");
        assert_eq!(hops.len(), 4);
        assert_eq!(hops.last(), Some(Hop::Embed));
        assert_eq!(Hops::root().to_string(), "");
        assert_eq!(Hops::root().last(), None);
    }

    #[test]
    fn an_embed_stays_one_through_redirects_and_a_link_after_it_is_not() {
        let embed = Hops::root().then(Hop::Link).then(Hop::Embed);
        assert!(embed.is_embed());
        assert!(embed.then(Hop::Redirect).then(Hop::Redirect).is_embed());
        assert!(embed.then(Hop::Embed).is_embed());
        assert!(!embed.then(Hop::Link).is_embed());
        assert!(!Hops::root().is_embed());
        assert!(!Hops::root().then(Hop::Redirect).is_embed());
        assert!(!Hops::root()
            .then(Hop::Embed)
            .then(Hop::Link)
            .then(Hop::Redirect)
            .is_embed());
    }

    #[test]
    fn a_sitemap_is_known_by_its_last_hop_but_redirects() {
        let robots = Hops::root().then(Hop::Prerequisite).then(Hop::Manifest);
        assert_eq!(robots.to_string(), "PM");
        assert_eq!(robots.sitemap_level(), 1);
        let moved = robots.then(Hop::Redirect).then(Hop::Redirect);
        assert_eq!(
            moved.sitemap_level(),
            1,
            "a sitemap's redirect target is one"
        );
        let child = moved.then(Hop::Manifest);
        assert_eq!(
            child.sitemap_level(),
            2,
            "an index's entry is one level down"
        );
        assert_eq!(child.then(Hop::Manifest).sitemap_level(), 3);
        let page = child.then(Hop::Link);
        assert_eq!(page.sitemap_level(), 0, "a page a sitemap lists is none");
        assert_eq!(page.then(Hop::Redirect).sitemap_level(), 0);
        assert_eq!(Hops::root().sitemap_level(), 0);
        assert_eq!(Hops::root().then(Hop::Redirect).sitemap_level(), 0);
    }

    #[test]
    fn a_long_path_keeps_its_last_letters_and_counts_the_rest() {
        let mut hops = Hops::root().then(Hop::Manifest);
        for _ in 0..30 {
            hops = hops.then(Hop::Link);
        }
        hops = hops.then(Hop::Embed);
        let text = hops.to_string();
        assert_eq!(hops.len(), 32);
        assert_eq!(text, format!("13+{}E", "L".repeat(18)));
        assert_eq!(hops.last(), Some(Hop::Embed));
    }

    #[test]
    fn a_path_longer_than_counted_stays_at_the_most_counted() {
        let mut hops = Hops::root();
        for _ in 0..500 {
            hops = hops.then(Hop::Redirect);
        }
        assert_eq!(hops.len(), Hops::MAX_COUNTED);
        assert_eq!(hops.last(), Some(Hop::Redirect));
        assert_eq!(hops.to_string(), format!("108+{}", "R".repeat(19)));
        assert_eq!(std::mem::size_of::<Hops>(), 8);
    }
}
