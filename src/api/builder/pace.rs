//! How fast and how politely: cores and fetches at once, per host and
//! per IP, delays, retries, per-host rules, robots.txt and sitemaps.
//!
//! Settings of [`CrawlerBuilder`], checked at [`CrawlerBuilder::build`].

use std::sync::Arc;
use std::time::Duration;

use crate::api::error::Setting;
use crate::config::host_rules::HostRule;

use super::CrawlerBuilder;

impl CrawlerBuilder {
    /// Shards: one executor thread per core (default: every CPU this
    /// process may run on).
    pub fn cores(mut self, n: usize) -> Self {
        self.config.cores = n;
        self
    }

    /// Pin each shard's thread to a CPU of the process's affinity mask
    /// (off by default: a library should not move its caller's threads).
    pub fn pin_threads(mut self, pin: bool) -> Self {
        self.config.pin_threads = pin;
        self
    }

    /// Fetches at once over all shards (default
    /// [`defaults::MAX_TASKS`](crate::defaults::MAX_TASKS); the open-file limit
    /// may lower it).
    pub fn max_tasks(mut self, n: usize) -> Self {
        self.config.max_tasks = n;
        self
    }

    /// Redirect hops a chain may take (default
    /// [`defaults::MAX_REDIRECT`](crate::defaults::MAX_REDIRECT)).
    pub fn max_redirect(mut self, n: u32) -> Self {
        self.config.max_redirect = n;
        self
    }

    /// Attempts per URL (default
    /// [`defaults::MAX_TRIES`](crate::defaults::MAX_TRIES)): a network error is
    /// tried again at once, a 429 or 503 with a `Retry-After` within
    /// [`max_retry_after`](Self::max_retry_after) once its wait is over.
    pub fn max_tries(mut self, n: u32) -> Self {
        self.config.max_tries = n;
        self
    }

    /// Longest `Retry-After` honoured (default
    /// [`defaults::MAX_RETRY_AFTER`](crate::defaults::MAX_RETRY_AFTER)): a 429
    /// or 503 that asks for at most this is not recorded; its page goes back to
    /// its host's queue and the host waits that long (attempts counted in
    /// [`max_tries`](Self::max_tries)). A longer one, or none, is recorded as
    /// the answer it is. Zero honours none; at most a day.
    pub fn max_retry_after(mut self, limit: Duration) -> Self {
        self.config.max_retry_after = limit;
        self
    }

    /// URLs accepted per host: a bound on generated-URL traps (default
    /// [`defaults::MAX_PAGES_PER_HOST`](crate::defaults::MAX_PAGES_PER_HOST)).
    pub fn max_pages_per_host(mut self, n: usize) -> Self {
        self.config.max_pages_per_host = n;
        self
    }

    /// Fetches in flight per host (default
    /// [`defaults::PER_HOST`](crate::defaults::PER_HOST)).
    pub fn per_host(mut self, n: usize) -> Self {
        self.config.per_host = n;
        self
    }

    /// Fetches in flight to one server address at most, over all hosts
    /// and shards (off by default): hundreds of names served by one
    /// machine are not all fetched at once. The address is the one a
    /// host's name resolves to first (the one tried first); a fetch
    /// through a proxy that resolves names itself (`http://`,
    /// `socks5h://`) is not counted. A page whose address is full waits
    /// in its host's queue a little, and is tried again (no failure
    /// counted, no page of [`max_pages`](Self::max_pages) spent).
    /// [`build`](Self::build) refuses 0.
    pub fn per_ip(mut self, n: u32) -> Self {
        self.config.per_ip = Some(n);
        self
    }

    /// Least time between two request starts to one host (default
    /// [`defaults::DELAY`](crate::defaults::DELAY): none).
    pub fn delay(mut self, delay: Duration) -> Self {
        self.config.delay = delay;
        self
    }

    /// Adaptive delay, as Heritrix's: after a fetch that took `t`, its
    /// host waits `factor × t` from the fetch's end, at least
    /// [`delay`](Self::delay) and at most [`max_delay`](Self::max_delay),
    /// so a slow server is asked less often. 0 (the default) turns it off;
    /// [`build`](Self::build) refuses a factor that is negative, not a
    /// number or over 100.
    pub fn delay_factor(mut self, factor: f64) -> Self {
        self.config.delay_factor = factor;
        self
    }

    /// Longest adaptive delay (default
    /// [`defaults::MAX_DELAY`](crate::defaults::MAX_DELAY)).
    pub fn max_delay(mut self, limit: Duration) -> Self {
        self.config.max_delay = limit;
        self
    }

