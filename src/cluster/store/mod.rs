//! A crawl's shared state in Redis, one command, pipeline or script per
//! operation, over the synchronous client: to be called from a thread of
//! its own, never from a shard's executor.
//!
//! What it is: the protocol of the keys in [`super`]'s map (names,
//! scripts, replies), each operation a round trip. What it is not: the
//! policy of when to renew, read or acknowledge, nor the engine's side.
//!
//! Fencing is done here, in Redis: every write that only the owner of a
//! partition may make (its done log, its acknowledgements) is a script
//! that checks the lease first and does nothing when another node holds
//! it, so a node that lost a lease without knowing cannot undo the new
//! owner's work. Scripts touch keys they do not declare (all of one crawl):
//! fine on one Redis server, not on Redis Cluster, which ringcrawl does not
//! support.

use std::time::Duration;

use redis::io::tcp::TcpSettings;
use redis::{Connection, IntoConnectionInfo, Value};

use super::Keys;

mod generation;
mod reply;
mod scripts;
mod status;

use scripts::Scripts;
pub use status::{NodeStatus, Status};

/// The consumer group every partition's stream is read through.
pub(crate) const GROUP: &str = "crawl";

/// The field of a stream entry that holds its URLs (`super::wire` lines).
const URLS: &str = "u";

/// Bytes of the done log read at once.
const LOAD_CHUNK: usize = 8 << 20;

/// Bytes of one done-log item: the URL's fingerprint and its host's key,
/// little-endian.
pub(crate) const DONE_ITEM: usize = 16;

/// What can go wrong with a cluster crawl's Redis.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The server or the connection failed, or refused a command.
    #[error("redis: {0}")]
    Redis(RedisFailure),
    /// A reply that is not what the command answers.
    #[error("redis sent an unexpected reply to {0}")]
    Reply(&'static str),
    /// A node gave a partition count the crawl was not made with.
    #[error("crawl {crawl} has {have} partitions, not {want}")]
    Partitions {
        /// The crawl.
        crawl: String,
        /// Its partitions.
        have: u32,
        /// What the node asked for.
        want: u32,
    },
    /// Another process runs under this node's name: its heartbeat stayed
    /// live while this one waited.
    #[error("node {node} is running in crawl {crawl} already (its heartbeat is live): give this one another --node")]
    NameInUse {
        /// The node name.
        node: String,
        /// The crawl.
        crawl: String,
    },
    /// Another process joined the crawl under this node's name (a newer
    /// generation) while this one could not reach Redis: this one is
    /// fenced off for good, and stops.
    #[error("superseded: another process joined the crawl under this node's name while this one was cut off; this one stops")]
    Superseded,
    /// The crawl's keys are gone from Redis (deleted, or Redis started
    /// again without its data: no persistence): the crawl cannot go on.
    #[error("crawl {crawl} is gone from Redis (its keys were deleted, or Redis started again without its data); this node stops")]
    CrawlGone {
        /// The crawl.
        crawl: String,
    },
}

/// A failure of Redis or of the connection to it, as the client library
/// said it: its message, and its cause through `source()`. The client's own
/// error type stays out of ringcrawl's API (a new redis crate is not a new
/// ringcrawl).
#[derive(Debug)]
pub struct RedisFailure(redis::RedisError);

impl std::fmt::Display for RedisFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for RedisFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.0)
    }
}

impl From<redis::RedisError> for StoreError {
    fn from(e: redis::RedisError) -> StoreError {
        if e.code() == Some(generation::SUPERSEDED) {
            return StoreError::Superseded;
        }
        StoreError::Redis(RedisFailure(e))
    }
}

/// A crawl's settings, fixed when it is created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Meta {
    pub partitions: u32,
    /// The key of the URL fingerprints (`crawl::seen`), the same on every node.
    pub key: [u64; 2],
}

/// One entry of a partition's stream: a batch of URLs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub partition: u32,
    /// The stream's entry id, as Redis gave it (`ms-seq`).
    pub id: String,
    /// Its URLs, as `super::wire` lines.
    pub text: String,
}

/// What a node finished in one partition since its last report: URLs
/// recorded (fingerprint, host key) and entries to acknowledge.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Finished {
    pub partition: u32,
    pub done: Vec<(u64, u64)>,
    pub acks: Vec<String>,
}

