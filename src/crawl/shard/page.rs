//! The record path of one page: fetch it (`exchange.rs`), archive the
//! exchange, fill the record, route the page's links or its redirect
//! target to their owners, emit the record, count the URL out.
//!
//! Not the scheduling of pages (`dispatch.rs`), robots.txt (`robots.rs`),
//! the hand-over to the caller's hooks (`deliver.rs`), the undoing of
//! content codings (`decode.rs`) nor what a failed record
//! says (`failure.rs`).

use std::borrow::Cow;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use ringcrawl_links::directives::{self, Directives, MetaRobots};
use ringcrawl_links::urls;
use ringcrawl_links::{self as links, Extract, LinkKey};
use url::Url;

use crate::crawl::mesh::PageEnd;
use crate::crawl::page::Page;
use crate::job::hops::Hop;
use crate::job::{ErrorKind, Job};
use crate::keys::shard_for;
use crate::net::dns::Addresses;
use crate::net::fetch::Response;
use crate::output::record::{millis, Record, CUT_AT_LIMIT, CUT_IN_TRANSFER};
use crate::web::scope::Scope;
use ringcrawl_http1::content::DecodeError;
use ringcrawl_http1::{self as http, content};
use ringcrawl_robots::agent_token;
use ringcrawl_warc::timestamp::rfc3339_millis;

use super::decode::{decode_body, decode_kind};
use super::exchange::Tried;
use super::failure::{fail, host_failed};
use super::recrawl::Revalidation;
use super::{Routed, Shard};

