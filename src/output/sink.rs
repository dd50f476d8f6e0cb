//! Where a shard's records go: JSON Lines to a file or stdout, buffered per
//! shard and written in whole lines, so shards never interleave half a line.
//!
//! Not the record format (`record.rs`) nor the counters (`stats.rs`).
//! Writes are plain blocking writes of ~64 KiB to the page cache from the
//! shard's thread: cheap enough next to the network work, and ordered.

use std::cell::RefCell;
use std::fs::File;
use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use crate::config::Output;
use crate::output::record::Record;

/// The destination shared by all shards (one lock per ~64 KiB of lines).
pub type SharedWriter = Arc<Mutex<Box<dyn Write + Send>>>;

/// Open the configured destination once, before the shards start.
pub fn open(output: &Output) -> io::Result<Option<SharedWriter>> {
    let writer: Box<dyn Write + Send> = match output {
        Output::None => return Ok(None),
        Output::Stdout => Box::new(io::stdout()),
        Output::File(path) => Box::new(File::create(path)?),
    };
    Ok(Some(Arc::new(Mutex::new(writer))))
}

/// Bytes buffered before a shard writes them out.
const FLUSH_AT: usize = 64 * 1024;

/// One shard's buffered JSONL writer.
pub struct RecordSink {
    /// Shared destination, if records are written at all.
    writer: Option<SharedWriter>,
    /// Whole lines not yet written.
    buffer: RefCell<Vec<u8>>,
}

impl RecordSink {
    pub fn new(writer: Option<SharedWriter>) -> Self {
        RecordSink {
            writer,
            buffer: RefCell::new(Vec::new()),
        }
    }

    /// Buffer one record; write the buffer out when it is large.
    pub fn write(&self, record: &Record) -> io::Result<()> {
        if self.writer.is_none() {
            return Ok(());
        }
        let full = {
            let mut buffer = self.buffer.borrow_mut();
            record.write_jsonl(&mut buffer);
            buffer.len() >= FLUSH_AT
        };
        if full {
            self.flush()?;
        }
        Ok(())
    }

    /// Write every buffered line.
    pub fn flush(&self) -> io::Result<()> {
        let Some(writer) = &self.writer else {
            return Ok(());
        };
        let mut buffer = self.buffer.borrow_mut();
        if buffer.is_empty() {
            return Ok(());
        }
        let mut out = writer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        out.write_all(&buffer)?;
        out.flush()?;
        buffer.clear();
        Ok(())
    }
}
