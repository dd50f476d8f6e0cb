//! The crawl's cookie jar ([`Jar`], off unless asked: `--cookies`,
//! `--save-cookies`): what servers set with `Set-Cookie`, sent back in
//! `Cookie` by RFC 6265's rules of domain, path, `Secure` and expiry
//! (the `cookie_store` crate, which reqwest uses), and read from and
//! written to the Netscape `cookies.txt` format that curl and wget share.
//!
//! On top of the RFC: a `Domain` that is a public suffix (`co.uk`, `github.io`;
//! the `psl` list that scope uses) is refused unless it is the host itself, so
//! no site sets cookies for its neighbours; a cookie over [`MAX_COOKIE_BYTES`]
//! is refused; a domain keeps at most [`MAX_PER_DOMAIN`] cookies, and the jar
//! what fits in its memory (`--cookie-memory`,
//! [`defaults::COOKIE_MEMORY`](crate::defaults::COOKIE_MEMORY); each cookie
//! counted as its name, value, domain and path plus [`COOKIE_OVERHEAD`], each
//! domain with cookies as [`DOMAIN_OVERHEAD`]), so a "cookie monster" page
//! setting thousands is cut, and counted. Expired cookies are dropped when the
//! jar fills. One jar for the whole crawl, behind a mutex: a domain's cookies
//! serve its hosts on every shard; the bytes it holds are a gauge
//! ([`Jar::memory_gauge`]) the status page reads without the lock.
//!
//! Not the request or the head (`ringcrawl_http1`), not the flags.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cookie_store::{
    Cookie, CookieDomain, CookieExpiration, CookiePath, CookieStore, RawCookie, StoreAction,
};
use thiserror::Error;
use url::Url;

/// What a cookie takes in the jar besides the bytes of its name, value,
/// domain and path: `cookie_store`'s cookie (the parsed cookie, its
/// domain, path and expiry) and its entry in the last of its
/// domain -> path -> name maps.
pub(crate) const COOKIE_OVERHEAD: usize = 400;
/// What a domain with cookies takes besides them: its path and name maps
/// in `cookie_store`, and its count here. With [`COOKIE_OVERHEAD`],
/// fitted to a counting allocator's totals for 10,000 cookies of 57
/// bytes in 10,000, 1,000 and 200 domains: 1,610, 558 and 433 bytes a
/// cookie, where the model counts 1,737, 585 and 483 (on the safe side;
/// it also counts this jar's own count of each domain).
pub(crate) const DOMAIN_OVERHEAD: usize = 1_280;
/// Most cookies of one domain (RFC 6265 §6.1 asks for at least 50).
pub(crate) const MAX_PER_DOMAIN: u32 = 50;
/// Largest cookie, name and value together (RFC 6265 §6.1: at least 4096).
pub(crate) const MAX_COOKIE_BYTES: usize = 4096;
/// Least time between two sweeps of expired cookies.
const SWEEP_EVERY: Duration = Duration::from_secs(60);

/// The crawl's cookies.
pub(crate) struct Jar {
    inner: Mutex<Inner>,
    /// Bytes held (as [`Inner::bytes`]), for readers on other threads.
    gauge: Arc<AtomicU64>,
}

struct Inner {
    store: CookieStore,
    /// Cookies held (expired ones until the next sweep), by the domain
    /// they are kept under.
    per_domain: HashMap<String, u32>,
    total: usize,
    /// Bytes the cookies held take, as [`size`] counts them.
    bytes: usize,
    /// The most `bytes` may be.
    limit: usize,
    /// Cookies refused by the caps.
    refused: u64,
    /// When expired cookies were last swept.
    swept: Option<Instant>,
}

/// Why a cookies file cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub(crate) enum CookieFileError {
    #[error("line {line}: {problem} (Netscape format: DOMAIN, TRUE|FALSE, PATH, TRUE|FALSE, EXPIRES, NAME, VALUE, separated by tabs)")]
    Line { line: usize, problem: &'static str },
}

impl Default for Jar {
    fn default() -> Self {
        Jar::new()
    }
}

impl fmt::Debug for Jar {
    /// The count only: cookies are secrets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Jar({} cookies)", self.held())
    }
}

