//! The response body: a [`BodyDecoder`] fed the bytes after the head, by
//! the head's framing (none, `Content-Length`, chunked, until close), up to
//! a cap.
//!
//! Pure and panic-free (the crate's lints, `lib.rs`, cover it): it runs on bytes
//! off the network.

use super::Framing;

/// Longest chunk-size line (hex digits, whitespace, extensions) accepted.
pub(super) const MAX_CHUNK_LINE: usize = 4 * 1024;
/// Most trailer bytes accepted after the last chunk.
const MAX_TRAILERS: usize = 64 * 1024;

/// What a [`BodyDecoder::feed`] call achieved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
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
#[non_exhaustive]
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
    /// Bytes came after the end of the body (the next answer of a server
    /// that talks unasked, or garbage): the connection is not reusable.
    extra: bool,
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
            extra: false,
        }
    }

    /// The body is complete and not one byte came after it: the
    /// connection is where the next answer would start (the keep-alive
    /// test, for every framing but until-close).
    pub fn ended_exactly(&self) -> bool {
        self.state == State::Complete && !self.extra
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
            State::Complete => {
                self.extra |= !input.is_empty();
                return Ok(Progress::Complete);
            }
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
            self.extra |= input.len() > owed;
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
                None => {
                    self.extra |= !input.is_empty();
                    return Ok(State::Complete);
                }
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
