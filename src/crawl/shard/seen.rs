//! New or not: how a URL enters this shard's frontier, and how the pages
//! that found URLs learn how many were new (the chapter's `num_new_urls`).
//!
//! A URL of one of this shard's hosts is first asked of the shard's
//! seen-set ([`SeenSet`], the chapter's `seen_urls` in bounded memory).
//! Most answers come at once: known (in RAM), or new for certain (the
//! Bloom filter of the runs on disk says it is on none). The rest are
//! *pending*: the resolver task looks them up on disk in batches, and
//! until then they stay counted in `outstanding` and the tally of the page
//! that found them is held back ([`Deferred`]). The merger task folds a
//! full RAM bucket into the sorted run on disk.
//!
//! Tallies: a page whose links went to other shards, or are pending here,
//! keeps its record until every shard it asked has said how many of its
//! links were new; this shard counts itself as one of them while any of
//! the page's own links is pending.
//!
//! Not the seen-set itself (`crate::crawl::seen`) nor the frontier's
//! limits and queues (`crate::crawl::frontier`).

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};
use std::rc::Rc;
use std::time::{Duration, Instant};

use ringcrawl_links::urls;

use crate::cluster::ledger::Outcome;
use crate::crawl::frontier::Offer;
use crate::crawl::seen::{self, Check};
use crate::job::{Job, Limit};
use crate::keys::shard_for;
use crate::output::record::Record;

use super::{failure, Shard};

/// Where [`Shard::route`] sent a URL.
pub(super) enum Routed {
    /// Queued here: new to the crawl.
    New,
    /// Known already (seen here, or sent to its owner lately).
    Known,
    /// Sent to its owner, or pending here: that shard will say whether
    /// it was new.
    Asked(usize),
}

/// A page waiting for the tallies of the shards its links went to.
///
/// Tens of thousands of pages wait at once late in a large crawl (while
/// lookups on disk lag), so the record is boxed: the table's slots stay 32
/// bytes, not a whole `Record` each (at 10M pages a table of 228K slots
/// held 110 MB that way, its capacity kept after the burst).
pub(super) struct Awaiting {
    /// Its record, once the fetch is over (tallies may come before).
    pub(super) record: Option<Box<Record>>,
    pub(super) tallies_due: usize,
    /// Links new to the crawl, by the tallies so far.
    pub(super) new: usize,
}

/// Who waits for the answer about a pending URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Asker {
    /// Nobody: a root.
    Nobody,
    /// Page `token` of shard `shard` (this one or a peer), for its tally.
    Page { shard: usize, token: u64 },
}

/// A URL whose newness waits for a lookup on disk.
pub(super) struct Pending {
    fingerprint: u64,
    job: Job,
    asker: Asker,
}

/// A page's tally held back while some of its URLs are pending here.
#[derive(Debug, Default)]
pub(super) struct Deferred {
    /// Its URLs still pending.
    left: u32,
    /// Its URLs found new so far.
    new: u32,
}

/// What became of a URL offered to this shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Enqueued {
    /// Queued: new to the crawl.
    New,
    /// Not queued: seen before.
    Known,
    /// Not queued: new, but a limit keeps it out (recorded once).
    Refused,
    /// Pending: the resolver will queue it or drop it.
    Pending,
}

impl Shard {
    /// Offer a job this shard owns, found by `asker`: queued if new to the
    /// crawl (unless a limit keeps it out: then it is recorded once, never
    /// fetched), dropped if seen, or left pending for the resolver.
    pub(super) fn enqueue(&self, job: Job, now: Instant, asker: Asker) -> Enqueued {
        let job = self.stripped(job);
        let (fingerprint, check, merge) = {
            let mut seen = self.newness.seen.borrow_mut();
            let fingerprint = self.seen_key(&job.url, seen.fingerprint(&job.url));
            let check = seen.check(fingerprint);
            (fingerprint, check, seen.wants_merge())
        };
        if merge {
            self.newness.merge_due.notify_all();
        }
        match check {
            Check::Seen => Enqueued::Known,
            Check::New => {
                if self.admit(job, now) {
                    Enqueued::New
                } else {
                    Enqueued::Refused
                }
            }
            Check::Maybe => {
                if let Asker::Page { shard, token } = asker {
                    let mut deferred = self.newness.deferred.borrow_mut();
                    deferred.entry((shard, token)).or_default().left += 1;
                }
                self.newness.pending.borrow_mut().push(Pending {
                    fingerprint,
                    job,
                    asker,
                });
                self.newness.pending_added.notify_all();
                Enqueued::Pending
            }
        }
    }

