//! The crawl's budgets (`--max-pages`, `--max-bytes`, `--max-time`, and
//! `--min-free-disk`, free space as a budget): shared by every shard,
//! spent with atomics, and the first limit reached stops the crawl
//! cleanly: no new fetch starts, the running ones finish. Free space is
//! asked of the file systems (`statvfs`) at most once a second.
//!
//! Not the stop itself (each shard's watch sees [`Budget::reached`] and
//! stops like an interrupt, minus the grace cut) and not the seen-set's or
//! frontier's memory bounds.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::time::{Duration, Instant};

use crate::config::budget::{Limits, Spent};

/// A crawl's budgets as they are spent.
#[derive(Debug)]
pub(crate) struct Budget {
    limits: Limits,
    deadline: Option<Instant>,
    /// Page fetches granted.
    pages: AtomicU64,
    /// Body bytes received.
    bytes: AtomicU64,
    /// The first budget spent ([`Spent::code`]), 0 while none is.
    spent: AtomicU8,
    /// With `--min-free-disk`: where the crawl writes.
    disk: Option<Disk>,
}

/// The free space watched: the directories written to, and when they are
/// next asked.
#[derive(Debug)]
struct Disk {
    min: u64,
    dirs: Vec<PathBuf>,
    start: Instant,
    /// Milliseconds from `start` before which no one asks again.
    next: AtomicU64,
}

/// How often free space is asked.
const DISK_INTERVAL: Duration = Duration::from_secs(1);

impl Disk {
    /// Whether a directory's file system has less than `min` bytes free
    /// for us; asked by one caller at most once a [`DISK_INTERVAL`].
    fn low(&self) -> bool {
        let now = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        let next = self.next.load(Ordering::Relaxed);
        let interval = u64::try_from(DISK_INTERVAL.as_millis()).unwrap_or(u64::MAX);
        if now < next
            || self
                .next
                .compare_exchange(
                    next,
                    now.saturating_add(interval),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                )
                .is_err()
        {
            return false;
        }
        self.dirs.iter().any(|dir| {
            rustix::fs::statvfs(dir)
                .is_ok_and(|fs| fs.f_bavail.saturating_mul(fs.f_frsize) < self.min)
        })
    }
}

impl Budget {
    /// Budgets counted from `start`.
    pub(crate) fn new(limits: Limits, start: Instant) -> Self {
        Budget {
            limits,
            deadline: limits.time.and_then(|t| start.checked_add(t)),
            pages: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            spent: AtomicU8::new(0),
            disk: None,
        }
    }

    /// Watch the free space of the file systems of `dirs` (the
    /// directories the crawl writes in), if `--min-free-disk` is set.
    pub(crate) fn watching(mut self, dirs: Vec<PathBuf>) -> Self {
        self.disk = self.limits.free_disk.map(|min| Disk {
            min,
            dirs,
            start: Instant::now(),
            next: AtomicU64::new(0),
        });
        self
    }

    /// Budgets of a resumed crawl: earlier runs fetched `pages` pages,
    /// received `bytes` bytes and took `elapsed` of the time; this run
    /// starts at `start`. A budget already spent stops it at once.
    pub(crate) fn resumed(
        limits: Limits,
        start: Instant,
        pages: u64,
        bytes: u64,
        elapsed: Duration,
    ) -> Self {
        let budget = Budget {
            limits,
            deadline: limits
                .time
                .map(|t| t.saturating_sub(elapsed))
                .and_then(|t| start.checked_add(t)),
            pages: AtomicU64::new(pages),
            bytes: AtomicU64::new(0),
            spent: AtomicU8::new(0),
            disk: None,
        };
        if limits.pages.is_some_and(|max| pages >= max) {
            budget.spend(Spent::Pages);
        }
        budget.add_bytes(bytes);
        budget
    }

    /// When `--max-time` is up, if it is set.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Page fetches granted so far (earlier runs' included).
    pub(crate) fn pages(&self) -> u64 {
        self.pages.load(Ordering::Relaxed)
    }

    /// Body bytes received so far, when `--max-bytes` counts them.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// May one more page be fetched? Each `true` is one page of the page
    /// budget; `false` once any budget is spent (and from then on).
    pub(crate) fn take_page(&self) -> bool {
        if self.reached().is_some() {
            return false;
        }
        let Some(max) = self.limits.pages else {
            return true;
        };
        let before = self.pages.fetch_add(1, Ordering::Relaxed);
        if before >= max {
            self.spend(Spent::Pages);
            return false;
        }
        if before + 1 == max {
            // The last page is granted; nothing after it will be.
            self.spend(Spent::Pages);
        }
        true
    }

