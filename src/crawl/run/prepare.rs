//! The first phase of a run, before anything is opened: the limits fitted
//! to the open-file limit, and the roots checked against the scope. Reads
//! the process's open-file limit and changes nothing outside the
//! `Config`; not the cluster's join (`cluster.rs`), nor the seed lists
//! (`begin.rs`).

use crate::config::Config;
use crate::crawl::error::CrawlError;
use crate::crawl::seeds;
use crate::job::Job;

/// File descriptors kept free for everything but the sockets of fetches and
/// idle connections (output files, WARC files, io_uring rings, eventfds).
/// The resolver's sockets need no room of their own: a lookup runs while
/// its fetch holds a slot and no connection yet, one socket at a time (UDP,
/// then TCP after a truncated answer), and lookups of one name are shared.
/// Measured: 400 hosts resolved through a nameserver answering in 300 ms,
/// `ulimit -n 160`, 64 fetch slots: at most 64 sockets open at once, no
/// EMFILE (nor at 110 and 130 with 14 and 34 slots).
const FD_RESERVE: usize = 64;

/// Lower `--max-tasks`, the shards and the idle connections to what the
/// open-file limit leaves room for (the limit is read, not raised).
pub(super) fn fit_open_files(config: &mut Config) {
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
}

/// The roots as jobs, each with its origin's guessed sitemap after it
/// (with `--sitemaps`); a root the scope excludes is an error, before
/// anything starts.
pub(super) fn roots(config: &Config) -> Result<Vec<Job>, CrawlError> {
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
    Ok(roots)
}
