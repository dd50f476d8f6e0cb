//! The shard's lines of the CDXJ index (`--cdxj`), each written only once
//! the WARC bytes it points at are in their file: an index line is a
//! derived artefact, like a record, and must never point past the end of a
//! WARC file (after a `kill -9`, or when the WARC files fail to be
//! written).
//!
//! A page's line waits for its record: it goes to the index right after
//! the record goes to the log (in the log's order), and not at all if the
//! record is not logged (the page is fetched again by a resume, which
//! would index it twice). With `--state` a record is logged only once its
//! WARC bytes are written, so its line follows at once; without, the line
//! waits in a queue for the WARC writer's next flush. The lines of records
//! no page log line stands for (robots.txt, DNS lookups) go to that queue
//! when their bytes are queued. A task asks the WARC writer to flush what
//! the queue waits for, a few milliseconds of lines at a time.
//!
//! Not the line's format (`ringcrawl_warc::cdxj`), nor the WARC files.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;
use std::time::Duration;

use crate::output::record::Record;
use crate::sync::Notify;

use super::Shard;

/// How long lines gather before the task asks the WARC writer to flush.
const GATHER: Duration = Duration::from_millis(5);

/// The index lines of a shard that wait for their WARC bytes.
#[derive(Default)]
pub(super) struct Index {
    /// Lines of pages whose record is not logged yet, by where their WARC
    /// record lies (file, offset).
    of_records: RefCell<HashMap<(String, u64), Waiting>>,
    /// Lines to write once the WARC files are written past their `end`,
    /// in order.
    queue: RefCell<VecDeque<Waiting>>,
    /// Something was queued.
    queued: Notify,
}

/// An index line and the end of its WARC bytes (in the writer's count of
/// bytes queued, [`crate::output::warc::file::WarcFiles::placed`]).
struct Waiting {
    end: u64,
    line: Vec<u8>,
}

impl Shard {
    /// Hold `line`, the index line of WARC bytes that end at `end`: until
    /// the record of the page at `place` (file, offset) is logged, or, with
    /// none, until the bytes are written.
    pub(super) fn hold_index_line(&self, line: Vec<u8>, end: u64, place: Option<(String, u64)>) {
        let Some(index) = &self.recording.index else {
            return;
        };
        let waiting = Waiting { end, line };
        match place {
            Some(place) => {
                index.of_records.borrow_mut().insert(place, waiting);
            }
            None => {
                index.queue.borrow_mut().push_back(waiting);
                index.queued.notify_all();
            }
        }
    }

    /// `record` goes to the log: its index line, if any, follows it (at
    /// once when its WARC bytes are written, else at their flush).
    pub(super) fn index_logged(&self, record: &Record) {
        let Some(waiting) = self.take_record_line(record) else {
            return;
        };
        if let Some(index) = &self.recording.index {
            index.queue.borrow_mut().push_back(waiting);
            index.queued.notify_all();
        }
        self.release_index();
    }

    /// `record` is not logged: neither is its index line.
    pub(super) fn index_unlogged(&self, record: &Record) {
        self.take_record_line(record);
    }

    fn take_record_line(&self, record: &Record) -> Option<Waiting> {
        let index = self.recording.index.as_ref()?;
        let file = record.warc_file.as_ref()?;
        let offset = record.warc_offset?;
        index
            .of_records
            .borrow_mut()
            .remove(&(file.clone(), offset))
    }

    /// Write the queued lines whose WARC bytes are written, in queue
    /// order (a line whose bytes are not written yet holds back none
    /// after it: the pages' lines keep the log's order among themselves).
    /// Whether any was; they are handed to the writer at the next
    /// hand-off.
    fn release_index(&self) -> bool {
        let (Some(index), Some(warc)) = (&self.recording.index, &self.recording.warc) else {
            return false;
        };
        let mut lines = Vec::new();
        index.queue.borrow_mut().retain(|w| {
            let written = warc.is_flushed_past(w.end);
            if written {
                lines.extend_from_slice(&w.line);
            }
            !written
        });
        if lines.is_empty() {
            return false;
        }
        self.recording
            .cdxj
            .write_with(|out| out.extend_from_slice(&lines));
        true
    }

    /// The index task: while lines wait, let a few gather, ask the WARC
    /// writer to flush up to the last, write them. Ends when the writer
    /// stops (closed, or failed: [`Shard::finish_index`] drops what is
    /// left).
    pub(super) async fn keep_index(self: Rc<Self>) {
        let (Some(index), Some(warc)) = (&self.recording.index, &self.recording.warc) else {
            return;
        };
        loop {
            if self.release_index() {
                self.recording.cdxj.hand_off();
            }
            // Not in order of their ends: a record's line is queued when
            // the record is logged.
            let last = index.queue.borrow().iter().map(|w| w.end).max();
            match last {
                None => index.queued.notified().await,
                Some(end) => {
                    glommio::timer::sleep(GATHER).await;
                    if !warc.flushed_past(end).await {
                        return;
                    }
                }
            }
        }
    }

    /// After the WARC files are closed: write the lines whose bytes were
    /// written, drop the others (counted, and said in the output error).
    pub(super) fn finish_index(&self, task: glommio::Task<()>) {
        drop(task);
        let Some(index) = &self.recording.index else {
            return;
        };
        self.release_index();
        let dropped = index.queue.borrow_mut().drain(..).count();
        // Lines of records that were never logged (none, as a rule).
        index.of_records.borrow_mut().clear();
        if dropped > 0 {
            let what = format!(
                "shard {}: {dropped} CDXJ index lines dropped: the WARC bytes they point at were not written",
                self.id
            );
            log::error!("{what}");
            let mut error = self.recording.output_error.borrow_mut();
            match error.as_mut() {
                Some(e) => e.push_str(&format!("; {what}")),
                None => *error = Some(what),
            }
        }
        self.recording.cdxj.hand_off();
    }
}
