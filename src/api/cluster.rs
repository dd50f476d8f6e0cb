//! A node's cluster settings ([`super::CrawlerBuilder::cluster`]),
//! checked once, and what they change in the rest of the configuration:
//! each node writes output files of its own, named by node, so that the
//! nodes' files side by side are the crawl's output.
//!
//! Not the cluster itself (`crate::cluster`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use redis::IntoConnectionInfo;

use super::{BuildError, Setting};
use crate::cluster::partition::MAX_PARTITIONS;
use crate::config::secret::redacted;
use crate::config::{ClusterSettings, Config, Output};
use crate::defaults;

/// The settings as given, before the checks.
#[derive(Debug, Default)]
pub(super) struct Draft {
    pub url: String,
    pub crawl: String,
    pub node: Option<String>,
    pub partitions: Option<u32>,
    pub lease_ttl: Option<Duration>,
}

/// Shortest lease: renewed every third of it, a command allowed a quarter.
const MIN_LEASE_TTL: Duration = Duration::from_secs(1);
const MAX_LEASE_TTL: Duration = Duration::from_secs(3600);
/// Longest crawl or node name.
const MAX_NAME: usize = 64;

/// Check `draft` (`state`: a state directory was asked for too) and name
/// `config`'s output files after the node.
pub(super) fn check(
    draft: Draft,
    config: &mut Config,
    state: bool,
) -> Result<ClusterSettings, BuildError> {
    if state {
        return Err(BuildError::new(
            Setting::Cluster,
            "a cluster crawl keeps its state in Redis: --state and --resume do not apply",
        ));
    }
    if draft.url.is_empty() {
        return Err(BuildError::new(Setting::Cluster, "no Redis URL given"));
    }
    if let Err(e) = draft.url.as_str().into_connection_info() {
        return Err(BuildError::new(
            Setting::Cluster,
            format!(
                "{:?} is not a Redis URL (redis://HOST:PORT/): {e}",
                redacted(&draft.url)
            ),
        ));
    }
    name(Setting::Crawl, &draft.crawl)?;
    let node = draft.node.unwrap_or_else(default_node_name);
    name(Setting::Node, &node)?;
    if let Some(n) = draft.partitions {
        if n == 0 || n > MAX_PARTITIONS {
            return Err(BuildError::new(
                Setting::Partitions,
                format!("{n} is not within 1..={MAX_PARTITIONS}"),
            ));
        }
    }
    let lease_ttl = draft.lease_ttl.unwrap_or(defaults::LEASE_TTL);
    if !(MIN_LEASE_TTL..=MAX_LEASE_TTL).contains(&lease_ttl) {
        return Err(BuildError::new(
            Setting::LeaseTtl,
            format!("{lease_ttl:?} is not within 1 s to an hour"),
        ));
    }
    if let Output::File(path) = &config.output {
        config.output = Output::File(by_node(path, &node));
    }
    config.cdxj = config.cdxj.as_deref().map(|p| by_node(p, &node));
    config.wacz = config.wacz.as_deref().map(|p| by_node(p, &node));
    Ok(ClusterSettings {
        url: draft.url,
        crawl: draft.crawl,
        node,
        partitions: draft.partitions,
        lease_ttl,
    })
}

/// A crawl's or node's name: what a Redis key and a file name can hold.
fn name(setting: Setting, value: &str) -> Result<(), BuildError> {
    let ok = !value.is_empty()
        && value.len() <= MAX_NAME
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && !value.starts_with('.');
    if ok {
        Ok(())
    } else {
        Err(BuildError::new(
            setting,
            format!("{value:?}: 1 to {MAX_NAME} letters, digits, '.', '_' or '-', not starting with '.'"),
        ))
    }
}

/// `HOSTNAME-PID`: unique on a machine, readable in `cluster status`.
fn default_node_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let host: String = host
        .trim()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        .take(MAX_NAME - 12)
        .collect();
    let host = host.trim_start_matches('.');
    let host = if host.is_empty() { "node" } else { host };
    format!("{host}-{}", std::process::id())
}

/// `path` for node `node`: `{node}` in its file name replaced, else the
/// name put before the extension (`out.jsonl` → `out.NODE.jsonl`).
pub(crate) fn by_node(path: &Path, node: &str) -> PathBuf {
    let Some(file) = path.file_name().and_then(|f| f.to_str()) else {
        return path.to_path_buf();
    };
    let named = if file.contains("{node}") {
        file.replace("{node}", node)
    } else {
        match file.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() => format!("{stem}.{node}.{ext}"),
            _ => format!("{file}.{node}"),
        }
    };
    path.with_file_name(named)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_files_are_named_by_node() {
        let p = |s: &str| by_node(Path::new(s), "n1");
        assert_eq!(p("/out/records.jsonl"), Path::new("/out/records.n1.jsonl"));
        assert_eq!(p("records"), Path::new("records.n1"));
        assert_eq!(p(".hidden"), Path::new(".hidden.n1"));
        assert_eq!(p("/o/{node}-log.jsonl"), Path::new("/o/n1-log.jsonl"));
        assert_eq!(p("a.b.cdxj"), Path::new("a.b.n1.cdxj"));
    }

    #[test]
    fn names_are_checked_and_the_default_node_name_passes() {
        assert!(name(Setting::Crawl, "weekly-2026.11_a").is_ok());
        for bad in ["", "a b", "a:b", ".x", "é", &"x".repeat(65)] {
            assert!(name(Setting::Crawl, bad).is_err(), "{bad:?}");
        }
        assert!(name(Setting::Node, &default_node_name()).is_ok());
    }

    #[test]
    fn settings_out_of_range_are_refused() {
        let draft = |url: &str, partitions, ttl| Draft {
            url: url.into(),
            crawl: "c".into(),
            node: Some("n".into()),
            partitions,
            lease_ttl: ttl,
        };
        let mut config = Config::new(Vec::new());
        assert!(check(
            draft("redis://127.0.0.1:6379/", Some(16), None),
            &mut config,
            false
        )
        .is_ok());
        for (d, state) in [
            (draft("redis://127.0.0.1:6379/", None, None), true),
            (draft("http://x/", None, None), false),
            (draft("", None, None), false),
            (draft("redis://127.0.0.1/", Some(0), None), false),
            (draft("redis://127.0.0.1/", Some(1 << 20), None), false),
            (
                draft("redis://127.0.0.1/", None, Some(Duration::from_millis(900))),
                false,
            ),
        ] {
            let e = check(d, &mut config, state).unwrap_err().to_string();
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
