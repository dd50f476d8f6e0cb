//! The flags as the crawl's configuration: defaults, spellings, values
//! refused in one line.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use clap::Parser;
use ringcrawl::Crawler;

use super::{one_line, Args, ArgsError};

/// The crawl `args` build (its settings: `Crawler::settings`), or the
/// one-line error the user sees: clap's, the command line's own, or the
/// builder's.
fn built(args: &[&str]) -> Result<Crawler, String> {
    let argv = std::iter::once("ringcrawl").chain(args.iter().copied());
    let args = Args::try_parse_from(argv).map_err(|e| one_line(&e))?;
    args.into_builder(&[])
        .and_then(|b| Ok(b.build()?))
        .map_err(|e: ArgsError| e.to_string())
}

#[test]
fn chapter_defaults_apply() {
    let crawler = built(&["example.com"]).unwrap();
    let c = crawler.settings();
    assert_eq!(c.roots()[0].as_str(), "http://example.com/");
    use ringcrawl::defaults;
    assert_eq!(
        (c.max_redirect(), c.max_tries(), c.max_tasks()),
        (
            defaults::MAX_REDIRECT,
            defaults::MAX_TRIES,
            defaults::MAX_TASKS
        )
    );
}

/// Each flag's default is the library's own (`ringcrawl::defaults`, shown
/// by `--help` as the flag writes it and read back by the flag's parser),
/// so a crawl started with no flags is the builder's default crawl.
#[test]
fn the_flags_defaults_are_the_librarys() {
    let flags = built(&["example.com"]).unwrap();
    let flags = flags.settings();
    let builder = ringcrawl::Crawler::builder().root("example.com").build();
    let library = builder.unwrap();
    let library = library.settings();
    macro_rules! same {
        ($($field:ident),* $(,)?) => {
            $(assert_eq!(flags.$field(), library.$field(), stringify!($field));)*
        };
    }
    same!(
        max_tasks,
        per_host,
        max_redirect,
        max_tries,
        max_retry_after,
        max_depth,
        max_url_length,
        max_pages_per_host,
        timeout,
        connect_timeout,
        read_timeout,
        delay,
        delay_factor,
        max_delay,
        max_crawl_delay,
        robots_retries,
        user_agent,
        max_body,
        frontier_memory,
        host_memory,
        seen_memory,
        cookie_memory,
        warc_max_size,
    );
    let parse = |args: &[&str]| {
        let argv = std::iter::once("ringcrawl").chain(args.iter().copied());
        Args::try_parse_from(argv).unwrap()
    };
    let args = parse(&["--cluster", "redis://127.0.0.1/", "--crawl", "c", "x.org"]);
    assert_eq!(
        args.checkpoint_interval,
        ringcrawl::defaults::CHECKPOINT_INTERVAL
    );
    assert_eq!(args.lease_ttl, ringcrawl::defaults::LEASE_TTL);
}

#[test]
fn underscore_spellings_are_accepted() {
    let crawler = built(&[
        "--max_redirect",
        "3",
        "--max_tries=2",
        "--max_tasks",
        "7",
        "x.org",
    ])
    .unwrap();
    let c = crawler.settings();
    assert_eq!((c.max_redirect(), c.max_tries(), c.max_tasks()), (3, 2, 7));
}

