//! WARC 1.1 (ISO 28500:2017) records written: what the crate root
//! re-exports. Pure: no I/O.
//!
//! What it is:
//! - [`warcinfo`]: the `warcinfo` record that opens a WARC file (software,
//!   format, conformsTo, plus the caller's `key: value` fields).
//! - [`exchange`]: the `request` and `response` records of one HTTP exchange,
//!   built from the raw bytes as they went over the wire (a chunked response
//!   stays chunked), the request pointing at the response with
//!   `WARC-Concurrent-To`; [`archive`] the same with, instead of the
//!   response, a `revisit` record when the payload repeats an earlier one
//!   or a server said it had not changed, and says where the main record
//!   lies for an index.
//! - [`dns_resource`]: a DNS answer as a `resource` record (`dns:` URI).
//!
//! Every record is its own gzip member ("record-at-time" compression, as the
//! WARC spec's annex recommends), so concatenating the outputs of these
//! functions gives a valid `.warc.gz` that indexers can seek into by offset.
//! Headers come in canonical case and a fixed order; digests are SHA-1 in
//! base32 (`sha1:` + 32 characters), as wget, Heritrix and warcio write them.
//!
//! What it is not: the file writer (opening, naming, rotating and flushing
//! `.warc.gz` files is the caller's, which appends these bytes to its
//! file), nor a reader ([`crate::read`] reads one record back).
//!
//! The payload digest is computed over the response bytes after the HTTP head
//! exactly as transmitted (`response[payload_offset..]`), which is what
//! `warcio check` verifies; a chunked body is digested with its chunk framing.
//!
//! Record contents come straight off the network, so nothing here may panic
//! whatever the input: the crate's lints (lib.rs) enforce that outside the tests.

use std::borrow::Cow;
use std::io::Write;
use std::net::IpAddr;

use std::time::SystemTime;

use flate2::write::GzEncoder;
use flate2::Compression;
use sha1::{Digest, Sha1};

use crate::timestamp::{format_date, timestamp14};

/// The `conformsTo` value of the warcinfo record: the WARC 1.1 specification.
pub const CONFORMS_TO: &str =
    "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/";

/// gzip level of each record's member: zlib's default, as warcio and wget use.
const GZIP_LEVEL: u32 = 6;

/// One HTTP exchange as it went over the wire.
#[derive(Debug, Clone, Copy)]
pub struct Exchange<'a> {
    /// The URL fetched (`WARC-Target-URI`).
    pub target_uri: &'a str,
    /// The address connected to (`WARC-IP-Address`), if known.
    pub ip: Option<IpAddr>,
    /// When the response started (`WARC-Date` of both records).
    pub date: SystemTime,
    /// Raw request bytes as sent.
    pub request: &'a [u8],
    /// Raw response bytes as received: head + body exactly as on the wire
    /// (chunked stays chunked).
    pub response: &'a [u8],
    /// Where the HTTP body starts inside `response` (the head's length).
    /// Past the end of `response` means an empty payload.
    pub payload_offset: usize,
}

/// The `warcinfo` record that opens a WARC file, gzipped as its own member.
///
/// `filename` goes in `WARC-Filename`; the block holds `software:
/// SOFTWARE` (the writing program and its version, `ringcrawl/0.1.0`),
/// `format: WARC File Format 1.1`, `conformsTo`, then the caller's `fields`
/// as `key: value` lines (control characters become spaces, so a field
/// cannot break the block's syntax).
pub fn warcinfo(
    software: &str,
    filename: &str,
    date: SystemTime,
    fields: &[(&str, &str)],
) -> Vec<u8> {
    let mut block = String::new();
    block.push_str("software: ");
    block.push_str(&field_value(software));
    block.push_str("\r\n");
    block.push_str("format: WARC File Format 1.1\r\n");
    block.push_str("conformsTo: ");
    block.push_str(CONFORMS_TO);
    block.push_str("\r\n");
    for (key, value) in fields {
        block.push_str(&field_name(key));
        block.push_str(": ");
        block.push_str(&field_value(value));
        block.push_str("\r\n");
    }
    let id = record_id();
    let date = format_date(date);
    let filename = field_value(filename);
    let mut out = Vec::new();
    write_record(
        &[
            ("WARC-Type", "warcinfo"),
            ("WARC-Record-ID", &id),
            ("WARC-Date", &date),
            ("WARC-Filename", &filename),
            ("Content-Type", "application/warc-fields"),
        ],
        block.as_bytes(),
        &mut out,
    );
    out
}