/// One node's connection to one crawl.
pub(crate) struct Store {
    con: Connection,
    keys: Keys,
    node: String,
    scripts: Scripts,
    /// Bytes of a partition's done log per Redis string, at most (plus
    /// one batch): [`DONE_CHUNK`] but in tests.
    done_chunk: usize,
}

/// A partition's done log is split into strings of this many bytes (4M
/// URLs each): a Redis string stops at 512 MB (33.5M URLs), and a
/// partition may finish more.
pub(crate) const DONE_CHUNK: usize = 64 << 20;

impl Store {
    /// Connects `node` to crawl `crawl` on the server at `url`
    /// (`redis://host:port/`), every command bounded by `timeout`.
    pub(crate) fn connect(
        url: &str,
        crawl: &str,
        node: &str,
        timeout: Duration,
    ) -> Result<Store, StoreError> {
        // TCP_NODELAY: without it each pipeline's round trip waited ~40 ms
        // here (Nagle's algorithm against the server's delayed ACK).
        let info = url
            .into_connection_info()?
            .set_tcp_settings(TcpSettings::default().set_nodelay(true));
        let client = redis::Client::open(info)?;
        let con = client.get_connection_with_timeout(timeout)?;
        con.set_read_timeout(Some(timeout))?;
        con.set_write_timeout(Some(timeout))?;
        Ok(Store {
            con,
            keys: Keys::new(crawl),
            node: node.to_string(),
            scripts: Scripts::new(),
            done_chunk: DONE_CHUNK,
        })
    }

    /// A smaller chunk of the done log than [`DONE_CHUNK`] (tests: a run
    /// of chunks without writing 64 MiB).
    #[cfg(test)]
    pub(crate) fn with_done_chunk(mut self, bytes: usize) -> Store {
        self.done_chunk = bytes.max(DONE_ITEM);
        self
    }

    /// This connection's commands are `identity`'s from now on (a
    /// joining node's, once its generation is known).
    pub(crate) fn set_identity(&mut self, identity: &str) {
        self.node = identity.to_string();
    }

    #[cfg(test)]
    pub(crate) fn keys(&self) -> &Keys {
        &self.keys
    }

    /// Makes the crawl with `partitions` partitions and fingerprint key
    /// `key` if it does not exist; its settings either way. A crawl that
    /// exists with another partition count is an error if `partitions` is
    /// given.
    pub(crate) fn create_or_join(
        &mut self,
        partitions: Option<u32>,
        key: [u64; 2],
    ) -> Result<Meta, StoreError> {
        let want = partitions.unwrap_or(crate::defaults::PARTITIONS);
        let reply: Vec<Option<String>> = self
            .scripts
            .create
            .key(self.keys.meta())
            .arg(want)
            .arg(key[0].to_string())
            .arg(key[1].to_string())
            .arg(self.keys.stream_prefix())
            .arg(GROUP)
            .invoke(&mut self.con)?;
        let field = |i: usize| -> Option<u64> { reply.get(i)?.as_deref()?.parse().ok() };
        let (Some(have), Some(k0), Some(k1)) = (field(0), field(1), field(2)) else {
            return Err(StoreError::Reply("create"));
        };
        let have = u32::try_from(have)
            .ok()
            .filter(|p| (1..=super::partition::MAX_PARTITIONS).contains(p))
            .ok_or(StoreError::Reply("create"))?;
        if partitions.is_some_and(|want| want != have) {
            return Err(StoreError::Partitions {
                crawl: self.keys.crawl().to_string(),
                have,
                want,
            });
        }
        Ok(Meta {
            partitions: have,
            key: [k0, k1],
        })
    }

    /// Adds `roots` to the crawl's roots and their URLs (`super::wire`
    /// text per partition) to the streams, and marks the crawl started,
    /// all at once (MULTI/EXEC).
    pub(crate) fn add_roots(
        &mut self,
        roots: &[String],
        batches: &[(u32, String)],
    ) -> Result<(), StoreError> {
        if roots.is_empty() {
            return Ok(());
        }
        let mut pipe = redis::pipe();
        pipe.atomic();
        pipe.cmd("SADD").arg(self.keys.roots()).arg(roots).ignore();
        self.append_adds(&mut pipe, batches);
        pipe.cmd("HSET")
            .arg(self.keys.meta())
            .arg("started")
            .arg(1)
            .ignore();
        let _: () = pipe.query(&mut self.con)?;
        Ok(())
    }

