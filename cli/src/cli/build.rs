//! The flags as the library's builder (the same path a library user
//! takes): what each one sets.

use ringcrawl::{Crawler, CrawlerBuilder, Families, ScopeMode};

use super::cluster_auth::cluster_url;
use super::host_rule::parse_host_rule;
use super::proxy_env::{redact_userinfo, ProxyEnv};
use super::values::{
    parse_auth, parse_dns_server, parse_header, parse_resolves, parse_retries, parse_type_size,
};
use super::{Args, ArgsError};

impl Args {
    /// The crawl these flags ask for, through the library's builder (the
    /// same path a library user takes). `extra_roots` come from elsewhere
    /// (the demo's in-process site). Values are checked by
    /// [`CrawlerBuilder::build`]; only what is the command line's own
    /// (the syntax of `--resolve`, `--dns-server`, `--robots-retries`) is
    /// checked here.
    pub fn into_builder(self, extra_roots: &[String]) -> Result<CrawlerBuilder, ArgsError> {
        // A resumed crawl's roots are its manifest's.
        // So are a cluster crawl's (a node may join with none).
        if self.roots.is_empty()
            && self.seeds.is_empty()
            && extra_roots.is_empty()
            && self.resume.is_none()
            && self.cluster.is_none()
        {
            return Err(ArgsError::NoRoots);
        }
        let verbosity = self.verbosity();
        let mut b = Crawler::builder();
        for path in &self.seeds {
            b = match path.to_str() {
                Some("-") => b.seeds_stdin(),
                _ => b.seeds_file(path),
            };
        }
        let mut b = b
            .roots(self.roots.iter().chain(extra_roots).cloned())
            .scope(if self.lenient {
                ScopeMode::Lenient
            } else {
                ScopeMode::Strict
            })
            .pin_threads(true)
            .max_tasks(self.max_tasks)
            .max_tries(self.max_tries)
            .max_retry_after(self.max_retry_after)
            .max_redirect(self.max_redirect)
            .ip_families(match (self.ipv4, self.ipv6) {
                (true, _) => Families::V4,
                (_, true) => Families::V6,
                _ => Families::Both,
            })
            .timeout(self.timeout)
            .connect_timeout(self.connect_timeout)
            .read_timeout(self.read_timeout)
            .max_body(usize::try_from(self.max_body).unwrap_or(usize::MAX))
            .max_depth(self.max_depth)
            .page_requisites(self.page_requisites)
            .delay(self.rate.unwrap_or(self.delay))
            .delay_factor(self.delay_factor)
            .max_delay(self.max_delay)
            .keep_alive(!self.no_keep_alive)
            .compression(!self.no_compression)
            .insecure(self.insecure)
            .obey_robots(!self.ignore_robots)
            .obey_meta_robots(!self.ignore_meta_robots)
            .skip_nofollow(self.skip_nofollow)
            .max_crawl_delay(self.max_crawl_delay)
            .robots_retries(parse_retries(&self.robots_retries)?)
            .max_url_length(self.max_url_length)
            .max_pages_per_host(self.max_pages_per_host)
            .warc_max_size(self.warc_max_size)
            .seen_memory(usize::try_from(self.seen_memory).unwrap_or(usize::MAX))
            .frontier_memory(usize::try_from(self.frontier_memory).unwrap_or(usize::MAX))
            .host_memory(usize::try_from(self.host_memory).unwrap_or(usize::MAX))
            .cookie_memory(usize::try_from(self.cookie_memory).unwrap_or(usize::MAX));
        if let Some(pages) = self.max_pages {
            b = b.max_pages(pages);
        }
        if let Some(bytes) = self.max_bytes {
            b = b.max_bytes(bytes);
        }
        if let Some(time) = self.max_time {
            b = b.max_time(time);
        }
        if let Some(bytes) = self.min_free_disk {
            b = b.min_free_disk(bytes);
        }
        if let Some(dir) = &self.spill_dir {
            b = b.spill_dir(dir);
        }
        // --resume wins over the --state of the flags it applies again.
        match (&self.resume, &self.state) {
            (Some(dir), _) => b = b.resume(dir),
            (None, Some(dir)) => b = b.state(dir),
            (None, None) => {}
        }
        b = b.checkpoint_interval(self.checkpoint_interval);
        if let Some(bytes) = self.compact_in_run_after {
            b = b.compact_in_run(bytes);
        }
        b = b.resume_discard_damaged(self.resume_discard_damaged);
        if let (Some(url), Some(crawl)) = (&self.cluster, &self.crawl) {
            let url = cluster_url(url, self.cluster_password_file.as_deref())?;
            b = b.cluster(&url, crawl).lease_ttl(self.lease_ttl);
            if let Some(node) = &self.node {
                b = b.node_name(node);
            }
            if let Some(n) = self.partitions {
                b = b.partitions(n);
            }
        }
        if let Some(regex) = self.exclude {
            b = b.exclude(regex);
        }
        for regex in self.include {
            b = b.include(regex);
        }
        b = b.no_parent(self.no_parent);
        for pattern in self.strip_query.iter().flat_map(|list| list.split(',')) {
            b = b.strip_query(pattern);
        }
        for pattern in self.accept_type.iter().flat_map(|list| list.split(',')) {
            b = b.accept_type(pattern);
        }
        for pattern in self.reject_type.iter().flat_map(|list| list.split(',')) {
            b = b.reject_type(pattern);
        }
        for rule in self
            .max_size_per_type
            .iter()
            .flat_map(|list| list.split(','))
        {
            let (pattern, size) = parse_type_size(rule)?;
            b = b.max_size_per_type(pattern, size);
        }
        if let Some(n) = self.per_ip {
            b = b.per_ip(n);
        }
        for text in &self.host_rule {
            let (pattern, rule) =
                parse_host_rule(text).map_err(|why| ArgsError::HostRule(text.clone(), why))?;
            b = b.host_rule(pattern, rule);
        }
        if let Some(cores) = self.cores {
            b = b.cores(cores);
        }
        for ((host, port), addrs) in parse_resolves(&self.resolve)? {
            b = b.resolve(&host, port, addrs);
        }
        for text in &self.dns_server {
            b = b.dns_server(parse_dns_server(text)?);
        }
        if let Some(agent) = self.user_agent {
            b = b.user_agent(agent);
        }
        for line in &self.header {
            let (name, value) = parse_header(line)?;
            b = b.header(name, value);
        }
        for spec in &self.auth {
            let auth = parse_auth(spec)?;
            b = b.auth(auth.host, auth.port, auth.user, auth.password);
        }
        let env = if self.demo.is_some() {
            ProxyEnv::default()
        } else {
            ProxyEnv::read(|name| std::env::var(name).ok())
        };
        if self.proxy.is_empty() {
            for (https, url) in env.by_scheme() {
                log::info!(
                    "proxy for {} URLs from the environment: {}",
                    if https { "https" } else { "http" },
                    redact_userinfo(url)
                );
                b = b.scheme_proxy(https, url);
            }
        }
        for url in &self.proxy {
            b = b.proxy(url);
        }
        if let Some(list) = self.no_proxy.as_deref().or(env.no_proxy.as_deref()) {
            b = b.no_proxy(list);
        }
        if let Some(path) = &self.cookies {
            b = b.load_cookies(path);
        }
        for path in &self.since {
            b = b.since(path);
        }
        for dir in &self.since_warc {
            b = b.since_warc(dir);
        }
        if let Some(path) = self.save_cookies {
            b = b.save_cookies(path);
        }
        // The synthetic site has no sitemap, and the demo's check counts
        // every URL recorded: it reads none unless asked.
        b = b.sitemaps(!self.no_sitemaps && (self.sitemaps || self.demo.is_none()));
        match (self.per_host, self.demo) {
            (Some(n), _) => b = b.per_host(n),
            (None, Some(_)) => b = b.per_host(self.max_tasks),
            (None, None) => {}
        }
        for path in &self.ca_cert {
            b = b.ca_cert_file(path);
        }
        b = match self.output.as_deref() {
            None => b,
            Some("-") => b.jsonl_stdout(),
            Some(path) => b.jsonl(path),
        };
        if let Some(dir) = self.warc {
            b = b.warc(dir);
        }
        b = b.warc_dedup(self.warc_dedup).warc_dns(self.warc_dns);
        if let Some(path) = self.cdxj {
            b = b.cdxj(path);
        }
        if let Some(path) = self.wacz {
            b = b.wacz(path);
        }
        if verbosity >= 0 {
            b = b.progress(Some(self.progress_interval));
        }
        Ok(b)
    }

    /// -1 quiet, 0 normal, 1+ verbose.
    pub fn verbosity(&self) -> i8 {
        (self.verbose as i8).saturating_sub(self.quiet as i8)
    }
}
