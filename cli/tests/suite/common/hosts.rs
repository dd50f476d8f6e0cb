//! The crawl's fixed host key, stated by the suite on its own: which shard
//! of a crawl owns a host, and which proxy a host tries first, are this key
//! modulo their number (the library's `src/keys.rs`). The key is a stored
//! format (a cluster's done log keeps it) and the same in every thread,
//! process and run, so a test may name hosts to land where it needs them
//! without asking the library's internals.

/// FNV-1a of the ASCII-lower-cased host, its high bits folded in.
pub fn host_key(host: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in host.bytes() {
        hash ^= u64::from(byte.to_ascii_lowercase());
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash ^ (hash >> 32)
}

/// The shard of `shards` that owns `host`.
pub fn shard_for(host: &str, shards: usize) -> usize {
    (host_key(host) % shards.max(1) as u64) as usize
}
