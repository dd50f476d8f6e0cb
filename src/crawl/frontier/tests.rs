//! The frontier's scenarios: turns, politeness, robots.txt first, resting
//! hosts, limits.

use super::*;

fn job(url: &str) -> Job {
    Job::root(url.into(), 10)
}

#[test]
fn a_queued_job_stays_small() {
    // Every queued URL is one: its URL's String, redirects and depth,
    // the hop path in one u64, the referrer's shared Arc.
    assert_eq!(std::mem::size_of::<Job>(), 56);
}

fn open(per_host: usize) -> Frontier {
    Frontier::new(Politeness {
        per_host,
        robots: false,
        ..Politeness::default()
    })
}

fn fetch(f: &mut Frontier, now: Instant) -> String {
    match f.next(now) {
        Next::Fetch(job) => job.url,
        other => panic!("expected a fetch, got {other:?}"),
    }
}

#[test]
fn a_host_gives_its_urls_in_order_within_its_concurrency() {
    let now = Instant::now();
    let mut f = open(2);
    for u in ["http://a.test/1", "http://a.test/2", "http://a.test/3"] {
        f.offer(job(u), now);
    }
    assert_eq!(fetch(&mut f, now), "http://a.test/1");
    assert_eq!(fetch(&mut f, now), "http://a.test/2");
    assert_eq!(
        f.next(now),
        Next::Idle,
        "two in flight: the host is not ready"
    );
    f.release("a.test", false, now);
    assert_eq!(fetch(&mut f, now), "http://a.test/3");
    assert_eq!((f.queued(), f.active("a.test")), (0, 2));
}

#[test]
fn hosts_take_turns_so_a_big_host_cannot_starve_small_ones() {
    let now = Instant::now();
    let mut f = open(100);
    for i in 0..50 {
        f.offer(job(&format!("http://big.test/{i}")), now);
    }
    f.offer(job("http://small.test/1"), now);
    f.offer(job("http://tiny.test/1"), now);
    let first: Vec<String> = (0..3).map(|_| fetch(&mut f, now)).collect();
    assert_eq!(
        first,
        [
            "http://big.test/0",
            "http://small.test/1",
            "http://tiny.test/1"
        ]
    );
}

#[test]
fn delay_spaces_requests_to_one_host_and_says_when_to_come_back() {
    let now = Instant::now();
    let mut f = Frontier::new(Politeness {
        per_host: 5,
        delay: Duration::from_millis(100),
        robots: false,
        ..Politeness::default()
    });
    f.offer(job("http://a.test/1"), now);
    f.offer(job("http://a.test/2"), now);
    assert_eq!(fetch(&mut f, now), "http://a.test/1");
    assert_eq!(f.next(now), Next::Wait(now + Duration::from_millis(100)));
    assert_eq!(
        fetch(&mut f, now + Duration::from_millis(100)),
        "http://a.test/2"
    );
}

#[test]
fn a_crawl_delay_lengthens_the_delay_and_never_shortens_it() {
    let now = Instant::now();
    let ms = Duration::from_millis;
    let mut f = Frontier::new(Politeness {
        per_host: 5,
        delay: ms(300),
        ..Politeness::default()
    });
    for u in [
        "http://a.test/1",
        "http://a.test/2",
        "http://b.test/1",
        "http://b.test/2",
    ] {
        f.offer(job(u), now);
    }
    for (host, crawl_delay) in [("a", "0.05"), ("b", "0.5")] {
        let example = robots_first(&mut f, now);
        assert!(example.starts_with(&format!("http://{host}.test/")));
        let txt = format!("User-agent: *\nCrawl-delay: {crawl_delay}\n");
        f.set_robots(
            &example,
            Rules::from_answer(Some(200), txt.as_bytes(), "x"),
            now,
        );
    }
    // --delay counts from each robots.txt request; b's Crawl-delay,
    // longer, from its own.
    assert_eq!(f.next(now), Next::Wait(now + ms(300)));
    assert_eq!(fetch(&mut f, now + ms(300)), "http://a.test/1");
    assert_eq!(f.next(now + ms(300)), Next::Wait(now + ms(500)));
    assert_eq!(fetch(&mut f, now + ms(500)), "http://b.test/1");
    assert_eq!(
        f.next(now + ms(500)),
        Next::Wait(now + ms(600)),
        "a waits --delay, not its 50 ms Crawl-delay"
    );
    assert_eq!(fetch(&mut f, now + ms(600)), "http://a.test/2");
    assert_eq!(
        f.next(now + ms(600)),
        Next::Wait(now + ms(1000)),
        "b waits its longer Crawl-delay"
    );
    assert_eq!(fetch(&mut f, now + ms(1000)), "http://b.test/2");
}

