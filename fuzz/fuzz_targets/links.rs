//! `links::extract_links` on arbitrary bytes (not necessarily UTF-8 or HTML)
//! with the page URL `http://example.com/dir/page.html`.
//!
//! Every returned link must be something the crawler can queue: `http` or
//! `https`, a non-empty host, no fragment, no userinfo, no empty query,
//! already normalised (`urls::normalize` leaves it as it is, and parsing its
//! text gives it back), the list free of duplicates and at most
//! `MAX_LINKS_PER_PAGE` long.
#![no_main]

use std::collections::HashSet;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use ringcrawl_links::{extract_links, urls, MAX_LINKS_PER_PAGE};
use url::Url;

fn page() -> &'static Url {
    static PAGE: OnceLock<Url> = OnceLock::new();
    PAGE.get_or_init(|| Url::parse("http://example.com/dir/page.html").expect("page URL"))
}

fuzz_target!(|data: &[u8]| {
    let links = extract_links(data, page());
    assert!(links.len() <= MAX_LINKS_PER_PAGE, "{} links", links.len());
    let mut seen = HashSet::new();
    for link in &links {
        assert!(
            matches!(link.scheme(), "http" | "https"),
            "scheme of {link}"
        );
        assert!(
            link.host_str().is_some_and(|h| !h.is_empty()),
            "host of {link}"
        );
        assert_eq!(link.fragment(), None, "fragment in {link}");
        assert_eq!(link.username(), "", "username in {link}");
        assert_eq!(link.password(), None, "password in {link}");
        assert_ne!(link.query(), Some(""), "empty query in {link}");
        assert_eq!(
            urls::normalize(link.clone()).as_ref(),
            Some(link),
            "normalize changed {link}"
        );
        assert_eq!(
            Url::parse(link.as_str()).ok().as_ref(),
            Some(link),
            "re-parsing {link} gives another URL"
        );
        assert_eq!(
            urls::host_of(link.as_str()),
            urls::host(link),
            "host_of({link})"
        );
        assert!(seen.insert(link.as_str()), "duplicate link {link}");
    }
});
