//! Sans-I/O robots.txt (RFC 9309, with Google's status rules): what a
//! robots.txt answer means for a host ([`Rules::from_answer`]), whether a
//! URL may be fetched under it ([`Rules::verdict`]), its `Crawl-delay` and
//! its `Sitemap:` lines; and the parser and matcher underneath
//! ([`Robot`]), for one agent's rules read from a robots.txt's bytes.
//!
//! Status rules: 2xx → the rules in the body (its first
//! [`MAX_ROBOTS_BYTES`]); 3xx past the redirect limit and 4xx → allow all;
//! 5xx or unreachable → disallow all ([`Verdict::Unavailable`]). Google
//! retries "for a while"; so does ringcrawl, but when to ask again is the
//! caller's: this crate only says what an answer means.
//!
//! What it is: pure and panic-free, bounded whatever the bytes (work linear
//! in the file to parse, and for a URL at most linear in (path + patterns)
//! per rule; no regular expressions). What it is not: the fetching of
//! robots.txt (redirects, time-outs, archiving the answer), the cache of
//! rules per host or the schedule of retries: those are [ringcrawl]'s
//! (`src/crawl/shard/robots.rs` fetches, its frontier keeps the rules per
//! host). Nor a general robots.txt library: only one agent's groups are
//! kept.
//!
//! A crate of its own so that it is tested, fuzzed and benchmarked without
//! the crawler, and so that others can use it.
//!
//! [ringcrawl]: https://github.com/ringcrawl/ringcrawl

#![warn(unreachable_pub)]

use std::borrow::Cow;
use std::time::Duration;

pub use parse::{Robot, RULE_BYTES};

mod parse;

#[cfg(test)]
mod differential;

/// Redirects followed when fetching robots.txt.
pub const MAX_ROBOTS_REDIRECTS: u32 = 5;

/// robots.txt bytes read at most (Google reads 500 KiB).
pub const MAX_ROBOTS_BYTES: usize = 500 << 10;

/// Whether a URL may be fetched ([`Rules::verdict`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// It may.
    Allowed,
    /// robots.txt disallows it for our agent.
    Disallowed,
    /// robots.txt could not be had (5xx, or no answer): nothing of the
    /// origin may be fetched.
    Unavailable,
}

/// Why an origin's robots.txt could not be had.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Unreachable {
    /// How its fetch ended, in one line: `HTTP 503`, or the fetch's error
    /// kind and message (`connect_refused: connect: Connection refused`).
    /// The records of the URLs it keeps out carry it.
    pub cause: Box<str>,
    /// Nothing listens on that port (the connection was refused): a
    /// mistyped port, or a service that is down; asked again on a short
    /// schedule, not the one for 5xx and time-outs.
    pub refused: bool,
}

/// The robots policy of one host.
#[derive(Debug)]
#[non_exhaustive]
pub enum Rules {
    /// No robots.txt (4xx), or robots ignored.
    AllowAll,
    /// robots.txt unreachable or 5xx.
    Unavailable(Unreachable),
    /// Parsed rules for our user-agent token.
    Parsed(Box<Robot>),
}

impl Rules {
    /// The policy for a robots.txt fetch that ended with `status` (None:
    /// no answer) and `body`, for the agent `token`.
    pub fn from_answer(status: Option<u16>, body: &[u8], token: &str) -> Rules {
        match status {
            Some(200..=299) => {
                let body = body.get(..MAX_ROBOTS_BYTES).unwrap_or(body);
                // Escapes made canonical in the whole text, as in the
                // paths it is matched against (and so in its sitemaps).
                Rules::Parsed(Box::new(Robot::new(token, &canonical_escapes(body))))
            }
            Some(300..=499) => Rules::AllowAll,
            Some(status) => Rules::unavailable(format!("HTTP {status}")),
            None => Rules::unavailable("no answer"),
        }
    }

    /// Unavailable for `cause` (not a refused connection).
    pub fn unavailable(cause: impl Into<Box<str>>) -> Rules {
        Rules::Unavailable(Unreachable {
            cause: cause.into(),
            refused: false,
        })
    }

    /// Unavailable because the connection was refused (nothing listens
    /// on that port): [`Unreachable::refused`] is set, so that the caller
    /// may ask again on a shorter schedule than for a 5xx or a time-out.
    pub fn refused(cause: impl Into<Box<str>>) -> Rules {
        Rules::Unavailable(Unreachable {
            cause: cause.into(),
            refused: true,
        })
    }

