//! Pure sitemap reading (the sitemaps.org protocol 0.9): the `<loc>` URLs
//! of a `<urlset>`, the sitemaps of a `<sitemapindex>`, or the lines of a
//! text sitemap, from a body as fetched (gzipped or not), bounded whatever
//! the bytes.
//!
//! [`parse`] streams: a gzip body (sniffed by its magic bytes, so a
//! `.xml.gz` file and a gzip body without the name alike) is inflated
//! through flate2 into quick-xml's streaming reader, and only the `<loc>`
//! texts are kept, so memory is the URLs, never the inflated document.
//! Bounds: [`Bounds::max_bytes`] of the (inflated) document are read, the
//! protocol's 50 MB; [`Bounds::max_urls`] `<loc>`s are kept, the protocol's
//! 50,000; past either the sitemap is cut there, with the URLs before it
//! kept and the reason in [`Sitemap::cut`]. XML broken part way is cut the
//! same way. Element nesting costs nothing (a depth counter, no stack: end
//! tag names are not checked), and no entity is expanded but the five
//! predefined ones and character references.
//!
//! A `<loc>` counts only where the protocol puts it: `urlset/url/loc` or
//! `sitemapindex/sitemap/loc`, by local name (any namespace prefix), so
//! the `image:loc` of an image extension inside a `<url>` is not a page.
//! [`listed`] turns the texts into the URLs the crawl may take: resolved,
//! normalised, on the sitemap's own host, each once.
//!
//! This is the sans-I/O half of [ringcrawl]'s sitemaps, a crate of its own
//! so that it is tested and fuzzed without the crawler, and so that others
//! can use it. Not the fetching, the crawl's limits (nesting of indexes,
//! sitemaps per host) or the robots.txt `Sitemap:` lines: those are the
//! crawler's.
//!
//! [ringcrawl]: https://github.com/ringcrawl/ringcrawl

#![warn(unreachable_pub)]
#![deny(clippy::arithmetic_side_effects)]

use std::collections::HashSet;
use std::io::{self, BufRead, BufReader, Read};

use flate2::read::MultiGzDecoder;
use quick_xml::events::{BytesRef, Event};
use quick_xml::Reader;
use ringcrawl_links::urls;
use thiserror::Error;
use url::Url;

/// Bytes of a sitemap read at most, once inflated: the protocol's 50 MB
/// (52,428,800 bytes).
pub const MAX_BYTES: usize = 52_428_800;

/// `<loc>`s kept of one sitemap: the protocol's 50,000.
pub const MAX_URLS: usize = 50_000;

/// What one sitemap may cost ([`parse`]); by default the protocol's
/// bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Bytes of the document read at most (after inflating a gzip body).
    pub max_bytes: usize,
    /// `<loc>`s (or text lines) kept at most.
    pub max_urls: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            max_bytes: MAX_BYTES,
            max_urls: MAX_URLS,
        }
    }
}

/// What a sitemap lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kind {
    /// `<urlset>`: pages.
    UrlSet,
    /// `<sitemapindex>`: more sitemaps.
    Index,
    /// A text file of URLs, one a line: pages.
    Text,
}

impl Kind {
    /// The name the record's error messages use.
    pub fn name(self) -> &'static str {
        match self {
            Kind::UrlSet => "urlset",
            Kind::Index => "sitemapindex",
            Kind::Text => "text sitemap",
        }
    }
}

/// A sitemap read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sitemap {
    /// What it lists: pages, or more sitemaps.
    pub kind: Kind,
    /// The `<loc>` texts in document order: character and predefined entity
    /// references and CDATA resolved, surrounding whitespace trimmed, empty
    /// ones left out. Not yet URLs: see [`listed`].
    pub locs: Vec<String>,
    /// The body was gzip (inflated here).
    pub gzipped: bool,
    /// Why only part of it was read, if so: the `locs` before that point
    /// are kept.
    pub cut: Option<Cut>,
}

