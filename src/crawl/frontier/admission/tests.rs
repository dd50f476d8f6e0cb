//! The hosts held within `host_memory`: URLs of hosts that do not fit wait
//! in order and come in as live hosts finish; held hosts never wait; limits
//! met on the way out; resting hosts give way to live ones.

use std::collections::HashSet;
use std::time::Instant;

use ringcrawl_links::urls;
use ringcrawl_robots::Rules;

use super::super::host::Host;
use super::super::{Frontier, HostMemory, Next, Offer, Politeness};
use crate::job::{Job, Limit};

fn job(url: &str) -> Job {
    Job::root(url.into(), 10)
}

/// Room for `hosts` live hosts named like `h0.test`, robots.txt off.
fn room_for(hosts: usize) -> Frontier {
    Frontier::new(Politeness {
        robots: false,
        host_memory: hosts * Host::new_weight("h0.test", false),
        ..Politeness::default()
    })
}

/// Everything the frontier hands out until it is idle, releasing each
/// fetch at once; the live hosts' bytes checked against the bound at each
/// step.
fn drain(f: &mut Frontier, now: Instant, bound: usize) -> Vec<Next> {
    let mut out = Vec::new();
    loop {
        let next = f.next(now);
        let memory = f.host_memory();
        assert!(memory.live_bytes <= bound, "{memory:?} over {bound}");
        match &next {
            Next::Fetch(job) => f.release(urls::host_of(&job.url), false, now),
            Next::Idle => return out,
            Next::Limited(..) => {}
            other => panic!("unexpected {other:?}"),
        }
        out.push(next);
    }
}

