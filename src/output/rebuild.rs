//! The index line of a page's WARC record made again from the record
//! itself, read back from its file: the same bytes the crawl wrote for it
//! when it archived the page (`crawl::shard`'s `archive.rs`). A resume
//! uses it for a page whose record reached the log but whose line a kill
//! lost.
//!
//! Every field comes from the record: the URL (`WARC-Target-URI`), the
//! time (`WARC-Date`, to the second), the digest
//! (`WARC-Payload-Digest`), the length of its gzip member and the offset
//! and file the caller read it at; the status and `mime` from the HTTP
//! head its block starts with, parsed as the fetch parsed it
//! ([`ringcrawl_http1::HeadScan`]), `warc/revisit` for a revisit.
//!
//! Pure: here and not in `ringcrawl-warc` because the line is the crawl's
//! (its head parsed as the fetch parses it, its `mime` as `archive.rs`
//! takes it), which a format crate knows nothing of. Not the reading of
//! the file ([`ringcrawl_warc::read::skim`], the caller's), nor which
//! records lack a line (`crate::state`), nor the lines of records no page
//! stands for (robots.txt, DNS).
#![deny(clippy::arithmetic_side_effects)]

use thiserror::Error;

use ringcrawl_http1::HeadScan;
use ringcrawl_warc::cdxj::{mime_of, write_line, Entry};
use ringcrawl_warc::read::Skimmed;
use ringcrawl_warc::timestamp::parse_rfc3339;

/// Why a record read back gives no page's index line.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub(crate) enum Unindexable {
    /// Not the `response` or `revisit` record a page's log line points at.
    #[error("a {0} record, not a page's response or revisit")]
    Kind(String),
    /// Not the page's record: another URL's.
    #[error("the record of {0}")]
    OtherUrl(String),
    /// No `WARC-Payload-Digest`, which every page's record has.
    #[error("no WARC-Payload-Digest")]
    NoDigest,
    /// A `WARC-Date` that does not read as a time.
    #[error("a WARC-Date that does not read: {0}")]
    Date(String),
    /// The block does not start with a whole HTTP response head.
    #[error("no HTTP response head: {0}")]
    Head(String),
}

