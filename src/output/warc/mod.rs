//! The WARC files a crawl writes (`--warc`): each shard's files, with the
//! writer task that appends to them ([`file`]), and the crawl-wide memory
//! of payloads already archived, for `--warc-dedup` ([`dedup`]).
//!
//! Not the records themselves: their bytes, reading one back, the CDXJ
//! lines that index them and their timestamps are the sans-I/O
//! `ringcrawl-warc` crate (`crates/warc`), which the shards call.
//!
//! Sizes and offsets are counted with checked or saturating arithmetic.
#![deny(clippy::arithmetic_side_effects)]

pub(crate) mod dedup;
pub(crate) mod file;