fn fetched(out: &[Next]) -> Vec<&str> {
    out.iter()
        .filter_map(|n| match n {
            Next::Fetch(job) => Some(job.url.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn urls_of_hosts_past_the_bound_wait_in_order_and_come_in_as_live_hosts_finish() {
    let now = Instant::now();
    let mut f = room_for(3);
    let bound = 3 * Host::new_weight("h0.test", false);
    for i in 0..10 {
        for page in 0..2 {
            assert_eq!(
                f.offer(job(&format!("http://h{i}.test/{page}")), now),
                Offer::New
            );
        }
    }
    let memory = f.host_memory();
    assert_eq!((memory.live, memory.waiting), (3, 14), "{memory:?}");
    assert!(memory.live_bytes <= bound);
    assert!(!f.has_room(), "no seed is taken while URLs wait");
    assert_eq!(f.queued(), 20, "waiting URLs are queued URLs");

    let out = drain(&mut f, now, bound);
    let urls = fetched(&out);
    assert_eq!(urls.len(), 20, "each URL fetched: {urls:?}");
    assert_eq!(urls.iter().collect::<HashSet<_>>().len(), 20, "once");
    // Hosts became live in the order their first URLs came.
    let first_seen: Vec<&str> =
        urls.iter()
            .map(|u| urls::host_of(u))
            .fold(Vec::new(), |mut seen, h| {
                if !seen.contains(&h) {
                    seen.push(h);
                }
                seen
            });
    let want: Vec<String> = (0..10).map(|i| format!("h{i}.test")).collect();
    assert_eq!(first_seen, want);
    assert_eq!(f.host_memory().waiting, 0);
    assert_eq!(f.queued(), 0);
    assert!(f.has_room());
}

#[test]
fn a_url_of_a_live_host_goes_to_it_at_once_whatever_waits() {
    let now = Instant::now();
    let mut f = room_for(1);
    f.offer(job("http://h0.test/a"), now);
    f.offer(job("http://h1.test/a"), now);
    assert_eq!(f.host_memory().waiting, 1);
    f.offer(job("http://h0.test/b"), now);
    assert_eq!(
        f.host_memory().waiting,
        1,
        "h0.test is live: not behind h1.test"
    );
    assert_eq!(
        fetched(&drain(&mut f, now, usize::MAX)),
        ["http://h0.test/a", "http://h0.test/b", "http://h1.test/a"]
    );
}

#[test]
fn a_waiting_url_past_its_hosts_page_cap_comes_back_limited() {
    let now = Instant::now();
    let mut f = Frontier::new(Politeness {
        robots: false,
        max_pages_per_host: 1,
        host_memory: Host::new_weight("h0.test", false),
        ..Politeness::default()
    });
    f.offer(job("http://h0.test/a"), now);
    f.offer(job("http://h1.test/a"), now);
    f.offer(job("http://h1.test/b"), now);
    let out = drain(&mut f, now, usize::MAX);
    assert_eq!(fetched(&out), ["http://h0.test/a", "http://h1.test/a"]);
    let limited: Vec<_> = out
        .iter()
        .filter_map(|n| match n {
            Next::Limited(job, limit) => Some((job.url.as_str(), *limit)),
            _ => None,
        })
        .collect();
    assert_eq!(limited, [("http://h1.test/b", Limit::HostBudget)]);
    assert_eq!(f.queued(), 0);
}

#[test]
fn a_crawl_with_no_live_host_always_lets_the_next_one_in() {
    let now = Instant::now();
    // Less room than one host takes: one at a time still goes.
    let mut f = room_for(0);
    for i in 0..3 {
        f.offer(job(&format!("http://h{i}.test/")), now);
    }
    assert_eq!(f.hosts().0, 1);
    let out = drain(&mut f, now, usize::MAX);
    assert_eq!(fetched(&out).len(), 3);
}

/// Hosts fetched with robots.txt on, each robots.txt `rules`: the most
/// hosts live at once, and each step's bytes checked by `check`.
fn crawl_with_robots(
    f: &mut Frontier,
    hosts: usize,
    rules: &str,
    check: impl Fn(HostMemory),
) -> usize {
    let now = Instant::now();
    for i in 0..hosts {
        f.offer(job(&format!("http://h{i}.test/a")), now);
        f.offer(job(&format!("http://h{i}.test/b")), now);
    }
    let (mut most_live, mut fetches) = (0, 0);
    loop {
        match f.next(now) {
            Next::Robots { example, .. } => f.set_robots(
                &example,
                Rules::from_answer(Some(200), rules.as_bytes(), "ringcrawl"),
                now,
            ),
            Next::Fetch(job) => {
                fetches += 1;
                f.release(urls::host_of(&job.url), false, now);
            }
            Next::Idle => break,
            other => panic!("unexpected {other:?}"),
        }
        let memory = f.host_memory();
        most_live = most_live.max(memory.live);
        check(memory);
    }
    assert_eq!(fetches, 2 * hosts, "every URL fetched");
    most_live
}

#[test]
fn robots_rules_count_against_the_bound_and_resting_hosts_give_way() {
    let bound = 40_000;
    let mut f = Frontier::new(Politeness {
        host_memory: bound,
        ..Politeness::default()
    });
    // A robots.txt of some 2 KB: within what a host is counted at before
    // its rules come.
    let rules = format!("User-agent: *\n{}", "Disallow: /private/path\n".repeat(80));
    let most_live = crawl_with_robots(&mut f, 40, &rules, |memory| {
        assert!(
            memory.live_bytes + memory.resting_bytes <= bound,
            "{memory:?}"
        );
    });
    assert!(most_live < 40, "at most {most_live} hosts live at once");
    let memory = f.host_memory();
    assert!(memory.peak_bytes <= bound, "{memory:?}");
    assert!(memory.resting > 0 && memory.resting < 40, "{memory:?}");
}

#[test]
fn rules_larger_than_their_reserve_let_no_new_host_in_until_made_up() {
    let bound = 40_000;
    let mut f = Frontier::new(Politeness {
        host_memory: bound,
        ..Politeness::default()
    });
    // Some 12 KB each, 36 KB as counted: four times the reserve.
    let rules = format!("User-agent: *\n{}", "Disallow: /private/path\n".repeat(500));
    let over = std::cell::Cell::new(0);
    let most_live = crawl_with_robots(&mut f, 40, &rules, |memory| {
        if memory.live_bytes > bound {
            over.set(over.get() + 1);
            assert_eq!(memory.resting, 0, "resting hosts go first: {memory:?}");
        }
    });
    // The hosts let in on their reserves (4 of some 8.5 KB in 40,000
    // bytes), and no more while their rules weigh more.
    assert!(most_live <= 4, "{most_live} live at once");
    assert!(over.get() > 0, "the rules did weigh more");
    assert!(
        f.host_memory().peak_bytes <= 4 * 37_000,
        "{:?}",
        f.host_memory()
    );
}
