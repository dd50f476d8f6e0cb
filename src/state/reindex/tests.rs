use std::fs;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use super::*;
use crate::state::{done, index};
use ringcrawl_http1::HeadScan;
use ringcrawl_warc as warc;
use ringcrawl_warc::cdxj::{self, Entry};

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ringcrawl-reindex-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("warc")).unwrap();
    fs::create_dir_all(dir.join("shard-0")).unwrap();
    dir
}

/// A crawl's outputs as the shards write them: WARC files, the log of
/// records and the index lines the crawl writes for them.
#[derive(Default)]
struct Crawl {
    /// WARC file name → its bytes.
    warcs: HashMap<String, Vec<u8>>,
    /// The log's lines, in order.
    log: Vec<String>,
    /// The index's lines, in order: (line, of a logged page).
    index: Vec<(Vec<u8>, bool)>,
}

impl Crawl {
    /// Archive the exchange of `url` in `file` and index it as
    /// `crawl::shard`'s `archive.rs` does; log its record when `page`
    /// (a robots.txt is not logged).
    fn fetch(&mut self, file: &str, url: &str, page: bool, pad: usize) {
        let bytes = self
            .warcs
            .entry(file.to_string())
            .or_insert_with(|| warc::warcinfo("ringcrawl/test", file, SystemTime::UNIX_EPOCH, &[]));
        let n = self.log.len() as u64;
        let response = format!(
            "HTTP/1.1 {} X\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>{url}</p>",
            if n.is_multiple_of(3) { 404 } else { 200 }
        );
        let head_len = response.find("\r\n\r\n").unwrap() + 4;
        let ex = warc::Exchange {
            target_uri: url,
            ip: None,
            date: SystemTime::UNIX_EPOCH
                + Duration::from_micros(1_700_000_000_000_001 + n * 1_234_567),
            request: b"GET / HTTP/1.1\r\n\r\n",
            response: response.as_bytes(),
            payload_offset: head_len,
        };
        let mut group = Vec::new();
        let written = warc::archive(&ex, warc::payload_sha1(&ex), None, None, &mut group);
        let offset = (bytes.len() + written.start) as u64;
        bytes.extend(group);
        let head = HeadScan::new(1 << 16).parse(ex.response).unwrap().unwrap();
        let mut line = Vec::new();
        cdxj::write_line(
            &Entry {
                url,
                date: ex.date,
                mime: head.content_type.as_deref().map(cdxj::mime_of),
                status: Some(head.status),
                digest: &written.payload_digest,
                length: written.len as u64,
                offset,
                filename: file,
            },
            &mut line,
        );
        if page {
            self.log.push(format!(
                r#"{{"url":"{url}","status":{},"size":9,"warc_file":"{file}","warc_offset":{offset},"pad":"{}"}}"#,
                head.status,
                "x".repeat(pad)
            ));
        }
        self.index.push((line, page));
    }

    /// Write the outputs to `dir`, the index without the lines of the
    /// pages `lost` names (by their log line's number).
    fn write(&self, dir: &Path, lost: &[usize]) {
        for (name, bytes) in &self.warcs {
            fs::write(dir.join("warc").join(name), bytes).unwrap();
        }
        fs::write(
            dir.join("log.jsonl"),
            self.log
                .iter()
                .map(|l| format!("{l}\n"))
                .collect::<String>(),
        )
        .unwrap();
        let mut page = 0;
        let mut index = Vec::new();
        for (line, logged) in &self.index {
            if *logged {
                page += 1;
                if lost.contains(&(page - 1)) {
                    continue;
                }
            }
            index.extend_from_slice(line);
        }
        fs::write(dir.join("index.cdxj"), index).unwrap();
    }

    /// What a resume does to the index: keep, then rebuild.
    fn resume(dir: &Path) -> (index::Kept, Rebuilt) {
        let mended = Crawl::mend(dir);
        (mended.kept.unwrap_or_default(), mended.rebuilt)
    }

    /// What a resume does to the index, as the session calls it.
    fn mend(dir: &Path) -> Mended {
        let log = dir.join("log.jsonl");
        let mut done = done::read(&log, [1, 2], dir, &[dir.join("shard-0")], false).unwrap();
        let cdxj = dir.join("index.cdxj");
        mend(
            &cdxj,
            Some(&dir.join("warc")),
            &log,
            &mut done,
            false,
            1 << 16,
        )
        .unwrap()
    }

