//! What a WACZ's `indexes/index.cdxj` and `pages/pages.jsonl` hold, made
//! from the crawl's own CDXJ index (written unsorted while crawling, by
//! `ringcrawl_warc::cdxj`'s lines): the index lines sorted, as the WACZ spec
//! requires (byte order of whole lines, as cdxj-indexer's `--sort`), and
//! the page list, one page per HTML page answered 2xx. Pure: bytes in,
//! bytes out.
//!
//! The pages come from the index rather than from the shards: every
//! capture is in it already, with its URL, time, status and `mime`. A
//! capture is a page when its status is 2xx and its `mime` is HTML
//! (`text/html`, `application/xhtml+xml`), or when it is a `revisit`
//! (`--warc-dedup`, `mime` `warc/revisit`) with a 2xx status and the
//! payload digest of such an HTML capture: the same bytes, so the same
//! kind of page. A page's `ts` is its capture's 14-digit timestamp as RFC
//! 3339 (to the second, as the index has it, so a replay tool finds the
//! capture from the page). Its `id` is the first 16 bytes of the SHA-256
//! of its URL and `ts`, in hex: optional in WACZ 1.1.1, but Frictionless
//! (which `wacz validate` runs) reads the list as a table whose columns
//! are the header line's keys, `format`, `id` and `title`, and a page with
//! none of them is a blank row, an error. No `title`: it would mean
//! parsing every page again.
//!
//! Not the ZIP, the files nor the manifest (`wacz/mod.rs`,
//! `wacz/manifest.rs`). The index is the crawl's own file, but is parsed
//! as untrusted all the same: a line that does not read is left out of
//! the pages (and kept in the index as it is).
use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The header line of `pages/pages.jsonl`.
pub(crate) const PAGES_HEADER: &str =
    r#"{"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}"#;

/// One entry of the page list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Page {
    /// Its identifier: a hash of `url` and `ts`.
    pub id: String,
    /// The page's URL (its capture's `WARC-Target-URI`).
    pub url: String,
    /// When it was captured: RFC 3339, UTC, to the second.
    pub ts: String,
}

/// The non-empty lines of `index` (without their `\n`), sorted byte by
/// byte.
pub(crate) fn sorted_lines(index: &[u8]) -> Vec<&[u8]> {
    let mut lines: Vec<&[u8]> = index
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .collect();
    lines.sort_unstable();
    lines
}

/// The fields of an index line's JSON that the page list reads.
#[derive(Deserialize)]
struct Fields {
    url: String,
    #[serde(default)]
    mime: Option<String>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    digest: Option<String>,
}

/// A capture read from one index line.
struct Capture<'a> {
    ts14: &'a [u8],
    fields: Fields,
}

impl Capture<'_> {
    fn is_2xx(&self) -> bool {
        self.fields
            .status
            .as_deref()
            .and_then(|s| s.parse::<u16>().ok())
            .is_some_and(|s| (200..300).contains(&s))
    }

    fn is_html(&self) -> bool {
        matches!(
            self.fields.mime.as_deref(),
            Some("text/html" | "application/xhtml+xml")
        )
    }

    fn is_revisit(&self) -> bool {
        self.fields.mime.as_deref() == Some("warc/revisit")
    }
}

/// `SURT TIMESTAMP14 {JSON}`, or None if the line does not read so.
fn parse(line: &[u8]) -> Option<Capture<'_>> {
    let mut parts = line.splitn(3, |&b| b == b' ');
    let _surt = parts.next()?;
    let ts14 = parts.next()?;
    let fields = serde_json::from_slice(parts.next()?).ok()?;
    Some(Capture { ts14, fields })
}

impl Page {
    /// The page `url` captured at `ts`.
    pub(crate) fn new(url: &str, ts: String) -> Self {
        let mut sha = Sha256::new();
        sha.update(url.as_bytes());
        sha.update(b" ");
        sha.update(ts.as_bytes());
        let id = data_encoding::HEXLOWER.encode(sha.finalize().get(..16).unwrap_or_default());
        Page {
            id,
            url: url.to_string(),
            ts,
        }
    }
}

