//! The hosts that stand out in a running crawl, for a status page
//! ([`TopHosts`]): those fetched most, queued most, failing most, and in
//! back-off now, [`TOP_HOSTS`] of each.
//!
//! Each shard picks its own ([`Picker`], fed by its frontier in its
//! once-a-second publish, only when a status server asked for the live
//! numbers: a look over the hosts it holds, allocating a name only for a
//! host that makes a list), and a reader merges the shards' lists
//! ([`TopHosts::merge`]): a host belongs to one shard, so the crawl's top
//! N are among the shards'. A look costs some 0.13 µs a host (13 ms over
//! 100,000 hosts, `benches/top_hosts.rs`), so [`Pace`] spaces them out
//! for a shard holding very many: at most 1% of its time.
//!
//! Only hosts a frontier holds (live, or resting within `--host-memory`)
//! are counted: a resting host it forgets loses its counts, and one that
//! comes back starts again from 0. Not Prometheus metrics: a label per
//! host would make a series per host, without bound.

use std::time::{Duration, Instant};

use serde::Serialize;

/// Hosts in each list.
pub const TOP_HOSTS: usize = 10;

/// One host's numbers now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct HostCounts {
    /// Fetches of its pages that ended (a record each; robots.txt aside).
    pub fetched: u64,
    /// Of those, the ones it failed to answer usefully (network errors,
    /// 5xx, 429): the failures that back a host off.
    pub errors: u64,
    /// URLs queued for it (in RAM and on disk, or set aside for its
    /// robots.txt).
    pub queued: u64,
    /// Failures in a row (0 once a fetch is answered).
    pub failures: u32,
    /// Time left of its back-off after failures, ms (0: none).
    pub backoff_ms: u64,
}

/// One host in a list, with all its numbers (in JSON beside its name).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct TopHost {
    /// The host's name.
    pub host: String,
    /// Its numbers.
    #[serde(flatten)]
    pub counts: HostCounts,
}

/// The hosts that stand out, each list largest first (ties by name), at
/// most [`TOP_HOSTS`] each; a host with 0 of a list's number is not in
/// it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct TopHosts {
    /// Most fetches ended.
    pub fetched: Vec<TopHost>,
    /// Most URLs queued.
    pub queued: Vec<TopHost>,
    /// Most failed fetches.
    pub failing: Vec<TopHost>,
    /// Backing off now, longest wait left first.
    pub backing_off: Vec<TopHost>,
}

/// The four lists' keys, in [`TopHosts`]' order.
const KEYS: [fn(&HostCounts) -> u64; 4] =
    [|c| c.fetched, |c| c.queued, |c| c.errors, |c| c.backoff_ms];

/// Picks one shard's top hosts from its hosts, one look at each: each list
/// holds at most `n` borrowed names, so nothing is allocated for a host
/// that does not make a list.
#[derive(Debug)]
pub(crate) struct Picker<'a> {
    n: usize,
    lists: [Vec<(u64, &'a str, HostCounts)>; 4],
}

impl<'a> Picker<'a> {
    /// A picker of `n` hosts a list.
    pub(crate) fn new(n: usize) -> Picker<'a> {
        Picker {
            n,
            lists: Default::default(),
        }
    }

    /// Consider `host`.
    pub(crate) fn offer(&mut self, host: &'a str, counts: HostCounts) {
        for (list, key) in self.lists.iter_mut().zip(KEYS) {
            let value = key(&counts);
            if value == 0 || self.n == 0 {
                continue;
            }
            let beats = |e: &(u64, &str, HostCounts)| {
                (e.0, std::cmp::Reverse(e.1)) >= (value, std::cmp::Reverse(host))
            };
            if list.len() >= self.n && list.last().is_some_and(beats) {
                continue;
            }
            let at = list.partition_point(beats);
            list.insert(at, (value, host, counts));
            list.truncate(self.n);
        }
    }

    /// The lists, names copied.
    pub(crate) fn finish(self) -> TopHosts {
        let [fetched, queued, failing, backing_off] = self.lists.map(|list| {
            list.into_iter()
                .map(|(_, host, counts)| TopHost {
                    host: host.to_string(),
                    counts,
                })
                .collect::<Vec<_>>()
        });
        TopHosts {
            fetched,
            queued,
            failing,
            backing_off,
        }
    }
}

impl TopHosts {
    /// The crawl's top hosts from its shards' (whose hosts are disjoint).
    pub fn merge<'a>(shards: impl IntoIterator<Item = &'a TopHosts>) -> TopHosts {
        let mut all = TopHosts::default();
        for shard in shards {
            for (list, theirs) in all.lists_mut().into_iter().zip(shard.lists()) {
                list.extend(theirs.iter().cloned());
            }
        }
        for (list, key) in all.lists_mut().into_iter().zip(KEYS) {
            list.sort_by(|a, b| {
                key(&b.counts)
                    .cmp(&key(&a.counts))
                    .then_with(|| a.host.cmp(&b.host))
            });
            list.truncate(TOP_HOSTS);
        }
        all
    }

    fn lists_mut(&mut self) -> [&mut Vec<TopHost>; 4] {
        [
            &mut self.fetched,
            &mut self.queued,
            &mut self.failing,
            &mut self.backing_off,
        ]
    }

    fn lists(&self) -> [&Vec<TopHost>; 4] {
        [
            &self.fetched,
            &self.queued,
            &self.failing,
            &self.backing_off,
        ]
    }
}