    /// Every root of the crawl so far, sorted.
    pub(crate) fn roots(&mut self) -> Result<Vec<String>, StoreError> {
        let mut roots: Vec<String> = redis::cmd("SMEMBERS")
            .arg(self.keys.roots())
            .query(&mut self.con)?;
        roots.sort();
        Ok(roots)
    }

    /// How many roots the crawl has (cheap: to see whether they changed).
    pub(crate) fn root_count(&mut self) -> Result<u64, StoreError> {
        Ok(redis::cmd("SCARD")
            .arg(self.keys.roots())
            .query(&mut self.con)?)
    }

    /// Says this node is alive for `ttl` more; the live nodes, sorted.
    pub(crate) fn heartbeat(&mut self, ttl: Duration) -> Result<Vec<String>, StoreError> {
        // Redis lists them by expiry.
        let mut nodes: Vec<String> = self
            .scripts
            .heartbeat
            .key(self.keys.nodes())
            .arg(&self.node)
            .arg(millis(ttl))
            .arg(self.keys.generations())
            .invoke(&mut self.con)?;
        nodes.sort();
        Ok(nodes)
    }

    /// Publishes this node's counters for `status` (kept `ttl` after the
    /// last report).
    pub(crate) fn report(&mut self, status: &NodeStatus, ttl: Duration) -> Result<(), StoreError> {
        let key = self.keys.node(&status.name);
        let mut pipe = redis::pipe();
        pipe.cmd("HSET")
            .arg(&key)
            .arg("records")
            .arg(status.records)
            .arg("pages_per_sec")
            .arg(format!("{:.1}", status.pages_per_sec))
            .arg("partitions")
            .arg(status.partitions)
            .ignore();
        pipe.cmd("PEXPIRE").arg(&key).arg(millis(ttl * 6)).ignore();
        let _: () = pipe.query(&mut self.con)?;
        Ok(())
    }

    /// Enrolls node `name` in the crawl's members: whether it was there
    /// already (a node coming back under its name).
    pub(crate) fn enroll(&mut self, name: &str) -> Result<bool, StoreError> {
        let added: u64 = redis::cmd("SADD")
            .arg(self.keys.members())
            .arg(name)
            .query(&mut self.con)?;
        Ok(added == 0)
    }

    /// Incarnations of node `name` other than this one whose heartbeat is
    /// live now (by Redis's clock).
    pub(crate) fn others_alive(&mut self, name: &str) -> Result<usize, StoreError> {
        let now_ms = self.now_ms()?;
        let live: Vec<String> = redis::cmd("ZRANGE")
            .arg(self.keys.nodes())
            .arg(now_ms)
            .arg("+inf")
            .arg("BYSCORE")
            .query(&mut self.con)?;
        Ok(live
            .iter()
            .filter(|i| super::name_of(i) == name && **i != self.node)
            .count())
    }

    /// Redis's clock, in milliseconds: the one heartbeats are scored by.
    fn now_ms(&mut self) -> Result<u64, StoreError> {
        let (secs, micros): (u64, u64) = redis::cmd("TIME").query(&mut self.con)?;
        Ok(secs * 1000 + micros / 1000)
    }

    /// This node leaves the crawl: no longer among the live nodes.
    pub(crate) fn leave(&mut self) -> Result<(), StoreError> {
        let _: () = redis::cmd("ZREM")
            .arg(self.keys.nodes())
            .arg(&self.node)
            .query(&mut self.con)?;
        Ok(())
    }

    /// Takes (or extends) the lease of `partition` for `ttl`; false if
    /// another node holds it.
    pub(crate) fn acquire(&mut self, partition: u32, ttl: Duration) -> Result<bool, StoreError> {
        let held: i64 = self
            .scripts
            .acquire
            .key(self.keys.lease(partition))
            .arg(&self.node)
            .arg(millis(ttl))
            .arg(self.keys.generations())
            .invoke(&mut self.con)?;
        Ok(held == 1)
    }

