//! A page's exchange: its name resolved in time (or its owner's addresses
//! used), fetched with retries of network errors, through the proxy its
//! host goes through (the next one when a proxy fails, no try spent),
//! within `--per-ip`; in a recrawl asked for only if it changed
//! (`revalidate`), a 304 answered by the earlier capture.
//!
//! Not what is done with the answer (`page.rs`), reading a capture back
//! (`recrawl.rs`), nor the exchange's bytes (`crate::net::fetch`).

use std::time::{Duration, Instant};

use ringcrawl_links::urls;
use url::Url;

use crate::net::dns::{Addresses, DnsError};
use crate::net::fetch::{self, FetchError, Response, Route};
use crate::net::proxy::tunnel::TunnelError;
use crate::output::captures::Capture;
use ringcrawl_http1 as http;

use super::recrawl::{self, Revalidation};
use super::Shard;

/// How [`Shard::fetch_with_retries`] ended.
#[allow(
    clippy::large_enum_variant,
    reason = "the Option it replaced was as large; matched at once, once a fetch: a box would allocate each time"
)]
pub(super) enum Tried {
    /// Fetched, or failed, after this many tries.
    Done(Result<Response, FetchError>, u32),
    /// Not started: `--max-time` was up before the name was known.
    Late,
    /// Not started: the server's address had `--per-ip` fetches running.
    Held,
}

/// Where a fetch of `url` goes: its host and port; None for a scheme
/// other than http and https.
pub(super) fn fetch_target(url: &Url) -> Option<(&str, u16)> {
    matches!(url.scheme(), "http" | "https")
        .then(|| (urls::host(url), url.port_or_known_default().unwrap_or(80)))
}

impl Shard {
    /// Fetch `url` asking with `capture`'s validators, and what that came
    /// to: on `304 Not Modified` the capture read back stands for the
    /// answer; one that cannot be read back is asked for again in full.
    pub(super) async fn revalidate(
        &self,
        url: &Url,
        capture: &Capture,
        addrs: Option<Addresses>,
        whole: bool,
    ) -> (Tried, Revalidation) {
        let validators = recrawl::validators(capture);
        let again = addrs.clone();
        let tried = self
            .fetch_with_retries(url, addrs, whole, Some(&validators))
            .await;
        match tried {
            Tried::Done(Ok(answer), tries) if answer.head.status == 304 => {
                match self.not_modified(url, capture, answer).await {
                    Ok((response, nm)) => (
                        Tried::Done(Ok(response), tries),
                        Revalidation::NotModified(Box::new(nm)),
                    ),
                    Err(why) => {
                        log::info!("{url}: not modified, but {why}: fetched again in full");
                        let tried = match self.fetch_with_retries(url, again, whole, None).await {
                            Tried::Done(r, t) => Tried::Done(r, tries.saturating_add(t)),
                            not_started => not_started,
                        };
                        (tried, Revalidation::Refetched)
                    }
                }
            }
            Tried::Done(Ok(answer), tries) if (200..300).contains(&answer.head.status) => {
                (Tried::Done(Ok(answer), tries), Revalidation::Modified)
            }
            tried => (tried, Revalidation::Unasked),
        }
    }

