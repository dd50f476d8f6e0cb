//! A resume's replay of the earlier runs' journals, each read once.
//!
//! Every journal holds the URLs its shard's pages found, whatever shard
//! owns their hosts. The replay reads each journal once, on threads of its
//! own (blocking `std::fs` reads, never on an executor), decodes each chunk
//! once and routes every job to the shard that owns its host, by the same
//! `shard_for(host)` the crawl routes by: a shard decodes nothing it does
//! not own. What is routed waits in a bounded inbox per shard (a few
//! batches), which the shard empties without blocking ([`Replay::take`]);
//! a full inbox makes the readers wait, so the replay goes as fast as the
//! slowest shard takes it and holds a fixed amount of RAM.
//!
//! What it is not: the check for damage before the resume starts
//! ([`super::journal::check`], on the main thread, without decoding), nor
//! what a shard does with a job (the seen-set, the queues: the shard's
//! `journal.rs`), nor the order of the URLs: a URL offered twice is seen
//! the second time, whichever comes first.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use ringcrawl_links::urls;

use crate::job::Job;
use crate::keys::shard_for;

use super::journal::{self, ToReplay};

/// Jobs in one batch handed to a shard.
const BATCH: usize = 1024;

/// Batches an inbox holds before the readers wait for the shard.
const INBOX: usize = 8;

/// Reader threads at most (each keeps a batch under way per shard).
const READERS: usize = 4;

/// How long a waiting reader sleeps before it looks whether the replay
/// was given up.
const RECHECK: Duration = Duration::from_millis(100);

/// What a shard takes from its inbox.
#[derive(Debug)]
pub(crate) enum Take {
    /// Jobs of this shard's hosts.
    Jobs(Vec<Job>),
    /// Nothing yet: the readers are behind.
    Empty,
    /// Every journal was read and every job taken.
    Ended,
    /// A journal could not be read: the message (the resume cannot be
    /// complete).
    Failed(String),
}

/// The replay under way: started once per resume, shared by the shards.
/// Dropping it tells the readers to stop.
#[derive(Debug)]
pub(crate) struct Replay {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    inboxes: Vec<Inbox>,
    /// Readers still reading.
    readers: AtomicUsize,
    /// The replay is given up (dropped): the readers stop.
    stopped: AtomicBool,
    /// The first read error, for every shard.
    failure: Mutex<Option<String>>,
    /// The state directory's `checked.json`, removed on a failure: the
    /// next resume checks every file again, and refuses damage before it
    /// fetches anything.
    checks: Option<PathBuf>,
}

#[derive(Debug, Default)]
struct Inbox {
    state: Mutex<InboxState>,
    /// A batch was taken, or the inbox given up.
    room: Condvar,
}

#[derive(Debug, Default)]
struct InboxState {
    batches: VecDeque<Vec<Job>>,
    /// The shard takes no more (it stopped): batches for it are dropped.
    abandoned: bool,
}

impl Replay {
    /// Start reading `journals` for a crawl of `shards` shards, on up to
    /// [`READERS`] threads, each reading its share of the files in order.
    /// `checks`: the `checked.json` to remove if the replay fails.
    pub(crate) fn start(journals: Vec<ToReplay>, shards: usize, checks: Option<PathBuf>) -> Replay {
        let readers = journals.len().min(READERS);
        let shared = Arc::new(Shared {
            inboxes: (0..shards).map(|_| Inbox::default()).collect(),
            readers: AtomicUsize::new(readers),
            stopped: AtomicBool::new(false),
            failure: Mutex::new(None),
            checks,
        });
        let mut shares = vec![Vec::new(); readers];
        for (i, path) in journals.into_iter().enumerate() {
            if let Some(share) = shares.get_mut(i % readers) {
                share.push(path);
            }
        }
        for (i, share) in shares.into_iter().enumerate() {
            let shared = shared.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("ringcrawl-replay-{i}"))
                .spawn({
                    let shared = shared.clone();
                    move || shared.read(share)
                });
            if let Err(e) = spawned {
                shared.fail(format!("starting a thread to read the journals: {e}"));
                shared.readers.fetch_sub(1, Ordering::AcqRel);
            }
        }
        Replay { shared }
    }

    /// The next batch for shard `shard`, without waiting.
    pub(crate) fn take(&self, shard: usize) -> Take {
        let Some(inbox) = self.shared.inboxes.get(shard) else {
            return Take::Ended;
        };
        let mut state = lock(&inbox.state);
        if let Some(jobs) = state.batches.pop_front() {
            drop(state);
            inbox.room.notify_all();
            return Take::Jobs(jobs);
        }
        // Under the inbox's lock: a reader that has not pushed its last
        // batch yet cannot have counted itself out.
        if self.shared.readers.load(Ordering::Acquire) > 0 {
            return Take::Empty;
        }
        match lock(&self.shared.failure).clone() {
            Some(failure) => Take::Failed(failure),
            None => Take::Ended,
        }
    }

    /// Shard `shard` takes no more (it stopped before the end): what is
    /// routed to it is dropped, so the readers never wait for it.
    pub(crate) fn abandon(&self, shard: usize) {
        if let Some(inbox) = self.shared.inboxes.get(shard) {
            let mut state = lock(&inbox.state);
            state.abandoned = true;
            state.batches.clear();
            drop(state);
            inbox.room.notify_all();
        }
    }
}

