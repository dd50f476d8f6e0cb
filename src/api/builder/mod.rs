//! [`CrawlerBuilder`]: every setting of a crawl, typed, checked once in
//! [`CrawlerBuilder::build`]. The command line builds its crawl here too,
//! so a setting means the same thing from Rust and from a flag (a setting
//! is named as its flag, `max_tasks` for `--max-tasks`).
//!
//! The setters live by topic, each an `impl CrawlerBuilder` block:
//! [`scope`] (what to crawl and what a page does), [`pace`] (how fast,
//! how politely), [`limits`] (memory, budgets, sizes, time-outs),
//! [`requests`] (headers, cookies, proxies, TLS, DNS), [`state`] (the
//! state directory and the cluster) and [`output`] (records, archives,
//! progress). Here: the builder's fields and [`CrawlerBuilder::build`].
//!
//! Not the settings' use (the shards read the internal `Config` this
//! produces) nor flag parsing (the binary's `cli` module).

use std::path::PathBuf;
use std::time::Duration;

mod limits;
mod output;
mod pace;
mod requests;
mod scope;
mod state;

use ringcrawl_links::urls::{self, UrlError};

use super::checks;
use super::error::{BuildError, Setting};
use super::{Crawler, Interrupt};
use crate::config::Config;
use crate::crawl::hooks::Hooks;
use crate::defaults;
use crate::net::tls::{self, TlsOptions};
use crate::web::scope::{Scope, ScopeMode};

/// Builds a [`Crawler`]: roots first, then any setting that differs from
/// the defaults: the chapter's fetches at once, redirects and tries;
/// strict scope, robots.txt obeyed, keep-alive and compression on; every
/// number in [`defaults`](crate::defaults).
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::Duration;
/// let crawler = ringcrawl::Crawler::builder()
///     .root("https://example.com/")
///     .max_tasks(200)
///     .delay(Duration::from_millis(250))
///     .exclude(r"\.pdf$")
///     .build()?;
/// # Ok(()) }
/// ```
#[must_use]
pub struct CrawlerBuilder {
    roots: Vec<String>,
    mode: ScopeMode,
    exclude: Option<String>,
    include: Vec<String>,
    no_parent: bool,
    ca_files: Vec<PathBuf>,
    ca_ders: Vec<Vec<u8>>,
    insecure: bool,
    config: Config,
    hooks: Hooks,
    interrupt: Interrupt,
    /// The state directory, and whether to resume the crawl it holds.
    state: Option<(PathBuf, bool)>,
    checkpoint_interval: Duration,
    /// A resume drops damaged data instead of stopping.
    discard_damaged: bool,
    /// Limits of in-run compactions (tests).
    compact_in_run: Option<(u64, usize)>,
    state_args: Vec<String>,
    /// With [`CrawlerBuilder::cluster`]: the node's settings, checked at
    /// build.
    cluster: Option<super::cluster::Draft>,
    /// The first header or credentials refused, returned by `build`.
    refused: Option<BuildError>,
}

impl CrawlerBuilder {
    pub(crate) fn new() -> Self {
        CrawlerBuilder {
            roots: Vec::new(),
            mode: ScopeMode::Strict,
            exclude: None,
            include: Vec::new(),
            no_parent: false,
            ca_files: Vec::new(),
            ca_ders: Vec::new(),
            insecure: false,
            config: Config::new(Vec::new()),
            hooks: Hooks::default(),
            interrupt: Interrupt::default(),
            state: None,
            checkpoint_interval: defaults::CHECKPOINT_INTERVAL,
            discard_damaged: false,
            compact_in_run: None,
            state_args: Vec::new(),
            cluster: None,
            refused: None,
        }
    }

    /// Keep the first setting refused, for [`build`](Self::build).
    fn refuse(&mut self, setting: Setting, problem: String) {
        self.refused
            .get_or_insert_with(|| BuildError::new(setting, problem));
    }

