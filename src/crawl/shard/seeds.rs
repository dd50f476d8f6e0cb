//! Seeds as the crawl goes: the shard reads its file of the seed lists'
//! roots (written by `crate::crawl::seeds::split` before the shards
//! started) and queues them while it holds fewer than [`SEED_WINDOW`]
//! live hosts and the frontier has room for more (`host_memory`), so a
//! list of a million hosts does not make a million hosts live at once: the
//! next seeds wait in their file until earlier hosts finish.
//! A bad line of a list is recorded here (`bad_root`, with where it was).
//!
//! The shard's count in `outstanding` is held up by one until its file is
//! read to the end (`crate::crawl::run` adds it), so the crawl cannot end
//! while seeds wait. The file is read with glommio's buffered file I/O, not
//! `std::fs`, so the shard's other tasks go on while it is read.
//!
//! With a state directory, each seed queued is journaled as a found link
//! is, and the journal task keeps the position reached in the file once
//! what came before it is on disk (`journal.rs`): a resume starts there,
//! and the journals hold every seed taken before it.

use std::path::Path;
use std::rc::Rc;
use std::time::{Duration, Instant};

use futures_lite::AsyncBufReadExt;
use url::Url;

use crate::crawl::seeds::guessed_sitemap;
use crate::crawl::seeds::split::Entry;
use crate::job::{ErrorKind, Job};
use crate::output::record::Record;

use super::failure::fail;
use super::seen::{Asker, Enqueued};
use super::Shard;

/// Live hosts (URLs queued or in flight) past which a shard takes no more
/// seeds until some finish: enough hosts to keep every fetch slot busy
/// under per-host delays, few enough that their state stays small.
pub(super) const SEED_WINDOW: usize = 4096;

/// How often a shard whose window is full looks again.
const WINDOW_POLL: Duration = Duration::from_millis(5);

impl Shard {
    /// Read this shard's seeds to the end (or until the crawl stops), then
    /// let go of the shard's hold on the count.
    pub(super) async fn feed_seeds(self: Rc<Self>) {
        let Some(file) = self.seed_file.clone() else {
            return;
        };
        let path = &file.path;
        if let Err(e) = self.read_seeds(path, file.start).await {
            // The first pass wrote the file: failing to read it back is the
            // disk's fault, and the seeds after the fault are lost.
            let message = format!(
                "reading the seeds of shard {} ({}): {e}",
                self.id,
                path.display()
            );
            log::error!("{message}");
            self.recording
                .output_error
                .borrow_mut()
                .get_or_insert(message);
        }
        if self.outstanding.finish(1) {
            self.stop();
        }
    }

    async fn read_seeds(&self, path: &Path, start: u64) -> std::io::Result<()> {
        let file = glommio::io::BufferedFile::open(path).await?;
        let mut reader = glommio::io::StreamReaderBuilder::new(file)
            .with_start_pos(start)
            .with_buffer_size(64 << 10)
            .build();
        let mut line = Vec::new();
        let mut at = start;
        let result = loop {
            while !self.stopping.get() && !self.room_for_seeds() {
                glommio::timer::sleep(WINDOW_POLL).await;
            }
            if self.stopping.get() {
                break Ok(());
            }
            line.clear();
            match reader.read_until(b'\n', &mut line).await {
                Ok(0) => break Ok(()),
                Ok(n) => at += n as u64,
                Err(e) => break Err(e),
            }
            let text = std::str::from_utf8(&line).unwrap_or("");
            match Entry::parse(text.trim_end_matches('\n')) {
                Some(Entry::Root(url)) => self.take_seed(url),
                Some(Entry::Bad { at, text }) => {
                    let mut record = Record::new(text.to_string(), self.id);
                    fail(&mut record, ErrorKind::BadRoot, at);
                    self.emit(record);
                }
                None => {}
            }
            self.seeds_taken_to(at);
            glommio::yield_if_needed().await;
        };
        let _ = reader.close().await;
        result
    }

    /// Fewer than [`SEED_WINDOW`] live hosts, and room for another in the
    /// hosts' memory.
    fn room_for_seeds(&self) -> bool {
        let frontier = self.frontier.borrow();
        frontier.hosts().0 < SEED_WINDOW && frontier.has_room()
    }

    /// Queue a seed (and its origin's guessed sitemap), as the roots are.
    fn take_seed(&self, url: &str) {
        let Ok(parsed) = Url::parse(url) else {
            return;
        };
        let mut jobs = vec![Job::root(url.to_string(), self.config.max_redirect)];
        if self.config.sitemaps {
            jobs.extend(guessed_sitemap(
                &parsed,
                &self.scope,
                self.config.max_redirect,
            ));
        }
        // Counted in before it is offered (invariant 3).
        self.outstanding.add(jobs.len());
        let now = Instant::now();
        let mut dropped = 0;
        for job in jobs {
            // Journaled if queued (no await between): the position kept
            // after this line must find the seed in a journal at a resume.
            let kept = self.journal.is_some().then(|| job.clone());
            match self.enqueue(job, now, Asker::Nobody) {
                Enqueued::Known | Enqueued::Refused => dropped += 1,
                Enqueued::New | Enqueued::Pending => {
                    if let Some(job) = kept {
                        self.journal_job(&job);
                    }
                }
            }
        }
        if dropped > 0 && self.outstanding.finish(dropped) {
            self.stop();
        }
    }
}