    /// Extends the leases of `partitions` by `ttl`; for each, whether it
    /// was still this node's.
    pub(crate) fn renew(
        &mut self,
        partitions: &[u32],
        ttl: Duration,
    ) -> Result<Vec<bool>, StoreError> {
        if partitions.is_empty() {
            return Ok(Vec::new());
        }
        let mut call = self.scripts.renew.prepare_invoke();
        for &p in partitions {
            call.key(self.keys.lease(p));
        }
        let held: Vec<i64> = call
            .arg(&self.node)
            .arg(millis(ttl))
            .arg(self.keys.generations())
            .invoke(&mut self.con)?;
        if held.len() != partitions.len() {
            return Err(StoreError::Reply("renew"));
        }
        Ok(held.into_iter().map(|h| h == 1).collect())
    }

    /// Gives the lease of `partition` up, if this node holds it.
    pub(crate) fn release(&mut self, partition: u32) -> Result<(), StoreError> {
        let _: i64 = self
            .scripts
            .release
            .key(self.keys.lease(partition))
            .arg(&self.node)
            .invoke(&mut self.con)?;
        Ok(())
    }

    /// The holder of each partition's lease (None: free).
    #[cfg(test)]
    pub(crate) fn owners(&mut self, partitions: u32) -> Result<Vec<Option<String>>, StoreError> {
        if partitions == 0 {
            return Ok(Vec::new());
        }
        let keys: Vec<String> = (0..partitions).map(|p| self.keys.lease(p)).collect();
        Ok(redis::cmd("MGET").arg(keys).query(&mut self.con)?)
    }

    /// Appends one entry of URLs (`super::wire` text) to each partition's
    /// stream, in one script, and counts them. `number` names the add: a
    /// process numbers its adds upward and, when an answer is lost, sends
    /// the same add again under the same number before any other; Redis
    /// writes a number once (as [`Store::finish`] does reports).
    pub(crate) fn add(&mut self, number: u64, batches: &[(u32, String)]) -> Result<(), StoreError> {
        if batches.is_empty() {
            return Ok(());
        }
        let mut call = self.scripts.add.prepare_invoke();
        call.key(self.keys.added()).key(self.keys.adds());
        let urls: usize = batches.iter().map(|(_, text)| lines(text)).sum();
        call.arg(&self.node).arg(number).arg(urls).arg(URLS);
        for (p, text) in batches {
            call.key(self.keys.stream(*p)).arg(text);
        }
        call.arg(self.keys.generations());
        let _: i64 = call.invoke(&mut self.con)?;
        Ok(())
    }

    fn append_adds(&self, pipe: &mut redis::Pipeline, batches: &[(u32, String)]) {
        let mut urls = 0usize;
        for (p, text) in batches {
            urls += lines(text);
            pipe.cmd("XADD")
                .arg(self.keys.stream(*p))
                .arg("*")
                .arg(URLS)
                .arg(text)
                .ignore();
        }
        pipe.cmd("INCRBY").arg(self.keys.added()).arg(urls).ignore();
    }

    /// New entries of `partitions` for this node, at most `count` a
    /// stream; and how many roots the crawl had after they were read
    /// (every root an entry's URLs descend from was added before the
    /// entry). Not fenced: a read that reaches Redis after this node's
    /// lease ran out leaves its entries pending here, and the partition's
    /// owner takes them back ([`Store::sweep`]).
    pub(crate) fn read(
        &mut self,
        partitions: &[u32],
        count: usize,
    ) -> Result<(Vec<Entry>, u64), StoreError> {
        if partitions.is_empty() {
            return Ok((Vec::new(), self.root_count()?));
        }
        let mut cmd = redis::cmd("XREADGROUP");
        cmd.arg("GROUP")
            .arg(GROUP)
            .arg(&self.node)
            .arg("COUNT")
            .arg(count);
        cmd.arg("STREAMS");
        for &p in partitions {
            cmd.arg(self.keys.stream(p));
        }
        for _ in partitions {
            cmd.arg(">");
        }
        let (reply, roots): (Value, u64) = redis::pipe()
            .add_command(cmd)
            .cmd("SCARD")
            .arg(self.keys.roots())
            .query(&mut self.con)?;
        Ok((reply::parse_read(&self.keys, reply)?, roots))
    }

