//! What outlives the process: the state directory (`--state`,
//! `--resume`) and the cluster (`--cluster`).
//!
//! Settings of [`CrawlerBuilder`], checked at [`CrawlerBuilder::build`].

use std::path::Path;
use std::time::Duration;

use super::CrawlerBuilder;
use crate::state::compact::in_run;

impl CrawlerBuilder {
    /// Keep the crawl's state in `dir` (made if missing; it must not hold
    /// a crawl yet), so that [`CrawlerBuilder::resume`] can go on with it
    /// after a stop, a spent budget or a `kill -9`. The records go to the
    /// JSONL file ([`CrawlerBuilder::jsonl`], else `dir/records.jsonl`):
    /// it is the crawl's log of what is done.
    pub fn state(mut self, dir: impl AsRef<Path>) -> Self {
        self.state = Some((dir.as_ref().to_path_buf(), false));
        self
    }

    /// Go on with the crawl kept in `dir` by [`CrawlerBuilder::state`]:
    /// its roots, scope and outputs are the manifest's (roots given here
    /// must be the same); budgets and other settings are this builder's.
    pub fn resume(mut self, dir: impl AsRef<Path>) -> Self {
        self.state = Some((dir.as_ref().to_path_buf(), true));
        self
    }

    /// A [`resume`](Self::resume) that finds damage before the end of the
    /// log, the index or a journal (not a tail torn by a kill, which is
    /// always cut) drops what is damaged and goes on: the damaged records
    /// and index lines are lost (their pages are fetched again), and so
    /// are the URLs of a damaged journal chunk. Without it such a resume
    /// fails with an error naming the file and the place.
    pub fn resume_discard_damaged(mut self, yes: bool) -> Self {
        self.discard_damaged = yes;
        self
    }

    /// How often a crawl with a state directory writes its checkpoint (default
    /// [`defaults::CHECKPOINT_INTERVAL`](crate::defaults::CHECKPOINT_INTERVAL);
    /// once more when it stops).
    pub fn checkpoint_interval(mut self, every: Duration) -> Self {
        self.checkpoint_interval = every;
        self
    }

    /// Compact the journals within a run once `min_bytes` of them are not
    /// covered by a base (and more than twice the last bases): for tests,
    /// which make small crawls compact (the default is 64 MiB).
    #[doc(hidden)]
    pub fn compact_in_run(mut self, min_bytes: u64) -> Self {
        let sort_chunk = self
            .compact_in_run
            .map_or(in_run::CHUNK, |(_, pairs)| pairs);
        self.compact_in_run = Some((min_bytes, sort_chunk));
        self
    }

    /// With [`CrawlerBuilder::compact_in_run`]: sort `pairs` pairs in RAM
    /// at a time (default 1M), so that a test's small crawl sorts in many
    /// runs.
    #[cfg(test)]
    pub(crate) fn compact_sort_chunk(mut self, pairs: usize) -> Self {
        let min_bytes = self
            .compact_in_run
            .map_or(in_run::MIN_UNCOVERED, |(bytes, _)| bytes);
        self.compact_in_run = Some((min_bytes, pairs));
        self
    }

    /// Strings kept in a new state directory's manifest for the
    /// application's own resume, read back by [`Crawler::stored_args`](crate::Crawler::stored_args)
    /// (`ringcrawl` keeps its command line there, and `--resume` applies
    /// it again). The crawl itself does not read them.
    pub fn state_args(mut self, args: Vec<String>) -> Self {
        self.state_args = args;
        self
    }

    /// Crawl as one node of crawl `crawl` on the Redis server at `url`
    /// (`redis://HOST:PORT/`), made by the first node that joins: hosts
    /// are split into partitions, each owned by one live node at a time
    /// through a lease, and every URL found goes through its partition's
    /// stream to its owner (`crate::cluster`). Roots are added to the
    /// crawl (a node may have none); the crawl ends, for every node, when
    /// every stream is drained. The output files get the node's name
    /// (`out.jsonl` → `out.NODE.jsonl`, or `{node}` in the name).
    pub fn cluster(mut self, url: impl Into<String>, crawl: impl Into<String>) -> Self {
        let draft = self.cluster.get_or_insert_with(Default::default);
        draft.url = url.into();
        draft.crawl = crawl.into();
        self
    }

    /// This node's name in a cluster crawl (default `HOSTNAME-PID`):
    /// unique among its live nodes.
    pub fn node_name(mut self, name: impl Into<String>) -> Self {
        self.cluster.get_or_insert_with(Default::default).node = Some(name.into());
        self
    }

    /// Host partitions of a cluster crawl this node creates (default
    /// [`defaults::PARTITIONS`](crate::defaults::PARTITIONS)); fixed when the
    /// crawl is made, and a node that gives another count for an existing crawl
    /// is refused.
    pub fn partitions(mut self, n: u32) -> Self {
        self.cluster.get_or_insert_with(Default::default).partitions = Some(n);
        self
    }

    /// How long a node's lease on a partition lasts without renewal (default
    /// [`defaults::LEASE_TTL`](crate::defaults::LEASE_TTL)): a node that dies
    /// or is cut off loses its partitions to the others after this long.
    pub fn lease_ttl(mut self, ttl: Duration) -> Self {
        self.cluster.get_or_insert_with(Default::default).lease_ttl = Some(ttl);
        self
    }
}
