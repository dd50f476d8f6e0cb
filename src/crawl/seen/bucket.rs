//! The seen-set's RAM bucket: a fixed-capacity open-addressing table of
//! 64-bit fingerprints, allocated once from a byte budget (no rehash, no
//! doubling spike), that is always sorted.
//!
//! Pure: no I/O, no clock. Slot 0 means empty, so a fingerprint 0 is stored
//! as 1 ([`nonzero`]).
//!
//! A key's home slot is `fp * homes / 2^64`, which grows with the key, and
//! collisions are resolved by linear probing *in key order* (Amble and
//! Knuth's ordered hash table): an insert walks from the home slot past
//! smaller keys and shifts the larger ones one slot up, to the next empty
//! slot. Probes never wrap around: the table has a tail of spare slots past
//! the last home slot, and an insert that would run off the end is refused
//! (the caller keeps that key elsewhere; at the loads used it is a rare
//! event). So the non-empty slots read in order are the keys sorted, at all
//! times, which gives two things:
//!
//! - a lookup stops at the first empty slot *or* the first larger key, so a
//!   miss costs about as little as a hit;
//! - freezing is free: [`Bucket::freeze`] only changes the type, and
//!   [`FrozenBucket::iter`] streams the keys in order for a merge, with no
//!   sort, no compaction pass and no second allocation. (The design asked
//!   for "compact + sort in place"; this gets the same sorted stream without
//!   the O(n log n) stall on the executor.)
//!
//! Loads: [`Bucket::is_full`] at 3/4 of the home slots (time to merge);
//! inserts are refused from 7/8 on, so probes stay short however long a
//! merge takes.

use crate::keys::nonzero;

/// Most spare slots past the last home slot.
const MAX_TAIL: usize = 1024;
/// Fewest slots a table has, whatever the budget.
const MIN_SLOTS: usize = 64;
/// Fewest bytes a table has.
pub(crate) const MIN_BYTES: usize = MIN_SLOTS * 8;

/// A fixed-capacity, always-sorted table of fingerprints.
pub(crate) struct Bucket {
    slots: Box<[u64]>,
    /// Home slots are `0..homes`; the rest of `slots` is the tail.
    homes: usize,
    len: usize,
}

impl Bucket {
    /// A table of as many slots as `bytes` holds (8 bytes a slot, at least
    /// 64), zeroed (by `calloc`: pages are touched only as keys arrive).
    pub(crate) fn with_bytes(bytes: usize) -> Bucket {
        Bucket::from_zeroed(vec![0; (bytes / 8).max(MIN_SLOTS)].into_boxed_slice())
    }

    /// Only from an all-zero box (a new one, or a [`Table`] cleared in full).
    fn from_zeroed(slots: Box<[u64]>) -> Bucket {
        let tail = (slots.len() / 8).clamp(1, MAX_TAIL);
        Bucket {
            homes: slots.len().saturating_sub(tail),
            slots,
            len: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Keys the table is meant for (its home slots).
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.homes
    }

    /// Bytes allocated.
    pub(crate) fn bytes(&self) -> usize {
        self.slots.len() * 8
    }

    /// At 3/4 load: time to freeze and merge.
    pub(crate) fn is_full(&self) -> bool {
        self.len >= self.homes / 4 * 3
    }

    /// Whether an insert of a new key can still succeed (under 7/8 load).
    pub(crate) fn has_room(&self) -> bool {
        self.len < self.homes / 8 * 7
    }

    pub(crate) fn contains(&self, fp: u64) -> bool {
        probe(&self.slots, self.homes, nonzero(fp))
    }

    /// Adds `fp`. False if it was there already, or if there is no room
    /// (past 7/8 load, or the probe would run off the table's end); then
    /// [`Bucket::contains`] tells which.
    pub(crate) fn insert(&mut self, fp: u64) -> bool {
        let fp = nonzero(fp);
        if !self.has_room() {
            return false;
        }
        // The slot fp belongs in: the first one from home that is empty or
        // holds a larger key. Every key before it is smaller (the table is
        // sorted, and a key at a slot before fp's home has a smaller home,
        // hence is smaller).
        let mut at = home(fp, self.homes);
        loop {
            match self.slots.get(at) {
                None => return false,
                Some(&s) if s == fp => return false,
                Some(&s) if s == 0 || s > fp => break,
                Some(_) => at += 1,
            }
        }
        // The end of this cluster: its keys from `at` on move up one slot,
        // each staying reachable (its home is still at or before it, with
        // no empty slot in between).
        let mut empty = at;
        loop {
            match self.slots.get(empty) {
                None => return false,
                Some(0) => break,
                Some(_) => empty += 1,
            }
        }
        match self.slots.get_mut(at..=empty) {
            Some(shifted) => {
                shifted.rotate_right(1);
                if let Some(first) = shifted.first_mut() {
                    *first = fp;
                }
            }
            None => return false,
        }
        self.len += 1;
        true
    }

    /// This bucket's keys in a new table of `bytes` (a bucket that started
    /// small grows, so a small crawl touches little memory), and the keys
    /// the new table had no room for (none unless it is barely larger).
    /// Inserted in order, each lands at or just past its home: O(keys).
    pub(crate) fn grow(self, bytes: usize) -> (Bucket, Vec<u64>) {
        let mut grown = Bucket::with_bytes(bytes);
        let mut left = Vec::new();
        for fp in self.slots.iter().copied().filter(|&s| s != 0) {
            if !grown.insert(fp) {
                left.push(fp);
            }
        }
        (grown, left)
    }

    /// Stops inserts: the table becomes a read-only sorted set of its keys.
    pub(crate) fn freeze(self) -> FrozenBucket {
        FrozenBucket {
            slots: self.slots,
            homes: self.homes,
            len: self.len,
        }
    }
}

/// A frozen bucket: its keys in order for a merge, and lookups meanwhile.
pub(crate) struct FrozenBucket {
    slots: Box<[u64]>,
    homes: usize,
    len: usize,
}

impl FrozenBucket {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn bytes(&self) -> usize {
        self.slots.len() * 8
    }

