//! Content codings (RFC 9110 §8.4): what a response's `Content-Encoding`
//! says was done to its body, and the undoing of it, so that links are read
//! from the page a browser would see.
//!
//! `gzip` (also `x-gzip`, several members in a row), `deflate` in both of
//! its forms (zlib-wrapped, as RFC 9110 says, and the raw deflate stream
//! that many servers send instead), `br`, `zstd` (RFC 8878, its window
//! bounded at [`MAX_ZSTD_WINDOW`]), and stacked codings
//! (`Content-Encoding: gzip, br` is undone right to left), at most
//! [`MAX_CODINGS`] of them: a body that names more is not decoded (curl's
//! limit since CVE-2022-32206; ten thousand layers of gzip are a few MB on
//! the wire and hours of work). Decoding is by what the server *says* it
//! did, whatever the request asked for, so a body compressed although not
//! asked for is read too.
//!
//! Lenient where browsers are: an empty body is empty under any coding
//! (a 204, a 304 or a redirect that names one), and bytes after the end
//! of a stream (a newline or NUL padding after the last gzip member or
//! zstd frame) are not read. A coding it does not know (`none`, `UTF-8`,
//! `binary`: misconfigured servers; `compress`) leaves the body as sent,
//! as Chromium does: it is read as it came, and the coding is reported
//! ([`DecodeError::Unsupported`]) for the record to show. `identity`
//! changes nothing.
//!
//! The work is cut into steps: a [`Decoding`] is driven by its caller, one
//! [`Decoding::step`] at a time, each giving a decoder at most [`STEP`]
//! bytes of input and room for at most [`STEP`] bytes of output, so an
//! async caller can let other tasks run between steps. Every stage writes
//! at most `cap` bytes (the crawl's `--max-body`): a decompression bomb is
//! cut there, so it costs bounded memory (the cap for the stage's input and
//! for its output, plus brotli's window of at most 16 MiB or zstd's of at
//! most 8 MiB) and bounded work (the stages' `cap` bytes each). Decoders:
//! flate2 (miniz_oxide),
//! brotli-decompressor and libzstd (zstd-safe; why that one: `zstd.rs`),
//! through their streaming calls; gzip's member framing is `gzip.rs`,
//! zstd's frames and window `zstd.rs`, each decoder's step `stage.rs`.
//! A gzip or zlib stream that fits in one step, input and output, is
//! first tried whole with libdeflate (`whole.rs`: twice as fast on a
//! typical page), which gives the same body or hands it to the stream.
//!
//! Not the transfer framing (`body.rs` undoes chunking first), and no I/O:
//! the fetch keeps the bytes as received (for WARC) and this runs on them.
// Lints: the crate's (`lib.rs`) apply here too.

mod gzip;
mod stage;
mod step;
mod whole;
mod zstd;

use thiserror::Error;

use stage::Stage;
use step::Out;

pub use zstd::MAX_WINDOW as MAX_ZSTD_WINDOW;

/// Most codings a body may name and still be decoded (curl's
/// `MAX_ENCODE_STACK`).
pub const MAX_CODINGS: usize = 5;

/// Most bytes a [`Decoding::step`] gives a decoder, and most it lets it
/// write: 64 KiB of inflate or brotli is well under a millisecond.
pub const STEP: usize = 64 * 1024;

/// Least room a stage's first step gives its decoder.
const MIN_ROOM: usize = 4 * 1024;

/// One coding named in `Content-Encoding`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Coding {
    /// `gzip` or `x-gzip`: one or more gzip members in a row.
    Gzip,
    /// zlib-wrapped or raw deflate: told apart by the stream's first bytes.
    Deflate,
    /// `br` (RFC 7932).
    Brotli,
    /// `zstd` (RFC 8878), its window bounded.
    Zstd,
    /// A coding this crawler does not know (`compress`, or a misconfigured
    /// server's `none` or `UTF-8`), as named, lower-cased.
    Other(String),
}

