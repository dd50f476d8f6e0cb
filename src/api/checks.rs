//! The checks [`CrawlerBuilder::build`](super::CrawlerBuilder::build)
//! makes: each number and duration within its range, the state
//! directory's demands on the output and the spill directory, each failure a [`BuildError`] named
//! as the setting's flag. Not the settings themselves (`builder/`), nor
//! a cluster node's (`cluster.rs`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{BuildError, Setting};
use crate::config::{Config, Output, SeedSource, StateSettings};
use crate::defaults::MIN_HOST_MEMORY_PER_SHARD;

/// Longest duration any setting takes (a day): longer is a mistake, and
/// every clock sum stays far from overflowing.
const MAX_DURATION: Duration = Duration::from_secs(24 * 60 * 60);
/// Most body bytes kept per response.
const MAX_BODY: usize = 1 << 32;
/// Longest URL that may be queued.
const MAX_URL_LENGTH: usize = 1 << 20;
/// Largest adaptive delay factor (Heritrix's default is 5).
const MAX_DELAY_FACTOR: f64 = 100.0;
/// Most shards.
const MAX_CORES: usize = 1024;
/// Most robots.txt retries (a schedule longer than this is a mistake).
const MAX_ROBOTS_RETRIES: usize = 32;
/// Least `seen_memory` a shard: buckets of some 48,000 URLs (smaller ones
/// would rewrite the run on disk every few thousand new URLs).
const MIN_SEEN_MEMORY: usize = 1 << 20;
/// Shortest time between checkpoints.
const MIN_CHECKPOINT_INTERVAL: Duration = Duration::from_millis(100);
/// Most `seen_memory`: 1 TiB (its buckets are allocated as they fill).
const MAX_SEEN_MEMORY: usize = 1 << 40;

/// A recrawl (`--since`): each record file readable now (the crawl reads
/// them when it starts), and no `If-None-Match` or `If-Modified-Since` of
/// the user's (`-H`) beside the ones it sends.
pub(super) fn since(config: &Config) -> Result<(), BuildError> {
    if let Some(name) = ["If-None-Match", "If-Modified-Since"]
        .into_iter()
        .find(|name| config.headers.has(name))
    {
        return Err(BuildError::new(
            Setting::Since,
            format!("a recrawl sends its own {name}; leave it out of -H"),
        ));
    }
    for path in &config.since {
        let readable = std::fs::File::open(path).and_then(|file| {
            if file.metadata()?.is_dir() {
                Err(std::io::Error::other("a directory, not a records file"))
            } else {
                Ok(())
            }
        });
        if let Err(e) = readable {
            return Err(BuildError::new(
                Setting::Since,
                format!("{}: {e}", path.display()),
            ));
        }
    }
    Ok(())
}

/// Seed lists: each file readable now (not only when the crawl starts),
/// except at a resume, which takes the lists its state directory kept; a
/// cluster's roots go to its streams, which seed lists do not reach yet.
pub(super) fn seeds(config: &Config, resume: bool, cluster: bool) -> Result<(), BuildError> {
    if config.seeds.is_empty() {
        return Ok(());
    }
    if cluster {
        return Err(BuildError::new(
            Setting::Seeds,
            "a cluster crawl takes its roots as arguments; seed lists are not supported there yet",
        ));
    }
    if resume {
        return Ok(());
    }
    for source in &config.seeds {
        if let SeedSource::File(path) = source {
            if let Err(e) = std::fs::File::open(path) {
                return Err(BuildError::new(
                    Setting::Seeds,
                    format!("{}: {e}", path.display()),
                ));
            }
            if path.is_dir() {
                return Err(BuildError::new(
                    Setting::Seeds,
                    format!("{}: is a directory", path.display()),
                ));
            }
        }
    }
    Ok(())
}

/// `--state DIR` / `--resume DIR`: the checkpoint interval in range and
/// the records in a regular file (a resume reads them back; with no
/// output given they go to the state directory's `records.jsonl`).
pub(super) fn state(
    config: &mut Config,
    dir: PathBuf,
    resume: bool,
    checkpoint_interval: Duration,
    args: Vec<String>,
) -> Result<(), BuildError> {
    if checkpoint_interval < MIN_CHECKPOINT_INTERVAL || checkpoint_interval > MAX_DURATION {
        return Err(BuildError::new(
            Setting::CheckpointInterval,
            format!("{checkpoint_interval:?} is out of range (0.1 s to a day)"),
        ));
    }
    let flag = if resume {
        Setting::Resume
    } else {
        Setting::State
    };
    crate::state::check_not_in_use(&dir).map_err(|e| BuildError::new(flag, e.to_string()))?;
    match &config.output {
        Output::Stdout => {
            return Err(BuildError::new(
                flag,
                "records on standard output cannot be resumed: write them to a file (-o FILE)",
            ))
        }
        Output::None if !resume => {
            config.output = Output::File(dir.join("records.jsonl"));
        }
        // The log is the list of what is done: /dev/null or a pipe
        // would leave a resume nothing to read.
        Output::File(log) if log.exists() && !log.is_file() => {
            return Err(BuildError::new(
                flag,
                format!(
                    "the records must go to a regular file (a resume reads them back), not {}",
                    log.display()
                ),
            ))
        }
        _ => {}
    }
    config.state = Some(StateSettings {
        dir,
        resume,
        checkpoint_interval,
        discard_damaged: false,
        args,
        compact_in_run: None,
    });
    Ok(())
}