    pub(crate) fn contains(&self, fp: u64) -> bool {
        probe(&self.slots, self.homes, nonzero(fp))
    }

    /// The keys, ascending.
    pub(crate) fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.slots.iter().copied().filter(|&s| s != 0)
    }

    /// The memory back, to be cleared and reused as the next bucket.
    pub(crate) fn into_table(self) -> Table {
        Table {
            slots: self.slots,
            cleared: 0,
        }
    }
}

/// A used table being cleared, a few slots at a time (so a large one does
/// not stall the executor), for reuse as a [`Bucket`].
pub(crate) struct Table {
    slots: Box<[u64]>,
    /// Slots `0..cleared` are zero.
    cleared: usize,
}

impl Table {
    /// Zeroes up to `n` more slots; true once the whole table is zero.
    pub(crate) fn clear_some(&mut self, n: usize) -> bool {
        let end = self.cleared.saturating_add(n).min(self.slots.len());
        if let Some(part) = self.slots.get_mut(self.cleared..end) {
            part.fill(0);
        }
        self.cleared = end;
        self.cleared == self.slots.len()
    }

    /// The cleared table as an empty bucket (clearing what is left).
    pub(crate) fn into_bucket(mut self) -> Bucket {
        self.clear_some(usize::MAX);
        Bucket::from_zeroed(self.slots)
    }
}

/// Home slot of `fp` among `homes`: grows with `fp` (so the table can be
/// kept sorted) and uses its high bits.
#[inline]
fn home(fp: u64, homes: usize) -> usize {
    ((u128::from(fp) * homes as u128) >> 64) as usize
}