    /// `job` with the query parameters `--strip-query` names left out of
    /// its URL, before it meets the seen-set (so the stripped form is the
    /// one deduplicated, fetched and recorded).
    fn stripped(&self, mut job: Job) -> Job {
        if let Cow::Owned(url) = self.config.strip_query.apply(&job.url) {
            job.url = url;
        }
        job
    }

    /// Put a URL new to the crawl into the frontier; false if a limit keeps
    /// it out (then it is recorded as such, and in a cluster crawl
    /// answered).
    fn admit(&self, job: Job, now: Instant) -> bool {
        // What the record of a refused URL needs (the job itself goes in).
        let refused = Job {
            url: job.url.clone(),
            via: job.via.clone(),
            ..job
        };
        let offer = self.frontier.borrow_mut().offer(job, now);
        match offer {
            Offer::New => {
                self.changed.notify_all();
                true
            }
            Offer::Refused(limit) => {
                let mut record = self.record_for(&refused);
                failure::fail(&mut record, limit.kind(), limit.message());
                self.record_answered(record);
                false
            }
        }
    }

    /// Record a URL that waited for room among the hosts and that its
    /// host's limit kept out when it left the wait, and count it out.
    pub(super) fn limited(&self, job: Job, limit: Limit) {
        let mut record = self.record_for(&job);
        failure::fail(&mut record, limit.kind(), limit.message());
        self.record_answered(record);
        if self.outstanding.finish(1) {
            self.stop();
        }
    }

    /// Hand a new URL, found by this shard's page `page`, to its owning
    /// shard, counting it in first. The owner applies the crawl limits, so
    /// a URL they keep out is refused and recorded once, whoever found it.
    pub(super) fn route(&self, job: Job, now: Instant, page: u64) -> Routed {
        let job = self.stripped(job);
        if self.cluster.is_some() {
            return self.route_to_cluster(job);
        }
        let owner = shard_for(urls::host_of(&job.url), self.shards);
        if owner == self.id {
            // Counting in after the enqueue is safe here: no other task runs
            // before this one awaits, and this page is still counted.
            let asker = Asker::Page {
                shard: self.id,
                token: page,
            };
            // Journaled unless known at once (a copy only with --state).
            let copy = self.journal.is_some().then(|| job.clone());
            let routed = match self.enqueue(job, now, asker) {
                Enqueued::New => {
                    self.outstanding.add(1);
                    Routed::New
                }
                Enqueued::Known | Enqueued::Refused => return Routed::Known,
                Enqueued::Pending => {
                    self.outstanding.add(1);
                    Routed::Asked(self.id)
                }
            };
            if let Some(job) = copy {
                self.journal_job(&job);
            }
            routed
        } else {
            if !self.newness.routed.borrow_mut().insert(&job.url) {
                return Routed::Known;
            }
            self.journal_job(&job);
            self.outstanding.add(1);
            self.outbox.route(owner, job, page);
            Routed::Asked(owner)
        }
    }