    /// Why the rules could not be had, if they could not.
    pub fn unreachable(&self) -> Option<&Unreachable> {
        match self {
            Rules::Unavailable(why) => Some(why),
            _ => None,
        }
    }

    /// May `url` be fetched?
    pub fn verdict(&self, url: &str) -> Verdict {
        match self {
            Rules::AllowAll => Verdict::Allowed,
            Rules::Unavailable(_) => Verdict::Unavailable,
            Rules::Parsed(robot) if robot.allowed(&match_target(url)) => Verdict::Allowed,
            Rules::Parsed(_) => Verdict::Disallowed,
        }
    }

    /// Heap bytes these rules hold: the parsed [`Robot`] and what it
    /// holds (our group's rules, [`RULE_BYTES`] each, their
    /// patterns, any sitemaps not taken yet).
    pub fn weight(&self) -> usize {
        match self {
            Rules::Parsed(robot) => std::mem::size_of::<Robot>() + robot.heap_bytes(),
            _ => 0,
        }
    }

    /// The `Sitemap:` lines (for every agent, as RFC 9309 leaves them
    /// outside the groups), taken out: the rules kept for the rest of the
    /// crawl need not hold them.
    pub fn take_sitemaps(&mut self) -> Vec<String> {
        match self {
            Rules::Parsed(robot) => std::mem::take(&mut robot.sitemaps),
            _ => Vec::new(),
        }
    }

    /// `Crawl-delay` for our agent, if any, capped at `cap`.
    pub fn crawl_delay(&self, cap: Duration) -> Option<Duration> {
        match self {
            Rules::Parsed(robot) => robot
                .delay
                .filter(|d| d.is_finite() && *d > 0.0)
                .map(|d| Duration::from_secs_f32(d.min(cap.as_secs_f32()))),
            _ => None,
        }
    }
}

/// The path and query of `url` (absolute, or a path alone) as rules are
/// matched against them (RFC 9309, 2.2.2 and 2.2.3): its escapes made
/// canonical as the rules' are, and its `*` and `$` escaped, so that a
/// rule's `%2A` and `%24` match them and its wildcards stay wildcards.
///
/// Most paths have nothing to change, and are matched as they are (this
/// runs for every URL a crawl that obeys robots.txt hands out).
fn match_target(url: &str) -> Cow<'_, str> {
    let path = match url.split_once("://") {
        Some((_, rest)) => rest.find('/').and_then(|at| rest.get(at..)).unwrap_or("/"),
        None => url,
    };
    if !path.bytes().any(|b| matches!(b, b'%' | b'*' | b'$')) {
        return Cow::Borrowed(path);
    }
    let canonical = canonical_escapes(path.as_bytes());
    let mut target = Vec::with_capacity(canonical.len());
    for &b in canonical.iter() {
        match b {
            b'*' => target.extend_from_slice(b"%2A"),
            b'$' => target.extend_from_slice(b"%24"),
            _ => target.push(b),
        }
    }
    // Only ASCII was put in or taken out: still UTF-8.
    Cow::Owned(
        String::from_utf8(target)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
    )
}

/// `text` with its percent-encoding made canonical (RFC 3986, 6.2.2): an
/// escaped unreserved character is the character (`%7E` is `~`), other
/// escapes are upper-case (`%2f` is `%2F`). A rule and a URL that differ
/// only in how they escape then compare equal, as RFC 9309 asks; an
/// escaped reserved character (`%2F`) stays unlike the character (`/`).
fn canonical_escapes(text: &[u8]) -> Cow<'_, [u8]> {
    if !text.contains(&b'%') {
        return Cow::Borrowed(text);
    }
    let mut out = Vec::with_capacity(text.len());
    let mut rest = text;
    while let Some((&b, tail)) = rest.split_first() {
        rest = tail;
        if let (b'%', [high, low, after @ ..]) = (b, rest) {
            if let (Some(h), Some(l)) = (hex_value(*high), hex_value(*low)) {
                let byte = (h << 4) | l;
                if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
                    out.push(byte);
                } else {
                    out.extend_from_slice(&[
                        b'%',
                        high.to_ascii_uppercase(),
                        low.to_ascii_uppercase(),
                    ]);
                }
                rest = after;
                continue;
            }
        }
        out.push(b);
    }
    Cow::Owned(out)
}

