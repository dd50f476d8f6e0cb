//! What the frontier holds in RAM for URLs it spilled, counted by a
//! counting allocator (alone in its file: the allocator is the process's):
//! a live host whose URLs are all on disk, and a URL on disk.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::Instant;

use ringcrawl::crawl::frontier::{Frontier, Politeness, SpillIo};
use ringcrawl::job::Job;

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

/// Carry out the frontier's writes (nothing is read: no host is served).
fn write_all(f: &mut Frontier) {
    while let Some(io) = f.spill_io() {
        if let SpillIo::Write {
            segment, offset, ..
        } = io
        {
            f.spill_written(segment, offset, Ok(()));
        }
    }
}

fn spilling() -> Frontier {
    Frontier::new(Politeness {
        robots: false,
        memory: 0,
        // Every host live: their cost is what is measured.
        host_memory: usize::MAX,
        ..Politeness::default()
    })
}

#[test]
fn a_host_whose_urls_are_all_on_disk_and_a_url_on_disk_cost_little_ram() {
    const HOSTS: usize = 100_000;
    let now = Instant::now();
    let mut f = spilling();
    let before = live();
    for i in 0..HOSTS {
        f.offer(Job::root(format!("http://h{i:06}.example/"), 10), now);
        write_all(&mut f);
    }
    assert_eq!(f.queued_on_disk(), HOSTS);
    // Names are 14 bytes (held twice: the map's key, the ring's turn);
    // the rest is the host's: its slot in the map (~200 bytes with the
    // table's spare room), its queue's spill box and chunk list, its turn.
    // Measured: 400 bytes.
    let per_host = (live() - before) as usize / HOSTS;
    eprintln!("a live host with its URL on disk: {per_host} bytes (name of 14 bytes)");
    assert!(per_host <= 450, "{per_host} bytes a host");
    // What `--host-memory` counts them at errs high.
    let counted = f.host_memory().live_bytes / HOSTS;
    eprintln!("counted against the hosts' memory: {counted} bytes a host");
    assert!(
        counted >= per_host,
        "{counted} counted, {per_host} measured"
    );

    // One host, a bound of 1 MiB: past its first ~10,000 URLs, every one
    // goes to disk in chunks of 64; what RAM grows by is their references.
    const URLS: usize = 1_000_000;
    let mut f = Frontier::new(Politeness {
        robots: false,
        memory: 1 << 20,
        max_pages_per_host: usize::MAX,
        ..Politeness::default()
    });
    let mut at_200k = 0;
    for i in 0..URLS {
        if i == 200_000 {
            at_200k = live();
        }
        f.offer(
            Job::root(format!("http://one.example/page/{i:09}"), 10),
            now,
        );
        write_all(&mut f);
    }
    assert!(f.queued_on_disk() > URLS - 20_000);
    let per_url = (live() - at_200k) as f64 / (URLS - 200_000) as f64;
    eprintln!("a URL on disk: {per_url:.2} bytes of RAM");
    assert!(per_url < 1.0, "{per_url} bytes a URL");
}
