//! `ringcrawl cluster status`'s view of a crawl, read from Redis in four
//! round trips whatever its size: its nodes (alive by their heartbeats,
//! their last reports), who holds which partition, and the streams'
//! lengths and pending counts (also a node's own partitions', for its
//! status server: [`Store::backlog_of`]). Read only: it changes nothing
//! in the crawl. Redis does work in proportion to the partitions (three
//! commands each) and the nodes: some 800 commands for the default 256
//! partitions, cheap, but not for a tight loop.

use std::collections::BTreeMap;

use redis::Value;

use super::{Store, StoreError, GROUP};

/// A node of a cluster crawl as it last reported itself.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct NodeStatus {
    /// Its name (`--node`).
    pub name: String,
    /// Still alive by its heartbeat.
    pub alive: bool,
    /// Records it reported done.
    pub records: u64,
    /// Its records a second, between its last two heartbeats.
    pub pages_per_sec: f64,
    /// Partitions whose lease it holds.
    pub partitions: u64,
}

/// A cluster crawl as `ringcrawl cluster status` shows it.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct Status {
    /// Its host partitions (0: no such crawl).
    pub partitions: u32,
    /// Its nodes, alive or lately gone.
    pub nodes: Vec<NodeStatus>,
    /// Partitions whose lease no node holds.
    pub unowned: u32,
    /// Entries in the streams (not read yet, or read and not done).
    pub entries: u64,
    /// Of those, read by an owner and not done yet.
    pub in_flight: u64,
    /// URLs appended to the streams, duplicates included.
    pub urls_added: u64,
    /// Records written, crawl-wide.
    pub records: u64,
    /// Roots given so far.
    pub roots: u64,
}

/// The count of entries of an `XPENDING key group` summary (0 if the
/// reply is not one).
fn pending_count(reply: Value) -> u64 {
    match reply {
        Value::Array(parts) => match parts.into_iter().next() {
            Some(Value::Int(n)) => u64::try_from(n).unwrap_or(0),
            _ => 0,
        },
        _ => 0,
    }
}

impl Store {
    /// The entries in the streams of `partitions` (not read yet, or read
    /// and not done), and of those the ones read and not done, in one
    /// round trip (two commands a partition).
    pub(crate) fn backlog_of(&mut self, partitions: &[u32]) -> Result<(u64, u64), StoreError> {
        if partitions.is_empty() {
            return Ok((0, 0));
        }
        let mut pipe = redis::pipe();
        for &p in partitions {
            pipe.cmd("XLEN").arg(self.keys.stream(p));
            pipe.cmd("XPENDING").arg(self.keys.stream(p)).arg(GROUP);
        }
        let replies: Vec<Value> = pipe.query(&mut self.con)?;
        let (mut entries, mut pending) = (0u64, 0u64);
        for (i, reply) in replies.into_iter().enumerate() {
            if i % 2 == 0 {
                let Value::Int(n) = reply else {
                    return Err(StoreError::Reply("XLEN"));
                };
                entries = entries.saturating_add(u64::try_from(n).unwrap_or(0));
            } else {
                pending = pending.saturating_add(pending_count(reply));
            }
        }
        Ok((entries, pending))
    }

    /// The crawl as `ringcrawl cluster status` shows it.
    pub(crate) fn status(&mut self) -> Result<Status, StoreError> {
        let partitions: Option<u32> = redis::cmd("HGET")
            .arg(self.keys.meta())
            .arg("partitions")
            .query(&mut self.con)?;
        let Some(partitions) = partitions.filter(|&n| n > 0) else {
            return Ok(Status::default());
        };
        // Four round trips however many nodes and partitions: the count,
        // the crawl-wide numbers, the nodes' reports, the streams.
        let leases: Vec<String> = (0..partitions).map(|p| self.keys.lease(p)).collect();
        #[allow(clippy::type_complexity, reason = "one pipeline's replies, in order")]
        let ((secs, micros), nodes, owners, added, records, roots): (
            (u64, u64),
            Vec<(String, f64)>,
            Vec<Option<String>>,
            Option<u64>,
            Option<u64>,
            u64,
        ) = redis::pipe()
            .cmd("TIME")
            .cmd("ZRANGE")
            .arg(self.keys.nodes())
            .arg(0)
            .arg(-1)
            .arg("WITHSCORES")
            .cmd("MGET")
            .arg(leases)
            .cmd("GET")
            .arg(self.keys.added())
            .cmd("GET")
            .arg(self.keys.records())
            .cmd("SCARD")
            .arg(self.keys.roots())
            .query(&mut self.con)?;
        let now_ms = secs.saturating_mul(1000).saturating_add(micros / 1000);
        let mut held: BTreeMap<String, u64> = BTreeMap::new();
        for owner in owners.iter().flatten() {
            *held.entry(owner.clone()).or_default() += 1;
        }
        let mut status = Status {
            partitions,
            unowned: u32::try_from(owners.iter().filter(|o| o.is_none()).count()).unwrap_or(0),
            urls_added: added.unwrap_or(0),
            records: records.unwrap_or(0),
            roots,
            ..Status::default()
        };
        let mut pipe = redis::pipe();
        for (identity, _) in &nodes {
            pipe.cmd("HGETALL")
                .arg(self.keys.node(crate::cluster::name_of(identity)));
        }
        let reports: Vec<BTreeMap<String, String>> = if nodes.is_empty() {
            Vec::new()
        } else {
            pipe.query(&mut self.con)?
        };
        for ((identity, expires), fields) in nodes.into_iter().zip(reports) {
            let name = crate::cluster::name_of(&identity).to_string();
            let number = |f: &str| {
                fields
                    .get(f)
                    .and_then(|v| v.parse::<f64>().ok())
                    .unwrap_or(0.0)
            };
            status.nodes.push(NodeStatus {
                alive: expires >= now_ms as f64,
                records: number("records") as u64,
                pages_per_sec: number("pages_per_sec"),
                partitions: held.get(&identity).copied().unwrap_or(0),
                name,
            });
        }
        status.nodes = one_per_name(std::mem::take(&mut status.nodes));
        let all: Vec<u32> = (0..partitions).collect();
        (status.entries, status.in_flight) = self.backlog_of(&all)?;
        Ok(status)
    }
}

/// The nodes, one entry per name: a process restarted under its name is
/// a new identity beside its old one (gone, and holding partitions until
/// their leases run out), and both read the name's one report. One entry
/// per name keeps a table row, a JSON entry and a Prometheus series (the
/// `node` label) per node; alive if either is, the partitions both hold.
fn one_per_name(nodes: Vec<NodeStatus>) -> Vec<NodeStatus> {
    let mut merged: Vec<NodeStatus> = Vec::with_capacity(nodes.len());
    for node in nodes {
        match merged.iter_mut().find(|m| m.name == node.name) {
            Some(m) => {
                m.alive |= node.alive;
                m.partitions = m.partitions.saturating_add(node.partitions);
            }
            None => merged.push(node),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_restarted_under_its_name_is_one_entry_alive_with_both_identities_partitions() {
        let node = |name: &str, alive, partitions| NodeStatus {
            name: name.to_string(),
            alive,
            records: 40,
            pages_per_sec: 2.0,
            partitions,
        };
        let merged = one_per_name(vec![
            node("n1", false, 3),
            node("n2", true, 4),
            node("n1", true, 5),
        ]);
        assert_eq!(merged, vec![node("n1", true, 8), node("n2", true, 4)]);
    }
}
