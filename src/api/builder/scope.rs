//! What to crawl: the roots and seed lists, the scope, which links
//! are followed, and what is done with each page.
//!
//! Settings of [`CrawlerBuilder`], checked at [`CrawlerBuilder::build`].

use std::path::PathBuf;

use url::Url;

use crate::api::error::Setting;
use crate::config::{SeedReader, SeedSource};
use crate::crawl::hooks::Handler;
use crate::crawl::page::Page;
use crate::web::scope::ScopeMode;

use super::CrawlerBuilder;

impl CrawlerBuilder {
    /// A root URL (a root without a scheme gets `http://`). The roots'
    /// hosts are the crawl's scope.
    pub fn root(mut self, url: impl Into<String>) -> Self {
        self.roots.push(url.into());
        self
    }

    /// Several roots.
    pub fn roots<I: IntoIterator<Item = S>, S: Into<String>>(mut self, urls: I) -> Self {
        self.roots.extend(urls.into_iter().map(Into::into));
        self
    }

    /// A seed list: a file of one URL or bare host a line (`#` comments
    /// and blank lines skipped), read as the crawl goes, not into memory.
    /// Its hosts are in scope as the roots' are; a bad line is recorded
    /// (`bad_root`, with its line number) and the crawl goes on. May be
    /// given several times, and with roots.
    pub fn seeds_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.config.seeds.push(SeedSource::File(path.into()));
        self
    }

    /// A seed list read from `reader` (as [`CrawlerBuilder::seeds_file`]):
    /// read once, when the crawl starts, and kept on disk meanwhile. An
    /// iterator of URLs can be given as roots instead, or as a reader over
    /// its lines.
    pub fn seeds_reader(mut self, reader: impl std::io::Read + Send + 'static) -> Self {
        self.config
            .seeds
            .push(SeedSource::Reader(SeedReader::new(Box::new(reader))));
        self
    }

    /// Seeds from standard input (the command line's `--seeds -`).
    pub fn seeds_stdin(mut self) -> Self {
        self.config.seeds.push(SeedSource::Stdin);
        self
    }

    /// Which hosts are in scope: the roots' own (`Strict`, the default) or
    /// any host of their registered domains (`Lenient`).
    pub fn scope(mut self, mode: ScopeMode) -> Self {
        self.mode = mode;
        self
    }

    /// Skip URLs matching this regular expression (checked in `build`).
    pub fn exclude(mut self, regex: impl Into<String>) -> Self {
        self.exclude = Some(regex.into());
        self
    }

    /// Follow only links that this regular expression matches (searched
    /// anywhere in the URL, as [`exclude`](Self::exclude)); given several
    /// times, a link must match one of them. Roots, seeds, sitemaps and
    /// the targets of their redirects are fetched whatever it says, and so
    /// are page requisites ([`page_requisites`](Self::page_requisites)).
    pub fn include(mut self, regex: impl Into<String>) -> Self {
        // One given twice (a resume that repeats its command line) is one.
        let regex = regex.into();
        if !self.include.contains(&regex) {
            self.include.push(regex);
        }
        self
    }

    /// wget's `--no-parent`: on a root's host (and its `www.` twin),
    /// follow only links under a root's directory there (its path up to
    /// and including the last `/`: `/docs/` for `/docs/index.html`). Other
    /// hosts in scope are not limited; roots, sitemaps and requisites are
    /// fetched as [`include`](Self::include) says.
    pub fn no_parent(mut self, on: bool) -> Self {
        self.no_parent = on;
        self
    }

    /// Decide which links of a page are followed, on top of scope,
    /// `exclude` and the limits: called on the shard that fetched the page
    /// for each in-scope link of it. Redirects are followed regardless.
    pub fn follow<F>(mut self, rule: F) -> Self
    where
        F: Fn(&Url, &Page<'_>) -> bool + Send + Sync + 'static,
    {
        self.hooks.follow = Some(Box::new(rule));
        self
    }

    /// Call `handler` with every page as it arrives, on the shard (thread)
    /// that fetched it: pages arrive on several threads at once, so the
    /// handler must be `Sync`. A slow handler slows its shard.
    pub fn on_page<F>(mut self, handler: F) -> Self
    where
        F: Fn(&Page<'_>) + Send + Sync + 'static,
    {
        let handler = std::sync::Arc::new(handler);
        self.hooks.handler = Some(Box::new(move |_shard| {
            let handler = handler.clone();
            Box::new(move |page: &Page<'_>| handler(page)) as Handler
        }));
        self
    }

    /// Like [`on_page`](Self::on_page), with a handler per shard made on
    /// the shard's own thread by `factory(shard)`: its state needs no lock
    /// and need not be `Send`. It is dropped when its shard ends.
    pub fn on_page_per_shard<F, H>(mut self, factory: F) -> Self
    where
        F: Fn(usize) -> H + Send + Sync + 'static,
        H: FnMut(&Page<'_>) + 'static,
    {
        self.hooks.handler = Some(Box::new(move |shard| Box::new(factory(shard)) as Handler));
        self
    }

    /// Links followed from a root beyond which links are not queued
    /// (default [`defaults::MAX_DEPTH`](crate::defaults::MAX_DEPTH)).
    pub fn max_depth(mut self, n: u32) -> Self {
        self.config.max_depth = n;
        self
    }

    /// Fetch each page's requisites too (wget's `-p`): the images,
    /// scripts, stylesheets, media and objects it loads and what its CSS
    /// loads (`url()`, `@import`), from any host (the exclude regex still
    /// applies), at the page's depth, as leaves: a requisite's own links
    /// are not followed, except a stylesheet's. Off by default.
    pub fn page_requisites(mut self, on: bool) -> Self {
        self.config.page_requisites = on;
        self
    }

    /// URLs longer than this (bytes, normalised) are not queued (default
    /// [`defaults::MAX_URL_LENGTH`](crate::defaults::MAX_URL_LENGTH)).
    pub fn max_url_length(mut self, n: usize) -> Self {
        self.config.max_url_length = n;
        self
    }

    /// Recrawl against an earlier crawl's records (`-o` of that crawl,
    /// JSON Lines; several files may be given, the last capture of a URL
    /// counts): a page it captured whole with an `ETag` or `Last-Modified`
    /// is asked for with `If-None-Match` / `If-Modified-Since`. On `304 Not
    /// Modified` its links are read from the earlier capture's WARC record
    /// (looked for in the [`since_warc`](Self::since_warc) directories, the
    /// record files' own, then this crawl's `--warc` directory), archived
    /// with `--warc` as a `revisit` record (profile server-not-modified),
    /// and recorded with `revalidation: not_modified`; a capture that
    /// cannot be read back is fetched again in full. [`build`](Self::build)
    /// refuses a file that cannot be read; the crawl reads them when it
    /// starts (lines that are not records skipped, with a warning).
    pub fn since(mut self, records: impl Into<PathBuf>) -> Self {
        self.config.since.push(records.into());
        self
    }

    /// A directory holding the earlier crawl's WARC files
    /// ([`since`](Self::since)), looked in first.
    pub fn since_warc(mut self, dir: impl Into<PathBuf>) -> Self {
        self.config.since_warc.push(dir.into());
        self
    }

    /// Leave query parameters named like `pattern` out of every URL
    /// (`utm_*`, `sessionid`; `*` stands for any run of characters, letter
    /// case counts): tracking and session parameters that would make one
    /// page many URLs. Applied before a URL meets the seen-set, so the
    /// stripped URL is the one fetched and recorded (roots and seeds
    /// too). [`build`](Self::build) refuses an empty pattern and one
    /// holding `&`, `=`, `#` or `?`.
    pub fn strip_query(mut self, pattern: &str) -> Self {
        if let Err(e) = self.config.strip_query.add(pattern) {
            self.refuse(Setting::StripQuery, e.to_string());
        }
        self
    }

    /// Download only the bodies of this media type (`application/pdf`,
    /// `image/*`; repeat for more): an answer of another type is recorded
    /// with its head and cut at zero bytes (`truncated_by: limit`). HTML
    /// is always read (the crawl needs its links), and robots.txt and
    /// sitemaps are read whole. [`build`](Self::build) refuses what is
    /// not `type/subtype`, `type/*` or `*/*`.
    pub fn accept_type(mut self, pattern: &str) -> Self {
        if let Err(e) = self.config.types.accept(pattern) {
            self.refuse(Setting::AcceptType, e.to_string());
        }
        self
    }

    /// Do not download the bodies of this media type (`video/*`): an
    /// answer of it is recorded with its head and cut at zero bytes. HTML
    /// is always read.
    pub fn reject_type(mut self, pattern: &str) -> Self {
        if let Err(e) = self.config.types.reject(pattern) {
            self.refuse(Setting::RejectType, e.to_string());
        }
        self
    }
}
