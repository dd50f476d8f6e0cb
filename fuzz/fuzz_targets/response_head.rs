//! Bytes off the socket: response head, then the body after it.
//!
//! `parse_head(data, 64 KiB)`; when it finds a head, the bytes after it go
//! through a `BodyDecoder` in up to four pieces (split points derived from
//! the input) and `at_eof()` is called, as `fetch` does.
//!
//! Invariants checked (beyond "nothing panics"):
//! - `head_len <= data.len()` and the head is the same whether parsed from
//!   all the bytes or from exactly `data[..head_len]`, and a read that stops
//!   one byte short of it is `Ok(None)` (so incremental reads agree);
//! - status in 100..=999, and no body for 1xx/204/304;
//! - decoded payload never exceeds `max_body`; a `Length(n)` body that
//!   completes holds exactly `n` bytes, one still waiting holds the bytes
//!   given as they are; a capped body holds exactly `max_body` bytes;
//! - `at_eof()` repeats a decoding error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ringcrawl_http1::{parse_head, BodyDecoder, Framing, Progress};

const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 1 << 20;

/// FNV-1a, so the split points follow the input without taking bytes from it.
fn fnv(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fuzz_target!(|data: &[u8]| {
    let head = match parse_head(data, MAX_HEAD) {
        Ok(Some(head)) => head,
        Ok(None) => {
            assert!(data.len() <= MAX_HEAD, "Ok(None) for {} bytes", data.len());
            return;
        }
        Err(_) => return,
    };
    assert!(
        head.head_len <= data.len(),
        "head_len {} > {}",
        head.head_len,
        data.len()
    );
    assert!(head.head_len <= MAX_HEAD);
    assert!((100..=999).contains(&head.status), "status {}", head.status);
    if (100..200).contains(&head.status) || head.status == 204 || head.status == 304 {
        assert_eq!(head.framing, Framing::None);
    }

    // The head must not depend on how much of the body came with it.
    let exact = parse_head(&data[..head.head_len], MAX_HEAD);
    assert_eq!(
        exact,
        Ok(Some(head.clone())),
        "head differs when parsed alone"
    );
    if head.head_len > 0 {
        let short = parse_head(&data[..head.head_len - 1], MAX_HEAD);
        assert_eq!(short, Ok(None), "head found before its end");
    }

    let body = &data[head.head_len..];
    let mut seed = fnv(data);
    let mut cuts = [0usize; 5];
    for cut in cuts.iter_mut().take(3) {
        *cut = (seed % (body.len() as u64 + 1)) as usize;
        seed = seed.rotate_right(21);
    }
    cuts[3] = 0;
    cuts[4] = body.len();
    cuts.sort_unstable();

    let mut dec = BodyDecoder::new(head.framing, MAX_BODY);
    let mut out = Vec::new();
    let mut last = Ok(Progress::NeedMore);
    for w in cuts.windows(2) {
        last = dec.feed(&body[w[0]..w[1]], &mut out);
        assert!(out.len() <= MAX_BODY);
        if last != Ok(Progress::NeedMore) {
            break;
        }
    }
    let eof = dec.at_eof();
    assert!(out.len() <= MAX_BODY);
    match (head.framing, &last) {
        (Framing::None, _) => {
            assert_eq!(last, Ok(Progress::Complete));
            assert!(out.is_empty());
        }
        (Framing::Length(n), Ok(Progress::Complete)) => assert_eq!(out.len() as u64, n),
        (Framing::Length(n), Ok(Progress::NeedMore)) => {
            assert!((out.len() as u64) < n);
            assert_eq!(out, body, "a Length body must be copied as is");
        }
        (Framing::UntilClose, Ok(Progress::NeedMore)) => {
            assert_eq!(out, body);
            assert_eq!(eof, Ok(()));
        }
        (_, Ok(Progress::Capped)) => {
            assert_eq!(out.len(), MAX_BODY);
            assert_eq!(eof, Ok(()));
        }
        _ => {}
    }
    if let Err(e) = &last {
        assert_eq!(eof.as_ref(), Err(e), "at_eof must repeat the error");
    }
});
