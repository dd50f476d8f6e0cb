//! Compressed bodies end to end: the crawler offers gzip, deflate, br and
//! zstd, undoes whatever coding a server says it applied (asked for or not,
//! stacked or not, zlib-wrapped or raw deflate), reads the same links as
//! from the plain page, records both sizes, takes empty and padded bodies
//! as complete, reads a body under an unknown coding as sent, takes a
//! body cut short in transfer as a cut page and a corrupt one as bad; and
//! (`bombs.rs`) cuts decompression bombs at `--max-body` in bounded memory
//! and time.

mod bombs;

use std::io::Write;
use std::sync::{Arc, Mutex};

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

fn zstd(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(zstd_safe::compress_bound(data.len()));
    zstd_safe::compress(&mut out, data, 3).unwrap();
    out
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
        "zstd" => ("zstd", zstd(&plain)),
        "zstd-then-gzip" => ("zstd, gzip", gzip(&zstd(&plain))),
        "gzip-then-br" => ("gzip, br", brotli(&gzip(&plain))),
        "deflate-gzip" => ("deflate, gzip", gzip(&zlib(&plain))),
        _ => return None,
    })
}

const VARIANTS: [&str; 9] = [
    "plain",
    "gzip",
    "zlib",
    "raw-deflate",
    "br",
    "zstd",
    "zstd-then-gzip",
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
    let records = by_url(&crawl(settings(&[format!("{b}/")])));
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
        offered.iter().all(|a| a == "gzip, deflate, br, zstd"),
        "{offered:?}"
    );
}

#[test]
fn a_body_compressed_although_not_asked_for_is_still_read() {
    let offered = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let server = server(offered.clone());
    let b = base(&server);
    let mut cfg = settings(&[format!("{b}/gzip")]);
    cfg = cfg.compression(false);
    let records = by_url(&crawl(cfg));
    assert_eq!(records[&format!("{b}/gzip")].num_urls, 3);
    assert_eq!(records.len(), 4);
    let offered = offered.lock().unwrap();
    assert!(offered.iter().all(|a| a == "identity"), "{offered:?}");
}

/// A page long enough that the front of its gzip stream holds its links.
fn long_page(dir: &str) -> Vec<u8> {
    let mut long = variant_page(dir);
    long.extend(b"<p>".repeat(20_000));
    long
}

/// A gzip body cut short in transfer (its Content-Length, or the close
/// that ends a body without one, comes before the end of the stream) is a
/// page cut short, not bad data: what decoded is read and its links
/// followed, the record marked cut in transfer with a warning, not an
/// error. Bad bytes inside a stream stay `bad_content_encoding`, the
/// links before them kept.
#[test]
fn a_gzip_body_cut_short_in_transfer_is_a_cut_page_and_a_corrupt_one_is_bad_encoding() {
    let server = serve(|req: &Request| {
        let path = req.path.trim_start_matches('/');
        let body = gzip(&long_page(path));
        Some(match path {
            "" => page_reply(&["/trailer", "/middle", "/closed", "/corrupt"]),
            "trailer" => encoded("gzip", body[..body.len() - 4].to_vec()),
            "middle" => encoded("gzip", body[..body.len() - 40].to_vec()),
            "closed" => {
                let mut bytes = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\
                    Content-Encoding: gzip\r\nConnection: close\r\n\r\n"
                    .to_vec();
                bytes.extend_from_slice(&body[..body.len() - 40]);
                Reply::Script(vec![Step::Write(bytes), Step::Close])
            }
            "corrupt" => {
                // A whole member, then one whose first deflate block is
                // of the reserved type (BTYPE 11), then more: bad data
                // inside the body, not its end. (Bytes overwritten inside
                // a stream may read as a block that wants more input, and
                // so as a cut: the decoder cannot tell those apart.)
                let mut body = gzip(&variant_page(path));
                body.extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 0x07]);
                body.extend_from_slice(&gzip(b"more")[10..]);
                encoded("gzip", body)
            }
            _ => page_reply(&[]),
        })
    });
    let b = base(&server);
    let records = by_url(&crawl(settings(&[format!("{b}/")])));
    for path in ["trailer", "middle", "closed"] {
        let r = &records[&format!("{b}/{path}")];
        assert_eq!((r.status, r.error_kind), (Some(200), None), "{path}: {r:?}");
        assert_eq!(
            (r.truncated, r.truncated_by.as_deref()),
            (true, Some("transfer")),
            "{path}"
        );
        let warnings: Vec<&str> = r.warnings.iter().map(|w| w.kind.as_str()).collect();
        assert_eq!(warnings, ["truncated_content_encoding"], "{path}");
        assert_eq!(r.num_urls, 3, "{path}: the links of what decoded");
        for child in 1..=3 {
            assert_eq!(
                server.hits("127.0.0.1", &format!("/{path}/{child}")),
                1,
                "{path}"
            );
        }
    }
    let whole = &records[&format!("{b}/trailer")];
    assert_eq!(
        whole.size,
        long_page("trailer").len() as u64,
        "all of it before the trailer"
    );
    let corrupt = &records[&format!("{b}/corrupt")];
    assert_eq!(
        corrupt.error_kind,
        Some(ringcrawl::ErrorKind::BadContentEncoding),
        "{corrupt:?}"
    );
    assert!(!corrupt.truncated, "{corrupt:?}");
    assert_eq!(corrupt.num_urls, 3, "links before the fault are kept");
}

