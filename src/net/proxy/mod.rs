//! Proxies a fetch may go out through: HTTP proxies (an absolute-form
//! request for `http`, a `CONNECT` tunnel for `https`) and SOCKS5 (the
//! proxy resolves the name with `socks5h://`, the crawler with
//! `socks5://`), each with optional credentials ([`Proxy`]); the set a
//! crawl uses, by URL scheme, with the hosts that bypass it
//! ([`Proxies`], [`Bypass`]: curl's `no_proxy` rules), and which proxy a
//! host goes through ([`Rotation`]: round-robin by host, so a host keeps
//! its proxy and its connections; a proxy that keeps failing is passed
//! over for a while).
//!
//! Pure but for [`tunnel`], which speaks `CONNECT` and SOCKS5 on a
//! connected stream. Not the fetch itself (`crate::net::fetch`), not the
//! environment variables (the command reads them and says what it found).

use std::fmt;
use std::sync::Arc;

use data_encoding::BASE64;
use thiserror::Error;
use url::{Position, Url};

mod bypass;
mod rotation;
pub(crate) mod socks;
pub(crate) mod tunnel;

pub(crate) use bypass::Bypass;
pub(crate) use rotation::Rotation;

/// The port of a proxy URL that names none, as curl has it.
pub(crate) const DEFAULT_PORT: u16 = 1080;

/// How a proxy is spoken to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum ProxyKind {
    /// `http://`: `CONNECT` for https, an absolute-form request for http.
    Http,
    /// `socks5://` (names resolved by the crawler) or `socks5h://`
    /// (`remote_names`: by the proxy).
    Socks5 { remote_names: bool },
}

/// One proxy, from its URL. `Debug` and `Display` hide the password.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Proxy {
    kind: ProxyKind,
    /// As a URL gives it (`[v6]` in brackets).
    host: String,
    port: u16,
    user: Option<String>,
    password: Option<String>,
    /// `Basic base64(user:password)`, for an HTTP proxy with a user.
    authorization: Option<String>,
}

/// Why a proxy URL cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub(crate) enum ProxyError {
    #[error(
        "{0:?} is not a proxy URL (http://HOST:PORT, socks5://HOST:PORT or socks5h://HOST:PORT)"
    )]
    BadUrl(String),
    #[error("{0}:// proxies are not supported (http, socks5 and socks5h are)")]
    Scheme(String),
    #[error("a proxy URL names no path, query or fragment")]
    Path,
    #[error("SOCKS5 user names and passwords are 1 to 255 bytes each (RFC 1929)")]
    SocksCredentials,
    #[error("a proxy user name or password cannot hold a line break or a NUL")]
    ControlCharacter,
    #[error("{0:?} in no_proxy is no host, address or address/prefix")]
    BadBypass(String),
}