/// The `request` then the `response` record of one exchange, each its own
/// gzip member, appended to `out`. Returns the response's `WARC-Record-ID`
/// (with its angle brackets, as it appears in the header).
///
/// Both records carry `ex.date`; the request has `WARC-Concurrent-To` set to
/// the response's id; the response has `WARC-Payload-Digest` over
/// `response[payload_offset..]`; both have `WARC-Block-Digest`.
pub fn exchange(ex: &Exchange, out: &mut Vec<u8>) -> String {
    exchange_truncated(ex, None, out)
}

/// Why a response record holds less than the whole response
/// (`WARC-Truncated`, WARC 1.1 section 5.13).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Truncated {
    /// Cut at a size limit (`--max-body`).
    Length,
    /// Cut at a time limit (read timeout, deadline).
    Time,
    /// The connection was reset or closed before the response's end.
    Disconnect,
    /// Any other reason (e.g. bad chunk framing).
    Unspecified,
}

impl Truncated {
    /// The header value: `length`, `time`, `disconnect` or `unspecified`.
    pub fn as_str(self) -> &'static str {
        match self {
            Truncated::Length => "length",
            Truncated::Time => "time",
            Truncated::Disconnect => "disconnect",
            Truncated::Unspecified => "unspecified",
        }
    }
}

/// [`exchange`], with `WARC-Truncated: REASON` on the response record when
/// `truncated` is given: for a response whose bytes stop before its end
/// (body cap, timeout, reset). Digests are of the bytes actually stored.
pub fn exchange_truncated(
    ex: &Exchange,
    truncated: Option<Truncated>,
    out: &mut Vec<u8>,
) -> String {
    archive(ex, payload_sha1(ex), truncated, None, out).record_id
}

/// SHA-1 of the payload of `ex` (`response[payload_offset..]`).
pub fn payload_sha1(ex: &Exchange) -> [u8; 20] {
    sha1_raw(ex.response.get(ex.payload_offset..).unwrap_or(&[]))
}

/// The profile of a `revisit` record whose payload equals an earlier one's.
pub const IDENTICAL_PAYLOAD_DIGEST: &str =
    "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";

/// The profile of a `revisit` record of a `304 Not Modified` answer to a
/// conditional request: the server said the earlier capture still holds.
pub const SERVER_NOT_MODIFIED: &str = "http://netpreserve.org/warc/1.1/revisit/server-not-modified";

/// A `revisit` record's profile and the earlier record it refers to.
#[derive(Debug, Clone, Copy)]
pub struct Revisit<'a> {
    /// [`IDENTICAL_PAYLOAD_DIGEST`] or [`SERVER_NOT_MODIFIED`].
    pub profile: &'static str,
    /// The earlier record.
    pub of: &'a RefersTo,
}

/// The earlier record a `revisit` refers to (`WARC-Refers-To-*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefersTo {
    /// Its `WARC-Record-ID`, with the angle brackets.
    pub record_id: String,
    /// Its `WARC-Target-URI`.
    pub target_uri: String,
    /// Its `WARC-Date`.
    pub date: SystemTime,
}

/// Where the main record of a group (the response, revisit or resource)
/// lies in the bytes appended to `out`, and what an index needs of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// Its `WARC-Record-ID`, with the angle brackets.
    pub record_id: String,
    /// Its `WARC-Payload-Digest`.
    pub payload_digest: String,
    /// Offset of its gzip member in `out` (from the start of the buffer,
    /// not from where this call began appending).
    pub start: usize,
    /// Length of its gzip member.
    pub len: usize,
}

