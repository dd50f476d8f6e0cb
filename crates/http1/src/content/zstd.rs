//! zstd (RFC 8878), a call at a time: libzstd's streaming decoder
//! (`ZSTD_decompressStream`, through the zstd-safe crate) given a slice of
//! input and room for a bounded number of output bytes per call, as the
//! other stages' decoders are; the window each frame asks for is checked
//! against [`MAX_WINDOW`] before libzstd reads the frame (libzstd holds the
//! whole window in memory); frames in a row are one body, and what follows
//! the last frame without starting another is not read.
//!
//! Why libzstd and not the pure-Rust ruzstd (0.9): libzstd's streaming
//! call has the shape the stepping needs (it takes what it can of an input
//! slice, writes what fits into an output slice and keeps its state
//! between calls, so one call's input and output are bounded by the
//! caller), the window bound is one of its parameters
//! (`ZSTD_d_windowLogMax`), and its error codes tell a refused window from
//! a broken stream. ruzstd's `decode_from_to` decodes every whole block of
//! the input it is given into its own buffer before copying out (64 KiB of
//! RLE blocks, 4 bytes each, are ~2 GiB there: a step's output has no
//! bound), and `decode_blocks` reads a whole block (up to 128 KiB) from a
//! reader per call. libzstd is also the reference decoder, fuzzed by
//! OSS-Fuzz. The price: C code, compiled from the sources vendored in
//! zstd-sys with cc (ring already needs a C compiler), behind zstd-safe's
//! `unsafe` FFI. zstd-safe and zstd-sys are BSD-3-Clause, libzstd
//! BSD-3-Clause (or GPL-2.0). Built without the legacy formats (zstd
//! before v0.8, not RFC 8878) and the dictionary builder.
//!
//! Not the order of stages, the cap or the errors' wording for records
//! (`mod.rs`); no dictionaries (a frame that names one is a fault).
// Lints: those of `http` apply here too.

use zstd_safe::zstd_sys::ZSTD_ErrorCode;
use zstd_safe::{DCtx, DParameter, InBuffer, OutBuffer};

use super::step::{append, step_of, Out, Run};
use super::DecodeError;

/// The largest window a frame may ask for: 8 MiB. RFC 9659 (window sizing
/// for the `zstd` content coding) has decoders support up to 8 MB and
/// encoders never ask for more, as RFC 8878 §3.1.1.1.2 recommends for
/// every decoder. A frame may ask for up to 3.75 TiB, which libzstd would
/// try to allocate.
pub const MAX_WINDOW: u64 = 1 << WINDOW_LOG_MAX;

/// [`MAX_WINDOW`] as libzstd's `ZSTD_d_windowLogMax`.
const WINDOW_LOG_MAX: u32 = 23;

/// The magic number that starts a zstd frame (0xFD2FB528, little-endian).
const MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// The coding's name, for errors.
const NAME: &str = "zstd";

/// A zstd stream being decoded: one frame after the other.
pub(crate) struct Zstd {
    dctx: DCtx<'static>,
    /// The next byte starts a frame: none was read yet, or the last ended.
    at_frame: bool,
    /// Frames read to their end.
    frames: u64,
}

impl Zstd {
    /// A decoder whose window is bounded at [`MAX_WINDOW`]; an error if
    /// libzstd cannot make one (out of memory).
    pub(crate) fn new() -> Result<Zstd, DecodeError> {
        let mut dctx = DCtx::try_create().ok_or_else(|| corrupt("no memory for a decoder"))?;
        dctx.set_parameter(DParameter::WindowLogMax(WINDOW_LOG_MAX))
            .map_err(|code| corrupt(zstd_safe::get_error_name(code)))?;
        Ok(Zstd {
            dctx,
            at_frame: true,
            frames: 0,
        })
    }

    /// One call's work on the front of `input`, the rest of the stream
    /// (at most [`super::STEP`] bytes of it are read).
    pub(crate) fn run(
        &mut self,
        input: &[u8],
        out: &mut Out,
        room: usize,
    ) -> Result<Run, DecodeError> {
        if self.at_frame {
            if self.frames > 0 && !starts_frame(input) {
                // A newline or padding after the last frame.
                return Ok(Run {
                    consumed: 0,
                    ended: true,
                });
            }
            if let Some(window) = window_of(input).filter(|&w| w > MAX_WINDOW) {
                return Err(too_large(Some(window)));
            }
            self.at_frame = false;
        }
        let mut src = InBuffer::around(step_of(input));
        let dctx = &mut self.dctx;
        let result = append(out, room, |buf| {
            let mut dst = OutBuffer::around(buf);
            let result = dctx.decompress_stream(&mut dst, &mut src);
            (dst.pos(), result)
        });
        let consumed = src.pos();
        match result {
            // The frame is over, all of it written out.
            Ok(0) => {
                self.at_frame = true;
                self.frames = self.frames.saturating_add(1);
            }
            Ok(_) => {}
            Err(code)
                if zstd_safe::is_error_kind(
                    code,
                    ZSTD_ErrorCode::ZSTD_error_frameParameter_windowTooLarge,
                ) =>
            {
                return Err(too_large(None));
            }
            Err(code) => return Err(corrupt(zstd_safe::get_error_name(code))),
        }
        Ok(Run {
            consumed,
            ended: false,
        })
    }
}

