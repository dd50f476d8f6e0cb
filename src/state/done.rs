//! What a resumed crawl has done already: the URLs that have a record in
//! its JSON Lines log (`-o FILE`, or `DIR/records.jsonl`).
//!
//! The log is the crawl's journal of done URLs: a record is written there
//! only after the links of its page are in the journal of discovered URLs
//! (`journal.rs`), so a URL with a record needs no new fetch and loses
//! nothing. At a resume the log is repaired (a torn last line cut off, and
//! said so) and read, in bounded memory, from where the last resume's read
//! ended ([`covered`], `DIR/done.json`; the whole log at the first): each
//! new record's URL becomes a fingerprint appended to the file of the
//! shard that owns its host (`shard-{i}/done.fp`, little-endian u64s),
//! and its counts are added to the earlier ones. The shard reads its file
//! back a few fingerprints at a time and counts them as seen before it
//! replays the journals. A resume thus holds none of them all at once:
//! 100M records would be 800 MB in RAM, and are that on disk instead, and
//! it parses only the records written since the last read. The crawl
//! reads its log the same way at every checkpoint, while it writes it
//! ([`catch_up`]): a resume then parses only what was logged after the
//! last checkpoint.
//!
//! A record of a fetch cut short by an interrupt (`interrupted`, written
//! only by a crawl without `--state`) is not done: the URL is fetched
//! again. Records of URLs kept out by a limit or by robots.txt are done
//! (they have their record) but were not fetches: they do not count
//! against `--max-pages`.
//!
//! Not the journal of discovered URLs, nor the repair of the WARC files.

use std::borrow::Cow;
use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use ringcrawl_links::urls;
use serde::Deserialize;

use crate::job::Verdict;
use crate::job::{ErrorKind, Limit};
use crate::keys::shard_for;
use crate::keys::Fingerprinter;
use crate::sync::{Syncs, WriteBack};

use super::repair::{next_line, repair_jsonl_with, Repaired};
use super::{io_err, StateError};

pub(crate) mod covered;

use covered::Covered;
pub(crate) use covered::{Counts, IndexCovered, WarcLogged};

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
            .any(|v| ErrorKind::from(*v).name() == kind)
}

/// What the log of a crawl says it has done.
#[derive(Debug)]
pub(crate) struct Done {
    /// The file of fingerprints of the URLs with a record, by the shard
    /// that owns their host ([`Fingerprints`] reads one); none for a crawl
    /// without records.
    pub by_shard: Vec<Option<PathBuf>>,
    /// What the records say, summed over the whole log.
    pub counts: Counts,
    /// Where this read of the log began: the end of what the last resume
    /// read (0: the log was read whole).
    pub from: u64,
    /// Why the log was read whole though a resume read it before.
    pub reread: Option<String>,
    /// What of the CDXJ index the last resume checked, when what it read
    /// of the log still holds.
    pub index: Option<IndexCovered>,
    /// What the repair of the log found and cut.
    pub repaired: Repaired<()>,
    /// The state directory and what its `done.json` says now (None: not
    /// written, no log).
    saved: Option<(PathBuf, Covered)>,
}

impl Done {
    /// Nothing done yet (a crawl killed before its first record).
    pub(crate) fn empty(shards: usize) -> Done {
        Done {
            by_shard: vec![None; shards.max(1)],
            counts: Counts::default(),
            from: 0,
            reread: None,
            index: None,
            repaired: Repaired {
                was: 0,
                len: 0,
                torn: None,
                items: Vec::new(),
            },
            saved: None,
        }
    }

