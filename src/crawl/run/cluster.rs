//! A run's side of `--cluster`: joining the crawl before anything is
//! written, the share of `--frontier-memory` the node's intake takes,
//! starting the node's cluster thread, and taking its report once the
//! records are written. The node itself (what it says to Redis, when) is
//! `crate::cluster::node`; the shards' side is `crawl::shard`'s
//! `cluster.rs`.

use std::sync::Arc;

use crate::cluster::join::Joined;
use crate::cluster::link::Link;
use crate::cluster::node::{self, Running};
use crate::config::Config;
use crate::crawl::error::CrawlError;
use crate::job::Job;
use crate::output::cluster_gauges::ClusterGauges;
use crate::output::writer::Writer;
use crate::sync::Outstanding;

use super::outputs::Outputs;
use super::Outcome;

/// A cluster node's ledger takes this fraction (1/n) of --frontier-memory.
const INTAKE_SHARE: usize = 8;

/// Join the crawl `config.cluster` names (its fingerprint key and scope)
/// before anything is written; the roots go to their partitions' streams,
/// so `roots` is emptied. `None` for a crawl of one process.
pub(super) fn join(
    config: &mut Config,
    roots: &mut Vec<Job>,
) -> Result<Option<Joined>, CrawlError> {
    let Some(cluster) = &config.cluster else {
        return Ok(None);
    };
    let crawl = cluster.crawl.clone();
    let redis = crate::config::secret::redacted(&cluster.url).into_owned();
    let joined =
        crate::cluster::join::join(config, roots).map_err(|error| CrawlError::Cluster {
            crawl,
            redis,
            error,
        })?;
    roots.clear();
    Ok(Some(joined))
}

/// A node's ledger of the URLs it read from the streams and has not had
/// answered takes its share of --frontier-memory from the shards': taken
/// off `config.frontier_memory`, and returned (0 without a cluster).
pub(super) fn take_intake_share(config: &mut Config, joined: bool) -> usize {
    let intake_bytes = if joined {
        config.frontier_memory / INTAKE_SHARE
    } else {
        0
    };
    config.frontier_memory -= intake_bytes;
    intake_bytes
}

/// Start the node's cluster thread, with the link its shards share with
/// it; `outstanding` holds one for the node (counted in already), and the
/// thread holds the outputs' writers to know when a record is written;
/// it keeps `gauges` (a status server's) current.
pub(super) fn start_node(
    joined: Option<(Joined, usize)>,
    config: &Config,
    outstanding: &Arc<Outstanding>,
    outputs: &Outputs,
    gauges: Option<Arc<ClusterGauges>>,
) -> Result<Option<(Arc<Link>, Running)>, CrawlError> {
    let (Some((joined, intake_bytes)), Some(settings)) = (joined, &config.cluster) else {
        return Ok(None);
    };
    let shards = config.cores;
    let (link, rx) = Link::new(
        joined.meta.partitions,
        shards,
        config.max_tasks,
        config.scope.clone(),
    );
    let node = node::Settings {
        url: settings.url.clone(),
        crawl: settings.crawl.clone(),
        name: settings.node.clone(),
        node: joined.identity.clone(),
        lease_ttl: settings.lease_ttl,
        shards,
        key: joined.meta.key,
        scope: config.scope.clone(),
        intake: node::intake_limit(intake_bytes, shards),
        named: crate::cluster::admit::named_reserved(&config.roots),
        gauges,
    };
    let running = node::spawn(
        node,
        joined.store,
        link.clone(),
        rx,
        outstanding.clone(),
        outputs.writers().map(Writer::handle).collect(),
        joined.roots,
    )
    .map_err(|error| CrawlError::Thread {
        what: "cluster",
        error,
    })?;
    Ok(Some((link, running)))
}

/// The records are written: the node reports what is done and leaves;
/// its report goes into `outcome` (an error only logged when the crawl
/// was not over for the cluster).
pub(super) fn finish_node(running: Option<Running>, outcome: &mut Outcome) {
    if let Some(running) = running {
        let report = running.finish();
        if let Some(e) = report.error.as_ref().filter(|_| !report.over) {
            log::warn!("cluster: {e}");
        }
        outcome.cluster = Some(report);
    }
}
