//! The hosts of a crawl's seed lists, as the scope asks about them.
//!
//! The seeds' hosts are in scope like the roots' hosts, but a seed list may
//! name millions of them: [`SeedHosts`] keeps a 64-bit fingerprint of each
//! scope key (the host without a leading `www.`, or in lenient mode its
//! registrable domain) in one sorted array, 8 bytes a distinct key, shared
//! by every shard. Every link of every page is checked against it, so a
//! lookup must not cost a binary search's twenty cache misses at a million
//! hosts: the fingerprints are uniform, and a table of where each run of
//! keys with the same top bits starts (4 bytes per 4 keys) takes a lookup
//! straight to the few keys it may be among. A collision would let one more host in; at 10 million
//! keys its odds are about 3 in a million. Built during the first pass over
//! the seed lists (`crate::crawl::seeds::split`).
use std::hash::BuildHasher;

use ringcrawl_links::urls;
use url::Url;

use super::ScopeMode;

/// The scope key of `host` (canonical, as [`urls::canonical_host`] gives
/// it): its registrable domain in lenient mode, else the host without a
/// leading `www.` (so a seed `example.com` lets `www.example.com` in and
/// the other way round, as roots do). IP addresses are their own key.
fn scope_key(host: &str, mode: ScopeMode) -> &str {
    if super::is_ip_like(host) {
        return host;
    }
    if mode == ScopeMode::Lenient {
        if let Some(domain) = psl::domain_str(host) {
            return domain;
        }
    }
    match host.strip_prefix("www.") {
        Some(bare) if !bare.is_empty() => bare,
        _ => host,
    }
}

/// The hosts of a crawl's seeds, as the scope asks about them: sorted
/// fingerprints of their scope keys (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct SeedHosts {
    mode: ScopeMode,
    keys: Box<[u64]>,
    /// `starts[b]` is the index of the first key whose top `bits` bits are
    /// `b` or more; `2^bits + 1` entries, the last `keys.len()`.
    starts: Box<[u32]>,
    bits: u32,
}

/// Collects [`SeedHosts`] during the first pass over the seed files.
#[derive(Debug)]
pub(crate) struct SeedHostsBuilder {
    mode: ScopeMode,
    keys: Vec<u64>,
}

/// The first bytes of [`SeedHosts::encode`]'s output.
const ENCODED_MAGIC: &[u8; 8] = b"RCSEEDH1";

/// What the fingerprint function makes of a fixed text.
fn encoding_check() -> u64 {
    fingerprint("ringcrawl seed hosts")
}

/// The fingerprint's hash: fixed seed, so every shard and every run agree.
fn fingerprint(key: &str) -> u64 {
    foldhash::quality::FixedState::with_seed(0x5eed_1157_u64).hash_one(key)
}

impl SeedHostsBuilder {
    pub(crate) fn new(mode: ScopeMode) -> Self {
        SeedHostsBuilder {
            mode,
            keys: Vec::new(),
        }
    }

    /// Count the host of `root` in.
    pub(crate) fn add(&mut self, root: &Url) {
        let host = urls::canonical_host(urls::host(root));
        if !host.is_empty() {
            self.keys.push(fingerprint(scope_key(&host, self.mode)));
        }
        // A list of mostly one host (a site's URLs) stays small as it goes.
        if self.keys.len() >= 1 << 20 && self.keys.len().is_power_of_two() {
            self.keys.sort_unstable();
            self.keys.dedup();
        }
    }

    pub(crate) fn finish(mut self) -> SeedHosts {
        self.keys.sort_unstable();
        self.keys.dedup();
        SeedHosts::indexed(self.mode, self.keys.into_boxed_slice())
    }
}

/// The bucket a key falls in with `bits` top bits.
fn bucket(key: u64, bits: u32) -> usize {
    key.checked_shr(64 - bits).unwrap_or(0) as usize
}

impl SeedHosts {
    /// `keys` (sorted, distinct) with the table of where each bucket of
    /// about four keys starts.
    fn indexed(mode: ScopeMode, keys: Box<[u64]>) -> SeedHosts {
        // 2^bits buckets for about 4 keys each; at most 2^28 (1 GiB of
        // table would be 4 billion seeds' worth).
        let bits = (keys.len() / 4).max(1).ilog2().min(28);
        let mut starts = Vec::with_capacity((1 << bits) + 1);
        let mut at = 0;
        for b in 0..(1usize << bits) {
            while keys.get(at).is_some_and(|&k| bucket(k, bits) < b) {
                at += 1;
            }
            starts.push(u32::try_from(at).unwrap_or(u32::MAX));
        }
        starts.push(u32::try_from(keys.len()).unwrap_or(u32::MAX));
        SeedHosts {
            mode,
            keys,
            starts: starts.into_boxed_slice(),
            bits,
        }
    }