/// Why a sitemap was read only in part.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum Cut {
    /// More `<loc>`s than [`Bounds::max_urls`] (this many kept).
    #[error("more than {0} URLs: the first {0} used")]
    TooManyUrls(usize),
    /// A document longer than [`Bounds::max_bytes`].
    #[error("larger than {bytes} bytes{}: read that far", if *inflated { " inflated" } else { "" })]
    TooLarge {
        /// The bound, [`Bounds::max_bytes`].
        bytes: usize,
        /// Counted after inflating a gzip body.
        inflated: bool,
    },
    /// XML (or gzip) broken part way, as the reader said it.
    #[error("{0}: the URLs before it used")]
    Broken(String),
}

/// A body that is no sitemap.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SitemapError {
    /// XML whose root is neither `<urlset>` nor `<sitemapindex>` (its
    /// name).
    #[error("not a sitemap: the root element is <{0}>")]
    NotASitemap(String),
    /// XML (or gzip) broken before a root element, as the reader said it.
    #[error("not a sitemap: {0}")]
    Unreadable(String),
    /// Text with no line that is a URL.
    #[error("not a sitemap: no URL in its text")]
    NoUrls,
    /// Nothing but whitespace (or nothing).
    #[error("not a sitemap: empty")]
    Empty,
}

/// Read the sitemap in `body` (gzip or not), within `limits`.
pub fn parse(body: &[u8], limits: &Bounds) -> Result<Sitemap, SitemapError> {
    let gzipped = body.starts_with(&[0x1f, 0x8b]);
    let source: Box<dyn Read + '_> = if gzipped {
        Box::new(MultiGzDecoder::new(body))
    } else {
        Box::new(body)
    };
    let mut input = BufReader::with_capacity(64 << 10, Capped::new(source, limits.max_bytes));
    let first = match first_byte(&mut input) {
        Ok(Some(byte)) => byte,
        Ok(None) => return Err(SitemapError::Empty),
        Err(e) => return Err(SitemapError::Unreadable(format!("gzip: {e}"))),
    };
    let (kind, locs, mut cut) = if first == b'<' {
        read_xml(&mut input, limits)?
    } else {
        read_text(&mut input, limits)?
    };
    let capped = input.get_ref().capped;
    if capped && !matches!(cut, Some(Cut::TooManyUrls(_))) {
        // Whatever broke at the cap broke because of it.
        cut = Some(Cut::TooLarge {
            bytes: limits.max_bytes,
            inflated: gzipped,
        });
    }
    Ok(Sitemap {
        kind,
        locs,
        gzipped,
        cut,
    })
}

/// The first byte that is not whitespace or a byte order mark, left in
/// `input`; None at the end.
fn first_byte(input: &mut impl BufRead) -> io::Result<Option<u8>> {
    let mut at_start = true;
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            return Ok(None);
        }
        if at_start && buf.starts_with(b"\xef\xbb\xbf") {
            input.consume(3);
            at_start = false;
            continue;
        }
        at_start = false;
        match buf.iter().position(|b| !b.is_ascii_whitespace()) {
            Some(i) => {
                let byte = buf.get(i).copied();
                input.consume(i);
                return Ok(byte);
            }
            None => {
                let n = buf.len();
                input.consume(n);
            }
        }
    }
}

type Read3 = (Kind, Vec<String>, Option<Cut>);