    /// Every entry of `partitions` delivered to this node and not
    /// acknowledged (its own pending list, read again from the start:
    /// nothing changes in Redis, so a lost reply costs nothing). After a
    /// read or sweep whose reply was lost, the entries it may have
    /// delivered are among these.
    pub(crate) fn pending_here(&mut self, partitions: &[u32]) -> Result<Vec<Entry>, StoreError> {
        if partitions.is_empty() {
            return Ok(Vec::new());
        }
        let mut cmd = redis::cmd("XREADGROUP");
        cmd.arg("GROUP").arg(GROUP).arg(&self.node).arg("STREAMS");
        for &p in partitions {
            cmd.arg(self.keys.stream(p));
        }
        for _ in partitions {
            cmd.arg("0");
        }
        let reply: Value = cmd.query(&mut self.con)?;
        reply::parse_read(&self.keys, reply)
    }

    /// The entries of `partitions` (those whose lease this node holds)
    /// pending for other nodes and idle for `idle`, claimed for this one:
    /// left there by a read that came too late (see [`Store::read`]).
    pub(crate) fn sweep(
        &mut self,
        partitions: &[u32],
        idle: Duration,
    ) -> Result<Vec<Entry>, StoreError> {
        if partitions.is_empty() {
            return Ok(Vec::new());
        }
        let mut call = self.scripts.sweep.prepare_invoke();
        for &p in partitions {
            call.key(self.keys.lease(p)).key(self.keys.stream(p));
        }
        let reply: Value = call
            .arg(&self.node)
            .arg(GROUP)
            .arg(millis(idle))
            .arg(self.keys.generations())
            .invoke(&mut self.con)?;
        reply::parse_read(&self.keys, reply)
    }

    /// Takes over every entry of `partition` delivered and not acknowledged
    /// (to a node that died or gave the partition up, or to this one before
    /// it lost the partition), with their URLs. Call only while holding
    /// the lease.
    pub(crate) fn claim(&mut self, partition: u32) -> Result<Vec<Entry>, StoreError> {
        let stream = self.keys.stream(partition);
        let mut entries = Vec::new();
        let mut cursor = "0-0".to_string();
        loop {
            let reply: Value = redis::cmd("XAUTOCLAIM")
                .arg(&stream)
                .arg(GROUP)
                .arg(&self.node)
                .arg(0)
                .arg(&cursor)
                .arg("COUNT")
                .arg(1000)
                .query(&mut self.con)?;
            let Value::Array(parts) = reply else {
                return Err(StoreError::Reply("XAUTOCLAIM"));
            };
            let mut parts = parts.into_iter();
            let (Some(next), Some(Value::Array(claimed))) = (parts.next(), parts.next()) else {
                return Err(StoreError::Reply("XAUTOCLAIM"));
            };
            for item in claimed {
                // Entries deleted meanwhile come back as nil.
                if let Some(entry) = reply::parse_entry(partition, item)? {
                    entries.push(entry);
                }
            }
            cursor = reply::text(next).ok_or(StoreError::Reply("XAUTOCLAIM"))?;
            if cursor == "0-0" {
                return Ok(entries);
            }
        }
    }

    /// Reports what was finished, in one script: per partition, the URLs
    /// recorded go to its done log (and the crawl's record count) and the
    /// entries done are acknowledged and deleted. Fenced per partition:
    /// for each, in order, whether it was written (false: this node does
    /// not hold the partition, and nothing of it was written).
    ///
    /// `number` names the report: a process numbers its reports upward
    /// and, when an answer is lost, sends the same report again under the
    /// same number before any other. Redis writes a number once and
    /// answers it again as it did the first time.
    pub(crate) fn finish(
        &mut self,
        number: u64,
        finished: &[Finished],
    ) -> Result<Vec<bool>, StoreError> {
        if finished.is_empty() {
            return Ok(Vec::new());
        }
        let mut call = self.scripts.finish.prepare_invoke();
        call.key(self.keys.records()).key(self.keys.reports());
        call.arg(&self.node)
            .arg(GROUP)
            .arg(self.done_chunk)
            .arg(number);
        for f in finished {
            call.key(self.keys.lease(f.partition))
                .key(self.keys.done(f.partition))
                .key(self.keys.stream(f.partition));
            let bytes: Vec<u8> = f
                .done
                .iter()
                .flat_map(|&(fp, host)| fp.to_le_bytes().into_iter().chain(host.to_le_bytes()))
                .collect();
            call.arg(bytes)
                .arg(f.done.len())
                .arg(f.acks.len())
                .arg(&f.acks);
        }
        call.arg(self.keys.generations());
        let held: Vec<i64> = call.invoke(&mut self.con)?;
        if held.len() != finished.len() {
            return Err(StoreError::Reply("finish"));
        }
        Ok(held.into_iter().map(|h| h == 1).collect())
    }

