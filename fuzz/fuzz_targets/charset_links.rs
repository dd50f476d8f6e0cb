//! `links::page_links` on any bytes with any declared charset: the encoding
//! sniffing (BOM, the header's label, the `<meta>` prescan, the UTF-8
//! check) and the decode-then-scan path must never panic, and must give at
//! most `MAX_LINKS_PER_PAGE` links, every one http(s) without a fragment.
//!
//! Input layout: byte 0 picks the header charset (an index into LABELS, or
//! none), the rest is the page.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ringcrawl_links::{page_links, MAX_LINKS_PER_PAGE};
use url::Url;

const LABELS: [&str; 8] = [
    "utf-8",
    "windows-1252",
    "windows-1251",
    "shift_jis",
    "utf-16le",
    "utf-16be",
    "gb18030",
    "iso-2022-jp",
];

fuzz_target!(|data: &[u8]| {
    let Some((&choice, body)) = data.split_first() else {
        return;
    };
    let header = LABELS.get(usize::from(choice)).copied();
    let base = Url::parse("http://fuzz.test/dir/page?q=1").unwrap();
    let page = page_links(body, &base, header);
    assert!(page.links.len() <= MAX_LINKS_PER_PAGE);
    for link in &page.links {
        assert!(matches!(link.scheme(), "http" | "https"), "{link}");
        assert!(link.fragment().is_none(), "{link}");
    }
});