impl Coding {
    /// The coding a `Content-Encoding` item names; None for `identity` (and
    /// an empty item), which change nothing.
    pub fn from_token(token: &[u8]) -> Option<Coding> {
        let lower = token.trim_ascii().to_ascii_lowercase();
        match lower.as_slice() {
            b"" | b"identity" => None,
            b"gzip" | b"x-gzip" => Some(Coding::Gzip),
            b"deflate" => Some(Coding::Deflate),
            b"br" => Some(Coding::Brotli),
            b"zstd" => Some(Coding::Zstd),
            _ => Some(Coding::Other(String::from_utf8_lossy(&lower).into_owned())),
        }
    }

    /// The coding's name as a server writes it.
    pub fn name(&self) -> &str {
        match self {
            Coding::Gzip => "gzip",
            Coding::Deflate => "deflate",
            Coding::Brotli => "br",
            Coding::Zstd => "zstd",
            Coding::Other(name) => name,
        }
    }
}

/// `codings` as a `Content-Encoding` value (`gzip, br`).
pub fn names(codings: &[Coding]) -> String {
    codings
        .iter()
        .map(Coding::name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why a body could not be decoded to its end.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// More than [`MAX_CODINGS`] codings named: nothing was decoded.
    #[error("more than {MAX_CODINGS} content codings named: the body is not decoded")]
    TooMany,
    /// Codings this crawler does not know (their names, as in
    /// `Content-Encoding`): the body is left as sent, none of its codings
    /// undone, as Chromium does.
    #[error("unknown Content-Encoding {0:?}: the body is read as sent")]
    Unsupported(String),
    /// A stream asks for a larger window (the history a decoder must keep)
    /// than this crawler keeps: it is not decoded from there on.
    #[error("{coding} frame asks for a window of {}, over the {max} bytes allowed", asked(*.window))]
    WindowTooLarge {
        /// The coding's name.
        coding: &'static str,
        /// What it asks for, if read before the decoder refused it.
        window: Option<u64>,
        /// The largest window allowed.
        max: u64,
    },
    /// The stream is broken for this coding (bad data, a check that
    /// fails); what decoded before the fault is kept.
    #[error("bad {coding} body: {reason}")]
    Corrupt {
        /// The coding's name.
        coding: &'static str,
        /// The decoder's words for it.
        reason: String,
    },
    /// The body ends before its coded stream does (the connection closed,
    /// or `Content-Length` ran out, before a gzip trailer or the end of a
    /// deflate, brotli or zstd stream): a body cut short in transfer, not
    /// bad data. What decoded is kept.
    #[error("{coding} body cut short: {reason}")]
    Truncated {
        /// The coding's name.
        coding: &'static str,
        /// The decoder's words for it.
        reason: String,
    },
}

/// Room for the first step of the stage that undoes `coding` on `input`,
/// and what its output allocates at first: for gzip the length its
/// trailer states, and a byte more, so the call that writes the last byte
/// sees the end too; else four times the input (HTML compresses three to
/// six times). At least [`MIN_ROOM`], at most [`STEP`]: a hint, never a
/// bound (the room doubles from there, and the cap holds).
fn first_room(coding: &Coding, input: &[u8]) -> usize {
    let stated = match coding {
        Coding::Gzip => gzip::stated_len(input).map(|n| n.saturating_add(1)),
        _ => None,
    };
    stated
        .unwrap_or_else(|| input.len().saturating_mul(4))
        .clamp(MIN_ROOM, STEP)
}

/// A window asked for, for [`DecodeError::WindowTooLarge`].
fn asked(window: Option<u64>) -> String {
    window.map_or_else(|| "more".to_string(), |w| format!("{w} bytes"))
}

/// A body with its codings undone, at most `cap` bytes.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Decoded {
    /// The body as decoded (or as sent, if a coding is unknown).
    pub body: Vec<u8>,
    /// A stage reached the cap before its stream ended: the body is cut.
    pub capped: bool,
    /// The stream broke off (`body` holds what decoded before), or the body
    /// is as sent because a coding is unknown.
    pub error: Option<DecodeError>,
}