    /// The index's lines as the crawl wrote them all, sorted.
    fn whole_index(&self) -> Vec<Vec<u8>> {
        let mut lines: Vec<Vec<u8>> = self.index.iter().map(|(l, _)| l.clone()).collect();
        lines.sort();
        lines
    }

    /// Append this crawl's outputs to those of an earlier run in `dir`
    /// (its own WARC files; its log and index lines after the earlier
    /// ones), the index without the lines of the pages `lost` names and
    /// the log without the records `unlogged` names (by page number).
    fn append(&self, dir: &Path, lost: &[usize], unlogged: &[usize]) {
        for (name, bytes) in &self.warcs {
            fs::write(dir.join("warc").join(name), bytes).unwrap();
        }
        let mut log = fs::OpenOptions::new()
            .append(true)
            .open(dir.join("log.jsonl"))
            .unwrap();
        for (i, line) in self.log.iter().enumerate() {
            if !unlogged.contains(&i) {
                writeln!(log, "{line}").unwrap();
            }
        }
        let mut index = fs::OpenOptions::new()
            .append(true)
            .open(dir.join("index.cdxj"))
            .unwrap();
        let mut page = 0;
        for (line, logged) in &self.index {
            if *logged {
                page += 1;
                if lost.contains(&(page - 1)) {
                    continue;
                }
            }
            index.write_all(line).unwrap();
        }
    }
}

fn sorted_lines(path: &Path) -> Vec<Vec<u8>> {
    let mut lines: Vec<Vec<u8>> = fs::read(path)
        .unwrap()
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect();
    lines.sort();
    lines
}

