//! The stepping decoder on whole bodies and step by step: every coding,
//! stacks, bombs cut at the cap, broken streams, and the bound on one
//! step's work.
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::arithmetic_side_effects
)]

use super::*;
use proptest::prelude::*;
use std::io::Write;

const PAGE: &[u8] = b"<html><body><a href=\"/a\">a</a> <a href='/b'>b</a></body></html>";

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn raw_deflate(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn brotli(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut w = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
        w.write_all(data).unwrap();
    }
    out
}

fn codings(header: &str) -> Vec<Coding> {
    header
        .split(',')
        .filter_map(|t| Coding::from_token(t.as_bytes()))
        .collect()
}

#[test]
fn every_coding_gives_back_the_plain_page() {
    for (header, body) in [
        ("gzip", gzip(PAGE)),
        ("x-gzip", gzip(PAGE)),
        ("deflate", zlib(PAGE)),
        ("deflate", raw_deflate(PAGE)),
        ("br", brotli(PAGE)),
        ("gzip, br", brotli(&gzip(PAGE))),
        ("br, deflate", zlib(&brotli(PAGE))),
        ("identity, gzip", gzip(PAGE)),
        ("", PAGE.to_vec()),
    ] {
        let got = decode(&codings(header), &body, 1 << 20);
        assert_eq!(got.error, None, "{header}");
        assert_eq!(got.body, PAGE, "{header}");
        assert!(!got.capped, "{header}");
    }
}

#[test]
fn gzip_members_in_a_row_are_one_body() {
    let mut body = gzip(b"first ");
    body.extend(gzip(b"second"));
    assert_eq!(decode(&[Coding::Gzip], &body, 100).body, b"first second");
}

#[test]
fn a_bomb_is_cut_at_the_cap() {
    let zeros = vec![0u8; 8 << 20];
    let bomb = gzip(&zeros);
    assert!(bomb.len() < 20_000, "{}", bomb.len());
    let got = decode(&[Coding::Gzip], &bomb, 1 << 20);
    assert!(got.capped && got.error.is_none());
    assert_eq!(got.body.len(), 1 << 20);
    let got = decode(&[Coding::Brotli], &brotli(&zeros), 4096);
    assert!(got.capped);
    assert_eq!(got.body.len(), 4096);
}

#[test]
fn a_body_exactly_at_the_cap_is_not_cut() {
    let got = decode(&[Coding::Gzip], &gzip(PAGE), PAGE.len());
    assert!(!got.capped);
    assert_eq!(got.body, PAGE);
}

#[test]
fn a_broken_stream_keeps_what_decoded_before_the_fault() {
    let long: Vec<u8> = (0..200_000u32).flat_map(|i| i.to_le_bytes()).collect();
    let mut body = gzip(&long);
    body.truncate(body.len() / 2);
    let got = decode(&[Coding::Gzip], &body, usize::MAX);
    assert!(matches!(
        got.error,
        Some(DecodeError::Corrupt { coding: "gzip", .. })
    ));
    assert!(!got.body.is_empty() && long.starts_with(&got.body));
    let got = decode(&[Coding::Brotli], b"not brotli at all", 100);
    assert!(got.error.is_some());
}

#[test]
fn unknown_codings_are_reported_not_guessed() {
    let got = decode(&codings("zstd"), PAGE, 100);
    assert_eq!(got.error, Some(DecodeError::Unsupported("zstd".into())));
    assert!(got.body.is_empty());
    assert_eq!(names(&codings(" GZIP ,br")), "gzip, br");
}

/// A 204, a 304, a redirect or a `Content-Length: 0` answer may name a
/// coding and send no bytes: that is an empty body, as browsers take it.
#[test]
fn an_empty_body_is_empty_under_every_coding() {
    for header in ["gzip", "x-gzip", "deflate", "br", "gzip, br", "deflate, gzip, br"] {
        let (got, _) = stepped(Decoding::new(&codings(header), b"", 1 << 20));
        assert_eq!(got, Decoded::default(), "{header}");
    }
}

/// Bytes after the last gzip member that start no other member (a stray
/// newline, NUL padding) are not part of the stream: browsers, curl and
/// gzip(1) ignore them, and so does the decoder.
#[test]
fn bytes_after_the_last_gzip_member_that_start_no_member_are_ignored() {
    let tails: [&[u8]; 5] = [b"\n", b"\r\n", &[0; 512], b"<!-- cached -->", &[0x1f]];
    for tail in tails {
        let mut body = gzip(PAGE);
        body.extend_from_slice(tail);
        let got = decode(&[Coding::Gzip], &body, 1 << 20);
        assert_eq!((got.error, got.body), (None, PAGE.to_vec()), "{tail:?}");
        let mut two = gzip(b"first ");
        two.extend(gzip(b"second"));
        two.extend_from_slice(tail);
        let got = decode(&[Coding::Gzip], &two, 1 << 20);
        assert_eq!((got.error, got.body), (None, b"first second".to_vec()), "{tail:?}");
    }
    // Past a deflate or brotli stream's end, too.
    for (coding, mut body) in [(Coding::Deflate, zlib(PAGE)), (Coding::Deflate, raw_deflate(PAGE)), (Coding::Brotli, brotli(PAGE))] {
        body.extend_from_slice(b"\n\0\0");
        let got = decode(&[coding.clone()], &body, 1 << 20);
        assert_eq!((got.error, got.body), (None, PAGE.to_vec()), "{coding:?}");
    }
}

