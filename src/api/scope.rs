//! [`Scope`] as the builder checks it: its `exclude` regex given as text,
//! refused as [`CrawlerBuilder::exclude`](crate::CrawlerBuilder::exclude)
//! refuses it (the scope itself is `crate::web::scope`, a leaf that knows
//! no builder errors).

use crate::web::scope::Scope;

use super::checks;
use super::error::{BuildError, Setting};

impl Scope {
    /// This scope without the URLs `exclude` matches: a regular
    /// expression (the `regex` crate's syntax) searched anywhere in a
    /// URL's text, as [`CrawlerBuilder::exclude`](crate::CrawlerBuilder::exclude)
    /// takes it; refused ([`Setting::Exclude`]) as the builder refuses
    /// it. Replaces an earlier one.
    pub fn excluding(self, exclude: &str) -> Result<Scope, BuildError> {
        let regex = regex::Regex::new(exclude)
            .map_err(|e| BuildError::new(Setting::Exclude, checks::one_line(&e.to_string())))?;
        Ok(self.with_exclude(Some(regex)))
    }
}
