//! `page_links_known` against `page_links`: the same links, in the same
//! order, deduplicated together, those the table knows counted instead.

use std::collections::HashSet;

use url::Url;

use super::*;

fn url(s: &str) -> Url {
    Url::parse(s).unwrap()
}

/// Read `body` at `page` both ways; check that the known reading is the
/// plain one with the links `learned` holds counted, and learn its links.
fn read_and_learn(
    known: &mut KnownLinks,
    learned: &mut HashSet<Url>,
    page: &Url,
    body: &[u8],
) -> PageLinks {
    let plain = page_links(body, page, None).links;
    let got = page_links_known(body, page, None, false, known);
    assert_eq!(
        got.links.len().saturating_add(got.known),
        plain.len(),
        "{page}"
    );
    let resolved: Vec<&Url> = plain.iter().filter(|u| got.links.contains(u)).collect();
    assert_eq!(
        resolved,
        got.links.iter().collect::<Vec<_>>(),
        "{page}: same order"
    );
    for url in plain.iter().filter(|u| !got.links.contains(u)) {
        assert!(
            learned.contains(url),
            "{page}: {url} counted as known but never learned"
        );
    }
    assert_eq!(got.keys.len(), got.links.len());
    for (key, url) in got.keys.iter().zip(&got.links) {
        if let Some(key) = key {
            known.learn(*key, url);
            learned.insert(url.clone());
        }
    }
    got
}

#[test]
fn a_crawl_of_the_synthetic_site_counts_the_links_it_knows_and_finds_the_same_ones() {
    let site = ringcrawl_site::synth::SynthSite::new(ringcrawl_site::synth::SiteSpec {
        pages: 300,
        ..ringcrawl_site::synth::SiteSpec::default()
    });
    let mut known = KnownLinks::with_slots(4096);
    let mut learned = HashSet::new();
    let (mut counted, mut resolved) = (0, 0);
    for n in 0..300 {
        let path = format!("/p/{n}.html");
        let ringcrawl_site::server::Reply::Http { body, .. } = site.respond(&path) else {
            continue;
        };
        let got = read_and_learn(
            &mut known,
            &mut learned,
            &url(&format!("http://example.com{path}")),
            &body,
        );
        counted = got.known.saturating_add(counted);
        resolved = got.links.len().saturating_add(resolved);
    }
    assert!(
        counted > resolved,
        "most links known: {counted} counted, {resolved} resolved"
    );
}

#[test]
fn a_known_link_and_another_spelling_of_its_url_count_once_in_either_order() {
    let mut known = KnownLinks::with_slots(64);
    let mut learned = HashSet::new();
    let root = url("http://h.example/");
    read_and_learn(&mut known, &mut learned, &root, br#"<a href="/a">a</a>"#);
    let first = read_and_learn(
        &mut known,
        &mut learned,
        &root,
        br#"<a href="/a">1</a><a href="a">2</a><a href="http://h.example/a#x">3</a>"#,
    );
    assert_eq!((first.known, first.links.len()), (1, 0));
    let second = read_and_learn(
        &mut known,
        &mut learned,
        &root,
        br#"<a href="a">1</a><a href="/a">2</a>"#,
    );
    assert_eq!((second.known, second.links.len()), (0, 1));
}

#[test]
fn a_base_after_the_links_is_the_one_their_keys_are_taken_against() {
    let mut known = KnownLinks::with_slots(64);
    let mut learned = HashSet::new();
    let page = url("http://h.example/dir/");
    read_and_learn(&mut known, &mut learned, &page, br#"<a href="/x">x</a>"#);
    let got = read_and_learn(
        &mut known,
        &mut learned,
        &page,
        br#"<a href="/x">x</a><base href="http://other.example/">"#,
    );
    assert_eq!(got.known, 0);
    assert_eq!(got.links, [url("http://other.example/x")]);
}

#[test]
fn a_page_in_a_legacy_encoding_is_read_as_page_links_reads_it_with_no_key() {
    let mut known = KnownLinks::with_slots(64);
    let mut learned = HashSet::new();
    let page = url("http://h.example/");
    let body = b"<meta charset=windows-1252><a href=\"/q?caf\xe9\">x</a>";
    read_and_learn(&mut known, &mut learned, &page, body);
    let got = read_and_learn(&mut known, &mut learned, &page, body);
    assert_eq!(got.known, 0);
    assert!(got.keys.iter().all(Option::is_none));
    assert_eq!(got.links, page_links(body, &page, None).links);
}

#[test]
fn known_links_count_toward_the_cap() {
    let mut known = KnownLinks::with_slots(1 << 15);
    let mut learned = HashSet::new();
    let page = url("http://h.example/");
    let html: String = (0..MAX_LINKS_PER_PAGE.saturating_add(10))
        .map(|i| format!("<a href=\"/{i}\">"))
        .collect();
    let first = read_and_learn(&mut known, &mut learned, &page, html.as_bytes());
    assert_eq!(first.links.len(), MAX_LINKS_PER_PAGE);
    let again = read_and_learn(&mut known, &mut learned, &page, html.as_bytes());
    assert_eq!(
        again.links.len().saturating_add(again.known),
        MAX_LINKS_PER_PAGE
    );
    assert!(again.known > 0);
}
