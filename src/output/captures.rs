//! The captures of the crawl a recrawl asks against (`--since
//! RECORDS.jsonl`), read back from its records: for each URL it captured whole with a validator
//! (`ETag`, `Last-Modified`), those validators, when it was fetched, its
//! body's size, and where its `response` record lies in its WARC files.
//! The shards ask with the validators and, on `304 Not Modified`, read the
//! page back from that record.
//!
//! A capture is a record with a 2xx status, a whole body, no error and a
//! validator; or a `not_modified` record of an earlier recrawl, which
//! names the capture it stood for (`earlier`), so recrawls chain. Of a
//! URL captured in several lines (files), the last wins. Lines that are not
//! records (a torn last line of a killed crawl, damage) are skipped and
//! counted; an unreadable file is an error.
//!
//! Held in memory for the whole crawl, shared by every shard: about 130
//! bytes a capture (a 128-bit fingerprint of the URL as key, no URL
//! strings; dates and digests kept as numbers). Not the reading of the
//! WARC record (`ringcrawl_warc::read`) nor the conditional request
//! (`ringcrawl_http1`).

use std::collections::HashMap;
use std::fmt;
use std::hash::BuildHasher;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use foldhash::fast::RandomState;
use serde::Deserialize;
use thiserror::Error;

use crate::output::record::Earlier;
use ringcrawl_warc::timestamp::{parse_rfc3339, rfc3339_millis};

/// The captures of an earlier crawl, by URL.
pub(crate) struct Captures {
    /// Seeds of the two halves of a URL's fingerprint.
    high: RandomState,
    low: RandomState,
    captures: HashMap<u128, Capture>,
    /// WARC file names, each once.
    files: Vec<Box<str>>,
    /// Where the WARC files are looked for, in order.
    dirs: Vec<PathBuf>,
}

impl fmt::Debug for Captures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Captures")
            .field("captures", &self.captures.len())
            .field("files", &self.files.len())
            .field("dirs", &self.dirs)
            .finish()
    }
}

/// One URL's earlier capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Capture {
    /// Its `ETag`, as the server sent it.
    pub etag: Option<Box<str>>,
    /// Its `Last-Modified`, to the second.
    last_modified: Option<u64>,
    /// When it was fetched: ms since 1970.
    fetched_ms: u64,
    /// Bytes of its body as sent.
    pub encoded_size: u64,
    /// Where its `response` record lies, if it was archived.
    stored: Option<StoredAt>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct StoredAt {
    /// Index in `Captures::files`.
    file: u32,
    offset: u64,
    /// SHA-1 of its payload (`WARC-Payload-Digest`).
    digest: [u8; 20],
}

impl Capture {
    /// Its `Last-Modified` as an HTTP date (IMF-fixdate), for
    /// `If-Modified-Since`.
    pub(crate) fn last_modified(&self) -> Option<String> {
        self.last_modified
            .map(|secs| httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(secs)))
    }

    /// When it was fetched.
    pub(crate) fn fetched(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(self.fetched_ms)
    }

    /// The SHA-1 of its payload, if it was archived.
    pub(crate) fn digest(&self) -> Option<[u8; 20]> {
        self.stored.as_ref().map(|s| s.digest)
    }
}

/// What reading an earlier crawl's records came to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Loaded {
    /// Lines read.
    pub lines: u64,
    /// URLs with a capture to ask against.
    pub captures: u64,
    /// Lines that were not records, and the first of them (file, line).
    pub skipped: u64,
    pub first_skipped: Option<(PathBuf, u64)>,
}

impl fmt::Display for Loaded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} captures to revalidate of {} records",
            self.captures, self.lines
        )?;
        if let Some((path, line)) = &self.first_skipped {
            write!(
                f,
                "; {} lines not records, skipped (the first: {} line {line})",
                self.skipped,
                path.display()
            )?;
        }
        Ok(())
    }
}

/// Why an earlier crawl's records could not be read.
#[derive(Debug, Error)]
#[error("reading the earlier crawl's records {path}: {source}")]
pub(crate) struct LoadError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// The fields of a record line a recrawl reads (the others are skipped).
#[derive(Deserialize)]
struct Line {
    url: String,
    status: Option<u16>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    truncated: bool,
    #[serde(default)]
    timestamp: String,
    #[serde(default)]
    encoded_size: u64,
    #[serde(default)]
    payload_digest: Option<String>,
    #[serde(default)]
    warc_file: Option<String>,
    #[serde(default)]
    warc_offset: Option<u64>,
    #[serde(default)]
    etag: Option<String>,
    #[serde(default)]
    last_modified: Option<String>,
    #[serde(default)]
    earlier: Option<Earlier>,
}

impl Captures {
    /// An empty one: no URL has a capture.
    pub(crate) fn new(dirs: Vec<PathBuf>) -> Self {
        Captures {
            high: RandomState::default(),
            low: RandomState::default(),
            captures: HashMap::new(),
            files: Vec::new(),
            dirs,
        }
    }

