//! `--wacz` (issue 19): a crawl packaged as a WACZ 1.1.1 file passes
//! py-wacz's `wacz validate` (from PyPI), and read back it holds what it
//! says: every WARC file byte for byte, the index sorted and equal to
//! cdxj-indexer's, each index line leading to a record warcio reads, a
//! page per HTML page answered 2xx, and a manifest whose hashes and sizes
//! are the files'. A WACZ that cannot be written is an error at the end of
//! the crawl (exit code 1), and the WARC files stay.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;
use crate::common::warc::read_records;
use crate::common::*;
use sha2::{Digest, Sha256};

/// A fresh directory for one test's output.
fn out_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ringcrawl-wacz-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every entry of the ZIP at `path`: name → bytes, all stored (none
/// deflated).
fn entries(path: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut zip = zip::ZipArchive::new(File::open(path).unwrap()).unwrap();
    let mut out = BTreeMap::new();
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).unwrap();
        let name = entry.name().unwrap().to_string();
        assert_eq!(
            entry.compression(),
            zip::CompressionMethod::Stored,
            "{name}"
        );
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).unwrap();
        assert!(out.insert(name, bytes).is_none());
    }
    out
}

fn sha256(bytes: &[u8]) -> String {
    let hex: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// The site: HTML pages (one the same bytes as another, for a revisit),
/// a stylesheet, a redirect and a missing page.
fn site() -> ringcrawl_site::server::Server {
    serve(|req| match req.path.as_str() {
        "/" => Some(page(&["/a", "/b", "/style.css", "/moved", "/missing"])),
        "/a" => Some(page(&["/b", "/copy"])),
        "/b" | "/copy" => Some(html("<p>the same bytes twice</p>")),
        "/c" => Some(html("<p>after a redirect</p>")),
        "/moved" => Some(redirect(301, "/c")),
        "/style.css" => Some(ringcrawl_site::server::Reply::Http {
            status: 200,
            headers: vec![("Content-Type".into(), "text/css".into())],
            body: b"p { color: red }".to_vec(),
        }),
        _ => None,
    })
}

#[test]
fn a_crawl_packaged_as_wacz_passes_wacz_validate_and_holds_what_it_lists() {
    let server = site();
    let b = base(&server);
    let dir = out_dir("package");
    let warc_dir = dir.join("warc");
    let wacz = dir.join("crawl.wacz");
    let mut cfg = settings(&[format!("{b}/")]);
    cfg = cfg.warc(warc_dir.clone());
    // Small files: several per shard, so several in archive/.
    cfg = cfg.warc_max_size(1500);
    cfg = cfg.warc_dedup(true);
    cfg = cfg.wacz(wacz.clone());
    let outcome = crawl(cfg);
    assert_eq!(outcome.output_error, None);
    assert!(!dir.join("crawl.wacz.tmp").exists());
    assert!(
        !dir.join("crawl.wacz.index.tmp").exists(),
        "the scratch index is gone"
    );

    // py-wacz's own check: contents, frictionless manifest, paths, hashes,
    // the manifest's digest.
    if let Some(bin) = common::warcio::wacz_or_skip("wacz validate") {
        let out = common::warcio::tool(&bin, "wacz", &["validate", "-f"], &wacz);
        assert!(
            out.contains("Validation succeeded, the passed WACZ is valid"),
            "{out}"
        );
    }

    let entries = entries(&wacz);
    // archive/: every WARC file of the crawl, byte for byte.
    let mut warcs = BTreeMap::new();
    for file in std::fs::read_dir(&warc_dir).unwrap() {
        let path = file.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        warcs.insert(format!("archive/{name}"), std::fs::read(&path).unwrap());
    }
    assert!(warcs.len() > 2, "rotated: {:?}", warcs.keys());
    let archived: BTreeMap<String, Vec<u8>> = entries
        .iter()
        .filter(|(name, _)| name.starts_with("archive/"))
        .map(|(n, b)| (n.clone(), b.clone()))
        .collect();
    assert!(
        archived == warcs,
        "archive/ holds the WARC files as written"
    );
    let names: BTreeSet<&str> = entries
        .keys()
        .filter(|n| !n.starts_with("archive/"))
        .map(String::as_str)
        .collect();
    assert_eq!(
        names,
        BTreeSet::from([
            "datapackage-digest.json",
            "datapackage.json",
            "indexes/index.cdxj",
            "pages/pages.jsonl"
        ])
    );

    // The index: sorted, a line per response and revisit, each leading to
    // its record in the WARC file it names.
    let index = String::from_utf8(entries["indexes/index.cdxj"].clone()).unwrap();
    let lines: Vec<&str> = index.lines().collect();
    let mut sorted = lines.clone();
    sorted.sort();
    assert_eq!(lines, sorted, "sorted");
    assert_eq!(lines.len(), outcome.records.len(), "{index}");
    let mut slices = Vec::new();
    let mut expected = Vec::new();
    for line in &lines {
        let json: serde_json::Value =
            serde_json::from_str(line.splitn(3, ' ').nth(2).unwrap()).unwrap();
        let file = &entries[&format!("archive/{}", json["filename"].as_str().unwrap())];
        let offset: usize = json["offset"].as_str().unwrap().parse().unwrap();
        let length: usize = json["length"].as_str().unwrap().parse().unwrap();
        let member = &file[offset..offset + length];
        let record = read_records(member).unwrap();
        assert_eq!(record.len(), 1, "one record at {line}");
        assert_eq!(
            record[0].header("WARC-Target-URI"),
            json["url"].as_str(),
            "{line}"
        );
        slices.extend_from_slice(member);
        expected.push(json["url"].as_str().unwrap().to_string());
    }
    // warcio reads the same records from those bytes, in that order.
    let bin = common::warcio::wacz_or_skip("wacz index reads with warcio");
    if let Some(bin) = &bin {
        let records = dir.join("indexed-records.warc.gz");
        std::fs::write(&records, &slices).unwrap();
        let out = common::warcio::tool(bin, "warcio", &["index"], &records);
        let read: Vec<(String, String)> = out
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                (
                    v["warc-type"].as_str().unwrap().to_string(),
                    v["warc-target-uri"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(read.len(), expected.len());
        for ((kind, url), want) in read.iter().zip(&expected) {
            assert!(kind == "response" || kind == "revisit", "{kind}");
            assert_eq!(url, want);
        }
        // And it is cdxj-indexer's index of the same files.
        let theirs = common::warcio::tool(bin, "cdxj-indexer", &[], &warc_dir);
        let mut theirs: Vec<&str> = theirs.lines().collect();
        theirs.sort();
        assert_eq!(lines, theirs);
    }

    // The pages: every HTML page answered 2xx (the revisit of one too),
    // the root first among none in particular, at its capture's second.
    let pages = String::from_utf8(entries["pages/pages.jsonl"].clone()).unwrap();
    let mut pages = pages.lines();
    assert_eq!(
        pages.next(),
        Some(r#"{"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}"#)
    );
    let mut listed = BTreeMap::new();
    for line in pages {
        let page: serde_json::Value = serde_json::from_str(line).unwrap();
        let url = page["url"].as_str().unwrap().to_string();
        let ts = page["ts"].as_str().unwrap().to_string();
        assert!(listed.insert(url, ts).is_none(), "{line}");
    }
    let want: BTreeSet<String> = ["/", "/a", "/b", "/copy", "/c"]
        .iter()
        .map(|p| format!("{b}{p}"))
        .collect();
    assert_eq!(listed.keys().cloned().collect::<BTreeSet<_>>(), want);
    let records = by_url(&outcome);
    for (url, ts) in &listed {
        // The capture's time to the second (the log has milliseconds).
        assert_eq!(format!("{}Z", &records[url].timestamp[..19]), *ts, "{url}");
    }

    // The manifest lists every other file with its hash and size, and the
    // digest file hashes the manifest.
    let manifest: serde_json::Value = serde_json::from_slice(&entries["datapackage.json"]).unwrap();
    assert_eq!(manifest["profile"], "data-package");
    assert_eq!(manifest["wacz_version"], "1.1.1");
    assert_eq!(
        manifest["software"],
        format!("ringcrawl {}", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(manifest["mainPageUrl"], format!("{b}/"));
    let created = manifest["created"].as_str().unwrap();
    assert!(created.len() == 20 && created.ends_with('Z'), "{created}");
    let mut listed_paths = BTreeSet::new();
    for resource in manifest["resources"].as_array().unwrap() {
        let path = resource["path"].as_str().unwrap();
        let bytes = &entries[path];
        assert_eq!(resource["hash"], sha256(bytes), "{path}");
        assert_eq!(resource["bytes"], bytes.len() as u64, "{path}");
        listed_paths.insert(path);
    }
    let others: BTreeSet<&str> = entries
        .keys()
        .map(String::as_str)
        .filter(|n| !n.starts_with("datapackage"))
        .collect();
    assert_eq!(listed_paths, others);
    let digest: serde_json::Value =
        serde_json::from_slice(&entries["datapackage-digest.json"]).unwrap();
    assert_eq!(digest["path"], "datapackage.json");
    assert_eq!(digest["hash"], sha256(&entries["datapackage.json"]));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn with_cdxj_the_index_file_stays_unsorted_and_the_package_holds_it_sorted() {
    let server = site();
    let dir = out_dir("cdxj");
    let mut cfg = settings(&[format!("{}/", base(&server))]);
    cfg = cfg.warc(dir.join("warc"));
    cfg = cfg.cdxj(dir.join("index.cdxj"));
    cfg = cfg.wacz(dir.join("crawl.wacz"));
    let outcome = crawl(cfg);
    assert_eq!(outcome.output_error, None);
    let ours = std::fs::read_to_string(dir.join("index.cdxj")).unwrap();
    let mut ours: Vec<&str> = ours.lines().collect();
    ours.sort();
    let entries = entries(&dir.join("crawl.wacz"));
    let packaged = String::from_utf8(entries["indexes/index.cdxj"].clone()).unwrap();
    assert_eq!(packaged.lines().collect::<Vec<_>>(), ours);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_wacz_that_cannot_be_written_is_an_error_at_the_end_and_the_warcs_stay() {
    let server = site();
    let dir = out_dir("unwritable");
    let mut cfg = settings(&[format!("{}/", base(&server))]);
    cfg = cfg.warc(dir.join("warc"));
    let wacz = dir.join("crawl.wacz");
    let crawler = cfg.wacz(wacz.clone()).build().unwrap();
    // A directory where the file should go, once the builder has checked
    // that it is none: the package is written to crawl.wacz.tmp, and
    // renaming it over the directory fails.
    std::fs::create_dir(&wacz).unwrap();
    let outcome = ran_out_of_work(run_to_its_end(crawler));
    let error = outcome.output_error.expect("an error");
    assert!(
        error.contains("--wacz") && error.contains("not written"),
        "{error}"
    );
    assert!(wacz.is_dir());
    assert!(!dir.join("crawl.wacz.tmp").exists(), "no half package left");
    assert!(!dir.join("crawl.wacz.index.tmp").exists());
    let warcs: Vec<_> = std::fs::read_dir(dir.join("warc")).unwrap().collect();
    assert!(!warcs.is_empty(), "the WARC files stay");
    for file in warcs {
        let bytes = std::fs::read(file.unwrap().path()).unwrap();
        assert!(!read_records(&bytes).unwrap().is_empty());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A `--wacz` path that cannot be written (its directory missing, or a
/// directory where the file goes) is refused before crawling, as a bad
/// path: one line naming it, exit 2, no crawl. (A package that fails at
/// the end keeps its WARC files: the library test above.)
#[test]
fn the_binary_refuses_a_wacz_path_it_cannot_write_and_packages_one_it_can() {
    let server = site();
    let dir = out_dir("binary");
    let ringcrawl = |warc: &str, wacz: &Path| {
        Command::new(env!("CARGO_BIN_EXE_ringcrawl"))
            .args(["--ignore-robots", "-q", "--warc"])
            .arg(dir.join(warc))
            .arg("--wacz")
            .arg(wacz)
            .arg(format!("{}/", base(&server)))
            .output()
            .unwrap()
    };
    let taken = dir.join("taken.wacz");
    std::fs::create_dir_all(&taken).unwrap();
    for (wacz, why) in [
        (dir.join("missing").join("crawl.wacz"), "no such directory"),
        (taken, "is a directory"),
    ] {
        let out = ringcrawl("warc1", &wacz);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("--wacz") && stderr.contains(why),
            "{stderr}"
        );
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(!dir.join("warc1").exists(), "nothing crawled: {stderr}");
    }

    // And the same crawl into a file that can be written: exit 0, a package.
    let out = ringcrawl("warc3", &dir.join("crawl.wacz"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(entries(&dir.join("crawl.wacz")).contains_key("pages/pages.jsonl"));
    let _ = std::fs::remove_dir_all(&dir);
}
