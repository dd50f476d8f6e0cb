//! The only code that knows about threads: start one glommio executor per
//! shard (pinned to the CPUs of the process's affinity mask), connect them
//! with the channel mesh, seed the roots at their owners, wait for the
//! global join, merge the shards' results.
//!
//! The executor threads' placement, memory and death watch are
//! `executors.rs`. Not the crawl loop itself (that is `crate::crawl::shard`),
//! nor the CLI.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use glommio::channels::channel_mesh::MeshBuilder;
use glommio::LocalExecutorPoolBuilder;

use crate::cluster::link::Link;
use crate::cluster::node::{self, NodeReport};
use crate::config::budget::Spent;
use crate::config::{Config, Output, DEFAULT_CHECKPOINT_INTERVAL};
use crate::crawl::budget::Budget;
use crate::crawl::checkpoints::Checkpoints;
use crate::crawl::error::{Cause, CrawlError};
use crate::crawl::hooks::Hooks;
use crate::crawl::mesh::{channel_capacity, Batch, FetchSlots, Outbox};
use crate::crawl::seeds;
use crate::crawl::shard::{Durability, Shard, ShardResult, Shared};
use crate::job::Job;
use crate::keys::shard_for;
use crate::output::progress::{self, Progress};
use crate::output::record::Record;
use crate::output::stats::{ShardBalance, Stats};
use crate::output::wacz;
use crate::output::warc::dedup::{self, Dedup};
use crate::output::warc::file::WarcTarget;
use crate::output::writer::{Stopped, Writer};
use crate::state::session::{Session, SEEDS_DIR};
use crate::state::StateError;
use crate::sync::Outstanding;
use crate::web::urls;

mod executors;
mod spill_dir;

use executors::{executor_hint, placement, DeathWatch, IO_MEMORY};
use spill_dir::SpillDir;

/// The result of a finished crawl.
#[derive(Debug)]
pub struct Outcome {
    /// Counters of all shards merged.
    pub stats: Stats,
    /// Every record, if `Config::keep_records` (in no particular order).
    pub records: Vec<Record>,
    /// Wall time from the first shard's start to the last shard's end.
    pub elapsed: Duration,
    /// The crawl ended before work ran out (a shard failed, or interrupt).
    pub aborted: bool,
    /// The crawl was interrupted (SIGINT/SIGTERM).
    pub interrupted: bool,
    /// The budget that stopped the crawl, if one did.
    pub spent: Option<Spent>,
    /// Writing the JSONL output or the index, closing the WARC files or
    /// writing the WACZ failed (the crawl was stopped for a JSONL or index
    /// error; the others come at its end).
    pub output_error: Option<String>,
    /// The reader of the JSONL output went away (EPIPE), and the crawl was
    /// stopped for it.
    pub output_closed: bool,
    /// A resumed crawl: the records its earlier runs wrote.
    pub resumed: Option<u64>,
    /// A cluster crawl: what this node's cluster thread did.
    pub cluster: Option<NodeReport>,
}

/// Prepare the process ([`crate::process::prepare`]), then crawl with no
/// hooks (the tests' and benchmarks' entry).
pub fn run(config: Config, interrupt: Arc<AtomicBool>) -> Result<Outcome, CrawlError> {
    crate::process::prepare();
    run_with(config, interrupt, Hooks::default())
}

