//! gzip's framing (RFC 1952) around raw deflate: a member's header, its
//! deflate stream (flate2's `Decompress`), its trailer (CRC-32 and length,
//! checked), and the members that may follow it, a call at a time. What
//! follows the last member without starting another is not read.
//!
//! Not deflate itself, and not the order of stages (`mod.rs`).
// Lints: those of `http` apply here too.

use flate2::{Decompress, Status};

use super::step::{inflate_into, step_of, Out, Run};
use super::DecodeError;

/// The coding's name, for errors.
const NAME: &str = "gzip";

/// The magic bytes that start a gzip member.
pub(super) const MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Header flags (RFC 1952 §2.3.1).
const FHCRC: u8 = 0x02;
const FEXTRA: u8 = 0x04;
const FNAME: u8 = 0x08;
const FCOMMENT: u8 = 0x10;
const RESERVED: u8 = 0xe0;

/// A gzip stream being decoded: one member after the other.
pub(crate) struct Gzip {
    part: Part,
    inflate: Decompress,
    /// CRC-32 and length (mod 2^32) of the member's output so far.
    crc: crc32fast::Hasher,
    size: u32,
}

/// Where in a member the next byte is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// The first member's header.
    First,
    Deflate,
    /// After a member's trailer: another member, or the end.
    Between,
}

impl Default for Gzip {
    fn default() -> Self {
        Gzip {
            part: Part::First,
            inflate: Decompress::new(false),
            crc: crc32fast::Hasher::new(),
            size: 0,
        }
    }
}

impl Gzip {
    /// One call's work on the front of `input`, the rest of the stream.
    pub(crate) fn run(
        &mut self,
        input: &[u8],
        out: &mut Out,
        room: usize,
    ) -> Result<Run, DecodeError> {
        match self.part {
            Part::First => self.header(input),
            // Bytes that start no member (a stray newline, NUL padding)
            // are not part of the stream: browsers, curl and gzip(1)
            // ignore them too.
            Part::Between if !input.starts_with(&MAGIC) => Ok(Run {
                consumed: 0,
                ended: true,
            }),
            Part::Between => {
                self.inflate.reset(false);
                self.crc = crc32fast::Hasher::new();
                self.size = 0;
                self.header(input)
            }
            Part::Deflate => {
                let start = out.len();
                let (consumed, status) =
                    inflate_into(&mut self.inflate, step_of(input), out, room).map_err(corrupt)?;
                let new = out.since(start);
                self.crc.update(new);
                // ISIZE is the length mod 2^32.
                self.size = self.size.wrapping_add(new.len() as u32);
                let mut consumed = consumed;
                if status == Status::StreamEnd {
                    // The trailer in the same call: a call that ends the
                    // deflate stream may have nothing else to show.
                    let rest = input.get(consumed..).unwrap_or_default();
                    consumed = consumed.saturating_add(self.trailer(rest)?);
                }
                Ok(Run {
                    consumed,
                    ended: false,
                })
            }
        }
    }

    /// A member's trailer at the front of `input`, checked: its length.
    fn trailer(&mut self, input: &[u8]) -> Result<usize, DecodeError> {
        let (Some(crc), Some(size)) = (input.get(..4), input.get(4..8)) else {
            return Err(cut("the body ends inside a member's trailer"));
        };
        let crc = u32::from_le_bytes(crc.try_into().unwrap_or_default());
        let size = u32::from_le_bytes(size.try_into().unwrap_or_default());
        if crc != self.crc.clone().finalize() || size != self.size {
            return Err(corrupt(
                "a member's CRC-32 or length does not match its data".into(),
            ));
        }
        self.part = Part::Between;
        Ok(8)
    }

    /// A member's header at the front of `input`: skipped.
    fn header(&mut self, input: &[u8]) -> Result<Run, DecodeError> {
        let consumed = header_len(input)?;
        self.part = Part::Deflate;
        Ok(Run {
            consumed,
            ended: false,
        })
    }
}

/// The length a gzip body says it has once decoded: the ISIZE of its last
/// member (mod 2^32), in its last four bytes; None if too short to be a
/// member. A hint (the members before it, or bytes after it, are not
/// counted), never a bound.
pub(super) fn stated_len(input: &[u8]) -> Option<usize> {
    if input.len() < 18 {
        return None;
    }
    let isize = input.get(input.len().saturating_sub(4)..)?;
    usize::try_from(u32::from_le_bytes(isize.try_into().ok()?)).ok()
}

/// The length of the member header at the front of `input` (the rest of
/// the body: a header it does not hold whole is cut short).
fn header_len(input: &[u8]) -> Result<usize, DecodeError> {
    let short = || cut("the body ends inside a member's header");
    // What there is of the fixed part is checked first: a body that ends
    // in it is cut short only if what came is a gzip header's start.
    let fixed = input.get(..10).unwrap_or(input);
    if !MAGIC.starts_with(fixed.get(..2).unwrap_or(fixed)) {
        return Err(corrupt("not a gzip member (bad magic bytes)".into()));
    }
    if fixed.get(2).is_some_and(|&method| method != 8) {
        return Err(corrupt("unknown compression method".into()));
    }
    let flags = fixed.get(3).copied().unwrap_or_default();
    if flags & RESERVED != 0 {
        return Err(corrupt("reserved header flags set".into()));
    }
    if fixed.len() < 10 {
        return Err(short());
    }
    let mut at = 10usize;
    if flags & FEXTRA != 0 {
        let xlen = input.get(at..at.saturating_add(2)).ok_or_else(short)?;
        let xlen = u16::from_le_bytes(xlen.try_into().unwrap_or_default());
        at = at.saturating_add(2).saturating_add(usize::from(xlen));
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            let rest = input.get(at..).ok_or_else(short)?;
            let nul = memchr::memchr(0, rest).ok_or_else(short)?;
            at = at.saturating_add(nul).saturating_add(1);
        }
    }
    if flags & FHCRC != 0 {
        at = at.saturating_add(2);
    }
    if at > input.len() {
        return Err(short());
    }
    Ok(at)
}

/// A broken gzip stream.
fn corrupt(reason: String) -> DecodeError {
    DecodeError::Corrupt {
        coding: NAME,
        reason,
    }
}

/// A gzip stream the body ends inside.
fn cut(reason: &str) -> DecodeError {
    DecodeError::Truncated {
        coding: NAME,
        reason: reason.to_string(),
    }
}
