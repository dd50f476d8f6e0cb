//! The CDXJ lines a kill lost between a page's record and its line, made
//! again at a resume from the pages' WARC records, so that every page
//! with a record in the log and a WARC record on disk has its one line
//! (and the WACZ built at the end replays it).
//!
//! Which lines are lost: a page's line goes to the index right after its
//! record goes to the log, in the log's order, and each WARC file is one
//! shard's, so the lines the index holds of a WARC file are those of its
//! first records in the log's order, and what a kill loses is a tail: the
//! records the log holds after the one whose line is the index's last of
//! that file ([`super::index::Kept::indexed`]), or all of them when it has
//! none. A file whose last logged record has its line lacks nothing: after
//! a clean stop none does, and the log is not read again.
//!
//! Bounded work and memory: the tails are found at the log's end. A window
//! of its last bytes (1 MiB, four times larger each time it does not reach
//! back to every lacking file's last indexed record, or for a file with no
//! line to all of its records) is read twice, a line at a time: once to
//! find where each tail starts, once to make the lines. What is held is a
//! few numbers per WARC file and one record's WARC header and HTTP head.
//! A kill's tails being its last moments, the first window nearly always
//! holds them.
//!
//! A line is made from the record's gzip member read back at the offset
//! the log gives ([`crate::output::rebuild`]: the crawl's own line,
//! byte for byte), appended to the index in the log's order (so the next
//! resume's [`super::index::keep_written`] finds each file's lines in
//! order), and the index synced. A record whose bytes do not read as its
//! page's record is counted and left without a line. A page whose URL
//! reads as a robots.txt's (whose line [`super::index::keep_written`]
//! cannot tell from the crawl's own robots.txt records) is left as it is.
//!
//! Blocking `std::fs`, for the main thread before the executors start.
//! Not which lines are kept (`super::index`), nor the line's form.

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{BufReader, BufWriter, Seek, SeekFrom, Write};
use std::path::Path;

use crate::output::rebuild::page_line;
use ringcrawl_warc::read::skim;

use super::done::{archived, Archived, Done, IndexCovered};
use super::index::{keep_written, without_record, Kept};
use super::repair::next_line;
use super::{io_err, StateError};

/// The first window of the log's end read.
const FIRST_WINDOW: u64 = 1 << 20;
/// Records without a line said one by one (the rest counted).
const WARNINGS: u64 = 10;

/// What [`rebuild_lost`] did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Rebuilt {
    /// Lines made again and appended to the index.
    pub lines: u64,
    /// Records whose WARC bytes did not read as their page's record: left
    /// without a line.
    pub unreadable: u64,
    /// WARC files whose last indexed record the log does not hold (the
    /// index not the crawl's): left as they are.
    pub unplaced: u64,
    /// Bytes of the log read, at its end, over every pass (0: no line was
    /// lost).
    pub log_read: u64,
}

impl Rebuilt {
    /// What was done, in words, for the resume's notes.
    pub(crate) fn said(&self) -> String {
        let mut said = format!(
            "rebuilt {} lines of pages whose records were logged without them, from their WARC records (read {} bytes of the log's end)",
            self.lines, self.log_read
        );
        if self.unreadable > 0 {
            said.push_str(&format!(
                "; {} records whose WARC bytes do not read as their page's left without",
                self.unreadable
            ));
        }
        if self.unplaced > 0 {
            said.push_str(&format!(
                "; {} WARC files whose last indexed record the log does not hold left as they are",
                self.unplaced
            ));
        }
        said
    }
}

/// Where a WARC file's lost lines start in the log.
#[derive(Debug)]
struct Tail {
    /// The offset of its last indexed record, if it has one.
    after: Option<u64>,
    /// Its records in the log.
    records: u64,
    /// Its records in the window read.
    seen: u64,
    /// Of those, the rank of its last indexed one (0: none; then the
    /// window must hold all of its records).
    from: Option<u64>,
}

impl Tail {
    /// Whether the window holds the start of the tail.
    fn placed(&self) -> bool {
        match self.after {
            Some(_) => self.from.is_some(),
            None => self.seen >= self.records,
        }
    }

    /// The rank its lost lines start after.
    fn start(&self) -> u64 {
        self.from.unwrap_or(0)
    }
}

/// What a resume did to the index ([`mend`]).
#[derive(Debug, Default)]
pub(crate) struct Mended {
    /// Where its check began: the end of the lines the last resume
    /// checked (0: all were read).
    pub from: u64,
    /// What the check kept and dropped (None: there is no index yet).
    pub kept: Option<Kept>,
    /// The lines made again.
    pub rebuilt: Rebuilt,
}