#[test]
fn a_page_logged_before_its_index_line_is_indexed_at_resume() {
    let dir = temp("tail");
    let mut crawl = Crawl::default();
    crawl.fetch("a.warc.gz", "http://a.test/robots.txt", false, 0);
    for i in 0..6 {
        crawl.fetch("a.warc.gz", &format!("http://a.test/{i}"), true, 0);
        // Another shard's file, its pages logged between them.
        crawl.fetch("b.warc.gz", &format!("http://b.test/{i}"), true, 0);
    }
    // A file whose every page lost its line (a kill just after its first
    // records).
    crawl.fetch("c.warc.gz", "http://c.test/0", true, 0);
    crawl.fetch("c.warc.gz", "http://c.test/1", true, 0);
    // The kill: a.warc.gz's last two pages (log lines 8 and 10) and
    // c.warc.gz's lost their lines; b.warc.gz's are all there.
    crawl.write(&dir, &[8, 10, 12, 13]);
    let index = dir.join("index.cdxj");
    let (kept, rebuilt) = Crawl::resume(&dir);
    assert!(!kept.changed(), "no line dropped: {kept:?}");
    assert_eq!(
        (rebuilt.lines, rebuilt.unreadable, rebuilt.unplaced),
        (4, 0, 0)
    );
    assert!(rebuilt.log_read > 0);
    assert_eq!(
        sorted_lines(&index),
        crawl.whole_index(),
        "every line, byte for byte as the crawl wrote it"
    );
    // Appended in the log's order: the next resume keeps them all and
    // makes none again, without reading the log.
    let before = fs::read(&index).unwrap();
    let (kept, rebuilt) = Crawl::resume(&dir);
    assert!(!kept.changed(), "{kept:?}");
    assert_eq!(rebuilt, Rebuilt::default());
    assert_eq!(fs::read(&index).unwrap(), before);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn lost_lines_far_back_in_a_long_log_are_found_by_a_window_that_grows() {
    let dir = temp("window");
    let mut crawl = Crawl::default();
    crawl.fetch("c.warc.gz", "http://c.test/0", true, 0);
    crawl.fetch("a.warc.gz", "http://a.test/0", true, 0);
    crawl.fetch("a.warc.gz", "http://a.test/1", true, 0);
    // 3 MiB of another file's records after them.
    for i in 0..30 {
        crawl.fetch("b.warc.gz", &format!("http://b.test/{i}"), true, 100_000);
    }
    crawl.write(&dir, &[0, 2]);
    let (_, rebuilt) = Crawl::resume(&dir);
    assert_eq!((rebuilt.lines, rebuilt.unplaced), (2, 0));
    assert!(
        rebuilt.log_read > 2 * FIRST_WINDOW,
        "read past the first window: {rebuilt:?}"
    );
    assert_eq!(sorted_lines(&dir.join("index.cdxj")), crawl.whole_index());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_record_whose_warc_bytes_do_not_read_is_counted_and_left_without_a_line() {
    let dir = temp("unreadable");
    let mut crawl = Crawl::default();
    for i in 0..3 {
        crawl.fetch("a.warc.gz", &format!("http://a.test/{i}"), true, 0);
    }
    crawl.write(&dir, &[1, 2]);
    // The last record's bytes overwritten (not a kill's doing: damage).
    let path = dir.join("warc").join("a.warc.gz");
    let mut bytes = fs::read(&path).unwrap();
    let end = bytes.len();
    bytes[end - 40..].fill(b'!');
    fs::write(&path, bytes).unwrap();
    let (_, rebuilt) = Crawl::resume(&dir);
    assert_eq!((rebuilt.lines, rebuilt.unreadable), (1, 1));
    assert!(
        rebuilt.said().contains("1 records whose WARC bytes"),
        "{}",
        rebuilt.said()
    );
    let lines = sorted_lines(&dir.join("index.cdxj"));
    assert_eq!(lines.len(), 2);
    // The next resume tries the last record again (its bytes might read
    // then: an I/O error is not the record's), and makes no line twice.
    let (_, again) = Crawl::resume(&dir);
    assert_eq!((again.lines, again.unreadable), (0, 1));
    assert_eq!(sorted_lines(&dir.join("index.cdxj")), lines);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_later_resume_checks_only_the_index_lines_written_since_and_keeps_the_earlier_bytes() {
    let dir = temp("later");
    let mut first = Crawl::default();
    for i in 0..5 {
        first.fetch("a.warc.gz", &format!("http://a.test/{i}"), true, 0);
    }
    first.write(&dir, &[4]);
    let mended = Crawl::mend(&dir);
    assert_eq!((mended.from, mended.rebuilt.lines), (0, 1));
    let index = dir.join("index.cdxj");
    let checked = fs::read(&index).unwrap();
    // The next run writes its own file; a kill leaves the line of its
    // last page without the page's record.
    let mut second = Crawl::default();
    second.fetch("a-r1.warc.gz", "http://a.test/robots.txt", false, 0);
    for i in 0..6 {
        second.fetch("a-r1.warc.gz", &format!("http://a.test/r1/{i}"), true, 0);
    }
    second.append(&dir, &[], &[5]);
    let mended = Crawl::mend(&dir);
    assert_eq!(
        mended.from,
        checked.len() as u64,
        "the checked lines are not read"
    );
    let kept = mended.kept.as_ref().unwrap();
    assert_eq!((kept.lines, kept.unlogged), (6, 1), "{kept:?}");
    assert_eq!(mended.rebuilt, Rebuilt::default());
    assert!(
        mended.notes(&index)[0].contains("after byte"),
        "{:?}",
        mended.notes(&index)
    );
    let now = fs::read(&index).unwrap();
    assert_eq!(&now[..checked.len()], &checked[..], "copied byte for byte");
    let mut whole = first.whole_index();
    whole.extend(
        second
            .whole_index()
            .into_iter()
            .filter(|l| !String::from_utf8_lossy(l).contains("/r1/5")),
    );
    whole.sort();
    assert_eq!(sorted_lines(&index), whole);
    // A third resume has nothing to read or make.
    let mended = Crawl::mend(&dir);
    assert_eq!(mended.from, now.len() as u64);
    assert_eq!(
        (mended.kept.unwrap().lines, mended.rebuilt),
        (0, Rebuilt::default())
    );
    // An index changed under the crawl is checked whole again.
    let mut changed = now.clone();
    let last = changed.len() - 3;
    changed[last] = b'X';
    fs::write(&index, &changed).unwrap();
    let mended = Crawl::mend(&dir);
    assert_eq!(mended.from, 0);
    assert!(
        mended.kept.unwrap().torn.is_some(),
        "its changed last line is cut"
    );
    fs::remove_dir_all(&dir).unwrap();
}
