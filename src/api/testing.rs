//! What the library's own crawl tests share with the suite's
//! (cli/tests/suite/common/mod.rs, which cannot be a dependency here: it
//! uses this crate as a dependent does): the suite's settings and its hang
//! limit. Tests only.

use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::Duration;

use super::{Crawler, CrawlerBuilder, Interrupt};

/// A crawl still running after this long has hung: it is interrupted and
/// the test fails (the suite's `HANG_LIMIT`).
pub(crate) const HANG_LIMIT: Duration = Duration::from_secs(120);

/// The suite's settings for a crawl of `roots`: two shards, 16 fetches,
/// no robots.txt or sitemaps, short timeouts, records kept.
pub(crate) fn settings<S: AsRef<str>>(roots: &[S]) -> CrawlerBuilder {
    Crawler::builder()
        .roots(roots.iter().map(|r| r.as_ref().to_string()))
        .keep_records(true)
        .cores(2)
        .max_tasks(16)
        .per_host(16)
        .obey_robots(false)
        .sitemaps(false)
        .connect_timeout(Duration::from_secs(2))
        .read_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(10))
}

/// Run `crawl`, interrupting it through `interrupt` if it takes longer
/// than [`HANG_LIMIT`]; a hang fails the test instead of hanging it.
pub(crate) fn within_hang_limit<T>(interrupt: Interrupt, crawl: impl FnOnce() -> T) -> T {
    let (returned, finished) = channel::<()>();
    let watchdog = std::thread::spawn(move || {
        // Disconnected: the crawl returned; Timeout: it did not.
        let hung = matches!(
            finished.recv_timeout(HANG_LIMIT),
            Err(RecvTimeoutError::Timeout)
        );
        if hung {
            interrupt.interrupt();
        }
        hung
    });
    let outcome = crawl();
    drop(returned);
    assert!(
        !watchdog.join().unwrap(),
        "crawl hung: interrupted after {HANG_LIMIT:?}"
    );
    outcome
}
