//! WARC 1.1 (ISO 28500:2017) record serialisation, and a minimal reader for
//! tests and tools. Pure: no I/O.
//!
//! What it is:
//! - [`warcinfo`]: the `warcinfo` record that opens a WARC file (software,
//!   format, conformsTo, plus the caller's `key: value` fields).
//! - [`exchange`]: the `request` and `response` records of one HTTP exchange,
//!   built from the raw bytes as they went over the wire (a chunked response
//!   stays chunked), the request pointing at the response with
//!   `WARC-Concurrent-To`; [`archive`] the same with, instead of the
//!   response, a `revisit` record when the payload repeats an earlier one
//!   (`--warc-dedup`), and says where the main record lies for an index.
//! - [`dns_resource`]: a DNS answer as a `resource` record (`dns:` URI).
//! - [`read_records`]: parse a whole `.warc.gz` (or plain `.warc`) back into
//!   [`WarcRecord`]s. Used by the tests and by tools that inspect output; it
//!   reads everything into memory and is not meant for the crawl's hot path.
//!
//! Every record is its own gzip member ("record-at-time" compression, as the
//! WARC spec's annex recommends), so concatenating the outputs of these
//! functions gives a valid `.warc.gz` that indexers can seek into by offset.
//! Headers come in canonical case and a fixed order; digests are SHA-1 in
//! base32 (`sha1:` + 32 characters), as wget, Heritrix and warcio write them.
//!
//! What it is not: the file writer. Opening, naming, rotating and flushing
//! `.warc.gz` files belongs to the per-shard writer, which calls these
//! functions and appends their bytes to its file.
//!
//! The payload digest is computed over the response bytes after the HTTP head
//! exactly as transmitted (`response[payload_offset..]`), which is what
//! `warcio check` verifies; a chunked body is digested with its chunk framing.
//!
//! Record contents come straight off the network, so nothing here may panic
//! whatever the input: the lints below enforce that for the non-test code.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::unreachable,
    clippy::todo,
    clippy::unimplemented,
    clippy::arithmetic_side_effects
)]

pub mod dedup;
pub mod file;

use std::borrow::Cow;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::io::{Read, Write};
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

pub use crate::output::timestamp::format_date;

use flate2::write::GzEncoder;
use flate2::Compression;
use sha1::{Digest, Sha1};

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
/// ringcrawl/VERSION`, `format: WARC File Format 1.1`, `conformsTo`, then the
/// caller's `fields` as `key: value` lines (control characters become spaces,
/// so a field cannot break the block's syntax).
pub fn warcinfo(filename: &str, date: SystemTime, fields: &[(&str, &str)]) -> Vec<u8> {
    let mut block = String::new();
    block.push_str(concat!(
        "software: ringcrawl/",
        env!("CARGO_PKG_VERSION"),
        "\r\n"
    ));
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
    /// Offset of its gzip member from where this call started appending.
    pub start: usize,
    /// Length of its gzip member.
    pub len: usize,
}