#[test]
fn repeated_failures_back_a_host_off_and_success_resets_it() {
    let now = Instant::now();
    let mut f = open(1);
    for i in 0..4 {
        f.offer(job(&format!("http://down.test/{i}")), now);
    }
    fetch(&mut f, now);
    f.release("down.test", true, now);
    let Next::Wait(first) = f.next(now) else {
        panic!("backed off")
    };
    let t = first;
    fetch(&mut f, t);
    f.release("down.test", true, t);
    let Next::Wait(second) = f.next(t) else {
        panic!("backed off")
    };
    assert!(second - t > first - now, "the backoff grows");
    fetch(&mut f, second);
    f.release("down.test", false, second);
    assert!(
        matches!(f.next(second), Next::Fetch(_)),
        "success clears the backoff"
    );
}

#[test]
fn robots_txt_comes_first_and_its_rules_apply() {
    let now = Instant::now();
    let mut f = Frontier::new(Politeness {
        per_host: 4,
        ..Politeness::default()
    });
    f.offer(job("http://a.test/ok"), now);
    f.offer(job("http://a.test/private/x"), now);
    assert_eq!(
        f.next(now),
        Next::Robots {
            host: "a.test".into(),
            example: "http://a.test/ok".into(),
            root: true,
        }
    );
    assert_eq!(f.next(now), Next::Idle, "pages wait for robots.txt");
    let rules = Rules::from_answer(
        Some(200),
        b"User-agent: *\nDisallow: /private/\n",
        "ringcrawl",
    );
    f.set_robots("http://a.test/ok", rules, now);
    assert_eq!(fetch(&mut f, now), "http://a.test/ok");
    assert!(
        matches!(f.next(now), Next::Refused(j, Verdict::Disallowed) if j.url.ends_with("/private/x"))
    );
}

#[test]
fn each_origin_of_a_host_has_its_own_robots_txt_and_the_host_one_politeness() {
    let now = Instant::now();
    let mut f = Frontier::new(Politeness {
        per_host: 1,
        ..Politeness::default()
    });
    f.offer(job("http://a.test/private/1"), now);
    f.offer(job("https://a.test/private/2"), now);
    let Next::Robots { host, example, .. } = f.next(now) else {
        panic!("robots.txt of http://a.test first")
    };
    assert_eq!(
        (host.as_str(), example.as_str()),
        ("a.test", "http://a.test/private/1")
    );
    assert_eq!(f.next(now), Next::Idle, "one slot for the host, taken");
    let deny = Rules::from_answer(
        Some(200),
        b"User-agent: *\nDisallow: /private/\n",
        "ringcrawl",
    );
    f.set_robots("http://a.test/private/1", deny, now);
    assert!(
        matches!(f.next(now), Next::Refused(j, Verdict::Disallowed) if j.url.starts_with("http:"))
    );
    let Next::Robots { example, .. } = f.next(now) else {
        panic!("https://a.test has robots.txt of its own")
    };
    assert_eq!(example, "https://a.test/private/2");
    f.set_robots(&example, Rules::AllowAll, now);
    assert_eq!(fetch(&mut f, now), "https://a.test/private/2");
    assert_eq!(f.active("a.test"), 1);
}

