//! Links a caller has met before ([`KnownLinks`]), so that a page's links
//! it knows are counted without being resolved again.
//!
//! Nine in ten links a crawl reads are ones it has read before (menus,
//! footers, the same article linked from every page), and resolving one
//! (a `url::Url` parsed against the base, then normalised) is most of
//! what a link costs. What a link resolves to depends on its text and on
//! part of the page's base URL only: nothing for a value that starts with
//! `http://` or `https://`, the base's scheme, host and port (its origin)
//! for one that starts with `/` (a path from the root, or `//host`), its
//! origin and directory (its path up to the last `/`) for a relative path
//! (`page.html`, `../up/`). Such a link is named by a [`LinkKey`] of that
//! part and its text; a caller
//! that [`KnownLinks::learn`]s the key with the URL it resolved to has
//! [`crate::page_links_known`] count the link the next time, without
//! resolving it: the page's dedup still holds, by a hash of the URL's
//! text. Other links (a query alone, other schemes, anything a parser
//! might read another way, and the links of pages in a legacy encoding,
//! whose queries depend on it) are resolved as always.
//!
//! The table is fixed in size (two-way set-associative: a bucket of two
//! slots, 32 bytes, one cache line's half; a key learned takes the first
//! slot and moves the one there to the second, whose key goes), so it
//! holds the links met most recently and costs the same memory at a
//! thousand pages and at a billion. A key is 128 bits of two foldhash
//! values with their own seeds (as a crawl's seen-sets are): its low bits
//! pick the bucket, its high 64 are kept in the slot to check. A lookup
//! takes another link for this one only if both agree, at most 2 / 2⁶⁴
//! per lookup (a crawl of 10¹² links: one chance in 10⁷ of ever), and
//! would make the caller count a link it never followed. Not a defence
//! against pages that aim at a collision: foldhash is not keyed against
//! an attacker, and a collision only hides one link.
//!
//! Not here: what a caller counts as known (in ringcrawl, a link it
//! routed: every later routing of the same URL would find it seen).

use std::hash::BuildHasher;

use foldhash::fast::RandomState;
use url::{Position, Url};

/// What a link's resolution depends on, and its text: see the module's
/// documentation. Made by [`page_links_known`](crate::page_links_known)
/// for each link it resolved, for [`KnownLinks::learn`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LinkKey(u128);

/// A table of links met before: their [`LinkKey`]s and the hash of the
/// URL each resolved to. Fixed in size; see the module's documentation.
#[derive(Debug)]
pub struct KnownLinks {
    buckets: Vec<Bucket>,
    /// Seeds of the key's two halves.
    high: RandomState,
    low: RandomState,
    /// Seed of the hash of a URL's text, by which a page's links are
    /// deduplicated when known ones are among them.
    urls: RandomState,
}

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    /// The key's high half; 0 for an empty slot (never a key's).
    check: u64,
    url: u64,
}

/// Two slots, the one learned last first; aligned so that a bucket is
/// never split between cache lines.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(32))]
struct Bucket([Slot; 2]);

/// What part of the base a link's resolution depends on.
#[derive(Clone, Copy, Hash)]
enum Class {
    /// None: `http://...`, `https://...`.
    Absolute,
    /// The origin: `/path`, `//host/path`.
    FromRoot,
    /// The origin and the directory: `page.html`, `./a`, `../b?q`.
    Relative,
}

/// Whether `value` is a relative path: it starts as a path segment does
/// (so not with `/`, `\`, `?`, `#`, or a control character the parser
/// would strip) and has no `:` before its first `/`, `?` or `#` (so it is
/// not a scheme).
fn is_path_relative(value: &str) -> bool {
    let starts_as_segment = value.bytes().next().is_some_and(|b| {
        b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'~' | b'%')
    });
    let head = value.split(['/', '?', '#']).next().unwrap_or(value);
    starts_as_segment && !head.contains(':')
}

/// The most slots a table has (4 Mi: 64 MiB).
const MAX_SLOTS: usize = 1 << 22;

