//! A bounded stream of owned pages, for a consumer on another thread: the
//! shards send each page as it arrives, the consumer iterates.
//!
//! Bounded by bytes, not by count, and without ever blocking a shard: a
//! send never waits (a blocked executor would time out its other fetches).
//! Instead the bytes sent and not yet taken are counted, and past the
//! budget [`PageSender::behind`] tells the shards to start no new fetch
//! (the ones running finish and their pages join the queue), exactly as a
//! slow JSONL writer holds the crawl back. So a slow consumer slows the
//! crawl; no page is dropped and the queue stays under the budget plus a
//! page per running fetch.
//!
//! Not the pages themselves (`super::page`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;

use super::page::OwnedPage;

/// The pages of a crawl as they arrive, for another thread; the iterator
/// ends when the crawl has ended and every page was taken. Made by
/// [`Crawler::pages`](crate::Crawler::pages).
///
/// Dropping it stops the delivery, not the crawl.
#[derive(Debug)]
pub struct PageStream {
    pages: Receiver<OwnedPage>,
    queued: Arc<AtomicUsize>,
}

/// The shards' end of a [`PageStream`].
#[derive(Debug, Clone)]
pub struct PageSender {
    pages: Sender<OwnedPage>,
    queued: Arc<AtomicUsize>,
    budget: usize,
}

/// A stream and its sender, `budget` bytes of pages queued at most before
/// the crawl is held back.
pub(crate) fn page_stream(budget: usize) -> (PageSender, PageStream) {
    let (tx, rx) = mpsc::channel();
    let queued = Arc::new(AtomicUsize::new(0));
    (
        PageSender {
            pages: tx,
            queued: queued.clone(),
            budget,
        },
        PageStream { pages: rx, queued },
    )
}

impl PageSender {
    /// Queue a page; never waits. A page for a dropped stream is dropped.
    pub fn send(&self, page: OwnedPage) {
        let weight = page.weight();
        self.queued.fetch_add(weight, Ordering::Relaxed);
        if self.pages.send(page).is_err() {
            self.queued.fetch_sub(weight, Ordering::Relaxed);
        }
    }

    /// The consumer has more than the budget waiting: start no new fetch.
    pub fn behind(&self) -> bool {
        self.queued.load(Ordering::Relaxed) > self.budget
    }
}

impl PageStream {
    /// Bytes of pages sent and not yet taken (as [`Iterator::next`] counts
    /// them: URL, head, body, links and a little more).
    pub fn queued_bytes(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }
}

impl Iterator for PageStream {
    type Item = OwnedPage;

    /// The next page, waiting for it; `None` once the crawl has ended.
    fn next(&mut self) -> Option<OwnedPage> {
        let page = self.pages.recv().ok()?;
        self.queued.fetch_sub(page.weight(), Ordering::Relaxed);
        Some(page)
    }
}
