//! One record read back from a `.warc.gz` file this crawler (or an earlier
//! crawl of it) wrote: the gzip member at a known offset, its named header
//! fields and its block. What a recrawl needs of an earlier capture: the
//! response as it was received, to take the page's links from, and the
//! record's id, date and payload digest, for a `revisit` record that
//! refers to it.
//!
//! Pure: the caller reads the file and hands over the bytes from the
//! offset on. Not a general WARC reader (one record, gzipped per record,
//! as `warc::file` writes them) and not the HTTP inside the block.
//!
//! The bytes come from a file that may be damaged or not ours: nothing here
//! may panic, and the block is bounded by the caller's cap.

use std::io::Read;

use flate2::bufread::GzDecoder;
use thiserror::Error;

/// A record read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    /// `WARC-Type`.
    pub kind: String,
    /// `WARC-Record-ID`, with the angle brackets.
    pub record_id: String,
    /// `WARC-Date`, as written.
    pub date: String,
    /// `WARC-Target-URI`.
    pub target_uri: String,
    /// `WARC-Payload-Digest`, if any.
    pub payload_digest: Option<String>,
    /// The record's block (for a `response`, the HTTP response as received).
    pub block: Vec<u8>,
}

/// Why no record could be read at an offset.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The bytes end inside the record's gzip member: read more of the
    /// file and try again.
    #[error("the record goes on past the bytes read")]
    Short,
    /// The record's block is larger than the caller's cap.
    #[error("the record's block is larger than {0} bytes")]
    TooLarge(usize),
    /// Not a gzip member, or a damaged one.
    #[error("not a gzipped WARC record: {0}")]
    Gzip(String),
    /// A gzip member that does not hold a WARC record.
    #[error("not a WARC record: {0}")]
    NotWarc(String),
}

/// Most bytes of a record's WARC header read.
const MAX_HEADER: usize = 64 * 1024;

/// The record whose gzip member starts at `bytes[0]`, its block at most
/// `max_block` bytes. [`ReadError::Short`] when `bytes` ends before the
/// member does.
pub fn record_at(bytes: &[u8], max_block: usize) -> Result<Stored, ReadError> {
    let cap = max_block.saturating_add(MAX_HEADER);
    let mut text = Vec::new();
    let mut member = GzDecoder::new(bytes).take(u64::try_from(cap).unwrap_or(u64::MAX));
    if let Err(e) = member.read_to_end(&mut text) {
        return Err(match e.kind() {
            std::io::ErrorKind::UnexpectedEof => ReadError::Short,
            _ => ReadError::Gzip(e.to_string()),
        });
    }
    let end = memchr::memmem::find(&text, b"\r\n\r\n")
        .filter(|&end| end < MAX_HEADER)
        .ok_or_else(|| ReadError::NotWarc("no end of the WARC header".into()))?;
    let (head, rest) = text.split_at(end);
    let rest = rest.get(4..).unwrap_or_default();
    let head = std::str::from_utf8(head)
        .map_err(|_| ReadError::NotWarc("a WARC header that is not UTF-8".into()))?;
    let mut lines = head.split("\r\n");
    if !lines.next().is_some_and(|v| v.starts_with("WARC/1.")) {
        return Err(ReadError::NotWarc("no WARC/1.x version line".into()));
    }
    let fields: Vec<(&str, &str)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim(), value.trim()))
        .collect();
    let field = |name: &str| {
        fields
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| (*v).to_string())
    };
    let length: usize = field("Content-Length")
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| ReadError::NotWarc("no Content-Length".into()))?;
    if length > max_block {
        return Err(ReadError::TooLarge(max_block));
    }
    let block = rest
        .get(..length)
        .ok_or_else(|| ReadError::NotWarc("a block shorter than its Content-Length".into()))?
        .to_vec();
    let required = |name: &str| field(name).ok_or_else(|| ReadError::NotWarc(format!("no {name}")));
    Ok(Stored {
        kind: required("WARC-Type")?,
        record_id: required("WARC-Record-ID")?,
        date: required("WARC-Date")?,
        target_uri: required("WARC-Target-URI")?,
        payload_digest: field("WARC-Payload-Digest"),
        block,
    })
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;
    use crate::output::warc::{archive, payload_sha1, Exchange};

    fn exchange_bytes() -> (Vec<u8>, usize, String) {
        let response = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nETag: \"x\"\r\n\r\nhello";
        let ex = Exchange {
            target_uri: "http://a.test/p",
            ip: None,
            date: SystemTime::UNIX_EPOCH + Duration::from_micros(1_700_000_000_123_456),
            request: b"GET /p HTTP/1.1\r\nHost: a.test\r\n\r\n",
            response,
            payload_offset: response.len() - 5,
        };
        let mut out = Vec::new();
        let written = archive(&ex, payload_sha1(&ex), None, None, &mut out);
        (out, written.start, written.record_id)
    }

    #[test]
    fn the_response_record_at_its_offset_reads_back_whole() {
        let (bytes, start, id) = exchange_bytes();
        let stored = record_at(&bytes[start..], 1 << 20).unwrap();
        assert_eq!(stored.kind, "response");
        assert_eq!(stored.record_id, id);
        assert_eq!(stored.target_uri, "http://a.test/p");
        assert_eq!(stored.date, "2023-11-14T22:13:20.123456Z");
        assert!(stored.payload_digest.unwrap().starts_with("sha1:"));
        assert_eq!(
            stored.block,
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nETag: \"x\"\r\n\r\nhello"
        );
        // The request record before it reads back too, as a request.
        assert_eq!(record_at(&bytes, 1 << 20).unwrap().kind, "request");
    }

    #[test]
    fn a_record_cut_short_asks_for_more_and_a_small_cap_refuses_it() {
        let (bytes, start, _) = exchange_bytes();
        let member = &bytes[start..];
        for cut in [1, 10, member.len() / 2, member.len() - 1] {
            assert_eq!(
                record_at(&member[..cut], 1 << 20),
                Err(ReadError::Short),
                "{cut}"
            );
        }
        assert_eq!(record_at(member, 4), Err(ReadError::TooLarge(4)));
    }

    #[test]
    fn bytes_that_are_no_record_are_refused_without_panic() {
        assert!(record_at(b"", 100).is_err());
        assert!(matches!(
            record_at(b"plain text, not gzip", 100),
            Err(ReadError::Gzip(_))
        ));
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, b"HTTP/1.1 200 OK\r\n\r\n").unwrap();
        let not_warc = gz.finish().unwrap();
        assert!(matches!(
            record_at(&not_warc, 100),
            Err(ReadError::NotWarc(_))
        ));
    }
}
