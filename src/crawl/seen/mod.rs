//! A shard's seen-set in bounded memory: a sieve of 64-bit URL
//! fingerprints, a RAM bucket merged from time to time into one sorted run
//! on disk, after BUbiNG's sieve and IRLbot's DRUM.
//!
//! What it is: the answer to "has this shard ever seen this URL?" for a
//! crawl of any length, in a memory budget fixed up front plus about 1.3
//! bytes per key on disk. What it is not: a store of URLs (only
//! fingerprints; nothing comes back out), a queue, or shareable between
//! shards (`!Send`: it lives on one glommio executor; each shard has its
//! own, as it owns its hosts).
//!
//! # Design
//!
//! ```text
//! check(fp) ──▶ active bucket ─▶ frozen bucket ─▶ pending ─▶ run's Bloom ─▶ New (inserted)
//!                   │ seen           │ seen         │ seen      │ maybe
//!                   ▼                ▼              ▼           ▼
//!                  Seen             Seen           Seen       Maybe: pending, until
//!                                                             resolve() reads the run's blocks
//! merge(): freeze active ─▶ stream old run ∪ frozen ─▶ run-{g}.tmp ─▶ close (fsync)
//!          ─▶ rename to run-{g} (publish) ─▶ swap in new run ─▶ unlink old run
//! ```
//!
//! - [`SeenSet::fingerprint`]: foldhash's quality hasher with a per-crawl
//!   128-bit key (`key[0]` the per-hasher seed, `key[1]` expanded into its
//!   shared seed by `SharedSeed::from_u64`), over the URL's bytes. No
//!   process-wide random state is involved (checked in foldhash 0.2.0's
//!   source: `quality::FoldHasher::with_seed` reads only the seeds given), so
//!   one crawl's fingerprints are the same in every process that resumes it
//!   (`fingerprints_are_stable_for_a_key` pins a value: a foldhash release
//!   that changes its output would fail it, and would make old runs useless
//!   for a resume), while another crawl's key gives unrelated ones.
//!   Fingerprint 0 is stored as 1. Among n URLs of one shard, two collide
//!   with odds about n²/2⁶⁵ (3·10⁻⁴ at 10⁸, 3% at 10⁹); a collision makes the
//!   crawler skip one URL as already seen.
//! - The active [`bucket::Bucket`]: a fixed open-addressing table, always
//!   sorted, so a frozen one streams its keys in order with no sort.
//!   [`SeenSet::wants_merge`] at 3/4 load. A merge freezes it and a second
//!   table (recycled from the previous merge) becomes the active one.
//!   Should inserts outrun a merge, the active table refuses keys past 7/8
//!   load and they go to a small overflow hash set, frozen with it at the
//!   next merge.
//! - One [`run::Run`] on disk (none before the first merge): sorted,
//!   deduplicated u64s in 4 KiB blocks, with a sparse index (first key of
//!   each block) and a blocked Bloom filter (~1% false positives) in RAM.
//!   Each merge rewrites the whole run (old run + frozen bucket): writes per
//!   merge grow with the keys on disk, so a crawl of N keys through buckets
//!   of B keys writes about 8·N²/(2B) bytes in all (100 M keys through 3 M-
//!   key buckets, i.e. a 64 MiB budget: ~13 GB over 33 merges). That is the
//!   single-run sieve's known cost; tiered runs are the fix if it matters.
//! - A lookup the Bloom filter cannot answer is *pending*: [`resolve`]
//!   reads the blocks of a batch of such keys (one read per block, at most
//!   64 in flight) without holding the `RefCell` borrow, then settles them.
//!
//! # Memory
//!
//! - Buckets: `memory` bytes, as two tables of `memory / 2` (8 bytes a
//!   slot; about `memory / 2 / 8 · 3/4` keys a merge), zeroed by `calloc`.
//!   The first active table starts at 1 MiB and doubles as it fills (its
//!   keys moved over in order, O(keys)), up to `memory / 2`: a table's keys
//!   spread over all of it, so a full-size one would be resident after a
//!   few thousand keys, and a small crawl would pay for the whole budget.
//!   While it doubles the old and the new table coexist (1.5 × at the last
//!   step). After a merge the frozen table is cleared (a slice at a time,
//!   yielding) and kept as the next one.
//! - Per key on disk: Bloom filter 1.25 B + sparse index 8 B / 512 keys
//!   (~0.016 B). During a merge the old run's and the new run's coexist
//!   (~2.5 B per key at the peak).
//! - The pending set: one entry (~10 B) per unresolved `Maybe`, bounded by
//!   the caller (resolve them in batches). The overflow set: only when
//!   inserts outrun a merge (see above).
//! - A merge's I/O buffers: 2 × 128 KiB reading, 2 × 128 KiB writing.
//!   [`SeenSet::memory`] adds all of it up.
//!
//! # Invariants
//!
//! 1. A key is answered New (by [`SeenSet::check`] or [`resolve`]) at most
//!    once in the set's life, across merges and across [`checkpoint`] +
//!    [`open`]. New means inserted in the active bucket, from where it moves
//!    only to the frozen bucket and then to a run, all three consulted. A
//!    pending key counts as seen: a second `check` answers Seen and
//!    [`SeenSet::insert`] refuses it, so the only way a pending key K enters
//!    a bucket is its own resolution. Hence the race: K is pending, its
//!    resolution reads run R1, and meanwhile a merge freezes the active
//!    bucket F and publishes R2 = R1 ∪ F. K ∉ F (nothing inserted K), so
//!    K ∈ R2 ⇔ K ∈ R1: the read of R1, whose open file outlives its unlink,
//!    is still exact. Resolution settles a key only if it is still pending
//!    (and removes it), so a key in two batches, or resolved twice, is New
//!    at most once.
//! 2. The active bucket, the frozen bucket (while it merges), the overflow
//!    set, the pending set and the run are all consulted. A merge that fails
//!    or whose future is dropped loses nothing: the frozen bucket stays
//!    consulted and is merged by the next [`merge`], the old run stays in
//!    place, the error is returned; a stray `run-{g}.tmp` is overwritten by
//!    the next merge of that generation or removed by [`open`]. The new run
//!    is durable before it is published (its file is fsynced on close, then
//!    renamed, then the directory fsynced), and a run is unlinked only once
//!    its successor is published.
//! 3. No panics on any input: this module keeps the crate's panic-free
//!    lints (no indexing, unwrap, expect, panic, unreachable) outside tests.
//! 4. Memory is bounded as above: the buckets are the budget, allocated
//!    once; what grows with the keys on disk is the Bloom filter and the
//!    sparse index, ~1.27 B a key.
//!
//! No `RefCell` borrow is held across an `.await`: the async parts are
//! free functions over `&RefCell<SeenSet>` that borrow briefly, clone an
//! `Rc` snapshot (the run, the frozen bucket), await I/O, then borrow again
//! to apply. Merges are serialised by a one-permit semaphore.

