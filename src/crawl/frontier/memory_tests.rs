//! What the frontier holds in RAM for URLs it spilled, counted by a
//! counting allocator: a live host whose URLs are all on disk, and a URL
//! on disk.
//!
//! The allocator is the process's (a `#[global_allocator]` cannot be one
//! test's), so it is the library's unit-test binary's, and it counts each
//! thread's own allocations apart: this test reads its own thread's count
//! alone, whatever the tests running beside it on other threads allocate.
//! A block freed on another thread than the one that allocated it is
//! counted off that other thread; the frontier under test lives and dies
//! on this test's thread. Every other unit test pays a thread-local add
//! per allocation, and allocates as before (through `System`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::Instant;

use super::{Frontier, Politeness, SpillIo};
use crate::job::Job;

/// `System`, counting the bytes each thread has live.
struct PerThread;

thread_local! {
    /// Bytes this thread allocated and has not freed (freed here less
    /// allocated elsewhere can make it negative).
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

/// Add `bytes` to this thread's count (nothing once its thread-locals
/// are gone, at the thread's end).
fn count(bytes: isize) {
    let _ = LIVE.try_with(|live| live.set(live.get().wrapping_add(bytes)));
}

/// `size` as a count: a `Layout`'s size is at most `isize::MAX`.
fn signed(size: usize) -> isize {
    isize::try_from(size).unwrap_or(isize::MAX)
}

// SAFETY: every call is passed on to `System` unchanged; counting touches
// only a thread-local `Cell` (const-initialised: no allocation, no
// re-entry).
unsafe impl GlobalAlloc for PerThread {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(signed(layout.size()));
        // SAFETY: the caller's contract is `System.alloc`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(signed(layout.size()));
        // SAFETY: the caller's contract is `System.alloc_zeroed`'s.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(signed(layout.size()).wrapping_neg());
        // SAFETY: the caller's contract is `System.dealloc`'s.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(signed(new_size).wrapping_sub(signed(layout.size())));
        // SAFETY: the caller's contract is `System.realloc`'s.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: PerThread = PerThread;

/// Bytes this thread has live.
fn live() -> isize {
    LIVE.with(Cell::get)
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
