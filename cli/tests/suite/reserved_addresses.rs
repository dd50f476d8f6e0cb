//! A name that resolves to a link-local or cloud metadata address
//! (169.254.0.0/16, fe80::/10, fd00:ec2::254, ...) is refused after its
//! lookup, as a URL naming the address is refused by the scope: the
//! crawl records `reserved_address` and connects nowhere; a name with an
//! ordinary address beside such one is fetched from the ordinary one.
//! Names come from a real dnsmasq on loopback (skipped, saying why, where
//! it is not installed; a failure with `RINGCRAWL_REQUIRE_TOOLS=1`).
//!
//! Not here: the host rule itself (`web::scope`'s unit tests), nor what a
//! root naming such a host lets through (unit tests of
//! `Scope::may_connect`: nothing answers on 169.254.x.y in a test).

use ringcrawl::{ErrorKind, ScopeMode};

use crate::common::dnsmasq::Dnsmasq;

#[test]
fn a_name_resolving_to_a_metadata_address_is_recorded_as_refused_and_never_connected_to() {
    let test =
        "a_name_resolving_to_a_metadata_address_is_recorded_as_refused_and_never_connected_to";
    let hosts = "127.0.0.1 www.site.test\n\
                 169.254.169.254 meta.site.test\n\
                 169.254.7.9 linklocal.site.test\n\
                 127.0.0.1 mixed.site.test\n\
                 169.254.7.10 mixed.site.test\n";
    let args = [
        "--local=/test/",
        "--local-ttl=300",
        "--host-record=v6link.site.test,fe80::1",
        "--host-record=aws6.site.test,fd00:ec2::254",
    ]
    .map(String::from);
    let Some(dnsmasq) = Dnsmasq::start(test, hosts, &args, "www.site.test") else {
        return;
    };
    // Links on the port the page was asked on (the Host header's).
    let server = crate::common::serve(|req| {
        let port = req.authority.rsplit(':').next().unwrap_or("80");
        match req.path.as_str() {
            "/" => {
                let links: Vec<String> = [
                    "meta.site.test/latest/meta-data/",
                    "linklocal.site.test/",
                    "v6link.site.test/",
                    "aws6.site.test/",
                    "mixed.site.test/leaf",
                ]
                .iter()
                .map(|l| {
                    let (host, path) = l.split_once('/').unwrap();
                    format!("http://{host}:{port}/{path}")
                })
                .collect();
                let links: Vec<&str> = links.iter().map(String::as_str).collect();
                Some(crate::common::page(&links))
            }
            "/leaf" => Some(crate::common::html("<p>leaf</p>")),
            _ => None,
        }
    });
    let port = server.addr().port();
    let root = format!("http://www.site.test:{port}/");
    let mut config = crate::common::settings(&[&root]);
    config = config.dns_server(dnsmasq.addr);
    // The other hosts of site.test are in scope: only their addresses
    // keep them out.
    config = config.scope(ScopeMode::Lenient);
    let outcome = crate::common::crawl(config);
    let records = crate::common::by_url(&outcome);
    for host in [
        "meta.site.test",
        "linklocal.site.test",
        "v6link.site.test",
        "aws6.site.test",
    ] {
        let (url, record) = records
            .iter()
            .find(|(url, _)| url.contains(host))
            .unwrap_or_else(|| panic!("a record for {host}: {records:?}"));
        assert_eq!(
            record.error_kind,
            Some(ErrorKind::ReservedAddress),
            "{url}: {:?}",
            record.error
        );
        assert_eq!(record.status, None, "{url}: no answer, no connection");
        let error = record.error.as_deref().unwrap_or("");
        assert!(error.contains("link-local or metadata"), "{url}: {error}");
    }
    let mixed = &records[&format!("http://mixed.site.test:{port}/leaf")];
    assert_eq!(mixed.status, Some(200), "{:?}", mixed.error);
    // Only the site's own pages were asked for: the root and the leaf.
    let asked: usize = server.hit_counts().values().sum();
    assert_eq!(asked, 2, "{:?}", server.hit_counts());
}
