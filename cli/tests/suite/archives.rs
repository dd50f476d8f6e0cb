//! Archives that replay (issue 19): the crawl log's fields on each record
//! lead to the record's bytes in the WARC; robots.txt exchanges are
//! archived; a payload served again is archived once plus `revisit`
//! records; the CDXJ index written during the crawl equals cdxj-indexer's
//! for the same files (after sorting).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::common;
use crate::common::scratch::Scratch;
use crate::common::warc::{read_records, WarcRecord};
use crate::common::*;
use ringcrawl::Record;
use ringcrawl_warc as warc;

/// A fresh directory for one test's output.
fn out_dir(test: &str) -> Scratch {
    Scratch::new(test)
}

/// The one record whose gzip member starts at `offset` of `file`.
fn record_at(dir: &Path, file: &str, offset: u64) -> WarcRecord {
    let bytes = std::fs::read(dir.join(file)).unwrap();
    let mut member = Vec::new();
    flate2::read::GzDecoder::new(&bytes[offset as usize..])
        .read_to_end(&mut member)
        .unwrap();
    let mut records = read_records(&member).unwrap();
    assert_eq!(records.len(), 1, "one record per gzip member");
    records.remove(0)
}

/// Every record of every WARC file in `dir`.
fn all_records(dir: &Path) -> Vec<WarcRecord> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".warc.gz"))
        .collect();
    files.sort();
    files
        .iter()
        .flat_map(|f| read_records(&std::fs::read(f).unwrap()).unwrap())
        .collect()
}

#[test]
fn each_record_carries_the_crawl_log_fields_and_leads_to_its_warc_bytes() {
    let server = serve(|req| match req.path.as_str() {
        "/" => Some(page(&["/a", "/moved"])),
        "/a" => Some(page(&["/b"])),
        "/b" => Some(html("<p>leaf</p>")),
        "/moved" => Some(redirect(301, "/c")),
        "/c" => Some(html("<p>target</p>")),
        _ => None,
    });
    let b = base(&server);
    let dir = out_dir("crawl-log");
    let mut cfg = settings(&[format!("{b}/")]);
    cfg = cfg.warc(&dir);
    let outcome = crawl(cfg);
    let records = by_url(&outcome);

    let expect = [
        ("/", 0, "", None),
        ("/a", 1, "L", Some("/")),
        ("/b", 2, "LL", Some("/a")),
        ("/moved", 1, "L", Some("/")),
        ("/c", 1, "LR", Some("/moved")),
    ];
    for (path, depth, hops, via) in expect {
        let r: &Record = &records[&format!("{b}{path}")];
        assert_eq!(r.depth, depth, "{path}");
        assert_eq!(r.hops, hops, "{path}");
        assert_eq!(r.via, via.map(|v| format!("{b}{v}")), "{path}");
        assert_eq!(r.ip.as_deref(), Some("127.0.0.1"), "{path}");
        // RFC 3339 UTC with milliseconds.
        let ts = r.timestamp.as_bytes();
        assert_eq!(ts.len(), 24, "{}", r.timestamp);
        assert_eq!(
            (ts[10], ts[19], ts[23]),
            (b'T', b'.', b'Z'),
            "{}",
            r.timestamp
        );

        let file = r.warc_file.as_deref().expect("archived");
        let offset = r.warc_offset.expect("archived");
        let rec = record_at(&dir, file, offset);
        assert_eq!(rec.header("WARC-Type"), Some("response"), "{path}");
        assert_eq!(rec.header("WARC-Target-URI"), Some(r.url.as_str()));
        assert_eq!(
            rec.header("WARC-Payload-Digest"),
            r.payload_digest.as_deref(),
            "the record's digest is the WARC's"
        );
        // WARC-Date has microseconds; the log's timestamp is the same
        // instant to the millisecond.
        let date = rec.header("WARC-Date").unwrap();
        assert_eq!(&date[..23], &r.timestamp[..23], "{path}");
    }
}

#[test]
fn without_warc_a_record_has_no_digest_nor_place() {
    // The digest is the WARC's: computed while archiving, not on every
    // page (SHA-1 was the crawler's hottest function, 3.6% of its cycles:
    // 0.86x the pages/s side by side with it, 0.95x without).
    let server = serve(|req| (req.path == "/").then(|| html("<p>x</p>")));
    let outcome = crawl(settings(&[format!("{}/", base(&server))]));
    let r = &outcome.records[0];
    assert_eq!(r.status, Some(200));
    assert_eq!(r.payload_digest, None);
    assert_eq!((&r.warc_file, r.warc_offset), (&None, None));
    assert!(r.ip.is_some() && !r.timestamp.is_empty());
}

