//! A request's bytes: the crawler's own headers, the ones the user adds to
//! every request ([`Headers`], `-H`), and Basic credentials for one origin
//! ([`Credential`], `--auth`), sent only to a URL of that host (and port,
//! if named): a redirect to another host never carries them; and for a
//! recrawl the [`Validators`] of the earlier capture, so an unchanged page
//! answers `304 Not Modified` instead of its body.
//!
//! The crawler owns the headers that frame the exchange or that other
//! settings say (`Host`, `Connection`, `Content-Length`,
//! `Transfer-Encoding` and the other hop-by-hop ones, `User-Agent`, which
//! robots.txt is matched against, and `Accept-Encoding`, which
//! `--no-compression` says): [`Headers::add`] refuses them. An `Accept`
//! given replaces the crawler's `Accept: */*`.
//!
//! Pure: no I/O. Not the response (`head.rs`, `body.rs`).

use std::borrow::Cow;
use std::fmt;

use data_encoding::BASE64;
use thiserror::Error;

use super::ACCEPT_COMPRESSED;

/// Headers the crawler writes itself (lower case), and the setting that
/// says each, if any.
const OWNED: &[(&str, &str)] = &[
    ("host", "the URL's"),
    ("connection", "--no-keep-alive"),
    ("keep-alive", "--no-keep-alive"),
    ("content-length", "a GET has no body"),
    ("transfer-encoding", "a GET has no body"),
    ("te", "not asked for"),
    ("trailer", "not asked for"),
    ("upgrade", "HTTP/1.1 only"),
    ("user-agent", "--user-agent"),
    ("accept-encoding", "--no-compression"),
    ("proxy-authorization", "the --proxy URL's user and password"),
];

/// One GET request, as [`Request::to_bytes`] writes it.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// Path and query (`/a/b?c=d`); empty is `/`.
    pub target: &'a str,
    /// The `Host` header: host and, if not the scheme's default, port.
    pub host: &'a str,
    /// The `User-Agent` header (the name robots.txt rules are matched
    /// against).
    pub user_agent: &'a str,
    /// Ask for keep-alive (else `Connection: close`).
    pub keep_alive: bool,
    /// Offer [`ACCEPT_COMPRESSED`] (else `identity`).
    pub compressed: bool,
    /// The user's headers, after the crawler's.
    pub headers: &'a Headers,
    /// An `Authorization` value for this URL's origin.
    pub authorization: Option<&'a str>,
    /// A `Proxy-Authorization` value, for a request to a forward proxy
    /// (whose `target` is then the absolute URL).
    pub proxy_authorization: Option<&'a str>,
    /// The jar's `Cookie` value for this URL.
    pub cookie: Option<&'a str>,
    /// An earlier capture's validators: the page only if it changed.
    pub validators: Option<&'a Validators>,
}

/// What an earlier answer said to tell its version by (RFC 9110 §8.8):
/// sent back as `If-None-Match` and `If-Modified-Since` (RFC 9110 §13.1),
/// each exactly as the server sent it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Validators {
    /// The `ETag` (quotes and `W/` kept).
    pub etag: Option<Box<str>>,
    /// The `Last-Modified` date.
    pub last_modified: Option<Box<str>>,
}