impl Shard {
    /// Fetch one URL, record it, route its links or its redirect target,
    /// then count it out (after its children were counted in): `Done`,
    /// failed if the host failed to answer usefully (network error, 5xx,
    /// 429). The routed links wait in the outbox for the caller's flush
    /// (while they do, the outstanding count holds them, so the crawl
    /// cannot end without them). A 429 or 503 with a `Retry-After` within
    /// `--max-retry-after`, with tries left, is not recorded: `Later`, the
    /// job to queue again (still counted in).
    pub(super) async fn process(&self, job: Job, addrs: Option<Addresses>) -> PageEnd {
        let started = Instant::now();
        self.fetching.in_flight.borrow_mut().insert(job.url.clone());
        self.counters(|c| {
            c.in_flight.fetch_add(1, Ordering::Relaxed);
        });
        let mut record = self.record_for(&job);
        // Refused before any packet: the host is not to blame.
        let mut refused = false;
        let token = self.page_token();
        match Url::parse(&job.url) {
            Err(e) => {
                refused = true;
                fail(&mut record, ErrorKind::BadUrl, &e.to_string());
            }
            Ok(url) => {
                let whole = job.hops.sitemap_level() > 0;
                // A recrawl asks for a page it has a capture of only if it
                // changed: rare and large, so a future of its own on the
                // heap, and every other page's future stays as small as it
                // was without recrawls (it is moved whole into its task).
                let mut revalidation = Revalidation::Unasked;
                let fetched = match self.earlier_capture(&job.url) {
                    None => self.fetch_with_retries(&url, addrs, whole, None).await,
                    Some(capture) => {
                        let revalidated = self.revalidate(&url, capture, addrs, whole);
                        let (tried, said) = Box::pin(revalidated).await;
                        revalidation = said;
                        tried
                    }
                };
                let (result, tries) = match fetched {
                    Tried::Done(result, tries) => (result, tries),
                    Tried::Held | Tried::Late => {
                        // Not started (--per-ip had the address full, or
                        // --max-time was up before the name was known): no
                        // record, and back to its host's queue, where the
                        // page is still queued (counted left at the end, a
                        // resume fetches it, a cluster's next owner too);
                        // its page of --max-pages is not spent, and its
                        // host neither fetched it nor failed.
                        self.fetching.in_flight.borrow_mut().remove(&job.url);
                        self.counters(|c| {
                            c.in_flight.fetch_sub(1, Ordering::Relaxed);
                        });
                        self.budget.give_back_page();
                        return PageEnd::Held { job };
                    }
                };
                if let Some(wait) = result
                    .as_ref()
                    .ok()
                    .and_then(|r| self.come_back_later(&job, tries, &r.head))
                {
                    log::debug!("{}: {} Retry-After {wait:?}", job.url, tries);
                    self.fetching.in_flight.borrow_mut().remove(&job.url);
                    self.counters(|c| {
                        c.in_flight.fetch_sub(1, Ordering::Relaxed);
                    });
                    let retries = u32::from(job.retries).saturating_add(tries);
                    let retries = u16::try_from(retries).unwrap_or(u16::MAX);
                    return PageEnd::Later {
                        job: Job { retries, ..job },
                        wait,
                    };
                }
                record.tries = u32::from(job.retries).saturating_add(tries);
                match result {
                    Err(e) => {
                        refused = e.is_before_network();
                        fail(&mut record, e.kind(), &e.to_string());
                        revalidation.mark(&mut record);
                    }
                    Ok(mut response) => {
                        record.ip = response.peer.map(|peer| peer.ip().to_string());
                        let not_modified = match &revalidation {
                            Revalidation::NotModified(nm) => Some(&**nm),
                            _ => None,
                        };
                        let encoded = self.encode_exchange(&job.url, &mut response, not_modified);
                        // The digest and time of the WARC records: none
                        // without --warc (a SHA-1 of every body is not free).
                        if let Some(e) = &encoded {
                            record.payload_digest = Some(e.payload_digest().to_string());
                            record.timestamp = rfc3339_millis(e.date);
                        }
                        record.elapsed_ms = millis(started.elapsed());
                        let asked = self
                            .handle_response(&job, &url, response, &mut record, token)
                            .await;
                        revalidation.mark(&mut record);
                        // Counted now, not when the record is emitted (after
                        // its children are counted in, which may be much
                        // later): other fetches must see the bytes at once.
                        self.budget.add_bytes(record.size);
                        self.expect_tallies(token, asked);
                        // In a cluster crawl, archived only while the
                        // partition is this node's (its record is written
                        // only then too): a page whose lease lapsed during
                        // the fetch leaves no archived copy for the next
                        // owner to archive again (but a lapse between
                        // here and the record, a few milliseconds).
                        let keep = self.may_record(&job.url);
                        if let Some(stored) = match encoded {
                            Some(e) if keep => self.store(e, true).await,
                            _ => None,
                        } {
                            record.warc_file = Some(stored.file.to_string());
                            record.warc_offset = Some(stored.offset);
                        }
                    }
                }
            }
        }
        record.elapsed_ms = millis(started.elapsed());
        self.fetching.in_flight.borrow_mut().remove(&record.url);
        self.counters(|c| {
            c.in_flight.fetch_sub(1, Ordering::Relaxed);
        });
        let failed = !refused && host_failed(&record);
        // The exchange's own time (first attempt to the body's end).
        let took = Duration::try_from_secs_f64(record.elapsed_ms / 1000.0).unwrap_or_default();
        self.finish_page(record, token);
        PageEnd::Done { failed, took }
    }

    /// How long the server of `job`'s answer `head` (after `tries` tries
    /// this time) asks to wait before it is asked again, if the crawl
    /// does: a 429 or 503 with a `Retry-After` of at most
    /// `--max-retry-after`, and tries left within `--max-tries`.
    fn come_back_later(
        &self,
        job: &Job,
        tries: u32,
        head: &http::ResponseHead,
    ) -> Option<Duration> {
        if !matches!(head.status, 429 | 503) {
            return None;
        }
        let wait = http::retry_after(head.retry_after.as_deref()?, SystemTime::now())?;
        let attempts = u32::from(job.retries).saturating_add(tries);
        (attempts < self.config.max_tries && wait <= self.config.max_retry_after).then_some(wait)
    }