/// A `<urlset>` or `<sitemapindex>` document.
fn read_xml(input: &mut impl BufRead, limits: &Bounds) -> Result<Read3, SitemapError> {
    let mut reader = Reader::from_reader(input);
    {
        let config = reader.config_mut();
        // Lenient as crawlers are: `&` unescaped in a URL is the commonest
        // error of hand-made sitemaps; end tag names are not checked, so
        // nesting keeps no stack.
        config.allow_dangling_amp = true;
        config.check_end_names = false;
        config.allow_unmatched_ends = true;
    }
    let mut buf = Vec::new();
    let mut kind = None;
    let mut locs = Vec::new();
    // Open elements; the root is depth 1.
    let mut depth: u32 = 0;
    let mut in_entry = false;
    let mut loc: Option<String> = None;
    let cut = loop {
        buf.clear();
        let event = match reader.read_event_into(&mut buf) {
            Ok(event) => event,
            Err(e) => {
                let at = reader.error_position();
                match kind {
                    None => return Err(SitemapError::Unreadable(format!("{e} at byte {at}"))),
                    Some(_) => break Some(Cut::Broken(format!("XML error at byte {at}: {e}"))),
                }
            }
        };
        match event {
            Event::Start(start) if depth == 0 => {
                kind = Some(root_kind(start.local_name().as_ref())?);
                depth = 1;
            }
            Event::Empty(start) if depth == 0 => {
                // `<urlset/>`: an empty sitemap.
                kind = Some(root_kind(start.local_name().as_ref())?);
                break None;
            }
            Event::Start(start) => {
                depth = depth.saturating_add(1);
                let name = start.local_name();
                let entry = match kind {
                    Some(Kind::Index) => "sitemap",
                    _ => "url",
                };
                if depth == 2 && name.as_ref() == entry {
                    in_entry = true;
                } else if depth == 3 && in_entry && name.as_ref() == "loc" {
                    if locs.len() >= limits.max_urls {
                        break Some(Cut::TooManyUrls(limits.max_urls));
                    }
                    loc = Some(String::new());
                }
            }
            // An end tag before any root: ignored, as unmatched ones are.
            Event::End(_) if depth == 0 => {}
            Event::End(_) => {
                if depth == 3 {
                    if let Some(text) = loc.take() {
                        let text = text.trim();
                        if !text.is_empty() {
                            locs.push(text.to_string());
                        }
                    }
                } else if depth == 2 {
                    in_entry = false;
                }
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    break None;
                }
            }
            Event::Text(text) => {
                if let Some(loc) = &mut loc {
                    loc.push_str(&text.xml10_content());
                }
            }
            Event::CData(data) => {
                if let Some(loc) = &mut loc {
                    loc.push_str(&data);
                }
            }
            Event::GeneralRef(reference) => {
                if let Some(loc) = &mut loc {
                    push_reference(loc, &reference);
                }
            }
            Event::Eof => {
                break match kind {
                    None => return Err(SitemapError::Empty),
                    // Ended inside the root: a body cut short.
                    Some(_) if depth > 0 => Some(Cut::Broken(
                        "the document ends before its root element closes".into(),
                    )),
                    Some(_) => None,
                };
            }
            Event::Empty(_)
            | Event::Comment(_)
            | Event::Decl(_)
            | Event::PI(_)
            | Event::DocType(_) => {}
        }
    };
    Ok((kind.unwrap_or(Kind::UrlSet), locs, cut))
}

/// The kind of sitemap a root element names.
fn root_kind(name: &str) -> Result<Kind, SitemapError> {
    match name {
        "urlset" => Ok(Kind::UrlSet),
        "sitemapindex" => Ok(Kind::Index),
        other => Err(SitemapError::NotASitemap(other.chars().take(64).collect())),
    }
}

/// Append what `&name;` stands for: a character reference or one of XML's
/// five predefined entities; any other name (a DTD's, never expanded) as
/// it was written.
fn push_reference(loc: &mut String, reference: &BytesRef<'_>) {
    if let Ok(Some(c)) = reference.resolve_char_ref() {
        loc.push(c);
    } else if let Some(text) = quick_xml::escape::resolve_predefined_entity(reference) {
        loc.push_str(text);
    } else {
        loc.push('&');
        loc.push_str(reference);
        loc.push(';');
    }
}

