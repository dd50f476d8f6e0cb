//! Seed lists (`--seeds FILE`): what a line says, and where their hosts
//! go.
//!
//! A seed file has one URL or bare host a line (a bare host is taken as
//! `http://HOST/`, as a root given without a scheme); blank lines and lines
//! starting with `#` are skipped, and so is a `#` comment after whitespace.
//! A line that is not a usable root is a [`SeedLine::Bad`], recorded with
//! its line number; the crawl goes on.
//!
//! The seeds' hosts are in scope like the roots' hosts: the first pass
//! ([`split`]) collects them into a `crate::web::scope::SeedHosts`.
//!
//! Pure: no I/O, except the first pass over the lists before the shards
//! start ([`split`]). Reading the split files as the crawl goes is the
//! shard's (`crate::crawl::shard`).
use std::sync::Arc;

use ringcrawl_links::urls;
use url::Url;

use crate::job::hops::{Hop, Hops};
use crate::job::Job;
use crate::web::scope::Scope;

pub(crate) mod split;

/// Longest seed line taken, in bytes (longer ones are [`SeedLine::Bad`]);
/// also the longest line a reader has to hold.
pub(crate) const MAX_LINE: usize = 8 << 10;

/// What one line of a seed file says.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SeedLine {
    /// Blank or a comment.
    Skip,
    /// A root, normalised.
    Root(Url),
    /// Not a usable root, and why.
    Bad(String),
}

/// Read one line (without its line ending; a trailing `\r` is dropped).
pub(crate) fn parse_line(line: &[u8]) -> SeedLine {
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
        Err(e) => SeedLine::Bad(e.to_string()),
    }
}

/// The `/sitemap.xml` of `root`'s origin, a sitemap one `M` hop from the
/// root at depth 0 (the roots of one origin guess the same URL, and the
/// owner's seen-set keeps one); none if the scope keeps it out.
pub(crate) fn guessed_sitemap(root: &Url, scope: &Scope, max_redirect: u32) -> Option<Job> {
    let url = urls::join(root, "/sitemap.xml")?;
    if !scope.allows_start(&url) {
        return None;
    }
    Some(Job {
        retries: 0,
        url: url.into(),
        redirects_left: u16::try_from(max_redirect).unwrap_or(u16::MAX),
        depth: 0,
        hops: Hops::root().then(Hop::Manifest),
        via: Some(Arc::from(root.as_str())),
    })
}

/// At most 200 bytes of `text`, for messages.
pub(crate) fn shorten(text: &str) -> &str {
    let mut end = text.len().min(200);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(..end).unwrap_or("")
}

#[cfg(test)]
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
        assert_eq!(
            root("https://a.test/x?q=1").as_str(),
            "https://a.test/x?q=1"
        );
        assert_eq!(root("b.test:8080/path").as_str(), "http://b.test:8080/path");
        assert_eq!(
            root("  c.test  # trailing comment").as_str(),
            "http://c.test/"
        );
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
}
