//! One record read back from a `.warc.gz` file this crawler (or an earlier
//! crawl of it) wrote: the gzip member at a known offset, its named header
//! fields and its block. What a recrawl needs of an earlier capture: the
//! response as it was received, to take the page's links from, and the
//! record's id, date and payload digest, for a `revisit` record that
//! refers to it ([`record_at`]). What a resume needs to rebuild a lost
//! index line: the header, the start of the block (the HTTP head) and the
//! length of the member ([`skim`]).
//!
//! Pure: the caller reads the file and hands over the bytes from the
//! offset on (or a reader positioned there). Not a general WARC reader
//! (one record, gzipped per record, as [`crate::archive`] writes them) and
//! not the HTTP inside the block.
//!
//! The bytes come from a file that may be damaged or not ours: nothing here
//! may panic, and what is held is bounded by the caller's cap.

use std::io::{BufRead, Read};

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
    member.read_to_end(&mut text).map_err(gzip_error)?;
    let (mut stored, start, length) = header(&text)?;
    if length > max_block {
        return Err(ReadError::TooLarge(max_block));
    }
    stored.block = text
        .get(start..)
        .and_then(|rest| rest.get(..length))
        .ok_or_else(|| ReadError::NotWarc("a block shorter than its Content-Length".into()))?
        .to_vec();
    Ok(stored)
}

/// A record skimmed by [`skim`]: what an index line needs of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skimmed {
    /// The record, its `block` cut to the first bytes asked for.
    pub record: Stored,
    /// Bytes of its gzip member (what the index calls its length).
    pub member_len: u64,
}

/// The record whose gzip member `reader` starts at, with only the first
/// `keep` bytes of its block (a response's HTTP head), and the length of
/// the member: the rest is read through and dropped, so a record of any
/// size costs its header and `keep` bytes. [`ReadError::Short`] when the
/// stream ends inside the member.
pub fn skim<R: BufRead>(reader: R, keep: usize) -> Result<Skimmed, ReadError> {
    let mut member = GzDecoder::new(Counted {
        inner: reader,
        consumed: 0,
    });
    let cap = keep.saturating_add(MAX_HEADER);
    let mut text = Vec::new();
    (&mut member)
        .take(u64::try_from(cap).unwrap_or(u64::MAX))
        .read_to_end(&mut text)
        .map_err(gzip_error)?;
    // To the member's end: its trailer read, the count is its length.
    std::io::copy(&mut member, &mut std::io::sink()).map_err(gzip_error)?;
    let member_len = member.get_ref().consumed;
    let (mut stored, start, length) = header(&text)?;
    let block = text.get(start..).unwrap_or_default();
    stored.block = block.get(..length.min(keep)).unwrap_or(block).to_vec();
    Ok(Skimmed {
        record: stored,
        member_len,
    })
}

/// A reader that counts the bytes taken from it.
struct Counted<R> {
    inner: R,
    consumed: u64,
}

impl<R: BufRead> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed = self.consumed.saturating_add(n as u64);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.inner.consume(amt);
        self.consumed = self.consumed.saturating_add(amt as u64);
    }
}

fn gzip_error(e: std::io::Error) -> ReadError {
    match e.kind() {
        std::io::ErrorKind::UnexpectedEof => ReadError::Short,
        _ => ReadError::Gzip(e.to_string()),
    }
}

/// The named fields of the record whose decompressed bytes `text` starts
/// with (its block left empty), where its block starts in `text` and its
/// `Content-Length`.
fn header(text: &[u8]) -> Result<(Stored, usize, usize), ReadError> {
    let end = memchr::memmem::find(text, b"\r\n\r\n")
        .filter(|&end| end < MAX_HEADER)
        .ok_or_else(|| ReadError::NotWarc("no end of the WARC header".into()))?;
    let head = text.get(..end).unwrap_or_default();
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
    let required = |name: &str| field(name).ok_or_else(|| ReadError::NotWarc(format!("no {name}")));
    let stored = Stored {
        kind: required("WARC-Type")?,
        record_id: required("WARC-Record-ID")?,
        date: required("WARC-Date")?,
        target_uri: required("WARC-Target-URI")?,
        payload_digest: field("WARC-Payload-Digest"),
        block: Vec::new(),
    };
    Ok((stored, end.saturating_add(4), length))
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;
    use crate::{archive, payload_sha1, Exchange};

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
    fn a_skimmed_record_keeps_its_header_and_block_start_and_measures_its_member() {
        let (bytes, start, id) = exchange_bytes();
        let mut file = bytes.clone();
        // Another member after it: the skim stops at its own member's end.
        file.extend_from_slice(&bytes[..start]);
        let skimmed = skim(&file[start..], 8).unwrap();
        assert_eq!(skimmed.member_len, (bytes.len() - start) as u64);
        assert_eq!(skimmed.record.kind, "response");
        assert_eq!(skimmed.record.record_id, id);
        assert_eq!(skimmed.record.block, b"HTTP/1.1");
        // The request member before it, measured the same way.
        let request = skim(&file[..], 1 << 20).unwrap();
        assert_eq!(request.record.kind, "request");
        assert_eq!(request.member_len, start as u64);
        for cut in [0, 1, 10, bytes.len() - start - 1] {
            assert!(
                skim(&bytes[start..start + cut], 8).is_err(),
                "a member cut at {cut} is no record"
            );
        }
        assert_eq!(
            skim(&bytes[start..bytes.len() - 1], 8),
            Err(ReadError::Short)
        );
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
