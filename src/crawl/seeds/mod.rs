//! Seed lists (`--seeds FILE`): what a line says, and the compact set of
//! the seeds' hosts that widens the crawl's scope.
//!
//! A seed file has one URL or bare host a line (a bare host is taken as
//! `http://HOST/`, as a root given without a scheme); blank lines and lines
//! starting with `#` are skipped, and so is a `#` comment after whitespace.
//! A line that is not a usable root is a [`SeedLine::Bad`], recorded with
//! its line number; the crawl goes on.
//!
//! The seeds' hosts are in scope like the roots' hosts, but a seed list may
//! name millions of them: [`SeedHosts`] keeps a 64-bit fingerprint of each
//! scope key (the host without a leading `www.`, or in lenient mode its
//! registrable domain) in one sorted array, 8 bytes a distinct key, shared
//! by every shard. A collision would let one more host in; at 10 million
//! keys its odds are about 3 in a million.
//!
//! Pure: no I/O, except the first pass over the lists before the shards
//! start ([`split`]). Reading the split files as the crawl goes is the
//! shard's (`crate::crawl::shard`).
// Seed files are input from outside: a panic would take down the crawl.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::unreachable
)]

use std::hash::BuildHasher;
use std::sync::Arc;

use url::Url;

use crate::crawl::frontier::Job;
use crate::crawl::hops::{Hop, Hops};
use crate::crawl::scope::{Scope, ScopeMode};
use crate::crawl::urls::{self, UrlError};

pub mod split;

/// Longest seed line taken, in bytes (longer ones are [`SeedLine::Bad`]);
/// also the longest line a reader has to hold.
pub const MAX_LINE: usize = 8 << 10;

/// What one line of a seed file says.
#[derive(Debug, PartialEq, Eq)]
pub enum SeedLine {
    /// Blank or a comment.
    Skip,
    /// A root, normalised.
    Root(Url),
    /// Not a usable root, and why.
    Bad(String),
}

/// Read one line (without its line ending; a trailing `\r` is dropped).
pub fn parse_line(line: &[u8]) -> SeedLine {
    if line.len() > MAX_LINE {
        return SeedLine::Bad(format!("longer than {MAX_LINE} bytes"));
    }
    let Ok(text) = std::str::from_utf8(line) else {
        return SeedLine::Bad("not UTF-8".to_string());
    };
    let text = match text.find(" #").or_else(|| text.find("\t#")) {
        Some(comment) => text.get(..comment).unwrap_or(text),
        None => text,
    };
    let text = text.trim();
    if text.is_empty() || text.starts_with('#') {
        return SeedLine::Skip;
    }
    if text.contains(char::is_whitespace) {
        return SeedLine::Bad(format!("{:?}: one URL or host a line", shorten(text)));
    }
    match urls::parse_root(text) {
        Ok(url) => SeedLine::Root(url),
        Err(e @ (UrlError::Invalid(..) | UrlError::Scheme(_) | UrlError::NoHost(_))) => {
            SeedLine::Bad(e.to_string())
        }
    }
}

/// The `/sitemap.xml` of `root`'s origin, a sitemap one `M` hop from the
/// root at depth 0 (the roots of one origin guess the same URL, and the
/// owner's seen-set keeps one); none if the scope keeps it out.
pub fn guessed_sitemap(root: &Url, scope: &Scope, max_redirect: u32) -> Option<Job> {
    let url = urls::join(root, "/sitemap.xml")?;
    if !scope.allows_start(&url) {
        return None;
    }
    Some(Job {
        url: url.into(),
        redirects_left: max_redirect,
        depth: 0,
        hops: Hops::root().then(Hop::Manifest),
        via: Some(Arc::from(root.as_str())),
    })
}

/// At most 200 bytes of `text`, for messages.
pub fn shorten(text: &str) -> &str {
    let mut end = text.len().min(200);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(..end).unwrap_or("")
}

/// The scope key of `host` (canonical, as [`urls::canonical_host`] gives
/// it): its registrable domain in lenient mode, else the host without a
/// leading `www.` (so a seed `example.com` lets `www.example.com` in and
/// the other way round, as roots do). IP addresses are their own key.
fn scope_key(host: &str, mode: ScopeMode) -> &str {
    if crate::crawl::scope::is_ip_like(host) {
        return host;
    }
    if mode == ScopeMode::Lenient {
        if let Some(domain) = psl::domain_str(host) {
            return domain;
        }
    }
    match host.strip_prefix("www.") {
        Some(bare) if !bare.is_empty() => bare,
        _ => host,
    }
}

/// The hosts of a crawl's seeds, as the scope asks about them: sorted
/// fingerprints of their scope keys (see the module docs).
#[derive(Debug, Clone)]
pub struct SeedHosts {
    mode: ScopeMode,
    keys: Box<[u64]>,
}

/// Collects [`SeedHosts`] during the first pass over the seed files.
#[derive(Debug)]
pub struct SeedHostsBuilder {
    mode: ScopeMode,
    keys: Vec<u64>,
}

/// The fingerprint's hash: fixed seed, so every shard and every run agree.
fn fingerprint(key: &str) -> u64 {
    foldhash::quality::FixedState::with_seed(0x5eed_1157_u64).hash_one(key)
}

impl SeedHostsBuilder {
    pub fn new(mode: ScopeMode) -> Self {
        SeedHostsBuilder {
            mode,
            keys: Vec::new(),
        }
    }