#[test]
fn robots_txt_exchanges_are_archived() {
    let server = serve(|req| match req.path.as_str() {
        "/robots.txt" => Some(ringcrawl_site::server::Reply::Http {
            status: 200,
            headers: vec![("Content-Type".into(), "text/plain".into())],
            body: b"User-agent: *\nDisallow: /private\n".to_vec(),
        }),
        "/" => Some(page(&["/private", "/open"])),
        "/open" => Some(html("<p>open</p>")),
        _ => None,
    });
    let b = base(&server);
    let dir = out_dir("robots-archived");
    let mut cfg = settings(&[format!("{b}/")]);
    cfg = cfg.obey_robots(true);
    cfg = cfg.warc(&dir);
    crawl(cfg);
    let robots: Vec<WarcRecord> = all_records(&dir)
        .into_iter()
        .filter(|r| r.header("WARC-Target-URI") == Some(&format!("{b}/robots.txt")))
        .collect();
    let types: Vec<_> = robots.iter().map(|r| r.header("WARC-Type")).collect();
    assert_eq!(types, [Some("request"), Some("response")]);
    assert!(robots[1].block.ends_with(b"Disallow: /private\n"));
}

#[test]
fn dns_answers_are_archived_as_resource_records_with_warc_dns() {
    let server = serve(|req| match req.path.as_str() {
        "/" => Some(page(&["/a"])),
        "/a" => Some(html("<p>a</p>")),
        _ => None,
    });
    let dns = common::dns::AnswerAll::start([127, 0, 0, 1]);
    let port = server.addr().port();
    let dir = out_dir("warc-dns");
    let mut cfg = settings(&[format!("http://named.archive.test:{port}/")]);
    cfg = cfg.dns_server(dns.addr);
    cfg = cfg.cores(1); // one resolver: one lookup
    cfg = cfg.warc(dir.join("warc"));
    cfg = cfg.warc_dns(true);
    cfg = cfg.cdxj(dir.join("index.cdxj"));
    let outcome = crawl(cfg);
    assert_eq!(outcome.records.len(), 2, "{:?}", outcome.records);
    assert!(outcome.records.iter().all(|r| r.status == Some(200)));

    let dns_records: Vec<WarcRecord> = all_records(&dir.join("warc"))
        .into_iter()
        .filter(|r| r.header("WARC-Type") == Some("resource"))
        .collect();
    assert_eq!(dns_records.len(), 1, "one lookup, one record");
    let r = &dns_records[0];
    assert_eq!(r.header("WARC-Target-URI"), Some("dns:named.archive.test"));
    assert_eq!(r.header("Content-Type"), Some("text/dns"));
    assert_eq!(r.header("WARC-IP-Address"), Some("127.0.0.1"));
    let block = String::from_utf8(r.block.clone()).unwrap();
    let (stamp, answers) = block.split_once('\n').unwrap();
    assert_eq!(stamp.len(), 14, "{block}");
    assert_eq!(
        answers,
        format!(
            "named.archive.test.\t{}\tIN\tA\t127.0.0.1\n",
            common::dns::AnswerAll::TTL
        )
    );
    assert_eq!(
        r.header("WARC-Payload-Digest").unwrap(),
        warc::sha1_digest(block.as_bytes())
    );
    let index = std::fs::read_to_string(dir.join("index.cdxj")).unwrap();
    assert!(
        index
            .lines()
            .any(|l| l.contains("\"url\": \"dns:named.archive.test\"")),
        "{index}"
    );

    let Some(bin) =
        warcio::warcio_or_skip("DNS records pass warcio and index as cdxj-indexer does")
    else {
        return;
    };
    for file in std::fs::read_dir(dir.join("warc")).unwrap() {
        warcio::tool(&bin, "warcio", &["check"], &file.unwrap().path());
    }
    let mut ours: Vec<&str> = index.lines().collect();
    ours.sort();
    let theirs = warcio::tool(&bin, "cdxj-indexer", &[], &dir.join("warc"));
    let mut theirs: Vec<&str> = theirs.lines().collect();
    theirs.sort();
    assert_eq!(ours, theirs);
}

/// A site where `/` links `n` URLs that all serve one payload.
fn same_payload_site(n: usize) -> ringcrawl_site::server::Server {
    serve(move |req| {
        if req.path == "/" {
            let links: Vec<String> = (0..n).map(|i| format!("/same/{i}")).collect();
            let links: Vec<&str> = links.iter().map(String::as_str).collect();
            Some(page(&links))
        } else if req.path.starts_with("/same/") {
            Some(html(
                "<html><body><p>one payload, many URLs</p></body></html>",
            ))
        } else {
            None
        }
    })
}

