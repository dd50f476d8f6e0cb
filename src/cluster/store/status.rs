//! `ringcrawl cluster status`'s view of a crawl, read from Redis in a few
//! pipelines: its nodes (alive by their heartbeats, their last reports),
//! who holds which partition, and the streams' lengths and pending
//! counts. Read only: it changes nothing in the crawl.

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

impl Store {
    /// The crawl as `ringcrawl cluster status` shows it.
    pub fn status(&mut self) -> Result<Status, StoreError> {
        let partitions: Option<u32> = redis::cmd("HGET")
            .arg(self.keys.meta())
            .arg("partitions")
            .query(&mut self.con)?;
        let Some(partitions) = partitions else {
            return Ok(Status::default());
        };
        let now_ms = self.now_ms()?;
        let nodes: Vec<(String, f64)> = redis::cmd("ZRANGE")
            .arg(self.keys.nodes())
            .arg(0)
            .arg(-1)
            .arg("WITHSCORES")
            .query(&mut self.con)?;
        let owners = self.owners(partitions)?;
        let mut held: BTreeMap<String, u64> = BTreeMap::new();
        for owner in owners.iter().flatten() {
            *held.entry(owner.clone()).or_default() += 1;
        }
        let mut status = Status {
            partitions,
            unowned: u32::try_from(owners.iter().filter(|o| o.is_none()).count()).unwrap_or(0),
            ..Status::default()
        };
        for (identity, expires) in nodes {
            let name = crate::cluster::name_of(&identity).to_string();
            let fields: BTreeMap<String, String> = redis::cmd("HGETALL")
                .arg(self.keys.node(&name))
                .query(&mut self.con)?;
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
        let mut pipe = redis::pipe();
        for p in 0..partitions {
            pipe.cmd("XLEN").arg(self.keys.stream(p));
        }
        let lengths: Vec<u64> = pipe.query(&mut self.con)?;
        status.entries = lengths.iter().sum();
        let mut pipe = redis::pipe();
        for p in 0..partitions {
            pipe.cmd("XPENDING").arg(self.keys.stream(p)).arg(GROUP);
        }
        let pending: Vec<Value> = pipe.query(&mut self.con)?;
        status.in_flight = pending
            .into_iter()
            .filter_map(|v| match v {
                Value::Array(parts) => match parts.into_iter().next() {
                    Some(Value::Int(n)) => u64::try_from(n).ok(),
                    _ => None,
                },
                _ => None,
            })
            .sum();
        let (added, records, roots): (Option<u64>, Option<u64>, u64) = redis::pipe()
            .cmd("GET")
            .arg(self.keys.added())
            .cmd("GET")
            .arg(self.keys.records())
            .cmd("SCARD")
            .arg(self.keys.roots())
            .query(&mut self.con)?;
        status.urls_added = added.unwrap_or(0);
        status.records = records.unwrap_or(0);
        status.roots = roots;
        Ok(status)
    }
}
