//! What a resumed crawl has done already: the URLs that have a record in
//! its JSON Lines log (`-o FILE`, or `DIR/records.jsonl`).
//!
//! The log is the crawl's journal of done URLs: a record is written there
//! only after the links of its page are in the journal of discovered URLs
//! (`journal.rs`), so a URL with a record needs no new fetch and loses
//! nothing. At a resume the log is repaired (a torn last line cut off, and
//! said so) and read once, in bounded memory: each record's URL becomes a
//! fingerprint in the folder of the shard that owns its host
//! (`shard-{i}/done.fp`, little-endian u64s), which the shard reads back a
//! few at a time, counts as seen before it replays the journals, and
//! removes. A resume thus holds none of them all at once: 100M records
//! would be 800 MB in RAM, and are that on disk for a moment instead.
//!
//! A record of a fetch cut short by an interrupt (`interrupted`, written
//! only by a crawl without `--state`) is not done: the URL is fetched
//! again. Records of URLs kept out by a limit or by robots.txt are done
//! (they have their record) but were not fetches: they do not count
//! against `--max-pages`.
//!
//! Not the journal of discovered URLs, nor the repair of the WARC files.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::job::Verdict;
use crate::job::{ErrorKind, Limit};
use crate::keys::shard_for;
use crate::keys::Fingerprinter;
use crate::web::urls;

use super::repair::{repair_jsonl_with, Repaired};
use super::{io_err, StateError};

/// The file of done fingerprints in a shard's folder.
const FILE: &str = "done.fp";

/// Whether a record of this error kind was written without a fetch (a
/// limit or robots.txt kept its URL out).
/// Read from the log's words, so a log of a later version with kinds
/// this one does not know still reads (as fetches).
fn refused(kind: &str) -> bool {
    Limit::ALL.iter().any(|l| l.kind().name() == kind)
        || [Verdict::Disallowed, Verdict::Unavailable]
            .iter()
            .any(|v| v.kind().name() == kind)
}

/// What the log of a crawl says it has done.
#[derive(Debug)]
pub struct Done {
    /// The file of fingerprints of the URLs with a record, by the shard
    /// that owns their host ([`Fingerprints`] reads one); none for a crawl
    /// without records.
    pub by_shard: Vec<Option<PathBuf>>,
    /// Records that count (interrupted ones left out).
    pub records: u64,
    /// Of those, fetches: what `--max-pages` counted.
    pub pages: u64,
    /// Body bytes of those fetches: what `--max-bytes` counted.
    pub bytes: u64,
    /// Records of fetches cut by an interrupt: their URLs are fetched again.
    pub interrupted: u64,
    /// Of each WARC file (by name) that logged records point into, the
    /// offset of the last one: a record is logged only once its WARC bytes
    /// are in the file, so everything before it is whole, and a repair
    /// starts there.
    pub warc_whole: HashMap<String, u64>,
    /// Of each WARC file, the offset of the record the log's last line
    /// pointing into it points at: a page's index line follows its
    /// record, in the log's order, so the index lines of the file after
    /// that one's stand for records the log does not hold.
    pub warc_last: HashMap<String, u64>,
    /// Of each WARC file, how many logged records point into it.
    pub warc_records: HashMap<String, u64>,
    /// What the repair of the log found and cut.
    pub repaired: Repaired<()>,
}

impl Done {
    /// Nothing done yet (a crawl killed before its first record).
    pub fn empty(shards: usize) -> Done {
        Done {
            by_shard: vec![None; shards.max(1)],
            records: 0,
            pages: 0,
            bytes: 0,
            interrupted: 0,
            warc_whole: HashMap::new(),
            warc_last: HashMap::new(),
            warc_records: HashMap::new(),
            repaired: Repaired {
                was: 0,
                len: 0,
                torn: None,
                items: Vec::new(),
            },
        }
    }
}

/// The fields of a record that a resume reads.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow)]
    url: Cow<'a, str>,
    #[serde(borrow, default)]
    error_kind: Option<Cow<'a, str>>,
    #[serde(default)]
    size: u64,
    #[serde(borrow, default)]
    warc_file: Option<Cow<'a, str>>,
    #[serde(default)]
    warc_offset: Option<u64>,
}