pub(crate) mod bloom;
pub(crate) mod bucket;
pub(crate) mod run;

use std::cell::RefCell;
use std::collections::HashSet;
use std::io;
#[cfg(test)]
use std::path::Path;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

use foldhash::fast::FixedState;
use glommio::sync::Semaphore;

use crate::keys::{nonzero, Fingerprinter};
use bucket::{Bucket, FrozenBucket, Table};
#[cfg(test)]
use run::Name;
use run::Run;

/// Bytes of a shard's first active table: it doubles as keys arrive, up
/// to half the budget, so a small crawl does not touch the whole budget
/// (a table's keys spread over all of it).
const FIRST_TABLE: usize = 1 << 20;

/// Slots of a recycled table zeroed between two offers to yield.
const CLEAR_STEP: usize = 1 << 16;

/// What [`SeenSet::check`] knows about a fingerprint without waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Check {
    /// Never seen: inserted now. Only ever answered once for a key.
    New,
    /// Seen: in RAM, or already pending resolution.
    Seen,
    /// The run's Bloom filter says it may be on disk: now pending (so seen
    /// by later checks); [`resolve`] says whether it was new.
    Maybe,
}

/// A shard's seen-set of URL fingerprints (see the module docs). `!Send`.
pub(crate) struct SeenSet {
    /// The crawl's fingerprint function.
    key: Fingerprinter,
    /// Bytes of each of the two tables.
    table_bytes: usize,
    active: Bucket,
    /// Keys the active table refused (past 7/8 load during a merge).
    overflow: HashSet<u64, FixedState>,
    /// The bucket being merged (or left by a failed merge).
    frozen: Option<Rc<Frozen>>,
    /// The table a finished merge cleared, for the next active bucket.
    spare: Option<Table>,
    /// Keys answered Maybe, not resolved yet.
    pending: HashSet<u64, FixedState>,
    run: Option<Rc<Run>>,
    dir: Dir,
    /// One merge at a time.
    merging: Rc<Semaphore>,
}