/// Crawl until every in-scope URL reachable from the roots was taken up,
/// or until `interrupt` is set, handing pages to `hooks`. Changes nothing
/// process-wide: the open-file limit is read, not raised.
pub fn run_with(
    mut config: Config,
    interrupt: Arc<AtomicBool>,
    hooks: Hooks,
) -> Result<Outcome, CrawlError> {
    let fds = crate::process::open_file_limit();
    let budget = usize::try_from(fds)
        .unwrap_or(usize::MAX)
        .saturating_sub(FD_RESERVE + 16 * config.cores)
        .max(1);
    if config.max_tasks > budget {
        log::warn!(
            "max-tasks {} exceeds the open-file limit ({fds}); using {budget}",
            config.max_tasks
        );
        config.max_tasks = budget;
    }
    // A shard needs a fetch slot of its own: fewer slots than cores means
    // fewer shards, not more fetches than asked for.
    config.cores = config.cores.min(config.max_tasks).max(1);
    // Idle keep-alive connections are open files too: they get what the
    // fetches leave of the budget.
    let spare = budget.saturating_sub(config.max_tasks) / config.cores.max(1);
    config.idle_connections = config.idle_connections.min(spare);
    // Roots (each with its origin's guessed sitemap after it) are checked
    // before anything starts.
    let mut roots: Vec<Job> = Vec::new();
    for root in &config.roots {
        if !config.scope.allows_start(root) {
            return Err(CrawlError::RootExcluded(root.to_string()));
        }
        roots.push(Job::root(root.as_str().to_string(), config.max_redirect));
        if let Some(sitemap) = config
            .sitemaps
            .then(|| seeds::guessed_sitemap(root, &config.scope, config.max_redirect))
            .flatten()
        {
            roots.push(sitemap);
        }
    }
    // --cluster: join the crawl (its fingerprint key and scope) before
    // anything is written; the roots go to their partitions' streams.
    let joined = match &config.cluster {
        Some(cluster) => {
            let crawl = cluster.crawl.clone();
            let redis = crate::config::secret::redacted(&cluster.url).into_owned();
            let joined = crate::cluster::join::join(&mut config, &roots).map_err(|error| {
                CrawlError::Cluster {
                    crawl,
                    redis,
                    error,
                }
            })?;
            roots.clear();
            Some(joined)
        }
        None => None,
    };
    // A node's ledger of the URLs it read from the streams and has not
    // had answered takes its share of --frontier-memory from the shards'.
    let intake_bytes = if joined.is_some() {
        config.frontier_memory / INTAKE_SHARE
    } else {
        0
    };
    config.frontier_memory -= intake_bytes;
    // --state / --resume: the directory is made or opened (and locked),
    // and a resumed crawl's outputs repaired, before anything is written.
    // Damage, and a resume that asks for what the crawl cannot change,
    // are errors of their own (the CLI exits 2 on them): they name the
    // file or the directory.
    let mut session = Session::begin(&mut config).map_err(CrawlError::state)?;
    for note in session.iter().flat_map(|s| &s.notes) {
        log::warn!("resume: {note}");
    }
    let resuming = session.as_ref().is_some_and(|s| s.done.is_some());
    // Seed lists: read once, split by owner into files in the spill
    // directory (kept in the state directory with --state, where a resume
    // takes them up), their hosts added to the scope (before the scope is
    // shared); the shards read their files as the crawl goes.
    let spill = SpillDir::make(&config)?;
    let spill_dir = spill.path().to_path_buf();
    let kept_seeds = session.as_ref().map(|s| s.path().join(SEEDS_DIR));
    let seeds_kept = kept_seeds
        .as_ref()
        .is_some_and(|dir| seeds::split::is_kept(dir));
    let seed_files = if config.seeds.is_empty() && !seeds_kept {
        None
    } else {
        let started = Instant::now();
        let (cores, mode) = (config.cores, config.scope.mode());
        let split = match &kept_seeds {
            Some(dir) => seeds::split::split_kept(&config.seeds, cores, mode, dir),
            None => seeds::split::split(&config.seeds, cores, mode, &spill_dir),
        }
        .map_err(|e| CrawlError::Seeds(Cause::new(e)))?;
        if split.kept && resuming {
            let left: u64 = split
                .files
                .iter()
                .map(|f| {
                    std::fs::metadata(&f.path)
                        .map_or(0, |m| m.len())
                        .saturating_sub(f.start)
                })
                .sum();
            log::info!(
                "seeds: {} roots on {} hosts kept in the state directory; {left} bytes of them not yet taken",
                split.roots,
                split.hosts.len(),
            );
        } else {
            log::info!(
                "seeds: {} roots on {} hosts, {} bad lines, read in {:.1?}",
                split.roots,
                split.hosts.len(),
                split.bad,
                started.elapsed()
            );
        }
        config.scope.add_seeds(split.hosts);
        Some(Arc::<[seeds::split::SeedFile]>::from(split.files))
    };
    // A cluster node that comes back under its name appends to its files:
    // it keeps the records it reported before (Redis counts them done).
    let returning = joined.as_ref().is_some_and(|j| j.returning);
    let appending = resuming || returning;
    if returning {
        repair_for_return(&config)?;
    }
    let config = Arc::new(config);
    let shards = config.cores;
    let writer = Writer::open(&config.output, config.output_backlog, appending).map_err(|e| {
        let what = match &config.output {
            Output::File(path) => format!("opening --output {}", path.display()),
            _ => "opening --output".to_string(),
        };
        CrawlError::output(what, e)
    })?;
    // A WACZ needs the index: the --cdxj file, else one beside the package
    // (so a package that could not be written there fails now, not after
    // the crawl).
    let index = config
        .cdxj
        .clone()
        .or_else(|| config.wacz.as_deref().map(wacz::scratch_index));
    let cdxj = match &index {
        Some(path) => Writer::open(
            &Output::File(path.clone()),
            config.output_backlog,
            appending && config.cdxj.is_some(),
        )
        .map_err(|e| {
            let what = match config.cdxj {
                Some(_) => format!("opening --cdxj {}", path.display()),
                None => format!("opening the index for --wacz, {}", path.display()),
            };
            CrawlError::output(what, e)
        })?,
        None => None,
    };

    // Roots are counted in before any shard exists (invariant 3), and each
    // starts at its owner.
    let mut seeds: Vec<Vec<Job>> = vec![Vec::new(); shards];
    let seeded = roots.len();
    for job in roots {
        if let Some(owner) = seeds.get_mut(shard_for(urls::host_of(&job.url), shards)) {
            owner.push(job);
        }
    }
    // A resume holds the count up by one per shard until that shard has
    // replayed the journals: the crawl cannot end before they are read. A
    // cluster's node holds it by one until every node's streams are
    // drained.
    let held = if resuming {
        shards
    } else {
        usize::from(joined.is_some())
    };
    // Each shard holds it by one until it has read its seeds.
    let held = held + if seed_files.is_some() { shards } else { 0 };
    let outstanding = Arc::new(Outstanding::new(seeded + held));
    let mut resumed = None;
    let earlier_warc_files = match &session {
        Some(session) => session.earlier_warc_files().map_err(CrawlError::state)?,
        None => Vec::new(),
    };
    let durability = match &mut session {
        Some(session) => {
            let done = session.done.take();
            resumed = done.as_ref().map(|d| d.records);
            let (done, pages, bytes) = match done {
                Some(d) => (d.by_shard, d.pages, d.bytes),
                None => (vec![None; shards], 0, 0),
            };
            Some((
                Arc::new(Durability {
                    journals: (0..shards).map(|i| session.journal(i)).collect(),
                    replay: session.earlier_journals().map_err(CrawlError::state)?,
                    done: std::sync::Mutex::new(done),
                    resuming,
                }),
                pages,
                bytes,
            ))
        }
        None => None,
    };
    let seeds = Arc::new(std::sync::Mutex::new(seeds));
    let cluster = match (joined, &config.cluster) {
        (Some(joined), Some(settings)) => {
            let (link, rx) = Link::new(joined.meta.partitions, shards, config.scope.clone());
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
            };
            let running = node::spawn(
                node,
                joined.store,
                link.clone(),
                rx,
                outstanding.clone(),
                writer.iter().chain(&cdxj).map(Writer::handle).collect(),
                joined.roots,
            )
            .map_err(|error| CrawlError::Thread {
                what: "cluster",
                error,
            })?;
            Some((link, running))
        }
        _ => None,
    };
    let mesh =
        (shards > 1).then(|| MeshBuilder::<Batch, _>::full(shards, channel_capacity(shards)));

    let warc = match &config.warc_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| CrawlError::output(format!("creating --warc {}", dir.display()), e))?;
            let secs = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            Some(WarcTarget {
                dir: dir.clone(),
                prefix: session
                    .as_ref()
                    .and_then(Session::warc_prefix)
                    .unwrap_or_else(|| match &config.cluster {
                        Some(c) => {
                            format!("{}{secs}-{}", node_warc_prefix(&c.node), std::process::id())
                        }
                        None => format!("ringcrawl-{secs}-{}", std::process::id()),
                    }),
                shard: 0,
                max_size: config.warc_max_size,
            })
        }
        None => None,
    };
    let progress = Arc::new(Progress::new(shards));
    let shard_died = Arc::new(AtomicBool::new(false));
    let budget = Arc::new(match (&durability, &session) {
        (Some((_, pages, bytes)), Some(session)) => Budget::resumed(
            config.budget,
            Instant::now(),
            *pages,
            *bytes,
            session.elapsed_before,
        ),
        _ => Budget::new(config.budget, Instant::now()),
    });
    let shared = Shared {
        outstanding: outstanding.clone(),
        records: writer.as_ref().map(Writer::handle),
        interrupt: interrupt.clone(),
        shard_died: shard_died.clone(),
        budget: budget.clone(),
        progress: progress.clone(),
        warc,
        slots: FetchSlots::new((0..shards).map(|i| config.workers_for(i)).collect()),
        hooks: Arc::new(hooks),
        dedup: config
            .warc_dedup
            .then(|| Arc::new(Dedup::new(dedup::DEFAULT_BUDGET))),
        cdxj: cdxj.as_ref().map(Writer::handle),
        spill_dir,
        seed_files,
        durability: durability.map(|(d, _, _)| d),
        cluster: cluster.as_ref().map(|(link, _)| link.clone()),
    };
    let reporting = Arc::new(AtomicBool::new(false));
    let reporter = config.progress.map(|interval| {
        let redraw = std::io::stderr().is_terminal();
        progress::spawn_reporter(progress.clone(), reporting.clone(), redraw, interval)
    });
    let started = Instant::now();
    let checkpoints = session.map(|session| {
        Checkpoints::start(
            session,
            config
                .state
                .as_ref()
                .map_or(DEFAULT_CHECKPOINT_INTERVAL, |s| s.checkpoint_interval),
            budget.clone(),
            progress.clone(),
            started,
        )
    });
    let handles = LocalExecutorPoolBuilder::new(placement(shards, config.pin_threads))
        .name("ringcrawl")
        // Registered buffers serve only DMA file I/O, which only the spill
        // of queues does (WARC files are buffered; the spill's blocks of
        // 256 KiB fall back to plain aligned buffers): glommio's minimum,
        // 64 KiB, not its 10 MiB default. They are pinned, so each byte is
        // resident.
        .io_memory(IO_MEMORY)
        .on_all_shards({
            let (config, shared) = (config.clone(), shared.clone());
            move || async move {
                // If this thread dies before the shard returns, the others
                // stop instead of waiting for it forever.
                let watch = DeathWatch::arm(shared.shard_died.clone());
                let (senders, receivers, id) = match mesh {
                    Some(mesh) => {
                        #[allow(
                            clippy::expect_used,
                            reason = "a shard outside the mesh cannot crawl; its death watch stops the others"
                        )]
                        let (senders, receivers) = mesh.join().await.expect("mesh join");
                        let id = senders.peer_id();
                        (Some(senders), Some(receivers), id)
                    }
                    None => (None, None, 0),
                };
                let roots = seeds
                    .lock()
                    .map(|mut s| s.get_mut(id).map(std::mem::take).unwrap_or_default())
                    .unwrap_or_default();
                let outbox = Outbox::new(senders, config.cores);
                let shard = Shard::new(id, config, shared, outbox);
                let result = shard.run(receivers, roots).await;
                watch.disarm();
                result
            }
        })
        .map_err(|e| CrawlError::Executors(e.to_string()))?;

    let mut outcome = Outcome {
        stats: Stats::default(),
        records: Vec::new(),
        elapsed: Duration::ZERO,
        aborted: false,
        interrupted: false,
        spent: None,
        output_error: None,
        output_closed: false,
        resumed,
        cluster: None,
    };
    // A resumed crawl's archive is every run's files.
    let mut warc_files = earlier_warc_files;
    let mut shard_failed = false;
    let mut shard_ran = false;
    let mut unavailable = None;
    for joined in handles.join_all() {
        match joined {
            Ok(ShardResult {
                stats,
                records,
                cpu,
                output_error,
                warc_files: files,
            }) => {
                shard_ran = true;
                warc_files.extend(files);
                let balance = ShardBalance {
                    urls: stats.urls,
                    cpu_ms: crate::output::record::millis(cpu),
                };
                outcome.stats.merge(&stats, Some(balance));
                outcome.records.extend(records);
                outcome.output_error = outcome.output_error.or(output_error);
            }
            Err(e) => {
                shard_failed = true;
                outcome.aborted = true;
                let hint = executor_hint(&e.to_string());
                if !hint.is_empty() {
                    unavailable = Some(format!("{e}{hint}"));
                }
                log::error!("a shard failed: {e}{hint}");
            }
        }
    }
    // Every shard is done: the writer writes what they left (a dead one's
    // lines too) and says whether the output ended early.
    match writer.and_then(Writer::finish) {
        Some(Stopped::ReaderGone) => outcome.output_closed = true,
        Some(Stopped::Failed(e)) => outcome.output_error = Some(e),
        None => {}
    }
    if let Some(Stopped::Failed(e)) = cdxj.and_then(Writer::finish) {
        outcome.output_error.get_or_insert(format!("--cdxj: {e}"));
    }
    // The records are written: the node reports what is done and leaves.
    if let Some((_, running)) = cluster {
        let report = running.finish();
        if let Some(e) = report.error.as_ref().filter(|_| !report.over) {
            log::warn!("cluster: {e}");
        }
        outcome.cluster = Some(report);
    }
    outcome.elapsed = started.elapsed();
    // The last checkpoint, once every record is written.
    if let Some(checkpoints) = checkpoints {
        if let Err(e) = checkpoints.finish() {
            outcome
                .output_error
                .get_or_insert(format!("writing the checkpoint: {e}"));
        }
    }
    reporting.store(true, Ordering::Relaxed);
    if let Some(reporter) = reporter {
        reporter.thread().unpark();
        let _ = reporter.join();
    }
    if let (Some(out), Some(index)) = (&config.wacz, &index) {
        package_wacz(&config, out, index, &warc_files, shard_failed, &mut outcome);
    }
    // The shards' spilled queues: nothing a later crawl could use (yet).
    drop(spill);
    outcome.stats.peak_rss_kib = peak_rss_kib().unwrap_or(0);
    outcome.interrupted = interrupt.load(Ordering::Relaxed);
    outcome.spent = budget.reached();
    // A spent budget leaves work queued on purpose: not an abort.
    outcome.aborted |= outcome.interrupted || (outstanding.count() != 0 && outcome.spent.is_none());
    // No shard could start for want of io_uring: the crawl never ran.
    match unavailable {
        Some(why) if !shard_ran => Err(CrawlError::IoUringUnavailable(why)),
        _ => Ok(outcome),
    }
}

