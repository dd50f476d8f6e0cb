//! The only code that knows about threads: start one glommio executor per
//! shard (pinned to the CPUs of the process's affinity mask), connect them
//! with the channel mesh, seed the roots at their owners, wait for the
//! global join, merge the shards' results.
//!
//! [`run_with`] reads as the phases of a crawl's life, in the order their
//! side effects must happen, each in a file of its own:
//!
//! - `prepare.rs`: the limits fitted to the open-file limit, the roots
//!   checked against the scope;
//! - `cluster.rs`: joining a cluster crawl (before anything is written),
//!   its node's thread started and, at the end, its report;
//! - `begin.rs`: the state session opened, the spill directory made
//!   (`spill_dir.rs`), the seed lists split; later what the session hands
//!   the shards, and the checkpoints;
//! - `outputs.rs`: the records' writer, the index, the WARC directory,
//!   opened before any shard exists and finished after every shard is done;
//! - `shared.rs`: the roots counted in and what the shards share built;
//! - `executors.rs`: the executor threads started, one shard each;
//! - `finish.rs`: the shards' results collected, the last checkpoint, the
//!   WACZ, the outcome settled.
//!
//! Not the crawl loop itself (that is `crate::crawl::shard`), nor the CLI.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::cluster::node::NodeReport;
use crate::config::budget::Spent;
use crate::config::Config;
use crate::crawl::error::CrawlError;
use crate::crawl::hooks::Hooks;
use crate::output::live::MemoryLimits;
use crate::output::progress::{self, Progress};
use crate::output::record::Record;
use crate::output::stats::Stats;

mod begin;
mod cluster;
mod executors;
mod finish;
mod outputs;
mod prepare;
mod shared;
mod spill_dir;

use begin::Begun;
use outputs::Outputs;

/// The result of a finished crawl.
#[derive(Debug)]
pub(crate) struct Outcome {
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
#[cfg(test)]
pub(crate) fn run(config: Config, interrupt: Arc<AtomicBool>) -> Result<Outcome, CrawlError> {
    crate::process::prepare();
    run_with(config, interrupt, Hooks::default())
}

/// Crawl until every in-scope URL reachable from the roots was taken up,
/// or until `interrupt` is set, handing pages to `hooks`. Changes nothing
/// process-wide: the open-file limit is read, not raised.
pub(crate) fn run_with(
    mut config: Config,
    interrupt: Arc<AtomicBool>,
    hooks: Hooks,
) -> Result<Outcome, CrawlError> {
    // Limits and roots are settled before anything starts.
    prepare::fit_open_files(&mut config);
    let mut roots = prepare::roots(&config)?;
    // --cluster: join the crawl (its fingerprint key and scope) before
    // anything is written; the roots go to their partitions' streams.
    let joined = cluster::join(&mut config, &mut roots)?;
    let intake_bytes = cluster::take_intake_share(&mut config, joined.is_some());
    // The state directory, before anything is written; then the spill
    // directory and the seed lists split into it.
    let mut begun = Begun::open(&mut config)?;
    // A cluster node that comes back under its name appends to its files:
    // it keeps the records it reported before (Redis counts them done).
    let returning = joined.as_ref().is_some_and(|j| j.returning);
    if returning {
        outputs::repair_for_return(&config)?;
    }
    let config = Arc::new(config);
    let outputs = Outputs::open(&config, begun.resuming || returning)?;
    // Roots are counted in before any shard exists (invariant 3).
    let built = shared::build(
        &config,
        &mut begun,
        &outputs,
        roots,
        joined.map(|joined| (joined, intake_bytes)),
        interrupt,
        hooks,
    )?;
    let reporter = Reporter::start(&config, &built.shared.progress);
    if let Some(live) = &built.shared.hooks.live {
        live.begin(
            config.cores,
            built.shared.progress.clone(),
            config.budget,
            MemoryLimits {
                hosts: config.host_memory as u64,
                seen: config.seen_memory as u64,
                queues: config.frontier_memory as u64,
                tls_sessions_per_shard: config.tls_session_memory as u64,
                cookies: config
                    .cookies
                    .is_some()
                    .then_some(config.cookie_memory as u64),
            },
            config.cookies.as_ref().map(|jar| jar.memory_gauge()),
        );
    }
    let started = Instant::now();
    let checkpoints = begun.checkpoints(
        &config,
        &built.shared.budget,
        &built.shared.progress,
        started,
    );
    let handles = executors::start(&config, &built.shared, built.seeds)?;
    // The shards run until the global join; each is waited for and merged.
    let mut collected = finish::collect(handles, built.earlier_warc_files, built.resumed);
    let outcome = &mut collected.outcome;
    // Every shard is done: the writers write what they left (a dead one's
    // lines too) and say whether the output ended early.
    let index = outputs.finish(outcome);
    finish::save_cookies(&config, outcome);
    // The records are written: the node reports what is done and leaves.
    cluster::finish_node(built.node, outcome);
    outcome.elapsed = started.elapsed();
    let elapsed = outcome.elapsed;
    // The last checkpoint, once every record is written.
    finish::last_checkpoint(checkpoints, outcome);
    reporter.stop();
    if let (Some(out), Some(index)) = (&config.wacz, &index) {
        finish::package_wacz(
            &config,
            out,
            index,
            &collected.warc_files,
            collected.shard_failed,
            outcome,
        );
    }
    // The spill directory (`begun` holds it) and the shards' spilled
    // queues in it: nothing a later crawl could use (yet).
    drop(begun);
    let settled = collected.settle(&built.shared);
    // Every shard published its last numbers with its result, and the
    // outcome is settled (a signal from now on changes nothing): the
    // live numbers are final.
    if let Some(live) = &built.shared.hooks.live {
        live.end(elapsed);
    }
    settled
}

/// The progress reporter's thread (`--progress`), if asked for.
struct Reporter {
    /// Set when the crawl is over.
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Reporter {
    /// Start the thread, which redraws in place on a terminal.
    fn start(config: &Config, progress: &Arc<Progress>) -> Reporter {
        let done = Arc::new(AtomicBool::new(false));
        let thread = config.progress.map(|interval| {
            let redraw = std::io::stderr().is_terminal();
            progress::spawn_reporter(progress.clone(), done.clone(), redraw, interval)
        });
        Reporter { done, thread }
    }

    /// Tell the thread the crawl is over and wait for its last line.
    fn stop(self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}
