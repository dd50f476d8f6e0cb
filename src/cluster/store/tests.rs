//! The store against a real `redis-server` (on a free loopback port;
//! skipped with a message where it is not installed, a failure with
//! `RINGCRAWL_REQUIRE_TOOLS=1`): creation and joining, heartbeats, leases
//! and their expiry, streams read once and claimed after a takeover,
//! fencing of a node that lost its lease or whose name joined again, the
//! done log, and the backlog that says a crawl is over; and which eviction
//! policies keep the crawl's keys.

use std::time::Duration;

use ringcrawl_testkit::redis::redis_or_skip;

use super::{may_evict, Entry, Finished, Store, StoreError, DONE_ITEM};
use crate::cluster::{incarnation, wire};
use crate::job::Job;

const TIMEOUT: Duration = Duration::from_secs(5);

fn node(url: &str, crawl: &str, name: &str) -> Store {
    Store::connect(url, crawl, name, TIMEOUT).unwrap()
}

/// Crawl "c" made (by a store named "setup", returned), and a way to
/// connect as one process of node `name` (its identity, with its
/// generation), as that process's reconnects do.
fn one_process(url: &str, name: &str) -> (Store, impl Fn() -> Store) {
    let mut setup = node(url, "c", "setup");
    setup.create_or_join(Some(2), [1, 2]).unwrap();
    let identity = incarnation(name, setup.next_generation(name).unwrap());
    let (url, name) = (url.to_string(), name.to_string());
    let connect = move || {
        let mut store = node(&url, "c", &name);
        store.set_identity(&identity);
        store
    };
    (setup, connect)
}

fn urls(entries: &[Entry]) -> Vec<String> {
    entries
        .iter()
        .flat_map(|e| wire::decode(&e.text).0)
        .map(|job| job.url)
        .collect()
}

#[test]
fn a_crawl_is_made_once_and_joined_with_its_settings() {
    let Some(redis) = redis_or_skip("a_crawl_is_made_once") else {
        return;
    };
    let mut a = node(&redis.url(), "c", "a");
    let meta = a.create_or_join(Some(16), [1, 2]).unwrap();
    assert_eq!((meta.partitions, meta.key), (16, [1, 2]));
    let mut b = node(&redis.url(), "c", "b");
    let joined = b.create_or_join(None, [9, 9]).unwrap();
    assert_eq!(joined, meta, "a node that joins takes the crawl's settings");
    let mut c = node(&redis.url(), "c", "c");
    match c.create_or_join(Some(32), [9, 9]) {
        Err(StoreError::Partitions {
            have: 16, want: 32, ..
        }) => {}
        other => panic!("another partition count must be refused: {other:?}"),
    }
    // Another crawl on the same server is apart.
    let mut d = node(&redis.url(), "other", "a");
    assert_eq!(d.create_or_join(None, [5, 6]).unwrap().partitions, 256);
    assert_eq!(d.backlog(256).unwrap(), None, "made, not started");
}

#[test]
fn heartbeats_list_the_live_nodes_and_forget_the_silent() {
    let Some(redis) = redis_or_skip("heartbeats") else {
        return;
    };
    let mut a = node(&redis.url(), "c", "a");
    let mut b = node(&redis.url(), "c", "b");
    a.heartbeat(Duration::from_millis(200)).unwrap();
    assert_eq!(b.heartbeat(Duration::from_secs(5)).unwrap(), ["a", "b"]);
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(
        b.heartbeat(Duration::from_secs(5)).unwrap(),
        ["b"],
        "a fell silent"
    );
    assert_eq!(
        a.heartbeat(Duration::from_secs(5)).unwrap(),
        ["a", "b"],
        "and came back"
    );
}

#[test]
fn a_lease_has_one_holder_until_it_expires() {
    let Some(redis) = redis_or_skip("leases") else {
        return;
    };
    let ttl = Duration::from_millis(300);
    let mut a = node(&redis.url(), "c", "a");
    let mut b = node(&redis.url(), "c", "b");
    a.create_or_join(Some(4), [1, 2]).unwrap();
    assert!(a.acquire(3, ttl).unwrap());
    assert!(!b.acquire(3, ttl).unwrap(), "held by a");
    assert!(a.acquire(3, ttl).unwrap(), "the holder may take it again");
    assert_eq!(a.renew(&[3, 2], ttl).unwrap(), [true, false]);
    assert_eq!(
        a.owners(4).unwrap(),
        [None, None, None, Some("a".to_string())]
    );
    std::thread::sleep(Duration::from_millis(450));
    assert!(
        b.acquire(3, Duration::from_secs(5)).unwrap(),
        "a's lease expired"
    );
    assert_eq!(a.renew(&[3], ttl).unwrap(), [false], "a learns it lost it");
    a.release(3).unwrap();
    assert_eq!(
        a.owners(4).unwrap()[3].as_deref(),
        Some("b"),
        "a's release did nothing"
    );
    b.release(3).unwrap();
    assert_eq!(b.owners(4).unwrap()[3], None);
}

