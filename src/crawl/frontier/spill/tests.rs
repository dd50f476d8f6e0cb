//! The spill's scenarios, with the segment files in a map: order across
//! head, disk and tail; hosts with only spilled URLs; politeness; counts;
//! bad chunks and failed writes.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::super::store::{SpillIo, Store};
use super::super::{Frontier, Next, Politeness};
use super::*;
use crate::job::Job;

fn job(url: &str) -> Job {
    Job::root(url.into(), 10)
}

/// A frontier with a bound of `memory` bytes and small blocks (4 KiB), so
/// little data reaches the disk.
fn spilling(memory: usize, per_host: usize) -> Frontier {
    let mut f = Frontier::new(Politeness {
        per_host,
        robots: false,
        memory,
        ..Politeness::default()
    });
    f.set_spill_store(Store::new(64 << 10, 4096));
    f
}

/// The segment files, in RAM; reads can be held back.
#[derive(Default)]
struct Disk {
    files: HashMap<u32, Vec<u8>>,
    held: Vec<(String, Extent)>,
    writes: usize,
    reads: usize,
    removed: Vec<u32>,
}

impl Disk {
    /// Carry out every request (reads too, unless `hold_reads`).
    fn pump(&mut self, f: &mut Frontier, hold_reads: bool) {
        while let Some(io) = f.spill_io() {
            match io {
                SpillIo::Write {
                    segment,
                    offset,
                    bytes,
                } => {
                    assert_eq!(offset % 4096, 0);
                    assert_eq!(bytes.len() % 4096, 0);
                    let file = self.files.entry(segment).or_default();
                    let end = offset as usize + bytes.len();
                    if file.len() < end {
                        file.resize(end, 0);
                    }
                    file[offset as usize..end].copy_from_slice(&bytes);
                    self.writes += 1;
                    f.spill_written(segment, offset, Ok(()));
                }
                SpillIo::Read { host, at } if hold_reads => self.held.push((host, at)),
                SpillIo::Read { host, at } => self.read(f, &host, at),
                SpillIo::Remove { segment } => {
                    assert!(self.files.remove(&segment).is_some());
                    self.removed.push(segment);
                }
            }
        }
    }

    fn read(&mut self, f: &mut Frontier, host: &str, at: Extent) {
        let file = &self.files[&at.segment];
        let bytes = &file[at.offset as usize..(at.offset + at.len) as usize];
        self.reads += 1;
        f.spill_read(host, at, Ok(bytes));
    }

    fn release_held(&mut self, f: &mut Frontier) {
        for (host, at) in std::mem::take(&mut self.held) {
            self.read(f, &host, at);
        }
    }
}

