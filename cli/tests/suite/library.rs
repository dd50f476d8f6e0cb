//! The crate as a library user sees it: only the public API (`Crawler`,
//! its builder, `Page`, `PageStream`, `Report`), against the synthetic
//! site on loopback. No internal module is touched here.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ringcrawl::Crawler;
use ringcrawl_site::server::{Reply, Server};
use ringcrawl_site::synth::{SiteSpec, SynthSite};

fn site(spec: SiteSpec) -> (Arc<SynthSite>, Server, String) {
    let site = Arc::new(SynthSite::new(spec));
    let server = Server::start(site.clone().handler()).expect("site starts");
    let base = format!("http://{}", server.addr());
    (site, server, base)
}

#[test]
fn a_handler_sees_every_page_with_the_body_the_site_served() {
    let (site, server, base) = site(SiteSpec {
        pages: 300,
        ..SiteSpec::default()
    });
    type Seen = BTreeMap<String, (Option<u16>, Vec<u8>)>;
    let seen: Arc<Mutex<Seen>> = Arc::default();
    let sink = seen.clone();
    let report = Crawler::builder()
        .root(format!("{base}/"))
        .max_tasks(20)
        .on_page(move |page| {
            let previous = sink.lock().unwrap().insert(
                page.url().to_string(),
                (page.status(), page.body().to_vec()),
            );
            assert!(previous.is_none(), "{} arrived twice", page.url());
        })
        .build()
        .unwrap()
        .run()
        .unwrap();

    let seen = seen.lock().unwrap();
    // The site's URLs and the root's guessed sitemap (the synthetic site
    // has none: a 404, compared below like any answer).
    let expected: BTreeSet<String> = site
        .expected_paths()
        .into_iter()
        .chain(["/sitemap.xml".to_string()])
        .map(|p| format!("{base}{p}"))
        .collect();
    let urls: BTreeSet<String> = seen.keys().cloned().collect();
    assert_eq!(urls, expected, "every URL once, nothing else");
    assert_eq!(report.urls(), expected.len() as u64);
    let authority = server.addr().to_string();
    let mut pages = 0;
    for (url, (status, body)) in seen.iter() {
        let path = url.strip_prefix(&base).unwrap();
        if let Reply::Http {
            status: served,
            body: served_body,
            ..
        } = site.respond_to(&authority, path)
        {
            assert_eq!(*status, Some(served), "{url}");
            if served == 200 {
                assert_eq!(body, &served_body, "{url}: the body as served");
                pages += 1;
            }
        }
    }
    assert!(pages >= 300, "{pages} bodies compared");
}

#[test]
fn a_handler_per_shard_keeps_state_that_is_not_send() {
    let (site, _server, base) = site(SiteSpec {
        pages: 200,
        ..SiteSpec::default()
    });
    let total = Arc::new(AtomicU64::new(0));
    let sum = total.clone();
    Crawler::builder()
        .root(format!("{base}/"))
        .cores(2)
        .on_page_per_shard(move |_shard| {
            // Rc: !Send state, counted on the shard's thread, added up
            // when the shard drops its handler.
            struct Tally(Rc<Cell<u64>>, Arc<AtomicU64>);
            impl Drop for Tally {
                fn drop(&mut self) {
                    self.1.fetch_add(self.0.get(), Ordering::Relaxed);
                }
            }
            let tally = Tally(Rc::new(Cell::new(0)), sum.clone());
            move |_page: &ringcrawl::Page<'_>| tally.0.set(tally.0.get() + 1)
        })
        .build()
        .unwrap()
        .run()
        .unwrap();
    assert_eq!(
        total.load(Ordering::Relaxed),
        site.expected_paths().len() as u64 + 1,
        "every URL and the guessed /sitemap.xml"
    );
}

#[test]
fn a_follow_rule_limits_the_crawl() {
    let (_site, _server, base) = site(SiteSpec {
        pages: 300,
        ..SiteSpec::default()
    });
    let asked = Arc::new(AtomicU64::new(0));
    let count = asked.clone();
    let report = Crawler::builder()
        .root(format!("{base}/"))
        .follow(move |link, page| {
            count.fetch_add(1, Ordering::Relaxed);
            assert!(!page.links().is_empty());
            link.path().starts_with("/static/")
        })
        .keep_records(true)
        .build()
        .unwrap()
        .run()
        .unwrap();
    let urls: Vec<&str> = report.records().iter().map(|r| r.url.as_str()).collect();
    assert!(urls.len() > 1, "the root's stylesheets were followed");
    for url in &urls {
        let path = url.strip_prefix(base.as_str()).unwrap();
        // The root's guessed sitemap is seeded with it, not a link.
        assert!(
            path == "/" || path == "/sitemap.xml" || path.starts_with("/static/"),
            "{url}"
        );
    }
    assert!(asked.load(Ordering::Relaxed) > urls.len() as u64);
}