/// A frozen bucket and the overflow keys frozen with it.
struct Frozen {
    bucket: FrozenBucket,
    /// Ascending.
    extra: Vec<u64>,
}

impl Frozen {
    fn contains(&self, fp: u64) -> bool {
        self.bucket.contains(fp) || self.extra.binary_search(&fp).is_ok()
    }

    fn len(&self) -> usize {
        self.bucket.len() + self.extra.len()
    }

    /// All keys, ascending (the two parts are disjoint; a merge drops
    /// duplicates anyway).
    fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        MergeSorted {
            a: self.bucket.iter().peekable(),
            b: self.extra.iter().copied().peekable(),
        }
    }
}

/// Where the runs live.
struct Dir {
    path: PathBuf,
    /// Made up by [`SeenSet::new`]: removed when the set is dropped.
    temp: bool,
    /// Created (or found) already.
    created: bool,
}

impl SeenSet {
    /// A new, empty set. `dir`: where runs live, created on the first merge
    /// (None: a fresh directory under `std::env::temp_dir()`, removed when
    /// the set is dropped). `memory`: the byte budget of the two RAM
    /// tables (see the module docs for what else is held). `key`: the
    /// crawl's fingerprint key, the same for every process of one crawl.
    pub(crate) fn new(dir: Option<PathBuf>, memory: usize, key: [u64; 2]) -> SeenSet {
        let dir = match dir {
            Some(path) => Dir {
                path,
                temp: false,
                created: false,
            },
            None => Dir {
                path: temp_path(),
                temp: true,
                created: false,
            },
        };
        // Whole slots, as the table is made of: a budget that is not a
        // multiple of 8 would leave the active table short of "full size"
        // for ever (it would never merge, and grow in place at every key).
        let table_bytes = (memory / 2 / 8 * 8).max(bucket::MIN_BYTES);
        SeenSet {
            key: Fingerprinter::new(key),
            table_bytes,
            active: Bucket::with_bytes(table_bytes.min(FIRST_TABLE)),
            overflow: HashSet::default(),
            frozen: None,
            spare: None,
            pending: HashSet::default(),
            run: None,
            dir,
            merging: Rc::new(Semaphore::new(1)),
        }
    }

    /// The URL's keyed 64-bit fingerprint (never 0), the same for one key
    /// in every process.
    pub(crate) fn fingerprint(&self, url: &str) -> u64 {
        self.key.fingerprint(url)
    }

    /// Has `fp` been seen? Never waits. [`Check::New`]: it was in no bucket
    /// and the run's Bloom filter rules it out: certainly new, inserted now.
    /// [`Check::Seen`]: in RAM, or pending already. [`Check::Maybe`]: now
    /// pending; call [`resolve`] with it.
    pub(crate) fn check(&mut self, fp: u64) -> Check {
        let fp = nonzero(fp);
        if self.in_ram(fp) {
            return Check::Seen;
        }
        if self.run.as_ref().is_some_and(|r| r.may_contain(fp)) {
            self.pending.insert(fp);
            return Check::Maybe;
        }
        self.add(fp);
        Check::New
    }