/// A broken zstd stream.
fn corrupt(reason: &str) -> DecodeError {
    DecodeError::Corrupt {
        coding: NAME,
        reason: reason.to_string(),
    }
}

/// A frame that asks for more than [`MAX_WINDOW`].
fn too_large(window: Option<u64>) -> DecodeError {
    DecodeError::WindowTooLarge {
        coding: NAME,
        window,
        max: MAX_WINDOW,
    }
}

/// Whether `input` starts a frame: a zstd frame, or a skippable one
/// (magic 0x184D2A50 to 0x184D2A5F).
fn starts_frame(input: &[u8]) -> bool {
    match input {
        [0x28, 0xb5, 0x2f, 0xfd, ..] => true,
        [low, 0x2a, 0x4d, 0x18, ..] => low & 0xf0 == 0x50,
        _ => false,
    }
}

/// The window the zstd frame header at the front of `input` asks for
/// (RFC 8878 §3.1.1.1.2: its Window_Descriptor, or for a single-segment
/// frame its content size); None for anything else (a skippable frame, a
/// header cut short: libzstd says what is wrong with those).
fn window_of(input: &[u8]) -> Option<u64> {
    if input.get(..4)? != MAGIC {
        return None;
    }
    let descriptor = *input.get(4)?;
    if descriptor & 0x20 == 0 {
        // Window_Descriptor: exponent (5 bits) and mantissa (3 bits).
        let wd = *input.get(5)?;
        let base = 1u64.checked_shl(10u32.saturating_add(u32::from(wd >> 3)))?;
        let add = (base >> 3).saturating_mul(u64::from(wd & 7));
        return Some(base.saturating_add(add));
    }
    // Single segment: the window is the content size, which follows the
    // dictionary id (0, 1, 2 or 4 bytes) in 1, 2, 4 or 8 bytes.
    let dict_len = match descriptor & 3 {
        0 => 0,
        1 => 1,
        2 => 2,
        _ => 4,
    };
    let size_len = match descriptor >> 6 {
        0 => 1,
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let at = 5usize.saturating_add(dict_len);
    let field = input.get(at..at.saturating_add(size_len))?;
    let size = field
        .iter()
        .rev()
        .fold(0u64, |n, &b| n.wrapping_shl(8) | u64::from(b));
    // A 2-byte field counts from 256.
    Some(if size_len == 2 {
        size.saturating_add(256)
    } else {
        size
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_is_read_from_either_form_of_header() {
        // Window_Descriptor: exponent 21, mantissa 0: 2 GiB.
        assert_eq!(
            window_of(&[0x28, 0xb5, 0x2f, 0xfd, 0x00, 21 << 3]),
            Some(2 << 30)
        );
        // Exponent 13, mantissa 1: 8 MiB + 1 MiB.
        assert_eq!(
            window_of(&[0x28, 0xb5, 0x2f, 0xfd, 0x00, 13 << 3 | 1]),
            Some(9 << 20)
        );
        // Single segment, 4-byte content size (16 MiB), no dictionary.
        let header = [0x28, 0xb5, 0x2f, 0xfd, 0xa0, 0, 0, 0, 1];
        assert_eq!(window_of(&header), Some(16 << 20));
        // Single segment, 2-byte content size: counts from 256.
        assert_eq!(window_of(&[0x28, 0xb5, 0x2f, 0xfd, 0x60, 0, 1]), Some(512));
        // Single segment, 1-byte size after a 1-byte dictionary id.
        assert_eq!(
            window_of(&[0x28, 0xb5, 0x2f, 0xfd, 0x21, 9, 200]),
            Some(200)
        );
        assert_eq!(window_of(&[0x28, 0xb5, 0x2f, 0xfd, 0x00]), None);
        assert_eq!(window_of(&[0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0]), None);
        assert!(starts_frame(&[0x5f, 0x2a, 0x4d, 0x18]));
        assert!(!starts_frame(b"\n"));
    }
}
