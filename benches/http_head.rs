//! `cargo bench --bench http_head`: the pure HTTP layer on the hot path of
//! every fetch: parsing a realistic nginx response head, and decoding a
//! 64 KiB chunked body (fed in 16 KiB reads, as a socket delivers it); and
//! the hostile case of a 64 KiB head that arrives one byte per read.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "a benchmark's inputs are its own; the workspace's panic-free lints are for what servers send"
)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ringcrawl_http1::{parse_head, BodyDecoder, Framing, HeadScan, Progress, DEFAULT_MAX_HEAD};

/// What nginx 1.22 sends for a static page (about 300 bytes), plus the first
/// bytes of the body, as a first read from the socket would hold them.
const NGINX_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\n\
Server: nginx/1.22.1\r\n\
Date: Sun, 22 Nov 2026 08:00:00 GMT\r\n\
Content-Type: text/html; charset=utf-8\r\n\
Content-Length: 6132\r\n\
Last-Modified: Sun, 22 Nov 2026 07:58:41 GMT\r\n\
Connection: close\r\n\
Vary: Accept-Encoding\r\n\
ETag: \"674039a1-17f4\"\r\n\
X-Content-Type-Options: nosniff\r\n\
Accept-Ranges: bytes\r\n\
\r\n\
<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n";

/// 64 KiB of payload in 4 KiB chunks, then the last chunk and a blank line.
fn chunked_body(payload: usize, chunk: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload + payload / chunk * 8 + 16);
    let mut left = payload;
    while left > 0 {
        let n = left.min(chunk);
        out.extend_from_slice(format!("{n:x}\r\n").as_bytes());
        out.extend((0..n).map(|i| b'a' + (i % 26) as u8));
        out.extend_from_slice(b"\r\n");
        left -= n;
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

fn bench_head(c: &mut Criterion) {
    let head_len = parse_head(NGINX_HEAD, DEFAULT_MAX_HEAD)
        .expect("valid head")
        .expect("complete head")
        .head_len;
    let mut group = c.benchmark_group("http_head");
    group.throughput(Throughput::Bytes(head_len as u64));
    group.bench_function(format!("parse_head/nginx_{head_len}B"), |b| {
        b.iter(|| parse_head(black_box(NGINX_HEAD), DEFAULT_MAX_HEAD))
    });

    // A hostile server's head just under the cap, a byte per segment: the
    // fetch calls the scan after every read.
    let mut slow = b"HTTP/1.1 200 OK\r\n".to_vec();
    while slow.len() < DEFAULT_MAX_HEAD - 64 {
        slow.extend_from_slice(b"X-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n");
    }
    slow.extend_from_slice(b"\r\n");
    group.throughput(Throughput::Bytes(slow.len() as u64));
    group.bench_function(format!("head_scan/{}B_one_byte_a_read", slow.len()), |b| {
        b.iter(|| {
            let mut scan = HeadScan::new(DEFAULT_MAX_HEAD);
            for end in 1..slow.len() {
                assert!(scan
                    .parse(black_box(&slow[..end]))
                    .expect("valid")
                    .is_none());
            }
            scan.parse(&slow)
                .expect("valid")
                .expect("complete")
                .head_len
        })
    });
    group.finish();
}

fn bench_chunked(c: &mut Criterion) {
    const PAYLOAD: usize = 64 * 1024;
    let wire = chunked_body(PAYLOAD, 4096);
    let mut group = c.benchmark_group("http_body");
    group.throughput(Throughput::Bytes(wire.len() as u64));
    group.bench_function("chunked_64KiB/16KiB_reads", |b| {
        let mut out = Vec::with_capacity(PAYLOAD);
        b.iter(|| {
            out.clear();
            let mut decoder = BodyDecoder::new(Framing::Chunked, 16 << 20);
            let mut progress = Progress::NeedMore;
            for read in black_box(&wire).chunks(16 * 1024) {
                progress = decoder.feed(read, &mut out).expect("valid chunking");
            }
            assert_eq!(progress, Progress::Complete);
            out.len()
        })
    });
    group.finish();
}

criterion_group!(benches, bench_head, bench_chunked);
criterion_main!(benches);