    /// Inserts `fp` without asking the disk (e.g. a URL refused that must
    /// stay seen). False if it is known in RAM already (in a bucket, or
    /// pending: its resolution will record it). True does not mean new: it
    /// may be on disk (the next merge drops the duplicate).
    pub(crate) fn insert(&mut self, fp: u64) -> bool {
        let fp = nonzero(fp);
        if self.in_ram(fp) {
            return false;
        }
        self.add(fp);
        true
    }

    /// Whether a [`merge`] should start: the active bucket is full and no
    /// merge is running (a running one goes on while the bucket is full).
    pub(crate) fn wants_merge(&self) -> bool {
        self.active.is_full() && self.at_full_size() && self.merging.available() > 0
    }

    /// Whether the active table has its whole budget (it starts smaller and
    /// grows as keys arrive).
    fn at_full_size(&self) -> bool {
        self.active.bytes() >= self.table_bytes
    }

    /// Runs written so far: the merges of a bucket to disk (a set reopened
    /// from a checkpoint counts those before it too).
    pub(crate) fn merges(&self) -> u64 {
        self.run.as_ref().map_or(0, |r| r.generation())
    }

    /// Whether `fp` is known in RAM: in a bucket, or pending (no disk read).
    pub(crate) fn contains_in_ram(&self, fp: u64) -> bool {
        self.in_ram(nonzero(fp))
    }