/// A body under a coding nobody knows (`none`, `UTF-8`: misconfigured
/// servers) is read as sent, as browsers do, its links followed, the
/// coding recorded.
#[test]
fn unknown_codings_are_recorded_and_the_body_is_read_as_sent() {
    let server = serve(|req: &Request| {
        Some(match req.path.as_str() {
            "/" => page_reply(&["/none", "/utf-8"]),
            "/none" => encoded("none", variant_page("none")),
            "/utf-8" => encoded("UTF-8", variant_page("utf-8")),
            _ => page_reply(&[]),
        })
    });
    let b = base(&server);
    let records = by_url(&crawl(settings(&[format!("{b}/")])));
    for (path, named) in [("none", "none"), ("utf-8", "utf-8")] {
        let r = &records[&format!("{b}/{path}")];
        assert_eq!(r.error_kind, None, "{path}: a page fetched, not an error");
        assert_eq!(
            r.warnings
                .iter()
                .map(|w| w.kind.as_str())
                .collect::<Vec<_>>(),
            ["unsupported_content_encoding"],
            "{path}"
        );
        assert_eq!(r.content_encoding.as_deref(), Some(named), "{path}");
        assert_eq!((r.status, r.num_urls), (Some(200), 3), "{path}");
        assert_eq!(r.size, variant_page(path).len() as u64, "{path}");
        for child in 1..=3 {
            assert_eq!(server.hits("127.0.0.1", &format!("/{path}/{child}")), 1);
        }
    }
}

/// An answer of `status` naming `coding` with no body bytes (the test
/// server sends `Content-Length: 0`), with `headers` besides.
fn empty(status: u16, coding: &str, headers: &[(&str, &str)]) -> Reply {
    let mut all = vec![
        ("Content-Type".to_string(), "text/html".to_string()),
        ("Content-Encoding".to_string(), coding.to_string()),
    ];
    all.extend(headers.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    Reply::Http {
        status,
        headers: all,
        body: Vec::new(),
    }
}

/// Answers that name a coding and send nothing (a 301 with
/// `Content-Length: 0`, an empty 200 page, a 204), and a gzip page with a
/// stray newline after its member, are complete: no error, the redirect
/// followed, the links read. In a crawl, and with a page hook (which gets
/// every body decoded, the redirect's and the 204's too).
#[test]
fn empty_bodies_and_padded_gzip_under_a_coding_are_complete_not_broken() {
    let server = serve(|req: &Request| {
        Some(match req.path.as_str() {
            "/" => page_reply(&["/moved", "/empty", "/empty-br", "/nothing", "/padded"]),
            "/moved" => empty(301, "gzip", &[("Location", "/target")]),
            "/empty" => empty(200, "gzip", &[]),
            "/empty-br" => empty(200, "br", &[]),
            "/nothing" => empty(204, "gzip", &[]),
            "/padded" => {
                let mut body = gzip(&variant_page("padded"));
                body.extend_from_slice(b"\n");
                encoded("gzip", body)
            }
            _ => page_reply(&[]),
        })
    });
    let b = base(&server);
    let records = by_url(&crawl(settings(&[format!("{b}/")])));
    for path in ["/moved", "/empty", "/empty-br", "/nothing", "/padded"] {
        let r = &records[&format!("{b}{path}")];
        assert_eq!((r.error_kind, r.truncated), (None, false), "{path}: {r:?}");
    }
    assert_eq!(
        records[&format!("{b}/moved")].next_url,
        Some(format!("{b}/target"))
    );
    assert_eq!(records[&format!("{b}/target")].status, Some(200));
    assert_eq!(records[&format!("{b}/padded")].num_urls, 3);
    assert_eq!(server.hits("127.0.0.1", "/padded/3"), 1);

    // Each page handed over: its URL and error kind.
    type Seen = Arc<Mutex<Vec<(String, Option<String>)>>>;
    let seen: Seen = Arc::default();
    let handler_seen = seen.clone();
    ringcrawl::Crawler::builder()
        .root(format!("{b}/"))
        .cores(1)
        .obey_robots(false)
        .sitemaps(false)
        .on_page(move |page| {
            handler_seen.lock().unwrap().push((
                page.url().to_string(),
                page.error_kind().map(|k| k.to_string()),
            ));
        })
        .build()
        .unwrap()
        .run()
        .unwrap();
    let seen = seen.lock().unwrap();
    assert!(
        seen.iter().any(|(url, _)| url.ends_with("/target")),
        "{seen:?}"
    );
    assert!(seen.iter().all(|(_, kind)| kind.is_none()), "{seen:?}");
}
