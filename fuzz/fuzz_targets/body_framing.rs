//! `BodyDecoder` on its own: the same body fed in one piece, in pieces cut
//! where the input says, and one byte at a time must give the same payload,
//! the same progress and the same `at_eof()` answer. A read boundary is
//! wherever TCP put it, so the decoder (above all the chunked one) must not
//! care where it falls.
//!
//! Input layout (short inputs fall back to defaults):
//!
//! ```text
//! byte 0     bits 0-1 framing: 0 None, 1 Length(n), 2 Chunked, 3 UntilClose
//!            bits 2-5 max_body, an index into MAX_BODIES
//!            bit  6   Length(n) takes n from 8 bytes (u64 LE) instead of 2 (u16 LE)
//!            bit  7   feed an empty slice first (what `fetch` does when no
//!                     body bytes came with the head)
//! [n]        2 or 8 bytes, only for Length
//! byte       k = byte % 8 cut points follow
//! k bytes    distances between consecutive cut points
//! rest       the body bytes
//! ```
//!
//! This target found that a chunked body of exactly `max_body` bytes came
//! out `Capped` or `Complete` (or a chunk error) depending on where the reads
//! split it (fixed in 69e85b5); its seed `chunked_exact_cap` keeps that case.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ringcrawl_http1::{BodyDecoder, BodyError, Framing, Progress};

const MAX_BODIES: [usize; 16] = [
    0,
    1,
    2,
    3,
    4,
    5,
    7,
    8,
    10,
    16,
    31,
    64,
    255,
    4096,
    1 << 20,
    usize::MAX,
];

#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    progress: Result<Progress, BodyError>,
    payload: Vec<u8>,
    eof: Result<(), BodyError>,
}

/// Feed `pieces` in order, stopping as `fetch` does once the answer is not
/// `NeedMore`; then ask `at_eof()`.
fn run<'a>(
    framing: Framing,
    max_body: usize,
    pieces: impl IntoIterator<Item = &'a [u8]>,
) -> Outcome {
    let mut dec = BodyDecoder::new(framing, max_body);
    let mut payload = Vec::new();
    let mut progress = Ok(Progress::NeedMore);
    for piece in pieces {
        progress = dec.feed(piece, &mut payload);
        assert!(payload.len() <= max_body, "payload over max_body");
        if progress != Ok(Progress::NeedMore) {
            // Once finished, the decoder must keep saying so and read nothing.
            let kept = payload.len();
            let again = dec.feed(b"0\r\n\r\nmore", &mut payload);
            assert_eq!(again, progress, "a finished decoder changed its answer");
            assert_eq!(payload.len(), kept, "a finished decoder took more payload");
            break;
        }
    }
    let eof = dec.at_eof();
    if let Err(e) = &progress {
        assert_eq!(eof.as_ref(), Err(e), "at_eof must repeat the error");
    }
    Outcome {
        progress,
        payload,
        eof,
    }
}

/// Takes up to `n` bytes off the front of `data`.
fn take<'a>(data: &mut &'a [u8], n: usize) -> &'a [u8] {
    let (head, rest) = data.split_at(n.min(data.len()));
    *data = rest;
    head
}

fuzz_target!(|data: &[u8]| {
    let mut data = data;
    let b0 = take(&mut data, 1).first().copied().unwrap_or(0);
    let max_body = MAX_BODIES[usize::from((b0 >> 2) & 15)];
    let framing = match b0 & 3 {
        0 => Framing::None,
        1 => {
            let n = if b0 & 0x40 != 0 {
                let mut le = [0u8; 8];
                let src = take(&mut data, 8);
                le[..src.len()].copy_from_slice(src);
                u64::from_le_bytes(le)
            } else {
                let mut le = [0u8; 2];
                let src = take(&mut data, 2);
                le[..src.len()].copy_from_slice(src);
                u64::from(u16::from_le_bytes(le))
            };
            Framing::Length(n)
        }
        2 => Framing::Chunked,
        _ => Framing::UntilClose,
    };
    let empty_first = b0 & 0x80 != 0;
    let k = take(&mut data, 1)
        .first()
        .map_or(0, |&b| usize::from(b % 8));
    let steps = take(&mut data, k).to_vec();
    let body = data;

    let mut cuts = vec![0];
    let mut pos = 0usize;
    for step in steps {
        pos = (pos + usize::from(step)).min(body.len());
        cuts.push(pos);
    }
    cuts.push(body.len());
    let mut pieces: Vec<&[u8]> = Vec::new();
    if empty_first {
        pieces.push(&[]);
    }
    pieces.extend(cuts.windows(2).map(|w| &body[w[0]..w[1]]));

    let one = run(framing, max_body, [body]);
    let split = run(framing, max_body, pieces.iter().copied());
    // At least one feed, even for an empty body (`chunks` yields nothing then).
    let bytes: Vec<&[u8]> = if body.is_empty() {
        vec![body]
    } else {
        body.chunks(1).collect()
    };
    let bytewise = run(framing, max_body, bytes);

    // What the framing promises about the payload, whatever the splitting.
    match (framing, &one.progress) {
        (Framing::None, p) => {
            assert_eq!(*p, Ok(Progress::Complete));
            assert!(one.payload.is_empty());
        }
        (Framing::Length(n), Ok(Progress::Complete)) => {
            assert_eq!(one.payload.len() as u64, n);
            assert_eq!(one.payload, body[..one.payload.len()]);
        }
        (Framing::Length(_) | Framing::UntilClose, Ok(p)) => {
            let kept = body.len().min(max_body);
            assert!(one.payload.len() <= kept);
            assert_eq!(one.payload, body[..one.payload.len()]);
            if *p == Progress::Capped {
                assert_eq!(one.payload.len(), max_body);
            }
        }
        (Framing::Chunked, Ok(Progress::Capped)) => assert_eq!(one.payload.len(), max_body),
        _ => {}
    }

    for (name, other) in [("pieces", &split), ("byte by byte", &bytewise)] {
        assert!(
            other == &one,
            "{framing:?} max_body {max_body}: fed {name} ({} pieces) gives {other:?}, \
             in one piece {one:?}",
            if name == "pieces" {
                pieces.len()
            } else {
                body.len()
            }
        );
    }
});