impl Proxy {
    /// The proxy `spec` names: `[SCHEME://][USER[:PASSWORD]@]HOST[:PORT]`,
    /// `http://` when no scheme is given, port [`DEFAULT_PORT`] when none
    /// is (as curl). User and password are percent-decoded.
    pub(crate) fn parse(spec: &str) -> Result<Proxy, ProxyError> {
        let bad = || ProxyError::BadUrl(redact(spec));
        let with_scheme = if spec.contains("://") {
            spec.to_string()
        } else {
            format!("http://{spec}")
        };
        let url = Url::parse(&with_scheme).map_err(|_| bad())?;
        let kind = match url.scheme() {
            "http" => ProxyKind::Http,
            "socks5" => ProxyKind::Socks5 {
                remote_names: false,
            },
            "socks5h" => ProxyKind::Socks5 { remote_names: true },
            other => return Err(ProxyError::Scheme(other.to_string())),
        };
        let host = url.host_str().filter(|h| !h.is_empty()).ok_or_else(bad)?;
        let rest = &url[Position::AfterPort..];
        if !(rest.is_empty() || rest == "/") {
            return Err(ProxyError::Path);
        }
        // `Url` forgets a port equal to the scheme's default (`:80`): the
        // spec's own authority says whether it was given.
        let authority = with_scheme
            .split_once("://")
            .map_or("", |(_, rest)| rest.split('/').next().unwrap_or(""));
        let host_port = authority.rsplit('@').next().unwrap_or("");
        let port = match url.port() {
            Some(port) => port,
            None if host_port.ends_with(":80") => 80,
            None => DEFAULT_PORT,
        };
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8()
                .map(|s| s.into_owned())
                .map_err(|_| bad())
        };
        let user = Some(decode(url.username())?).filter(|u| !u.is_empty());
        let password = url.password().map(decode).transpose()?;
        if [&user, &password]
            .iter()
            .any(|s| s.as_deref().is_some_and(|s| s.contains(['\r', '\n', '\0'])))
        {
            return Err(ProxyError::ControlCharacter);
        }
        if matches!(kind, ProxyKind::Socks5 { .. }) && user.is_some() {
            let fits = |s: &str| (1..=255).contains(&s.len());
            if !user.as_deref().is_some_and(fits) || !fits(password.as_deref().unwrap_or("")) {
                return Err(ProxyError::SocksCredentials);
            }
        }
        let authorization = match (kind, &user) {
            (ProxyKind::Http, Some(user)) => {
                let pair = format!("{user}:{}", password.as_deref().unwrap_or(""));
                Some(format!("Basic {}", BASE64.encode(pair.as_bytes())))
            }
            _ => None,
        };
        Ok(Proxy {
            kind,
            host: host.to_string(),
            port,
            user,
            password,
            authorization,
        })
    }

    pub(crate) fn kind(&self) -> ProxyKind {
        self.kind
    }

    /// The proxy's host as a URL names it (an IPv6 address in brackets).
    pub(crate) fn host(&self) -> &str {
        &self.host
    }

    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// Whether the crawler resolves target names itself (plain
    /// `socks5://`); otherwise the proxy does, and the crawler never asks.
    pub(crate) fn resolves_locally(&self) -> bool {
        self.kind
            == ProxyKind::Socks5 {
                remote_names: false,
            }
    }

    /// What tells this proxy from another: its URL with the user (not
    /// the password), for keeping their connections apart.
    pub(crate) fn identity(&self) -> String {
        match &self.user {
            Some(user) => format!("{self} {user}"),
            None => self.to_string(),
        }
    }

    /// The `Proxy-Authorization` value for an HTTP proxy with a user.
    pub(crate) fn authorization(&self) -> Option<&str> {
        self.authorization.as_deref()
    }

    /// User and password for SOCKS5's user/password method (RFC 1929).
    pub(crate) fn socks_credentials(&self) -> Option<(&str, &str)> {
        let user = self.user.as_deref()?;
        Some((user, self.password.as_deref().unwrap_or("")))
    }
}

impl fmt::Display for Proxy {
    /// The proxy's URL without its user and password (providers put
    /// account names and tokens in the user).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = match self.kind {
            ProxyKind::Http => "http",
            ProxyKind::Socks5 {
                remote_names: false,
            } => "socks5",
            ProxyKind::Socks5 { remote_names: true } => "socks5h",
        };
        write!(f, "{scheme}://{}:{}", self.host, self.port)
    }
}

impl fmt::Debug for Proxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Proxy({self})")
    }
}

/// `spec` with what looks like a password (between the user's `:` and
/// `@`) hidden, for an error message.
fn redact(spec: &str) -> String {
    let after_scheme = spec.find("://").map_or(0, |i| i + 3);
    let (head, tail) = spec.split_at(after_scheme);
    match tail.rfind('@') {
        Some(at) => {
            let userinfo = tail.get(..at).unwrap_or("");
            let host = tail.get(at..).unwrap_or("");
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{head}{user}:***{host}"),
                None => spec.to_string(),
            }
        }
        None => spec.to_string(),
    }
}

/// The proxies of a crawl: those for `http` URLs, those for `https` URLs
/// (the same list when given as `--proxy`; `http_proxy`, `https_proxy` and
/// `all_proxy` may differ) and the hosts that go direct.
#[derive(Debug, Clone, Default)]
pub(crate) struct Proxies {
    http: Vec<Arc<Proxy>>,
    https: Vec<Arc<Proxy>>,
    bypass: Bypass,
}

impl Proxies {
    /// Send URLs of both schemes through `proxy` too (round-robin by host
    /// with the others).
    pub(crate) fn add(&mut self, proxy: Proxy) {
        let proxy = Arc::new(proxy);
        self.http.push(proxy.clone());
        self.https.push(proxy);
    }

    /// Send `http` URLs (`https: false`) or `https` URLs through `proxy`
    /// too.
    pub(crate) fn add_for(&mut self, https: bool, proxy: Proxy) {
        let list = if https {
            &mut self.https
        } else {
            &mut self.http
        };
        list.push(Arc::new(proxy));
    }

