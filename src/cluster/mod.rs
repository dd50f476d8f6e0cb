//! Crawling on many machines (`--cluster URL --crawl NAME`): host
//! partitions on Redis Streams, owned through leases, with failover.
//!
//! The rule across machines is the rule across cores, one level up: a host
//! lives in one partition ([`partition::partition_of`], a fixed-key hash
//! unrelated to `shard_for`), a partition is owned by one node at a time
//! through a lease, and inside a node by the host's shard as always. Every
//! URL found goes to its partition's stream, whichever node owns it (the
//! finder's own partitions too): a URL is in Redis from the moment it is
//! found until its record is written, so a node that dies loses nothing
//! another node cannot redo.
//!
//! The files:
//!
//! - [`partition`] (pure): which partition a host is in, which partitions
//!   each live node should hold.
//! - [`lease`] (pure): a node's own clock on its leases, which gives a
//!   partition up before Redis can hand it to another node.
//! - [`clock`]: the boot clock leases are judged by (it counts a
//!   suspend).
//! - [`wire`] (pure): a queued URL as a line of a stream entry.
//! - [`admit`] (pure): whether a URL read from a stream may be queued
//!   (stream entries are untrusted input: scope, partition, and no
//!   link-local or metadata host).
//! - [`ledger`] (pure): which entries a node may acknowledge, from what
//!   its shards say became of each URL.
//! - [`store`]: the keys, commands and fenced scripts, one round trip
//!   each, over the synchronous client.
//! - [`join`]: a node joins its crawl before its shards start (settings,
//!   roots, scope).
//! - [`link`]: what a node's shards and its cluster thread share.
//! - [`node`]: the cluster thread, the only code that talks to Redis while
//!   the shards crawl. The shards' side is `crawl::shard`'s `cluster.rs`.
//!
//! # Keys (one crawl, prefix `ringcrawl:{crawl}:`)
//!
//! | key | type | what |
//! |---|---|---|
//! | `meta` | hash | `partitions`, the fingerprint key `key0`/`key1`: fixed at creation; `started` once a root was added |
//! | `roots` | set | every root given to any node (the crawl's scope) |
//! | `nodes` | sorted set | live nodes' incarnations (`name~token`), scored by when their heartbeat expires (Redis's clock) |
//! | `node:{name}` | hash | a node's counters for `ringcrawl cluster status` |
//! | `members` | set | every node name that ever joined |
//! | `generations` | hash | per node name, its latest process's generation (the name's fencing token) |
//! | `lease:{p}` | string | the incarnation that owns partition `p`, with a TTL it renews |
//! | `stream:{p}` | stream | batches of URLs found for `p`'s hosts (field `u`, [`wire`] lines), read through group `crawl` |
//! | `done:{p}` | string | 16 bytes per URL of `p` with a record: its fingerprint and its host's key |
//! | `records`, `added` | counters | records written and URLs appended, crawl-wide |
//!
//! # Protocol
//!
//! - Any node appends the links it finds to their partitions' streams
//!   (one entry a partition a flush). The owner reads its partitions'
//!   streams through the group and hands the URLs to its shards; an entry
//!   stays pending (Redis's PEL) until the owner acknowledges it, and is
//!   deleted then: Redis holds the backlog, not the history.
//! - The owner acknowledges an entry only when every URL in it is done
//!   ([`ledger`]): known already, or fetched (or refused by a limit) with
//!   its record written (the records' writer confirms), its links
//!   appended to their streams. One connection per node carries these in
//!   order, and one script ([`store::Store::finish`]) appends the URLs
//!   recorded to `done:{p}` and acknowledges the entries: a URL's links
//!   are in Redis before the entry that brought it goes.
//! - So the crawl is over when every stream is empty, counted in one
//!   script ([`store::Store::backlog`]): nothing is left unread, pending,
//!   or half done anywhere. Every node sees it and ends.
//! - A new owner (after a death, a cut, or a join that moved the
//!   partition) loads `done:{p}` into its seen-set, claims the entries the
//!   old owner left pending (`XAUTOCLAIM`), and reads on: a URL with a
//!   record is not fetched again, except those whose record the old owner
//!   wrote but had not yet reported. Those and the old owner's fetches in
//!   flight share its `--max-tasks` fetch slots ([`link::Link::behind`]),
//!   so a node's death repeats at most that many. Robots rules and delays
//!   are rebuilt: robots.txt is fetched again by the new owner.
//! - Writes only an owner may make (`done:{p}`, acknowledgements) check
//!   the lease first, in the script: a node that lost a lease without
//!   knowing writes nothing for that partition. A read that reaches Redis
//!   after its node's lease ran out leaves its entries pending for that
//!   node; the owner claims such entries back ([`store::Store::sweep`],
//!   every third of the TTL). And the node itself stops
//!   acting for a partition before its lease can have expired in Redis
//!   ([`lease::Leases`], on the boot clock, [`clock`]): its shards start no
//!   fetch and write no record and no archive for it. Leases, heartbeats
//!   and consumers are a process's [`incarnation`] (its name, its
//!   generation and a random token), so a node started again under the
//!   name of one that is only cut off is another holder to all of this;
//!   and every script a process runs while it crawls checks that its
//!   generation is its name's latest, so the old process, back, stops.
//! - A node whose name joined the crawl before (`members`) appends to
//!   its output files; a new one starts them afresh. A node joins only
//!   when no other incarnation of its name has a live heartbeat (it waits
//!   up to two TTLs for one just killed to expire), then takes its name's
//!   next generation ([`store::Store::next_generation`]).
//!
//! Not here: the crawl engine (`crate::crawl`), the CLI.

