//! The shard's spill task: carries out the frontier's [`SpillIo`] requests
//! on this shard's segment files (`{dir}/shard-{id}/spill-{n}`, made on
//! the first write) with glommio's DMA I/O, at most [`IN_FLIGHT`] at once,
//! and hands the completions back to the frontier. The frontier decides
//! everything (what to write where, what to read, which file may go); this
//! is the thin I/O layer under it.
//!
//! Nothing is dropped silently:
//!
//! - A write that fails gives its bytes back to the frontier, which keeps
//!   them in RAM and seals no more tails until they are written. The write
//!   is tried again after a back-off (doubling from [`RETRY_FIRST`] up to
//!   [`RETRY_MAX`]), at most [`RETRIES`] times in a row: a full disk that
//!   is cleaned up, or a passing I/O error, costs a pause, not the crawl.
//!   Meanwhile, once the queued URLs in RAM pass the frontier's bound, the
//!   dispatcher starts no fetch (`Frontier::spill_held_back`): discovery
//!   pauses, so RAM stays near the bound instead of growing with every
//!   page. When the retries run out the spill's disk is taken as gone:
//!   the crawl stops with an error naming it (the exit code says so), the
//!   fetched pages' records written; with `--state` every queued URL is in
//!   a journal and a resume fetches it. Crawling on in RAM would only move
//!   the failure to an out-of-memory kill, which saves nothing.
//! - A read that fails (or a chunk that does not decode: the chunks carry
//!   a CRC) loses the chunk's URLs. They are counted out of the crawl's
//!   outstanding count (or the crawl would wait for them for ever) and in
//!   the report's `spill_lost`, and they are an error of the crawl: it
//!   goes on with the rest, and ends with the error (exit code 1). In a
//!   cluster crawl the node leaves instead, so the partitions' next owners
//!   claim the URLs from their streams.
//!
//! The crawl's spill directory is made by `crawl::run` before the shards
//! start and removed when every shard is done.

use std::cell::{Cell, RefCell};
use std::path::PathBuf;
use std::rc::Rc;
use std::time::{Duration, Instant};

use foldhash::{HashMap, HashMapExt};
use glommio::io::{DmaFile, OpenOptions};

use crate::crawl::frontier::{Extent, SpillIo};
use crate::crawl::seen::run;
use crate::sync::notify::Notify;

use super::Shard;

/// I/O requests of the spill in flight at most, per shard.
const IN_FLIGHT: usize = 16;

/// Failed writes tried again in a row at most before the crawl stops.
const RETRIES: u32 = 8;
/// The first wait before a failed write is tried again; each next one is
/// twice as long, up to [`RETRY_MAX`] (all eight: some 7 s).
const RETRY_FIRST: Duration = Duration::from_millis(50);
const RETRY_MAX: Duration = Duration::from_secs(2);

/// How long to wait before retry number `tries` (from 0).
fn backoff(tries: u32) -> Duration {
    RETRY_FIRST
        .saturating_mul(1u32 << tries.min(16))
        .min(RETRY_MAX)
}

/// The spill task's own state.
struct Files {
    /// This shard's directory of segment files, once made.
    dir: RefCell<Option<PathBuf>>,
    open: RefCell<HashMap<u32, Rc<DmaFile>>>,
    in_flight: Cell<usize>,
    done: Notify,
    /// Retries of failed writes in a row so far, and when the next is due.
    retries: Cell<u32>,
    retry_at: Cell<Option<Instant>>,
}

impl Shard {
    /// Carry out the frontier's spill I/O until the shard stops, then wait
    /// for what is in flight.
    pub(super) async fn spill(self: Rc<Self>) {
        let files = Rc::new(Files {
            dir: RefCell::new(None),
            open: RefCell::new(HashMap::new()),
            in_flight: Cell::new(0),
            done: Notify::new(),
            retries: Cell::new(0),
            retry_at: Cell::new(None),
        });
        loop {
            if self.stopping.get() {
                break;
            }
            if !self.frontier.borrow().spill_failing() {
                files.retries.set(0);
            }
            if files.retry_at.get().is_some_and(|at| at <= Instant::now()) {
                files.retry_at.set(None);
                self.frontier.borrow_mut().retry_spill();
            }
            if files.in_flight.get() >= IN_FLIGHT {
                files.done.notified().await;
                continue;
            }
            let io = self.frontier.borrow_mut().spill_io();
            let Some(io) = io else {
                let woken =
                    futures_lite::future::or(self.changed.notified(), files.done.notified());
                match files.retry_at.get() {
                    Some(at) => {
                        let nap =
                            glommio::timer::sleep(at.saturating_duration_since(Instant::now()));
                        futures_lite::future::or(woken, nap).await;
                    }
                    None => woken.await,
                }
                continue;
            };
            match io {
                SpillIo::Write {
                    segment,
                    offset,
                    bytes,
                } => match self.segment(&files, segment).await {
                    Ok(file) => {
                        let write = self
                            .clone()
                            .write(files.clone(), file, segment, offset, bytes);
                        self.start(&files, write);
                    }
                    Err(e) => {
                        let error = format!("opening segment {segment}: {e}");
                        self.write_failed(&files, segment, offset, bytes, error);
                    }
                },
                SpillIo::Read { host, at } => {
                    let file = files.open.borrow().get(&at.segment).cloned();
                    match file {
                        Some(file) => self.start(&files, self.clone().read(file, host, at)),
                        None => {
                            let error = format!("segment {} is not open", at.segment);
                            self.frontier.borrow_mut().spill_read(&host, at, Err(error));
                            self.spilled();
                        }
                    }
                }
                SpillIo::Remove { segment } => {
                    let file = files.open.borrow_mut().remove(&segment);
                    if let Some(file) = file {
                        self.start(&files, async move {
                            if let Err(e) = file.remove().await {
                                log::warn!("spill: removing segment {segment}: {e}");
                            }
                        });
                    }
                }
            }
        }
        while files.in_flight.get() > 0 {
            files.done.notified().await;
        }
        let open: Vec<Rc<DmaFile>> = files.open.borrow_mut().drain().map(|(_, f)| f).collect();
        for file in open {
            let _ = file.close_rc().await;
        }
    }