/// Wire text of `urls` (depth 0, no referrer).
fn text(urls: &[&str]) -> String {
    let jobs: Vec<Job> = urls.iter().map(|u| Job::root(u.to_string(), 5)).collect();
    wire::encode(&jobs)
}

fn finished(partition: u32, done: &[(u64, u64)], acks: &[&str]) -> Finished {
    Finished {
        partition,
        done: done.to_vec(),
        acks: acks.iter().map(|a| a.to_string()).collect(),
    }
}

#[test]
fn urls_are_read_once_by_the_owner_and_claimed_by_the_next_after_a_takeover() {
    let Some(redis) = redis_or_skip("streams") else {
        return;
    };
    let ttl = Duration::from_millis(300);
    let mut finder = node(&redis.url(), "c", "finder");
    let mut old = node(&redis.url(), "c", "old");
    let mut new = node(&redis.url(), "c", "new");
    finder.create_or_join(Some(4), [1, 2]).unwrap();
    assert_eq!(finder.backlog(4).unwrap(), None, "no root yet: not started");
    assert!(old.acquire(1, ttl).unwrap());
    finder
        .add_roots(
            &["http://a.test/1".into()],
            &[(1, text(&["http://a.test/1", "http://a.test/2"]))],
        )
        .unwrap();
    finder
        .add(
            1,
            &[
                (2, text(&["http://b.test/1"])),
                (1, text(&["http://a.test/3"])),
            ],
        )
        .unwrap();
    assert_eq!(finder.backlog(4).unwrap(), Some(3));
    assert_eq!(finder.roots().unwrap(), ["http://a.test/1"]);

    let first = old.read(&[1], 100).unwrap().0;
    assert_eq!(
        urls(&first),
        ["http://a.test/1", "http://a.test/2", "http://a.test/3"]
    );
    assert!(first.iter().all(|e| e.partition == 1));
    assert!(old.read(&[1], 100).unwrap().0.is_empty(), "delivered once");

    // The first entry is done: recorded, and acknowledged in one script.
    let id0 = first[0].id.as_str();
    assert_eq!(
        old.finish(1, &[finished(1, &[(11, 1), (12, 1)], &[id0])])
            .unwrap(),
        [true]
    );
    assert_eq!(
        finder.backlog(4).unwrap(),
        Some(2),
        "acknowledged entries are deleted"
    );

    // `old` goes silent; its lease runs out and `new` takes the partition.
    std::thread::sleep(Duration::from_millis(450));
    assert!(new.acquire(1, Duration::from_secs(5)).unwrap());
    assert_eq!(new.load_done(1).unwrap(), [(11, 1), (12, 1)]);
    let claimed = new.claim(1).unwrap();
    assert_eq!(
        urls(&claimed),
        ["http://a.test/3"],
        "the entry old left pending"
    );

    // The stale owner is fenced: nothing it writes for partition 1 lands,
    // while what it writes for a partition it holds does.
    assert!(old.acquire(3, Duration::from_secs(5)).unwrap());
    let id1 = first[1].id.as_str();
    assert_eq!(
        old.finish(
            2,
            &[
                finished(1, &[(13, 1)], &[id1]),
                finished(3, &[(30, 3)], &[])
            ],
        )
        .unwrap(),
        [false, true]
    );
    assert_eq!(new.load_done(1).unwrap(), [(11, 1), (12, 1)]);
    assert_eq!(new.load_done(3).unwrap(), [(30, 3)]);
    assert_eq!(finder.backlog(4).unwrap(), Some(2));

    let claimed_id = claimed[0].id.as_str();
    assert_eq!(
        new.finish(1, &[finished(1, &[(13, 1)], &[claimed_id])])
            .unwrap(),
        [true]
    );
    assert_eq!(new.records().unwrap(), 4);
    assert_eq!(
        finder.backlog(4).unwrap(),
        Some(1),
        "partition 2's entry is left"
    );
    assert!(new.acquire(2, Duration::from_secs(5)).unwrap());
    let (other, roots) = new.read(&[1, 2], 100).unwrap();
    assert_eq!(roots, 1, "the roots known after the read");
    assert_eq!(urls(&other), ["http://b.test/1"]);
    assert_eq!(other[0].partition, 2);
    assert_eq!(
        new.finish(2, &[finished(2, &[], &[other[0].id.as_str()])])
            .unwrap(),
        [true]
    );
    assert_eq!(
        finder.backlog(4).unwrap(),
        Some(0),
        "every entry done: the crawl is over"
    );
    let status = finder.status().unwrap();
    assert_eq!(
        (
            status.partitions,
            status.entries,
            status.records,
            status.urls_added,
            status.roots
        ),
        (4, 0, 4, 4, 1)
    );
}