    /// Take the jobs of a batch from `peer` (already counted in by it):
    /// enqueue each, and answer each page's group with a tally now, or,
    /// if some of its jobs are pending, once they are resolved. How many
    /// were dropped (seen or refused: the caller counts them out), and
    /// whether a tally is waiting in the outbox.
    pub(super) fn take_jobs(
        &self,
        peer: usize,
        jobs: impl Iterator<Item = (Option<u64>, Job)>,
        now: Instant,
    ) -> (usize, bool) {
        let mut dropped = 0;
        let mut tallied = false;
        // The page being tallied: its token and its new jobs so far.
        let mut group: Option<(u64, u32)> = None;
        for (page, job) in jobs {
            let asker = match page {
                Some(token) => Asker::Page { shard: peer, token },
                None => Asker::Nobody,
            };
            let enqueued = self.enqueue(job, now, asker);
            dropped += usize::from(matches!(enqueued, Enqueued::Known | Enqueued::Refused));
            let new = u32::from(enqueued == Enqueued::New);
            match (&mut group, page) {
                (Some((token, count)), Some(page)) if *token == page => *count += new,
                (current, page) => {
                    if let Some((token, count)) = current.take() {
                        tallied |= self.answer(peer, token, count);
                    }
                    *current = page.map(|token| (token, new));
                }
            }
        }
        if let Some((token, count)) = group {
            tallied |= self.answer(peer, token, count);
        }
        (dropped, tallied)
    }

    /// Tell `peer` that `new` jobs of its page `token` were new, now if none
    /// of them is pending, else once they are resolved; true if sent now.
    fn answer(&self, peer: usize, token: u64, new: u32) -> bool {
        if let Some(deferred) = self.newness.deferred.borrow_mut().get_mut(&(peer, token)) {
            deferred.new += new;
            return false;
        }
        self.outbox.tally(peer, token, new);
        true
    }

    /// A token for a page about to route its links.
    pub(super) fn page_token(&self) -> u64 {
        self.newness
            .next_page
            .replace(self.newness.next_page.get().wrapping_add(1))
    }

    /// Page `token` sent `asked` shards some of its links (this one among
    /// them if some are pending here): its record waits for their tallies.
    /// Called as soon as the links are routed, before any await, so no
    /// tally can come first.
    pub(super) fn expect_tallies(&self, token: u64, asked: usize) {
        if asked > 0 {
            self.newness.awaiting.borrow_mut().insert(
                token,
                Awaiting {
                    record: None,
                    tallies_due: asked,
                    new: 0,
                },
            );
        }
    }

    /// Record a finished page and count it out, unless it still waits for
    /// tallies ([`Self::tallied`] finishes it then).
    pub(super) fn finish_page(&self, mut record: Record, token: u64) {
        let mut awaiting = self.newness.awaiting.borrow_mut();
        if let Some(page) = awaiting.get_mut(&token) {
            if page.tallies_due > 0 {
                page.record = Some(Box::new(record));
                return;
            }
            record.num_new_urls += page.new;
            awaiting.remove(&token);
            shrink_map(&mut awaiting);
        }
        drop(awaiting);
        self.record_page(record);
    }

    /// Emit a page's record and count the page out.
    fn record_page(&self, record: Record) {
        self.record_answered(record);
        if self.outstanding.finish(1) {
            self.stop();
        }
    }

    /// Emit the record of a URL the crawl gave this shard; in a cluster
    /// crawl, answer it: recorded, or dropped unrecorded if its partition
    /// was lost meanwhile (its next owner records it).
    pub(super) fn record_answered(&self, record: Record) {
        if self.cluster.is_none() {
            return self.emit(record);
        }
        if self.may_record(&record.url) {
            self.answer_url(&record.url, Outcome::Recorded);
            if let Some(c) = &self.cluster {
                c.link.recorded();
            }
            self.emit(record);
        } else {
            self.answer_url(&record.url, Outcome::Dropped);
            if let Some(c) = &self.cluster {
                c.link.count_lost();
            }
        }
    }

    /// A shard (a peer, or this one for its pending links) says `new` of
    /// the links page `token` sent it were new.
    pub(super) fn tallied(&self, token: u64, new: u32) {
        let done = {
            let mut awaiting = self.newness.awaiting.borrow_mut();
            let Some(page) = awaiting.get_mut(&token) else {
                return;
            };
            page.new += new as usize;
            page.tallies_due = page.tallies_due.saturating_sub(1);
            if page.tallies_due > 0 || page.record.is_none() {
                return;
            }
            let done = awaiting.remove(&token);
            shrink_map(&mut awaiting);
            done
        };
        if let Some(Awaiting {
            record: Some(mut record),
            new,
            ..
        }) = done
        {
            record.num_new_urls += new;
            self.record_page(*record);
        }
    }

