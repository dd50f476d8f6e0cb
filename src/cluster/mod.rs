//! Crawling on many machines: host partitions on Redis Streams, owned
//! through leases (issue 20; this layer is the shared state and its
//! protocol, tested against a real `redis-server`; the engine does not use
//! it yet).
//!
//! The rule across machines is the rule across cores, one level up: a host
//! lives in one partition ([`partition::partition_of`], a fixed-key hash
//! unrelated to `shard_for`), a partition is owned by one node at a time
//! through a lease, and inside a node by the host's shard as always.
//!
//! # Keys (one crawl, prefix `ringcrawl:{crawl}:`)
//!
//! | key | type | what |
//! |---|---|---|
//! | `meta` | hash | `partitions`, the fingerprint key `key0`/`key1`: fixed at creation |
//! | `nodes` | sorted set | live nodes, scored by when their heartbeat expires (Redis's clock) |
//! | `lease:{p}` | string | the node that owns partition `p`, with a TTL it renews |
//! | `stream:{p}` | stream | batches of URLs found for `p`'s hosts (field `u`, one a line), read through group `crawl` |
//! | `done:{p}` | string | 8-byte fingerprints of `p`'s URLs that have a record |
//! | `records` | counter | records written, crawl-wide |
//!
//! # Protocol ([`store::Store`])
//!
//! - Any node appends the links it finds to their partitions' streams
//!   (one entry a batch). The owner reads its partitions' streams through
//!   the group; an entry stays pending (Redis's PEL) until the owner
//!   acknowledges it, and is deleted then.
//! - The owner acknowledges an entry only when every URL in it is done:
//!   dropped as already seen, or fetched, recorded, its links appended to
//!   their streams and its fingerprint appended to `done:{p}`. One
//!   connection per node carries these in order, so a URL's links are in
//!   Redis before the entry that brought it is acknowledged.
//! - So the crawl is over when every stream is empty, counted in one
//!   script ([`store::Store::backlog`]): nothing is left unread, pending,
//!   or half done anywhere.
//! - A new owner (after a death, a cut, or a join that moved the
//!   partition) loads `done:{p}` into its seen-set, claims the entries the
//!   old owner left pending (`XAUTOCLAIM`), and reads on: a URL with a
//!   record is not fetched again, except those whose fingerprint the old
//!   owner had not yet appended (its fetches in flight).
//! - Writes only an owner may make (`done:{p}`, acknowledgements) are
//!   scripts that check the lease first: a node that lost a lease without
//!   knowing writes nothing for that partition; and the node itself
//!   stops acting for a partition before its lease can have expired in
//!   Redis ([`lease::Leases`]).
//!
//! Not here: when to renew or read (the node's loop), how URLs reach the
//! shards, the CLI.

pub mod join;
pub mod lease;
pub mod ledger;
pub mod link;
pub mod node;
pub mod partition;
pub mod store;
pub mod wire;

/// Crawl `crawl` on the Redis server at `url` (`redis://HOST:PORT/`) as
/// `ringcrawl cluster status` prints it: its nodes, who holds how many
/// partitions, what waits in the streams, records written.
pub fn status(url: &str, crawl: &str) -> Result<store::Status, store::StoreError> {
    let mut store = store::Store::connect(url, crawl, "status", std::time::Duration::from_secs(5))?;
    store.status()
}

/// The names of one crawl's keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keys {
    crawl: String,
    prefix: String,
}

impl Keys {
    pub fn new(crawl: &str) -> Self {
        Keys {
            crawl: crawl.to_string(),
            prefix: format!("ringcrawl:{crawl}:"),
        }
    }

    pub fn crawl(&self) -> &str {
        &self.crawl
    }

    pub fn meta(&self) -> String {
        format!("{}meta", self.prefix)
    }

    pub fn nodes(&self) -> String {
        format!("{}nodes", self.prefix)
    }

    pub fn lease(&self, partition: u32) -> String {
        format!("{}lease:{partition}", self.prefix)
    }

    /// The streams' common prefix: `stream:{p}` is this and `p`.
    pub fn stream_prefix(&self) -> String {
        format!("{}stream:", self.prefix)
    }

    pub fn stream(&self, partition: u32) -> String {
        format!("{}{partition}", self.stream_prefix())
    }

    /// The partition whose stream `key` is.
    pub fn partition_of_stream(&self, key: &str) -> Option<u32> {
        key.strip_prefix(&self.stream_prefix())?.parse().ok()
    }

    pub fn done(&self, partition: u32) -> String {
        format!("{}done:{partition}", self.prefix)
    }

    pub fn records(&self) -> String {
        format!("{}records", self.prefix)
    }

    pub fn roots(&self) -> String {
        format!("{}roots", self.prefix)
    }

    pub fn added(&self) -> String {
        format!("{}added", self.prefix)
    }

    /// The counters node `node` publishes.
    pub fn node(&self, node: &str) -> String {
        format!("{}node:{node}", self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_key_names_its_partition() {
        let keys = Keys::new("c1");
        assert_eq!(keys.stream(17), "ringcrawl:c1:stream:17");
        assert_eq!(keys.partition_of_stream(&keys.stream(17)), Some(17));
        assert_eq!(keys.partition_of_stream("ringcrawl:c2:stream:17"), None);
        assert_eq!(keys.partition_of_stream("ringcrawl:c1:stream:x"), None);
    }
}
