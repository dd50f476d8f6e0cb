//! Pages in legacy encodings, end to end: the crawler requests the URLs a
//! browser would (paths in UTF-8, queries in the page's encoding) and says
//! on each record which encoding it read the page in and why.

use crate::common::*;
use ringcrawl_site::server::{Reply, Request};

fn html(content_type: &str, body: Vec<u8>) -> Reply {
    Reply::Http {
        status: 200,
        headers: vec![("Content-Type".into(), content_type.into())],
        body,
    }
}

fn encode(text: &str, label: &str) -> Vec<u8> {
    let encoding = encoding_rs::Encoding::for_label(label.as_bytes()).unwrap();
    encoding.encode(text).0.into_owned()
}

#[test]
fn links_of_legacy_pages_are_the_ones_a_browser_follows() {
    let server = serve(|req: &Request| {
        Some(match req.path.as_str() {
            "/" => page(&[
                "/latin1-header",
                "/latin1-meta",
                "/latin1-bare",
                "/cyrillic",
                "/sjis",
            ]),
            "/latin1-header" => html(
                "text/html; charset=ISO-8859-1",
                encode("<a href='/café/a'>x</a><a href='/s?q=café'>q</a>", "latin1"),
            ),
            "/latin1-meta" => html(
                "text/html",
                encode("<meta charset=latin1><a href='/café/b'>x</a>", "latin1"),
            ),
            "/latin1-bare" => html("text/html", encode("<a href='/café/c'>x</a>", "latin1")),
            "/cyrillic" => html(
                "text/html",
                encode(
                    "<meta http-equiv=Content-Type content='text/html; charset=windows-1251'>\
                     <a href='/привет'>x</a><a href='/s?q=привет'>q</a>",
                    "windows-1251",
                ),
            ),
            "/sjis" => html(
                "text/html; charset=shift_jis",
                encode("<a href='/日本'>x</a>", "shift_jis"),
            ),
            _ => page(&[]),
        })
    });
    let b = base(&server);
    let records = by_url(&crawl(settings(&[format!("{b}/")])));
    for path in [
        "/caf%C3%A9/a",
        "/s?q=caf%E9",
        "/caf%C3%A9/b",
        "/caf%C3%A9/c",
        "/%D0%BF%D1%80%D0%B8%D0%B2%D0%B5%D1%82",
        "/s?q=%EF%F0%E8%E2%E5%F2",
        "/%E6%97%A5%E6%9C%AC",
    ] {
        assert_eq!(server.hits("127.0.0.1", path), 1, "{path} requested once");
    }
    for (path, encoding, source) in [
        ("/", "utf-8", "header"),
        ("/latin1-header", "windows-1252", "header"),
        ("/latin1-meta", "windows-1252", "meta"),
        ("/latin1-bare", "windows-1252", "default"),
        ("/cyrillic", "windows-1251", "meta"),
        ("/sjis", "shift_jis", "header"),
    ] {
        let r = &records[&format!("{b}{path}")];
        assert_eq!(r.encoding.as_deref(), Some(encoding), "{path}");
        assert_eq!(r.encoding_source.as_deref(), Some(source), "{path}");
    }
}

#[test]
fn a_utf16_page_with_a_bom_gives_its_links() {
    let server = serve(|req: &Request| {
        Some(match req.path.as_str() {
            "/" => {
                let text = "<html><a href=\"/ü/x\">x</a><a href=\"/plain\">p</a></html>";
                let body: Vec<u8> = [0xFF, 0xFE]
                    .into_iter()
                    .chain(text.encode_utf16().flat_map(u16::to_le_bytes))
                    .collect();
                html("text/html", body)
            }
            _ => page(&[]),
        })
    });
    let b = base(&server);
    let records = by_url(&crawl(settings(&[format!("{b}/")])));
    assert_eq!(server.hits("127.0.0.1", "/%C3%BC/x"), 1);
    assert_eq!(server.hits("127.0.0.1", "/plain"), 1);
    let root = &records[&format!("{b}/")];
    assert_eq!(
        (root.encoding.as_deref(), root.encoding_source.as_deref()),
        (Some("utf-16le"), Some("bom"))
    );
}

/// The HTML Standard's fallback when the prescan finds no `<meta>`: the
/// XML declaration's encoding (an XHTML page served as text/html).
#[test]
fn a_page_whose_only_declaration_is_an_xml_one_is_read_in_its_encoding() {
    let server = serve(|req: &Request| {
        Some(match req.path.as_str() {
            "/" => html(
                "text/html",
                encode(
                    "<?xml version=\"1.0\" encoding=\"Shift_JIS\"?>\n\
                     <html><body><a href='/日本/xml'>x</a></body></html>",
                    "shift_jis",
                ),
            ),
            _ => page(&[]),
        })
    });
    let b = base(&server);
    let records = by_url(&crawl(settings(&[format!("{b}/")])));
    assert_eq!(server.hits("127.0.0.1", "/%E6%97%A5%E6%9C%AC/xml"), 1);
    let root = &records[&format!("{b}/")];
    assert_eq!(
        (root.encoding.as_deref(), root.encoding_source.as_deref()),
        (Some("shift_jis"), Some("xml"))
    );
}

/// A library user reads a page's text as the crawl read it: in its own
/// encoding, not as UTF-8 with replacement characters.
#[test]
fn page_text_is_decoded_with_the_encoding_the_page_was_read_with() {
    let server = serve(|req: &Request| {
        Some(match req.path.as_str() {
            "/" => page(&["/sjis", "/latin1"]),
            "/sjis" => html(
                "text/html; charset=shift_jis",
                encode("<p>日本語</p>", "shift_jis"),
            ),
            "/latin1" => html(
                "text/html",
                encode("<meta charset=latin1><p>café</p>", "latin1"),
            ),
            _ => page(&[]),
        })
    });
    let texts = std::sync::Arc::new(std::sync::Mutex::new(std::collections::BTreeMap::new()));
    let seen = texts.clone();
    ringcrawl::Crawler::builder()
        .root(format!("{}/", base(&server)))
        .obey_robots(false)
        .sitemaps(false)
        .progress(None)
        .on_page(move |page| {
            let path = page.url().rsplit('/').next().unwrap_or("").to_string();
            seen.lock().unwrap().insert(path, page.text().into_owned());
        })
        .build()
        .unwrap()
        .run()
        .unwrap();
    let texts = texts.lock().unwrap();
    assert_eq!(texts["sjis"], "<p>日本語</p>");
    assert_eq!(texts["latin1"], "<meta charset=latin1><p>café</p>");
}
