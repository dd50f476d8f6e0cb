//! Crawling politely: robots.txt first and obeyed (allow, disallow,
//! Crawl-delay, 4xx, 5xx), at most `--per-host` connections per host, a
//! delay between requests, and fair turns over many hosts.

use ringcrawl::ErrorKind;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::held::{held_site, peak, Gauge};
use crate::common::*;
use ringcrawl::CrawlerBuilder;
use ringcrawl_site::server::{Reply, Request, Server, Step};

fn polite(cfg: CrawlerBuilder) -> CrawlerBuilder {
    cfg.obey_robots(true).per_host(2)
}

fn robots_site(robots: fn() -> Reply) -> (Server, String) {
    observed_robots_site(robots, |_| {})
}

/// [`robots_site`], whose every request is shown to `observe` first.
fn observed_robots_site(
    robots: fn() -> Reply,
    observe: impl Fn(&Request) + Send + Sync + 'static,
) -> (Server, String) {
    let server = serve(move |req| {
        observe(req);
        match req.path.as_str() {
            "/robots.txt" => Some(robots()),
            "/" => Some(page(&["/public", "/private/secret", "/private/open"])),
            "/public" | "/private/secret" | "/private/open" => Some(page(&[])),
            _ => None,
        }
    });
    let b = base(&server);
    (server, b)
}

#[test]
fn robots_txt_is_fetched_once_first_and_obeyed() {
    let (server, b) = robots_site(|| {
        Reply::with_type(
            200,
            "text/plain",
            "User-agent: *\nDisallow: /private/\nAllow: /private/open\n",
        )
    });
    let mut cfg = settings(&[&b]);
    cfg = polite(cfg);
    let outcome = crawl(cfg);
    let records = by_url(&outcome);
    assert_eq!(server.hits("127.0.0.1", "/robots.txt"), 1);
    assert_eq!(
        records[&format!("{b}/private/secret")].error_kind,
        Some(ErrorKind::RobotsDisallowed)
    );
    assert_eq!(
        server.hits("127.0.0.1", "/private/secret"),
        0,
        "never requested"
    );
    assert_eq!(
        records[&format!("{b}/private/open")].status,
        Some(200),
        "Allow beats the shorter Disallow"
    );
    assert_eq!(records[&format!("{b}/public")].status, Some(200));
    assert_eq!(outcome.stats.robots_requests, 1);
}

#[test]
fn the_default_user_agent_names_a_page_for_site_owners_and_its_token_picks_the_robots_group() {
    let agents = Arc::new(Mutex::new(BTreeSet::new()));
    let seen = agents.clone();
    let (_server, b) = observed_robots_site(
        || {
            Reply::with_type(
                200,
                "text/plain",
                "User-agent: *\nDisallow: /\n\nUser-agent: ringcrawl\nDisallow: /private/\n",
            )
        },
        move |req| {
            let agent = req.headers.iter().find(|(n, _)| n == "user-agent");
            seen.lock().unwrap().insert(agent.map(|(_, v)| v.clone()));
        },
    );
    let mut cfg = settings(&[&b]);
    cfg = polite(cfg);
    let records = by_url(&crawl(cfg));

    let agents = agents.lock().unwrap().clone();
    assert_eq!(
        agents,
        BTreeSet::from([Some(ringcrawl::defaults::USER_AGENT.to_string())]),
        "every request carries the default"
    );
    let agent = ringcrawl::defaults::USER_AGENT;
    assert!(
        agent.starts_with(concat!(
            "ringcrawl/",
            env!("CARGO_PKG_VERSION"),
            " (+https://"
        )) && agent.ends_with("/docs/bot.md)"),
        "{agent}"
    );
    assert_eq!(records[&format!("{b}/public")].status, Some(200));
    assert_eq!(
        records[&format!("{b}/private/secret")].error_kind,
        Some(ErrorKind::RobotsDisallowed),
        "the ringcrawl group applies, not the * group"
    );
}