#[test]
fn an_interrupt_handle_stops_the_crawl_from_a_handler() {
    let (_site, _server, base) = site(SiteSpec {
        pages: 2000,
        delay: ringcrawl_site::synth::Delay::Fixed(Duration::from_millis(5)),
        ..SiteSpec::default()
    });
    let crawler = Crawler::builder()
        .root(format!("{base}/"))
        .max_tasks(4)
        .build();
    let crawler = crawler.unwrap();
    let stop = crawler.interrupt_handle();
    let seen = Arc::new(AtomicU64::new(0));
    let report = {
        let first = seen.clone();
        // The handle is Send + Clone: here it goes to another thread.
        std::thread::spawn(move || {
            while first.load(Ordering::Relaxed) == 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
            stop.interrupt();
        });
        let mut crawler = crawler;
        let pages = crawler.pages(1 << 20);
        let running = crawler.spawn();
        for _ in pages {
            seen.fetch_add(1, Ordering::Relaxed);
        }
        running.join().unwrap().unwrap()
    };
    assert!(report.interrupted());
    assert!(report.urls() < 2000, "{} URLs", report.urls());
}

#[test]
fn bad_settings_name_the_setting() {
    let e = Crawler::builder()
        .root("http://127.0.0.1/")
        .max_tasks(0)
        .build()
        .unwrap_err();
    assert_eq!(e.setting(), ringcrawl::Setting::MaxTasks);
    let e = Crawler::builder().root("ftp://x/").build().unwrap_err();
    assert_eq!(e.setting(), ringcrawl::Setting::Root);
    let e = Crawler::builder()
        .root("http://x/")
        .exclude("(")
        .build()
        .unwrap_err();
    assert_eq!(e.setting(), ringcrawl::Setting::Exclude);
    assert!(!e.to_string().contains('\n'));
    let e = Crawler::builder()
        .root("http://x/")
        .timeout(Duration::ZERO)
        .build()
        .unwrap_err();
    assert_eq!(e.setting(), ringcrawl::Setting::Timeout);
    // Less than 1 MiB a shard: each bucket would be merged to disk every
    // few thousand URLs.
    let e = Crawler::builder()
        .root("http://x/")
        .cores(4)
        .seen_memory(3 << 20)
        .build()
        .unwrap_err();
    assert_eq!(e.setting(), ringcrawl::Setting::SeenMemory);
    assert!(Crawler::builder()
        .root("http://x/")
        .cores(4)
        .seen_memory(4 << 20)
        .build()
        .is_ok());
}

#[test]
fn a_handler_that_panics_ends_the_crawl_instead_of_hanging_it() {
    let (_site, _server, base) = site(SiteSpec {
        pages: 500,
        ..SiteSpec::default()
    });
    let crawler = Crawler::builder()
        .root(format!("{base}/"))
        .cores(2)
        .on_page(|page| {
            if page.url().ends_with("/p/7.html") {
                panic!("a handler fails (expected by the test)");
            }
        })
        .build()
        .unwrap();
    let (done, wait) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(crawler.run().map(|r| (r.aborted(), r.urls())));
    });
    let (aborted, urls) = wait
        .recv_timeout(Duration::from_secs(60))
        .expect("the crawl ends when a shard dies")
        .unwrap();
    assert!(
        aborted,
        "a crawl that lost a shard is aborted ({urls} URLs)"
    );
}

/// A handler that has seen enough stops the crawl from inside: the
/// handle is made before the crawler and a clone moves into the handler.
#[test]
fn a_handler_stops_the_crawl_with_an_interrupt_made_before_it() {
    let (site, _server, base) = site(SiteSpec {
        pages: 2_000,
        ..SiteSpec::default()
    });
    let stop = ringcrawl::Interrupt::new();
    let handle = stop.clone();
    let pages = Arc::new(AtomicU64::new(0));
    let counted = pages.clone();
    let report = Crawler::builder()
        .root(format!("{base}/"))
        .max_tasks(4)
        .interrupt(stop)
        .on_page(move |_page| {
            if counted.fetch_add(1, Ordering::Relaxed) + 1 == 20 {
                handle.interrupt();
            }
        })
        .build()
        .unwrap()
        .run()
        .unwrap();
    assert!(report.interrupted(), "{report:?}");
    assert!(
        report.urls() < site.expected_paths().len() as u64,
        "stopped before the end: {} URLs",
        report.urls()
    );
    assert!(report.urls() >= 20, "{} URLs", report.urls());
}
