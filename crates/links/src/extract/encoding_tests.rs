//! The charset corpus: one page written in six encodings, declared by the
//! HTTP header, by `<meta>` and by a byte order mark, must give the links a
//! browser would follow, and the same ones that html5gum's own tokenizer
//! gives on the page decoded by encoding_rs and resolved by the `url` crate
//! with the page's encoding (the reference here shares no code with
//! [`page_links`] past those crates).

use encoding_rs::{Encoding, SHIFT_JIS, UTF_16BE, UTF_16LE, UTF_8, WINDOWS_1251, WINDOWS_1252};
use html5gum::{Token, Tokenizer};
use url::Url;

use super::charset::Source;
use super::page_links;

fn base() -> Url {
    Url::parse("http://site.test/dir/page.html").unwrap()
}

/// Links that mean the same in every encoding: non-ASCII paths (the three
/// characters are in all six repertoires), a character reference, a
/// `<base>`-free relative link, an absolute one with a fragment.
const COMMON: &str = r#"<a href="/§/°/±">signs</a>
<a href='rel/¶.html#top'>relative</a>
<a href=/caf&eacute;>reference</a>
<a href="http://other.test/x#f">absolute</a>"#;

/// The page in `encoding`: `COMMON`, and links with `word` (in the
/// encoding's repertoire) in a path and in a query; `meta` goes in the head.
fn page(meta: &str, word: &str) -> String {
    format!(
        "<!doctype html><html><head>{meta}<title>t</title></head><body>\n{COMMON}\n\
         <a href=\"/docs/{word}\">path</a>\n<a href=\"/search?q={word}&amp;n=1\">query</a>\n\
         <a href=\"/q?c=&eacute;\">reference in a query</a>\n</body></html>"
    )
}

/// The encodings of the corpus and a word each can write.
fn corpus() -> [(&'static Encoding, &'static str); 6] {
    [
        (UTF_8, "日本語привет"),
        (WINDOWS_1252, "naïve"),
        (WINDOWS_1251, "привет"),
        (SHIFT_JIS, "日本語"),
        (UTF_16LE, "日本語привет"),
        (UTF_16BE, "日本語привет"),
    ]
}

/// `text` in `encoding` (encoding_rs writes UTF-16 too, unlike its
/// `encode`, which gives UTF-8 for it as the web's forms do).
fn encode(text: &str, encoding: &'static Encoding) -> Vec<u8> {
    if encoding == UTF_16LE || encoding == UTF_16BE {
        let units = text.encode_utf16();
        return if encoding == UTF_16LE {
            units.flat_map(u16::to_le_bytes).collect()
        } else {
            units.flat_map(u16::to_be_bytes).collect()
        };
    }
    let (bytes, _, unmappable) = encoding.encode(text);
    assert!(!unmappable, "{} cannot write the page", encoding.name());
    bytes.into_owned()
}

