//! The response head: find its end, parse it (httparse, lenient), and read
//! what the crawler needs from it: status, type, location, framing of the
//! body, whether the connection stays open.
//!
//! Pure and panic-free (the crate's lints, `lib.rs`, cover it): it runs on bytes
//! off the network.

use super::content::{Coding, MAX_CODINGS};

/// Header slots tried on the first parse; enough for nearly every response.
const INITIAL_HEADERS: usize = 64;
/// Upper bound on header slots for the retry after `TooManyHeaders`.
const MAX_HEADERS: usize = 16 * 1024;

/// How the body of a response is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Framing {
    /// No body at all (1xx, 204, 304).
    None,
    /// Exactly this many bytes (`Content-Length`).
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// The body runs until the server closes the connection.
    UntilClose,
}

/// Most `X-Robots-Tag` headers of one response kept.
pub const MAX_ROBOTS_TAGS: usize = 8;

/// Most `Set-Cookie` headers of one response kept.
pub const MAX_SET_COOKIES: usize = 50;

/// The parts of a response head the crawler cares about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseHead {
    /// Status code, 100..=999.
    pub status: u16,
    /// Bytes of the head including the terminating blank line; body starts at `buf[head_len..]`.
    pub head_len: usize,
    /// First `Content-Type` value, trimmed (obsolete line folds become one space).
    pub content_type: Option<String>,
    /// First `Location` value, trimmed (may be empty if the header is present but empty).
    pub location: Option<String>,
    /// First `Retry-After` value, trimmed.
    pub retry_after: Option<String>,
    /// First `ETag` value, trimmed, as sent (quotes and `W/` kept): what a
    /// recrawl sends back in `If-None-Match`.
    pub etag: Option<String>,
    /// First `Last-Modified` value, trimmed, as sent: what a recrawl sends
    /// back in `If-Modified-Since`.
    pub last_modified: Option<String>,
    /// `X-Robots-Tag` values, trimmed, at most [`MAX_ROBOTS_TAGS`].
    pub robots_tags: Vec<String>,
    /// `Set-Cookie` values, trimmed, at most [`MAX_SET_COOKIES`].
    pub set_cookies: Vec<String>,
    /// `Content-Encoding` codings, in the order the server applied them
    /// (`identity` left out): what to undo before reading the body as a
    /// page. At most one more than [`MAX_CODINGS`], which is enough to
    /// refuse the body.
    pub content_encoding: Vec<Coding>,
    /// How the body that follows the head is delimited.
    pub framing: Framing,
    /// The server will keep the connection open after this response: an
    /// HTTP/1.1 response without a `Connection: close` token, or an HTTP/1.0
    /// one with a `keep-alive` token (and no `close`); never one with a
    /// `Transfer-Encoding` in HTTP/1.0 or beside a `Content-Length`.
    pub keep_alive: bool,
}

impl ResponseHead {
    /// An interim answer (100 Continue, 103 Early Hints, ...): the final one
    /// follows on the same connection. 101 is not one: it ends HTTP on the
    /// connection (and is never asked for here).
    pub fn is_interim(&self) -> bool {
        (100..200).contains(&self.status) && self.status != 101
    }
}

/// Why a response head could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeadError {
    /// No end of head within the allowed number of bytes.
    #[error("response head larger than {0} bytes")]
    TooLarge(usize),
    /// Not an HTTP/1.x response, bad status line or malformed headers.
    #[error("invalid response head: {0}")]
    Invalid(String),
    /// Several `Content-Length` values that disagree.
    #[error("conflicting Content-Length headers")]
    ConflictingLength,
    /// A `Content-Length` that is not a decimal number fitting in a u64.
    #[error("invalid Content-Length")]
    BadLength,
}

/// A response head being received: feed [`HeadScan::parse`] the whole
/// buffer after every read (it only ever grows) until it gives the head.
/// The search for the end of the head resumes where the last call left it,
/// so a head that arrives a byte per read costs its length, not its length
/// squared.
#[derive(Debug, Clone)]
pub struct HeadScan {
    max_head: usize,
    /// Bytes of the buffer already searched for the end of the head.
    scanned: usize,
    /// Where the search stood after them (see [`scan`]).
    state: u8,
}

