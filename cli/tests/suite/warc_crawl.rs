//! A crawl with `--warc`, read back: one request and one response record per
//! fetch that got an answer (redirects and 404s included, as they came),
//! linked by WARC-Concurrent-To, with payloads equal to the served bytes,
//! and accepted by warcio (`check`, `index`) when it can be installed.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::common;
use crate::common::scratch::Scratch;
use crate::common::warc::read_records;
use crate::common::*;
use ringcrawl_site::server::{Reply, Server};
use ringcrawl_site::synth::{SiteSpec, SynthSite};
use ringcrawl_warc as warc;

#[test]
fn warc_archive_holds_every_exchange_byte_for_byte() {
    let site = Arc::new(SynthSite::new(SiteSpec {
        pages: 300,
        ..SiteSpec::default()
    }));
    let server = Server::start(site.clone().handler()).unwrap();
    let b = base(&server);
    let dir = std::env::temp_dir().join(format!("ringcrawl-warc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut cfg = settings(&[format!("{b}/")]);
    cfg = cfg.warc(dir.clone());
    cfg = cfg.warc_max_size(256 << 10); // small, to exercise rotation
    let outcome = crawl(cfg);

    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(
        files.len() > 2,
        "rotation at 256 KiB gives several files: {files:?}"
    );
    let mut responses = BTreeMap::new();
    let mut requests = BTreeMap::new();
    for file in &files {
        let records = read_records(&std::fs::read(file).unwrap()).unwrap();
        assert_eq!(
            records[0].header("WARC-Type"),
            Some("warcinfo"),
            "{file:?} starts with warcinfo"
        );
        for r in &records[1..] {
            let uri = r.header("WARC-Target-URI").unwrap().to_string();
            match r.header("WARC-Type") {
                Some("request") => assert!(requests.insert(uri, r.clone()).is_none()),
                Some("response") => assert!(responses.insert(uri, r.clone()).is_none()),
                other => panic!("unexpected record type {other:?}"),
            }
        }
    }
    let answered = outcome
        .records
        .iter()
        .filter(|r| r.status.is_some())
        .count();
    assert_eq!(
        responses.len(),
        answered,
        "one response record per answered fetch"
    );
    assert_eq!(requests.len(), answered);

    let authority = server.addr().to_string();
    for (uri, response) in &responses {
        let request = &requests[uri];
        assert_eq!(
            request.header("WARC-Concurrent-To"),
            response.header("WARC-Record-ID")
        );
        assert_eq!(response.header("WARC-IP-Address"), Some("127.0.0.1"));
        let path = &uri[b.len()..];
        let Reply::Http { body, status, .. } = site.respond_to(&authority, path) else {
            panic!("synthetic site answers {path} with a plain response")
        };
        let block = &response.block;
        let split = block.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        assert!(
            block.starts_with(format!("HTTP/1.0 {status}").as_bytes()),
            "{uri}"
        );
        assert_eq!(
            &block[split..],
            &body[..],
            "payload of {uri} is the served body"
        );
        assert_eq!(
            response.header("WARC-Payload-Digest").unwrap(),
            warc::sha1_digest(&body)
        );
    }
    assert!(
        responses.keys().any(|u| u.contains("/r/")),
        "redirects are archived"
    );
    assert!(
        responses.keys().any(|u| u.contains("/missing/")),
        "404s are archived"
    );

    // The independent reader agrees: every file checks and indexes, and
    // the index lists exactly the records read above.
    if let Some(bin) =
        common::warcio::warcio_or_skip("warc_archive_holds_every_exchange_byte_for_byte")
    {
        let mut indexed_responses = 0;
        for file in &files {
            let check = common::warcio::tool(&bin, "warcio", &["check", "-v"], file);
            assert!(check.contains("digest pass"), "{file:?}: {check}");
            assert!(!check.contains("fail"), "{file:?}: {check}");
            let index = common::warcio::tool(
                &bin,
                "warcio",
                &["index", "-f", "warc-type,warc-target-uri"],
                file,
            );
            for line in index.lines() {
                let entry: serde_json::Value = serde_json::from_str(line).unwrap();
                if entry["warc-type"] == "response" {
                    let uri = entry["warc-target-uri"].as_str().unwrap();
                    assert!(responses.contains_key(uri), "{uri} indexed by warcio");
                    indexed_responses += 1;
                }
            }
        }
        assert_eq!(indexed_responses, responses.len());
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn warc_over_https_holds_the_decrypted_exchange_as_received() {
    let ca = ringcrawl_site::tls::TestCa::new("test CA").unwrap();
    let site = Arc::new(SynthSite::new(SiteSpec {
        pages: 40,
        tls: true,
        ..SiteSpec::default()
    }));
    let tls = ca.site_cert().unwrap().server_config(&[]).unwrap();
    let server = Server::start_tls(site.clone().handler(), tls).unwrap();
    let authority = server.addr().to_string();
    let b = format!("https://{authority}");
    let dir = Scratch::new("warc-tls");
    let mut cfg = settings(&[format!("{b}/")]);
    cfg = cfg.ca_cert_der(ca.cert().to_vec());
    cfg = cfg.warc(&dir);
    let outcome = crawl(cfg);
    assert!(outcome.records.iter().all(|r| r.status.is_some()));

    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let mut responses = 0;
    for file in &files {
        for r in read_records(&std::fs::read(file).unwrap()).unwrap() {
            let uri = r.header("WARC-Target-URI").unwrap_or("").to_string();
            match r.header("WARC-Type") {
                Some("request") => assert!(r.block.starts_with(b"GET /"), "{uri}"),
                Some("response") => {
                    responses += 1;
                    let path = uri.strip_prefix(&b).expect("https target URI");
                    let Reply::Http { body, status, .. } = site.respond_to(&authority, path) else {
                        panic!("{path}: a plain response")
                    };
                    let block = &r.block;
                    let split = block.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
                    assert!(block.starts_with(format!("HTTP/1.0 {status}").as_bytes()));
                    assert_eq!(&block[split..], &body[..], "{uri}: the plaintext as served");
                }
                _ => {}
            }
        }
    }
    assert_eq!(responses, outcome.records.len());
    if let Some(bin) =
        common::warcio::warcio_or_skip("warc_over_https_holds_the_decrypted_exchange_as_received")
    {
        for file in &files {
            let check = common::warcio::tool(&bin, "warcio", &["check", "-v"], file);
            assert!(check.contains("digest pass"), "{file:?}: {check}");
            assert!(!check.contains("fail"), "{file:?}: {check}");
        }
    }
}

/// A chunked body whose framing dwarfs its payload (one payload byte per
/// chunk, each with 4 KiB of chunk extensions): the raw copy kept for the
/// archive stops at the body cap plus a framing allowance, and the record
/// and the WARC response say the answer was cut.
#[test]
fn chunk_framing_does_not_grow_the_archived_copy_past_the_body_cap() {
    const MAX_BODY: usize = 1000;
    let server = serve(|req| {
        (req.path == "/").then(|| {
            let ext = format!(";x={}", "e".repeat(4000));
            let mut body = Vec::new();
            for _ in 0..(2 * MAX_BODY) {
                body.extend_from_slice(format!("1{ext}\r\nx\r\n").as_bytes());
            }
            body.extend_from_slice(b"0\r\n\r\n");
            Reply::Http {
                status: 200,
                headers: vec![
                    ("Content-Type".into(), "text/plain".into()),
                    ("Transfer-Encoding".into(), "chunked".into()),
                ],
                body,
            }
        })
    });
    let dir = std::env::temp_dir().join(format!("ringcrawl-warc-framing-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut cfg = settings(&[format!("{}/", base(&server))]);
    cfg = cfg.warc(dir.clone());
    cfg = cfg.max_body(MAX_BODY);
    let outcome = crawl(cfg);
    let record = &outcome.records[0];
    assert_eq!(record.status, Some(200));
    assert!(record.truncated, "{record:?}");
    let mut response = None;
    for file in std::fs::read_dir(&dir).unwrap() {
        let bytes = std::fs::read(file.unwrap().path()).unwrap();
        for r in read_records(&bytes).unwrap() {
            if r.header("WARC-Type") == Some("response") {
                response = Some(r);
            }
        }
    }
    let response = response.expect("the response is archived");
    let allowance = 128 << 10;
    assert!(
        response.block.len() <= MAX_BODY + allowance,
        "{} raw bytes kept for a {MAX_BODY}-byte body cap",
        response.block.len()
    );
    assert!(response.header("WARC-Truncated").is_some());
    std::fs::remove_dir_all(&dir).ok();
}