#[test]
fn resolve_pins_host_and_port() {
    let crawler = built(&[
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
    let c = crawler.settings();
    let ip = |s: &str| s.parse::<IpAddr>().unwrap();
    assert_eq!(c.resolve("site.test", 8080).unwrap(), [ip("127.0.0.2")]);
    assert_eq!(c.resolve("v6.test", 80).unwrap(), [ip("::1")]);
    assert_eq!(
        c.resolve("both.test", 80).unwrap(),
        [ip("::1"), ip("127.0.0.1")]
    );
    assert_eq!(
        c.resolve("dot.test", 80).unwrap(),
        [ip("127.0.0.3")],
        "the host as URLs name it: no trailing dot"
    );
}

#[test]
fn dns_servers_take_an_optional_port() {
    let crawler = built(&[
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
    assert_eq!(crawler.settings().dns_servers(), want);
    let err = built(&["--dns-server", "ns.example", "site.test"]).unwrap_err();
    assert!(err.starts_with("--dns-server"), "{err}");
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
        vec!["--delay", "1x", "x.org"],
        vec!["--rate", "0/s", "x.org"],
        vec!["--max-body", "16Q", "x.org"],
        vec!["--robots-retries", "1,soon", "x.org"],
        vec!["--no-such-flag", "x.org"],
        vec!["--max_tsks", "3", "x.org"],
        vec!["--timeout"],
        vec![],
    ] {
        let err = built(&args).expect_err("must be rejected").to_string();
        assert!(!err.contains('\n'), "{args:?}: {err}");
    }
}

/// Every duration takes a unit, and a bare number is what it was
/// before units: milliseconds for --delay, seconds for the others.
#[test]
fn durations_and_sizes_take_units_and_bare_numbers_mean_what_they_did() {
    let ms = Duration::from_millis;
    let crawler = built(&[
        "--delay",
        "1s",
        "--timeout",
        "5m",
        "--connect-timeout",
        "1.5s",
        "--read-timeout",
        "500ms",
        "--max-crawl-delay",
        "1m",
        "--max-body",
        "16M",
        "--robots-retries",
        "500ms,2,1m",
        "--seen-memory",
        "64MiB",
        "x.org",
    ])
    .unwrap();
    let c = crawler.settings();
    assert_eq!(c.delay(), ms(1000));
    assert_eq!(c.timeout(), ms(300_000));
    assert_eq!(c.connect_timeout(), ms(1500));
    assert_eq!(c.read_timeout(), ms(500));
    assert_eq!(c.max_crawl_delay(), ms(60_000));
    assert_eq!(c.max_body(), 16 << 20);
    assert_eq!(c.robots_retries(), [ms(500), ms(2000), ms(60_000)]);
    assert_eq!(c.seen_memory(), 64 << 20);

    let crawler = built(&[
        "--delay",
        "250",
        "--timeout",
        "60",
        "--max-body",
        "1000",
        "x.org",
    ])
    .unwrap();
    let c = crawler.settings();
    assert_eq!(
        (c.delay(), c.timeout(), c.max_body()),
        (ms(250), ms(60_000), 1000)
    );
    let crawler = built(&["x.org"]).unwrap();
    let c = crawler.settings();
    assert_eq!(
        (c.delay(), c.timeout(), c.max_body()),
        (ms(0), ms(60_000), 16 << 20)
    );
}

/// --rate N/s is a delay of 1/N s; of it and --delay the last one wins.
#[test]
fn rate_is_a_delay_and_the_last_of_rate_and_delay_wins() {
    let delay = |args: &[&str]| {
        let argv: Vec<&str> = args.iter().copied().chain(["x.org"]).collect();
        built(&argv).unwrap().settings().delay()
    };
    let ms = Duration::from_millis;
    assert_eq!(delay(&["--rate", "4/s"]), ms(250));
    assert_eq!(delay(&["--rate", "30/m"]), ms(2000));
    assert_eq!(delay(&["--rate", "0.5/s"]), ms(2000));
    assert_eq!(delay(&["--delay", "100", "--rate", "2/s"]), ms(500));
    assert_eq!(delay(&["--rate", "2/s", "--delay", "100"]), ms(100));
}

#[test]
fn wacz_takes_a_file_and_needs_a_warc_directory() {
    let crawler = built(&["--warc", "/tmp/w", "--wacz", "/tmp/c.wacz", "x.org"]).unwrap();
    let c = crawler.settings();
    assert_eq!(c.wacz(), Some(std::path::Path::new("/tmp/c.wacz")));
    assert_eq!(c.cdxj(), None, "the index it needs is the crawl's business");
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
        let err = built(&argv).expect_err("must be rejected").to_string();
        assert!(!err.contains('\n'), "{args:?}: {err}");
    }
}

#[test]
fn sitemaps_are_read_by_default_but_in_the_demo_and_the_last_flag_wins() {
    let sitemaps = |args: &[&str]| built(args).unwrap().settings().sitemaps();
    assert!(sitemaps(&["x.org"]));
    assert!(!sitemaps(&["--no-sitemaps", "x.org"]));
    assert!(sitemaps(&["--no-sitemaps", "--sitemaps", "x.org"]));
    assert!(!sitemaps(&["--sitemaps", "--no-sitemaps", "x.org"]));
    let demo = |args: &[&str]| {
        let argv = ["ringcrawl", "--demo"]
            .into_iter()
            .chain(args.iter().copied());
        let args = Args::try_parse_from(argv).unwrap();
        let builder = args.into_builder(&["http://127.0.0.1:1/".into()]).unwrap();
        builder.build().unwrap().settings().sitemaps()
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

/// clap's own check of the definitions (conflicts, requires and
/// overrides name flags that exist, no two flags share a name).
#[test]
fn flag_definitions_are_consistent() {
    use clap::CommandFactory;
    Args::command().debug_assert();
}

/// A refused setting's message names `--FLAG`: every setting the library
/// can refuse is a flag of the command, but the roots (arguments) and
/// what only the library sets.
#[test]
fn every_setting_the_builder_can_refuse_is_a_flag() {
    use clap::CommandFactory;
    use ringcrawl::Setting;
    let command = Args::command();
    let not_flags = [
        Setting::Root,
        Setting::JsonlBacklog,
        Setting::MaxSitemapUrls,
        Setting::MaxSitemapsPerHost,
    ];
    for setting in Setting::all().filter(|s| !not_flags.contains(s)) {
        assert!(
            command
                .get_arguments()
                .any(|a| a.get_long() == Some(setting.flag())),
            "--{setting} is no flag"
        );
    }
}

/// curl's wildcard `*` is a host of its own; forms that would be kept and
/// never match are refused.
#[test]
fn resolve_takes_a_wildcard_host_and_refuses_what_never_matches() {
    let crawler = built(&["--resolve", "*:8080:127.0.0.1", "site.test"]).unwrap();
    let ip: IpAddr = "127.0.0.1".parse().unwrap();
    assert_eq!(crawler.settings().resolve("*", 8080).unwrap(), [ip]);
    for spec in [
        "+site.test:80:127.0.0.1",
        "*.test:80:127.0.0.1",
        "a b:80:127.0.0.1",
        ".:80:127.0.0.1",
    ] {
        let err = built(&["--resolve", spec, "site.test"]).unwrap_err();
        assert!(
            err.starts_with("--resolve") && !err.contains('\n'),
            "{spec}: {err}"
        );
    }
}

#[test]
fn auth_takes_a_port_an_ipv6_host_and_a_password_with_colons() {
    use super::values::{parse_auth, Auth};
    let auth = |host, port, user, password| Auth {
        host,
        port,
        user,
        password,
    };
    for (spec, want) in [
        ("a.test:ann:pw", auth("a.test", None, "ann", "pw")),
        (
            "a.test:8080:ann:pw",
            auth("a.test", Some(8080), "ann", "pw"),
        ),
        ("a.test:ann:p:w:", auth("a.test", None, "ann", "p:w:")),
        ("a.test:ann:", auth("a.test", None, "ann", "")),
        ("[::1]:ann:pw", auth("[::1]", None, "ann", "pw")),
        ("[::1]:443:ann:pw", auth("[::1]", Some(443), "ann", "pw")),
    ] {
        assert_eq!(parse_auth(spec).unwrap(), want, "{spec}");
    }
    for spec in [
        "a.test",
        "a.test:ann",
        ":ann:pw",
        "a.test::pw",
        "a.test:99999:ann:pw",
        "[::1:ann:pw",
        "[::1]ann:pw",
    ] {
        assert!(parse_auth(spec).is_err(), "{spec}");
    }
}

#[test]
fn headers_and_credentials_reach_the_config() {
    let crawler = built(&["-H", "X-Team: crawl", "--auth", "a.test:ann:pw", "a.test"]).unwrap();
    let c = crawler.settings();
    assert!(c.has_header("x-team"));
    assert_eq!(c.credential_count(), 1);
    assert!(c.has_credentials_for("a.test", 80));
}

/// docs/cli.md's tables say each flag's default as `--help` does: a flag
/// clap gives a default (the library's, or the command's own) has that
/// text in the table's default column, so the reference cannot drift from
/// the one definition.
#[test]
fn docs_cli_md_shows_each_flags_default_as_help_does() {
    use clap::CommandFactory;
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/cli.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let mut command = Args::command();
    command.build();
    let mut checked = 0;
    for row in doc.lines().filter(|l| l.starts_with("| `-")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let (Some(flags), Some(defaults)) = (cells.get(1), cells.get(2)) else {
            continue;
        };
        let defaults: Vec<&str> = defaults.split(" / ").collect();
        for (i, flag) in flags.split(" / ").enumerate() {
            let Some(long) = flag
                .split(['`', ' ', ','])
                .find_map(|word| word.strip_prefix("--"))
            else {
                continue;
            };
            let Some(arg) = command.get_arguments().find(|a| a.get_long() == Some(long)) else {
                panic!("docs/cli.md names --{long}, which is no flag");
            };
            if !arg.get_action().takes_values() {
                continue; // a switch: off unless given
            }
            // clap's default; else a number the help's `[default...: N`
            // names (one that depends on other flags: --per-host's).
            let want = match arg.get_default_values().first() {
                Some(value) => value.to_string_lossy().into_owned(),
                None => {
                    let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
                    let said = help
                        .split_once("[default")
                        .and_then(|(_, rest)| rest.split_once(": "))
                        .map(|(_, value)| value.split([';', ']']).next().unwrap_or(""));
                    match said.filter(|v| v.parse::<u64>().is_ok()) {
                        Some(number) => number.to_string(),
                        None => continue,
                    }
                }
            };
            let shown = defaults.get(i).or(defaults.first()).copied().unwrap_or("");
            let shown = shown.split(" (").next().unwrap_or("").trim_matches('`');
            assert_eq!(shown, want, "docs/cli.md's default of --{long}");
            checked += 1;
        }
    }
    assert!(
        checked >= 28,
        "only {checked} defaults found in docs/cli.md"
    );
}

/// docs/scale.md's table of what bounds memory says each flag's default
/// as `--help` does (its first word: `256M over all shards`), so the
/// page cannot drift from the one definition either.
#[test]
fn docs_scale_md_shows_each_flags_default_as_help_does() {
    use clap::CommandFactory;
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/scale.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let mut command = Args::command();
    command.build();
    let mut checked = 0;
    for row in doc.lines().filter(|l| l.starts_with("| `--")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let long = cells[1].trim_matches('`').trim_start_matches("--");
        let Some(arg) = command.get_arguments().find(|a| a.get_long() == Some(long)) else {
            panic!("docs/scale.md names --{long}, which is no flag");
        };
        if !arg.get_action().takes_values() {
            continue; // a switch (--warc-dedup: its row gives its memory)
        }
        let Some(want) = arg.get_default_values().first() else {
            continue;
        };
        let shown = cells[2].split_whitespace().next().unwrap_or("");
        assert_eq!(
            shown,
            want.to_string_lossy(),
            "docs/scale.md's default of --{long}"
        );
        checked += 1;
    }
    assert!(
        checked >= 5,
        "only {checked} defaults found in docs/scale.md"
    );
}

/// `--spill-dir` is the crawl's spill directory; a file there is refused
/// by its name, as is a `--host-memory` that gives a core less than its
/// floor.
#[test]
fn spill_dir_and_the_host_memory_floor() {
    let crawler = built(&["--spill-dir", "/var/tmp/spill", "site.test"]).unwrap();
    assert_eq!(
        crawler.settings().spill_dir(),
        Some(std::path::Path::new("/var/tmp/spill"))
    );
    assert_eq!(built(&["site.test"]).unwrap().settings().spill_dir(), None);
    let file = std::env::temp_dir().join(format!("ringcrawl-spill-file-{}", std::process::id()));
    std::fs::write(&file, b"").unwrap();
    let e = built(&["--spill-dir", file.to_str().unwrap(), "site.test"]).unwrap_err();
    std::fs::remove_file(&file).unwrap();
    assert!(
        e.contains("spill-dir") && e.contains("not a directory"),
        "{e}"
    );
    let e = built(&["--cores", "2", "--host-memory", "100K", "site.test"]).unwrap_err();
    assert!(
        e.contains("host-memory") && e.contains("at least 65536"),
        "{e}"
    );
    assert!(built(&["--cores", "2", "--host-memory", "128K", "site.test"]).is_ok());
}