impl HeadScan {
    /// A scan for a head of at most `max_head` bytes.
    pub fn new(max_head: usize) -> Self {
        HeadScan {
            max_head,
            scanned: 0,
            state: 0,
        }
    }

    /// The head at the start of `buf`, the bytes received so far (`buf`
    /// must start with the bytes of every earlier call). What the result
    /// means is said at [`parse_head`].
    pub fn parse(&mut self, buf: &[u8]) -> Result<Option<ResponseHead>, HeadError> {
        const MAGIC: &[u8] = b"HTTP/";
        let start = buf.get(..MAGIC.len()).unwrap_or(buf);
        if !MAGIC.starts_with(start) {
            return Err(HeadError::Invalid(format!(
                "not an HTTP/1.x response (starts with \"{}\")",
                buf.get(..16).unwrap_or(buf).escape_ascii()
            )));
        }
        let window = buf.get(..self.max_head).unwrap_or(buf);
        let new = window.get(self.scanned..).unwrap_or_default();
        let Some(end) = scan(new, &mut self.state) else {
            self.scanned = window.len();
            return if buf.len() > self.max_head {
                Err(HeadError::TooLarge(self.max_head))
            } else {
                Ok(None)
            };
        };
        let end = self.scanned.saturating_add(end);
        let head = window.get(..end).unwrap_or(window);
        let mut headers = [httparse::EMPTY_HEADER; INITIAL_HEADERS];
        match parse_complete_head(head, &mut headers) {
            Err(ParseFail::TooManyHeaders) => {}
            Err(ParseFail::Head(e)) => return Err(e),
            Ok(h) => return Ok(Some(h)),
        }
        // Every header takes at least one line, so the line count is enough slots.
        let lines = head.iter().filter(|&&b| b == b'\n').count();
        let mut headers = vec![httparse::EMPTY_HEADER; lines.clamp(INITIAL_HEADERS, MAX_HEADERS)];
        match parse_complete_head(head, &mut headers) {
            Err(ParseFail::TooManyHeaders) => Err(HeadError::Invalid("too many headers".into())),
            Err(ParseFail::Head(e)) => Err(e),
            Ok(h) => Ok(Some(h)),
        }
    }
}

/// Parses the response head at the start of `buf`.
///
/// `Ok(None)`: the blank line ending the head has not arrived yet (and
/// `buf.len() <= max_head`) - read more and call again with the longer buffer.
/// Only the end of head (`\r\n\r\n`, also `\n\n` and mixes) is searched for
/// until it arrives; only then is the head parsed. A head longer than
/// `max_head` gives [`HeadError::TooLarge`]. A buffer that does not start with
/// `HTTP/` fails with [`HeadError::Invalid`] as soon as enough bytes are there
/// to tell, without waiting for the rest of the garbage.
///
/// Each call searches `buf` from its start; a fetch that calls again after
/// every read uses a [`HeadScan`] instead.
pub fn parse_head(buf: &[u8], max_head: usize) -> Result<Option<ResponseHead>, HeadError> {
    HeadScan::new(max_head).parse(buf)
}

/// Index just past the blank line ending the head: an LF followed by either
/// LF or CR LF. `None` if the head is not complete in `buf`.
#[cfg(test)]
pub(super) fn find_head_end(buf: &[u8]) -> Option<usize> {
    scan(buf, &mut 0)
}

/// Search `bytes` for the end of a head, going on from `state`, where the
/// search stood after the bytes before them: 0 inside a line, 1 just after
/// LF, 2 just after LF CR. The index in `bytes` just past the blank line,
/// or None with `state` updated for the next bytes.
fn scan(bytes: &[u8], state: &mut u8) -> Option<usize> {
    for (end, &b) in (1usize..).zip(bytes) {
        #[cfg(test)]
        SCANNED.with(|n| n.set(n.get().saturating_add(1)));
        *state = match (*state, b) {
            (1 | 2, b'\n') => return Some(end),
            (_, b'\n') => 1,
            (1, b'\r') => 2,
            _ => 0,
        };
    }
    None
}

