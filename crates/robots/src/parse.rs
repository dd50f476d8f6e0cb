//! A robots.txt parser and matcher (RFC 9309): the rules of one agent's
//! group, its `Crawl-delay`, and the `Sitemap:` lines, read from a
//! robots.txt's bytes; and whether a path may be fetched under them.
//!
//! What it is: pure and panic-free; work linear in the file to parse, and
//! for a path at most linear in (path + patterns) per rule, whatever the
//! file holds (no regular expressions, no backtracking: a 500 KiB file of
//! `*` costs what a 500 KiB file of letters does). What it is not: the
//! policy (which HTTP answer means what, the 500 KiB cap, what a URL's
//! path is and how escapes are made canonical: the crate root's), nor
//! a general robots.txt library (no other agents' rules are kept).
//!
//! Why by hand: ringcrawl used texting_robots 0.2.2 (2022), which brought
//! anyhow, nom, bstr 0.2, lazy_static, thiserror 1 and regex into the
//! library's dependency graph; a library others depend on should not
//! bring anyhow (issue 33). No crate on crates.io fitted: robotxt 0.7
//! needs Rust 1.90 (above our rust-version), robotstxt 0.3 (a port of
//! Google's C++, 2021) parses the whole file again for every URL it is
//! asked about, robotparser and robots_txt follow the 1996 draft (first
//! match, not longest). texting_robots stays as a dev-dependency: a
//! differential test (`super::differential`) checks that this parser
//! answers as it did, on generated files and paths.
//!
//! The grammar is texting_robots', so that files read the same:
//!
//! - A line ends at CR, LF or NUL. A leading byte-order mark is skipped.
//! - A directive is blanks (spaces, tabs), a name in any letter case
//!   (`User-agent`, `User agent`, `Useragent`; `Allow`; `Disallow` and
//!   five misspellings; `Sitemap`, `Site-map`, `Site map`; `Crawl-delay`,
//!   `Crawl delay`, `Crawldelay`), then `:` after optional blanks, or at
//!   least one blank; its value runs to a `#` or the line's end, trimmed
//!   of white space. Other lines, and `Crawl-delay` lines whose value is
//!   no non-negative number, are ignored (blank lines too: they do not
//!   end a group).
//! - A group is a run of `User-agent` lines and the rules after it up to
//!   the next `User-agent` line. Ours are the groups one of whose lines
//!   names our product token (letters, `-` and `_`; `ringcrawl/1.0` is
//!   `ringcrawl`), compared without regard to case, all merged; if none
//!   does, the groups of `*`. A file with no `User-agent` line at all is
//!   one group for every agent (texting_robots' reading; RFC 9309 would
//!   ignore rules outside a group, but obeying them is the polite side).
//! - `Crawl-delay` is the first of our groups'; if they have none, the
//!   last one before the first `User-agent` line.
//! - `Sitemap:` lines count wherever they are, in order (only those that
//!   are UTF-8).
//! - A rule's path is percent-encoded as a URL's path is (controls,
//!   space, `"`, `<`, `>`, `` ` `` and non-ASCII); a rule that is not
//!   UTF-8 is dropped. `*` matches any run of bytes; `$` ends the path
//!   (a rule with anything but `*` or `$` after a `$` matches nothing).
//! - The matching rule with the longest pattern (as written, wildcards
//!   counted) decides; on a tie, `Allow` wins; no match allows. So does
//!   `/robots.txt` itself.
//!
//! One deliberate difference from texting_robots: an empty `Disallow:`
//! (or `Allow:`) matches nothing, as RFC 9309 and Google read it;
//! texting_robots turned `Disallow:` into `Allow: /`, which outweighed a
//! `Disallow: /` of the same group on the tie.

use std::borrow::Cow;

use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};

/// What a rule's path and a path to match are percent-encoded with: a
/// URL path's set (controls, space, `"`, `<`, `>`, `` ` ``; non-ASCII is
/// always encoded).
const PATH: &AsciiSet = &CONTROLS.add(b' ').add(b'"').add(b'<').add(b'>').add(b'`');

/// One agent's rules, `Crawl-delay` and the file's sitemaps.
#[derive(Debug)]
pub struct Robot {
    /// The rules, the one that decides first: longest pattern first, and
    /// among equally long ones `Allow` first.
    rules: Vec<Rule>,
    /// The rules' patterns, end to end; a rule holds its range.
    patterns: Box<[u8]>,
    /// `Crawl-delay` in seconds, as written (any non-negative `f32`).
    pub delay: Option<f32>,
    /// The `Sitemap:` lines' values.
    pub sitemaps: Vec<String>,
}