#[test]
fn entries_a_late_read_took_after_its_lease_ran_out_are_swept_by_the_owner() {
    let Some(redis) = redis_or_skip("sweep") else {
        return;
    };
    let ttl = Duration::from_millis(300);
    let mut finder = node(&redis.url(), "c", "finder");
    let mut late = node(&redis.url(), "c", "late");
    let mut owner = node(&redis.url(), "c", "owner");
    finder.create_or_join(Some(2), [1, 2]).unwrap();
    assert!(late.acquire(0, ttl).unwrap());
    std::thread::sleep(Duration::from_millis(450));
    assert!(owner.acquire(0, Duration::from_secs(5)).unwrap());
    assert!(owner.claim(0).unwrap().is_empty());
    // More entries pending for the owner itself than one page of
    // XPENDING holds: they must not hide the other node's.
    let own: Vec<(u32, String)> = (0..1_001)
        .map(|i| (0, text(&[&format!("http://a.test/own{i}")])))
        .collect();
    finder.add(1, &own).unwrap();
    assert_eq!(owner.read(&[0], 2_000).unwrap().0.len(), 1_001);
    finder
        .add_roots(
            &["http://a.test/".into()],
            &[(0, text(&["http://a.test/x"]))],
        )
        .unwrap();
    // `late` does not know its lease ran out; its read takes the entry.
    assert_eq!(urls(&late.read(&[0], 10).unwrap().0), ["http://a.test/x"]);
    assert!(owner.read(&[0], 10).unwrap().0.is_empty());
    assert!(
        owner
            .sweep(&[0], Duration::from_secs(5))
            .unwrap()
            .is_empty(),
        "not idle long enough yet"
    );
    std::thread::sleep(Duration::from_millis(50));
    let swept = owner.sweep(&[0], Duration::from_millis(20)).unwrap();
    assert_eq!(urls(&swept), ["http://a.test/x"]);
    assert!(
        late.sweep(&[0], Duration::from_millis(1))
            .unwrap()
            .is_empty(),
        "only the lease's holder sweeps"
    );
    assert!(
        owner.sweep(&[0], Duration::ZERO).unwrap().is_empty(),
        "its own pending entries are left to it"
    );
}

/// An add of links whose answer was lost is sent again under its
/// number on a new connection: its entries are appended and its URLs
/// counted once, and the process's next add is written.
#[test]
fn an_add_sent_again_after_its_answer_was_lost_is_written_once() {
    let Some(redis) = redis_or_skip("add_again") else {
        return;
    };
    let (_setup, connect) = one_process(&redis.url(), "n1");
    let links = [
        (0, text(&["http://a.test/1", "http://a.test/2"])),
        (1, text(&["http://b.test/1"])),
    ];
    let mut first = connect();
    first.add(1, &links).unwrap();
    drop(first);
    // The answer was lost: the same add, under its number, on a new
    // connection.
    let mut again = connect();
    again.add(1, &links).unwrap();
    assert_eq!(again.status().unwrap().urls_added, 3, "counted once");
    assert!(again.acquire(0, Duration::from_secs(30)).unwrap());
    assert!(again.acquire(1, Duration::from_secs(30)).unwrap());
    let entries = again.read(&[0, 1], 100).unwrap().0;
    assert_eq!(
        urls(&entries),
        ["http://a.test/1", "http://a.test/2", "http://b.test/1"],
        "appended once"
    );
    // The next number is a new add.
    again.add(2, &[(0, text(&["http://a.test/3"]))]).unwrap();
    assert_eq!(again.status().unwrap().urls_added, 4);
    assert_eq!(urls(&again.read(&[0], 100).unwrap().0), ["http://a.test/3"]);
}

