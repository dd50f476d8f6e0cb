//! `content::decode` on any bytes under any stack of codings: it must never
//! panic and never give more than the cap, however the stream lies about
//! itself (a bomb, a truncated member, garbage after a valid one, a zstd
//! frame asking for a huge window).
//!
//! Input layout: bytes 0-1 (little-endian) bits 0-2, 3-5 and 6-8 pick up
//! to three codings (1 gzip, 2 deflate, 3 br, 4 zstd, 5 an unknown one,
//! else none), bits 9-10 the cap (1 KiB, 64 KiB, 1 MiB, 0); the rest is
//! the body.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ringcrawl_http1::content::{decode, Coding};

const CAPS: [usize; 4] = [1 << 10, 64 << 10, 1 << 20, 0];

fuzz_target!(|data: &[u8]| {
    let [low, high, body @ ..] = data else {
        return;
    };
    let choice = u16::from_le_bytes([*low, *high]);
    let codings: Vec<Coding> = [choice & 7, (choice >> 3) & 7, (choice >> 6) & 7]
        .into_iter()
        .filter_map(|c| match c {
            1 => Some(Coding::Gzip),
            2 => Some(Coding::Deflate),
            3 => Some(Coding::Brotli),
            4 => Some(Coding::Zstd),
            5 => Some(Coding::Other("x".into())),
            _ => None,
        })
        .collect();
    let cap = CAPS[usize::from((choice >> 9) & 3)];
    let decoded = decode(&codings, body, cap);
    assert!(decoded.body.len() <= cap, "{} > {cap}", decoded.body.len());
});
