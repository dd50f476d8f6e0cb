//! Compressed bodies end to end: the crawler offers gzip, deflate and br,
//! undoes whatever coding a server says it applied (asked for or not,
//! stacked or not, zlib-wrapped or raw deflate), reads the same links as
//! from the plain page, records both sizes, and cuts decompression bombs at
//! `--max-body` in bounded memory and time.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use crate::common;
use crate::common::*;
use ringcrawl_site::server::{Reply, Request, Step};

/// The page every variant serves, linking to three children under `dir`.
fn variant_page(dir: &str) -> Vec<u8> {
    format!(
        "<!doctype html><html><body><p>{}</p><a href=\"/{dir}/1\">1</a> \
         <a href='/{dir}/2'>2</a> <a href=/{dir}/3>3</a></body></html>",
        "filler text ".repeat(200)
    )
    .into_bytes()
}

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

/// The variants: path, `Content-Encoding`, body for `page(path)`.
fn variant(name: &str) -> Option<(&'static str, Vec<u8>)> {
    let plain = variant_page(name);
    Some(match name {
        "plain" => ("", plain),
        "gzip" => ("gzip", gzip(&plain)),
        "zlib" => ("deflate", zlib(&plain)),
        "raw-deflate" => ("deflate", raw_deflate(&plain)),
        "br" => ("br", brotli(&plain)),
        "gzip-then-br" => ("gzip, br", brotli(&gzip(&plain))),
        "deflate-gzip" => ("deflate, gzip", gzip(&zlib(&plain))),
        _ => return None,
    })
}

const VARIANTS: [&str; 7] = [
    "plain",
    "gzip",
    "zlib",
    "raw-deflate",
    "br",
    "gzip-then-br",
    "deflate-gzip",
];

fn encoded(coding: &str, body: Vec<u8>) -> Reply {
    let mut headers = vec![("Content-Type".to_string(), "text/html".to_string())];
    if !coding.is_empty() {
        headers.push(("Content-Encoding".into(), coding.into()));
    }
    Reply::Http {
        status: 200,
        headers,
        body,
    }
}

/// Serves the index (linking every variant) and the variants; every
/// request's Accept-Encoding goes to `offered`.
fn server(
    offered: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
) -> ringcrawl_site::server::Server {
    serve(move |req: &Request| {
        offered
            .lock()
            .unwrap()
            .push(req.header("accept-encoding").unwrap_or("").to_string());
        let path = req.path.trim_start_matches('/');
        if path.is_empty() {
            let links: Vec<String> = VARIANTS.iter().map(|v| format!("/{v}")).collect();
            let links: Vec<&str> = links.iter().map(String::as_str).collect();
            return Some(page_reply(&links));
        }
        if let Some((coding, body)) = variant(path) {
            return Some(encoded(coding, body));
        }
        path.contains('/').then(|| page_reply(&[]))
    })
}

fn page_reply(links: &[&str]) -> Reply {
    common::page(links)
}

#[test]
fn every_coding_gives_the_links_of_the_plain_page() {
    let offered = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let server = server(offered.clone());
    let b = base(&server);
    let records = by_url(&crawl(config(&[format!("{b}/")])));
    for v in VARIANTS {
        let r = &records[&format!("{b}/{v}")];
        let (coding, body) = variant(v).unwrap();
        assert_eq!(r.error, None, "{v}");
        assert_eq!(r.num_urls, 3, "{v}: links of the decoded page");
        assert_eq!(r.size, variant_page(v).len() as u64, "{v}: decoded size");
        assert_eq!(r.encoded_size, body.len() as u64, "{v}: size as sent");
        let want = (!coding.is_empty()).then(|| coding.to_string());
        assert_eq!(r.content_encoding, want, "{v}");
        for child in 1..=3 {
            assert_eq!(
                server.hits("127.0.0.1", &format!("/{v}/{child}")),
                1,
                "{v}/{child}"
            );
        }
    }
    let offered = offered.lock().unwrap();
    assert!(
        offered.iter().all(|a| a == "gzip, deflate, br"),
        "{offered:?}"
    );
}

#[test]
fn a_body_compressed_although_not_asked_for_is_still_read() {
    let offered = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let server = server(offered.clone());
    let b = base(&server);
    let mut cfg = config(&[format!("{b}/gzip")]);
    cfg.compression = false;
    let records = by_url(&crawl(cfg));
    assert_eq!(records[&format!("{b}/gzip")].num_urls, 3);
    assert_eq!(records.len(), 4);
    let offered = offered.lock().unwrap();
    assert!(offered.iter().all(|a| a == "identity"), "{offered:?}");
}

#[test]
fn broken_and_unknown_codings_are_recorded_and_what_decoded_is_used() {
    let server = serve(|req: &Request| {
        let mut long = variant_page("cut");
        long.extend(b"<p>".repeat(20_000));
        Some(match req.path.as_str() {
            "/" => page_reply(&["/broken", "/zstd"]),
            "/broken" => {
                let mut body = gzip(&long);
                body.truncate(body.len() - 40);
                encoded("gzip", body)
            }
            "/zstd" => encoded("zstd", variant_page("zstd")),
            _ => page_reply(&[]),
        })
    });
    let b = base(&server);
    let records = by_url(&crawl(config(&[format!("{b}/")])));
    let broken = &records[&format!("{b}/broken")];
    assert_eq!(broken.error_kind.as_deref(), Some("bad_content_encoding"));
    assert_eq!(broken.num_urls, 3, "links before the fault are kept");
    let zstd = &records[&format!("{b}/zstd")];
    assert_eq!(
        zstd.error_kind.as_deref(),
        Some("unsupported_content_encoding")
    );
    assert_eq!(zstd.num_urls, 0);
}

