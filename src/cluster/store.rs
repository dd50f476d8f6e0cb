//! A crawl's shared state in Redis, one command or script per operation,
//! over the synchronous client: to be called from a thread of its own,
//! never from a shard's executor.
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

// Redis replies are network data: no panics on them.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::unreachable
)]

use std::time::Duration;

use redis::{Connection, Script, Value};

use super::Keys;

/// The consumer group every partition's stream is read through.
pub const GROUP: &str = "crawl";

/// The field of a stream entry that holds its URLs, one a line.
const URLS: &str = "u";

/// Bytes of the done log read at once.
const LOAD_CHUNK: usize = 8 << 20;

/// What can go wrong with the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("redis sent an unexpected reply to {0}")]
    Reply(&'static str),
    #[error("crawl {crawl} has {have} partitions, not {want}")]
    Partitions { crawl: String, have: u32, want: u32 },
}

/// A crawl's settings, fixed when it is created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meta {
    pub partitions: u32,
    /// The key of the URL fingerprints (`crawl::seen`), the same on every node.
    pub key: [u64; 2],
}

/// One entry of a partition's stream: a batch of URLs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub partition: u32,
    /// The stream's entry id, as Redis gave it (`ms-seq`).
    pub id: String,
    pub urls: Vec<String>,
}

/// One node's connection to one crawl.
pub struct Store {
    con: Connection,
    keys: Keys,
    node: String,
    scripts: Scripts,
}

struct Scripts {
    create: Script,
    heartbeat: Script,
    acquire: Script,
    renew: Script,
    release: Script,
    done: Script,
    ack: Script,
    backlog: Script,
}

impl Scripts {
    fn new() -> Self {
        Scripts {
            // KEYS: meta. ARGV: partitions, key0, key1, stream prefix, group.
            // Makes the crawl once (its streams and their group); returns
            // the settings it was made with.
            create: Script::new(
                r"
                if redis.call('EXISTS', KEYS[1]) == 0 then
                  redis.call('HSET', KEYS[1], 'partitions', ARGV[1], 'key0', ARGV[2], 'key1', ARGV[3])
                  for p = 0, tonumber(ARGV[1]) - 1 do
                    redis.call('XGROUP', 'CREATE', ARGV[4] .. p, ARGV[5], '0', 'MKSTREAM')
                  end
                end
                return redis.call('HMGET', KEYS[1], 'partitions', 'key0', 'key1')",
            ),
            // KEYS: nodes. ARGV: node, ttl ms. Marks the node alive until
            // now + ttl by Redis's clock (no node's clock is trusted),
            // forgets the expired, returns the live ones.
            heartbeat: Script::new(
                r"
                local t = redis.call('TIME')
                local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
                redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
                redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
                return redis.call('ZRANGE', KEYS[1], 0, -1)",
            ),
            // KEYS: lease. ARGV: node, ttl ms. 1 if the node holds it now.
            acquire: Script::new(
                r"
                if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
                if redis.call('GET', KEYS[1]) == ARGV[1] then
                  redis.call('PEXPIRE', KEYS[1], ARGV[2])
                  return 1
                end
                return 0",
            ),
            // KEYS: leases. ARGV: node, ttl ms. Per lease, 1 if still held
            // (and extended), 0 if lost.
            renew: Script::new(
                r"
                local held = {}
                for i, k in ipairs(KEYS) do
                  if redis.call('GET', k) == ARGV[1] then
                    redis.call('PEXPIRE', k, ARGV[2])
                    held[i] = 1
                  else
                    held[i] = 0
                  end
                end
                return held",
            ),
            // KEYS: lease. ARGV: node.
            release: Script::new(
                r"
                if redis.call('GET', KEYS[1]) == ARGV[1] then
                  return redis.call('DEL', KEYS[1])
                end
                return 0",
            ),
            // KEYS: lease, done log, records. ARGV: node, fingerprints
            // (8 bytes each, little-endian), how many. Fenced.
            done: Script::new(
                r"
                if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
                redis.call('APPEND', KEYS[2], ARGV[2])
                redis.call('INCRBY', KEYS[3], ARGV[3])
                return 1",
            ),
            // KEYS: lease, stream. ARGV: node, group, ids... Fenced.
            ack: Script::new(
                r"
                if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
                local ids = {}
                for i = 3, #ARGV do ids[#ids + 1] = ARGV[i] end
                if #ids > 0 then
                  redis.call('XACK', KEYS[2], ARGV[2], unpack(ids))
                  redis.call('XDEL', KEYS[2], unpack(ids))
                end
                return 1",
            ),
            // ARGV: stream prefix, partitions. Entries in all streams, at
            // one instant (a script runs alone).
            backlog: Script::new(
                r"
                local n = 0
                for p = 0, tonumber(ARGV[2]) - 1 do
                  n = n + redis.call('XLEN', ARGV[1] .. p)
                end
                return n",
            ),
        }
    }
}

