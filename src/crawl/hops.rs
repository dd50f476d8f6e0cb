//! The hop path of a URL, as Heritrix's crawl log writes it: one letter per
//! hop from a root, `L` a link, `R` a redirect, `E` an embed (a page
//! requisite), `P` a prerequisite (robots.txt, DNS), `M` a manifest (a
//! sitemap). A root's path is empty.
//!
//! Kept small because every queued URL carries one: the last
//! [`Hops::KEPT`] letters packed three bits each, plus the total count; a
//! longer path is shown as Heritrix shows it, `N+` and the last letters
//! (`5+LLLE` read "5 more hops, then LLLE"). Pure, no allocation but the
//! text it renders.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::arithmetic_side_effects
)]

use std::fmt;

/// One hop's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hop {
    /// A link (`a`, `area`, `link`, frames).
    Link,
    /// A redirect's target.
    Redirect,
    /// A page requisite: an image, script, stylesheet, a CSS `url()`.
    Embed,
    /// A prerequisite fetched before the URL (robots.txt).
    Prerequisite,
    /// A URL listed in a sitemap.
    Manifest,
}

impl Hop {
    pub fn letter(self) -> char {
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
pub struct Hops {
    /// The last `min(len, KEPT)` hops, the newest in the low bits.
    bits: u64,
    /// Hops in all.
    len: u32,
}

impl Hops {
    /// Letters kept; older ones are only counted.
    pub const KEPT: u32 = 21;

    /// A root's empty path.
    pub fn root() -> Hops {
        Hops::default()
    }

    /// This path and one hop more.
    pub fn then(self, hop: Hop) -> Hops {
        Hops {
            // 21 letters of 3 bits fill 63 of the 64: the oldest falls off.
            bits: (self.bits.wrapping_shl(3) | hop.code()) & ((1 << 63) - 1),
            len: self.len.saturating_add(1),
        }
    }

    /// Hops from the root.
    pub fn len(self) -> u32 {
        self.len
    }

    pub fn is_empty(self) -> bool {
        self.len == 0
    }

    /// The last hop, if any.
    pub fn last(self) -> Option<Hop> {
        Hop::from_code(self.bits & 7)
    }
}

impl fmt::Display for Hops {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kept = self.len.min(Hops::KEPT);
        if self.len > kept {
            write!(f, "{}+", self.len.saturating_sub(kept))?;
        }
        for i in (0..kept).rev() {
            let code = self.bits.wrapping_shr(i.saturating_mul(3)) & 7;
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
    fn a_long_path_keeps_its_last_letters_and_counts_the_rest() {
        let mut hops = Hops::root().then(Hop::Manifest);
        for _ in 0..30 {
            hops = hops.then(Hop::Link);
        }
        hops = hops.then(Hop::Embed);
        let text = hops.to_string();
        assert_eq!(hops.len(), 32);
        assert_eq!(text, format!("11+{}E", "L".repeat(20)));
    }
}
