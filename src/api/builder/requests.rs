//! How requests go out: identity and headers, credentials, proxies,
//! cookies, keep-alive and compression, TLS roots, DNS.
//!
//! Settings of [`CrawlerBuilder`], checked at [`CrawlerBuilder::build`].

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ringcrawl_links::urls;

use crate::api::error::Setting;
use crate::net::cookies::Jar;
use crate::net::dns::Families;
use crate::net::proxy::{Bypass, Proxy};
use ringcrawl_http1::Credential;

use super::CrawlerBuilder;

impl CrawlerBuilder {
    /// Sent as `User-Agent` (default
    /// [`defaults::USER_AGENT`](crate::defaults::USER_AGENT)).
    pub fn user_agent(mut self, agent: impl Into<String>) -> Self {
        self.config.user_agent = agent.into();
        self
    }

    /// Add `name: value` to every request (as `-H 'Name: value'`); an
    /// `Accept` replaces the crawler's `*/*`. [`build`](Self::build)
    /// refuses a header the crawler writes itself (`Host`, `Connection`,
    /// `Content-Length`, `Transfer-Encoding`, the other hop-by-hop ones,
    /// `User-Agent`: [`user_agent`](Self::user_agent), `Accept-Encoding`:
    /// [`compression`](Self::compression)), a name that is not a token
    /// and a value with a line break. Every host gets it, redirects
    /// included: credentials for one host go with
    /// [`auth`](Self::auth).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        if let Err(e) = self.config.headers.add(name, value) {
            self.refuse(Setting::Header, e.to_string());
        }
        self
    }

    /// HTTP Basic credentials sent to URLs of `host` only (a name, an IPv4
    /// address or a bracketed IPv6 one), on `port` only if given: never to
    /// another host, a redirect's target included. They are written in
    /// the WARC request records as sent.
    pub fn auth(mut self, host: &str, port: Option<u16>, user: &str, password: &str) -> Self {
        match Credential::basic(host, port, user, password) {
            Ok(c) => self.config.credentials.push(c),
            Err(e) => self.refuse(Setting::Auth, e.to_string()),
        }
        self
    }

    /// Send every URL through the proxy `url` (repeatable: hosts are
    /// spread over the proxies, each host keeping its own while it works;
    /// one that keeps failing is passed over for a while): `http://HOST:PORT`
    /// (an absolute-form request for `http`, a `CONNECT` tunnel for
    /// `https`), `socks5://` (names resolved by the crawler) or
    /// `socks5h://` (by the proxy), with `USER:PASSWORD@` if it wants
    /// them; no scheme is `http://`, no port is 1080 (as curl).
    /// [`build`](Self::build) refuses other schemes. The WARC records the
    /// target's exchange, never the proxy's credentials.
    pub fn proxy(mut self, url: &str) -> Self {
        match Proxy::parse(url) {
            Ok(p) => self.config.proxies.add(p),
            Err(e) => self.refuse(Setting::Proxy, e.to_string()),
        }
        self
    }

    /// Send `http` URLs (or, with `https`, `https` URLs) through the
    /// proxy `url`, as [`proxy`](Self::proxy) does every URL (the
    /// command's `http_proxy` and `https_proxy`).
    pub fn scheme_proxy(mut self, https: bool, url: &str) -> Self {
        match Proxy::parse(url) {
            Ok(p) => self.config.proxies.add_for(https, p),
            Err(e) => self.refuse(Setting::Proxy, e.to_string()),
        }
        self
    }

    /// Hosts that go direct although a proxy is set, by curl's rules for
    /// `no_proxy`: names (each matching the names under it too),
    /// addresses and address/prefix ranges, separated by commas or
    /// spaces; `*` for every host.
    pub fn no_proxy(mut self, list: &str) -> Self {
        match Bypass::parse(list) {
            Ok(b) => self.config.proxies.set_bypass(b),
            Err(e) => self.refuse(Setting::NoProxy, e.to_string()),
        }
        self
    }

    /// Keep cookies (off by default): what servers set is sent back to
    /// them by RFC 6265's rules (domain, path, `Secure`, expiry), never to
    /// another site, a `Domain` that is a public suffix refused; at most 50
    /// a domain, each at most 4 KiB, and as many as fit in
    /// [`cookie_memory`](Self::cookie_memory). One jar for the crawl.
    pub fn cookies(mut self, keep: bool) -> Self {
        self.config.cookies = keep.then(|| self.config.cookies.take().unwrap_or_default());
        self
    }

    /// Keep cookies, starting with those of the Netscape `cookies.txt`
    /// file at `path` (curl's `-b`, wget's `--load-cookies`; those already
    /// expired left out). [`build`](Self::build) refuses a file that cannot
    /// be read or a line that is not a cookie (naming it).
    pub fn load_cookies(mut self, path: impl AsRef<Path>) -> Self {
        let path = path.as_ref();
        let loaded = std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|text| Jar::from_netscape(&text).map_err(|e| e.to_string()));
        match loaded {
            Ok(jar) => self.config.cookies = Some(Arc::new(jar)),
            Err(e) => self.refuse(Setting::Cookies, format!("{}: {e}", path.display())),
        }
        self
    }

    /// Bytes the cookie jar may hold (default
    /// [`defaults::COOKIE_MEMORY`](crate::defaults::COOKIE_MEMORY)): each
    /// cookie is counted as its name, value, domain and path plus some 400
    /// bytes of the jar's own; past it new cookies are refused (counted, and
    /// said when the crawl ends) until expired ones are swept.
    /// [`build`](Self::build) refuses a cookies file that does not fit.
    pub fn cookie_memory(mut self, bytes: usize) -> Self {
        self.config.cookie_memory = bytes;
        self
    }

    /// Keep cookies, and write them to `path` in Netscape `cookies.txt`
    /// form when the crawl ends (session cookies with expiry 0, as curl
    /// writes them).
    pub fn save_cookies(mut self, path: impl Into<PathBuf>) -> Self {
        self = self.cookies(true);
        self.config.save_cookies = Some(path.into());
        self
    }

    /// Reuse connections servers keep open (default true).
    pub fn keep_alive(mut self, on: bool) -> Self {
        self.config.keep_alive = on;
        self
    }

    /// Offer compressed bodies (default true); bodies are decoded by their
    /// `Content-Encoding` either way.
    pub fn compression(mut self, on: bool) -> Self {
        self.config.compression = on;
        self
    }

    /// Trust the CA certificates of this PEM file for https, besides the
    /// compiled-in Mozilla roots.
    pub fn ca_cert_file(mut self, path: impl AsRef<Path>) -> Self {
        self.ca_files.push(path.as_ref().to_path_buf());
        self
    }

    /// Trust this CA certificate (DER) for https.
    pub fn ca_cert_der(mut self, der: impl Into<Vec<u8>>) -> Self {
        self.ca_ders.push(der.into());
        self
    }

    /// Fetch https pages even when their certificate fails verification;
    /// the failure is still each page's error.
    pub fn insecure(mut self, insecure: bool) -> Self {
        self.insecure = insecure;
        self
    }

    /// Connect to these addresses for `host:port` instead of asking DNS
    /// (as curl's `--resolve`; several are raced as Happy Eyeballs does).
    /// `host` is taken as URLs name it: any case, trailing dots or not;
    /// `*` pins every name on `port` that has no pin of its own.
    pub fn resolve(
        mut self,
        host: &str,
        port: u16,
        addrs: impl IntoIterator<Item = IpAddr>,
    ) -> Self {
        self.config.resolve.insert(
            (urls::canonical_host(host).into_owned(), port),
            addrs.into_iter().collect(),
        );
        self
    }

    /// Ask this DNS server (UDP, then TCP) instead of those of
    /// `/etc/resolv.conf`; several are tried in order.
    pub fn dns_server(mut self, server: SocketAddr) -> Self {
        self.config.dns_servers.push(server);
        self
    }

    /// Which IP versions to resolve and connect over (default both, IPv6
    /// first).
    pub fn ip_families(mut self, families: Families) -> Self {
        self.config.families = families;
        self
    }
}