#[cfg(test)]
thread_local! {
    /// Bytes looked at by the search for the end of a head (tests only).
    pub(super) static SCANNED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

enum ParseFail {
    TooManyHeaders,
    Head(HeadError),
}

/// Runs httparse on a head known to end with its blank line.
fn parse_complete_head<'b>(
    head: &'b [u8],
    headers: &mut [httparse::Header<'b>],
) -> Result<ResponseHead, ParseFail> {
    let mut config = httparse::ParserConfig::default();
    config
        .allow_spaces_after_header_name_in_responses(true)
        .allow_obsolete_multiline_headers_in_responses(true)
        .ignore_invalid_headers_in_responses(true)
        .allow_multiple_spaces_in_response_status_delimiters(true);
    let mut resp = httparse::Response::new(headers);
    let head_len = match config.parse_response(&mut resp, head) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => {
            return Err(ParseFail::Head(HeadError::Invalid(
                "incomplete response head".into(),
            )))
        }
        Err(httparse::Error::TooManyHeaders) => return Err(ParseFail::TooManyHeaders),
        Err(e) => return Err(ParseFail::Head(HeadError::Invalid(e.to_string()))),
    };
    let status = match resp.code {
        Some(code) if code >= 100 => code,
        other => {
            return Err(ParseFail::Head(HeadError::Invalid(format!(
                "bad status code {other:?}"
            ))))
        }
    };
    let first = |name: &str| {
        resp.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| header_string(h.value))
    };
    // The first `most` values of every header called `name`.
    let all = |name: &str, most: usize| {
        resp.headers
            .iter()
            .filter(|h| h.name.eq_ignore_ascii_case(name))
            .take(most)
            .map(|h| header_string(h.value))
            .collect()
    };
    Ok(ResponseHead {
        status,
        head_len,
        content_type: first("content-type"),
        location: first("location"),
        retry_after: first("retry-after"),
        etag: first("etag"),
        last_modified: first("last-modified"),
        robots_tags: all("x-robots-tag", MAX_ROBOTS_TAGS),
        set_cookies: all("set-cookie", MAX_SET_COOKIES),
        content_encoding: list_items(resp.headers, "content-encoding")
            .filter_map(Coding::from_token)
            .take(MAX_CODINGS.saturating_add(1))
            .collect(),
        framing: framing(status, resp.headers).map_err(ParseFail::Head)?,
        keep_alive: keeps_alive(resp.version, resp.headers)
            && !suspect_framing(resp.version, resp.headers),
    })
}

/// Whether the connection persists after a response of HTTP/1.`version`
/// with these headers (every `Connection` header, comma-separated tokens).
fn keeps_alive(version: Option<u8>, headers: &[httparse::Header<'_>]) -> bool {
    let (mut close, mut keep_alive) = (false, false);
    for token in list_items(headers, "connection") {
        close |= token.eq_ignore_ascii_case(b"close");
        keep_alive |= token.eq_ignore_ascii_case(b"keep-alive");
    }
    !close && (keep_alive || version == Some(1))
}

/// A `Transfer-Encoding` on an HTTP/1.0 answer, or beside a
/// `Content-Length`: RFC 9112 §6.1 and §6.3 say the framing may not be
/// what the server meant (request smuggling, response splitting), so the
/// connection is closed after the answer.
fn suspect_framing(version: Option<u8>, headers: &[httparse::Header<'_>]) -> bool {
    let coded = list_items(headers, "transfer-encoding").any(|item| !item.is_empty());
    let length = headers
        .iter()
        .any(|h| h.name.eq_ignore_ascii_case("content-length"));
    coded && (version == Some(0) || length)
}

/// The comma-separated items of every header named `name`, trimmed, in
/// order (empty items included).
fn list_items<'h>(
    headers: &'h [httparse::Header<'_>],
    name: &'static str,
) -> impl Iterator<Item = &'h [u8]> {
    headers
        .iter()
        .filter(move |h| h.name.eq_ignore_ascii_case(name))
        .flat_map(|h| h.value.split(|&b| b == b',').map(<[u8]>::trim_ascii))
}

