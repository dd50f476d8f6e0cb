//! A node name's fencing token: the generation of its latest process.
//! A process takes the next one when it joins (after any live process of
//! its name has stopped beating), and every script it runs while it
//! crawls checks that it is still the latest (`scripts`'s guard), so a
//! process that was only cut off, when it reaches Redis again, finds
//! itself superseded and stops instead of crawling beside its
//! replacement.
//!
//! Not the scripts themselves (`scripts`), nor what a node does when
//! superseded (`crate::cluster::node`).

use super::{Store, StoreError};

/// The error code of a guarded script run by a superseded process.
pub(super) const SUPERSEDED: &str = "SUPERSEDED";

impl Store {
    /// The next generation of node `name`: this process's, once it is
    /// sure no other process of the name is alive.
    pub(crate) fn next_generation(&mut self, name: &str) -> Result<u64, StoreError> {
        Ok(redis::cmd("HINCRBY")
            .arg(self.keys.generations())
            .arg(name)
            .arg(1)
            .query(&mut self.con)?)
    }

    /// Whether this connection's identity (`name~generation~token`) is
    /// still its name's latest process: [`StoreError::Superseded`] if
    /// not, [`StoreError::CrawlGone`] if the crawl has no generations at
    /// all (a joined node's is never removed: the crawl's keys are gone).
    /// Asked first on every reconnection, before anything is sent.
    pub(crate) fn check_generation(&mut self) -> Result<(), StoreError> {
        let mut parts = self.node.split('~');
        let (Some(name), Some(mine)) = (parts.next(), parts.next()) else {
            return Err(StoreError::Reply("generation: not an incarnation"));
        };
        let latest: Option<String> = redis::cmd("HGET")
            .arg(self.keys.generations())
            .arg(name)
            .query(&mut self.con)?;
        match latest {
            Some(latest) if latest == mine => Ok(()),
            Some(_) => Err(StoreError::Superseded),
            None => Err(StoreError::CrawlGone {
                crawl: self.keys.crawl().to_string(),
            }),
        }
    }
}
