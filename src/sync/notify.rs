//! A single-threaded "something changed" signal for tasks of one executor.
//!
//! `notified()` completes at the first `notify_all()` after it was first
//! polled. Because a shard is single-threaded, a task that checks its
//! condition and then awaits `notified()` cannot miss a notification in
//! between. A waiter holds one registered waker however often it is
//! polled, and takes it back when dropped (the dispatcher races waiters
//! against timers in a loop; each lost race drops one). Not for use across
//! threads (it is `!Send`).

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

/// Wake-all notification for tasks on one executor.
#[derive(Debug, Default)]
pub(crate) struct Notify {
    /// Bumped on every `notify_all`; a waiter completes once it changes.
    epoch: Cell<u64>,
    /// Wakers of pending `notified()` futures, by waiter id (a handful at
    /// most: a linear search beats a map).
    waiters: RefCell<Vec<(u64, Waker)>>,
    /// Id of the next waiter to register.
    next_id: Cell<u64>,
}

impl Notify {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Wake every task currently waiting.
    pub(crate) fn notify_all(&self) {
        self.epoch.set(self.epoch.get().wrapping_add(1));
        let waiters = std::mem::take(&mut *self.waiters.borrow_mut());
        for (_, waker) in waiters {
            waker.wake();
        }
    }

    /// Completes at the next `notify_all`.
    pub(crate) fn notified(&self) -> Notified<'_> {
        Notified {
            notify: self,
            epoch: None,
            id: None,
        }
    }
}

/// Future returned by [`Notify::notified`].
pub(crate) struct Notified<'a> {
    notify: &'a Notify,
    /// Epoch seen at the first poll.
    epoch: Option<u64>,
    /// Registration of this waiter's waker, while it has one.
    id: Option<u64>,
}

impl Future for Notified<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let now = self.notify.epoch.get();
        if self.epoch.is_some_and(|epoch| epoch != now) {
            // notify_all took every waker, this one's included.
            self.id = None;
            return Poll::Ready(());
        }
        self.epoch = Some(now);
        let mut waiters = self.notify.waiters.borrow_mut();
        let registered = self
            .id
            .and_then(|id| waiters.iter_mut().find(|(w, _)| *w == id));
        match registered {
            Some((_, waker)) => waker.clone_from(cx.waker()),
            None => {
                let id = self.notify.next_id.get();
                self.notify.next_id.set(id.wrapping_add(1));
                waiters.push((id, cx.waker().clone()));
                drop(waiters);
                self.id = Some(id);
            }
        }
        Poll::Pending
    }
}

impl Drop for Notified<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            let mut waiters = self.notify.waiters.borrow_mut();
            if let Some(at) = waiters.iter().position(|(w, _)| *w == id) {
                waiters.swap_remove(at);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    #[test]
    fn waiter_wakes_on_notify_and_not_before() {
        glommio::LocalExecutorBuilder::new(glommio::Placement::Unbound)
            .io_memory(1 << 20)
            .make()
            .unwrap()
            .run(async {
                let notify = Rc::new(Notify::new());
                let woke = Rc::new(Cell::new(false));
                let task = glommio::spawn_local({
                    let (notify, woke) = (notify.clone(), woke.clone());
                    async move {
                        notify.notified().await;
                        woke.set(true);
                    }
                });
                glommio::yield_if_needed().await;
                glommio::timer::sleep(std::time::Duration::from_millis(5)).await;
                assert!(!woke.get());
                notify.notify_all();
                task.await;
                assert!(woke.get());
            });
    }

    /// The dispatcher races `notified()` against a 1 ms nap in a loop: each
    /// round polls a fresh waiter once and drops it when the nap wins.
    #[test]
    fn waiters_dropped_before_a_notification_leave_nothing_behind() {
        glommio::LocalExecutorBuilder::new(glommio::Placement::Unbound)
            .io_memory(1 << 20)
            .make()
            .unwrap()
            .run(async {
                let notify = Notify::new();
                for _ in 0..1000 {
                    let nap = glommio::timer::sleep(std::time::Duration::from_micros(10));
                    futures_lite::future::or(nap, notify.notified()).await;
                }
                assert_eq!(
                    notify.waiters.borrow().len(),
                    0,
                    "a waker per dropped waiter"
                );
                // A waiter polled many times holds one waker, not one a poll.
                let mut waiter = std::pin::pin!(notify.notified());
                for _ in 0..100 {
                    let polled = futures_lite::future::poll_once(waiter.as_mut()).await;
                    assert!(polled.is_none());
                }
                assert_eq!(notify.waiters.borrow().len(), 1);
                notify.notify_all();
                waiter.await;
            });
    }
}
