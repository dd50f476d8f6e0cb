//! A body's content codings undone on the shard without holding its core:
//! a step at a time, with a pause every slice so the shard's sockets and
//! timers are served (a decompression bomb costs the core little); and
//! what a decoding error means for the page's record.

use std::time::{Duration, Instant};

use ringcrawl_http1::content::{self, Coding, DecodeError, Decoded};

use crate::job::ErrorKind;

/// `codings` undone on `raw`, each stage writing at most `cap` bytes, a
/// step ([`content::STEP`]) at a time, pausing every [`DECODE_SLICE`] so
/// the shard's sockets and timers are served: a bomb holds the core about
/// that long at most.
pub(super) async fn decode_body(codings: &[Coding], raw: &[u8], cap: usize) -> Decoded {
    let mut decoding = content::Decoding::new(codings, raw, cap);
    let mut slice = Instant::now();
    loop {
        if let Some(decoded) = decoding.step() {
            return decoded;
        }
        if slice.elapsed() >= DECODE_SLICE {
            // A timer, not `yield_if_needed` or a plain yield: the executor
            // reaps I/O completions only when its task queue runs dry or
            // its preemption timer (100 ms) fires, so a task that yields
            // and is ready again at once still holds the sockets up. The
            // timer makes the executor go round. (A 1 ms preemption timer
            // instead left shards asleep for good in glommio 0.9: tests
            // hung.)
            glommio::timer::sleep(DECODE_PAUSE).await;
            slice = Instant::now();
        }
    }
}

/// How long body decoding runs before it lets the shard's other work in.
const DECODE_SLICE: Duration = Duration::from_micros(500);

/// The pause then: just long enough to be a pause.
const DECODE_PAUSE: Duration = Duration::from_micros(10);

/// The record's class of a body whose codings could not be undone.
pub(super) fn decode_kind(e: &DecodeError) -> ErrorKind {
    match e {
        DecodeError::TooMany => ErrorKind::TooManyContentEncodings,
        DecodeError::Unsupported(_) => ErrorKind::UnsupportedContentEncoding,
        DecodeError::WindowTooLarge { .. } => ErrorKind::ContentEncodingWindowTooLarge,
        DecodeError::Truncated { .. } => ErrorKind::TruncatedContentEncoding,
        // `DecodeError` is non_exhaustive: what else stops a decoding is
        // a bad coding.
        DecodeError::Corrupt { .. } | _ => ErrorKind::BadContentEncoding,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_decoding_error_has_its_own_kind() {
        let all = [
            DecodeError::TooMany,
            DecodeError::Unsupported("none".into()),
            DecodeError::WindowTooLarge {
                coding: "zstd",
                window: None,
                max: 8 << 20,
            },
            DecodeError::Corrupt {
                coding: "gzip",
                reason: String::new(),
            },
            DecodeError::Truncated {
                coding: "br",
                reason: String::new(),
            },
        ];
        let names: std::collections::BTreeSet<&str> =
            all.iter().map(|e| decode_kind(e).name()).collect();
        assert_eq!(names.len(), all.len());
        assert_eq!(
            decode_kind(&DecodeError::Truncated {
                coding: "gzip",
                reason: String::new()
            }),
            ErrorKind::TruncatedContentEncoding
        );
    }
}
