//! The JSON Lines writer: a thread of its own that owns the destination
//! (`-o FILE`, or stdout for `-o -`) and writes the blocks of whole lines
//! the shards hand it, so a slow disk or a slow reader of stdout never
//! stalls an executor (DESIGN.md: blocking I/O goes on a thread of its own).
//!
//! Not the buffering of lines on a shard ([`crate::output::sink`]) nor the
//! record format.
//!
//! - Shards never wait on it: handing over a block is a send on an
//!   unbounded channel. What it has been handed and not written yet is
//!   counted, and past `backlog` bytes [`WriterHandle::behind`] says so:
//!   shards then stop *starting* fetches (and lending pages) until it
//!   catches up; fetches already running finish, and their records join
//!   the queue. So the queue is bounded by the backlog plus a record per
//!   running fetch and a partly filled block per shard.
//! - The first failed write ends the output: a reader that went away
//!   (EPIPE, `ringcrawl -o - | head`) or any other error (a full disk).
//!   What follows is dropped as it comes, never retried: nothing is
//!   written twice, nothing piles up. [`WriterHandle::stopped`] tells the
//!   shards, which end the crawl.
//! - Every shard's not yet handed lines are registered here, so
//!   [`Writer::finish`] writes them at the end even for a shard whose
//!   thread died.

use std::io::{self, Write};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::config::Output;

/// Why the output ended before the crawl did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stopped {
    /// The reader of the output went away (EPIPE): the crawl ends quietly.
    ReaderGone,
    /// A write failed (one line): the crawl ends with this error.
    Failed(String),
}

/// The lines one shard has not handed over yet, shared with the writer so
/// that the end of the crawl can write them whatever became of the shard.
pub(crate) type Pending = Arc<Mutex<Vec<u8>>>;

/// Lock a mutex whatever a panicking holder left: the data is plain bytes.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

enum Msg {
    Lines(Vec<u8>),
    /// Answered once every block sent before it is written (or dropped).
    Barrier(mpsc::SyncSender<()>),
    End,
}

/// What [`WriterHandle::barrier`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Written {
    /// Every line handed over before the call is written (or the writer
    /// finished, having written all it was given).
    All,
    /// The writer has not got there within the wait.
    NotYet,
    /// The output failed: lines handed over may never be written.
    Failed,
}

/// What the writer thread and the shards share.
struct State {
    /// Bytes handed over and not yet written (or dropped).
    queued: AtomicUsize,
    /// Past this many queued bytes the writer is behind.
    backlog: usize,
    /// 0 writing; 1 reader gone; 2 failed (see `error`).
    stop: AtomicU8,
    error: Mutex<Option<String>>,
    /// What a failure was doing: `writing FILE`, or `writing records`.
    doing: String,
    /// Every shard's pending lines.
    pending: Mutex<Vec<Pending>>,
}

const WRITING: u8 = 0;
const READER_GONE: u8 = 1;
const FAILED: u8 = 2;

impl State {
    fn stopped(&self) -> Option<Stopped> {
        match self.stop.load(Ordering::Acquire) {
            WRITING => None,
            READER_GONE => Some(Stopped::ReaderGone),
            _ => Some(Stopped::Failed(
                lock(&self.error).clone().unwrap_or_default(),
            )),
        }
    }

    fn fail(&self, e: &io::Error) {
        if e.kind() == io::ErrorKind::BrokenPipe {
            self.stop.store(READER_GONE, Ordering::Release);
        } else {
            lock(&self.error).get_or_insert_with(|| format!("{}: {e}", self.doing));
            self.stop.store(FAILED, Ordering::Release);
        }
    }
}

/// The writer thread, owned by the code that runs the crawl.
pub(crate) struct Writer {
    handle: WriterHandle,
    thread: JoinHandle<()>,
}

/// What a shard holds of the writer (cheap to clone, `Send`).
#[derive(Clone)]
pub(crate) struct WriterHandle {
    state: Arc<State>,
    tx: Sender<Msg>,
}