/// Drain the frontier, doing its I/O as it goes and releasing every fetch
/// at once: the URLs in the order they came.
fn drain(f: &mut Frontier, disk: &mut Disk, now: Instant) -> Vec<String> {
    let mut order = Vec::new();
    loop {
        disk.pump(f, false);
        match f.next(now) {
            Next::Fetch(job) => {
                f.release(urls_host(&job.url), false, now);
                order.push(job.url);
            }
            Next::Idle if !f.has_spill_io() => break,
            Next::Idle => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    order
}

fn urls_host(url: &str) -> &str {
    ringcrawl_links::urls::host_of(url)
}

#[test]
fn each_host_keeps_its_order_across_head_disk_and_tail_with_a_tiny_budget() {
    let now = Instant::now();
    let mut f = spilling(2_000, 1);
    let mut disk = Disk::default();
    let mut offered: Vec<String> = Vec::new();
    // Offers and fetches interleave, as in a crawl: some URLs go to the
    // head, most to tails and chunks, some are read back while newer ones
    // are still being spilled behind them.
    let mut order = Vec::new();
    for i in 0..3_000 {
        let url = format!("http://h{}.test/{i}", i % 3);
        assert_eq!(f.offer(job(&url), now), super::super::Offer::New);
        offered.push(url);
        if i % 4 == 0 {
            disk.pump(&mut f, false);
            if let Next::Fetch(job) = f.next(now) {
                f.release(urls_host(&job.url), false, now);
                order.push(job.url);
            }
        }
    }
    assert!(f.queued_on_disk() > 1_000, "{} on disk", f.queued_on_disk());
    assert_eq!(f.queued(), 3_000 - order.len(), "queued counts disk too");
    order.extend(drain(&mut f, &mut disk, now));
    assert_eq!(order.len(), 3_000, "each URL once");
    for h in 0..3 {
        let prefix = format!("http://h{h}.test/");
        let want: Vec<&String> = offered.iter().filter(|u| u.starts_with(&prefix)).collect();
        let got: Vec<&String> = order.iter().filter(|u| u.starts_with(&prefix)).collect();
        assert_eq!(got, want, "FIFO per host");
    }
    assert!(disk.writes > 0 && disk.reads > 0, "it went through disk");
    assert_eq!((f.queued(), f.queued_on_disk()), (0, 0));
    assert_eq!(f.queued_ram(), 0, "every byte counted back");
    assert!(!disk.removed.is_empty(), "a drained segment is removed");
}

#[test]
fn a_host_with_only_spilled_urls_is_fetched_once_its_read_is_done() {
    let now = Instant::now();
    let mut f = spilling(0, 1);
    let mut disk = Disk::default();
    for i in 0..200 {
        f.offer(job(&format!("http://a.test/{i}")), now);
    }
    assert_eq!((f.queued(), f.queued_on_disk()), (200, 200));
    disk.pump(&mut f, true);
    assert_eq!(f.next(now), Next::Idle, "not ready: its URLs are on disk");
    disk.pump(&mut f, true);
    assert_eq!(disk.held.len(), 1, "one read for the host");
    assert_eq!(
        f.next(now),
        Next::Idle,
        "still not ready, and no second read"
    );
    disk.pump(&mut f, true);
    assert_eq!(disk.held.len(), 1);
    disk.release_held(&mut f);
    assert!(
        matches!(f.next(now), Next::Fetch(j) if j.url == "http://a.test/0"),
        "its turn came back with the read"
    );
    assert_eq!(f.queued(), 199);
}

#[test]
fn politeness_holds_for_spilled_urls_and_a_spilled_host_does_not_starve_others() {
    let now = Instant::now();
    let ms = Duration::from_millis;
    let mut f = Frontier::new(Politeness {
        per_host: 1,
        delay: ms(100),
        robots: false,
        memory: 0,
        ..Politeness::default()
    });
    f.set_spill_store(Store::new(64 << 10, 4096));
    let mut disk = Disk::default();
    for i in 0..100 {
        f.offer(job(&format!("http://big.test/{i}")), now);
    }
    f.offer(job("http://small.test/1"), now);
    disk.pump(&mut f, true);
    let first = f.next(now);
    let second = f.next(now);
    let fetched: Vec<String> = [first, second]
        .into_iter()
        .filter_map(|n| match n {
            Next::Fetch(j) => Some(j.url),
            _ => None,
        })
        .collect();
    assert!(
        fetched.iter().any(|u| u == "http://small.test/1"),
        "the small host goes while the big one reads: {fetched:?}"
    );
    disk.pump(&mut f, false);
    disk.release_held(&mut f);
    let Next::Fetch(a) = f.next(now) else {
        panic!("big.test is ready after its read")
    };
    assert_eq!(a.url, "http://big.test/0");
    // Its next URL is read ahead.
    disk.pump(&mut f, false);
    assert_eq!(f.next(now), Next::Idle, "one in flight: per_host holds");
    f.release("big.test", false, now);
    assert_eq!(f.next(now), Next::Wait(now + ms(100)), "its delay holds");
    let t = now + ms(100);
    assert!(matches!(f.next(t), Next::Fetch(j) if j.url == "http://big.test/1"));
}

#[test]
fn a_corrupt_chunk_loses_its_jobs_for_the_shard_to_count_out_and_the_host_goes_on() {
    let now = Instant::now();
    let mut f = spilling(0, 1);
    let mut disk = Disk::default();
    for i in 0..200 {
        f.offer(job(&format!("http://a.test/{i}")), now);
    }
    disk.pump(&mut f, true);
    assert_eq!(f.next(now), Next::Idle);
    disk.pump(&mut f, true);
    let (host, at) = disk.held.pop().unwrap();
    let mut garbage = vec![0u8; at.len as usize];
    garbage[..4].copy_from_slice(b"RCQ1");
    f.spill_read(&host, at, Ok(&garbage));
    let lost = f.take_lost();
    assert_eq!(lost.len(), 1);
    assert_eq!(lost[0].host, "a.test");
    assert!(lost[0].jobs >= 1);
    assert_eq!(
        f.queued(),
        200 - lost[0].jobs,
        "lost jobs are no longer queued"
    );
    // An I/O error loses the next chunk the same way.
    disk.pump(&mut f, true);
    f.next(now);
    disk.pump(&mut f, true);
    let (host, at) = disk.held.pop().unwrap();
    f.spill_read(&host, at, Err("EIO".into()));
    let lost2 = f.take_lost();
    assert_eq!(lost2[0].error, "EIO");
    let left = drain(&mut f, &mut disk, now);
    assert_eq!(left.len() + lost[0].jobs + lost2[0].jobs, 200);
    assert_eq!(f.queued(), 0);
}

#[test]
fn a_failed_write_keeps_its_chunks_in_ram_and_nothing_is_lost() {
    let now = Instant::now();
    let mut f = spilling(0, 1);
    for i in 0..300 {
        f.offer(job(&format!("http://a.test/{i}")), now);
        while let Some(io) = f.spill_io() {
            if let SpillIo::Write {
                segment,
                offset,
                bytes,
            } = io
            {
                f.spill_written(segment, offset, Err(bytes));
            }
        }
    }
    let mut disk = Disk::default();
    let order = drain(&mut f, &mut disk, now);
    let want: Vec<String> = (0..300).map(|i| format!("http://a.test/{i}")).collect();
    assert_eq!(order, want);
    assert!(f.take_lost().is_empty());
    assert_eq!(disk.reads, 0, "read from RAM");
}

#[test]
fn a_failing_spill_holds_the_frontier_back_past_its_bound_until_a_retry_writes() {
    let now = Instant::now();
    let bound = 16 << 10;
    let mut f = spilling(bound, 1);
    let mut i = 0;
    let failed = loop {
        f.offer(job(&format!("http://a.test/{i}")), now);
        i += 1;
        if let Some(SpillIo::Write {
            segment,
            offset,
            bytes,
        }) = f.spill_io()
        {
            f.spill_written(segment, offset, Err(bytes));
            break segment;
        }
    };
    assert!(f.spill_failing());
    while !f.spill_held_back() {
        f.offer(job(&format!("http://a.test/{i}")), now);
        i += 1;
        assert!(f.spill_io().is_none(), "nothing sealed while failing");
    }
    f.retry_spill();
    let mut disk = Disk::default();
    disk.pump(&mut f, false);
    assert_eq!(disk.writes, 1, "the kept block is written again");
    assert!(disk.files.contains_key(&failed));
    assert!(!f.spill_failing() && !f.spill_held_back());
    let order = drain(&mut f, &mut disk, now);
    let want: Vec<String> = (0..i).map(|i| format!("http://a.test/{i}")).collect();
    assert_eq!(order.len(), want.len(), "every URL, once");
    assert!(f.take_lost().is_empty());
}

#[test]
fn a_frontier_under_its_bound_never_spills() {
    let now = Instant::now();
    let mut f = Frontier::new(Politeness {
        robots: false,
        memory: 10 << 20,
        ..Politeness::default()
    });
    for i in 0..20_000 {
        f.offer(job(&format!("http://h{}.test/{i}", i % 50)), now);
    }
    assert_eq!(f.spill_stats(), SpillStats::default());
    assert!(!f.has_spill_io());
    assert_eq!(f.queued_on_disk(), 0);
    assert!(f.queued_ram() > 20_000 * 56);
}

#[test]
fn ram_stays_near_the_bound_while_the_rest_goes_to_disk() {
    let now = Instant::now();
    let bound = 64 << 10;
    let mut f = spilling(bound, 2);
    let mut disk = Disk::default();
    let mut peak = 0;
    for i in 0..50_000 {
        f.offer(job(&format!("http://h{}.test/page/{i}", i % 40)), now);
        disk.pump(&mut f, false);
        peak = peak.max(f.queued_ram());
    }
    assert!(
        peak <= bound + bound / 16 + 40 * (READ_AHEAD + CHUNK_JOBS) * 120,
        "peak {peak}"
    );
    assert!(f.queued_on_disk() > 45_000, "{}", f.queued_on_disk());
    assert_eq!(f.queued(), 50_000);
}

#[test]
fn urls_waiting_for_room_among_the_hosts_spill_and_come_back_in_order() {
    let now = Instant::now();
    let mut f = Frontier::new(Politeness {
        per_host: 1,
        robots: false,
        memory: 2_000,
        host_memory: 2 * super::super::host::Host::new_weight("h0.test", false),
        ..Politeness::default()
    });
    f.set_spill_store(Store::new(64 << 10, 4096));
    let mut disk = Disk::default();
    let offered: Vec<String> = (0..500).map(|i| format!("http://h{i}.test/")).collect();
    for url in &offered {
        assert_eq!(f.offer(job(url), now), super::super::Offer::New);
    }
    disk.pump(&mut f, false);
    assert_eq!(f.hosts().0, 2);
    assert_eq!(f.host_memory().waiting, 498);
    assert!(f.queued_on_disk() > 300, "{} on disk", f.queued_on_disk());
    assert!(f.queued_ram() < 4_000, "{} bytes in RAM", f.queued_ram());
    // One URL a host, two hosts live at a time: they come in the order
    // they were offered.
    assert_eq!(drain(&mut f, &mut disk, now), offered);
    assert_eq!((f.queued(), f.queued_on_disk()), (0, 0));
    assert_eq!(f.host_memory().waiting, 0);
}

#[test]
fn live_hosts_whose_heads_fill_the_queues_bound_let_no_new_host_in() {
    let now = Instant::now();
    let mut f = spilling(8_000, 1);
    let mut disk = Disk::default();
    for i in 0..100 {
        for h in 0..40 {
            f.offer(job(&format!("http://h{h}.test/{i}")), now);
        }
    }
    // Served, each host brings its next chunk up from disk whatever the
    // bound: their heads pass it.
    let mut fetched = 0;
    while f.spill.heads_ram() <= 8_000 {
        disk.pump(&mut f, false);
        if let Next::Fetch(job) = f.next(now) {
            f.release(urls_host(&job.url), false, now);
            fetched += 1;
        }
        assert!(fetched < 4_000, "the heads pass the bound");
    }
    f.offer(job("http://new.test/"), now);
    assert_eq!(
        (f.hosts().0, f.host_memory().waiting),
        (40, 1),
        "new.test waits while the live hosts' heads are over the bound"
    );
    let rest = drain(&mut f, &mut disk, now);
    assert_eq!(fetched + rest.len(), 4_001);
    assert!(rest.iter().any(|u| u == "http://new.test/"));
    assert_eq!(f.host_memory().waiting, 0);
}
