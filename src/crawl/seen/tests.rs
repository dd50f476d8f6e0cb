//! Scenario tests of the seen-set: on a glommio executor (with a small
//! `io_memory`: memlock is 8 MiB here), through real run files.

use super::*;
use std::future::Future;
use std::pin::pin;
use std::time::{Duration, Instant};

use futures_lite::future::poll_once;

const KEY: [u64; 2] = [0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210];

fn on_executor<T>(f: impl Future<Output = T>) -> T {
    glommio::LocalExecutorBuilder::new(glommio::Placement::Unbound)
        .io_memory(1 << 20)
        .make()
        .unwrap()
        .run(f)
}

/// Distinct, well-mixed fingerprints: splitmix64 of `stream << 40 | i`
/// (a bijection, so no two are equal), never 0.
fn fp(stream: u64, i: u64) -> u64 {
    let mut z = (stream << 40 | i).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    nonzero(z ^ (z >> 31))
}

fn fps(stream: u64, range: std::ops::Range<u64>) -> Vec<u64> {
    range.map(|i| fp(stream, i)).collect()
}

/// What a shard would do: check each, resolve the Maybes; true = new.
async fn ask(set: &RefCell<SeenSet>, keys: &[u64]) -> Vec<bool> {
    let mut new = vec![false; keys.len()];
    let (mut maybe, mut at) = (Vec::new(), Vec::new());
    for (i, &k) in keys.iter().enumerate() {
        match set.borrow_mut().check(k) {
            Check::New => new[i] = true,
            Check::Seen => {}
            Check::Maybe => {
                maybe.push(k);
                at.push(i);
            }
        }
    }
    for (i, n) in at.into_iter().zip(resolve(set, maybe).await.unwrap()) {
        new[i] = n;
    }
    new
}

