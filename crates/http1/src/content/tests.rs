//! The stepping decoder on whole bodies and step by step: every coding,
//! stacks, bombs cut at the cap, broken streams, empty bodies and bytes
//! after a stream, unknown codings, zstd's window bound, and the bound on
//! one step's work.
#![allow(clippy::arithmetic_side_effects)]
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

fn zstd(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(zstd_safe::compress_bound(data.len()));
    zstd_safe::compress(&mut out, data, 3).unwrap();
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
        ("zstd", zstd(PAGE)),
        ("zstd, gzip", gzip(&zstd(PAGE))),
        ("br, zstd", zstd(&brotli(PAGE))),
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
    let bomb = zstd(&zeros);
    assert!(bomb.len() < 2_000, "{}", bomb.len());
    let got = decode(&[Coding::Zstd], &bomb, 4096);
    assert!(got.capped && got.error.is_none());
    assert_eq!(got.body.len(), 4096);
}

#[test]
fn a_body_exactly_at_the_cap_is_not_cut() {
    let got = decode(&[Coding::Gzip], &gzip(PAGE), PAGE.len());
    assert!(!got.capped);
    assert_eq!(got.body, PAGE);
}

/// A page long enough to take several deflate blocks and steps.
fn long_page() -> Vec<u8> {
    (0..200_000u32).flat_map(|i| i.to_le_bytes()).collect()
}

/// Whether `got` ended early for `coding` because its stream did, with a
/// front of `plain` decoded.
fn cut_short(got: &Decoded, coding: &str, plain: &[u8]) -> bool {
    matches!(&got.error, Some(DecodeError::Truncated { coding: c, .. }) if *c == coding)
        && plain.starts_with(&got.body)
}

#[test]
fn a_gzip_body_cut_inside_its_trailer_is_whole_page_but_truncated() {
    let body = gzip(PAGE);
    for cut in [1, 4, 7, 8] {
        let got = decode(&[Coding::Gzip], &body[..body.len() - cut], usize::MAX);
        assert!(cut_short(&got, "gzip", PAGE), "cut {cut}: {:?}", got.error);
        assert_eq!(got.body, PAGE, "cut {cut}: every byte of the page decoded");
    }
}

#[test]
fn a_body_cut_mid_stream_keeps_what_decoded_under_every_coding() {
    let long = long_page();
    for (coding, body) in [
        (Coding::Gzip, gzip(&long)),
        (Coding::Deflate, zlib(&long)),
        (Coding::Deflate, raw_deflate(&long)),
        (Coding::Brotli, brotli(&long)),
        (Coding::Zstd, zstd(&long)),
    ] {
        let got = decode(
            std::slice::from_ref(&coding),
            &body[..body.len() / 2],
            usize::MAX,
        );
        assert!(
            cut_short(&got, coding.name(), &long),
            "{coding:?}: {:?}",
            got.error
        );
        assert!(!got.body.is_empty(), "{coding:?}");
    }
}

#[test]
fn a_gzip_body_cut_inside_its_header_is_truncated() {
    let got = decode(&[Coding::Gzip], &gzip(PAGE)[..6], usize::MAX);
    assert!(cut_short(&got, "gzip", PAGE), "{:?}", got.error);
    assert!(got.body.is_empty());
}

#[test]
fn corrupt_data_in_the_middle_is_a_bad_stream_not_a_cut() {
    let long = long_page();
    let mut body = gzip(&long);
    let middle = body.len() / 2;
    body[middle..middle + 64].fill(0xff);
    let got = decode(&[Coding::Gzip], &body, usize::MAX);
    assert!(
        matches!(got.error, Some(DecodeError::Corrupt { coding: "gzip", .. })),
        "{:?}",
        got.error
    );
    // A member whose data decodes but whose CRC-32 does not match is
    // corrupt too.
    let mut body = gzip(PAGE);
    let crc = body.len() - 8;
    body[crc] ^= 1;
    let got = decode(&[Coding::Gzip], &body, usize::MAX);
    assert!(matches!(
        got.error,
        Some(DecodeError::Corrupt { coding: "gzip", .. })
    ));
    let got = decode(&[Coding::Brotli], b"not brotli at all", 100);
    assert!(matches!(
        got.error,
        Some(DecodeError::Corrupt { coding: "br", .. })
    ));
    let got = decode(&[Coding::Zstd], b"not zstd at all", 100);
    assert!(matches!(
        got.error,
        Some(DecodeError::Corrupt { coding: "zstd", .. })
    ));
}

