//! What sitemaps may cost ([`Limits`], `Config::sitemap_limits`): the
//! protocol's bounds on one sitemap, and the crawl's on nesting and on
//! sitemaps per host. Settings only; `ringcrawl_sitemap` reads within
//! the first two, the frontier and the shard count against the others.

/// Levels of sitemap a crawl descends: a sitemap named by robots.txt (or
/// guessed) is level 1, one its index names level 2, and so on; an index
/// at this level has its entries left out. 3: two levels of index, one
/// more than the protocol allows (an index may not name an index), for
/// the sites that nest anyway.
pub(crate) const MAX_LEVELS: u32 = 3;

/// What sitemaps may cost: `ringcrawl_sitemap::parse` reads the first
/// two ([`Limits::bounds`]), the crawl the other two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Bytes of the document read at most (after inflating a gzip body).
    pub max_bytes: usize,
    /// `<loc>`s (or text lines) kept at most.
    pub max_urls: usize,
    /// Levels of sitemap descended ([`MAX_LEVELS`]).
    pub max_levels: u32,
    /// Sitemaps fetched per host
    /// ([`crate::defaults::MAX_SITEMAPS_PER_HOST`]).
    pub max_per_host: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: ringcrawl_sitemap::MAX_BYTES,
            max_urls: crate::defaults::MAX_SITEMAP_URLS,
            max_levels: MAX_LEVELS,
            max_per_host: crate::defaults::MAX_SITEMAPS_PER_HOST,
        }
    }
}

impl Limits {
    /// What one sitemap may cost, as `ringcrawl_sitemap::parse` takes it.
    pub(crate) fn bounds(&self) -> ringcrawl_sitemap::Bounds {
        ringcrawl_sitemap::Bounds {
            max_bytes: self.max_bytes,
            max_urls: self.max_urls,
        }
    }
}
