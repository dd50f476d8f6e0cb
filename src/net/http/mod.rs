//! Pure client side of HTTP/1.1 (answers in 1.0 or 1.1): request bytes, response-head parsing, body
//! framing/decoding. No I/O.
//!
//! This is *not* the socket code: callers read bytes however they like and
//! hand them to [`parse_head`] until it returns a [`ResponseHead`], then feed
//! the remaining bytes (starting at `buf[head_len..]`) and every later read to
//! a [`BodyDecoder`] built from [`ResponseHead::framing`].
//!
//! Everything here runs on bytes straight off the network, so it must never
//! panic whatever the input: a panic takes down a whole shard. The crate's
//! lints (lib.rs) forbid indexing, unwrap and panics outside the tests; the
//! one below adds unchecked arithmetic here.
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
#[cfg(any(test, feature = "internals"))]
pub use head::{framing, parse_head};
pub use head::{is_css, is_html, media_type, Framing, HeadError, HeadScan, ResponseHead};
pub use request::{Credential, Headers, Request, Validators};
#[cfg(any(test, feature = "internals"))]
pub use request::{CredentialError, HeaderError};
pub use retry::retry_after;
pub use types::TypeRules;

/// Default cap on the size of a response head (status line + headers + blank line).
pub const DEFAULT_MAX_HEAD: usize = 64 * 1024;

/// The content codings a request offers when compression is on (all of
/// them undone by [`content::decode`]).
pub const ACCEPT_COMPRESSED: &str = "gzip, deflate, br, zstd";

#[cfg(test)]
mod tests;
