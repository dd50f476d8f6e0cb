//! The WARC files of a real crawl (of the synthetic site) cut anywhere,
//! as a `kill -9` leaves them for a resumed crawl, are repaired to whole
//! records, and what is left is what an independent reader accepts:
//! warcio (`check`, `index`), in its venv from PyPI (crates/testkit;
//! skipped where it cannot be installed, unless RINGCRAWL_REQUIRE_WARCIO
//! or RINGCRAWL_REQUIRE_TOOLS is set), and `gzip -t` where installed.
//! The repair is `state::repair`'s; the test lives here, beside the
//! public face, because it runs a whole crawl (the layer above state).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ringcrawl_site::server::Server;
use ringcrawl_site::synth::{SiteSpec, SynthSite};
use ringcrawl_testkit::warc::read_records;
use ringcrawl_testkit::warcio;

use super::testing::{settings, within_hang_limit};
use crate::state::repair::{repair_warc, RecordAt};

/// A fresh, empty directory for test `name`'s crawl.
fn temp_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("ringcrawl-repaired-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// The WARC files of a small crawl of the synthetic site, read whole.
fn crawl_warc_files(name: &str) -> (PathBuf, Vec<(PathBuf, Vec<u8>)>) {
    let site = Arc::new(SynthSite::new(SiteSpec {
        pages: 25,
        page_bytes: 2000,
        ..SiteSpec::default()
    }));
    let server = Server::start(site.handler()).unwrap();
    let dir = temp_dir(name);
    let warc_dir = dir.join("warc");
    // The suite's settings for a crawl, with WARC files.
    let crawler = settings(&[format!("http://{}/", server.addr())])
        .warc(warc_dir.clone())
        .build()
        .expect("valid settings");
    crate::process::prepare();
    let report =
        within_hang_limit(crawler.interrupt_handle(), || crawler.run()).expect("crawl runs");
    assert!(!report.aborted(), "crawl must end by running out of work");
    assert_eq!(
        report.records().len() as u64,
        report.summary().urls,
        "one record per URL"
    );
    assert!(report.records().len() >= 25);
    let mut files: Vec<(PathBuf, Vec<u8>)> = fs::read_dir(&warc_dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let bytes = fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect();
    files.sort();
    assert!(!files.is_empty());
    (dir, files)
}

/// What warcio's index says of each record: (offset, type, target URI).
fn warcio_index(bin: &Path, file: &Path) -> Vec<RecordAt> {
    let out = warcio::run(
        std::process::Command::new(bin.join("warcio"))
            .args(["index", "-f", "offset,warc-type,warc-target-uri"])
            .arg(file),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    out.lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            RecordAt {
                offset: v["offset"].as_str().unwrap().parse().unwrap(),
                warc_type: v["warc-type"].as_str().unwrap().to_string(),
                target_uri: v["warc-target-uri"].as_str().map(str::to_string),
            }
        })
        .collect()
}

/// `warcio check -v` on `files` passes: every digest checked passes and
/// nothing fails.
fn warcio_check(bin: &Path, files: &[PathBuf]) {
    let out = warcio::run(
        std::process::Command::new(bin.join("warcio"))
            .args(["check", "-v"])
            .args(files),
    )
    .unwrap_or_else(|e| panic!("warcio check rejects a repaired file: {e}"));
    assert!(!out.contains("fail"), "{out}");
}

/// `gzip -t` passes on each of `files` (every member whole, its CRC and
/// length checked: warcio does not check a member's trailer), when gzip
/// is installed.
fn gzip_test(files: &[PathBuf]) {
    for file in files {
        match std::process::Command::new("gzip")
            .arg("-t")
            .arg(file)
            .output()
        {
            Ok(out) => assert!(
                out.status.success(),
                "gzip -t {file:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            ),
            Err(e) => {
                eprintln!("gzip -t not run: {e}");
                return;
            }
        }
    }
}

#[test]
fn a_crawls_warc_cut_anywhere_is_repaired_to_whole_records_that_warcio_accepts() {
    let test = "a_crawls_warc_cut_anywhere_is_repaired_to_whole_records_that_warcio_accepts";
    let (dir, files) = crawl_warc_files("warc-cut");
    let warcio = warcio::warcio_or_skip(&warcio::target_tmpdir(), test);
    let torn_path = dir.join("torn.warc.gz");
    let kept_dir = dir.join("kept");
    fs::create_dir_all(&kept_dir).unwrap();
    let mut kept_files: BTreeMap<(usize, u64), Vec<RecordAt>> = BTreeMap::new();
    let mut cuts = 0;
    for (n, (path, whole)) in files.iter().enumerate() {
        // The records as warcio sees the whole file, and so where its
        // members start (each record is its own member).
        let listed = warcio.as_ref().map(|bin| warcio_index(bin, path));
        let whole_repaired = {
            fs::write(&torn_path, whole).unwrap();
            repair_warc(&torn_path, 0).unwrap()
        };
        assert_eq!(whole_repaired.cut(), 0, "{path:?} as written is whole");
        if let Some(listed) = &listed {
            assert_eq!(
                &whole_repaired.items, listed,
                "repair lists what warcio lists"
            );
        }
        let boundaries: Vec<u64> = whole_repaired
            .items
            .iter()
            .map(|r| r.offset)
            .chain([whole.len() as u64])
            .collect();
        assert_eq!(whole_repaired.items[0].warc_type, "warcinfo");
        assert_eq!(
            read_records(whole).unwrap().len(),
            whole_repaired.items.len()
        );

        let ends = (0..whole.len()).step_by(97).chain([whole.len() - 1]);
        for end in ends {
            fs::write(&torn_path, &whole[..end]).unwrap();
            let repaired = repair_warc(&torn_path, 0).unwrap();
            cuts += 1;
            let kept = boundaries
                .iter()
                .copied()
                .filter(|&b| b <= end as u64)
                .max()
                .unwrap();
            assert_eq!(repaired.len, kept, "{path:?} cut at {end}");
            assert_eq!(repaired.cut(), end as u64 - kept);
            assert_eq!(repaired.torn.is_some(), kept < end as u64);
            let after = fs::read(&torn_path).unwrap();
            assert_eq!(after, &whole[..kept as usize], "a prefix of whole members");
            let expected: Vec<RecordAt> = whole_repaired
                .items
                .iter()
                .filter(|r| r.offset < kept)
                .cloned()
                .collect();
            assert_eq!(repaired.items, expected, "cut at {end}");
            assert_eq!(read_records(&after).unwrap().len(), expected.len());
            kept_files.entry((n, kept)).or_insert(expected);

            // From a checkpoint at a member boundary before the cut.
            if let Some(&from) = boundaries.iter().filter(|&&b| b <= kept).nth(2) {
                fs::write(&torn_path, &whole[..end]).unwrap();
                let again = repair_warc(&torn_path, from).unwrap();
                assert_eq!(again.len, kept);
                assert!(again.items.iter().all(|r| r.offset >= from));
                assert_eq!(
                    again.items.len(),
                    repaired.items.iter().filter(|r| r.offset >= from).count()
                );
            }
        }
    }
    println!(
        "{cuts} cuts of {} files, {} distinct repaired files",
        files.len(),
        kept_files.len()
    );

    let Some(bin) = warcio else {
        fs::remove_dir_all(&dir).unwrap();
        return;
    };
    // Every distinct repaired file (one per count of whole members), as
    // warcio reads it: it checks, and it indexes exactly the records the
    // repair listed (an empty file, its warcinfo torn, holds none).
    let mut paths = Vec::new();
    for ((n, kept), expected) in &kept_files {
        let path = kept_dir.join(format!("f{n}-{kept}.warc.gz"));
        fs::write(&path, &files[*n].1[..*kept as usize]).unwrap();
        assert_eq!(&warcio_index(&bin, &path), expected, "{path:?}");
        paths.push(path);
    }
    warcio_check(&bin, &paths);
    paths.retain(|p| fs::metadata(p).unwrap().len() > 0);
    gzip_test(&paths);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn garbage_after_whole_members_is_cut_and_warcio_accepts_what_is_left() {
    let (dir, files) = crawl_warc_files("warc-garbage");
    let (_, whole) = &files[0];
    let path = dir.join("torn.warc.gz");
    fs::write(&path, whole).unwrap();
    let records = repair_warc(&path, 0).unwrap().items;
    let first_member = records[1].offset as usize;
    let gzip = |bytes: &[u8]| {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    };
    let mut bad_crc =
        gzip(b"WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 2\r\n\r\nab\r\n\r\n");
    let crc_at = bad_crc.len() - 8;
    bad_crc[crc_at] ^= 1;
    let tails: Vec<(&str, Vec<u8>)> = vec![
        ("text", b"this is not gzip at all\n".to_vec()),
        ("zeros", vec![0; 4096]),
        (
            "a gzip member that is not a WARC record",
            gzip(b"hello, world\r\n\r\n"),
        ),
        ("a WARC member with a wrong CRC", bad_crc),
        (
            "a gzip header alone",
            vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3],
        ),
        (
            "the file's own first member, cut",
            whole[..first_member - 1].to_vec(),
        ),
    ];
    let warcio = warcio::warcio_or_skip(
        &warcio::target_tmpdir(),
        "garbage_after_whole_members_is_cut_and_warcio_accepts_what_is_left",
    );
    let mut seen = BTreeSet::new();
    let mut rejected = Vec::new();
    for (what, tail) in &tails {
        fs::write(&path, [&whole[..], tail].concat()).unwrap();
        if let Some(bin) = &warcio {
            let check = std::process::Command::new(bin.join("warcio"))
                .arg("check")
                .arg(&path)
                .output()
                .unwrap();
            if !check.status.success() {
                rejected.push(*what);
            }
        }
        let repaired = repair_warc(&path, 0).unwrap();
        assert_eq!(fs::read(&path).unwrap(), *whole, "{what} is cut");
        assert_eq!(repaired.cut(), tail.len() as u64, "{what}");
        assert_eq!(repaired.items, records, "{what}");
        let why = repaired.torn.unwrap();
        assert!(
            why.contains(&format!("at byte {}", whole.len())),
            "{what}: {why}"
        );
        seen.insert(why);
        if let Some(bin) = &warcio {
            warcio_check(bin, std::slice::from_ref(&path));
        }
        gzip_test(std::slice::from_ref(&path));
    }
    println!("{seen:#?}\nwarcio check rejects, before the repair: {rejected:?}");
    if warcio.is_some() {
        assert!(
            rejected.contains(&"text"),
            "the check sees a tear: {rejected:?}"
        );
    }
    fs::remove_dir_all(&dir).unwrap();
}
