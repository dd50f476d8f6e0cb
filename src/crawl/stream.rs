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
//! Read it as an [`Iterator`] on a thread of its own (each `next` waits),
//! or, turned [`into_stream`](PageStream::into_stream), as a [`Stream`] in
//! an async runtime (tokio, smol: the task waits, not the thread). The
//! channel is flume's, already in the tree through glommio: std's channel
//! has no async side.
//!
//! Not the pages themselves (`super::page`).

use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use flume::r#async::RecvStream;
use flume::{Receiver, Sender};
use futures_lite::Stream;

use super::page::OwnedPage;

/// The pages of a crawl as they arrive, for another thread (an
/// [`Iterator`]) or an async task ([`PageStream::into_stream`]); either
/// ends when the crawl has ended and every page was taken. Made by
/// [`Crawler::pages`](crate::Crawler::pages).
///
/// Dropping it stops the delivery, not the crawl.
pub struct PageStream {
    pages: Receiver<OwnedPage>,
    queued: Arc<AtomicUsize>,
}

impl std::fmt::Debug for PageStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageStream")
            .field("pages", &self.pages.len())
            .field("queued_bytes", &self.queued_bytes())
            .finish()
    }
}

/// The shards' end of a [`PageStream`].
#[derive(Debug, Clone)]
pub(crate) struct PageSender {
    pages: Sender<OwnedPage>,
    queued: Arc<AtomicUsize>,
    budget: usize,
}

/// A stream and its sender, `budget` bytes of pages queued at most before
/// the crawl is held back.
pub(crate) fn page_stream(budget: usize) -> (PageSender, PageStream) {
    let (tx, rx) = flume::unbounded();
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
    pub(crate) fn send(&self, page: OwnedPage) {
        let weight = page.weight();
        self.queued.fetch_add(weight, Ordering::Relaxed);
        if self.pages.send(page).is_err() {
            self.queued.fetch_sub(weight, Ordering::Relaxed);
        }
    }

    /// The consumer has more than the budget waiting: start no new fetch.
    pub(crate) fn behind(&self) -> bool {
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

impl PageStream {
    /// The same pages as a [`Stream`] (`futures::Stream`), for a task of
    /// an async runtime: waiting for a page suspends the task, not its
    /// thread. `Send`, so it can move into a spawned task.
    pub fn into_stream(self) -> impl Stream<Item = OwnedPage> + Send + Unpin + 'static {
        AsyncPages {
            stream: self.pages.into_stream(),
            queued: self.queued,
        }
    }
}

/// [`PageStream::into_stream`].
struct AsyncPages {
    stream: RecvStream<'static, OwnedPage>,
    queued: Arc<AtomicUsize>,
}

impl Stream for AsyncPages {
    type Item = OwnedPage;

    /// The next page, or a wake-up when one comes; `None` once the crawl
    /// has ended.
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<OwnedPage>> {
        let this = &mut *self;
        match Pin::new(&mut this.stream).poll_next(cx) {
            Poll::Ready(Some(page)) => {
                this.queued.fetch_sub(page.weight(), Ordering::Relaxed);
                Poll::Ready(Some(page))
            }
            other => other,
        }
    }
}