#[test]
fn a_robots_txt_compressed_in_transit_is_obeyed() {
    use std::io::Write;
    let (server, b) = robots_site(|| {
        // Long enough to be compressed for real: a few short lines would
        // go out as a stored block, readable as they are.
        let text = format!(
            "{}User-agent: *\nDisallow: /private/\n",
            "# the rules of this site\n".repeat(100)
        );
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(text.as_bytes()).unwrap();
        let body = gz.finish().unwrap();
        assert!(!body.windows(9).any(|w| w == b"Disallow:"));
        Reply::Http {
            status: 200,
            headers: vec![
                ("Content-Type".into(), "text/plain".into()),
                ("Content-Encoding".into(), "gzip".into()),
            ],
            body,
        }
    });
    let mut cfg = settings(&[&b]);
    cfg = polite(cfg);
    let records = by_url(&crawl(cfg));
    assert_eq!(
        records[&format!("{b}/private/secret")].error_kind,
        Some(ErrorKind::RobotsDisallowed)
    );
    assert_eq!(server.hits("127.0.0.1", "/private/secret"), 0);
    assert_eq!(records[&format!("{b}/public")].status, Some(200));
}

#[test]
fn missing_robots_txt_allows_everything() {
    let (server, b) = robots_site(|| Reply::with_type(404, "text/html", "no"));
    let mut cfg = settings(&[&b]);
    cfg = polite(cfg);
    let outcome = crawl(cfg);
    assert_eq!(outcome.records.len(), 4);
    assert!(outcome.records.iter().all(|r| r.status == Some(200)));
    assert_eq!(server.hits("127.0.0.1", "/private/secret"), 1);
}

#[test]
fn robots_txt_5xx_keeps_the_host_out() {
    let (server, b) = robots_site(|| Reply::with_type(503, "text/plain", "down"));
    let mut cfg = settings(&[&b]);
    cfg = polite(cfg);
    cfg = cfg.robots_retries(vec![Duration::from_millis(20), Duration::from_millis(50)]);
    let outcome = crawl(cfg);
    assert_eq!(
        outcome.records.len(),
        1,
        "only the root, recorded as refused"
    );
    assert_eq!(
        outcome.records[0].error_kind,
        Some(ErrorKind::RobotsUnavailable)
    );
    assert_eq!(
        server.total_hits(),
        3,
        "just robots.txt: the first try and the two retries of the schedule"
    );
    assert_eq!(outcome.stats.robots_requests, 3);
}

/// A site whose robots.txt fails the first `failures` times with `fail`,
/// then answers rules.
fn flaky_robots_site(failures: usize, fail: fn() -> Reply) -> (Server, String) {
    let asked = AtomicUsize::new(0);
    let server = serve(move |req| match req.path.as_str() {
        "/robots.txt" if asked.fetch_add(1, Ordering::SeqCst) < failures => Some(fail()),
        "/robots.txt" => Some(Reply::with_type(
            200,
            "text/plain",
            "User-agent: *\nDisallow: /private/\n",
        )),
        "/" => Some(page(&["/public", "/private/secret"])),
        "/public" | "/private/secret" => Some(page(&[])),
        _ => None,
    });
    let b = base(&server);
    (server, b)
}

#[test]
fn a_robots_txt_that_answers_5xx_twice_is_asked_again_and_then_obeyed() {
    let (server, b) = flaky_robots_site(2, || Reply::with_type(503, "text/plain", "busy"));
    let mut cfg = settings(&[&b]);
    cfg = polite(cfg);
    cfg = cfg.robots_retries(vec![Duration::from_millis(50); 4]);
    let started = Instant::now();
    let records = by_url(&crawl(cfg));
    assert_eq!(server.hits("127.0.0.1", "/robots.txt"), 3);
    assert!(
        started.elapsed() >= Duration::from_millis(100),
        "the schedule's waits were kept"
    );
    assert_eq!(
        records[&format!("{b}/")].status,
        Some(200),
        "the root waited"
    );
    assert_eq!(records[&format!("{b}/public")].status, Some(200));
    assert_eq!(
        records[&format!("{b}/private/secret")].error_kind,
        Some(ErrorKind::RobotsDisallowed)
    );
    assert_eq!(server.hits("127.0.0.1", "/private/secret"), 0);
}

