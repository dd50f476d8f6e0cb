//! The shards' executor threads: starting them, one shard each, joined by
//! the channel mesh ([`start`]); where they are placed ([`placement`]),
//! the io_uring memory each registers ([`IO_MEMORY`]), what an executor
//! that failed to start was missing ([`executor_hint`]), and the watch that
//! tells the other shards when a shard's thread dies ([`DeathWatch`]). Not
//! what a shard does once started (`crate::crawl::shard`), nor what is done
//! with their results (`finish.rs`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use glommio::channels::channel_mesh::MeshBuilder;
use glommio::{CpuSet, LocalExecutorPoolBuilder, PoolPlacement, PoolThreadHandles};

use crate::config::{available_cpus, Config};
use crate::crawl::error::CrawlError;
use crate::crawl::mesh::{channel_capacity, Batch, Outbox};
use crate::crawl::shard::{Shard, ShardResult, Shared};
use crate::job::Job;

/// Start one executor per shard, each running its shard over `shared`
/// with the roots `seeds` holds for it, the shards joined by a mesh when
/// there are more than one.
pub(super) fn start(
    config: &Arc<Config>,
    shared: &Shared,
    seeds: Arc<Mutex<Vec<Vec<Job>>>>,
) -> Result<PoolThreadHandles<ShardResult>, CrawlError> {
    let shards = config.cores;
    let mesh =
        (shards > 1).then(|| MeshBuilder::<Batch, _>::full(shards, channel_capacity(shards)));
    LocalExecutorPoolBuilder::new(placement(shards, config.pin_threads))
        .name("ringcrawl")
        // Registered buffers serve only DMA file I/O, which only the spill
        // of queues does (WARC files are buffered; the spill's blocks of
        // 256 KiB fall back to plain aligned buffers): glommio's minimum,
        // 64 KiB, not its 10 MiB default. They are pinned, so each byte is
        // resident.
        .io_memory(IO_MEMORY)
        .on_all_shards({
            let (config, shared) = (config.clone(), shared.clone());
            move || async move {
                // If this thread dies before the shard returns, the others
                // stop instead of waiting for it forever.
                let watch = DeathWatch::arm(shared.shard_died.clone());
                let (senders, receivers, id) = match mesh {
                    Some(mesh) => {
                        #[allow(
                            clippy::expect_used,
                            reason = "a shard outside the mesh cannot crawl; its death watch stops the others"
                        )]
                        let (senders, receivers) = mesh.join().await.expect("mesh join");
                        let id = senders.peer_id();
                        (Some(senders), Some(receivers), id)
                    }
                    None => (None, None, 0),
                };
                let roots = seeds
                    .lock()
                    .map(|mut s| s.get_mut(id).map(std::mem::take).unwrap_or_default())
                    .unwrap_or_default();
                let outbox = Outbox::new(senders, config.cores);
                let shard = Shard::new(id, config, shared, outbox);
                let result = shard.run(receivers, roots).await;
                watch.disarm();
                result
            }
        })
        .map_err(|e| CrawlError::Executors(e.to_string()))
}

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
struct DeathWatch;

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
    fn arm(flag: Arc<AtomicBool>) -> DeathWatch {
        ARMED.with(|armed| *armed.borrow_mut() = Some(Raise(flag)));
        DeathWatch
    }

    /// The shard returned: its thread ends normally.
    fn disarm(self) {
        if let Some(raise) = ARMED.with(|armed| armed.borrow_mut().take()) {
            std::mem::forget(raise);
        }
    }
}

/// Bytes of io_uring registered buffers per shard (glommio's minimum).
const IO_MEMORY: usize = 64 << 10;

/// With `pin`, one shard per allowed CPU when there are enough of them;
/// unpinned executors otherwise.
fn placement(shards: usize, pin: bool) -> PoolPlacement {
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
