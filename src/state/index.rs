//! What a resume keeps of the CDXJ index (`--cdxj`, or the one a WACZ
//! needs): the lines that point at WARC bytes on disk and stand for
//! records the log holds, so the resumed crawl, which fetches again the
//! pages without a record, indexes none of them twice, and no line points
//! past the end of a WARC file.
//!
//! A line is dropped when
//! - its WARC file is missing or shorter than its offset and length (the
//!   bytes were lost with a kill or a failed write, or cut by the repair
//!   of the WARC file's torn tail);
//! - it is a page's line after the line of the last record the log holds
//!   for its WARC file: a page's line is written right after its record,
//!   in the log's order, so such a line's record was lost with a kill.
//!   The lines of robots.txt and of DNS lookups stand for no record and
//!   are kept while their bytes are there;
//! - it is the torn tail of the file (the last line without its newline,
//!   or not an index line);
//! - it is damaged (not an index line, with lines after it), and the
//!   caller accepts the loss; else that is an error and nothing changes.
//!
//! Only the lines after what the last resume checked are read
//! ([`super::done::IndexCovered`]): the WARC files those lines point into
//! are earlier runs', never written again, and the log only grows, so
//! they stay as they were kept. The file is rewritten only when a line is
//! dropped: the kept lines go to a new file (after the lines checked
//! before, copied unread), synced, renamed over it. Blocking `std::fs`,
//! for the main thread before the executors start; bounded memory (a line
//! at a time, and a few numbers per WARC file).

use std::collections::{HashMap, HashSet};
use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use ringcrawl_warc::cdxj;

use super::done::WarcLogged;

use super::repair::{next_line, preview, MAX_LINE};
use super::{io_err, Damaged, StateError};

/// What [`keep_written`] found and did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Kept {
    /// Lines kept.
    pub lines: u64,
    /// Lines dropped because their WARC bytes are not on disk.
    pub unwritten: u64,
    /// Pages' lines dropped because the log holds no record for them.
    pub unlogged: u64,
    /// Damaged lines dropped (only when the caller accepts the loss).
    pub damaged: u64,
    /// The torn tail cut, if any: why.
    pub torn: Option<String>,
    /// Of each WARC file with a page's line kept, the offset the last of
    /// them points at: the records the log holds after that one's lack
    /// their lines (`super::reindex`).
    pub indexed: HashMap<String, u64>,
}

impl Kept {
    /// Whether the file was rewritten.
    pub(crate) fn changed(&self) -> bool {
        self.unwritten > 0 || self.unlogged > 0 || self.damaged > 0 || self.torn.is_some()
    }
}

/// The fields of an index line a resume checks.
#[derive(serde::Deserialize)]
struct Fields {
    url: String,
    filename: String,
    offset: String,
    length: String,
}

/// An index line's URL, WARC file, offset and length, if it is one.
fn fields(line: &[u8]) -> Option<(String, String, u64, u64)> {
    let f: Fields = serde_json::from_slice(cdxj::line_json(line)?).ok()?;
    Some((
        f.url,
        f.filename,
        f.offset.parse().ok()?,
        f.length.parse().ok()?,
    ))
}

/// Whether `url` is of a record no page's log line stands for.
pub(super) fn without_record(url: &str) -> bool {
    url.starts_with("dns:")
        || url
            .split(['?', '#'])
            .next()
            .is_some_and(|u| u.ends_with("/robots.txt"))
}

