//! What a shard archives and indexes: an HTTP exchange (a page's, or
//! robots.txt's) encoded for the WARC files — as a `revisit` of the first
//! record of the same payload with `--warc-dedup`, or of the earlier
//! capture a recrawl's `304 Not Modified` stands for — and the DNS lookups
//! made for them (`--warc-dns`); once queued for the shard's files, each
//! gets its CDXJ line (`--cdxj`) with the place it was given.
//!
//! Not the record format nor the index line (`ringcrawl_warc` and its
//! `cdxj`), nor the files (`crate::output::warc::file`).

use std::rc::Rc;
use std::time::SystemTime;

use crate::net::fetch::{FetchError, Response};
use ringcrawl_warc::cdxj::{self, Entry};
use ringcrawl_warc::{self as warc, RefersTo};

use super::recrawl::NotModified;
use super::Shard;

/// An exchange encoded for the WARC files, not yet queued.
pub(super) struct Encoded {
    bytes: Vec<u8>,
    written: warc::Written,
    uri: String,
    /// `WARC-Date` of its records.
    pub(super) date: SystemTime,
    /// The response's `Content-Type`, for the index.
    content_type: Option<String>,
    /// The HTTP status (none for a DNS record).
    status: Option<u16>,
    revisit: bool,
}

impl Encoded {
    /// `WARC-Payload-Digest` of the response.
    pub(super) fn payload_digest(&self) -> &str {
        &self.written.payload_digest
    }
}

/// Where a record's main WARC record lies.
pub(super) struct Stored {
    pub(super) file: Rc<str>,
    pub(super) offset: u64,
}

impl Shard {
    /// The exchange of `response`, fetched for `uri`, encoded for this
    /// shard's WARC files; None when not archiving (or no raw bytes were
    /// kept). A `revisit` record instead of the response: with
    /// `not_modified`, the recrawl's 304 that the earlier capture stands
    /// for (`response` made of it, its raw response the freshened head;
    /// profile server-not-modified, the capture's payload digest, so a
    /// replay finds the payload there); with `--warc-dedup`, a complete
    /// 2xx response with a payload archived before.
    pub(super) fn encode_exchange(
        &self,
        uri: &str,
        response: &mut Response,
        not_modified: Option<&NotModified>,
    ) -> Option<Encoded> {
        self.recording.warc.as_ref()?;
        let raw = response.raw.take()?;
        let truncated = warc_truncation(response);
        let ex = warc::Exchange {
            target_uri: uri,
            ip: response.peer.map(|peer| peer.ip()),
            date: raw.sent_at.unwrap_or_else(SystemTime::now),
            request: &raw.request,
            response: &raw.response,
            payload_offset: response.head.head_len,
        };
        let sha1 = not_modified.map_or_else(|| warc::payload_sha1(&ex), |nm| nm.digest);
        let status = response.head.status;
        let payload_len = raw.response.len().saturating_sub(response.head.head_len);
        let dedupable = not_modified.is_none()
            && truncated.is_none()
            && (200..300).contains(&status)
            && payload_len > 0;
        let dedup = self.recording.dedup.as_ref().filter(|_| dedupable);
        let revisit_of = dedup.and_then(|d| d.first(&sha1));
        let mut bytes = Vec::new();
        let revisit = match not_modified {
            Some(nm) => Some(warc::Revisit {
                profile: warc::SERVER_NOT_MODIFIED,
                of: &nm.refers_to,
            }),
            None => revisit_of.as_ref().map(|of| warc::Revisit {
                profile: warc::IDENTICAL_PAYLOAD_DIGEST,
                of,
            }),
        };
        let written = warc::archive(&ex, sha1, truncated, revisit, &mut bytes);
        if let (Some(dedup), None) = (dedup, &revisit_of) {
            // Two shards archiving one new payload at once both keep a
            // whole copy; the first remembered is the one referred to.
            dedup.remember(
                sha1,
                RefersTo {
                    record_id: written.record_id.clone(),
                    target_uri: uri.to_string(),
                    date: ex.date,
                },
            );
        }
        Some(Encoded {
            bytes,
            written,
            uri: uri.to_string(),
            date: ex.date,
            content_type: response.head.content_type.clone(),
            status: Some(status),
            revisit: revisit.is_some(),
        })
    }

    /// Archive the names the resolver looked up afresh since the last
    /// call (`--warc-dns`; the resolver keeps none otherwise) as `resource`
    /// records.
    pub(super) async fn archive_lookups(&self) {
        for lookup in self.fetching.resolver.take_lookups() {
            let mut bytes = Vec::new();
            let written = warc::dns_resource(
                &lookup.name,
                lookup.at,
                lookup.server,
                &lookup.answers,
                &mut bytes,
            );
            self.store(
                Encoded {
                    bytes,
                    written,
                    uri: format!("dns:{}", lookup.name),
                    date: lookup.at,
                    content_type: Some("text/dns".to_string()),
                    status: None,
                    revisit: false,
                },
                false,
            )
            .await;
        }
    }

    /// Queue `encoded` for this shard's WARC files and index it;
    /// where its response (or revisit) record lies, unless the files
    /// failed. The index line waits for the bytes (`index.rs`), and with
    /// `for_record` (a page's exchange) for the page's record too.
    pub(super) async fn store(&self, encoded: Encoded, for_record: bool) -> Option<Stored> {
        let warc = self.recording.warc.as_ref()?;
        let Encoded {
            bytes,
            written,
            uri,
            date,
            content_type,
            status,
            revisit,
        } = encoded;
        let placed = warc.write(bytes).await?;
        // The end of these bytes in the writer's count of bytes queued.
        let end = warc.placed();
        let offset = placed.offset.saturating_add(written.start as u64);
        if self.recording.index.is_some() {
            let mut line = Vec::new();
            cdxj::write_line(
                &Entry {
                    url: &uri,
                    date,
                    mime: if revisit {
                        Some("warc/revisit")
                    } else {
                        content_type.as_deref().map(cdxj::mime_of)
                    },
                    status,
                    digest: &written.payload_digest,
                    length: written.len as u64,
                    offset,
                    filename: &placed.file,
                },
                &mut line,
            );
            let place = for_record.then(|| (placed.file.to_string(), offset));
            self.hold_index_line(line, end, place);
        }
        Some(Stored {
            file: placed.file,
            offset,
        })
    }
}

/// Why an archived response is incomplete, for `WARC-Truncated`.
fn warc_truncation(response: &Response) -> Option<warc::Truncated> {
    match &response.body_error {
        None if response.capped => Some(warc::Truncated::Length),
        None => None,
        Some(FetchError::Deadline | FetchError::ReadTimeout) => Some(warc::Truncated::Time),
        Some(
            FetchError::Io(_)
            | FetchError::Tls(_)
            | FetchError::NoCloseNotify
            | FetchError::Body(ringcrawl_http1::BodyError::Truncated),
        ) => Some(warc::Truncated::Disconnect),
        Some(_) => Some(warc::Truncated::Unspecified),
    }
}
