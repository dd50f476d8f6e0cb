//! A shard's seen-set in bounded memory (BUbiNG's sieve, IRLbot's DRUM):
//! the pure parts so far, a fixed-capacity always-sorted bucket of
//! fingerprints and a blocked Bloom filter. The runs on disk and the set
//! come next.

pub mod bloom;
pub mod bucket;