impl Jar {
    /// An empty jar.
    pub(crate) fn new() -> Jar {
        Jar {
            inner: Mutex::new(Inner {
                store: CookieStore::new(),
                per_domain: HashMap::new(),
                total: 0,
                bytes: 0,
                limit: crate::defaults::COOKIE_MEMORY,
                refused: 0,
                swept: None,
            }),
            gauge: Arc::default(),
        }
    }

    /// Hold at most `bytes` of cookies from now on. Whether what the jar
    /// holds already fits (a cookies file loaded before may not).
    pub(crate) fn limit_memory(&self, bytes: usize) -> bool {
        let mut inner = self.lock();
        inner.limit = bytes;
        inner.bytes <= bytes
    }

    /// Bytes the cookies held take (expired ones too, until swept).
    pub(crate) fn memory(&self) -> usize {
        self.lock().bytes
    }

    /// The bytes held, kept current as cookies come and go: read it from
    /// any thread without taking the jar's lock.
    pub(crate) fn memory_gauge(&self) -> Arc<AtomicU64> {
        self.gauge.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic elsewhere while holding it leaves cookies as they were.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Cookies held (expired ones too, until they are swept).
    pub(crate) fn held(&self) -> usize {
        self.lock().total
    }

    /// Cookies refused so far by the caps.
    pub(crate) fn refused(&self) -> u64 {
        self.lock().refused
    }

    /// The `Cookie` value for a request of `url`, if any cookie applies.
    pub(crate) fn header_for(&self, url: &Url) -> Option<String> {
        let inner = self.lock();
        let mut matches = inner.store.matches(url);
        if matches.is_empty() {
            return None;
        }
        // Longer paths first (RFC 6265 §5.4), then by name: the same
        // header each time.
        matches.sort_by_cached_key(|c| {
            (
                std::cmp::Reverse(String::from(&c.path).len()),
                c.name().to_string(),
            )
        });
        let mut out = String::new();
        for cookie in matches {
            if !out.is_empty() {
                out.push_str("; ");
            }
            out.push_str(cookie.name());
            out.push('=');
            out.push_str(cookie.value());
        }
        Some(out)
    }

    /// Keep the cookies of a response of `url` (its `Set-Cookie` values).
    pub(crate) fn store(&self, url: &Url, set_cookies: &[String]) {
        if set_cookies.is_empty() {
            return;
        }
        let host = url.host_str().unwrap_or("").to_ascii_lowercase();
        let mut inner = self.lock();
        for value in set_cookies {
            let Ok(raw) = RawCookie::parse(value.clone()) else {
                continue;
            };
            inner.add(raw, url, &host);
        }
        self.publish(&inner);
    }

    fn publish(&self, inner: &Inner) {
        self.gauge.store(inner.bytes as u64, Ordering::Relaxed);
    }

    /// The cookies of a Netscape `cookies.txt` (`#HttpOnly_` lines
    /// included, other `#` lines and blank ones skipped); those already
    /// expired are left out.
    pub(crate) fn from_netscape(text: &str) -> Result<Jar, CookieFileError> {
        let jar = Jar::new();
        {
            let mut inner = jar.lock();
            for (n, line) in text.lines().enumerate() {
                let line = line.trim_end_matches('\r');
                let (http_only, line) = match line.strip_prefix("#HttpOnly_") {
                    Some(rest) => (true, rest),
                    None => (false, line),
                };
                if line.trim().is_empty() || line.starts_with('#') {
                    continue;
                }
                let bad = |problem| CookieFileError::Line {
                    line: n + 1,
                    problem,
                };
                let fields: Vec<&str> = line.split('\t').collect();
                let [domain, subdomains, path, secure, expires, name, value] = fields[..] else {
                    return Err(bad("not 7 fields separated by tabs"));
                };
                let flag = |s: &str| match s {
                    "TRUE" => Ok(true),
                    "FALSE" => Ok(false),
                    _ => Err(bad("a flag that is neither TRUE nor FALSE")),
                };
                let (subdomains, secure) = (flag(subdomains)?, flag(secure)?);
                let expires: i64 = expires
                    .parse()
                    .map_err(|_| bad("an expiry that is no number"))?;
                let host = domain.trim_start_matches('.').to_ascii_lowercase();
                if host.is_empty() || name.is_empty() {
                    return Err(bad("an empty domain or name"));
                }
                let mut builder = RawCookie::build((name.to_string(), value.to_string()))
                    .path(path.to_string())
                    .secure(secure)
                    .http_only(http_only);
                if subdomains {
                    builder = builder.domain(host.clone());
                }
                if expires > 0 {
                    let Ok(at) = time::OffsetDateTime::from_unix_timestamp(expires) else {
                        return Err(bad("an expiry out of range"));
                    };
                    if at <= time::OffsetDateTime::now_utc() {
                        continue;
                    }
                    builder = builder.expires(at);
                }
                let scheme = if secure { "https" } else { "http" };
                let Ok(url) = Url::parse(&format!("{scheme}://{host}{path}")) else {
                    return Err(bad("a domain or path that makes no URL"));
                };
                inner.add(builder.build(), &url, &host);
            }
            jar.publish(&inner);
        }
        Ok(jar)
    }

    /// The unexpired cookies in Netscape `cookies.txt` form (session
    /// cookies with expiry 0, as curl writes them).
    pub(crate) fn to_netscape(&self) -> String {
        let inner = self.lock();
        let mut out = String::from("# Netscape HTTP Cookie File\n# Written by ringcrawl.\n\n");
        let mut lines = Vec::new();
        for cookie in inner.store.iter_unexpired() {
            let (domain, subdomains) = match &cookie.domain {
                CookieDomain::HostOnly(host) => (host.clone(), "FALSE"),
                CookieDomain::Suffix(suffix) => (format!(".{suffix}"), "TRUE"),
                _ => continue,
            };
            let expires = match &cookie.expires {
                CookieExpiration::AtUtc(at) => at.unix_timestamp(),
                CookieExpiration::SessionEnd => 0,
            };
            let prefix = if cookie.http_only().unwrap_or(false) {
                "#HttpOnly_"
            } else {
                ""
            };
            let secure = if cookie.secure().unwrap_or(false) {
                "TRUE"
            } else {
                "FALSE"
            };
            lines.push(format!(
                "{prefix}{domain}\t{subdomains}\t{}\t{secure}\t{expires}\t{}\t{}\n",
                String::from(&cookie.path),
                cookie.name(),
                cookie.value()
            ));
        }
        // In a stable order, so two saves of one jar are the same file.
        lines.sort();
        out.extend(lines);
        out
    }
}

impl Inner {
    /// Keep `raw`, set by a response of `url` (whose host is `host`),
    /// within the caps.
    fn add(&mut self, mut raw: RawCookie<'static>, url: &Url, host: &str) {
        if raw.name().len() + raw.value().len() > MAX_COOKIE_BYTES {
            self.refused += 1;
            return;
        }
        let domain = raw
            .domain()
            .map(|d| d.trim_start_matches('.').to_ascii_lowercase());
        let key = match domain {
            // A public suffix: the host's own cookie if it is the host,
            // else nobody's.
            Some(d) if psl::suffix_str(&d) == Some(d.as_str()) => {
                if d != host {
                    self.refused += 1;
                    return;
                }
                raw.unset_domain();
                d
            }
            Some(d) => d,
            None => host.to_string(),
        };
        // The path the store keeps it under: its own, or the URL's default.
        let path = match raw.path() {
            Some(path) if path.starts_with('/') => path.to_string(),
            _ => String::from(&CookiePath::default_path(url)),
        };
        let deleting = deletes(&raw);
        let mut cost = self.cost(&key, &path, &raw);
        if deleting && cost.old.is_none() {
            // Deleting what the jar does not hold: nothing to do.
            return;
        }
        if !self.has_room(&key, cost, deleting) {
            // Expired cookies still count until swept: at most once a
            // minute, so a page setting thousands costs one sweep.
            let now = Instant::now();
            if self
                .swept
                .is_none_or(|at| now.duration_since(at) >= SWEEP_EVERY)
            {
                self.swept = Some(now);
                self.sweep();
                // The cookie replaced, or its domain, may be gone now.
                cost = self.cost(&key, &path, &raw);
            }
            if !self.has_room(&key, cost, deleting) {
                self.refused += 1;
                return;
            }
        }
        match self.store.insert_raw(&raw, url) {
            Ok(StoreAction::Inserted) => {
                *self.per_domain.entry(key).or_insert(0) += 1;
                self.total += 1;
                self.bytes += cost.new;
            }
            Ok(StoreAction::UpdatedExisting) => {
                self.bytes = (self.bytes + cost.new).saturating_sub(cost.old.unwrap_or(0));
            }
            // A deleted cookie is kept, expired, until the next sweep.
            Ok(StoreAction::ExpiredExisting) | Err(_) => {}
        }
    }

