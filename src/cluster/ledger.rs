//! Which stream entries a node may acknowledge: the entries it read, the
//! URLs of each still to be done, and what became of each URL.
//!
//! Pure. An entry is acknowledged (and so deleted from Redis) only when
//! every URL in it is done: recorded here, or known already. A URL is
//! known by its fingerprint; when two entries bring one URL, either may
//! be counted down by either answer, since the rule only needs this: **as
//! long as a URL is not done, some entry holding it is not acknowledged**.
//! Of the answers a URL brought twice gets, at most one is `Recorded`, the
//! other `Known` (the second delivery found it queued), so the entry left
//! waiting holds it until the record comes. A URL the node drops without
//! doing it (its partition was lost or given up) makes its entry
//! *abandoned*: never acknowledged here, so the next owner claims it.
//!
//! Not the I/O (`node`), nor what a URL's fingerprint is (`crawl::seen`).

use std::collections::HashMap;

/// What became of a URL the node was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Fetched (or refused by a limit) and recorded.
    Recorded,
    /// Already known: recorded before, or queued from another entry.
    Known,
    /// Dropped undone: its partition is no longer this node's.
    Dropped,
}

/// An entry to acknowledge: its partition and stream id.
pub(crate) type Ack = (u32, String);

/// The entries read and not yet acknowledged or forgotten.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Entries waiting for each URL, by fingerprint.
    waiting: HashMap<u64, Waiters>,
    /// URLs given to the shards and not answered, per partition.
    open: HashMap<u32, usize>,
    /// All of them.
    total: usize,
}

#[derive(Debug, Default)]
struct Slot {
    partition: u32,
    id: String,
    /// URLs not answered yet.
    left: u32,
    /// Never to be acknowledged here (see [`Outcome::Dropped`]).
    abandoned: bool,
}

#[derive(Debug)]
enum Waiters {
    One(u32),
    Many(Vec<u32>),
}

impl Ledger {
    pub(crate) fn new() -> Self {
        Ledger::default()
    }

    /// Entry `id` of `partition` was read, with URLs of these fingerprints
    /// (given to the shards now). An entry without URLs is done at once:
    /// its acknowledgement.
    pub(crate) fn open(&mut self, partition: u32, id: String, fingerprints: &[u64]) -> Option<Ack> {
        if fingerprints.is_empty() {
            return Some((partition, id));
        }
        let slot = Slot {
            partition,
            id,
            left: u32::try_from(fingerprints.len()).unwrap_or(u32::MAX),
            abandoned: false,
        };
        let index = match self.free.pop() {
            Some(i) => {
                if let Some(s) = self.slots.get_mut(i as usize) {
                    *s = slot;
                }
                i
            }
            None => {
                self.slots.push(slot);
                u32::try_from(self.slots.len() - 1).unwrap_or(u32::MAX)
            }
        };
        for &fp in fingerprints {
            match self.waiting.get_mut(&fp) {
                None => {
                    self.waiting.insert(fp, Waiters::One(index));
                }
                Some(Waiters::One(first)) => {
                    let first = *first;
                    self.waiting.insert(fp, Waiters::Many(vec![first, index]));
                }
                Some(Waiters::Many(list)) => list.push(index),
            }
        }
        *self.open.entry(partition).or_default() += fingerprints.len();
        self.total += fingerprints.len();
        None
    }

    /// The URL of fingerprint `fp` was answered: the acknowledgement of
    /// its entry when that was the entry's last URL (and the entry is not
    /// abandoned). An answer for a URL no entry waits for is ignored.
    pub(crate) fn answer(&mut self, fp: u64, outcome: Outcome) -> Option<Ack> {
        let index = match self.waiting.remove(&fp)? {
            Waiters::One(i) => i,
            Waiters::Many(mut list) => {
                let i = list.pop()?;
                match list.len() {
                    0 => {}
                    1 => {
                        let only = list.first().copied().unwrap_or(i);
                        self.waiting.insert(fp, Waiters::One(only));
                    }
                    _ => {
                        self.waiting.insert(fp, Waiters::Many(list));
                    }
                }
                i
            }
        };
        let slot = self.slots.get_mut(index as usize)?;
        slot.left = slot.left.saturating_sub(1);
        slot.abandoned |= outcome == Outcome::Dropped;
        let partition = slot.partition;
        if let Some(open) = self.open.get_mut(&partition) {
            *open = open.saturating_sub(1);
            if *open == 0 {
                self.open.remove(&partition);
            }
        }
        self.total = self.total.saturating_sub(1);
        if slot.left > 0 {
            return None;
        }
        let done = std::mem::take(slot);
        self.free.push(index);
        (!done.abandoned).then_some((done.partition, done.id))
    }

