//! Pure per-shard crawl frontier: the seen-set and the queue of URLs still to
//! fetch, for the hosts this shard owns.
//!
//! It is the chapter's `seen_urls` plus `Queue`: a URL enters at most once
//! for the whole crawl (so redirect chains to the same page coalesce and link
//! cycles end), and is handed out in FIFO order. It also caps the pages
//! accepted per host, a bound on crawler traps that generate endless
//! distinct URLs. No I/O, no time, no threads: the shard decides when to ask
//! for the next URL.
// Network data flows through here: a panic would take down a whole shard.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::unreachable
)]

use std::collections::{HashMap, HashSet, VecDeque};

/// A URL waiting to be fetched, with what it may still do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// Normalised absolute URL (the dedup key).
    pub url: String,
    /// Redirect hops this URL may still start (the chapter's `max_redirect`).
    pub redirects_left: u32,
    /// Links followed from a root to reach it.
    pub depth: u32,
}

/// What became of an offered URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    /// Queued: first time this URL was offered.
    New,
    /// Already seen: dropped.
    Seen,
    /// Its host already has `max_pages_per_host` URLs: dropped.
    HostFull,
}

/// Seen-set and queue of one shard.
#[derive(Debug)]
pub struct Frontier {
    /// Every URL ever accepted by this shard.
    seen: HashSet<String>,
    /// Accepted URLs not yet handed out.
    queue: VecDeque<Job>,
    /// URLs accepted per host.
    per_host: HashMap<String, usize>,
    /// Cap on `per_host` values.
    max_pages_per_host: usize,
}

impl Frontier {
    pub fn new(max_pages_per_host: usize) -> Self {
        Frontier {
            seen: HashSet::new(),
            queue: VecDeque::new(),
            per_host: HashMap::new(),
            max_pages_per_host,
        }
    }

    /// Accept `job` (whose URL has host `host`) unless it was seen or its
    /// host is full.
    pub fn offer(&mut self, job: Job, host: &str) -> Offer {
        if self.seen.contains(&job.url) {
            return Offer::Seen;
        }
        let count = match self.per_host.get_mut(host) {
            Some(count) => count,
            None => self.per_host.entry(host.to_string()).or_insert(0),
        };
        if *count >= self.max_pages_per_host {
            return Offer::HostFull;
        }
        *count += 1;
        self.seen.insert(job.url.clone());
        self.queue.push_back(job);
        Offer::New
    }

    /// Whether `url` was already accepted by this frontier.
    pub fn has_seen(&self, url: &str) -> bool {
        self.seen.contains(url)
    }

    /// The next URL to fetch, oldest first.
    pub fn pop(&mut self) -> Option<Job> {
        self.queue.pop_front()
    }

    /// URLs waiting.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// URLs ever accepted.
    pub fn seen(&self) -> usize {
        self.seen.len()
    }
}

#[cfg(test)]
#[allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]
mod tests {
    use super::*;

    fn job(url: &str) -> Job {
        Job {
            url: url.into(),
            redirects_left: 10,
            depth: 0,
        }
    }

    #[test]
    fn duplicate_url_is_refused_even_after_it_was_fetched() {
        let mut f = Frontier::new(100);
        assert_eq!(f.offer(job("http://a.test/"), "a.test"), Offer::New);
        assert_eq!(f.offer(job("http://a.test/"), "a.test"), Offer::Seen);
        assert_eq!(f.pop(), Some(job("http://a.test/")));
        assert_eq!(
            f.offer(job("http://a.test/"), "a.test"),
            Offer::Seen,
            "fetched URLs stay seen"
        );
        assert_eq!(f.pop(), None);
    }

    #[test]
    fn urls_come_out_in_the_order_they_went_in() {
        let mut f = Frontier::new(100);
        for u in ["http://a.test/1", "http://a.test/2", "http://a.test/3"] {
            f.offer(job(u), "a.test");
        }
        let order: Vec<String> = std::iter::from_fn(|| f.pop()).map(|j| j.url).collect();
        assert_eq!(
            order,
            ["http://a.test/1", "http://a.test/2", "http://a.test/3"]
        );
        assert_eq!((f.queued(), f.seen()), (0, 3));
    }

    #[test]
    fn a_host_past_its_page_cap_is_refused_but_others_are_not() {
        let mut f = Frontier::new(2);
        assert_eq!(f.offer(job("http://trap.test/1"), "trap.test"), Offer::New);
        assert_eq!(f.offer(job("http://trap.test/2"), "trap.test"), Offer::New);
        assert_eq!(
            f.offer(job("http://trap.test/3"), "trap.test"),
            Offer::HostFull
        );
        assert_eq!(
            f.offer(job("http://other.test/1"), "other.test"),
            Offer::New
        );
        assert!(!f.has_seen("http://trap.test/3"));
    }
}