    /// Keys known: on the run plus in RAM. Approximate: a key inserted with
    /// [`SeenSet::insert`] that is also on disk counts twice until the next
    /// merge; pending keys are not counted.
    pub(crate) fn len(&self) -> u64 {
        let ram =
            self.active.len() + self.overflow.len() + self.frozen.as_ref().map_or(0, |f| f.len());
        self.run.as_ref().map_or(0, |r| r.keys()) + ram as u64
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keys answered Maybe and not resolved yet.
    #[cfg(test)]
    pub(crate) fn pending_len(&self) -> usize {
        self.pending.len()
    }

    /// Keys the active table had no room for, held in a hash set until the
    /// next merge: nonzero only when inserts outrun merges (the active
    /// table passed 7/8 load while a merge ran). A shard may take it as
    /// back-pressure and slow its intake of links until the merge is done.
    pub(crate) fn overflow_len(&self) -> usize {
        self.overflow.len()
    }

    /// Where runs live (maybe not created yet).
    #[cfg(test)]
    pub(crate) fn dir(&self) -> &Path {
        &self.dir.path
    }

    /// Bytes held in RAM: the tables, the run's index and Bloom filter, the
    /// pending and overflow sets (estimated at ~10 B an entry).
    pub(crate) fn memory(&self) -> usize {
        let tables = self.active.bytes()
            + self
                .frozen
                .as_ref()
                .map_or(0, |f| f.bucket.bytes() + f.extra.capacity() * 8)
            + self.spare.as_ref().map_or(0, |_| self.table_bytes);
        let sets = (self.pending.capacity() + self.overflow.capacity()) * 10;
        tables + sets + self.run.as_ref().map_or(0, |r| r.memory())
    }

    fn in_ram(&self, fp: u64) -> bool {
        self.active.contains(fp)
            || self.frozen.as_ref().is_some_and(|f| f.contains(fp))
            || self.pending.contains(&fp)
            || (!self.overflow.is_empty() && self.overflow.contains(&fp))
    }

    /// Records `fp`, known to be in no bucket; a small active table that
    /// filled up grows (doubling, up to its budget) first.
    fn add(&mut self, fp: u64) {
        let bytes = self.active.bytes().saturating_mul(2).min(self.table_bytes);
        if self.active.is_full() && bytes > self.active.bytes() {
            let small = std::mem::replace(&mut self.active, Bucket::with_bytes(0));
            let (grown, left) = small.grow(bytes);
            self.active = grown;
            self.overflow.extend(left);
        }
        if !self.active.insert(fp) {
            self.overflow.insert(fp);
        }
    }

    /// Settles a resolved key: New (inserted) only if it was pending and
    /// is not on disk.
    fn settle(&mut self, fp: u64, on_disk: bool) -> bool {
        if !self.pending.remove(&fp) || on_disk {
            return false;
        }
        self.add(fp);
        true
    }

    /// The active bucket (and overflow) become the frozen bucket; the spare
    /// table (or a new one) the active bucket.
    fn freeze(&mut self) {
        let fresh = match self.spare.take() {
            Some(table) => table.into_bucket(),
            None => Bucket::with_bytes(self.table_bytes),
        };
        let old = std::mem::replace(&mut self.active, fresh);
        // Taken, not drained: its memory goes with it.
        let mut extra: Vec<u64> = std::mem::take(&mut self.overflow).into_iter().collect();
        extra.sort_unstable();
        self.frozen = Some(Rc::new(Frozen {
            bucket: old.freeze(),
            extra,
        }));
    }
}

impl Drop for SeenSet {
    fn drop(&mut self) {
        if self.dir.temp && self.dir.created {
            // Blocking, once, when the shard ends.
            if let Err(e) = std::fs::remove_dir_all(&self.dir.path) {
                log::warn!("seen-set: removing {}: {e}", self.dir.path.display());
            }
        }
    }
}

/// Settles keys that [`SeenSet::check`] answered [`Check::Maybe`]: true =
/// new (inserted now), false = it was on disk (or it was not pending: never
/// answered Maybe, or settled already). Reads the run's blocks without
/// holding the borrow. On error the keys stay pending (seen) and the call
/// can be repeated.
pub(crate) async fn resolve(set: &RefCell<SeenSet>, pending: Vec<u64>) -> io::Result<Vec<bool>> {
    let keys: Vec<u64> = pending.into_iter().map(nonzero).collect();
    let run = set.borrow().run.clone();
    let on_disk = match &run {
        Some(run) => run.contains_many(&keys).await?,
        None => vec![false; keys.len()],
    };
    drop(run);
    let mut set = set.borrow_mut();
    Ok(keys
        .iter()
        .zip(on_disk)
        .map(|(&k, disk)| set.settle(k, disk))
        .collect())
}

/// Freezes the active bucket (new keys go to a fresh one) and merges it
/// into a new run, published before the old one is dropped; again while the
/// active bucket is full. First merges a bucket a failed or dropped merge
/// left frozen. Nothing to do: Ok. Waits for a merge already running.
pub(crate) async fn merge(set: &RefCell<SeenSet>) -> io::Result<()> {
    let lock = set.borrow().merging.clone();
    let _permit = lock
        .acquire_static_permit(1)
        .await
        .map_err(io::Error::from)?;
    merge_once(set, false).await?;
    loop {
        let again = {
            let s = set.borrow();
            s.frozen.is_some() || s.active.is_full()
        };
        if !again {
            return Ok(());
        }
        merge_once(set, false).await?;
    }
}

/// Makes every key in a bucket durable in the set's directory (a merge of
/// what is in RAM now, even if little; an empty run if the set is empty)
/// and returns the run file that holds them all. Keys pending at the time
/// are not included (resolve them first), nor keys added while it runs.
#[cfg(test)]
pub(crate) async fn checkpoint(set: &RefCell<SeenSet>) -> io::Result<PathBuf> {
    let lock = set.borrow().merging.clone();
    let _permit = lock
        .acquire_static_permit(1)
        .await
        .map_err(io::Error::from)?;
    if set.borrow().frozen.is_some() {
        merge_once(set, false).await?;
    }
    merge_once(set, true).await?;
    let s = set.borrow();
    s.run
        .as_ref()
        .map(|r| r.path().to_owned())
        .ok_or_else(|| io::Error::other("seen-set: no run after a checkpoint"))
}

/// Reopens a set from what [`checkpoint`] left in `dir`: its newest run
/// (streamed once to rebuild the index and Bloom filter); older runs and
/// `.tmp` files there are removed. No run: `NotFound`. `key` must be the
/// crawl's, as given to [`SeenSet::new`].
#[cfg(test)]
pub(crate) async fn open(dir: PathBuf, memory: usize, key: [u64; 2]) -> io::Result<SeenSet> {
    let mut runs = Vec::new();
    let mut stale = Vec::new();
    // A listing of a small directory: blocking, but metadata only.
    for entry in std::fs::read_dir(&dir)? {
        let name = entry?.file_name();
        match name.to_str().and_then(run::parse_name) {
            Some(Name::Run(g)) => runs.push(g),
            Some(Name::Tmp(g)) => stale.push(dir.join(run::tmp_name(g))),
            None => {}
        }
    }
    let Some(&newest) = runs.iter().max() else {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("no seen-set run in {}", dir.display()),
        ));
    };
    let found = Run::open(dir.join(run::file_name(newest)), newest).await?;
    stale.extend(
        runs.iter()
            .filter(|&&g| g != newest)
            .map(|&g| dir.join(run::file_name(g))),
    );
    for path in &stale {
        if let Err(e) = glommio::io::remove(path).await {
            log::warn!("seen-set: removing {}: {e}", path.display());
        }
    }
    if !stale.is_empty() {
        run::sync_dir(&dir).await?;
    }
    let mut set = SeenSet::new(Some(dir), memory, key);
    set.dir.created = true;
    set.run = Some(Rc::new(found));
    Ok(set)
}

