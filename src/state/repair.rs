//! Making the output files valid again after a crawl was killed: a
//! `kill -9` may leave the last JSONL or CDXJ line, or the last gzip member
//! of a WARC file, half written. Before a resumed crawl appends to a file,
//! [`repair_jsonl`], [`repair_cdxj`] or [`repair_warc`] reads it from the
//! position its checkpoint gave (whole and on disk up to there), keeps the
//! longest valid run of whole lines or members after it, cuts off the rest
//! (`ftruncate`), syncs the file (cut or not: a kill leaves the last
//! writes in the page cache), says what it cut and why, and lists what
//! it kept, so the caller learns which URLs got a record after the
//! checkpoint (and need no new fetch).
//!
//! Valid means: for JSONL, a line that ends in `\n` and is a JSON object
//! with a string `url` (every [`crate::output::record::Record`] is); for
//! CDXJ, `SURT TIMESTAMP {JSON}` with a `url` in the JSON; for WARC, a
//! gzip member that inflates whole (its CRC and length checked) to one or
//! more whole WARC records (`WARC/` line, headers with `WARC-Type` and
//! `Content-Length`, the block, CRLF CRLF). The writers only append, so a
//! kill tears only the tail: the last line when it has no newline or is
//! not a record, or the first WARC member that does not inflate whole,
//! and what follows it. A line that does not read with whole lines after
//! it is damage, not a tear: cutting there would throw the good lines
//! after it away, so the repair cuts nothing and fails with
//! [`super::Damaged`], naming the file and the line, unless the caller
//! accepts the loss (`discard`: then it cuts there, as for a tear).
//!
//! A cluster node that comes back under its name has no checkpoint: it
//! cuts a torn last line ([`cut_torn_line`]) and repairs its previous
//! process's last WARC files from their start ([`repair_latest_warcs`]).
//!
//! What it is not: it decides nothing about the crawl (which URLs to fetch
//! again is the caller's business) and it never rewrites a byte, only cuts.
//! It is blocking `std::fs` code for the main thread before the executors
//! start. `from` must be a line or member boundary, as a checkpoint
//! records; the bytes before it are not read. Memory stays bounded
//! whatever the file holds: a line or a WARC header is read up to a limit,
//! and record blocks are inflated and skipped, not kept.
#![deny(clippy::arithmetic_side_effects)]

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use flate2::bufread::GzDecoder;

#[cfg(test)]
use ringcrawl_warc::cdxj;

use super::{io_err, Damaged, StateError};

/// Longest JSONL or CDXJ line accepted (records are a few KiB at most).
pub(super) const MAX_LINE: u64 = 16 << 20;

/// Clear `buf` and read into it the next line of `reader` (its newline
/// kept), at most [`MAX_LINE`] bytes; 0 at the end of the file.
pub(super) fn next_line(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    path: &Path,
) -> Result<usize, StateError> {
    buf.clear();
    reader
        .take(MAX_LINE)
        .read_until(b'\n', buf)
        .map_err(io_err("reading", path))
}

/// Longest WARC record header accepted.
const MAX_WARC_HEAD: u64 = 1 << 20;

/// What a repair found and did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Repaired<T> {
    /// The file's length before.
    pub was: u64,
    /// Its length now: the end of its last whole line or member.
    pub len: u64,
    /// Why the bytes from `len` on were cut, if any were.
    pub torn: Option<String>,
    /// The whole lines or records from `from` on, in file order.
    pub items: Vec<T>,
}

impl<T> Repaired<T> {
    /// Bytes cut off (0: the file was whole and is untouched).
    pub(crate) fn cut(&self) -> u64 {
        self.was.saturating_sub(self.len)
    }
}

/// A whole JSONL or CDXJ line.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg(test)]
pub(crate) struct Line {
    /// Offset of its first byte in the file.
    pub offset: u64,
    /// Its `url`.
    pub url: String,
}

/// A whole WARC record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RecordAt {
    /// Offset of the gzip member that holds it (as indexes and the JSONL
    /// `warc_offset` give it).
    pub offset: u64,
    /// Its `WARC-Type` (`warcinfo`, `request`, `response`, ...).
    pub warc_type: String,
    /// Its `WARC-Target-URI`, if it has one (a `warcinfo` has none).
    pub target_uri: Option<String>,
}

