//! [`CrawlerBuilder`]: every setting of a crawl, typed, checked once in
//! [`CrawlerBuilder::build`]. The command line builds its crawl here too,
//! so a setting means the same thing from Rust and from a flag (a setting
//! is named as its flag, `max_tasks` for `--max-tasks`).
//!
//! Not the settings' use (the shards read the internal `Config` this
//! produces) nor flag parsing (the binary's `cli` module).

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use url::Url;

use super::checks;
use super::error::{BuildError, Setting};
use super::{Crawler, Interrupt};
use crate::config::host_rules::HostRule;
use crate::config::{Config, Output, SeedReader, SeedSource, DEFAULT_CHECKPOINT_INTERVAL};
use crate::crawl::hooks::{Handler, Hooks};
use crate::crawl::page::Page;
use crate::net::cookies::Jar;
use crate::net::dns::Families;
use crate::net::http::Credential;
use crate::net::proxy::{Bypass, Proxy};
use crate::net::tls::{self, TlsOptions};
use crate::web::scope::{Scope, ScopeMode};
use crate::web::urls::{self, UrlError};

/// Builds a [`Crawler`]: roots first, then any setting that differs from
/// the chapter's defaults (100 fetches at once, 10 redirects, 4 tries,
/// strict scope, robots.txt obeyed, 2 fetches per host, keep-alive and
/// compression on, 60 s per fetch, 16 MiB per body).
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
            checkpoint_interval: DEFAULT_CHECKPOINT_INTERVAL,
            discard_damaged: false,
            state_args: Vec::new(),
            cluster: None,
            refused: None,
        }
    }

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

    /// Fetches at once over all shards (the open-file limit may lower it).
    pub fn max_tasks(mut self, n: usize) -> Self {
        self.config.max_tasks = n;
        self
    }

    /// Redirect hops a chain may take.
    pub fn max_redirect(mut self, n: u32) -> Self {
        self.config.max_redirect = n;
        self
    }

    /// Attempts per URL (default 4): a network error is tried again at
    /// once, a 429 or 503 with a `Retry-After` within
    /// [`max_retry_after`](Self::max_retry_after) once its wait is over.
    pub fn max_tries(mut self, n: u32) -> Self {
        self.config.max_tries = n;
        self
    }

    /// Longest `Retry-After` honoured (default 5 minutes): a 429 or 503
    /// that asks for at most this is not recorded; its page goes back to
    /// its host's queue and the host waits that long (attempts counted in
    /// [`max_tries`](Self::max_tries)). A longer one, or none, is recorded
    /// as the answer it is. Zero honours none; at most a day.
    pub fn max_retry_after(mut self, limit: Duration) -> Self {
        self.config.max_retry_after = limit;
        self
    }

    /// Links followed from a root beyond which links are not queued.
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

    /// URLs longer than this (bytes, normalised) are not queued.
    pub fn max_url_length(mut self, n: usize) -> Self {
        self.config.max_url_length = n;
        self
    }

    /// URLs accepted per host: a bound on generated-URL traps.
    pub fn max_pages_per_host(mut self, n: usize) -> Self {
        self.config.max_pages_per_host = n;
        self
    }

    /// Fetches in flight per host.
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

    /// Least time between two request starts to one host.
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

    /// Longest adaptive delay (default 30 s).
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
    /// 50,000 URLs, 1,000 a host; the pages they list on their own host are
    /// queued like links of depth 1 (`L` hops from an `M`), through the
    /// scope and the follow rule.
    pub fn sitemaps(mut self, read: bool) -> Self {
        self.config.sitemaps = read;
        self
    }

    /// Upper bound on a robots.txt `Crawl-delay`.
    pub fn max_crawl_delay(mut self, delay: Duration) -> Self {
        self.config.max_crawl_delay = delay;
        self
    }

    /// Waits before each new try of a robots.txt that was unreachable or
    /// answered 5xx, while its origin's pages wait (default 1, 5, 15 and
    /// 40 s); when they are used up the origin's pages are refused
    /// (`robots_unavailable`). None: give up at the first failure.
    pub fn robots_retries(mut self, waits: impl IntoIterator<Item = Duration>) -> Self {
        self.config.robots_retries = waits.into_iter().collect();
        self
    }

    /// Bytes the hosts' own state may take over all shards (default
    /// 64 MiB): the names, politeness clocks, page counts and robots.txt
    /// rules of live hosts, and of finished ones kept in case they come
    /// back. Past it the least recently finished are forgotten (one that
    /// comes back fetches robots.txt again), and the URLs of hosts not yet
    /// live wait, spilled to disk, until live hosts finish. Queued URLs
    /// are [`CrawlerBuilder::frontier_memory`]'s.
    pub fn host_memory(mut self, bytes: usize) -> Self {
        self.config.host_memory = bytes;
        self
    }

    /// Bytes each shard's TLS session cache may hold (default 8 MiB, some
    /// 1,000 hosts' sessions: each session keeps a copy of its server's
    /// certificate chain); past it the least recently used host's (name
    /// and port's) sessions are forgotten, and its next connection does a
    /// full handshake.
    pub fn tls_session_memory(mut self, bytes: usize) -> Self {
        self.config.tls_session_memory = bytes;
        self
    }

    /// Bytes of RAM the seen-set's buckets may hold, over all shards
    /// (default 128 MiB, at least 1 MiB a shard): URLs seen past it are kept on
    /// disk, in a sorted run per shard, with a Bloom filter (~1.25 bytes a
    /// URL) in RAM that answers most lookups of new URLs without the disk.
    pub fn seen_memory(mut self, bytes: usize) -> Self {
        self.config.seen_memory = bytes;
        self
    }

    /// Bytes of RAM the queued URLs may take, over all shards (default
    /// 256 MiB, split evenly): past it, each host's newest URLs are
    /// spilled to files in the system's temporary directory and read back
    /// when the host's turn nears, so a crawl that discovers far more URLs
    /// than it fetches keeps them on disk. The files go when the crawl
    /// ends.
    pub fn frontier_memory(mut self, bytes: usize) -> Self {
        self.config.frontier_memory = bytes;
        self
    }

    /// Stop after this many page fetches (robots.txt not counted): no new
    /// fetch starts, the running ones finish, the rest stays queued.
    pub fn max_pages(mut self, pages: u64) -> Self {
        self.config.budget.pages = Some(pages);
        self
    }

    /// Stop once this many body bytes were received (the running fetches
    /// finish, so a little more arrives).
    pub fn max_bytes(mut self, bytes: u64) -> Self {
        self.config.budget.bytes = Some(bytes);
        self
    }

    /// Stop starting fetches this long after the crawl started (the running
    /// ones finish, within their own timeouts; one still waiting for its
    /// name's DNS answer has not started, and stays queued).
    pub fn max_time(mut self, time: Duration) -> Self {
        self.config.budget.time = Some(time);
        self
    }

    /// Stop as at a spent budget when a file system the crawl writes to
    /// (records, WARC files, index, WACZ, state, spill) has less than
    /// `bytes` free for it, asked once a second: the running fetches
    /// finish, the rest stays queued (a crawl with a state directory can
    /// be resumed once there is room). The report's `budget_spent` is
    /// [`Spent::Disk`](crate::Spent::Disk).
    pub fn min_free_disk(mut self, bytes: u64) -> Self {
        self.config.budget.free_disk = Some(bytes);
        self
    }

    /// Keep the crawl's state in `dir` (made if missing; it must not hold
    /// a crawl yet), so that [`CrawlerBuilder::resume`] can go on with it
    /// after a stop, a spent budget or a `kill -9`. The records go to the
    /// JSONL file ([`CrawlerBuilder::jsonl`], else `dir/records.jsonl`):
    /// it is the crawl's log of what is done.
    pub fn state(mut self, dir: impl AsRef<Path>) -> Self {
        self.state = Some((dir.as_ref().to_path_buf(), false));
        self
    }

    /// Go on with the crawl kept in `dir` by [`CrawlerBuilder::state`]:
    /// its roots, scope and outputs are the manifest's (roots given here
    /// must be the same); budgets and other settings are this builder's.
    pub fn resume(mut self, dir: impl AsRef<Path>) -> Self {
        self.state = Some((dir.as_ref().to_path_buf(), true));
        self
    }

    /// A [`resume`](Self::resume) that finds damage before the end of the
    /// log, the index or a journal (not a tail torn by a kill, which is
    /// always cut) drops what is damaged and goes on: the damaged records
    /// and index lines are lost (their pages are fetched again), and so
    /// are the URLs of a damaged journal chunk. Without it such a resume
    /// fails with an error naming the file and the place.
    pub fn resume_discard_damaged(mut self, yes: bool) -> Self {
        self.discard_damaged = yes;
        self
    }

    /// How often a crawl with a state directory writes its checkpoint
    /// (default 60 s; once more when it stops).
    pub fn checkpoint_interval(mut self, every: Duration) -> Self {
        self.checkpoint_interval = every;
        self
    }

    /// The command line's flags, kept in a new state directory's manifest
    /// so that `ringcrawl --resume` applies them again.
    #[doc(hidden)]
    pub fn state_args(mut self, args: Vec<String>) -> Self {
        self.state_args = args;
        self
    }

    /// Crawl as one node of crawl `crawl` on the Redis server at `url`
    /// (`redis://HOST:PORT/`), made by the first node that joins: hosts
    /// are split into partitions, each owned by one live node at a time
    /// through a lease, and every URL found goes through its partition's
    /// stream to its owner (`crate::cluster`). Roots are added to the
    /// crawl (a node may have none); the crawl ends, for every node, when
    /// every stream is drained. The output files get the node's name
    /// (`out.jsonl` → `out.NODE.jsonl`, or `{node}` in the name).
    pub fn cluster(mut self, url: impl Into<String>, crawl: impl Into<String>) -> Self {
        let draft = self.cluster.get_or_insert_with(Default::default);
        draft.url = url.into();
        draft.crawl = crawl.into();
        self
    }

    /// This node's name in a cluster crawl (default `HOSTNAME-PID`):
    /// unique among its live nodes.
    pub fn node_name(mut self, name: impl Into<String>) -> Self {
        self.cluster.get_or_insert_with(Default::default).node = Some(name.into());
        self
    }

    /// Host partitions of a cluster crawl this node creates (default
    /// 256); fixed when the crawl is made, and a node that gives another
    /// count for an existing crawl is refused.
    pub fn partitions(mut self, n: u32) -> Self {
        self.cluster.get_or_insert_with(Default::default).partitions = Some(n);
        self
    }

    /// How long a node's lease on a partition lasts without renewal
    /// (default 10 s): a node that dies or is cut off loses its
    /// partitions to the others after this long.
    pub fn lease_ttl(mut self, ttl: Duration) -> Self {
        self.cluster.get_or_insert_with(Default::default).lease_ttl = Some(ttl);
        self
    }

    /// Sent as `User-Agent`.
    pub fn user_agent(mut self, agent: impl Into<String>) -> Self {
        self.config.user_agent = agent.into();
        self
    }

    /// Add `name: value` to every request (as `-H 'Name: value'`); an
    /// `Accept` replaces the crawler's `*/*`. [`build`](Self::build)
    /// refuses a header the crawler writes itself (`Host`, `Connection`,
    /// `Content-Length`, `Transfer-Encoding`, the other hop-by-hop ones,
    /// `User-Agent`: [`user_agent`](Self::user_agent), `Accept-Encoding`:
    /// [`compression`](Self::compression)), a name that is not a token
    /// and a value with a line break. Every host gets it, redirects
    /// included: credentials for one host go with
    /// [`auth`](Self::auth).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        if let Err(e) = self.config.headers.add(name, value) {
            self.refuse(Setting::Header, e.to_string());
        }
        self
    }

    /// HTTP Basic credentials sent to URLs of `host` only (a name, an IPv4
    /// address or a bracketed IPv6 one), on `port` only if given: never to
    /// another host, a redirect's target included. They are written in
    /// the WARC request records as sent.
    pub fn auth(mut self, host: &str, port: Option<u16>, user: &str, password: &str) -> Self {
        match Credential::basic(host, port, user, password) {
            Ok(c) => self.config.credentials.push(c),
            Err(e) => self.refuse(Setting::Auth, e.to_string()),
        }
        self
    }

    /// Send every URL through the proxy `url` (repeatable: hosts are
    /// spread over the proxies, each host keeping its own while it works;
    /// one that keeps failing is passed over for a while): `http://HOST:PORT`
    /// (an absolute-form request for `http`, a `CONNECT` tunnel for
    /// `https`), `socks5://` (names resolved by the crawler) or
    /// `socks5h://` (by the proxy), with `USER:PASSWORD@` if it wants
    /// them; no scheme is `http://`, no port is 1080 (as curl).
    /// [`build`](Self::build) refuses other schemes. The WARC records the
    /// target's exchange, never the proxy's credentials.
    pub fn proxy(mut self, url: &str) -> Self {
        match Proxy::parse(url) {
            Ok(p) => self.config.proxies.add(p),
            Err(e) => self.refuse(Setting::Proxy, e.to_string()),
        }
        self
    }

    /// Send `http` URLs (or, with `https`, `https` URLs) through the
    /// proxy `url`, as [`proxy`](Self::proxy) does every URL (the
    /// command's `http_proxy` and `https_proxy`).
    pub fn scheme_proxy(mut self, https: bool, url: &str) -> Self {
        match Proxy::parse(url) {
            Ok(p) => self.config.proxies.add_for(https, p),
            Err(e) => self.refuse(Setting::Proxy, e.to_string()),
        }
        self
    }

    /// Hosts that go direct although a proxy is set, by curl's rules for
    /// `no_proxy`: names (each matching the names under it too),
    /// addresses and address/prefix ranges, separated by commas or
    /// spaces; `*` for every host.
    pub fn no_proxy(mut self, list: &str) -> Self {
        match Bypass::parse(list) {
            Ok(b) => self.config.proxies.set_bypass(b),
            Err(e) => self.refuse(Setting::NoProxy, e.to_string()),
        }
        self
    }

    /// Keep cookies (off by default): what servers set is sent back to
    /// them by RFC 6265's rules (domain, path, `Secure`, expiry), never to
    /// another site, a `Domain` that is a public suffix refused; at most 50
    /// a domain, each at most 4 KiB, and as many as fit in
    /// [`cookie_memory`](Self::cookie_memory). One jar for the crawl.
    pub fn cookies(mut self, keep: bool) -> Self {
        self.config.cookies = keep.then(|| self.config.cookies.take().unwrap_or_default());
        self
    }

    /// Keep cookies, starting with those of the Netscape `cookies.txt`
    /// file at `path` (curl's `-b`, wget's `--load-cookies`; those already
    /// expired left out). [`build`](Self::build) refuses a file that cannot
    /// be read or a line that is not a cookie (naming it).
    pub fn load_cookies(mut self, path: impl AsRef<Path>) -> Self {
        let path = path.as_ref();
        let loaded = std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|text| Jar::from_netscape(&text).map_err(|e| e.to_string()));
        match loaded {
            Ok(jar) => self.config.cookies = Some(Arc::new(jar)),
            Err(e) => self.refuse(Setting::Cookies, format!("{}: {e}", path.display())),
        }
        self
    }

    /// Bytes the cookie jar may hold (default 16 MiB): each cookie is
    /// counted as its name, value, domain and path plus some 400 bytes of
    /// the jar's own; past it new cookies are refused (counted, and said
    /// when the crawl ends) until expired ones are swept.
    /// [`build`](Self::build) refuses a cookies file that does not fit.
    pub fn cookie_memory(mut self, bytes: usize) -> Self {
        self.config.cookie_memory = bytes;
        self
    }

    /// Keep cookies, and write them to `path` in Netscape `cookies.txt`
    /// form when the crawl ends (session cookies with expiry 0, as curl
    /// writes them).
    pub fn save_cookies(mut self, path: impl Into<PathBuf>) -> Self {
        self = self.cookies(true);
        self.config.save_cookies = Some(path.into());
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

    /// Download at most `bytes` of a body of this media type (within
    /// [`max_body`](Self::max_body)); the first rule that matches wins.
    pub fn max_size_per_type(mut self, pattern: &str, bytes: usize) -> Self {
        if let Err(e) = self.config.types.max_size(pattern, bytes) {
            self.refuse(Setting::MaxSizePerType, e.to_string());
        }
        self
    }

    /// Keep the first setting refused, for [`build`](Self::build).
    fn refuse(&mut self, setting: Setting, problem: String) {
        self.refused
            .get_or_insert_with(|| BuildError::new(setting, problem));
    }

    /// Overall deadline of one fetch (connect, request, whole answer).
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.config.timeout = limit;
        self
    }

    /// Limit of the TCP connect and, for `https`, the TLS handshake after
    /// it (together, as curl's `--connect-timeout`).
    pub fn connect_timeout(mut self, limit: Duration) -> Self {
        self.config.connect_timeout = limit;
        self
    }

    /// Limit of each single read.
    pub fn read_timeout(mut self, limit: Duration) -> Self {
        self.config.read_timeout = limit;
        self
    }

    /// Body bytes kept per response (after content decoding); the rest is
    /// not read and the page is marked truncated (`truncated_by: limit`).
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.config.max_body = bytes;
        self
    }

    /// Reuse connections servers keep open (default true).
    pub fn keep_alive(mut self, on: bool) -> Self {
        self.config.keep_alive = on;
        self
    }

    /// Offer compressed bodies (default true); bodies are decoded by their
    /// `Content-Encoding` either way.
    pub fn compression(mut self, on: bool) -> Self {
        self.config.compression = on;
        self
    }

    /// Trust the CA certificates of this PEM file for https, besides the
    /// compiled-in Mozilla roots.
    pub fn ca_cert_file(mut self, path: impl AsRef<Path>) -> Self {
        self.ca_files.push(path.as_ref().to_path_buf());
        self
    }

    /// Trust this CA certificate (DER) for https.
    pub fn ca_cert_der(mut self, der: impl Into<Vec<u8>>) -> Self {
        self.ca_ders.push(der.into());
        self
    }

    /// Fetch https pages even when their certificate fails verification;
    /// the failure is still each page's error.
    pub fn insecure(mut self, insecure: bool) -> Self {
        self.insecure = insecure;
        self
    }

    /// Connect to these addresses for `host:port` instead of asking DNS
    /// (as curl's `--resolve`; several are raced as Happy Eyeballs does).
    /// `host` is taken as URLs name it: any case, trailing dots or not;
    /// `*` pins every name on `port` that has no pin of its own.
    pub fn resolve(
        mut self,
        host: &str,
        port: u16,
        addrs: impl IntoIterator<Item = IpAddr>,
    ) -> Self {
        self.config.resolve.insert(
            (urls::canonical_host(host).into_owned(), port),
            addrs.into_iter().collect(),
        );
        self
    }

    /// Ask this DNS server (UDP, then TCP) instead of those of
    /// `/etc/resolv.conf`; several are tried in order.
    pub fn dns_server(mut self, server: SocketAddr) -> Self {
        self.config.dns_servers.push(server);
        self
    }

    /// Which IP versions to resolve and connect over (default both, IPv6
    /// first).
    pub fn ip_families(mut self, families: Families) -> Self {
        self.config.families = families;
        self
    }

    /// Write one JSON record per URL to this file (created or truncated).
    pub fn jsonl(mut self, path: impl AsRef<Path>) -> Self {
        self.config.output = Output::File(path.as_ref().to_path_buf());
        self
    }

    /// Write one JSON record per URL to standard output.
    pub fn jsonl_stdout(mut self) -> Self {
        self.config.output = Output::Stdout;
        self
    }

    /// Bytes of records the JSONL writer may have waiting before the crawl
    /// starts no new fetch until it catches up.
    pub fn jsonl_backlog(mut self, bytes: usize) -> Self {
        self.config.output_backlog = bytes;
        self
    }

    /// Archive every exchange as WARC 1.1 in this directory (a file per
    /// shard).
    pub fn warc(mut self, dir: impl AsRef<Path>) -> Self {
        self.config.warc_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Rotate WARC files before they grow past this many bytes.
    pub fn warc_max_size(mut self, bytes: u64) -> Self {
        self.config.warc_max_size = bytes;
        self
    }

    /// Archive a payload seen before as a `revisit` record referring to
    /// its first copy (profile identical-payload-digest), crawl-wide; with
    /// [`warc`](Self::warc).
    pub fn warc_dedup(mut self, dedup: bool) -> Self {
        self.config.warc_dedup = dedup;
        self
    }

    /// Archive each name's DNS answer as a `resource` record (`dns:` URI,
    /// as Heritrix does); with [`warc`](Self::warc).
    pub fn warc_dns(mut self, dns: bool) -> Self {
        self.config.warc_dns = dns;
        self
    }

    /// Write a CDXJ index of the WARC records to this file as they are
    /// written (cdxj-indexer's fields, unsorted); with [`warc`](Self::warc).
    pub fn cdxj(mut self, path: impl AsRef<Path>) -> Self {
        self.config.cdxj = Some(path.as_ref().to_path_buf());
        self
    }

    /// Package the WARC files, their index (sorted) and the list of HTML
    /// pages as a WACZ 1.1.1 file here when the crawl is over (written to
    /// `FILE.tmp`, renamed when whole); with [`warc`](Self::warc). The
    /// crawl writes the index for it even without [`cdxj`](Self::cdxj).
    pub fn wacz(mut self, path: impl AsRef<Path>) -> Self {
        self.config.wacz = Some(path.as_ref().to_path_buf());
        self
    }

    /// Keep every record and return them with the report (memory grows
    /// with the crawl: for tests and small crawls).
    pub fn keep_records(mut self, keep: bool) -> Self {
        self.config.keep_records = keep;
        self
    }

    /// Print live progress on stderr: redrawn in place on a terminal, else
    /// a line every `interval` (off by default).
    pub fn progress(mut self, interval: Option<Duration>) -> Self {
        self.config.progress = interval;
        self
    }

    /// Stop the crawl when `handle` is interrupted: made before the
    /// crawler, so a page handler or a follow rule can hold a clone and
    /// end the crawl from inside it (the same as
    /// [`Crawler::interrupt_handle`] from outside). Fetches running then
    /// get their grace period; what is left is recorded as interrupted.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use ringcrawl::{Crawler, Interrupt};
    /// let stop = Interrupt::new();
    /// let handle = stop.clone();
    /// let report = Crawler::builder()
    ///     .root("https://example.com/")
    ///     .interrupt(stop)
    ///     .on_page(move |page| {
    ///         if page.body().windows(6).any(|w| w == b"needle") {
    ///             handle.interrupt();
    ///         }
    ///     })
    ///     .build()?
    ///     .run()?;
    /// assert!(report.interrupted() || report.errors() <= report.urls());
    /// # Ok(()) }
    /// ```
    pub fn interrupt(mut self, handle: Interrupt) -> Self {
        self.interrupt = handle;
        self
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
        config.scope = Scope::new(&config.roots, mode, exclude)
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
