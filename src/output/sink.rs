//! A shard's side of a line output (the JSON Lines records, the CDXJ
//! index): whole lines in the shard's buffer, handed to the writer thread
//! ([`crate::output::writer`]) a block at a time (64 KiB, or whatever is
//! there when the shard's watch ticks), so shards never interleave half a
//! line and never wait on the output.
//!
//! Not the record format (`record.rs`), the counters (`stats.rs`), nor the
//! writing itself (`writer.rs`).

use crate::output::record::Record;
use crate::output::writer::{lock, Pending, Stopped, WriterHandle};

/// Bytes buffered before a shard hands them to the writer.
const FLUSH_AT: usize = 64 * 1024;

/// One shard's buffered JSONL output.
pub(crate) struct RecordSink {
    /// The writer and this shard's lines not yet handed to it, if records
    /// are written at all.
    out: Option<(WriterHandle, Pending)>,
}

impl RecordSink {
    pub(crate) fn new(writer: Option<WriterHandle>) -> Self {
        RecordSink {
            out: writer.map(|w| {
                let pending = w.register();
                (w, pending)
            }),
        }
    }

    /// Buffer one record; hand the buffer over when it is large.
    pub(crate) fn write(&self, record: &Record) {
        self.write_with(|lines| record.write_jsonl(lines));
    }

    /// Buffer what `line` appends (whole lines); hand the buffer over when
    /// it is large.
    pub(crate) fn write_with(&self, line: impl FnOnce(&mut Vec<u8>)) {
        let Some((writer, pending)) = &self.out else {
            return;
        };
        if writer.stopped().is_some() {
            return;
        }
        let full = {
            let mut lines = lock(pending);
            line(&mut lines);
            (lines.len() >= FLUSH_AT).then(|| std::mem::take(&mut *lines))
        };
        if let Some(lines) = full {
            writer.send(lines);
        }
    }

    /// Hand whatever is buffered to the writer.
    pub(crate) fn hand_off(&self) {
        if let Some((writer, pending)) = &self.out {
            let lines = std::mem::take(&mut *lock(pending));
            writer.send(lines);
        }
    }

    /// The writer has more than its backlog to write: start no fetch.
    pub(crate) fn behind(&self) -> bool {
        self.out.as_ref().is_some_and(|(w, _)| w.behind())
    }

    /// The output ended early: the crawl should end too.
    pub(crate) fn stopped(&self) -> Option<Stopped> {
        self.out.as_ref().and_then(|(w, _)| w.stopped())
    }
}