fn robots_first(f: &mut Frontier, now: Instant) -> String {
    match f.next(now) {
        Next::Robots { example, .. } => example,
        other => panic!("expected robots.txt, got {other:?}"),
    }
}

#[test]
fn an_unavailable_robots_txt_is_asked_again_on_the_schedule_while_pages_wait() {
    let now = Instant::now();
    let ms = Duration::from_millis;
    let mut f = Frontier::new(Politeness {
        robots_retries: vec![ms(100), ms(300)],
        ..Politeness::default()
    });
    f.offer(job("http://a.test/private/x"), now);
    f.offer(job("http://a.test/ok"), now);
    let example = robots_first(&mut f, now);
    f.set_robots(&example, Rules::unavailable("HTTP 503"), now);
    assert_eq!(f.next(now), Next::Wait(now + ms(100)), "pages wait");
    let t = now + ms(100);
    let example = robots_first(&mut f, t);
    f.set_robots(&example, Rules::unavailable("HTTP 503"), t);
    assert_eq!(f.next(t), Next::Wait(t + ms(300)), "the next wait");
    let t = t + ms(300);
    let example = robots_first(&mut f, t);
    let deny = Rules::from_answer(Some(200), b"User-agent: *\nDisallow: /private/\n", "x");
    f.set_robots(&example, deny, t);
    assert!(
        matches!(f.next(t), Next::Refused(j, Verdict::Disallowed) if j.url.ends_with("/private/x")),
        "the rules, once had, apply"
    );
    assert_eq!(fetch(&mut f, t), "http://a.test/ok");
}

#[test]
fn an_origin_waiting_for_robots_txt_does_not_hold_up_its_hosts_other_origins() {
    let now = Instant::now();
    let ms = Duration::from_millis;
    let mut f = Frontier::new(Politeness {
        per_host: 2,
        robots_retries: vec![ms(1000)],
        ..Politeness::default()
    });
    // The stalled origin's URL comes first in the host's queue.
    f.offer(job("http://a.test:81/stalled"), now);
    for i in 0..3 {
        f.offer(job(&format!("https://a.test/{i}")), now);
    }
    let stalled = robots_first(&mut f, now);
    assert!(stalled.starts_with("http://a.test:81/"));
    // While its robots.txt is fetched (it takes one slot), the https
    // origin gets its own robots.txt and then its pages.
    let good = robots_first(&mut f, now);
    assert!(good.starts_with("https://a.test/"), "{good}");
    f.set_robots(&good, Rules::from_answer(Some(200), b"", "x"), now);
    assert_eq!(fetch(&mut f, now), "https://a.test/0");
    // The stalled robots.txt fails: its origin waits 1 s; the other goes on.
    f.set_robots(&stalled, Rules::unavailable("HTTP 503"), now);
    assert_eq!(fetch(&mut f, now), "https://a.test/1");
    f.release("a.test", false, now);
    f.release("a.test", false, now);
    assert_eq!(fetch(&mut f, now), "https://a.test/2");
    f.release("a.test", false, now);
    assert_eq!(
        f.next(now),
        Next::Wait(now + ms(1000)),
        "only the waiting origin is left"
    );
    assert_eq!(f.hosts().0, 1, "its URL keeps the host live");
    let t = now + ms(1000);
    assert!(
        robots_first(&mut f, t).ends_with(":81/stalled"),
        "tried again when due"
    );
    f.set_robots(&stalled, Rules::unavailable("HTTP 503"), t);
    assert!(matches!(
        f.next(t),
        Next::Refused(j, Verdict::Unavailable) if j.url.ends_with(":81/stalled")
    ));
    assert_eq!(f.next(t), Next::Idle);
}

