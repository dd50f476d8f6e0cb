//! [`BuildError`]: why [`CrawlerBuilder::build`](super::CrawlerBuilder::build)
//! refused a setting, and [`Setting`], which one, named as its command-line
//! flag. Not why a crawl could not run (`crawl::error::CrawlError`).

use std::fmt;

use thiserror::Error;

/// A setting that cannot be used: which one ([`setting`](Self::setting)),
/// and why ([`problem`](Self::problem), one line).
#[derive(Debug, Error)]
#[error("{setting}: {problem}")]
pub struct BuildError {
    setting: Setting,
    problem: String,
}

impl BuildError {
    pub(crate) fn new(setting: Setting, problem: impl Into<String>) -> Self {
        BuildError {
            setting,
            problem: problem.into(),
        }
    }

    /// The setting refused.
    pub fn setting(&self) -> Setting {
        self.setting
    }

    /// What is wrong with its value, in one line.
    pub fn problem(&self) -> &str {
        &self.problem
    }
}

/// Declares [`Setting`] with each variant's flag name, once.
macro_rules! settings {
    ($($(#[$doc:meta])* $variant:ident => $flag:literal,)*) => {
        /// A setting of [`CrawlerBuilder`](super::CrawlerBuilder), as a
        /// [`BuildError`] names it. Its `Display` is its command-line
        /// flag's name (`max-tasks` for [`MaxTasks`](Setting::MaxTasks),
        /// the builder's `max_tasks`); a setting of the library only is
        /// named so too (`jsonl-backlog`, `max-sitemap-urls`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Setting {
            $($(#[$doc])* #[doc = concat!("Named `", $flag, "`.")] $variant,)*
        }

        impl Setting {
            /// Every setting, in the order of the flags' groups.
            pub fn all() -> impl Iterator<Item = Setting> {
                [$(Setting::$variant,)*].into_iter()
            }

            /// The command-line flag's name, without its dashes.
            pub fn flag(self) -> &'static str {
                match self {
                    $(Setting::$variant => $flag,)*
                }
            }
        }
    };
}

settings! {
    /// The roots (a flag of none: they are the command's arguments).
    Root => "root",
    Seeds => "seeds",
    Exclude => "exclude",
    Include => "include",
    State => "state",
    Resume => "resume",
    CheckpointInterval => "checkpoint-interval",
    Cluster => "cluster",
    Crawl => "crawl",
    Node => "node",
    Partitions => "partitions",
    LeaseTtl => "lease-ttl",
    Output => "output",
    /// The library's own (no flag).
    JsonlBacklog => "jsonl-backlog",
    Warc => "warc",
    WarcMaxSize => "warc-max-size",
    WarcDedup => "warc-dedup",
    WarcDns => "warc-dns",
    Cdxj => "cdxj",
    Wacz => "wacz",
    Cores => "cores",
    MaxTasks => "max-tasks",
    MaxTries => "max-tries",
    PerHost => "per-host",
    PerIp => "per-ip",
    MaxUrlLength => "max-url-length",
    MaxPagesPerHost => "max-pages-per-host",
    MaxBody => "max-body",
    SeenMemory => "seen-memory",
    HostMemory => "host-memory",
    SpillDir => "spill-dir",
    Timeout => "timeout",
    ConnectTimeout => "connect-timeout",
    ReadTimeout => "read-timeout",
    Delay => "delay",
    MaxCrawlDelay => "max-crawl-delay",
    MaxRetryAfter => "max-retry-after",
    DelayFactor => "delay-factor",
    MaxDelay => "max-delay",
    HostRule => "host-rule",
    RobotsRetries => "robots-retries",
    /// The library's own (no flag).
    MaxSitemapUrls => "max-sitemap-urls",
    /// The library's own (no flag).
    MaxSitemapsPerHost => "max-sitemaps-per-host",
    MaxTime => "max-time",
    MaxPages => "max-pages",
    MaxBytes => "max-bytes",
    ProgressInterval => "progress-interval",
    CaCert => "ca-cert",
    Header => "header",
    Auth => "auth",
    Proxy => "proxy",
    NoProxy => "no-proxy",
    Cookies => "cookies",
    CookieMemory => "cookie-memory",
    Since => "since",
    StripQuery => "strip-query",
    AcceptType => "accept-type",
    RejectType => "reject-type",
    MaxSizePerType => "max-size-per-type",
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.flag())
    }
}
