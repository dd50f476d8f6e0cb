//! The lookups a resolver made, kept for the archive when asked
//! (`--warc-dns`): each name it resolved afresh (not from a pin, the hosts
//! file or the cache), when, from which nameserver, and the addresses with
//! their TTLs. The shard takes them after a resolve and writes each as a
//! WARC `resource` record (`dns:` URI), as Heritrix does.
//!
//! Not the record format (`ringcrawl_warc::dns_resource`).

use std::cell::RefCell;
use std::net::IpAddr;
use std::time::SystemTime;

/// One name resolved afresh.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Lookup {
    /// The name asked (canonical: lower case, no trailing dot).
    pub name: String,
    /// When the answer came.
    pub at: SystemTime,
    /// The nameserver that gave the addresses; none for the system
    /// resolver (getaddrinfo says neither who answered nor for how long).
    pub server: Option<IpAddr>,
    /// Every address with its TTL in seconds (0 from the system resolver).
    pub answers: Vec<(IpAddr, u32)>,
}

/// Lookups not yet taken; off (nothing kept) unless enabled.
#[derive(Debug, Default)]
pub(crate) struct Journal {
    on: bool,
    lookups: RefCell<Vec<Lookup>>,
}

impl Journal {
    /// A journal that keeps lookups if `on`.
    pub(crate) fn new(on: bool) -> Self {
        Journal {
            on,
            lookups: RefCell::new(Vec::new()),
        }
    }

    /// Keep `lookup`, if on.
    pub(crate) fn push(&self, lookup: impl FnOnce() -> Lookup) {
        if self.on {
            self.lookups.borrow_mut().push(lookup());
        }
    }

    /// The lookups kept so far, oldest first; the journal is empty after.
    pub(crate) fn take(&self) -> Vec<Lookup> {
        if !self.on {
            return Vec::new();
        }
        std::mem::take(&mut *self.lookups.borrow_mut())
    }
}
