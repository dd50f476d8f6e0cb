//! The site's pseudo-random numbers: splitmix64, self-contained so the site
//! is the same everywhere for a given seed. Each kind of choice (links, text,
//! redirects, faults, delays, placement of extras) has its own stream, and a
//! generator is made afresh from (seed, stream, index) for each page or
//! resource, so what one page gets does not depend on which pages were
//! asked for before it.
//!
//! What this is not: a general or cryptographic generator (`below` is a
//! plain modulo: uniform-ish).

pub(super) const STREAM_LINKS: u64 = 1;
pub(super) const STREAM_TEXT: u64 = 2;
pub(super) const STREAM_REDIRECT: u64 = 3;
pub(super) const STREAM_FAULT: u64 = 4;
pub(super) const STREAM_DELAY: u64 = 5;
pub(super) const STREAM_PLACE: u64 = 16;

pub(super) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

pub(super) struct Rng(u64);

impl Rng {
    pub(super) fn new(seed: u64, stream: u64, index: u64) -> Rng {
        Rng(mix64(
            seed ^ mix64(stream.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ mix64(index)),
        ))
    }

    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.0)
    }

    /// Uniform-ish in `0..n` (`n > 0`).
    pub(super) fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    pub(super) fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    /// Uniform in `[0, 1)`.
    pub(super) fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// FNV-1a, to turn a URL into a stream index.
pub(super) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
