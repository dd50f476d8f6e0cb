//! URL parsing and normalisation for the crawl frontier's dedup.
//!
//! This module turns the strings a crawl meets — a root typed on the command
//! line, an `href` found in a page, a `Location` header — into the single
//! canonical [`url::Url`] the crawler keys its "already seen" set on. Two
//! strings that name the same resource by the rules below come out equal:
//!
//! * only `http` and `https` URLs with a non-empty host are kept;
//! * the fragment, any userinfo (`user:pass@`) and an empty query (`?` alone)
//!   are dropped;
//! * a domain's trailing dots are dropped: `example.com.` (the absolute DNS
//!   name) is `example.com`, so both spellings are one host for sharding,
//!   scope, DNS, robots.txt, politeness and the TLS server name (which has
//!   no trailing dot). Host names that come from elsewhere (`--resolve`, a
//!   scope question, the resolver's callers) go through [`canonical_host`],
//!   the same rule;
//! * everything else is what the `url` crate (WHATWG URL standard) already
//!   does: lower-case scheme and host, default port removed, dot segments
//!   resolved, `/` for an empty path, spaces and non-ASCII percent-encoded.
//!
//! What it is not: no I/O, no DNS, no robots.txt, no scope decisions (see
//! ringcrawl's `web::scope`), and no "aggressive" normalisation that could merge
//! distinct resources (query parameters are not sorted, trailing slashes and
//! letter case of paths are kept, `www.` is not stripped). Every function is
//! pure and total: any input, however hostile, gives a value or an error,
//! never a panic.
use std::borrow::Cow;

use encoding_rs::Encoding;
use url::{Host, Url};

/// Why a crawl root given by the user could not be used.
///
/// The messages are one line each and meant to be shown to the user as they
/// are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UrlError {
    /// The string is not a URL at all (the `url` crate's reason is the second
    /// field).
    #[error("invalid URL {0:?}: {1}")]
    Invalid(String, String),
    /// The URL parsed but its scheme is neither `http` nor `https`.
    #[error("unsupported scheme in {0:?} (only http and https)")]
    Scheme(String),
    /// The URL parsed but has no (or an empty) host.
    #[error("URL {0:?} has no host")]
    NoHost(String),
}

/// A crawl root from the command line.
///
/// The string is trimmed; if it has no scheme (`example.com/a`,
/// `127.0.0.1:8080`, `localhost:3000`, `[::1]:8080`) `http://` is put in
/// front; the result is then [`normalize`]d. A leading `word:` counts as a
/// scheme unless what follows the colon starts with a digit (a port), so
/// `mailto:x@example.com` is refused as a [`UrlError::Scheme`] rather than
/// turned into a host named `mailto`.
///
/// Errors are for the user and fit on one line.
pub fn parse_root(s: &str) -> Result<Url, UrlError> {
    let trimmed = s.trim();
    if trimmed.is_empty() {
        return Err(UrlError::Invalid(s.to_owned(), "empty string".to_owned()));
    }
    let parsed = if has_scheme(trimmed) {
        Url::parse(trimmed)
    } else {
        Url::parse(&format!("http://{trimmed}"))
    };
    let url = parsed.map_err(|e| UrlError::Invalid(trimmed.to_owned(), e.to_string()))?;
    if !is_http(&url) {
        return Err(UrlError::Scheme(trimmed.to_owned()));
    }
    normalize(url).ok_or_else(|| UrlError::NoHost(trimmed.to_owned()))
}

/// Whether `s` starts with `scheme:` (RFC 3986 scheme syntax) that is not in
/// fact `host:port`.
fn has_scheme(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    let starts_alpha = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    let scheme_chars = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    let looks_like_port = rest.starts_with(|c: char| c.is_ascii_digit());
    starts_alpha && scheme_chars && (rest.starts_with("//") || !looks_like_port)
}

fn is_http(url: &Url) -> bool {
    matches!(url.scheme(), "http" | "https")
}