/// `none`, `UTF-8`, `text/html`, `binary`: misconfigured servers name
/// them, browsers show the body as sent, and so it is read; the coding is
/// reported for the record.
#[test]
fn an_unknown_coding_leaves_the_body_as_sent_and_is_named() {
    for header in ["none", "UTF-8", "text/html", "binary", "compress"] {
        let got = decode(&codings(header), PAGE, 1 << 20);
        assert_eq!(got.body, PAGE, "{header}");
        let lower = header.to_ascii_lowercase();
        assert_eq!(got.error, Some(DecodeError::Unsupported(lower)), "{header}");
    }
    // In a stack, as in Chromium, none of the codings is undone.
    let body = gzip(PAGE);
    let got = decode(&codings("gzip, none, utf-8"), &body, 1 << 20);
    assert_eq!(got.body, body);
    assert_eq!(
        got.error,
        Some(DecodeError::Unsupported("none, utf-8".into()))
    );
    // Cut at the cap like any body.
    let got = decode(&codings("none"), PAGE, 10);
    assert!(got.capped);
    assert_eq!(got.body, &PAGE[..10]);
    // `identity` names no coding at all.
    assert!(codings("identity, IDENTITY").is_empty());
    assert_eq!(names(&codings(" GZIP ,br, Zstd")), "gzip, br, zstd");
}

/// A zstd frame whose header asks for the window of `descriptor` (RFC
/// 8878 §3.1.1.1.2: exponent << 3 | mantissa), holding one RLE block of
/// `len` bytes `a` (at most 128 KiB).
fn zstd_frame_with_window(descriptor: u8, len: u32) -> Vec<u8> {
    let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, descriptor];
    // Block header: last block, type RLE, size `len`.
    let block = 1 | 1 << 1 | len << 3;
    frame.extend_from_slice(&block.to_le_bytes()[..3]);
    frame.push(b'a');
    frame
}

#[test]
fn a_zstd_frame_asking_for_a_window_over_8_mib_is_refused() {
    let two_gib = zstd_frame_with_window(21 << 3, 100_000);
    let got = decode(&[Coding::Zstd], &two_gib, 1 << 20);
    let refused = DecodeError::WindowTooLarge {
        coding: "zstd",
        window: Some(2 << 30),
        max: 8 << 20,
    };
    assert_eq!(got.error, Some(refused.clone()));
    assert!(got.body.is_empty());
    // 8 MiB is allowed, 9 MiB (exponent 13, mantissa 1) is not.
    let got = decode(
        &[Coding::Zstd],
        &zstd_frame_with_window(13 << 3, 100_000),
        1 << 20,
    );
    assert_eq!((got.error, got.body), (None, vec![b'a'; 100_000]));
    let got = decode(
        &[Coding::Zstd],
        &zstd_frame_with_window(13 << 3 | 1, 100_000),
        1 << 20,
    );
    assert!(
        matches!(got.error, Some(DecodeError::WindowTooLarge { window: Some(w), .. }) if w == 9 << 20)
    );
    // A single-segment frame's window is its content size: 16 MiB.
    let mut single = vec![0x28, 0xb5, 0x2f, 0xfd, 0xa0];
    single.extend_from_slice(&(16u32 << 20).to_le_bytes());
    single.extend_from_slice(&zstd_frame_with_window(0, 1000)[6..]);
    let got = decode(&[Coding::Zstd], &single, 1 << 20);
    assert!(
        matches!(got.error, Some(DecodeError::WindowTooLarge { window: Some(w), .. }) if w == 16 << 20)
    );
    // A later frame that asks too much: the frames before it are kept.
    let mut body = zstd(PAGE);
    body.extend(&two_gib);
    let got = decode(&[Coding::Zstd], &body, 1 << 20);
    assert_eq!((got.error, got.body), (Some(refused), PAGE.to_vec()));
}

