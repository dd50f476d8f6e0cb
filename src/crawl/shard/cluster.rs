//! The shard's side of a crawl on many machines (`--cluster`): every URL
//! it fetches came from its partition's stream through the node's cluster
//! thread (`crate::cluster::node`), and every link it finds goes back
//! there, to the stream of the link's partition, whichever node owns it.
//! So a URL is in Redis from the moment it is found until its record is
//! written, and a node that dies loses nothing another node cannot redo.
//!
//! - Intake: the cluster task takes what the thread handed this shard
//!   (seen-set keys of a partition's done log, then URLs), in order, and
//!   offers each URL to the seen-set and the frontier as a root is
//!   offered. The seen-set's keys are salted by partition and tenure
//!   ([`Link::seen_key`]).
//! - Answers: every URL given is answered once: recorded (fetched, or
//!   refused by a limit or robots.txt, with a record), known (the seen-set
//!   had it), or dropped (its partition is no longer this node's: no
//!   record, its entry stays for the next owner). The task hands the
//!   answers over only after the records' lines went to the writer and
//!   the WARC bytes before them are in their files (and the CDXJ lines
//!   to theirs), so the thread's barriers on the writers are all it needs
//!   before acknowledging.
//! - Fencing: no fetch starts for a partition the node may not act for,
//!   and no record is written for one it lost meanwhile.
//!
//! Not the cluster thread's policy nor Redis (`crate::cluster`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use ringcrawl_links::urls;

use crate::cluster::clock::Moment;
use crate::cluster::ledger::Outcome;
use crate::cluster::link::{Done, Intake, Link, ToNode};
use crate::job::Job;
use crate::keys::host_key;
use crate::web::scope::Scope;

use super::seen::{Asker, Enqueued, Routed};
use super::Shard;

/// How often the cluster task takes intake and hands links and answers
/// over.
const CLUSTER_TICK: Duration = Duration::from_millis(5);

/// How long intake waits for the seen-set's disk when it is behind.
const INTAKE_WAIT: Duration = Duration::from_millis(1);

/// The shard's cluster state.
pub(super) struct ShardCluster {
    pub(super) link: Arc<Link>,
    /// Links found since the last hand-over.
    links: std::cell::RefCell<Vec<Job>>,
    /// URLs answered since the last hand-over.
    answers: std::cell::RefCell<Vec<Done>>,
    /// The crawl's scope as this shard last took it, and its version.
    scope: std::cell::RefCell<(u64, Arc<Scope>)>,
}

impl ShardCluster {
    pub(super) fn new(link: Arc<Link>) -> ShardCluster {
        let scope = link.scope();
        ShardCluster {
            link,
            links: Default::default(),
            answers: Default::default(),
            scope: std::cell::RefCell::new(scope),
        }
    }
}

impl Shard {
    /// The crawl's scope: the configuration's, or in a cluster crawl the
    /// one its roots make now (another node may add roots).
    pub(super) fn scope(&self) -> Arc<Scope> {
        let Some(c) = &self.cluster else {
            return self.scope.clone();
        };
        if c.scope.borrow().0 != c.link.scope_version() {
            *c.scope.borrow_mut() = c.link.scope();
        }
        c.scope.borrow().1.clone()
    }

    /// The seen-set's key of `url`, whose fingerprint is `fp`: salted by
    /// its partition's tenure in a cluster crawl.
    pub(super) fn seen_key(&self, url: &str, fp: u64) -> u64 {
        match &self.cluster {
            Some(c) => c.link.seen_key(c.link.partition_of(urls::host_of(url)), fp),
            None => fp,
        }
    }

    /// In a cluster crawl, a link found: to its partition's stream
    /// (unless this shard sent it lately). Counted as new on the page's
    /// record: appended for the crawl, whose owner decides.
    pub(super) fn route_to_cluster(&self, job: Job) -> Routed {
        let Some(c) = &self.cluster else {
            return Routed::Known;
        };
        if !self.newness.routed.borrow_mut().insert(&job.url) {
            return Routed::Known;
        }
        c.links.borrow_mut().push(job);
        Routed::New
    }

    /// Hand the links found so far to the cluster thread now. For links
    /// that no page's answer follows from this shard (robots.txt's
    /// `Sitemap:` lines): the root page that waits for that robots.txt may
    /// be lent to a peer, whose answer must not reach the thread first.
    pub(super) fn send_links_now(&self) {
        if let Some(c) = &self.cluster {
            let links = std::mem::take(&mut *c.links.borrow_mut());
            if !links.is_empty() {
                c.link.send(ToNode::Links(links));
            }
        }
    }

    /// In a cluster crawl, `url` (given by the cluster thread) is done
    /// with as `outcome`.
    pub(super) fn answer_url(&self, url: &str, outcome: Outcome) {
        if let Some(done) = self.answer_for(url, outcome) {
            self.give_answer(done);
        }
    }