    /// Fill the record from a response and route what it points to. The
    /// body's codings are undone first (a step at a time, other tasks
    /// running between steps), if anything reads it; after that nothing
    /// here waits.
    pub(super) async fn handle_response(
        &self,
        job: &Job,
        url: &Url,
        response: Response,
        record: &mut Record,
        token: u64,
    ) -> usize {
        let head = &response.head;
        record.status = Some(head.status);
        record.etag.clone_from(&head.etag);
        record.last_modified.clone_from(&head.last_modified);
        record.connect_ms = Some(millis(response.connect));
        record.first_byte_ms = Some(millis(response.first_byte));
        if let Some(tls) = response.tls {
            record.tls_version = Some(Cow::Borrowed(tls.version));
            record.tls_cipher = Some(Cow::Borrowed(tls.cipher));
        }
        let charset = head.content_type.as_deref().and_then(|ct| {
            let (media, charset) = http::media_type(ct);
            record.content_type = Some(media);
            charset
        });
        if response.body_error.is_some() {
            record.cut(CUT_IN_TRANSFER);
        } else if response.capped {
            record.cut(CUT_AT_LIMIT);
        }
        if let Some(e) = &response.body_error {
            fail(record, e.kind(), &e.to_string());
        }
        let reading = self.reading(job, head);
        let body = self.payload(&response, reading, record).await;
        // Fetched over a certificate --insecure let through: a warning,
        // not an error (the page was fetched as asked).
        if let Some(e) = &response.tls_warning {
            record.warn(
                UNTRUSTED_CERTIFICATE,
                format!("{e} (fetched anyway: --insecure)"),
            );
        }
        match reading {
            Reading::Redirect => {
                record.encoding = charset;
                let asked = self.follow_redirect(job, url, head.location.as_deref(), record, token);
                if self.hooks.wants_pages() {
                    self.deliver(record, &response, &body, &[]);
                }
                asked
            }
            Reading::Sitemap => {
                record.encoding = charset;
                self.read_sitemap(job, url, &response, &body, record, token)
            }
            Reading::Html => {
                let extract = if self.config.page_requisites {
                    Extract::Requisites
                } else {
                    Extract::Links
                };
                let skip_nofollow = self.config.skip_nofollow;
                // A hook gets every link resolved: no link is taken as known.
                let page = if extract == Extract::Links && !self.hooks.wants_pages() {
                    let known = self.newness.known_links.borrow();
                    links::page_links_known(&body, url, charset.as_deref(), skip_nofollow, &known)
                } else {
                    links::page_links_with(&body, url, charset.as_deref(), extract, skip_nofollow)
                };
                record.encoding = Some(page.charset.encoding.name().to_ascii_lowercase());
                record.encoding_source = Some(Cow::Borrowed(page.charset.source.name()));
                let said = self.robots_directives(head, &page.robots);
                record.robots = said.words();
                let mut found = if self.hooks.wants_pages() {
                    let links = self.deliver(record, &response, &body, &page.links);
                    Found::resolved(links)
                } else {
                    Found::in_scope(page.links, page.keys, page.known, &self.scope())
                };
                // `nofollow`: the page's links are not followed (its
                // requisites are still fetched, as wget does).
                if said.nofollow && self.config.obey_meta_robots {
                    found = Found::resolved(Vec::new());
                }
                self.route_found(job, found, page.embeds, record, token)
            }
            Reading::Stylesheet => {
                // A stylesheet's `url()`s and `@import`s are requisites too.
                record.encoding = charset;
                let embeds = links::stylesheet_requisites(&body, url);
                if self.hooks.wants_pages() {
                    self.deliver(record, &response, &body, &[]);
                }
                self.route_found(job, Found::resolved(Vec::new()), embeds, record, token)
            }
            Reading::Other => {
                record.encoding = charset;
                if self.hooks.wants_pages() {
                    self.deliver(record, &response, &body, &[]);
                }
                0
            }
        }
    }

