//! Content codings (RFC 9110 §8.4): what a response's `Content-Encoding`
//! says was done to its body, and the undoing of it, so that links are read
//! from the page a browser would see.
//!
//! `gzip` (also `x-gzip`, several members in a row), `deflate` in both of
//! its forms (zlib-wrapped, as RFC 9110 says, and the raw deflate stream
//! that many servers send instead), `br`, and stacked codings
//! (`Content-Encoding: gzip, br` is undone right to left). Decoding is by
//! what the server *says* it did, whatever the request asked for, so a body
//! compressed although not asked for is read too.
//!
//! Every stage writes at most `cap` bytes (the crawl's `--max-body`): a
//! decompression bomb is cut there, so it costs bounded memory (the cap per
//! stage, plus brotli's window of at most 16 MiB) and bounded time (the
//! work of producing `cap` bytes). Decoders: flate2 (miniz_oxide) and
//! brotli-decompressor.
//!
//! Not the transfer framing (`body.rs` undoes chunking first), and no I/O:
//! the fetch keeps the bytes as received (for WARC) and this runs on a copy.
// Lints: those of `http` (this module's parent) apply here too.

use std::io::Read;

use thiserror::Error;

/// One coding named in `Content-Encoding`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Coding {
    Gzip,
    /// zlib-wrapped or raw deflate: told apart by the stream's first bytes.
    Deflate,
    Brotli,
    /// A coding this crawler cannot undo (`compress`, `zstd`, ...), as named.
    Other(String),
}

impl Coding {
    /// The coding a `Content-Encoding` item names; None for `identity` (and
    /// an empty item), which change nothing.
    pub fn from_token(token: &[u8]) -> Option<Coding> {
        let lower = token.trim_ascii().to_ascii_lowercase();
        match lower.as_slice() {
            b"" | b"identity" => None,
            b"gzip" | b"x-gzip" => Some(Coding::Gzip),
            b"deflate" => Some(Coding::Deflate),
            b"br" => Some(Coding::Brotli),
            _ => Some(Coding::Other(String::from_utf8_lossy(&lower).into_owned())),
        }
    }

    /// The coding's name as a server writes it.
    pub fn name(&self) -> &str {
        match self {
            Coding::Gzip => "gzip",
            Coding::Deflate => "deflate",
            Coding::Brotli => "br",
            Coding::Other(name) => name,
        }
    }
}

/// `codings` as a `Content-Encoding` value (`gzip, br`).
pub fn names(codings: &[Coding]) -> String {
    codings
        .iter()
        .map(Coding::name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why a body could not be decoded to its end.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    /// A coding this crawler does not undo; nothing was decoded.
    #[error("unsupported Content-Encoding {0:?}")]
    Unsupported(String),
    /// The stream is broken (or ends early) for this coding; what decoded
    /// before the fault is kept.
    #[error("bad {coding} body: {reason}")]
    Corrupt {
        coding: &'static str,
        reason: String,
    },
}

/// A body with its codings undone, at most `cap` bytes.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Decoded {
    pub body: Vec<u8>,
    /// A stage reached the cap before its stream ended: the body is cut.
    pub capped: bool,
    /// The stream broke off; `body` holds what decoded before.
    pub error: Option<DecodeError>,
}

/// Undo `codings` (in the order the server applied them) on `body`, each
/// stage writing at most `cap` bytes.
pub fn decode(codings: &[Coding], body: &[u8], cap: usize) -> Decoded {
    let mut current: Option<Vec<u8>> = None;
    let mut capped = false;
    for coding in codings.iter().rev() {
        let input = current.as_deref().unwrap_or(body);
        let stage = decode_one(coding, input, cap);
        capped |= stage.capped;
        if stage.error.is_some() {
            return Decoded {
                body: stage.body,
                capped,
                error: stage.error,
            };
        }
        current = Some(stage.body);
    }
    Decoded {
        body: current.unwrap_or_else(|| body.get(..cap).unwrap_or(body).to_vec()),
        capped: capped || body.len() > cap && codings.is_empty(),
        error: None,
    }
}

/// One stage: read the decoder until its end, an error, or `cap` bytes.
fn decode_one(coding: &Coding, input: &[u8], cap: usize) -> Decoded {
    match coding {
        Coding::Gzip => read_capped(flate2::bufread::MultiGzDecoder::new(input), "gzip", cap),
        Coding::Deflate if is_zlib(input) => {
            read_capped(flate2::bufread::ZlibDecoder::new(input), "deflate", cap)
        }
        Coding::Deflate => read_capped(flate2::bufread::DeflateDecoder::new(input), "deflate", cap),
        Coding::Brotli => read_capped(
            brotli_decompressor::Decompressor::new(input, BROTLI_BUFFER),
            "br",
            cap,
        ),
        Coding::Other(name) => Decoded {
            body: Vec::new(),
            capped: false,
            error: Some(DecodeError::Unsupported(name.clone())),
        },
    }
}

/// Input buffer of the brotli reader (the input is already in memory).
const BROTLI_BUFFER: usize = 16 * 1024;

/// Bytes asked of a decoder per read.
const STEP: usize = 64 * 1024;

/// Everything `decoder` gives up to `cap` bytes; one byte past the cap is
/// asked for, to tell a stream that ends exactly at the cap from a longer
/// one.
fn read_capped(mut decoder: impl Read, coding: &'static str, cap: usize) -> Decoded {
    let mut body = Vec::new();
    let limit = cap.saturating_add(1);
    loop {
        let start = body.len();
        let want = STEP.min(limit.saturating_sub(start));
        if want == 0 {
            body.truncate(cap);
            return Decoded {
                body,
                capped: true,
                error: None,
            };
        }
        body.resize(start.saturating_add(want), 0);
        let read = decoder.read(body.get_mut(start..).unwrap_or(&mut []));
        match read {
            Ok(0) => {
                body.truncate(start);
                return Decoded {
                    body,
                    capped: false,
                    error: None,
                };
            }
            Ok(n) => body.truncate(start.saturating_add(n)),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => body.truncate(start),
            Err(e) => {
                body.truncate(start);
                return Decoded {
                    body,
                    capped: false,
                    error: Some(DecodeError::Corrupt {
                        coding,
                        reason: e.to_string(),
                    }),
                };
            }
        }
    }
}

/// Whether a deflate body starts with a zlib header (RFC 1950: method 8,
/// window at most 32 KiB, header check a multiple of 31) rather than a raw
/// deflate block. A raw stream can look like one by chance only if its
/// first block is of a type that does not exist.
fn is_zlib(input: &[u8]) -> bool {
    match input {
        [cmf, flg, ..] => {
            cmf & 0x0f == 8 && cmf >> 4 <= 7 && (u16::from(*cmf) << 8 | u16::from(*flg)) % 31 == 0
        }
        _ => false,
    }
}

#[cfg(test)]
#[allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::arithmetic_side_effects
)]
mod tests {
    use super::*;
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

    #[test]
    fn identity_is_cut_at_the_cap_too() {
        let got = decode(&[], PAGE, 10);
        assert!(got.capped);
        assert_eq!(got.body, &PAGE[..10]);
    }
}