/// `YYYYMMDDhhmmss` as `YYYY-MM-DDThh:mm:ssZ`; None unless 14 digits.
pub(crate) fn rfc3339_of_ts14(ts14: &[u8]) -> Option<String> {
    if ts14.len() != 14 || !ts14.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let digits = std::str::from_utf8(ts14).ok()?;
    let part = |from: usize, to: usize| digits.get(from..to);
    Some(format!(
        "{}-{}-{}T{}:{}:{}Z",
        part(0, 4)?,
        part(4, 6)?,
        part(6, 8)?,
        part(8, 10)?,
        part(10, 12)?,
        part(12, 14)?
    ))
}

/// The pages of an index (its lines in any order; the pages come in the
/// lines' order), each URL once (its first capture).
pub(crate) fn pages(lines: &[&[u8]]) -> Vec<Page> {
    let captures: Vec<Capture> = lines
        .iter()
        .filter_map(|line| parse(line))
        .filter(|c| c.is_2xx() && (c.is_html() || c.is_revisit()))
        .collect();
    let html_payloads: HashSet<&str> = captures
        .iter()
        .filter(|c| c.is_html())
        .filter_map(|c| c.fields.digest.as_deref())
        .collect();
    let mut seen = HashSet::new();
    let mut pages = Vec::new();
    for capture in &captures {
        let page = capture.is_html()
            || capture
                .fields
                .digest
                .as_deref()
                .is_some_and(|d| html_payloads.contains(d));
        if !page || seen.contains(capture.fields.url.as_str()) {
            continue;
        }
        if let Some(ts) = rfc3339_of_ts14(capture.ts14) {
            seen.insert(capture.fields.url.as_str());
            pages.push(Page::new(&capture.fields.url, ts));
        }
    }
    pages
}