/// A directory of its own, removed at the end.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        Scratch(std::env::temp_dir().join(format!(
            "ringcrawl-seen-test-{name}-{}-{:x}",
            std::process::id(),
            fastrand::u64(..)
        )))
    }

    fn files(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run_path(set: &RefCell<SeenSet>) -> PathBuf {
    set.borrow().run.as_ref().unwrap().path().to_owned()
}

#[test]
fn fingerprints_are_stable_for_a_key() {
    let a = SeenSet::new(None, 1 << 16, [1, 2]);
    let b = SeenSet::new(None, 1 << 16, [1, 2]);
    let other = SeenSet::new(None, 1 << 16, [1, 3]);
    let url = "http://a.test/";
    assert_eq!(a.fingerprint(url), b.fingerprint(url));
    assert_ne!(a.fingerprint(url), other.fingerprint(url));
    assert_ne!(a.fingerprint(url), a.fingerprint("http://a.test"));
    // Pinned: the same in every process and build of this crawler. If this
    // changes (a foldhash release that hashes differently), runs written
    // before cannot be resumed.
    assert_eq!(
        a.fingerprint(url),
        0xd76a_d9b7_4b80_05cd,
        "got {:#x}",
        a.fingerprint(url)
    );
    assert_eq!(
        super::Fingerprinter::new([1, 2]).fingerprint(url),
        a.fingerprint(url),
        "without a set"
    );
}

#[test]
fn in_ram_keys_are_new_once_then_seen() {
    let mut set = SeenSet::new(None, 1 << 20, KEY);
    assert!(set.is_empty());
    for &k in &fps(1, 0..10_000) {
        assert_eq!(set.check(k), Check::New);
    }
    for &k in &fps(1, 0..10_000) {
        assert_eq!(set.check(k), Check::Seen);
        assert!(!set.insert(k));
    }
    assert!(set.insert(fp(2, 0)));
    assert_eq!(set.check(fp(2, 0)), Check::Seen);
    assert_eq!(set.len(), 10_001);
    assert_eq!(set.check(0), Check::New, "0 is stored as 1");
    assert_eq!(set.check(1), Check::Seen);
}

/// Three million keys through 1 MiB tables (~98 k keys a merge: about 30
/// merges, run by a task of their own, started on `wants_merge`, while
/// checks go on; intake pauses while the active table has no room, as a
/// shard would on `overflow_len`). Every key is New exactly once, earlier
/// keys stay seen all along (active, frozen or on disk), fresh keys are New
/// at the end.
#[test]
fn millions_of_keys_through_small_buckets_are_each_new_once() {
    on_executor(async {
        let set = Rc::new(RefCell::new(SeenSet::new(None, 2 << 20, KEY)));
        let merging = Rc::new(std::cell::Cell::new(false));
        let (total, batch) = (3_000_000u64, 10_000u64);
        let (mut paused, mut checked_during_merges) = (Duration::ZERO, 0u64);
        let started = Instant::now();
        for from in (0..total).step_by(batch as usize) {
            let keys = fps(1, from..from + batch);
            assert!(ask(&set, &keys).await.iter().all(|&n| n), "batch at {from}");
            // A sample of earlier keys, wherever they are now: never New again.
            let earlier: Vec<u64> = (0..50)
                .map(|_| fp(1, fastrand::u64(..from + batch)))
                .collect();
            assert!(
                !ask(&set, &earlier).await.iter().any(|&n| n),
                "an earlier key came back New"
            );
            if merging.get() {
                checked_during_merges += batch + 50;
            }
            if set.borrow().wants_merge() && !merging.get() {
                merging.set(true);
                let (set, merging) = (set.clone(), merging.clone());
                glommio::spawn_local(async move {
                    merge(&set).await.unwrap();
                    merging.set(false);
                })
                .detach();
            }
            let pause = Instant::now();
            while merging.get() && !set.borrow().active.has_room() {
                glommio::timer::sleep(Duration::from_micros(200)).await;
            }
            paused += pause.elapsed();
            futures_lite::future::yield_now().await;
        }
        merge(&set).await.unwrap();
        let inserted = started.elapsed();
        assert_eq!(set.borrow().len(), total);
        let (on_disk, merges) = {
            let s = set.borrow();
            let run = s.run.as_ref().unwrap();
            (run.keys(), run.generation())
        };
        let memory = set.borrow().memory();
        let started = Instant::now();
        for from in (0..total).step_by(100_000) {
            let keys = fps(1, from..from + 100_000);
            assert!(!ask(&set, &keys).await.iter().any(|&n| n));
        }
        let rechecked = started.elapsed();
        let fresh = fps(2, 0..1_000_000);
        let maybes = fresh
            .iter()
            .filter(|&&k| set.borrow_mut().check(k) == Check::Maybe)
            .count();
        let pending: Vec<u64> = fresh
            .iter()
            .copied()
            .filter(|k| set.borrow().pending.contains(k))
            .collect();
        assert_eq!(pending.len(), maybes);
        assert!(resolve(&set, pending).await.unwrap().iter().all(|&n| n));
        assert!(!ask(&set, &fresh).await.iter().any(|&n| n));
        println!(
            "{total} keys in {inserted:?} ({merges} merges, intake paused {paused:?}, \
             {checked_during_merges} checks during merges), {on_disk} on disk, RAM {memory} B; \
             all rechecked (resolved from disk) in {rechecked:?}; fresh keys Maybe: {:.2}%",
            maybes as f64 / 1e4
        );
        assert!(merges >= 25, "{merges} merges");
        assert!(checked_during_merges > 0);
        assert!(maybes < 20_000);
    });
}

#[test]
fn a_key_pending_resolution_is_seen_by_a_second_check() {
    on_executor(async {
        let set = RefCell::new(SeenSet::new(None, 1 << 20, KEY));
        let old = fps(1, 0..20_000);
        ask(&set, &old).await;
        merge(&set).await.unwrap();
        // A fresh key the filter cannot rule out (about 1 in 100).
        let k = (0..)
            .map(|i| fp(2, i))
            .find(|&k| set.borrow_mut().check(k) == Check::Maybe)
            .unwrap();
        assert_eq!(
            set.borrow_mut().check(k),
            Check::Seen,
            "pending counts as seen"
        );
        assert!(
            !set.borrow_mut().insert(k),
            "and insert leaves it to its resolution"
        );
        assert_eq!(set.borrow().pending_len(), 1);
        assert_eq!(resolve(&set, vec![k, k]).await.unwrap(), vec![true, false]);
        assert_eq!(set.borrow_mut().check(k), Check::Seen);
        assert_eq!(
            resolve(&set, vec![k]).await.unwrap(),
            vec![false],
            "settled once"
        );
        // A key on disk: Maybe, then resolved as not new, then Maybe again
        // (it is on disk, not in RAM), never New.
        assert_eq!(set.borrow_mut().check(old[7]), Check::Maybe);
        assert_eq!(set.borrow_mut().check(old[7]), Check::Seen);
        assert_eq!(resolve(&set, vec![old[7]]).await.unwrap(), vec![false]);
        assert_eq!(set.borrow_mut().check(old[7]), Check::Maybe);
        assert_eq!(resolve(&set, vec![old[7]]).await.unwrap(), vec![false]);
        assert_eq!(set.borrow().pending_len(), 0);
        // Keys never pending are not settled (nor inserted).
        assert_eq!(resolve(&set, vec![fp(3, 0)]).await.unwrap(), vec![false]);
    });
}

/// The race of invariant 1: keys pending, their resolution reads run R1;
/// before it completes, a merge freezes the active bucket, publishes R2
/// and unlinks R1. The resolution is still exact: the new key is New once,
/// the key on disk is not New.
#[test]
fn a_merge_published_while_keys_are_pending_does_not_make_them_new_twice() {
    on_executor(async {
        let set = RefCell::new(SeenSet::new(None, 1 << 20, KEY));
        let old = fps(1, 0..20_000);
        ask(&set, &old).await;
        merge(&set).await.unwrap();
        let r1 = run_path(&set);
        let fresh = (0..)
            .map(|i| fp(2, i))
            .find(|&k| set.borrow_mut().check(k) == Check::Maybe)
            .unwrap();
        let on_disk = old[123];
        assert_eq!(set.borrow_mut().check(on_disk), Check::Maybe);
        // More keys, so the merge has a bucket to freeze.
        ask(&set, &fps(3, 0..5000)).await;

        let mut resolving = pin!(resolve(&set, vec![fresh, on_disk]));
        assert!(poll_once(resolving.as_mut()).await.is_none(), "reading R1");
        merge(&set).await.unwrap();
        assert_ne!(run_path(&set), r1, "R2 published");
        assert!(!r1.exists(), "R1 unlinked (still open for the read)");
        assert_eq!(set.borrow_mut().check(fresh), Check::Seen, "still pending");
        assert_eq!(resolving.await.unwrap(), vec![true, false]);

        assert_eq!(set.borrow_mut().check(fresh), Check::Seen);
        assert!(!ask(&set, &[fresh, on_disk]).await.iter().any(|&n| n));
        merge(&set).await.unwrap();
        assert!(!ask(&set, &[fresh, on_disk]).await.iter().any(|&n| n));
    });
}

/// The other order: a merge is under way (its bucket frozen, R2 not yet
/// published) when keys are checked and resolved against R1.
#[test]
fn keys_in_the_frozen_bucket_are_seen_while_it_merges() {
    on_executor(async {
        let set = RefCell::new(SeenSet::new(None, 1 << 20, KEY));
        ask(&set, &fps(1, 0..20_000)).await;
        merge(&set).await.unwrap();
        let in_bucket = fps(2, 0..5000);
        ask(&set, &in_bucket).await;

        let mut merging = pin!(merge(&set));
        assert!(poll_once(merging.as_mut()).await.is_none());
        assert!(set.borrow().frozen.is_some(), "frozen, merging");
        assert!(!set.borrow().wants_merge(), "one merge at a time");
        assert!(
            !ask(&set, &in_bucket).await.iter().any(|&n| n),
            "frozen keys are seen"
        );
        // New keys go to the fresh bucket meanwhile, found by resolve too.
        let during = fps(3, 0..5000);
        assert!(ask(&set, &during).await.iter().all(|&n| n));
        assert!(!ask(&set, &during).await.iter().any(|&n| n));
        merging.await.unwrap();
        assert!(set.borrow().frozen.is_none());
        assert!(!ask(&set, &in_bucket).await.iter().any(|&n| n));
        assert!(!ask(&set, &during).await.iter().any(|&n| n));
        assert_eq!(set.borrow().len(), 30_000);
    });
}

#[test]
fn a_merge_dropped_halfway_leaves_the_old_run_valid() {
    on_executor(async {
        let dir = Scratch::new("dropped");
        let set = RefCell::new(SeenSet::new(Some(dir.0.clone()), 8 << 20, KEY));
        let old = fps(1, 0..600_000);
        ask(&set, &old).await;
        merge(&set).await.unwrap();
        let r1 = run_path(&set);
        let newer = fps(2, 0..20_000);
        ask(&set, &newer).await;
        {
            // Polled until its new run is on disk (however busy the
            // machine), then dropped mid-merge.
            let mut merging = pin!(merge(&set));
            let tmp = "run-2.tmp".to_string();
            for _ in 0..100_000 {
                assert!(poll_once(merging.as_mut()).await.is_none(), "still merging");
                if dir.files().contains(&tmp) {
                    break;
                }
                glommio::timer::sleep(Duration::from_millis(1)).await;
            }
        } // dropped mid-merge
        assert_eq!(run_path(&set), r1);
        assert!(
            set.borrow().frozen.is_some(),
            "the bucket stays frozen and consulted"
        );
        assert!(
            dir.files().contains(&"run-2.tmp".to_string()),
            "{:?}",
            dir.files()
        );
        assert!(
            !ask(&set, &old).await.iter().any(|&n| n),
            "the old run answers"
        );
        assert!(!ask(&set, &newer).await.iter().any(|&n| n));
        assert!(ask(&set, &fps(3, 0..1000)).await.iter().all(|&n| n));

        merge(&set).await.unwrap();
        assert_eq!(dir.files(), vec!["run-2".to_string()]);
        assert!(!ask(&set, &old).await.iter().any(|&n| n));
        assert!(!ask(&set, &newer).await.iter().any(|&n| n));
        assert_eq!(set.borrow().len(), 621_000);
    });
}

#[test]
fn a_merge_that_fails_returns_the_error_and_loses_nothing() {
    on_executor(async {
        let dir = Scratch::new("fails");
        let set = RefCell::new(SeenSet::new(Some(dir.0.clone()), 1 << 20, KEY));
        let first = fps(1, 0..20_000);
        ask(&set, &first).await;
        merge(&set).await.unwrap();
        let second = fps(2, 0..20_000);
        ask(&set, &second).await;
        // The merge's temporary file cannot be created: a directory is there.
        std::fs::create_dir(dir.0.join("run-2.tmp")).unwrap();
        assert!(merge(&set).await.is_err());
        assert_eq!(
            dir.files(),
            vec!["run-1".to_string(), "run-2.tmp".to_string()]
        );
        assert!(set.borrow().frozen.is_some());
        assert!(!ask(&set, &first).await.iter().any(|&n| n));
        assert!(!ask(&set, &second).await.iter().any(|&n| n));
        std::fs::remove_dir(dir.0.join("run-2.tmp")).unwrap();
        merge(&set).await.unwrap();
        assert_eq!(dir.files(), vec!["run-2".to_string()]);
        assert!(!ask(&set, &first).await.iter().any(|&n| n));
        assert!(!ask(&set, &second).await.iter().any(|&n| n));
        assert_eq!(set.borrow().len(), 40_000);
    });
}

#[test]
fn checkpoint_then_open_in_a_new_set_gives_the_same_answers() {
    on_executor(async {
        let dir = Scratch::new("checkpoint");
        let memory = 512 << 10;
        let keys = fps(1, 0..200_000);
        let (path, len, url_fp) = {
            let set = RefCell::new(SeenSet::new(Some(dir.0.clone()), memory, KEY));
            for chunk in keys.chunks(10_000) {
                assert!(ask(&set, chunk).await.iter().all(|&n| n));
                if set.borrow().wants_merge() {
                    merge(&set).await.unwrap();
                }
            }
            assert!(!set.borrow().active.is_empty(), "some keys only in RAM");
            let path = checkpoint(&set).await.unwrap();
            assert_eq!(path, run_path(&set));
            assert_eq!(set.borrow().run.as_ref().unwrap().keys(), 200_000);
            let len = set.borrow().len();
            let url_fp = set.borrow().fingerprint("http://a.test/x");
            (path, len, url_fp)
        };
        assert!(path.exists(), "a named directory outlives its set");
        // Leftovers a crash could leave: an older run, a merge's temporary file.
        std::fs::write(dir.0.join("run-0"), b"").unwrap();
        std::fs::write(dir.0.join("run-99.tmp"), b"partial").unwrap();

        let set = RefCell::new(open(dir.0.clone(), memory, KEY).await.unwrap());
        assert_eq!(
            dir.files(),
            vec![path.file_name().unwrap().to_str().unwrap().to_string()]
        );
        assert_eq!(set.borrow().len(), len);
        assert_eq!(set.borrow().fingerprint("http://a.test/x"), url_fp);
        assert!(
            !ask(&set, &keys).await.iter().any(|&n| n),
            "every key seen after reopening"
        );
        let fresh = fps(2, 0..10_000);
        assert!(ask(&set, &fresh).await.iter().all(|&n| n));
        // And it goes on merging from there.
        merge(&set).await.unwrap();
        assert_eq!(set.borrow().len(), len + 10_000);
        assert!(!ask(&set, &keys).await.iter().any(|&n| n));
    });
}

#[test]
fn an_empty_set_checkpoints_an_empty_run_and_a_directory_without_runs_is_not_found() {
    on_executor(async {
        let dir = Scratch::new("empty");
        let set = RefCell::new(SeenSet::new(Some(dir.0.join("a/b")), 1 << 16, KEY));
        let path = checkpoint(&set).await.unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
        let reopened = RefCell::new(open(dir.0.join("a/b"), 1 << 16, KEY).await.unwrap());
        assert!(reopened.borrow().is_empty());
        assert_eq!(reopened.borrow_mut().check(fp(1, 0)), Check::New);
        let err = open(dir.0.join("a"), 1 << 16, KEY).await.err().unwrap();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    });
}

#[test]
fn a_damaged_run_is_refused_on_open() {
    on_executor(async {
        let dir = Scratch::new("damaged");
        std::fs::create_dir_all(&dir.0).unwrap();
        // Out of order.
        let mut block = vec![0u8; run::BLOCK_BYTES];
        block[..8].copy_from_slice(&9u64.to_le_bytes());
        block[8..16].copy_from_slice(&3u64.to_le_bytes());
        std::fs::write(dir.0.join("run-1"), &block).unwrap();
        let err = open(dir.0.clone(), 1 << 16, KEY).await.err().unwrap();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        // Not whole blocks.
        std::fs::write(dir.0.join("run-2"), [1u8; 12]).unwrap();
        let err = open(dir.0.clone(), 1 << 16, KEY).await.err().unwrap();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    });
}

#[test]
fn a_temporary_directory_is_removed_with_its_set() {
    on_executor(async {
        let set = RefCell::new(SeenSet::new(None, 1 << 16, KEY));
        ask(&set, &fps(1, 0..1000)).await;
        merge(&set).await.unwrap();
        let dir = set.borrow().dir().to_owned();
        assert!(dir.exists());
        drop(set);
        assert!(!dir.exists());
    });
}

/// Inserts past 7/8 of the active table while a merge is stuck go to the
/// overflow set, are seen, and are merged with the next bucket.
#[test]
fn keys_beyond_the_tables_capacity_overflow_and_are_kept() {
    on_executor(async {
        let set = RefCell::new(SeenSet::new(None, 64 << 10, KEY)); // 4096 slots a table
        let keys = fps(1, 0..20_000);
        assert!(ask(&set, &keys).await.iter().all(|&n| n));
        assert!(!set.borrow().overflow.is_empty());
        assert!(!ask(&set, &keys).await.iter().any(|&n| n));
        merge(&set).await.unwrap();
        assert!(set.borrow().overflow.is_empty());
        assert_eq!(set.borrow().run.as_ref().unwrap().keys(), 20_000);
        assert!(!ask(&set, &keys).await.iter().any(|&n| n));
    });
}

/// Throughput of the RAM path of `check` against the current `UrlSet`
/// (release build: `cargo test --release --lib crawl::seen -- --ignored
/// --nocapture`).
#[test]
#[ignore]
fn check_throughput_in_ram_against_url_set() {
    use crate::crawl::url_set::UrlSet;
    let n = 1_000_000u64;
    let urls: Vec<String> = (0..n)
        .map(|i| {
            format!(
                "http://site{}.example.test/section/{}/page-{i}.html",
                i % 997,
                i % 31
            )
        })
        .collect();
    let rate = |d: Duration| format!("{:.1} M/s", n as f64 / d.as_secs_f64() / 1e6);

    let mut old = UrlSet::new();
    let t = Instant::now();
    assert!(urls.iter().all(|u| old.insert(u)));
    let old_new = t.elapsed();
    let t = Instant::now();
    assert!(!urls.iter().any(|u| old.insert(u)));
    let old_seen = t.elapsed();

    let mut set = SeenSet::new(None, 64 << 20, KEY);
    let t = Instant::now();
    assert!(urls
        .iter()
        .all(|u| set.check(set.fingerprint(u)) == Check::New));
    let new_new = t.elapsed();
    let t = Instant::now();
    assert!(urls
        .iter()
        .all(|u| set.check(set.fingerprint(u)) == Check::Seen));
    let new_seen = t.elapsed();
    let prints: Vec<u64> = urls.iter().map(|u| set.fingerprint(u)).collect();
    let t = Instant::now();
    assert!(prints.iter().all(|&f| set.check(f) == Check::Seen));
    let fp_seen = t.elapsed();
    let t = Instant::now();
    let _ = urls
        .iter()
        .map(|u| set.fingerprint(u))
        .fold(0u64, |a, f| a ^ f);
    let hashing = t.elapsed();
    assert!(!set.wants_merge(), "all in RAM");
    // With a run on disk, a new key also costs a Bloom probe (one cache
    // line), and 1% of them a pending entry.
    let (with_run, fresh_checked) = on_executor(async {
        let set = RefCell::new(SeenSet::new(None, 64 << 20, KEY));
        for &f in &prints {
            set.borrow_mut().check(f);
        }
        merge(&set).await.unwrap();
        let fresh = fps(9, 0..n);
        let t = Instant::now();
        let mut set = set.borrow_mut();
        let new = fresh
            .iter()
            .filter(|&&f| set.check(f) == Check::New)
            .count();
        (t.elapsed(), new)
    });
    println!(
        "with a run of {n}: check of new fingerprints {} ({fresh_checked} New, the rest Maybe)",
        rate(with_run)
    );
    println!(
        "{n} URLs: UrlSet insert new {} / seen {}; SeenSet fingerprint+check new {} / seen {}; \
         check of a fingerprint (seen) {}; fingerprint alone {}",
        rate(old_new),
        rate(old_seen),
        rate(new_new),
        rate(new_seen),
        rate(fp_seen),
        rate(hashing)
    );
}

#[test]
fn a_budget_that_is_not_whole_slots_still_grows_to_full_size_and_asks_to_merge() {
    // 128 MiB over 3 shards is not a multiple of 8 bytes: the table, made
    // of whole slots, must still count as full-size, or it would never
    // merge and would regrow in place at every key.
    let mut set = SeenSet::new(None, (4 << 20) / 3 + 1, KEY);
    let mut asked = false;
    for i in 0..400_000 {
        assert_eq!(set.check(fp(7, i)), Check::New);
        if set.wants_merge() {
            asked = true;
            break;
        }
    }
    assert!(
        asked,
        "a full table of {} bytes asks for a merge",
        set.table_bytes
    );
    assert!(set.at_full_size());
    assert_eq!(set.overflow_len(), 0);
}