#[test]
fn a_robots_txt_that_times_out_once_does_not_lose_the_host() {
    let (server, b) = flaky_robots_site(1, || {
        Reply::with_type(200, "text/plain", "").delayed(Duration::from_secs(3))
    });
    let mut cfg = settings(&[&b]);
    cfg = polite(cfg);
    cfg = cfg.read_timeout(Duration::from_millis(300));
    cfg = cfg.robots_retries(vec![Duration::from_millis(50)]);
    let records = by_url(&crawl(cfg));
    assert_eq!(server.hits("127.0.0.1", "/robots.txt"), 2);
    assert_eq!(records[&format!("{b}/public")].status, Some(200));
    assert_eq!(
        records[&format!("{b}/private/secret")].error_kind,
        Some(ErrorKind::RobotsDisallowed),
        "the rules of the second try"
    );
}

#[test]
fn robots_txt_redirect_is_followed() {
    let server = serve(|req| match req.path.as_str() {
        "/robots.txt" => Some(redirect(301, "/real-robots.txt")),
        "/real-robots.txt" => Some(Reply::with_type(
            200,
            "text/plain",
            "User-agent: *\nDisallow: /x\n",
        )),
        "/" => Some(page(&["/x", "/y"])),
        "/y" => Some(page(&[])),
        _ => None,
    });
    let mut cfg = settings(&[base(&server)]);
    cfg = polite(cfg);
    let records = by_url(&crawl(cfg));
    assert_eq!(server.hits("127.0.0.1", "/x"), 0);
    assert_eq!(records.len(), 3);
}

/// A site whose robots.txt is at the end of `hops` redirects
/// (`/robots.txt` → `/robots/1` → … → `/robots/{hops}`) and keeps
/// `/private/` out.
fn redirected_robots_site(hops: u32) -> (Server, String) {
    let server = serve(move |req| {
        let at = match req.path.as_str() {
            "/robots.txt" => 0,
            "/" => return Some(page(&["/public", "/private/secret"])),
            "/public" | "/private/secret" => return Some(page(&[])),
            path => path.strip_prefix("/robots/")?.parse::<u32>().ok()?,
        };
        Some(if at < hops {
            redirect(301, &format!("/robots/{}", at + 1))
        } else {
            Reply::with_type(200, "text/plain", "User-agent: *\nDisallow: /private/\n")
        })
    });
    let b = base(&server);
    (server, b)
}

#[test]
fn a_robots_txt_five_redirects_away_is_obeyed() {
    let (server, b) = redirected_robots_site(5);
    let mut cfg = settings(&[&b]);
    cfg = polite(cfg);
    let outcome = crawl(cfg);
    let records = by_url(&outcome);
    assert_eq!(
        server.hits("127.0.0.1", "/robots/5"),
        1,
        "the fifth hop was followed"
    );
    assert_eq!(
        records[&format!("{b}/private/secret")].error_kind,
        Some(ErrorKind::RobotsDisallowed)
    );
    assert_eq!(server.hits("127.0.0.1", "/private/secret"), 0);
    assert_eq!(records[&format!("{b}/public")].status, Some(200));
    assert_eq!(
        outcome.stats.robots_requests, 6,
        "robots.txt and five redirects"
    );
}

#[test]
fn a_robots_txt_six_redirects_away_is_not_asked_for_and_allows_all() {
    let (server, b) = redirected_robots_site(6);
    let mut cfg = settings(&[&b]);
    cfg = polite(cfg);
    let outcome = crawl(cfg);
    let records = by_url(&outcome);
    assert_eq!(server.hits("127.0.0.1", "/robots/5"), 1);
    assert_eq!(
        server.hits("127.0.0.1", "/robots/6"),
        0,
        "a sixth hop is not taken"
    );
    assert_eq!(records[&format!("{b}/private/secret")].status, Some(200));
    assert_eq!(outcome.stats.robots_requests, 6);
}

#[test]
fn a_crawl_delay_shorter_than_delay_does_not_shorten_it() {
    let (server, b) =
        robots_site(|| Reply::with_type(200, "text/plain", "User-agent: *\nCrawl-delay: 0.01\n"));
    let mut cfg = settings(&[&b]);
    cfg = polite(cfg);
    cfg = cfg.delay(Duration::from_millis(300));
    let started = Instant::now();
    let outcome = crawl(cfg);
    assert_eq!(outcome.records.len(), 4);
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "4 pages at least --delay 0.3 s apart, not Crawl-delay's 0.01 s: {:?}",
        started.elapsed()
    );
    drop(server);
}