/// `pages/pages.jsonl`: the header line, then a line per page.
pub(crate) fn pages_jsonl(pages: &[Page]) -> Vec<u8> {
    let mut out = Vec::with_capacity(PAGES_HEADER.len() + 1 + pages.len() * 96);
    out.extend_from_slice(PAGES_HEADER.as_bytes());
    out.push(b'\n');
    for page in pages {
        // A struct of two strings always serializes.
        if serde_json::to_writer(&mut out, page).is_ok() {
            out.push(b'\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(surt: &str, ts: &str, url: &str, mime: &str, status: &str, digest: &str) -> String {
        format!(
            "{surt} {ts} {{\"url\": \"{url}\", \"mime\": \"{mime}\", \"status\": \"{status}\", \
             \"digest\": \"{digest}\", \"length\": \"10\", \"offset\": \"0\", \"filename\": \"a.warc.gz\"}}\n"
        )
    }

    #[test]
    fn index_lines_are_sorted_as_whole_lines_in_byte_order() {
        let index = b"test,b)/ 20240101000000 {}\n\ntest,a)/x 20240101000001 {}\ntest,a)/ 20240101000002 {}";
        let sorted = sorted_lines(index);
        assert_eq!(
            sorted,
            [
                &b"test,a)/ 20240101000002 {}"[..],
                b"test,a)/x 20240101000001 {}",
                b"test,b)/ 20240101000000 {}",
            ]
        );
        assert!(sorted_lines(b"").is_empty());
    }

    #[test]
    fn a_14_digit_timestamp_reads_as_rfc_3339_and_anything_else_does_not() {
        assert_eq!(
            rfc3339_of_ts14(b"20231114221320").as_deref(),
            Some("2023-11-14T22:13:20Z")
        );
        assert_eq!(rfc3339_of_ts14(b"2023111422132"), None);
        assert_eq!(rfc3339_of_ts14(b"2023111422132x"), None);
        assert_eq!(rfc3339_of_ts14("２０２３1114221320".as_bytes()), None);
    }

    #[test]
    fn pages_are_the_2xx_html_captures_and_revisits_of_their_payloads() {
        let index = [
            line(
                "test,a)/",
                "20240101000000",
                "http://a.test/",
                "text/html",
                "200",
                "sha1:A",
            ),
            line(
                "test,a)/robots.txt",
                "20240101000000",
                "http://a.test/robots.txt",
                "text/plain",
                "200",
                "sha1:R",
            ),
            line(
                "test,a)/x.css",
                "20240101000001",
                "http://a.test/x.css",
                "text/css",
                "200",
                "sha1:C",
            ),
            line(
                "test,a)/gone",
                "20240101000002",
                "http://a.test/gone",
                "text/html",
                "404",
                "sha1:G",
            ),
            line(
                "test,a)/moved",
                "20240101000003",
                "http://a.test/moved",
                "text/html",
                "301",
                "sha1:M",
            ),
            line(
                "test,a)/xhtml",
                "20240101000004",
                "http://a.test/xhtml",
                "application/xhtml+xml",
                "203",
                "sha1:X",
            ),
            // The same HTML bytes as `/`, archived as a revisit.
            line(
                "test,a)/copy",
                "20240101000005",
                "http://a.test/copy",
                "warc/revisit",
                "200",
                "sha1:A",
            ),
            // A revisit of the stylesheet: not a page.
            line(
                "test,a)/y.css",
                "20240101000006",
                "http://a.test/y.css",
                "warc/revisit",
                "200",
                "sha1:C",
            ),
        ]
        .concat();
        let pages = pages(&sorted_lines(index.as_bytes()));
        let urls: Vec<&str> = pages.iter().map(|p| p.url.as_str()).collect();
        assert_eq!(
            urls,
            [
                "http://a.test/",
                "http://a.test/copy",
                "http://a.test/xhtml"
            ]
        );
        assert_eq!(pages[0].ts, "2024-01-01T00:00:00Z");
        assert_eq!(pages[1].ts, "2024-01-01T00:00:05Z");
    }

    #[test]
    fn a_url_is_one_page_and_lines_that_do_not_read_are_skipped() {
        let index = [
            line(
                "test,a)/",
                "20240101000009",
                "http://a.test/",
                "text/html",
                "200",
                "sha1:B",
            ),
            line(
                "test,a)/",
                "20240101000000",
                "http://a.test/",
                "text/html",
                "200",
                "sha1:A",
            ),
            "test,a)/bad 20240101000000 {not json\n".to_string(),
            "no-fields-at-all\n".to_string(),
            line(
                "test,a)/t",
                "2024",
                "http://a.test/t",
                "text/html",
                "200",
                "sha1:T",
            ),
            line(
                "test,a)/s",
                "20240101000000",
                "http://a.test/s",
                "text/html",
                "two hundred",
                "sha1:S",
            ),
        ]
        .concat();
        let pages = pages(&sorted_lines(index.as_bytes()));
        assert_eq!(
            pages,
            [Page::new("http://a.test/", "2024-01-01T00:00:00Z".into())],
            "the earliest capture of /, nothing else"
        );
    }

    #[test]
    fn the_page_list_starts_with_its_header_and_has_a_json_line_per_page() {
        let out = pages_jsonl(&[
            Page::new("http://a.test/\"q\"", "2024-01-01T00:00:00Z".into()),
            Page::new("http://a.test/", "2024-01-01T00:00:00Z".into()),
        ]);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], PAGES_HEADER);
        let page: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
        assert_eq!(page["url"], "http://a.test/\"q\"");
        assert_eq!(page["ts"], "2024-01-01T00:00:00Z");
        let id = page["id"].as_str().unwrap();
        assert_eq!(id.len(), 32);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
        let other: serde_json::Value = serde_json::from_str(lines[2]).unwrap();
        assert_ne!(other["id"], page["id"], "an id per page");
        assert_eq!(lines.len(), 3);
        assert!(text.ends_with('\n'));
    }
}
