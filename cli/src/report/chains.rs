//! Redirect chains, followed through the records as they stream by
//! ([`Chains`]): a record with a `next_url` starts a chain, or continues
//! the one whose target it is; the first record of a chain's target with
//! no `next_url` ends it. Counted: chains by length (redirects in them),
//! the longest ones ([`LONGEST`]), loops (a target already in its chain),
//! and chains that end in an error (an `error_kind`, or a status of 400
//! or more).
//!
//! Memory is bounded, not grown with the records: at most [`MAX_OPEN`]
//! chains are followed at once (their targets not recorded yet), each
//! with its start URL and a hash of each URL in it (at most
//! `--max-redirect` + 1 of them): some 20 MB with URLs of 100 bytes. Two
//! chains to one target go on as one, the longer, and count in `joined`. A chain started while that many are
//! open is counted in `not_followed`, not followed. A chain whose target
//! has no record after it stays open and is counted `unresolved` at the
//! end (its length is known, not how it ended): the target was crawled
//! before by another path (a redirect to a page already known is not
//! fetched again), was out of scope, or its record is in a file not given
//! or came before the redirect's: each shard hands its lines to the
//! writer at its own time, so a redirect fetched by one shard and its
//! target by another may be written in either order (the chain then
//! counts as two, the first unresolved). Knowing which would take a set of every URL recorded,
//! which grows with the records.
//!
//! Not the other counts (`mod.rs`) and not their HTML (`html.rs`).

use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;

/// Chains followed at once, at most.
pub const MAX_OPEN: usize = 65_536;
/// Chains listed as the longest.
pub const LONGEST: usize = 10;
/// URLs of a chain remembered for its loop check (a chain longer than
/// any `--max-redirect` a crawl would set is cut there).
const MAX_HOPS: usize = 64;

/// How a chain ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// At a record without a redirect: its status (None: no answer).
    Page(Option<u16>),
    /// At an error (the record's `error_kind`).
    Error(String),
    /// At a redirect to a URL already in the chain.
    Loop,
    /// Its target has no record after it.
    Unresolved,
}

/// One chain: where it started and ended, and its redirects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    pub start: String,
    pub end: String,
    pub hops: u32,
    pub how: End,
}

/// A chain not ended yet, keyed by its next target.
#[derive(Debug)]
struct Open {
    start: String,
    hops: u32,
    /// Hashes of the URLs in it so far.
    seen: Vec<u64>,
}

/// The records' redirect chains.
#[derive(Debug, Default)]
pub struct Chains {
    open: HashMap<String, Open>,
    /// Chains ended, by their redirects.
    pub by_hops: BTreeMap<u32, u64>,
    /// The longest, longest first (ties: the first seen).
    pub longest: Vec<Chain>,
    pub loops: u64,
    pub errors: u64,
    /// Chains started while [`MAX_OPEN`] were open.
    pub not_followed: u64,
    /// Chains that met another at its target: the two are counted as one
    /// (the longer), and this once.
    pub joined: u64,
    /// Chains whose target had no record after them (once finished).
    pub unresolved: u64,
}

impl Chains {
    /// One record: its `url`, `next_url`, `status` and `error_kind`.
    pub fn record(
        &mut self,
        url: &str,
        next_url: Option<&str>,
        status: Option<u16>,
        error_kind: Option<&str>,
    ) {
        let open = self.open.remove(url);
        let Some(next) = next_url else {
            if let Some(open) = open {
                let how = match (error_kind, status) {
                    (Some(kind), _) => End::Error(kind.to_string()),
                    (None, status) => End::Page(status),
                };
                self.end(open, url, how);
            }
            return;
        };
        let mut open = match open {
            Some(open) => open,
            None if self.open.len() >= MAX_OPEN => {
                self.not_followed += 1;
                return;
            }
            None => Open {
                start: url.to_string(),
                hops: 0,
                seen: vec![hash(url)],
            },
        };
        open.hops += 1;
        if let Some(kind) = error_kind {
            // A redirect past --max-redirect, or to an unusable place.
            return self.end(open, next, End::Error(kind.to_string()));
        }
        let h = hash(next);
        if open.seen.contains(&h) {
            return self.end(open, next, End::Loop);
        }
        if open.seen.len() < MAX_HOPS {
            open.seen.push(h);
        }
        match self.open.get_mut(next) {
            // Two chains to one target: one goes on, the longer (so the
            // longest are kept), and the other is counted as joined.
            Some(other) => {
                self.joined += 1;
                if open.hops > other.hops {
                    *other = open;
                }
            }
            None => {
                self.open.insert(next.to_string(), open);
            }
        }
    }

