//! Concurrent misses for one name share one lookup: the lookup's answer
//! once published, the callers waiting for it, and the guard that answers
//! them even when the lookup task is cancelled.
//!
//! A lookup may publish before it ends ([`super::resolution`]: AAAA at
//! once, A after the resolution delay): its callers are answered then, the
//! answer is cached, and a family that comes later is merged into the
//! cached answer only ([`Completion::merge`]); callers that come meanwhile
//! find the cache. The name stays in the in-flight map until the lookup
//! task ends, so no second lookup of it starts while the first still has
//! a question out.

use std::cell::RefCell;
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use super::{Answer, Inner};

/// A lookup under way: its answer once published, and the callers waiting.
#[derive(Default)]
pub(super) struct Pending {
    answer: RefCell<Option<Answer>>,
    waiters: RefCell<Vec<Waker>>,
}

impl Pending {
    fn wake_all(&self) {
        let waiters = std::mem::take(&mut *self.waiters.borrow_mut());
        for waker in waiters {
            waker.wake();
        }
    }
}

/// Waits for a [`Pending`] answer.
pub(super) struct Wait(pub(super) Rc<Pending>);

impl Future for Wait {
    type Output = Answer;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Answer> {
        if let Some(answer) = self.0.answer.borrow().as_ref() {
            return Poll::Ready(answer.clone());
        }
        let mut waiters = self.0.waiters.borrow_mut();
        if !waiters.iter().any(|w| w.will_wake(cx.waker())) {
            waiters.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

/// Owned by the lookup task: publishes its answer, and on drop (finished
/// or cancelled) removes the lookup from the in-flight map and answers any
/// caller still waiting, so no caller waits forever.
pub(super) struct Completion {
    pub(super) inner: Rc<Inner>,
    pub(super) name: String,
    pub(super) pending: Rc<Pending>,
}

impl Completion {
    /// Caches `answer` for `keep` and hands it to the callers; once only
    /// (a second call is ignored).
    pub(super) fn publish(&self, answer: Answer, keep: Duration) {
        if self.pending.answer.borrow().is_some() {
            return;
        }
        self.inner.store(&self.name, answer.clone(), keep);
        *self.pending.answer.borrow_mut() = Some(answer);
        self.pending.wake_all();
    }

    /// Adds the addresses of a family that answered after [`publish`],
    /// valid for `keep`, to the cached answer.
    ///
    /// [`publish`]: Completion::publish
    pub(super) fn merge(&self, ips: &[IpAddr], keep: Duration) {
        let now = Instant::now();
        let expires = now.checked_add(keep).unwrap_or(now);
        self.inner
            .cache
            .borrow_mut()
            .merge(&self.name, ips, expires, now);
    }
}

impl Drop for Completion {
    fn drop(&mut self) {
        {
            let mut answer = self.pending.answer.borrow_mut();
            if answer.is_none() {
                *answer = Some(Err("lookup cancelled".to_string()));
            }
        }
        self.inner.inflight.borrow_mut().remove(&self.name);
        self.pending.wake_all();
    }
}
