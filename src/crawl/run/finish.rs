//! The end of a run, once the executors are started: the shards' results
//! collected and merged as each thread is joined, the last checkpoint,
//! the WACZ package, and the outcome settled (aborted, interrupted, the
//! budget spent, or no shard could start at all). The order of the
//! finishing steps (writers, cluster report, checkpoint, WACZ, spill) is
//! `run_with`'s; what each output writes is `crate::output`.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

use glommio::PoolThreadHandles;

use crate::config::Config;
use crate::crawl::checkpoints::Checkpoints;
use crate::crawl::error::CrawlError;
use crate::crawl::shard::{ShardResult, Shared};
use crate::output::stats::{ShardBalance, Stats};
use crate::output::wacz;

use super::executors::executor_hint;
use super::Outcome;

/// The shards' results, merged.
pub(super) struct Collected {
    /// The outcome so far: stats, records, output errors of the shards.
    pub(super) outcome: Outcome,
    /// The crawl's WARC files: earlier runs' and the shards' closed ones.
    pub(super) warc_files: Vec<PathBuf>,
    /// A shard's thread failed (or did not start).
    pub(super) shard_failed: bool,
    /// Some shard returned a result.
    shard_ran: bool,
    /// Why an executor could not start, when io_uring was the reason.
    unavailable: Option<String>,
}

/// Wait for every shard and merge what it returned; a shard that failed
/// is logged and aborts the crawl. `warc_files` are earlier runs' (a
/// resumed crawl's archive is every run's files).
pub(super) fn collect(
    handles: PoolThreadHandles<ShardResult>,
    warc_files: Vec<PathBuf>,
    resumed: Option<u64>,
) -> Collected {
    let mut collected = Collected {
        outcome: Outcome {
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
        },
        warc_files,
        shard_failed: false,
        shard_ran: false,
        unavailable: None,
    };
    let outcome = &mut collected.outcome;
    for joined in handles.join_all() {
        match joined {
            Ok(ShardResult {
                stats,
                records,
                cpu,
                output_error,
                warc_files: files,
            }) => {
                collected.shard_ran = true;
                collected.warc_files.extend(files);
                let balance = ShardBalance {
                    urls: stats.urls,
                    cpu_ms: crate::output::record::millis(cpu),
                };
                outcome.stats.merge(&stats, Some(balance));
                outcome.records.extend(records);
                outcome.output_error = outcome.output_error.take().or(output_error);
            }
            Err(e) => {
                collected.shard_failed = true;
                outcome.aborted = true;
                let hint = executor_hint(&e.to_string());
                if !hint.is_empty() {
                    collected.unavailable = Some(format!("{e}{hint}"));
                }
                log::error!("a shard failed: {e}{hint}");
            }
        }
    }
    collected
}

impl Collected {
    /// The last word on the outcome, once everything is finished: peak
    /// memory, interrupt, budget, abort; an error if no shard could start
    /// for want of io_uring (the crawl never ran).
    pub(super) fn settle(self, shared: &Shared) -> Result<Outcome, CrawlError> {
        let mut outcome = self.outcome;
        outcome.stats.peak_rss_kib = peak_rss_kib().unwrap_or(0);
        outcome.interrupted = shared.interrupt.load(Ordering::Relaxed);
        outcome.spent = shared.budget.reached();
        // A spent budget leaves work queued on purpose: not an abort.
        outcome.aborted |=
            outcome.interrupted || (shared.outstanding.count() != 0 && outcome.spent.is_none());
        match self.unavailable {
            Some(why) if !self.shard_ran => Err(CrawlError::IoUringUnavailable(why)),
            _ => Ok(outcome),
        }
    }
}

/// The last checkpoint, once every record is written; its failure goes
/// into `outcome.output_error`.
pub(super) fn last_checkpoint(checkpoints: Option<Checkpoints>, outcome: &mut Outcome) {
    if let Some(checkpoints) = checkpoints {
        if let Err(e) = checkpoints.finish() {
            outcome
                .output_error
                .get_or_insert(format!("writing the checkpoint: {e}"));
        }
    }
}

/// The jar's end: the cookies its caps refused said, and with
/// `--save-cookies` the jar in Netscape form, written whole (a temporary
/// file renamed over the old one); its failure goes into
/// `outcome.output_error`.
pub(super) fn save_cookies(config: &Config, outcome: &mut Outcome) {
    let Some(jar) = &config.cookies else {
        return;
    };
    let refused = jar.refused();
    if refused > 0 {
        log::warn!(
            "{refused} cookies refused: a Domain that is a public suffix, over 4 KiB, \
             past a domain's 50, or past --cookie-memory ({} bytes; {} cookies held, {} bytes)",
            config.cookie_memory,
            jar.held(),
            jar.memory()
        );
    }
    let Some(path) = &config.save_cookies else {
        return;
    };
    let mut tmp = path.clone().into_os_string();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    // Secrets: readable by the user only, and on disk before the rename.
    let written = (|| {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        file.write_all(jar.to_netscape().as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        outcome
            .output_error
            .get_or_insert(format!("writing the cookies to {}: {e}", path.display()));
    }
}

/// `--wacz`: package the WARC files the shards closed with the index, on
/// this thread now that the executors are gone, unless the archive is
/// incomplete (a shard died, so its files were not closed; a WARC file or
/// the index could not be written). Why not, if not, goes into
/// `outcome.output_error`; the WARC files stay either way, and the scratch
/// index (when `--cdxj` did not ask for one) goes.
pub(super) fn package_wacz(
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
