//! The proxy environment variables, read as curl reads them
//! ([`ProxyEnv`]): `http_proxy` in lower case only (a CGI program's
//! `HTTP_PROXY` can come from a request's `Proxy:` header), `https_proxy`,
//! `all_proxy` and `no_proxy` in either case, lower case first; an empty
//! value is unset. `all_proxy` serves the scheme that has no proxy of its
//! own.
//!
//! Pure: given a way to read a variable.

/// The proxies the environment names.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ProxyEnv {
    pub http: Option<String>,
    pub https: Option<String>,
    pub all: Option<String>,
    pub no_proxy: Option<String>,
}

impl ProxyEnv {
    /// The variables as `get` gives them.
    pub fn read(get: impl Fn(&str) -> Option<String>) -> ProxyEnv {
        let first = |names: &[&str]| {
            names
                .iter()
                .find_map(|name| get(name).filter(|v| !v.trim().is_empty()))
        };
        ProxyEnv {
            http: first(&["http_proxy"]),
            https: first(&["https_proxy", "HTTPS_PROXY"]),
            all: first(&["all_proxy", "ALL_PROXY"]),
            no_proxy: first(&["no_proxy", "NO_PROXY"]),
        }
    }

    /// The proxy of each scheme that has one (`true`: https).
    pub fn by_scheme(&self) -> impl Iterator<Item = (bool, &str)> {
        let http = self.http.as_ref().or(self.all.as_ref());
        let https = self.https.as_ref().or(self.all.as_ref());
        [(false, http), (true, https)]
            .into_iter()
            .filter_map(|(https, url)| Some((https, url?.as_str())))
    }
}

/// `url` with the password of its user part (between `:` and `@`) hidden.
pub fn redact_userinfo(url: &str) -> String {
    let start = url.find("://").map_or(0, |i| i + 3);
    let (head, rest) = url.split_at(start);
    match rest.rfind('@').map(|at| rest.split_at(at)) {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{head}{user}:***{host}"),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> ProxyEnv {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ProxyEnv::read(|name| map.get(name).cloned())
    }

    #[test]
    fn http_proxy_is_read_in_lower_case_only_as_curl_does() {
        let e = env(&[("HTTP_PROXY", "http://evil.test:1")]);
        assert_eq!(e.by_scheme().count(), 0);
        let e = env(&[
            ("http_proxy", "p.test:3128"),
            ("HTTPS_PROXY", "s.test:3128"),
        ]);
        let got: Vec<_> = e.by_scheme().collect();
        assert_eq!(got, [(false, "p.test:3128"), (true, "s.test:3128")]);
    }

    #[test]
    fn all_proxy_serves_the_scheme_without_its_own_and_empty_is_unset() {
        let e = env(&[
            ("https_proxy", "s.test"),
            ("ALL_PROXY", "socks5h://a.test"),
            ("http_proxy", " "),
        ]);
        let got: Vec<_> = e.by_scheme().collect();
        assert_eq!(got, [(false, "socks5h://a.test"), (true, "s.test")]);
        let e = env(&[("no_proxy", "localhost"), ("NO_PROXY", "other")]);
        assert_eq!(e.no_proxy.as_deref(), Some("localhost"));
    }

    #[test]
    fn a_proxy_url_is_logged_without_its_password() {
        assert_eq!(
            redact_userinfo("http://me:pw@p.test:3128"),
            "http://me:***@p.test:3128"
        );
        assert_eq!(redact_userinfo("me:pw@p.test"), "me:***@p.test");
        assert_eq!(redact_userinfo("http://p.test"), "http://p.test");
    }
}