/// One merge: the frozen bucket if one is left, else the active bucket
/// frozen now (if it holds anything, or `force` and there is no run yet).
/// Called with the merge permit held. Ok(false): nothing to do.
async fn merge_once(set: &RefCell<SeenSet>, force: bool) -> io::Result<bool> {
    let (frozen, old, dir, generation, create) = {
        let mut s = set.borrow_mut();
        if s.frozen.is_none() {
            let empty = s.active.is_empty() && s.overflow.is_empty();
            if empty && !(force && s.run.is_none()) {
                return Ok(false);
            }
            s.freeze();
        }
        let Some(frozen) = s.frozen.clone() else {
            return Ok(false);
        };
        let old = s.run.clone();
        let generation = old.as_ref().map_or(1, |r| r.generation() + 1);
        (frozen, old, s.dir.path.clone(), generation, !s.dir.created)
    };
    if create {
        run::create_dir_all(&dir).await?;
        set.borrow_mut().dir.created = true;
    }
    let new = run::write(
        &dir,
        generation,
        old.as_deref(),
        frozen.iter(),
        frozen.len() as u64,
    )
    .await?;
    let new_path = new.path().to_owned();
    {
        let mut s = set.borrow_mut();
        s.run = Some(Rc::new(new));
        s.frozen = None;
    }
    // Superseded: unlink it (a resolve still reading it keeps its file open).
    if let Some(old) = old {
        let path = old.path().to_owned();
        drop(old);
        if path != new_path {
            if let Err(e) = glommio::io::remove(&path).await {
                log::warn!("seen-set: removing {}: {e}", path.display());
            }
        }
    }
    // Reuse the frozen table as the next active one, cleared a slice at a time.
    if let Ok(frozen) = Rc::try_unwrap(frozen) {
        let mut table = frozen.bucket.into_table();
        while !table.clear_some(CLEAR_STEP) {
            glommio::yield_if_needed().await;
        }
        let mut s = set.borrow_mut();
        if s.spare.is_none() {
            s.spare = Some(table);
        }
    }
    Ok(true)
}

/// A fresh directory name under the system's temporary directory.
fn temp_path() -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    std::env::temp_dir().join(format!(
        "ringcrawl-seen-{}-{}-{:016x}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed),
        fastrand::u64(..)
    ))
}

/// Two ascending iterators as one.
struct MergeSorted<A: Iterator<Item = u64>, B: Iterator<Item = u64>> {
    a: std::iter::Peekable<A>,
    b: std::iter::Peekable<B>,
}

impl<A: Iterator<Item = u64>, B: Iterator<Item = u64>> Iterator for MergeSorted<A, B> {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        match (self.a.peek(), self.b.peek()) {
            (Some(x), Some(y)) if x <= y => self.a.next(),
            (Some(_), Some(_)) | (None, _) => self.b.next(),
            (Some(_), None) => self.a.next(),
        }
    }
}

#[cfg(test)]
mod tests;