/// A report whose answer was lost (a time-out, a dropped connection, a
/// read interrupted when a stopped node is continued) is sent again
/// under its number on a new connection: Redis answers it as the first
/// time and counts nothing twice, and the process's next report, and a
/// later process of the name numbering from 1 again, are written.
#[test]
fn a_report_sent_again_after_its_answer_was_lost_is_written_once() {
    let Some(redis) = redis_or_skip("report_again") else {
        return;
    };
    let (mut setup, connect) = one_process(&redis.url(), "n1");
    let mut first = connect();
    assert!(first.acquire(0, Duration::from_secs(30)).unwrap());
    first
        .add_roots(
            &["http://a.test/".into()],
            &[(0, text(&["http://a.test/", "http://a.test/1"]))],
        )
        .unwrap();
    let entries = first.read(&[0], 100).unwrap().0;
    let id = entries[0].id.as_str();
    let report = [
        finished(0, &[(1, 7), (2, 7)], &[id]),
        finished(1, &[(3, 8)], &[]),
    ];
    assert_eq!(first.finish(1, &report).unwrap(), [true, false]);
    drop(first);

    let mut again = connect();
    assert_eq!(
        again.finish(1, &report).unwrap(),
        [true, false],
        "the first answer, again"
    );
    assert_eq!(again.records().unwrap(), 2, "counted once");
    assert_eq!(again.load_done(0).unwrap(), [(1, 7), (2, 7)], "logged once");
    assert_eq!(
        again.finish(2, &[finished(0, &[(4, 7)], &[])]).unwrap(),
        [true]
    );
    assert_eq!(again.records().unwrap(), 3, "the next report counts");

    let generation = setup.next_generation("n1").unwrap();
    let mut later = node(&redis.url(), "c", "n1");
    later.set_identity(&incarnation("n1", generation));
    assert!(later.acquire(1, Duration::from_secs(30)).unwrap());
    assert_eq!(
        later.finish(1, &[finished(1, &[(5, 8)], &[])]).unwrap(),
        [true],
        "another process's report 1 is another report"
    );
    assert_eq!(later.records().unwrap(), 4);
}

#[test]
fn many_acknowledgements_go_in_one_script() {
    let Some(redis) = redis_or_skip("many_acks") else {
        return;
    };
    let mut a = node(&redis.url(), "c", "a");
    a.create_or_join(Some(2), [1, 2]).unwrap();
    assert!(a.acquire(0, Duration::from_secs(30)).unwrap());
    let batches: Vec<(u32, String)> = (0..2500)
        .map(|i| (0, text(&[&format!("http://a.test/{i}")])))
        .collect();
    a.add_roots(&["http://a.test/".into()], &batches).unwrap();
    let mut ids = Vec::new();
    loop {
        let read = a.read(&[0], 1000).unwrap().0;
        if read.is_empty() {
            break;
        }
        ids.extend(read.into_iter().map(|e| e.id));
    }
    assert_eq!(ids.len(), 2500);
    let acks: Vec<&str> = ids.iter().map(String::as_str).collect();
    assert_eq!(a.finish(1, &[finished(0, &[], &acks)]).unwrap(), [true]);
    assert_eq!(
        a.backlog(2).unwrap(),
        Some(0),
        "past Lua's unpack limit, in chunks"
    );
}

#[test]
fn the_done_log_holds_many_items_and_ignores_a_torn_one() {
    let Some(redis) = redis_or_skip("done_log") else {
        return;
    };
    let mut a = node(&redis.url(), "c", "a");
    a.create_or_join(Some(1), [1, 2]).unwrap();
    assert!(a.acquire(0, Duration::from_secs(30)).unwrap());
    // Past one read chunk (8 MiB = 512K items).
    let all: Vec<(u64, u64)> = (0..600_000u64)
        .map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15), i % 7))
        .collect();
    for (number, chunk) in (1..).zip(all.chunks(100_000)) {
        assert_eq!(
            a.finish(number, &[finished(0, chunk, &[])]).unwrap(),
            [true]
        );
    }
    assert_eq!(a.load_done(0).unwrap(), all);
    let _: () = redis::cmd("APPEND")
        .arg(a.keys().done(0))
        .arg(&[1u8, 2, 3][..])
        .query(
            &mut redis::Client::open(redis.url())
                .unwrap()
                .get_connection()
                .unwrap(),
        )
        .unwrap();
    assert_eq!(
        a.load_done(0).unwrap().len(),
        all.len(),
        "a torn last item is left out"
    );
}

