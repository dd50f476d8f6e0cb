//! One record per fetched URL — the chapter's `FetchStatistic` plus timing
//! and the shard, and what Heritrix's crawl.log carries (time, hop path,
//! referrer, address, payload digest, where the WARC holds its bytes) — and
//! its JSON Lines form.
//!
//! Not the report: `stats.rs` aggregates records into counters.

use std::borrow::Cow;

use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::job::ErrorKind;
use ringcrawl_warc::timestamp::rfc3339_millis;

/// What became of one URL. Field names are the chapter's, so tools written
/// for its output read ours.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Record {
    /// The URL fetched (normalised).
    pub url: String,
    /// Redirect target (resolved), for 3xx answers with a usable Location.
    pub next_url: Option<String>,
    /// HTTP status, if a response head arrived.
    pub status: Option<u16>,
    /// One-line error message, if the URL failed.
    pub error: Option<String>,
    /// Why there is no whole answer (`connect_refused`, `dns`, ...).
    /// Some come with a page that was read all the same: a certificate let
    /// through by `--insecure`, a compressed stream that breaks off (what
    /// decoded before is used), an unknown content coding (the body as sent
    /// is used).
    pub error_kind: Option<ErrorKind>,
    /// Bytes of the body as a page: after de-chunking and after undoing its
    /// content codings, up to the body cap. A compressed body the crawl
    /// does not read (not a page, stylesheet or sitemap, and no page hook
    /// to hand it to) is not decoded: its size as sent.
    pub size: u64,
    /// Bytes of the body as sent, before its content codings were undone
    /// (after de-chunking); equal to `size` for an uncompressed body.
    pub encoded_size: u64,
    /// The body's `Content-Encoding` as named, lower-cased (`gzip`,
    /// `gzip, br`, `zstd`), if any. With a coding this crawler does not
    /// know (`none`, `utf-8`, `compress`) the body is read as sent, as
    /// browsers do, with an `unsupported_content_encoding` warning: the
    /// page's links are used all the same.
    pub content_encoding: Option<String>,
    /// Media type of the body, lower-cased, without parameters.
    pub content_type: Option<String>,
    /// Character encoding: for an HTML page, the one its links were read in
    /// (a WHATWG name, lower-cased); for anything else, the `charset` of the
    /// Content-Type, if any.
    pub encoding: Option<String>,
    /// Where an HTML page's `encoding` came from: `bom`, `header`, `meta`,
    /// `xml` (the XML declaration it starts with) or `default` (UTF-8 if
    /// the bytes are, else windows-1252).
    pub encoding_source: Option<Cow<'static, str>>,
    /// Distinct in-scope links on the page.
    pub num_urls: usize,
    /// Of those, links new to the crawl: queued because this page found
    /// them first (for a redirect, 1 if its target was new).
    pub num_new_urls: usize,
    /// The body is not whole, for either reason `truncated_by` names.
    pub truncated: bool,
    /// Why it is not: `limit` ( cut at a bound of the
    /// crawl's own, `--max-body`, the decoded-size bound or a sitemap's
    /// bounds; the part kept is used) or `transfer` (
    /// the connection or a deadline ended it early; `error_kind` says
    /// how). Left out of the JSON line when the body is whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated_by: Option<Cow<'static, str>>,
    /// What the page's `<meta name="robots">` tags and `X-Robots-Tag`
    /// headers say to this crawler: `noindex`, `nofollow` or `noindex,
    /// nofollow` (a `nofollow` page's links are not followed unless
    /// `--ignore-meta-robots`). Left out of the JSON line when neither.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub robots: Option<Cow<'static, str>>,
    /// Attempts made (more than one after network errors).
    pub tries: u32,
    /// Wall time from the first attempt to the end of the body, in ms.
    pub elapsed_ms: f64,
    /// TCP connect time of the last attempt, in ms (0 on a reused keep-alive
    /// connection).
    pub connect_ms: Option<f64>,
    /// Time from the start of the last attempt to the first response byte, in ms.
    pub first_byte_ms: Option<f64>,
    /// The shard (core) that fetched it.
    pub shard: usize,
    /// Handed to the library caller's hooks already (not written).
    #[serde(skip)]
    pub(crate) delivered: bool,
    /// When the request was sent (the WARC-Date of its records), or, for a
    /// URL never fetched, when it was recorded: RFC 3339 UTC with
    /// milliseconds.
    #[serde(default)]
    pub timestamp: String,
    /// Links followed from a root to reach it (redirects and embeds do
    /// not count).
    #[serde(default)]
    pub depth: u32,
    /// Heritrix's hop path from a root: `L` link, `R` redirect, `E` embed,
    /// `P` prerequisite, `M` sitemap; empty for a root (`crate::job::hops`).
    #[serde(default)]
    pub hops: String,
    /// The URL it was found on or redirected from; none for a root.
    #[serde(default)]
    pub via: Option<String>,
    /// The server address the answer came from.
    #[serde(default)]
    pub ip: Option<String>,
    /// The TLS version an https exchange used: `TLSv1.2` or `TLSv1.3`.
    /// Left out of the JSON line for http.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_version: Option<Cow<'static, str>>,
    /// The cipher suite it used, by its IANA name
    /// (`TLS_AES_128_GCM_SHA256`, `TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256`).
    /// Left out of the JSON line for http.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_cipher: Option<Cow<'static, str>>,
    /// With `--warc`: the response record's `WARC-Payload-Digest` (`sha1:`
    /// and the base32 SHA-1 of the bytes after the head as received, a
    /// chunked body with its framing, as warcio digests it). None without
    /// `--warc`.
    #[serde(default)]
    pub payload_digest: Option<String>,
    /// The WARC file holding its response (or revisit) record, with `--warc`.
    #[serde(default)]
    pub warc_file: Option<String>,
    /// Offset of that record's gzip member in `warc_file`.
    #[serde(default)]
    pub warc_offset: Option<u64>,
    /// The answer's `ETag`, as sent: what a recrawl (`--since`) asks with.
    /// Left out of the JSON line when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    /// The answer's `Last-Modified`, as sent. Left out when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
    /// In a recrawl (`--since`), for a URL asked for only if it changed:
    /// `not_modified` (the server answered 304; the page's links were
    /// read from the earlier capture, `earlier`), `modified` (it sent the
    /// page) or `refetched` (a 304 whose earlier capture could not be read
    /// back, so the page was asked for again, in full). Left out otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revalidation: Option<Cow<'static, str>>,
    /// For `not_modified`: the earlier capture the 304 stands for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earlier: Option<Earlier>,
    /// What is worth knowing about a fetch that did not fail it (a
    /// certificate accepted only because of `--insecure`); left out of
    /// the JSON line when there is none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
}

