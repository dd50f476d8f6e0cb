//! The shards' executor threads: where they are placed ([`placement`]),
//! the io_uring memory each registers ([`IO_MEMORY`]), what an executor
//! that failed to start was missing ([`executor_hint`]), and the watch that
//! tells the other shards when a shard's thread dies ([`DeathWatch`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use glommio::{CpuSet, PoolPlacement};

use crate::config::available_cpus;

/// What to change when a shard's executor could not start for want of
/// locked memory or of io_uring itself (empty otherwise). Since Linux 5.12
/// the rings are not charged to the locked-memory limit, and ringcrawl
/// runs without registered buffers when the limit is small, so the first
/// case is older kernels'.
pub(super) fn executor_hint(error: &str) -> &'static str {
    if error.contains("os error 12") || error.contains("MemLock") {
        " (io_uring could not lock memory for its rings: raise the locked-memory limit, \
         e.g. `ulimit -l 1024`, or `docker run --ulimit memlock=1048576:1048576`)"
    } else if error.contains("os error 38") || error.contains("os error 1)") {
        " (io_uring is not available: Linux 5.8 or later with io_uring enabled is needed; \
         see sysctl kernel.io_uring_disabled, and a container's seccomp profile)"
    } else {
        ""
    }
}

/// Tells the other shards when this shard's thread dies: armed when the
/// shard starts and held by the thread, so its destructor runs when the
/// thread ends, unwinding from a panic included (glommio does not drop a
/// dead executor's tasks, so nothing else would tell the peers, which
/// would wait on it forever).
pub(super) struct DeathWatch;

thread_local! {
    /// The flag to raise if this thread ends while a shard runs on it.
    static ARMED: std::cell::RefCell<Option<Raise>> = const { std::cell::RefCell::new(None) };
}

/// Raises its flag when dropped.
struct Raise(Arc<AtomicBool>);

impl Drop for Raise {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

impl DeathWatch {
    pub(super) fn arm(flag: Arc<AtomicBool>) -> DeathWatch {
        ARMED.with(|armed| *armed.borrow_mut() = Some(Raise(flag)));
        DeathWatch
    }

    /// The shard returned: its thread ends normally.
    pub(super) fn disarm(self) {
        if let Some(raise) = ARMED.with(|armed| armed.borrow_mut().take()) {
            std::mem::forget(raise);
        }
    }
}

/// Bytes of io_uring registered buffers per shard (glommio's minimum).
pub(super) const IO_MEMORY: usize = 64 << 10;

/// With `pin`, one shard per allowed CPU when there are enough of them;
/// unpinned executors otherwise.
pub(super) fn placement(shards: usize, pin: bool) -> PoolPlacement {
    let allowed = available_cpus();
    if !pin || shards > allowed.len() {
        return PoolPlacement::Unbound(shards);
    }
    match CpuSet::online() {
        Ok(online) => {
            let cpus = online.filter(|l| allowed.contains(&l.cpu));
            PoolPlacement::MaxSpread(shards, Some(cpus))
        }
        Err(_) => PoolPlacement::Unbound(shards),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_thread_that_dies_raises_the_flag_and_one_that_returns_does_not() {
        let died = Arc::new(AtomicBool::new(false));
        let flag = died.clone();
        let dying = std::thread::spawn(move || {
            let _watch = DeathWatch::arm(flag);
            panic!("a shard dies (expected by the test)");
        });
        assert!(dying.join().is_err());
        assert!(died.load(Ordering::Acquire), "the peers are told");

        let returned = Arc::new(AtomicBool::new(false));
        let flag = returned.clone();
        std::thread::spawn(move || DeathWatch::arm(flag).disarm())
            .join()
            .unwrap();
        assert!(!returned.load(Ordering::Acquire));
    }
}