/// The canonical form of `url` used for dedup, or `None` if the crawler
/// cannot fetch it.
///
/// Only `http`/`https` URLs with a non-empty host are kept (everything else
/// gives `None`). The fragment, the userinfo, an empty query (`?` alone) and
/// a domain's trailing dots are dropped (a host of dots alone leaves none:
/// `None`). The `url` crate has already lower-cased scheme and host,
/// removed the default port, resolved dot segments and given `/` for an empty
/// path, so those need nothing here. Mutations are only made when needed, so
/// an already-canonical URL costs a few comparisons.
pub fn normalize(mut url: Url) -> Option<Url> {
    if !is_http(&url) || url.host_str().is_none_or(str::is_empty) {
        return None;
    }
    let dotted = match url.host() {
        Some(Host::Domain(domain)) if domain.ends_with('.') => {
            Some(canonical_host(domain).into_owned())
        }
        _ => None,
    };
    if let Some(domain) = dotted {
        // An empty host is refused for http(s): the URL names no host.
        url.set_host(Some(&domain)).ok()?;
    }
    if url.fragment().is_some() {
        url.set_fragment(None);
    }
    if !url.username().is_empty() {
        // Cannot fail for a URL with a host (only for cannot-be-a-base URLs).
        let _ = url.set_username("");
    }
    if url.password().is_some() {
        let _ = url.set_password(None);
    }
    if url.query() == Some("") {
        url.set_query(None);
    }
    Some(url)
}

/// Strip leading and trailing ASCII whitespace (TAB, LF, FF, CR, SPACE), as
/// HTML does for URL-valued attributes.
fn trim_ascii_ws(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_ascii_whitespace())
}

/// Resolve a link found in a page (`href`, `src`) against `base`, then
/// [`normalize`] it.
///
/// ASCII whitespace around the reference is trimmed first. An empty
/// reference or a fragment-only one (`#top`) gives `None`: it points at the
/// page itself, which is already known. So does anything that does not
/// resolve to `http`/`https` (`javascript:`, `mailto:`, `data:`, `tel:`, ...)
/// or does not parse. For `Location` headers use [`join_redirect`], which
/// resolves those cases instead of dropping them.
pub fn join(base: &Url, reference: &str) -> Option<Url> {
    join_in(base, reference, None)
}

/// [`join`] for a link of a page in a legacy encoding: the query is written
/// in `query` (the page's encoding; None for UTF-8), the rest in UTF-8, as
/// the URL standard says for a document's URLs.
pub fn join_in(base: &Url, reference: &str, query: Option<&'static Encoding>) -> Option<Url> {
    let reference = trim_ascii_ws(reference);
    if reference.is_empty() || reference.starts_with('#') {
        return None;
    }
    resolve(base, reference, query).and_then(normalize)
}

/// The `url` crate's query encoder for `encoding` (a closure that must
/// borrow its input for its output: spelled out for the compiler here).
fn query_encoder(
    encoding: &'static Encoding,
) -> impl for<'s> Fn(&'s str) -> std::borrow::Cow<'s, [u8]> {
    move |s| encoding.encode(s).0
}

/// `reference` parsed against `base`, its query written in `query` (None:
/// UTF-8); not normalised.
pub fn resolve(base: &Url, reference: &str, query: Option<&'static Encoding>) -> Option<Url> {
    match query {
        None => base.join(reference).ok(),
        Some(encoding) => {
            let encode = query_encoder(encoding);
            Url::options()
                .base_url(Some(base))
                .encoding_override(Some(&encode))
                .parse(reference)
                .ok()
        }
    }
}

/// Resolve a redirect target (`Location` header value) against the URL that
/// was fetched, then [`normalize`] it.
///
/// Unlike [`join`], an empty or fragment-only `Location` resolves (as RFC 3986
/// says) to `base` itself, normalised: the redirect points back at the same
/// resource, and the crawler's dedup is what stops the loop. Non-http(s)
/// targets and unparsable values give `None`.
pub fn join_redirect(base: &Url, location: &str) -> Option<Url> {
    let location = trim_ascii_ws(location);
    if location.is_empty() || location.starts_with('#') {
        return normalize(base.clone());
    }
    base.join(location).ok().and_then(normalize)
}

/// The host of `url` as used for sharding and scope: `url.host_str()`, or ""
/// when there is none.
///
/// For `http`/`https` URLs the `url` crate has already lower-cased domains
/// (and punycoded IDNs), written IPv4 addresses in dotted-decimal form and
/// IPv6 addresses in their compressed bracketed form (`[::1]`), and
/// [`normalize`] dropped a domain's trailing dots, so for a normalised URL
/// the result needs no further folding. The port is not part of it.
pub fn host(url: &Url) -> &str {
    url.host_str().unwrap_or("")
}