    /// Check every setting and make the crawler.
    pub fn build(self) -> Result<Crawler, BuildError> {
        let CrawlerBuilder {
            roots,
            mode,
            exclude,
            include,
            no_parent,
            ca_files,
            ca_ders,
            insecure,
            mut config,
            hooks,
            interrupt,
            state,
            checkpoint_interval,
            discard_damaged,
            compact_in_run,
            state_args,
            cluster,
            refused,
        } = self;
        if let Some(refused) = refused {
            return Err(refused);
        }
        if config.cookies.is_some() && config.headers.has("cookie") {
            // RFC 6265 §5.4: one Cookie header a request.
            return Err(BuildError::new(
                Setting::Cookies,
                "a Cookie header (-H) beside the cookie jar would send two: \
                 put its cookies in the --cookies file"
                    .to_string(),
            ));
        }
        if let Some(jar) = &config.cookies {
            if !jar.limit_memory(config.cookie_memory) {
                return Err(BuildError::new(
                    Setting::CookieMemory,
                    format!(
                        "the cookies loaded take {} bytes, more than {}",
                        jar.memory(),
                        config.cookie_memory
                    ),
                ));
            }
        }
        checks::since(&config)?;
        let (roots, mode, exclude, include, no_parent) = match &state {
            // A crawl resumed from the library: its roots and scope are
            // its manifest's.
            Some((dir, true)) if roots.is_empty() => {
                let manifest = crate::state::read_manifest(dir)
                    .map_err(|e| BuildError::new(Setting::Resume, e.to_string()))?;
                let scope = manifest.scope;
                (
                    manifest.roots,
                    scope.mode,
                    scope.exclude,
                    scope.include,
                    scope.no_parent,
                )
            }
            _ => (roots, mode, exclude, include, no_parent),
        };
        // A node may join a cluster crawl with no roots of its own, and a
        // resume takes its roots and seeds from its state directory.
        let resume = matches!(state, Some((_, true)));
        if roots.is_empty() && config.seeds.is_empty() && cluster.is_none() && !resume {
            return Err(BuildError::new(Setting::Root, "no roots given"));
        }
        checks::seeds(&config, resume, cluster.is_some())?;
        // Before the state directory puts the records in itself (it is
        // made when the crawl starts).
        checks::outputs(&config)?;
        let state_given = state.is_some();
        if let Some((dir, resume)) = state {
            checks::state(&mut config, dir, resume, checkpoint_interval, state_args)?;
            if let Some(state) = config.state.as_mut() {
                state.discard_damaged = discard_damaged;
                state.compact_in_run = compact_in_run;
            }
        }
        config.roots = roots
            .iter()
            .map(|r| urls::parse_root(r))
            .collect::<Result<Vec<_>, UrlError>>()
            .map_err(|e| BuildError::new(Setting::Root, e.to_string()))?;
        let exclude = exclude
            .as_deref()
            .map(regex::Regex::new)
            .transpose()
            .map_err(|e| BuildError::new(Setting::Exclude, checks::one_line(&e.to_string())))?;
        let include = include
            .iter()
            .map(|re| regex::Regex::new(re))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| BuildError::new(Setting::Include, checks::one_line(&e.to_string())))?;
        config.scope = Scope::build(&config.roots, mode, exclude)
            .with_include(include)
            .with_no_parent(no_parent);
        if let Some(root) = config.roots.iter().find(|r| !config.scope.allows_start(r)) {
            return Err(BuildError::new(
                Setting::Exclude,
                format!("excludes the root {root}"),
            ));
        }
        checks::limits(&config)?;
        checks::resumed_scope(&config)?;
        if let Some(draft) = cluster {
            config.cluster = Some(super::cluster::check(draft, &mut config, state_given)?);
        }
        if !ca_files.is_empty() || !ca_ders.is_empty() || insecure {
            let mut extra: Vec<_> = ca_ders
                .into_iter()
                .map(rustls_pki_types::CertificateDer::from)
                .collect();
            for path in &ca_files {
                extra.extend(
                    tls::read_pem_certificates(path)
                        .map_err(|e| BuildError::new(Setting::CaCert, e))?,
                );
            }
            config.tls = TlsOptions::new(&extra, insecure)
                .map_err(|e| BuildError::new(Setting::CaCert, checks::one_line(&e.to_string())))?;
        }
        Ok(Crawler::new(config, hooks, interrupt))
    }
}

impl std::fmt::Debug for CrawlerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrawlerBuilder")
            .field("roots", &self.roots)
            .field("config", &self.config)
            .field("hooks", &self.hooks)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