/// Undo `codings` on `body` in one go: [`Decoding`] stepped to its end.
pub fn decode(codings: &[Coding], body: &[u8], cap: usize) -> Decoded {
    let mut decoding = Decoding::new(codings, body, cap);
    loop {
        if let Some(decoded) = decoding.step() {
            return decoded;
        }
    }
}

/// The undoing of a body's codings, a step at a time: call
/// [`Decoding::step`] until it returns the [`Decoded`] body.
///
/// The stages run one after the other, each on the whole output of the one
/// before (so at most two bodies of `cap` bytes are held). A stage cut by
/// the cap or by a fault hands on what it has: the stages after it decode
/// the front of the body, and their own early end is no second error.
#[derive(Debug)]
pub struct Decoding<'b> {
    raw: &'b [u8],
    /// The codings in the order they are undone (the last one named first).
    codings: Vec<Coding>,
    /// How many of them have been undone.
    done: usize,
    /// The decoder of the coding being undone.
    stage: Option<Stage>,
    /// Its input: the output of the stage before, or None for `raw`.
    input: Option<Vec<u8>>,
    /// Bytes of its input used.
    at: usize,
    /// Its output so far.
    out: Out,
    /// Room for its first step (see [`first_room`]); each step after gives
    /// as much as the output holds, so the room doubles up to [`STEP`].
    first: usize,
    cap: usize,
    capped: bool,
    /// An earlier stage stopped before the end of its stream.
    cut: bool,
    error: Option<DecodeError>,
    /// Small gzip and zlib streams are tried whole first (`whole.rs`);
    /// off only in tests, which compare the two paths.
    whole: bool,
}

