//! One call of a decoder, as every stage makes it: the front of the input
//! it may use ([`step_of`], at most [`STEP`] bytes), room for a bounded
//! number of output bytes ([`append`], at the end of the stage's output,
//! [`Out`]), deflate's call ([`inflate_into`], shared by `deflate` and
//! gzip's members) and what the call did ([`Run`]).
//!
//! Not the stages themselves (`stage.rs`, `gzip.rs`, `zstd.rs`).
// Lints: those of `http` apply here too.

use flate2::{Decompress, FlushDecompress, Status};

use super::STEP;

/// What one call of a decoder (`Stage::run`) did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Run {
    /// Bytes of the input used.
    pub consumed: usize,
    /// The coded stream is over; bytes after it are not part of it.
    pub ended: bool,
}

/// The front of `input` a call may use.
pub(super) fn step_of(input: &[u8]) -> &[u8] {
    input.get(..STEP).unwrap_or(input)
}

/// A stage's output as it grows: its bytes, then room already zero-filled
/// for the next call. Room is filled once: a `Vec` resized by a whole
/// step for each call and cut back after fills (and for a small page,
/// allocates) the step again every call.
#[derive(Debug, Default)]
pub(super) struct Out {
    /// The output, then the room made after it: every byte initialised.
    buf: Vec<u8>,
    /// Bytes of output.
    len: usize,
}

impl Out {
    /// No output yet, `capacity` bytes allocated for it (not filled).
    pub(super) fn with_capacity(capacity: usize) -> Out {
        Out {
            buf: Vec::with_capacity(capacity),
            len: 0,
        }
    }

    /// `body` as the whole output.
    pub(super) fn from_vec(body: Vec<u8>) -> Out {
        Out {
            len: body.len(),
            buf: body,
        }
    }

    /// Bytes of output.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The output from `start` on.
    pub(super) fn since(&self, start: usize) -> &[u8] {
        self.buf.get(start..self.len).unwrap_or_default()
    }

    /// Keep the first `len` bytes of output at most.
    pub(super) fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// The output.
    pub(super) fn into_vec(mut self) -> Vec<u8> {
        self.buf.truncate(self.len);
        self.buf
    }
}

/// Append to `out`, through `write`, what it writes into a slice of `room`
/// bytes (`write` says how many it wrote, and what else it has to say).
/// Only room not made by an earlier call is zero-filled.
pub(super) fn append<T>(
    out: &mut Out,
    room: usize,
    write: impl FnOnce(&mut [u8]) -> (usize, T),
) -> T {
    let start = out.len;
    let end = start.saturating_add(room);
    if out.buf.len() < end {
        out.buf.resize(end, 0);
    }
    let (written, said) = write(out.buf.get_mut(start..end).unwrap_or_default());
    out.len = start.saturating_add(written.min(room));
    said
}

/// One call of `inflate` on `input`: the bytes it used and its status.
pub(super) fn inflate_into(
    inflate: &mut Decompress,
    input: &[u8],
    out: &mut Out,
    room: usize,
) -> Result<(usize, Status), String> {
    let (in_before, out_before) = (inflate.total_in(), inflate.total_out());
    let status = append(out, room, |buf| {
        let status = inflate.decompress(input, buf, FlushDecompress::None);
        (since(inflate.total_out(), out_before), status)
    });
    let status = status.map_err(|e| e.to_string())?;
    Ok((since(inflate.total_in(), in_before), status))
}

/// `now - before` of a decoder's running total, as a length.
fn since(now: u64, before: u64) -> usize {
    usize::try_from(now.saturating_sub(before)).unwrap_or(usize::MAX)
}