/// A text sitemap: one URL a line (lines that are no `http(s)` URL are
/// skipped, as the protocol allows nothing else).
fn read_text(input: &mut impl BufRead, limits: &Bounds) -> Result<Read3, SitemapError> {
    let mut locs = Vec::new();
    let mut line = Vec::new();
    let cut = loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) => break None,
            Ok(_) => {}
            Err(e) => break Some(Cut::Broken(format!("read error: {e}"))),
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        let is_url = text
            .get(..8)
            .is_some_and(|p| p.eq_ignore_ascii_case("https://"))
            || text
                .get(..7)
                .is_some_and(|p| p.eq_ignore_ascii_case("http://"));
        if !is_url {
            continue;
        }
        if locs.len() >= limits.max_urls {
            break Some(Cut::TooManyUrls(limits.max_urls));
        }
        locs.push(text.to_string());
    };
    if locs.is_empty() && cut.is_none() {
        return Err(SitemapError::NoUrls);
    }
    Ok((Kind::Text, locs, cut))
}

/// A reader that ends after `left` bytes and notes whether there were more.
struct Capped<R> {
    inner: R,
    left: usize,
    /// More bytes followed the cap.
    capped: bool,
}

impl<R: Read> Capped<R> {
    fn new(inner: R, cap: usize) -> Self {
        Capped {
            inner,
            left: cap,
            capped: false,
        }
    }
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            if !self.capped {
                let mut probe = [0u8; 1];
                self.capped = self.inner.read(&mut probe)? > 0;
            }
            return Ok(0);
        }
        let want = buf.len().min(self.left);
        let n = match buf.get_mut(..want) {
            Some(part) => self.inner.read(part)?,
            None => 0,
        };
        self.left = self.left.saturating_sub(n);
        Ok(n)
    }
}

/// What a sitemap at `base` lists that the crawl may take.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Listed {
    /// Resolved and normalised `http(s)` URLs on `base`'s host, each once,
    /// in document order.
    pub urls: Vec<Url>,
    /// `<loc>`s on another host, left out (sitemaps.org: a sitemap lists
    /// the URLs of its own host only).
    pub off_host: usize,
    /// `<loc>`s that are no fetchable URL.
    pub unusable: usize,
}

