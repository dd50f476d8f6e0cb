//! Concurrent misses for one name share one lookup: the lookup's answer
//! once known, the callers waiting for it, and the guard that answers them
//! even when the lookup task is cancelled.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use super::{Answer, Inner};

/// A lookup under way: its answer once known, and the callers waiting.
#[derive(Default)]
pub(super) struct Pending {
    answer: RefCell<Option<Answer>>,
    waiters: RefCell<Vec<Waker>>,
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
/// or cancelled) removes the lookup from the in-flight map and wakes the
/// waiters, so no caller waits forever.
pub(super) struct Completion {
    pub(super) inner: Rc<Inner>,
    pub(super) name: String,
    pub(super) pending: Rc<Pending>,
}

impl Completion {
    pub(super) fn finish(self, answer: Answer, keep: Duration) {
        self.inner.store(&self.name, answer.clone(), keep);
        *self.pending.answer.borrow_mut() = Some(answer);
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
        let waiters = std::mem::take(&mut *self.pending.waiters.borrow_mut());
        for waker in waiters {
            waker.wake();
        }
    }
}
