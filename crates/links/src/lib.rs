//! What an HTML page links to, as a crawler follows it, with no I/O: the
//! page's encoding sniffed, its links (and, when asked, its requisites:
//! images, scripts, stylesheets, media) found by HTML's tokenizer rules,
//! resolved against its base URL and brought to one normal form, and what
//! its `<meta name="robots">` tags say. This is the sans-I/O half of
//! [ringcrawl]'s page path, a crate of its own so that it is tested, fuzzed
//! and benchmarked without the crawler, and so that others can use it.
//!
//! # Map
//!
//! - `extract` ([`page_links`], [`page_links_with`], [`extract_links`],
//!   [`stylesheet_requisites`], [`PageLinks`], [`Extract`]): a page's
//!   links, unique, in order, at most [`MAX_LINKS_PER_PAGE`]. A
//!   hand-written scanner is the fast path; html5gum's WHATWG tokenizer is
//!   the reference and runs where the scanner is unsure of a page
//!   ([`scan_links`] and [`tokenize_links`] run one alone, for the
//!   differential fuzz target and the benchmarks). Inside it, which
//!   elements load requisites and the `url()`s and `@import`s of CSS.
//! - [`KnownLinks`] and [`page_links_known`]: the links a caller has met
//!   before, counted on a page without being resolved again (most of a
//!   crawl's links are), in a table of fixed size the caller keeps.
//! - [`charset`]: which encoding a page is in, by the HTML standard's
//!   rules (byte order mark, HTTP charset, `<meta>` prescan, default).
//! - [`directives`]: `<meta name="robots">` and `X-Robots-Tag`
//!   (`nofollow`, `noindex`) for one agent.
//! - [`urls`]: the one normal form of a URL (fragment, userinfo and an
//!   empty query dropped, trailing dots of a host dropped), a root as a
//!   user types it, a link and a `Location` resolved, the canonical host.
//!   Every URL [`page_links`] returns is in this form.
//!
//! ```
//! use ringcrawl_links::{page_links, urls};
//!
//! let page = url::Url::parse("https://example.com/news/").expect("a URL");
//! let html = br#"<base href="/archive/"><a href="2024.html#top">2024</a>
//!     <a href="mailto:desk@example.com">mail</a> <A HREF='2024.html'>again</A>"#;
//! let found = page_links(html, &page, None);
//! let links: Vec<&str> = found.links.iter().map(|u| u.as_str()).collect();
//! // Resolved against the base, the fragment dropped, the repeat and
//! // the mailto: left out.
//! assert_eq!(links, ["https://example.com/archive/2024.html"]);
//! assert_eq!(urls::host_of(links[0]), "example.com");
//! ```
//!
//! # Not here
//!
//! Fetching, scope (which of these URLs a crawl follows: hosts, regexes,
//! `--no-parent`, reserved addresses) and what a crawl does about
//! `nofollow`: those are the caller's. In ringcrawl, scope is
//! `web::scope`: it is the crawl's policy, built from its settings and
//! seed lists, and changes with them; this crate is what a page says,
//! which no setting changes. No DOM, no scripts run, no CSS beyond the
//! URLs it loads.
//!
//! # Invariants
//!
//! 1. No I/O: every call works on the bytes and URLs it is given and keeps
//!    nothing between calls (a [`KnownLinks`] is the caller's, given to
//!    each call that reads it).
//! 2. Nothing here panics, whatever the bytes: it runs on what servers
//!    send, and in ringcrawl a panic takes down a shard. The crate denies
//!    indexing, `unwrap`, `expect`, `panic!` and unchecked arithmetic
//!    outside its tests (the workspace's `clippy.toml` lets the tests use
//!    them). The `links`, `links_differential`, `charset_links` and
//!    `url_normalize` fuzz targets (`fuzz/`) feed it any bytes.
//! 3. Bounded: at most [`MAX_LINKS_PER_PAGE`] links and as many requisites
//!    a page, after which the page is not read further; no recursion, so
//!    no nesting depth overflows a stack; a page is read a fixed number of
//!    times at most (the scanner, the tokenizer where the scanner is
//!    unsure, each once more when a `<base>` comes after links).
//!
//! [ringcrawl]: https://github.com/ringcrawl/ringcrawl

// The workspace's panic-free lints (Cargo.toml's [workspace.lints]), and
// two stricter ones this crate passes (not every member does): no needless `pub`, no unchecked arithmetic.
#![warn(unreachable_pub)]
#![deny(clippy::arithmetic_side_effects)]

pub mod charset;
pub mod directives;
mod extract;
mod known;
pub mod urls;

pub use extract::{
    extract_links, extract_links_in, page_links, page_links_known, page_links_with, scan_links,
    stylesheet_requisites, tokenize_links, Extract, PageLinks, MAX_LINKS_PER_PAGE,
};
pub use known::{KnownLinks, LinkKey};
