//! How a node joins its crawl, on the calling thread before the shards
//! start: connect, make the crawl or read its settings (partitions, the
//! fingerprint key every node must share), add this node's roots to their
//! partitions' streams, and take the crawl's scope from all of its roots.
//!
//! Not the node's loop (`node`).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use ringcrawl_links::urls;

use crate::config::Config;
use crate::job::Job;

use super::partition::partition_of;
use super::store::{may_evict, Meta, Store, StoreError};
use super::wire;

/// A node that joined: its connection and the crawl's settings.
pub(crate) struct Joined {
    pub store: Store,
    /// This process's identity in Redis ([`super::incarnation`]).
    pub identity: String,
    /// The node's name had joined this crawl before: it appends to its
    /// output files.
    pub returning: bool,
    pub meta: Meta,
    /// Roots the crawl had when the scope was made.
    pub roots: u64,
}

/// Join the crawl `config.cluster` names, adding `seeds` (this node's
/// roots and their guessed sitemaps); `config` gets the crawl's
/// fingerprint key and scope.
pub(crate) fn join(config: &mut Config, seeds: &[Job]) -> Result<Joined, StoreError> {
    let Some(settings) = config.cluster.clone() else {
        return Err(StoreError::Reply("join: not a cluster crawl"));
    };
    let timeout = super::node::command_timeout(settings.lease_ttl);
    // Its identity once its generation is known (below): the bare name
    // until then, which no process's identity is.
    let mut store = Store::connect(&settings.url, &settings.crawl, &settings.node, timeout)?;
    let meta = store.create_or_join(settings.partitions, config.fingerprint_key)?;
    match store.eviction_policy() {
        Some(policy) if may_evict(&policy) => log::warn!(
            "cluster: Redis's maxmemory-policy is {policy}: when it is full it may evict this crawl's leases, streams or done logs, losing or repeating work; run it with maxmemory-policy noeviction (docs/cluster.md)"
        ),
        Some(_) => {}
        None => log::debug!("cluster: Redis's maxmemory-policy could not be read (CONFIG GET refused)"),
    }
    // One live process per name: a node started again at once after a
    // `kill -9` waits for the dead one's heartbeat to run out (a lease
    // TTL at most); one whose namesake still beats is refused.
    let patience = Instant::now() + settings.lease_ttl * 2;
    while store.others_alive(&settings.node)? > 0 {
        if Instant::now() >= patience {
            return Err(StoreError::NameInUse {
                node: settings.node.clone(),
                crawl: settings.crawl.clone(),
            });
        }
        std::thread::sleep((settings.lease_ttl / 8).min(Duration::from_millis(250)));
    }
    // The name's next generation, this process's: any process of the
    // name still alive (cut off) is superseded from now on.
    let generation = store.next_generation(&settings.node)?;
    let identity = super::incarnation(&settings.node, generation);
    store.set_identity(&identity);
    let returning = store.enroll(&settings.node)?;
    config.fingerprint_key = meta.key;
    let mut by_partition: BTreeMap<u32, Vec<Job>> = BTreeMap::new();
    for job in seeds {
        let p = partition_of(urls::host_of(&job.url), meta.partitions);
        by_partition.entry(p).or_default().push(job.clone());
    }
    let batches: Vec<(u32, String)> = by_partition
        .iter()
        .map(|(&p, jobs)| (p, wire::encode(jobs)))
        .collect();
    let roots: Vec<String> = config.roots.iter().map(|r| r.to_string()).collect();
    store.add_roots(&roots, &batches)?;
    let all = store.roots()?;
    let parsed: Vec<url::Url> = all.iter().filter_map(|r| url::Url::parse(r).ok()).collect();
    config.scope = config.scope.with_roots(&parsed);
    store.heartbeat(settings.lease_ttl)?;
    Ok(Joined {
        store,
        identity,
        returning,
        meta,
        roots: all.len() as u64,
    })
}
