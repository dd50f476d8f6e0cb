//! The split of a site over many host names
//! ([`SiteSpec::hosts`](super::SiteSpec::hosts)): which host a request is
//! for, the origin of each host, and the roots of a crawl.
//!
//! The site is split over the names `h{k}.site.test`
//! ([`SynthSite::host_name`]); page `i` lives on host `i % hosts`, extra `j`
//! (redirect, stylesheet, image) on host `j % hosts`, every host has a `/`
//! (host 0's is page 0; the others are small hubs linking to their host's
//! first pages), page 0 links to every other host's `/`, and links across
//! hosts are absolute (`http://h{k}.site.test:PORT/...`, the port taken from
//! the request's `Host`). A request whose `Host` is not one of the names is
//! served as host 0; a path asked of a host it does not live on is a 404. A
//! crawler needs `--resolve h{k}.site.test:PORT:127.0.0.1` for every `k`,
//! and either every root ([`SynthSite::roots`]) or `--lenient`.
//!
//! What this is not: where each target lives (`Target::host`) and what the
//! hubs link to (`graph.rs`), or how the hubs are written (`render.rs`).

use super::graph::parse_index;
use super::{SynthSite, HOST_DOMAIN};
use crate::server::strip_port;

impl SynthSite {
    /// The host (index) a request with this `Host` (port optional) is for:
    /// `h{k}.site.test` is `k`; anything else, and any host of a
    /// single-host site, is 0.
    pub fn host_index(&self, authority: &str) -> usize {
        if self.hosts == 1 {
            return 0;
        }
        let host = strip_port(authority).to_ascii_lowercase();
        host.strip_suffix(HOST_DOMAIN)
            .and_then(|h| h.strip_suffix('.'))
            .and_then(|h| h.strip_prefix('h'))
            .and_then(parse_index)
            .filter(|&k| k < self.hosts)
            .unwrap_or(0)
    }

    /// `scheme://authority` of host `k` for a request to `authority`: the
    /// authority itself on a single-host site, else `h{k}.site.test` with
    /// the authority's port.
    pub(super) fn origin(&self, k: usize, authority: &str) -> String {
        let scheme = self.scheme();
        if self.hosts == 1 {
            return format!("{scheme}://{authority}");
        }
        let port = authority
            .rsplit_once(':')
            .filter(|(_, p)| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            .map(|(_, p)| format!(":{p}"))
            .unwrap_or_default();
        format!("{scheme}://{}{port}", Self::host_name(k))
    }

    /// `https` for a site served over TLS, else `http`.
    pub(super) fn scheme(&self) -> &'static str {
        if self.spec.tls {
            "https"
        } else {
            "http"
        }
    }

    /// The roots of a crawl at `authority`: `http://{authority}/`, or every
    /// host's `/` for a multi-host site.
    pub fn roots(&self, authority: &str) -> Vec<String> {
        (0..self.hosts)
            .map(|k| format!("{}/", self.origin(k, authority)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::graph::page_path;
    use crate::synth::tests::body_of;
    use crate::synth::SiteSpec;

    #[test]
    fn many_hosts_split_the_site() {
        let site = SynthSite::new(SiteSpec {
            pages: 500,
            hosts: 7,
            ..SiteSpec::default()
        });
        let auth = "h3.site.test:8080";
        assert_eq!(site.host_index(auth), 3);
        assert_eq!(site.host_index("H6.Site.Test"), 6);
        assert_eq!(site.host_index("h7.site.test:8080"), 0);
        assert_eq!(site.host_index("127.0.0.1:8080"), 0);
        let roots = site.roots("127.0.0.1:8080");
        assert_eq!(roots.len(), 7);
        assert_eq!(roots[6], "http://h6.site.test:8080/");
        // Page 10 lives on host 3 only.
        assert_eq!(body_of(&site.respond_to(auth, "/p/10.html")).0, 200);
        assert_eq!(
            body_of(&site.respond_to("h2.site.test:8080", "/p/10.html")).0,
            404
        );
        // Links to other hosts are absolute, with the request's port.
        let html = site.page_html(10, auth).unwrap();
        assert!(html.contains("http://h0.site.test:8080/"), "{html}");
        let hub = String::from_utf8(body_of(&site.respond_to(auth, "/")).2).unwrap();
        assert!(hub.contains("href=\"/p/3.html\"") && hub.contains("href=\"/p/10.html\""));
        let urls = site.expected_urls("127.0.0.1:8080");
        for i in 0..500 {
            let want = format!("http://h{}.site.test:8080{}", i % 7, page_path(i));
            assert!(urls.binary_search(&want).is_ok(), "{want}");
        }
        for root in &roots {
            assert!(urls.binary_search(root).is_ok(), "{root}");
        }
        // Single-host sites ignore the host.
        let one = SynthSite::new(SiteSpec::default());
        assert_eq!(
            body_of(&one.respond_to("h3.site.test:1", "/p/10.html")).0,
            200
        );
        assert_eq!(one.roots("127.0.0.1:9"), vec!["http://127.0.0.1:9/"]);
    }

    #[test]
    fn a_site_served_over_tls_lists_and_links_https() {
        let site = SynthSite::new(SiteSpec {
            pages: 60,
            tls: true,
            ..SiteSpec::default()
        });
        let at = "127.0.0.1:9";
        assert_eq!(site.roots(at), vec!["https://127.0.0.1:9/"]);
        assert!(site
            .expected_urls(at)
            .iter()
            .all(|u| u.starts_with("https://127.0.0.1:9/")));
        let html: String = (0..60).filter_map(|i| site.page_html(i, at)).collect();
        assert!(html.contains("https://127.0.0.1:9/"), "absolute links");
        assert!(!html.contains("http://127.0.0.1:9/"));
    }
}