/// What starts another member is decoded as one: a member cut short after
/// a good one is a fault still.
#[test]
fn a_second_gzip_member_cut_short_is_still_a_fault() {
    let mut body = gzip(PAGE);
    let second = gzip(b"more");
    body.extend_from_slice(&second[..second.len() - 3]);
    let got = decode(&[Coding::Gzip], &body, 1 << 20);
    assert!(matches!(got.error, Some(DecodeError::Corrupt { coding: "gzip", .. })), "{:?}", got.error);
    assert!(got.body.starts_with(PAGE));
}

#[test]
fn identity_is_cut_at_the_cap_too() {
    let got = decode(&[], PAGE, 10);
    assert!(got.capped);
    assert_eq!(got.body, &PAGE[..10]);
}

/// Steps `decoding` to its end, checking that no step reads or writes more
/// than [`STEP`] bytes (a gzip header and trailer aside); the body and how
/// many steps it took.
fn stepped(mut decoding: Decoding<'_>) -> (Decoded, usize) {
    let mut steps = 0;
    loop {
        steps += 1;
        let (out, at, done) = (decoding.out.len(), decoding.at, decoding.done);
        if let Some(decoded) = decoding.step() {
            return (decoded, steps);
        }
        if decoding.done == done {
            assert!(decoding.out.len() - out <= STEP, "step {steps} wrote more");
            assert!(decoding.at - at <= STEP + 64, "step {steps} read more");
        }
    }
}

#[test]
fn more_than_five_codings_are_refused_undecoded() {
    let mut body = PAGE.to_vec();
    for _ in 0..6 {
        body = gzip(&body);
    }
    let six = vec![Coding::Gzip; 6];
    let got = decode(&six, &body, 1 << 20);
    assert_eq!(got.error, Some(DecodeError::TooMany));
    assert!(got.body.is_empty());
    let (got, steps) = stepped(Decoding::new(&six, &body, 1 << 20));
    assert_eq!((got.error, steps), (Some(DecodeError::TooMany), 1));
    let got = decode(&six[1..], &gzip_of(&body), 1 << 20);
    assert_eq!((got.error, got.body), (None, PAGE.to_vec()));
}

/// `body` with its outermost gzip layer taken off (so five are left).
fn gzip_of(body: &[u8]) -> Vec<u8> {
    let mut d = flate2::read::GzDecoder::new(body);
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut d, &mut out).unwrap();
    out
}

#[test]
fn a_bomb_is_undone_a_step_at_a_time_up_to_the_cap() {
    let zeros = vec![0u8; 8 << 20];
    for (codings, body) in [
        (vec![Coding::Gzip], gzip(&zeros)),
        (vec![Coding::Deflate], zlib(&zeros)),
        (vec![Coding::Brotli], brotli(&zeros)),
        (vec![Coding::Gzip, Coding::Gzip], gzip(&gzip(&zeros))),
    ] {
        let (got, steps) = stepped(Decoding::new(&codings, &body, 4 << 20));
        assert!(got.capped && got.error.is_none(), "{codings:?}");
        assert_eq!(got.body.len(), 4 << 20, "{codings:?}");
        assert!(steps >= (4 << 20) / STEP, "{codings:?}: {steps} steps");
    }
}

#[test]
fn a_stage_cut_by_the_cap_hands_its_front_to_the_next() {
    let text: Vec<u8> = (0..100_000u32).flat_map(|i| i.to_le_bytes()).collect();
    // The br stage's output (the gzip stream) is cut; gzip decodes its front.
    let body = brotli(&gzip(&text));
    let inner = gzip(&text).len();
    let got = decode(&[Coding::Gzip, Coding::Brotli], &body, inner / 2);
    assert!(got.capped);
    assert_eq!(got.error, None, "the cut, not a fault");
    assert!(!got.body.is_empty() && text.starts_with(&got.body));
}

proptest! {
    #[test]
    fn any_bytes_under_any_codings_end_bounded_without_a_panic(
        picks in prop::collection::vec(0u8..4, 0..4),
        body in prop::collection::vec(any::<u8>(), 0..400),
        cap in 0usize..2000,
    ) {
        let codings: Vec<Coding> = picks
            .iter()
            .map(|p| match p {
                0 => Coding::Gzip,
                1 => Coding::Deflate,
                2 => Coding::Brotli,
                _ => Coding::Other("x".into()),
            })
            .collect();
        let (got, _) = stepped(Decoding::new(&codings, &body, cap));
        prop_assert!(got.body.len() <= cap);
    }

    #[test]
    fn a_valid_stream_decodes_whatever_the_cap(
        page in prop::collection::vec(any::<u8>(), 0..3000),
        cap in 0usize..4000,
    ) {
        let got = decode(&[Coding::Gzip], &gzip(&page), cap);
        let n = page.len().min(cap);
        prop_assert_eq!(&got.body[..], &page[..n]);
        prop_assert_eq!(got.capped, page.len() > cap);
        prop_assert_eq!(got.error, None);
    }
}

