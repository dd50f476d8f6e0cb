//! What the shards share, built once the outputs are open and before any
//! shard exists: the roots counted in and placed at their owners, the
//! held counts that keep the crawl from ending early, what a resumed
//! session hands over, the cluster node's thread, the WARC target, the
//! budget and the progress counters, gathered into
//! [`crate::crawl::shard::Shared`]. Not the shards themselves
//! (`executors.rs` starts them).

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use ringcrawl_links::urls;

use crate::cluster::join::Joined;
use crate::cluster::node::Running;
use crate::config::Config;
use crate::crawl::error::{Cause, CrawlError};
use crate::crawl::hooks::Hooks;
use crate::crawl::mesh::FetchSlots;
use crate::crawl::shard::Shared;
use crate::job::Job;
use crate::keys::shard_for;
use crate::output::captures::Captures;
use crate::output::progress::Progress;
use crate::output::warc::dedup::{self, Dedup};
use crate::output::writer::Writer;
use crate::sync::Outstanding;
use crate::sync::PerIp;

use super::begin::Begun;
use super::cluster;
use super::outputs::{self, Outputs};

/// The shared state, and what the run keeps beside it.
pub(super) struct Built {
    pub(super) shared: Shared,
    /// The roots by owner, each shard takes its own when it starts.
    pub(super) seeds: Arc<Mutex<Vec<Vec<Job>>>>,
    /// The cluster node's thread, if this is a cluster crawl.
    pub(super) node: Option<Running>,
    /// The WARC files of earlier runs, part of this crawl's archive.
    pub(super) earlier_warc_files: Vec<PathBuf>,
    /// A resumed crawl: the records its earlier runs wrote.
    pub(super) resumed: Option<u64>,
}

/// Count the roots in and build what the shards share; `joined` is a
/// cluster crawl's membership and the bytes of its intake.
pub(super) fn build(
    config: &Arc<Config>,
    begun: &mut Begun,
    outputs: &Outputs,
    roots: Vec<Job>,
    joined: Option<(Joined, usize)>,
    interrupt: Arc<AtomicBool>,
    hooks: Hooks,
) -> Result<Built, CrawlError> {
    let shards = config.cores;
    let held = held(
        shards,
        begun.resuming,
        joined.is_some(),
        begun.seed_files.is_some(),
    );
    let (seeds, outstanding) = count_in(roots, shards, held);
    let earlier_warc_files = begun.earlier_warc_files()?;
    let kept = begun.keep(shards)?;
    let resumed = kept.as_ref().and_then(|k| k.resumed);
    let seeds = Arc::new(Mutex::new(seeds));
    // A status server reads the node's numbers with the shards'.
    let gauges = hooks.live.as_ref().map(|live| live.cluster_gauges());
    let node = cluster::start_node(joined, config, &outstanding, outputs, gauges)?;
    let warc = outputs::warc_target(config, begun.session.as_ref())?;
    let progress = Arc::new(Progress::new(shards));
    let shard_died = Arc::new(AtomicBool::new(false));
    let budget = Arc::new(begun.budget(config, kept.as_ref()));
    let (link, node) = node.unzip();
    let shared = Shared {
        outstanding,
        records: outputs.writer.as_ref().map(Writer::handle),
        interrupt,
        shard_died,
        budget,
        progress,
        warc,
        slots: FetchSlots::new((0..shards).map(|i| config.workers_for(i)).collect()),
        hooks: Arc::new(hooks),
        dedup: config
            .warc_dedup
            .then(|| Arc::new(Dedup::new(dedup::DEFAULT_BUDGET))),
        captures: captures(config)?,
        cdxj: outputs.cdxj.as_ref().map(Writer::handle),
        spill_dir: begun.spill.path().to_path_buf(),
        seed_files: begun.seed_files.clone(),
        durability: kept.map(|k| k.durability),
        cluster: link,
        per_ip: config.per_ip.map(PerIp::new),
    };
    Ok(Built {
        shared,
        seeds,
        node,
        earlier_warc_files,
        resumed,
    })
}

/// In a recrawl (`--since`), the captures of the crawl it asks against,
/// their WARC files looked for in `--since-warc`, the record files' own
/// directories, then `--warc`. Lines that are not records are skipped
/// with a warning.
fn captures(config: &Config) -> Result<Option<Arc<Captures>>, CrawlError> {
    if config.since.is_empty() {
        return Ok(None);
    }
    let beside = config.since.iter().map(|records| match records.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    });
    let mut dirs: Vec<PathBuf> = Vec::new();
    for dir in config
        .since_warc
        .iter()
        .cloned()
        .chain(beside)
        .chain(config.warc_dir.clone())
    {
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    let (captures, loaded) =
        Captures::load(&config.since, dirs).map_err(|e| CrawlError::Since(Cause::new(e)))?;
    if loaded.skipped > 0 {
        log::warn!("--since: {loaded}");
    } else {
        log::info!("--since: {loaded}");
    }
    Ok(Some(Arc::new(captures)))
}

/// How many the count of outstanding URLs is held up by, besides the
/// roots. A resume holds it by one per shard until that shard has
/// replayed the journals: the crawl cannot end before they are read. A
/// cluster's node holds it by one until every node's streams are
/// drained. Each shard holds it by one until it has read its seeds.
fn held(shards: usize, resuming: bool, clustered: bool, seed_lists: bool) -> usize {
    let held = if resuming {
        shards
    } else {
        usize::from(clustered)
    };
    held + if seed_lists { shards } else { 0 }
}

/// Roots are counted in before any shard exists (invariant 3), and each
/// starts at its owner.
fn count_in(roots: Vec<Job>, shards: usize, held: usize) -> (Vec<Vec<Job>>, Arc<Outstanding>) {
    let mut seeds: Vec<Vec<Job>> = vec![Vec::new(); shards];
    let seeded = roots.len();
    for job in roots {
        if let Some(owner) = seeds.get_mut(shard_for(urls::host_of(&job.url), shards)) {
            owner.push(job);
        }
    }
    (seeds, Arc::new(Outstanding::new(seeded + held)))
}