    /// Whether `host` (canonical) is a seed's host by the scope's rule.
    pub(crate) fn contains(&self, host: &str) -> bool {
        let key = fingerprint(scope_key(host, self.mode));
        let b = bucket(key, self.bits);
        let (Some(&from), Some(&to)) = (self.starts.get(b), self.starts.get(b + 1)) else {
            return false;
        };
        self.keys
            .get(from as usize..to as usize)
            .is_some_and(|run| run.contains(&key))
    }

    /// Distinct scope keys.
    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }

    /// Bytes the set holds.
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> usize {
        std::mem::size_of_val(&*self.keys) + std::mem::size_of_val(&*self.starts)
    }

    /// The set as a file keeps it: [`ENCODED_MAGIC`], a check that changes
    /// with the fingerprint function (so keys made by another build are
    /// not trusted), then each key, 8 bytes little-endian.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + std::mem::size_of_val(&*self.keys));
        out.extend_from_slice(ENCODED_MAGIC);
        out.extend_from_slice(&encoding_check().to_le_bytes());
        for key in self.keys.iter() {
            out.extend_from_slice(&key.to_le_bytes());
        }
        out
    }

    /// Read what [`SeedHosts::encode`] wrote; None if it is damaged (or
    /// written by a build whose fingerprints differ).
    pub(crate) fn decode(mode: ScopeMode, bytes: &[u8]) -> Option<SeedHosts> {
        let rest = bytes.strip_prefix(ENCODED_MAGIC.as_slice())?;
        let (check, keys) = rest.split_at_checked(8)?;
        if check != encoding_check().to_le_bytes() || !keys.len().is_multiple_of(8) {
            return None;
        }
        let keys: Box<[u64]> = keys
            .chunks_exact(8)
            .filter_map(|c| <[u8; 8]>::try_from(c).ok())
            .map(u64::from_le_bytes)
            .collect();
        keys.windows(2)
            .all(|w| matches!(w, [a, b] if a < b))
            .then(|| SeedHosts::indexed(mode, keys))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(s: &str) -> Url {
        urls::parse_root(s).unwrap()
    }

    #[test]
    fn seed_hosts_match_as_roots_do_in_strict_mode() {
        let mut b = SeedHostsBuilder::new(ScopeMode::Strict);
        for s in ["example.com", "https://www.other.test/", "10.0.0.1"] {
            b.add(&root(s));
        }
        let set = b.finish();
        assert_eq!(set.len(), 3);
        for host in [
            "example.com",
            "www.example.com",
            "other.test",
            "www.other.test",
            "10.0.0.1",
        ] {
            assert!(set.contains(host), "{host}");
        }
        for host in ["sub.example.com", "example.org", "10.0.0.2", "com"] {
            assert!(!set.contains(host), "{host}");
        }
    }

    #[test]
    fn seed_hosts_match_registrable_domains_in_lenient_mode() {
        let mut b = SeedHostsBuilder::new(ScopeMode::Lenient);
        b.add(&root("shop.example.co.uk"));
        let set = b.finish();
        assert!(set.contains("blog.example.co.uk"));
        assert!(!set.contains("other.co.uk"));
    }

    #[test]
    fn every_key_is_found_in_its_bucket_and_no_other_host_is() {
        for n in [0, 1, 3, 4, 5, 100, 4096, 100_000] {
            let mut b = SeedHostsBuilder::new(ScopeMode::Strict);
            for i in 0..n {
                b.add(&root(&format!("h{i}.test")));
            }
            let set = b.finish();
            assert_eq!(set.len(), n);
            assert!((0..n).all(|i| set.contains(&format!("h{i}.test"))), "{n}");
            assert!(
                !(n..n + 1000).any(|i| set.contains(&format!("h{i}.test"))),
                "{n}"
            );
            let decoded = SeedHosts::decode(ScopeMode::Strict, &set.encode()).unwrap();
            assert!(
                (0..n).all(|i| decoded.contains(&format!("h{i}.test"))),
                "{n}"
            );
            // About four keys a bucket: the table costs ~1 byte a key.
            assert!(
                set.bytes() <= 8 * n + 4 * (n / 4).max(2) + 8,
                "{n}: {}",
                set.bytes()
            );
        }
    }

    #[test]
    fn a_million_seeds_of_few_hosts_keep_few_keys() {
        let mut b = SeedHostsBuilder::new(ScopeMode::Strict);
        for i in 0..(1 << 20) + 5 {
            b.add(&root(&format!("h{}.test/page/{i}", i % 7)));
        }
        assert!(b.keys.len() < 1 << 10, "deduplicated on the way");
        assert_eq!(b.finish().len(), 7);
    }
}