/// Keep of the index at `path` the lines whose bytes are in the WARC files
/// in `warc_dir` and whose records the log holds (`logged`: of each WARC
/// file, where the log's records in it point); see the
/// module's docs. Only the lines from byte `from` on are read (an earlier
/// resume checked those before it; 0: all). Damage before the end is an
/// error unless `discard`.
pub(crate) fn keep_written(
    path: &Path,
    warc_dir: Option<&Path>,
    logged: &HashMap<String, WarcLogged>,
    discard: bool,
    from: u64,
) -> Result<Kept, StateError> {
    let mut file = File::open(path).map_err(io_err("opening", path))?;
    file.seek(SeekFrom::Start(from))
        .map_err(io_err("reading", path))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let tmp = PathBuf::from(format!("{}.resume-tmp", path.display()));
    let mut out = BufWriter::with_capacity(
        1 << 16,
        // Read back when the lines before `from` go first ([`prefixed`]).
        fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .map_err(io_err("creating", &tmp))?,
    );
    let mut kept = Kept::default();
    // WARC file → its length (None: missing).
    let mut lengths: HashMap<String, Option<u64>> = HashMap::new();
    // The WARC files whose last logged record's line was passed.
    let mut passed: HashSet<String> = HashSet::new();
    let mut number = 0u64;
    let mut pos = from;
    let mut buf = Vec::new();
    let result = loop {
        let n = match next_line(&mut reader, &mut buf, path) {
            Ok(n) => n,
            Err(e) => break Err(e),
        };
        if n == 0 {
            break Ok(());
        }
        number = number.saturating_add(1);
        let parsed = match buf.split_last() {
            Some((b'\n', line)) => {
                fields(line).ok_or_else(|| format!("not an index line: {}", preview(&buf)))
            }
            _ if n as u64 >= MAX_LINE => Err(format!("a line over {MAX_LINE} bytes")),
            _ => {
                kept.torn = Some(format!(
                    "the last line, at byte {pos}, has no newline ({n} bytes)"
                ));
                break Ok(());
            }
        };
        let at = pos;
        pos = pos.saturating_add(n as u64);
        let (url, warc, offset, length) = match parsed {
            Ok(fields) => fields,
            Err(what) => {
                let end = match reader.fill_buf() {
                    Ok(rest) => rest.is_empty(),
                    Err(e) => break Err(io_err("reading", path)(e)),
                };
                if end {
                    kept.torn = Some(format!("the last line, at byte {at}, is {what}"));
                    break Ok(());
                }
                if !discard {
                    break Err(Damaged {
                        path: path.to_path_buf(),
                        place: match from {
                            0 => format!("line {number}"),
                            _ => format!("the line {number} after byte {from}"),
                        },
                        byte: at,
                        what,
                    }
                    .into());
                }
                kept.damaged += 1;
                continue;
            }
        };
        let len = *lengths.entry(warc.clone()).or_insert_with(|| {
            let dir = warc_dir?;
            fs::metadata(dir.join(&warc)).ok().map(|m| m.len())
        });
        if len.is_none_or(|len| offset.saturating_add(length) > len) {
            kept.unwritten += 1;
            continue;
        }
        if !without_record(&url) {
            if passed.contains(&warc) || !logged.contains_key(&warc) {
                kept.unlogged += 1;
                continue;
            }
            if logged.get(&warc).map(|w| w.last) == Some(offset) {
                passed.insert(warc.clone());
            }
            kept.indexed.insert(warc, offset);
        }
        if let Err(e) = out.write_all(&buf) {
            break Err(io_err("writing", &tmp)(e));
        }
        kept.lines += 1;
    };
    let finished = result.and_then(|()| {
        if !kept.changed() {
            return Ok(());
        }
        let file = out
            .into_inner()
            .map_err(|e| io_err("writing", &tmp)(e.into_error()))?;
        let file = match from {
            0 => file,
            _ => prefixed(path, from, file, &tmp)?,
        };
        file.sync_all().map_err(io_err("syncing", &tmp))?;
        drop(file);
        fs::rename(&tmp, path).map_err(io_err("renaming", &tmp))?;
        if let Some(dir) = path.parent() {
            if let Ok(dir) = File::open(dir) {
                dir.sync_all().map_err(io_err("syncing", path))?;
            }
        }
        Ok(())
    });
    // Left when nothing changed, or on an error (or by a kill, before).
    let _ = fs::remove_file(&tmp);
    let _ = fs::remove_file(whole_path(path));
    finished.map(|()| kept)
}

/// The file at `tmp`, whose kept lines `lines` holds, made the index's
/// first `from` bytes and then those lines: copied in the kernel
/// (`copy_file_range`), the index's earlier lines unread.
fn prefixed(path: &Path, from: u64, lines: File, tmp: &Path) -> Result<File, StateError> {
    let whole = whole_path(path);
    let made = (|| {
        let mut out = File::create(&whole)?;
        io::copy(&mut File::open(path)?.take(from), &mut out)?;
        let mut lines = lines;
        lines.seek(SeekFrom::Start(0))?;
        io::copy(&mut lines, &mut out)?;
        Ok(out)
    })();
    let out = made.map_err(|e: io::Error| {
        let _ = fs::remove_file(&whole);
        io_err("writing", &whole)(e)
    })?;
    fs::rename(&whole, tmp).map_err(io_err("renaming", &whole))?;
    Ok(out)
}

/// Where [`prefixed`] makes the new index of the one at `path`.
fn whole_path(path: &Path) -> PathBuf {
    PathBuf::from(format!("{}.resume-whole", path.display()))
}