pub(crate) mod admit;
pub(crate) mod clock;
pub(crate) mod join;
pub(crate) mod lease;
pub(crate) mod ledger;
pub(crate) mod link;
pub(crate) mod metrics;
pub(crate) mod node;
pub(crate) mod partition;
pub(crate) mod store;
pub(crate) mod wire;

/// Crawl `crawl` on the Redis server at `url` (`redis://HOST:PORT/`) as
/// `ringcrawl cluster status` prints it: its nodes, who holds how many
/// partitions, what waits in the streams, records written.
pub fn status(url: &str, crawl: &str) -> Result<store::Status, store::StoreError> {
    let mut store = store::Store::connect(url, crawl, "status", std::time::Duration::from_secs(5))?;
    store.status()
}

/// [`status`] again and again over one connection (`ringcrawl cluster
/// status --serve` reads it each second): a read that fails drops the
/// connection, and the next read connects again. Not `Debug`: the URL
/// may hold a password.
pub struct StatusReader {
    url: String,
    crawl: String,
    timeout: std::time::Duration,
    store: Option<store::Store>,
}

impl StatusReader {
    /// A reader of crawl `crawl` at `url`; each connection and command
    /// takes at most `timeout`. Connects on the first read.
    pub fn new(url: &str, crawl: &str, timeout: std::time::Duration) -> StatusReader {
        StatusReader {
            url: url.to_string(),
            crawl: crawl.to_string(),
            timeout,
            store: None,
        }
    }

    /// The crawl now, as [`status`] reads it.
    pub fn read(&mut self) -> Result<store::Status, store::StoreError> {
        let mut store = match self.store.take() {
            Some(store) => store,
            None => store::Store::connect(&self.url, &self.crawl, "status", self.timeout)?,
        };
        let status = store.status()?;
        self.store = Some(store);
        Ok(status)
    }
}

/// The names of one crawl's keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Keys {
    crawl: String,
    prefix: String,
}

impl Keys {
    pub(crate) fn new(crawl: &str) -> Self {
        Keys {
            crawl: crawl.to_string(),
            prefix: format!("ringcrawl:{crawl}:"),
        }
    }