    /// What a page's `<meta>` robots tags and `X-Robots-Tag` headers say
    /// to this crawler (by its User-Agent's product token).
    fn robots_directives(&self, head: &http::ResponseHead, meta: &MetaRobots) -> Directives {
        let agent = agent_token(&self.config.user_agent);
        head.robots_tags
            .iter()
            .fold(meta.for_agent(agent), |said, tag| {
                said.or(directives::header(tag, agent))
            })
    }

    /// What the crawl reads the body of `job`'s answer `head` as.
    fn reading(&self, job: &Job, head: &http::ResponseHead) -> Reading {
        let ok = (200..300).contains(&head.status);
        let content_type = head.content_type.as_deref();
        if matches!(head.status, 301 | 302 | 303 | 307 | 308) {
            Reading::Redirect
        } else if ok && job.hops.sitemap_level() > 0 {
            Reading::Sitemap
        } else if ok && http::is_html(content_type) && !job.hops.is_embed() {
            // A requisite that is HTML (an `embed`, an `object`) is a leaf.
            Reading::Html
        } else if ok && self.config.page_requisites && http::is_css(content_type) {
            Reading::Stylesheet
        } else {
            Reading::Other
        }
    }

    /// Queue what a page or stylesheet points to: its requisites (`embeds`,
    /// from any host the exclude regex lets through) at its own depth with
    /// an `E` hop, first, so a URL that is both keeps its embed hop; then
    /// its links (already in scope) one level deeper with an `L` hop. The
    /// number of other shards asked.
    fn route_found(
        &self,
        job: &Job,
        links: Found,
        embeds: Vec<Url>,
        record: &mut Record,
        token: u64,
    ) -> usize {
        let scope = self.scope();
        let embeds: Vec<Url> = embeds
            .into_iter()
            .filter(|e| scope.allows_embed(e))
            .collect();
        record.num_urls = links.links.len() + links.known + embeds.len();
        // Learned as they are routed (no await between): a link met again
        // could not be new to the crawl.
        let mut known = self.newness.known_links.borrow_mut();
        for (url, key) in links.links.iter().zip(&links.keys) {
            if let Some(key) = key {
                known.learn(*key, url);
            }
        }
        drop(known);
        let found = embeds
            .into_iter()
            .map(|url| (url, Hop::Embed, job.depth))
            .chain(
                (links.links.into_iter()).map(|url| (url, Hop::Link, job.depth.saturating_add(1))),
            );
        self.route_jobs(job, found, record, token)
    }

    /// Queue each `(url, hop, depth)` found by `job`'s fetch (its page
    /// token `token`), counting the new ones on its record. The number of
    /// other shards asked.
    pub(super) fn route_jobs(
        &self,
        job: &Job,
        found: impl Iterator<Item = (Url, Hop, u32)>,
        record: &mut Record,
        token: u64,
    ) -> usize {
        let now = Instant::now();
        let mut asked = Asked::default();
        let via: Arc<str> = Arc::from(job.url.as_str());
        for (url, hop, depth) in found {
            let next = Job {
                retries: 0,
                url: url.into(),
                redirects_left: u16::try_from(self.config.max_redirect).unwrap_or(u16::MAX),
                depth,
                hops: job.hops.then(hop),
                via: Some(via.clone()),
            };
            match self.route(next, now, token) {
                Routed::New => record.num_new_urls += 1,
                Routed::Known => {}
                Routed::Asked(peer) => asked.add(peer),
            }
        }
        asked.count()
    }

