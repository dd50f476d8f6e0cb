//! Where a shard's records go: JSON Lines to a file or stdout, buffered per
//! shard and written in whole lines, so shards never interleave half a line.
//!
//! Not the record format (`record.rs`) nor the counters (`stats.rs`).
//! Writes are plain blocking writes of ~64 KiB to the page cache from the
//! shard's thread: cheap enough next to the network work, and ordered.

use std::cell::{Cell, RefCell};
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
    /// A write failed: nothing more is written (a retry would write the
    /// lines a partial write already wrote, and a full disk stays full).
    failed: Cell<bool>,
}

impl RecordSink {
    pub fn new(writer: Option<SharedWriter>) -> Self {
        RecordSink {
            writer,
            buffer: RefCell::new(Vec::new()),
            failed: Cell::new(false),
        }
    }

    /// Buffer one record; write the buffer out when it is large.
    pub fn write(&self, record: &Record) -> io::Result<()> {
        if self.writer.is_none() || self.failed.get() {
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
        let written = out.write_all(&buffer).and_then(|()| out.flush());
        // Written or not, these lines are done with: on an error they are
        // lost (and said so), never written twice.
        buffer.clear();
        self.failed.set(written.is_err());
        written
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// An output that takes `room` bytes, then fails `failures` writes
    /// (ENOSPC), then takes everything; it counts the bytes offered.
    struct Flaky {
        room: usize,
        failures: usize,
        written: Arc<Mutex<Vec<u8>>>,
        offered: Arc<AtomicUsize>,
    }

    impl Write for Flaky {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.offered.fetch_add(buf.len(), Ordering::Relaxed);
            let mut written = self.written.lock().unwrap();
            if self.room == 0 && self.failures > 0 {
                self.failures -= 1;
                return Err(io::Error::from_raw_os_error(libc::ENOSPC));
            }
            let n = if self.failures > 0 {
                buf.len().min(self.room)
            } else {
                buf.len()
            };
            self.room -= n.min(self.room);
            written.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn flaky(room: usize, failures: usize) -> (RecordSink, Arc<Mutex<Vec<u8>>>, Arc<AtomicUsize>) {
        let written = Arc::new(Mutex::new(Vec::new()));
        let offered = Arc::new(AtomicUsize::new(0));
        let out: Box<dyn Write + Send> = Box::new(Flaky {
            room,
            failures,
            written: written.clone(),
            offered: offered.clone(),
        });
        (
            RecordSink::new(Some(Arc::new(Mutex::new(out)))),
            written,
            offered,
        )
    }

    fn record(n: usize) -> Record {
        Record::new(format!("http://a.test/page/{n:06}"), 0)
    }

    /// The lines of `records` 0..n, as the output should hold them.
    fn lines(n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        (0..n).for_each(|i| record(i).write_jsonl(&mut out));
        out
    }

    #[test]
    fn an_output_that_keeps_failing_is_not_offered_the_same_lines_again() {
        let (sink, _, offered) = flaky(0, usize::MAX);
        let n = 20_000;
        for i in 0..n {
            let _ = sink.write(&record(i));
        }
        let _ = sink.flush();
        let total = lines(n).len();
        let offered = offered.load(Ordering::Relaxed);
        assert!(
            offered <= total,
            "{offered} bytes offered to a failing output for {total} bytes of records"
        );
        assert!(
            sink.buffer.borrow().len() <= 2 * FLUSH_AT,
            "the buffer grows"
        );
    }

    #[test]
    fn after_a_partial_write_no_line_is_written_twice() {
        // 100 bytes go out, one write fails, then the output works again.
        let (sink, written, _) = flaky(100, 1);
        let n = 2_000;
        for i in 0..n {
            let _ = sink.write(&record(i));
        }
        let _ = sink.flush();
        let written = written.lock().unwrap().clone();
        let all = lines(n);
        assert!(
            all.starts_with(&written),
            "the output is not a prefix of the records: {} bytes, starting {:?}",
            written.len(),
            String::from_utf8_lossy(&written[..written.len().min(300)])
        );
    }
}
