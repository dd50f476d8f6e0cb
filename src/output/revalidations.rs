//! What a recrawl's conditional requests (`--since`) came to: pages the
//! server said were unchanged (304), pages it sent again (changed),
//! pages fetched again in full because their earlier capture could not be
//! read back, and the body bytes the 304s spared the network (the earlier
//! captures' sizes as sent).
//!
//! Not the requests themselves (`crate::crawl`), nor the earlier crawl
//! (`earlier.rs`).

use serde::Serialize;

use crate::output::record::{Record, MODIFIED, NOT_MODIFIED, REFETCHED};

/// Counts of a recrawl's revalidations; all zero in a first crawl.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Revalidations {
    /// Answered `304 Not Modified`.
    pub not_modified: u64,
    /// Answered with the page (2xx).
    pub modified: u64,
    /// Answered 304, but fetched again in full.
    pub refetched: u64,
    /// Body bytes (as sent) of the earlier captures that 304s stood for.
    pub bytes_saved: u64,
}

impl Revalidations {
    /// Count `record`.
    pub fn add(&mut self, record: &Record) {
        match record.revalidation.as_deref() {
            Some(NOT_MODIFIED) => {
                self.not_modified += 1;
                self.bytes_saved += record.earlier.as_ref().map_or(0, |e| e.encoded_size);
            }
            Some(MODIFIED) => self.modified += 1,
            Some(REFETCHED) => self.refetched += 1,
            _ => {}
        }
    }

    /// Fold another shard's counts into these.
    pub fn merge(&mut self, other: &Revalidations) {
        self.not_modified += other.not_modified;
        self.modified += other.modified;
        self.refetched += other.refetched;
        self.bytes_saved += other.bytes_saved;
    }

    /// Nothing was asked conditionally.
    pub fn is_empty(&self) -> bool {
        self.not_modified + self.modified + self.refetched == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::record::Earlier;
    use std::borrow::Cow;

    #[test]
    fn each_revalidation_is_counted_and_304s_count_what_they_spared() {
        let mut counts = Revalidations::default();
        let mut record = Record::new("http://a.test/".into(), 0);
        counts.add(&record);
        assert!(counts.is_empty());
        record.revalidation = Some(Cow::Borrowed(NOT_MODIFIED));
        record.earlier = Some(Earlier {
            timestamp: "2026-11-20T10:00:00.000Z".into(),
            warc_file: None,
            warc_offset: None,
            payload_digest: None,
            encoded_size: 700,
        });
        counts.add(&record);
        record.revalidation = Some(Cow::Borrowed(MODIFIED));
        counts.add(&record);
        record.revalidation = Some(Cow::Borrowed(REFETCHED));
        counts.add(&record);
        let mut all = Revalidations::default();
        all.merge(&counts);
        all.merge(&counts);
        assert_eq!(
            all,
            Revalidations {
                not_modified: 2,
                modified: 2,
                refetched: 2,
                bytes_saved: 1400,
            }
        );
    }
}