    /// What keeping `raw` under (`key`, `path`) would take, and what the
    /// cookie it replaces takes.
    fn cost(&self, key: &str, path: &str, raw: &RawCookie<'_>) -> Cost {
        let mut new =
            COOKIE_OVERHEAD + raw.name().len() + raw.value().len() + key.len() + path.len();
        if !self.per_domain.contains_key(key) {
            new += DOMAIN_OVERHEAD;
        }
        Cost {
            new,
            old: self.store.get_any(key, path, raw.name()).map(size),
        }
    }

    /// Whether a cookie of `key`'s costing `cost` may be kept: a place
    /// among the domain's and room in memory. Replacing one held takes no
    /// new place; deleting one held frees memory whatever it carries.
    fn has_room(&self, key: &str, cost: Cost, deleting: bool) -> bool {
        if deleting && cost.old.is_some() {
            return true;
        }
        let placed =
            cost.old.is_some() || self.per_domain.get(key).copied().unwrap_or(0) < MAX_PER_DOMAIN;
        let freed = cost.old.unwrap_or(0).min(self.bytes);
        placed && self.bytes - freed + cost.new <= self.limit
    }

    /// Drop expired cookies, and count again.
    fn sweep(&mut self) {
        let live: Vec<_> = self.store.iter_unexpired().cloned().collect();
        self.per_domain.clear();
        for cookie in &live {
            if let Some(domain) = cookie.domain.as_cow() {
                *self.per_domain.entry(domain.into_owned()).or_insert(0) += 1;
            }
        }
        self.total = live.len();
        self.bytes = live.iter().map(size).sum::<usize>() + self.per_domain.len() * DOMAIN_OVERHEAD;
        let store: Result<CookieStore, std::convert::Infallible> =
            CookieStore::from_cookies(live.into_iter().map(Ok), false);
        let Ok(store) = store;
        self.store = store;
    }
}

/// What keeping a cookie takes ([`Inner::cost`]).
#[derive(Debug, Clone, Copy)]
struct Cost {
    /// Bytes the new cookie is counted for (its domain's too, if new).
    new: usize,
    /// Bytes of the one it replaces, if the jar holds one.
    old: Option<usize>,
}

/// What `cookie` is counted for in the jar's memory.
fn size(cookie: &Cookie<'_>) -> usize {
    let domain = cookie.domain.as_cow().map_or(0, |d| d.len());
    COOKIE_OVERHEAD + cookie.name().len() + cookie.value().len() + domain + cookie.path.len()
}

/// Whether `raw` is a deletion: already expired when set (RFC 6265 §5.3:
/// `Max-Age` of zero or less, or an `Expires` in the past).
fn deletes(raw: &RawCookie<'_>) -> bool {
    raw.max_age().is_some_and(|age| age <= time::Duration::ZERO)
        || raw
            .expires_datetime()
            .is_some_and(|at| at <= time::OffsetDateTime::now_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn set(jar: &Jar, at: &str, values: &[&str]) {
        let values: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        jar.store(&url(at), &values);
    }

    #[test]
    fn cookies_go_back_to_their_host_and_path_only() {
        let jar = Jar::new();
        set(
            &jar,
            "http://a.test/x/page",
            &["id=1", "all=2; Path=/", "deep=3; Path=/x/y"],
        );
        assert_eq!(
            jar.header_for(&url("http://a.test/x/other")).as_deref(),
            Some("id=1; all=2")
        );
        assert_eq!(
            jar.header_for(&url("http://a.test/")).as_deref(),
            Some("all=2")
        );
        assert!(jar.header_for(&url("http://b.test/x/")).is_none());
        // Host-only: not to a subdomain.
        assert!(jar.header_for(&url("http://www.a.test/x/")).is_none());
    }

    #[test]
    fn a_domain_cookie_reaches_the_subdomains_but_never_a_public_suffix() {
        let jar = Jar::new();
        set(
            &jar,
            "http://www.example.com/",
            &["d=1; Domain=example.com", "bad=1; Domain=com"],
        );
        set(
            &jar,
            "http://a.github.io/",
            &["neighbour=1; Domain=github.io"],
        );
        assert_eq!(
            jar.header_for(&url("http://shop.example.com/")).as_deref(),
            Some("d=1")
        );
        assert!(jar.header_for(&url("http://other.com/")).is_none());
        assert!(jar.header_for(&url("http://b.github.io/")).is_none());
        assert_eq!(jar.refused(), 2);
    }

    #[test]
    fn secure_cookies_stay_on_https_and_expired_ones_are_dropped() {
        let jar = Jar::new();
        set(
            &jar,
            "https://a.test/",
            &[
                "s=1; Secure",
                "gone=1; Max-Age=0",
                "old=1; Expires=Wed, 01 Jan 2020 00:00:00 GMT",
            ],
        );
        assert_eq!(
            jar.header_for(&url("https://a.test/")).as_deref(),
            Some("s=1")
        );
        assert!(jar.header_for(&url("http://a.test/")).is_none());
        set(&jar, "https://a.test/", &["s=1; Max-Age=0"]);
        assert!(jar.header_for(&url("https://a.test/")).is_none());
    }

    #[test]
    fn a_cookie_monster_is_cut_at_the_domains_cap_and_replacements_still_count() {
        let jar = Jar::new();
        let many: Vec<String> = (0..200).map(|i| format!("c{i}=v")).collect();
        jar.store(&url("http://monster.test/"), &many);
        assert_eq!(jar.held(), MAX_PER_DOMAIN as usize);
        assert_eq!(jar.refused(), 200 - u64::from(MAX_PER_DOMAIN));
        set(&jar, "http://monster.test/", &["c0=new"]);
        assert!(jar
            .header_for(&url("http://monster.test/"))
            .unwrap()
            .contains("c0=new"));
        // Other domains are not held back.
        set(&jar, "http://calm.test/", &["a=1"]);
        assert_eq!(
            jar.header_for(&url("http://calm.test/")).as_deref(),
            Some("a=1")
        );
        let big = format!("big={}", "x".repeat(MAX_COOKIE_BYTES));
        set(&jar, "http://calm.test/", &[&big]);
        assert_eq!(
            jar.header_for(&url("http://calm.test/")).as_deref(),
            Some("a=1")
        );
    }

    #[test]
    fn at_the_cap_a_cookie_set_without_a_path_can_still_be_deleted() {
        let jar = Jar::new();
        set(&jar, "http://full.test/a/b", &["deep=1"]);
        let many: Vec<String> = (1..MAX_PER_DOMAIN)
            .map(|i| format!("c{i}=v; Path=/"))
            .collect();
        jar.store(&url("http://full.test/"), &many);
        assert_eq!(jar.held(), MAX_PER_DOMAIN as usize);
        let deep = || {
            jar.header_for(&url("http://full.test/a/x"))
                .unwrap_or_default()
        };
        assert!(deep().contains("deep=1"));
        set(&jar, "http://full.test/a/b", &["deep=; Max-Age=0"]);
        assert!(!deep().contains("deep="), "{}", deep());
        assert_eq!(jar.refused(), 0);
    }

    #[test]
    fn a_full_jar_refuses_new_cookies_but_still_replaces_and_deletes() {
        let jar = Jar::new();
        // "c=v" set by host hN.test at "/": 1 + 1 + 7 (or 8) + 1 bytes.
        let one = |host: &str| DOMAIN_OVERHEAD + COOKIE_OVERHEAD + 1 + 1 + host.len() + 1;
        // Ten of h0..h9, or nine of them and h11.
        let limit = 9 * one("h0.test") + one("h11.test");
        assert!(jar.limit_memory(limit));
        for n in 0..12 {
            set(&jar, &format!("http://h{n}.test/"), &["c=v"]);
        }
        assert_eq!((jar.held(), jar.refused()), (10, 2));
        assert_eq!(jar.memory(), 10 * one("h0.test"));
        assert_eq!(
            jar.memory_gauge().load(Ordering::Relaxed),
            jar.memory() as u64
        );
        assert!(jar.header_for(&url("http://h11.test/")).is_none());
        // A replacement of the same size fits; a larger one does not.
        set(&jar, "http://h0.test/", &["c=w"]);
        assert_eq!(
            jar.header_for(&url("http://h0.test/")).as_deref(),
            Some("c=w")
        );
        set(&jar, "http://h0.test/", &["c=longer"]);
        assert_eq!(jar.refused(), 3);
        assert_eq!(jar.memory(), 10 * one("h0.test"));
        // A deletion frees its place for another once swept (when the
        // jar is full, at most once a minute: a minute later here).
        set(&jar, "http://h0.test/", &["c=; Max-Age=0"]);
        assert!(jar.header_for(&url("http://h0.test/")).is_none());
        assert_eq!(jar.memory(), 10 * one("h0.test"), "held until swept");
        jar.lock().swept = None;
        set(&jar, "http://h11.test/", &["c=v"]);
        assert_eq!((jar.held(), jar.memory()), (10, limit));
        assert_eq!(
            jar.header_for(&url("http://h11.test/")).as_deref(),
            Some("c=v")
        );
        // Deleting what it does not hold is no refusal.
        set(&jar, "http://h99.test/", &["c=; Max-Age=0"]);
        assert_eq!(jar.refused(), 3);
    }

    #[test]
    fn a_sweep_that_empties_a_domain_counts_its_next_cookie_with_the_domain() {
        let jar = Jar::new();
        let one = DOMAIN_OVERHEAD + COOKIE_OVERHEAD + 1 + 1 + "h0.test".len() + 1;
        assert!(jar.limit_memory(one));
        set(&jar, "http://h0.test/", &["a=v"]);
        set(&jar, "http://h0.test/", &["a=; Max-Age=0"]);
        // Full until swept; the sweep takes the domain away with `a`.
        set(&jar, "http://h0.test/", &["b=v"]);
        assert_eq!(
            jar.header_for(&url("http://h0.test/")).as_deref(),
            Some("b=v")
        );
        assert_eq!((jar.held(), jar.memory(), jar.refused()), (1, one, 0));
    }

    #[test]
    fn a_cookies_file_larger_than_the_jars_memory_does_not_fit() {
        let text = "a.test\tFALSE\t/\tFALSE\t0\tn\tv\nb.test\tFALSE\t/\tFALSE\t0\tn\tv\n";
        let jar = Jar::from_netscape(text).unwrap();
        assert_eq!(
            jar.memory(),
            2 * (DOMAIN_OVERHEAD + COOKIE_OVERHEAD + 1 + 1 + 6 + 1)
        );
        assert!(!jar.limit_memory(COOKIE_OVERHEAD));
        assert!(jar.limit_memory(jar.memory()));
    }

    #[test]
    fn the_netscape_format_reads_back_what_it_wrote() {
        let text = "# Netscape HTTP Cookie File\n\n\
                    .example.com\tTRUE\t/\tFALSE\t0\tsession\tyes\n\
                    #HttpOnly_a.test\tFALSE\t/app\tTRUE\t4102444800\ttoken\tabc\n\
                    a.test\tFALSE\t/\tFALSE\t946684800\texpired\tx\n";
        let jar = Jar::from_netscape(text).unwrap();
        assert_eq!(
            jar.header_for(&url("http://www.example.com/")).as_deref(),
            Some("session=yes")
        );
        assert_eq!(
            jar.header_for(&url("https://a.test/app/x")).as_deref(),
            Some("token=abc")
        );
        assert!(jar.header_for(&url("http://a.test/app/x")).is_none());
        let written = jar.to_netscape();
        assert!(
            written.contains(".example.com\tTRUE\t/\tFALSE\t0\tsession\tyes\n"),
            "{written}"
        );
        assert!(
            written.contains("#HttpOnly_a.test\tFALSE\t/app\tTRUE\t4102444800\ttoken\tabc\n"),
            "{written}"
        );
        assert!(!written.contains("expired"));
        let again = Jar::from_netscape(&written).unwrap();
        assert_eq!(again.to_netscape(), written);
    }

    #[test]
    fn a_damaged_cookies_file_names_its_line() {
        for (text, line) in [
            ("a.test\tTRUE\t/\n", 1),
            ("# c\na.test\tMAYBE\t/\tFALSE\t0\tn\tv\n", 2),
            ("a.test\tTRUE\t/\tFALSE\tsoon\tn\tv\n", 1),
        ] {
            match Jar::from_netscape(text) {
                Err(CookieFileError::Line { line: l, .. }) => assert_eq!(l, line, "{text:?}"),
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }
}