    /// A page [`Budget::take_page`] granted was not fetched after all (held
    /// back for its address, `--per-ip`): it does not count. Unless a
    /// budget is spent by now: the crawl is stopping, and the page stays
    /// queued as any other.
    pub(crate) fn give_back_page(&self) {
        if self.limits.pages.is_some() && self.spent.load(Ordering::Relaxed) == 0 {
            self.pages.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// `n` body bytes were received.
    pub(crate) fn add_bytes(&self, n: u64) {
        let Some(max) = self.limits.bytes else {
            return;
        };
        let total = self.bytes.fetch_add(n, Ordering::Relaxed).saturating_add(n);
        if total >= max {
            self.spend(Spent::Bytes);
        }
    }

    /// The budget spent first, if any; looks at the clock.
    pub(crate) fn reached(&self) -> Option<Spent> {
        if let Some(spent) = Spent::from_code(self.spent.load(Ordering::Relaxed)) {
            return Some(spent);
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.spend(Spent::Time);
            return Spent::from_code(self.spent.load(Ordering::Relaxed));
        }
        if self.disk.as_ref().is_some_and(Disk::low) {
            self.spend(Spent::Disk);
            return Spent::from_code(self.spent.load(Ordering::Relaxed));
        }
        None
    }

    /// The first budget spent stays the reason.
    fn spend(&self, spent: Spent) {
        let _ = self
            .spent
            .compare_exchange(0, spent.code(), Ordering::Relaxed, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_budget_grants_exactly_its_pages_then_says_so() {
        let b = Budget::new(
            Limits {
                pages: Some(3),
                ..Limits::default()
            },
            Instant::now(),
        );
        assert_eq!(b.reached(), None);
        assert!(b.take_page() && b.take_page());
        assert_eq!(b.reached(), None);
        assert!(b.take_page(), "the third");
        assert_eq!(b.reached(), Some(Spent::Pages), "spent with the last page");
        assert!(!b.take_page());
    }

    #[test]
    fn bytes_and_time_stop_new_pages_and_the_first_reason_stays() {
        let b = Budget::new(
            Limits {
                bytes: Some(100),
                time: Some(Duration::ZERO),
                ..Limits::default()
            },
            Instant::now() + Duration::from_secs(3600),
        );
        b.add_bytes(60);
        assert_eq!(b.reached(), None);
        b.add_bytes(60);
        assert_eq!(b.reached(), Some(Spent::Bytes));
        assert!(!b.take_page());

        let late = Budget::new(
            Limits {
                time: Some(Duration::from_millis(1)),
                ..Limits::default()
            },
            Instant::now() - Duration::from_secs(1),
        );
        assert_eq!(late.reached(), Some(Spent::Time));
        late.add_bytes(u64::MAX);
        assert_eq!(late.reached(), Some(Spent::Time), "the first reason");
    }

    #[test]
    fn a_resumed_budget_counts_what_earlier_runs_spent() {
        let limits = Limits {
            pages: Some(5),
            time: Some(Duration::from_secs(10)),
            ..Limits::default()
        };
        let now = Instant::now();
        let b = Budget::resumed(limits, now, 3, 0, Duration::from_secs(4));
        assert!(b.take_page() && b.take_page(), "two pages left of five");
        assert_eq!(b.reached(), Some(Spent::Pages));
        assert_eq!(b.pages(), 5);
        let spent = Budget::resumed(limits, now, 5, 0, Duration::ZERO);
        assert_eq!(spent.reached(), Some(Spent::Pages), "spent before it began");
        let late = Budget::resumed(limits, now, 0, 0, Duration::from_secs(11));
        assert_eq!(late.reached(), Some(Spent::Time));
    }

    #[test]
    fn no_limits_never_stop() {
        let b = Budget::new(Limits::default(), Instant::now());
        b.add_bytes(u64::MAX);
        assert!((0..1000).all(|_| b.take_page()));
        assert_eq!(b.reached(), None);
    }

    #[test]
    fn too_little_free_disk_is_a_spent_budget_and_enough_is_not() {
        let dirs = vec![std::env::temp_dir()];
        let limits = |min| Limits {
            free_disk: Some(min),
            ..Limits::default()
        };
        let low = Budget::new(limits(u64::MAX), Instant::now()).watching(dirs.clone());
        assert_eq!(low.reached(), Some(Spent::Disk));
        assert!(!low.take_page());
        let enough = Budget::new(limits(0), Instant::now()).watching(dirs);
        assert_eq!(enough.reached(), None);
        assert!(enough.take_page());
        // A directory that is not there (yet) is not a full disk.
        let missing = Budget::new(limits(u64::MAX), Instant::now())
            .watching(vec![std::env::temp_dir().join("ringcrawl-no-such-dir")]);
        assert_eq!(missing.reached(), None);
    }
}