/// Repair the JSONL file `path` (records, one per line) from `from` on.
#[cfg(test)]
pub(crate) fn repair_jsonl(path: &Path, from: u64) -> Result<Repaired<Line>, StateError> {
    repair_lines(path, from, false, jsonl_url)
}

/// Repair the CDXJ file `path` (one index line per record) from `from` on.
#[cfg(test)]
pub(crate) fn repair_cdxj(path: &Path, from: u64) -> Result<Repaired<Line>, StateError> {
    repair_lines(path, from, false, cdxj_url)
}

/// The `url` of a JSONL line (without its newline), if it is a record.
#[cfg(test)]
fn jsonl_url(line: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Url {
        url: String,
    }
    // A record is an object; a struct would also take an array.
    if !line.starts_with(b"{") {
        return None;
    }
    serde_json::from_slice::<Url>(line).ok().map(|u| u.url)
}

/// The `url` of a CDXJ line: `SURT TIMESTAMP {JSON}`.
#[cfg(test)]
fn cdxj_url(line: &[u8]) -> Option<String> {
    jsonl_url(cdxj::line_json(line)?)
}

/// Open `path` for a repair: the file, its length, checked against `from`.
fn open(path: &Path, from: u64) -> Result<(File, u64), StateError> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(io_err("opening", path))?;
    let len = file.metadata().map_err(io_err("reading", path))?.len();
    if len < from {
        return Err(StateError::Shorter {
            path: path.to_path_buf(),
            len,
            from,
        });
    }
    Ok((file, len))
}

/// Cut a line file (JSONL, CDXJ) back to its last `\n`: the line a
/// `kill -9` tore while it was being written goes, the whole lines before
/// it stay, unread. For a file appended to with no checkpoint to start a
/// [`repair_jsonl`] from (a cluster node's, which Redis keeps the state
/// of). Bytes cut; 0 if the file is whole or does not exist.
pub(crate) fn cut_torn_line(path: &Path) -> Result<u64, StateError> {
    let (mut file, was) = match open(path, 0) {
        Ok(opened) => opened,
        Err(StateError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
            return Ok(0)
        }
        Err(e) => return Err(e),
    };
    // Back from the end a block at a time, to the last newline.
    const BLOCK: u64 = 1 << 16;
    let mut block = vec![0u8; BLOCK as usize];
    let mut end = was;
    let mut len = 0;
    while end > 0 {
        let start = end.saturating_sub(BLOCK);
        let size = usize::try_from(end.saturating_sub(start)).unwrap_or(0);
        let Some(chunk) = block.get_mut(..size) else {
            break;
        };
        file.seek(SeekFrom::Start(start))
            .and_then(|_| file.read_exact(chunk))
            .map_err(io_err("reading", path))?;
        if let Some(at) = chunk.iter().rposition(|&b| b == b'\n') {
            len = start.saturating_add(at as u64).saturating_add(1);
            break;
        }
        end = start;
    }
    cut(&file, path, was, len)?;
    Ok(was.saturating_sub(len))
}

/// The `.warc.gz` files in `dir` whose names start with `prefix`: each
/// name without the suffix, and its path (none if there is no `dir`).
pub(super) fn warc_files(dir: &Path, prefix: &str) -> Result<Vec<(String, PathBuf)>, StateError> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err("listing", dir)(e)),
    };
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(io_err("listing", dir))?;
        let stem = entry
            .file_name()
            .to_str()
            .filter(|n| n.starts_with(prefix))
            .and_then(|n| n.strip_suffix(".warc.gz"))
            .map(str::to_string);
        if let Some(stem) = stem {
            files.push((stem, entry.path()));
        }
    }
    Ok(files)
}