#[inline]
fn probe(slots: &[u64], homes: usize, fp: u64) -> bool {
    let from = home(fp, homes);
    for &s in slots.get(from..).unwrap_or(&[]) {
        if s == fp {
            return true;
        }
        if s == 0 || s > fp {
            return false;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    /// Deterministic well-mixed keys (splitmix64).
    fn keys(seed: u64, n: usize) -> Vec<u64> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = x;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                z ^ (z >> 31)
            })
            .collect()
    }

    #[test]
    fn inserted_keys_are_found_and_others_are_not() {
        let mut b = Bucket::with_bytes(64 << 10);
        let ks = keys(1, 3000);
        for &k in &ks {
            assert!(b.insert(k));
        }
        assert_eq!(b.len(), 3000);
        for &k in &ks {
            assert!(b.contains(k));
            assert!(!b.insert(k), "a second insert reports a duplicate");
        }
        for k in keys(2, 3000) {
            assert!(!b.contains(k));
        }
        assert_eq!(b.len(), 3000);
    }

    #[test]
    fn a_zero_fingerprint_is_stored_as_one() {
        let mut b = Bucket::with_bytes(4096);
        assert!(b.insert(0));
        assert!(b.contains(0) && b.contains(1));
        assert!(!b.insert(1));
        assert_eq!(b.freeze().iter().collect::<Vec<_>>(), vec![1]);
    }

    #[test]
    fn the_extreme_keys_fit_and_stay_in_order() {
        let mut b = Bucket::with_bytes(4096);
        for k in [u64::MAX, u64::MAX - 1, 1, 2, u64::MAX / 2, u64::MAX - 2] {
            assert!(b.insert(k));
        }
        let got: Vec<u64> = b.freeze().iter().collect();
        assert_eq!(
            got,
            vec![1, 2, u64::MAX / 2, u64::MAX - 2, u64::MAX - 1, u64::MAX]
        );
    }

    #[test]
    fn the_budget_sets_the_capacity_and_it_is_never_exceeded() {
        let mut b = Bucket::with_bytes(8 << 10); // 1024 slots
        assert_eq!(b.bytes(), 8 << 10);
        let cap = b.capacity();
        assert!(cap > 800 && cap < 1024, "{cap}");
        let mut inserted = 0;
        for k in keys(3, 4 * cap) {
            if b.is_full() {
                break;
            }
            assert!(b.insert(k));
            inserted += 1;
        }
        assert_eq!(inserted, cap / 4 * 3, "full at 3/4 load");
        // Past full, inserts go on until 7/8, then are refused.
        let more = keys(4, 4 * cap);
        let accepted = more.iter().filter(|&&k| b.insert(k)).count();
        assert!(accepted <= cap / 8 + 1, "{accepted}");
        assert!(!b.has_room());
        assert_eq!(b.bytes(), 8 << 10, "no growth");
        let refused = more.iter().find(|&&k| !b.contains(k)).unwrap();
        assert!(!b.insert(*refused));
        assert!(!b.contains(*refused));
    }

    #[test]
    fn a_frozen_bucket_lists_its_keys_sorted_and_answers_lookups() {
        let mut b = Bucket::with_bytes(256 << 10);
        let ks = keys(5, 20_000);
        for &k in &ks {
            b.insert(k);
        }
        let f = b.freeze();
        let want: BTreeSet<u64> = ks.iter().copied().collect();
        assert_eq!(
            f.iter().collect::<Vec<_>>(),
            want.into_iter().collect::<Vec<_>>()
        );
        assert_eq!(f.len(), 20_000);
        assert!(ks.iter().all(|&k| f.contains(k)));
        assert!(keys(6, 1000).iter().all(|&k| !f.contains(k)));
    }

    #[test]
    fn a_recycled_table_is_an_empty_bucket_of_the_same_size() {
        let mut b = Bucket::with_bytes(64 << 10);
        let ks = keys(7, 5000);
        for &k in &ks {
            b.insert(k);
        }
        let mut t = b.freeze().into_table();
        assert!(!t.clear_some(100));
        let mut b = t.into_bucket();
        assert!(b.is_empty());
        assert_eq!(b.bytes(), 64 << 10);
        assert!(ks.iter().all(|&k| !b.contains(k)));
        assert!(b.insert(ks[0]));
    }

    /// Inserts `ks`, checking each answer against a model; returns the
    /// model (the keys the bucket accepted).
    fn insert_checked(b: &mut Bucket, ks: &[u64]) -> Result<BTreeSet<u64>, TestCaseError> {
        let mut want = BTreeSet::new();
        for &k in ks {
            let known = want.contains(&nonzero(k));
            if b.insert(k) {
                prop_assert!(!known, "a known key inserted twice");
                want.insert(nonzero(k));
            } else if !known {
                prop_assert!(!b.contains(k), "a refused key is not there");
            }
        }
        for &k in &want {
            prop_assert!(b.contains(k));
        }
        prop_assert_eq!(b.len(), want.len());
        Ok(want)
    }

    proptest! {
        #[test]
        fn any_keys_read_back_sorted_and_deduplicated(ks in proptest::collection::vec(any::<u64>(), 0..600)) {
            let mut b = Bucket::with_bytes(8 << 10);
            let want = insert_checked(&mut b, &ks)?;
            let f = b.freeze();
            prop_assert_eq!(f.iter().collect::<Vec<_>>(), want.into_iter().collect::<Vec<_>>());
        }

        /// Keys all near one value share one home slot: one long cluster,
        /// many shifts, and near the top of the range inserts run off the
        /// table's end and are refused. The table stays sorted and exact.
        #[test]
        fn clustered_keys_stay_sorted(base in any::<u64>(), offs in proptest::collection::vec(0u64..5000, 0..700)) {
            let mut b = Bucket::with_bytes(8 << 10);
            let ks: Vec<u64> = offs.iter().map(|&o| base.wrapping_add(o)).collect();
            let want = insert_checked(&mut b, &ks)?;
            let f = b.freeze();
            prop_assert_eq!(f.iter().collect::<Vec<_>>(), want.into_iter().collect::<Vec<_>>());
        }
    }
}