    /// Politeness of its own for the hosts `pattern` names: a host name
    /// (`example.com`, an address), `*.example.com` (its subdomains, not
    /// itself) or `*` (every host). Each knob `rule` sets overrides the
    /// crawl's setting for those hosts ([`per_host`](Self::per_host),
    /// [`delay`](Self::delay), [`delay_factor`](Self::delay_factor),
    /// [`max_delay`](Self::max_delay),
    /// [`max_pages_per_host`](Self::max_pages_per_host)); the others stay
    /// the crawl's. An exact name beats a wildcard, the longest wildcard
    /// beats a shorter one, and only the one rule that matches applies;
    /// the same pattern again adds its knobs to the rule. A host's rule is
    /// found once, when the crawl first meets the host.
    /// [`build`](Self::build) refuses a pattern that is none of these, and
    /// a knob out of its setting's range.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::time::Duration;
    /// use ringcrawl::HostRule;
    /// let crawler = ringcrawl::Crawler::builder()
    ///     .root("https://example.com/")
    ///     .host_rule("example.com", HostRule::new().per_host(4))
    ///     .host_rule("*.example.com", HostRule::new().delay(Duration::from_secs(1)))
    ///     .build()?;
    /// # Ok(()) }
    /// ```
    pub fn host_rule(mut self, pattern: &str, rule: HostRule) -> Self {
        let rules = Arc::make_mut(&mut self.config.host_rules);
        if let Err(e) = rules.add(pattern, rule) {
            self.refuse(Setting::HostRule, e.to_string());
        }
        self
    }

    /// Fetch robots.txt first and obey it (default true).
    pub fn obey_robots(mut self, obey: bool) -> Self {
        self.config.obey_robots = obey;
        self
    }

    /// Follow no link of a page whose `<meta name="robots">` (or a meta
    /// named for this crawler's product token) or `X-Robots-Tag` says
    /// `nofollow` or `none` (default true, as wget does). Either way the
    /// page is fetched, archived, and its record says what they said.
    pub fn obey_meta_robots(mut self, obey: bool) -> Self {
        self.config.obey_meta_robots = obey;
        self
    }

    /// Leave out links whose `rel` says `nofollow` (`<a rel="nofollow
    /// ugc" href=...>`; default false: wget and most archive crawlers
    /// follow them). Only then is an anchor's `rel` read.
    pub fn skip_nofollow(mut self, skip: bool) -> Self {
        self.config.skip_nofollow = skip;
        self
    }

    /// Read sitemaps (default true): each root origin's `/sitemap.xml` and
    /// the `Sitemap:` lines of the robots.txt of the roots' origins, indexes
    /// followed (two levels at most), each at most 50 MB inflated and
    /// 50,000 URLs ([`max_sitemap_urls`](Self::max_sitemap_urls)), 1,000 a
    /// host ([`max_sitemaps_per_host`](Self::max_sitemaps_per_host)); the
    /// pages they list on their own host are
    /// queued like links of depth 1 (`L` hops from an `M`), through the
    /// scope and the follow rule.
    pub fn sitemaps(mut self, read: bool) -> Self {
        self.config.sitemaps = read;
        self
    }

    /// `<loc>`s (or text lines) kept of one sitemap (default
    /// [`defaults::MAX_SITEMAP_URLS`](crate::defaults::MAX_SITEMAP_URLS),
    /// the protocol's most); the rest of a longer sitemap is left out.
    /// [`build`](Self::build) refuses 0 and more than the default.
    pub fn max_sitemap_urls(mut self, n: usize) -> Self {
        self.config.sitemap_limits.max_urls = n;
        self
    }

    /// Sitemaps fetched for one host, whether guessed, named by robots.txt
    /// or by an index (default
    /// [`defaults::MAX_SITEMAPS_PER_HOST`](crate::defaults::MAX_SITEMAPS_PER_HOST)):
    /// a bound on indexes of indexes. Past it the host's further sitemaps
    /// are not fetched. [`build`](Self::build) refuses 0.
    pub fn max_sitemaps_per_host(mut self, n: usize) -> Self {
        self.config.sitemap_limits.max_per_host = n;
        self
    }

    /// Upper bound on a robots.txt `Crawl-delay` (default
    /// [`defaults::MAX_CRAWL_DELAY`](crate::defaults::MAX_CRAWL_DELAY)).
    pub fn max_crawl_delay(mut self, delay: Duration) -> Self {
        self.config.max_crawl_delay = delay;
        self
    }

    /// Waits before each new try of a robots.txt that was unreachable or
    /// answered 5xx, while its origin's pages wait (default
    /// [`defaults::ROBOTS_RETRIES`](crate::defaults::ROBOTS_RETRIES)); when
    /// they are used up the origin's pages are refused (`robots_unavailable`).
    /// None: give up at the first failure.
    pub fn robots_retries(mut self, waits: impl IntoIterator<Item = Duration>) -> Self {
        self.config.robots_retries = waits.into_iter().collect();
        self
    }
}
