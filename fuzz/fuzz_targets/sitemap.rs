//! `sitemap::parse` and `sitemap::listed` on any bytes: they must never
//! panic, never keep more URLs than the cap, and only ever list URLs of the
//! sitemap's own host.
//!
//! Input layout: byte 0 picks the caps (bits 0-1: 1, 10, 1,000 or 50,000
//! URLs; bits 2-3: 256 bytes, 4 KiB, 1 MiB or 50 MB) and bit 4 gzips the
//! rest first (so the inflating path sees valid members too); the rest is
//! the body.
#![no_main]

use std::io::Write;

use libfuzzer_sys::fuzz_target;
use ringcrawl_sitemap::{listed, parse, Bounds};
use url::Url;

const URLS: [usize; 4] = [1, 10, 1_000, 50_000];
const BYTES: [usize; 4] = [256, 4 << 10, 1 << 20, 52_428_800];

fuzz_target!(|data: &[u8]| {
    let Some((&choice, body)) = data.split_first() else {
        return;
    };
    let limits = Bounds {
        max_urls: URLS[usize::from(choice & 3)],
        max_bytes: BYTES[usize::from((choice >> 2) & 3)],
    };
    let gzipped;
    let body = if choice & 16 != 0 {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(body).unwrap();
        gzipped = gz.finish().unwrap();
        &gzipped[..]
    } else {
        body
    };
    if let Ok(sitemap) = parse(body, &limits) {
        assert!(sitemap.locs.len() <= limits.max_urls);
        let base = Url::parse("http://a.test/sitemap.xml").unwrap();
        let taken = listed(&sitemap.locs, &base);
        assert!(taken.urls.iter().all(|u| u.host_str() == Some("a.test")));
    }
});