    /// Resolve (unless the host's owner lent the page with its `known`
    /// addresses), then fetch, retrying network errors up to `max_tries`.
    /// [`Tried::Late`]: `--max-time` was up before the name was known, and
    /// the fetch did not start. With `--per-ip`, the tries hold a place
    /// among the fetches to the address tried first (the name's first
    /// answer, once resolved here: not through a proxy that resolves names
    /// itself); [`Tried::Held`] if it has none free, and nothing started.
    /// `whole`: the body is read whatever its media type (robots.txt, a
    /// sitemap), not by the `--accept-type` rules. With `validators`, asked
    /// for only if it changed.
    pub(super) async fn fetch_with_retries(
        &self,
        url: &Url,
        known: Option<Addresses>,
        whole: bool,
        validators: Option<&http::Validators>,
    ) -> Tried {
        let Some((host, port)) = fetch_target(url) else {
            return Tried::Done(Err(FetchError::Scheme(url.scheme().to_string())), 1);
        };
        let fetching = &self.fetching;
        let candidates = fetching.proxies.candidates(url.scheme(), host);
        // Without proxies (the common case) no clock read, no borrow.
        let pick = || {
            (!candidates.is_empty())
                .then(|| {
                    fetching
                        .rotation
                        .borrow()
                        .pick(candidates, host, Instant::now())
                })
                .flatten()
        };
        let mut proxy = pick();
        let lent = known.is_some();
        // Through a proxy that resolves names itself, the crawler never
        // looks the target up.
        let target_named = proxy.as_ref().is_none_or(|p| p.resolves_locally());
        let resolved = match known {
            _ if !target_named => None,
            Some(addrs) => Some(Ok(addrs)),
            None => self.resolve_in_time(host, port).await,
        };
        let mut addrs = match resolved {
            None if target_named => return Tried::Late,
            None => None,
            Some(Ok(addrs)) => match self.screen(host, addrs) {
                Ok(addrs) => Some(addrs),
                Err(e) => {
                    self.archive_lookups().await;
                    return Tried::Done(Err(e), 1);
                }
            },
            Some(Err(e)) => {
                self.archive_lookups().await;
                return Tried::Done(Err(e.into()), 1);
            }
        };
        // Given back when this returns, or when its task is dropped at an
        // await (an interrupt): on every way out.
        let _place = match (&fetching.per_ip, addrs.as_ref().and_then(Addresses::first)) {
            (Some(per_ip), Some(first)) => match per_ip.try_acquire(first.ip()) {
                Some(place) => Some(place),
                None => return Tried::Held,
            },
            _ => None,
        };
        let mut tries = 0;
        // Proxies passed over for another after failing: no try spent.
        let mut switches = 0;
        loop {
            tries += 1;
            // A `socks5://` proxy picked after one that resolves names
            // itself: the name is resolved here now.
            if proxy.as_ref().is_some_and(|p| p.resolves_locally()) && addrs.is_none() {
                match self.resolve_in_time(host, port).await {
                    None => return Tried::Late,
                    Some(Ok(fresh)) => match self.screen(host, fresh) {
                        Ok(fresh) => addrs = Some(fresh),
                        Err(e) => return Tried::Done(Err(e), tries),
                    },
                    Some(Err(e)) => return Tried::Done(Err(e.into()), tries),
                }
            }
            let limits = if whole {
                &fetching.whole
            } else {
                &fetching.limits
            };
            let result = match &proxy {
                None => match &addrs {
                    Some(addrs) => {
                        let route = Route::Direct(addrs);
                        let (pool, tls) = (&fetching.connections, &fetching.tls);
                        fetch::fetch(route, url, validators, limits, pool, tls).await
                    }
                    // Resolved above whenever there is no proxy.
                    None => Err(FetchError::Scheme(url.scheme().to_string())),
                },
                Some(p) => match self.resolve_in_time(p.host(), p.port()).await {
                    None => return Tried::Late,
                    Some(Ok(at)) => {
                        // A `socks5://` proxy is given the address resolved
                        // here; the others resolve the name themselves.
                        let target = addrs
                            .as_ref()
                            .and_then(Addresses::first)
                            .filter(|_| p.resolves_locally());
                        let route = Route::Proxy {
                            proxy: p,
                            at: &at,
                            target,
                        };
                        let (pool, tls) = (&fetching.connections, &fetching.tls);
                        fetch::fetch(route, url, validators, limits, pool, tls).await
                    }
                    Some(Err(e)) => Err(FetchError::proxy(
                        p,
                        TunnelError::Unreachable(e.to_string()),
                    )),
                },
            };
            self.archive_lookups().await;
            match (&proxy, &result) {
                (Some(p), Err(e)) if e.is_proxys() => {
                    fetching.rotation.borrow_mut().failed(p, Instant::now());
                }
                (Some(p), _) => fetching.rotation.borrow_mut().worked(p),
                (None, Ok(response)) => {
                    let first = addrs.as_ref().and_then(Addresses::first);
                    if let Some(peer) = response.peer.filter(|&peer| first != Some(peer)) {
                        fetching.resolver.prefer(host, peer.ip());
                    }
                }
                (None, Err(_)) => {}
            }
            // The proxy failed, not the page: the next usable proxy at
            // once, the try not counted, each candidate once at most.
            if let (Some(p), Err(e)) = (&proxy, &result) {
                if e.is_proxys() && switches + 1 < candidates.len() {
                    let other =
                        fetching
                            .rotation
                            .borrow()
                            .other_than(candidates, p, Instant::now());
                    if let Some(other) = other {
                        log::debug!("{url}: {e}; through {other} instead");
                        switches += 1;
                        tries -= 1;
                        proxy = Some(other);
                        continue;
                    }
                }
            }
            match result {
                Err(e) if e.is_retryable() && tries < self.config.max_tries => {
                    log::debug!("try {tries} for {url} failed: {e}");
                    glommio::timer::sleep(Duration::from_millis(10 << tries.min(6))).await;
                    // A proxy passed over now gives way to the next one.
                    if proxy.is_some() {
                        proxy = pick().or(proxy);
                    }
                    // Resolved again (from the cache, as a rule): an A that
                    // came after the lookup answered with AAAA alone is
                    // there now, for a machine IPv6 does not work on.
                    // A lent page keeps its owner's answer.
                    if !lent && addrs.is_some() {
                        if let Some(Ok(fresh)) = self.resolve_in_time(host, port).await {
                            if let Ok(fresh) = self.screen(host, fresh) {
                                addrs = Some(fresh);
                            }
                        }
                    }
                    self.archive_lookups().await;
                }
                result => return Tried::Done(result, tries),
            }
        }
    }