/// Something about a fetch that did not make it fail: a stable `kind`
/// (`tls_certificate_untrusted`) and a one-line `message`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Warning {
    /// A stable word, as an `error_kind` is.
    pub kind: String,
    /// What happened, one line.
    pub message: String,
}

/// `truncated_by` of a body cut at a bound of the crawl's own.
pub(crate) const CUT_AT_LIMIT: &str = "limit";
/// `truncated_by` of a body the connection or a deadline ended early.
pub(crate) const CUT_IN_TRANSFER: &str = "transfer";

/// `d` in milliseconds, rounded to the microsecond: JSON shows `2.224`,
/// not `2.2235869999999998`.
pub(crate) fn millis(d: std::time::Duration) -> f64 {
    d.as_micros() as f64 / 1e3
}

/// The coarse kind a record counts as in the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Kind {
    Html,
    Other,
    Redirect,
    Error,
}

/// `revalidation` of a page the server said had not changed.
pub(crate) const NOT_MODIFIED: &str = "not_modified";
/// `revalidation` of a page the server sent again, changed.
pub(crate) const MODIFIED: &str = "modified";
/// `revalidation` of a page fetched again in full after a 304, its earlier
/// capture unreadable.
pub(crate) const REFETCHED: &str = "refetched";

/// The earlier capture a `304 Not Modified` stands for: where its bytes
/// lie, so the next recrawl can refer to them in turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Earlier {
    /// When it was fetched (the `WARC-Date` of its records).
    pub timestamp: String,
    /// The WARC file holding its `response` record, if it was archived.
    #[serde(default)]
    pub warc_file: Option<String>,
    /// Offset of that record's gzip member.
    #[serde(default)]
    pub warc_offset: Option<u64>,
    /// Its `WARC-Payload-Digest`.
    #[serde(default)]
    pub payload_digest: Option<String>,
    /// Bytes of its body as sent: what the 304 spared the network.
    #[serde(default)]
    pub encoded_size: u64,
}