#[test]
fn the_delay_counts_from_the_robots_txt_request_too() {
    let arrivals: Arc<Mutex<Vec<(String, Instant)>>> = Arc::default();
    let seen = arrivals.clone();
    let server = serve(move |req: &Request| {
        seen.lock()
            .unwrap()
            .push((req.path.clone(), Instant::now()));
        match req.path.as_str() {
            "/robots.txt" => Some(Reply::with_type(
                200,
                "text/plain",
                "User-agent: *\nAllow: /\n",
            )),
            "/" => Some(page(&[])),
            _ => None,
        }
    });
    let b = base(&server);
    let mut cfg = settings(&[&b]);
    cfg = polite(cfg);
    let delay = Duration::from_millis(400);
    cfg = cfg.delay(delay);
    assert_eq!(crawl(cfg).records.len(), 1);
    let arrivals = arrivals.lock().unwrap().clone();
    let at = |path: &str| {
        arrivals
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, t)| *t)
            .unwrap()
    };
    let gap = at("/").duration_since(at("/robots.txt"));
    // The page's request may find a connection open where robots.txt's
    // made one: a little less than the delay between arrivals.
    assert!(
        gap >= delay - Duration::from_millis(100),
        "the first page came {gap:?} after robots.txt"
    );
}

#[test]
fn crawl_delay_spaces_requests() {
    let (server, b) =
        robots_site(|| Reply::with_type(200, "text/plain", "User-agent: *\nCrawl-delay: 0.2\n"));
    let mut cfg = settings(&[&b]);
    cfg = polite(cfg);
    let started = Instant::now();
    let outcome = crawl(cfg);
    assert_eq!(outcome.records.len(), 4);
    assert!(
        started.elapsed() >= Duration::from_millis(600),
        "4 pages at least 0.2 s apart: {:?}",
        started.elapsed()
    );
    drop(server);
}

/// A site of the test process whose root links to `pages` pages, every
/// reply held a while, arrivals logged by host.
fn counting_site(pages: usize) -> (Server, Gauge) {
    let addr = "127.0.0.1:0".parse().unwrap();
    held_site(&[addr], pages, |req| req.host.clone())
}

#[test]
fn per_host_connections_are_never_exceeded() {
    let (server, gauge) = counting_site(40);
    let mut cfg = settings(&[base(&server)]);
    cfg = cfg.max_tasks(40);
    cfg = cfg.per_host(3);
    let outcome = crawl(cfg);
    assert_eq!(outcome.records.len(), 41);
    let peak = peak(&gauge, "127.0.0.1");
    assert!(peak <= 3, "peak concurrency {peak} > --per-host 3");
    assert!(peak >= 2, "the limit is used: peak {peak}");
}

#[test]
fn per_host_limit_holds_when_pages_are_lent_to_other_shards() {
    // Two fetch slots per shard and --per-host 3: the owner of the one host
    // fills its own two slots and lends the third page to the other shard.
    let (server, gauge) = counting_site(40);
    let mut cfg = settings(&[base(&server)]);
    cfg = cfg.max_tasks(4);
    cfg = cfg.per_host(3);
    let outcome = crawl(cfg);
    assert_eq!(outcome.records.len(), 41);
    let peak = peak(&gauge, "127.0.0.1");
    assert!(peak <= 3, "peak concurrency {peak} > --per-host 3");
    let shards: BTreeSet<usize> = outcome.records.iter().map(|r| r.shard).collect();
    assert_eq!(shards.len(), 2, "pages were fetched on both shards");
}

#[test]
fn max_tasks_binds_when_one_host_fills_every_shard() {
    // One host that could take 100 at once, 4 fetch slots over 2 shards:
    // the owner's 2 plus the 2 it lends, never more.
    let (server, gauge) = counting_site(60);
    let mut cfg = settings(&[base(&server)]);
    cfg = cfg.max_tasks(4);
    cfg = cfg.per_host(100);
    let outcome = crawl(cfg);
    assert_eq!(outcome.records.len(), 61);
    let peak = peak(&gauge, "127.0.0.1");
    assert!(peak <= 4, "peak concurrency {peak} > --max-tasks 4");
    assert!(
        peak >= 3,
        "more than the owner's own 2 slots were used: {peak}"
    );
    let shards: BTreeSet<usize> = outcome.records.iter().map(|r| r.shard).collect();
    assert_eq!(shards.len(), 2, "pages were fetched on both shards");
}