impl Request<'_> {
    /// `GET {target} HTTP/1.1` with Host, User-Agent, Accept (`*/*`, or
    /// the user's), Accept-Encoding, Connection, the user's headers,
    /// Authorization, Cookie, the validators (`If-None-Match`,
    /// `If-Modified-Since`), Proxy-Authorization, and the blank line.
    ///
    /// CR, LF and NUL are removed from the target, host and user agent so
    /// that a hostile URL or configuration value cannot inject headers;
    /// the user's headers were checked when added.
    pub fn to_bytes(self) -> Vec<u8> {
        let target = clean(self.target);
        let target: &str = if target.is_empty() { "/" } else { &target };
        let mut out = format!(
            "GET {target} HTTP/1.1\r\n\
             Host: {}\r\n\
             User-Agent: {}\r\n",
            clean(self.host),
            clean(self.user_agent),
        );
        if !self.headers.accept {
            out.push_str("Accept: */*\r\n");
        }
        out.push_str("Accept-Encoding: ");
        out.push_str(if self.compressed {
            ACCEPT_COMPRESSED
        } else {
            "identity"
        });
        out.push_str("\r\nConnection: ");
        out.push_str(if self.keep_alive {
            "keep-alive"
        } else {
            "close"
        });
        out.push_str("\r\n");
        out.push_str(&self.headers.lines);
        if let Some(authorization) = self.authorization {
            out.push_str("Authorization: ");
            out.push_str(&clean(authorization));
            out.push_str("\r\n");
        }
        if let Some(cookie) = self.cookie {
            out.push_str("Cookie: ");
            out.push_str(&clean(cookie));
            out.push_str("\r\n");
        }
        if let Some(v) = self.validators {
            if let Some(etag) = &v.etag {
                out.push_str("If-None-Match: ");
                out.push_str(&clean(etag));
                out.push_str("\r\n");
            }
            if let Some(date) = &v.last_modified {
                out.push_str("If-Modified-Since: ");
                out.push_str(&clean(date));
                out.push_str("\r\n");
            }
        }
        if let Some(authorization) = self.proxy_authorization {
            out.push_str("Proxy-Authorization: ");
            out.push_str(&clean(authorization));
            out.push_str("\r\n");
        }
        out.push_str("\r\n");
        out.into_bytes()
    }
}

/// `s` without CR, LF and NUL (borrowed when it has none).
fn clean(s: &str) -> Cow<'_, str> {
    let bad = |c: char| matches!(c, '\r' | '\n' | '\0');
    if s.contains(bad) {
        Cow::Owned(s.chars().filter(|&c| !bad(c)).collect())
    } else {
        Cow::Borrowed(s)
    }
}

/// Headers the user adds to every request, checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Headers {
    /// `Name: value\r\n` for each, in the order given.
    lines: String,
    /// One of them is `Accept`.
    accept: bool,
}

/// Why a header cannot be added.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum HeaderError {
    /// The name is empty or holds a byte that is not a `tchar`.
    #[error("{0:?} is not a header name (letters, digits and !#$%&'*+-.^_`|~)")]
    BadName(String),
    /// The value (of the header named) holds a line break or a NUL.
    #[error("the value of {0} holds a line break or a NUL")]
    BadValue(String),
    /// The header frames the exchange or another setting says it.
    #[error("{name} is the crawler's own header ({says})")]
    Owned {
        /// The header, as given.
        name: String,
        /// What sets it instead.
        says: &'static str,
    },
}

impl Headers {
    /// Add `name: value` (the value's surrounding blanks dropped).
    pub fn add(&mut self, name: &str, value: &str) -> Result<(), HeaderError> {
        if name.is_empty() || !name.bytes().all(is_tchar) {
            return Err(HeaderError::BadName(name.to_string()));
        }
        let lower = name.to_ascii_lowercase();
        if let Some((_, says)) = OWNED.iter().find(|(owned, _)| *owned == lower) {
            return Err(HeaderError::Owned {
                name: name.to_string(),
                says,
            });
        }
        let value = value.trim_matches([' ', '\t']);
        if value.contains(['\r', '\n', '\0']) {
            return Err(HeaderError::BadValue(name.to_string()));
        }
        self.accept |= lower == "accept";
        self.lines.push_str(name);
        self.lines.push_str(": ");
        self.lines.push_str(value);
        self.lines.push_str("\r\n");
        Ok(())
    }

    /// Whether one of them is named `name` (any case).
    pub fn has(&self, name: &str) -> bool {
        self.lines.split("\r\n").any(|line| {
            line.split_once(':')
                .is_some_and(|(n, _)| n.eq_ignore_ascii_case(name))
        })
    }

    /// No header added.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }
}