    /// The response's body with its content codings undone (at most
    /// `--max-body` bytes), and its sizes on the record. Only a body that
    /// is read (a page, a stylesheet, a sitemap, or any body a page hook
    /// gets) is decoded; any other keeps its size as sent. A body cut or
    /// broken in transit ends its decoding early without a second error;
    /// a body whose coded stream ends before its framing does is cut in
    /// transfer, with a `truncated_content_encoding` warning.
    /// A body under a coding this crawler does not know is read as sent,
    /// with an `unsupported_content_encoding` warning on its record.
    async fn payload<'r>(
        &self,
        response: &'r Response,
        reading: Reading,
        record: &mut Record,
    ) -> Cow<'r, [u8]> {
        let codings = &response.head.content_encoding;
        record.encoded_size = response.body.len() as u64;
        record.size = record.encoded_size;
        if codings.is_empty() {
            return Cow::Borrowed(&response.body);
        }
        record.content_encoding = Some(content::names(codings));
        let read = self.hooks.wants_pages()
            || matches!(
                reading,
                Reading::Html | Reading::Stylesheet | Reading::Sitemap
            );
        if !read && codings.len() <= content::MAX_CODINGS {
            return Cow::Borrowed(&response.body);
        }
        let decoded = decode_body(codings, &response.body, self.config.max_body).await;
        record.size = decoded.body.len() as u64;
        if decoded.capped {
            record.cut(CUT_AT_LIMIT);
        }
        match &decoded.error {
            // A fault in a body cut in transit is that cut, seen again.
            Some(DecodeError::Corrupt { .. } | DecodeError::Truncated { .. })
                if record.truncated => {}
            // The body as framed is whole, but its stream ends early: cut
            // in transfer all the same (a server or proxy that stopped
            // sending), what decoded read as any cut body is.
            Some(e @ DecodeError::Truncated { .. }) => {
                record.cut(CUT_IN_TRANSFER);
                record.warn(decode_kind(e).name(), e.to_string());
            }
            // An unknown coding: the body as sent is read all the same, a
            // page fetched (as with --insecure), not an error.
            Some(e @ DecodeError::Unsupported(_)) => {
                record.warn(decode_kind(e).name(), e.to_string());
            }
            Some(e) => fail(record, decode_kind(e), &e.to_string()),
            None => {}
        }
        Cow::Owned(decoded.body)
    }

    /// The chapter's redirect rule: not followed inline; the target is
    /// queued with one redirect fewer, so chains to one page coalesce.
    pub(super) fn follow_redirect(
        &self,
        job: &Job,
        url: &Url,
        location: Option<&str>,
        record: &mut Record,
        token: u64,
    ) -> usize {
        let Some(location) = location else {
            fail(
                record,
                ErrorKind::RedirectNoLocation,
                "redirect without a Location header",
            );
            return 0;
        };
        let Some(target) = urls::join_redirect(url, location) else {
            fail(
                record,
                ErrorKind::RedirectBadLocation,
                &format!("unusable redirect Location {location:?}"),
            );
            return 0;
        };
        record.next_url = Some(target.as_str().to_string());
        let scope = self.scope();
        // A root's, a seed's or a sitemap's redirect is a start too: an
        // http root that moves to https is still fetched under --include.
        let allowed = if job.hops.is_embed() {
            scope.allows_embed(&target)
        } else if job.hops.is_start() || job.hops.sitemap_level() > 0 {
            scope.allows_start(&target)
        } else {
            scope.allows(&target)
        };
        if !allowed {
            return 0;
        }
        let next = Job {
            retries: 0,
            url: target.as_str().to_string(),
            redirects_left: job.redirects_left.saturating_sub(1),
            depth: job.depth,
            hops: job.hops.then(Hop::Redirect),
            via: Some(Arc::from(job.url.as_str())),
        };
        if self.already_known(&next.url, urls::host(&target)) {
            return 0;
        }
        if job.redirects_left == 0 {
            fail(
                record,
                ErrorKind::RedirectLimit,
                &format!("redirect limit reached at {}", next.url),
            );
            return 0;
        }
        match self.route(next, Instant::now(), token) {
            Routed::New => {
                record.num_new_urls = 1;
                0
            }
            Routed::Known => 0,
            Routed::Asked(_) => 1,
        }
    }

    /// Whether this shard knows `url` was already queued (seen locally or
    /// routed to its owner before; in a cluster crawl, sent to its stream
    /// lately).
    pub(super) fn already_known(&self, url: &str, host: &str) -> bool {
        if self.cluster.is_none() && shard_for(host, self.shards) == self.id {
            let seen = self.newness.seen.borrow();
            seen.contains_in_ram(seen.fingerprint(url))
        } else {
            self.newness.routed.borrow().contains(url)
        }
    }

    /// A blank record of `job`: its URL, depth, hop path and referrer.
    pub(super) fn record_for(&self, job: &Job) -> Record {
        let mut record = Record::new(job.url.clone(), self.id);
        record.depth = job.depth;
        record.hops = job.hops.to_string();
        record.via = job.via.as_deref().map(str::to_string);
        record
    }

    /// Count, keep and write one record.
    pub(super) fn emit(&self, record: Record) {
        if !record.delivered && self.hooks.wants_pages() {
            // No answer (an error, a refusal, an interrupt): the page has
            // its record only.
            self.hand_over(&Page {
                record: &record,
                head: &[],
                body: &[],
                links: &[],
            });
        }
        if log::log_enabled!(log::Level::Info) {
            log::info!(
                "{}",
                record.verbose_line(log::log_enabled!(log::Level::Debug))
            );
        }
        self.recording.stats.borrow_mut().add(&record);
        let queued = self.frontier.borrow().queued() as u64;
        self.counters(|c| {
            c.pages.fetch_add(1, Ordering::Relaxed);
            c.errors
                .fetch_add(u64::from(record.error.is_some()), Ordering::Relaxed);
            c.bytes.fetch_add(record.size, Ordering::Relaxed);
            c.queued.store(queued, Ordering::Relaxed);
        });
        self.write_record(record);
    }
}