fn bom(encoding: &'static Encoding) -> &'static [u8] {
    match encoding.name() {
        "UTF-8" => &[0xEF, 0xBB, 0xBF],
        "UTF-16LE" => &[0xFF, 0xFE],
        "UTF-16BE" => &[0xFE, 0xFF],
        _ => &[],
    }
}

/// The reference: html5gum's default emitter over the decoded page, every
/// `a href` parsed by `url` against the page URL with the page's encoding
/// for queries, without fragments, first occurrence kept.
fn reference(bytes: &[u8], encoding: &'static Encoding) -> Vec<String> {
    let (text, _, _) = encoding.decode(bytes);
    let query = encoding.output_encoding();
    let encoder = encoder(query);
    let mut links: Vec<String> = Vec::new();
    for token in Tokenizer::new(&*text).flatten() {
        let Token::StartTag(tag) = token else {
            continue;
        };
        if &*tag.name != b"a" {
            continue;
        }
        let Some(href) = tag.attributes.get(b"href".as_slice()) else {
            continue;
        };
        let href = String::from_utf8(href.value.to_vec()).unwrap();
        let base = base();
        let mut options = Url::options().base_url(Some(&base));
        if query != UTF_8 {
            options = options.encoding_override(Some(&encoder));
        }
        let mut url = options.parse(&href).unwrap();
        url.set_fragment(None);
        if !links.contains(&url.to_string()) {
            links.push(url.to_string());
        }
    }
    links
}

fn encoder(encoding: &'static Encoding) -> impl for<'s> Fn(&'s str) -> std::borrow::Cow<'s, [u8]> {
    move |s| encoding.encode(s).0
}

fn strings(urls: Vec<Url>) -> Vec<String> {
    urls.into_iter().map(String::from).collect()
}

#[test]
fn six_encodings_declared_three_ways_give_the_links_a_browser_follows() {
    for (encoding, word) in corpus() {
        let plain = page("", word);
        let utf16 = encoding == UTF_16LE || encoding == UTF_16BE;
        let mut ways = vec![("header", encode(&plain, encoding), Some(encoding.name()))];
        if !utf16 {
            // A UTF-16 <meta> means UTF-8 (the standard's rule): not a way
            // to declare UTF-16.
            let meta = page(&format!("<meta charset=\"{}\">", encoding.name()), word);
            ways.push(("meta", encode(&meta, encoding), None));
        }
        if !bom(encoding).is_empty() {
            ways.push((
                "bom",
                [bom(encoding), &encode(&plain, encoding)].concat(),
                None,
            ));
        }
        for (way, bytes, header) in ways {
            let got = page_links(&bytes, &base(), header);
            let what = format!("{} by {way}", encoding.name());
            assert_eq!(got.charset.encoding, encoding, "{what}");
            assert_eq!(got.charset.source.name(), way, "{what}");
            assert_eq!(strings(got.links), reference(&bytes, encoding), "{what}");
        }
    }
}

#[test]
fn the_same_links_in_every_encoding() {
    let want = {
        let bytes = encode(&page("", "x"), UTF_8);
        strings(page_links(&bytes, &base(), Some("utf-8")).links)
    };
    assert_eq!(
        want.get(..4).unwrap(),
        [
            "http://site.test/%C2%A7/%C2%B0/%C2%B1",
            "http://site.test/dir/rel/%C2%B6.html",
            "http://site.test/caf%C3%A9",
            "http://other.test/x",
        ]
    );
    for (encoding, _) in corpus() {
        let bytes = encode(&page("", "x"), encoding);
        let got = strings(page_links(&bytes, &base(), Some(encoding.name())).links);
        // The page's one non-ASCII query is written in its encoding; every
        // other link is the same everywhere.
        let (got_same, want_same): (Vec<_>, Vec<_>) = got
            .iter()
            .zip(&want)
            .filter(|(g, _)| !g.contains("?c="))
            .unzip();
        assert_eq!(got_same, want_same, "{}", encoding.name());
        assert_eq!(got.len(), want.len(), "{}", encoding.name());
    }
}

#[test]
fn queries_are_written_in_the_page_encoding_paths_in_utf8() {
    for (encoding, word, path, query) in [
        (WINDOWS_1252, "naïve", "na%C3%AFve", "na%EFve"),
        (
            WINDOWS_1251,
            "привет",
            "%D0%BF%D1%80%D0%B8%D0%B2%D0%B5%D1%82",
            "%EF%F0%E8%E2%E5%F2",
        ),
        // 0x7B is `{`, which a query keeps as it is (the URL standard's
        // query percent-encode set), so a browser sends it unescaped too.
        (
            SHIFT_JIS,
            "日本語",
            "%E6%97%A5%E6%9C%AC%E8%AA%9E",
            "%93%FA%96{%8C%EA",
        ),
        // UTF-16 pages write their queries in UTF-8, as browsers do.
        (UTF_16LE, "日本", "%E6%97%A5%E6%9C%AC", "%E6%97%A5%E6%9C%AC"),
    ] {
        let bytes = encode(&page("", word), encoding);
        let links = strings(page_links(&bytes, &base(), Some(encoding.name())).links);
        let docs = format!("http://site.test/docs/{path}");
        let search = format!("http://site.test/search?q={query}&n=1");
        assert!(links.contains(&docs), "{}: {links:?}", encoding.name());
        assert!(links.contains(&search), "{}: {links:?}", encoding.name());
    }
    // A character the page's encoding cannot write goes as a numeric
    // character reference, of which the query escapes only the `#`.
    let bytes = encode(&page("", "x"), WINDOWS_1251);
    let links = strings(page_links(&bytes, &base(), Some("windows-1251")).links);
    assert!(
        links.contains(&"http://site.test/q?c=&%23233;".to_string()),
        "{links:?}"
    );
}

#[test]
fn an_undeclared_legacy_page_is_read_as_windows_1252() {
    let bytes = encode(&page("", "naïve"), WINDOWS_1252);
    let got = page_links(&bytes, &base(), None);
    assert_eq!(
        (got.charset.encoding, got.charset.source),
        (WINDOWS_1252, Source::Default)
    );
    assert!(strings(got.links).contains(&"http://site.test/docs/na%C3%AFve".to_string()));
    let got = page_links(page("", "naïve").as_bytes(), &base(), None);
    assert_eq!(
        (got.charset.encoding, got.charset.source),
        (UTF_8, Source::Default)
    );
}