/// The shortest time between two looks of a shard.
pub(crate) const LOOK_EVERY: Duration = Duration::from_secs(1);
/// The next look waits this many times the last one's length, so looks
/// take at most 1% of a shard's time.
const LOOK_SHARE: u32 = 100;

/// When a shard looks over its hosts again, and its last lists between
/// looks: every [`LOOK_EVERY`], or less often when a look takes more than
/// 1% of that (a shard holding millions of hosts).
#[derive(Debug, Default)]
pub(crate) struct Pace {
    due: Option<Instant>,
    kept: TopHosts,
}

impl Pace {
    /// The lists at `now`: `look`'s if a look is due (or `now_or_never`:
    /// a shard's last publish), else the last look's.
    pub(crate) fn lists(
        &mut self,
        now: Instant,
        now_or_never: bool,
        look: impl FnOnce() -> TopHosts,
    ) -> TopHosts {
        if now_or_never || self.due.is_none_or(|due| now >= due) {
            let started = Instant::now();
            self.kept = look();
            let wait = started.elapsed().saturating_mul(LOOK_SHARE).max(LOOK_EVERY);
            self.due = now.checked_add(wait);
        }
        self.kept.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(fetched: u64, errors: u64, queued: u64, backoff_ms: u64) -> HostCounts {
        HostCounts {
            fetched,
            errors,
            queued,
            failures: u32::from(backoff_ms > 0),
            backoff_ms,
        }
    }

    fn names(list: &[TopHost]) -> Vec<&str> {
        list.iter().map(|h| h.host.as_str()).collect()
    }

    #[test]
    fn a_shard_keeps_the_n_largest_of_each_list_ties_by_name() {
        let mut pick = Picker::new(2);
        pick.offer("a.test", counts(5, 0, 9, 0));
        pick.offer("b.test", counts(7, 1, 0, 0));
        pick.offer("c.test", counts(5, 3, 1, 400));
        pick.offer("d.test", counts(1, 3, 2, 100));
        let top = pick.finish();
        assert_eq!(names(&top.fetched), ["b.test", "a.test"], "5 = 5: by name");
        assert_eq!(names(&top.queued), ["a.test", "d.test"]);
        assert_eq!(names(&top.failing), ["c.test", "d.test"]);
        assert_eq!(names(&top.backing_off), ["c.test", "d.test"]);
        assert_eq!(
            top.fetched[1].counts.queued, 9,
            "each row has all its numbers"
        );
    }

    #[test]
    fn a_host_with_none_of_a_number_is_not_listed_for_it() {
        let mut pick = Picker::new(10);
        pick.offer("idle.test", counts(3, 0, 0, 0));
        let top = pick.finish();
        assert_eq!(names(&top.fetched), ["idle.test"]);
        assert!(top.queued.is_empty() && top.failing.is_empty() && top.backing_off.is_empty());
    }

    #[test]
    fn looks_are_a_second_apart_or_more_and_the_last_publish_looks_again() {
        let mut pace = Pace::default();
        let now = Instant::now();
        let list = |n: u64| {
            let mut pick = Picker::new(1);
            pick.offer("a.test", counts(n, 0, 0, 0));
            pick.finish()
        };
        assert_eq!(
            pace.lists(now, false, || list(1)).fetched[0].counts.fetched,
            1
        );
        let soon = now + Duration::from_millis(500);
        let kept = pace.lists(soon, false, || panic!("not due"));
        assert_eq!(kept.fetched[0].counts.fetched, 1, "the last look's");
        assert_eq!(
            pace.lists(soon, true, || list(2)).fetched[0].counts.fetched,
            2
        );
        let later = soon + LOOK_EVERY;
        assert_eq!(
            pace.lists(later, false, || list(3)).fetched[0]
                .counts
                .fetched,
            3
        );
    }

    #[test]
    fn the_shards_lists_merge_into_the_crawls_top_n() {
        let shard = |hosts: std::ops::Range<u64>| {
            let names: Vec<String> = hosts.clone().map(|i| format!("h{i:02}.test")).collect();
            let mut pick = Picker::new(TOP_HOSTS);
            for (i, name) in hosts.zip(&names) {
                pick.offer(name, counts(i, i % 3, 0, 0));
            }
            pick.finish()
        };
        let (a, b) = (shard(1..20), shard(20..25));
        let merged = TopHosts::merge([&a, &b]);
        assert_eq!(merged.fetched.len(), TOP_HOSTS);
        let fetched: Vec<u64> = merged.fetched.iter().map(|h| h.counts.fetched).collect();
        assert_eq!(fetched, (15..25).rev().collect::<Vec<_>>());
        // Errors i % 3: the 8 hosts at 2 first, then those at 1 by name.
        let errors: Vec<u64> = merged.failing.iter().map(|h| h.counts.errors).collect();
        assert_eq!(errors, [2, 2, 2, 2, 2, 2, 2, 2, 1, 1]);
        assert_eq!(merged.failing[8].host, "h01.test");
        assert!(TopHosts::merge([]).fetched.is_empty());
    }
}