/// Repair the WARC files in `dir` that the latest process to write there
/// under `prefix` may have left torn, for a process that appends to what
/// an earlier one wrote and has no checkpoint (a cluster node come back):
/// of the files named `{prefix}{secs}-{pid}-s{shard}-{serial}.warc.gz`,
/// the last of each shard of the latest `{secs}-{pid}` (the files before
/// were closed whole, and an earlier process's by the one after it).
/// Each is repaired from its start; what was cut, one note a file.
pub(crate) fn repair_latest_warcs(dir: &Path, prefix: &str) -> Result<Vec<String>, StateError> {
    let files: Vec<_> = warc_files(dir, prefix)?
        .into_iter()
        .filter_map(|(stem, path)| {
            let (process, shard, serial) = stem.strip_prefix(prefix).and_then(warc_name_parts)?;
            Some((process, shard, serial, path))
        })
        .collect();
    let Some(latest) = files.iter().map(|f| f.0).max() else {
        return Ok(Vec::new());
    };
    // Shard → its last file (serial, path).
    let mut last: BTreeMap<u64, (u64, &Path)> = BTreeMap::new();
    for (process, shard, serial, path) in &files {
        if *process == latest && last.get(shard).is_none_or(|(s, _)| serial > s) {
            last.insert(*shard, (*serial, path));
        }
    }
    let mut notes = Vec::new();
    for (_, path) in last.into_values() {
        let repaired = repair_warc_in_place(path, 0)?;
        if let Some(why) = &repaired.torn {
            notes.push(format!(
                "{}: cut {} bytes ({why})",
                path.display(),
                repaired.cut()
            ));
        }
    }
    Ok(notes)
}

/// `{secs}-{pid}-s{shard}-{serial}` → ((secs, pid), shard, serial).
fn warc_name_parts(rest: &str) -> Option<((u64, u64), u64, u64)> {
    let mut parts = rest.split('-');
    let secs = parts.next()?.parse().ok()?;
    let pid = parts.next()?.parse().ok()?;
    let shard = parts.next()?.strip_prefix('s')?.parse().ok()?;
    let serial = parts.next()?.parse().ok()?;
    parts
        .next()
        .is_none()
        .then_some(((secs, pid), shard, serial))
}

/// Cut `file` to `len` if it is longer, and sync it, cut or not: what a
/// repair leaves is on disk (a kill leaves the last bytes an output
/// wrote in the page cache only, and a resume then builds on them).
fn cut(file: &File, path: &Path, was: u64, len: u64) -> Result<(), StateError> {
    if len < was {
        file.set_len(len).map_err(io_err("truncating", path))?;
    }
    file.sync_all().map_err(io_err("syncing", path))
}

#[cfg(test)]
fn repair_lines(
    path: &Path,
    from: u64,
    discard: bool,
    url_of: fn(&[u8]) -> Option<String>,
) -> Result<Repaired<Line>, StateError> {
    let mut items = Vec::new();
    let (was, len, torn) = scan_lines(path, from, discard, |offset, line| match url_of(line) {
        Some(url) => {
            items.push(Line { offset, url });
            true
        }
        None => false,
    })?;
    Ok(Repaired {
        was,
        len,
        torn,
        items,
    })
}

/// Repair the JSONL file `path` from `from` on, as [`repair_jsonl`] does,
/// but hand each whole line (without its newline) to `visit` instead of
/// keeping it: a crawl's whole log is read in bounded memory. `visit`
/// says whether the line is a record; one that is not is a torn tail if
/// it is the last line, else damage (an error, or with `discard` the end
/// of the valid part). The result's `items` stay empty.
pub(crate) fn repair_jsonl_with(
    path: &Path,
    from: u64,
    discard: bool,
    mut visit: impl FnMut(&[u8]) -> bool,
) -> Result<Repaired<()>, StateError> {
    let (was, len, torn) = scan_lines(path, from, discard, |_, line| {
        line.starts_with(b"{") && visit(line)
    })?;
    Ok(Repaired {
        was,
        len,
        torn,
        items: Vec::new(),
    })
}