impl KnownLinks {
    /// A table of `slots` slots (rounded up to a power of two, at least 2,
    /// at most 4 Mi), 16 bytes each.
    pub fn with_slots(slots: usize) -> KnownLinks {
        let slots = slots.clamp(2, MAX_SLOTS).next_power_of_two();
        KnownLinks {
            buckets: vec![Bucket::default(); slots / 2],
            high: RandomState::default(),
            low: RandomState::default(),
            urls: RandomState::default(),
        }
    }

    /// The bytes the table takes.
    pub fn memory(&self) -> usize {
        self.buckets
            .len()
            .saturating_mul(std::mem::size_of::<Bucket>())
    }

    /// The key of link `value` (trimmed, as the page has it) on a page whose
    /// links resolve against `base`, or None if its resolution depends on
    /// more of the base than its origin and directory.
    pub(crate) fn key(&self, base: &Url, value: &str) -> Option<LinkKey> {
        // Scheme, userinfo, host and port: what a path from the root or a
        // scheme-relative link takes from the base.
        let origin = &base[..Position::BeforePath];
        // The fragment is dropped from every URL, and nothing before a
        // link's first `#` depends on what follows it: `/a#x` and `/a`
        // are one link.
        let value = value.split('#').next().unwrap_or(value);
        let key = if value.starts_with("http://") || value.starts_with("https://") {
            (Class::Absolute, "", "", value)
        } else if value.starts_with('/') {
            (Class::FromRoot, origin, "", value)
        } else if is_path_relative(value) {
            // A relative path takes the base's path up to its last `/`.
            let path = base.path();
            let directory = path
                .rfind('/')
                .and_then(|end| path.get(..=end))
                .unwrap_or("");
            (Class::Relative, origin, directory, value)
        } else {
            return None;
        };
        let key = (u128::from(self.high.hash_one(key)) << 64) | u128::from(self.low.hash_one(key));
        Some(LinkKey(key.max(1)))
    }

    /// The hash of `url`'s text that [`KnownLinks::recall`] gives back.
    pub(crate) fn url_hash(&self, url: &str) -> u64 {
        self.urls.hash_one(url)
    }

    /// The hash of the URL the link `key` resolved to, if the table holds it.
    pub(crate) fn recall(&self, key: LinkKey) -> Option<u64> {
        let Bucket(slots) = self.buckets.get(self.index(key))?;
        let check = check_of(key);
        slots.iter().find(|s| s.check == check).map(|s| s.url)
    }

    /// Remember that the link `key` resolved to `url`: first in its
    /// bucket, the key there before it second, the second's gone.
    pub fn learn(&mut self, key: LinkKey, url: &Url) {
        let url = self.url_hash(url.as_str());
        let check = check_of(key);
        let index = self.index(key);
        if let Some(Bucket([first, second])) = self.buckets.get_mut(index) {
            if first.check != check {
                *second = *first;
            }
            *first = Slot { check, url };
        }
    }

    fn index(&self, key: LinkKey) -> usize {
        // The key's low bits (its `low` half), as many as the buckets need.
        let mask = self.buckets.len().saturating_sub(1);
        usize::try_from(key.0 & mask as u128).unwrap_or(0)
    }
}

