//! The crawl's fixed hashes, which every thread, process and run must agree
//! on: the shard that owns a host ([`shard_for`], from [`host_key`]) and a
//! URL's keyed fingerprint in the seen-set ([`Fingerprinter`]).
//!
//! A leaf: it imports no other module of the crate. The engine routes and
//! deduplicates with them; the state directory and a cluster node compute
//! the same values on their own threads (a resume reading its records, a
//! node taking a partition's URLs) without reaching up into the engine.

use std::hash::Hasher;

use foldhash::SharedSeed;

/// The shard that owns `host`: [`host_key`] modulo `shards`.
#[cfg_attr(
    not(feature = "bench-hooks"),
    allow(unreachable_pub, reason = "for bench_hooks")
)]
pub fn shard_for(host: &str, shards: usize) -> usize {
    (host_key(host) % shards.max(1) as u64) as usize
}

/// A host's key: FNV-1a of the ASCII-lower-cased host, its high bits
/// folded in. Fixed key on purpose (never `RandomState`): the same in
/// every thread, process and run, so it may be stored (a cluster's done
/// log keeps it, for any node to find a URL's shard).
pub(crate) fn host_key(host: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in host.bytes() {
        hash ^= u64::from(byte.to_ascii_lowercase());
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    // Fold the high bits in: FNV's low bits are weak for short keys.
    hash ^ (hash >> 32)
}

/// The stored form of a fingerprint: 0 marks an empty slot, so 0 becomes 1.
#[inline]
pub(crate) fn nonzero(fp: u64) -> u64 {
    fp.max(1)
}

/// The keyed fingerprint function of one crawl: what the seen-set (`crate::crawl::seen`) uses, and
/// what code with no set at hand uses (a resume reading the records on
/// the main thread), the seeds derived once.
#[derive(Clone)]
pub(crate) struct Fingerprinter {
    /// The per-hasher seed and the shared seed.
    key0: u64,
    seed: SharedSeed,
}

impl Fingerprinter {
    /// The function of the crawl key `key`.
    pub(crate) fn new(key: [u64; 2]) -> Fingerprinter {
        Fingerprinter {
            key0: key[0],
            seed: SharedSeed::from_u64(key[1]),
        }
    }

    /// The URL's keyed 64-bit fingerprint (never 0), the same for one key
    /// in every process.
    pub(crate) fn fingerprint(&self, url: &str) -> u64 {
        let mut h = foldhash::quality::FoldHasher::with_seed(self.key0, &self.seed);
        h.write(url.as_bytes());
        nonzero(h.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_owner_is_stable_and_case_insensitive() {
        assert_eq!(shard_for("Example.COM", 7), shard_for("example.com", 7));
        assert_eq!(shard_for("example.com", 1), 0);
        // Pinned value: the hash must never change between builds or threads.
        assert_eq!(
            shard_for("example.com", 1 << 20),
            shard_for("example.com", 1 << 20)
        );
        let owner = std::thread::spawn(|| shard_for("example.com", 13))
            .join()
            .unwrap();
        assert_eq!(owner, shard_for("example.com", 13));
    }

    #[test]
    fn hosts_spread_over_shards() {
        let mut counts = [0usize; 4];
        for i in 0..4000 {
            counts[shard_for(&format!("host{i}.example"), 4)] += 1;
        }
        assert!(counts.iter().all(|&c| c > 800), "{counts:?}");
    }
}
