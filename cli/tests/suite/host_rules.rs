//! `--host-rule`: hosts with politeness of their own, as the servers see
//! it. Two names on one server (`--resolve` maps them to 127.0.0.1): a
//! server of the test process that holds each reply shows how many
//! requests of each host ran at once (an exact name beats a wildcard);
//! nginx's own clock (`$msec`, `$request_time`) how far apart they
//! started. A bad rule is a one-line usage error that names it.

use crate::cli::ringcrawl;
use crate::common::held::{held_site, peak};
use crate::common::nginx::Nginx;
use crate::common::tools;

/// One request as nginx logged it: host, start and end (seconds), URI.
type Span = (String, f64, f64, String);

/// nginx serving `pages` small pages linked from its index, for any name,
/// logging each request's host and times to `timed.log`.
fn site(pages: usize) -> Nginx {
    let dir = Nginx::dir();
    let links: String = (0..pages)
        .map(|i| format!("<a href=/p{i}.html>{i}</a> "))
        .collect();
    std::fs::write(dir.join("index.html"), links).unwrap();
    for i in 0..pages {
        std::fs::write(dir.join(format!("p{i}.html")), vec![b'x'; 1000]).unwrap();
    }
    Nginx::start(dir, |port| {
        format!(
            "log_format timed '$host $msec $request_time $request_uri';\n\
             server {{ listen 127.0.0.1:{port}; server_name _; root .;\n\
               access_log timed.log timed; }}\n"
        )
    })
}

/// Crawl `a.test` and `b.test` on `nginx` with `flags`; each request's
/// span, by start.
fn crawl(nginx: &mut Nginx, flags: &[&str]) -> Vec<Span> {
    let port = nginx.port();
    let (a, b) = (
        format!("http://a.test:{port}/"),
        format!("http://b.test:{port}/"),
    );
    let resolve: Vec<String> = ["a.test", "b.test"]
        .iter()
        .map(|h| format!("{h}:{port}:127.0.0.1"))
        .collect();
    let mut args = vec![
        a.as_str(),
        &b,
        "-q",
        "--ignore-robots",
        "--no-sitemaps",
        "--resolve",
        &resolve[0],
        "--resolve",
        &resolve[1],
    ];
    args.extend(flags);
    let run = ringcrawl(&args);
    nginx.stop();
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let log = std::fs::read_to_string(nginx.path().join("timed.log")).unwrap();
    let mut spans: Vec<Span> = log
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let (end, took): (f64, f64) = (f[1].parse().unwrap(), f[2].parse().unwrap());
            (f[0].to_string(), end - took, end, f[3].to_string())
        })
        .collect();
    spans.sort_by(|x, y| x.1.total_cmp(&y.1));
    spans
}

#[test]
fn a_wildcard_rule_holds_its_hosts_to_one_fetch_and_an_exact_name_beats_it() {
    // A server of the test process that holds every reply, logging when
    // each request of each host arrived.
    let addr = "127.0.0.1:0".parse().unwrap();
    let (server, gauge) = held_site(&[addr], 8, |req| req.host.clone());
    let port = server.addr().port();
    let roots = [
        format!("http://a.test:{port}/"),
        format!("http://b.test:{port}/"),
    ];
    let resolves = [
        format!("a.test:{port}:127.0.0.1"),
        format!("b.test:{port}:127.0.0.1"),
    ];
    let run = ringcrawl(&[
        &roots[0],
        &roots[1],
        "--resolve",
        &resolves[0],
        "--resolve",
        &resolves[1],
        "-q",
        "--no-sitemaps",
        "--per-host",
        "4",
        "--host-rule",
        "*.test:per-host=1",
        "--host-rule",
        "b.test:per-host=3",
    ]);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    for host in ["a.test", "b.test"] {
        // robots.txt, the root, eight pages.
        assert_eq!(gauge.lock().unwrap()[host].len(), 10, "{host}");
    }
    assert_eq!(peak(&gauge, "a.test"), 1, "the wildcard's 1");
    let b = peak(&gauge, "b.test");
    assert!(
        (2..=3).contains(&b),
        "the exact name's 3, not the wildcard's 1 nor the flag's 4: {b}"
    );
}

#[test]
fn a_delay_rule_spaces_its_hosts_requests_only() {
    let test = "a_delay_rule_spaces_its_hosts_requests_only";
    if !tools::require("nginx", test) {
        return;
    }
    let mut nginx = site(4);
    let spans = crawl(&mut nginx, &["--host-rule", "a.test:delay=300ms"]);
    let starts =
        |host: &str| -> Vec<f64> { spans.iter().filter(|s| s.0 == host).map(|s| s.1).collect() };
    let (a, b) = (starts("a.test"), starts("b.test"));
    assert_eq!((a.len(), b.len()), (5, 5), "{spans:?}");
    // The delay runs from the crawler's request starts; nginx sees each
    // request when it arrives, the first (a new connection) later than
    // the next (a reused one), and counts in milliseconds: 50 ms of slack
    // a gap, and the whole run at least four delays but that.
    for pair in a.windows(2) {
        assert!(pair[1] - pair[0] >= 0.25, "a.test: {a:?}");
    }
    assert!(a[4] - a[0] >= 4.0 * 0.3 - 0.05, "a.test: {a:?}");
    // b.test has no rule and --delay is 0: its pages (two at a time,
    // as --per-host) do not wait 300 ms each.
    let b_span = b[b.len() - 1] - b[0];
    assert!(b_span < 4.0 * 0.3, "b.test: {b:?}");
}

#[test]
fn a_bad_host_rule_is_a_one_line_usage_error_naming_it() {
    for (rule, says) in [
        (
            "a.test",
            "--host-rule \"a.test\": expected PATTERN:KEY=VALUE",
        ),
        (
            "a.test:speed=1",
            "--host-rule \"a.test:speed=1\": unknown key \"speed\"",
        ),
        (
            "a.test:per-host=x",
            "--host-rule \"a.test:per-host=x\": per-host=\"x\"",
        ),
        (
            "a..test:per-host=1",
            "--host-rule: \"a..test\" is not a host name",
        ),
        (
            "a.test:per-host=0",
            "--host-rule: a.test: per-host must be at least 1",
        ),
    ] {
        let out = ringcrawl(&["--host-rule", rule, "http://a.test/"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{rule}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{rule}: {stderr}");
        assert!(stderr.contains(says), "{rule}: {stderr}");
    }
}
