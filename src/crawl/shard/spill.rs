//! The shard's spill task: carries out the frontier's [`SpillIo`] requests
//! on this shard's segment files (`{dir}/shard-{id}/spill-{n}`, made on
//! the first write) with glommio's DMA I/O, at most [`IN_FLIGHT`] at once,
//! and hands the completions back to the frontier. The frontier decides
//! everything (what to write where, what to read, which file may go); this
//! is the thin I/O layer under it.
//!
//! A write that fails gives its bytes back to the frontier, which keeps
//! them in RAM and stops spilling: nothing is lost. A read that fails (or
//! a chunk that does not decode) loses the chunk's URLs: they are logged
//! and counted out of the crawl's outstanding count, or the crawl would
//! wait for them for ever. The crawl's spill directory is removed by
//! `crawl::run` when every shard is done.

use std::cell::{Cell, RefCell};
use std::path::PathBuf;
use std::rc::Rc;

use foldhash::{HashMap, HashMapExt};
use glommio::io::{DmaFile, OpenOptions};

use crate::crawl::frontier::{Extent, SpillIo};
use crate::crawl::seen::run;
use crate::sync::notify::Notify;

use super::Shard;

/// I/O requests of the spill in flight at most, per shard.
const IN_FLIGHT: usize = 16;

/// The spill task's own state.
struct Files {
    /// This shard's directory of segment files, once made.
    dir: RefCell<Option<PathBuf>>,
    open: RefCell<HashMap<u32, Rc<DmaFile>>>,
    in_flight: Cell<usize>,
    done: Notify,
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
        });
        loop {
            if self.stopping.get() {
                break;
            }
            if files.in_flight.get() >= IN_FLIGHT {
                files.done.notified().await;
                continue;
            }
            let io = self.frontier.borrow_mut().spill_io();
            let Some(io) = io else {
                futures_lite::future::or(self.changed.notified(), files.done.notified()).await;
                continue;
            };
            match io {
                SpillIo::Write {
                    segment,
                    offset,
                    bytes,
                } => match self.segment(&files, segment).await {
                    Ok(file) => self.start(&files, self.clone().write(file, segment, offset, bytes)),
                    Err(e) => {
                        log::error!("spill: opening segment {segment}: {e}; queues stay in RAM");
                        self.frontier
                            .borrow_mut()
                            .spill_written(segment, offset, Err(bytes));
                        self.spilled();
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

    async fn write(self: Rc<Self>, file: Rc<DmaFile>, segment: u32, offset: u64, bytes: Vec<u8>) {
        let mut buf = file.alloc_dma_buffer(bytes.len());
        buf.as_bytes_mut().copy_from_slice(&bytes);
        let result = match file.write_at(buf, offset).await {
            Ok(n) if n == bytes.len() => Ok(()),
            Ok(n) => Err(format!("short write ({n} of {} bytes)", bytes.len())),
            Err(e) => Err(e.to_string()),
        };
        let result = result.map_err(|e| {
            log::error!("spill: writing segment {segment}: {e}; queues stay in RAM");
            bytes
        });
        self.frontier
            .borrow_mut()
            .spill_written(segment, offset, result);
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
            if self.cluster.is_some() {
                // Their URLs cannot be answered (nor their entries
                // acknowledged): this node leaves the crawl, and the
                // partitions' next owners claim what it had.
                let message = format!(
                    "shard {}: {} queued URLs of {} lost on disk ({}); leaving the cluster crawl",
                    self.id, lost.jobs, lost.host, lost.error
                );
                self.recording.output_error.borrow_mut().get_or_insert(message);
                self.outstanding.abort();
                self.stop();
                continue;
            }
            if self.outstanding.finish(lost.jobs) {
                self.stop();
            }
        }
        self.changed.notify_all();
    }
}
