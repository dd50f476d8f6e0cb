//! Pure client side of HTTP/1.0: request bytes, response-head parsing, body
//! framing/decoding. No I/O.
//!
//! This is *not* the socket code: callers read bytes however they like and
//! hand them to [`parse_head`] until it returns a [`ResponseHead`], then feed
//! the remaining bytes (starting at `buf[head_len..]`) and every later read to
//! a [`BodyDecoder`] built from [`ResponseHead::framing`].
//!
//! Everything here runs on bytes straight off the network, so it must never
//! panic whatever the input: a panic takes down a whole shard. The lints
//! below enforce that (no indexing, no unwrap, no unchecked arithmetic) for
//! the non-test code.
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

use std::borrow::Cow;

/// Default cap on the size of a response head (status line + headers + blank line).
pub const DEFAULT_MAX_HEAD: usize = 64 * 1024;

/// Header slots tried on the first parse; enough for nearly every response.
const INITIAL_HEADERS: usize = 64;
/// Upper bound on header slots for the retry after `TooManyHeaders`.
const MAX_HEADERS: usize = 16 * 1024;
/// Longest chunk-size line (hex digits, whitespace, extensions) accepted.
const MAX_CHUNK_LINE: usize = 4 * 1024;
/// Most trailer bytes accepted after the last chunk.
const MAX_TRAILERS: usize = 64 * 1024;

/// Bytes of `GET {target} HTTP/1.0` with Host, User-Agent, Accept: */*,
/// Accept-Encoding: identity, `Connection: keep-alive` (or `close`), blank
/// line.
///
/// CR, LF and NUL are removed from the three arguments so that a hostile URL
/// or configuration value cannot inject headers; an empty `target` becomes `/`.
pub fn request(target: &str, host_header: &str, user_agent: &str, keep_alive: bool) -> Vec<u8> {
    let target = clean(target);
    let target: &str = if target.is_empty() { "/" } else { &target };
    format!(
        "GET {target} HTTP/1.0\r\n\
         Host: {}\r\n\
         User-Agent: {}\r\n\
         Accept: */*\r\n\
         Accept-Encoding: identity\r\n\
         Connection: {}\r\n\
         \r\n",
        clean(host_header),
        clean(user_agent),
        if keep_alive { "keep-alive" } else { "close" },
    )
    .into_bytes()
}

/// `s` without CR, LF and NUL (borrowed when it has none).
fn clean(s: &str) -> Cow<'_, str> {
    let bad = |c: char| matches!(c, '\r' | '\n' | '\0');
    if s.contains(bad) {
        Cow::Owned(s.chars().filter(|&c| !bad(c)).collect())
    } else {
        Cow::Borrowed(s)
    }
}

/// How the body of a response is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    /// How the body that follows the head is delimited.
    pub framing: Framing,
    /// The server will keep the connection open after this response: an
    /// HTTP/1.1 response without a `Connection: close` token, or an HTTP/1.0
    /// one with a `keep-alive` token (and no `close`).
    pub keep_alive: bool,
}

/// Why a response head could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
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

