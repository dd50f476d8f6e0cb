//! Whether a URL read from a partition's stream may go to the shards.
//!
//! A stream entry is untrusted input: anyone who can write to the
//! crawl's Redis can append one, so what the node reads is checked
//! again, as if it were found on a page, before it is queued:
//!
//! - it is a URL in the crawl's normal form (what a node writes);
//! - its host is in the partition whose stream it came from (another
//!   node owns the others);
//! - its host is not link-local or a cloud metadata endpoint
//!   (`web::scope::reserved`), unless one of *this node's own* roots
//!   names it: the crawl's roots in Redis are writable by the same
//!   people, so they do not count here;
//! - it is in the crawl's scope by the rule its hop path says it was
//!   found under (a root's, a sitemap's, a link's or a requisite's), as
//!   the node that found it checked.
//!
//! A URL refused is not fetched and not recorded: it was never found by
//! the crawl, and a record would let whoever writes to Redis write into
//! the crawl's outputs. The node counts and logs it, and the entry is
//! acknowledged once its other URLs are done.
//!
//! Pure.

use ringcrawl_links::urls;

use crate::job::Job;
use crate::web::scope::{reserved, Scope};

use super::partition::partition_of;

/// Why a URL read from a stream is not queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refusal {
    /// Not an http(s) URL in the crawl's normal form.
    #[error("not a URL in normal form")]
    Malformed,
    /// Its host belongs to another partition than the stream's.
    #[error("its host is in another partition")]
    OtherPartition,
    /// A link-local or cloud metadata host no root of this node names.
    #[error("a link-local or cloud metadata host")]
    Reserved,
    /// Out of the crawl's scope.
    #[error("out of the crawl's scope")]
    OutOfScope,
}

/// What a URL from a stream is checked against.
pub(crate) struct Admission<'a> {
    /// The crawl's scope now (its roots as the node last read them).
    pub scope: &'a Scope,
    /// The crawl's partition count.
    pub partitions: u32,
    /// Reserved hosts ([`reserved::is_reserved`]) this node's own roots
    /// name, canonical.
    pub named: &'a [String],
}

impl Admission<'_> {
    /// Whether `job`, read from the stream of `partition`, may be queued.
    pub(crate) fn check(&self, job: &Job, partition: u32) -> Result<(), Refusal> {
        let url = url::Url::parse(&job.url)
            .ok()
            .and_then(urls::normalize)
            .filter(|u| u.as_str() == job.url)
            .ok_or(Refusal::Malformed)?;
        let host = urls::host(&url);
        if partition_of(host, self.partitions) != partition {
            return Err(Refusal::OtherPartition);
        }
        if reserved::is_reserved(host) && !self.named.iter().any(|n| n == host) {
            return Err(Refusal::Reserved);
        }
        let allowed = if job.hops.is_embed() {
            self.scope.allows_embed(&url)
        } else if job.hops.is_start() || job.hops.sitemap_level() > 0 {
            self.scope.allows_start(&url)
        } else {
            self.scope.allows(&url)
        };
        if allowed {
            Ok(())
        } else {
            Err(Refusal::OutOfScope)
        }
    }
}

/// The reserved hosts among `roots`' (canonical): what [`Admission`]
/// lets through.
pub(crate) fn named_reserved(roots: &[url::Url]) -> Vec<String> {
    let mut named: Vec<String> = roots
        .iter()
        .map(|r| urls::canonical_host(urls::host(r)).into_owned())
        .filter(|h| reserved::is_reserved(h))
        .collect();
    named.sort();
    named.dedup();
    named
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::job::hops::{Hop, Hops};
    use crate::web::scope::ScopeMode;

    const PARTITIONS: u32 = 64;

    fn job(url: &str, hops: Hops) -> Job {
        Job {
            retries: 0,
            url: url.to_string(),
            redirects_left: 5,
            depth: 1,
            hops,
            via: None,
        }
    }

    fn check(roots: &[&str], named: &[String], url: &str, hops: Hops) -> Result<(), Refusal> {
        let roots: Vec<url::Url> = roots.iter().map(|r| url::Url::parse(r).unwrap()).collect();
        let scope = Scope::build(&roots, ScopeMode::Strict, None);
        let admission = Admission {
            scope: &scope,
            partitions: PARTITIONS,
            named,
        };
        let host = urls::host_of(url);
        admission.check(&job(url, hops), partition_of(host, PARTITIONS))
    }

    #[test]
    fn a_url_in_scope_in_its_partition_is_admitted() {
        let link = Hops::root().then(Hop::Link);
        assert_eq!(
            check(&["http://a.test/"], &[], "http://a.test/x", link),
            Ok(())
        );
        assert_eq!(
            check(&["http://a.test/"], &[], "http://a.test/", Hops::root()),
            Ok(())
        );
        let embed = Hops::root().then(Hop::Embed);
        assert_eq!(
            check(&["http://a.test/"], &[], "http://cdn.test/i.png", embed),
            Ok(()),
            "requisites come from anywhere"
        );
    }

    #[test]
    fn a_url_out_of_scope_is_refused_whatever_its_hops_say() {
        for hops in [Hops::root(), Hops::root().then(Hop::Link)] {
            assert_eq!(
                check(&["http://a.test/"], &[], "http://b.test/", hops),
                Err(Refusal::OutOfScope)
            );
        }
    }

    #[test]
    fn a_metadata_or_link_local_url_is_refused_unless_a_root_of_this_node_names_it() {
        let embed = Hops::root().then(Hop::Embed);
        for url in [
            "http://169.254.169.254/latest/meta-data/",
            "http://[fe80::1]/",
            "http://metadata.google.internal/computeMetadata/v1/",
        ] {
            // Even a root of the crawl (another node's, or one written
            // into Redis) does not let it through: only this node's own.
            assert_eq!(
                check(&[url], &[], url, Hops::root()),
                Err(Refusal::Reserved),
                "{url}"
            );
            assert_eq!(
                check(&["http://a.test/"], &[], url, embed),
                Err(Refusal::Reserved),
                "{url}"
            );
        }
        let named = named_reserved(&[url::Url::parse("http://169.254.169.254/").unwrap()]);
        assert_eq!(named, ["169.254.169.254"]);
        assert_eq!(
            check(
                &["http://169.254.169.254/"],
                &named,
                "http://169.254.169.254/x",
                Hops::root().then(Hop::Link)
            ),
            Ok(())
        );
    }

    #[test]
    fn a_url_of_another_partition_or_not_in_normal_form_is_refused() {
        let roots = ["http://a.test/", "http://b.test/"];
        let scope = Scope::build(
            &roots.map(|r| url::Url::parse(r).unwrap()),
            ScopeMode::Strict,
            None,
        );
        let admission = Admission {
            scope: &scope,
            partitions: PARTITIONS,
            named: &[],
        };
        let p = partition_of("a.test", PARTITIONS);
        let other = (p + 1) % PARTITIONS;
        assert_eq!(
            admission.check(&job("http://a.test/", Hops::root()), other),
            Err(Refusal::OtherPartition)
        );
        for bad in [
            "HTTP://A.TEST/",
            "http://a.test/#f",
            "ftp://a.test/",
            "http://a.test",
            "garbage",
            "",
        ] {
            assert_eq!(
                admission.check(&job(bad, Hops::root()), p),
                Err(Refusal::Malformed),
                "{bad}"
            );
        }
    }
}