/// The `request` record of `ex`, then its `response` record, or, when
/// `revisit` is given, a `revisit` record (of its profile) holding only the
/// response's HTTP head and pointing at the earlier record with
/// `WARC-Refers-To`, `WARC-Refers-To-Target-URI` and
/// `WARC-Refers-To-Date`, as Heritrix and warcio write them. `payload_sha1` is [`payload_sha1`] of `ex`
/// (the caller needed it first, to find the earlier record). `truncated` marks a response cut short
/// (`WARC-Truncated`); a revisit, which omits the payload on purpose,
/// carries none.
pub fn archive(
    ex: &Exchange,
    payload_sha1: [u8; 20],
    truncated: Option<Truncated>,
    revisit: Option<Revisit<'_>>,
    out: &mut Vec<u8>,
) -> Written {
    let request_id = record_id();
    let response_id = record_id();
    let date = format_date(ex.date);
    let uri = field_value(ex.target_uri);
    let ip = ex.ip.map(|ip| ip.to_string());
    let payload_digest = digest_text(&payload_sha1);

    let mut headers: Vec<(&str, &str)> = Vec::with_capacity(12);
    headers.push(("WARC-Type", "request"));
    headers.push(("WARC-Record-ID", &request_id));
    headers.push(("WARC-Date", &date));
    headers.push(("WARC-Target-URI", &uri));
    if let Some(ip) = &ip {
        headers.push(("WARC-IP-Address", ip));
    }
    headers.push(("WARC-Concurrent-To", &response_id));
    headers.push(("Content-Type", "application/http; msgtype=request"));
    write_record(&headers, ex.request, out);

    let start = out.len();
    let refers = revisit.map(|r| {
        (
            r.profile,
            field_value(&r.of.record_id).into_owned(),
            field_value(&r.of.target_uri).into_owned(),
            format_date(r.of.date),
        )
    });
    headers.clear();
    headers.push((
        "WARC-Type",
        if refers.is_some() {
            "revisit"
        } else {
            "response"
        },
    ));
    headers.push(("WARC-Record-ID", &response_id));
    headers.push(("WARC-Date", &date));
    headers.push(("WARC-Target-URI", &uri));
    if let Some(ip) = &ip {
        headers.push(("WARC-IP-Address", ip));
    }
    headers.push(("Content-Type", "application/http; msgtype=response"));
    headers.push(("WARC-Payload-Digest", &payload_digest));
    let block = match &refers {
        Some((profile, id, target, when)) => {
            headers.push(("WARC-Profile", profile));
            headers.push(("WARC-Refers-To", id));
            headers.push(("WARC-Refers-To-Target-URI", target));
            headers.push(("WARC-Refers-To-Date", when));
            ex.response.get(..ex.payload_offset).unwrap_or(ex.response)
        }
        None => {
            if let Some(reason) = truncated {
                headers.push(("WARC-Truncated", reason.as_str()));
            }
            ex.response
        }
    };
    write_record(&headers, block, out);

    Written {
        record_id: response_id,
        payload_digest,
        start,
        len: out.len().saturating_sub(start),
    }
}

/// A DNS answer as a `resource` record, as Heritrix archives them: target
/// `dns:NAME`, `Content-Type: text/dns`, the block the fetch time
/// (14 digits) on a line, then one master-file line per address
/// (`NAME. TTL IN A|AAAA ADDRESS`). `server` is the nameserver asked
/// (`WARC-IP-Address`), if any was (a pinned or literal address has none).
pub fn dns_resource(
    name: &str,
    date: SystemTime,
    server: Option<IpAddr>,
    answers: &[(IpAddr, u32)],
    out: &mut Vec<u8>,
) -> Written {
    let id = record_id();
    let when = format_date(date);
    let name = field_value(name.trim_end_matches('.'));
    let uri = format!("dns:{name}");
    let mut block = timestamp14(date);
    block.push('\n');
    for (ip, ttl) in answers {
        let kind = if ip.is_ipv4() { "A" } else { "AAAA" };
        block.push_str(&format!("{name}.\t{ttl}\tIN\t{kind}\t{ip}\n"));
    }
    let digest = sha1_digest(block.as_bytes());
    let server = server.map(|ip| ip.to_string());
    let mut headers: Vec<(&str, &str)> = Vec::with_capacity(8);
    headers.push(("WARC-Type", "resource"));
    headers.push(("WARC-Record-ID", &id));
    headers.push(("WARC-Date", &when));
    headers.push(("WARC-Target-URI", &uri));
    if let Some(server) = &server {
        headers.push(("WARC-IP-Address", server));
    }
    headers.push(("Content-Type", "text/dns"));
    headers.push(("WARC-Payload-Digest", &digest));
    let start = out.len();
    write_record(&headers, block.as_bytes(), out);
    Written {
        record_id: id,
        payload_digest: digest,
        start,
        len: out.len().saturating_sub(start),
    }
}

