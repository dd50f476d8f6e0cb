//! A WARC reader for the tests: parse a whole `.warc.gz` (or plain `.warc`)
//! back into [`WarcRecord`]s, all in memory. Only tests read WARC files
//! back, so the reader lives with them; warcio, in its venv, is the
//! independent check ([`crate::warcio`]).

use std::io::Read;

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
/// It decompresses everything into memory. Malformed
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