    /// Say in `done.json` what of the CDXJ index this resume checked
    /// (once the index is synced); nothing without a log.
    pub(crate) fn save_index(&mut self, index: IndexCovered) -> Result<(), StateError> {
        let Some((dir, saved)) = &mut self.saved else {
            return Ok(());
        };
        saved.index = Some(index);
        covered::save(dir, saved)
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
fn counts_as_done(kind: Option<&str>) -> bool {
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
pub(crate) struct Archived {
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
pub(crate) fn archived(bytes: &[u8]) -> Option<Archived> {
    let line = serde_json::from_slice::<Line>(bytes).ok()?;
    if !counts_as_done(line.error_kind.as_deref()) {
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
/// `shard_dirs`: each has a file of its fingerprints there. Only the
/// records after what `done.json` in the state directory `dir` says an
/// earlier resume read are parsed; then the log, the fingerprint files
/// and `done.json` are synced, in that order. A damaged line before the
/// end is an error, or with `discard` cut with all after it.
pub(crate) fn read(
    path: &Path,
    key: [u64; 2],
    dir: &Path,
    shard_dirs: &[PathBuf],
    discard: bool,
) -> Result<Done, StateError> {
    let shards = shard_dirs.len().max(1);
    let paths = fingerprint_files(shard_dirs);
    let (covered, reread) = match covered::load(dir, path, &paths) {
        Ok(covered) => (covered.unwrap_or_default(), None),
        Err(why) => (Covered::default(), Some(why)),
    };
    let mut done = Done::empty(shards);
    done.from = covered.log_len;
    done.reread = reread;
    // The index's lines were checked against the log's: not if that is
    // read whole again.
    done.index = covered.index.filter(|_| covered.log_len > 0);
    let mut tally = Tally::open(&paths, &covered.fingerprints, key, covered.counts)?;
    let repaired = repair_jsonl_with(path, covered.log_len, discard, |bytes| tally.line(bytes))?;
    // The repair synced the log: what it says is done leaves the
    // compacted bases, so it must outlive a power loss as they do, and
    // before `done.json` says it was read.
    let (lengths, counts) = tally.finish()?;
    done.counts = counts;
    for (slot, path) in done.by_shard.iter_mut().zip(&paths) {
        *slot = Some(path.clone());
    }
    let saved = Covered {
        version: covered::VERSION,
        log_len: repaired.len,
        log_crc: covered::tail_crc(path, repaired.len)?,
        fingerprints: lengths,
        counts: done.counts.clone(),
        index: done.index.clone(),
    };
    covered::save(dir, &saved)?;
    done.saved = Some((dir.to_path_buf(), saved));
    done.repaired = repaired;
    Ok(done)
}

/// Bring `done.json` in the state directory `dir` up to the log at
/// `path` while the crawl writes it, so that the next resume reads only
/// what was logged after: the whole lines written since the last read
/// (by a resume or an earlier call) become fingerprints and counts, as
/// [`read`] makes them. The log (and the WARC files in `warc`'s
/// directory its new records point into) and the `done.fp` files are
/// synced first, so that what `done.json` names outlives a power loss;
/// and `warc`'s writers must say their own syncs went through (none under
/// way, or nothing is saved this time; none failed, or it is an error).
/// What it covers ends
/// before the first line that is not whole or not a record: the resume
/// repairs or refuses that one, as it would have.
///
/// For the checkpoint thread, off the executors; the shards read their
/// `done.fp` only at their start (one appended to meanwhile gives them
/// more URLs that are done, nothing else). Does nothing when `done.json`
/// does not match the log (the next resume reads it whole and says why).
/// The records read.
pub(crate) fn catch_up(
    path: &Path,
    key: [u64; 2],
    dir: &Path,
    shard_dirs: &[PathBuf],
    warc: Option<(&Path, &WriteBack)>,
) -> Result<u64, StateError> {
    let paths = fingerprint_files(shard_dirs);
    let covered = match covered::load(dir, path, &paths) {
        Ok(covered) => covered.unwrap_or_default(),
        Err(why) => {
            log::debug!("done.json not brought up to the log: {why}");
            return Ok(0);
        }
    };
    let file = File::open(path).map_err(io_err("opening", path))?;
    let end = file.metadata().map_err(io_err("reading", path))?.len();
    if end <= covered.log_len {
        return Ok(0);
    }
    let mut reader = BufReader::with_capacity(1 << 16, &file);
    reader
        .seek(SeekFrom::Start(covered.log_len))
        .map_err(io_err("reading", path))?;
    let mut reader = reader.take(end - covered.log_len);
    let mut tally = Tally::open(&paths, &covered.fingerprints, key, covered.counts.clone())?;
    let before = &covered.counts;
    let mut len = covered.log_len;
    let mut buf = Vec::new();
    loop {
        let n = next_line(&mut reader, &mut buf, path)?;
        let whole = match buf.split_last() {
            Some((b'\n', line)) => line.starts_with(b"{") && tally.line(line),
            _ => false,
        };
        if !whole {
            break;
        }
        len += n as u64;
    }
    if len == covered.log_len {
        return Ok(0);
    }
    file.sync_data().map_err(io_err("syncing", path))?;
    if let Some((warc_dir, write_back)) = warc {
        for (name, logged) in &tally.counts.warc {
            if before.warc.get(name) == Some(logged) {
                continue;
            }
            // A file gone (moved away once closed, and synced then) has
            // nothing to sync; the resume finds what is left of it.
            let warc = warc_dir.join(name);
            match File::open(&warc).and_then(|f| f.sync_data()) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                synced => synced.map_err(io_err("syncing", &warc))?,
            }
        }
        // A write-back failure that a writer's own sync saw is not
        // reported to these syncs: the writers say whether there was one.
        match write_back.syncs() {
            Syncs::Clean => {}
            // The next checkpoint tries again (cutting back what this one
            // appended to the done.fp files).
            Syncs::Busy => return Ok(0),
            Syncs::Failed => {
                return Err(StateError::Io {
                    what: "syncing the WARC files in",
                    path: warc_dir.to_path_buf(),
                    source: io::Error::other("a WARC file's writer failed to write or sync it"),
                })
            }
        }
    }
    let (fingerprints, counts) = tally.finish()?;
    let records = counts.records.saturating_sub(before.records);
    let saved = Covered {
        version: covered::VERSION,
        log_len: len,
        log_crc: covered::tail_crc(path, len)?,
        fingerprints,
        counts,
        index: covered.index,
    };
    covered::save(dir, &saved)?;
    Ok(records)
}

/// The `done.fp` file of each shard folder in `shard_dirs`.
fn fingerprint_files(shard_dirs: &[PathBuf]) -> Vec<PathBuf> {
    shard_dirs.iter().map(|d| d.join(FILE)).collect()
}

/// The `done.fp` file of the shard folder `shard_dir`.
pub(crate) fn fingerprint_file(shard_dir: &Path) -> PathBuf {
    shard_dir.join(FILE)
}

/// How many bytes of each shard's `done.fp` `done.json` names (what the
/// log, synced, says is done); zeros when `done.json` is missing or does
/// not hold (the bytes past it may be of a read that did not end).
pub(crate) fn covered_fingerprints(dir: &Path, log: &Path, shard_dirs: &[PathBuf]) -> Vec<u64> {
    match covered::load(dir, log, &fingerprint_files(shard_dirs)) {
        Ok(Some(covered)) => covered.fingerprints,
        _ => vec![0; shard_dirs.len()],
    }
}

/// What the log's records add up to: each record that counts as done
/// becomes its URL's fingerprint, appended to the `done.fp` of the shard
/// that owns its host, and adds to the counts.
struct Tally {
    fingerprinter: Fingerprinter,
    /// Each shard's file, and whether anything was appended to it.
    files: Vec<(PathBuf, BufWriter<File>, bool)>,
    counts: Counts,
    failed: Option<(PathBuf, io::Error)>,
}

impl Tally {
    /// Open the `done.fp` files `paths` to append, each cut back first to
    /// its length in `keep` (0 if none): a killed read may have appended
    /// more than `done.json` names. `counts` are the records' so far.
    fn open(
        paths: &[PathBuf],
        keep: &[u64],
        key: [u64; 2],
        counts: Counts,
    ) -> Result<Tally, StateError> {
        let mut files = Vec::with_capacity(paths.len());
        for (i, path) in paths.iter().enumerate() {
            let keep = keep.get(i).copied().unwrap_or(0);
            let new = !path.exists();
            let file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .and_then(|file| file.set_len(keep).map(|()| file))
                .map_err(io_err("opening", path))?;
            // Its name must outlive a power loss as its bytes do.
            if let Some(dir) = path.parent().filter(|_| new) {
                super::sync_dir(dir)?;
            }
            files.push((path.clone(), BufWriter::with_capacity(1 << 16, file), false));
        }
        Ok(Tally {
            fingerprinter: Fingerprinter::new(key),
            files,
            counts,
            failed: None,
        })
    }

    /// Take one line of the log (without its newline); false if it is not
    /// a record.
    fn line(&mut self, bytes: &[u8]) -> bool {
        let Ok(line) = serde_json::from_slice::<Line>(bytes) else {
            return false;
        };
        let counts = &mut self.counts;
        let kind = line.error_kind.as_deref();
        if !counts_as_done(kind) {
            if kind == Some(ErrorKind::Interrupted.name()) {
                counts.interrupted += 1;
            }
            return true;
        }
        let shard = shard_for(urls::host_of(&line.url), self.files.len().max(1));
        if let Some((path, file, written)) = self.files.get_mut(shard) {
            let fingerprint = self.fingerprinter.fingerprint(&line.url).to_le_bytes();
            if let Err(e) = file.write_all(&fingerprint) {
                self.failed.get_or_insert((path.clone(), e));
            }
            *written = true;
        }
        counts.records += 1;
        if let (Some(file), Some(offset)) = (&line.warc_file, line.warc_offset) {
            counts.archived(file, offset);
        }
        if !kind.is_some_and(refused) {
            counts.pages += 1;
            counts.bytes = counts.bytes.saturating_add(line.size);
        }
        true
    }

    /// Write and sync the fingerprint files appended to: their lengths,
    /// and the counts.
    fn finish(self) -> Result<(Vec<u64>, Counts), StateError> {
        if let Some((path, e)) = self.failed {
            return Err(io_err("writing", &path)(e));
        }
        let mut lengths = Vec::with_capacity(self.files.len());
        for (path, file, written) in self.files {
            let file = file
                .into_inner()
                .map_err(|e| e.into_error())
                .map_err(io_err("writing", &path))?;
            if written {
                file.sync_data().map_err(io_err("syncing", &path))?;
            }
            lengths.push(file.metadata().map_err(io_err("reading", &path))?.len());
        }
        Ok((lengths, self.counts))
    }
}

/// A shard's done fingerprints, read back one at a time from the file
/// [`read`] wrote (buffered: a read(2) per 8,192 of them).
pub(crate) struct Fingerprints {
    path: PathBuf,
    file: BufReader<File>,
}

impl Fingerprints {
    pub(crate) fn open(path: &Path) -> Result<Fingerprints, StateError> {
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
        let state = path.with_extension("state");
        std::fs::create_dir_all(&state).unwrap();
        let done = read(&path, key, &state, &dirs, false).unwrap();
        let c = &done.counts;
        assert_eq!((c.records, c.pages, c.bytes, c.interrupted), (4, 2, 107, 1));
        assert_eq!(
            c.warc.get("w.warc.gz"),
            Some(&WarcLogged {
                whole: 900,
                last: 300,
                records: 2
            })
        );
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
        std::fs::remove_dir_all(&state).unwrap();
        for dir in dirs {
            std::fs::remove_dir_all(dir).unwrap();
        }
    }

    /// The fingerprints of the shards' files, each sorted.
    fn fingerprints(done: &Done) -> Vec<Vec<u64>> {
        done.by_shard
            .iter()
            .map(|file| {
                let mut all: Vec<u64> = Fingerprints::open(file.as_ref().unwrap())
                    .unwrap()
                    .map(Result::unwrap)
                    .collect();
                all.sort_unstable();
                all
            })
            .collect()
    }

    /// A new state directory named after `name`, with two shard folders.
    fn state_with_shards(name: &str) -> (PathBuf, Vec<PathBuf>) {
        let dir =
            std::env::temp_dir().join(format!("ringcrawl-done-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let dirs: Vec<PathBuf> = (0..2).map(|i| dir.join(format!("shard-{i}"))).collect();
        for d in &dirs {
            std::fs::create_dir_all(d).unwrap();
        }
        (dir, dirs)
    }

    /// The WARC directory of state directory `dir`, with the file `w`
    /// the log lines point into.
    fn warc_file_w(dir: &Path) -> PathBuf {
        let warc = dir.join("warc");
        std::fs::create_dir_all(&warc).unwrap();
        std::fs::write(warc.join("w"), b"bytes").unwrap();
        warc
    }

    /// The log line of page `i`: on one of five hosts, in WARC file `w`.
    fn line(i: usize) -> String {
        format!(
            "{{\"url\":\"http://h{}.test/{i}\",\"status\":200,\"size\":10,\"warc_file\":\"w\",\"warc_offset\":{}}}\n",
            i % 5,
            i * 100
        )
    }

    /// A WARC writer's sync that saw a write-back error is the only one
    /// told of it: the catch-up's own syncs go through, so it takes the
    /// writers' word: nothing saved while one syncs, an error once one
    /// failed, and done.json stays where it was.
    #[test]
    fn a_catch_up_saves_nothing_while_a_warc_writer_syncs_and_fails_once_one_failed() {
        let (dir, dirs) = state_with_shards("write-back");
        let warc = warc_file_w(&dir);
        let log = dir.join("log.jsonl");
        let key = [5, 6];
        let covered_len = || {
            covered::load(&dir, &log, &fingerprint_files(&dirs))
                .unwrap()
                .map_or(0, |c| c.log_len)
        };
        let ten: String = (0..10).map(line).collect();
        std::fs::write(&log, &ten).unwrap();
        let write_back = WriteBack::default();
        let archive = Some((warc.as_path(), &write_back));
        let syncing = write_back.begin();
        assert_eq!(catch_up(&log, key, &dir, &dirs, archive).unwrap(), 0);
        assert_eq!(covered_len(), 0, "not saved while a sync is under way");
        syncing.end(true);
        assert_eq!(catch_up(&log, key, &dir, &dirs, archive).unwrap(), 10);
        assert_eq!(covered_len(), ten.len() as u64);
        let twenty: String = (0..20).map(line).collect();
        std::fs::write(&log, &twenty).unwrap();
        write_back.begin().end(false);
        let failed = catch_up(&log, key, &dir, &dirs, archive).unwrap_err();
        assert!(failed.to_string().contains("WARC"), "{failed}");
        assert_eq!(covered_len(), ten.len() as u64, "left where it was");
        // The resume reads the rest, with what the first catch-up read.
        let resumed = read(&log, key, &dir, &dirs, false).unwrap();
        assert_eq!(resumed.from, ten.len() as u64);
        assert_eq!(resumed.counts.records, 20);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_log_caught_up_while_written_covers_its_whole_records_and_a_resume_reads_the_rest() {
        let (dir, dirs) = state_with_shards("catch");
        let warc = warc_file_w(&dir);
        let write_back = WriteBack::default();
        let archive = Some((warc.as_path(), &write_back));
        let log = dir.join("log.jsonl");
        let key = [5, 6];
        // A first run: 30 records written, the 31st half written.
        let first: String = (0..30).map(line).collect();
        let thirty = line(30);
        let half = &thirty[..20];
        std::fs::write(&log, format!("{first}{half}")).unwrap();
        let records = catch_up(&log, key, &dir, &dirs, archive).unwrap();
        assert_eq!(records, 30);
        let covered = covered::load(&dir, &log, &fingerprint_files(&dirs))
            .unwrap()
            .unwrap();
        assert_eq!(covered.log_len, first.len() as u64, "whole lines only");
        assert_eq!(covered.counts.records, 30);
        assert_eq!(catch_up(&log, key, &dir, &dirs, archive).unwrap(), 0);
        // The writer finishes the line and writes more; the next
        // checkpoint reads them.
        let mut all: String = (0..45).map(line).collect();
        std::fs::write(&log, &all).unwrap();
        assert_eq!(catch_up(&log, key, &dir, &dirs, archive).unwrap(), 15);
        // A kill: five more records and a torn line; the resume reads
        // only those, and knows what a read of the whole log knows.
        all.extend((45..50).map(line));
        std::fs::write(&log, format!("{all}{half}")).unwrap();
        let resumed = read(&log, key, &dir, &dirs, false).unwrap();
        assert_eq!(
            resumed.from,
            (0..45).map(|i| line(i).len() as u64).sum::<u64>()
        );
        assert!(resumed.repaired.torn.is_some());
        let caught_up = fingerprints(&resumed);
        std::fs::remove_file(dir.join(covered::FILE)).unwrap();
        let whole = read(&log, key, &dir, &dirs, false).unwrap();
        assert_eq!(whole.from, 0);
        assert_eq!(resumed.counts, whole.counts);
        assert_eq!(caught_up, fingerprints(&whole));
        assert_eq!(caught_up.concat().len(), 50);
        // A line that is not a record ends what a catch-up covers: the
        // resume judges it (damage, here).
        std::fs::write(&log, format!("{all}not a record\n{}", line(50))).unwrap();
        assert_eq!(catch_up(&log, key, &dir, &dirs, None).unwrap(), 0);
        assert!(read(&log, key, &dir, &dirs, false).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_second_resume_reads_only_the_records_logged_since_and_sums_the_same() {
        let (dir, dirs) = state_with_shards("again");
        let log = dir.join("log.jsonl");
        let first: String = (0..40).map(line).collect();
        std::fs::write(&log, &first).unwrap();
        let key = [3, 4];
        let done = read(&log, key, &dir, &dirs, false).unwrap();
        assert_eq!((done.from, done.counts.records), (0, 40));
        // A second run logs 25 more; a kill tears the last of them.
        let mut all = first.clone();
        all.extend((40..65).map(line));
        std::fs::write(&log, format!("{all}{{\"url\":\"http://h1.test/torn")).unwrap();
        // A killed resume had appended fingerprints and not said so.
        std::fs::OpenOptions::new()
            .append(true)
            .open(dirs[0].join(FILE))
            .unwrap()
            .write_all(&[9u8; 24])
            .unwrap();
        let again = read(&log, key, &dir, &dirs, false).unwrap();
        assert_eq!(
            again.from,
            first.len() as u64,
            "only the new records are read"
        );
        assert!(again.repaired.torn.is_some());
        let again_fingerprints = fingerprints(&again);
        // The same as a first read of the whole log.
        std::fs::remove_file(dir.join(covered::FILE)).unwrap();
        let whole = read(&log, key, &dir, &dirs, false).unwrap();
        assert_eq!((whole.from, whole.reread.as_deref()), (0, None));
        assert_eq!(again.counts, whole.counts);
        assert_eq!(again.counts.records, 65);
        assert_eq!(
            again.counts.warc.get("w").copied(),
            Some(WarcLogged {
                whole: 6400,
                last: 6400,
                records: 65
            })
        );
        assert_eq!(again_fingerprints, fingerprints(&whole));
        assert_eq!(fingerprints(&whole).concat().len(), 65);
        // A log that is not the one read: read whole, and said why.
        std::fs::write(&log, all.replace("h3.test", "h4.test")).unwrap();
        let other = read(&log, key, &dir, &dirs, false).unwrap();
        assert_eq!(other.from, 0);
        assert!(other.reread.unwrap().contains("not the ones read before"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