/// Append to `out` the index line of `skimmed`, the record of the page
/// `url` whose gzip member lies at `offset` in the WARC file `filename`:
/// the line the crawl wrote for it.
pub(crate) fn page_line(
    skimmed: &Skimmed,
    url: &str,
    offset: u64,
    filename: &str,
    out: &mut Vec<u8>,
) -> Result<(), Unindexable> {
    let record = &skimmed.record;
    let revisit = match record.kind.as_str() {
        "response" => false,
        "revisit" => true,
        other => return Err(Unindexable::Kind(other.to_string())),
    };
    if record.target_uri != url {
        return Err(Unindexable::OtherUrl(record.target_uri.clone()));
    }
    let digest = record
        .payload_digest
        .as_deref()
        .ok_or(Unindexable::NoDigest)?;
    let date = parse_rfc3339(&record.date).ok_or_else(|| Unindexable::Date(record.date.clone()))?;
    // The block holds the head whole (the caller kept at least as many
    // bytes as a head may have): a head cut short is no head.
    let head = HeadScan::new(record.block.len())
        .parse(&record.block)
        .map_err(|e| Unindexable::Head(e.to_string()))?
        .ok_or_else(|| Unindexable::Head("it does not end in the bytes read".into()))?;
    write_line(
        &Entry {
            url: &record.target_uri,
            date,
            mime: if revisit {
                Some("warc/revisit")
            } else {
                head.content_type.as_deref().map(mime_of)
            },
            status: Some(head.status),
            digest,
            length: skimmed.member_len,
            offset,
            filename,
        },
        out,
    );
    Ok(())
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;
    use ringcrawl_warc::read::skim;
    use ringcrawl_warc::{self as warc, payload_sha1, Exchange, RefersTo, Revisit};

    /// The WARC bytes of an exchange (a revisit when `revisit`) after a
    /// warcinfo record, where its main record and its request lie, and
    /// the line the crawl writes for it, as `archive.rs` makes it.
    fn archived(response: &[u8], head_len: usize, revisit: bool) -> (Vec<u8>, u64, u64, Vec<u8>) {
        let ex = Exchange {
            target_uri: "http://a.test/p?q=1",
            ip: None,
            date: SystemTime::UNIX_EPOCH + Duration::from_micros(1_700_000_000_654_321),
            request: b"GET /p?q=1 HTTP/1.1\r\nHost: a.test\r\n\r\n",
            response,
            payload_offset: head_len,
        };
        let of = RefersTo {
            record_id: "<urn:uuid:1>".into(),
            target_uri: "http://a.test/p?q=1".into(),
            date: SystemTime::UNIX_EPOCH,
        };
        let revisit = revisit.then_some(Revisit {
            profile: warc::IDENTICAL_PAYLOAD_DIGEST,
            of: &of,
        });
        // Some bytes before, as in a file.
        let mut bytes = warc::warcinfo("ringcrawl/test", "f.warc.gz", ex.date, &[]);
        let mut group = Vec::new();
        let written = warc::archive(&ex, payload_sha1(&ex), None, revisit, &mut group);
        let request_at = bytes.len() as u64;
        let offset = request_at + written.start as u64;
        bytes.extend(group);
        let head = ringcrawl_http1::HeadScan::new(1 << 16)
            .parse(response)
            .unwrap()
            .unwrap();
        let mut line = Vec::new();
        write_line(
            &Entry {
                url: ex.target_uri,
                date: ex.date,
                mime: if revisit.is_some() {
                    Some("warc/revisit")
                } else {
                    head.content_type.as_deref().map(mime_of)
                },
                status: Some(head.status),
                digest: &written.payload_digest,
                length: written.len as u64,
                offset,
                filename: "f.warc.gz",
            },
            &mut line,
        );
        (bytes, offset, request_at, line)
    }

    fn rebuilt(bytes: &[u8], offset: u64) -> Result<Vec<u8>, Unindexable> {
        let skimmed = skim(&bytes[offset as usize..], 1 << 16).unwrap();
        let mut out = Vec::new();
        page_line(
            &skimmed,
            "http://a.test/p?q=1",
            offset,
            "f.warc.gz",
            &mut out,
        )
        .map(|()| out)
    }

    #[test]
    fn a_page_line_made_from_its_record_is_the_line_the_crawl_wrote() {
        let responses: [&[u8]; 3] = [
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<a href=/x>",
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
            b"HTTP/1.0 301 Moved\nLocation: /y\nContent-Type:  Text/Plain ;x\n\nbody",
        ];
        for response in responses {
            let head_len = memchr::memmem::find(response, b"\n\r\n")
                .map(|i| i + 3)
                .or_else(|| memchr::memmem::find(response, b"\n\n").map(|i| i + 2))
                .unwrap();
            for revisit in [false, true] {
                let (bytes, offset, _, line) = archived(response, head_len, revisit);
                let got = rebuilt(&bytes, offset).unwrap();
                assert_eq!(
                    String::from_utf8(got).unwrap(),
                    String::from_utf8(line).unwrap()
                );
            }
        }
    }

    #[test]
    fn a_record_that_is_not_the_pages_response_gives_no_line() {
        let response = b"HTTP/1.1 200 OK\r\n\r\nhi";
        let (bytes, offset, request_at, _) = archived(response, response.len() - 2, false);
        assert!(matches!(
            rebuilt(&bytes, request_at),
            Err(Unindexable::Kind(kind)) if kind == "request"
        ));
        let skimmed = skim(&bytes[offset as usize..], 1 << 16).unwrap();
        let mut out = Vec::new();
        assert!(matches!(
            page_line(&skimmed, "http://b.test/", offset, "f", &mut out),
            Err(Unindexable::OtherUrl(_))
        ));
        // The head cut by a small keep: no head, not a wrong line.
        let short = skim(&bytes[offset as usize..], 5).unwrap();
        assert!(matches!(
            page_line(&short, "http://a.test/p?q=1", offset, "f", &mut out),
            Err(Unindexable::Head(_))
        ));
        assert!(out.is_empty());
    }
}