impl Record {
    /// A blank record for `url`, fetched by `shard`, to be filled in.
    pub fn new(url: String, shard: usize) -> Self {
        Record {
            url,
            next_url: None,
            status: None,
            error: None,
            error_kind: None,
            size: 0,
            encoded_size: 0,
            content_encoding: None,
            content_type: None,
            encoding: None,
            encoding_source: None,
            num_urls: 0,
            num_new_urls: 0,
            truncated: false,
            truncated_by: None,
            robots: None,
            tries: 0,
            elapsed_ms: 0.0,
            connect_ms: None,
            first_byte_ms: None,
            shard,
            delivered: false,
            timestamp: rfc3339_millis(SystemTime::now()),
            depth: 0,
            hops: String::new(),
            via: None,
            ip: None,
            tls_version: None,
            tls_cipher: None,
            payload_digest: None,
            warc_file: None,
            warc_offset: None,
            etag: None,
            last_modified: None,
            revalidation: None,
            earlier: None,
            warnings: Vec::new(),
        }
    }

    /// Mark the body cut, `by` `CUT_AT_LIMIT` or `CUT_IN_TRANSFER`;
    /// the first reason given stays.
    pub fn cut(&mut self, by: &'static str) {
        self.truncated = true;
        if self.truncated_by.is_none() {
            self.truncated_by = Some(Cow::Borrowed(by));
        }
    }

    /// Add a warning (`kind`, `message`) to this record.
    pub fn warn(&mut self, kind: &str, message: impl Into<String>) {
        self.warnings.push(Warning {
            kind: kind.to_string(),
            message: message.into(),
        });
    }

    /// Report category: errors first, then redirects, then HTML vs the rest.
    pub fn kind(&self) -> Kind {
        if self.error.is_some() && self.next_url.is_none() {
            Kind::Error
        } else if self.next_url.is_some()
            || self
                .status
                .is_some_and(|s| (300..400).contains(&s) && s != 304)
        {
            Kind::Redirect
        } else if self
            .content_type
            .as_deref()
            .is_some_and(|t| t == "text/html" || t == "application/xhtml+xml")
        {
            Kind::Html
        } else {
            Kind::Other
        }
    }

    /// The line `-v` shows for it: `[shard N] URL STATUS-OR-ERROR (K
    /// links)`, its warnings after; with `-vv` (`detail`) also its size,
    /// time, hop path and referrer.
    pub fn verbose_line(&self, detail: bool) -> String {
        use std::fmt::Write as _;
        let mut line = format!("[shard {}] {}", self.shard, self.url);
        match (&self.status, &self.error) {
            (_, Some(e)) => {
                let _ = write!(line, " {e}");
            }
            (Some(s), None) => {
                let _ = write!(line, " {s}");
            }
            (None, None) => {}
        }
        let _ = write!(line, " ({} links)", self.num_urls);
        for w in &self.warnings {
            let _ = write!(line, " warning {}: {}", w.kind, w.message);
        }
        if detail {
            let _ = write!(
                line,
                " {} bytes {} ms hops {:?} via {}",
                self.size,
                self.elapsed_ms,
                self.hops,
                self.via.as_deref().unwrap_or("-")
            );
        }
        line
    }