#[test]
fn a_refused_robots_txt_is_tried_again_quickly_and_then_gives_its_cause() {
    let now = Instant::now();
    let mut f = Frontier::new(Politeness::default());
    f.offer(job("http://a.test:1/x"), now);
    let refused = || Rules::refused("connect_refused: connect: Connection refused");
    let mut t = now;
    for _ in 0..3 {
        let example = robots_first(&mut f, t);
        f.set_robots(&example, refused(), t);
        match f.next(t) {
            Next::Wait(at) => {
                assert!(
                    at <= t + Duration::from_secs(1),
                    "a short wait, not the 5xx schedule"
                );
                t = at;
            }
            Next::Refused(j, Verdict::Unavailable) => {
                assert_eq!(
                    f.robots_cause(&j.url),
                    Some("connect_refused: connect: Connection refused")
                );
                return;
            }
            other => panic!("{other:?}"),
        }
    }
    panic!("still trying after three refusals");
}

#[test]
fn a_robots_txt_unavailable_past_the_schedule_keeps_its_origin_out() {
    let now = Instant::now();
    let mut f = Frontier::new(Politeness {
        robots_retries: vec![Duration::from_millis(10)],
        ..Politeness::default()
    });
    f.offer(job("http://a.test/1"), now);
    let example = robots_first(&mut f, now);
    f.set_robots(&example, Rules::unavailable("HTTP 503"), now);
    let t = now + Duration::from_millis(10);
    let example = robots_first(&mut f, t);
    f.set_robots(&example, Rules::unavailable("HTTP 503"), t);
    assert!(matches!(f.next(t), Next::Refused(_, Verdict::Unavailable)));
    assert_eq!(f.next(t), Next::Idle);
}

#[test]
fn a_finished_host_rests_with_its_rules_and_politeness_and_comes_back_without_robots() {
    let now = Instant::now();
    let mut f = Frontier::new(Politeness {
        delay: Duration::from_millis(100),
        ..Politeness::default()
    });
    f.offer(job("http://a.test/1"), now);
    let example = robots_first(&mut f, now);
    f.set_robots(
        &example,
        Rules::from_answer(Some(200), b"User-agent: *\nDisallow: /no\n", "x"),
        now,
    );
    assert_eq!(
        f.next(now),
        Next::Wait(now + Duration::from_millis(100)),
        "--delay after robots.txt"
    );
    let now = now + Duration::from_millis(100);
    assert_eq!(fetch(&mut f, now), "http://a.test/1");
    f.release("a.test", false, now);
    assert_eq!(f.next(now), Next::Idle, "its turn comes up empty");
    assert_eq!(f.hosts().0, 0, "no longer live");
    assert_eq!(f.hosts().1, 1, "resting");
    f.offer(job("http://a.test/no"), now);
    f.offer(job("http://a.test/2"), now);
    assert_eq!(f.hosts(), (1, 0, 0));
    assert_eq!(
        f.next(now),
        Next::Wait(now + Duration::from_millis(100)),
        "its delay still runs"
    );
    let t = now + Duration::from_millis(100);
    assert!(
        matches!(f.next(t), Next::Refused(_, Verdict::Disallowed)),
        "its rules were kept: no second robots.txt"
    );
    assert_eq!(fetch(&mut f, t), "http://a.test/2");
}

#[test]
fn a_host_rests_at_its_last_release_without_waiting_for_its_turn() {
    // A crawl can end before a finished host's turn comes round again:
    // the host must not stay live for want of one.
    let now = Instant::now();
    let mut f = Frontier::new(Politeness::default());
    f.offer(job("http://a.test/1"), now);
    f.offer(job("http://b.test/no"), now);
    for _ in 0..2 {
        let example = robots_first(&mut f, now);
        let rules = b"User-agent: *\nDisallow: /no\n";
        f.set_robots(&example, Rules::from_answer(Some(200), rules, "x"), now);
    }
    assert_eq!(fetch(&mut f, now), "http://a.test/1");
    assert!(matches!(f.next(now), Next::Refused(_, Verdict::Disallowed)));
    assert_eq!(
        f.hosts().0,
        1,
        "b.test rests on its refusal; a.test is in flight"
    );
    f.release("a.test", false, now);
    assert_eq!(f.hosts().0, 0, "a.test rests on its release");
    assert_eq!(f.hosts().1, 2);
    f.offer(job("http://a.test/2"), now);
    assert_eq!(fetch(&mut f, now), "http://a.test/2", "and comes back");
    assert_eq!(f.next(now), Next::Idle);
}

