//! What a library user sees of each fetched URL: [`Page`], borrowed, on the
//! shard that fetched it; [`OwnedPage`], for another thread.
//!
//! Not the JSONL record (`crate::output::record`, written whether or not a
//! hook is set), the hooks that see pages (`super::hooks`) nor the page
//! stream's queue (`super::stream`).

use std::time::Duration;

use url::Url;

use crate::job::ErrorKind;
use crate::output::record::Record;

/// One fetched URL as it arrives: the answer (status, headers, body with
/// its content codings undone) or why there is none, the links found in
/// it, and how long it took. Borrowed from the shard that fetched it, for
/// the time of a handler call; [`Page::to_owned`] keeps it.
///
/// Every URL the crawl takes up arrives once: pages, redirects, errors
/// (status `None`, see [`Page::error_kind`]), URLs refused before any fetch.
#[derive(Debug, Clone, Copy)]
pub struct Page<'a> {
    pub(crate) record: &'a Record,
    pub(crate) head: &'a [u8],
    pub(crate) body: &'a [u8],
    pub(crate) links: &'a [Url],
}

impl<'a> Page<'a> {
    /// The URL fetched (normalised).
    pub fn url(&self) -> &'a str {
        &self.record.url
    }

    /// The HTTP status, or `None` if no answer came (see [`Page::error`]).
    pub fn status(&self) -> Option<u16> {
        self.record.status
    }

    /// Why the fetch failed or its answer is incomplete (one line), if it
    /// did or is. A certificate accepted because of `insecure` is a
    /// [`Page::warnings`], not an error.
    pub fn error(&self) -> Option<&'a str> {
        self.record.error.as_deref()
    }

    /// The kind of [`Page::error`] (`Dns`, `Deadline`, `TlsCertificate`,
    /// `RobotsDisallowed`, ...), shown as the JSONL record's `error_kind`.
    pub fn error_kind(&self) -> Option<ErrorKind> {
        self.record.error_kind
    }

    /// What is worth knowing about the fetch that did not fail it (a
    /// certificate accepted only because of `insecure`), as the JSONL
    /// record's `warnings`.
    pub fn warnings(&self) -> &'a [crate::output::record::Warning] {
        &self.record.warnings
    }

    /// The media type of `Content-Type`, lower-cased, without parameters.
    pub fn content_type(&self) -> Option<&'a str> {
        self.record.content_type.as_deref()
    }

    /// The character encoding the page was read with (WHATWG name), for
    /// HTML pages.
    pub fn encoding(&self) -> Option<&'a str> {
        self.record.encoding.as_deref()
    }

    /// The body with its content codings (gzip, br, ...) undone, at most
    /// the crawl's body cap; empty without an answer.
    pub fn body(&self) -> &'a [u8] {
        self.body
    }

    /// The body as text: decoded with the encoding the page was read
    /// with ([`Page::encoding`]; a byte order mark wins, as in browsers),
    /// else as UTF-8; bytes that do not decode become U+FFFD. Borrowed
    /// when nothing had to change.
    pub fn text(&self) -> std::borrow::Cow<'a, str> {
        let encoding = self
            .encoding()
            .and_then(|label| encoding_rs::Encoding::for_label(label.as_bytes()))
            .unwrap_or(encoding_rs::UTF_8);
        encoding.decode(self.body).0
    }

    /// Whether the body was cut: by the body cap, or by a connection or
    /// deadline that ended first.
    pub fn truncated(&self) -> bool {
        self.record.truncated
    }

    /// Why the body is not whole, if it is not: `limit` (cut at the body
    /// cap or another bound of the crawl's) or `transfer` (the connection
    /// or a deadline ended it early).
    pub fn truncated_by(&self) -> Option<&'a str> {
        self.record.truncated_by.as_deref()
    }

    /// The absolute, normalised links of an HTML page, in document order,
    /// whether or not the crawl follows them; empty for anything else.
    pub fn links(&self) -> &'a [Url] {
        self.links
    }

    /// Where a redirect points (absolute), for a 3xx answer.
    pub fn redirect(&self) -> Option<&'a str> {
        self.record.next_url.as_deref()
    }

    /// Links followed from a root to reach this URL (a root is 0; a
    /// redirect keeps its source's depth).
    pub fn depth(&self) -> u32 {
        self.record.depth
    }

    /// The value of the first header named `name` (any case), if its bytes
    /// are UTF-8.
    pub fn header(&self, name: &str) -> Option<&'a str> {
        self.headers()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .and_then(|(_, v)| std::str::from_utf8(v).ok())
    }

    /// Every response header as received, name and value (without the
    /// whitespace around it), in order. Read off the head as it is, with
    /// no allocation: the fetch has parsed and checked it already. A
    /// folded continuation line (obsolete since RFC 7230) is left out.
    pub fn headers(&self) -> impl Iterator<Item = (&'a str, &'a [u8])> + 'a {
        let mut lines = self.head.split(|&b| b == b'\n');
        lines.next();
        lines
            .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
            .take_while(|line| !line.is_empty())
            .filter_map(|line| {
                let colon = memchr::memchr(b':', line)?;
                let (name, value) = line.split_at(colon);
                let name = std::str::from_utf8(name).ok()?;
                if name.is_empty() || name.contains([' ', '\t']) {
                    return None;
                }
                Some((name, value.get(1..).unwrap_or_default().trim_ascii()))
            })
    }

    /// Time of the TCP connect (zero on a reused connection), if one was
    /// made.
    pub fn connect_time(&self) -> Option<Duration> {
        self.record.connect_ms.map(millis)
    }

    /// Time from the start of the fetch to the first byte of the answer.
    pub fn first_byte_time(&self) -> Option<Duration> {
        self.record.first_byte_ms.map(millis)
    }

    /// Time from the start of the fetch (name resolution included) to the
    /// body read and decoded.
    pub fn elapsed(&self) -> Duration {
        millis(self.record.elapsed_ms)
    }

    /// Attempts made (network errors are retried).
    pub fn tries(&self) -> u32 {
        self.record.tries
    }

    /// A copy that outlives the handler call.
    pub fn to_owned(&self) -> OwnedPage {
        OwnedPage {
            record: self.record.clone(),
            head: self.head.to_vec(),
            body: self.body.to_vec(),
            links: self.links.to_vec(),
        }
    }
}