/// The warning of a page fetched over a certificate that failed
/// verification, accepted because of `--insecure`.
pub(crate) const UNTRUSTED_CERTIFICATE: &str = "tls_certificate_untrusted";

/// The peers a page's links went to, each once (a page's links go to a
/// handful of shards; a linear search is cheapest).
#[derive(Default)]
pub(super) struct Asked(Vec<usize>);

impl Asked {
    pub(super) fn add(&mut self, peer: usize) {
        if !self.0.contains(&peer) {
            self.0.push(peer);
        }
    }

    pub(super) fn count(&self) -> usize {
        self.0.len()
    }
}

/// What the crawl reads a response's body as: what it does with the
/// answer, and whether the body's codings must be undone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// A 3xx with a Location to follow.
    Redirect,
    /// A 2xx reached through sitemap hops.
    Sitemap,
    /// A 2xx HTML page (not a requisite): its links.
    Html,
    /// A 2xx stylesheet, with `--page-requisites`: its `url()`s.
    Stylesheet,
    /// Anything else: recorded only.
    Other,
}

/// A page's links to follow: those resolved (in scope), each with its key
/// in the shard's table of known links if it has one, and how many more
/// the table knew (in scope when they were learned, and routed then).
struct Found {
    links: Vec<Url>,
    keys: Vec<Option<LinkKey>>,
    known: usize,
}

impl Found {
    /// Links resolved, none known.
    fn resolved(links: Vec<Url>) -> Found {
        Found {
            links,
            keys: Vec::new(),
            known: 0,
        }
    }

    /// The links of `scope` among `links` (with their `keys`, if any), and
    /// the `known` ones.
    fn in_scope(links: Vec<Url>, keys: Vec<Option<LinkKey>>, known: usize, scope: &Scope) -> Found {
        let keys = keys.into_iter().chain(std::iter::repeat(None));
        let (links, keys) = links
            .into_iter()
            .zip(keys)
            .filter(|(url, _)| scope.allows(url))
            .unzip();
        Found { links, keys, known }
    }
}
