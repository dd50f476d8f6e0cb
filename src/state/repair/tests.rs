//! The repairs of a torn JSONL file, CDXJ index or WARC file (what a
//! `kill -9` leaves for a resumed crawl to cut back), byte by byte; a
//! real crawl's WARC files, which warcio checks, are cut in
//! `api::repaired_crawls` (a crawl is the layer above this one).

use std::fs;
use std::path::PathBuf;
use std::time::SystemTime;

use proptest::prelude::*;

use super::*;
use crate::Record;
use ringcrawl_warc as warc;
use ringcrawl_warc::cdxj;

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("ringcrawl-repair-{}-{name}", std::process::id()))
}

#[test]
fn a_torn_last_line_is_cut_back_to_the_last_newline_wherever_it_tore() {
    // Lines of 1,000 bytes over several of the 64 KiB blocks read back
    // from the end; torn at each place a block edge can fall.
    let path = temp("torn-line");
    let line = format!("{}\n", "x".repeat(999));
    let whole = line.repeat(200);
    for torn in [0, 1, 500, 999, 65_535, 65_536, 65_537, 70_000, 199_999] {
        let tail = "y".repeat(torn);
        fs::write(&path, format!("{whole}{tail}")).unwrap();
        assert_eq!(cut_torn_line(&path).unwrap(), torn as u64, "torn {torn}");
        assert_eq!(fs::read_to_string(&path).unwrap(), whole, "torn {torn}");
    }
    // No newline at all: nothing whole, all of it goes.
    fs::write(&path, "y".repeat(100_000)).unwrap();
    assert_eq!(cut_torn_line(&path).unwrap(), 100_000);
    assert_eq!(fs::metadata(&path).unwrap().len(), 0);
    assert_eq!(cut_torn_line(&path).unwrap(), 0, "an empty file is whole");
    fs::remove_file(&path).unwrap();
    assert_eq!(
        cut_torn_line(&path).unwrap(),
        0,
        "a missing file is no error"
    );
}

#[test]
fn a_node_warc_name_gives_its_process_shard_and_serial_and_no_other_nodes() {
    assert_eq!(
        warc_name_parts("1764115200-4242-s1-00003"),
        Some(((1764115200, 4242), 1, 3))
    );
    // After `ringcrawl-a-`: node `a-1`'s files are not node `a`'s.
    assert_eq!(warc_name_parts("1-1764115200-4242-s1-00003"), None);
    assert_eq!(warc_name_parts("1764115200-4242-1-00003"), None);
}

