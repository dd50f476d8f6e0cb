//! Per-shard WARC files: one writer task per shard appends already-encoded
//! records (from `ringcrawl_warc`) to `DIR/PREFIX-sSHARD-SEQ.warc.gz` through
//! glommio's file I/O (io_uring writes), starts each file with a `warcinfo`
//! record, and rotates to a new file past the size limit.
//!
//! One file per shard, so cores never share a lock. Workers queue records
//! for the writer in a bounded local queue (back-pressure instead of
//! unbounded memory), and learn at once where their bytes will lie (file
//! and offset): a place is given when the bytes are queued, in queue order,
//! which is the order the writer appends them in. So a record's JSONL line
//! and index entry can name its bytes before they reach the disk.
//! [`WarcFiles::close`] drains the queue and closes the file, which is
//! mandatory or the tail is lost. Not the record format.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;
use std::time::SystemTime;

use futures_lite::AsyncWriteExt;
use glommio::io::{OpenOptions, StreamWriter, StreamWriterBuilder};
use glommio::Task;

use crate::output::io_error::{plain, words};
use crate::sync::notify::Notify;
use crate::sync::WriteBack;

/// The `software` of each file's `warcinfo` record.
const SOFTWARE: &str = concat!("ringcrawl/", env!("CARGO_PKG_VERSION"));

/// Encoded record groups queued before a worker waits for the writer.
const QUEUE: usize = 256;

/// What the writer task ends with: the files written, or the first error.
type WriterResult = Result<Vec<PathBuf>, String>;

/// The WARC files of one shard.
pub(crate) struct WarcFiles {
    state: Rc<State>,
    /// The writer task; yields the files written, or the first error.
    writer: RefCell<Option<Task<WriterResult>>>,
}

/// Where and how a shard writes.
#[derive(Debug, Clone)]
pub(crate) struct WarcTarget {
    pub dir: PathBuf,
    /// File name prefix shared by all shards of one crawl.
    pub prefix: String,
    pub shard: usize,
    /// Rotate before a file would grow past this many bytes.
    pub max_size: u64,
    /// Told of every sync of a file (as it is closed) and of any failure,
    /// for the checkpoints, which sync the files too but may not hear of
    /// a failure this writer's sync saw.
    pub write_back: Arc<WriteBack>,
}

/// Where a group of records was placed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Placed {
    /// The file's name (no directory), as indexes name it.
    pub file: Rc<str>,
    /// Offset of the group's first byte in that file.
    pub offset: u64,
}

/// What the workers and the writer task share.
struct State {
    target: WarcTarget,
    queue: RefCell<Queue>,
    /// Something was queued, or the queue was closed.
    queued: Notify,
    /// The writer took something from the queue.
    taken: Notify,
    /// Bytes handed to the writer so far, over every file (the writer's
    /// count of its `written` is in the same units).
    placed: Cell<u64>,
    /// Bytes the writer wrote into its buffers, and of those, flushed to
    /// their files (a `kill -9` loses what is in the buffers only).
    written: Cell<u64>,
    flushed: Cell<u64>,
    /// A flush of everything up to here is wanted (a crawl with a state
    /// directory writes a record's log line only after its WARC bytes).
    flush_wanted: Cell<u64>,
    /// The writer flushed, or stopped.
    flushed_now: Notify,
}

#[derive(Default)]
struct Queue {
    items: VecDeque<Item>,
    /// No more records: at close, or after the writer failed.
    closed: bool,
    /// The file being filled (its name) and its size once everything
    /// queued is written.
    current: Option<(Rc<str>, u64)>,
    /// Files started so far.
    files: usize,
}

enum Item {
    /// Close the current file, if any, and start this one with these bytes
    /// (its `warcinfo` record).
    Open(PathBuf, Vec<u8>),
    /// Append to the current file.
    Bytes(Vec<u8>),
}

impl WarcFiles {
    /// Start the writer task on the current executor.
    pub(crate) fn start(target: WarcTarget) -> Self {
        let state = Rc::new(State {
            target,
            queue: RefCell::new(Queue::default()),
            queued: Notify::new(),
            taken: Notify::new(),
            placed: Cell::new(0),
            written: Cell::new(0),
            flushed: Cell::new(0),
            flush_wanted: Cell::new(0),
            flushed_now: Notify::new(),
        });
        let writer = glommio::spawn_local(write_queue(state.clone()));
        WarcFiles {
            state,
            writer: RefCell::new(Some(writer)),
        }
    }

    /// Queue one encoded record group (waits while the writer is behind);
    /// where it will lie, or None once the files are closed or failed.
    pub(crate) async fn write(&self, records: Vec<u8>) -> Option<Placed> {
        loop {
            {
                let mut queue = self.state.queue.borrow_mut();
                if queue.closed {
                    return None;
                }
                if queue.items.len() < QUEUE {
                    let placed = self.place(&mut queue, records);
                    drop(queue);
                    self.state.queued.notify_all();
                    return Some(placed);
                }
            }
            self.state.taken.notified().await;
        }
    }