/// The start of a cluster node's WARC file names (the process's time and
/// PID follow).
fn node_warc_prefix(node: &str) -> String {
    format!("ringcrawl-{node}-")
}

/// Before a cluster node that comes back appends to its files: cut the
/// JSONL or CDXJ line a `kill -9` of its last process tore, and repair
/// that process's last WARC file of each shard.
fn repair_for_return(config: &Config) -> Result<(), CrawlError> {
    // What a repair fails on is a file of the crawl's outputs, not of a
    // state directory (a cluster node has none).
    let failed = |flag: &str, e: StateError| match e {
        StateError::Io { what, path, source } => {
            CrawlError::output(format!("{flag}: {what} {}", path.display()), source)
        }
        e => CrawlError::state(e),
    };
    let records = match &config.output {
        Output::File(path) => Some(path.as_path()),
        _ => None,
    };
    for path in records.into_iter().chain(config.cdxj.as_deref()) {
        let cut = crate::state::repair::cut_torn_line(path)
            .map_err(|e| failed("appending to an output", e))?;
        if cut > 0 {
            log::warn!("{}: cut a torn last line ({cut} bytes)", path.display());
        }
    }
    if let (Some(dir), Some(cluster)) = (&config.warc_dir, &config.cluster) {
        let prefix = node_warc_prefix(&cluster.node);
        for note in crate::state::repair::repair_latest_warcs(dir, &prefix)
            .map_err(|e| failed("--warc", e))?
        {
            log::warn!("{note}");
        }
    }
    Ok(())
}

