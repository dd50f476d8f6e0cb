//! Which URLs a crawl may fetch: the chapter's strict/lenient host rule plus
//! the `--exclude` regex.
//!
//! A [`Scope`] is built once from the crawl roots and then asked about every
//! link found, so the question is answered with one or two hash-set lookups
//! (and, in lenient mode, one public-suffix lookup) and no allocation for
//! lower-case hosts as the `url` crate gives them.
//!
//! * [`ScopeMode::Strict`]: the host is a root's host, or that host with a
//!   leading `www.` added or removed (`example.com` allows `www.example.com`
//!   and the other way round, but not `sub.example.com`).
//! * [`ScopeMode::Lenient`]: the host has the same registrable domain as a
//!   root (public-suffix aware, so `a.example.co.uk` and `b.example.co.uk`
//!   match but `example.co.uk` and `other.co.uk` do not). Hosts without a
//!   registrable domain (`localhost`, a bare public suffix) fall back to the
//!   strict rule.
//! * IP addresses (v4 and v6) only ever match exactly, in both modes.
//! * The hosts of seed lists count as roots' hosts, by the same rules
//!   (kept compactly: `crate::crawl::seeds`).
//! * Ports are ignored, as in the chapter's crawler.
//!
//! What it is not: no robots.txt, no per-host politeness or limits, no URL
//! normalisation (see `crate::crawl::urls`), and no I/O or DNS: `example.com` and
//! an IP it resolves to are different hosts here.
// Network data flows through here: a panic would take down a whole shard.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::unreachable
)]

use std::collections::HashSet;
use std::sync::Arc;

use regex::Regex;
use url::Url;

use crate::crawl::seeds::SeedHosts;
use crate::crawl::urls;

/// How far from the roots' hosts a crawl may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopeMode {
    /// Only the roots' hosts, with or without a leading `www.`.
    Strict,
    /// Any host under the same registrable domain as a root
    /// (`blog.example.co.uk` for a root on `example.co.uk`).
    Lenient,
}

/// The set of URLs a crawl may fetch, precomputed from its roots.
#[derive(Debug, Clone)]
pub struct Scope {
    mode: ScopeMode,
    /// Hosts allowed by the strict rule: the roots' hosts and their `www.`
    /// twins (IP addresses alone).
    hosts: HashSet<String>,
    /// Registrable domains of the roots' hosts (lenient mode only).
    domains: HashSet<String>,
    /// The hosts of the seed lists, by the same rule (compact: a list may
    /// name millions; shared by every shard's copy of the scope).
    seeds: Option<Arc<SeedHosts>>,
    exclude: Option<Regex>,
}

impl Scope {
    /// The scope of a crawl started from `roots`.
    ///
    /// `exclude`, when given, takes out every URL whose text it matches
    /// anywhere (search, not full match, as Python's `re.search` in the
    /// chapter). Roots without a host are skipped; with no usable root
    /// nothing is allowed.
    pub fn new(roots: &[Url], mode: ScopeMode, exclude: Option<Regex>) -> Self {
        let mut hosts = HashSet::new();
        let mut domains = HashSet::new();
        for root in roots {
            let host = urls::canonical_host(urls::host(root));
            if host.is_empty() {
                continue;
            }
            if is_ip_like(&host) {
                hosts.insert(host.into_owned());
                continue;
            }
            if mode == ScopeMode::Lenient {
                if let Some(domain) = psl::domain_str(&host) {
                    domains.insert(domain.to_owned());
                }
            }
            match host.strip_prefix("www.") {
                Some(bare) if !bare.is_empty() => {
                    hosts.insert(bare.to_owned());
                }
                Some(_) => {}
                None => {
                    hosts.insert(format!("www.{host}"));
                }
            }
            hosts.insert(host.into_owned());
        }
        Scope {
            mode,
            hosts,
            domains,
            seeds: None,
            exclude,
        }
    }

    /// Widen this scope by the hosts of the seed lists.
    pub fn add_seeds(&mut self, seeds: SeedHosts) {
        self.seeds = Some(Arc::new(seeds));
    }

    /// The seed lists' hosts, if any.
    pub fn seeds(&self) -> Option<&SeedHosts> {
        self.seeds.as_deref()
    }

    /// Strict or lenient.
    pub fn mode(&self) -> ScopeMode {
        self.mode
    }

    /// The `--exclude` regex, as given.
    pub fn exclude(&self) -> Option<&str> {
        self.exclude.as_ref().map(Regex::as_str)
    }

    /// Whether the crawl may fetch `url`: its host is in scope (see
    /// [`Scope::allows_host`]; the port does not matter) and, if an exclude
    /// regex is set, the regex matches nowhere in the URL's text. URLs
    /// without a host are never allowed.
    pub fn allows(&self, url: &Url) -> bool {
        let host = urls::host(url);
        if host.is_empty() || !self.allows_host(host) {
            return false;
        }
        match &self.exclude {
            Some(re) => !re.is_match(url.as_str()),
            None => true,
        }
    }

