//! The crawl's budgets as settings ([`Limits`], `Config::budget`):
//! `--max-pages`, `--max-bytes`, `--max-time`, and which one stopped a
//! crawl ([`Spent`]). Spent by the engine (`crate::crawl::budget`).

use std::time::Duration;

use serde::{Serialize, Serializer};

/// The limits of one crawl; `None` is unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Pages fetched at most (robots.txt fetches do not count).
    pub pages: Option<u64>,
    /// Body bytes received at most; the fetches running when it is passed
    /// still finish, so a crawl ends a little past it.
    pub bytes: Option<u64>,
    /// Wall time from the start; the fetches running then still finish.
    pub time: Option<Duration>,
    /// Least free space, in bytes, on each file system the crawl writes
    /// to (records, WARC files, index, state, spill): under it the crawl
    /// stops as at a spent budget, its state kept for a resume.
    pub free_disk: Option<u64>,
}

/// Which budget stopped a crawl (in JSON, the flag that set it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Spent {
    /// `--max-pages`: that many fetches were started.
    Pages,
    /// `--max-bytes`: that many body bytes were received.
    Bytes,
    /// `--max-time`: the time was up.
    Time,
    /// `--min-free-disk`: a file system the crawl writes to had less
    /// free space left.
    Disk,
}

impl Spent {
    /// The flag that set it.
    pub fn flag(self) -> &'static str {
        match self {
            Spent::Pages => "--max-pages",
            Spent::Bytes => "--max-bytes",
            Spent::Time => "--max-time",
            Spent::Disk => "--min-free-disk",
        }
    }

    pub(crate) fn code(self) -> u8 {
        match self {
            Spent::Pages => 1,
            Spent::Bytes => 2,
            Spent::Time => 3,
            Spent::Disk => 4,
        }
    }

    pub(crate) fn from_code(code: u8) -> Option<Spent> {
        match code {
            1 => Some(Spent::Pages),
            2 => Some(Spent::Bytes),
            3 => Some(Spent::Time),
            4 => Some(Spent::Disk),
            _ => None,
        }
    }
}

impl Serialize for Spent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.flag())
    }
}
