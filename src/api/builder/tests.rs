//! The settings [`CrawlerBuilder::build`] checks: each refused out of its
//! range with a [`BuildError`] naming it, and taken as given within it.

use std::time::Duration;

use super::*;
use crate::defaults::{MAX_SITEMAPS_PER_HOST, MAX_SITEMAP_URLS, MIN_HOST_MEMORY_PER_SHARD};

fn builder() -> CrawlerBuilder {
    CrawlerBuilder::new()
        .root("http://site.test/")
        .cores(4)
        .timeout(Duration::from_secs(1))
}

fn refused(builder: CrawlerBuilder) -> Setting {
    builder.build().expect_err("refused").setting()
}

#[test]
fn the_host_memory_gives_each_shard_at_least_its_floor() {
    let floor = 4 * MIN_HOST_MEMORY_PER_SHARD;
    let e = builder().host_memory(floor - 1).build().unwrap_err();
    assert_eq!(e.setting(), Setting::HostMemory);
    assert!(e.problem().contains("4 shards"), "{e}");
    assert_eq!(refused(builder().host_memory(0)), Setting::HostMemory);
    let crawler = builder().host_memory(floor).build().unwrap();
    assert_eq!(crawler.config.host_memory, floor);
    // The floor is a shard's: one shard may have a quarter of it.
    assert!(builder()
        .cores(1)
        .host_memory(MIN_HOST_MEMORY_PER_SHARD)
        .build()
        .is_ok());
    assert_eq!(
        builder().build().unwrap().config.host_memory,
        crate::defaults::HOST_MEMORY
    );
}

#[test]
fn the_spill_directory_is_a_directory_or_made() {
    let tmp = std::env::temp_dir().join(format!("ringcrawl-spill-dir-test-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let file = tmp.join("file");
    std::fs::write(&file, b"").unwrap();
    let e = builder().spill_dir(&file).build().unwrap_err();
    assert_eq!(e.setting(), Setting::SpillDir);
    assert!(e.problem().contains("not a directory"), "{e}");
    // Made by the crawl if missing: build makes nothing.
    for dir in [tmp.clone(), tmp.join("made/later")] {
        let crawler = builder().spill_dir(&dir).build().unwrap();
        assert_eq!(crawler.config.spill_dir.as_deref(), Some(dir.as_path()));
    }
    assert!(!tmp.join("made").exists());
    assert_eq!(builder().build().unwrap().config.spill_dir, None);
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn the_sitemap_limits_are_within_the_protocol_and_above_zero() {
    assert_eq!(
        refused(builder().max_sitemap_urls(0)),
        Setting::MaxSitemapUrls
    );
    assert_eq!(
        refused(builder().max_sitemap_urls(MAX_SITEMAP_URLS + 1)),
        Setting::MaxSitemapUrls
    );
    assert_eq!(
        refused(builder().max_sitemaps_per_host(0)),
        Setting::MaxSitemapsPerHost
    );
    let limits = builder()
        .max_sitemap_urls(50)
        .max_sitemaps_per_host(3)
        .build()
        .unwrap()
        .config
        .sitemap_limits;
    assert_eq!((limits.max_urls, limits.max_per_host), (50, 3));
    let limits = builder().build().unwrap().config.sitemap_limits;
    assert_eq!(
        (limits.max_urls, limits.max_per_host),
        (MAX_SITEMAP_URLS, MAX_SITEMAPS_PER_HOST)
    );
}

#[test]
fn a_ca_certificate_that_is_no_certificate_is_refused() {
    assert_eq!(
        refused(builder().ca_cert_der(b"not DER".to_vec())),
        Setting::CaCert
    );
}
