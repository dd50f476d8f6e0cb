//! Sitemaps as a shard's job: queue the sitemaps a robots.txt names, and
//! read a fetched sitemap: its entries (more sitemaps, for an index) or its
//! pages go to their owners like a page's links, its faults on its record.
//!
//! What a URL is to be read as comes from its hop path: a sitemap's last
//! hop but redirects is `M` (`crate::job::hops`), so a sitemap goes
//! through the frontier like any URL (seen-set, robots.txt, politeness,
//! budgets; its host's cap of sitemaps). The reading itself is the pure
//! `ringcrawl_sitemap`; the root's guessed `/sitemap.xml` is seeded
//! with the roots (`crate::crawl::run`).
//!
//! Hosts: a sitemap's entries count only on its own host (sitemaps.org's
//! rule; `ringcrawl_sitemap::listed`), then in the crawl's scope. A
//! robots.txt `Sitemap:` line may name a sitemap on another host in scope;
//! that sitemap too lists only its own host's URLs (the protocol's
//! cross-host submission through robots.txt is not honoured).

use std::sync::Arc;
use std::time::Instant;

use ringcrawl_links::urls;
use url::Url;

use crate::job::hops::{Hop, Hops};
use crate::job::{ErrorKind, Job};
use crate::net::fetch::Response;
use crate::output::record::Record;
use crate::web::scope::Scope;
use ringcrawl_sitemap::{self as sitemap, Cut, Kind};

use super::failure::fail;
use super::Shard;

impl Shard {
    /// Queue the sitemaps the `Sitemap:` lines of the robots.txt at
    /// `robots` name (resolved against it; those in scope), each a `PM`
    /// hop from the root at depth 0. Counted in like links; the owners
    /// refuse what their limits keep out, with a record.
    pub(super) fn queue_robots_sitemaps(&self, robots: &Url, lines: &[String]) {
        let now = Instant::now();
        // No record waits for the owners' tallies: the robots.txt fetch
        // has none. Tallies for an unknown token are dropped.
        let token = self.page_token();
        let via: Arc<str> = Arc::from(robots.as_str());
        let hops = Hops::root().then(Hop::Prerequisite).then(Hop::Manifest);
        for line in lines {
            let Some(url) = urls::join(robots, line) else {
                continue;
            };
            if !self.scope().allows_start(&url) {
                continue;
            }
            let job = Job {
                retries: 0,
                url: url.into(),
                redirects_left: u16::try_from(self.config.max_redirect).unwrap_or(u16::MAX),
                depth: 0,
                hops,
                via: Some(via.clone()),
            };
            let _ = self.route(job, now, token);
        }
        self.send_links_now();
    }

    /// Read the sitemap `job` fetched (2xx; `body` with its content codings
    /// undone) and route what it lists: an index's sitemaps one level down
    /// at the same depth, a urlset's pages as links of depth + 1. Faults go
    /// on the record, unless it has one already (a body cut in transit):
    /// `sitemap_invalid` (not a sitemap, or XML broken part way: the URLs
    /// before the break are used), `sitemap_too_large` (past the bytes or
    /// URLs a sitemap may have: the first ones used, `truncated`),
    /// `sitemap_too_deep` (an index past the levels followed: its entries
    /// are not). Returns the peers asked, as `handle_response` does.
    pub(super) fn read_sitemap(
        &self,
        job: &Job,
        url: &Url,
        response: &Response,
        body: &[u8],
        record: &mut Record,
        token: u64,
    ) -> usize {
        let limits = &self.config.sitemap_limits;
        let wants_pages = self.hooks.wants_pages();
        let sitemap = match sitemap::parse(body, &limits.bounds()) {
            Ok(sitemap) => sitemap,
            Err(e) => {
                note(record, ErrorKind::SitemapInvalid, &e.to_string());
                if wants_pages {
                    self.deliver(record, response, body, &[]);
                }
                return 0;
            }
        };
        match &sitemap.cut {
            None => {}
            Some(cut @ (Cut::TooManyUrls(_) | Cut::TooLarge { .. })) => {
                record.cut(crate::output::record::CUT_AT_LIMIT);
                let message = format!("{} {cut}", sitemap.kind.name());
                note(record, ErrorKind::SitemapTooLarge, &message);
            }
            // Broken part way (or cut for a reason this crawler does
            // not know): invalid from there.
            Some(cut) => {
                let message = format!("{} {cut}", sitemap.kind.name());
                note(record, ErrorKind::SitemapInvalid, &message);
            }
        }
        let level = job.hops.sitemap_level();
        let index = sitemap.kind == Kind::Index;
        let listed = sitemap::listed(&sitemap.locs, url);
        if index && level >= limits.max_levels {
            let message = format!(
                "sitemap index {level} levels down: its {} sitemaps not followed (at most {} levels)",
                listed.urls.len(),
                limits.max_levels
            );
            note(record, ErrorKind::SitemapTooDeep, &message);
            if wants_pages {
                self.deliver(record, response, body, &[]);
            }
            return 0;
        }
        // An index lists sitemaps, which --include and --no-parent do not
        // choose; a urlset lists pages, which they do.
        let rule = if index {
            Scope::allows_start
        } else {
            Scope::allows
        };
        let links = if wants_pages {
            self.deliver_with(record, response, body, &listed.urls, rule)
        } else {
            let scope = self.scope();
            listed
                .urls
                .into_iter()
                .filter(|l| rule(&scope, l))
                .collect()
        };
        record.num_urls = links.len();
        let (depth, hop) = if index {
            (job.depth, Hop::Manifest)
        } else {
            (job.depth.saturating_add(1), Hop::Link)
        };
        let found = links.into_iter().map(|url| (url, hop, depth));
        self.route_jobs(job, found, record, token)
    }
}

/// Put a sitemap's fault on its record, unless the record has one already
/// (the body's own: cut in transit, a certificate let through).
fn note(record: &mut Record, kind: ErrorKind, message: &str) {
    if record.error.is_none() {
        fail(record, kind, message);
    }
}