/// What a slot keeps of `key`: its high half, never 0 (an empty slot's).
fn check_of(key: LinkKey) -> u64 {
    u64::try_from(key.0 >> 64).unwrap_or(u64::MAX).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn a_path_from_the_root_has_one_key_on_every_page_of_an_origin_and_another_elsewhere() {
        let known = KnownLinks::with_slots(16);
        let a = known
            .key(&url("https://example.com/a/b.html?x"), "/c")
            .unwrap();
        let b = known.key(&url("https://example.com/other/"), "/c").unwrap();
        let port = known
            .key(&url("https://example.com:8443/a/"), "/c")
            .unwrap();
        let scheme = known.key(&url("http://example.com/a/"), "/c").unwrap();
        assert_eq!(a, b);
        assert_ne!(a, port);
        assert_ne!(a, scheme);
    }

    #[test]
    fn an_absolute_link_has_one_key_everywhere_and_others_none() {
        let known = KnownLinks::with_slots(16);
        let a = known.key(&url("https://one.example/"), "https://example.com/x");
        let b = known.key(&url("http://two.example/p/q"), "https://example.com/x");
        assert!(a.is_some());
        assert_eq!(a, b);
        // A query alone takes the base's whole path; the rest may be read
        // as a scheme, a host or a path from the root by the URL parser.
        let others = [
            "?q=1",
            "#top",
            "",
            "mailto:a@b",
            "HTTP://x/",
            "a:b/c",
            "\\\\h/x",
            "\u{1}/x",
        ];
        for other in others {
            assert_eq!(
                known.key(&url("https://example.com/a/"), other),
                None,
                "{other:?}"
            );
        }
    }

    #[test]
    fn a_relative_path_has_one_key_in_a_directory_and_another_elsewhere() {
        let known = KnownLinks::with_slots(16);
        let key = |base: &str, value: &str| known.key(&url(base), value);
        for value in ["c.html", "./c", "../c?q", "c/d:e", "."] {
            let here = key("https://example.com/a/b.html?x=1", value);
            assert!(here.is_some(), "{value}");
            assert_eq!(here, key("https://example.com/a/", value), "{value}");
            assert_ne!(here, key("https://example.com/b/", value), "{value}");
            assert_ne!(here, key("https://example.com/a/b/", value), "{value}");
        }
    }

    #[test]
    fn a_learned_link_is_recalled_until_two_others_are_learned_after_it_in_its_bucket() {
        // One bucket: every key lands in it.
        let mut known = KnownLinks::with_slots(2);
        let base = url("https://example.com/");
        let key = |known: &KnownLinks, path: &str| known.key(&base, path).unwrap();
        let [first, second, third] = ["/first", "/second", "/third"].map(|p| key(&known, p));
        let hash = |known: &KnownLinks, path: &str| {
            Some(known.url_hash(&format!("https://example.com{path}")))
        };
        assert_eq!(known.recall(first), None);
        known.learn(first, &url("https://example.com/first"));
        assert_eq!(known.recall(first), hash(&known, "/first"));
        known.learn(second, &url("https://example.com/second"));
        assert_eq!(known.recall(first), hash(&known, "/first"), "two fit");
        assert_eq!(known.recall(second), hash(&known, "/second"));
        // Learned again, the first is the newest: the second goes next.
        known.learn(first, &url("https://example.com/first"));
        known.learn(third, &url("https://example.com/third"));
        assert_eq!(known.recall(second), None);
        assert_eq!(known.recall(first), hash(&known, "/first"));
        assert_eq!(known.recall(third), hash(&known, "/third"));
    }

    #[test]
    fn a_fragment_does_not_make_another_link() {
        let known = KnownLinks::with_slots(16);
        let base = url("https://example.com/a/");
        let plain = known.key(&base, "/p/7.html");
        assert!(plain.is_some());
        assert_eq!(known.key(&base, "/p/7.html#section-2"), plain);
        assert_eq!(known.key(&base, "/p/7.html#"), plain);
        assert_ne!(known.key(&base, "/p/7.html?#x"), plain, "the query counts");
        assert_eq!(known.key(&base, "b.html#top"), known.key(&base, "b.html"));
    }

    #[test]
    fn the_table_is_a_power_of_two_of_slots_within_its_bounds() {
        assert_eq!(KnownLinks::with_slots(0).buckets.len(), 1);
        assert_eq!(KnownLinks::with_slots(1000).buckets.len(), 512);
        assert_eq!(
            KnownLinks::with_slots(usize::MAX).buckets.len(),
            MAX_SLOTS / 2
        );
        assert_eq!(KnownLinks::with_slots(1024).memory(), 1024 * 16);
        assert_eq!(std::mem::align_of::<Bucket>(), 32);
    }
}
