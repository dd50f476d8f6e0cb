//! The node's intake: reading new entries of its partitions' streams
//! while its shards have room, making good a read whose reply was lost
//! (from the node's own pending list), and handing the URLs that pass
//! [`admit`](super::super::admit) to the shards that own their hosts.
//!
//! Not the loop (`mod.rs`), nor the tenures (`tenure.rs`).

use std::time::Instant;

use ringcrawl_links::urls;

use crate::job::Job;
use crate::keys::shard_for;

use super::super::admit::{Admission, Refusal};
use super::super::clock::Moment;
use super::super::link::Intake;
use super::super::store::Entry;
use super::super::wire;
use super::{doubled, finished_in, Node, IDLE_READ, READ_COUNT, TICK};

impl Node {
    /// Read new entries of the partitions this node fetches for, while the
    /// shards have room.
    pub(super) fn read(&mut self, now: Instant) {
        if now < self.next_read
            || self.store.is_none()
            || self.link.over()
            || self.outstanding.is_done()
            || self.ledger.open_urls() >= self.settings.intake
        {
            return;
        }
        let partitions: Vec<u32> = self
            .leases
            .held()
            .into_iter()
            .filter(|&p| self.link.fetches(p, Moment::now()))
            .collect();
        if !self.unsure.is_empty() && !self.recover() {
            return;
        }
        let Some((entries, roots)) =
            self.with_store("reading streams", |s| s.read(&partitions, READ_COUNT))
        else {
            // Redis may have handed out entries whose answer was lost: they
            // are pending for this node, read again once it reconnects.
            self.unsure.extend(partitions);
            return;
        };
        self.widen_scope_to(roots);
        if self.store.is_none() {
            // The roots could not be read: the scope the entries are
            // checked against may be narrower than the crawl's, and a URL
            // refused is not fetched. They are pending here, delivered
            // once the node reconnects (see `recover`).
            self.unsure.extend(partitions);
            return;
        }
        if entries.is_empty() {
            self.idle_reads = self.idle_reads.saturating_add(1);
            self.next_read = now + doubled(TICK, self.idle_reads, IDLE_READ);
        } else {
            self.idle_reads = 0;
            self.backlog_busy = 0;
            self.next_read = now;
            self.deliver(entries);
        }
    }

    /// Deliver what a read or sweep whose reply was lost may have left
    /// pending here: the node's pending list of those partitions, less
    /// the entries its ledger has or has done. False if the connection
    /// failed (tried again next turn).
    fn recover(&mut self) -> bool {
        let partitions: Vec<u32> = self
            .unsure
            .iter()
            .copied()
            .filter(|&p| self.leases.holds(p, Moment::now()))
            .collect();
        let Some(pending) = self.with_store("reading entries pending here", |s| {
            s.pending_here(&partitions)
        }) else {
            return false;
        };
        // The roots the lost entries' URLs descend from were added before
        // them: the scope they are checked against must know them.
        self.widen_scope();
        if self.store.is_none() {
            return false;
        }
        self.unsure.clear();
        let lost: Vec<Entry> = pending
            .into_iter()
            .filter(|e| {
                !self.ledger.knows(e.partition, &e.id)
                    && !self
                        .finished
                        .get(&e.partition)
                        .is_some_and(|f| f.acks.contains(&e.id))
            })
            .collect();
        if !lost.is_empty() {
            log::info!(
                "cluster: {} entries of a read cut off delivered",
                lost.len()
            );
            self.deliver(lost);
        }
        true
    }

    /// Open the entries in the ledger and hand their URLs to the shards
    /// that own their hosts (counted in first).
    pub(super) fn deliver(&mut self, entries: Vec<Entry>) {
        let shards = self.settings.shards.max(1);
        let mut by_shard: Vec<Vec<Job>> = vec![Vec::new(); shards];
        let mut total = 0;
        let scope = self.link.scope().1;
        let admission = Admission {
            scope: &scope,
            partitions: self.link.partitions(),
            named: &self.settings.named,
        };
        for entry in entries {
            let (mut jobs, bad) = wire::decode(&entry.text);
            if bad > 0 {
                log::warn!(
                    "cluster: {bad} lines of entry {} of partition {} are not URLs",
                    entry.id,
                    entry.partition
                );
                self.report.bad_lines += bad as u64;
            }
            let before = jobs.len();
            let mut first: Option<(String, Refusal)> = None;
            jobs.retain(|job| match admission.check(job, entry.partition) {
                Ok(()) => true,
                Err(why) => {
                    first.get_or_insert_with(|| (job.url.chars().take(200).collect(), why));
                    false
                }
            });
            if let Some((url, why)) = first {
                let n = before - jobs.len();
                log::warn!(
                    "cluster: refused {n} URLs of entry {} of partition {} (not fetched), e.g. {url:?}: {why}",
                    entry.id,
                    entry.partition
                );
                self.report.refused += n as u64;
            }
            let fps: Vec<u64> = jobs
                .iter()
                .map(|j| self.fingerprints.fingerprint(&j.url))
                .collect();
            if let Some((p, id)) = self.ledger.open(entry.partition, entry.id, &fps) {
                finished_in(&mut self.finished, p).acks.push(id);
            }
            total += jobs.len();
            for job in jobs {
                let shard = shard_for(urls::host_of(&job.url), shards);
                if let Some(list) = by_shard.get_mut(shard) {
                    list.push(job);
                }
            }
        }
        self.outstanding.add(total);
        for (shard, jobs) in by_shard.into_iter().enumerate() {
            if !jobs.is_empty() {
                self.link.deliver(shard, Intake::Jobs(jobs));
            }
        }
    }
}