    /// The records are over: the chains still open are unresolved.
    pub fn finish(&mut self) {
        for (target, open) in std::mem::take(&mut self.open) {
            self.end(open, &target, End::Unresolved);
        }
        // The open map's order is not the records': list the longest
        // the same way every time.
        self.longest
            .sort_by(|a, b| b.hops.cmp(&a.hops).then_with(|| a.start.cmp(&b.start)));
    }

    /// Chains ended so far, and unresolved once finished.
    pub fn count(&self) -> u64 {
        self.by_hops.values().sum()
    }

    fn end(&mut self, open: Open, end: &str, how: End) {
        *self.by_hops.entry(open.hops).or_default() += 1;
        match &how {
            End::Loop => self.loops += 1,
            End::Error(_) | End::Page(Some(400..)) => self.errors += 1,
            End::Unresolved => self.unresolved += 1,
            End::Page(_) => {}
        }
        let weakest = self.longest.last().map_or(0, |c| c.hops);
        if self.longest.len() < LONGEST || open.hops > weakest {
            let at = self.longest.partition_point(|c| c.hops >= open.hops);
            self.longest.insert(
                at,
                Chain {
                    start: open.start,
                    end: end.to_string(),
                    hops: open.hops,
                    how,
                },
            );
            self.longest.truncate(LONGEST);
        }
    }
}

/// A URL's hash for the loop check (fixed seed: the same every run).
fn hash(url: &str) -> u64 {
    foldhash::fast::FixedState::with_seed(0x7265_6469_7263).hash_one(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record as the chains see it: url, next_url, status, error_kind.
    type Line<'a> = (&'a str, Option<&'a str>, Option<u16>, Option<&'a str>);

    fn feed(c: &mut Chains, records: &[Line]) {
        for (url, next, status, error) in records {
            c.record(url, *next, *status, *error);
        }
        c.finish();
    }

    #[test]
    fn chains_are_followed_by_target_and_counted_by_length() {
        let mut c = Chains::default();
        feed(
            &mut c,
            &[
                ("http://a/1", Some("http://a/2"), Some(301), None),
                ("http://a/x", None, Some(200), None),
                ("http://a/2", Some("http://a/3"), Some(302), None),
                ("http://a/3", None, Some(200), None),
                ("http://b/1", Some("http://b/2"), Some(301), None),
                ("http://b/2", None, Some(404), None),
                ("http://c/1", Some("http://c/2"), Some(301), None),
                ("http://c/2", Some("http://c/1"), Some(301), None),
                ("http://d/1", Some("http://d/2"), Some(301), None),
                ("http://d/2", None, None, Some("connect_refused")),
                ("http://e/1", Some("http://gone/"), Some(301), None),
            ],
        );
        assert_eq!(c.count(), 5);
        assert_eq!(c.by_hops, BTreeMap::from([(1, 3), (2, 2)]));
        assert_eq!((c.loops, c.errors, c.unresolved), (1, 2, 1));
        let first = &c.longest[0];
        assert_eq!(
            (&*first.start, &*first.end, first.hops, &first.how),
            ("http://a/1", "http://a/3", 2, &End::Page(Some(200)))
        );
        assert_eq!(c.longest[1].how, End::Loop);
        assert_eq!(c.longest.len(), 5);
    }

    #[test]
    fn a_redirect_past_the_limit_ends_its_chain_in_error_and_chains_join() {
        let mut c = Chains::default();
        feed(
            &mut c,
            &[
                ("http://a/1", Some("http://a/2"), Some(301), None),
                (
                    "http://a/2",
                    Some("http://a/3"),
                    Some(301),
                    Some("redirect_limit"),
                ),
                ("http://b/1", Some("http://z/"), Some(301), None),
                ("http://c/1", Some("http://z/"), Some(301), None),
                ("http://z/", None, Some(200), None),
            ],
        );
        assert_eq!(c.count(), 2, "b's and c's chains met at z: one");
        assert_eq!((c.errors, c.joined), (1, 1));
        assert_eq!(c.longest[0].how, End::Error("redirect_limit".into()));
    }

    #[test]
    fn at_most_max_open_chains_are_followed_at_once() {
        let mut c = Chains::default();
        for i in 0..MAX_OPEN + 5 {
            c.record(
                &format!("http://a/{i}"),
                Some(&format!("http://b/{i}")),
                Some(301),
                None,
            );
        }
        assert_eq!(c.not_followed, 5);
        // A followed chain goes on while the others are open.
        c.record("http://b/0", Some("http://c/0"), Some(301), None);
        c.record("http://c/0", None, Some(200), None);
        assert_eq!(c.by_hops, BTreeMap::from([(2, 1)]));
        c.finish();
        assert_eq!(c.unresolved, MAX_OPEN as u64 - 1);
    }
}