/// `sha1:` + the RFC 4648 base32 of the SHA-1 of `bytes`, as WARC digests are
/// written (32 characters, no padding needed for 20 bytes).
pub fn sha1_digest(bytes: &[u8]) -> String {
    digest_text(&sha1_raw(bytes))
}

/// The SHA-1 of `bytes`.
pub fn sha1_raw(bytes: &[u8]) -> [u8; 20] {
    Sha1::digest(bytes).into()
}

/// `sha1:` + the base32 of a SHA-1, as WARC digests are written.
pub fn digest_text(sha1: &[u8; 20]) -> String {
    let mut out = String::from("sha1:");
    out.push_str(&data_encoding::BASE32.encode(sha1));
    out
}

/// A fresh `<urn:uuid:...>` holding a random (version 4) UUID, from
/// fastrand's thread-local generator (wyrand, randomly seeded per thread):
/// fast, no lock and no system call per id, distinct enough within and
/// across processes. Not cryptographic, nor meant to be.
pub fn record_id() -> String {
    let uuid = uuid::Builder::from_random_bytes(fastrand::u128(..).to_le_bytes()).into_uuid();
    format!("<{}>", uuid.urn())
}

/// A header or field value with every control character (CR, LF, ...)
/// replaced by a space, so it stays on its own line.
fn field_value(s: &str) -> Cow<'_, str> {
    if s.chars().any(char::is_control) {
        Cow::Owned(
            s.chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect(),
        )
    } else {
        Cow::Borrowed(s)
    }
}

/// A warc-fields name: control characters, whitespace and `:` become `-`.
fn field_name(s: &str) -> Cow<'_, str> {
    let bad = |c: char| c.is_control() || c.is_whitespace() || c == ':';
    if s.chars().any(bad) {
        Cow::Owned(s.chars().map(|c| if bad(c) { '-' } else { c }).collect())
    } else {
        Cow::Borrowed(s)
    }
}

/// One record, `WARC/1.1` line, `headers` in the order given, then
/// `WARC-Block-Digest` and `Content-Length`, blank line, `block`, CRLF CRLF;
/// appended to `out` as one gzip member.
fn write_record(headers: &[(&str, &str)], block: &[u8], out: &mut Vec<u8>) {
    let mut head = String::with_capacity(512);
    head.push_str("WARC/1.1\r\n");
    for (name, value) in headers {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    head.push_str("WARC-Block-Digest: ");
    head.push_str(&sha1_digest(block));
    head.push_str("\r\nContent-Length: ");
    head.push_str(&block.len().to_string());
    head.push_str("\r\n\r\n");

    let mut gz = GzEncoder::new(out, Compression::new(GZIP_LEVEL));
    // Writing into a Vec cannot fail, so these results carry no information.
    let _ = gz.write_all(head.as_bytes());
    let _ = gz.write_all(block);
    let _ = gz.write_all(b"\r\n\r\n");
    let _ = gz.finish();
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    #[test]
    fn sha1_of_empty_is_the_well_known_digest() {
        // SHA-1("") = da39a3ee5e6b4b0d3255bfef95601890afd80709
        assert_eq!(sha1_digest(b""), "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
    }

    #[test]
    fn record_ids_are_v4_uuids_and_distinct() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..10_000 {
            let id = record_id();
            assert!(id.starts_with("<urn:uuid:") && id.ends_with('>'), "{id}");
            let uuid = &id[10..id.len() - 1];
            let parts: Vec<&str> = uuid.split('-').collect();
            assert_eq!(
                parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
                [8, 4, 4, 4, 12]
            );
            assert!(uuid
                .chars()
                .all(|c| c == '-' || c.is_ascii_digit() || ('a'..='f').contains(&c)));
            assert!(parts[2].starts_with('4'), "{id}");
            assert!(matches!(&parts[3][..1], "8" | "9" | "a" | "b"), "{id}");
            assert!(seen.insert(id));
        }
    }
}
