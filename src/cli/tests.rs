//! The flags as the crawl's configuration: defaults, spellings, values
//! refused in one line.

use std::net::{IpAddr, SocketAddr};

use clap::Parser;

use super::units::parse_size;
use super::{Args, ArgsError};

fn config(args: &[&str]) -> Result<ringcrawl::config::Config, ArgsError> {
    let argv = std::iter::once("ringcrawl").chain(args.iter().copied());
    let crawler = Args::try_parse_from(argv)
        .expect("flags parse")
        .into_builder(&[])?
        .build()?;
    Ok(crawler.config().clone())
}

#[test]
fn chapter_defaults_apply() {
    let c = config(&["example.com"]).unwrap();
    assert_eq!(c.roots[0].as_str(), "http://example.com/");
    assert_eq!((c.max_redirect, c.max_tries, c.max_tasks), (10, 4, 100));
}

#[test]
fn underscore_spellings_are_accepted() {
    let c = config(&[
        "--max_redirect",
        "3",
        "--max_tries=2",
        "--max_tasks",
        "7",
        "x.org",
    ])
    .unwrap();
    assert_eq!((c.max_redirect, c.max_tries, c.max_tasks), (3, 2, 7));
}

#[test]
fn resolve_pins_host_and_port() {
    let c = config(&[
        "--resolve",
        "Site.Test:8080:127.0.0.2",
        "--resolve",
        "v6.test:80:[::1]",
        "--resolve",
        "both.test:80:[::1],127.0.0.1",
        "--resolve",
        "Dot.Test.:80:127.0.0.3",
        "site.test",
    ])
    .unwrap();
    let ip = |s: &str| s.parse::<IpAddr>().unwrap();
    assert_eq!(c.resolve[&("site.test".into(), 8080)], [ip("127.0.0.2")]);
    assert_eq!(c.resolve[&("v6.test".into(), 80)], [ip("::1")]);
    assert_eq!(
        c.resolve[&("both.test".into(), 80)],
        [ip("::1"), ip("127.0.0.1")]
    );
    assert_eq!(
        c.resolve[&("dot.test".into(), 80)],
        [ip("127.0.0.3")],
        "the host as URLs name it: no trailing dot"
    );
}

#[test]
fn dns_servers_take_an_optional_port() {
    let c = config(&[
        "--dns-server",
        "127.0.0.1:5353",
        "--dns-server",
        "10.0.0.1",
        "--dns-server",
        "[::1]:53",
        "site.test",
    ])
    .unwrap();
    let want: Vec<SocketAddr> = ["127.0.0.1:5353", "10.0.0.1:53", "[::1]:53"]
        .iter()
        .map(|a| a.parse().unwrap())
        .collect();
    assert_eq!(c.dns_servers, want);
    assert!(matches!(
        config(&["--dns-server", "ns.example", "site.test"]),
        Err(ArgsError::DnsServer(_))
    ));
}

#[test]
fn bad_inputs_are_one_line_errors() {
    for args in [
        vec!["--exclude", "(", "x.org"],
        vec!["--resolve", "nope", "x.org"],
        vec!["--max-tasks", "0", "x.org"],
        vec!["--timeout=-1", "x.org"],
        vec!["--timeout", "0", "x.org"],
        vec!["ftp://x.org/"],
        vec!["--ca-cert", "/nonexistent/ca.pem", "x.org"],
        vec![],
    ] {
        let err = config(&args).expect_err("must be rejected").to_string();
        assert!(!err.contains('\n'), "{args:?}: {err}");
    }
}

#[test]
fn wacz_takes_a_file_and_needs_a_warc_directory() {
    let c = config(&["--warc", "/tmp/w", "--wacz", "/tmp/c.wacz", "x.org"]).unwrap();
    assert_eq!(c.wacz.as_deref(), Some(std::path::Path::new("/tmp/c.wacz")));
    assert_eq!(c.cdxj, None, "the index it needs is the crawl's business");
    let argv = ["ringcrawl", "--wacz", "/tmp/c.wacz", "x.org"];
    assert!(Args::try_parse_from(argv).is_err(), "--wacz without --warc");
}

/// Values that parse but would overflow a clock or a buffer later, in
/// the middle of the crawl, are refused here.
#[test]
fn out_of_range_durations_and_sizes_are_refused() {
    let huge = u64::MAX.to_string();
    for args in [
        vec!["--timeout", "1e19"],
        vec!["--connect-timeout", "1e19"],
        vec!["--read-timeout", "1e19"],
        vec!["--max-crawl-delay", "1e19"],
        vec!["--progress-interval", "1e19"],
        vec!["--delay", &huge],
        vec!["--max-body", &huge],
        vec!["--max-url-length", &huge],
        vec!["--cores", "1000000"],
    ] {
        let argv: Vec<&str> = args.iter().copied().chain(["x.org"]).collect();
        let err = config(&argv).expect_err("must be rejected").to_string();
        assert!(!err.contains('\n'), "{args:?}: {err}");
    }
}

#[test]
fn sizes_take_binary_suffixes() {
    assert_eq!(parse_size("1G"), Ok(1 << 30));
    assert_eq!(parse_size("64m"), Ok(64 << 20));
    assert_eq!(parse_size("4096"), Ok(4096));
    assert!(
        parse_size("0").is_err() && parse_size("x").is_err() && parse_size("99999999999G").is_err()
    );
}

#[test]
fn sitemaps_are_read_by_default_but_in_the_demo_and_the_last_flag_wins() {
    assert!(config(&["x.org"]).unwrap().sitemaps);
    assert!(!config(&["--no-sitemaps", "x.org"]).unwrap().sitemaps);
    assert!(
        config(&["--no-sitemaps", "--sitemaps", "x.org"])
            .unwrap()
            .sitemaps
    );
    assert!(
        !config(&["--sitemaps", "--no-sitemaps", "x.org"])
            .unwrap()
            .sitemaps
    );
    let demo = |args: &[&str]| {
        let argv = ["ringcrawl", "--demo"]
            .into_iter()
            .chain(args.iter().copied());
        let args = Args::try_parse_from(argv).unwrap();
        let builder = args.into_builder(&["http://127.0.0.1:1/".into()]).unwrap();
        builder.build().unwrap().config().sitemaps
    };
    assert!(!demo(&[]));
    assert!(demo(&["--sitemaps"]));
}

#[test]
fn lenient_and_strict_override_each_other() {
    let args =
        Args::try_parse_from(["ringcrawl", "--strict", "--lenient", "a.example.co.uk"]).unwrap();
    assert!(args.lenient && !args.strict);
}