#[test]
fn zstd_frames_in_a_row_are_one_body_and_what_follows_the_last_is_not_read() {
    let mut body = zstd(b"first ");
    body.extend(zstd(b"second"));
    assert_eq!(decode(&[Coding::Zstd], &body, 100).body, b"first second");
    // A skippable frame (magic 0x184D2A50, 4 bytes) between them.
    let mut body = zstd(b"first ");
    body.extend([0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 1, 2, 3, 4]);
    body.extend(zstd(b"second"));
    let got = decode(&[Coding::Zstd], &body, 100);
    assert_eq!((got.error, got.body), (None, b"first second".to_vec()));
    let tails: [&[u8]; 3] = [b"\n", &[0; 100], b"<!-- -->"];
    for tail in tails {
        let mut body = zstd(PAGE);
        body.extend_from_slice(tail);
        let got = decode(&[Coding::Zstd], &body, 1 << 20);
        assert_eq!((got.error, got.body), (None, PAGE.to_vec()), "{tail:?}");
    }
}

/// A 204, a 304, a redirect or a `Content-Length: 0` answer may name a
/// coding and send no bytes: that is an empty body, as browsers take it.
#[test]
fn an_empty_body_is_empty_under_every_coding() {
    for header in [
        "gzip",
        "x-gzip",
        "deflate",
        "br",
        "zstd",
        "gzip, br",
        "deflate, gzip, br, zstd",
    ] {
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
        assert_eq!(
            (got.error, got.body),
            (None, b"first second".to_vec()),
            "{tail:?}"
        );
    }
    // Past a deflate or brotli stream's end, too.
    for (coding, mut body) in [
        (Coding::Deflate, zlib(PAGE)),
        (Coding::Deflate, raw_deflate(PAGE)),
        (Coding::Brotli, brotli(PAGE)),
    ] {
        body.extend_from_slice(b"\n\0\0");
        let got = decode(std::slice::from_ref(&coding), &body, 1 << 20);
        assert_eq!((got.error, got.body), (None, PAGE.to_vec()), "{coding:?}");
    }
}

