//! Decompression bombs end to end: cut at `--max-body` in bounded memory
//! and time (gzip, br, zstd), more than five stacked codings refused, and
//! a bomb's decoding sharing its core with the shard's other fetches.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::{encoded, page_reply, variant_page};
use crate::common::*;
use ringcrawl_site::server::{Reply, Request, Step};

/// A gzip body of `gib` GiB of zeros, built from one sync-flushed deflate
/// block of 1 MiB repeated (about 1 KiB a MiB), with a valid trailer: never
/// more than ~10 MB in memory and nothing on disk.
fn gzip_bomb(gib: u64) -> Vec<Step> {
    gzip_bomb_mib(gib * 1024)
}

/// [`gzip_bomb`] of `count` MiB.
fn gzip_bomb_mib(count: u64) -> Vec<Step> {
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

/// A zstd body of 1 GiB of zeros (32 KiB): one frame with an 8 MiB
/// window, of 8192 RLE blocks of 128 KiB each.
fn zstd_bomb() -> Vec<Step> {
    let mut body = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, 13 << 3];
    let blocks = 8192u32;
    for i in 0..blocks {
        // Last block flag, type RLE, 128 KiB.
        let header = u32::from(i + 1 == blocks) | 1 << 1 | (128 << 10) << 3;
        body.extend_from_slice(&header.to_le_bytes()[..3]);
        body.push(0);
    }
    let head = "HTTP/1.0 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: zstd\r\n\r\n";
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
    let zstd = zstd_bomb();
    let server = serve(move |req: &Request| match req.path.as_str() {
        "/gzip" => Some(Reply::Script(gzip.clone())),
        "/br" => Some(Reply::Script(brotli.clone())),
        "/zstd" => Some(Reply::Script(zstd.clone())),
        _ => None,
    });
    let b = base(&server);
    for (path, wire) in [
        ("/gzip", "10 GiB of gzip"),
        ("/br", "1 GiB of br"),
        ("/zstd", "1 GiB of zstd"),
    ] {
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

/// `data` as one gzip member of stored (not compressed) deflate blocks:
/// each layer adds 18 bytes and 5 a block of 64 KiB, so thousands of
/// layers stay small on the wire.
fn gzip_stored(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    let blocks: Vec<&[u8]> = data.chunks(65_535).collect();
    if blocks.is_empty() {
        out.extend([1, 0, 0, 0xff, 0xff]);
    }
    for (i, block) in blocks.iter().enumerate() {
        out.push(u8::from(i + 1 == blocks.len()));
        let len = block.len() as u16;
        out.extend(len.to_le_bytes());
        out.extend((!len).to_le_bytes());
        out.extend_from_slice(block);
    }
    out.extend(crc32fast::hash(data).to_le_bytes());
    out.extend((data.len() as u32).to_le_bytes());
    out
}

/// `page` under `layers` gzip layers, and its `Content-Encoding`.
fn stacked(page: &[u8], layers: usize) -> (String, Vec<u8>) {
    let mut body = page.to_vec();
    for _ in 0..layers {
        body = gzip_stored(&body);
    }
    (vec!["gzip"; layers].join(", "), body)
}

/// curl's limit (MAX_ENCODE_STACK, CVE-2022-32206): a body that names more
/// than five codings is not decoded at all. Ten thousand layers of stored
/// blocks are ~230 KB on the wire and a few GB of work to undo.
#[test]
fn ten_thousand_stacked_gzip_layers_are_refused() {
    let server = serve(|req: &Request| {
        let path = req.path.trim_start_matches('/');
        let layers = match path {
            "" => return Some(page_reply(&["/5", "/6", "/10000"])),
            "5" | "6" | "10000" => path.parse().unwrap(),
            _ => return path.contains('/').then(|| page_reply(&[])),
        };
        let (coding, body) = stacked(&variant_page(path), layers);
        Some(encoded(&coding, body))
    });
    let b = base(&server);
    let started = Instant::now();
    let records = by_url(&crawl(settings(&[format!("{b}/")])));
    let five = &records[&format!("{b}/5")];
    assert_eq!((five.error_kind, five.num_urls), (None, 3));
    for layers in ["6", "10000"] {
        let r = &records[&format!("{b}/{layers}")];
        assert_eq!(
            r.error_kind,
            Some(ringcrawl::ErrorKind::TooManyContentEncodings),
            "{layers} layers: {r:?}"
        );
        assert_eq!((r.status, r.num_urls), (Some(200), 0), "{layers} layers");
    }
    eprintln!("crawled in {:?}", started.elapsed());
}

/// A server of one thread a connection, for answers that wait on each
/// other: `answer` gets the request's path and writes the whole answer
/// (the connection closes after it).
fn threaded_server(answer: impl Fn(&str, &mut TcpStream) + Send + Sync + 'static) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let answer = Arc::new(answer);
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let answer = answer.clone();
            std::thread::spawn(move || {
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let request = String::from_utf8_lossy(&request).into_owned();
                let path = request.split(' ').nth(1).unwrap_or("/").to_string();
                answer(&path, &mut stream);
            });
        }
    });
    addr
}