    /// Every proxy, once (one given for both schemes is one).
    pub(crate) fn all(&self) -> Vec<Arc<Proxy>> {
        let mut all: Vec<Arc<Proxy>> = Vec::new();
        for p in self.http.iter().chain(&self.https) {
            if !all.iter().any(|q| Arc::ptr_eq(q, p)) {
                all.push(p.clone());
            }
        }
        all
    }

    /// Send the hosts of `bypass` direct.
    pub(crate) fn set_bypass(&mut self, bypass: Bypass) {
        self.bypass = bypass;
    }

    /// The proxies a URL of `scheme` and `host` may go through (empty:
    /// direct).
    pub(crate) fn candidates(&self, scheme: &str, host: &str) -> &[Arc<Proxy>] {
        let list = match scheme {
            "http" => &self.http,
            "https" => &self.https,
            _ => return &[],
        };
        if list.is_empty() || self.bypass.matches(host) {
            return &[];
        }
        list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proxy_url_gives_kind_host_port_and_credentials_like_curl() {
        let p = Proxy::parse("proxy.test").unwrap();
        assert_eq!(
            (p.kind(), p.host(), p.port()),
            (ProxyKind::Http, "proxy.test", DEFAULT_PORT)
        );
        assert_eq!(p.authorization(), None);
        let p = Proxy::parse("http://u%40x:p%3Aw@127.0.0.1:80").unwrap();
        assert_eq!(p.port(), 80);
        // base64("u@x:p:w")
        assert_eq!(p.authorization(), Some("Basic dUB4OnA6dw=="));
        let p = Proxy::parse("socks5h://[::1]:1081").unwrap();
        assert_eq!(p.kind(), ProxyKind::Socks5 { remote_names: true });
        assert_eq!((p.host(), p.port()), ("[::1]", 1081));
        assert!(!p.resolves_locally());
        let p = Proxy::parse("socks5://me:secret@10.0.0.1:9050").unwrap();
        assert!(p.resolves_locally());
        assert_eq!(p.socks_credentials(), Some(("me", "secret")));
        assert_eq!(p.authorization(), None);
    }

    #[test]
    fn proxies_the_crawler_cannot_speak_are_refused_without_their_password() {
        assert_eq!(
            Proxy::parse("https://proxy.test:443"),
            Err(ProxyError::Scheme("https".into()))
        );
        assert_eq!(
            Proxy::parse("socks4://proxy.test"),
            Err(ProxyError::Scheme("socks4".into()))
        );
        assert_eq!(
            Proxy::parse("http://proxy.test/path"),
            Err(ProxyError::Path)
        );
        let e = Proxy::parse("http://me:hunter2@").unwrap_err().to_string();
        assert!(!e.contains("hunter2"), "{e}");
        let long = "x".repeat(256);
        assert_eq!(
            Proxy::parse(&format!("socks5://{long}:p@h:1")),
            Err(ProxyError::SocksCredentials)
        );
    }

    #[test]
    fn a_proxy_shows_and_debugs_without_its_user_and_password() {
        let p = Proxy::parse("http://me:hunter2@proxy.test:3128").unwrap();
        assert_eq!(p.to_string(), "http://proxy.test:3128");
        assert!(!format!("{p:?}").contains("hunter2"));
        assert!(!format!("{p:?}").contains("me"));
    }

    #[test]
    fn urls_go_through_the_proxies_of_their_scheme_unless_bypassed() {
        let mut set = Proxies::default();
        set.add_for(false, Proxy::parse("http://h.test:1").unwrap());
        set.add_for(true, Proxy::parse("http://s.test:2").unwrap());
        set.set_bypass(Bypass::parse("local.test").unwrap());
        assert_eq!(set.candidates("http", "a.test")[0].host(), "h.test");
        assert_eq!(set.candidates("https", "a.test")[0].host(), "s.test");
        assert!(set.candidates("https", "www.local.test").is_empty());
        let mut one = Proxies::default();
        one.add_for(true, Proxy::parse("s.test").unwrap());
        assert!(one.candidates("http", "a.test").is_empty());
        let mut all = Proxies::default();
        all.add(Proxy::parse("p.test").unwrap());
        assert_eq!(all.candidates("http", "a.test").len(), 1);
        assert!(Proxies::default().candidates("http", "a.test").is_empty());
    }
}