/// A [`Page`] that owns its bytes, as a [`PageStream`](super::stream::PageStream)
/// hands it over; [`OwnedPage::page`] reads it.
#[derive(Debug, Clone)]
pub struct OwnedPage {
    record: Record,
    head: Vec<u8>,
    body: Vec<u8>,
    links: Vec<Url>,
}

impl OwnedPage {
    /// The page, borrowed from this copy.
    pub fn page(&self) -> Page<'_> {
        Page {
            record: &self.record,
            head: &self.head,
            body: &self.body,
            links: &self.links,
        }
    }

    /// The body, taken out of the page (no copy).
    pub fn into_body(self) -> Vec<u8> {
        self.body
    }

    /// Bytes this copy holds, roughly: what it costs a stream's budget.
    pub(crate) fn weight(&self) -> usize {
        self.record.url.len()
            + self.head.len()
            + self.body.len()
            + self.links.iter().map(|l| l.as_str().len()).sum::<usize>()
            + 256
    }
}

fn millis(ms: f64) -> Duration {
    Duration::try_from_secs_f64(ms / 1e3).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page<'a>(record: &'a Record, head: &'a [u8]) -> Page<'a> {
        Page {
            record,
            head,
            body: &[],
            links: &[],
        }
    }

    #[test]
    fn headers_are_read_off_the_head_in_order_trimmed_in_any_case() {
        let record = Record::new("http://a.test/".into(), 0);
        let head = b"HTTP/1.1 200 OK\r\nContent-Type:  text/html \r\nSet-Cookie: a=1\r\n\
                     X-Folded: one\r\n  two\r\nset-cookie: b=2\r\n\r\n";
        let page = page(&record, head);
        let headers: Vec<_> = page.headers().collect();
        assert_eq!(
            headers,
            [
                ("Content-Type", &b"text/html"[..]),
                ("Set-Cookie", b"a=1"),
                ("X-Folded", b"one"),
                ("set-cookie", b"b=2"),
            ]
        );
        assert_eq!(page.header("content-type"), Some("text/html"));
        assert_eq!(page.header("SET-COOKIE"), Some("a=1"));
        assert_eq!(page.header("missing"), None);
    }

    #[test]
    fn a_bare_newline_head_and_no_head_read_too() {
        let record = Record::new("http://a.test/".into(), 0);
        let bare = page(&record, b"HTTP/1.0 200 OK\nServer: x\n\n");
        assert_eq!(bare.header("server"), Some("x"));
        assert_eq!(page(&record, b"").headers().count(), 0);
    }
}