impl Writer {
    /// Open the configured destination and start the writer, before the
    /// shards start; `None` without `-o`. `append`: a file is appended to
    /// (a resumed crawl's), not truncated. A file is always written with
    /// `O_APPEND`, emptied first unless `append`: a cluster node's files
    /// may be written by two processes of its name for a moment (one cut
    /// off, then superseded), and each line must land after the other's,
    /// never over it.
    pub(crate) fn open(
        output: &Output,
        backlog: usize,
        append: bool,
    ) -> io::Result<Option<Writer>> {
        let out: Box<dyn Write + Send> = match output {
            Output::None => return Ok(None),
            Output::Stdout => Box::new(io::stdout()),
            Output::File(path) => {
                let file = std::fs::OpenOptions::new()
                    .append(true)
                    .create(true)
                    .open(path)?;
                // Not a pipe's or a device's (`-o /dev/stdout`).
                if !append && file.metadata()?.is_file() {
                    file.set_len(0)?;
                }
                // Shared while this process writes it: a process that
                // would repair it (cut a torn line) takes it exclusive
                // first, and so never cuts under a live writer.
                let _ = rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockShared);
                Box::new(file)
            }
        };
        let doing = match output {
            Output::File(path) => format!("writing {}", path.display()),
            _ => "writing records".to_string(),
        };
        Writer::start_doing(out, backlog, doing).map(Some)
    }

    /// Start a writer thread on `out`, behind past `backlog` queued bytes.
    #[cfg(test)]
    pub(crate) fn start(out: Box<dyn Write + Send>, backlog: usize) -> io::Result<Writer> {
        Writer::start_doing(out, backlog, "writing records".to_string())
    }

    /// [`Writer::start`], a failure said as `DOING: ERROR`.
    fn start_doing(
        out: Box<dyn Write + Send>,
        backlog: usize,
        doing: String,
    ) -> io::Result<Writer> {
        let state = Arc::new(State {
            queued: AtomicUsize::new(0),
            backlog,
            stop: AtomicU8::new(WRITING),
            error: Mutex::new(None),
            doing,
            pending: Mutex::new(Vec::new()),
        });
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("ringcrawl-out".into())
            .spawn({
                let state = state.clone();
                move || write_lines(out, &rx, &state)
            })?;
        Ok(Writer {
            handle: WriterHandle { state, tx },
            thread,
        })
    }

    /// A handle for a shard.
    pub(crate) fn handle(&self) -> WriterHandle {
        self.handle.clone()
    }

    /// Write every shard's pending lines (a shard that died included), wait
    /// until all is written, and say whether the output ended early. Call
    /// it once the shards are done.
    pub(crate) fn finish(self) -> Option<Stopped> {
        let pending: Vec<Pending> = lock(&self.handle.state.pending).drain(..).collect();
        for lines in pending {
            let lines = std::mem::take(&mut *lock(&lines));
            self.handle.send(lines);
        }
        let _ = self.handle.tx.send(Msg::End);
        let _ = self.thread.join();
        self.handle.state.stopped()
    }
}

impl WriterHandle {
    /// A new buffer for one shard's lines, registered for [`Writer::finish`].
    pub(crate) fn register(&self) -> Pending {
        let lines = Pending::default();
        lock(&self.state.pending).push(lines.clone());
        lines
    }

    /// Hand whole lines to the writer; never waits.
    pub(crate) fn send(&self, lines: Vec<u8>) {
        if lines.is_empty() {
            return;
        }
        self.state.queued.fetch_add(lines.len(), Ordering::AcqRel);
        let len = lines.len();
        if self.tx.send(Msg::Lines(lines)).is_err() {
            // The writer is gone (only after finish): nothing to wait for.
            self.state.queued.fetch_sub(len, Ordering::AcqRel);
        }
    }

    /// More than the backlog is waiting to be written: start no fetch.
    pub(crate) fn behind(&self) -> bool {
        self.state.queued.load(Ordering::Acquire) > self.state.backlog
    }

    /// The output ended early (its reader left, or a write failed).
    pub(crate) fn stopped(&self) -> Option<Stopped> {
        self.state.stopped()
    }

    /// Wait up to `wait` until every line handed over before this call
    /// (by any thread) is written: a thread that learns from a shard that
    /// a record was handed over can learn here that it is in the file.
    /// Blocks: not for an executor's thread.
    pub(crate) fn barrier(&self, wait: Duration) -> Written {
        let (tx, rx) = mpsc::sync_channel(1);
        if self.tx.send(Msg::Barrier(tx)).is_err() {
            // The writer finished: it wrote everything it was given.
            return self.written_unless_failed();
        }
        match rx.recv_timeout(wait) {
            Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => self.written_unless_failed(),
            Err(mpsc::RecvTimeoutError::Timeout) => Written::NotYet,
        }
    }