/// What starts another member is decoded as one: a member cut short after
/// a good one is a body cut short still.
#[test]
fn a_second_gzip_member_cut_short_is_still_truncated() {
    let mut body = gzip(PAGE);
    let second = gzip(b"more");
    body.extend_from_slice(&second[..second.len() - 3]);
    let got = decode(&[Coding::Gzip], &body, 1 << 20);
    assert!(
        matches!(
            got.error,
            Some(DecodeError::Truncated { coding: "gzip", .. })
        ),
        "{:?}",
        got.error
    );
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

/// A small page costs about its own size: its output is not grown (and
/// zero-filled) a whole step at a time. A gzip body states its length.
#[test]
fn a_small_page_is_decoded_into_about_its_own_size() {
    let page: Vec<u8> = PAGE.iter().copied().cycle().take(6000).collect();
    let got = decode(&[Coding::Gzip], &gzip(&page), 1 << 20);
    assert_eq!(got.body, page);
    assert!(
        got.body.capacity() <= page.len() + 1,
        "{}",
        got.body.capacity()
    );
    for (coding, body) in [
        (Coding::Deflate, zlib(PAGE)),
        (Coding::Brotli, brotli(PAGE)),
        (Coding::Zstd, zstd(PAGE)),
    ] {
        let got = decode(std::slice::from_ref(&coding), &body, 1 << 20);
        assert_eq!(got.body, PAGE, "{coding:?}");
        assert!(
            got.body.capacity() <= 4096,
            "{coding:?}: {}",
            got.body.capacity()
        );
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
        (vec![Coding::Zstd], zstd(&zeros)),
        (vec![Coding::Gzip, Coding::Gzip], gzip(&gzip(&zeros))),
        (vec![Coding::Gzip, Coding::Zstd], zstd(&gzip(&zeros))),
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
        picks in prop::collection::vec(0u8..5, 0..4),
        body in prop::collection::vec(any::<u8>(), 0..400),
        cap in 0usize..2000,
    ) {
        let codings: Vec<Coding> = picks
            .iter()
            .map(|p| match p {
                0 => Coding::Gzip,
                1 => Coding::Deflate,
                2 => Coding::Brotli,
                3 => Coding::Zstd,
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
        for (coding, body) in [(Coding::Gzip, gzip(&page)), (Coding::Zstd, zstd(&page))] {
            let got = decode(&[coding], &body, cap);
            let n = page.len().min(cap);
            prop_assert_eq!(&got.body[..], &page[..n]);
            prop_assert_eq!(got.capped, page.len() > cap);
            prop_assert_eq!(got.error, None);
        }
    }
}

/// `body` decoded with every stage streamed (`whole.rs` not tried).
fn streamed(codings: &[Coding], body: &[u8], cap: usize) -> Decoded {
    stepped(Decoding::streamed(codings, body, cap)).0
}

#[test]
fn a_typical_page_is_inflated_whole_and_a_second_member_is_left_to_the_stream() {
    // Links to numbered pages: it deflates about as well as HTML does.
    let page: Vec<u8> = (0..300u32)
        .flat_map(|i| format!("<a href=\"/p/{}\">{}</a>\n", i * 7919 % 20000, i).into_bytes())
        .collect();
    for (coding, body) in [(Coding::Gzip, gzip(&page)), (Coding::Deflate, zlib(&page))] {
        let got = whole::inflate(&coding, &body, 1 << 20);
        assert!(got.as_deref() == Some(&page[..]), "{coding:?}");
    }
    // Raw deflate has no check: always streamed.
    assert!(whole::inflate(&Coding::Deflate, &raw_deflate(&page), 1 << 20).is_none());
    let mut newline = gzip(&page);
    newline.push(b'\n');
    // A byte that starts no member is not read, either way.
    let got = whole::inflate(&Coding::Gzip, &newline, 1 << 20);
    assert!(got.as_deref() == Some(&page[..]));
    let mut two = gzip(b"first ");
    two.extend(gzip(b"second"));
    assert!(whole::inflate(&Coding::Gzip, &two, 1 << 20).is_none());
    assert_eq!(decode(&[Coding::Gzip], &two, 100).body, b"first second");
    // Over the room (the cap), over a step: streamed.
    let under = page.len() - 1;
    assert!(whole::inflate(&Coding::Gzip, &gzip(&page), under).is_none());
    let big: Vec<u8> = (0..40_000u32).flat_map(|i| i.to_le_bytes()).collect();
    assert!(whole::inflate(&Coding::Gzip, &gzip(&big), 1 << 20).is_none());
}

proptest! {
    /// Whole or streamed, a gzip or deflate body gives the same body, cap
    /// and error, however it is cut, damaged or followed.
    #[test]
    fn a_stream_inflated_whole_decodes_as_when_streamed(
        text in any::<bool>(),
        len in 0usize..3000,
        seed in any::<u8>(),
        form in 0u8..3,
        damage in 0u8..5,
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
        cap in prop_oneof![0usize..4000, Just(1 << 20)],
    ) {
        let page: Vec<u8> = if text {
            PAGE.iter().copied().cycle().skip(usize::from(seed)).take(len).collect()
        } else {
            (0..len).map(|i| (i as u8).wrapping_mul(seed) ^ (i >> 3) as u8).collect()
        };
        let (coding, mut body) = match form {
            0 => (Coding::Gzip, gzip(&page)),
            1 => (Coding::Deflate, zlib(&page)),
            _ => (Coding::Deflate, raw_deflate(&page)),
        };
        let i = at.index(body.len());
        match damage {
            1 => body.truncate(i),
            2 => body[i] ^= byte | 1,
            3 => body.push(byte),
            4 => body.extend(gzip(&page[..page.len() / 2])),
            _ => {}
        }
        let codings = [coding];
        prop_assert_eq!(decode(&codings, &body, cap), streamed(&codings, &body, cap));
    }
}
