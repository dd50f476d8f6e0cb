//! Which bodies are worth downloading, by media type: `--accept-type`
//! (only these), `--reject-type` (not these) and `--max-size-per-type`
//! (at most so many bytes of these). A body not wanted is cut at zero
//! bytes after its head, as a body over `--max-body` is cut at its bound:
//! the answer is recorded (status, type, head) without its bytes.
//!
//! HTML is never refused (the crawl needs its links), though a size
//! given for it holds. A pattern is `type/subtype`, `type/*` or `*/*`
//! (`*`), in any letter case; an answer without a `Content-Type` is
//! `application/octet-stream` (RFC 9110 §8.3).
//!
//! Pure; the fetch asks [`TypeRules::body_cap`] once the head is in. Not
//! which fetches it applies to (robots.txt and sitemaps are read whole).

use super::{is_html, media_type};

/// The rules, in the order given; the first size rule that matches wins.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TypeRules {
    accept: Vec<Box<str>>,
    reject: Vec<Box<str>>,
    sizes: Vec<(Box<str>, usize)>,
}

/// A pattern that is not a media type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a media type (type/subtype, type/* or */*)")]
pub struct BadPattern(pub String);

impl TypeRules {
    /// Download bodies of this type (and of the other accepted ones) only.
    pub fn accept(&mut self, pattern: &str) -> Result<(), BadPattern> {
        self.accept.push(checked(pattern)?);
        Ok(())
    }

    /// Do not download bodies of this type.
    pub fn reject(&mut self, pattern: &str) -> Result<(), BadPattern> {
        self.reject.push(checked(pattern)?);
        Ok(())
    }

    /// Download at most `bytes` of bodies of this type.
    pub fn max_size(&mut self, pattern: &str, bytes: usize) -> Result<(), BadPattern> {
        self.sizes.push((checked(pattern)?, bytes));
        Ok(())
    }

    /// No rule given.
    pub fn is_empty(&self) -> bool {
        self.accept.is_empty() && self.reject.is_empty() && self.sizes.is_empty()
    }

    /// Most body bytes to read of an answer whose `Content-Type` is
    /// `content_type`, within `max_body`: 0 for a body not wanted.
    pub fn body_cap(&self, content_type: Option<&str>, max_body: usize) -> usize {
        if self.is_empty() {
            return max_body;
        }
        let media = content_type.map_or_else(
            || "application/octet-stream".to_string(),
            |ct| media_type(ct).0,
        );
        let any = |list: &[Box<str>]| list.iter().any(|p| matches(p, &media));
        let html = is_html(content_type);
        if !html && ((!self.accept.is_empty() && !any(&self.accept)) || any(&self.reject)) {
            return 0;
        }
        self.sizes
            .iter()
            .find(|(p, _)| matches(p, &media))
            .map_or(max_body, |(_, size)| (*size).min(max_body))
    }
}

/// `pattern` lower-cased, if it is `type/subtype`, `type/*`, `*/*` or `*`.
fn checked(pattern: &str) -> Result<Box<str>, BadPattern> {
    let lower = pattern.trim().to_ascii_lowercase();
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+*".contains(&b))
    };
    let good = lower == "*"
        || lower
            .split_once('/')
            .is_some_and(|(t, s)| token(t) && token(s) && (t != "*" || s == "*"));
    if good {
        Ok(lower.into_boxed_str())
    } else {
        Err(BadPattern(pattern.to_string()))
    }
}

/// Whether `media` (lower case, no parameters) is of `pattern`'s type.
fn matches(pattern: &str, media: &str) -> bool {
    match pattern.strip_suffix("/*") {
        _ if pattern == "*" || pattern == "*/*" => true,
        Some(kind) => media.split_once('/').is_some_and(|(t, _)| t == kind),
        None => pattern == media,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: usize = 1 << 20;

    #[test]
    fn rejected_types_are_cut_at_zero_and_html_never_is() {
        let mut rules = TypeRules::default();
        rules.reject("video/*").unwrap();
        rules.reject("Application/PDF").unwrap();
        rules.reject("text/html").unwrap();
        assert_eq!(rules.body_cap(Some("video/mp4"), MAX), 0);
        assert_eq!(rules.body_cap(Some("application/pdf; x=1"), MAX), 0);
        assert_eq!(rules.body_cap(Some("text/html; charset=utf-8"), MAX), MAX);
        assert_eq!(rules.body_cap(Some("image/png"), MAX), MAX);
        assert_eq!(rules.body_cap(None, MAX), MAX);
    }

    #[test]
    fn accepted_types_only_and_sizes_per_type() {
        let mut rules = TypeRules::default();
        rules.accept("image/*").unwrap();
        rules.max_size("image/png", 1000).unwrap();
        rules.max_size("text/html", 5000).unwrap();
        rules.max_size("image/*", 2000).unwrap();
        assert_eq!(rules.body_cap(Some("image/png"), MAX), 1000);
        assert_eq!(rules.body_cap(Some("image/gif"), MAX), 2000);
        assert_eq!(rules.body_cap(Some("image/gif"), 100), 100);
        assert_eq!(rules.body_cap(Some("text/html"), MAX), 5000);
        assert_eq!(rules.body_cap(Some("application/pdf"), MAX), 0);
        // No Content-Type: application/octet-stream, not accepted here.
        assert_eq!(rules.body_cap(None, MAX), 0);
        assert_eq!(TypeRules::default().body_cap(Some("video/mp4"), MAX), MAX);
    }

    #[test]
    fn patterns_are_media_types() {
        let mut rules = TypeRules::default();
        for good in [
            "*",
            "*/*",
            "video/*",
            "application/vnd.ms-excel",
            "image/svg+xml",
        ] {
            assert!(rules.reject(good).is_ok(), "{good}");
        }
        for bad in ["", "pdf", "*/html", "video/", "/x", "a/b/c", "a b/c"] {
            assert!(rules.reject(bad).is_err(), "{bad}");
        }
    }
}