/// Whether a record of this error kind counts as done: not one of a fetch
/// cut by an interrupt, nor a proxy's failure (not the page's: a resume
/// tries it again).
fn counts(kind: Option<&str>) -> bool {
    ![
        ErrorKind::Interrupted,
        ErrorKind::ProxyConnect,
        ErrorKind::ProxyAuth,
    ]
    .iter()
    .any(|k| Some(k.name()) == kind)
}

/// A page's record in the log, where its WARC record lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Archived {
    /// The page's URL.
    pub url: String,
    /// The WARC file's name.
    pub file: String,
    /// Where its record's gzip member starts in the file.
    pub offset: u64,
}

/// The page and WARC place of the log line `bytes`, if it is a record
/// that counts as done (as [`read`] counts them) and points into a WARC
/// file.
pub fn archived(bytes: &[u8]) -> Option<Archived> {
    let line = serde_json::from_slice::<Line>(bytes).ok()?;
    if !counts(line.error_kind.as_deref()) {
        return None;
    }
    Some(Archived {
        url: line.url.into_owned(),
        file: line.warc_file?.into_owned(),
        offset: line.warc_offset?,
    })
}

/// Repair the log at `path` and read what it says was done, with the
/// crawl's fingerprint `key`, for the shards whose folders are
/// `shard_dirs`: each gets a file of its fingerprints there. A damaged
/// line before the end is an error, or with `discard` cut with all after
/// it.
pub fn read(
    path: &Path,
    key: [u64; 2],
    shard_dirs: &[PathBuf],
    discard: bool,
) -> Result<Done, StateError> {
    let shards = shard_dirs.len().max(1);
    let mut done = Done::empty(shards);
    let fingerprinter = Fingerprinter::new(key);
    let mut files = Vec::with_capacity(shards);
    for dir in shard_dirs {
        let path = dir.join(FILE);
        let file = File::create(&path).map_err(io_err("creating", &path))?;
        files.push((path, BufWriter::with_capacity(1 << 16, file)));
    }
    let mut failed: Option<(PathBuf, io::Error)> = None;
    let repaired = repair_jsonl_with(path, 0, discard, |bytes| {
        let Ok(line) = serde_json::from_slice::<Line>(bytes) else {
            return false;
        };
        let kind = line.error_kind.as_deref();
        if !counts(kind) {
            if kind == Some(ErrorKind::Interrupted.name()) {
                done.interrupted += 1;
            }
            return true;
        }
        let shard = shard_for(urls::host_of(&line.url), shards);
        if let Some((path, file)) = files.get_mut(shard) {
            let fingerprint = fingerprinter.fingerprint(&line.url).to_le_bytes();
            if let Err(e) = file.write_all(&fingerprint) {
                failed.get_or_insert((path.clone(), e));
            }
        }
        done.records += 1;
        if let (Some(file), Some(offset)) = (&line.warc_file, line.warc_offset) {
            match done.warc_whole.get_mut(file.as_ref()) {
                Some(at) => *at = (*at).max(offset),
                None => {
                    done.warc_whole.insert(file.to_string(), offset);
                }
            }
            match done.warc_last.get_mut(file.as_ref()) {
                Some(at) => *at = offset,
                None => {
                    done.warc_last.insert(file.to_string(), offset);
                }
            }
            match done.warc_records.get_mut(file.as_ref()) {
                Some(n) => *n = n.saturating_add(1),
                None => {
                    done.warc_records.insert(file.to_string(), 1);
                }
            }
        }
        if !kind.is_some_and(refused) {
            done.pages += 1;
            done.bytes = done.bytes.saturating_add(line.size);
        }
        true
    })?;
    if let Some((path, e)) = failed {
        return Err(io_err("writing", &path)(e));
    }
    for (shard, (path, file)) in files.into_iter().enumerate() {
        file.into_inner()
            .map_err(|e| e.into_error())
            .map_err(io_err("writing", &path))?;
        if let Some(slot) = done.by_shard.get_mut(shard) {
            *slot = Some(path);
        }
    }
    done.repaired = repaired;
    Ok(done)
}

/// A shard's done fingerprints, read back one at a time from the file
/// [`read`] wrote (buffered: a read(2) per 8,192 of them).
pub struct Fingerprints {
    path: PathBuf,
    file: BufReader<File>,
}

