//! Tests of the crate's head and body framing.
#![allow(clippy::arithmetic_side_effects)]

use super::body::MAX_CHUNK_LINE;
use super::head::find_head_end;
use super::*;
use proptest::prelude::*;

fn head(raw: &str) -> ResponseHead {
    parse_head(raw.as_bytes(), DEFAULT_MAX_HEAD)
        .expect("head parses")
        .expect("head is complete")
}

fn head_err(raw: &str) -> HeadError {
    parse_head(raw.as_bytes(), DEFAULT_MAX_HEAD).expect_err("head is rejected")
}

/// Feeds `input` in one call; returns the progress and the payload.
fn decode(
    framing: Framing,
    max_body: usize,
    input: &[u8],
) -> (Result<Progress, BodyError>, Vec<u8>) {
    let mut dec = BodyDecoder::new(framing, max_body);
    let mut out = Vec::new();
    let progress = dec.feed(input, &mut out);
    (progress, out)
}

/// Chunked encoding of `payload` cut into chunks of the given sizes (the
/// rest goes in one last chunk).
fn encode_chunked(payload: &[u8], sizes: &[usize]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut rest = payload;
    for &size in sizes {
        let size = size.min(rest.len());
        if size == 0 {
            continue;
        }
        let (chunk, tail) = rest.split_at(size);
        out.extend_from_slice(format!("{size:x}\r\n").as_bytes());
        out.extend_from_slice(chunk);
        out.extend_from_slice(b"\r\n");
        rest = tail;
    }
    if !rest.is_empty() {
        out.extend_from_slice(format!("{:X}\r\n", rest.len()).as_bytes());
        out.extend_from_slice(rest);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

#[test]
fn chunked_body_of_exactly_max_body_is_complete_however_it_is_split() {
    let wire = b"5\r\nhello\r\n0\r\n\r\n";
    for split in 0..=wire.len() {
        let mut d = BodyDecoder::new(Framing::Chunked, 5);
        let mut out = Vec::new();
        let first = d.feed(&wire[..split], &mut out).unwrap();
        let last = if first == Progress::NeedMore {
            d.feed(&wire[split..], &mut out).unwrap()
        } else {
            first
        };
        assert_eq!(
            (last, out.as_slice()),
            (Progress::Complete, &b"hello"[..]),
            "split at {split}"
        );
    }
}

/// A request to `a.test` for `/`, without headers of the user's.
fn get(keep_alive: bool, compressed: bool) -> String {
    let headers = Headers::default();
    let request = Request {
        target: "/",
        host: "a.test",
        user_agent: "ua",
        keep_alive,
        compressed,
        headers: &headers,
        authorization: None,
        proxy_authorization: None,
        cookie: None,
        validators: None,
    };
    String::from_utf8(request.to_bytes()).unwrap()
}

#[test]
fn keep_alive_request_asks_for_it() {
    assert!(get(true, false).ends_with("Connection: keep-alive\r\n\r\n"));
}

#[test]
fn compressed_request_offers_every_coding_it_can_undo() {
    let req = get(true, true);
    assert!(
        req.contains("\r\nAccept-Encoding: gzip, deflate, br, zstd\r\n"),
        "{req}"
    );
    for token in ACCEPT_COMPRESSED.split(',') {
        let coding = content::Coding::from_token(token.as_bytes());
        assert!(
            !matches!(coding, None | Some(content::Coding::Other(_))),
            "{token}"
        );
    }
}

#[test]
fn content_encoding_lists_the_codings_in_order() {
    let h =
        head("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Encoding: identity, BR\r\n\r\n");
    assert_eq!(
        h.content_encoding,
        [content::Coding::Gzip, content::Coding::Brotli]
    );
    assert!(head("HTTP/1.1 200 OK\r\n\r\n").content_encoding.is_empty());
}

#[test]
fn connection_persistence_follows_version_and_tokens() {
    let cases = [
        ("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false),
        ("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\n\r\n", true),
        (
            "HTTP/1.0 200 OK\r\nConnection: keep-alive, close\r\n\r\n",
            false,
        ),
        ("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true),
        ("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", false),
        (
            "HTTP/1.1 200 OK\r\nConnection: foo\r\nConnection:  CLOSE \r\n\r\n",
            false,
        ),
        ("HTTP/1.1 200 OK\r\nConnection: keep-alive\r\n\r\n", true),
        // RFC 9112 §6.1 and §6.3: framing that may not be what it says.
        (
            "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n",
            false,
        ),
        (
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
            false,
        ),
        (
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
            true,
        ),
    ];
    for (raw, keeps) in cases {
        assert_eq!(head(raw).keep_alive, keeps, "{raw:?}");
    }
}

#[test]
fn request_strips_crlf_injection_and_defaults_empty_target() {
    let headers = Headers::default();
    let request = Request {
        target: "",
        host: "evil.com\r\nX-Injected: 1",
        user_agent: "ua\n",
        keep_alive: true,
        compressed: false,
        headers: &headers,
        authorization: None,
        proxy_authorization: None,
        cookie: None,
        validators: None,
    };
    let req = String::from_utf8(request.to_bytes()).unwrap();
    assert!(req.starts_with("GET / HTTP/1.1\r\nHost: evil.comX-Injected: 1\r\nUser-Agent: ua\r\n"));
    assert_eq!(req.matches("\r\n").count(), 7);
}

#[test]
fn every_x_robots_tag_is_kept() {
    let h = head(
        "HTTP/1.1 200 OK\r\nX-Robots-Tag: noarchive\r\nx-robots-tag:  otherbot: nofollow \r\n\r\n",
    );
    assert_eq!(h.robots_tags, ["noarchive", "otherbot: nofollow"]);
    assert!(head("HTTP/1.1 200 OK\r\n\r\n").robots_tags.is_empty());
}

#[test]
fn simple_head_parses_with_fields() {
    let raw = "HTTP/1.1 301 Moved Permanently\r\n\
                   content-type:  Text/HTML; charset=utf-8 \r\n\
                   LOCATION: /next\r\n\
                   Retry-After: 120\r\n\
                   Content-Length: 5\r\n\
                   \r\nhello";
    let h = head(raw);
    assert_eq!(h.status, 301);
    assert_eq!(h.head_len, raw.len() - 5);
    assert_eq!(h.content_type.as_deref(), Some("Text/HTML; charset=utf-8"));
    assert_eq!(h.location.as_deref(), Some("/next"));
    assert_eq!(h.retry_after.as_deref(), Some("120"));
    assert_eq!(h.framing, Framing::Length(5));
}

#[test]
fn head_split_across_reads_returns_none_then_some() {
    let raw = b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<html>";
    for cut in 0..raw.len() - 6 {
        assert_eq!(
            parse_head(&raw[..cut], DEFAULT_MAX_HEAD),
            Ok(None),
            "cut at {cut}"
        );
    }
    let h = parse_head(raw, DEFAULT_MAX_HEAD).unwrap().unwrap();
    assert_eq!(h.head_len, raw.len() - 6);
    assert_eq!(&raw[h.head_len..], b"<html>");
}

#[test]
fn a_head_sent_one_byte_a_read_is_scanned_once() {
    let mut raw = b"HTTP/1.1 200 OK\r\n".to_vec();
    while raw.len() < 16 * 1024 {
        raw.extend_from_slice(b"X-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n");
    }
    raw.extend_from_slice(b"\r\n");
    let mut scan = HeadScan::new(DEFAULT_MAX_HEAD);
    super::head::SCANNED.with(|n| n.set(0));
    for end in 1..raw.len() {
        assert_eq!(scan.parse(&raw[..end]), Ok(None), "cut at {end}");
    }
    let h = scan.parse(&raw).unwrap().unwrap();
    assert_eq!(h.head_len, raw.len());
    let scanned = super::head::SCANNED.with(std::cell::Cell::get);
    assert!(
        scanned <= 2 * raw.len(),
        "{scanned} bytes scanned for a {}-byte head fed a byte at a time",
        raw.len()
    );
}

#[test]
fn head_with_bare_lf_line_endings_parses() {
    let raw = "HTTP/1.0 200 OK\nContent-Length: 2\n\nok";
    let h = head(raw);
    assert_eq!(h.head_len, raw.len() - 2);
    assert_eq!(h.framing, Framing::Length(2));
}

#[test]
fn missing_reason_phrase_parses() {
    let h = head("HTTP/1.1 200\r\n\r\n");
    assert_eq!(h.status, 200);
    assert_eq!(h.framing, Framing::UntilClose);
}

#[test]
fn multiple_spaces_in_status_line_parse() {
    assert_eq!(head("HTTP/1.1  404   Not Found\r\n\r\n").status, 404);
}

#[test]
fn obsolete_line_folding_is_joined() {
    let h =
        head("HTTP/1.1 200 OK\r\nContent-Type: text/html;\r\n   charset=utf-8\r\nX-A: b\r\n\r\n");
    assert_eq!(h.content_type.as_deref(), Some("text/html; charset=utf-8"));
}

#[test]
fn spaces_before_colon_are_accepted() {
    let h = head("HTTP/1.1 302 Found\r\nLocation : /there\r\n\r\n");
    assert_eq!(h.location.as_deref(), Some("/there"));
}

#[test]
fn invalid_header_line_is_ignored() {
    let h = head(
        "HTTP/1.1 200 OK\r\nthis is not a header\r\n@bad@: x\r\nContent-Type: text/plain\r\n\r\n",
    );
    assert_eq!(h.content_type.as_deref(), Some("text/plain"));
}

#[test]
fn empty_location_is_some_empty_string() {
    let h = head("HTTP/1.1 302 Found\r\nLocation:\r\n\r\n");
    assert_eq!(h.location.as_deref(), Some(""));
}

#[test]
fn non_utf8_header_value_is_lossy() {
    let raw = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; x=\xff\r\n\r\n";
    let h = parse_head(raw, DEFAULT_MAX_HEAD).unwrap().unwrap();
    assert_eq!(h.content_type.as_deref(), Some("text/html; x=\u{fffd}"));
}

#[test]
fn two_hundred_headers_parse_via_retry() {
    let mut raw = String::from("HTTP/1.1 200 OK\r\n");
    for i in 0..200 {
        raw.push_str(&format!("X-Header-{i}: v{i}\r\n"));
    }
    raw.push_str("Location: /last\r\nContent-Length: 3\r\n\r\n");
    let h = head(&raw);
    assert_eq!(h.location.as_deref(), Some("/last"));
    assert_eq!(h.framing, Framing::Length(3));
    assert_eq!(h.head_len, raw.len());
}

#[test]
fn head_over_cap_is_too_large() {
    let mut raw = String::from("HTTP/1.1 200 OK\r\n");
    while raw.len() <= 100 {
        raw.push_str("X-Pad: aaaaaaaaaa\r\n");
    }
    assert_eq!(
        parse_head(raw.as_bytes(), 100),
        Err(HeadError::TooLarge(100))
    );
    // Still incomplete but under the cap: wait for more.
    assert_eq!(parse_head(&raw.as_bytes()[..100], 100), Ok(None));
    // Complete, but the end of head lies past the cap.
    raw.push_str("\r\n");
    assert_eq!(
        parse_head(raw.as_bytes(), 100),
        Err(HeadError::TooLarge(100))
    );
    assert!(parse_head(raw.as_bytes(), raw.len()).unwrap().is_some());
}

#[test]
fn ssh_banner_is_invalid_immediately() {
    assert!(matches!(
        head_err("SSH-2.0-OpenSSH\r\n"),
        HeadError::Invalid(_)
    ));
    assert!(matches!(
        parse_head(b"SSH-2", DEFAULT_MAX_HEAD),
        Err(HeadError::Invalid(_))
    ));
    // A short prefix that cannot become "HTTP/" is rejected too...
    assert!(matches!(
        parse_head(b"<h", DEFAULT_MAX_HEAD),
        Err(HeadError::Invalid(_))
    ));
    // ...but one that still could waits for more.
    assert_eq!(parse_head(b"HTT", DEFAULT_MAX_HEAD), Ok(None));
    assert_eq!(parse_head(b"", DEFAULT_MAX_HEAD), Ok(None));
}

#[test]
fn non_numeric_status_is_invalid() {
    assert!(matches!(
        head_err("HTTP/1.1 abc\r\n\r\n"),
        HeadError::Invalid(_)
    ));
    assert!(matches!(
        head_err("HTTP/1.1 099 Low\r\n\r\n"),
        HeadError::Invalid(_)
    ));
    assert!(matches!(
        head_err("HTTP/2 200\r\n\r\n"),
        HeadError::Invalid(_)
    ));
}

#[test]
fn conflicting_content_length_is_an_error() {
    let raw = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n";
    assert_eq!(head_err(raw), HeadError::ConflictingLength);
    assert_eq!(
        head_err("HTTP/1.1 200 OK\r\nContent-Length: 5, 7\r\n\r\n"),
        HeadError::ConflictingLength
    );
}

#[test]
fn same_content_length_twice_is_ok() {
    let raw = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\ncontent-length: 005\r\n\r\n";
    assert_eq!(head(raw).framing, Framing::Length(5));
    assert_eq!(
        head("HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\n").framing,
        Framing::Length(5)
    );
}

#[test]
fn bad_content_length_is_an_error() {
    for v in ["-1", "5a", "", "0x10", "99999999999999999999999", "+5"] {
        let raw = format!("HTTP/1.1 200 OK\r\nContent-Length: {v}\r\n\r\n");
        assert_eq!(head_err(&raw), HeadError::BadLength, "value {v:?}");
    }
}

#[test]
fn chunked_beats_content_length() {
    let raw = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n";
    assert_eq!(head(raw).framing, Framing::Chunked);
    // Even a bogus Content-Length is ignored when chunked.
    let raw = "HTTP/1.1 200 OK\r\nContent-Length: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    assert_eq!(head(raw).framing, Framing::Chunked);
}

#[test]
fn transfer_encoding_not_ending_in_chunked_reads_until_close() {
    let raw = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\nContent-Length: 5\r\n\r\n";
    assert_eq!(head(raw).framing, Framing::UntilClose);
    let raw = "HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\nContent-Length: 5\r\n\r\n";
    assert_eq!(head(raw).framing, Framing::Length(5));
}

#[test]
fn no_body_statuses_have_no_framing() {
    for status in [100, 101, 199, 204, 304] {
        let raw = format!("HTTP/1.1 {status} X\r\nContent-Length: 10\r\n\r\n");
        assert_eq!(head(&raw).framing, Framing::None, "status {status}");
    }
    assert_eq!(head("HTTP/1.1 200 OK\r\n\r\n").framing, Framing::UntilClose);
}

#[test]
fn framing_function_works_on_raw_headers() {
    let headers = [httparse::Header {
        name: "Content-Length",
        value: b" 42 ",
    }];
    assert_eq!(framing(200, &headers), Ok(Framing::Length(42)));
    assert_eq!(framing(304, &headers), Ok(Framing::None));
    assert_eq!(framing(200, &[]), Ok(Framing::UntilClose));
}

#[test]
fn length_body_ignores_extra_bytes() {
    let (p, out) = decode(Framing::Length(5), 100, b"helloEXTRA");
    assert_eq!(p, Ok(Progress::Complete));
    assert_eq!(out, b"hello");
}

#[test]
fn length_body_across_reads_completes() {
    let mut dec = BodyDecoder::new(Framing::Length(5), 100);
    let mut out = Vec::new();
    assert_eq!(dec.feed(b"he", &mut out), Ok(Progress::NeedMore));
    assert_eq!(dec.feed(b"llo", &mut out), Ok(Progress::Complete));
    assert_eq!(dec.feed(b"more", &mut out), Ok(Progress::Complete));
    assert_eq!(out, b"hello");
    assert_eq!(dec.at_eof(), Ok(()));
}

#[test]
fn a_body_ends_exactly_only_without_bytes_after_it() {
    let cases: [(Framing, &[&[u8]], bool); 6] = [
        (Framing::Length(5), &[b"he", b"llo"], true),
        (Framing::Length(5), &[b"hello!"], false),
        (Framing::Length(5), &[b"hello", b"!"], false),
        (Framing::Chunked, &[b"5\r\nhel", b"lo\r\n0\r\n\r\n"], true),
        (Framing::Chunked, &[b"5\r\nhello\r\n0\r\n\r\nHTTP"], false),
        (Framing::UntilClose, &[b"hello"], false),
    ];
    for (framing, reads, exact) in cases {
        let mut dec = BodyDecoder::new(framing, 100);
        let mut out = Vec::new();
        for read in reads {
            dec.feed(read, &mut out).unwrap();
        }
        assert_eq!(out, b"hello");
        assert_eq!(dec.ended_exactly(), exact, "{framing:?} {reads:?}");
    }
}

#[test]
fn short_length_body_then_eof_is_truncated() {
    let mut dec = BodyDecoder::new(Framing::Length(10), 100);
    let mut out = Vec::new();
    assert_eq!(dec.feed(b"hello", &mut out), Ok(Progress::NeedMore));
    assert_eq!(dec.at_eof(), Err(BodyError::Truncated));
}

#[test]
fn zero_length_and_no_body_are_complete_immediately() {
    for framing in [Framing::None, Framing::Length(0)] {
        let mut dec = BodyDecoder::new(framing, 0);
        let mut out = Vec::new();
        assert_eq!(dec.feed(b"", &mut out), Ok(Progress::Complete));
        assert_eq!(dec.feed(b"junk", &mut out), Ok(Progress::Complete));
        assert!(out.is_empty());
        assert_eq!(dec.at_eof(), Ok(()));
    }
}

#[test]
fn cap_reached_is_capped_with_exactly_max_body_bytes() {
    for framing in [Framing::Length(100), Framing::UntilClose] {
        let mut dec = BodyDecoder::new(framing, 7);
        let mut out = Vec::new();
        assert_eq!(dec.feed(b"abcd", &mut out), Ok(Progress::NeedMore));
        assert_eq!(
            dec.feed(b"efghij", &mut out),
            Ok(Progress::Capped),
            "{framing:?}"
        );
        assert_eq!(dec.feed(b"klm", &mut out), Ok(Progress::Capped));
        assert_eq!(out, b"abcdefg");
    }
    let body = encode_chunked(b"abcdefghij", &[3, 3]);
    let (p, out) = decode(Framing::Chunked, 7, &body);
    assert_eq!(p, Ok(Progress::Capped));
    assert_eq!(out, b"abcdefg");
}

#[test]
fn body_exactly_at_cap_is_complete_not_capped() {
    let (p, out) = decode(Framing::Length(5), 5, b"hello");
    assert_eq!((p, out.as_slice()), (Ok(Progress::Complete), &b"hello"[..]));
    let (p, out) = decode(Framing::Chunked, 5, b"5\r\nhello\r\n0\r\n\r\n");
    assert_eq!((p, out.as_slice()), (Ok(Progress::Complete), &b"hello"[..]));
}

#[test]
fn cap_counts_payload_not_callers_buffer() {
    let mut dec = BodyDecoder::new(Framing::UntilClose, 4);
    let mut out = b"already here".to_vec();
    assert_eq!(dec.feed(b"abcdef", &mut out), Ok(Progress::Capped));
    assert_eq!(out, b"already hereabcd");
}

#[test]
fn until_close_then_eof_is_ok() {
    let mut dec = BodyDecoder::new(Framing::UntilClose, 100);
    let mut out = Vec::new();
    assert_eq!(dec.feed(b"some ", &mut out), Ok(Progress::NeedMore));
    assert_eq!(dec.feed(b"body", &mut out), Ok(Progress::NeedMore));
    assert_eq!(dec.at_eof(), Ok(()));
    assert_eq!(out, b"some body");
}

#[test]
fn chunked_body_one_byte_at_a_time_decodes() {
    let body = b"4\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\n\r\nEXTRA";
    let mut dec = BodyDecoder::new(Framing::Chunked, 1000);
    let mut out = Vec::new();
    let end = body.len() - 5;
    for (i, b) in body.iter().enumerate() {
        let p = dec.feed(std::slice::from_ref(b), &mut out).unwrap();
        if i + 1 < end {
            assert_eq!(p, Progress::NeedMore, "byte {i}");
        } else {
            assert_eq!(p, Progress::Complete, "byte {i}");
        }
    }
    assert_eq!(out, b"Wikipedia in\r\n\r\nchunks.");
    assert_eq!(dec.at_eof(), Ok(()));
}

#[test]
fn chunked_body_split_across_reads_decodes() {
    let mut dec = BodyDecoder::new(Framing::Chunked, 1000);
    let mut out = Vec::new();
    assert_eq!(dec.feed(b"5\r\nhel", &mut out), Ok(Progress::NeedMore));
    assert_eq!(dec.feed(b"lo\r", &mut out), Ok(Progress::NeedMore));
    assert_eq!(dec.feed(b"\n0\r\n", &mut out), Ok(Progress::NeedMore));
    assert_eq!(dec.feed(b"\r\n", &mut out), Ok(Progress::Complete));
    assert_eq!(out, b"hello");
}

#[test]
fn chunked_with_extensions_and_trailers_decodes() {
    let body = b"5;name=value;q=\"a b\"\r\nhello\r\n6 ; ext\r\n world\r\n0;last\r\nExpires: never\r\nX-Trailer: 1\r\n\r\n";
    let (p, out) = decode(Framing::Chunked, 1000, body);
    assert_eq!(p, Ok(Progress::Complete));
    assert_eq!(out, b"hello world");
}

#[test]
fn chunked_with_bare_lf_decodes() {
    let (p, out) = decode(Framing::Chunked, 1000, b"3\nabc\n2\r\nde\n0\n\n");
    assert_eq!(p, Ok(Progress::Complete));
    assert_eq!(out, b"abcde");
}

#[test]
fn bad_chunk_size_is_an_error() {
    for body in [&b"zz\r\n"[..], b"\r\n", b"5 x\r\n", b"-1\r\n"] {
        let (p, _) = decode(Framing::Chunked, 1000, body);
        assert!(
            matches!(p, Err(BodyError::BadChunk(_))),
            "body {:?}",
            body.escape_ascii().to_string()
        );
    }
}

#[test]
fn overflowing_chunk_size_is_an_error() {
    let (p, _) = decode(Framing::Chunked, 1000, b"10000000000000000\r\n");
    assert_eq!(p, Err(BodyError::BadChunk("chunk size too large")));
    // Largest u64 is fine as a size (it is just never satisfied).
    let (p, _) = decode(Framing::Chunked, 1000, b"ffffffffffffffff\r\nabc");
    assert_eq!(p, Ok(Progress::NeedMore));
}

#[test]
fn chunk_data_without_crlf_is_an_error_and_sticks() {
    let mut dec = BodyDecoder::new(Framing::Chunked, 1000);
    let mut out = Vec::new();
    let err = dec.feed(b"3\r\nabcX", &mut out).unwrap_err();
    assert!(matches!(err, BodyError::BadChunk(_)));
    assert_eq!(dec.feed(b"0\r\n\r\n", &mut out), Err(err.clone()));
    assert_eq!(dec.at_eof(), Err(err));
}

#[test]
fn endless_chunk_extension_is_rejected() {
    let mut dec = BodyDecoder::new(Framing::Chunked, 1000);
    let mut out = Vec::new();
    let ext = vec![b'a'; MAX_CHUNK_LINE + 10];
    assert_eq!(dec.feed(b"1;", &mut out), Ok(Progress::NeedMore));
    assert!(matches!(
        dec.feed(&ext, &mut out),
        Err(BodyError::BadChunk(_))
    ));
}

#[test]
fn unfinished_chunked_then_eof_is_truncated() {
    let mut dec = BodyDecoder::new(Framing::Chunked, 1000);
    let mut out = Vec::new();
    assert_eq!(dec.feed(b"5\r\nhel", &mut out), Ok(Progress::NeedMore));
    assert_eq!(dec.at_eof(), Err(BodyError::Truncated));
}

#[test]
fn chunked_missing_final_blank_line_then_eof_is_ok() {
    let mut dec = BodyDecoder::new(Framing::Chunked, 1000);
    let mut out = Vec::new();
    assert_eq!(
        dec.feed(b"5\r\nhello\r\n0\r\n", &mut out),
        Ok(Progress::NeedMore)
    );
    assert_eq!(dec.at_eof(), Ok(()));
    assert_eq!(out, b"hello");
}

#[test]
fn media_type_cases() {
    let s = |s: &str| s.to_owned();
    assert_eq!(
        media_type("Text/HTML; charset=\"UTF-8\""),
        (s("text/html"), Some(s("utf-8")))
    );
    assert_eq!(media_type("text/plain"), (s("text/plain"), None));
    assert_eq!(
        media_type("  application/XHTML+xml ;foo=bar; Charset = ISO-8859-1 "),
        (s("application/xhtml+xml"), Some(s("iso-8859-1")))
    );
    assert_eq!(
        media_type("text/html; charset='windows-1252'"),
        (s("text/html"), Some(s("windows-1252")))
    );
    assert_eq!(media_type("text/html; charset="), (s("text/html"), None));
    assert_eq!(media_type(""), (s(""), None));
    assert_eq!(media_type(";charset=utf-8"), (s(""), Some(s("utf-8"))));
}

#[test]
fn is_html_cases() {
    assert!(is_html(Some("text/html")));
    assert!(is_html(Some("TEXT/HTML; charset=utf-8")));
    assert!(is_html(Some("application/xhtml+xml")));
    assert!(!is_html(Some("text/plain")));
    assert!(!is_html(Some("application/json")));
    assert!(!is_html(Some("")));
    assert!(!is_html(None));
    assert!(is_css(Some("Text/CSS; charset=utf-8")));
    assert!(!is_css(Some("text/html")));
    assert!(!is_css(None));
}

fn any_framing() -> impl Strategy<Value = Framing> {
    prop_oneof![
        Just(Framing::None),
        any::<u64>().prop_map(Framing::Length),
        (0u64..64).prop_map(Framing::Length),
        Just(Framing::Chunked),
        Just(Framing::UntilClose),
    ]
}

/// Bytes that look chunk-ish often enough to reach deep states.
fn chunkish_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![
            any::<u8>(),
            Just(b'\r'),
            Just(b'\n'),
            Just(b'0'),
            Just(b'1'),
            Just(b'a'),
            Just(b';'),
        ],
        0..200,
    )
}

proptest! {
    #[test]
    fn parse_head_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..512), max in 0usize..600) {
        let _ = parse_head(&bytes, max);
        let mut with_prefix = b"HTTP/1.1 ".to_vec();
        with_prefix.extend_from_slice(&bytes);
        let _ = parse_head(&with_prefix, max);
    }

    #[test]
    fn parse_head_never_panics_on_header_like_lines(
        lines in prop::collection::vec("[ -~\t]{0,30}", 0..20),
        sep in prop_oneof![Just("\r\n"), Just("\n")],
    ) {
        let raw = format!("HTTP/1.1 200 OK{sep}{}{sep}{sep}", lines.join(sep));
        if let Ok(Some(h)) = parse_head(raw.as_bytes(), DEFAULT_MAX_HEAD) {
            prop_assert_eq!(Some(h.head_len), find_head_end(raw.as_bytes()));
        }
    }

    #[test]
    fn body_decoder_never_panics(
        framing in any_framing(),
        max in 0usize..300,
        reads in prop::collection::vec(chunkish_bytes(), 0..6),
    ) {
        let mut dec = BodyDecoder::new(framing, max);
        let mut out = Vec::new();
        for read in &reads {
            let _ = dec.feed(read, &mut out);
            prop_assert!(out.len() <= max);
        }
        let _ = dec.at_eof();
    }

    #[test]
    fn chunked_roundtrip_at_random_split_points(
        payload in prop::collection::vec(any::<u8>(), 0..600),
        sizes in prop::collection::vec(1usize..80, 0..20),
        mut cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
    ) {
        let encoded = encode_chunked(&payload, &sizes);
        let mut points: Vec<usize> = cuts.iter_mut().map(|i| i.index(encoded.len() + 1)).collect();
        points.push(0);
        points.push(encoded.len());
        points.sort_unstable();
        let mut dec = BodyDecoder::new(Framing::Chunked, usize::MAX);
        let mut out = Vec::new();
        let mut last = Progress::NeedMore;
        for w in points.windows(2) {
            last = dec.feed(&encoded[w[0]..w[1]], &mut out).unwrap();
        }
        prop_assert_eq!(last, Progress::Complete);
        prop_assert_eq!(out, payload);
    }

    #[test]
    fn capped_chunked_output_is_a_prefix(
        payload in prop::collection::vec(any::<u8>(), 1..300),
        sizes in prop::collection::vec(1usize..50, 0..10),
        max in 0usize..300,
    ) {
        let encoded = encode_chunked(&payload, &sizes);
        let mut dec = BodyDecoder::new(Framing::Chunked, max);
        let mut out = Vec::new();
        let p = dec.feed(&encoded, &mut out).unwrap();
        let n = payload.len().min(max);
        prop_assert_eq!(&out[..], &payload[..n]);
        prop_assert_eq!(p, if max >= payload.len() { Progress::Complete } else { Progress::Capped });
    }
}