    /// Append this record as one JSON line (with its newline) to `out`.
    pub fn write_jsonl(&self, out: &mut Vec<u8>) {
        // Serialising plain strings and numbers into a Vec cannot fail.
        if serde_json::to_writer(&mut *out, self).is_ok() {
            out.push(b'\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> Record {
        Record {
            url: "http://a.test/".into(),
            next_url: None,
            status: Some(200),
            error: None,
            error_kind: None,
            size: 10,
            encoded_size: 4,
            content_encoding: Some("gzip".into()),
            content_type: Some("text/html".into()),
            encoding: Some("utf-8".into()),
            encoding_source: Some(Cow::Borrowed("header")),
            num_urls: 3,
            num_new_urls: 2,
            truncated: false,
            truncated_by: None,
            robots: None,
            tries: 1,
            elapsed_ms: 1.5,
            connect_ms: Some(0.1),
            first_byte_ms: Some(0.5),
            shard: 0,
            delivered: false,
            timestamp: "2023-11-14T22:13:20.123Z".into(),
            depth: 2,
            hops: "LR".into(),
            via: Some("http://a.test/from".into()),
            ip: Some("127.0.0.1".into()),
            tls_version: Some(Cow::Borrowed("TLSv1.3")),
            tls_cipher: Some(Cow::Borrowed("TLS_AES_128_GCM_SHA256")),
            payload_digest: Some("sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ".into()),
            warc_file: Some("x-s0-00000.warc.gz".into()),
            warc_offset: Some(1234),
            etag: Some("\"5f-1a\"".into()),
            last_modified: None,
            revalidation: Some(Cow::Borrowed(MODIFIED)),
            earlier: None,
            warnings: vec![Warning {
                kind: "tls_certificate_untrusted".into(),
                message: "unknown issuer".into(),
            }],
        }
    }

    #[test]
    fn record_round_trips_as_one_json_line() {
        let mut out = Vec::new();
        record().write_jsonl(&mut out);
        assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1);
        let back: Record = serde_json::from_slice(&out).unwrap();
        assert_eq!(back, record());
    }

    #[test]
    fn a_record_without_warnings_leaves_the_field_out() {
        let mut r = record();
        r.warnings.clear();
        let mut out = Vec::new();
        r.write_jsonl(&mut out);
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains("warnings"), "{text}");
        let back: Record = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn an_https_record_names_its_tls_version_and_an_http_one_leaves_it_out() {
        let mut out = Vec::new();
        record().write_jsonl(&mut out);
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("\"tls_version\":\"TLSv1.3\",\"tls_cipher\":\"TLS_AES_128_GCM_SHA256\""),
            "{text}"
        );
        let mut r = record();
        (r.tls_version, r.tls_cipher) = (None, None);
        let mut out = Vec::new();
        r.write_jsonl(&mut out);
        let text = String::from_utf8(out).unwrap();
        assert!(
            !text.contains("tls_version") && !text.contains("tls_cipher"),
            "{text}"
        );
        let back: Record = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn timings_are_rounded_to_the_microsecond() {
        let d = std::time::Duration::from_nanos(2_223_586_999);
        assert_eq!(millis(d), 2223.586);
        let mut r = record();
        r.elapsed_ms = millis(std::time::Duration::from_nanos(2_223_587));
        let mut out = Vec::new();
        r.write_jsonl(&mut out);
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("\"elapsed_ms\":2.223,"), "{text}");
    }

    #[test]
    fn verbose_lines_name_the_shard_and_very_verbose_ones_say_more() {
        let r = record();
        let line = r.verbose_line(false);
        assert!(
            line.starts_with("[shard 0] http://a.test/ 200 (3 links)"),
            "{line}"
        );
        assert!(
            line.contains("warning tls_certificate_untrusted: unknown issuer"),
            "{line}"
        );
        let more = r.verbose_line(true);
        assert!(
            more.starts_with(&line) && more.contains("hops \"LR\" via http://a.test/from"),
            "{more}"
        );
    }

    #[test]
    fn a_warning_is_not_an_error() {
        let mut r = record();
        r.warn("tls_certificate_untrusted", "expired");
        assert_eq!(r.kind(), Kind::Html);
    }

    #[test]
    fn kinds_follow_the_chapter_report() {
        let mut r = record();
        assert_eq!(r.kind(), Kind::Html);
        r.content_type = Some("image/png".into());
        assert_eq!(r.kind(), Kind::Other);
        r.status = Some(301);
        r.next_url = Some("http://a.test/b".into());
        assert_eq!(r.kind(), Kind::Redirect);
        r.next_url = None;
        r.status = None;
        r.error = Some("refused".into());
        assert_eq!(r.kind(), Kind::Error);
    }
}
