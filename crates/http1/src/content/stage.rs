//! One coding being undone: a decoder given, per call, a slice of its
//! input (it takes at most [`STEP`](super::STEP) bytes of it) and room
//! for a bounded number of output bytes, through the decoders' streaming
//! calls (flate2's `Decompress`, brotli-decompressor's
//! `BrotliDecompressStream`, libzstd's `ZSTD_decompressStream`).
//! How much a call may do is the caller's to say; what a call did, and the
//! helpers every decoder's call shares, are `step.rs`.
//!
//! Not the order of stages, the cap or the errors' wording for records
//! (`mod.rs`), nor gzip's member framing (`gzip.rs`) or zstd's frames and
//! window (`zstd.rs`).
// Lints: those of `http` apply here too.

use brotli_decompressor::{BrotliDecompressStream, BrotliResult, BrotliState, StandardAlloc};
use flate2::{Decompress, Status};

use super::gzip::Gzip;
use super::step::{append, inflate_into, step_of, Out, Run};
use super::zstd::Zstd;
use super::{Coding, DecodeError};

/// The decoder of one coding.
pub(super) enum Stage {
    Gzip(Box<Gzip>),
    Deflate(Box<Decompress>),
    Brotli(Box<BrotliState<StandardAlloc, StandardAlloc, StandardAlloc>>),
    Zstd(Box<Zstd>),
}

impl std::fmt::Debug for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Stage {
    /// The decoder for `coding` of a stream that starts with `input`; an
    /// error for a coding this crawler does not undo, or if the decoder
    /// cannot be made.
    pub(crate) fn new(coding: &Coding, input: &[u8]) -> Result<Stage, DecodeError> {
        Ok(match coding {
            Coding::Gzip => Stage::Gzip(Box::default()),
            Coding::Deflate => Stage::Deflate(Box::new(Decompress::new(is_zlib(input)))),
            // RFC 7932 brotli: a window of at most 16 MiB (the "large
            // window" variant, up to 1 GiB, is not `br`).
            Coding::Brotli => Stage::Brotli(Box::new(BrotliState::new_strict(
                StandardAlloc::default(),
                StandardAlloc::default(),
                StandardAlloc::default(),
            ))),
            Coding::Zstd => Stage::Zstd(Box::new(Zstd::new()?)),
            Coding::Other(name) => return Err(DecodeError::Unsupported(name.clone())),
        })
    }

    /// The coding's name, for errors.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Stage::Gzip(_) => "gzip",
            Stage::Deflate(_) => "deflate",
            Stage::Brotli(_) => "br",
            Stage::Zstd(_) => "zstd",
        }
    }

    /// Decode from the front of `input` (the rest of the stream: at most
    /// [`STEP`](super::STEP) bytes of it are used), appending at most
    /// `room` bytes to `out`. An error says what is wrong with the stream.
    pub(crate) fn run(
        &mut self,
        input: &[u8],
        out: &mut Out,
        room: usize,
    ) -> Result<Run, DecodeError> {
        let name = self.name();
        let corrupt = |reason| DecodeError::Corrupt {
            coding: name,
            reason,
        };
        match self {
            Stage::Gzip(gzip) => gzip.run(input, out, room),
            Stage::Deflate(inflate) => {
                let (consumed, status) =
                    inflate_into(inflate, step_of(input), out, room).map_err(corrupt)?;
                Ok(Run {
                    consumed,
                    ended: status == Status::StreamEnd,
                })
            }
            Stage::Brotli(state) => brotli_into(state, step_of(input), out, room).map_err(corrupt),
            Stage::Zstd(zstd) => zstd.run(input, out, room),
        }
    }
}

/// One call of the brotli decoder on `input`.
fn brotli_into(
    state: &mut BrotliState<StandardAlloc, StandardAlloc, StandardAlloc>,
    input: &[u8],
    out: &mut Out,
    room: usize,
) -> Result<Run, String> {
    let mut available_in = input.len();
    let mut consumed = 0;
    let result = append(out, room, |buf| {
        let mut available_out = buf.len();
        let mut written = 0;
        let mut total = 0;
        let result = BrotliDecompressStream(
            &mut available_in,
            &mut consumed,
            input,
            &mut available_out,
            &mut written,
            buf,
            &mut total,
            state,
        );
        (written, result)
    });
    match result {
        BrotliResult::ResultSuccess => Ok(Run {
            consumed,
            ended: true,
        }),
        BrotliResult::NeedsMoreInput | BrotliResult::NeedsMoreOutput => Ok(Run {
            consumed,
            ended: false,
        }),
        BrotliResult::ResultFailure => Err(format!("{:?}", state.error_code)),
    }
}

/// Whether a deflate body starts with a zlib header (RFC 1950: method 8,
/// window at most 32 KiB, header check a multiple of 31) rather than a raw
/// deflate block. A raw stream can look like one by chance only if its
/// first block is of a type that does not exist.
pub(super) fn is_zlib(input: &[u8]) -> bool {
    match input {
        [cmf, flg, ..] => {
            cmf & 0x0f == 8 && cmf >> 4 <= 7 && (u16::from(*cmf) << 8 | u16::from(*flg)) % 31 == 0
        }
        _ => false,
    }
}
