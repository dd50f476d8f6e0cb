//! The hand-written link scanner against html5gum on arbitrary bytes, with
//! the page URL `http://example.com/dir/page.html`.
//!
//! Whenever `links::scan_links` answers (it gives up on pages only the full
//! tokenizer handles exactly), its links must be exactly those of
//! `links::tokenize_links`, in the same order; and `extract_links` must
//! always equal the tokenizer's answer.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use ringcrawl_links::{extract_links, scan_links, tokenize_links};
use url::Url;

fn page() -> &'static Url {
    static PAGE: OnceLock<Url> = OnceLock::new();
    PAGE.get_or_init(|| Url::parse("http://example.com/dir/page.html").expect("page URL"))
}

fuzz_target!(|data: &[u8]| {
    let reference = tokenize_links(data, page());
    if let Some(scanned) = scan_links(data, page()) {
        assert_eq!(scanned, reference, "scanner and html5gum differ");
    }
    assert_eq!(extract_links(data, page()), reference);
});