    /// Count the host of `root` in.
    pub fn add(&mut self, root: &Url) {
        let host = urls::canonical_host(urls::host(root));
        if !host.is_empty() {
            self.keys.push(fingerprint(scope_key(&host, self.mode)));
        }
        // A list of mostly one host (a site's URLs) stays small as it goes.
        if self.keys.len() >= 1 << 20 && self.keys.len().is_power_of_two() {
            self.keys.sort_unstable();
            self.keys.dedup();
        }
    }

    pub fn finish(mut self) -> SeedHosts {
        self.keys.sort_unstable();
        self.keys.dedup();
        SeedHosts {
            mode: self.mode,
            keys: self.keys.into_boxed_slice(),
        }
    }
}

impl SeedHosts {
    /// Whether `host` (canonical) is a seed's host by the scope's rule.
    pub fn contains(&self, host: &str) -> bool {
        self.keys
            .binary_search(&fingerprint(scope_key(host, self.mode)))
            .is_ok()
    }

    /// Distinct scope keys.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Bytes the set holds.
    pub fn bytes(&self) -> usize {
        std::mem::size_of_val(&*self.keys)
    }

    /// A value that changes if the fingerprint function does: kept with
    /// the keys, so keys made by another build are not trusted.
    pub fn check(&self) -> u64 {
        fingerprint("ringcrawl seed hosts")
    }

    /// Append the keys, 8 bytes each, little-endian.
    pub fn write_keys(&self, out: &mut Vec<u8>) {
        for key in self.keys.iter() {
            out.extend_from_slice(&key.to_le_bytes());
        }
    }

    /// Keys written by [`SeedHosts::write_keys`] with `check`; None if the
    /// check differs or the bytes are not sorted, distinct keys.
    pub fn read_keys(mode: ScopeMode, check: u64, bytes: &[u8]) -> Option<SeedHosts> {
        if check != fingerprint("ringcrawl seed hosts") || bytes.len() % 8 != 0 {
            return None;
        }
        let keys: Box<[u64]> = bytes
            .chunks_exact(8)
            .filter_map(|c| <[u8; 8]>::try_from(c).ok())
            .map(u64::from_le_bytes)
            .collect();
        keys.windows(2)
            .all(|w| matches!(w, [a, b] if a < b))
            .then_some(SeedHosts { mode, keys })
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    fn root(s: &str) -> Url {
        match parse_line(s.as_bytes()) {
            SeedLine::Root(url) => url,
            other => panic!("{s:?}: {other:?}"),
        }
    }

    #[test]
    fn blank_lines_and_comments_are_skipped() {
        for line in ["", "   ", "\t", "# a comment", "  # indented", "\r"] {
            assert_eq!(parse_line(line.as_bytes()), SeedLine::Skip, "{line:?}");
        }
    }

    #[test]
    fn bare_hosts_become_http_roots_and_urls_keep_their_scheme() {
        assert_eq!(root("example.com").as_str(), "http://example.com/");
        assert_eq!(root("Example.COM\r").as_str(), "http://example.com/");
        assert_eq!(root("https://a.test/x?q=1").as_str(), "https://a.test/x?q=1");
        assert_eq!(root("b.test:8080/path").as_str(), "http://b.test:8080/path");
        assert_eq!(root("  c.test  # trailing comment").as_str(), "http://c.test/");
    }

    #[test]
    fn bad_lines_say_why() {
        for line in [
            "ftp://a.test/",
            "http://",
            "two words",
            "http://[::1",
            "mailto:a@b.test",
        ] {
            assert!(
                matches!(parse_line(line.as_bytes()), SeedLine::Bad(_)),
                "{line:?}"
            );
        }
        assert!(matches!(parse_line(&[0xff, 0xfe]), SeedLine::Bad(_)));
        let long = "a".repeat(MAX_LINE + 1);
        assert!(matches!(parse_line(long.as_bytes()), SeedLine::Bad(_)));
    }

    #[test]
    fn seed_hosts_match_as_roots_do_in_strict_mode() {
        let mut b = SeedHostsBuilder::new(ScopeMode::Strict);
        for s in ["example.com", "https://www.other.test/", "10.0.0.1"] {
            b.add(&root(s));
        }
        let set = b.finish();
        assert_eq!(set.len(), 3);
        for host in ["example.com", "www.example.com", "other.test", "www.other.test", "10.0.0.1"] {
            assert!(set.contains(host), "{host}");
        }
        for host in ["sub.example.com", "example.org", "10.0.0.2", "com"] {
            assert!(!set.contains(host), "{host}");
        }
    }

    #[test]
    fn seed_hosts_match_registrable_domains_in_lenient_mode() {
        let mut b = SeedHostsBuilder::new(ScopeMode::Lenient);
        b.add(&root("shop.example.co.uk"));
        let set = b.finish();
        assert!(set.contains("blog.example.co.uk"));
        assert!(!set.contains("other.co.uk"));
    }

    #[test]
    fn a_million_seeds_of_few_hosts_keep_few_keys() {
        let mut b = SeedHostsBuilder::new(ScopeMode::Strict);
        for i in 0..(1 << 20) + 5 {
            b.add(&root(&format!("h{}.test/page/{i}", i % 7)));
        }
        assert!(b.keys.len() < 1 << 10, "deduplicated on the way");
        assert_eq!(b.finish().len(), 7);
    }
}