    /// The captures in the record files `paths` (JSON Lines, as `-o`
    /// writes them), their WARC files looked for in `dirs`.
    pub(crate) fn load(paths: &[PathBuf], dirs: Vec<PathBuf>) -> Result<(Self, Loaded), LoadError> {
        let mut captures = Captures::new(dirs);
        let mut loaded = Loaded::default();
        for path in paths {
            let error = |source| LoadError {
                path: path.clone(),
                source,
            };
            let file = std::fs::File::open(path).map_err(error)?;
            captures
                .read(path, BufReader::new(file), &mut loaded)
                .map_err(error)?;
        }
        loaded.captures = captures.captures.len() as u64;
        Ok((captures, loaded))
    }

    /// Add the captures of the record lines of `input` (read from `path`).
    fn read(
        &mut self,
        path: &Path,
        input: impl BufRead,
        loaded: &mut Loaded,
    ) -> std::io::Result<()> {
        for (n, line) in (1u64..).zip(input.split(b'\n')) {
            let line = line?;
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            loaded.lines += 1;
            match serde_json::from_slice::<Line>(&line) {
                Ok(line) => self.add(line),
                Err(_) => {
                    loaded.skipped += 1;
                    loaded
                        .first_skipped
                        .get_or_insert_with(|| (path.to_path_buf(), n));
                }
            }
        }
        Ok(())
    }

    /// Keep `line`'s capture, if it is one.
    fn add(&mut self, line: Line) {
        let ok = line.status.is_some_and(|s| (200..300).contains(&s))
            && !line.truncated
            && line.error.is_none();
        let not_modified = line.status == Some(304) && line.earlier.is_some();
        if !(ok || not_modified) {
            return;
        }
        let last_modified = line
            .last_modified
            .as_deref()
            .and_then(|d| httpdate::parse_http_date(d).ok())
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map(|d| d.as_secs());
        if line.etag.is_none() && last_modified.is_none() {
            return;
        }
        let (timestamp, encoded_size, digest, file, offset) = match line.earlier {
            Some(e) if not_modified => (
                e.timestamp,
                e.encoded_size,
                e.payload_digest,
                e.warc_file,
                e.warc_offset,
            ),
            _ => (
                line.timestamp,
                line.encoded_size,
                line.payload_digest,
                line.warc_file,
                line.warc_offset,
            ),
        };
        // A file name as the WARC writer gives them, never a path: a
        // records file is input, and reads go nowhere else.
        let file = file.filter(|name| !name.contains(['/', '\\']) && !name.starts_with('.'));
        let stored = match (file, offset, digest.as_deref().and_then(sha1_of)) {
            (Some(file), Some(offset), Some(digest)) => Some(StoredAt {
                file: self.file_index(file),
                offset,
                digest,
            }),
            _ => None,
        };
        let fetched_ms = parse_rfc3339(&timestamp)
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let key = self.fingerprint(&line.url);
        self.captures.insert(
            key,
            Capture {
                etag: line.etag.map(String::into_boxed_str),
                last_modified,
                fetched_ms,
                encoded_size,
                stored,
            },
        );
    }

    fn file_index(&mut self, name: String) -> u32 {
        match self.files.iter().position(|f| **f == *name) {
            Some(i) => u32::try_from(i).unwrap_or(u32::MAX),
            None => {
                self.files.push(name.into_boxed_str());
                u32::try_from(self.files.len().saturating_sub(1)).unwrap_or(u32::MAX)
            }
        }
    }

    fn fingerprint(&self, url: &str) -> u128 {
        (u128::from(self.high.hash_one(url)) << 64) | u128::from(self.low.hash_one(url))
    }

    /// The earlier capture of `url`, if there is one to ask against.
    pub(crate) fn get(&self, url: &str) -> Option<&Capture> {
        if self.captures.is_empty() {
            return None;
        }
        self.captures.get(&self.fingerprint(url))
    }

    /// URLs with a capture.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.captures.len()
    }

    /// Where `capture`'s response record may lie: its file in each of the
    /// directories, in order, and its offset; None if it was not archived.
    pub(crate) fn places(&self, capture: &Capture) -> Option<(Vec<PathBuf>, u64)> {
        let stored = capture.stored.as_ref()?;
        let name = self.files.get(usize::try_from(stored.file).ok()?)?;
        let paths = self.dirs.iter().map(|d| d.join(&**name)).collect();
        Some((paths, stored.offset))
    }

    /// `capture` as the `earlier` of a `not_modified` record.
    pub(crate) fn earlier(&self, capture: &Capture) -> Earlier {
        let stored = capture.stored.as_ref();
        Earlier {
            timestamp: rfc3339_millis(capture.fetched()),
            warc_file: stored
                .and_then(|s| self.files.get(usize::try_from(s.file).ok()?))
                .map(|f| f.to_string()),
            warc_offset: stored.map(|s| s.offset),
            payload_digest: stored.map(|s| ringcrawl_warc::digest_text(&s.digest)),
            encoded_size: capture.encoded_size,
        }
    }
}