    pub(crate) fn crawl(&self) -> &str {
        &self.crawl
    }

    pub(crate) fn meta(&self) -> String {
        format!("{}meta", self.prefix)
    }

    pub(crate) fn nodes(&self) -> String {
        format!("{}nodes", self.prefix)
    }

    pub(crate) fn lease(&self, partition: u32) -> String {
        format!("{}lease:{partition}", self.prefix)
    }

    /// The streams' common prefix: `stream:{p}` is this and `p`.
    pub(crate) fn stream_prefix(&self) -> String {
        format!("{}stream:", self.prefix)
    }

    pub(crate) fn stream(&self, partition: u32) -> String {
        format!("{}{partition}", self.stream_prefix())
    }

    /// The partition whose stream `key` is.
    pub(crate) fn partition_of_stream(&self, key: &str) -> Option<u32> {
        key.strip_prefix(&self.stream_prefix())?.parse().ok()
    }

    pub(crate) fn done(&self, partition: u32) -> String {
        format!("{}done:{partition}", self.prefix)
    }

    pub(crate) fn records(&self) -> String {
        format!("{}records", self.prefix)
    }

    /// Per node name, the last report of finished work its latest
    /// process sent, and Redis's answer to it.
    pub(crate) fn reports(&self) -> String {
        format!("{}reports", self.prefix)
    }

    pub(crate) fn roots(&self) -> String {
        format!("{}roots", self.prefix)
    }

    /// Each node name's last add of links (its process and number):
    /// an add sent again after its answer was lost is written once.
    pub(crate) fn adds(&self) -> String {
        format!("{}adds", self.prefix)
    }

    pub(crate) fn added(&self) -> String {
        format!("{}added", self.prefix)
    }

    /// The counters node `node` publishes.
    pub(crate) fn node(&self, node: &str) -> String {
        format!("{}node:{node}", self.prefix)
    }

    /// Every node name that ever joined the crawl.
    pub(crate) fn members(&self) -> String {
        format!("{}members", self.prefix)
    }

    /// Per node name, the generation of its latest process.
    pub(crate) fn generations(&self) -> String {
        format!("{}generations", self.prefix)
    }
}

/// A process's identity in Redis (its heartbeat, its leases, its name as
/// a stream consumer): its node name, its generation (the fencing token
/// of the name: one more at each join, `store::Store::next_generation`)
/// and a random token, so that a node started again under its name while
/// the old process may still live (cut off, not dead) is another holder
/// to the fencing: the old one's leases run out, it cannot renew them,
/// Redis refuses its writes, and once it reaches Redis again every
/// script it runs answers that it is superseded, and it stops.
pub(crate) fn incarnation(name: &str, generation: u64) -> String {
    format!("{name}~{generation}~{:016x}", fastrand::u64(..))
}

/// The node name of an identity [`incarnation`] made (node names hold no
/// `~`).
pub(crate) fn name_of(identity: &str) -> &str {
    identity.split_once('~').map_or(identity, |(name, _)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_incarnation_is_its_name_and_a_token_of_its_own() {
        let (a, b) = (incarnation("n1", 3), incarnation("n1", 3));
        assert!(a.starts_with("n1~3~"), "{a}");
        assert_ne!(a, b);
        assert_eq!(
            (name_of(&a), name_of(&b), name_of("n1")),
            ("n1", "n1", "n1")
        );
    }

    #[test]
    fn a_stream_key_names_its_partition() {
        let keys = Keys::new("c1");
        assert_eq!(keys.stream(17), "ringcrawl:c1:stream:17");
        assert_eq!(keys.partition_of_stream(&keys.stream(17)), Some(17));
        assert_eq!(keys.partition_of_stream("ringcrawl:c2:stream:17"), None);
        assert_eq!(keys.partition_of_stream("ringcrawl:c1:stream:x"), None);
    }
}
