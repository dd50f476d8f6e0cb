//! `ringcrawl_robots::Rules::from_answer` and `verdict` on any bytes: they must never
//! panic, `/robots.txt` is always allowed, and a verdict is the same asked
//! twice.
//!
//! Input layout: byte 0 is the length of the path (taken as UTF-8, lossily,
//! after `http://a.test/`); the rest is the robots.txt.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ringcrawl_robots::{Rules, Verdict};

fuzz_target!(|data: &[u8]| {
    let Some((&len, rest)) = data.split_first() else {
        return;
    };
    let (path, body) = rest.split_at(usize::from(len).min(rest.len()));
    let url = format!("http://a.test/{}", String::from_utf8_lossy(path));
    let mut rules = Rules::from_answer(Some(200), body, "ringcrawl");
    let verdict = rules.verdict(&url);
    assert_eq!(verdict, rules.verdict(&url));
    assert_eq!(rules.verdict("http://a.test/robots.txt"), Verdict::Allowed);
    let _ = rules.crawl_delay(std::time::Duration::from_secs(60));
    let weight = rules.weight();
    let _ = rules.take_sitemaps();
    assert!(rules.weight() <= weight);
});
