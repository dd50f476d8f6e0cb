//! The library's public face: build a crawl ([`CrawlerBuilder`]), run it
//! ([`Crawler::run`]), see its pages as they arrive (a handler on the
//! shard that fetched each, or a bounded [`PageStream`] for another
//! thread), decide which links to follow, stop it ([`Interrupt`]), watch
//! its live numbers ([`Crawler::live`]), and read its [`Report`].
//!
//! Not the engine: this only turns settings and hooks into the internal
//! `Config` and `Hooks` that `crate::crawl` runs with. The library prints
//! nothing (diagnostics go to the `log` facade) and changes nothing
//! process-wide unless asked ([`crate::process`], [`CrawlerBuilder::pin_threads`]).

mod builder;
mod checks;
mod cluster;
#[cfg(test)]
mod compacted_crawls;
mod error;
#[cfg(test)]
mod refused_crawls;
#[cfg(test)]
mod repaired_crawls;
mod report;
mod scope;
mod settings;
#[cfg(test)]
pub(crate) mod testing;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub use crate::crawl::error::{Cause, CrawlError};
pub use crate::crawl::page::{OwnedPage, Page};
pub use crate::crawl::stream::PageStream;
pub use builder::CrawlerBuilder;
pub use error::{BuildError, Setting};
pub use report::Report;
pub use settings::Settings;

pub(crate) use crate::crawl::hooks::Hooks;

use crate::config::Config;
use crate::output::live::Live;

/// A crawl, ready to run: made by [`Crawler::builder`].
#[derive(Debug)]
pub struct Crawler {
    config: Config,
    hooks: Hooks,
    interrupt: Interrupt,
}

impl Crawler {
    /// Settings and hooks of a new crawl.
    pub fn builder() -> CrawlerBuilder {
        CrawlerBuilder::new()
    }

    /// The strings the crawl that made the state directory `dir` kept
    /// with [`CrawlerBuilder::state_args`] (the command line, for one made
    /// by `ringcrawl --state`; empty if none were given).
    pub fn stored_args(dir: &std::path::Path) -> Result<Vec<String>, BuildError> {
        crate::state::read_manifest(dir)
            .map(|m| m.args)
            .map_err(|e| BuildError::new(Setting::Resume, e.to_string()))
    }

    pub(crate) fn new(config: Config, hooks: Hooks, interrupt: Interrupt) -> Self {
        Crawler {
            config,
            hooks,
            interrupt,
        }
    }

    /// The pages of this crawl as owned copies, for a consumer on another
    /// thread (run the crawl on one with [`Crawler::spawn`]). At most
    /// `budget` bytes of pages wait for the consumer: past that the crawl
    /// starts no new fetch until it catches up (it never drops a page).
    /// Calling it again replaces the earlier stream.
    pub fn pages(&mut self, budget: usize) -> PageStream {
        let (sender, stream) = crate::crawl::stream::page_stream(budget);
        self.hooks.stream = Some(sender);
        stream
    }

    /// The live numbers of this crawl, for a status page or a metrics
    /// endpoint: [`Live::snapshot`] from any thread, while it runs and
    /// after (then they are the report's), and
    /// [`prometheus_text`](crate::prometheus_text) to serve them. Asking
    /// makes each shard publish a copy of its counters about once a
    /// second, off its record path; a crawl never asked publishes nothing.
    /// Calling it again returns the same handle.
    pub fn live(&mut self) -> Live {
        self.hooks.live.get_or_insert_with(Live::new).clone()
    }

    /// A handle that stops this crawl from any thread (the one given to
    /// [`CrawlerBuilder::interrupt`], if one was).
    pub fn interrupt_handle(&self) -> Interrupt {
        self.interrupt.clone()
    }

    /// Crawl until every in-scope URL reachable from the roots was taken
    /// up, or until interrupted; blocks the calling thread (the shards run
    /// on threads of their own).
    pub fn run(self) -> Result<Report, CrawlError> {
        let outcome = crate::crawl::run::run_with(self.config, self.interrupt.flag, self.hooks)?;
        Ok(Report::new(outcome))
    }

    /// [`run`](Self::run) on a thread of its own.
    pub fn spawn(self) -> std::thread::JoinHandle<Result<Report, CrawlError>> {
        std::thread::spawn(move || self.run())
    }

    /// Which URLs this crawl keeps: its roots' hosts by its
    /// [`ScopeMode`](crate::ScopeMode), with its `exclude`, `include` and
    /// `no_parent` (seed lists' hosts are read when it runs, and are not
    /// in it yet). Ask it whether a URL would be fetched or followed
    /// before adding work the crawl would refuse.
    pub fn scope(&self) -> &crate::Scope {
        &self.config.scope
    }
}

/// Stops a running crawl: it takes no new URL, gives running fetches a
/// grace period (under a second), then records what is left as interrupted. Cheap to
/// clone and `Send`; a signal handler may set [`Interrupt::flag`].
#[derive(Debug, Clone, Default)]
pub struct Interrupt {
    flag: Arc<AtomicBool>,
}

impl Interrupt {
    /// A handle of a crawl not built yet: give it to
    /// [`CrawlerBuilder::interrupt`], and a clone to whatever may stop the
    /// crawl (a page handler, a follow rule).
    pub fn new() -> Interrupt {
        Interrupt::default()
    }

    /// Ask the crawl to stop.
    pub fn interrupt(&self) {
        self.flag.store(true, Ordering::Relaxed);
    }

    /// Whether it was asked to.
    pub fn is_interrupted(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    /// The flag itself, for `signal_hook::flag::register` and the like.
    pub fn flag(&self) -> Arc<AtomicBool> {
        self.flag.clone()
    }
}