/// The URLs of `locs` (from the sitemap at `base`) the crawl may take:
/// each resolved against `base` (the protocol wants absolute URLs; a
/// relative one is read as a browser would) and normalised; only those on
/// `base`'s host (its scheme and port may differ: an `http` sitemap
/// listing the `https` pages of its host is common); each once.
pub fn listed(locs: &[String], base: &Url) -> Listed {
    let host = urls::host(base);
    let mut out = Listed::default();
    let mut seen = HashSet::new();
    for loc in locs {
        match urls::join(base, loc) {
            None => out.unusable = out.unusable.saturating_add(1),
            Some(url) if urls::host(&url) != host => out.off_host = out.off_host.saturating_add(1),
            Some(url) => {
                if seen.insert(url.as_str().to_string()) {
                    out.urls.push(url);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use flate2::write::GzEncoder;
    use flate2::Compression;

    use super::*;

    const NS: &str = r#"xmlns="http://www.sitemaps.org/schemas/sitemap/0.9""#;

    fn urlset(locs: &[&str]) -> String {
        let entries: String = locs
            .iter()
            .map(|l| {
                format!(
                    "  <url>\n    <loc>{l}</loc>\n    <lastmod>2024-01-01</lastmod>\n  </url>\n"
                )
            })
            .collect();
        format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset {NS}>\n{entries}</urlset>\n")
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    }

    fn read(body: &[u8]) -> Sitemap {
        parse(body, &Bounds::default()).expect("a sitemap")
    }

    fn small(max_bytes: usize, max_urls: usize) -> Bounds {
        Bounds {
            max_bytes,
            max_urls,
        }
    }

    #[test]
    fn a_urlset_gives_its_locs_in_order_trimmed() {
        let body = urlset(&["http://a.test/1", "  http://a.test/2\n ", "http://a.test/3"]);
        let sitemap = read(body.as_bytes());
        assert_eq!(sitemap.kind, Kind::UrlSet);
        assert_eq!(
            sitemap.locs,
            ["http://a.test/1", "http://a.test/2", "http://a.test/3"]
        );
        assert_eq!((sitemap.gzipped, sitemap.cut), (false, None));
    }

    #[test]
    fn a_sitemap_index_gives_its_sitemaps() {
        let body = format!(
            "<sitemapindex {NS}><sitemap><loc>http://a.test/s1.xml.gz</loc>\
             <lastmod>2024-01-01</lastmod></sitemap>\
             <sitemap><loc>http://a.test/s2.xml</loc></sitemap></sitemapindex>"
        );
        let sitemap = read(body.as_bytes());
        assert_eq!(sitemap.kind, Kind::Index);
        assert_eq!(
            sitemap.locs,
            ["http://a.test/s1.xml.gz", "http://a.test/s2.xml"]
        );
    }

    #[test]
    fn a_gzipped_sitemap_is_inflated_by_its_magic_bytes_in_one_or_more_members() {
        let body = urlset(&["http://a.test/gz"]);
        let sitemap = read(&gzip(body.as_bytes()));
        assert!(sitemap.gzipped);
        assert_eq!(sitemap.locs, ["http://a.test/gz"]);
        let (head, tail) = body.split_at(body.len() / 2);
        let mut two = gzip(head.as_bytes());
        two.extend(gzip(tail.as_bytes()));
        assert_eq!(
            read(&two).locs,
            ["http://a.test/gz"],
            "concatenated members"
        );
    }

    #[test]
    fn a_namespace_prefix_and_extensions_are_read_by_local_name_and_place() {
        let body = r#"<?xml version="1.0"?>
<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"
    xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <sm:url>
    <sm:loc>http://a.test/page</sm:loc>
    <image:image><image:loc>http://a.test/photo.jpg</image:loc></image:image>
  </sm:url>
  <sm:other><sm:loc>http://a.test/not-an-entry</sm:loc></sm:other>
</sm:urlset>"#;
        assert_eq!(read(body.as_bytes()).locs, ["http://a.test/page"]);
    }

    #[test]
    fn cdata_entities_and_a_bare_ampersand_in_a_loc_are_resolved() {
        let body = urlset(&[
            "<![CDATA[http://a.test/c?a=1&b=2]]>",
            "http://a.test/e?a=1&amp;b=2&#38;c=3&#x26;d=&lt;&gt;",
            "http://a.test/bare?a=1&b=2",
            "http://a.test/&unknown;",
            "http://a.test/<![CDATA[mixed]]>/&quot;x&apos;",
        ]);
        assert_eq!(
            read(body.as_bytes()).locs,
            [
                "http://a.test/c?a=1&b=2",
                "http://a.test/e?a=1&b=2&c=3&d=<>",
                "http://a.test/bare?a=1&b=2",
                "http://a.test/&unknown;",
                "http://a.test/mixed/\"x'",
            ]
        );
    }

    #[test]
    fn empty_locs_and_an_empty_urlset_give_nothing() {
        let sitemap = read(urlset(&["", "   "]).as_bytes());
        assert!(sitemap.locs.is_empty());
        assert_eq!(sitemap.cut, None);
        let empty = read(format!("<urlset {NS}/>").as_bytes());
        assert_eq!((empty.kind, empty.locs.len()), (Kind::UrlSet, 0));
        assert_eq!(parse(b"", &Bounds::default()), Err(SitemapError::Empty));
        assert_eq!(
            parse(b"\xef\xbb\xbf \n\t ", &Bounds::default()),
            Err(SitemapError::Empty)
        );
    }

    #[test]
    fn a_byte_order_mark_and_leading_whitespace_are_skipped() {
        let body = format!("\u{feff}\n\n  {}", urlset(&["http://a.test/bom"]));
        assert_eq!(read(body.as_bytes()).locs, ["http://a.test/bom"]);
    }

    #[test]
    fn an_html_page_is_no_sitemap() {
        let body = b"<!doctype html><html><body><a href=/x>x</a></body></html>";
        assert_eq!(
            parse(body, &Bounds::default()),
            Err(SitemapError::NotASitemap("html".into()))
        );
    }

    #[test]
    fn a_text_sitemap_gives_its_url_lines() {
        let body = b"http://a.test/1\r\n\n# not a url\nHTTPS://a.test/2  \nftp://a.test/3\n";
        let sitemap = read(body);
        assert_eq!(sitemap.kind, Kind::Text);
        assert_eq!(sitemap.locs, ["http://a.test/1", "HTTPS://a.test/2"]);
        assert_eq!(
            parse(b"just words\n", &Bounds::default()),
            Err(SitemapError::NoUrls)
        );
    }

    #[test]
    fn xml_that_breaks_off_keeps_the_urls_before_it() {
        let body = urlset(&["http://a.test/1", "http://a.test/2"]);
        let cut = &body.as_bytes()[..body.find("</url>\n  <url>").unwrap() + 30];
        let sitemap = read(cut);
        assert_eq!(sitemap.locs, ["http://a.test/1"]);
        assert!(
            matches!(sitemap.cut, Some(Cut::Broken(_))),
            "{:?}",
            sitemap.cut
        );
        let bad =
            format!("<urlset {NS}><url><loc>http://a.test/ok</loc></url><url><loc x=\"</urlset>");
        let sitemap = read(bad.as_bytes());
        assert_eq!(sitemap.locs, ["http://a.test/ok"]);
        assert!(matches!(sitemap.cut, Some(Cut::Broken(_))));
    }

    #[test]
    fn more_urls_than_the_cap_keep_the_first_ones_and_say_so() {
        let locs: Vec<String> = (0..MAX_URLS + 10)
            .map(|i| format!("http://a.test/{i}"))
            .collect();
        let refs: Vec<&str> = locs.iter().map(String::as_str).collect();
        let sitemap = read(urlset(&refs).as_bytes());
        assert_eq!(sitemap.locs.len(), MAX_URLS);
        assert_eq!(
            sitemap.locs.last().map(String::as_str),
            Some("http://a.test/49999")
        );
        assert_eq!(sitemap.cut, Some(Cut::TooManyUrls(MAX_URLS)));
        let text = locs.join("\n");
        let sitemap = parse(text.as_bytes(), &small(MAX_BYTES, 3)).unwrap();
        assert_eq!(sitemap.locs.len(), 3);
        assert_eq!(sitemap.cut, Some(Cut::TooManyUrls(3)));
    }

    #[test]
    fn a_gzip_bomb_is_read_up_to_the_byte_cap_only() {
        // 60 MB of whitespace inside a urlset: 60 KB gzipped.
        let mut xml =
            format!("<urlset {NS}><url><loc>http://a.test/first</loc></url>").into_bytes();
        xml.resize(xml.len() + 60_000_000, b' ');
        xml.extend_from_slice(b"<url><loc>http://a.test/after-the-cap</loc></url></urlset>");
        let bomb = gzip(&xml);
        assert!(bomb.len() < 1 << 20, "{} bytes gzipped", bomb.len());
        let sitemap = read(&bomb);
        assert_eq!(sitemap.locs, ["http://a.test/first"]);
        assert_eq!(
            sitemap.cut,
            Some(Cut::TooLarge {
                bytes: MAX_BYTES,
                inflated: true
            })
        );
        let plain = urlset(&["http://a.test/1", "http://a.test/2"]);
        let cut_at = plain.find("</url>").unwrap() + 10;
        let sitemap = parse(plain.as_bytes(), &small(cut_at, MAX_URLS)).unwrap();
        assert_eq!(sitemap.locs, ["http://a.test/1"]);
        assert_eq!(
            sitemap.cut,
            Some(Cut::TooLarge {
                bytes: cut_at,
                inflated: false
            })
        );
        let exact = parse(plain.as_bytes(), &small(plain.len(), MAX_URLS)).unwrap();
        assert_eq!(
            (exact.locs.len(), exact.cut),
            (2, None),
            "a body at the cap is whole"
        );
    }

    #[test]
    fn deep_nesting_costs_no_stack_and_hides_no_entry() {
        let depth = 200_000;
        let mut body = format!("<urlset {NS}><url><loc>http://a.test/1</loc>");
        body.push_str(&"<x>".repeat(depth));
        body.push_str("<loc>http://a.test/deep</loc>");
        body.push_str(&"</x>".repeat(depth));
        body.push_str("</url><url><loc>http://a.test/2</loc></url></urlset>");
        let sitemap = read(body.as_bytes());
        assert_eq!(sitemap.locs, ["http://a.test/1", "http://a.test/2"]);
        assert_eq!(sitemap.cut, None);
        // Never closed at all: cut, not hung.
        let open = format!("<urlset {NS}>{}", "<url>".repeat(depth));
        assert!(matches!(read(open.as_bytes()).cut, Some(Cut::Broken(_))));
    }

    #[test]
    fn garbage_never_panics() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let valid = urlset(&["http://a.test/1", "http://a.test/2?a=1&amp;b"]);
        for round in 0..2_000 {
            let mut body: Vec<u8> = match round % 4 {
                0 => (0..next() % 600).map(|_| next() as u8).collect(),
                1 => {
                    let alphabet = b"<>/&;![CDATA[]]?-\"'=aurlsetloc \n#x";
                    (0..next() % 600)
                        .map(|_| alphabet[next() as usize % alphabet.len()])
                        .collect()
                }
                _ => valid.as_bytes().to_vec(),
            };
            if round % 4 >= 2 && !body.is_empty() {
                for _ in 0..=next() % 4 {
                    let at = next() as usize % body.len();
                    body[at] = next() as u8;
                }
                let keep = next() as usize % (body.len() + 1);
                body.truncate(keep);
            }
            if round % 8 == 3 {
                body = gzip(&body);
                let at = next() as usize % body.len();
                body.truncate(at.max(2));
            }
            let _ = parse(&body, &small(4096, 10));
        }
    }

    #[test]
    fn a_corrupt_gzip_body_is_unreadable_or_cut() {
        let mut bad = gzip(urlset(&["http://a.test/1"]).as_bytes());
        bad.truncate(12);
        assert!(matches!(
            parse(&bad, &Bounds::default()),
            Err(SitemapError::Unreadable(_) | SitemapError::Empty)
        ));
        assert!(parse(b"\x1f\x8bnot gzip at all", &Bounds::default()).is_err());
    }

    #[test]
    fn listed_urls_are_resolved_normalised_on_the_sitemaps_host_and_each_once() {
        let base = Url::parse("http://a.test/sitemaps/s.xml").unwrap();
        let locs: Vec<String> = [
            "https://a.test/secure",
            "http://A.TEST/upper#frag",
            "http://a.test/upper",
            "relative",
            "http://other.test/x",
            "http://www.a.test/x",
            "javascript:alert(1)",
            "mailto:x@a.test",
        ]
        .map(String::from)
        .to_vec();
        let listed = listed(&locs, &base);
        let urls: Vec<&str> = listed.urls.iter().map(Url::as_str).collect();
        assert_eq!(
            urls,
            [
                "https://a.test/secure",
                "http://a.test/upper",
                "http://a.test/sitemaps/relative"
            ]
        );
        assert_eq!((listed.off_host, listed.unusable), (2, 2));
    }
}