/// A partition's done log is a run of Redis strings, each under a chunk
/// size (a string stops at 512 MB): what is written across chunks reads
/// back whole and in order, by a node with the usual chunk size too.
#[test]
fn the_done_log_runs_over_chunks_and_reads_back_whole() {
    let Some(redis) = redis_or_skip("done_log_chunks") else {
        return;
    };
    // 100 items a chunk.
    let mut a = node(&redis.url(), "c", "a").with_done_chunk(100 * DONE_ITEM);
    a.create_or_join(Some(1), [1, 2]).unwrap();
    assert!(a.acquire(0, Duration::from_secs(30)).unwrap());
    let all: Vec<(u64, u64)> = (0..1_000u64).map(|i| (i * 31, i % 5)).collect();
    for (number, batch) in (1..).zip(all.chunks(30)) {
        assert_eq!(
            a.finish(number, &[finished(0, batch, &[])]).unwrap(),
            [true]
        );
    }
    let mut raw = redis::Client::open(redis.url())
        .unwrap()
        .get_connection()
        .unwrap();
    let first: usize = redis::cmd("STRLEN")
        .arg(a.keys().done(0))
        .query(&mut raw)
        .unwrap();
    assert!(
        (100 * DONE_ITEM..130 * DONE_ITEM).contains(&first),
        "the first chunk stops past its size by a batch at most: {first}"
    );
    let second: usize = redis::cmd("STRLEN")
        .arg(format!("{}:1", a.keys().done(0)))
        .query(&mut raw)
        .unwrap();
    assert!(second > 0, "the log went on in a second chunk");
    assert_eq!(a.load_done(0).unwrap(), all);
    let mut b = node(&redis.url(), "c", "b");
    assert_eq!(b.load_done(0).unwrap(), all);
}

#[test]
fn a_process_whose_name_joined_again_is_refused_everything_it_would_write() {
    let Some(redis) = redis_or_skip("superseded") else {
        return;
    };
    let timeout = std::time::Duration::from_secs(5);
    let ttl = std::time::Duration::from_secs(5);
    let connect = || {
        let mut store = Store::connect(&redis.url(), "c", "n1", timeout).unwrap();
        store.create_or_join(Some(4), [1, 2]).unwrap();
        let generation = store.next_generation("n1").unwrap();
        store.set_identity(&incarnation("n1", generation));
        store
    };
    let mut old = connect();
    old.check_generation().unwrap();
    assert!(old.acquire(0, ttl).unwrap());
    let mut new = connect();
    let superseded = |r: Result<(), StoreError>| matches!(r, Err(StoreError::Superseded));
    assert!(superseded(old.check_generation()));
    assert!(superseded(old.heartbeat(ttl).map(drop)));
    assert!(superseded(old.acquire(1, ttl).map(drop)));
    assert!(superseded(old.renew(&[0], ttl).map(drop)));
    let done = Finished {
        partition: 0,
        done: vec![(7, 7)],
        acks: Vec::new(),
    };
    assert!(superseded(
        old.finish(1, std::slice::from_ref(&done)).map(drop)
    ));
    assert!(superseded(old.sweep(&[0], ttl).map(drop)));
    assert!(old.load_done(0).unwrap().is_empty(), "nothing written");
    new.check_generation().unwrap();
    new.heartbeat(ttl).unwrap();
    assert!(
        !new.acquire(0, ttl).unwrap(),
        "the old one's lease runs out"
    );
    assert!(new.acquire(1, ttl).unwrap());
}

#[test]
fn only_noeviction_keeps_every_key_of_the_crawl() {
    assert!(!may_evict("noeviction"));
    for policy in [
        "allkeys-lru",
        "volatile-lru",
        "allkeys-lfu",
        "volatile-ttl",
        "allkeys-random",
    ] {
        assert!(may_evict(policy), "{policy}");
    }
}
