//! Hosts that kept failing ([`Backoffs`]): how many times a host failed
//! [`BACKED_OFF_AFTER`] times in a row (network errors, 5xx, 429), which
//! backs it off for longer each time, and the few that failed most, for
//! the report. Bounded: [`MAX_HOSTS`] names whatever the number of hosts.
//!
//! Pure counting; the frontier does the backing off.

use serde::Serialize;

/// Failures in a row that count a host as backed off.
pub(crate) const BACKED_OFF_AFTER: u32 = 3;
/// Hosts the report names.
pub(crate) const MAX_HOSTS: usize = 8;

/// One host that kept failing, and its longest run of failures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct BackedOff {
    pub host: String,
    pub failures: u32,
}

/// Hosts backed off after failing in a row.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Backoffs {
    /// Times a host reached [`BACKED_OFF_AFTER`] failures in a row.
    pub count: u64,
    /// The hosts with the longest runs, longest first, at most
    /// [`MAX_HOSTS`].
    pub hosts: Vec<BackedOff>,
}

impl Backoffs {
    /// `host` has now failed `streak` times in a row.
    pub fn note(&mut self, host: &str, streak: u32) {
        if streak < BACKED_OFF_AFTER {
            return;
        }
        if streak == BACKED_OFF_AFTER {
            self.count += 1;
        }
        self.keep(host, streak);
    }

    /// Fold another shard's in.
    pub fn merge(&mut self, other: &Backoffs) {
        self.count += other.count;
        for b in &other.hosts {
            self.keep(&b.host, b.failures);
        }
    }

    fn keep(&mut self, host: &str, failures: u32) {
        match self.hosts.iter_mut().find(|b| b.host == host) {
            Some(b) => b.failures = b.failures.max(failures),
            None => {
                let weakest = self.hosts.last().map_or(0, |b| b.failures);
                if self.hosts.len() >= MAX_HOSTS && failures <= weakest {
                    return;
                }
                self.hosts.push(BackedOff {
                    host: host.to_string(),
                    failures,
                });
            }
        }
        self.hosts.sort_by(|a, b| {
            b.failures
                .cmp(&a.failures)
                .then_with(|| a.host.cmp(&b.host))
        });
        self.hosts.truncate(MAX_HOSTS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_counts_once_a_run_and_the_longest_runs_are_named() {
        let mut b = Backoffs::default();
        for streak in 1..=5 {
            b.note("a.test", streak);
        }
        b.note("b.test", 2);
        assert_eq!(b.count, 1);
        assert_eq!(
            b.hosts,
            [BackedOff {
                host: "a.test".into(),
                failures: 5
            }]
        );
        // A second run of the same host counts again, its longest kept.
        b.note("a.test", 3);
        assert_eq!((b.count, b.hosts[0].failures), (2, 5));
    }

    #[test]
    fn at_most_a_few_hosts_are_named_whatever_their_number() {
        let mut shard = Backoffs::default();
        for i in 0..100u32 {
            for streak in 1..=(3 + i % 20) {
                shard.note(&format!("h{i}.test"), streak);
            }
        }
        let mut all = Backoffs::default();
        all.merge(&shard);
        all.merge(&shard);
        assert_eq!(all.count, 200);
        assert_eq!(all.hosts.len(), MAX_HOSTS);
        // The longest runs (22: five hosts; then 21), longest first.
        let failures: Vec<u32> = all.hosts.iter().map(|b| b.failures).collect();
        assert_eq!(
            failures,
            [22, 22, 22, 22, 22, 21, 21, 21],
            "{:?}",
            all.hosts
        );
    }
}
