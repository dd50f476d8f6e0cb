//! A recrawl's side of a page (`--since`): the validators its URL is asked
//! with, and on `304 Not Modified` the earlier capture read back from its
//! WARC record (glommio reads; a few files kept open) to stand in for the
//! answer: its head brought up to date by the 304's fields, as a cache
//! would serve it (`http::freshen`), and its body as received then, so the
//! page's links are read as if it had been fetched.
//!
//! Not the earlier crawl's captures (`output::captures`), the record's parsing
//! (`ringcrawl_warc::read`), nor the `revisit` record (`archive.rs`).

use std::borrow::Cow;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use foldhash::{HashSet, HashSetExt};
use glommio::io::BufferedFile;
use url::Url;

use crate::net::fetch::{RawExchange, Response};
use crate::output::captures::Capture;
use crate::output::record::{Earlier, Record, MODIFIED, NOT_MODIFIED, REFETCHED};
use ringcrawl_http1::{self as http, BodyDecoder, HeadScan, Validators};
use ringcrawl_warc::read::{self, ReadError};
use ringcrawl_warc::timestamp::parse_rfc3339;
use ringcrawl_warc::RefersTo;

use super::Shard;

/// Earlier WARC files kept open a shard.
const OPEN_FILES: usize = 8;
/// Bytes read at first from a record's offset (doubled while the record
/// goes on past them).
const FIRST_READ: usize = 64 * 1024;

/// A shard's earlier WARC files: a few kept open, the paths not found.
pub(super) struct CaptureFiles {
    /// The most recently used last.
    open: RefCell<Vec<(PathBuf, Rc<BufferedFile>)>>,
    /// Paths that could not be opened (as many as the earlier crawl had
    /// files in each place looked in, at most).
    missing: RefCell<HashSet<PathBuf>>,
}

impl Default for CaptureFiles {
    fn default() -> Self {
        CaptureFiles {
            open: RefCell::new(Vec::new()),
            missing: RefCell::new(HashSet::new()),
        }
    }
}

/// An earlier capture standing in for a `304 Not Modified` (beside the
/// response made of it).
pub(super) struct NotModified {
    /// The capture's `response` record, for the `revisit` one.
    pub(super) refers_to: RefersTo,
    /// The SHA-1 of its payload.
    pub(super) digest: [u8; 20],
    /// The capture, as the record names it.
    earlier: Earlier,
    /// The validators to ask with next time: the 304's, else the capture's.
    etag: Option<String>,
    last_modified: Option<String>,
}

/// What a recrawl made of a page's request.
pub(super) enum Revalidation {
    /// Not asked conditionally (no capture), or answered with neither a
    /// 2xx nor a 304.
    Unasked,
    /// 304: the earlier capture stands for the answer.
    NotModified(Box<NotModified>),
    /// A 2xx: the page changed.
    Modified,
    /// A 304 whose capture could not be read back: asked again in full.
    Refetched,
}

impl Revalidation {
    /// Say it on `record`, after the answer filled it. A page not modified
    /// is a 304 of no bytes received (its links, type and encoding those
    /// of the capture), with the capture named.
    pub(super) fn mark(self, record: &mut Record) {
        let said = match self {
            Revalidation::Unasked => return,
            Revalidation::NotModified(nm) => {
                let NotModified {
                    earlier,
                    etag,
                    last_modified,
                    ..
                } = *nm;
                record.status = Some(304);
                record.size = 0;
                record.encoded_size = 0;
                record.content_encoding = None;
                record.etag = etag;
                record.last_modified = last_modified;
                record.earlier = Some(earlier);
                NOT_MODIFIED
            }
            Revalidation::Modified => MODIFIED,
            Revalidation::Refetched => REFETCHED,
        };
        record.revalidation = Some(Cow::Borrowed(said));
    }
}

/// The validators `capture` is asked against with.
pub(super) fn validators(capture: &Capture) -> Validators {
    Validators {
        etag: capture.etag.clone(),
        last_modified: capture.last_modified().map(String::into_boxed_str),
    }
}

impl Shard {
    /// The earlier crawl's capture of `url`, in a recrawl.
    pub(super) fn earlier_capture(&self, url: &str) -> Option<&Capture> {
        self.fetching.captures.as_deref()?.get(url)
    }