impl<'b> Decoding<'b> {
    /// The decoding of `raw`, coded with `codings` (in the order the server
    /// applied them), each stage writing at most `cap` bytes.
    pub fn new(codings: &[Coding], raw: &'b [u8], cap: usize) -> Decoding<'b> {
        Decoding {
            raw,
            codings: codings.iter().rev().cloned().collect(),
            done: 0,
            stage: None,
            input: None,
            at: 0,
            out: Out::default(),
            first: MIN_ROOM,
            cap,
            capped: false,
            cut: false,
            error: None,
            whole: true,
        }
    }

    /// [`Decoding::new`] with every stage streamed (`whole.rs` not tried).
    #[cfg(test)]
    fn streamed(codings: &[Coding], raw: &'b [u8], cap: usize) -> Decoding<'b> {
        Decoding {
            whole: false,
            ..Decoding::new(codings, raw, cap)
        }
    }

    /// One step of the work: at most [`STEP`] bytes of input read and of
    /// output written. The decoded body once all is done, else None (call
    /// again).
    pub fn step(&mut self) -> Option<Decoded> {
        if self.codings.len() > MAX_CODINGS {
            return Some(Decoded {
                body: Vec::new(),
                capped: false,
                error: Some(DecodeError::TooMany),
            });
        }
        if let Some(unknown) = self.unknown() {
            return Some(Decoded {
                body: self.raw.get(..self.cap).unwrap_or(self.raw).to_vec(),
                capped: self.raw.len() > self.cap,
                error: Some(DecodeError::Unsupported(unknown)),
            });
        }
        let Some(stage) = self.stage.as_mut() else {
            return self.start_next();
        };
        let input = self.input.as_deref().unwrap_or(self.raw);
        let rest = input.get(self.at..).unwrap_or_default();
        // At least one byte: the output never stays above the cap.
        let room = self
            .cap
            .saturating_add(1)
            .saturating_sub(self.out.len())
            .min(STEP)
            .min(self.out.len().max(self.first));
        let before = self.out.len();
        let run = stage.run(rest, &mut self.out, room);
        let coding = stage.name();
        let produced = self.out.len().saturating_sub(before);
        if self.out.len() > self.cap {
            // Past the cap, whatever else the call says.
            self.out.truncate(self.cap);
            self.capped = true;
            self.end_stage();
            return None;
        }
        match run {
            Err(error) => {
                self.fail(error);
                self.end_stage();
            }
            Ok(run) if run.ended => self.end_stage(),
            Ok(run) => {
                self.at = self.at.saturating_add(run.consumed);
                if run.consumed == 0 && produced == 0 {
                    // With input left, the decoder is stuck on it; with
                    // none, the body ended before the stream did.
                    self.fail(if rest.is_empty() {
                        DecodeError::Truncated {
                            coding,
                            reason: "the body ends before the stream does".to_string(),
                        }
                    } else {
                        DecodeError::Corrupt {
                            coding,
                            reason: "the stream makes no progress".to_string(),
                        }
                    });
                    self.end_stage();
                }
            }
        }
        None
    }

    /// Set up the next stage, or give the body if none is left.
    fn start_next(&mut self) -> Option<Decoded> {
        let Some(coding) = self.codings.get(self.done) else {
            return Some(self.finish());
        };
        let input = self.input.as_deref().unwrap_or(self.raw);
        if input.is_empty() {
            // No bytes under a coding are no bytes: a 204, a 304, a
            // redirect or a `Content-Length: 0` answer that names a coding
            // is empty to a browser, not broken.
            self.input = Some(Vec::new());
            self.done = self.done.saturating_add(1);
            return None;
        }
        // A small gzip or zlib stream in one call, when it decodes
        // whole; else the streaming stage, from the stream's start.
        if let Some(body) = self
            .whole
            .then(|| whole::inflate(coding, input, self.cap))
            .flatten()
        {
            self.out = Out::from_vec(body);
            self.end_stage();
            return None;
        }
        match Stage::new(coding, input) {
            Ok(stage) => {
                self.stage = Some(stage);
                self.at = 0;
                self.first = first_room(coding, input);
                self.out = Out::with_capacity(self.first.min(self.cap.saturating_add(1)));
            }
            Err(error) => {
                // No decoder: nothing of this coding is undone.
                self.fail(error);
                self.end_stage();
            }
        }
        None
    }

    /// The names of the codings named that this crawler does not know, if
    /// any (`none, utf-8`).
    fn unknown(&self) -> Option<String> {
        let unknown: Vec<Coding> = self
            .codings
            .iter()
            .rev()
            .filter(|c| matches!(c, Coding::Other(_)))
            .cloned()
            .collect();
        (!unknown.is_empty()).then(|| names(&unknown))
    }

    /// The body once every stage is over: the last one's output (or the
    /// raw body, cut at the cap, if there was none).
    fn finish(&mut self) -> Decoded {
        let body = match self.input.take() {
            Some(body) => body,
            None => {
                self.capped |= self.raw.len() > self.cap;
                self.raw.get(..self.cap).unwrap_or(self.raw).to_vec()
            }
        };
        Decoded {
            body,
            capped: self.capped,
            error: self.error.take(),
        }
    }

    /// The current stage is over: its output is the next one's input.
    fn end_stage(&mut self) {
        self.stage = None;
        self.cut |= self.capped || self.error.is_some();
        self.input = Some(std::mem::take(&mut self.out).into_vec());
        self.at = 0;
        self.done = self.done.saturating_add(1);
    }

    /// A fault of the current stage: kept unless an earlier stage was cut
    /// short (then the fault is only that cut, seen again).
    fn fail(&mut self, error: DecodeError) {
        if !self.cut && self.error.is_none() {
            self.error = Some(error);
        }
    }
}

#[cfg(test)]
mod tests;
