//! Pure per-shard crawl frontier: the seen-set and the queue of URLs still to
//! fetch, for the hosts this shard owns.
//!
//! It is the chapter's `seen_urls` plus `Queue`: a URL enters at most once
//! for the whole crawl (so redirect chains to the same page coalesce and link
//! cycles end), and is handed out in FIFO order. No I/O, no time, no threads:
//! the shard decides when to ask for the next URL.

use std::collections::{HashSet, VecDeque};

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

/// Seen-set and queue of one shard.
#[derive(Debug, Default)]
pub struct Frontier {
    /// Every URL ever offered to this shard and accepted.
    seen: HashSet<String>,
    /// Accepted URLs not yet handed out.
    queue: VecDeque<Job>,
}

impl Frontier {
    pub fn new() -> Self {
        Self::default()
    }

    /// Accept `job` if its URL was never seen; false for a duplicate.
    pub fn offer(&mut self, job: Job) -> bool {
        if self.seen.contains(&job.url) {
            return false;
        }
        self.seen.insert(job.url.clone());
        self.queue.push_back(job);
        true
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
        let mut f = Frontier::new();
        assert!(f.offer(job("http://a.test/")));
        assert!(!f.offer(job("http://a.test/")));
        assert_eq!(f.pop(), Some(job("http://a.test/")));
        assert!(!f.offer(job("http://a.test/")), "fetched URLs stay seen");
        assert_eq!(f.pop(), None);
    }

    #[test]
    fn urls_come_out_in_the_order_they_went_in() {
        let mut f = Frontier::new();
        for u in ["http://a.test/1", "http://a.test/2", "http://a.test/3"] {
            f.offer(job(u));
        }
        let order: Vec<String> = std::iter::from_fn(|| f.pop()).map(|j| j.url).collect();
        assert_eq!(
            order,
            ["http://a.test/1", "http://a.test/2", "http://a.test/3"]
        );
        assert_eq!((f.queued(), f.seen()), (0, 3));
    }
}