/// `--wacz`: package the WARC files the shards closed with the index, on
/// this thread now that the executors are gone, unless the archive is
/// incomplete (a shard died, so its files were not closed; a WARC file or
/// the index could not be written). Why not, if not, goes into
/// `outcome.output_error`; the WARC files stay either way, and the scratch
/// index (when `--cdxj` did not ask for one) goes.
fn package_wacz(
    config: &Config,
    out: &Path,
    index: &Path,
    warc_files: &[PathBuf],
    shard_died: bool,
    outcome: &mut Outcome,
) {
    let not_written = format!("--wacz {} not written", out.display());
    if shard_died {
        outcome.output_error.get_or_insert(format!(
            "{not_written}: a shard died, its WARC files may be incomplete"
        ));
    } else if let Some(e) = &mut outcome.output_error {
        e.push_str(&format!(" ({not_written})"));
    } else {
        let title = match config.roots.as_slice() {
            [] => "ringcrawl crawl".to_string(),
            [root] => format!("ringcrawl crawl of {root}"),
            [root, more @ ..] => format!("ringcrawl crawl of {root} and {} more", more.len()),
        };
        let package = wacz::Package {
            warcs: warc_files,
            index,
            main_url: config.roots.first().map(|r| r.as_str()),
            title: &title,
        };
        match wacz::write(&package, out) {
            Ok(written) => log::info!(
                "wrote {} ({} pages, {} bytes)",
                out.display(),
                written.pages,
                written.bytes
            ),
            Err(e) => {
                outcome.output_error =
                    Some(format!("{not_written}: {e} (the WARC files are kept)"));
            }
        }
    }
    if config.cdxj.is_none() {
        let _ = std::fs::remove_file(index);
    }
}

/// The process's peak resident memory (`VmHWM` of /proc/self/status), in
/// KiB. Unlike `getrusage`'s `ru_maxrss`, it starts afresh at `exec`, so a
/// process spawned from a large one reports its own peak.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A cluster node's ledger takes this fraction (1/n) of --frontier-memory.
const INTAKE_SHARE: usize = 8;

/// File descriptors kept free for everything but the sockets of fetches and
/// idle connections (output files, WARC files, io_uring rings, eventfds).
/// The resolver's sockets need no room of their own: a lookup runs while
/// its fetch holds a slot and no connection yet, one socket at a time (UDP,
/// then TCP after a truncated answer), and lookups of one name are shared.
/// Measured: 400 hosts resolved through a nameserver answering in 300 ms,
/// `ulimit -n 160`, 64 fetch slots: at most 64 sockets open at once, no
/// EMFILE (nor at 110 and 130 with 14 and 34 slots).
const FD_RESERVE: usize = 64;
