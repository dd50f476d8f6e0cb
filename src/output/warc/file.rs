//! Per-shard WARC files: one writer task per shard appends already-encoded
//! records (from `warc.rs`) to `DIR/PREFIX-sSHARD-SEQ.warc.gz` through
//! glommio's file I/O (io_uring writes), starts each file with a `warcinfo`
//! record, and rotates to a new file past the size limit.
//!
//! One file per shard, so cores never share a lock. Workers hand records to
//! the writer over a bounded local channel (back-pressure instead of
//! unbounded memory); [`WarcFiles::close`] drains the channel and closes the
//! file, which is mandatory or the tail is lost. Not the record format.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::SystemTime;

use futures_lite::AsyncWriteExt;
use glommio::channels::local_channel::{self, LocalSender};
use glommio::io::{BufferedFile, StreamWriter, StreamWriterBuilder};
use glommio::Task;

use crate::output::warc;

/// Encoded records queued before a worker waits for the writer.
const QUEUE: usize = 256;

/// What the writer task ends with: the files written, or the first error.
type WriterResult = Result<Vec<PathBuf>, String>;

/// The WARC files of one shard.
pub struct WarcFiles {
    /// Encoded records to append (gzip members, whole records only); taken
    /// at close, which ends the writer once queued records are written.
    sender: RefCell<Option<Rc<LocalSender<Vec<u8>>>>>,
    /// The writer task; yields the files written, or the first error.
    writer: RefCell<Option<Task<WriterResult>>>,
}

/// Where and how a shard writes.
#[derive(Debug, Clone)]
pub struct WarcTarget {
    pub dir: PathBuf,
    /// File name prefix shared by all shards of one crawl.
    pub prefix: String,
    pub shard: usize,
    /// Rotate before a file would grow past this many bytes.
    pub max_size: u64,
}

impl WarcFiles {
    /// Start the writer task on the current executor.
    pub fn start(target: WarcTarget) -> Self {
        let (sender, receiver) = local_channel::new_bounded::<Vec<u8>>(QUEUE);
        let writer = glommio::spawn_local(async move {
            let mut files = Vec::new();
            let mut current: Option<(StreamWriter, u64)> = None;
            while let Some(record) = receiver.recv().await {
                let needs_new = match &current {
                    None => true,
                    Some((_, size)) => {
                        *size > 0 && size.saturating_add(record.len() as u64) > target.max_size
                    }
                };
                if needs_new {
                    if let Some((old, _)) = current.take() {
                        close(old).await?;
                    }
                    let path = target.dir.join(format!(
                        "{}-s{}-{:05}.warc.gz",
                        target.prefix,
                        target.shard,
                        files.len()
                    ));
                    current = Some(open(&path).await?);
                    files.push(path);
                }
                if let Some((file, size)) = current.as_mut() {
                    file.write_all(&record)
                        .await
                        .map_err(|e| format!("writing WARC: {e}"))?;
                    *size = size.saturating_add(record.len() as u64);
                }
            }
            if let Some((file, _)) = current.take() {
                close(file).await?;
            }
            Ok(files)
        });
        WarcFiles {
            sender: RefCell::new(Some(Rc::new(sender))),
            writer: RefCell::new(Some(writer)),
        }
    }

    /// Queue one encoded record group (waits while the writer is behind).
    pub async fn write(&self, record: Vec<u8>) {
        // Clone the handle out: no RefCell borrow across the await.
        let sender = self.sender.borrow().clone();
        if let Some(sender) = sender {
            let _ = sender.send(record).await;
        }
    }

    /// Write everything queued, close the file, return the paths written.
    pub async fn close(&self) -> Result<Vec<PathBuf>, String> {
        drop(self.sender.borrow_mut().take());
        let writer = self.writer.borrow_mut().take();
        match writer {
            Some(task) => task.await,
            None => Ok(Vec::new()),
        }
    }
}

/// Create `path` and write its `warcinfo` record.
async fn open(path: &Path) -> Result<(StreamWriter, u64), String> {
    let file = BufferedFile::create(path)
        .await
        .map_err(|e| format!("creating {}: {e}", path.display()))?;
    let mut writer = StreamWriterBuilder::new(file)
        .with_buffer_size(128 << 10)
        .build();
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let info = warc::warcinfo(
        &name,
        SystemTime::now(),
        &[("robots", "ignore"), ("isPartOf", "ringcrawl crawl")],
    );
    writer
        .write_all(&info)
        .await
        .map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok((writer, info.len() as u64))
}

async fn close(mut writer: StreamWriter) -> Result<(), String> {
    writer
        .close()
        .await
        .map_err(|e| format!("closing WARC file: {e}"))
}