/// Parses the response head at the start of `buf`.
///
/// `Ok(None)`: the blank line ending the head has not arrived yet (and
/// `buf.len() <= max_head`) - read more and call again with the longer buffer.
/// Only the end of head (`\r\n\r\n`, also `\n\n` and mixes) is searched for
/// until it arrives; only then is the head parsed. A head longer than
/// `max_head` gives [`HeadError::TooLarge`]. A buffer that does not start with
/// `HTTP/` fails with [`HeadError::Invalid`] as soon as enough bytes are there
/// to tell, without waiting for the rest of the garbage.
pub fn parse_head(buf: &[u8], max_head: usize) -> Result<Option<ResponseHead>, HeadError> {
    const MAGIC: &[u8] = b"HTTP/";
    let start = buf.get(..MAGIC.len()).unwrap_or(buf);
    if !MAGIC.starts_with(start) {
        return Err(HeadError::Invalid(format!(
            "not an HTTP/1.x response (starts with \"{}\")",
            buf.get(..16).unwrap_or(buf).escape_ascii()
        )));
    }
    let window = buf.get(..max_head).unwrap_or(buf);
    let Some(end) = find_head_end(window) else {
        return if buf.len() > max_head {
            Err(HeadError::TooLarge(max_head))
        } else {
            Ok(None)
        };
    };
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

/// Index just past the blank line ending the head: an LF followed by either
/// LF or CR LF. `None` if the head is not complete in `buf`.
fn find_head_end(buf: &[u8]) -> Option<usize> {
    // 0: inside a line, 1: just after LF, 2: just after LF CR.
    let mut state = 0u8;
    for (end, &b) in (1usize..).zip(buf) {
        state = match (state, b) {
            (1 | 2, b'\n') => return Some(end),
            (_, b'\n') => 1,
            (1, b'\r') => 2,
            _ => 0,
        };
    }
    None
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
    Ok(ResponseHead {
        status,
        head_len,
        content_type: first("content-type"),
        location: first("location"),
        retry_after: first("retry-after"),
        framing: framing(status, resp.headers).map_err(ParseFail::Head)?,
        keep_alive: keeps_alive(resp.version, resp.headers),
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

/// Framing from status and headers per HTTP/1.0 client rules.
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

/// True for `text/html` and `application/xhtml+xml` (any case, any parameters).
pub fn is_html(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|ct| {
        matches!(
            media_type(ct).0.as_str(),
            "text/html" | "application/xhtml+xml"
        )
    })
}

/// What a [`BodyDecoder::feed`] call achieved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// The body is not finished: read more and feed again.
    NeedMore,
    /// The framing says the body is done; stop reading.
    Complete,
    /// Payload reached max_body; the rest is not read.
    Capped,
}

/// Why a body could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    /// Malformed chunked transfer coding.
    #[error("invalid chunked encoding: {0}")]
    BadChunk(&'static str),
    /// The peer closed before the framing said the body was over.
    #[error("body truncated: connection closed before the end of the body")]
    Truncated,
}

/// Incremental decoder for one response body.
///
/// Feed it the bytes after the head, then every later read, in order. Input
/// may be split at any byte boundary.
#[derive(Debug, Clone)]
pub struct BodyDecoder {
    state: State,
    /// Payload bytes appended so far.
    written: usize,
    max_body: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Complete,
    Capped,
    Failed(BodyError),
    Length { remaining: u64 },
    UntilClose,
    Chunked(Chunk),
}

/// Where the chunked decoder is; `line` counts bytes of the size line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// Reading hex digits of a chunk size.
    Size {
        size: u64,
        digits: bool,
        line: usize,
    },
    /// After the digits: whitespace, then `;ext`, CR or LF.
    AfterSize { size: u64, line: usize },
    /// Inside chunk extensions, up to the end of the line.
    Ext { size: u64, line: usize },
    /// Saw CR ending the size line; LF must follow.
    SizeLf { size: u64 },
    /// Copying chunk payload.
    Data { remaining: u64 },
    /// Chunk payload done; CRLF (or bare LF) must follow.
    DataEnd,
    /// Saw CR after the payload; LF must follow.
    DataLf,
    /// After the last chunk, at the start of a trailer line (or the final blank line).
    TrailerStart { total: usize },
    /// Inside a trailer line.
    TrailerLine { total: usize },
    /// Saw CR at the start of a trailer line; LF ends the body.
    FinalLf,
}

impl Chunk {
    const START: Chunk = Chunk::Size {
        size: 0,
        digits: false,
        line: 0,
    };

    /// True once the last chunk has been read: all the payload is in.
    fn payload_done(self) -> bool {
        matches!(
            self,
            Chunk::TrailerStart { .. } | Chunk::TrailerLine { .. } | Chunk::FinalLf
        )
    }
}

/// State after a complete chunk-size line.
fn after_size_line(size: u64) -> Chunk {
    if size == 0 {
        Chunk::TrailerStart { total: 0 }
    } else {
        Chunk::Data { remaining: size }
    }
}

impl BodyDecoder {
    /// A decoder for a body with this framing, keeping at most `max_body`
    /// payload bytes.
    pub fn new(framing: Framing, max_body: usize) -> Self {
        let state = match framing {
            Framing::None | Framing::Length(0) => State::Complete,
            Framing::Length(remaining) => State::Length { remaining },
            Framing::Chunked => State::Chunked(Chunk::START),
            Framing::UntilClose => State::UntilClose,
        };
        BodyDecoder {
            state,
            written: 0,
            max_body,
        }
    }

    /// Feed bytes as read from the socket (the first call gets
    /// `buf[head_len..]`); decoded payload is appended to `out` (never more
    /// than `max_body` bytes in total over all calls).
    ///
    /// Returns `Complete` when the framing says the body is done (length
    /// reached, last chunk and trailers read, `Framing::None` immediately),
    /// `Capped` when `max_body` payload bytes have been appended before
    /// completion, else `NeedMore`. Extra bytes after completion are ignored.
    /// Once `Complete`, `Capped` or an error is returned, later calls return
    /// the same without reading their input.
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<Progress, BodyError> {
        let result = match self.state {
            State::Complete => return Ok(Progress::Complete),
            State::Capped => return Ok(Progress::Capped),
            State::Failed(ref e) => return Err(e.clone()),
            State::Length { remaining } => Ok(self.feed_length(remaining, input, out)),
            State::UntilClose => {
                self.copy(input, out);
                Ok(if self.room() == 0 {
                    State::Capped
                } else {
                    State::UntilClose
                })
            }
            State::Chunked(chunk) => self.feed_chunked(chunk, input, out),
        };
        self.state = match result {
            Ok(state) => state,
            Err(e) => State::Failed(e),
        };
        match self.state {
            State::Complete => Ok(Progress::Complete),
            State::Capped => Ok(Progress::Capped),
            State::Failed(ref e) => Err(e.clone()),
            State::Length { .. } | State::UntilClose | State::Chunked(_) => Ok(Progress::NeedMore),
        }
    }

    /// The peer closed the connection: `Ok(())` if that ends the body
    /// correctly (until-close framing, or already complete), else
    /// `Err(Truncated)` if bytes were still owed (short Content-Length,
    /// unfinished chunked).
    ///
    /// Lenient cases: a chunked body whose last chunk arrived but whose
    /// trailers / final blank line did not is accepted (all payload is in),
    /// and so is a capped body (the decoder stopped following the framing).
    /// After a decoding error, that error is returned again.
    pub fn at_eof(&self) -> Result<(), BodyError> {
        match self.state {
            State::Complete | State::Capped | State::UntilClose => Ok(()),
            State::Chunked(chunk) if chunk.payload_done() => Ok(()),
            State::Failed(ref e) => Err(e.clone()),
            State::Length { .. } | State::Chunked(_) => Err(BodyError::Truncated),
        }
    }

    /// Payload bytes that may still be appended.
    fn room(&self) -> usize {
        self.max_body.saturating_sub(self.written)
    }

    /// Appends as much of `data` as the cap allows; returns how much.
    fn copy(&mut self, data: &[u8], out: &mut Vec<u8>) -> usize {
        let take = data.get(..self.room()).unwrap_or(data);
        out.extend_from_slice(take);
        self.written = self.written.saturating_add(take.len());
        take.len()
    }

    fn feed_length(&mut self, remaining: u64, input: &[u8], out: &mut Vec<u8>) -> State {
        let owed = usize::try_from(remaining).unwrap_or(usize::MAX);
        let data = input.get(..owed).unwrap_or(input);
        let copied = self.copy(data, out);
        let remaining = remaining.saturating_sub(u64::try_from(copied).unwrap_or(u64::MAX));
        if remaining == 0 {
            State::Complete
        } else if self.room() == 0 {
            State::Capped
        } else {
            State::Length { remaining }
        }
    }

    fn feed_chunked(
        &mut self,
        mut chunk: Chunk,
        mut input: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<State, BodyError> {
        loop {
            if let Chunk::Data { remaining } = chunk {
                if self.room() == 0 {
                    return Ok(State::Capped);
                }
                let owed = usize::try_from(remaining).unwrap_or(usize::MAX);
                let data = input.get(..owed).unwrap_or(input);
                let copied = self.copy(data, out);
                input = input.get(copied..).unwrap_or_default();
                let copied = u64::try_from(copied).unwrap_or(u64::MAX);
                let remaining = remaining.saturating_sub(copied);
                if remaining > 0 {
                    // The input ran out, or the cap cut the copy short.
                    return Ok(if self.room() == 0 {
                        State::Capped
                    } else {
                        State::Chunked(Chunk::Data { remaining })
                    });
                }
                chunk = Chunk::DataEnd;
            }
            // At the cap, keep reading framing: the body is capped only if
            // a chunk announces more payload (checked above); a last chunk
            // ends it complete. So the answer does not depend on where the
            // reads split the bytes (size lines and trailers are bounded).
            let Some((&b, rest)) = input.split_first() else {
                return Ok(State::Chunked(chunk));
            };
            input = rest;
            chunk = match step(chunk, b)? {
                Some(next) => next,
                None => return Ok(State::Complete),
            };
        }
    }
}

/// One framing byte through the chunked state machine (payload bytes are
/// copied in bulk by the caller). `Ok(None)`: the body is complete.
fn step(chunk: Chunk, b: u8) -> Result<Option<Chunk>, BodyError> {
    let bad = BodyError::BadChunk;
    let grow = |line: usize| {
        let line = line.saturating_add(1);
        if line > MAX_CHUNK_LINE {
            Err(bad("chunk size line too long"))
        } else {
            Ok(line)
        }
    };
    let next = match chunk {
        Chunk::Size { size, digits, line } => match (char::from(b).to_digit(16), b) {
            (Some(d), _) => Chunk::Size {
                size: size
                    .checked_mul(16)
                    .and_then(|s| s.checked_add(u64::from(d)))
                    .ok_or(bad("chunk size too large"))?,
                digits: true,
                line: grow(line)?,
            },
            (None, _) if !digits => return Err(bad("missing chunk size")),
            (None, b' ' | b'\t') => Chunk::AfterSize {
                size,
                line: grow(line)?,
            },
            (None, b';') => Chunk::Ext {
                size,
                line: grow(line)?,
            },
            (None, b'\r') => Chunk::SizeLf { size },
            (None, b'\n') => after_size_line(size),
            (None, _) => return Err(bad("invalid byte in chunk size")),
        },
        Chunk::AfterSize { size, line } => match b {
            b' ' | b'\t' => Chunk::AfterSize {
                size,
                line: grow(line)?,
            },
            b';' => Chunk::Ext {
                size,
                line: grow(line)?,
            },
            b'\r' => Chunk::SizeLf { size },
            b'\n' => after_size_line(size),
            _ => return Err(bad("invalid byte after chunk size")),
        },
        Chunk::Ext { size, line } => match b {
            b'\r' => Chunk::SizeLf { size },
            b'\n' => after_size_line(size),
            _ => Chunk::Ext {
                size,
                line: grow(line)?,
            },
        },
        Chunk::SizeLf { size } => match b {
            b'\n' => after_size_line(size),
            _ => return Err(bad("expected LF after chunk size")),
        },
        // Never reached: the caller copies payload itself.
        Chunk::Data { remaining } => Chunk::Data { remaining },
        Chunk::DataEnd => match b {
            b'\r' => Chunk::DataLf,
            b'\n' => Chunk::START,
            _ => return Err(bad("missing CRLF after chunk data")),
        },
        Chunk::DataLf => match b {
            b'\n' => Chunk::START,
            _ => return Err(bad("missing LF after chunk data")),
        },
        Chunk::TrailerStart { total } => match b {
            b'\n' => return Ok(None),
            b'\r' => Chunk::FinalLf,
            _ => Chunk::TrailerLine {
                total: grow_trailers(total)?,
            },
        },
        Chunk::TrailerLine { total } => {
            let total = grow_trailers(total)?;
            match b {
                b'\n' => Chunk::TrailerStart { total },
                _ => Chunk::TrailerLine { total },
            }
        }
        Chunk::FinalLf => match b {
            b'\n' => return Ok(None),
            _ => return Err(bad("expected LF ending the trailers")),
        },
    };
    Ok(Some(next))
}

fn grow_trailers(total: usize) -> Result<usize, BodyError> {
    let total = total.saturating_add(1);
    if total > MAX_TRAILERS {
        Err(BodyError::BadChunk("trailers too long"))
    } else {
        Ok(total)
    }
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
    use proptest::prelude::*;

    fn head(raw: &str) -> ResponseHead {
        parse_head(raw.as_bytes(), DEFAULT_MAX_HEAD)
            .expect("head parses")
            .expect("head is complete")
    }

    fn head_err(raw: &str) -> HeadError {
        parse_head(raw.as_bytes(), DEFAULT_MAX_HEAD).expect_err("head is rejected")
    }

    /// Feeds `input` in one call; returns the progress and the payload.
    fn decode(
        framing: Framing,
        max_body: usize,
        input: &[u8],
    ) -> (Result<Progress, BodyError>, Vec<u8>) {
        let mut dec = BodyDecoder::new(framing, max_body);
        let mut out = Vec::new();
        let progress = dec.feed(input, &mut out);
        (progress, out)
    }

    /// Chunked encoding of `payload` cut into chunks of the given sizes (the
    /// rest goes in one last chunk).
    fn encode_chunked(payload: &[u8], sizes: &[usize]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut rest = payload;
        for &size in sizes {
            let size = size.min(rest.len());
            if size == 0 {
                continue;
            }
            let (chunk, tail) = rest.split_at(size);
            out.extend_from_slice(format!("{size:x}\r\n").as_bytes());
            out.extend_from_slice(chunk);
            out.extend_from_slice(b"\r\n");
            rest = tail;
        }
        if !rest.is_empty() {
            out.extend_from_slice(format!("{:X}\r\n", rest.len()).as_bytes());
            out.extend_from_slice(rest);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"0\r\n\r\n");
        out
    }

    #[test]
    fn chunked_body_of_exactly_max_body_is_complete_however_it_is_split() {
        let wire = b"5\r\nhello\r\n0\r\n\r\n";
        for split in 0..=wire.len() {
            let mut d = BodyDecoder::new(Framing::Chunked, 5);
            let mut out = Vec::new();
            let first = d.feed(&wire[..split], &mut out).unwrap();
            let last = if first == Progress::NeedMore {
                d.feed(&wire[split..], &mut out).unwrap()
            } else {
                first
            };
            assert_eq!(
                (last, out.as_slice()),
                (Progress::Complete, &b"hello"[..]),
                "split at {split}"
            );
        }
    }

    #[test]
    fn request_bytes_are_exact() {
        let req = request("/a/b?c=d", "example.com:8080", "ringcrawl/0.1", false);
        assert_eq!(
            String::from_utf8(req).unwrap(),
            "GET /a/b?c=d HTTP/1.0\r\n\
             Host: example.com:8080\r\n\
             User-Agent: ringcrawl/0.1\r\n\
             Accept: */*\r\n\
             Accept-Encoding: identity\r\n\
             Connection: close\r\n\
             \r\n"
        );
    }

    #[test]
    fn keep_alive_request_asks_for_it() {
        let req = String::from_utf8(request("/", "a.test", "ua", true)).unwrap();
        assert!(req.ends_with("Connection: keep-alive\r\n\r\n"));
    }

    #[test]
    fn connection_persistence_follows_version_and_tokens() {
        let cases = [
            ("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false),
            ("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\n\r\n", true),
            (
                "HTTP/1.0 200 OK\r\nConnection: keep-alive, close\r\n\r\n",
                false,
            ),
            ("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true),
            ("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", false),
            (
                "HTTP/1.1 200 OK\r\nConnection: foo\r\nConnection:  CLOSE \r\n\r\n",
                false,
            ),
            ("HTTP/1.1 200 OK\r\nConnection: keep-alive\r\n\r\n", true),
        ];
        for (raw, keeps) in cases {
            assert_eq!(head(raw).keep_alive, keeps, "{raw:?}");
        }
    }

    #[test]
    fn request_strips_crlf_injection_and_defaults_empty_target() {
        let req =
            String::from_utf8(request("", "evil.com\r\nX-Injected: 1", "ua\n", true)).unwrap();
        assert!(
            req.starts_with("GET / HTTP/1.0\r\nHost: evil.comX-Injected: 1\r\nUser-Agent: ua\r\n")
        );
        assert_eq!(req.matches("\r\n").count(), 7);
    }

    #[test]
    fn simple_head_parses_with_fields() {
        let raw = "HTTP/1.1 301 Moved Permanently\r\n\
                   content-type:  Text/HTML; charset=utf-8 \r\n\
                   LOCATION: /next\r\n\
                   Retry-After: 120\r\n\
                   Content-Length: 5\r\n\
                   \r\nhello";
        let h = head(raw);
        assert_eq!(h.status, 301);
        assert_eq!(h.head_len, raw.len() - 5);
        assert_eq!(h.content_type.as_deref(), Some("Text/HTML; charset=utf-8"));
        assert_eq!(h.location.as_deref(), Some("/next"));
        assert_eq!(h.retry_after.as_deref(), Some("120"));
        assert_eq!(h.framing, Framing::Length(5));
    }

    #[test]
    fn head_split_across_reads_returns_none_then_some() {
        let raw = b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<html>";
        for cut in 0..raw.len() - 6 {
            assert_eq!(
                parse_head(&raw[..cut], DEFAULT_MAX_HEAD),
                Ok(None),
                "cut at {cut}"
            );
        }
        let h = parse_head(raw, DEFAULT_MAX_HEAD).unwrap().unwrap();
        assert_eq!(h.head_len, raw.len() - 6);
        assert_eq!(&raw[h.head_len..], b"<html>");
    }

    #[test]
    fn head_with_bare_lf_line_endings_parses() {
        let raw = "HTTP/1.0 200 OK\nContent-Length: 2\n\nok";
        let h = head(raw);
        assert_eq!(h.head_len, raw.len() - 2);
        assert_eq!(h.framing, Framing::Length(2));
    }

    #[test]
    fn missing_reason_phrase_parses() {
        let h = head("HTTP/1.1 200\r\n\r\n");
        assert_eq!(h.status, 200);
        assert_eq!(h.framing, Framing::UntilClose);
    }

    #[test]
    fn multiple_spaces_in_status_line_parse() {
        assert_eq!(head("HTTP/1.1  404   Not Found\r\n\r\n").status, 404);
    }

    #[test]
    fn obsolete_line_folding_is_joined() {
        let h = head(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html;\r\n   charset=utf-8\r\nX-A: b\r\n\r\n",
        );
        assert_eq!(h.content_type.as_deref(), Some("text/html; charset=utf-8"));
    }

    #[test]
    fn spaces_before_colon_are_accepted() {
        let h = head("HTTP/1.1 302 Found\r\nLocation : /there\r\n\r\n");
        assert_eq!(h.location.as_deref(), Some("/there"));
    }

    #[test]
    fn invalid_header_line_is_ignored() {
        let h = head("HTTP/1.1 200 OK\r\nthis is not a header\r\n@bad@: x\r\nContent-Type: text/plain\r\n\r\n");
        assert_eq!(h.content_type.as_deref(), Some("text/plain"));
    }

    #[test]
    fn empty_location_is_some_empty_string() {
        let h = head("HTTP/1.1 302 Found\r\nLocation:\r\n\r\n");
        assert_eq!(h.location.as_deref(), Some(""));
    }

    #[test]
    fn non_utf8_header_value_is_lossy() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; x=\xff\r\n\r\n";
        let h = parse_head(raw, DEFAULT_MAX_HEAD).unwrap().unwrap();
        assert_eq!(h.content_type.as_deref(), Some("text/html; x=\u{fffd}"));
    }

    #[test]
    fn two_hundred_headers_parse_via_retry() {
        let mut raw = String::from("HTTP/1.1 200 OK\r\n");
        for i in 0..200 {
            raw.push_str(&format!("X-Header-{i}: v{i}\r\n"));
        }
        raw.push_str("Location: /last\r\nContent-Length: 3\r\n\r\n");
        let h = head(&raw);
        assert_eq!(h.location.as_deref(), Some("/last"));
        assert_eq!(h.framing, Framing::Length(3));
        assert_eq!(h.head_len, raw.len());
    }

    #[test]
    fn head_over_cap_is_too_large() {
        let mut raw = String::from("HTTP/1.1 200 OK\r\n");
        while raw.len() <= 100 {
            raw.push_str("X-Pad: aaaaaaaaaa\r\n");
        }
        assert_eq!(
            parse_head(raw.as_bytes(), 100),
            Err(HeadError::TooLarge(100))
        );
        // Still incomplete but under the cap: wait for more.
        assert_eq!(parse_head(&raw.as_bytes()[..100], 100), Ok(None));
        // Complete, but the end of head lies past the cap.
        raw.push_str("\r\n");
        assert_eq!(
            parse_head(raw.as_bytes(), 100),
            Err(HeadError::TooLarge(100))
        );
        assert!(parse_head(raw.as_bytes(), raw.len()).unwrap().is_some());
    }

    #[test]
    fn ssh_banner_is_invalid_immediately() {
        assert!(matches!(
            head_err("SSH-2.0-OpenSSH\r\n"),
            HeadError::Invalid(_)
        ));
        assert!(matches!(
            parse_head(b"SSH-2", DEFAULT_MAX_HEAD),
            Err(HeadError::Invalid(_))
        ));
        // A short prefix that cannot become "HTTP/" is rejected too...
        assert!(matches!(
            parse_head(b"<h", DEFAULT_MAX_HEAD),
            Err(HeadError::Invalid(_))
        ));
        // ...but one that still could waits for more.
        assert_eq!(parse_head(b"HTT", DEFAULT_MAX_HEAD), Ok(None));
        assert_eq!(parse_head(b"", DEFAULT_MAX_HEAD), Ok(None));
    }

    #[test]
    fn non_numeric_status_is_invalid() {
        assert!(matches!(
            head_err("HTTP/1.1 abc\r\n\r\n"),
            HeadError::Invalid(_)
        ));
        assert!(matches!(
            head_err("HTTP/1.1 099 Low\r\n\r\n"),
            HeadError::Invalid(_)
        ));
        assert!(matches!(
            head_err("HTTP/2 200\r\n\r\n"),
            HeadError::Invalid(_)
        ));
    }

    #[test]
    fn conflicting_content_length_is_an_error() {
        let raw = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n";
        assert_eq!(head_err(raw), HeadError::ConflictingLength);
        assert_eq!(
            head_err("HTTP/1.1 200 OK\r\nContent-Length: 5, 7\r\n\r\n"),
            HeadError::ConflictingLength
        );
    }

    #[test]
    fn same_content_length_twice_is_ok() {
        let raw = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\ncontent-length: 005\r\n\r\n";
        assert_eq!(head(raw).framing, Framing::Length(5));
        assert_eq!(
            head("HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\n").framing,
            Framing::Length(5)
        );
    }

    #[test]
    fn bad_content_length_is_an_error() {
        for v in ["-1", "5a", "", "0x10", "99999999999999999999999", "+5"] {
            let raw = format!("HTTP/1.1 200 OK\r\nContent-Length: {v}\r\n\r\n");
            assert_eq!(head_err(&raw), HeadError::BadLength, "value {v:?}");
        }
    }

    #[test]
    fn chunked_beats_content_length() {
        let raw =
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n";
        assert_eq!(head(raw).framing, Framing::Chunked);
        // Even a bogus Content-Length is ignored when chunked.
        let raw = "HTTP/1.1 200 OK\r\nContent-Length: x\r\nTransfer-Encoding: chunked\r\n\r\n";
        assert_eq!(head(raw).framing, Framing::Chunked);
    }

    #[test]
    fn transfer_encoding_not_ending_in_chunked_reads_until_close() {
        let raw =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\nContent-Length: 5\r\n\r\n";
        assert_eq!(head(raw).framing, Framing::UntilClose);
        let raw = "HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\nContent-Length: 5\r\n\r\n";
        assert_eq!(head(raw).framing, Framing::Length(5));
    }

    #[test]
    fn no_body_statuses_have_no_framing() {
        for status in [100, 101, 199, 204, 304] {
            let raw = format!("HTTP/1.1 {status} X\r\nContent-Length: 10\r\n\r\n");
            assert_eq!(head(&raw).framing, Framing::None, "status {status}");
        }
        assert_eq!(head("HTTP/1.1 200 OK\r\n\r\n").framing, Framing::UntilClose);
    }

    #[test]
    fn framing_function_works_on_raw_headers() {
        let headers = [httparse::Header {
            name: "Content-Length",
            value: b" 42 ",
        }];
        assert_eq!(framing(200, &headers), Ok(Framing::Length(42)));
        assert_eq!(framing(304, &headers), Ok(Framing::None));
        assert_eq!(framing(200, &[]), Ok(Framing::UntilClose));
    }

    #[test]
    fn length_body_ignores_extra_bytes() {
        let (p, out) = decode(Framing::Length(5), 100, b"helloEXTRA");
        assert_eq!(p, Ok(Progress::Complete));
        assert_eq!(out, b"hello");
    }

    #[test]
    fn length_body_across_reads_completes() {
        let mut dec = BodyDecoder::new(Framing::Length(5), 100);
        let mut out = Vec::new();
        assert_eq!(dec.feed(b"he", &mut out), Ok(Progress::NeedMore));
        assert_eq!(dec.feed(b"llo", &mut out), Ok(Progress::Complete));
        assert_eq!(dec.feed(b"more", &mut out), Ok(Progress::Complete));
        assert_eq!(out, b"hello");
        assert_eq!(dec.at_eof(), Ok(()));
    }

    #[test]
    fn short_length_body_then_eof_is_truncated() {
        let mut dec = BodyDecoder::new(Framing::Length(10), 100);
        let mut out = Vec::new();
        assert_eq!(dec.feed(b"hello", &mut out), Ok(Progress::NeedMore));
        assert_eq!(dec.at_eof(), Err(BodyError::Truncated));
    }

    #[test]
    fn zero_length_and_no_body_are_complete_immediately() {
        for framing in [Framing::None, Framing::Length(0)] {
            let mut dec = BodyDecoder::new(framing, 0);
            let mut out = Vec::new();
            assert_eq!(dec.feed(b"", &mut out), Ok(Progress::Complete));
            assert_eq!(dec.feed(b"junk", &mut out), Ok(Progress::Complete));
            assert!(out.is_empty());
            assert_eq!(dec.at_eof(), Ok(()));
        }
    }

    #[test]
    fn cap_reached_is_capped_with_exactly_max_body_bytes() {
        for framing in [Framing::Length(100), Framing::UntilClose] {
            let mut dec = BodyDecoder::new(framing, 7);
            let mut out = Vec::new();
            assert_eq!(dec.feed(b"abcd", &mut out), Ok(Progress::NeedMore));
            assert_eq!(
                dec.feed(b"efghij", &mut out),
                Ok(Progress::Capped),
                "{framing:?}"
            );
            assert_eq!(dec.feed(b"klm", &mut out), Ok(Progress::Capped));
            assert_eq!(out, b"abcdefg");
        }
        let body = encode_chunked(b"abcdefghij", &[3, 3]);
        let (p, out) = decode(Framing::Chunked, 7, &body);
        assert_eq!(p, Ok(Progress::Capped));
        assert_eq!(out, b"abcdefg");
    }

    #[test]
    fn body_exactly_at_cap_is_complete_not_capped() {
        let (p, out) = decode(Framing::Length(5), 5, b"hello");
        assert_eq!((p, out.as_slice()), (Ok(Progress::Complete), &b"hello"[..]));
        let (p, out) = decode(Framing::Chunked, 5, b"5\r\nhello\r\n0\r\n\r\n");
        assert_eq!((p, out.as_slice()), (Ok(Progress::Complete), &b"hello"[..]));
    }

    #[test]
    fn cap_counts_payload_not_callers_buffer() {
        let mut dec = BodyDecoder::new(Framing::UntilClose, 4);
        let mut out = b"already here".to_vec();
        assert_eq!(dec.feed(b"abcdef", &mut out), Ok(Progress::Capped));
        assert_eq!(out, b"already hereabcd");
    }

    #[test]
    fn until_close_then_eof_is_ok() {
        let mut dec = BodyDecoder::new(Framing::UntilClose, 100);
        let mut out = Vec::new();
        assert_eq!(dec.feed(b"some ", &mut out), Ok(Progress::NeedMore));
        assert_eq!(dec.feed(b"body", &mut out), Ok(Progress::NeedMore));
        assert_eq!(dec.at_eof(), Ok(()));
        assert_eq!(out, b"some body");
    }

    #[test]
    fn chunked_body_one_byte_at_a_time_decodes() {
        let body = b"4\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\n\r\nEXTRA";
        let mut dec = BodyDecoder::new(Framing::Chunked, 1000);
        let mut out = Vec::new();
        let end = body.len() - 5;
        for (i, b) in body.iter().enumerate() {
            let p = dec.feed(std::slice::from_ref(b), &mut out).unwrap();
            if i + 1 < end {
                assert_eq!(p, Progress::NeedMore, "byte {i}");
            } else {
                assert_eq!(p, Progress::Complete, "byte {i}");
            }
        }
        assert_eq!(out, b"Wikipedia in\r\n\r\nchunks.");
        assert_eq!(dec.at_eof(), Ok(()));
    }

    #[test]
    fn chunked_body_split_across_reads_decodes() {
        let mut dec = BodyDecoder::new(Framing::Chunked, 1000);
        let mut out = Vec::new();
        assert_eq!(dec.feed(b"5\r\nhel", &mut out), Ok(Progress::NeedMore));
        assert_eq!(dec.feed(b"lo\r", &mut out), Ok(Progress::NeedMore));
        assert_eq!(dec.feed(b"\n0\r\n", &mut out), Ok(Progress::NeedMore));
        assert_eq!(dec.feed(b"\r\n", &mut out), Ok(Progress::Complete));
        assert_eq!(out, b"hello");
    }

    #[test]
    fn chunked_with_extensions_and_trailers_decodes() {
        let body = b"5;name=value;q=\"a b\"\r\nhello\r\n6 ; ext\r\n world\r\n0;last\r\nExpires: never\r\nX-Trailer: 1\r\n\r\n";
        let (p, out) = decode(Framing::Chunked, 1000, body);
        assert_eq!(p, Ok(Progress::Complete));
        assert_eq!(out, b"hello world");
    }

    #[test]
    fn chunked_with_bare_lf_decodes() {
        let (p, out) = decode(Framing::Chunked, 1000, b"3\nabc\n2\r\nde\n0\n\n");
        assert_eq!(p, Ok(Progress::Complete));
        assert_eq!(out, b"abcde");
    }

    #[test]
    fn bad_chunk_size_is_an_error() {
        for body in [&b"zz\r\n"[..], b"\r\n", b"5 x\r\n", b"-1\r\n"] {
            let (p, _) = decode(Framing::Chunked, 1000, body);
            assert!(
                matches!(p, Err(BodyError::BadChunk(_))),
                "body {:?}",
                body.escape_ascii().to_string()
            );
        }
    }

    #[test]
    fn overflowing_chunk_size_is_an_error() {
        let (p, _) = decode(Framing::Chunked, 1000, b"10000000000000000\r\n");
        assert_eq!(p, Err(BodyError::BadChunk("chunk size too large")));
        // Largest u64 is fine as a size (it is just never satisfied).
        let (p, _) = decode(Framing::Chunked, 1000, b"ffffffffffffffff\r\nabc");
        assert_eq!(p, Ok(Progress::NeedMore));
    }

    #[test]
    fn chunk_data_without_crlf_is_an_error_and_sticks() {
        let mut dec = BodyDecoder::new(Framing::Chunked, 1000);
        let mut out = Vec::new();
        let err = dec.feed(b"3\r\nabcX", &mut out).unwrap_err();
        assert!(matches!(err, BodyError::BadChunk(_)));
        assert_eq!(dec.feed(b"0\r\n\r\n", &mut out), Err(err.clone()));
        assert_eq!(dec.at_eof(), Err(err));
    }

    #[test]
    fn endless_chunk_extension_is_rejected() {
        let mut dec = BodyDecoder::new(Framing::Chunked, 1000);
        let mut out = Vec::new();
        let ext = vec![b'a'; MAX_CHUNK_LINE + 10];
        assert_eq!(dec.feed(b"1;", &mut out), Ok(Progress::NeedMore));
        assert!(matches!(
            dec.feed(&ext, &mut out),
            Err(BodyError::BadChunk(_))
        ));
    }

    #[test]
    fn unfinished_chunked_then_eof_is_truncated() {
        let mut dec = BodyDecoder::new(Framing::Chunked, 1000);
        let mut out = Vec::new();
        assert_eq!(dec.feed(b"5\r\nhel", &mut out), Ok(Progress::NeedMore));
        assert_eq!(dec.at_eof(), Err(BodyError::Truncated));
    }

    #[test]
    fn chunked_missing_final_blank_line_then_eof_is_ok() {
        let mut dec = BodyDecoder::new(Framing::Chunked, 1000);
        let mut out = Vec::new();
        assert_eq!(
            dec.feed(b"5\r\nhello\r\n0\r\n", &mut out),
            Ok(Progress::NeedMore)
        );
        assert_eq!(dec.at_eof(), Ok(()));
        assert_eq!(out, b"hello");
    }

    #[test]
    fn media_type_cases() {
        let s = |s: &str| s.to_owned();
        assert_eq!(
            media_type("Text/HTML; charset=\"UTF-8\""),
            (s("text/html"), Some(s("utf-8")))
        );
        assert_eq!(media_type("text/plain"), (s("text/plain"), None));
        assert_eq!(
            media_type("  application/XHTML+xml ;foo=bar; Charset = ISO-8859-1 "),
            (s("application/xhtml+xml"), Some(s("iso-8859-1")))
        );
        assert_eq!(
            media_type("text/html; charset='windows-1252'"),
            (s("text/html"), Some(s("windows-1252")))
        );
        assert_eq!(media_type("text/html; charset="), (s("text/html"), None));
        assert_eq!(media_type(""), (s(""), None));
        assert_eq!(media_type(";charset=utf-8"), (s(""), Some(s("utf-8"))));
    }

    #[test]
    fn is_html_cases() {
        assert!(is_html(Some("text/html")));
        assert!(is_html(Some("TEXT/HTML; charset=utf-8")));
        assert!(is_html(Some("application/xhtml+xml")));
        assert!(!is_html(Some("text/plain")));
        assert!(!is_html(Some("application/json")));
        assert!(!is_html(Some("")));
        assert!(!is_html(None));
    }

    fn any_framing() -> impl Strategy<Value = Framing> {
        prop_oneof![
            Just(Framing::None),
            any::<u64>().prop_map(Framing::Length),
            (0u64..64).prop_map(Framing::Length),
            Just(Framing::Chunked),
            Just(Framing::UntilClose),
        ]
    }

    /// Bytes that look chunk-ish often enough to reach deep states.
    fn chunkish_bytes() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(
            prop_oneof![
                any::<u8>(),
                Just(b'\r'),
                Just(b'\n'),
                Just(b'0'),
                Just(b'1'),
                Just(b'a'),
                Just(b';'),
            ],
            0..200,
        )
    }

    proptest! {
        #[test]
        fn parse_head_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..512), max in 0usize..600) {
            let _ = parse_head(&bytes, max);
            let mut with_prefix = b"HTTP/1.1 ".to_vec();
            with_prefix.extend_from_slice(&bytes);
            let _ = parse_head(&with_prefix, max);
        }

        #[test]
        fn parse_head_never_panics_on_header_like_lines(
            lines in prop::collection::vec("[ -~\t]{0,30}", 0..20),
            sep in prop_oneof![Just("\r\n"), Just("\n")],
        ) {
            let raw = format!("HTTP/1.1 200 OK{sep}{}{sep}{sep}", lines.join(sep));
            if let Ok(Some(h)) = parse_head(raw.as_bytes(), DEFAULT_MAX_HEAD) {
                prop_assert_eq!(Some(h.head_len), find_head_end(raw.as_bytes()));
            }
        }

        #[test]
        fn body_decoder_never_panics(
            framing in any_framing(),
            max in 0usize..300,
            reads in prop::collection::vec(chunkish_bytes(), 0..6),
        ) {
            let mut dec = BodyDecoder::new(framing, max);
            let mut out = Vec::new();
            for read in &reads {
                let _ = dec.feed(read, &mut out);
                prop_assert!(out.len() <= max);
            }
            let _ = dec.at_eof();
        }

        #[test]
        fn chunked_roundtrip_at_random_split_points(
            payload in prop::collection::vec(any::<u8>(), 0..600),
            sizes in prop::collection::vec(1usize..80, 0..20),
            mut cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
        ) {
            let encoded = encode_chunked(&payload, &sizes);
            let mut points: Vec<usize> = cuts.iter_mut().map(|i| i.index(encoded.len() + 1)).collect();
            points.push(0);
            points.push(encoded.len());
            points.sort_unstable();
            let mut dec = BodyDecoder::new(Framing::Chunked, usize::MAX);
            let mut out = Vec::new();
            let mut last = Progress::NeedMore;
            for w in points.windows(2) {
                last = dec.feed(&encoded[w[0]..w[1]], &mut out).unwrap();
            }
            prop_assert_eq!(last, Progress::Complete);
            prop_assert_eq!(out, payload);
        }

        #[test]
        fn capped_chunked_output_is_a_prefix(
            payload in prop::collection::vec(any::<u8>(), 1..300),
            sizes in prop::collection::vec(1usize..50, 0..10),
            max in 0usize..300,
        ) {
            let encoded = encode_chunked(&payload, &sizes);
            let mut dec = BodyDecoder::new(Framing::Chunked, max);
            let mut out = Vec::new();
            let p = dec.feed(&encoded, &mut out).unwrap();
            let n = payload.len().min(max);
            prop_assert_eq!(&out[..], &payload[..n]);
            prop_assert_eq!(p, if max >= payload.len() { Progress::Complete } else { Progress::Capped });
        }
    }
}
