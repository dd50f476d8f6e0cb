//! A small gzip member or zlib stream undone in one call: libdeflate's
//! whole-buffer inflate, tried before the streaming stage when the coded
//! stream and what it says it decodes to both fit in one [`STEP`], so the
//! work stays within a step's.
//!
//! Why a second inflater beside flate2's: a typical compressed page (6 KB
//! of HTML, 1 KB on the wire) costs miniz_oxide about 10 µs, of which 2.5
//! µs is building its 43 KB state for the page; libdeflate, its state kept
//! per thread, does it in about 4.5 µs (docs/benchmarks.md). Inflating was
//! half of what a gzip-served crawl spends over a plain one.
//!
//! It is an answer or nothing: [`inflate`] gives the output only when the
//! stream decodes to its end and its checks hold (gzip's CRC-32 and
//! length, zlib's Adler-32), within the room, and no second gzip member
//! follows; anything else (a cut body, bad data, a larger output, more
//! members) is None, and the streaming stage decodes the stream from its
//! start and says what is wrong, so both paths give the same body, cap
//! and error.
//!
//! The calls are libdeflate-sys's `*_decompress_ex` (libdeflater, the
//! crate over it, hides the bytes consumed, which tell a second gzip
//! member apart), in one of the crate's few `unsafe` blocks (the others
//! are socket calls).
//! libdeflate is MIT-licensed, libdeflate-sys Apache-2.0, built from its
//! vendored C sources with cc.
//!
//! Not the streaming stages (`stage.rs`), nor the order of stages and the
//! cap (`mod.rs`).
// Lints: those of `http` apply here too.

use std::cell::RefCell;
use std::ffi::c_void;
use std::ptr::NonNull;

use libdeflate_sys::{
    libdeflate_alloc_decompressor, libdeflate_decompressor, libdeflate_free_decompressor,
    libdeflate_gzip_decompress_ex, libdeflate_result_LIBDEFLATE_SUCCESS,
    libdeflate_zlib_decompress_ex,
};

use super::{gzip, stage, Coding, MIN_ROOM, STEP};

/// The coded stream `input` (the rest of the body) of `coding` undone in
/// one call, if it is a gzip member or zlib stream of at most [`STEP`] bytes
/// that decodes whole to at most `room` bytes (and at most a step); None
/// if not (then the streaming stage must run).
pub(super) fn inflate(coding: &Coding, input: &[u8], room: usize) -> Option<Vec<u8>> {
    if input.len() > STEP {
        return None;
    }
    // A raw deflate stream has no check, and decoders differ on broken
    // ones (one stops, another reads on): streamed, as before.
    let form = match coding {
        Coding::Gzip => Form::Gzip,
        Coding::Deflate if stage::is_zlib(input) => Form::Zlib,
        _ => return None,
    };
    // Room for what the stream says it decodes to: the gzip trailer's
    // length (a member that decodes to more is None, and streams); a
    // zlib stream states nothing: eight times its size (HTML deflates
    // three to six times), the rest left to the stream.
    let stated = match form {
        Form::Gzip => gzip::stated_len(input)?,
        Form::Zlib => input.len().saturating_mul(8),
    };
    let room = room.min(STEP).min(stated.max(MIN_ROOM));
    DECOMPRESSOR.with(|cell| {
        let mut cell = cell.try_borrow_mut().ok()?;
        if cell.is_none() {
            *cell = Decompressor::new();
        }
        let (out, consumed) = cell.as_mut()?.run(form, input, room)?;
        // A second gzip member: the streaming stage reads them all.
        let more = form == Form::Gzip
            && input
                .get(consumed..)
                .is_some_and(|rest| rest.starts_with(&gzip::MAGIC));
        (!more).then_some(out)
    })
}

/// The framing around the deflate stream: each has a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Gzip,
    Zlib,
}

thread_local! {
    /// This thread's decompressor (its tables, about 11 KB, zeroed once):
    /// made at the first use, kept for the thread's life.
    static DECOMPRESSOR: RefCell<Option<Decompressor>> = const { RefCell::new(None) };
}

/// An owned libdeflate decompressor.
struct Decompressor(NonNull<libdeflate_decompressor>);

impl Decompressor {
    /// A new decompressor; None if it cannot be allocated.
    fn new() -> Option<Decompressor> {
        // SAFETY: takes no arguments; returns an owned decompressor or NULL.
        NonNull::new(unsafe { libdeflate_alloc_decompressor() }).map(Decompressor)
    }

    /// `input` undone as `form` into at most `room` bytes: the output and
    /// the input bytes its stream took; None unless it decoded whole.
    fn run(&mut self, form: Form, input: &[u8], room: usize) -> Option<(Vec<u8>, usize)> {
        let call = match form {
            Form::Gzip => libdeflate_gzip_decompress_ex,
            Form::Zlib => libdeflate_zlib_decompress_ex,
        };
        let mut out: Vec<u8> = Vec::with_capacity(room);
        let (mut consumed, mut written) = (0usize, 0usize);
        // SAFETY: the decompressor is ours and used by one call at a time
        // (&mut self); it reads `input.len()` bytes from `input` and writes
        // at most `room` bytes into `out`'s allocation, which holds
        // `room`; the two counts are written through valid pointers.
        let result = unsafe {
            call(
                self.0.as_ptr(),
                input.as_ptr().cast::<c_void>(),
                input.len(),
                out.as_mut_ptr().cast::<c_void>(),
                room,
                &mut consumed,
                &mut written,
            )
        };
        if result != libdeflate_result_LIBDEFLATE_SUCCESS || written > room {
            return None;
        }
        // SAFETY: on success libdeflate wrote `written` (at most `room`,
        // checked) bytes from the start of the allocation.
        unsafe { out.set_len(written) };
        if out.capacity().saturating_sub(written) > written / 4 {
            // A zlib stream's guess, well over: the page keeps this.
            out.shrink_to_fit();
        }
        Some((out, consumed))
    }
}

impl Drop for Decompressor {
    fn drop(&mut self) {
        // SAFETY: allocated by libdeflate_alloc_decompressor, freed once.
        unsafe { libdeflate_free_decompressor(self.0.as_ptr()) }
    }
}
