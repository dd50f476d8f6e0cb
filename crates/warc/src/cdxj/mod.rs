//! CDXJ index lines for WARC records, the same fields and form as
//! cdxj-indexer (the webrecorder tool that pywb and WACZ use) writes:
//! `SURT TIMESTAMP14 {"url": ..., "mime": ..., "status": ..., "digest": ...,
//! "length": ..., "offset": ..., "filename": ...}`, the JSON as Python's
//! `json.dumps` writes it (`", "` and `": "` separators, non-ASCII as
//! `\uXXXX`), every number a string. Pure.
//!
//! Which records get a line is cdxj-indexer's rule too: `response`,
//! `revisit` and `resource` records (the caller only asks for those); not
//! `request` nor `warcinfo`. The key is the URL's [`surt`].
//!
//! Not the writing of the index file, nor its sorting (done where a sorted
//! index is needed, as a WACZ's), nor reading a line's JSON (only
//! [`line_json`] finds it): the caller's.

pub mod surt;

use std::fmt::Write as _;
use std::time::SystemTime;

use crate::timestamp::timestamp14;

/// What an index line says of one record.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    /// `WARC-Target-URI`.
    pub url: &'a str,
    /// `WARC-Date`.
    pub date: SystemTime,
    /// What cdxj-indexer calls `mime`: for a response, the HTTP
    /// `Content-Type` up to its first `;` or space; `warc/revisit` for a
    /// revisit; the record's `Content-Type` for a resource. None: no field.
    pub mime: Option<&'a str>,
    /// HTTP status, for a response or revisit.
    pub status: Option<u16>,
    /// `WARC-Payload-Digest`.
    pub digest: &'a str,
    /// Bytes of the record's gzip member.
    pub length: u64,
    /// Offset of that member in the file.
    pub offset: u64,
    /// The WARC file's name.
    pub filename: &'a str,
}

/// The `mime` cdxj-indexer derives from a `Content-Type` value: up to the
/// first `;` or whitespace, trimmed.
pub fn mime_of(content_type: &str) -> &str {
    content_type
        .trim()
        .split(|c: char| c == ';' || c.is_whitespace())
        .next()
        .unwrap_or("")
        .trim()
}

/// Append the line of `entry` (with its newline) to `out`.
pub fn write_line(entry: &Entry, out: &mut Vec<u8>) {
    let mut line = surt::surt(entry.url);
    line.push(' ');
    line.push_str(&timestamp14(entry.date));
    line.push_str(" {\"url\": ");
    json_string(entry.url, &mut line);
    if let Some(mime) = entry.mime {
        line.push_str(", \"mime\": ");
        json_string(mime, &mut line);
    }
    if let Some(status) = entry.status {
        let _ = write!(line, ", \"status\": \"{status}\"");
    }
    line.push_str(", \"digest\": ");
    json_string(entry.digest, &mut line);
    let _ = write!(
        line,
        ", \"length\": \"{}\", \"offset\": \"{}\", \"filename\": ",
        entry.length, entry.offset
    );
    json_string(entry.filename, &mut line);
    line.push_str("}\n");
    out.extend_from_slice(line.as_bytes());
}

/// The JSON part of a line as [`write_line`] writes it, if the line reads
/// so: a SURT, a space, a timestamp of digits, a space, a JSON object (not
/// parsed here).
pub fn line_json(line: &[u8]) -> Option<&[u8]> {
    let mut parts = line.splitn(3, |&b| b == b' ');
    let surt = parts.next()?;
    let timestamp = parts.next()?;
    let json = parts.next()?;
    let shaped = !surt.is_empty()
        && !timestamp.is_empty()
        && timestamp.iter().all(u8::is_ascii_digit)
        && json.starts_with(b"{");
    shaped.then_some(json)
}

/// `s` as Python's `json.dumps` writes a string (ASCII only).
fn json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (' '..='\u{7e}').contains(&c) => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn a_line_reads_as_cdxj_indexer_writes_it() {
        let mut out = Vec::new();
        write_line(
            &Entry {
                url: "http://www.a.test/P?b=1&a=2",
                date: UNIX_EPOCH + Duration::from_secs(1_700_000_000),
                mime: Some(mime_of("text/html; charset=utf-8")),
                status: Some(200),
                digest: "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ",
                length: 345,
                offset: 1200,
                filename: "x-s0-00000.warc.gz",
            },
            &mut out,
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "test,a)/p?a=2&b=1 20231114221320 {\"url\": \"http://www.a.test/P?b=1&a=2\", \
             \"mime\": \"text/html\", \"status\": \"200\", \"digest\": \
             \"sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ\", \"length\": \"345\", \
             \"offset\": \"1200\", \"filename\": \"x-s0-00000.warc.gz\"}\n"
        );
    }

    #[test]
    fn the_json_of_a_line_is_found_only_in_a_line_of_that_shape() {
        let line = b"test,a)/ 20231114221320 {\"url\": \"http://a.test/\"}";
        assert_eq!(line_json(line), Some(&b"{\"url\": \"http://a.test/\"}"[..]));
        for bad in [
            &b" 20231114221320 {}"[..],
            b"test,a)/  {}",
            b"test,a)/ 2023x {}",
            b"test,a)/ 20231114221320 []",
            b"test,a)/ 20231114221320",
        ] {
            assert_eq!(line_json(bad), None, "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn strings_escape_as_python_json_dumps_does() {
        let mut s = String::new();
        json_string("a\"b\\c\n\u{1}é😀", &mut s);
        assert_eq!(s, r#""a\"b\\c\n\u0001\u00e9\ud83d\ude00""#);
        assert_eq!(mime_of(" text/html ;x"), "text/html");
        assert_eq!(mime_of(""), "");
    }
}
