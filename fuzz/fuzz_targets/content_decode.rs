//! `content::decode` on any bytes under any stack of codings: it must never
//! panic and never give more than the cap, however the stream lies about
//! itself (a bomb, a truncated member, garbage after a valid one).
//!
//! Input layout: byte 0 bits 0-1, 2-3 and 4-5 pick up to three codings
//! (0 none, 1 gzip, 2 deflate, 3 br), bits 6-7 the cap (1 KiB, 64 KiB,
//! 1 MiB, 0); the rest is the body.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ringcrawl::net::http::content::{decode, Coding};

const CAPS: [usize; 4] = [1 << 10, 64 << 10, 1 << 20, 0];

fuzz_target!(|data: &[u8]| {
    let Some((&choice, body)) = data.split_first() else {
        return;
    };
    let codings: Vec<Coding> = [choice & 3, (choice >> 2) & 3, (choice >> 4) & 3]
        .into_iter()
        .filter_map(|c| match c {
            1 => Some(Coding::Gzip),
            2 => Some(Coding::Deflate),
            3 => Some(Coding::Brotli),
            _ => None,
        })
        .collect();
    let cap = CAPS[usize::from(choice >> 6)];
    let decoded = decode(&codings, body, cap);
    assert!(decoded.body.len() <= cap, "{} > {cap}", decoded.body.len());
});
