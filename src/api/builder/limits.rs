//! What a crawl may spend: memory by flag, page, byte and time
//! budgets, free disk, body sizes and time-outs.
//!
//! Settings of [`CrawlerBuilder`], checked at [`CrawlerBuilder::build`].

use std::path::Path;
use std::time::Duration;

use crate::api::error::Setting;

use super::CrawlerBuilder;

impl CrawlerBuilder {
    /// Bytes the hosts' own state may take over all shards (default
    /// [`defaults::HOST_MEMORY`](crate::defaults::HOST_MEMORY)): the names,
    /// politeness clocks, page counts and robots.txt rules of live hosts, and
    /// of finished ones kept in case they come back. Past it the least recently
    /// finished are forgotten (one that comes back fetches robots.txt again),
    /// and the URLs of hosts not yet live wait, spilled to disk, until live
    /// hosts finish. Queued URLs are [`CrawlerBuilder::frontier_memory`]'s.
    /// Each shard gets an even share, and [`build`](Self::build) refuses a
    /// share under [`defaults::MIN_HOST_MEMORY_PER_SHARD`](crate::defaults::MIN_HOST_MEMORY_PER_SHARD)
    /// (room for some eight hosts waiting for their robots.txt).
    pub fn host_memory(mut self, bytes: usize) -> Self {
        self.config.host_memory = bytes;
        self
    }

    /// Bytes each shard's TLS session cache may hold (default
    /// [`defaults::TLS_SESSION_MEMORY`](crate::defaults::TLS_SESSION_MEMORY);
    /// each session keeps a copy of its server's certificate chain); past it
    /// the least recently used host's (name and port's) sessions are forgotten,
    /// and its next connection does a full handshake.
    pub fn tls_session_memory(mut self, bytes: usize) -> Self {
        self.config.tls_session_memory = bytes;
        self
    }

    /// Bytes of RAM the seen-set's buckets may hold, over all shards (default
    /// [`defaults::SEEN_MEMORY`](crate::defaults::SEEN_MEMORY), at least 1 MiB
    /// a shard): URLs seen past it are kept on disk, in a sorted run per shard,
    /// with a Bloom filter (~1.25 bytes a URL) in RAM that answers most lookups
    /// of new URLs without the disk.
    pub fn seen_memory(mut self, bytes: usize) -> Self {
        self.config.seen_memory = bytes;
        self
    }

    /// Bytes of RAM the queued URLs may take, over all shards (default
    /// [`defaults::FRONTIER_MEMORY`](crate::defaults::FRONTIER_MEMORY), split
    /// evenly): past it, each host's newest URLs are spilled to files in the
    /// system's temporary directory and read back when the host's turn nears,
    /// so a crawl that discovers far more URLs than it fetches keeps them on
    /// disk. The files go when the crawl ends.
    pub fn frontier_memory(mut self, bytes: usize) -> Self {
        self.config.frontier_memory = bytes;
        self
    }

    /// Where the crawl makes its folder for what does not fit in RAM (the
    /// queues [`frontier_memory`](Self::frontier_memory) spills, the
    /// seen-set's runs past [`seen_memory`](Self::seen_memory)); default
    /// the system's temporary directory (`TMPDIR`). Made if missing. The
    /// folder goes when the crawl ends, and a killed crawl's is removed
    /// by the next crawl that uses the same directory. A crawl with a
    /// [`state`](Self::state) directory spills there instead.
    /// [`build`](Self::build) refuses a path that is not a directory.
    pub fn spill_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.config.spill_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Stop after this many page fetches (robots.txt not counted): no new
    /// fetch starts, the running ones finish, the rest stays queued.
    pub fn max_pages(mut self, pages: u64) -> Self {
        self.config.budget.pages = Some(pages);
        self
    }

    /// Stop once this many body bytes were received (the running fetches
    /// finish, so a little more arrives).
    pub fn max_bytes(mut self, bytes: u64) -> Self {
        self.config.budget.bytes = Some(bytes);
        self
    }

    /// Stop starting fetches this long after the crawl started (the running
    /// ones finish, within their own timeouts; one still waiting for its
    /// name's DNS answer has not started, and stays queued).
    pub fn max_time(mut self, time: Duration) -> Self {
        self.config.budget.time = Some(time);
        self
    }

    /// Stop as at a spent budget when a file system the crawl writes to
    /// (records, WARC files, index, WACZ, state, spill) has less than
    /// `bytes` free for it, asked once a second: the running fetches
    /// finish, the rest stays queued (a crawl with a state directory can
    /// be resumed once there is room). The report's `budget_spent` is
    /// [`Spent::Disk`](crate::Spent::Disk).
    pub fn min_free_disk(mut self, bytes: u64) -> Self {
        self.config.budget.free_disk = Some(bytes);
        self
    }

    /// Download at most `bytes` of a body of this media type (within
    /// [`max_body`](Self::max_body)); the first rule that matches wins.
    pub fn max_size_per_type(mut self, pattern: &str, bytes: usize) -> Self {
        if let Err(e) = self.config.types.max_size(pattern, bytes) {
            self.refuse(Setting::MaxSizePerType, e.to_string());
        }
        self
    }

    /// Overall deadline of one fetch (connect, request, whole answer;
    /// default [`defaults::TIMEOUT`](crate::defaults::TIMEOUT)).
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.config.timeout = limit;
        self
    }

    /// Limit of the TCP connect and, for `https`, the TLS handshake after
    /// it (together, as curl's `--connect-timeout`; default
    /// [`defaults::CONNECT_TIMEOUT`](crate::defaults::CONNECT_TIMEOUT)).
    pub fn connect_timeout(mut self, limit: Duration) -> Self {
        self.config.connect_timeout = limit;
        self
    }

    /// Limit of each single read (default
    /// [`defaults::READ_TIMEOUT`](crate::defaults::READ_TIMEOUT)).
    pub fn read_timeout(mut self, limit: Duration) -> Self {
        self.config.read_timeout = limit;
        self
    }

    /// Body bytes kept per response (after content decoding); the rest is
    /// not read and the page is marked truncated (`truncated_by: limit`;
    /// default [`defaults::MAX_BODY`](crate::defaults::MAX_BODY)).
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.config.max_body = bytes;
        self
    }
}
