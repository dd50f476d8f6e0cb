//! A run's beginning on disk, before any output is opened: the state
//! session (`--state` / `--resume`) opened, the crawl's spill directory
//! made, and the seed lists split by owner into it; later, what the
//! session hands the shards (journals, what earlier runs did) and the
//! checkpoints' thread. The state directory's own code (layout, lock,
//! repair, manifest) is `crate::state`; reading the split files as the
//! crawl goes is `crawl::shard`'s `seeds.rs`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::config::{Config, Output};
use crate::crawl::budget::Budget;
use crate::crawl::checkpoints::Checkpoints;
use crate::crawl::error::{Cause, CrawlError};
use crate::crawl::seeds;
use crate::crawl::shard::Durability;
use crate::defaults;
use crate::output::progress::Progress;
use crate::state::replay::Replay;
use crate::state::session::{Session, SEEDS_DIR};

use super::spill_dir::SpillDir;

/// The state session, the spill directory and the split seed lists.
pub(super) struct Begun {
    /// The crawl's spill directory (removed when dropped: declared before
    /// the session so that it goes before the state directory's lock).
    pub(super) spill: SpillDir,
    /// With `--state`: the run's session, until the checkpoints take it.
    pub(super) session: Option<Session>,
    /// A resumed crawl: earlier runs left records.
    pub(super) resuming: bool,
    /// The seed lists split by owner, if there are any.
    pub(super) seed_files: Option<Arc<[seeds::split::SeedFile]>>,
}

/// What a session hands the shards and the budget.
pub(super) struct Kept {
    /// The shards' journals and what earlier runs recorded.
    pub(super) durability: Arc<Durability>,
    /// Pages and body bytes earlier runs spent of the budget.
    pub(super) pages: u64,
    pub(super) bytes: u64,
    /// A resumed crawl: the records its earlier runs wrote.
    pub(super) resumed: Option<u64>,
}

impl Begun {
    /// Open the state session, make the spill directory, split the seed
    /// lists; in that order.
    pub(super) fn open(config: &mut Config) -> Result<Begun, CrawlError> {
        // --state / --resume: the directory is made or opened (and
        // locked), and a resumed crawl's outputs repaired, before anything
        // is written. Damage, and a resume that asks for what the crawl
        // cannot change, are errors of their own (the CLI exits 2 on
        // them): they name the file or the directory.
        let session = Session::begin(config).map_err(CrawlError::state)?;
        for note in session.iter().flat_map(|s| &s.notes) {
            log::warn!("resume: {note}");
        }
        let resuming = session.as_ref().is_some_and(|s| s.done.is_some());
        let spill = SpillDir::make(config)?;
        let seed_files = split_seeds(config, session.as_ref(), resuming, &spill)?;
        Ok(Begun {
            spill,
            session,
            resuming,
            seed_files,
        })
    }

    /// The WARC files earlier runs wrote (a resumed crawl's archive is
    /// every run's files); none without a session.
    pub(super) fn earlier_warc_files(&self) -> Result<Vec<std::path::PathBuf>, CrawlError> {
        match &self.session {
            Some(session) => session.earlier_warc_files().map_err(CrawlError::state),
            None => Ok(Vec::new()),
        }
    }

    /// With a session: the shards' journals, the journals of earlier runs
    /// to replay, and what earlier runs recorded (taken from the session).
    pub(super) fn keep(&mut self, shards: usize) -> Result<Option<Kept>, CrawlError> {
        let resuming = self.resuming;
        let Some(session) = &mut self.session else {
            return Ok(None);
        };
        let done = session.done.take();
        let resumed = done.as_ref().map(|d| d.counts.records);
        let (done, pages, bytes) = match done {
            Some(d) => (d.by_shard, d.counts.pages, d.counts.bytes),
            None => (vec![None; shards], 0, 0),
        };
        Ok(Some(Kept {
            durability: Arc::new(Durability {
                journals: (0..shards).map(|i| session.journal(i)).collect(),
                // Read from now on, off the executors; the shards take
                // what is theirs once they run.
                replay: match resuming {
                    true => Some(Replay::start(
                        session.earlier_journals(),
                        shards,
                        Some(session.path().join(crate::state::checks::FILE)),
                    )),
                    false => None,
                },
                compaction: session.compaction(),
                done: std::sync::Mutex::new(done),
                resuming,
                journal_lengths: session.journal_lengths(),
            }),
            pages,
            bytes,
            resumed,
        }))
    }

    /// The crawl's budget, with what earlier runs spent of it.
    pub(super) fn budget(&self, config: &Config, kept: Option<&Kept>) -> Budget {
        let budget = match (kept, &self.session) {
            (Some(kept), Some(session)) => Budget::resumed(
                config.budget,
                Instant::now(),
                kept.pages,
                kept.bytes,
                session.elapsed_before,
            ),
            _ => Budget::new(config.budget, Instant::now()),
        };
        budget.watching(written_dirs(config))
    }

    /// Start the checkpoints' thread, which takes the session (none
    /// without one).
    pub(super) fn checkpoints(
        &mut self,
        config: &Config,
        budget: &Arc<Budget>,
        progress: &Arc<Progress>,
        started: Instant,
    ) -> Option<Checkpoints> {
        self.session.take().map(|session| {
            Checkpoints::start(
                session,
                config
                    .state
                    .as_ref()
                    .map_or(defaults::CHECKPOINT_INTERVAL, |s| s.checkpoint_interval),
                budget.clone(),
                progress.clone(),
                started,
            )
        })
    }
}

/// Seed lists: read once, split by owner into files in the spill
/// directory (kept in the state directory with --state, where a resume
/// takes them up), their hosts added to the scope (before the scope is
/// shared); the shards read their files as the crawl goes.
fn split_seeds(
    config: &mut Config,
    session: Option<&Session>,
    resuming: bool,
    spill: &SpillDir,
) -> Result<Option<Arc<[seeds::split::SeedFile]>>, CrawlError> {
    let kept_seeds = session.map(|s| s.path().join(SEEDS_DIR));
    let seeds_kept = kept_seeds
        .as_ref()
        .is_some_and(|dir| seeds::split::is_kept(dir));
    if config.seeds.is_empty() && !seeds_kept {
        return Ok(None);
    }
    let started = Instant::now();
    let (cores, mode) = (config.cores, config.scope.mode());
    let split = match &kept_seeds {
        Some(dir) => seeds::split::split_kept(&config.seeds, cores, mode, dir),
        None => seeds::split::split(&config.seeds, cores, mode, spill.path()),
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
    Ok(Some(Arc::<[seeds::split::SeedFile]>::from(split.files)))
}

/// The directories the crawl writes in (records, WARC files, index, WACZ,
/// state, spill): the file systems whose free space `--min-free-disk`
/// watches.
fn written_dirs(config: &Config) -> Vec<PathBuf> {
    let parent = |path: &Path| match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut dirs = Vec::new();
    if let Output::File(path) = &config.output {
        dirs.push(parent(path));
    }
    dirs.extend(config.warc_dir.clone());
    dirs.extend(config.cdxj.as_deref().map(parent));
    dirs.extend(config.wacz.as_deref().map(parent));
    dirs.extend(config.state.as_ref().map(|s| s.dir.clone()));
    dirs.push(config.spill_dir.clone().unwrap_or_else(std::env::temp_dir));
    dirs
}