/// An `Allow` or `Disallow` rule.
#[derive(Debug, Clone, Copy)]
struct Rule {
    /// Its pattern in [`Robot::patterns`], without a final `$` and with
    /// each run of `*` made one.
    start: u32,
    end: u32,
    /// How specific it is: its pattern's length as written (encoded).
    priority: u32,
    allow: bool,
    /// The pattern ended in `$`: the path must end where it does.
    anchored: bool,
}

/// Heap bytes a rule costs besides its pattern's bytes: its slot in the
/// rules' `Vec`.
pub const RULE_BYTES: usize = std::mem::size_of::<Rule>();

/// A directive line, its value trimmed.
#[derive(Clone, Copy)]
enum Line<'a> {
    Agent(&'a [u8]),
    Allow(&'a [u8]),
    Disallow(&'a [u8]),
    Delay(f32),
    Sitemap(&'a [u8]),
}

/// Directive names, in the order they are tried, and what each is.
const NAMES: [(&[u8], Name); 16] = [
    (b"user-agent", Name::Agent),
    (b"user agent", Name::Agent),
    (b"useragent", Name::Agent),
    (b"allow", Name::Allow),
    (b"disallow", Name::Disallow),
    (b"dissallow", Name::Disallow),
    (b"dissalow", Name::Disallow),
    (b"disalow", Name::Disallow),
    (b"diasllow", Name::Disallow),
    (b"disallaw", Name::Disallow),
    (b"sitemap", Name::Sitemap),
    (b"site-map", Name::Sitemap),
    (b"site map", Name::Sitemap),
    (b"crawl-delay", Name::Delay),
    (b"crawl delay", Name::Delay),
    (b"crawldelay", Name::Delay),
];

/// What a directive is.
#[derive(Clone, Copy)]
enum Name {
    Agent,
    Allow,
    Disallow,
    Sitemap,
    Delay,
}

impl Robot {
    /// The rules of `text` (a robots.txt's bytes) for the agent whose
    /// product token is `token`.
    pub fn new(token: &str, text: &[u8]) -> Robot {
        let text = strip_bom(text);
        let mut lines = Vec::new();
        let mut sitemaps = Vec::new();
        for raw in text.split(|&b| matches!(b, b'\n' | b'\r' | 0)) {
            match directive(raw) {
                Some(Line::Sitemap(url)) => {
                    if let Ok(url) = std::str::from_utf8(url) {
                        sitemaps.push(url.to_owned());
                    }
                }
                Some(line) => lines.push(line),
                None => {}
            }
        }

        let token = token.to_lowercase();
        let is_agent = |name: &[u8], agent: &[u8]| name.to_ascii_lowercase() == agent;
        let named = |agent: &[u8]| {
            lines.iter().any(
                |line| matches!(line, Line::Agent(name) if is_agent(product_token(name), agent)),
            )
        };
        let agent: &[u8] = if named(token.as_bytes()) {
            token.as_bytes()
        } else {
            b"*"
        };

        // Our groups' lines: those after a run of User-agent lines that
        // names us, up to the next User-agent line. Before any User-agent
        // line nothing is ours, unless there is none at all.
        let mut ours = !lines.iter().any(|line| matches!(line, Line::Agent(_)));
        let mut in_agents = false;
        let mut delay = None;
        let mut rules = Vec::new();
        let mut patterns = Vec::new();
        for line in &lines {
            match *line {
                Line::Agent(name) => {
                    if !in_agents {
                        ours = false;
                        in_agents = true;
                    }
                    ours |= is_agent(product_token(name), agent);
                    continue;
                }
                _ if !ours => {}
                Line::Delay(seconds) => {
                    delay = delay.or(Some(seconds));
                }
                Line::Allow(pattern) => push_rule(&mut rules, &mut patterns, pattern, true),
                Line::Disallow(pattern) => push_rule(&mut rules, &mut patterns, pattern, false),
                Line::Sitemap(_) => {}
            }
            in_agents = false;
        }
        if delay.is_none() {
            delay = lines
                .iter()
                .take_while(|line| !matches!(line, Line::Agent(_)))
                .filter_map(|line| match line {
                    Line::Delay(seconds) => Some(*seconds),
                    _ => None,
                })
                .last();
        }

        rules.sort_by_key(|rule| (std::cmp::Reverse(rule.priority), !rule.allow));
        rules.shrink_to_fit();
        Robot {
            rules,
            patterns: patterns.into_boxed_slice(),
            delay,
            sitemaps,
        }
    }

    /// May `path` (a URL's path and query; empty is `/`) be fetched?
    pub fn allowed(&self, path: &str) -> bool {
        let path = if path.is_empty() { "/" } else { path };
        let path: Cow<'_, str> = utf8_percent_encode(path, PATH).into();
        if path == "/robots.txt" {
            return true;
        }
        let path = path.as_bytes();
        self.rules
            .iter()
            .find(|rule| {
                let pattern = self
                    .patterns
                    .get(rule.start as usize..rule.end as usize)
                    .unwrap_or_default();
                matches(pattern, rule.anchored, path)
            })
            .is_none_or(|rule| rule.allow)
    }

    /// Heap bytes these rules hold (the rules, their patterns, the
    /// sitemaps not taken yet), besides the `Robot` itself.
    pub fn heap_bytes(&self) -> usize {
        self.rules.capacity() * RULE_BYTES
            + self.patterns.len()
            + self.sitemaps.capacity() * std::mem::size_of::<String>()
            + self.sitemaps.iter().map(String::capacity).sum::<usize>()
    }
}

/// `text` without a leading byte-order mark (or the part of one it starts
/// with, as texting_robots reads it).
fn strip_bom(text: &[u8]) -> &[u8] {
    let text = text.strip_prefix(b"\xef").unwrap_or(text);
    let text = text.strip_prefix(b"\xbb").unwrap_or(text);
    text.strip_prefix(b"\xbf").unwrap_or(text)
}

/// The directive `line` (no line break in it) holds, if any.
fn directive(line: &[u8]) -> Option<Line<'_>> {
    let is_blank = |b: &u8| matches!(b, b' ' | b'\t');
    let line = line.get(line.iter().take_while(|b| is_blank(b)).count()..)?;
    let (name, rest) = NAMES.iter().find_map(|&(name, what)| {
        let head = line.get(..name.len())?;
        head.eq_ignore_ascii_case(name)
            .then(|| (what, line.get(name.len()..).unwrap_or_default()))
    })?;
    let blanks = rest.iter().take_while(|b| is_blank(b)).count();
    let value = match rest.get(blanks..) {
        Some([b':', value @ ..]) => value,
        Some(value) if blanks > 0 => value,
        _ => return None,
    };
    let value = value.split(|&b| b == b'#').next().unwrap_or_default();
    let value = trim(value);
    Some(match name {
        Name::Agent => Line::Agent(value),
        Name::Allow => Line::Allow(value),
        Name::Disallow => Line::Disallow(value),
        Name::Sitemap => Line::Sitemap(value),
        Name::Delay => {
            let seconds = std::str::from_utf8(value).ok()?.parse::<f32>().ok()?;
            // NaN and negative delays make no directive.
            if seconds.is_nan() || seconds < 0.0 {
                return None;
            }
            Line::Delay(seconds)
        }
    })
}

/// `value` without leading and trailing white space (Unicode's, for the
/// characters that are UTF-8; a byte that is not stops the trimming).
fn trim(value: &[u8]) -> &[u8] {
    let mut value = value;
    while let Some(width) = first_char(value)
        .filter(|(c, _)| c.is_whitespace())
        .map(|(_, w)| w)
    {
        value = value.get(width..).unwrap_or_default();
    }
    while let Some(width) = last_char(value)
        .filter(|(c, _)| c.is_whitespace())
        .map(|(_, w)| w)
    {
        value = value
            .get(..value.len().saturating_sub(width))
            .unwrap_or_default();
    }
    value
}

/// The character `bytes` starts with, and its width, if UTF-8.
fn first_char(bytes: &[u8]) -> Option<(char, usize)> {
    let width = match bytes.first()? {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    };
    let c = std::str::from_utf8(bytes.get(..width)?)
        .ok()?
        .chars()
        .next()?;
    Some((c, width))
}

/// The character `bytes` ends with, and its width, if UTF-8.
fn last_char(bytes: &[u8]) -> Option<(char, usize)> {
    let start = (bytes.len().saturating_sub(4)..bytes.len())
        .rev()
        .find(|&at| bytes.get(at).is_some_and(|b| b & 0xc0 != 0x80))?;
    let tail = bytes.get(start..)?;
    let c = std::str::from_utf8(tail).ok()?.chars().next()?;
    Some((c, tail.len()))
}

/// The product token a `User-agent` value starts with (RFC 9309 §2.2.1:
/// letters, `-` and `_`), or the whole value if it starts with none (`*`).
fn product_token(name: &[u8]) -> &[u8] {
    let len = name
        .iter()
        .take_while(|b| b.is_ascii_alphabetic() || matches!(b, b'-' | b'_'))
        .count();
    match len {
        0 => name,
        len => name.get(..len).unwrap_or(name),
    }
}

/// Adds the rule `pattern` (as written) to `rules`, its bytes to
/// `patterns`; an empty pattern, one that is not UTF-8 and one that can
/// match nothing are left out.
fn push_rule(rules: &mut Vec<Rule>, patterns: &mut Vec<u8>, pattern: &[u8], allow: bool) {
    let Ok(pattern) = std::str::from_utf8(pattern) else {
        return;
    };
    if pattern.is_empty() {
        return;
    }
    let encoded: Cow<'_, str> = utf8_percent_encode(pattern, PATH).into();
    let encoded = encoded.as_bytes();
    // `$` ends the path: after it only `*` (empty there) or `$` may come.
    let (body, anchored) = match encoded.iter().position(|&b| b == b'$') {
        Some(at) => {
            let (body, tail) = encoded.split_at(at);
            if tail.iter().any(|&b| !matches!(b, b'$' | b'*')) {
                return;
            }
            (body, true)
        }
        None => (encoded, false),
    };
    let (Ok(start), Ok(priority)) = (u32::try_from(patterns.len()), u32::try_from(encoded.len()))
    else {
        return;
    };
    let mut last = None;
    for &b in body {
        if !(b == b'*' && last == Some(b'*')) {
            patterns.push(b);
        }
        last = Some(b);
    }
    let Ok(end) = u32::try_from(patterns.len()) else {
        return;
    };
    rules.push(Rule {
        start,
        end,
        priority,
        allow,
        anchored,
    });
}

/// Does `pattern` (`*` any run of bytes; `anchored`: it must reach the
/// end) match the start of `path`? Linear in the two lengths: the part
/// before the first `*` is a prefix, the part after the last `*` (if
/// anchored) a suffix, and each part between is found at its leftmost
/// place after the one before (leftmost leaves the most room for the
/// rest, so no other place need be tried).
fn matches(pattern: &[u8], anchored: bool, path: &[u8]) -> bool {
    let mut parts = pattern.split(|&b| b == b'*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = path.strip_prefix(first) else {
        return false;
    };
    let last = match (anchored, parts.next_back()) {
        // No `*`: a prefix, or the whole path.
        (_, None) => return !anchored || rest.is_empty(),
        (true, Some(last)) => match rest.strip_suffix(last) {
            Some(before) => {
                rest = before;
                None
            }
            None => return false,
        },
        (false, Some(last)) => Some(last),
    };
    for part in parts.chain(last) {
        match memchr::memmem::find(rest, part) {
            Some(at) => {
                rest = rest
                    .get(at.saturating_add(part.len())..)
                    .unwrap_or_default()
            }
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, path: &str) -> bool {
        let robot = Robot::new(
            "x",
            format!("User-agent: *\nDisallow: {pattern}\n").as_bytes(),
        );
        !robot.allowed(path)
    }

    #[test]
    fn wildcards_match_as_rfc_9309_has_them() {
        for (pattern, path, hit) in [
            ("/fish", "/fish", true),
            ("/fish", "/fish.html", true),
            ("/fish", "/Fish", false),
            ("/fish*", "/fishheads", true),
            ("/fish/", "/fish", false),
            ("/*.php", "/index.php", true),
            ("/*.php", "/filename.php/", true),
            ("/*.php", "/windows.PHP", false),
            ("/*.php$", "/filename.php", true),
            ("/*.php$", "/filename.php?x", false),
            ("/*.php$", "/filename.php5", false),
            ("/fish*.php", "/fish.php", true),
            ("/fish*.php", "/fishheads/catfish.php?x", true),
            ("/fish*.php", "/Fish.PHP", false),
            ("/a*b*c$", "/abc", true),
            ("/a*b*c$", "/aXbYc", true),
            ("/a*b*c$", "/abcX", false),
            ("/a*bc$", "/abc", true),
            ("/ab*bc$", "/abc", false),
            ("/ab*bc$", "/abbc", true),
            ("/a**b", "/aXXb", true),
            ("*", "/anything", true),
            ("/$", "/", true),
            ("/$", "/x", false),
            ("/a$*", "/a", true),
            ("/a$$", "/a", true),
            ("/a$b", "/a", false),
            ("/a$b", "/a$b", false),
        ] {
            assert_eq!(m(pattern, path), hit, "{pattern} on {path}");
        }
    }

    #[test]
    fn lines_end_at_cr_lf_or_nul_and_a_bom_is_skipped() {
        let robot = Robot::new(
            "x",
            b"\xef\xbb\xbfUser-agent: *\rDisallow: /a\0Disallow: /b\r\nDisallow: /c",
        );
        assert!(!robot.allowed("/a") && !robot.allowed("/b") && !robot.allowed("/c"));
        assert!(robot.allowed("/d"));
    }

    #[test]
    fn directives_are_read_as_texting_robots_reads_them() {
        let robot = Robot::new(
            "x",
            b"  USER AGENT *\n\tdisallow /a b # comment\nDisalow:/c\nAllowed: /\nDisallow\n\
              Crawl delay : 2.5\nSite-map: https://a.test/s.xml \n",
        );
        assert!(!robot.allowed("/a%20b"), "a space inside a rule is encoded");
        assert!(!robot.allowed("/c"));
        assert!(robot.allowed("/"), "`Allowed:` is no directive");
        assert_eq!(robot.delay, Some(2.5));
        assert_eq!(robot.sitemaps, ["https://a.test/s.xml"]);
    }

    #[test]
    fn an_empty_disallow_matches_nothing() {
        let robot = Robot::new("x", b"User-agent: *\nDisallow:\nDisallow: /\n");
        assert!(!robot.allowed("/page"));
        let robot = Robot::new("x", b"User-agent: *\nDisallow:\n");
        assert!(robot.allowed("/page"));
    }

    #[test]
    fn robots_txt_itself_is_always_allowed() {
        let robot = Robot::new("x", b"User-agent: *\nDisallow: /\n");
        assert!(robot.allowed("/robots.txt"));
        assert!(!robot.allowed("/robots.txt?x"));
        assert!(!robot.allowed(""), "empty is /");
    }

    #[test]
    fn rules_without_any_user_agent_line_are_everyones() {
        let robot = Robot::new("x", b"Disallow: /a\nCrawl-delay: 3\n");
        assert!(!robot.allowed("/a"));
        assert_eq!(robot.delay, Some(3.0));
        let robot = Robot::new(
            "x",
            b"Disallow: /a\nCrawl-delay: 3\nUser-agent: other\nDisallow: /b\n",
        );
        assert!(robot.allowed("/a"), "before the first group: no one's");
        assert_eq!(
            robot.delay,
            Some(3.0),
            "a delay before any group is the default"
        );
    }

    #[test]
    fn bad_delays_are_no_directive() {
        for value in ["-1", "NaN", "soon", ""] {
            let robot = Robot::new(
                "x",
                format!("User-agent: *\nCrawl-delay: {value}\n").as_bytes(),
            );
            assert_eq!(robot.delay, None, "{value}");
        }
        let robot = Robot::new("x", b"User-agent: *\nCrawl-delay: x\nCrawl-delay: 4\n");
        assert_eq!(robot.delay, Some(4.0), "the first good one");
    }

    #[test]
    fn values_are_trimmed_of_unicode_white_space_and_may_be_any_bytes() {
        let robot = Robot::new(
            "x",
            "User-agent: *\u{a0}\nDisallow: /a\u{3000}\n".as_bytes(),
        );
        assert!(!robot.allowed("/a"));
        assert!(robot.allowed("/b"));
        let robot = Robot::new("x", b"User-agent: *\nDisallow: /\xff\nSitemap: \xfe\n\xc3");
        assert!(robot.allowed("/"), "a rule that is not UTF-8 is dropped");
        assert!(robot.sitemaps.is_empty());
    }

    /// A hostile robots.txt (500 KiB of wildcards) costs linear work: a
    /// backtracking matcher takes exponential time on the first rule, a
    /// quadratic one minutes on the second file.
    #[test]
    fn wildcards_cost_linear_work() {
        let start = std::time::Instant::now();
        let mut txt = b"User-agent: *\nDisallow: /".to_vec();
        while txt.len() < 500 << 10 {
            txt.extend_from_slice(b"*a");
        }
        txt.extend_from_slice(b"*b$\n");
        let robot = Robot::new("x", &txt);
        let path = format!("/{}b", "a".repeat(4000));
        for _ in 0..100 {
            assert!(robot.allowed(&path));
        }
        // Many rules, each made to scan the whole path.
        let mut txt = b"User-agent: *\n".to_vec();
        let mut i = 0u32;
        while txt.len() < 500 << 10 {
            txt.extend_from_slice(format!("Disallow: /*a*{i}*b$\n").as_bytes());
            i += 1;
        }
        let robot = Robot::new("x", &txt);
        for _ in 0..10 {
            assert!(robot.allowed(&path));
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(20),
            "{:?}",
            start.elapsed()
        );
    }
}