#[test]
fn finished_hosts_past_the_byte_bound_are_forgotten_least_recent_first() {
    let now = Instant::now();
    let mut f = Frontier::new(Politeness {
        host_memory: 30_000,
        ..Politeness::default()
    });
    for i in 0..2_000 {
        let host = format!("h{i}.trap.test");
        f.offer(job(&format!("http://{host}/")), now);
        let example = robots_first(&mut f, now);
        f.set_robots(&example, Rules::AllowAll, now);
        fetch(&mut f, now);
        f.release(&host, false, now);
        assert_eq!(f.next(now), Next::Idle);
    }
    let (live, resting, bytes) = f.hosts();
    assert_eq!(live, 0);
    // What the live host (its robots.txt reserve) leaves them.
    assert!(bytes <= 30_000, "{bytes} bytes");
    assert!((20..200).contains(&resting), "{resting} resting hosts");
    f.offer(job("http://h0.trap.test/again"), now);
    assert!(
        matches!(f.next(now), Next::Robots { .. }),
        "a forgotten host asks for robots.txt again"
    );
    f.offer(job("http://h1999.trap.test/again"), now);
    assert_eq!(
        fetch(&mut f, now),
        "http://h1999.trap.test/again",
        "a remembered one does not"
    );
}

#[test]
fn a_host_past_its_page_cap_is_refused_but_others_are_not() {
    let now = Instant::now();
    let mut f = Frontier::new(Politeness {
        max_pages_per_host: 2,
        robots: false,
        ..Politeness::default()
    });
    assert_eq!(f.offer(job("http://trap.test/1"), now), Offer::New);
    assert_eq!(f.offer(job("http://trap.test/2"), now), Offer::New);
    assert_eq!(
        f.offer(job("http://trap.test/3"), now),
        Offer::Refused(Limit::HostBudget)
    );
    assert_eq!(f.offer(job("http://other.test/1"), now), Offer::New);
    assert_eq!(f.queued(), 3);
}

#[test]
fn a_host_past_its_sitemap_cap_is_refused_sitemaps_but_not_pages() {
    use crate::job::hops::{Hop, Hops};
    let now = Instant::now();
    let mut f = Frontier::new(Politeness {
        max_sitemaps_per_host: 2,
        robots: false,
        ..Politeness::default()
    });
    let sitemap = |url: &str| Job {
        hops: Hops::root().then(Hop::Manifest),
        ..job(url)
    };
    assert_eq!(f.offer(sitemap("http://a.test/s1.xml"), now), Offer::New);
    assert_eq!(f.offer(sitemap("http://a.test/s2.xml"), now), Offer::New);
    assert_eq!(
        f.offer(sitemap("http://a.test/s3.xml"), now),
        Offer::Refused(Limit::SitemapBudget)
    );
    let listed = Job {
        hops: Hops::root().then(Hop::Manifest).then(Hop::Link),
        ..job("http://a.test/page")
    };
    assert_eq!(
        f.offer(listed, now),
        Offer::New,
        "a listed page is no sitemap"
    );
    assert_eq!(f.offer(sitemap("http://b.test/s1.xml"), now), Offer::New);
}