/// RFC 9110 §5.6.2 `tchar`: what a header name is made of.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// HTTP Basic credentials (RFC 7617) for one host, and one port of it if
/// named. Its `Debug` hides the secret.
#[derive(Clone, PartialEq, Eq)]
pub struct Credential {
    /// The host as a URL names it (lower case, IDNA, `[v6]`).
    host: String,
    port: Option<u16>,
    user: String,
    /// `Basic base64(user:password)`.
    authorization: String,
}

/// Why credentials cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum CredentialError {
    /// Not a host name, an IPv4 address or a bracketed IPv6 one.
    #[error("{0:?} is not a host name or address")]
    BadHost(String),
    /// The user name holds a `:`.
    #[error("a user name cannot hold ':' (RFC 7617)")]
    ColonInUser,
    /// The user name or password holds a line break or a NUL.
    #[error("a user name or password cannot hold a line break or a NUL")]
    ControlCharacter,
}

impl Credential {
    /// Basic credentials for `host` (a name, an IPv4 address or a
    /// bracketed IPv6 one) on `port` (any port if None).
    pub fn basic(
        host: &str,
        port: Option<u16>,
        user: &str,
        password: &str,
    ) -> Result<Credential, CredentialError> {
        let bad_host = || CredentialError::BadHost(host.to_string());
        if host.is_empty() {
            return Err(bad_host());
        }
        let host = url::Host::parse(host).map_err(|_| bad_host())?.to_string();
        if user.contains(':') {
            return Err(CredentialError::ColonInUser);
        }
        if [user, password]
            .iter()
            .any(|s| s.contains(['\r', '\n', '\0']))
        {
            return Err(CredentialError::ControlCharacter);
        }
        let secret = BASE64.encode(format!("{user}:{password}").as_bytes());
        Ok(Credential {
            host,
            port,
            user: user.to_string(),
            authorization: format!("Basic {secret}"),
        })
    }

    /// Whether a URL of `host` (as [`url::Url::host_str`] gives it) and
    /// `port` gets these credentials.
    pub fn applies_to(&self, host: &str, port: u16) -> bool {
        self.host == host && self.port.is_none_or(|p| p == port)
    }

    /// The `Authorization` header's value.
    pub fn authorization(&self) -> &str {
        &self.authorization
    }
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credential")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("user", &self.user)
            .field("password", &"***")
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `line` (`Name: value`) added to `headers`.
    fn add_line(headers: &mut Headers, line: &str) -> Result<(), HeaderError> {
        let (name, value) = line.split_once(':').unwrap();
        headers.add(name, value)
    }