/// A host name as the crawl keys it: ASCII lower-case, without trailing
/// dots (`Example.COM.` is `example.com`); borrowed when it already is.
/// [`normalize`] applies the same rule to URLs; this is for host names that
/// come without one (`--resolve`, hosts files, scope and resolver callers).
pub fn canonical_host(host: &str) -> Cow<'_, str> {
    let host = host.trim_end_matches('.');
    if host.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(host.to_ascii_lowercase())
    } else {
        Cow::Borrowed(host)
    }
}

/// The host of a URL already in normalised string form (as queues store
/// them), without parsing it again: what lies between `://` and the port,
/// path, query or fragment. Agrees with [`host`] for every URL that
/// [`normalize`] produced (normalised URLs carry no userinfo).
pub fn host_of(normalized: &str) -> &str {
    let rest = normalized
        .get(after_scheme(normalized).unwrap_or(0)..)
        .unwrap_or(normalized);
    let authority = rest.get(..authority_end(rest)).unwrap_or(rest);
    if authority.starts_with('[') {
        return authority
            .find(']')
            .map_or(authority, |end| &authority[..=end]);
    }
    authority
        .rsplit_once(':')
        .map_or(authority, |(host, _)| host)
}

/// The origin of a URL already in normalised string form: `scheme://host`
/// with the port if it is not the scheme's default (normalised URLs carry
/// none then), so `http://h/`, `https://h/` and `http://h:8080/` give three
/// origins (RFC 6454; robots.txt belongs to one, RFC 9309).
pub fn origin_of(normalized: &str) -> &str {
    let Some(after_scheme) = after_scheme(normalized) else {
        return normalized;
    };
    let end = normalized
        .get(after_scheme..)
        .map_or(normalized.len(), |rest| {
            after_scheme.saturating_add(authority_end(rest))
        });
    normalized.get(..end).unwrap_or(normalized)
}

/// Where what follows the first `://` starts. Byte searches, not `str`
/// patterns: these run for every link a crawl routes, and a `&str` needle
/// builds a two-way searcher each call (measured: docs/benchmarks.md,
/// "Where the CPU per page goes").
fn after_scheme(url: &str) -> Option<usize> {
    url.as_bytes()
        .windows(3)
        .position(|w| w == b"://")
        .map(|i| i.saturating_add(3))
}