/// A gzip body of `gib` GiB of zeros, built from one sync-flushed deflate
/// block of 1 MiB repeated (about 1 KiB a MiB), with a valid trailer: never
/// more than ~10 MB in memory and nothing on disk.
fn gzip_bomb(gib: u64) -> Vec<Step> {
    let mib = vec![0u8; 1 << 20];
    let mut compress = flate2::Compress::new(flate2::Compression::best(), false);
    let mut block = Vec::with_capacity(4096);
    compress
        .compress_vec(&mib, &mut block, flate2::FlushCompress::Sync)
        .unwrap();
    let mut crc = crc32fast::Hasher::new();
    crc.update(&mib);
    let one = crc.clone().finalize();
    let mut whole = crc32fast::Hasher::new();
    let count = gib * 1024;
    for _ in 0..count {
        whole.combine(&crc32fast::Hasher::new_with_initial_len(one, 1 << 20));
    }
    let head = "HTTP/1.0 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n\r\n";
    let mut steps = vec![Step::Write(
        [head.as_bytes(), &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]].concat(),
    )];
    steps.extend((0..count).map(|_| Step::Write(block.clone())));
    let mut tail = vec![3, 0]; // a final, empty fixed-Huffman block
    tail.extend(whole.finalize().to_le_bytes());
    tail.extend(((count << 20) as u32).to_le_bytes());
    steps.push(Step::Write(tail));
    steps
}

/// A brotli body of 1 GiB of zeros (about 800 bytes).
fn brotli_bomb() -> Vec<Step> {
    let mut body = Vec::new();
    {
        let mut w = brotli::CompressorWriter::new(&mut body, 1 << 16, 5, 24);
        let mib = vec![0u8; 1 << 20];
        for _ in 0..1024 {
            w.write_all(&mib).unwrap();
        }
    }
    let head = "HTTP/1.0 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: br\r\n\r\n";
    vec![Step::Write([head.as_bytes(), &body].concat())]
}

#[test]
fn the_bomb_builders_make_what_they_say() {
    let wire: Vec<u8> = gzip_bomb(1)
        .into_iter()
        .flat_map(|s| match s {
            Step::Write(b) => b,
            _ => Vec::new(),
        })
        .collect();
    let body_at = wire.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let bytes = &wire[body_at..];
    let mut d = flate2::read::GzDecoder::new(bytes);
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = d.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        assert!(buf[..n].iter().all(|&b| b == 0));
        total += n as u64;
    }
    assert_eq!(
        total,
        1 << 30,
        "a valid gzip stream of 1 GiB, trailer checked"
    );
}

/// Run the binary against `url` with `--max-body`; its records, wall time
/// and peak RSS (KiB, from its `--report-json`).
fn crawl_binary(url: &str, max_body: &str) -> (Vec<serde_json::Value>, Duration, u64) {
    let dir = std::env::temp_dir().join(format!(
        "ringcrawl-bomb-{}-{}",
        std::process::id(),
        url.len()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("records.jsonl");
    let report = dir.join("report.json");
    let started = Instant::now();
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_ringcrawl"))
        // One record, the bomb's: no guessed /sitemap.xml before it.
        // Two shards: the channels between shards grow with the square of
        // their count, and the bound is for the bodies, not the machine.
        .args([
            "-q",
            "--cores",
            "2",
            "--ignore-robots",
            "--no-sitemaps",
            "--max-body",
            max_body,
            "-o",
        ])
        .arg(&out)
        .arg("--report-json")
        .arg(&report)
        .arg(url)
        .status()
        .unwrap();
    let elapsed = started.elapsed();
    assert!(status.success());
    let records = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    (records, elapsed, report["peak_rss_kib"].as_u64().unwrap())
}

#[test]
fn decompression_bombs_are_cut_at_max_body_in_bounded_memory_and_time() {
    let gzip = gzip_bomb(10);
    let brotli = brotli_bomb();
    let server = serve(move |req: &Request| match req.path.as_str() {
        "/gzip" => Some(Reply::Script(gzip.clone())),
        "/br" => Some(Reply::Script(brotli.clone())),
        _ => None,
    });
    let b = base(&server);
    for (path, wire) in [("/gzip", "10 GiB of gzip"), ("/br", "1 GiB of br")] {
        let (records, elapsed, rss_kib) = crawl_binary(&format!("{b}{path}"), "4194304");
        let r = &records[0];
        assert_eq!(r["truncated"], true, "{wire}: {r}");
        assert_eq!(r["size"], 4 << 20, "{wire}: cut at --max-body: {r}");
        assert!(r["error_kind"].is_null(), "{wire}: {r}");
        assert!(elapsed < Duration::from_secs(20), "{wire}: {elapsed:?}");
        // About 9 MiB for an idle crawl; the wire bytes (4 MiB at most) and
        // the decoded ones (4 MiB) come on top.
        assert!(
            rss_kib > 0 && rss_kib < 48 << 10,
            "{wire}: peak RSS {rss_kib} KiB"
        );
        eprintln!(
            "{wire}: cut at 4 MiB in {elapsed:?}, peak RSS {} MiB",
            rss_kib >> 10
        );
    }
}