impl Store {
    /// Connects `node` to crawl `crawl` on the server at `url`
    /// (`redis://host:port/`), every command bounded by `timeout`.
    pub fn connect(
        url: &str,
        crawl: &str,
        node: &str,
        timeout: Duration,
    ) -> Result<Store, StoreError> {
        let client = redis::Client::open(url)?;
        let con = client.get_connection_with_timeout(timeout)?;
        con.set_read_timeout(Some(timeout))?;
        con.set_write_timeout(Some(timeout))?;
        Ok(Store {
            con,
            keys: Keys::new(crawl),
            node: node.to_string(),
            scripts: Scripts::new(),
        })
    }

    pub fn node(&self) -> &str {
        &self.node
    }

    pub fn keys(&self) -> &Keys {
        &self.keys
    }

    /// Makes the crawl with `partitions` partitions and fingerprint key
    /// `key` if it does not exist; its settings either way. A crawl that
    /// exists with another partition count is an error if `partitions` is
    /// given.
    pub fn create_or_join(
        &mut self,
        partitions: Option<u32>,
        key: [u64; 2],
    ) -> Result<Meta, StoreError> {
        let want = partitions.unwrap_or(super::partition::DEFAULT_PARTITIONS);
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
        let have = u32::try_from(have).map_err(|_| StoreError::Reply("create"))?;
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

    /// Says this node is alive for `ttl` more; the live nodes, sorted.
    pub fn heartbeat(&mut self, ttl: Duration) -> Result<Vec<String>, StoreError> {
        Ok(self
            .scripts
            .heartbeat
            .key(self.keys.nodes())
            .arg(&self.node)
            .arg(millis(ttl))
            .invoke(&mut self.con)?)
    }

    /// Takes (or extends) the lease of `partition` for `ttl`; false if
    /// another node holds it.
    pub fn acquire(&mut self, partition: u32, ttl: Duration) -> Result<bool, StoreError> {
        let held: i64 = self
            .scripts
            .acquire
            .key(self.keys.lease(partition))
            .arg(&self.node)
            .arg(millis(ttl))
            .invoke(&mut self.con)?;
        Ok(held == 1)
    }

    /// Extends the leases of `partitions` by `ttl`; for each, whether it
    /// was still this node's.
    pub fn renew(&mut self, partitions: &[u32], ttl: Duration) -> Result<Vec<bool>, StoreError> {
        if partitions.is_empty() {
            return Ok(Vec::new());
        }
        let mut call = self.scripts.renew.prepare_invoke();
        for &p in partitions {
            call.key(self.keys.lease(p));
        }
        let held: Vec<i64> = call.arg(&self.node).arg(millis(ttl)).invoke(&mut self.con)?;
        if held.len() != partitions.len() {
            return Err(StoreError::Reply("renew"));
        }
        Ok(held.into_iter().map(|h| h == 1).collect())
    }

    /// Gives the lease of `partition` up, if this node holds it.
    pub fn release(&mut self, partition: u32) -> Result<(), StoreError> {
        let _: i64 = self
            .scripts
            .release
            .key(self.keys.lease(partition))
            .arg(&self.node)
            .invoke(&mut self.con)?;
        Ok(())
    }

    /// The holder of each partition's lease (None: free).
    pub fn owners(&mut self, partitions: u32) -> Result<Vec<Option<String>>, StoreError> {
        if partitions == 0 {
            return Ok(Vec::new());
        }
        let keys: Vec<String> = (0..partitions).map(|p| self.keys.lease(p)).collect();
        Ok(redis::cmd("MGET").arg(keys).query(&mut self.con)?)
    }

    /// Appends one entry of `urls` (none with a line break) to each
    /// partition's stream, in one round trip; the entries' ids.
    pub fn add(&mut self, batches: &[(u32, Vec<String>)]) -> Result<Vec<String>, StoreError> {
        let mut pipe = redis::pipe();
        for (p, urls) in batches {
            pipe.cmd("XADD")
                .arg(self.keys.stream(*p))
                .arg("*")
                .arg(URLS)
                .arg(urls.join("\n"));
        }
        Ok(pipe.query(&mut self.con)?)
    }

    /// New entries of `partitions` for this node, at most `count` a
    /// stream, waiting up to `block` for the first (None: no wait).
    pub fn read(
        &mut self,
        partitions: &[u32],
        count: usize,
        block: Option<Duration>,
    ) -> Result<Vec<Entry>, StoreError> {
        if partitions.is_empty() {
            return Ok(Vec::new());
        }
        let mut cmd = redis::cmd("XREADGROUP");
        cmd.arg("GROUP").arg(GROUP).arg(&self.node).arg("COUNT").arg(count);
        if let Some(block) = block {
            cmd.arg("BLOCK").arg(millis(block));
        }
        cmd.arg("STREAMS");
        for &p in partitions {
            cmd.arg(self.keys.stream(p));
        }
        for _ in partitions {
            cmd.arg(">");
        }
        let reply: Value = cmd.query(&mut self.con)?;
        self.parse_read(reply)
    }

    /// Takes over every entry of `partition` delivered and not acknowledged
    /// (to a node that died or gave the partition up, or to this one before
    /// it restarted), with their URLs. Call only while holding the lease.
    pub fn claim(&mut self, partition: u32) -> Result<Vec<Entry>, StoreError> {
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
                if let Some(entry) = parse_entry(partition, item)? {
                    entries.push(entry);
                }
            }
            cursor = text(next).ok_or(StoreError::Reply("XAUTOCLAIM"))?;
            if cursor == "0-0" {
                return Ok(entries);
            }
        }
    }

    /// Appends the fingerprints of URLs done (recorded) to `partition`'s
    /// done log and counts them as records; false, and nothing written,
    /// if this node does not hold the partition (fenced).
    pub fn done(&mut self, partition: u32, fingerprints: &[u64]) -> Result<bool, StoreError> {
        let bytes: Vec<u8> = fingerprints.iter().flat_map(|f| f.to_le_bytes()).collect();
        let held: i64 = self
            .scripts
            .done
            .key(self.keys.lease(partition))
            .key(self.keys.done(partition))
            .key(self.keys.records())
            .arg(&self.node)
            .arg(bytes)
            .arg(fingerprints.len())
            .invoke(&mut self.con)?;
        Ok(held == 1)
    }

    /// Acknowledges and deletes entries of `partition` whose every URL is
    /// done; false, and nothing done, if this node does not hold the
    /// partition (fenced).
    pub fn ack(&mut self, partition: u32, ids: &[String]) -> Result<bool, StoreError> {
        let held: i64 = self
            .scripts
            .ack
            .key(self.keys.lease(partition))
            .key(self.keys.stream(partition))
            .arg(&self.node)
            .arg(GROUP)
            .arg(ids)
            .invoke(&mut self.con)?;
        Ok(held == 1)
    }

    /// The fingerprints in `partition`'s done log (a torn last one, from
    /// a write cut short, is ignored).
    pub fn load_done(&mut self, partition: u32) -> Result<Vec<u64>, StoreError> {
        let key = self.keys.done(partition);
        let mut fingerprints = Vec::new();
        let mut at = 0usize;
        loop {
            let chunk: Vec<u8> = redis::cmd("GETRANGE")
                .arg(&key)
                .arg(at)
                .arg(at + LOAD_CHUNK - 1)
                .query(&mut self.con)?;
            fingerprints.extend(
                chunk
                    .chunks_exact(8)
                    .filter_map(|b| b.try_into().ok().map(u64::from_le_bytes)),
            );
            if chunk.len() < LOAD_CHUNK {
                return Ok(fingerprints);
            }
            at += LOAD_CHUNK;
        }
    }

    /// Entries in all of the crawl's streams, counted at one instant: 0
    /// means every URL ever added is done, its links added before it was
    /// acknowledged, so the crawl is over.
    pub fn backlog(&mut self, partitions: u32) -> Result<u64, StoreError> {
        Ok(self
            .scripts
            .backlog
            .arg(self.keys.stream_prefix())
            .arg(partitions)
            .invoke(&mut self.con)?)
    }

    /// Records counted by [`Store::done`], crawl-wide.
    pub fn records(&mut self) -> Result<u64, StoreError> {
        let n: Option<u64> = redis::cmd("GET").arg(self.keys.records()).query(&mut self.con)?;
        Ok(n.unwrap_or(0))
    }

    fn parse_read(&self, reply: Value) -> Result<Vec<Entry>, StoreError> {
        let streams = match reply {
            Value::Nil => return Ok(Vec::new()),
            Value::Array(streams) => streams,
            _ => return Err(StoreError::Reply("XREADGROUP")),
        };
        let mut entries = Vec::new();
        for stream in streams {
            let Value::Array(pair) = stream else {
                return Err(StoreError::Reply("XREADGROUP"));
            };
            let mut pair = pair.into_iter();
            let (Some(name), Some(Value::Array(items))) = (pair.next(), pair.next()) else {
                return Err(StoreError::Reply("XREADGROUP"));
            };
            let partition = text(name)
                .and_then(|n| self.keys.partition_of_stream(&n))
                .ok_or(StoreError::Reply("XREADGROUP"))?;
            for item in items {
                if let Some(entry) = parse_entry(partition, item)? {
                    entries.push(entry);
                }
            }
        }
        Ok(entries)
    }
}