/// The length of the authority at the start of `rest`: up to the first
/// `/`, `?` or `#` (all ASCII, so the cut is a character boundary).
fn authority_end(rest: &str) -> usize {
    rest.bytes()
        .position(|b| matches!(b, b'/' | b'?' | b'#'))
        .unwrap_or(rest.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn host_of_a_normalised_string_matches_the_parsed_host() {
        for s in [
            "http://example.com/",
            "http://example.com:8080/a?b#c",
            "https://[::1]:443/x",
            "http://[2001:db8::1]/",
            "http://127.0.0.1:9/",
            "http://xn--bcher-kva.example/",
        ] {
            let url = normalize(u(s)).unwrap();
            assert_eq!(host_of(url.as_str()), host(&url), "{s}");
            assert_eq!(
                origin_of(url.as_str()),
                url.origin().ascii_serialization(),
                "{s}"
            );
        }
    }

    #[test]
    fn schemes_and_ports_make_different_origins_of_one_host() {
        let origins: Vec<&str> = [
            "http://h.test/a",
            "https://h.test/a?b",
            "http://h.test:8080",
        ]
        .into_iter()
        .map(origin_of)
        .collect();
        assert_eq!(
            origins,
            ["http://h.test", "https://h.test", "http://h.test:8080"]
        );
        assert_eq!(origin_of("junk"), "junk");
    }

    fn root(s: &str) -> String {
        parse_root(s).unwrap().to_string()
    }

    #[test]
    fn root_without_scheme_gets_http() {
        assert_eq!(root("example.com/a"), "http://example.com/a");
        assert_eq!(root("example.com"), "http://example.com/");
    }

    #[test]
    fn root_ip_with_port_gets_http() {
        assert_eq!(root("127.0.0.1:8080"), "http://127.0.0.1:8080/");
        assert_eq!(root("localhost:3000/x"), "http://localhost:3000/x");
        assert_eq!(root("[::1]:8080"), "http://[::1]:8080/");
        assert_eq!(root("example.com:8080"), "http://example.com:8080/");
    }

    #[test]
    fn root_is_trimmed_and_normalised() {
        assert_eq!(
            root("  HTTPS://User:Pw@Example.COM:443/a/./b/../c?#frag \n"),
            "https://example.com/a/c"
        );
    }

    #[test]
    fn root_with_explicit_scheme_kept() {
        assert_eq!(root("https://example.com"), "https://example.com/");
        assert_eq!(root("http://example.com:80/"), "http://example.com/");
    }

    #[test]
    fn root_with_other_scheme_is_refused() {
        assert_eq!(
            parse_root("ftp://example.com/"),
            Err(UrlError::Scheme("ftp://example.com/".into()))
        );
        assert!(matches!(
            parse_root("mailto:someone@example.com"),
            Err(UrlError::Scheme(_))
        ));
        assert!(matches!(
            parse_root("file:///etc/passwd"),
            Err(UrlError::Scheme(_))
        ));
    }

    #[test]
    fn root_garbage_is_invalid_with_one_line_message() {
        for bad in ["", "   ", "http://", "http://exa mple.com", "http://[::1"] {
            let err = parse_root(bad).unwrap_err();
            let msg = err.to_string();
            assert!(!msg.contains('\n'), "{msg}");
            assert!(matches!(err, UrlError::Invalid(..)), "{bad:?}: {err:?}");
        }
    }

    #[test]
    fn normalize_drops_fragment_userinfo_empty_query() {
        let n = normalize(u("http://a:b@Example.com/p?#f")).unwrap();
        assert_eq!(n.as_str(), "http://example.com/p");
        let n = normalize(u("http://user@example.com/")).unwrap();
        assert_eq!(n.as_str(), "http://example.com/");
    }

    #[test]
    fn normalize_keeps_non_empty_query_and_path_case() {
        let n = normalize(u("http://example.com/A/b/?x=1&y")).unwrap();
        assert_eq!(n.as_str(), "http://example.com/A/b/?x=1&y");
    }

    #[test]
    fn normalize_relies_on_url_crate_basics() {
        let n = normalize(u("HTTP://EXAMPLE.com:80")).unwrap();
        assert_eq!(n.as_str(), "http://example.com/");
        let n = normalize(u("https://example.com:443/a/../b/./c")).unwrap();
        assert_eq!(n.as_str(), "https://example.com/b/c");
        let n = normalize(u("http://example.com:8080/")).unwrap();
        assert_eq!(n.as_str(), "http://example.com:8080/");
    }

    #[test]
    fn a_domain_with_trailing_dots_is_the_domain_without() {
        for (given, canonical) in [
            ("http://Example.COM./a", "http://example.com/a"),
            ("https://example.com.:8443/", "https://example.com:8443/"),
            ("http://example.com../x?q", "http://example.com/x?q"),
            ("http://127.0.0.1./", "http://127.0.0.1/"),
        ] {
            let n = normalize(u(given)).unwrap();
            assert_eq!(n.as_str(), canonical, "{given}");
            assert_eq!(host_of(n.as_str()), host(&n));
        }
        assert_eq!(root("site.test.:8080/p"), "http://site.test:8080/p");
        let base = u("http://a.test/");
        assert_eq!(
            join(&base, "//B.test./x").unwrap().as_str(),
            "http://b.test/x"
        );
        assert_eq!(normalize(u("http://./")), None, "dots alone name no host");
        assert_eq!(canonical_host("Web.Example."), "web.example");
        assert!(matches!(canonical_host("web.example"), Cow::Borrowed(_)));
        assert_eq!(canonical_host("[::1]"), "[::1]");
    }

    #[test]
    fn normalize_rejects_non_http() {
        for s in [
            "ftp://example.com/",
            "mailto:a@example.com",
            "javascript:void(0)",
            "data:text/plain,hi",
            "file:///tmp/x",
        ] {
            assert_eq!(normalize(u(s)), None, "{s}");
        }
    }

    #[test]
    fn normalize_is_idempotent() {
        let once = normalize(u("http://u:p@EXAMPLE.com/a?#b")).unwrap();
        assert_eq!(normalize(once.clone()), Some(once));
    }

    #[test]
    fn join_relative_and_absolute() {
        let base = u("http://example.com/a/b/page.html");
        assert_eq!(
            join(&base, "../x").unwrap().as_str(),
            "http://example.com/a/x"
        );
        assert_eq!(
            join(&base, "/root").unwrap().as_str(),
            "http://example.com/root"
        );
        assert_eq!(
            join(&base, "//Other.Example/p").unwrap().as_str(),
            "http://other.example/p"
        );
        assert_eq!(
            join(&base, "https://x.example/#f").unwrap().as_str(),
            "https://x.example/"
        );
        assert_eq!(
            join(&base, "?q=1").unwrap().as_str(),
            "http://example.com/a/b/page.html?q=1"
        );
    }

    #[test]
    fn join_trims_ascii_whitespace() {
        let base = u("http://example.com/");
        assert_eq!(
            join(&base, " \t\n/x \r\n").unwrap().as_str(),
            "http://example.com/x"
        );
    }

    #[test]
    fn join_empty_and_fragment_only_give_none() {
        let base = u("http://example.com/page");
        for r in ["", "   ", "#", "#top", "  #top  "] {
            assert_eq!(join(&base, r), None, "{r:?}");
        }
    }

    #[test]
    fn join_non_http_schemes_give_none() {
        let base = u("http://example.com/page");
        for r in [
            "javascript:void(0)",
            "JavaScript:alert(1)",
            "mailto:a@example.com",
            "data:text/html,<p>",
            "tel:+123",
            "ftp://example.com/f",
            "about:blank",
        ] {
            assert_eq!(join(&base, r), None, "{r:?}");
        }
    }

    #[test]
    fn join_unparsable_gives_none() {
        let base = u("http://example.com/page");
        assert_eq!(join(&base, "http://"), None);
        assert_eq!(join(&base, "http://[::1"), None);
        assert_eq!(join(&base, "http://exa mple.com/"), None);
    }

    #[test]
    fn join_percent_encodes_spaces() {
        let base = u("http://example.com/");
        assert_eq!(
            join(&base, "/a b/c d?e f").unwrap().as_str(),
            "http://example.com/a%20b/c%20d?e%20f"
        );
    }

    #[test]
    fn redirect_empty_or_fragment_points_at_base() {
        let base = u("http://example.com/p?q=1");
        assert_eq!(join_redirect(&base, ""), Some(base.clone()));
        assert_eq!(join_redirect(&base, "#x"), Some(base.clone()));
    }

    #[test]
    fn redirect_relative_and_absolute_location() {
        let base = u("http://example.com/a/b");
        assert_eq!(
            join_redirect(&base, " /login ").unwrap().as_str(),
            "http://example.com/login"
        );
        assert_eq!(
            join_redirect(&base, "https://example.com/a/b#x")
                .unwrap()
                .as_str(),
            "https://example.com/a/b"
        );
        assert_eq!(join_redirect(&base, "mailto:x@example.com"), None);
    }

    #[test]
    fn host_is_lowercase_without_port() {
        assert_eq!(host(&u("http://WWW.Example.COM:8080/")), "www.example.com");
        assert_eq!(host(&u("http://[::1]:8080/")), "[::1]");
        assert_eq!(host(&u("http://127.0.0.1/")), "127.0.0.1");
        assert_eq!(host(&u("mailto:x@y")), "");
    }

    proptest::proptest! {
        /// Links as pages write them (paths, queries, fragments, dot
        /// segments, hosts in any case, ports, escapes, junk): joining never
        /// panics; what comes out is normalised for good (normalising again,
        /// or parsing its text, gives the same URL); and the host read back
        /// from the text, as queues and routing do, is the parsed host.
        #[test]
        fn joined_links_are_stable_and_keep_their_host(
            reference in "(https?://)?([A-Za-z0-9.-]{0,12}|\\[::1\\])?(:[0-9]{1,5})?(/[A-Za-z0-9%._~!$&'()*+,;=:@ -]{0,8}){0,4}(\\?[a-z=&%0-9]{0,8})?(#[a-z]{0,4})?",
        ) {
            let base = u("http://Example.COM:8080/dir/page.html?q=1");
            if let Some(joined) = join(&base, &reference) {
                let again = normalize(joined.clone()).unwrap();
                proptest::prop_assert_eq!(&again, &joined);
                let reparsed = normalize(Url::parse(joined.as_str()).unwrap()).unwrap();
                proptest::prop_assert_eq!(&reparsed, &joined);
                proptest::prop_assert_eq!(host_of(joined.as_str()), host(&joined));
                proptest::prop_assert_eq!(
                    origin_of(joined.as_str()),
                    joined.origin().ascii_serialization()
                );
            }
        }
    }
}
