//! WARC 1.1 (ISO 28500:2017) record serialisation, and a minimal reader for
//! tests and tools. Pure: no I/O.
//!
//! What it is:
//! - [`warcinfo`]: the `warcinfo` record that opens a WARC file (software,
//!   format, conformsTo, plus the caller's `key: value` fields).
//! - [`exchange`]: the `request` and `response` records of one HTTP exchange,
//!   built from the raw bytes as they went over the wire (a chunked response
//!   stays chunked), the request pointing at the response with
//!   `WARC-Concurrent-To`.
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

pub mod file;

use std::borrow::Cow;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::io::{Read, Write};
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

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
    let request_id = record_id();
    let response_id = record_id();
    let date = format_date(ex.date);
    let uri = field_value(ex.target_uri);
    let ip = ex.ip.map(|ip| ip.to_string());
    let payload = ex.response.get(ex.payload_offset..).unwrap_or(&[]);
    let payload_digest = sha1_digest(payload);

    let mut headers: Vec<(&str, &str)> = Vec::with_capacity(8);
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

    headers.clear();
    headers.push(("WARC-Type", "response"));
    headers.push(("WARC-Record-ID", &response_id));
    headers.push(("WARC-Date", &date));
    headers.push(("WARC-Target-URI", &uri));
    if let Some(ip) = &ip {
        headers.push(("WARC-IP-Address", ip));
    }
    headers.push(("Content-Type", "application/http; msgtype=response"));
    headers.push(("WARC-Payload-Digest", &payload_digest));
    if let Some(reason) = truncated {
        headers.push(("WARC-Truncated", reason.as_str()));
    }
    write_record(&headers, ex.response, out);

    response_id
}

/// `sha1:` + the RFC 4648 base32 of the SHA-1 of `bytes`, as WARC digests are
/// written (32 characters, no padding needed for 20 bytes).
pub fn sha1_digest(bytes: &[u8]) -> String {
    let digest = Sha1::digest(bytes);
    let mut out = String::from("sha1:");
    out.push_str(&base32(digest.as_slice()));
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

/// `WARC-Date` text of `t`: UTC, `YYYY-MM-DDThh:mm:ss.ffffffZ` (microseconds,
/// as WARC 1.1 allows and warcio writes). Times before 1970 or after 9999 are
/// clamped into that range.
pub fn format_date(t: SystemTime) -> String {
    /// 9999-12-31T23:59:59: the last second with a four-digit year.
    const MAX_SECS: u64 = 253_402_300_799;
    let (secs, micros) = match t.duration_since(UNIX_EPOCH) {
        Ok(d) if d.as_secs() <= MAX_SECS => (d.as_secs(), d.subsec_micros()),
        Ok(_) => (MAX_SECS, 999_999),
        Err(_) => (0, 0),
    };
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{micros:06}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// (year, month, day) of `days` since 1970-01-01, for days in the range
/// `format_date` clamps to (Howard Hinnant's `civil_from_days`, restricted to
/// non-negative days so unsigned arithmetic suffices).
#[allow(clippy::arithmetic_side_effects)] // days <= 2_932_896: nothing overflows or underflows
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468; // days since 0000-03-01
    let era = z / 146_097;
    let doe = z - era * 146_097; // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365], from March 1
    let mp = (5 * doy + 2) / 153; // [0, 11], March = 0
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
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
    use std::time::Duration;

    fn at(secs: u64, micros: u32) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_micros(u64::from(micros))
    }

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
    fn dates() {
        assert_eq!(format_date(UNIX_EPOCH), "1970-01-01T00:00:00.000000Z");
        assert_eq!(
            format_date(at(951_782_400, 0)),
            "2000-02-29T00:00:00.000000Z"
        );
        assert_eq!(
            format_date(at(1_700_000_000, 123_456)),
            "2023-11-14T22:13:20.123456Z"
        );
        assert_eq!(
            format_date(at(4_102_444_799, 0)),
            "2099-12-31T23:59:59.000000Z"
        );
        assert_eq!(
            format_date(UNIX_EPOCH - Duration::from_secs(1)),
            "1970-01-01T00:00:00.000000Z"
        );
        assert_eq!(
            format_date(at(u64::MAX / 2, 0)),
            "9999-12-31T23:59:59.999999Z"
        );
    }

    #[test]
    fn civil_from_days_round_trips_every_day_near_the_present() {
        // Walk day by day from 1970 to 2200 and check the calendar advances by one.
        let (mut y, mut m, mut d) = (1970, 1, 1);
        for days in 0..84_000u64 {
            assert_eq!(civil_from_days(days), (y, m, d), "day {days}");
            let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
            let len = match m {
                2 if leap => 29,
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            d += 1;
            if d > len {
                d = 1;
                m += 1;
                if m > 12 {
                    m = 1;
                    y += 1;
                }
            }
        }
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