    /// Give `records` their place (opening a new file when the current one
    /// would pass the size limit) and queue them.
    fn place(&self, queue: &mut Queue, records: Vec<u8>) -> Placed {
        let target = &self.state.target;
        let len = records.len() as u64;
        let rotate = match &queue.current {
            None => true,
            Some((_, size)) => size.saturating_add(len) > target.max_size && *size > 0,
        };
        if rotate {
            let name = format!(
                "{}-s{}-{:05}.warc.gz",
                target.prefix, target.shard, queue.files
            );
            let info = ringcrawl_warc::warcinfo(
                SOFTWARE,
                &name,
                SystemTime::now(),
                &[("robots", "ignore"), ("isPartOf", "ringcrawl crawl")],
            );
            queue.files = queue.files.saturating_add(1);
            queue.current = Some((Rc::from(name.as_str()), info.len() as u64));
            add(&self.state.placed, info.len());
            queue
                .items
                .push_back(Item::Open(target.dir.join(&name), info));
        }
        // Set just above when there was none.
        let (file, size) = queue.current.get_or_insert_with(|| (Rc::from(""), 0));
        let placed = Placed {
            file: file.clone(),
            offset: *size,
        };
        *size = size.saturating_add(len);
        add(&self.state.placed, records.len());
        queue.items.push_back(Item::Bytes(records));
        placed
    }

    /// Files started so far.
    pub(crate) fn files(&self) -> usize {
        self.state.queue.borrow().files
    }

    /// Bytes queued so far (a watermark for [`WarcFiles::flushed_past`]).
    pub(crate) fn placed(&self) -> u64 {
        self.state.placed.get()
    }

    /// Whether everything up to the watermark `end` is in its file.
    pub(crate) fn is_flushed_past(&self, end: u64) -> bool {
        self.state.flushed.get() >= end
    }

    /// Wait until everything queued up to the watermark `end` is in its
    /// file (written, not only buffered: a `kill -9` cannot lose it):
    /// true; false if the writer stopped first (it failed, or the files
    /// were closed) and some of it may never be written.
    pub(crate) async fn flushed_past(&self, end: u64) -> bool {
        let state = &self.state;
        loop {
            if state.flushed.get() >= end {
                return true;
            }
            if state.queue.borrow().closed {
                return false;
            }
            state.flush_wanted.set(state.flush_wanted.get().max(end));
            state.queued.notify_all();
            state.flushed_now.notified().await;
        }
    }

    /// Write everything queued, close the file, return the paths written.
    pub(crate) async fn close(&self) -> Result<Vec<PathBuf>, String> {
        self.state.queue.borrow_mut().closed = true;
        self.state.queued.notify_all();
        let writer = self.writer.borrow_mut().take();
        match writer {
            Some(task) => task.await,
            None => Ok(Vec::new()),
        }
    }
}

/// The writer task: append what is queued, in order, until the queue is
/// closed and empty. On an error the queue closes (later writes get no
/// place) and the error is the result.
async fn write_queue(state: Rc<State>) -> WriterResult {
    let result = drain(&state).await;
    if result.is_err() {
        state.target.write_back.fail();
        let mut queue = state.queue.borrow_mut();
        queue.closed = true;
        queue.items.clear();
        drop(queue);
        state.taken.notify_all();
    }
    state.flushed_now.notify_all();
    result
}

async fn drain(state: &State) -> WriterResult {
    let mut files = Vec::new();
    let mut current: Option<StreamWriter> = None;
    loop {
        // A flush is wanted: done once the bytes wanted are written (or
        // nothing more is queued), not after every record on the way.
        let wanted = state.flush_wanted.get();
        if wanted > state.flushed.get()
            && (state.written.get() >= wanted || state.queue.borrow().items.is_empty())
        {
            if let Some(file) = current.as_mut() {
                file.flush()
                    .await
                    .map_err(|e| format!("writing WARC file: {e}"))?;
            }
            state.flushed.set(state.written.get());
            state.flushed_now.notify_all();
        }
        let next = state.queue.borrow_mut().items.pop_front();
        let item = match next {
            Some(item) => Some(item),
            None if state.queue.borrow().closed => None,
            None => {
                state.queued.notified().await;
                continue;
            }
        };
        state.taken.notify_all();
        match item {
            None => break,
            Some(Item::Open(path, info)) => {
                if let Some(old) = current.take() {
                    close(old, &state.target.write_back).await?;
                }
                // The old file is closed, so flushed whole.
                state.flushed.set(state.written.get());
                let mut file = open(&path).await?;
                write(&mut file, &info, &path).await?;
                add(&state.written, info.len());
                current = Some(file);
                files.push(path);
            }
            Some(Item::Bytes(bytes)) => {
                if let (Some(file), Some(path)) = (current.as_mut(), files.last()) {
                    write(file, &bytes, path).await?;
                }
                add(&state.written, bytes.len());
            }
        }
    }
    if let Some(file) = current.take() {
        close(file, &state.target.write_back).await?;
    }
    state.flushed.set(state.written.get());
    Ok(files)
}

fn add(counter: &Cell<u64>, n: usize) {
    counter.set(counter.get().saturating_add(n as u64));
}

/// Create `path` for writing; a file already there is an error, never
/// written over. A resume's run number comes after every WARC file's, and
/// other names hold the start second and the process id, so only a stray
/// file, or a crawl started in the same second by a process of the same id
/// into the same directory (pid 1 of two containers), can be in the way.
async fn open(path: &Path) -> Result<StreamWriter, String> {
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .buffered_open(path)
        .await
        .map_err(|e| format!("creating {}: {}", path.display(), plain(e)))?;
    Ok(StreamWriterBuilder::new(file)
        .with_buffer_size(128 << 10)
        .build())
}

async fn write(file: &mut StreamWriter, bytes: &[u8], path: &Path) -> Result<(), String> {
    file.write_all(bytes)
        .await
        .map_err(|e| format!("writing {}: {}", path.display(), words(&e)))
}

/// Close (flush and sync) a file, counted in `write_back` while it syncs.
async fn close(mut writer: StreamWriter, write_back: &WriteBack) -> Result<(), String> {
    let syncing = write_back.begin();
    let closed = writer.close().await;
    syncing.end(closed.is_ok());
    closed.map_err(|e| format!("closing WARC file: {}", words(&e)))
}
