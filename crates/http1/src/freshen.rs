//! A stored response head brought up to date by a `304 Not Modified`, as
//! a cache does (RFC 9111 §3.2, §4.3.4): each header field the 304 carries
//! replaces the stored ones of its name, the rest of the stored head (its
//! status line first) stays as it was. The fields that describe the stored
//! body's bytes (length, codings, type, range) and the hop-by-hop ones are
//! never taken from the 304: the body they frame is the stored one.
//!
//! Pure and panic-free: both heads are bytes from the network (or from an
//! archive of them). Not the reading of a head (`head.rs`).

/// Fields a 304 does not replace (lower case).
const KEPT: &[&str] = &[
    "content-length",
    "content-encoding",
    "content-type",
    "content-range",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "upgrade",
];

/// `stored` (a response head, its blank line included) with the header
/// fields of `not_modified` (the 304's head) in place of its own of the
/// same names, in the stored order (a name new to the stored head goes at
/// its end), ending in a blank line; lines end in CRLF. None if either is
/// not a response head.
pub fn freshen(stored: &[u8], not_modified: &[u8]) -> Option<Vec<u8>> {
    let fresh = fields(not_modified)?;
    let fresh: Vec<(String, &[u8])> = fresh
        .into_iter()
        .filter(|(name, _)| !KEPT.contains(&name.as_str()))
        .collect();
    let mut lines = stored
        .split(|&b| b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line));
    let status = lines.next().filter(|l| l.starts_with(b"HTTP/"))?;
    let mut out = Vec::with_capacity(stored.len().saturating_add(not_modified.len()));
    out.extend_from_slice(status);
    out.extend_from_slice(b"\r\n");
    let mut placed: Vec<&str> = Vec::new();
    // Whether the field of the last line was replaced (its folded
    // continuation lines go with it).
    let mut replacing = false;
    for line in lines.take_while(|l| !l.is_empty()) {
        if line.starts_with(b" ") || line.starts_with(b"\t") {
            if !replacing {
                push_line(&mut out, line);
            }
            continue;
        }
        let name = line
            .split(|&b| b == b':')
            .next()
            .map(|n| String::from_utf8_lossy(n.trim_ascii()).to_ascii_lowercase())
            .unwrap_or_default();
        replacing = fresh.iter().any(|(n, _)| *n == name);
        if !replacing {
            push_line(&mut out, line);
        } else if !placed.contains(&name.as_str()) {
            push_fields(&mut out, &fresh, &name);
            if let Some((n, _)) = fresh.iter().find(|(n, _)| *n == name) {
                placed.push(n);
            }
        }
    }
    for (name, _) in &fresh {
        if !placed.contains(&name.as_str()) {
            push_fields(&mut out, &fresh, name);
            placed.push(name.as_str());
        }
    }
    out.extend_from_slice(b"\r\n");
    Some(out)
}

/// The header fields of the response head `head` (names lower-cased), by
/// httparse, as leniently as `head.rs` reads heads.
fn fields(head: &[u8]) -> Option<Vec<(String, &[u8])>> {
    let mut slots = vec![httparse::EMPTY_HEADER; 256];
    let mut config = httparse::ParserConfig::default();
    config
        .allow_spaces_after_header_name_in_responses(true)
        .allow_obsolete_multiline_headers_in_responses(true)
        .ignore_invalid_headers_in_responses(true)
        .allow_multiple_spaces_in_response_status_delimiters(true);
    let mut response = httparse::Response::new(&mut slots);
    match config.parse_response(&mut response, head) {
        Ok(httparse::Status::Complete(_)) => Some(
            response
                .headers
                .iter()
                .map(|h| (h.name.to_ascii_lowercase(), h.value))
                .collect(),
        ),
        _ => None,
    }
}

fn push_line(out: &mut Vec<u8>, line: &[u8]) {
    out.extend_from_slice(line);
    out.extend_from_slice(b"\r\n");
}

/// Every field of `fresh` called `name`, as `Name: value` lines (the name
/// as the 304 spelled it is lost to lower case: field names are
/// case-insensitive).
fn push_fields(out: &mut Vec<u8>, fresh: &[(String, &[u8])], name: &str) {
    for (_, value) in fresh.iter().filter(|(n, _)| n == name) {
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.trim_ascii());
        out.extend_from_slice(b"\r\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_304s_fields_replace_the_stored_ones_and_the_bodys_own_stay() {
        let stored = b"HTTP/1.1 200 OK\r\n\
            Date: Mon, 02 Nov 2026 10:00:00 GMT\r\n\
            Content-Type: text/html\r\n\
            Content-Length: 120\r\n\
            ETag: \"a\"\r\n\
            Cache-Control: max-age=60\r\n\
            Cache-Control: public\r\n\
            X-Folded: one\r\n two\r\n\
            \r\n";
        let not_modified = b"HTTP/1.1 304 Not Modified\r\n\
            Date: Fri, 27 Nov 2026 10:00:00 GMT\r\n\
            ETag: \"a\"\r\n\
            Cache-Control: max-age=300\r\n\
            Content-Length: 0\r\n\
            Connection: close\r\n\
            Expires: Fri, 27 Nov 2026 10:05:00 GMT\r\n\
            \r\n";
        let fresh = freshen(stored, not_modified).unwrap();
        assert_eq!(
            String::from_utf8(fresh).unwrap(),
            "HTTP/1.1 200 OK\r\n\
             date: Fri, 27 Nov 2026 10:00:00 GMT\r\n\
             Content-Type: text/html\r\n\
             Content-Length: 120\r\n\
             etag: \"a\"\r\n\
             cache-control: max-age=300\r\n\
             X-Folded: one\r\n two\r\n\
             expires: Fri, 27 Nov 2026 10:05:00 GMT\r\n\
             \r\n"
        );
    }

    #[test]
    fn a_bare_304_leaves_the_stored_head_as_it_was_in_crlf() {
        let stored = b"HTTP/1.0 200 OK\nContent-Type: image/png\n\n";
        let fresh = freshen(stored, b"HTTP/1.1 304 Not Modified\r\n\r\n").unwrap();
        assert_eq!(fresh, b"HTTP/1.0 200 OK\r\nContent-Type: image/png\r\n\r\n");
    }

    #[test]
    fn heads_that_are_not_responses_give_nothing() {
        assert_eq!(
            freshen(b"garbage\r\n\r\n", b"HTTP/1.1 304 OK\r\n\r\n"),
            None
        );
        assert_eq!(freshen(b"HTTP/1.1 200 OK\r\n\r\n", b"\x00\x01"), None);
        assert_eq!(freshen(b"", b""), None);
    }
}