/// A header value as a trimmed String: lossy UTF-8, with every obsolete line
/// fold (CR/LF plus the whitespace around it) replaced by one space.
fn header_string(value: &[u8]) -> String {
    let value = String::from_utf8_lossy(value);
    if !value.contains(['\r', '\n']) {
        return value.trim().to_owned();
    }
    let mut out = String::with_capacity(value.len());
    let mut in_fold = false;
    for c in value.chars() {
        match c {
            '\r' | '\n' => in_fold = true,
            ' ' | '\t' if in_fold => {}
            _ => {
                if in_fold {
                    out.truncate(out.trim_end().len());
                    out.push(' ');
                    in_fold = false;
                }
                out.push(c);
            }
        }
    }
    out.trim().to_owned()
}

/// Framing from status and headers per the client rules of RFC 9112 (1.0
/// and 1.1 answers alike).
///
/// 1xx, 204, 304 -> [`Framing::None`] (headers not even looked at);
/// `Transfer-Encoding` whose last coding is `chunked` -> [`Framing::Chunked`]
/// (takes precedence over `Content-Length`); any other transfer coding ->
/// [`Framing::UntilClose`] (`identity` codings are ignored);
/// `Content-Length` (all values equal, including comma-separated lists like
/// `5, 5`) -> [`Framing::Length`]; differing values ->
/// [`HeadError::ConflictingLength`]; non-digits or overflow ->
/// [`HeadError::BadLength`]; else [`Framing::UntilClose`].
pub fn framing(status: u16, headers: &[httparse::Header<'_>]) -> Result<Framing, HeadError> {
    if (100..200).contains(&status) || status == 204 || status == 304 {
        return Ok(Framing::None);
    }
    let mut last_coding: Option<&[u8]> = None;
    for coding in list_items(headers, "transfer-encoding") {
        // A coding may carry parameters ("gzip;q=1"); only the name matters.
        let name = coding
            .split(|&b| b == b';')
            .next()
            .unwrap_or(coding)
            .trim_ascii();
        if !name.is_empty() && !name.eq_ignore_ascii_case(b"identity") {
            last_coding = Some(name);
        }
    }
    if let Some(coding) = last_coding {
        return Ok(if coding.eq_ignore_ascii_case(b"chunked") {
            Framing::Chunked
        } else {
            Framing::UntilClose
        });
    }
    let mut length: Option<u64> = None;
    for h in headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("content-length"))
    {
        let mut seen_value = false;
        for item in h.value.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
            if item.is_empty() {
                continue;
            }
            seen_value = true;
            let n = parse_decimal(item).ok_or(HeadError::BadLength)?;
            match length {
                Some(prev) if prev != n => return Err(HeadError::ConflictingLength),
                _ => length = Some(n),
            }
        }
        if !seen_value {
            return Err(HeadError::BadLength);
        }
    }
    Ok(length.map_or(Framing::UntilClose, Framing::Length))
}

/// Non-empty ASCII decimal digits that fit in a u64.
fn parse_decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |acc, &b| {
        let d = char::from(b).to_digit(10)?;
        acc.checked_mul(10)?.checked_add(u64::from(d))
    })
}

/// `("text/html", Some("utf-8"))` from `Text/HTML; charset="UTF-8"`: media
/// type lower-cased and trimmed, `charset` parameter value lower-cased without
/// quotes (`None` if absent or empty; the first one wins).
pub fn media_type(content_type: &str) -> (String, Option<String>) {
    let mut parts = content_type.split(';');
    let essence = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
    let charset = parts
        .filter_map(|param| param.split_once('='))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("charset"))
        .map(|(_, value)| {
            value
                .trim()
                .trim_matches(['"', '\''])
                .trim()
                .to_ascii_lowercase()
        })
        .filter(|v| !v.is_empty());
    (essence, charset)
}

/// True for `text/css` (any case, any parameters).
pub fn is_css(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|ct| media_type(ct).0 == "text/css")
}

/// True for `text/html` and `application/xhtml+xml` (any case, any parameters).
pub fn is_html(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|ct| {
        matches!(
            media_type(ct).0.as_str(),
            "text/html" | "application/xhtml+xml"
        )
    })
}