/// The value of a hexadecimal digit.
fn hex_value(digit: u8) -> Option<u8> {
    char::from(digit)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

/// The product token robots groups are matched against: the User-Agent up
/// to the first `/` or space (`ringcrawl/0.1` → `ringcrawl`).
pub fn agent_token(user_agent: &str) -> &str {
    user_agent.split(['/', ' ']).next().unwrap_or(user_agent)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TXT: &[u8] = b"User-agent: *\nDisallow: /private/\nCrawl-delay: 2\n\nUser-agent: ringcrawl\nDisallow: /no-bots/\nAllow: /no-bots/ok\nCrawl-delay: 30\n";

    #[test]
    fn our_group_wins_over_the_star_group() {
        let rules = Rules::from_answer(Some(200), TXT, "ringcrawl");
        assert_eq!(
            rules.verdict("http://a.test/no-bots/x"),
            Verdict::Disallowed
        );
        assert_eq!(rules.verdict("http://a.test/no-bots/ok"), Verdict::Allowed);
        assert_eq!(
            rules.verdict("http://a.test/private/x"),
            Verdict::Allowed,
            "the * group is not ours"
        );
        let other = Rules::from_answer(Some(200), TXT, "otherbot");
        assert_eq!(
            other.verdict("http://a.test/private/x"),
            Verdict::Disallowed
        );
    }

    #[test]
    fn sitemap_lines_are_read_whatever_the_group_and_taken_once() {
        let txt = b"User-agent: other\nDisallow: /\nSitemap: https://a.test/s1.xml\n\nsitemap: /relative.xml\n";
        let mut rules = Rules::from_answer(Some(200), txt, "ringcrawl");
        assert_eq!(
            rules.take_sitemaps(),
            ["https://a.test/s1.xml", "/relative.xml"]
        );
        assert!(rules.take_sitemaps().is_empty());
        assert!(Rules::from_answer(Some(404), txt, "x")
            .take_sitemaps()
            .is_empty());
    }

    #[test]
    fn crawl_delay_is_capped() {
        let rules = Rules::from_answer(Some(200), TXT, "ringcrawl");
        assert_eq!(
            rules.crawl_delay(Duration::from_secs(10)),
            Some(Duration::from_secs(10))
        );
        let star = Rules::from_answer(Some(200), TXT, "otherbot");
        assert_eq!(
            star.crawl_delay(Duration::from_secs(10)),
            Some(Duration::from_secs(2))
        );
    }

    #[test]
    fn status_rules_follow_google() {
        assert_eq!(
            Rules::from_answer(Some(404), b"", "x").verdict("http://a/"),
            Verdict::Allowed
        );
        assert_eq!(
            Rules::from_answer(Some(403), b"", "x").verdict("http://a/"),
            Verdict::Allowed
        );
        assert_eq!(
            Rules::from_answer(Some(503), b"", "x").verdict("http://a/"),
            Verdict::Unavailable
        );
        assert_eq!(
            Rules::from_answer(None, b"", "x").verdict("http://a/"),
            Verdict::Unavailable
        );
    }

    #[test]
    fn garbage_robots_txt_does_not_panic() {
        let junk: Vec<u8> = (0..5000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
            .collect();
        let rules = Rules::from_answer(Some(200), &junk, "ringcrawl");
        let _ = rules.verdict("http://a.test/x");
    }

    /// `rules` (a whole robots.txt) as read by the agent `ringcrawl`.
    fn read(rules: &str) -> Rules {
        Rules::from_answer(Some(200), rules.as_bytes(), "ringcrawl")
    }

    /// Whether `rules` let `ringcrawl` fetch `url`.
    fn allows(rules: &Rules, url: &str) -> bool {
        rules.verdict(url) == Verdict::Allowed
    }

    #[test]
    fn rules_match_the_path_and_query_not_the_whole_url() {
        let rules = read("User-agent: *\nDisallow: /a.test\nDisallow: http\nDisallow: /q?x=1\n");
        assert!(allows(&rules, "http://a.test/"), "not the host");
        assert!(allows(&rules, "http://a.test/page"), "not the scheme");
        assert!(!allows(&rules, "http://b.test/a.test/x"));
        assert!(
            !allows(&rules, "http://b.test/q?x=1&y=2"),
            "the query counts"
        );
        assert!(allows(&rules, "http://b.test/q?y=2"));
    }

    #[test]
    fn paths_are_compared_in_their_own_letter_case() {
        let rules = read("User-agent: *\nDisallow: /Private/\n");
        assert!(!allows(&rules, "http://a.test/Private/x"));
        assert!(allows(&rules, "http://a.test/private/x"));
        assert!(allows(&rules, "http://a.test/PRIVATE/x"));
    }

    #[test]
    fn the_longest_match_wins_and_a_tie_goes_to_allow() {
        let rules = read(
            "User-agent: *\nAllow: /p\nDisallow: /p/q\nDisallow: /r\nAllow: /r/s\n\
             Disallow: /tie\nAllow: /tie\nAllow: /page\nDisallow: /*.html\n",
        );
        assert!(allows(&rules, "http://a.test/p/x"));
        assert!(
            !allows(&rules, "http://a.test/p/q/x"),
            "the longer Disallow"
        );
        assert!(!allows(&rules, "http://a.test/r/x"));
        assert!(allows(&rules, "http://a.test/r/s/x"), "the longer Allow");
        assert!(allows(&rules, "http://a.test/tie/x"), "equal length: Allow");
        // RFC 9309's example: the rule, wildcards and all, is measured.
        assert!(!allows(&rules, "http://a.test/page.html"));
        assert!(allows(&rules, "http://a.test/page"));
    }

    #[test]
    fn star_and_dollar_wildcards() {
        let rules = read(
            "User-agent: *\nDisallow: /*.php$\nDisallow: /fish*\nDisallow: /*/private/\n\
             Allow: /$\nDisallow: /\n",
        );
        assert!(
            allows(&rules, "http://a.test/"),
            "Allow: /$ is the root alone"
        );
        let rules_no_root =
            read("User-agent: *\nDisallow: /*.php$\nDisallow: /fish*\nDisallow: /*/private/\n");
        for (url, allowed) in [
            ("http://a.test/index.php", false),
            ("http://a.test/a/b/c.php", false),
            ("http://a.test/index.php?x=1", true),
            ("http://a.test/index.php5", true),
            ("http://a.test/fish", false),
            ("http://a.test/fishheads/x", false),
            ("http://a.test/Fish", true),
            ("http://a.test/a/private/x", false),
            ("http://a.test/private/x", true),
        ] {
            assert_eq!(allows(&rules_no_root, url), allowed, "{url}");
        }
        assert!(
            !allows(&rules, "http://a.test/page"),
            "Disallow: / for the rest"
        );
    }

    #[test]
    fn the_user_agent_group_is_matched_without_regard_to_case() {
        let txt = "User-agent: *\nDisallow: /\n\nUser-agent: RingCrawl\nDisallow: /ours\n";
        for token in ["ringcrawl", "RINGCRAWL", agent_token("RingCrawl/0.1")] {
            let rules = Rules::from_answer(Some(200), txt.as_bytes(), token);
            assert!(
                allows(&rules, "http://a.test/x"),
                "{token}: our group, not *"
            );
            assert!(!allows(&rules, "http://a.test/ours"), "{token}");
        }
    }

    /// RFC 9309 §2.2.1: the product token is matched, case-insensitively;
    /// a version or anything after it on the line is not part of it.
    #[test]
    fn a_user_agent_line_with_a_version_matches_our_product_token() {
        for ours in [
            "ringcrawl/1.0",
            "RingCrawl",
            "ringcrawl/*",
            "RINGCRAWL/2.3 (+https://example.test/bot)",
            "ringcrawl 1.0",
            "  ringcrawl/1.0   # our crawler",
        ] {
            let txt =
                format!("User-agent: *\nDisallow: /\n\nUser-agent: {ours}\r\nDisallow: /ours\n");
            let rules = read(&txt);
            assert!(
                allows(&rules, "http://a.test/x"),
                "{ours:?}: our group, not *"
            );
            assert!(!allows(&rules, "http://a.test/ours"), "{ours:?}");
        }
        for other in [
            "ringcrawlerX",
            "ringcrawler/1.0",
            "xringcrawl",
            "ring-crawl/1.0",
        ] {
            let txt =
                format!("User-agent: *\nDisallow: /\n\nUser-agent: {other}\nDisallow: /ours\n");
            let rules = read(&txt);
            assert!(
                !allows(&rules, "http://a.test/x"),
                "{other:?} is not us: the * group"
            );
        }
        // Groups written both ways are one group.
        let rules = read(
            "User-agent: ringcrawl/1.0\nDisallow: /a\n\nuser-agent: RingCrawl\nDisallow: /b\n",
        );
        assert!(!allows(&rules, "http://a.test/a") && !allows(&rules, "http://a.test/b"));
        assert!(allows(&rules, "http://a.test/c"));
    }

    #[test]
    fn a_group_has_several_user_agent_lines_and_our_groups_are_merged() {
        let rules = read(
            "User-agent: otherbot\nUser-agent: ringcrawl\nDisallow: /x\n\n\
             User-agent: *\nDisallow: /star\n\n\
             User-agent: ringcrawl\nDisallow: /y\n",
        );
        assert!(!allows(&rules, "http://a.test/x"), "the shared group");
        assert!(!allows(&rules, "http://a.test/y"), "our second group");
        assert!(allows(&rules, "http://a.test/star"), "not the * group");
        assert!(allows(&rules, "http://a.test/z"));
    }

    #[test]
    fn percent_encoding_is_normalised_before_comparing() {
        // RFC 9309, 2.2.2 and 2.2.3. URLs come normalised by the url crate.
        let rules = read(
            "User-agent: *\nDisallow: /foo/bar/ツ\nDisallow: /enc/%E3%83%84\n\
             Disallow: /un/%62%61%7A\nDisallow: /hex/%2fx\n\
             Disallow: /path/file-with-a-%2A.html\nDisallow: /path/foo-%24\n",
        );
        for url in [
            "http://a.test/foo/bar/%E3%83%84",
            "http://a.test/enc/%E3%83%84",
            "http://a.test/enc/%e3%83%84",
            "http://a.test/un/baz",
            "http://a.test/un/%62az",
            "http://a.test/hex/%2Fx",
            "http://a.test/path/file-with-a-*.html",
            "http://a.test/path/foo-$",
        ] {
            assert!(!allows(&rules, url), "{url}");
        }
        assert!(
            allows(&rules, "http://a.test/hex/x"),
            "a reserved %2F is not /"
        );
        assert!(
            allows(&rules, "http://a.test/path/file-with-a-x.html"),
            "%2A is not a wildcard"
        );
    }

    #[test]
    fn a_robots_txt_is_read_up_to_500_kib() {
        let mut txt = b"User-agent: *\nDisallow: /early\n".to_vec();
        while txt.len() < MAX_ROBOTS_BYTES {
            txt.extend_from_slice(b"# filler of a very long robots.txt\n");
        }
        txt.truncate(MAX_ROBOTS_BYTES);
        txt.extend_from_slice(b"\nDisallow: /late\n");
        let rules = Rules::from_answer(Some(200), &txt, "ringcrawl");
        assert!(!allows(&rules, "http://a.test/early"));
        assert!(
            allows(&rules, "http://a.test/late"),
            "past 500 KiB: not read"
        );
    }

    #[test]
    fn the_weight_is_what_our_rules_hold() {
        let ours = read("User-agent: *\nDisallow: /a\nDisallow: /b*c\n");
        let expected = std::mem::size_of::<Robot>() + 2 * RULE_BYTES + "/a".len() + "/b*c".len();
        assert_eq!(ours.weight(), expected);
        let mut big = "User-agent: other\n".to_string();
        for i in 0..1000 {
            big.push_str(&format!("Disallow: /other/{i}\n"));
        }
        big.push_str("User-agent: *\nDisallow: /a\nDisallow: /b*c\n");
        assert_eq!(read(&big).weight(), expected, "other groups are not kept");
        // The most a 500 KiB file can weigh: control bytes, each escaped
        // to three (ringcrawl's src/crawl/frontier/host.rs, ROBOTS_RESERVE,
        // counts on this).
        let mut worst = b"User-agent: *\n".to_vec();
        while worst.len() < MAX_ROBOTS_BYTES {
            worst.extend_from_slice(b"Allow:\x01\x01\x01\x01\x01\x01\n");
        }
        let weight = Rules::from_answer(Some(200), &worst, "ringcrawl").weight();
        assert!(weight < 3 * MAX_ROBOTS_BYTES, "{weight}");
    }

    #[test]
    fn agent_token_is_the_product_name() {
        assert_eq!(agent_token("ringcrawl/0.1.0"), "ringcrawl");
        assert_eq!(agent_token("MyBot (+http://x)"), "MyBot");
    }
}