/// The output files' directories exist, and `--warc` and `--spill-dir`
/// are no files: else the crawl would start and fail at its first write.
/// Each failure names its path. (The writes themselves may still fail: a full disk, a
/// permission.)
pub(super) fn outputs(config: &Config) -> Result<(), BuildError> {
    if let Output::File(path) = &config.output {
        file_target(Setting::Output, path)?;
    }
    if let Some(path) = &config.cdxj {
        file_target(Setting::Cdxj, path)?;
    }
    if let Some(path) = &config.wacz {
        file_target(Setting::Wacz, path)?;
    }
    for (dir, setting) in [
        (&config.warc_dir, Setting::Warc),
        (&config.spill_dir, Setting::SpillDir),
    ] {
        if let Some(dir) = dir.as_ref().filter(|d| d.exists() && !d.is_dir()) {
            return Err(BuildError::new(
                setting,
                format!("{}: not a directory", dir.display()),
            ));
        }
    }
    Ok(())
}

/// A file `path` can be made: it is no directory and its directory is one.
fn file_target(setting: Setting, path: &Path) -> Result<(), BuildError> {
    if path.is_dir() {
        return Err(BuildError::new(
            setting,
            format!("{}: is a directory", path.display()),
        ));
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        let why = if parent.exists() {
            "is not a directory"
        } else {
            "no such directory"
        };
        return Err(BuildError::new(
            setting,
            format!("{}: {why}: {}", path.display(), parent.display()),
        ));
    }
    Ok(())
}

/// A resume's scope is its crawl's (queued URLs were admitted under it
/// and are replayed without another look); what differs, in words. A
/// directory whose manifest cannot be read is left to the crawl's start,
/// which says why.
pub(super) fn resumed_scope(config: &Config) -> Result<(), BuildError> {
    let Some(state) = config.state.as_ref().filter(|s| s.resume) else {
        return Ok(());
    };
    let Ok(manifest) = crate::state::read_manifest(&state.dir) else {
        return Ok(());
    };
    let differences = manifest
        .scope
        .differences(&crate::state::manifest::ScopeSettings::of(&config.scope));
    if differences.is_empty() {
        return Ok(());
    }
    Err(BuildError::new(
        Setting::Resume,
        format!(
            "a resumed crawl keeps its scope: {}",
            differences.join("; ")
        ),
    ))
}

