//! Crawls the builder refuses, run on the configuration it made: what the
//! engine does with what only a bug or a later caller could hand it.
//! Beside the builder, as no public call makes such a crawl.

use std::sync::atomic::Ordering;
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::Duration;

use super::Crawler;
use crate::config::Config;
use crate::crawl::run::{run, Outcome};
use crate::job::ErrorKind;

/// Crawl `config` to its end with no hooks, interrupted if it takes more
/// than a minute (a hang fails the test, it does not hang it).
fn crawl_to_its_end(config: Config) -> Outcome {
    let interrupt = super::Interrupt::new();
    let flag = interrupt.flag();
    let (returned, finished) = channel::<()>();
    let watchdog = std::thread::spawn(move || {
        let hung = matches!(
            finished.recv_timeout(Duration::from_secs(60)),
            Err(RecvTimeoutError::Timeout)
        );
        if hung {
            interrupt.interrupt();
        }
        hung
    });
    let outcome = run(config, flag.clone()).unwrap();
    drop(returned);
    assert!(!watchdog.join().unwrap(), "the crawl hung");
    assert!(!flag.load(Ordering::Relaxed));
    assert!(!outcome.aborted, "crawl must end by running out of work");
    assert_eq!(
        outcome.records.len() as u64,
        outcome.stats.urls,
        "one record per URL"
    );
    outcome
}

#[test]
fn roots_that_fail_at_once_end_the_crawl() {
    // No I/O at all before the error: the fetch task ends within its first
    // poll. On one core and on two. (The builder refuses such roots; the
    // engine records them.)
    for cores in [1, 2] {
        let crawler = Crawler::builder()
            .roots(["http://127.0.0.1:9/", "http://127.0.0.2:9/"])
            .keep_records(true)
            .cores(cores)
            .max_tasks(16)
            .per_host(16)
            .obey_robots(false)
            .sitemaps(false)
            .connect_timeout(Duration::from_secs(2))
            .read_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap();
        let mut config = crawler.config.clone();
        config.roots = ["ftp://127.0.0.1:9/", "ftp://127.0.0.2:9/"]
            .iter()
            .map(|u| url::Url::parse(u).unwrap())
            .collect();
        let outcome = crawl_to_its_end(config);
        let kinds: Vec<_> = outcome.records.iter().map(|r| r.error_kind).collect();
        assert_eq!(
            kinds,
            [Some(ErrorKind::UnsupportedScheme); 2],
            "{cores} cores"
        );
    }
}