/// The SHA-1 of a `sha1:BASE32` digest.
fn sha1_of(digest: &str) -> Option<[u8; 20]> {
    let base32 = digest.strip_prefix("sha1:")?;
    let bytes = data_encoding::BASE32.decode(base32.as_bytes()).ok()?;
    bytes.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crawl(lines: &str) -> (Captures, Loaded) {
        let mut captures = Captures::new(vec![PathBuf::from("/w")]);
        let mut loaded = Loaded::default();
        captures
            .read(Path::new("prev.jsonl"), lines.as_bytes(), &mut loaded)
            .unwrap();
        loaded.captures = captures.len() as u64;
        (captures, loaded)
    }

    const DIGEST: &str = "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ";

    #[test]
    fn whole_2xx_pages_with_a_validator_are_captures_and_the_rest_are_not() {
        let lines = format!(
            r#"{{"url":"http://a.test/","status":200,"etag":"\"e1\"","timestamp":"2026-11-20T10:00:00.250Z","encoded_size":70,"payload_digest":"{DIGEST}","warc_file":"rc-1.warc.gz","warc_offset":512}}
{{"url":"http://a.test/dated","status":200,"last_modified":"Tue, 03 Nov 2026 10:00:00 GMT","timestamp":"2026-11-20T10:00:01.000Z"}}
{{"url":"http://a.test/none","status":200}}
{{"url":"http://a.test/404","status":404,"etag":"\"x\""}}
{{"url":"http://a.test/cut","status":200,"etag":"\"x\"","truncated":true}}
{{"url":"http://a.test/err","status":200,"etag":"\"x\"","error":"reset"}}
{{"url":"http://a.test/path","status":200,"etag":"\"x\"","payload_digest":"{DIGEST}","warc_file":"../../etc/passwd","warc_offset":0}}
{{"url":"http://a.test/torn","sta
"#
        );
        let (earlier, loaded) = crawl(&lines);
        assert_eq!(loaded.lines, 8);
        assert_eq!(loaded.captures, 3);
        assert_eq!(loaded.skipped, 1);
        assert_eq!(loaded.first_skipped, Some((PathBuf::from("prev.jsonl"), 8)));
        // A WARC file named by a path is not read: asked for, not read back.
        let path = earlier.get("http://a.test/path").unwrap();
        assert_eq!(earlier.places(path), None);

        let root = earlier.get("http://a.test/").unwrap();
        assert_eq!(root.etag.as_deref(), Some("\"e1\""));
        assert_eq!(root.last_modified(), None);
        assert_eq!(
            earlier.places(root),
            Some((vec![PathBuf::from("/w/rc-1.warc.gz")], 512))
        );
        assert_eq!(
            earlier.earlier(root),
            Earlier {
                timestamp: "2026-11-20T10:00:00.250Z".into(),
                warc_file: Some("rc-1.warc.gz".into()),
                warc_offset: Some(512),
                payload_digest: Some(DIGEST.into()),
                encoded_size: 70,
            }
        );
        let dated = earlier.get("http://a.test/dated").unwrap();
        assert_eq!(
            dated.last_modified().as_deref(),
            Some("Tue, 03 Nov 2026 10:00:00 GMT")
        );
        assert_eq!(earlier.places(dated), None);
        for url in ["none", "404", "cut", "err", "torn", "other"] {
            assert!(
                earlier.get(&format!("http://a.test/{url}")).is_none(),
                "{url}"
            );
        }
    }

    #[test]
    fn a_not_modified_record_stands_for_the_capture_it_names_and_the_last_line_wins() {
        let lines = format!(
            r#"{{"url":"http://a.test/","status":200,"etag":"\"old\"","timestamp":"2026-11-01T00:00:00.000Z"}}
{{"url":"http://a.test/","status":304,"etag":"\"e2\"","revalidation":"not_modified","earlier":{{"timestamp":"2026-11-20T10:00:00.250Z","warc_file":"rc-1.warc.gz","warc_offset":512,"payload_digest":"{DIGEST}","encoded_size":70}}}}
"#
        );
        let (earlier, _) = crawl(&lines);
        let root = earlier.get("http://a.test/").unwrap();
        assert_eq!(root.etag.as_deref(), Some("\"e2\""));
        assert_eq!(root.encoded_size, 70);
        assert_eq!(earlier.earlier(root).timestamp, "2026-11-20T10:00:00.250Z");
        assert!(earlier.places(root).is_some());
        assert!(root.digest().is_some());
    }

    #[test]
    fn a_missing_file_is_an_error_naming_it() {
        let e = Captures::load(&[PathBuf::from("/nonexistent/prev.jsonl")], Vec::new())
            .err()
            .unwrap();
        assert!(e.to_string().contains("/nonexistent/prev.jsonl"), "{e}");
    }
}
