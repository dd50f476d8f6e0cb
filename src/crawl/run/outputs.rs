//! The crawl's outputs as a run opens and finishes them: the records'
//! writer (`--output`), the CDXJ index (`--cdxj`, or the scratch index a
//! WACZ needs), the WARC directory and its files' names, and the repair of
//! a returning cluster node's files before it appends to them. What is
//! written (records, WARC and CDXJ lines) is `crate::output`, by the
//! shards; the WACZ package is `finish.rs`.

use std::path::PathBuf;

use crate::config::{Config, Output};
use crate::crawl::error::CrawlError;
use crate::output::wacz;
use crate::output::warc::file::WarcTarget;
use crate::output::writer::{Stopped, Writer};
use crate::state::session::Session;
use crate::state::StateError;

use super::Outcome;

/// The output writers, open while the shards run.
pub(super) struct Outputs {
    /// The records' writer (`--output`), if any.
    pub(super) writer: Option<Writer>,
    /// The index's writer, if there is an index.
    pub(super) cdxj: Option<Writer>,
    /// The index: the `--cdxj` file, else the scratch one a `--wacz`
    /// needs.
    pub(super) index: Option<PathBuf>,
}

impl Outputs {
    /// Open the records' output and the index; `appending` (a resumed
    /// crawl, or a cluster node that comes back) appends to them instead
    /// of truncating (a scratch index is always made afresh).
    pub(super) fn open(config: &Config, appending: bool) -> Result<Outputs, CrawlError> {
        let writer =
            Writer::open(&config.output, config.output_backlog, appending).map_err(|e| {
                let what = match &config.output {
                    Output::File(path) => format!("opening --output {}", path.display()),
                    _ => "opening --output".to_string(),
                };
                CrawlError::output(what, e)
            })?;
        // A WACZ needs the index: the --cdxj file, else one beside the
        // package (so a package that could not be written there fails now,
        // not after the crawl).
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
        Ok(Outputs {
            writer,
            cdxj,
            index,
        })
    }

    /// The writers there are: the records', then the index's.
    pub(super) fn writers(&self) -> impl Iterator<Item = &Writer> {
        self.writer.iter().chain(&self.cdxj)
    }

    /// Every shard is done: the writers write what the shards left (a dead
    /// one's lines too) and say whether the output ended early, into
    /// `outcome`. Returns the index's path, which a WACZ packs.
    pub(super) fn finish(self, outcome: &mut Outcome) -> Option<PathBuf> {
        match self.writer.and_then(Writer::finish) {
            Some(Stopped::ReaderGone) => outcome.output_closed = true,
            // A shard's failure, if any, came first and stopped the crawl
            // (a full disk fails the journals and the log alike): one
            // error is said.
            Some(Stopped::Failed(e)) => {
                outcome.output_error.get_or_insert(e);
            }
            None => {}
        }
        if let Some(Stopped::Failed(e)) = self.cdxj.and_then(Writer::finish) {
            outcome.output_error.get_or_insert(format!("--cdxj: {e}"));
        }
        self.index
    }
}

/// `--warc`: make the directory, and name this run's files: a resumed
/// crawl's prefix, else one of the time and the process (and the cluster
/// node's name).
pub(super) fn warc_target(
    config: &Config,
    session: Option<&Session>,
) -> Result<Option<WarcTarget>, CrawlError> {
    let Some(dir) = &config.warc_dir else {
        return Ok(None);
    };
    std::fs::create_dir_all(dir)
        .map_err(|e| CrawlError::output(format!("creating --warc {}", dir.display()), e))?;
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Ok(Some(WarcTarget {
        dir: dir.clone(),
        prefix: session
            .and_then(Session::warc_prefix)
            .unwrap_or_else(|| match &config.cluster {
                Some(c) => format!("{}{secs}-{}", node_warc_prefix(&c.node), std::process::id()),
                None => format!("ringcrawl-{secs}-{}", std::process::id()),
            }),
        shard: 0,
        max_size: config.warc_max_size,
        write_back: session.map_or_else(Default::default, Session::warc_write_back),
    }))
}

/// The start of a cluster node's WARC file names (the process's time and
/// PID follow).
fn node_warc_prefix(node: &str) -> String {
    format!("ringcrawl-{node}-")
}

/// Before a cluster node that comes back appends to its files: cut the
/// JSONL or CDXJ line a `kill -9` of its last process tore, and repair
/// that process's last WARC file of each shard.
pub(super) fn repair_for_return(config: &Config) -> Result<(), CrawlError> {
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
    // A process of this node's name that was cut off, not killed, may
    // still write them (until it finds itself superseded and stops):
    // nothing is cut or repaired under a live writer. Its lines are
    // whole (every writer appends with O_APPEND), its WARC files its own.
    if let Some(path) = records
        .into_iter()
        .chain(config.cdxj.as_deref())
        .find(|path| held_by_another(path))
    {
        log::warn!(
            "{}: another process of this node still has it open; its files are not repaired",
            path.display()
        );
        return Ok(());
    }
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

/// Whether another process writes `path` (holds its `flock`, see
/// `Writer::open`).
fn held_by_another(path: &std::path::Path) -> bool {
    use rustix::fs::{flock, FlockOperation};
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    // Released when `file` closes.
    flock(&file, FlockOperation::NonBlockingLockExclusive).is_err()
}