/// Walk the whole lines of `path` from `from`, handing each (offset, line
/// without its newline) to `keep`, up to the torn tail (a last line
/// without its newline, or rejected); cut the file there. A line rejected
/// or too long with more bytes after it is damage: an error, and nothing
/// is cut, unless `discard` (then the file is cut there too). The length
/// before, the length after, and why it was cut.
fn scan_lines(
    path: &Path,
    from: u64,
    discard: bool,
    mut keep: impl FnMut(u64, &[u8]) -> bool,
) -> Result<(u64, u64, Option<String>), StateError> {
    let (file, was) = open(path, from)?;
    let mut reader = BufReader::with_capacity(1 << 16, &file);
    reader
        .seek(SeekFrom::Start(from))
        .map_err(io_err("reading", path))?;
    let mut torn = None;
    let mut pos = from;
    // Line numbers are known when the whole file is read.
    let mut number = 0u64;
    let mut buf = Vec::new();
    loop {
        let n = next_line(&mut reader, &mut buf, path)?;
        if n == 0 {
            break;
        }
        number = number.saturating_add(1);
        let bad = match buf.split_last() {
            Some((b'\n', line)) => {
                if keep(pos, line) {
                    None
                } else {
                    Some(format!("not a record: {}", preview(&buf)))
                }
            }
            _ if n as u64 >= MAX_LINE => Some(format!("a line over {MAX_LINE} bytes")),
            _ => {
                torn = Some(format!(
                    "the last line, at byte {pos}, has no newline ({n} bytes)"
                ));
                break;
            }
        };
        if let Some(what) = bad {
            let last = reader
                .fill_buf()
                .map_err(io_err("reading", path))?
                .is_empty();
            if !last && !discard {
                return Err(Damaged {
                    path: path.to_path_buf(),
                    place: if from == 0 {
                        format!("line {number}")
                    } else {
                        format!("the line {number} after byte {from}")
                    },
                    byte: pos,
                    what,
                }
                .into());
            }
            torn = Some(if last {
                format!("the last line, at byte {pos}, is {what}")
            } else {
                format!("the damaged line {number}, at byte {pos}, and all after it ({what})")
            });
            break;
        }
        pos = pos.saturating_add(n as u64);
    }
    cut(&file, path, was, pos)?;
    Ok((was, pos, torn))
}

/// The start of `bytes` as text, for a message.
pub(super) fn preview(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes.get(..60).unwrap_or(bytes));
    let text: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if bytes.len() > 60 {
        format!("{text:?}...")
    } else {
        format!("{text:?}")
    }
}

/// Repair the `.warc.gz` file `path` (every record or group of records its
/// own gzip member) from the member boundary `from` on: the first member
/// that does not inflate whole into whole WARC records, and everything
/// after it, is cut off. An I/O error reading the file is an error, never
/// taken for a tear (nothing is cut then).
#[cfg(test)]
pub(crate) fn repair_warc(path: &Path, from: u64) -> Result<Repaired<RecordAt>, StateError> {
    walk_warc(path, from, true)
}

/// [`repair_warc`], keeping no list of the records (its `items` stay
/// empty): a resume cuts a tear in files of any size in bounded memory.
pub(crate) fn repair_warc_in_place(
    path: &Path,
    from: u64,
) -> Result<Repaired<RecordAt>, StateError> {
    walk_warc(path, from, false)
}

fn walk_warc(path: &Path, from: u64, keep: bool) -> Result<Repaired<RecordAt>, StateError> {
    let (file, was) = open(path, from)?;
    let mut buffered = BufReader::with_capacity(1 << 18, &file);
    buffered
        .seek(SeekFrom::Start(from))
        .map_err(io_err("reading", path))?;
    let mut input = Counted {
        inner: buffered,
        read: 0,
        failed: None,
    };
    let mut items = Vec::new();
    let mut torn = None;
    let mut len = from;
    loop {
        match input.fill_buf() {
            Ok([]) => break,
            Ok(_) => {}
            Err(e) => return Err(io_err("reading", path)(e)),
        }
        let mut records = Vec::new();
        match member(&mut input, len, &mut records) {
            Ok(()) => {
                if keep {
                    items.append(&mut records);
                }
                len = from.saturating_add(input.read);
            }
            Err(why) => {
                if let Some(e) = input.failed.take() {
                    return Err(io_err("reading", path)(e));
                }
                torn = Some(format!("the gzip member at byte {len}: {why}"));
                break;
            }
        }
    }
    cut(&file, path, was, len)?;
    Ok(Repaired {
        was,
        len,
        torn,
        items,
    })
}