    /// The (fingerprint, host key) of every URL of `partition` with a
    /// record, from every chunk of its done log (a torn last item of a
    /// chunk, from a write cut short, is ignored).
    pub(crate) fn load_done(&mut self, partition: u32) -> Result<Vec<(u64, u64)>, StoreError> {
        let base = self.keys.done(partition);
        let mut done = Vec::new();
        let mut chunk = 0u64;
        loop {
            let key = match chunk {
                0 => base.clone(),
                i => format!("{base}:{i}"),
            };
            if !self.load_chunk(&key, &mut done)? {
                return Ok(done);
            }
            chunk += 1;
        }
    }

    /// Add the items of the done log's chunk `key` to `done`; false if it
    /// is empty (or missing): the chunks end there.
    fn load_chunk(&mut self, key: &str, done: &mut Vec<(u64, u64)>) -> Result<bool, StoreError> {
        let mut at = 0usize;
        loop {
            let chunk: Vec<u8> = redis::cmd("GETRANGE")
                .arg(key)
                .arg(at)
                .arg(at + LOAD_CHUNK - 1)
                .query(&mut self.con)?;
            done.extend(chunk.chunks_exact(DONE_ITEM).filter_map(|item| {
                let (fp, host) = item.split_at(8);
                Some((
                    u64::from_le_bytes(fp.try_into().ok()?),
                    u64::from_le_bytes(host.try_into().ok()?),
                ))
            }));
            if chunk.len() < LOAD_CHUNK {
                return Ok(at > 0 || !chunk.is_empty());
            }
            at += LOAD_CHUNK;
        }
    }

    /// Entries in all of the crawl's streams, counted at one instant: 0
    /// means every URL ever added is done, its links added before it was
    /// acknowledged, so the crawl is over. None before any root was added.
    pub(crate) fn backlog(&mut self, partitions: u32) -> Result<Option<u64>, StoreError> {
        let n: i64 = self
            .scripts
            .backlog
            .key(self.keys.meta())
            .arg(self.keys.stream_prefix())
            .arg(partitions)
            .invoke(&mut self.con)?;
        Ok(u64::try_from(n).ok())
    }

    /// The server's `maxmemory-policy`; None where `CONFIG GET` is not
    /// allowed (a managed Redis may rename or forbid it).
    pub(crate) fn eviction_policy(&mut self) -> Option<String> {
        let reply: Result<Vec<String>, _> = redis::cmd("CONFIG")
            .arg("GET")
            .arg("maxmemory-policy")
            .query(&mut self.con);
        reply.ok()?.into_iter().nth(1)
    }

    /// Records counted by [`Store::finish`], crawl-wide.
    #[cfg(test)]
    pub(crate) fn records(&mut self) -> Result<u64, StoreError> {
        let n: Option<u64> = redis::cmd("GET")
            .arg(self.keys.records())
            .query(&mut self.con)?;
        Ok(n.unwrap_or(0))
    }
}

/// Whether Redis may evict keys under `policy` when full: anything but
/// `noeviction`. An evicted lease, stream or done log loses or repeats
/// work silently; with `noeviction` a full Redis refuses writes, which
/// the nodes see as errors.
pub(crate) fn may_evict(policy: &str) -> bool {
    !policy.eq_ignore_ascii_case("noeviction")
}

/// The URLs of an entry's `super::wire` text: one a line.
fn lines(text: &str) -> usize {
    text.bytes().filter(|&b| b == b'\n').count()
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

#[cfg(test)]
mod tests;