    /// `addrs` of `host` less the link-local and metadata addresses no
    /// root names ([`Scope::may_connect`]): a name pointed at the cloud's
    /// metadata endpoint is refused as a link to it is. An error when
    /// none is left, before any connection.
    ///
    /// [`Scope::may_connect`]: crate::web::scope::Scope::may_connect
    fn screen(&self, host: &str, addrs: Addresses) -> Result<Addresses, FetchError> {
        let scope = self.scope();
        if addrs.iter().all(|a| scope.may_connect(host, a.ip())) {
            return Ok(addrs);
        }
        let (kept, refused): (Vec<_>, Vec<_>) =
            addrs.iter().partition(|a| scope.may_connect(host, a.ip()));
        log::debug!("{host}: not connecting to {refused:?}, which no root names");
        Addresses::from_slice(&kept).ok_or_else(|| FetchError::Reserved(addrs.to_string()))
    }

    /// The addresses of `host`, or None if `--max-time` is up before its
    /// lookup answers. A fetch still waiting for its name then has not
    /// started, and does not: a slow or silent nameserver (seconds a
    /// question) would otherwise hold the crawl past the time, which only
    /// the running exchanges, bounded by their own time-outs, may outlast.
    pub(super) async fn resolve_in_time(
        &self,
        host: &str,
        port: u16,
    ) -> Option<Result<Addresses, DnsError>> {
        let lookup = self.fetching.resolver.resolve(host, port);
        let Some(deadline) = self.budget.deadline() else {
            return Some(lookup.await);
        };
        // Dropping the wait is safe: the lookup runs in a task of its own
        // and caches its answer for whoever asks next.
        futures_lite::future::or(async { Some(lookup.await) }, async {
            glommio::timer::sleep(deadline.saturating_duration_since(Instant::now())).await;
            None
        })
        .await
    }
}
