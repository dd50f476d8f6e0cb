//! The client side of HTTP/1.x as bytes, with no I/O: a GET request's
//! bytes, the response head parsed, the body framed and its content
//! codings undone. Answers in HTTP/1.0 or 1.1 are read; requests are
//! HTTP/1.1. This is the sans-I/O half of [ringcrawl]'s fetch, a crate of
//! its own so that it is tested, fuzzed and benchmarked without the
//! crawler, and so that others can use it.
//!
//! # Map
//!
//! - `request` ([`Request`], [`Headers`], [`Credential`], [`Validators`]):
//!   one GET's bytes, the user's extra headers (the ones that frame the
//!   exchange are refused), Basic credentials for one origin, and the
//!   validators of a conditional request.
//! - `head` ([`HeadScan`], [`parse_head`], [`ResponseHead`], [`Framing`]):
//!   the response head found in a growing buffer (each call scans only
//!   the new bytes) and parsed with httparse's lenient options (obsolete
//!   line folding, spaces, invalid header lines), what a crawler reads
//!   from it, and how its body is delimited (none for 1xx/204/304,
//!   chunked, `Content-Length`, or until close; conflicting lengths are
//!   an error).
//! - `body` ([`BodyDecoder`], [`Progress`], [`BodyError`]): the bytes after
//!   the head, fed as they arrive, unframed up to a cap.
//! - [`content`], `Content-Encoding` (gzip, deflate, br, zstd, stacked)
//!   undone a bounded step at a time, each stage cut at a cap.
//! - `types` ([`TypeRules`], [`media_type`], [`is_html`], [`is_css`]): a
//!   `Content-Type`'s media type and which types' bodies are kept.
//! - [`freshen`] (a stored head brought up to date by a `304`'s fields)
//!   and [`retry_after`] (`Retry-After`, seconds or an HTTP date).
//!
//! The flow: write [`Request::to_bytes`], then hand every read to a
//! [`HeadScan`] until it returns a [`ResponseHead`]; feed the bytes after
//! the head (`buf[head_len..]`) and every later read to a [`BodyDecoder`]
//! built from [`ResponseHead::framing`]; undo the codings of the body
//! with a [`content::Decoding`].
//!
//! # Not here
//!
//! Sockets, TLS, timeouts, connection reuse, redirects, retries and what
//! an error means for a crawl (its record's error kind): those are the
//! caller's. No HTTP/2, no server side, no request bodies.
//!
//! # Invariants
//!
//! 1. No I/O: every call works on the bytes it is given. The only state
//!    kept between calls is each thread's libdeflate decompressor (its
//!    tables, made once; `content/whole.rs`).
//! 2. Nothing here panics, whatever the bytes: it runs on what servers
//!    send, and in ringcrawl a panic takes down a shard. The crate denies
//!    indexing, `unwrap`, `expect`, `panic!` and unchecked arithmetic
//!    outside its tests (the workspace's `clippy.toml` lets the tests use
//!    them).
//! 3. Every size is bounded by a cap its caller gives: the head
//!    ([`DEFAULT_MAX_HEAD`] by default), the body, each decoded stage, and
//!    the work of one decoding step ([`content::STEP`]).
//!
//! [ringcrawl]: https://github.com/ringcrawl/ringcrawl

// The workspace's panic-free lints (Cargo.toml's [workspace.lints]), and
// two stricter ones this crate passes (not every member does): no needless `pub`, no unchecked arithmetic.
#![warn(unreachable_pub)]
#![deny(clippy::arithmetic_side_effects)]

mod body;
pub mod content;
mod freshen;
mod head;
mod request;
mod retry;
mod types;

pub use body::{BodyDecoder, BodyError, Progress};
pub use freshen::freshen;
pub use head::{framing, parse_head};
pub use head::{is_css, is_html, media_type, Framing, HeadError, HeadScan, ResponseHead};
pub use head::{MAX_ROBOTS_TAGS, MAX_SET_COOKIES};
pub use request::{Credential, CredentialError, HeaderError, Headers, Request, Validators};
pub use retry::retry_after;
pub use types::{BadPattern, TypeRules};

/// Default cap on the size of a response head (status line + headers + blank line).
pub const DEFAULT_MAX_HEAD: usize = 64 * 1024;

/// The content codings a request offers when compression is on (all of
/// them undone by [`content::decode`]).
pub const ACCEPT_COMPRESSED: &str = "gzip, deflate, br, zstd";

#[cfg(test)]
mod tests;