    /// `capture` of `url`, read back from its WARC record, standing in for
    /// the server's `304 Not Modified` `answer`; why not, if it cannot be
    /// (not archived, its file gone or damaged, another URL's record).
    pub(super) async fn not_modified(
        &self,
        url: &Url,
        capture: &Capture,
        answer: Response,
    ) -> Result<(Response, NotModified), String> {
        let captures = self.fetching.captures.as_deref().ok_or("not a recrawl")?;
        let (paths, offset) = captures
            .places(capture)
            .ok_or("its earlier capture was not archived")?;
        let digest = capture
            .digest()
            .ok_or("its earlier capture has no digest")?;
        let max_block = self
            .config
            .max_body
            .saturating_mul(2)
            .saturating_add(self.config.max_head);
        let mut stored = Err(format!(
            "its earlier WARC file is in none of {}",
            places(&paths)
        ));
        for path in &paths {
            if let Some(file) = self.fetching.capture_files.file(path).await {
                stored = read_record(&file, offset, max_block)
                    .await
                    .map_err(|e| format!("{} at {offset}: {e}", path.display()));
                break;
            }
        }
        let stored = stored?;
        if stored.kind != "response" || stored.target_uri != url.as_str() {
            return Err(format!(
                "the earlier record is a {} of {}, not this page's response",
                stored.kind, stored.target_uri
            ));
        }
        if stored.payload_digest.as_deref() != Some(&ringcrawl_warc::digest_text(&digest)) {
            return Err("the earlier record's payload digest is not its capture's".into());
        }
        let mut scan = HeadScan::new(self.config.max_head);
        let head = scan
            .parse(&stored.block)
            .map_err(|e| e.to_string())?
            .ok_or("the earlier record's response head has no end")?;
        let (head_bytes, payload) = stored.block.split_at(head.head_len.min(stored.block.len()));
        let mut body = Vec::new();
        let mut decoder = BodyDecoder::new(head.framing, self.config.max_body);
        decoder
            .feed(payload, &mut body)
            .and_then(|_| decoder.at_eof())
            .map_err(|e| format!("the earlier body: {e}"))?;
        // The 304's own fields, where it was kept (for the archive or the
        // page hooks); otherwise the capture's head as it was.
        let answered = answer
            .raw
            .as_ref()
            .map(|raw| raw.response.as_slice())
            .or(answer.head_bytes.as_deref());
        let fresh = match answered {
            Some(answered) => http::freshen(head_bytes, answered)
                .ok_or("the earlier response head could not be brought up to date")?,
            None => head_bytes.to_vec(),
        };
        let head = HeadScan::new(fresh.len().saturating_add(1))
            .parse(&fresh)
            .map_err(|e| e.to_string())?
            .ok_or("the freshened head has no end")?;
        let date = parse_rfc3339(&stored.date).unwrap_or_else(|| capture.fetched());
        let etag = answer
            .head
            .etag
            .clone()
            .or_else(|| capture.etag.as_deref().map(str::to_string));
        let last_modified = answer
            .head
            .last_modified
            .clone()
            .or_else(|| capture.last_modified());
        let response = Response {
            head,
            body,
            capped: false,
            body_error: None,
            peer: answer.peer,
            connect: answer.connect,
            first_byte: answer.first_byte,
            raw: answer.raw.map(|raw| RawExchange {
                request: raw.request,
                response: fresh.clone(),
                sent_at: raw.sent_at,
            }),
            head_bytes: answer.head_bytes.map(|_| fresh),
            tls_warning: answer.tls_warning,
            tls: answer.tls,
        };
        let nm = NotModified {
            refers_to: RefersTo {
                record_id: stored.record_id,
                target_uri: stored.target_uri,
                date,
            },
            digest,
            earlier: captures.earlier(capture),
            etag,
            last_modified,
        };
        Ok((response, nm))
    }
}

impl CaptureFiles {
    /// The file at `path`, opened now or kept open; None if it cannot be
    /// opened (remembered: it is not asked for again).
    async fn file(&self, path: &Path) -> Option<Rc<BufferedFile>> {
        let kept = {
            let mut open = self.open.borrow_mut();
            let at = open.iter().position(|(p, _)| p == path);
            at.map(|at| {
                let entry = open.remove(at);
                let file = entry.1.clone();
                open.push(entry);
                file
            })
        };
        if kept.is_some() {
            return kept;
        }
        if self.missing.borrow().contains(path) {
            return None;
        }
        match BufferedFile::open(path).await {
            Ok(file) => {
                let file = Rc::new(file);
                let mut open = self.open.borrow_mut();
                if open.len() >= OPEN_FILES {
                    // Closed when its last reader drops it.
                    open.remove(0);
                }
                open.push((path.to_path_buf(), file.clone()));
                Some(file)
            }
            Err(e) => {
                log::debug!("earlier WARC file {}: {e}", path.display());
                self.missing.borrow_mut().insert(path.to_path_buf());
                None
            }
        }
    }
}

/// The record whose gzip member starts at `offset` of `file`, its block
/// at most `max_block` bytes.
async fn read_record(
    file: &BufferedFile,
    offset: u64,
    max_block: usize,
) -> Result<read::Stored, String> {
    // A member is not much larger than its record (gzip's overhead on
    // bytes that do not compress is small).
    let most = max_block
        .saturating_add(max_block / 8)
        .saturating_add(1 << 20);
    let mut want = FIRST_READ.min(most);
    loop {
        let bytes = file
            .read_at(offset, want)
            .await
            .map_err(|e| e.to_string())?;
        match read::record_at(&bytes, max_block) {
            Err(ReadError::Short) if bytes.len() == want && want < most => {
                want = want.saturating_mul(2).min(most);
            }
            Err(ReadError::Short) => return Err("the file ends inside the record".into()),
            result => return result.map_err(|e| e.to_string()),
        }
    }
}

/// `paths`, for a message.
fn places(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    names.join(", ")
}