/// The `request` record of `ex`, then its `response` record, or, when
/// `revisit_of` is given, a `revisit` record (profile
/// [`IDENTICAL_PAYLOAD_DIGEST`]) holding only the response's HTTP head and
/// pointing at the earlier record with `WARC-Refers-To`,
/// `WARC-Refers-To-Target-URI` and `WARC-Refers-To-Date`, as Heritrix and
/// warcio write them. `payload_sha1` is [`payload_sha1`] of `ex`
/// (the caller needed it first, to find the earlier record). `truncated` marks a response cut short
/// (`WARC-Truncated`); a revisit, which omits the payload on purpose,
/// carries none.
pub fn archive(
    ex: &Exchange,
    payload_sha1: [u8; 20],
    truncated: Option<Truncated>,
    revisit_of: Option<&RefersTo>,
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
    let refers = revisit_of.map(|r| {
        (
            field_value(&r.record_id).into_owned(),
            field_value(&r.target_uri).into_owned(),
            format_date(r.date),
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
        Some((id, target, when)) => {
            headers.push(("WARC-Profile", IDENTICAL_PAYLOAD_DIGEST));
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
    let mut block = crate::output::timestamp::timestamp14(date);
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
    out.push_str(&base32(sha1));
    out
}

/// RFC 4648 base32: uppercase alphabet `A-Z2-7`, padded with `=` to a
/// multiple of 8 characters.
pub fn base32(bytes: &[u8]) -> String {
    fn symbol(v: u64) -> char {
        // Masked to 0..32, so neither addition can overflow.
        let v = (v & 31) as u8;
        if v < 26 {
            char::from(b'A'.wrapping_add(v))
        } else {
            char::from(b'2'.wrapping_add(v.wrapping_sub(26)))
        }
    }
    let mut out = String::with_capacity((bytes.len() / 5).saturating_add(1).saturating_mul(8));
    // `acc` never holds more than 12 bits of interest (< 5 left + 8 new).
    let mut acc: u64 = 0;
    let mut bits: u32 = 0;
    for &b in bytes {
        acc = (acc.wrapping_shl(8) | u64::from(b)) & 0xfff;
        bits = bits.wrapping_add(8);
        while bits >= 5 {
            bits = bits.wrapping_sub(5);
            out.push(symbol(acc.wrapping_shr(bits)));
        }
    }
    if bits > 0 {
        out.push(symbol(acc.wrapping_shl(5u32.wrapping_sub(bits))));
    }
    // Pad the last group of 8 symbols: a final group of 1, 2, 3 or 4 bytes
    // gives 2, 4, 5 or 7 symbols.
    let pad = match bytes.len() % 5 {
        1 => 6,
        2 => 4,
        3 => 3,
        4 => 1,
        _ => 0,
    };
    out.extend(std::iter::repeat_n('=', pad));
    out
}

/// A fresh `<urn:uuid:...>` holding a random (version 4) UUID.
///
/// Ids come from SplitMix64 over a per-process counter, seeded once from
/// std's randomly keyed hasher mixed with the time and the process id: fast,
/// lock-free, distinct within a process, and unpredictable enough to be
/// distinct across processes. Not cryptographic, nor meant to be.
pub fn record_id() -> String {
    let hi = u128::from(next_random());
    let lo = u128::from(next_random());
    let mut x = hi.wrapping_shl(64) | lo;
    x = (x & !(0xf_u128 << 76)) | (0x4_u128 << 76); // version 4
    x = (x & !(0x3_u128 << 62)) | (0x2_u128 << 62); // variant 10xx (RFC 9562)
    format!(
        "<urn:uuid:{:08x}-{:04x}-{:04x}-{:04x}-{:012x}>",
        x.wrapping_shr(96) as u32,
        x.wrapping_shr(80) as u16,
        x.wrapping_shr(64) as u16,
        x.wrapping_shr(48) as u16,
        x & 0xffff_ffff_ffff
    )
}

fn next_random() -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;
    let seed = *SEED.get_or_init(|| {
        let mut h = RandomState::new().build_hasher();
        if let Ok(d) = SystemTime::now().duration_since(UNIX_EPOCH) {
            h.write_u128(d.as_nanos());
        }
        h.write_u32(std::process::id());
        h.finish()
    });
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    // SplitMix64: a bijection of the counter, so no repeats within 2^64 calls.
    let mut z = seed.wrapping_add(n.wrapping_add(1).wrapping_mul(GAMMA));
    z = (z ^ z.wrapping_shr(30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ z.wrapping_shr(27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ z.wrapping_shr(31)
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

/// One parsed WARC record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WarcRecord {
    /// Headers in file order, names as written (the `WARC/1.x` line excluded).
    pub headers: Vec<(String, String)>,
    /// The record block: exactly `Content-Length` bytes.
    pub block: Vec<u8>,
}

impl WarcRecord {
    /// Value of the first header called `name` (ASCII case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Parse a whole `.warc.gz` (concatenated gzip members) into records; input
/// that does not start with the gzip magic is read as an uncompressed WARC.
///
/// For tests and tools: it decompresses everything into memory. Malformed
/// input gives `Err` with a message, never a panic.
pub fn read_records(gz: &[u8]) -> Result<Vec<WarcRecord>, String> {
    if gz.starts_with(&[0x1f, 0x8b]) {
        let mut data = Vec::new();
        flate2::read::MultiGzDecoder::new(gz)
            .read_to_end(&mut data)
            .map_err(|e| format!("gzip: {e}"))?;
        parse_records(&data)
    } else {
        parse_records(gz)
    }
}

fn parse_records(data: &[u8]) -> Result<Vec<WarcRecord>, String> {
    let mut records = Vec::new();
    let mut rest = data;
    let mut offset = 0usize;
    while !rest.is_empty() {
        let (record, used) = parse_record(rest)
            .map_err(|e| format!("record {} at byte {offset}: {e}", records.len()))?;
        records.push(record);
        rest = rest.get(used..).unwrap_or(&[]);
        offset = offset.saturating_add(used);
    }
    Ok(records)
}

/// One record at the start of `data`, and the bytes it took (including the
/// closing CRLF CRLF).
fn parse_record(data: &[u8]) -> Result<(WarcRecord, usize), String> {
    let head_end = find(data, b"\r\n\r\n").ok_or("no end of headers (CRLF CRLF)")?;
    let head = data.get(..head_end).ok_or("headers out of range")?;
    let head = std::str::from_utf8(head).map_err(|_| "headers are not UTF-8".to_string())?;
    let mut lines = head.split("\r\n");
    let version = lines.next().unwrap_or("");
    if !(version.starts_with("WARC/") && version.len() > 5) {
        let shown: String = version.chars().take(40).collect();
        return Err(format!("expected a WARC/x.y line, found {shown:?}"));
    }
    let mut headers: Vec<(String, String)> = Vec::new();
    for line in lines {
        if line.starts_with([' ', '\t']) {
            // Folded continuation of the previous header's value.
            let (_, value) = headers
                .last_mut()
                .ok_or("continuation line before any header")?;
            value.push(' ');
            value.push_str(line.trim());
            continue;
        }
        let (name, value) = line.split_once(':').ok_or_else(|| {
            format!(
                "header line without ':': {:?}",
                line.chars().take(40).collect::<String>()
            )
        })?;
        if name.is_empty() || name.contains([' ', '\t']) {
            return Err(format!("bad header name {name:?}"));
        }
        headers.push((name.to_string(), value.trim().to_string()));
    }
    let length = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("Content-Length"))
        .ok_or("no Content-Length")?
        .1
        .parse::<usize>()
        .map_err(|e| format!("bad Content-Length: {e}"))?;
    let start = head_end.checked_add(4).ok_or("length overflow")?;
    let end = start.checked_add(length).ok_or("length overflow")?;
    let block = data
        .get(start..end)
        .ok_or_else(|| format!("block of {length} bytes runs past the end of the data"))?;
    let after = end.checked_add(4).ok_or("length overflow")?;
    if data.get(end..after) != Some(b"\r\n\r\n".as_slice()) {
        return Err("block not followed by CRLF CRLF".into());
    }
    Ok((
        WarcRecord {
            headers,
            block: block.to_vec(),
        },
        after,
    ))
}

/// Position of the first `needle` in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
#[allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::arithmetic_side_effects
)]
mod tests {
    use super::*;

    #[test]
    fn base32_rfc4648_vectors() {
        for (input, want) in [
            ("", ""),
            ("f", "MY======"),
            ("fo", "MZXQ===="),
            ("foo", "MZXW6==="),
            ("foob", "MZXW6YQ="),
            ("fooba", "MZXW6YTB"),
            ("foobar", "MZXW6YTBOI======"),
        ] {
            assert_eq!(base32(input.as_bytes()), want, "{input:?}");
        }
    }

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

    #[test]
    fn control_characters_cannot_break_lines() {
        let out = warcinfo(
            "a\r\nWARC-Type: x.warc.gz",
            UNIX_EPOCH,
            &[("evil\r\nkey: x", "v\r\nWARC/1.1"), ("ok", "fine")],
        );
        let recs = read_records(&out).unwrap();
        assert_eq!(recs.len(), 1);
        let r = &recs[0];
        assert_eq!(r.header("WARC-Type"), Some("warcinfo"));
        assert_eq!(r.header("warc-filename"), Some("a  WARC-Type: x.warc.gz"));
        let block = String::from_utf8(r.block.clone()).unwrap();
        assert!(block.contains("evil--key--x: v  WARC/1.1\r\n"), "{block}");
        assert!(block.ends_with("ok: fine\r\n"), "{block}");
    }

    #[test]
    fn payload_offset_past_the_end_means_an_empty_payload() {
        let mut out = Vec::new();
        exchange(
            &Exchange {
                target_uri: "http://a.test/",
                ip: None,
                date: UNIX_EPOCH,
                request: b"GET / HTTP/1.0\r\n\r\n",
                response: b"HTTP/1.0 204 No Content\r\n\r\n",
                payload_offset: 1000,
            },
            &mut out,
        );
        let recs = read_records(&out).unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].header("WARC-IP-Address"), None);
        assert_eq!(
            recs[1].header("WARC-Payload-Digest"),
            Some(sha1_digest(b"").as_str())
        );
    }

    #[test]
    fn truncated_responses_say_why() {
        let ex = Exchange {
            target_uri: "http://a.test/",
            ip: None,
            date: UNIX_EPOCH,
            request: b"GET / HTTP/1.0\r\n\r\n",
            response: b"HTTP/1.0 200 OK\r\nContent-Length: 10\r\n\r\nabc",
            payload_offset: 39,
        };
        let mut out = Vec::new();
        exchange(&ex, &mut out);
        let recs = read_records(&out).unwrap();
        assert_eq!(recs[1].header("WARC-Truncated"), None);
        for reason in [
            Truncated::Length,
            Truncated::Time,
            Truncated::Disconnect,
            Truncated::Unspecified,
        ] {
            let mut out = Vec::new();
            exchange_truncated(&ex, Some(reason), &mut out);
            let recs = read_records(&out).unwrap();
            assert_eq!(recs[0].header("WARC-Truncated"), None);
            assert_eq!(recs[1].header("WARC-Truncated"), Some(reason.as_str()));
            assert_eq!(
                recs[1].header("WARC-Payload-Digest"),
                Some(sha1_digest(b"abc").as_str())
            );
        }
    }

    #[test]
    fn reader_rejects_malformed_input() {
        let ok = b"WARC/1.1\r\nContent-Length: 2\r\n\r\nab\r\n\r\n";
        assert_eq!(read_records(ok).unwrap()[0].block, b"ab");
        assert_eq!(read_records(b"").unwrap(), vec![]);
        for bad in [
            &b"WARC/1.1\r\nContent-Length: 3\r\n\r\nab\r\n\r\n"[..],
            b"WARC/1.1\r\nContent-Length: 2\r\n\r\nab",
            b"WARC/1.1\r\n\r\nab\r\n\r\n",
            b"HTTP/1.1\r\nContent-Length: 0\r\n\r\n\r\n\r\n",
            b"WARC/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n",
            b"WARC/1.1\r\nno colon\r\n\r\n",
            b"WARC/1.1\r\nContent-Length: 0\r\n",
            b"\x1f\x8b\x08garbage",
        ] {
            assert!(
                read_records(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