/// `[id, [field, value, ...]]` → an entry; None for a deleted one (nil).
fn parse_entry(partition: u32, item: Value) -> Result<Option<Entry>, StoreError> {
    let Value::Array(parts) = item else {
        return Ok(None);
    };
    let mut parts = parts.into_iter();
    let Some(id) = parts.next().and_then(text) else {
        return Err(StoreError::Reply("stream entry"));
    };
    let fields = match parts.next() {
        Some(Value::Array(fields)) => fields,
        Some(Value::Nil) | None => return Ok(None),
        Some(_) => return Err(StoreError::Reply("stream entry")),
    };
    let mut urls = Vec::new();
    let mut fields = fields.into_iter();
    while let (Some(name), Some(value)) = (fields.next(), fields.next()) {
        if text(name).as_deref() == Some(URLS) {
            let value = text(value).ok_or(StoreError::Reply("stream entry"))?;
            urls.extend(value.split('\n').filter(|u| !u.is_empty()).map(str::to_string));
        }
    }
    Ok(Some(Entry {
        partition,
        id,
        urls,
    }))
}

/// A reply's text, if it is one.
fn text(value: Value) -> Option<String> {
    match value {
        Value::BulkString(bytes) => String::from_utf8(bytes).ok(),
        Value::SimpleString(s) => Some(s),
        _ => None,
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}