/// The body of a gzip stream of `mib` MiB of zeros (as `gzip_bomb`
/// builds it, without the head).
fn gzip_zeros(mib: u64) -> Vec<u8> {
    let wire: Vec<u8> = gzip_bomb_mib(mib)
        .into_iter()
        .flat_map(|s| match s {
            Step::Write(b) => b,
            _ => Vec::new(),
        })
        .collect();
    let body_at = wire.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    wire[body_at..].to_vec()
}

/// A bomb's decoding shares its core: the other fetches of the shard go
/// on while it runs. One shard; the root links to `/bomb` (a gzip body
/// that decodes to 64 MiB of zeros, the body cap) and `/small`, both
/// fetched at once. `/small` is answered only once the bomb has been sent
/// (and 10 ms later, for the crawler to have started on it): it must
/// reach the page handler long before the bomb does, as it would if the
/// bomb were not there.
#[test]
fn a_bomb_being_decoded_does_not_hold_up_the_other_fetches_of_its_shard() {
    let bomb = gzip_zeros(64);
    // When the bomb's last byte was written, and when /small's answer was.
    let sent: Arc<(Mutex<HashMap<&'static str, Instant>>, Condvar)> = Arc::default();
    let server_sent = sent.clone();
    let addr = threaded_server(move |path, stream| {
        let (sent, cond) = &*server_sent;
        let reply = |body: &[u8], extra: &str| {
            let mut reply = format!(
                "HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n{extra}Content-Length: {}\r\n\r\n",
                body.len()
            )
            .into_bytes();
            reply.extend_from_slice(body);
            reply
        };
        match path {
            "/" => {
                let page = b"<a href=/bomb>bomb</a> <a href=/small>small</a>";
                let _ = stream.write_all(&reply(page, ""));
            }
            "/bomb" => {
                let _ = stream.write_all(&reply(&bomb, "Content-Encoding: gzip\r\n"));
                let _ = stream.flush();
                sent.lock().unwrap().insert("bomb", Instant::now());
                cond.notify_all();
            }
            "/small" => {
                let mut sent = sent.lock().unwrap();
                while !sent.contains_key("bomb") {
                    sent = cond.wait(sent).unwrap();
                }
                drop(sent);
                std::thread::sleep(Duration::from_millis(10));
                let small = reply(b"<p>small</p>", "");
                let _ = stream.write_all(&small);
                let _ = stream.flush();
                server_sent
                    .0
                    .lock()
                    .unwrap()
                    .insert("small", Instant::now());
            }
            _ => {}
        }
    });
    let delivered: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();
    let handler_delivered = delivered.clone();
    let base = format!("http://{addr}");
    ringcrawl::Crawler::builder()
        .root(format!("{base}/"))
        .cores(1)
        .max_tasks(4)
        .per_host(4)
        .obey_robots(false)
        .sitemaps(false)
        .max_body(64 << 20)
        .on_page(move |page| {
            let path = page.url().rsplit('/').next().unwrap_or("").to_string();
            if path == "bomb" {
                assert_eq!(
                    page.body().len(),
                    64 << 20,
                    "{:?} {:?}",
                    page.error(),
                    page.status()
                );
            }
            handler_delivered
                .lock()
                .unwrap()
                .insert(path, Instant::now());
        })
        .build()
        .unwrap()
        .run()
        .unwrap();
    let delivered = delivered.lock().unwrap();
    let sent = sent.0.lock().unwrap();
    let (bomb_sent, small_sent) = (sent["bomb"], sent["small"]);
    let (bomb_done, small_done) = (delivered["bomb"], delivered["small"]);
    let decoding = bomb_done.duration_since(bomb_sent);
    let small_latency = small_done.saturating_duration_since(small_sent);
    eprintln!("bomb sent to delivered {decoding:?}; small sent to delivered {small_latency:?}");
    assert!(
        small_done < bomb_done,
        "/small waited for the bomb: delivered {:?} after it",
        small_done.duration_since(bomb_done)
    );
    assert!(
        small_latency < bomb_done.duration_since(small_sent) / 2,
        "/small took {small_latency:?}, the bomb's decoding went on {:?} after /small was sent",
        bomb_done.duration_since(small_sent)
    );
}