    /// Run `op` in a task of its own, counted in flight.
    fn start(&self, files: &Rc<Files>, op: impl std::future::Future<Output = ()> + 'static) {
        files.in_flight.set(files.in_flight.get() + 1);
        let files = files.clone();
        glommio::spawn_local(async move {
            op.await;
            files.in_flight.set(files.in_flight.get().saturating_sub(1));
            files.done.notify_all();
        })
        .detach();
    }

    /// The open file of `segment`, created (with this shard's directory)
    /// if need be.
    async fn segment(&self, files: &Files, segment: u32) -> glommio::Result<Rc<DmaFile>, ()> {
        if let Some(file) = files.open.borrow().get(&segment) {
            return Ok(file.clone());
        }
        let dir = files.dir.borrow().clone();
        let dir = match dir {
            Some(dir) => dir,
            None => {
                let dir = self.spill_dir.join(format!("shard-{}", self.id));
                run::create_dir_all(&dir).await?;
                *files.dir.borrow_mut() = Some(dir.clone());
                dir
            }
        };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .dma_open(dir.join(format!("spill-{segment}")))
            .await?;
        let file = Rc::new(file);
        files.open.borrow_mut().insert(segment, file.clone());
        Ok(file)
    }

    async fn write(
        self: Rc<Self>,
        files: Rc<Files>,
        file: Rc<DmaFile>,
        segment: u32,
        offset: u64,
        bytes: Vec<u8>,
    ) {
        let mut buf = file.alloc_dma_buffer(bytes.len());
        buf.as_bytes_mut().copy_from_slice(&bytes);
        let result = match file.write_at(buf, offset).await {
            Ok(n) if n == bytes.len() => Ok(()),
            Ok(n) => Err(format!("short write ({n} of {} bytes)", bytes.len())),
            Err(e) => Err(e.to_string()),
        };
        match result {
            Ok(()) => {
                self.frontier
                    .borrow_mut()
                    .spill_written(segment, offset, Ok(()));
                self.spilled();
            }
            Err(e) => {
                let error = format!("writing segment {segment}: {e}");
                self.write_failed(&files, segment, offset, bytes, error);
            }
        }
    }

    /// A write of the spill failed: its bytes go back to the frontier (in
    /// RAM), and a retry is due after a back-off; past [`RETRIES`] in a
    /// row, the crawl stops (see the module docs).
    fn write_failed(
        &self,
        files: &Files,
        segment: u32,
        offset: u64,
        bytes: Vec<u8>,
        error: String,
    ) {
        self.frontier
            .borrow_mut()
            .spill_written(segment, offset, Err(bytes));
        if files.retry_at.get().is_none() {
            let tries = files.retries.get();
            if tries >= RETRIES {
                let queued = self.frontier.borrow().queued();
                let message = format!(
                    "shard {}: spilling queued URLs to {} failed {tries} times in a row ({error}); \
                     the crawl stops with {queued} URLs queued (with --state, a resume fetches them)",
                    self.id,
                    self.spill_dir.display()
                );
                // Said once, by the report's output error.
                log::debug!("{message}");
                self.recording
                    .output_error
                    .borrow_mut()
                    .get_or_insert(message);
                self.outstanding.abort();
                self.stop();
            } else {
                let wait = backoff(tries);
                log::warn!(
                    "spill: {error}; queues stay in RAM, trying again in {} ms",
                    wait.as_millis()
                );
                files.retries.set(tries + 1);
                files.retry_at.set(Some(Instant::now() + wait));
            }
        }
        self.spilled();
    }

    async fn read(self: Rc<Self>, file: Rc<DmaFile>, host: String, at: Extent) {
        let read = file.read_at(u64::from(at.offset), at.len as usize).await;
        let bytes = match &read {
            Ok(r) if r.len() == at.len as usize => Ok(&r[..]),
            Ok(r) => Err(format!("short read ({} of {} bytes)", r.len(), at.len)),
            Err(e) => Err(e.to_string()),
        };
        self.frontier.borrow_mut().spill_read(&host, at, bytes);
        self.spilled();
    }

    /// After a completion: count out what was lost, wake the dispatcher.
    pub(super) fn spilled(&self) {
        let lost = self.frontier.borrow_mut().take_lost();
        for lost in lost {
            log::error!(
                "spill: {} queued URLs of {} lost: {}",
                lost.jobs,
                lost.host,
                lost.error
            );
            self.recording.stats.borrow_mut().spill_lost += lost.jobs as u64;
            let message = format!(
                "shard {}: {} queued URLs of {} lost: the spill could not read them back ({}); \
                 they were not fetched",
                self.id, lost.jobs, lost.host, lost.error
            );
            if self.cluster.is_some() {
                // Their URLs cannot be answered (nor their entries
                // acknowledged): this node leaves the crawl, and the
                // partitions' next owners claim what it had.
                self.recording
                    .output_error
                    .borrow_mut()
                    .get_or_insert(format!("{message}; leaving the cluster crawl"));
                self.outstanding.abort();
                self.stop();
                continue;
            }
            self.recording
                .output_error
                .borrow_mut()
                .get_or_insert(message);
            if self.outstanding.finish(lost.jobs) {
                self.stop();
            }
        }
        self.changed.notify_all();
    }
}