    /// The resolver task: look the pending URLs up on disk, a batch at a
    /// time (those that pile up while one batch is read make the next),
    /// queue the new ones, count the others out, and send the tallies that
    /// waited for them. Ends when the shard stops.
    pub(super) async fn resolve_pending(self: Rc<Self>) {
        loop {
            if self.stopping.get() {
                return;
            }
            let batch: Vec<Pending> = {
                let mut pending = self.newness.pending.borrow_mut();
                let n = pending.len().min(LOOKUP_BATCH);
                let batch = pending.drain(..n).collect();
                let left = pending.len();
                if pending.capacity() > SHRINK_FLOOR && left * SPARSE < pending.capacity() {
                    pending.shrink_to(left * 2);
                }
                batch
            };
            if batch.is_empty() {
                self.newness.pending_added.notified().await;
                continue;
            }
            self.recording.stats.borrow_mut().seen_lookups += batch.len() as u64;
            let Some(answers) = self.look_up(&batch).await else {
                return;
            };
            let now = Instant::now();
            let mut dropped = 0;
            for (pending, new) in batch.into_iter().zip(answers) {
                if !new {
                    self.answer_url(&pending.job.url, Outcome::Known);
                }
                let queued = new && self.admit(pending.job, now);
                dropped += usize::from(!queued);
                if let Asker::Page { shard, token } = pending.asker {
                    self.resolved(shard, token, queued);
                }
            }
            if dropped > 0 && self.outstanding.finish(dropped) {
                self.stop();
            }
            // Queued URLs, and tallies for the dispatcher's next flush.
            self.changed.notify_all();
            glommio::yield_if_needed().await;
        }
    }

    /// The seen-set's answers for a batch of pending URLs (true: new, now
    /// inserted). A lookup that fails is tried again, [`DISK_TRIES`] times
    /// in all; then the seen-set cannot be trusted (taking the URLs as new
    /// would fetch pages twice, as seen would lose them) and the crawl
    /// stops with the error. None then, or when the shard stops meanwhile.
    async fn look_up(&self, batch: &[Pending]) -> Option<Vec<bool>> {
        let fingerprints: Vec<u64> = batch.iter().map(|p| p.fingerprint).collect();
        let mut tries = 0;
        loop {
            tries += 1;
            match seen::resolve(&self.newness.seen, fingerprints.clone()).await {
                Ok(answers) => return Some(answers),
                Err(e) if tries < DISK_TRIES => {
                    log::warn!(
                        "shard {}: seen-set lookup failed (try {tries}): {e}",
                        self.id
                    );
                    glommio::timer::sleep(DISK_RETRY * tries).await;
                    if self.stopping.get() {
                        return None;
                    }
                }
                Err(e) => {
                    self.seen_failed(&format!("looking URLs up on disk: {e}"));
                    return None;
                }
            }
        }
    }

    /// The seen-set's disk failed past its retries: the crawl stops, with
    /// the error as the outcome's output error (exit status 1).
    pub(super) fn seen_failed(&self, what: &str) {
        let message = format!("shard {}: the seen-set failed {what}", self.id);
        // Said once, by the report's output error.
        log::debug!("{message}");
        self.recording
            .output_error
            .borrow_mut()
            .get_or_insert(message);
        self.outstanding.abort();
        self.stop();
    }

    /// One pending URL of page `token` of `shard` was resolved: the page's
    /// tally goes out when it was the last.
    fn resolved(&self, shard: usize, token: u64, new: bool) {
        let done = {
            let mut deferred = self.newness.deferred.borrow_mut();
            let Some(entry) = deferred.get_mut(&(shard, token)) else {
                return;
            };
            entry.left = entry.left.saturating_sub(1);
            entry.new += u32::from(new);
            if entry.left > 0 {
                return;
            }
            let done = deferred.remove(&(shard, token));
            shrink_map(&mut deferred);
            done
        };
        if let Some(Deferred { new, .. }) = done {
            if shard == self.id {
                self.tallied(token, new);
            } else {
                self.outbox.tally(shard, token, new);
            }
        }
    }