impl Fingerprints {
    pub fn open(path: &Path) -> Result<Fingerprints, StateError> {
        let file = File::open(path).map_err(io_err("opening", path))?;
        Ok(Fingerprints {
            path: path.to_path_buf(),
            file: BufReader::with_capacity(1 << 16, file),
        })
    }
}

impl Iterator for Fingerprints {
    type Item = Result<u64, StateError>;

    /// The next fingerprint; None at the end (a partial last one, which
    /// [`read`] never writes, ends it too).
    fn next(&mut self) -> Option<Self::Item> {
        let mut bytes = [0u8; 8];
        match self.file.read_exact(&mut bytes) {
            Ok(()) => Some(Ok(u64::from_le_bytes(bytes))),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => None,
            Err(e) => Some(Err(io_err("reading", &self.path)(e))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn the_log_gives_done_urls_by_owner_and_the_budgets_spent() {
        let path =
            std::env::temp_dir().join(format!("ringcrawl-done-{}.jsonl", std::process::id()));
        let mut file = std::fs::File::create(&path).unwrap();
        for line in [
            r#"{"url":"http://a.test/","status":200,"size":100}"#,
            r#"{"url":"http://b.test/x","error_kind":"robots_disallowed","size":0}"#,
            r#"{"url":"http://a.test/y","error_kind":"interrupted","size":0}"#,
            r#"{"url":"http://b.test/z","status":404,"size":7,"warc_file":"w.warc.gz","warc_offset":900}"#,
            r#"{"url":"http://b.test/w","error_kind":"too_deep","warc_file":"w.warc.gz","warc_offset":300}"#,
        ] {
            writeln!(file, "{line}").unwrap();
        }
        write!(file, r#"{{"url":"http://a.test/torn""#).unwrap();
        drop(file);
        let key = [7, 9];
        let dirs: Vec<PathBuf> = (0..2)
            .map(|i| {
                let dir = path.with_extension(format!("shard-{i}"));
                std::fs::create_dir_all(&dir).unwrap();
                dir
            })
            .collect();
        let done = read(&path, key, &dirs, false).unwrap();
        assert_eq!(
            (done.records, done.pages, done.bytes, done.interrupted),
            (4, 2, 107, 1)
        );
        assert_eq!(done.warc_whole.get("w.warc.gz"), Some(&900));
        assert_eq!(done.warc_last.get("w.warc.gz"), Some(&300));
        assert_eq!(done.warc_records.get("w.warc.gz"), Some(&2));
        assert_eq!(
            archived(br#"{"url":"http://b.test/z","warc_file":"w.warc.gz","warc_offset":900}"#),
            Some(Archived {
                url: "http://b.test/z".into(),
                file: "w.warc.gz".into(),
                offset: 900
            })
        );
        assert_eq!(archived(br#"{"url":"http://b.test/z"}"#), None);
        assert_eq!(
            archived(br#"{"url":"http://a/","error_kind":"interrupted","warc_file":"w","warc_offset":1}"#),
            None
        );
        let by_shard: Vec<Vec<u64>> = done
            .by_shard
            .iter()
            .map(|file| {
                let file = file.as_ref().unwrap();
                Fingerprints::open(file)
                    .unwrap()
                    .map(Result::unwrap)
                    .collect()
            })
            .collect();
        let mut all: Vec<u64> = by_shard.concat();
        all.sort_unstable();
        let f = Fingerprinter::new(key);
        let mut expected: Vec<u64> = [
            "http://a.test/",
            "http://b.test/x",
            "http://b.test/z",
            "http://b.test/w",
        ]
        .iter()
        .map(|u| f.fingerprint(u))
        .collect();
        expected.sort_unstable();
        assert_eq!(all, expected);
        let a = shard_for("a.test", 2);
        assert!(by_shard[a].contains(&f.fingerprint("http://a.test/")));
        assert!(done.repaired.torn.is_some(), "the torn line is cut");
        assert_eq!(std::fs::metadata(&path).unwrap().len(), done.repaired.len);
        std::fs::remove_file(&path).unwrap();
        for dir in dirs {
            std::fs::remove_dir_all(dir).unwrap();
        }
    }
}
