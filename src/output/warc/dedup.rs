//! The crawl-wide memory of payloads already archived, for `--warc-dedup`:
//! payload digest → the first record that holds it (its id, target URI and
//! date), so a later response with the same payload is archived as a
//! `revisit` record referring to it instead of a second copy.
//!
//! Shared by all shards (a payload repeats across hosts, and a host's pages
//! are fetched on several cores when lent): 64 stripes, each a mutex over a
//! map, chosen by the digest's first byte, so two cores rarely meet on a
//! lock and none holds one for longer than a map lookup.
//!
//! Memory is bounded: an entry is the 20-byte digest, the 16-byte record
//! id, the date and the URI (about 90 bytes plus the URI's length, with the
//! map's overhead); once the entries reach [`Dedup::budget`] bytes (by
//! default [`DEFAULT_BUDGET`], 256 MiB: about 1.7 million payloads of
//! 60-byte URIs) new payloads are no longer remembered — they are archived
//! whole, as without dedup, and the ones remembered still deduplicate.
//! Not the record format (`ringcrawl_warc::archive` writes the revisit).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::SystemTime;

use foldhash::{HashMap, HashMapExt};
use ringcrawl_warc::RefersTo;

use crate::output::writer::lock;

/// Bytes of entries kept by default.
pub(crate) const DEFAULT_BUDGET: usize = 256 << 20;

/// Fixed cost of one entry besides its URI: digest, id, date, the URI's
/// pointer and length, the map's slot and control byte, rounded up.
const ENTRY_OVERHEAD: usize = 96;

const STRIPES: usize = 64;

/// The first record of each payload, crawl-wide.
pub(crate) struct Dedup {
    stripes: Vec<Mutex<HashMap<[u8; 20], Original>>>,
    /// Bytes of entries so far (an estimate: see [`ENTRY_OVERHEAD`]).
    used: AtomicUsize,
    budget: usize,
}

struct Original {
    id: String,
    uri: Box<str>,
    date: SystemTime,
}

impl Dedup {
    pub(crate) fn new(budget: usize) -> Self {
        Dedup {
            stripes: (0..STRIPES).map(|_| Mutex::new(HashMap::new())).collect(),
            used: AtomicUsize::new(0),
            budget,
        }
    }

    /// The first record of the payload with SHA-1 `digest`, if one was
    /// archived and remembered before.
    pub(crate) fn first(&self, digest: &[u8; 20]) -> Option<RefersTo> {
        let map = lock(self.stripe(digest)?);
        map.get(digest).map(|first| RefersTo {
            record_id: first.id.clone(),
            target_uri: first.uri.to_string(),
            date: first.date,
        })
    }

    /// Remember `first` as the record of the payload with SHA-1 `digest`,
    /// unless one is remembered already or the budget is spent.
    pub(crate) fn remember(&self, digest: [u8; 20], first: RefersTo) {
        let Some(stripe) = self.stripe(&digest) else {
            return;
        };
        let mut map = lock(stripe);
        if map.contains_key(&digest) {
            return;
        }
        let cost = ENTRY_OVERHEAD
            .saturating_add(first.target_uri.len())
            .saturating_add(first.record_id.len());
        if self
            .used
            .fetch_add(cost, Ordering::Relaxed)
            .saturating_add(cost)
            <= self.budget
        {
            map.insert(
                digest,
                Original {
                    id: first.record_id,
                    uri: first.target_uri.into_boxed_str(),
                    date: first.date,
                },
            );
        } else {
            self.used.fetch_sub(cost, Ordering::Relaxed);
        }
    }

    fn stripe(&self, digest: &[u8; 20]) -> Option<&Mutex<HashMap<[u8; 20], Original>>> {
        self.stripes.get(usize::from(digest[0]) % STRIPES)
    }

    /// Payloads remembered.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.stripes.iter().map(|s| lock(s).len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    fn original(n: usize) -> RefersTo {
        RefersTo {
            record_id: format!("<urn:uuid:{n}>"),
            target_uri: format!("http://a.test/{n}"),
            date: UNIX_EPOCH,
        }
    }

    #[test]
    fn a_repeated_payload_refers_to_its_first_record() {
        let dedup = Dedup::new(DEFAULT_BUDGET);
        assert_eq!(dedup.first(&[1; 20]), None);
        dedup.remember([1; 20], original(1));
        dedup.remember([2; 20], original(2));
        for n in 3..10 {
            assert_eq!(dedup.first(&[1; 20]), Some(original(1)));
            dedup.remember([1; 20], original(n));
        }
        assert_eq!(dedup.first(&[1; 20]), Some(original(1)), "the first stays");
        assert_eq!(dedup.len(), 2);
    }

    #[test]
    fn past_the_budget_new_payloads_are_not_remembered() {
        // Room for 10 entries of the largest size below (8-byte URI tail,
        // 13-byte id), for 100 smaller ones.
        let dedup = Dedup::new(10 * (ENTRY_OVERHEAD + 16 + 8 + 13 + 2));
        for n in 0..100u8 {
            dedup.remember([n; 20], original(usize::from(n)));
        }
        let kept = dedup.len();
        assert!((10..=13).contains(&kept), "{kept} entries kept");
        assert_eq!(
            dedup.first(&[0; 20]),
            Some(original(0)),
            "remembered ones still deduplicate"
        );
        assert_eq!(dedup.first(&[99; 20]), None);
    }
}
