//! [`ErrorKind`]: why a URL's record has no whole answer, one stable word
//! each (`dns`, `tls_certificate`, `robots_disallowed`, ...): the record's
//! `error_kind`, the report's error counts, `Page::error_kind`. Every
//! layer that fails a URL names its kind here, so the engine, the report,
//! the state directory and a library user compare kinds, never strings.
//!
//! Not the message (the record's one-line `error`) nor the errors
//! themselves (`net::fetch::FetchError`, `net::tls::TlsError`, ...), which
//! each say their kind.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Declares [`ErrorKind`] with each kind's word, once: its `Display`, its
/// JSON and the names read back from a log all come from this table.
macro_rules! kinds {
    ($($(#[$doc:meta])* $variant:ident => $name:literal,)*) => {
        /// Why a URL's record has no whole answer: a stable word each, as
        /// the JSONL record's `error_kind` (its `Display` and its JSON are
        /// that word). More kinds may come in later versions.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ErrorKind {
            $($(#[$doc])* $variant,)*
        }

        impl ErrorKind {
            /// Every kind.
            pub const ALL: &[ErrorKind] = &[$(ErrorKind::$variant,)*];

            /// The kind's word (`connect_refused`).
            pub fn name(self) -> &'static str {
                match self {
                    $(ErrorKind::$variant => $name,)*
                }
            }

            /// The kind named `name`, if it is one.
            pub fn from_name(name: &str) -> Option<ErrorKind> {
                match name {
                    $($name => Some(ErrorKind::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

kinds! {
    // Before any answer: the name, the connection, TLS.
    /// The name did not resolve (no address, NXDOMAIN, no nameserver answered).
    Dns => "dns",
    /// A scheme other than http and https.
    UnsupportedScheme => "unsupported_scheme",
    /// The name resolved only to link-local or metadata addresses
    /// (169.254.0.0/16, fe80::/10, fd00:ec2::254, ...) and no root names
    /// the host or the address: not connected to.
    ReservedAddress => "reserved_address",
    /// The server refused the connection.
    ConnectRefused => "connect_refused",
    /// The connection failed otherwise (unreachable, no route).
    Connect => "connect",
    /// The connection took longer than `connect_timeout`.
    ConnectTimeout => "connect_timeout",
    /// The TLS handshake took longer than `connect_timeout`.
    TlsTimeout => "tls_timeout",
    /// The server's certificate was not trusted.
    TlsCertificate => "tls_certificate",
    /// No TLS version both sides speak.
    TlsVersion => "tls_version",
    /// The handshake failed otherwise.
    TlsHandshake => "tls_handshake",
    /// The TLS connection ended abnormally.
    TlsClosed => "tls_closed",
    // Through a proxy.
    /// The proxy could not be reached, or broke off or spoke no protocol
    /// before the target's exchange began.
    ProxyConnect => "proxy_connect",
    /// The proxy wants credentials, or refused those given.
    ProxyAuth => "proxy_auth",
    /// The proxy could not (or would not) reach the target.
    ProxyRefused => "proxy_refused",
    // The exchange.
    /// No byte for `read_timeout`.
    ReadTimeout => "read_timeout",
    /// The fetch took longer than `timeout`.
    Deadline => "deadline",
    /// The server reset the connection.
    Reset => "reset",
    /// Another I/O error.
    Io => "io",
    /// The connection closed before any byte of an answer.
    EmptyResponse => "empty_response",
    /// A reused keep-alive connection the server had closed.
    StaleConnection => "stale_connection",
    /// The connection closed inside the response head.
    HeadCut => "head_cut",
    /// A response head over the crawler's bound.
    HeadTooLarge => "head_too_large",
    /// Two different `Content-Length`s.
    ConflictingLength => "conflicting_length",
    /// A `Content-Length` that is no number.
    BadLength => "bad_length",
    /// A response head that does not parse.
    BadHead => "bad_head",
    /// The body ended before its length (or a TLS stream without its close).
    Truncated => "truncated",
    /// A chunk of a chunked body that does not parse.
    BadChunk => "bad_chunk",
    // The content codings.
    /// More stacked content codings than the crawler undoes.
    TooManyContentEncodings => "too_many_content_encodings",
    /// A content coding the crawler cannot undo.
    UnsupportedContentEncoding => "unsupported_content_encoding",
    /// A zstd or brotli stream asking for a larger window than allowed.
    ContentEncodingWindowTooLarge => "content_encoding_window_too_large",
    /// A compressed body that does not decode.
    BadContentEncoding => "bad_content_encoding",
    /// A compressed body that ends before its stream does: a warning on a
    /// page cut in transfer (what decoded is used), not an error.
    TruncatedContentEncoding => "truncated_content_encoding",
    // Kept out without a fetch.
    /// A link that is no URL the crawler can fetch.
    BadUrl => "bad_url",
    /// A line of a seed list that is no URL or host.
    BadRoot => "bad_root",
    /// robots.txt disallows it.
    RobotsDisallowed => "robots_disallowed",
    /// robots.txt could not be had (5xx, time-out): nothing is fetched.
    RobotsUnavailable => "robots_unavailable",
    /// Longer than `max_url_length`.
    UrlTooLong => "url_too_long",
    /// More links from a root than `max_depth`.
    TooDeep => "too_deep",
    /// Its host was at `max_pages_per_host`.
    HostBudget => "host_budget",
    /// A sitemap of a host at its cap of sitemaps.
    SitemapBudget => "sitemap_budget",
    // Sitemaps.
    /// A sitemap that does not parse (what parsed before is kept).
    SitemapInvalid => "sitemap_invalid",
    /// A sitemap over its bounds (URLs or bytes): cut.
    SitemapTooLarge => "sitemap_too_large",
    /// A sitemap index too many levels down: its sitemaps not followed.
    SitemapTooDeep => "sitemap_too_deep",
    // Redirects.
    /// A 3xx answer without a `Location`.
    RedirectNoLocation => "redirect_no_location",
    /// A 3xx answer whose `Location` is no URL the crawler can fetch.
    RedirectBadLocation => "redirect_bad_location",
    /// More redirects in a row than `max_redirect`.
    RedirectLimit => "redirect_limit",
    // The crawl.
    /// A fetch an interrupt cut short; a resume fetches it again.
    Interrupted => "interrupted",
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// By name, so counts by kind list in the same order in every output.
impl Ord for ErrorKind {
    fn cmp(&self, other: &ErrorKind) -> std::cmp::Ordering {
        self.name().cmp(other.name())
    }
}

impl PartialOrd for ErrorKind {
    fn partial_cmp(&self, other: &ErrorKind) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Serialize for ErrorKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for ErrorKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ErrorKind, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        ErrorKind::from_name(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown error_kind {name:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_reads_back_from_its_name_and_names_are_distinct() {
        let mut names = std::collections::HashSet::new();
        for &kind in ErrorKind::ALL {
            assert_eq!(ErrorKind::from_name(kind.name()), Some(kind));
            assert!(names.insert(kind.name()), "{kind} twice");
            assert!(kind
                .name()
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b == b'_'));
        }
        assert_eq!(ErrorKind::from_name("no_such_kind"), None);
    }

    #[test]
    fn its_json_is_the_word() {
        let json = serde_json::to_string(&ErrorKind::TlsCertificate).unwrap();
        assert_eq!(json, r#""tls_certificate""#);
        let back: ErrorKind = serde_json::from_str(&json).unwrap();
        assert_eq!(back, ErrorKind::TlsCertificate);
        assert!(serde_json::from_str::<ErrorKind>(r#""nope""#).is_err());
    }
}