    /// Whether the crawl may fetch `url` as a page requisite: from any host
    /// (Heritrix's transclusion: a page's images may live on a CDN), but
    /// not if the exclude regex matches it.
    pub fn allows_embed(&self, url: &Url) -> bool {
        !urls::host(url).is_empty()
            && self
                .exclude
                .as_ref()
                .is_none_or(|re| !re.is_match(url.as_str()))
    }

    /// Whether `host` (a bare host as [`urls::host`] gives it: no port, IPv6
    /// in brackets) is in scope by the strict or lenient rule of this
    /// scope's mode. The exclude regex is not consulted. ASCII case and
    /// trailing dots are ignored ([`urls::canonical_host`]).
    pub fn allows_host(&self, host: &str) -> bool {
        let host = urls::canonical_host(host);
        if host.is_empty() {
            return false;
        }
        if self.hosts.contains(host.as_ref()) {
            return true;
        }
        if self.seeds.as_ref().is_some_and(|s| s.contains(&host)) {
            return true;
        }
        self.mode == ScopeMode::Lenient
            && !is_ip_like(&host)
            && psl::domain_str(&host).is_some_and(|d| self.domains.contains(d))
    }
}

/// IPv6 (`[::1]`, or unbracketed with colons) or IPv4-like: the last label is
/// all digits, which the URL standard only accepts for IPv4 addresses. Such
/// hosts have no registrable domain and only match exactly.
pub(crate) fn is_ip_like(host: &str) -> bool {
    if host.starts_with('[') || host.contains(':') {
        return true;
    }
    let last = host.rsplit('.').next().unwrap_or(host);
    !last.is_empty() && last.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
#[allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn scope(roots: &[&str], mode: ScopeMode) -> Scope {
        let roots: Vec<Url> = roots.iter().map(|r| u(r)).collect();
        Scope::new(&roots, mode, None)
    }

    fn check_table(scope: &Scope, table: &[(&str, bool)]) {
        for &(host, want) in table {
            assert_eq!(scope.allows_host(host), want, "host {host:?}");
            let url = u(&format!("http://{host}/some/path"));
            assert_eq!(scope.allows(&url), want, "url for {host:?}");
        }
    }

    #[test]
    fn strict_allows_root_and_www_twin_only() {
        let s = scope(&["http://example.com/"], ScopeMode::Strict);
        check_table(
            &s,
            &[
                ("example.com", true),
                ("www.example.com", true),
                ("sub.example.com", false),
                ("www.www.example.com", false),
                ("wwwexample.com", false),
                ("example.org", false),
                ("notexample.com", false),
                ("com", false),
            ],
        );
    }

    #[test]
    fn strict_www_root_allows_bare_host() {
        let s = scope(&["https://www.example.com/start"], ScopeMode::Strict);
        check_table(
            &s,
            &[
                ("www.example.com", true),
                ("example.com", true),
                ("blog.example.com", false),
                ("www.www.example.com", false),
            ],
        );
    }

    #[test]
    fn strict_subdomain_root_does_not_allow_parent() {
        let s = scope(&["http://a.example.co.uk/"], ScopeMode::Strict);
        check_table(
            &s,
            &[
                ("a.example.co.uk", true),
                ("www.a.example.co.uk", true),
                ("example.co.uk", false),
                ("b.example.co.uk", false),
            ],
        );
    }

    #[test]
    fn lenient_same_registrable_domain_under_co_uk() {
        let s = scope(&["http://a.example.co.uk/"], ScopeMode::Lenient);
        check_table(
            &s,
            &[
                ("a.example.co.uk", true),
                ("b.example.co.uk", true),
                ("example.co.uk", true),
                ("www.example.co.uk", true),
                ("deep.x.example.co.uk", true),
                ("other.co.uk", false),
                ("a.other.co.uk", false),
                ("co.uk", false),
                ("example.com", false),
            ],
        );
    }

    #[test]
    fn lenient_root_on_registrable_domain() {
        let s = scope(&["http://example.co.uk/"], ScopeMode::Lenient);
        check_table(
            &s,
            &[
                ("example.co.uk", true),
                ("sub.example.co.uk", true),
                ("other.co.uk", false),
            ],
        );
        let s = scope(&["http://example.com/"], ScopeMode::Lenient);
        check_table(
            &s,
            &[
                ("example.com", true),
                ("www.example.com", true),
                ("a.b.example.com", true),
                ("evilexample.com", false),
                ("example.com.evil.org", false),
                ("example.org", false),
            ],
        );
    }

    #[test]
    fn lenient_private_suffix_sites_are_separate() {
        // github.io is a public suffix: each user's site is its own domain.
        let s = scope(&["https://alice.github.io/"], ScopeMode::Lenient);
        check_table(
            &s,
            &[
                ("alice.github.io", true),
                ("www.alice.github.io", true),
                ("bob.github.io", false),
            ],
        );
    }

    #[test]
    fn lenient_without_registrable_domain_falls_back_to_strict() {
        let s = scope(&["http://localhost:8080/"], ScopeMode::Lenient);
        check_table(
            &s,
            &[
                ("localhost", true),
                ("www.localhost", true),
                ("a.localhost", false),
                ("example.com", false),
            ],
        );
        let s = scope(&["http://co.uk/"], ScopeMode::Lenient);
        check_table(
            &s,
            &[
                ("co.uk", true),
                ("www.co.uk", true),
                ("example.co.uk", false),
            ],
        );
    }

    #[test]
    fn ip_roots_match_exactly_in_both_modes() {
        for mode in [ScopeMode::Strict, ScopeMode::Lenient] {
            let s = scope(&["http://192.168.1.1:8080/", "http://[::1]/"], mode);
            check_table(
                &s,
                &[
                    ("192.168.1.1", true),
                    ("10.0.1.1", false),
                    ("192.168.1.2", false),
                    ("[::1]", true),
                    ("[::2]", false),
                ],
            );
            assert!(!s.allows_host("www.192.168.1.1"));
        }
    }

    #[test]
    fn ip_hosts_never_match_a_domain_root_leniently() {
        let s = scope(&["http://example.com/"], ScopeMode::Lenient);
        check_table(&s, &[("1.1.1.1", false), ("[::1]", false)]);
    }

    #[test]
    fn port_is_ignored() {
        let s = scope(&["http://example.com:8080/"], ScopeMode::Strict);
        assert!(s.allows(&u("http://example.com/")));
        assert!(s.allows(&u("https://www.example.com:9999/x")));
        assert!(s.allows(&u("http://example.com:8080/y")));
        let s = scope(&["http://127.0.0.1:3000/"], ScopeMode::Strict);
        assert!(s.allows(&u("http://127.0.0.1:4000/")));
    }

    #[test]
    fn exclude_regex_searches_anywhere_in_the_url() {
        let roots = [u("http://example.com/")];
        let s = Scope::new(
            &roots,
            ScopeMode::Strict,
            Some(Regex::new(r"logout|\.pdf$").unwrap()),
        );
        assert!(s.allows(&u("http://example.com/docs/")));
        assert!(!s.allows(&u("http://example.com/account/logout?x=1")));
        assert!(!s.allows(&u("http://example.com/files/report.pdf")));
        assert!(s.allows(&u("http://example.com/files/report.pdf.html")));
        // The host rule still applies first.
        assert!(!s.allows(&u("http://other.example/")));
        // allows_host ignores the regex.
        assert!(s.allows_host("example.com"));
    }

    #[test]
    fn exclude_regex_sees_the_whole_url_text() {
        let roots = [u("http://example.com/")];
        let s = Scope::new(
            &roots,
            ScopeMode::Lenient,
            Some(Regex::new("^https:").unwrap()),
        );
        assert!(s.allows(&u("http://example.com/")));
        assert!(!s.allows(&u("https://example.com/")));
    }

    #[test]
    fn multiple_roots_each_count() {
        let s = scope(
            &["http://example.com/", "https://shop.example.org/"],
            ScopeMode::Strict,
        );
        check_table(
            &s,
            &[
                ("example.com", true),
                ("shop.example.org", true),
                ("www.shop.example.org", true),
                ("example.org", false),
            ],
        );
    }

    #[test]
    fn host_case_and_trailing_dot_are_ignored() {
        let s = scope(&["http://example.com/"], ScopeMode::Strict);
        assert!(s.allows_host("WWW.Example.COM"));
        assert!(s.allows_host("example.com."));
        let s = scope(&["http://example.co.uk/"], ScopeMode::Lenient);
        assert!(s.allows_host("Blog.EXAMPLE.co.uk"));
    }

    #[test]
    fn urls_without_host_and_empty_hosts_are_refused() {
        let s = scope(&["http://example.com/"], ScopeMode::Lenient);
        assert!(!s.allows(&u("mailto:someone@example.com")));
        assert!(!s.allows(&u("data:text/plain,example.com")));
        assert!(!s.allows_host(""));
        assert!(!s.allows_host("."));
    }

    #[test]
    fn no_roots_allow_nothing() {
        let s = Scope::new(&[], ScopeMode::Lenient, None);
        assert!(!s.allows(&u("http://example.com/")));
    }

    #[test]
    fn odd_host_strings_do_not_panic() {
        let s = scope(&["http://example.com/"], ScopeMode::Lenient);
        for h in [
            "..",
            "...",
            "www.",
            "a..b",
            ".com",
            "é.example.com",
            "\u{0}",
            "[",
            "]:",
        ] {
            let _ = s.allows_host(h);
        }
    }
}
