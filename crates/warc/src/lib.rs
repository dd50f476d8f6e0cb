//! Web archive formats as bytes, with no I/O: WARC 1.1 records (ISO
//! 28500:2017) written and one read back, the CDXJ lines that index them
//! keyed by SURT, and the timestamps both carry. What [ringcrawl] writes
//! when it archives a crawl (`--warc`, `--cdxj`, `--wacz`), and reads back
//! for a recrawl or a resume; a crate of its own so that it is tested
//! without the crawler, and so that others can use it. The files are
//! those warcio, pywb and cdxj-indexer read and write.
//!
//! # Map
//!
//! - The records (`record`): [`warcinfo`] opens a file; [`archive`] writes
//!   the `request` and `response` records of one HTTP [`Exchange`] as it
//!   went over the wire, or a `revisit` ([`Revisit`] of a [`RefersTo`],
//!   [`IDENTICAL_PAYLOAD_DIGEST`] or [`SERVER_NOT_MODIFIED`]) in place of
//!   the response, and says where its main record lies ([`Written`]);
//!   [`exchange`] and [`exchange_truncated`] are the plain forms
//!   ([`Truncated`]: `WARC-Truncated`); [`dns_resource`] a DNS answer as a
//!   `resource` record. Digests are SHA-1 in base32 ([`sha1_digest`],
//!   [`payload_sha1`], [`digest_text`]); record ids random version 4
//!   UUIDs ([`record_id`]).
//! - [`read`]: the record whose gzip member starts at an offset, read back
//!   from the bytes the caller hands over ([`read::record_at`], whole;
//!   [`read::skim`], its header and the start of its block, and the
//!   member's length).
//! - [`cdxj`]: a record's index line as cdxj-indexer writes it
//!   ([`cdxj::write_line`] of an [`cdxj::Entry`]), the JSON of a line
//!   found again ([`cdxj::line_json`]), and [`cdxj::surt`], the SURT key
//!   as the Python `surt` package computes it.
//! - [`timestamp`]: UTC instants as the formats write them (`WARC-Date`,
//!   RFC 3339 to the millisecond or second, CDX's 14 digits) and RFC 3339
//!   read back.
//!
//! Every record is its own gzip member, so the outputs of these functions
//! concatenated are a valid `.warc.gz` that an indexer can seek into by
//! offset.
//!
//! # Not here
//!
//! Files: opening, naming, rotating and flushing `.warc.gz` files, where a
//! record lands in one, and reading the file at an offset are the
//! caller's (in ringcrawl, `output::warc::file` and the shards). Which
//! payloads repeat (the revisit table), which records a page needs and
//! which lines an index lacks are the caller's too, as is sorting an index
//! and packaging a WACZ. Not a general WARC reader: one record gzipped
//! per member, as [`archive`] writes them, and not the HTTP inside it.
//!
//! # Invariants
//!
//! 1. No I/O: every call works on the bytes and values it is given (a
//!    [`read::skim`] reads the caller's [`std::io::BufRead`]). No clock
//!    is read: every time is the caller's. The one state is the thread's
//!    random generator that [`record_id`] draws from (fastrand's).
//! 2. Nothing here panics, whatever the bytes: records hold what servers
//!    sent and are read back from files that may be damaged or not ours.
//!    The crate denies indexing, `unwrap`, `expect`, `panic!` and
//!    unchecked arithmetic outside its tests (the workspace's
//!    `clippy.toml` lets the tests use them).
//! 3. Bounded: a record read back holds at most its header (64 KiB) and
//!    the caller's cap of its block; header values cannot break a record's
//!    syntax (control characters become spaces).
//!
//! [ringcrawl]: https://github.com/ringcrawl/ringcrawl

// The workspace's panic-free lints (Cargo.toml's [workspace.lints]), and
// two stricter ones this crate passes (not every member does): no needless `pub`, no unchecked arithmetic.
#![warn(unreachable_pub)]
#![deny(clippy::arithmetic_side_effects)]

pub mod cdxj;
pub mod read;
mod record;
pub mod timestamp;

pub use record::{archive, dns_resource, exchange, exchange_truncated, warcinfo};
pub use record::{digest_text, payload_sha1, record_id, sha1_digest, sha1_raw};
pub use record::{Exchange, RefersTo, Revisit, Truncated, Written};
pub use record::{CONFORMS_TO, IDENTICAL_PAYLOAD_DIGEST, SERVER_NOT_MODIFIED};

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects)]
mod tests;