#[test]
fn a_jsonl_line_is_a_record_when_it_is_an_object_with_a_url() {
    assert_eq!(
        jsonl_url(br#"{"url":"http://a/","status":200}"#).as_deref(),
        Some("http://a/")
    );
    for bad in [
        &br#"{"url":"http://a/","status":2"#[..],
        br#"{"status":200}"#,
        br#"["http://a/"]"#,
        br#"{"url":1}"#,
        b"",
        b"\xff\xfe",
        br#"{"url":"a"} x"#,
    ] {
        assert_eq!(jsonl_url(bad), None, "{:?}", String::from_utf8_lossy(bad));
    }
}

#[test]
fn a_cdxj_line_is_surt_timestamp_and_json_with_a_url() {
    assert_eq!(
        cdxj_url(br#"test,a)/ 20250101000000 {"url": "http://a.test/", "length": "3"}"#).as_deref(),
        Some("http://a.test/")
    );
    for bad in [
        &br#"test,a)/ 20250101000000"#[..],
        br#"test,a)/ 2025010100000x {"url": "http://a.test/"}"#,
        br#" 20250101000000 {"url": "http://a.test/"}"#,
        br#"test,a)/ 20250101000000 {"url": "http://a.test/""#,
    ] {
        assert_eq!(cdxj_url(bad), None, "{:?}", String::from_utf8_lossy(bad));
    }
}

#[test]
fn a_warc_header_without_type_or_length_is_no_record() {
    let ok = b"WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: http://a/\r\nContent-Length: 5\r\n\r\n";
    let (record, length) = parse_head(ok).unwrap();
    assert_eq!(
        (
            record.warc_type.as_str(),
            record.target_uri.as_deref(),
            length
        ),
        ("response", Some("http://a/"), 5)
    );
    for bad in [
        &b"HTTP/1.1 200 OK\r\n\r\n"[..],
        b"WARC/1.1\r\nContent-Length: 5\r\n\r\n",
        b"WARC/1.1\r\nWARC-Type: response\r\n\r\n",
        b"WARC/1.1\r\nWARC-Type: response\r\nContent-Length: -1\r\n\r\n",
        b"WARC/1.1\r\nWARC-Type response\r\nContent-Length: 1\r\n\r\n",
        b"WARC/1.1\r\nWARC-Type: \xff\r\n\r\n",
    ] {
        assert!(
            parse_head(bad).is_err(),
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
}

/// A small `.warc.gz` as the crawl writes one (warcinfo, then exchanges),
/// and the offset each member starts at.
fn small_warc() -> (Vec<u8>, Vec<u64>) {
    let mut out = warc::warcinfo(
        "ringcrawl/test",
        "t.warc.gz",
        SystemTime::now(),
        &[("isPartOf", "test")],
    );
    let mut members = vec![0];
    for i in 0..4 {
        let url = format!("http://a.test/{i}");
        let response = format!("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n{i:03}");
        let ex = warc::Exchange {
            target_uri: &url,
            ip: None,
            date: SystemTime::now(),
            request: b"GET / HTTP/1.1\r\n\r\n",
            response: response.as_bytes(),
            payload_offset: response.len() - 3,
        };
        let start = out.len();
        let written = warc::archive(&ex, warc::payload_sha1(&ex), None, None, &mut out);
        members.push(start as u64);
        // `out` is not empty: `start` counts from its beginning.
        members.push(written.start as u64);
    }
    (out, members)
}

#[test]
fn a_warc_cut_at_every_byte_keeps_exactly_its_whole_members() {
    let (whole, members) = small_warc();
    let path = temp("every-byte.warc.gz");
    for end in 0..=whole.len() {
        fs::write(&path, &whole[..end]).unwrap();
        let repaired = repair_warc(&path, 0).unwrap();
        let kept = members
            .iter()
            .chain([&(whole.len() as u64)])
            .copied()
            .filter(|&m| m <= end as u64)
            .max()
            .unwrap();
        assert_eq!(repaired.len, kept, "cut at {end}");
        assert_eq!(repaired.cut(), end as u64 - kept);
        assert_eq!(repaired.torn.is_some(), repaired.cut() > 0, "{repaired:?}");
        assert_eq!(fs::read(&path).unwrap(), &whole[..kept as usize]);
        let offsets: Vec<u64> = repaired.items.iter().map(|r| r.offset).collect();
        let expected: Vec<u64> = members.iter().copied().filter(|&m| m < kept).collect();
        assert_eq!(offsets, expected, "cut at {end}");
    }
    fs::remove_file(&path).unwrap();
}

#[test]
fn a_warc_repair_starts_at_the_checkpoint_and_lists_only_what_follows() {
    let (whole, members) = small_warc();
    let path = temp("from.warc.gz");
    fs::write(&path, &whole[..whole.len() - 10]).unwrap();
    let from = members[3];
    let repaired = repair_warc(&path, from).unwrap();
    assert_eq!(repaired.items.first().map(|r| r.offset), Some(from));
    assert_eq!(
        repaired.items.len(),
        members.len() - 4,
        "the last one is torn"
    );
    assert_eq!(repaired.len, *members.last().unwrap());
    assert!(
        repaired.torn.as_deref().unwrap().contains("ends early"),
        "{repaired:?}"
    );
    let err = repair_warc(&path, whole.len() as u64 + 1).unwrap_err();
    assert!(matches!(err, StateError::Shorter { .. }), "{err}");
    fs::remove_file(&path).unwrap();
}

#[test]
fn a_member_with_a_flipped_byte_is_cut_with_everything_after_it() {
    let (mut whole, members) = small_warc();
    // Inside the deflate data of the third member (past its 10-byte header).
    let at = members[2] as usize + 20;
    whole[at] ^= 0x40;
    let path = temp("flipped.warc.gz");
    fs::write(&path, &whole).unwrap();
    let repaired = repair_warc(&path, 0).unwrap();
    assert_eq!(repaired.len, members[2]);
    assert_eq!(repaired.items.len(), 2);
    fs::remove_file(&path).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever follows whole members, a repair keeps those members, cuts
    /// the rest or part of it, and never panics.
    #[test]
    fn any_bytes_after_whole_members_are_cut_and_nothing_before(
        tail in proptest::collection::vec(any::<u8>(), 0..600),
        gzip_magic in any::<bool>(),
    ) {
        let (whole, members) = small_warc();
        let mut bytes = whole.clone();
        if gzip_magic {
            bytes.extend_from_slice(&[0x1f, 0x8b, 8, 0]);
        }
        bytes.extend_from_slice(&tail);
        let path = temp(&format!("prop-{}.warc.gz", fastrand::u64(..)));
        fs::write(&path, &bytes).unwrap();
        let repaired = repair_warc(&path, 0).unwrap();
        let after = fs::read(&path).unwrap();
        fs::remove_file(&path).unwrap();
        prop_assert!(repaired.len >= whole.len() as u64);
        prop_assert_eq!(&after[..whole.len()], &whole[..]);
        prop_assert_eq!(after.len() as u64, repaired.len);
        prop_assert!(repaired.items.len() >= members.len());

        let lines = temp(&format!("prop-{}.jsonl", fastrand::u64(..)));
        let mut bytes = b"{\"url\": \"http://a/\"}\n".to_vec();
        bytes.extend_from_slice(&tail);
        fs::write(&lines, &bytes).unwrap();
        // Cut when the bytes are a torn tail; damage (nothing cut) when a
        // bad line has more after it.
        let result = repair_jsonl(&lines, 0);
        let after = fs::read(&lines).unwrap();
        fs::remove_file(&lines).unwrap();
        match result {
            Ok(repaired) => {
                prop_assert!(repaired.items.first().map(|l| l.url.as_str()) == Some("http://a/"));
                prop_assert_eq!(after.len() as u64, repaired.len);
                prop_assert!(after.is_empty() || after.ends_with(b"\n"));
            }
            Err(StateError::Damaged(d)) => {
                prop_assert_eq!(&after, &bytes);
                prop_assert!(d.byte >= 21);
            }
            Err(e) => prop_assert!(false, "{}", e),
        }
    }
}

/// A fresh, empty directory `name` (the files of a test that writes
/// more than one).
fn temp_dir(name: &str) -> PathBuf {
    let dir = temp(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// `n` JSONL lines as the crawl writes records.
fn jsonl(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            let mut record = Record::new(format!("http://a.test/page/{i}"), i % 2);
            record.status = Some(200);
            record.error = (i % 3 == 0).then(|| "a \"quoted\" error\nline".to_string());
            let mut line = Vec::new();
            record.write_jsonl(&mut line);
            assert!(line.ends_with(b"\n"));
            line
        })
        .collect()
}

#[test]
fn a_jsonl_file_cut_mid_line_is_repaired_to_its_last_whole_line_and_says_how_much_it_cut() {
    let dir = temp_dir("jsonl-cut");
    let path = dir.join("pages.jsonl");
    let lines = jsonl(5);
    let whole: Vec<u8> = lines[..4].concat();
    let torn = &lines[4][..lines[4].len() / 2];
    fs::write(&path, [&whole[..], torn].concat()).unwrap();

    let repaired = repair_jsonl(&path, 0).unwrap();
    assert_eq!(
        fs::read(&path).unwrap(),
        whole,
        "cut to the last whole line"
    );
    assert_eq!(repaired.len, whole.len() as u64);
    assert_eq!(repaired.cut(), torn.len() as u64);
    let why = repaired.torn.as_deref().unwrap();
    assert!(why.contains("no newline"), "{why}");
    assert!(why.contains(&whole.len().to_string()), "says where: {why}");
    let urls: Vec<&str> = repaired.items.iter().map(|l| l.url.as_str()).collect();
    assert_eq!(
        urls,
        (0..4)
            .map(|i| format!("http://a.test/page/{i}"))
            .collect::<Vec<_>>()
    );
    let offsets: Vec<u64> = repaired.items.iter().map(|l| l.offset).collect();
    let mut at = 0;
    for (line, offset) in lines[..4].iter().zip(offsets) {
        assert_eq!(offset, at);
        at += line.len() as u64;
    }

    // Repairing again finds nothing more to cut.
    let again = repair_jsonl(&path, 0).unwrap();
    assert_eq!((again.cut(), again.torn, again.items.len()), (0, None, 4));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_jsonl_file_with_no_tear_is_untouched() {
    let dir = temp_dir("jsonl-whole");
    let path = dir.join("pages.jsonl");
    let whole = jsonl(6).concat();
    fs::write(&path, &whole).unwrap();
    let before = fs::metadata(&path).unwrap().modified().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));

    let repaired = repair_jsonl(&path, 0).unwrap();
    assert_eq!(
        (repaired.was, repaired.len, repaired.cut()),
        (whole.len() as u64, whole.len() as u64, 0)
    );
    assert_eq!(repaired.torn, None);
    assert_eq!(repaired.items.len(), 6);
    assert_eq!(fs::read(&path).unwrap(), whole);
    assert_eq!(
        fs::metadata(&path).unwrap().modified().unwrap(),
        before,
        "not even truncated to its length"
    );

    // An empty file is whole too.
    fs::write(&path, b"").unwrap();
    let repaired = repair_jsonl(&path, 0).unwrap();
    assert_eq!(
        (repaired.len, repaired.cut(), repaired.items.len()),
        (0, 0, 0)
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_last_jsonl_line_that_is_not_a_record_is_cut_even_with_its_newline() {
    let dir = temp_dir("jsonl-garbage");
    let path = dir.join("pages.jsonl");
    let whole = jsonl(3).concat();
    // What a crash of the machine (not only of the process) may leave:
    // the file longer than the data written, the rest zeros.
    for tail in [
        &b"\0\0\0\0\0\0\n"[..],
        b"{\"url\": \"http://a.test/x\", \"st\n",
        b"\n",
    ] {
        fs::write(&path, [&whole[..], tail].concat()).unwrap();
        let repaired = repair_jsonl(&path, 0).unwrap();
        assert_eq!(fs::read(&path).unwrap(), whole, "{tail:?}");
        assert_eq!(repaired.cut(), tail.len() as u64);
        assert!(repaired.torn.unwrap().contains("is not a record"));
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_line_that_is_no_record_with_whole_lines_after_it_is_damage_and_nothing_is_cut() {
    let dir = temp_dir("jsonl-damaged");
    let path = dir.join("pages.jsonl");
    let lines = jsonl(6);
    let mut bytes = lines.concat();
    // A block of zeros over the third line, its newline kept.
    let at: usize = lines[..2].iter().map(Vec::len).sum();
    bytes[at..at + lines[2].len() - 1].fill(0);
    fs::write(&path, &bytes).unwrap();
    match repair_jsonl(&path, 0).unwrap_err() {
        StateError::Damaged(d) => {
            assert_eq!((d.place.as_str(), d.byte), ("line 3", at as u64));
            let message = d.to_string();
            assert!(message.contains(&path.display().to_string()), "{message}");
        }
        e => panic!("not damage: {e}"),
    }
    assert_eq!(fs::read(&path).unwrap(), bytes, "nothing cut");
    let index = dir.join("index.cdxj");
    fs::write(&index, b"com,a)/ 20260101000000 {\"url\": \"http://a.com/\"}\nnot an index line\ncom,a)/ 20260101000000 {\"url\": \"http://a.com/\"}\n").unwrap();
    assert!(matches!(repair_cdxj(&index, 0), Err(StateError::Damaged(d)) if d.place == "line 2"));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_jsonl_repair_from_the_checkpoint_reads_only_the_lines_after_it() {
    let dir = temp_dir("jsonl-from");
    let path = dir.join("pages.jsonl");
    let lines = jsonl(6);
    let checkpoint = lines[..2].concat().len() as u64;
    fs::write(
        &path,
        [lines[..5].concat(), lines[5][..7].to_vec()].concat(),
    )
    .unwrap();
    let repaired = repair_jsonl(&path, checkpoint).unwrap();
    let urls: Vec<&str> = repaired.items.iter().map(|l| l.url.as_str()).collect();
    assert_eq!(
        urls,
        [
            "http://a.test/page/2",
            "http://a.test/page/3",
            "http://a.test/page/4"
        ]
    );
    assert_eq!(repaired.items[0].offset, checkpoint);
    assert_eq!(repaired.cut(), 7);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_shorter_than_its_checkpoint_is_an_error_and_is_left_as_it_is() {
    let dir = temp_dir("shorter");
    let path = dir.join("pages.jsonl");
    let whole = jsonl(2).concat();
    fs::write(&path, &whole).unwrap();
    let from = whole.len() as u64 + 100;
    for err in [
        repair_jsonl(&path, from).unwrap_err(),
        repair_cdxj(&path, from).unwrap_err(),
        repair_warc(&path, from).unwrap_err(),
    ] {
        assert!(matches!(err, StateError::Shorter { .. }), "{err}");
        assert!(err.to_string().contains("the checkpoint says"), "{err}");
    }
    assert_eq!(fs::read(&path).unwrap(), whole);
    let missing = repair_jsonl(&dir.join("none.jsonl"), 0).unwrap_err();
    assert!(matches!(missing, StateError::Io { .. }), "{missing}");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_cdxj_index_cut_mid_line_keeps_its_whole_lines() {
    let dir = temp_dir("cdxj");
    let path = dir.join("index.cdxj");
    let mut whole = Vec::new();
    for i in 0..4u64 {
        let url = format!("http://a.test/{i}?b=1&a=2");
        cdxj::write_line(
            &cdxj::Entry {
                url: &url,
                date: SystemTime::now(),
                mime: Some("text/html"),
                status: Some(200),
                digest: "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ",
                length: 345,
                offset: 1000 * i,
                filename: "x-s0-00000.warc.gz",
            },
            &mut whole,
        );
    }
    let full = whole.len();
    for end in 0..=full {
        fs::write(&path, &whole[..end]).unwrap();
        let repaired = repair_cdxj(&path, 0).unwrap();
        let kept = whole[..end]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        assert_eq!(repaired.len, kept as u64, "cut at {end}");
        assert_eq!(
            repaired.items.len(),
            whole[..kept].iter().filter(|&&b| b == b'\n').count()
        );
        assert_eq!(fs::read(&path).unwrap(), &whole[..kept]);
    }
    assert_eq!(
        repair_cdxj(&path, 0).unwrap().items[3].url,
        "http://a.test/3?b=1&a=2"
    );
    fs::remove_dir_all(&dir).unwrap();
}