    /// The answer `outcome` for `url`, to give later (None: not a cluster
    /// crawl).
    fn answer_for(&self, url: &str, outcome: Outcome) -> Option<Done> {
        let c = self.cluster.as_ref()?;
        let host = urls::host_of(url);
        Some(Done {
            fingerprint: self.newness.seen.borrow().fingerprint(url),
            host: host_key(host),
            partition: c.link.partition_of(host),
            outcome,
        })
    }

    fn give_answer(&self, done: Done) {
        if let Some(c) = &self.cluster {
            c.answers.borrow_mut().push(done);
        }
    }

    /// Whether a fetch of `url` may start now: always, but in a cluster
    /// crawl only while its partition is this node's and not being given
    /// up.
    pub(super) fn may_fetch(&self, url: &str) -> bool {
        self.cluster.as_ref().is_none_or(|c| {
            c.link
                .fetches(c.link.partition_of(urls::host_of(url)), Moment::now())
        })
    }

    /// Whether a record of `url` may be written now: always, but in a
    /// cluster crawl only while its partition is this node's.
    pub(super) fn may_record(&self, url: &str) -> bool {
        self.cluster.as_ref().is_none_or(|c| {
            c.link
                .holds(c.link.partition_of(urls::host_of(url)), Moment::now())
        })
    }

    /// A URL taken from the frontier whose partition is no longer this
    /// node's: not fetched, not recorded, its host's slot given back at
    /// once (the host's queue drains without waiting for its delay).
    pub(super) fn drop_unowned(&self, job: Job, now: Instant) {
        self.frontier
            .borrow_mut()
            .drop_fetch(urls::host_of(&job.url), now);
        self.answer_url(&job.url, Outcome::Dropped);
        if self.outstanding.finish(1) {
            self.stop();
        }
    }

    /// The cluster task: every [`CLUSTER_TICK`], take the intake, then
    /// hand links and answers over. Ends when the shard stops (the shard
    /// hands what is left over once its last fetch ended).
    pub(super) async fn keep_cluster(self: std::rc::Rc<Self>) {
        if self.cluster.is_none() {
            return;
        }
        while !self.stopping.get() {
            self.take_intake().await;
            self.hand_to_node().await;
            let nap = glommio::timer::sleep(CLUSTER_TICK);
            futures_lite::future::or(nap, self.wait_stopped()).await;
        }
    }

    /// Offer what the cluster thread handed this shard, in order.
    async fn take_intake(&self) {
        let Some(c) = &self.cluster else {
            return;
        };
        for intake in c.link.take(self.id) {
            match intake {
                Intake::Seen(keys) => {
                    for key in keys {
                        self.wait_for_seen_disk().await;
                        let merge = {
                            let mut seen = self.newness.seen.borrow_mut();
                            seen.insert(key);
                            seen.wants_merge()
                        };
                        if merge {
                            self.newness.merge_due.notify_all();
                        }
                    }
                }
                Intake::Jobs(jobs) => {
                    let now = Instant::now();
                    let mut dropped = 0;
                    for job in jobs {
                        self.wait_for_seen_disk().await;
                        let known = self.answer_for(&job.url, Outcome::Known);
                        match self.enqueue(job, now, Asker::Nobody) {
                            Enqueued::New | Enqueued::Pending => {}
                            Enqueued::Known => {
                                if let Some(known) = known {
                                    self.give_answer(known);
                                }
                                dropped += 1;
                            }
                            // Recorded, and answered, by `admit`.
                            Enqueued::Refused => dropped += 1,
                        }
                    }
                    if dropped > 0 && self.outstanding.finish(dropped) {
                        self.stop();
                    }
                }
            }
            glommio::yield_if_needed().await;
        }
    }

    /// While the seen-set's disk is behind (its merge or its lookups),
    /// take no more intake: the node reads no more either, once the
    /// shards have enough unanswered.
    async fn wait_for_seen_disk(&self) {
        while self.seen_behind() && !self.stopping.get() {
            glommio::timer::sleep(INTAKE_WAIT).await;
        }
    }

    /// Hand the links found to the cluster thread, then the answers, once
    /// their records are with the writer and their WARC records in files
    /// (a page's links always go before its answer).
    pub(super) async fn hand_to_node(&self) {
        let Some(c) = &self.cluster else {
            return;
        };
        let links = std::mem::take(&mut *c.links.borrow_mut());
        if !links.is_empty() {
            c.link.send(ToNode::Links(links));
        }
        let mut answers = std::mem::take(&mut *c.answers.borrow_mut());
        if answers.is_empty() {
            return;
        }
        if let Some(warc) = &self.recording.warc {
            if !warc.flushed_past(warc.placed()).await {
                // Their archive may be lost: not done, the next owner
                // fetches them again.
                for a in &mut answers {
                    if a.outcome == Outcome::Recorded {
                        a.outcome = Outcome::Dropped;
                        c.link.reported(1);
                    }
                }
            }
        }
        self.recording.sink.hand_off();
        self.recording.cdxj.hand_off();
        c.link.send(ToNode::Done(answers));
    }
}