    fn get<'a>(headers: &'a Headers, authorization: Option<&'a str>) -> String {
        String::from_utf8(
            Request {
                target: "/a/b?c=d",
                host: "example.com:8080",
                user_agent: "ringcrawl/0.1",
                keep_alive: false,
                compressed: false,
                headers,
                authorization,
                proxy_authorization: None,
                cookie: None,
                validators: None,
            }
            .to_bytes(),
        )
        .unwrap()
    }

    #[test]
    fn a_recrawl_asks_with_the_earlier_validators_as_sent_and_cleaned() {
        let headers = Headers::default();
        let validators = Validators {
            etag: Some("W/\"5f-1a\"".into()),
            last_modified: Some("Tue, 03 Nov 2026 10:00:00 GMT\r\nX-Evil: 1".into()),
        };
        let request = Request {
            target: "/",
            host: "a.test",
            user_agent: "ringcrawl/0.1",
            keep_alive: true,
            compressed: false,
            headers: &headers,
            authorization: None,
            proxy_authorization: None,
            cookie: None,
            validators: Some(&validators),
        };
        let text = String::from_utf8(request.to_bytes()).unwrap();
        assert!(text.ends_with(
            "If-None-Match: W/\"5f-1a\"\r\n\
             If-Modified-Since: Tue, 03 Nov 2026 10:00:00 GMTX-Evil: 1\r\n\r\n"
        ));
        let only_date = Validators {
            etag: None,
            ..validators.clone()
        };
        let text = String::from_utf8(
            Request {
                validators: Some(&only_date),
                ..request
            }
            .to_bytes(),
        )
        .unwrap();
        assert!(!text.contains("If-None-Match"));
    }

    #[test]
    fn request_bytes_are_exact() {
        assert_eq!(
            get(&Headers::default(), None),
            "GET /a/b?c=d HTTP/1.1\r\n\
             Host: example.com:8080\r\n\
             User-Agent: ringcrawl/0.1\r\n\
             Accept: */*\r\n\
             Accept-Encoding: identity\r\n\
             Connection: close\r\n\
             \r\n"
        );
    }

    #[test]
    fn the_users_headers_follow_the_crawlers_and_an_accept_replaces_its_own() {
        let mut headers = Headers::default();
        add_line(&mut headers, "X-Team:  crawl ").unwrap();
        add_line(&mut headers, "accept:text/html").unwrap();
        headers.add("Authorization", "Bearer t").unwrap();
        let cred = Credential::basic("Example.COM", Some(8080), "ann", "pa:ss").unwrap();
        assert_eq!(
            get(&headers, Some(cred.authorization())),
            "GET /a/b?c=d HTTP/1.1\r\n\
             Host: example.com:8080\r\n\
             User-Agent: ringcrawl/0.1\r\n\
             Accept-Encoding: identity\r\n\
             Connection: close\r\n\
             X-Team: crawl\r\n\
             accept: text/html\r\n\
             Authorization: Bearer t\r\n\
             Authorization: Basic YW5uOnBhOnNz\r\n\
             \r\n"
        );
        assert!(headers.has("ACCEPT") && headers.has("x-team"));
        assert!(!headers.has("cookie") && !headers.has("X-Te"));
    }

    #[test]
    fn headers_the_crawler_owns_or_that_could_inject_are_refused() {
        let mut headers = Headers::default();
        for line in [
            "Host: a",
            "connection: close",
            "Content-Length: 3",
            "Transfer-Encoding: chunked",
            "User-Agent: x",
            "Accept-Encoding: gzip",
        ] {
            assert!(
                matches!(add_line(&mut headers, line), Err(HeaderError::Owned { .. })),
                "{line}"
            );
        }
        assert!(matches!(
            add_line(&mut headers, "Bad Name: x"),
            Err(HeaderError::BadName(_))
        ));
        assert!(matches!(
            add_line(&mut headers, ": x"),
            Err(HeaderError::BadName(_))
        ));
        assert!(matches!(
            headers.add("X-A", "a\r\nHost: evil"),
            Err(HeaderError::BadValue(_))
        ));
        assert!(headers.is_empty());
    }

    #[test]
    fn credentials_apply_to_their_host_and_port_only_and_hide_their_secret() {
        let any_port = Credential::basic("Example.com", None, "ann", "secret").unwrap();
        assert!(any_port.applies_to("example.com", 80));
        assert!(any_port.applies_to("example.com", 8443));
        assert!(!any_port.applies_to("www.example.com", 80));
        assert!(!any_port.applies_to("example.com.evil.test", 80));
        let one_port = Credential::basic("[::1]", Some(8080), "ann", "secret").unwrap();
        assert!(one_port.applies_to("[::1]", 8080));
        assert!(!one_port.applies_to("[::1]", 8081));
        let idn = Credential::basic("bücher.example", None, "u", "p").unwrap();
        assert!(idn.applies_to("xn--bcher-kva.example", 443));
        assert!(!format!("{any_port:?}").contains("secret"));
        assert!(!format!("{any_port:?}").contains(&BASE64.encode(b"ann:secret")));
        assert_eq!(
            Credential::basic("a.test", None, "a:b", "c"),
            Err(CredentialError::ColonInUser)
        );
        assert!(Credential::basic("", None, "a", "c").is_err());
        assert!(Credential::basic("a b", None, "a", "c").is_err());
        assert!(Credential::basic("a.test", None, "a", "c\r\n").is_err());
    }
}