    fn written_unless_failed(&self) -> Written {
        match self.state.stopped() {
            None => Written::All,
            Some(_) => Written::Failed,
        }
    }
}

/// The writer thread: write each block whole, in the order received,
/// until told to end; after the first error, drop what comes.
fn write_lines(mut out: Box<dyn Write + Send>, rx: &Receiver<Msg>, state: &State) {
    loop {
        match rx.recv() {
            Ok(Msg::Lines(lines)) => {
                if state.stopped().is_none() {
                    if let Err(e) = write_all(&mut *out, &lines) {
                        state.fail(&e);
                    }
                }
                state.queued.fetch_sub(lines.len(), Ordering::AcqRel);
            }
            Ok(Msg::Barrier(done)) => {
                let _ = done.send(());
            }
            Ok(Msg::End) | Err(_) => return,
        }
    }
}

/// `write_all` then `flush`, waiting out `WouldBlock` (a stdout left
/// non-blocking by whoever shares it) instead of failing on it.
fn write_all(out: &mut dyn Write, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        match out.write(bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = bytes.get(n..).unwrap_or_default(),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => return Err(e),
        }
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::record::Record;
    use crate::output::sink::RecordSink;
    use std::sync::Condvar;

    /// An output that takes `room` bytes, then fails `failures` writes
    /// (ENOSPC, or EPIPE with `broken_pipe`), then takes everything; it
    /// counts the bytes offered.
    struct Flaky {
        room: usize,
        failures: usize,
        broken_pipe: bool,
        written: Arc<Mutex<Vec<u8>>>,
        offered: Arc<AtomicUsize>,
    }

    impl Write for Flaky {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.offered.fetch_add(buf.len(), Ordering::Relaxed);
            let mut written = self.written.lock().unwrap();
            if self.room == 0 && self.failures > 0 {
                self.failures -= 1;
                return Err(io::Error::from_raw_os_error(if self.broken_pipe {
                    libc::EPIPE
                } else {
                    libc::ENOSPC
                }));
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

    struct Output {
        writer: Writer,
        written: Arc<Mutex<Vec<u8>>>,
        offered: Arc<AtomicUsize>,
    }

    fn flaky(room: usize, failures: usize, broken_pipe: bool) -> Output {
        let written = Arc::new(Mutex::new(Vec::new()));
        let offered = Arc::new(AtomicUsize::new(0));
        let out = Box::new(Flaky {
            room,
            failures,
            broken_pipe,
            written: written.clone(),
            offered: offered.clone(),
        });
        Output {
            writer: Writer::start(out, usize::MAX).unwrap(),
            written,
            offered,
        }
    }

    fn record(n: usize) -> Record {
        Record {
            // Fixed, so the same record serialises the same each time.
            timestamp: String::new(),
            ..Record::new(format!("http://a.test/page/{n:06}"), 0)
        }
    }

    /// The lines of records 0..n, as the output should hold them.
    fn lines(n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        (0..n).for_each(|i| record(i).write_jsonl(&mut out));
        out
    }

    #[test]
    fn an_output_that_keeps_failing_is_not_offered_the_same_lines_again() {
        let out = flaky(0, usize::MAX, false);
        let sink = RecordSink::new(Some(out.writer.handle()));
        let n = 20_000;
        for i in 0..n {
            sink.write(&record(i));
        }
        sink.hand_off();
        let stopped = out.writer.finish();
        let total = lines(n).len();
        let offered = out.offered.load(Ordering::Relaxed);
        assert!(
            offered <= total,
            "{offered} bytes offered to a failing output for {total} bytes of records"
        );
        assert!(
            matches!(&stopped, Some(Stopped::Failed(e)) if e.contains("No space left")),
            "{stopped:?}"
        );
    }

    #[test]
    fn after_a_partial_write_no_line_is_written_twice() {
        // 100 bytes go out, one write fails, then the output works again.
        let out = flaky(100, 1, false);
        let sink = RecordSink::new(Some(out.writer.handle()));
        let n = 2_000;
        for i in 0..n {
            sink.write(&record(i));
        }
        sink.hand_off();
        out.writer.finish();
        let written = out.written.lock().unwrap().clone();
        let all = lines(n);
        assert!(
            all.starts_with(&written),
            "the output is not a prefix of the records: {} bytes, starting {:?}",
            written.len(),
            String::from_utf8_lossy(&written[..written.len().min(300)])
        );
    }

    #[test]
    fn a_reader_that_goes_away_stops_the_output_quietly() {
        let out = flaky(0, usize::MAX, true);
        let handle = out.writer.handle();
        let sink = RecordSink::new(Some(handle.clone()));
        sink.write(&record(0));
        sink.hand_off();
        let waited = std::time::Instant::now();
        while handle.stopped().is_none() && waited.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(sink.stopped(), Some(Stopped::ReaderGone));
        for i in 1..1000 {
            sink.write(&record(i));
        }
        sink.hand_off();
        assert_eq!(out.writer.finish(), Some(Stopped::ReaderGone));
        assert_eq!(out.offered.load(Ordering::Relaxed), lines(1).len());
    }

    /// An output that takes nothing until the gate opens.
    struct Gated {
        open: Arc<(Mutex<bool>, Condvar)>,
        written: Arc<Mutex<Vec<u8>>>,
    }

    impl Write for Gated {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let (open, opened) = &*self.open;
            let mut open = open.lock().unwrap();
            while !*open {
                open = opened.wait(open).unwrap();
            }
            self.written.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_slow_output_puts_shards_behind_until_it_catches_up() {
        let open = Arc::new((Mutex::new(false), Condvar::new()));
        let written = Arc::new(Mutex::new(Vec::new()));
        let gated = Box::new(Gated {
            open: open.clone(),
            written: written.clone(),
        });
        let writer = Writer::start(gated, 100_000).unwrap();
        let sink = RecordSink::new(Some(writer.handle()));
        for i in 0..100 {
            sink.write(&record(i));
        }
        sink.hand_off();
        assert!(!sink.behind(), "under the backlog");
        for i in 100..1000 {
            sink.write(&record(i));
        }
        sink.hand_off();
        assert!(sink.behind(), "past the backlog: no new fetches");
        *open.0.lock().unwrap() = true;
        open.1.notify_all();
        let waited = std::time::Instant::now();
        while sink.behind() && waited.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(!sink.behind(), "caught up");
        assert_eq!(writer.finish(), None);
        assert_eq!(*written.lock().unwrap(), lines(1000));
    }

    #[test]
    fn lines_a_shard_left_when_its_thread_panicked_are_written() {
        let written = Arc::new(Mutex::new(Vec::new()));
        let out = Box::new(Flaky {
            room: 0,
            failures: 0,
            broken_pipe: false,
            written: written.clone(),
            offered: Arc::default(),
        });
        let writer = Writer::start(out, usize::MAX).unwrap();
        let handle = writer.handle();
        let shard = std::thread::spawn(move || {
            let sink = RecordSink::new(Some(handle));
            for i in 0..10 {
                sink.write(&record(i));
            }
            panic!("a shard dies with its lines buffered (expected by the test)");
        });
        assert!(shard.join().is_err());
        assert_eq!(writer.finish(), None);
        assert_eq!(*written.lock().unwrap(), lines(10));
    }

    #[test]
    fn a_barrier_returns_once_the_lines_handed_over_before_it_are_written() {
        let open = Arc::new((Mutex::new(false), Condvar::new()));
        let written = Arc::new(Mutex::new(Vec::new()));
        let gated = Box::new(Gated {
            open: open.clone(),
            written: written.clone(),
        });
        let writer = Writer::start(gated, usize::MAX).unwrap();
        let handle = writer.handle();
        let sink = RecordSink::new(Some(writer.handle()));
        for i in 0..10 {
            sink.write(&record(i));
        }
        sink.hand_off();
        assert_eq!(handle.barrier(Duration::from_millis(50)), Written::NotYet);
        *open.0.lock().unwrap() = true;
        open.1.notify_all();
        assert_eq!(handle.barrier(Duration::from_secs(10)), Written::All);
        assert_eq!(
            *written.lock().unwrap(),
            lines(10),
            "all there at the barrier"
        );
        assert_eq!(writer.finish(), None);
        assert_eq!(
            handle.barrier(Duration::from_secs(1)),
            Written::All,
            "finished: all written"
        );
        let failing = flaky(0, 1, false);
        let handle = failing.writer.handle();
        handle.send(lines(1));
        assert_eq!(handle.barrier(Duration::from_secs(10)), Written::Failed);
    }
}