    /// `partition` is no longer this node's: none of its entries read so
    /// far is acknowledged here (their URLs still answer, to free them).
    pub(crate) fn abandon(&mut self, partition: u32) {
        for slot in &mut self.slots {
            if slot.partition == partition && slot.left > 0 {
                slot.abandoned = true;
            }
        }
    }

    /// Whether entry `id` of `partition` is open here: read, its URLs
    /// with the shards, not yet done nor abandoned. (A scan: for the rare
    /// recovery after a lost reply, not for every entry.)
    pub(crate) fn knows(&self, partition: u32, id: &str) -> bool {
        self.slots
            .iter()
            .any(|s| s.left > 0 && !s.abandoned && s.partition == partition && s.id == id)
    }

    /// URLs of `partition` given to the shards and not answered.
    pub(crate) fn open_in(&self, partition: u32) -> usize {
        self.open.get(&partition).copied().unwrap_or(0)
    }

    /// URLs given to the shards and not answered, in all.
    pub(crate) fn open_urls(&self) -> usize {
        self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Outcome::*;

    #[test]
    fn an_entry_is_acknowledged_when_its_last_url_is_answered() {
        let mut ledger = Ledger::new();
        assert_eq!(ledger.open(3, "1-0".into(), &[10, 11, 12]), None);
        assert_eq!(ledger.open_in(3), 3);
        assert_eq!(ledger.answer(10, Recorded), None);
        assert_eq!(ledger.answer(12, Known), None);
        assert_eq!(ledger.answer(11, Recorded), Some((3, "1-0".into())));
        assert_eq!((ledger.open_in(3), ledger.open_urls()), (0, 0));
        assert_eq!(ledger.answer(11, Recorded), None, "nothing waits any more");
        assert_eq!(ledger.open(3, "2-0".into(), &[]), Some((3, "2-0".into())));
    }

    #[test]
    fn a_url_in_two_entries_keeps_one_unacknowledged_until_it_is_recorded() {
        let mut ledger = Ledger::new();
        ledger.open(0, "a".into(), &[7, 1]);
        ledger.open(0, "b".into(), &[7, 2]);
        // The second delivery of 7 finds it queued: one of the two
        // entries is counted down, but not both.
        assert_eq!(ledger.answer(7, Known), None);
        let mut acked: Vec<Ack> = [ledger.answer(1, Recorded), ledger.answer(2, Recorded)]
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(acked.len(), 1, "the entry still holding 7 waits");
        acked.extend(ledger.answer(7, Recorded));
        acked.sort();
        assert_eq!(acked, [(0, "a".into()), (0, "b".into())]);
    }

    #[test]
    fn an_entry_is_known_while_its_urls_are_with_the_shards() {
        let mut ledger = Ledger::new();
        ledger.open(1, "a".into(), &[1]);
        ledger.open(2, "b".into(), &[2]);
        assert!(ledger.knows(1, "a") && ledger.knows(2, "b"));
        assert!(!ledger.knows(2, "a") && !ledger.knows(1, "c"));
        ledger.answer(1, Recorded);
        assert!(!ledger.knows(1, "a"), "done");
        ledger.abandon(2);
        assert!(
            !ledger.knows(2, "b"),
            "abandoned: the next tenure claims it"
        );
    }

    #[test]
    fn a_dropped_url_abandons_its_entry_and_a_lost_partition_abandons_all() {
        let mut ledger = Ledger::new();
        ledger.open(1, "x".into(), &[1, 2]);
        ledger.open(2, "y".into(), &[3, 4]);
        ledger.open(2, "z".into(), &[5]);
        assert_eq!(ledger.answer(1, Dropped), None);
        assert_eq!(ledger.answer(2, Recorded), None, "x is abandoned");
        ledger.answer(3, Recorded);
        ledger.abandon(2);
        assert_eq!(ledger.answer(4, Recorded), None);
        assert_eq!(ledger.answer(5, Known), None);
        assert_eq!(ledger.open_urls(), 0, "every slot freed");
        // Freed slots are reused.
        ledger.open(1, "w".into(), &[9]);
        assert_eq!(ledger.answer(9, Recorded), Some((1, "w".into())));
        assert!(ledger.slots.len() <= 3);
    }
}