#[test]
fn max_tasks_below_the_number_of_shards_still_binds() {
    // One fetch slot for the whole crawl on two cores: one fetch at a time,
    // not one per shard.
    let (server, gauge) = counting_site(12);
    let mut cfg = settings(&[base(&server)]);
    cfg = cfg.cores(2);
    cfg = cfg.max_tasks(1);
    cfg = cfg.per_host(100);
    let outcome = crawl(cfg);
    assert_eq!(outcome.records.len(), 13);
    let peak = peak(&gauge, "127.0.0.1");
    assert_eq!(peak, 1, "peak concurrency {peak} > --max-tasks 1");
}

#[test]
fn thousand_hosts_keep_every_worker_busy() {
    const HOSTS: usize = 1000;
    let busy = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (b2, p2) = (busy.clone(), peak.clone());
    let server = serve(move |req: &Request| {
        let now = b2.fetch_add(1, Ordering::SeqCst) + 1;
        p2.fetch_max(now, Ordering::SeqCst);
        let b3 = b2.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            b3.fetch_sub(1, Ordering::SeqCst);
        });
        // (the reply goes out at 30 ms: the gauge never overcounts)
        let n: usize = req
            .host
            .strip_prefix('h')?
            .split('.')
            .next()?
            .parse()
            .ok()?;
        let body = match req.path.as_str() {
            // Every host links to the next one and has one more page.
            "/" => format!(
                "<a href=\"/more\">m</a><a href=\"http://h{}.crawl.test:{}/\">next</a>",
                (n + 1) % HOSTS,
                req.authority.rsplit(':').next().unwrap_or("80")
            ),
            _ => String::new(),
        };
        Some(Reply::Script(vec![
            Step::Sleep(Duration::from_millis(30)),
            Step::Write(
                format!("HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n{body}").into_bytes(),
            ),
            Step::Close,
        ]))
    });
    let port = server.port();
    let roots: Vec<String> = (0..HOSTS)
        .step_by(10)
        .map(|i| format!("http://h{i}.crawl.test:{port}/"))
        .collect();
    let mut cfg = settings(&roots);
    cfg = cfg.scope(ringcrawl::ScopeMode::Lenient);
    cfg = cfg.max_tasks(64);
    cfg = cfg.per_host(1);
    for i in 0..HOSTS {
        cfg = cfg.resolve(
            &format!("h{i}.crawl.test"),
            port,
            vec!["127.0.0.1".parse().unwrap()],
        );
    }
    let started = Instant::now();
    let outcome = crawl(cfg);
    assert_eq!(outcome.records.len(), 2 * HOSTS, "every host's two pages");
    assert!(outcome.records.iter().all(|r| r.status == Some(200)));
    // 2,000 fetches of >= 30 ms with 64 workers; with workers stuck behind
    // busy hosts (per_host 1) the peak would stay near the number of roots.
    let peak = peak.load(Ordering::SeqCst);
    assert!(
        peak >= 32,
        "workers kept busy across hosts: peak {peak} of 64"
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn dns_failures_are_recorded_per_url() {
    // The nameserver asked is a closed UDP port on loopback: every lookup
    // fails fast. Pinned names never reach it.
    let dead_dns = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let server = serve(|req| match req.path.as_str() {
        "/" => {
            let port = req.authority.rsplit(':').next()?;
            Some(page(&[
                "/a",
                &format!("http://gone.crawl.test:{port}/x"),
                &format!("http://gone.crawl.test:{port}/y"),
                &format!("http://lost.crawl.test:{port}/"),
            ]))
        }
        "/a" => Some(page(&[])),
        _ => None,
    });
    let port = server.port();
    let mut cfg = settings(&[format!("http://site.crawl.test:{port}/")]);
    cfg = cfg.scope(ringcrawl::ScopeMode::Lenient);
    cfg = cfg.resolve("site.crawl.test", port, vec!["127.0.0.1".parse().unwrap()]);
    cfg = cfg.dns_server(dead_dns);
    let outcome = crawl(cfg);
    let records = by_url(&outcome);
    assert_eq!(records.len(), 5, "{records:#?}");
    for path in ["/", "/a"] {
        let url = format!("http://site.crawl.test:{port}{path}");
        assert_eq!(records[&url].status, Some(200), "{url}");
    }
    for url in [
        format!("http://gone.crawl.test:{port}/x"),
        format!("http://gone.crawl.test:{port}/y"),
        format!("http://lost.crawl.test:{port}/"),
    ] {
        let r = &records[&url];
        assert_eq!(r.error_kind, Some(ErrorKind::Dns), "{url}: {r:?}");
        let host = url.split('/').nth(2).unwrap().split(':').next().unwrap();
        assert!(
            r.error.as_deref().unwrap_or("").contains(host),
            "the error names {host}: {r:?}"
        );
        assert_eq!(r.status, None);
    }
}

#[test]
fn a_host_with_a_trailing_dot_is_the_same_host() {
    // `site.test.` and `site.test` name one host: one robots.txt, one
    // fetch of each page, one politeness, whichever spelling a link uses.
    let server = serve(|req| {
        let port = req.authority.rsplit(':').next()?;
        match req.path.as_str() {
            "/robots.txt" => Some(Reply::with_type(200, "text/plain", "User-agent: *\n")),
            "/" => Some(page(&[
                &format!("http://site.test.:{port}/a"),
                &format!("http://site.test:{port}/a"),
                &format!("http://SITE.test..:{port}/b"),
                "/c",
            ])),
            "/a" | "/b" | "/c" => Some(page(&[])),
            _ => None,
        }
    });
    let port = server.port();
    let mut cfg = settings(&[
        format!("http://site.test.:{port}/"),
        format!("http://site.test:{port}/"),
    ]);
    cfg = polite(cfg);
    // Pinned without the dot, as users write names; no other name resolves.
    cfg = cfg.resolve("site.test", port, vec!["127.0.0.1".parse().unwrap()]);
    let outcome = crawl(cfg);
    let urls: BTreeSet<String> = by_url(&outcome).into_keys().collect();
    let expected: BTreeSet<String> = ["/", "/a", "/b", "/c"]
        .iter()
        .map(|p| format!("http://site.test:{port}{p}"))
        .collect();
    assert_eq!(urls, expected, "one spelling of the host");
    assert!(outcome.records.iter().all(|r| r.status == Some(200)));
    for path in ["/robots.txt", "/", "/a", "/b", "/c"] {
        assert_eq!(server.hits("site.test", path), 1, "{path} once");
    }
    assert_eq!(server.total_hits(), 5, "nothing asked as site.test.");
}

/// A page links to 3,000 hosts, and the hosts' memory holds a handful of
/// them live (each is counted at 8 KiB until its robots.txt comes): the
/// others' URLs wait, in order, until live hosts finish, and every one is
/// crawled once. The hosts' state never passes its bound, and what is left
/// at the end is what the bound keeps of finished hosts, not all 3,001.
#[test]
fn thousands_of_hosts_are_crawled_within_the_host_memory() {
    const HOSTS: usize = 3000;
    let server = serve(
        move |req: &Request| match (req.host.as_str(), req.path.as_str()) {
            (_, "/robots.txt") => None,
            ("trap.test", "/") => {
                let port = req.authority.rsplit(':').next().unwrap_or("80");
                let links: Vec<String> = (0..HOSTS)
                    .map(|i| format!("http://h{i}.trap.test:{port}/"))
                    .collect();
                let links: Vec<&str> = links.iter().map(String::as_str).collect();
                Some(page(&links))
            }
            (_, "/") => Some(page(&[])),
            _ => None,
        },
    );
    let port = server.port();
    let mut cfg = settings(&[format!("http://trap.test:{port}/")]);
    cfg = polite(cfg);
    cfg = cfg.scope(ringcrawl::ScopeMode::Lenient);
    // Two shards at their least share each (the builder refuses less).
    let bound = 2 * ringcrawl::defaults::MIN_HOST_MEMORY_PER_SHARD;
    cfg = cfg.cores(2).host_memory(bound);
    let loopback: std::net::IpAddr = "127.0.0.1".parse().unwrap();
    cfg = cfg.resolve("trap.test", port, vec![loopback]);
    for i in 0..HOSTS {
        cfg = cfg.resolve(&format!("h{i}.trap.test"), port, vec![loopback]);
    }
    let outcome = crawl(cfg);
    assert_eq!(outcome.records.len(), HOSTS + 1);
    assert!(outcome.records.iter().all(|r| r.status == Some(200)));
    assert_eq!(outcome.stats.robots_requests as usize, HOSTS + 1);
    for i in [0, HOSTS / 2, HOSTS - 1] {
        assert_eq!(server.hits(&format!("h{i}.trap.test"), "/"), 1);
    }
    let stats = &outcome.stats;
    assert!(
        stats.urls_waited_for_hosts as usize > HOSTS / 2,
        "{} URLs waited for room",
        stats.urls_waited_for_hosts
    );
    assert!(
        stats.host_memory_peak as usize <= bound,
        "the hosts' state peaked at {} bytes, over {bound}",
        stats.host_memory_peak
    );
    // A resting host with no rules weighs some 200 bytes; live hosts
    // (8 KiB each until their robots.txt comes) had most of the room until
    // the end, so what is left is mostly the last hosts to finish.
    let held = stats.hosts_held as usize;
    assert!(held <= bound / 200, "{held} hosts held after the crawl");
    assert!(
        held >= 10,
        "{held}: finished hosts are kept while there is room"
    );
}

/// A host's second origin (another port of the same name) accepts
/// connections and never answers: its robots.txt times out and is tried
/// again on its schedule. The first origin's pages do not wait for it
/// (robots.txt and its waits belong to the origin; politeness, with its
/// two slots, to the host).
#[test]
fn a_stalled_origin_does_not_hold_up_its_hosts_other_origin() {
    // Accepts, then holds every connection without a byte.
    let stalled = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let stalled_port = stalled.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in stalled.incoming().flatten() {
            held.push(conn);
        }
    });
    let fetched: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let server = serve({
        let fetched = fetched.clone();
        move |req| {
            if req.path == "/robots.txt" {
                return None;
            }
            fetched.lock().unwrap().push(Instant::now());
            let next: Vec<String> = match req.path.strip_prefix("/p/").map(str::parse::<u32>) {
                None => vec![
                    format!("http://a.test:{stalled_port}/never"),
                    "/p/0".to_string(),
                ],
                Some(Ok(i)) if i < 30 => vec![format!("/p/{}", i + 1)],
                _ => vec![],
            };
            Some(page(&next.iter().map(String::as_str).collect::<Vec<_>>()))
        }
    });
    let port = server.addr().port();
    let mut cfg = settings(&[format!("http://a.test:{port}/")]);
    cfg = polite(cfg);
    for p in [port, stalled_port] {
        cfg = cfg.resolve("a.test", p, vec![std::net::Ipv4Addr::LOCALHOST.into()]);
    }
    let read_timeout = Duration::from_secs(3);
    cfg = cfg.read_timeout(read_timeout);
    cfg = cfg.robots_retries(vec![Duration::from_secs(1)]);
    let started = Instant::now();
    let out = crawl(cfg);
    let took = started.elapsed();
    let fetched = fetched.lock().unwrap();
    // The root and its chain of 31 pages, one after the other.
    assert_eq!(fetched.len(), 32, "{:?}", out.records);
    let last = fetched.iter().max().unwrap().duration_since(started);
    assert!(
        last < read_timeout,
        "the good origin's pages were done {last:?} in, after the stalled robots.txt's time-out"
    );
    assert!(
        took >= read_timeout,
        "the stalled origin was waited for: {took:?}"
    );
    let never = out
        .records
        .iter()
        .find(|r| r.url.ends_with("/never"))
        .expect("the stalled origin's URL is recorded");
    assert_eq!(
        never.error_kind,
        Some(ErrorKind::RobotsUnavailable),
        "{never:?}"
    );
}