/// Read one gzip member from `input` and the WARC records it holds,
/// appending them to `out` (all at `offset`); or why it is not whole.
/// Checks the member's CRC and length: it must be read to its end.
fn member<R: BufRead>(input: R, offset: u64, out: &mut Vec<RecordAt>) -> Result<(), String> {
    let mut data = BufReader::with_capacity(1 << 16, GzDecoder::new(input));
    loop {
        let head = warc_head(&mut data)?;
        let (record, length) = parse_head(&head)?;
        let skipped = io::copy(&mut (&mut data).take(length), &mut io::sink()).map_err(gz)?;
        if skipped != length {
            return Err(format!(
                "the block of the {} record ends after {skipped} of its {length} bytes",
                record.warc_type
            ));
        }
        let mut end = [0u8; 4];
        data.read_exact(&mut end).map_err(gz)?;
        if &end != b"\r\n\r\n" {
            return Err(format!(
                "the block of the {} record is not followed by CRLF CRLF",
                record.warc_type
            ));
        }
        out.push(RecordAt { offset, ..record });
        // The decoder says the member has ended only once its trailer
        // (CRC-32 and length) checks.
        if data.fill_buf().map_err(gz)?.is_empty() {
            return Ok(());
        }
    }
}

/// An inflate error as a message.
fn gz(e: io::Error) -> String {
    match e.kind() {
        io::ErrorKind::UnexpectedEof => "it ends early (torn)".to_string(),
        _ => format!("it does not inflate ({e})"),
    }
}

/// The header of the next record, up to and including its blank line.
fn warc_head<R: BufRead>(data: &mut R) -> Result<Vec<u8>, String> {
    let mut head = Vec::new();
    loop {
        let room = MAX_WARC_HEAD.saturating_sub(head.len() as u64);
        if room == 0 {
            return Err(format!("a record header over {MAX_WARC_HEAD} bytes"));
        }
        let n = Read::take(&mut *data, room)
            .read_until(b'\n', &mut head)
            .map_err(gz)?;
        if n == 0 {
            return Err(if head.is_empty() {
                "it holds no record".to_string()
            } else {
                "its record header breaks off".to_string()
            });
        }
        if head == b"\r\n" {
            return Err("a blank line where a record should start".to_string());
        }
        if head.ends_with(b"\r\n\r\n") {
            return Ok(head);
        }
    }
}

/// A record header's type, target and `Content-Length`.
fn parse_head(head: &[u8]) -> Result<(RecordAt, u64), String> {
    let text = std::str::from_utf8(head).map_err(|_| "a record header that is not UTF-8")?;
    let mut lines = text.split("\r\n");
    let version = lines.next().unwrap_or("");
    if !version.starts_with("WARC/") {
        return Err(format!(
            "no WARC record: it starts {}",
            preview(version.as_bytes())
        ));
    }
    let mut warc_type = None;
    let mut target_uri = None;
    let mut length = None;
    for line in lines.filter(|l| !l.is_empty() && !l.starts_with([' ', '\t'])) {
        let Some((name, value)) = line.split_once(':') else {
            return Err(format!(
                "a header line without ':': {}",
                preview(line.as_bytes())
            ));
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("WARC-Type") {
            warc_type = Some(value.to_string());
        } else if name.eq_ignore_ascii_case("WARC-Target-URI") {
            target_uri = Some(value.to_string());
        } else if name.eq_ignore_ascii_case("Content-Length") {
            let n = value
                .parse::<u64>()
                .map_err(|_| format!("a bad Content-Length {}", preview(value.as_bytes())))?;
            length = Some(n);
        }
    }
    let warc_type = warc_type.ok_or("a record without WARC-Type")?;
    let length = length.ok_or("a record without Content-Length")?;
    Ok((
        RecordAt {
            offset: 0,
            warc_type,
            target_uri,
        },
        length,
    ))
}

/// A `BufRead` that counts the bytes taken from it (so the end of a gzip
/// member is known) and keeps the I/O error it passed on, if any, so a
/// failing disk is told from a torn member.
struct Counted<R> {
    inner: R,
    read: u64,
    failed: Option<io::Error>,
}

impl<R: BufRead> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        if let (Some(to), Some(from)) = (buf.get_mut(..n), available.get(..n)) {
            to.copy_from_slice(from);
        }
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        match self.inner.fill_buf() {
            Ok(bytes) => Ok(bytes),
            Err(e) => {
                if e.kind() != io::ErrorKind::Interrupted {
                    self.failed = Some(io::Error::new(e.kind(), e.to_string()));
                }
                Err(e)
            }
        }
    }

    fn consume(&mut self, amount: usize) {
        self.read = self.read.saturating_add(amount as u64);
        self.inner.consume(amount);
    }
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects)]
mod tests;