/// Every number and duration of `config` within its range.
pub(super) fn limits(config: &Config) -> Result<(), BuildError> {
    within(Setting::Cores, config.cores, 1, MAX_CORES)?;
    within(Setting::MaxTasks, config.max_tasks, 1, usize::MAX)?;
    within(Setting::MaxTries, config.max_tries as usize, 1, usize::MAX)?;
    within(Setting::PerHost, config.per_host, 1, usize::MAX)?;
    if config.per_ip == Some(0) {
        return Err(BuildError::new(Setting::PerIp, "must be at least 1"));
    }
    within(
        Setting::MaxUrlLength,
        config.max_url_length,
        1,
        MAX_URL_LENGTH,
    )?;
    within(
        Setting::MaxPagesPerHost,
        config.max_pages_per_host,
        1,
        usize::MAX,
    )?;
    within(Setting::MaxBody, config.max_body, 0, MAX_BODY)?;
    within(Setting::JsonlBacklog, config.output_backlog, 1, usize::MAX)?;
    within(Setting::SeenMemory, config.seen_memory, 1, MAX_SEEN_MEMORY)?;
    per_shard(
        Setting::SeenMemory,
        config.seen_memory,
        config.cores,
        MIN_SEEN_MEMORY,
    )?;
    within(Setting::HostMemory, config.host_memory, 1, usize::MAX)?;
    per_shard(
        Setting::HostMemory,
        config.host_memory,
        config.cores,
        MIN_HOST_MEMORY_PER_SHARD,
    )?;
    within(
        Setting::MaxSitemapUrls,
        config.sitemap_limits.max_urls,
        1,
        ringcrawl_sitemap::MAX_URLS,
    )?;
    within(
        Setting::MaxSitemapsPerHost,
        config.sitemap_limits.max_per_host,
        1,
        usize::MAX,
    )?;
    if config.warc_dir.is_none() {
        for (set, setting) in [
            (config.warc_dedup, Setting::WarcDedup),
            (config.warc_dns, Setting::WarcDns),
            (config.cdxj.is_some(), Setting::Cdxj),
            (config.wacz.is_some(), Setting::Wacz),
        ] {
            if set {
                return Err(BuildError::new(setting, "needs a WARC directory (--warc)"));
            }
        }
    }
    if config.warc_max_size == 0 {
        return Err(BuildError::new(Setting::WarcMaxSize, "must be at least 1"));
    }
    positive_duration(Setting::Timeout, config.timeout)?;
    positive_duration(Setting::ConnectTimeout, config.connect_timeout)?;
    positive_duration(Setting::ReadTimeout, config.read_timeout)?;
    positive_duration(Setting::MaxCrawlDelay, config.max_crawl_delay)?;
    if !(0.0..=MAX_DELAY_FACTOR).contains(&config.delay_factor) {
        return Err(BuildError::new(
            Setting::DelayFactor,
            format!(
                "{} is not from 0 to {MAX_DELAY_FACTOR}",
                config.delay_factor
            ),
        ));
    }
    positive_duration(Setting::MaxDelay, config.max_delay)?;
    if config.max_retry_after > MAX_DURATION {
        return Err(BuildError::new(
            Setting::MaxRetryAfter,
            format!("{:?} is more than a day", config.max_retry_after),
        ));
    }
    if let Some(time) = config.budget.time {
        positive_duration(Setting::MaxTime, time)?;
    }
    if config.budget.pages == Some(0) {
        return Err(BuildError::new(Setting::MaxPages, "must be at least 1"));
    }
    if config.budget.bytes == Some(0) {
        return Err(BuildError::new(Setting::MaxBytes, "must be at least 1"));
    }
    if let Some(interval) = config.progress {
        positive_duration(Setting::ProgressInterval, interval)?;
    }
    within(
        Setting::RobotsRetries,
        config.robots_retries.len(),
        0,
        MAX_ROBOTS_RETRIES,
    )?;
    for wait in &config.robots_retries {
        positive_duration(Setting::RobotsRetries, *wait)?;
    }
    if config.delay > MAX_DURATION {
        return Err(BuildError::new(
            Setting::Delay,
            format!("{:?} is more than a day", config.delay),
        ));
    }
    host_rules(config)
}

/// Each host rule's knobs within the ranges of the settings they override.
fn host_rules(config: &Config) -> Result<(), BuildError> {
    for (pattern, rule) in config.host_rules.rules() {
        let refuse = |why: String| {
            Err(BuildError::new(
                Setting::HostRule,
                format!("{pattern}: {why}"),
            ))
        };
        if rule.per_host == Some(0) {
            return refuse("per-host must be at least 1".into());
        }
        if rule.max_pages_per_host == Some(0) {
            return refuse("max-pages-per-host must be at least 1".into());
        }
        if let Some(f) = rule
            .delay_factor
            .filter(|f| !(0.0..=MAX_DELAY_FACTOR).contains(f))
        {
            return refuse(format!(
                "delay-factor {f} is not from 0 to {MAX_DELAY_FACTOR}"
            ));
        }
        if let Some(d) = rule.delay.filter(|d| *d > MAX_DURATION) {
            return refuse(format!("delay {d:?} is more than a day"));
        }
        if let Some(d) = rule.max_delay.filter(|d| d.is_zero() || *d > MAX_DURATION) {
            return refuse(format!("max-delay {d:?} is not above 0 and at most a day"));
        }
    }
    Ok(())
}

/// `bytes` of `setting`, shared evenly by `cores` shards, give each at
/// least `floor`.
fn per_shard(setting: Setting, bytes: usize, cores: usize, floor: usize) -> Result<(), BuildError> {
    if bytes / cores.max(1) < floor {
        return Err(BuildError::new(
            setting,
            format!("{bytes} bytes over {cores} shards: at least {floor} a shard"),
        ));
    }
    Ok(())
}

/// `value` within `min..=max`, named `setting` if not.
pub(super) fn within(
    setting: Setting,
    value: usize,
    min: usize,
    max: usize,
) -> Result<(), BuildError> {
    if value < min {
        Err(BuildError::new(setting, format!("must be at least {min}")))
    } else if value > max {
        Err(BuildError::new(
            setting,
            format!("{value} is more than {max}"),
        ))
    } else {
        Ok(())
    }
}

/// A duration above zero and at most a day.
pub(super) fn positive_duration(setting: Setting, value: Duration) -> Result<(), BuildError> {
    if value.is_zero() || value > MAX_DURATION {
        Err(BuildError::new(
            setting,
            format!("{value:?} is not above 0 and at most a day"),
        ))
    } else {
        Ok(())
    }
}

/// An error's text on one line (regex errors span several).
pub(super) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