impl Mended {
    /// What was done, in words, for the resume's notes about `index`.
    pub(crate) fn notes(&self, index: &Path) -> Vec<String> {
        let mut notes = Vec::new();
        if let Some(kept) = self.kept.as_ref().filter(|k| k.changed()) {
            notes.push(format!(
                "{}: kept {} lines{}; dropped {} whose WARC bytes are gone, {} of pages without a record (fetched again), {} damaged{}",
                index.display(),
                kept.lines,
                match self.from {
                    0 => String::new(),
                    from => format!(" after byte {from}"),
                },
                kept.unwritten,
                kept.unlogged,
                kept.damaged,
                kept.torn.as_deref().map(|t| format!("; cut {t}")).unwrap_or_default()
            ));
        }
        if self.rebuilt != Rebuilt::default() {
            notes.push(format!("{}: {}", index.display(), self.rebuilt.said()));
        }
        notes
    }
}

/// Mend the index at `index` after a kill, once the log is read (`done`)
/// and the WARC files in `warc_dir` repaired: keep the lines whose bytes
/// are there and whose records the log holds, from where the last resume's
/// check ended ([`keep_written`]), make again the lines a kill lost
/// ([`rebuild_lost`]), then sync it and say in `done.json` what is
/// checked. Damage is an error unless `discard`.
pub(crate) fn mend(
    index: &Path,
    warc_dir: Option<&Path>,
    log: &Path,
    done: &mut Done,
    discard: bool,
    keep: usize,
) -> Result<Mended, StateError> {
    let mut mended = Mended::default();
    let mut indexed = HashMap::new();
    if index.exists() {
        // The lines the last resume checked are not read again.
        let checked = done.index.take().filter(|c| c.holds(index));
        mended.from = checked.as_ref().map_or(0, |c| c.len);
        indexed = checked.map(|c| c.indexed).unwrap_or_default();
        let mut kept = keep_written(index, warc_dir, &done.counts.warc, discard, mended.from)?;
        indexed.extend(std::mem::take(&mut kept.indexed));
        mended.kept = Some(kept);
    }
    if let Some(warc_dir) = warc_dir {
        mended.rebuilt = rebuild_lost(index, warc_dir, log, done, &mut indexed, keep)?;
    }
    if index.exists() {
        done.save_index(IndexCovered::of(index, indexed)?)?;
    }
    Ok(mended)
}

