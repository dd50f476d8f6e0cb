//! The independent checkers from PyPI (warcio, cdxj-indexer, py-wacz),
//! each in a venv under this test's `CARGO_TARGET_TMPDIR`: crates/testkit's
//! `warcio`, which says how, given where.

use std::path::{Path, PathBuf};

pub use ringcrawl_testkit::warcio::{or_skip, run, tool};

/// Where the venvs go.
fn tmp() -> &'static Path {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
}

/// The bin dir of the venv `name` with `packages` installed, or why not.
pub fn venv(name: &str, packages: &[&str]) -> Result<PathBuf, String> {
    ringcrawl_testkit::warcio::venv(tmp(), name, packages)
}

/// The warcio venv's bin dir, or None after printing why the caller
/// skips.
pub fn warcio_or_skip(test: &str) -> Option<PathBuf> {
    ringcrawl_testkit::warcio::warcio_or_skip(tmp(), test)
}

/// The py-wacz venv's bin dir, or None after printing why the caller
/// skips.
pub fn wacz_or_skip(test: &str) -> Option<PathBuf> {
    ringcrawl_testkit::warcio::wacz_or_skip(tmp(), test)
}
