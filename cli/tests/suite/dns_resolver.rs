//! A crawl of hosts whose nameserver is broken on AAAA: a real dnsmasq
//! (Debian's `dnsmasq-base`, on a free port; crates/testkit starts it,
//! skipping where it is missing unless `RINGCRAWL_REQUIRE_TOOLS=1`) that
//! never answers AAAA for some names and says NXDOMAIN to AAAA for others,
//! while A answers: the hosts are crawled without waiting for a time-out.
//! The resolver itself against dnsmasq and a scripted responder is tested
//! beside it (src/net/dns/server_tests.rs).

use std::net::UdpSocket;
use std::time::Duration;

use crate::common::dnsmasq::{broken_aaaa, BROKEN_AAAA_HOSTS};

/// The time-out one query waits by default: 3 s (docs/behaviour.md,
/// "time-out after 2 × 3 s"; src/net/dns/server_tests.rs checks it is the
/// resolver's default).
const ONE_TIMEOUT: Duration = Duration::from_secs(3);

#[test]
fn hosts_are_crawled_when_dnsmasq_ignores_aaaa_or_says_nxdomain_to_it() {
    let test = "hosts_are_crawled_when_dnsmasq_ignores_aaaa_or_says_nxdomain_to_it";
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let Some(dnsmasq) = broken_aaaa(test, silent.local_addr().unwrap()) else {
        return;
    };
    let server = crate::common::serve(|req| match req.path.as_str() {
        "/" => Some(crate::common::page(&["/a", "/b"])),
        "/a" | "/b" => Some(crate::common::html("<p>leaf</p>")),
        _ => None,
    });
    let port = server.addr().port();
    let roots: Vec<String> = (0..BROKEN_AAAA_HOSTS)
        .flat_map(|i| [format!("h{i}.drop.test"), format!("h{i}.nx6.test")])
        .map(|host| format!("http://{host}:{port}/"))
        .collect();
    let mut config = crate::common::settings(&roots);
    config = config.dns_server(dnsmasq.addr);
    let outcome = crate::common::crawl(config);
    let records = crate::common::by_url(&outcome);
    assert_eq!(records.len(), 3 * roots.len());
    for (url, record) in &records {
        assert_eq!(record.status, Some(200), "{url}: {:?}", record.error);
    }
    let dns = outcome.stats.dns;
    println!("{} hosts in {:?}: {dns:?}", roots.len(), outcome.elapsed);
    // Each lookup waiting out its AAAA would cost 2 x 3 s (the default
    // attempts and time-out); answering on A costs 50 ms at most.
    assert!(
        outcome.elapsed < ONE_TIMEOUT,
        "crawled within one query time-out: {:?}",
        outcome.elapsed
    );
    assert_eq!(dns.timeouts, 0, "{dns:?}");
    // A host's owner may lend a page to another shard, which resolves
    // the host in its own resolver: at least one lookup a host.
    assert!(dns.lookups >= roots.len() as u64, "{dns:?}");
    assert!(dns.early >= BROKEN_AAAA_HOSTS as u64, "{dns:?}");
    assert!(dns.cache_hits > 0, "the hosts' other pages: {dns:?}");
    drop(silent);
}
