//! Query parameters a crawl leaves out of every URL (`--strip-query
//! 'utm_*,sessionid'`): tracking and session parameters that would
//! otherwise make one page many URLs. A parameter is dropped when its name
//! (as written, before percent-decoding; letter case counts, as it does to
//! servers) matches a pattern, in which `*` stands for any run of
//! characters; the other parameters keep their order and spelling, and a
//! query left empty goes with its `?`.
//!
//! Pure and total, on the URL's normal form (`ringcrawl_links::urls`): it runs
//! before a found URL meets the seen-set, so the stripped form is the one
//! deduplicated, fetched and recorded. Not the other normalisation rules.

use std::borrow::Cow;

/// The patterns of parameter names to drop.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct StripQuery {
    patterns: Vec<Box<str>>,
}

/// Why a pattern cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PatternError {
    #[error("an empty parameter name")]
    Empty,
    #[error("{0:?}: a parameter name holds no '&', '=', '#' or '?'")]
    Delimiter(String),
}

impl StripQuery {
    /// Drop parameters named like `pattern` too.
    pub(crate) fn add(&mut self, pattern: &str) -> Result<(), PatternError> {
        let pattern = pattern.trim();
        if pattern.is_empty() {
            return Err(PatternError::Empty);
        }
        if pattern.contains(['&', '=', '#', '?']) {
            return Err(PatternError::Delimiter(pattern.to_string()));
        }
        self.patterns.push(pattern.into());
        Ok(())
    }

    /// No pattern given: every URL is left as it is.
    pub(crate) fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// `url` (in normal form) without the parameters to drop; borrowed when
    /// it has none.
    pub(crate) fn apply<'u>(&self, url: &'u str) -> Cow<'u, str> {
        let Some((head, query)) = url.split_once('?').filter(|_| !self.is_empty()) else {
            return Cow::Borrowed(url);
        };
        let name = |pair: &'u str| pair.split_once('=').map_or(pair, |(n, _)| n);
        let dropped = |pair: &&'u str| self.patterns.iter().any(|p| matches(p, name(pair)));
        if !query.split('&').any(|pair| dropped(&pair)) {
            return Cow::Borrowed(url);
        }
        let kept: Vec<&str> = query.split('&').filter(|pair| !dropped(pair)).collect();
        if kept.iter().all(|pair| pair.is_empty()) {
            return Cow::Owned(head.to_string());
        }
        Cow::Owned(format!("{head}?{}", kept.join("&")))
    }
}

/// Whether `name` matches `pattern`, whose `*` stands for any run of
/// characters (a greedy match with backtracking to the last star: linear
/// enough for names of a few dozen bytes).
fn matches(pattern: &str, name: &str) -> bool {
    let (p, n) = (pattern.as_bytes(), name.as_bytes());
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some(b'*') => {
                star = Some((pi, ni));
                pi += 1;
            }
            Some(&c) if Some(&c) == n.get(ni) => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p.get(pi..)
        .is_some_and(|rest| rest.iter().all(|&c| c == b'*'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strip(patterns: &[&str]) -> StripQuery {
        let mut s = StripQuery::default();
        for p in patterns {
            s.add(p).unwrap();
        }
        s
    }

    #[test]
    fn tracking_parameters_go_and_the_others_keep_their_order() {
        let s = strip(&["utm_*", "sessionid", "*_ref"]);
        for (url, want) in [
            (
                "http://a.test/p?id=3&utm_source=x&b=1",
                "http://a.test/p?id=3&b=1",
            ),
            (
                "http://a.test/p?utm_source=x&utm_medium=y",
                "http://a.test/p",
            ),
            ("http://a.test/p?sessionid=abc", "http://a.test/p"),
            (
                "http://a.test/p?SessionID=abc",
                "http://a.test/p?SessionID=abc",
            ),
            (
                "http://a.test/p?sessionidx=1",
                "http://a.test/p?sessionidx=1",
            ),
            (
                "http://a.test/p?x=1&home_ref=2&ref=3",
                "http://a.test/p?x=1&ref=3",
            ),
            ("http://a.test/p?utm_source", "http://a.test/p"),
            ("http://a.test/p?a=1&&utm_x=2", "http://a.test/p?a=1&"),
            ("http://a.test/p", "http://a.test/p"),
            (
                "http://a.test/p?q=utm_source",
                "http://a.test/p?q=utm_source",
            ),
        ] {
            assert_eq!(s.apply(url), want, "{url}");
        }
        assert!(matches!(s.apply("http://a.test/p?id=3"), Cow::Borrowed(_)));
        assert_eq!(
            StripQuery::default().apply("http://a.test/?utm_x=1"),
            "http://a.test/?utm_x=1"
        );
    }

    #[test]
    fn patterns_match_with_stars_anywhere() {
        for (pattern, name, want) in [
            ("utm_*", "utm_", true),
            ("utm_*", "utm", false),
            ("*", "", true),
            ("a*b*c", "axxbyyc", true),
            ("a*b*c", "axxbyy", false),
            ("**x", "abx", true),
            ("x", "xx", false),
        ] {
            assert_eq!(matches(pattern, name), want, "{pattern} {name}");
        }
    }

    #[test]
    fn empty_patterns_and_delimiters_are_refused() {
        let mut s = StripQuery::default();
        assert_eq!(s.add(" "), Err(PatternError::Empty));
        assert!(s.add("a=b").is_err());
        assert!(s.add("a&b").is_err());
        assert!(s.is_empty());
    }
}