#[test]
fn a_robots_txt_asked_for_by_a_root_says_so() {
    let now = Instant::now();
    let mut f = Frontier::new(Politeness::default());
    f.offer(job("http://a.test/"), now);
    f.offer(
        Job {
            depth: 1,
            ..job("http://b.test/deep")
        },
        now,
    );
    assert!(matches!(f.next(now), Next::Robots { root: true, .. }));
    assert!(matches!(f.next(now), Next::Robots { root: false, .. }));
}

#[test]
fn urls_too_long_or_too_deep_are_refused_and_never_queued() {
    let now = Instant::now();
    let mut f = Frontier::new(Politeness {
        max_depth: 2,
        max_url_length: 20,
        robots: false,
        ..Politeness::default()
    });
    let deep = Job {
        depth: 3,
        ..job("http://a.test/deep")
    };
    assert_eq!(f.offer(deep, now), Offer::Refused(Limit::TooDeep));
    let long = job("http://a.test/a-long-path");
    assert_eq!(f.offer(long, now), Offer::Refused(Limit::UrlTooLong));
    assert_eq!(f.queued(), 0);
    assert_eq!(f.next(now), Next::Idle);
}

#[test]
fn a_job_to_retry_later_comes_back_first_once_its_host_waited() {
    let now = Instant::now();
    let mut f = open(1);
    for u in ["http://a.test/1", "http://a.test/2"] {
        f.offer(job(u), now);
    }
    let Next::Fetch(first) = f.next(now) else {
        panic!("a fetch")
    };
    let wait = Duration::from_secs(2);
    f.retry_later(
        Job {
            retries: 1,
            ..first
        },
        wait,
        now,
    );
    assert_eq!(f.queued(), 2, "back in the queue");
    match f.next(now) {
        Next::Wait(at) => assert!(at >= now + wait, "{at:?}"),
        other => panic!("the host waits, got {other:?}"),
    }
    match f.next(now + wait) {
        Next::Fetch(again) => {
            assert_eq!((again.url.as_str(), again.retries), ("http://a.test/1", 1))
        }
        other => panic!("the same job first, got {other:?}"),
    }
}

#[test]
fn an_adaptive_delay_waits_a_multiple_of_the_fetch_within_its_bounds() {
    let now = Instant::now();
    let mut f = Frontier::new(Politeness {
        per_host: 1,
        robots: false,
        delay: Duration::from_millis(100),
        delay_factor: 5.0,
        max_delay: Duration::from_secs(2),
        ..Politeness::default()
    });
    for u in [
        "http://a.test/1",
        "http://a.test/2",
        "http://a.test/3",
        "http://a.test/4",
    ] {
        f.offer(job(u), now);
    }
    let waits = [
        (Duration::from_millis(200), Duration::from_secs(1)),
        // 5 × 10 ms is under --delay: the delay holds.
        (Duration::from_millis(10), Duration::from_millis(100)),
        // 5 × 1 s is over --max-delay: it is the bound.
        (Duration::from_secs(1), Duration::from_secs(2)),
    ];
    let mut at = now;
    for (took, want) in waits {
        fetch(&mut f, at);
        let end = at + took;
        f.release_after("a.test", false, took, end);
        match f.next(end) {
            Next::Wait(ready) => assert_eq!(ready, end + want, "took {took:?}"),
            other => panic!("a wait after {took:?}, got {other:?}"),
        }
        at = end + want;
    }
    fetch(&mut f, at);
}

#[test]
fn backoffs_are_spread_by_host_within_a_fifth_of_their_step() {
    let factors: Vec<f64> = (0..50).map(|i| jitter(&format!("h{i}.test"), 3)).collect();
    assert!(
        factors.iter().all(|f| (0.8..1.2).contains(f)),
        "{factors:?}"
    );
    let distinct: std::collections::BTreeSet<u64> = factors.iter().map(|f| f.to_bits()).collect();
    assert!(distinct.len() > 40, "spread: {factors:?}");
    assert_eq!(
        jitter("a.test", 2),
        jitter("a.test", 2),
        "the same for the same host and count"
    );
}