#[test]
fn a_payload_served_by_1000_urls_is_archived_once_plus_999_revisits() {
    let server = same_payload_site(1000);
    let b = base(&server);
    let dir = out_dir("dedup");
    let mut cfg = settings(&[format!("{b}/")]);
    cfg = cfg.warc(&dir);
    cfg = cfg.warc_dedup(true);
    let outcome = crawl(cfg);
    assert_eq!(outcome.records.len(), 1001);

    let records = all_records(&dir);
    let same: Vec<&WarcRecord> = records
        .iter()
        .filter(|r| {
            r.header("WARC-Target-URI")
                .is_some_and(|u| u.starts_with(&format!("{b}/same/")))
                && r.header("WARC-Type") != Some("request")
        })
        .collect();
    let responses: Vec<_> = same
        .iter()
        .filter(|r| r.header("WARC-Type") == Some("response"))
        .collect();
    let revisits: Vec<_> = same
        .iter()
        .filter(|r| r.header("WARC-Type") == Some("revisit"))
        .collect();
    // Two shards may meet the new payload at the same moment: each then
    // keeps a whole copy, so "once" is at most once per shard.
    assert!(
        !responses.is_empty() && responses.len() <= 2,
        "{} whole copies",
        responses.len()
    );
    assert_eq!(responses.len() + revisits.len(), 1000);
    let firsts: BTreeMap<&str, &WarcRecord> = responses
        .iter()
        .map(|r| (r.header("WARC-Record-ID").unwrap(), **r))
        .collect();
    for r in &revisits {
        assert_eq!(
            r.header("WARC-Profile"),
            Some(warc::IDENTICAL_PAYLOAD_DIGEST)
        );
        let first = firsts[r.header("WARC-Refers-To").unwrap()];
        assert_eq!(
            r.header("WARC-Refers-To-Target-URI"),
            first.header("WARC-Target-URI")
        );
        assert_eq!(r.header("WARC-Refers-To-Date"), first.header("WARC-Date"));
        assert_eq!(
            r.header("WARC-Payload-Digest"),
            first.header("WARC-Payload-Digest")
        );
        // The HTTP head only: the payload is the first record's.
        assert!(r.block.starts_with(b"HTTP/1.0 200"));
        assert!(r.block.ends_with(b"\r\n\r\n"));
    }

    if let Some(bin) = warcio::warcio_or_skip("dedup warcio check") {
        for file in std::fs::read_dir(&dir).unwrap() {
            warcio::tool(&bin, "warcio", &["check"], &file.unwrap().path());
        }
    }

    // pywb replays every one of the 1,000 URLs with the payload, the
    // revisits through the record they refer to.
    let warcs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let test = "a_payload_served_by_1000_urls_is_archived_once_plus_999_revisits";
    if let Some(pywb) = common::pywb::Pywb::serve_or_skip(test, &warcs) {
        let payload = b"<html><body><p>one payload, many URLs</p></body></html>";
        for record in outcome.records.iter().filter(|r| r.url.contains("/same/")) {
            let digits: String = record
                .timestamp
                .chars()
                .filter(char::is_ascii_digit)
                .collect();
            let replayed = pywb.get(&digits[..14], &record.url);
            assert_eq!(replayed.status, 200, "{}", record.url);
            assert_eq!(replayed.body, payload, "{}", record.url);
        }
    }
}

#[test]
fn the_cdxj_index_equals_cdxj_indexers_for_the_same_files() {
    use ringcrawl_site::synth::{SiteSpec, SynthSite};
    use std::sync::Arc;
    let site = Arc::new(SynthSite::new(SiteSpec {
        pages: 300,
        ..SiteSpec::default()
    }));
    let server = ringcrawl_site::server::Server::start(site.clone().handler()).unwrap();
    let dup = same_payload_site(50);
    let dir = out_dir("cdxj");
    let cdxj = dir.join("index.cdxj");
    let mut cfg = settings(&[format!("{}/", base(&server)), format!("{}/", base(&dup))]);
    cfg = cfg.obey_robots(true);
    cfg = cfg.warc(dir.join("warc"));
    cfg = cfg.warc_max_size(256 << 10); // several files per shard
    cfg = cfg.warc_dedup(true);
    cfg = cfg.cdxj(cdxj.clone());
    let outcome = crawl(cfg);

    let mut ours: Vec<String> = std::fs::read_to_string(&cdxj)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    ours.sort();
    let answered = outcome
        .records
        .iter()
        .filter(|r| r.status.is_some())
        .count();
    assert_eq!(
        ours.len(),
        answered + 2,
        "a line per response, robots.txt included"
    );
    assert!(ours
        .iter()
        .any(|l| l.contains("\"mime\": \"warc/revisit\"")));

    let Some(bin) = warcio::warcio_or_skip("cdxj equals cdxj-indexer") else {
        return;
    };
    let theirs = warcio::tool(&bin, "cdxj-indexer", &[], &dir.join("warc"));
    let mut theirs: Vec<String> = theirs.lines().map(String::from).collect();
    theirs.sort();
    assert_eq!(ours.len(), theirs.len());
    for (a, b) in ours.iter().zip(&theirs) {
        assert_eq!(a, b);
    }
}