/// Make again the lines of the index at `index` that the records of the
/// log at `log` lack (see the module's docs): `done` is what the log
/// holds of each WARC file (in `warc_dir`), `indexed` the offset of each
/// file's last page line in the index (then, of each file looked at, the
/// next resume's starting point); `keep` bytes of a record's block are
/// read (a response head is at most that long).
pub(crate) fn rebuild_lost(
    index: &Path,
    warc_dir: &Path,
    log: &Path,
    done: &Done,
    indexed: &mut HashMap<String, u64>,
    keep: usize,
) -> Result<Rebuilt, StateError> {
    let mut tails: HashMap<String, Tail> = done
        .counts
        .warc
        .iter()
        .filter(|(file, logged)| indexed.get(*file) != Some(&logged.last))
        // A WARC file gone has no bytes to make lines of.
        .filter(|(file, _)| warc_dir.join(file).is_file())
        .map(|(file, logged)| {
            let tail = Tail {
                after: indexed.get(file).copied(),
                records: logged.records,
                seen: 0,
                from: None,
            };
            (file.clone(), tail)
        })
        .collect();
    let mut rebuilt = Rebuilt::default();
    if tails.is_empty() {
        return Ok(rebuilt);
    }
    let len = std::fs::metadata(log)
        .map_err(io_err("reading", log))?
        .len();
    let mut window = FIRST_WINDOW;
    let start = loop {
        let start = len.saturating_sub(window);
        for tail in tails.values_mut() {
            (tail.seen, tail.from) = (0, None);
        }
        rebuilt.log_read = rebuilt.log_read.saturating_add(len.saturating_sub(start));
        each_archived(log, start, |page| {
            if let Some(tail) = tails.get_mut(&page.file) {
                tail.seen = tail.seen.saturating_add(1);
                if tail.after == Some(page.offset) {
                    tail.from = Some(tail.seen);
                }
            }
            Ok(())
        })?;
        if start == 0 || tails.values().all(Tail::placed) {
            break start;
        }
        window = window.saturating_mul(4);
    };
    let unplaced: Vec<String> = tails
        .iter()
        .filter(|(_, tail)| !tail.placed())
        .map(|(file, _)| file.clone())
        .collect();
    for file in unplaced {
        log::warn!(
            "{}: the index's last line of {file} is of no record the log holds: its lost lines are not made again",
            index.display()
        );
        tails.remove(&file);
        rebuilt.unplaced = rebuilt.unplaced.saturating_add(1);
        // Left as it is, and said once: the next resume does not look.
        if let Some(logged) = done.counts.warc.get(&file) {
            indexed.insert(file, logged.last);
        }
    }
    let out = OpenOptions::new()
        .create(true)
        .append(true)
        .open(index)
        .map_err(io_err("opening", index))?;
    let mut out = BufWriter::with_capacity(1 << 16, out);
    let mut warcs = Warcs::default();
    let mut line = Vec::new();
    // Of each file, the offset of the last line made, and whether a line
    // could not be made.
    let mut made: HashMap<String, u64> = HashMap::new();
    let mut failed: HashSet<String> = HashSet::new();
    rebuilt.log_read = rebuilt.log_read.saturating_add(len.saturating_sub(start));
    for tail in tails.values_mut() {
        tail.seen = 0;
    }
    each_archived(log, start, |page| {
        let Some(tail) = tails.get_mut(&page.file) else {
            return Ok(());
        };
        tail.seen = tail.seen.saturating_add(1);
        if tail.seen <= tail.start() || without_record(&page.url) {
            return Ok(());
        }
        line.clear();
        match warcs.line(warc_dir, &page, keep, &mut line) {
            Ok(()) => {
                out.write_all(&line).map_err(io_err("writing", index))?;
                rebuilt.lines = rebuilt.lines.saturating_add(1);
                made.insert(page.file.clone(), page.offset);
            }
            Err(why) => {
                failed.insert(page.file.clone());
                if rebuilt.unreadable < WARNINGS {
                    log::warn!(
                        "{}: no index line for {} ({} at {}): {why}",
                        index.display(),
                        page.url,
                        page.file,
                        page.offset
                    );
                }
                rebuilt.unreadable = rebuilt.unreadable.saturating_add(1);
            }
        }
        Ok(())
    })?;
    let out = out
        .into_inner()
        .map_err(|e| io_err("writing", index)(e.into_error()))?;
    if rebuilt.lines > 0 {
        out.sync_data().map_err(io_err("syncing", index))?;
    }
    // What the next resume starts after, as a whole read of the index
    // would find it: a file's lines made up to its log's last record
    // need no look again; one whose last records failed (an unreadable
    // file, an I/O error) is looked at again from its last line.
    for file in tails.keys() {
        let last = match failed.contains(file) {
            false => done.counts.warc.get(file).map(|logged| logged.last),
            true => made.get(file).copied(),
        };
        if let Some(last) = last {
            indexed.insert(file.clone(), last);
        }
    }
    Ok(rebuilt)
}

/// Call `f` with each record of the log at `path` from its first whole
/// line at or after byte `start` that points into a WARC file, in order.
fn each_archived(
    path: &Path,
    start: u64,
    mut f: impl FnMut(Archived) -> Result<(), StateError>,
) -> Result<(), StateError> {
    let mut file = File::open(path).map_err(io_err("opening", path))?;
    // From the byte before: a window starting on a line's first byte
    // skips only the newline before it.
    let from = start.saturating_sub(1);
    file.seek(SeekFrom::Start(from))
        .map_err(io_err("reading", path))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut buf = Vec::new();
    if start > 0 {
        next_line(&mut reader, &mut buf, path)?;
    }
    loop {
        if next_line(&mut reader, &mut buf, path)? == 0 {
            return Ok(());
        }
        if let Some(page) = archived(&buf) {
            f(page)?;
        }
    }
}

/// The WARC file read from: one open at a time (a tail's records lie in
/// one file, a kill's tails in a few), or why it could not be opened.
#[derive(Default)]
struct Warcs {
    open: Option<(String, Result<BufReader<File>, String>)>,
}

impl Warcs {
    /// The index line of `page`'s record, read back from its file in
    /// `dir`, appended to `out`.
    fn line(
        &mut self,
        dir: &Path,
        page: &Archived,
        keep: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        let opened = match &mut self.open {
            Some((name, opened)) if *name == page.file => opened,
            open => {
                let path = dir.join(&page.file);
                let opened = File::open(&path)
                    .map(|file| BufReader::with_capacity(1 << 16, file))
                    .map_err(|e| format!("{}: {e}", path.display()));
                &mut open.insert((page.file.clone(), opened)).1
            }
        };
        let reader = opened.as_mut().map_err(|e| e.clone())?;
        reader
            .seek(SeekFrom::Start(page.offset))
            .map_err(|e| e.to_string())?;
        let skimmed = skim(&mut *reader, keep).map_err(|e| e.to_string())?;
        page_line(&skimmed, &page.url, page.offset, &page.file, out).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests;