impl Drop for Replay {
    fn drop(&mut self) {
        self.shared.stopped.store(true, Ordering::Release);
        for inbox in &self.shared.inboxes {
            inbox.room.notify_all();
        }
    }
}

impl Shared {
    /// One reader: read `journals` in order, route their jobs, count out.
    fn read(&self, journals: Vec<ToReplay>) {
        let shards = self.inboxes.len();
        let mut pending: Vec<Vec<Job>> = vec![Vec::new(); shards];
        'files: for file in journals {
            let (path, accepted) = (&file.path, file.accepted());
            let mut reader = match journal::Reader::open_from(path, file.from) {
                Ok(reader) => reader,
                Err(e) => {
                    self.fail(e.to_string());
                    break;
                }
            };
            loop {
                if self.stopped.load(Ordering::Acquire) {
                    break 'files;
                }
                let jobs = match reader.next_chunk() {
                    Ok(Some(jobs)) => jobs,
                    Ok(None) => break,
                    Err(e) => {
                        self.fail(e.to_string());
                        break 'files;
                    }
                };
                // Damage its check did not see (the disk's, since): the
                // URLs after it are lost unless the crawl accepts it.
                let read = reader.read();
                // New damage before the accepted one moves the first.
                let moved = !file.discard && read.first_damage != file.checked.first_damage;
                if read.damaged > accepted || (moved && read.first_damage.is_some()) {
                    let at = match moved {
                        true => read.first_damage,
                        false => reader.last_damage(),
                    };
                    self.fail(format!(
                        "{}: damaged at byte {} since a resume checked it; \
                         resume with --resume-discard-damaged to accept the loss",
                        path.display(),
                        at.unwrap_or(0),
                    ));
                    break 'files;
                }
                for job in jobs {
                    let shard = shard_for(urls::host_of(&job.url), shards);
                    let Some(batch) = pending.get_mut(shard) else {
                        continue;
                    };
                    batch.push(job);
                    if batch.len() >= BATCH {
                        let full = std::mem::take(batch);
                        self.push(shard, full);
                    }
                }
            }
            let read = reader.read();
            // Its end as the check found it: a last chunk damaged since
            // would read as a kill's tear.
            if !file.discard && read != file.checked {
                self.fail(format!(
                    "{}: damaged since a resume checked it (then {} whole chunks and {} bytes \
                     after them, now {} and {}); resume with --resume-discard-damaged to \
                     accept the loss",
                    path.display(),
                    file.checked.chunks,
                    file.checked.torn,
                    read.chunks,
                    read.torn
                ));
                break 'files;
            }
            if file.discard && read != file.checked {
                log::warn!(
                    "{}: not as a resume checked it (damaged since): read as it is, its lost URLs accepted",
                    path.display()
                );
            } else if read.torn > 0 {
                log::info!(
                    "{} ends in {} bytes of a chunk cut by the kill",
                    path.display(),
                    read.torn
                );
            }
            log::debug!("{}: {} URLs replayed", path.display(), read.jobs);
        }
        for (shard, batch) in pending.into_iter().enumerate() {
            if !batch.is_empty() {
                self.push(shard, batch);
            }
        }
        // After the last push: a shard that finds its inbox empty and no
        // reader left has had every batch (`take`).
        self.readers.fetch_sub(1, Ordering::AcqRel);
    }

    /// Hand `batch` to shard `shard`'s inbox, waiting while it is full;
    /// dropped if the shard gave up or the replay stopped.
    fn push(&self, shard: usize, batch: Vec<Job>) {
        let Some(inbox) = self.inboxes.get(shard) else {
            return;
        };
        let mut state = lock(&inbox.state);
        while state.batches.len() >= INBOX
            && !state.abandoned
            && !self.stopped.load(Ordering::Acquire)
        {
            state = inbox
                .room
                .wait_timeout(state, RECHECK)
                .map_or_else(|p| p.into_inner().0, |(guard, _)| guard);
        }
        if !state.abandoned && !self.stopped.load(Ordering::Acquire) {
            state.batches.push_back(batch);
        }
    }

    /// Keep the first failure; the readers stop at their next chunk.
    fn fail(&self, what: String) {
        lock(&self.failure).get_or_insert(what);
        self.stopped.store(true, Ordering::Release);
        if let Some(path) = &self.checks {
            if let Err(e) = std::fs::remove_file(path) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    log::warn!("{}: {e}", path.display());
                }
            }
        }
    }
}

/// Lock `mutex`, whatever a panicking holder left (the state it guards is
/// a queue, whole after every operation).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests;
