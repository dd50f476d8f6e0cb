//! A built crawl's settings read back through the public API alone
//! (`Crawler::settings`), as a program that logs the crawl it is about to
//! run reads them.

use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::time::Duration;

use ringcrawl::{defaults, Crawler};

#[test]
fn a_built_crawl_shows_what_the_builder_made_of_its_settings() {
    let v6: IpAddr = "::1".parse().unwrap();
    let dns: SocketAddr = "127.0.0.1:5353".parse().unwrap();
    let crawler = Crawler::builder()
        .root("Example.com")
        .max_tasks(8)
        .per_host(2)
        .delay(Duration::from_millis(250))
        .robots_retries([Duration::from_secs(1), Duration::from_secs(5)])
        .header("X-Team", "crawl")
        .auth("example.com", Some(8080), "ann", "pw")
        .resolve("Pinned.Test.", 443, [v6])
        .dns_server(dns)
        .spill_dir("/var/tmp/spill")
        .warc("/tmp/w")
        .wacz("/tmp/c.wacz")
        .sitemaps(false)
        .build()
        .unwrap();
    let settings = crawler.settings();
    assert_eq!(settings.roots()[0].as_str(), "http://example.com/");
    assert_eq!((settings.max_tasks(), settings.per_host()), (8, 2));
    assert_eq!(settings.delay(), Duration::from_millis(250));
    assert_eq!(
        settings.robots_retries(),
        [Duration::from_secs(1), Duration::from_secs(5)]
    );
    assert!(settings.has_header("x-team") && !settings.has_header("x-other"));
    assert_eq!(settings.credential_count(), 1);
    assert!(settings.has_credentials_for("example.com", 8080));
    assert!(
        !settings.has_credentials_for("example.com", 80),
        "its port only"
    );
    assert_eq!(settings.resolve("pinned.test", 443), Some(&[v6][..]));
    assert_eq!(settings.resolve("pinned.test", 80), None);
    assert_eq!(settings.dns_servers(), [dns]);
    assert_eq!(settings.spill_dir(), Some(Path::new("/var/tmp/spill")));
    assert_eq!(settings.warc(), Some(Path::new("/tmp/w")));
    assert_eq!(settings.wacz(), Some(Path::new("/tmp/c.wacz")));
    assert_eq!(settings.cdxj(), None);
    assert!(!settings.sitemaps());
    // What was not set is the library's default.
    assert_eq!(settings.max_tries(), defaults::MAX_TRIES);
    assert_eq!(settings.max_redirect(), defaults::MAX_REDIRECT);
}