    /// The merger task: when the seen-set's RAM bucket is full, fold it
    /// into the run on disk (new URLs go to a fresh bucket meanwhile).
    /// Ends when the shard stops (a running merge is let finish), or stops
    /// the crawl when merges keep failing (a full disk).
    pub(super) async fn merge_seen(self: Rc<Self>) {
        let mut failures = 0;
        loop {
            if self.stopping.get() {
                return;
            }
            if !self.newness.seen.borrow().wants_merge() {
                self.newness.merge_due.notified().await;
                continue;
            }
            match seen::merge(&self.newness.seen).await {
                Ok(()) => failures = 0,
                Err(e) if failures + 1 < DISK_TRIES => {
                    failures += 1;
                    log::warn!(
                        "shard {}: merging the seen-set failed (try {failures}): {e}",
                        self.id
                    );
                    glommio::timer::sleep(DISK_RETRY * failures).await;
                }
                Err(e) => {
                    self.seen_failed(&format!("merging its bucket to disk: {e}"));
                    return;
                }
            }
        }
    }
}

/// How long the merger or the resolver waits after a failure of the disk,
/// times the failures so far, before it tries again.
const DISK_RETRY: Duration = Duration::from_secs(1);

/// Tries of a merge or of a batch's lookup before the crawl stops.
const DISK_TRIES: u32 = 3;

/// Pending URLs looked up in one batch (more wait for the next): the
/// resolver yields between batches.
const LOOKUP_BATCH: usize = 64 << 10;

/// A table this many times larger than what it holds is shrunk to twice
/// that: hash maps and vectors keep their largest capacity, and the pages
/// awaiting tallies, their deferred tallies and the pending URLs grow by
/// the ten thousand while lookups on disk lag, then drain.
const SPARSE: usize = 8;
/// Tables of at most this many slots are left as they are.
const SHRINK_FLOOR: usize = 4 << 10;

/// Shrinks `map` once it is [`SPARSE`]: a shrink moves what is left, and
/// comes only after several times that many removals.
fn shrink_map<K: Eq + Hash, V, S: BuildHasher>(map: &mut HashMap<K, V, S>) {
    if map.capacity() > SHRINK_FLOOR && map.len() * SPARSE < map.capacity() {
        map.shrink_to(map.len() * 2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_drained_after_a_burst_gives_its_table_back() {
        let mut map: HashMap<u64, [u8; 64]> = HashMap::new();
        for k in 0..100_000 {
            map.insert(k, [0; 64]);
        }
        let burst = map.capacity();
        for k in 0..99_900 {
            map.remove(&k);
            shrink_map(&mut map);
        }
        assert_eq!(map.len(), 100);
        assert!(
            map.capacity() <= SHRINK_FLOOR,
            "{} of {burst}",
            map.capacity()
        );
        assert!(
            (99_900..100_000).all(|k| map.contains_key(&k)),
            "nothing lost"
        );
    }

    #[test]
    fn a_small_or_full_map_is_left_as_it_is() {
        let mut map: HashMap<u64, u64> = HashMap::new();
        for k in 0..1_000 {
            map.insert(k, k);
        }
        let room = map.capacity();
        for k in 0..990 {
            map.remove(&k);
            shrink_map(&mut map);
        }
        // (Removals leave tombstones, which take a little off `capacity`.)
        assert!(map.capacity() * 2 > room, "under the floor: kept");
        let mut map: HashMap<u64, u64> = (0..50_000).map(|k| (k, k)).collect();
        let room = map.capacity();
        for k in 0..10_000 {
            map.remove(&k);
            shrink_map(&mut map);
        }
        assert!(map.capacity() * 2 > room, "four fifths full: kept");
    }
}
