//! Crawls through proxies that are not ours: squid as an HTTP proxy
//! (absolute-form requests for http, `CONNECT` for https, Basic proxy
//! credentials) and microsocks as a SOCKS5 server (`socks5://` with the
//! address resolved here, `socks5h://`, user and password). The names
//! crawled through squid resolve only in squid's own hosts file, so every
//! page fetched proves the proxy resolved it. The WARC keeps the target's
//! exchange, never the proxy's; a proxy's failure is its own error kind;
//! a dead proxy among live ones is passed over; `http_proxy` and
//! `no_proxy` are read as curl reads them.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use ringcrawl_site::tls::{TestCa, Validity};

use crate::cli::{ringcrawl, PROXY_VARS};
use crate::common::nginx::Nginx;
use crate::common::records_at;
use crate::common::scratch::Scratch;
use crate::common::squid::{Microsocks, Squid};
use crate::common::tools;
use crate::common::warc::read_records;

/// nginx serving `pages` (name, body) for any name, over TLS with `tls`
/// (certificate and key in PEM) if given.
fn site(pages: &[(&str, &str)], tls: Option<(&str, &str)>) -> Nginx {
    let dir = Nginx::dir();
    std::fs::create_dir_all(dir.join("www")).unwrap();
    for (name, body) in pages {
        std::fs::write(dir.join("www").join(name), body).unwrap();
    }
    let ssl = match tls {
        Some((chain, key)) => {
            std::fs::write(dir.join("site.pem"), chain).unwrap();
            std::fs::write(dir.join("site.key"), key).unwrap();
            " ssl; ssl_certificate site.pem; ssl_certificate_key site.key"
        }
        None => "",
    };
    Nginx::start(dir, |port| {
        format!("server {{ listen 127.0.0.1:{port}{ssl}; server_name _; root www; }}\n")
    })
}

/// A record's URL, status, error kind and server address.
type Outcome = (String, Option<u64>, Option<String>, Option<String>);

/// `(url, status, error_kind, ip)` of each record of `out` under `origin`.
fn outcomes(out: &Path, origin: &str) -> Vec<Outcome> {
    records_at(out, "")
        .into_iter()
        .filter(|(url, _)| url.starts_with(origin))
        .map(|(url, r)| {
            (
                url,
                r["status"].as_u64(),
                r["error_kind"].as_str().map(String::from),
                r["ip"].as_str().map(String::from),
            )
        })
        .collect()
}

const TWO_PAGES: &[(&str, &str)] = &[
    ("index.html", "<a href=/page.html>p</a>"),
    ("page.html", "a page"),
];

#[test]
fn http_and_https_go_through_squid_which_resolves_the_names_and_the_warc_keeps_the_targets_exchange(
) {
    let test = "http_and_https_go_through_squid";
    if !tools::require("nginx", test) || !tools::require("squid", test) {
        return;
    }
    let ca = TestCa::new("proxy test CA").unwrap();
    let cert = ca.issue(&["b.test"], Validity::Current).unwrap();
    let mut plain = site(TWO_PAGES, None);
    let mut secure = site(TWO_PAGES, Some((cert.chain_pem(), cert.key_pem())));
    let login = ("ann", "s3cret:x");
    let mut squid = Squid::start(&["a.test", "b.test"], Some(login));
    let dir = Scratch::new("proxies-http");
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, ca.pem()).unwrap();
    let a = format!("http://a.test:{}/", plain.port());
    let b = format!("https://b.test:{}/", secure.port());
    // `robots`: false with credentials the proxy refuses, else robots.txt
    // is unavailable (through no fault of the site) and retried for a
    // while before the pages are recorded so.
    let run = |proxy: &str, name: &str, robots: bool| {
        let out = dir.join(format!("{name}.jsonl"));
        let warc = dir.join(name);
        let mut args = vec![
            a.as_str(),
            &b,
            "--proxy",
            proxy,
            "--ca-cert",
            ca_file.to_str().unwrap(),
            "--no-sitemaps",
            "--warc",
            warc.to_str().unwrap(),
            "-q",
            "-o",
            out.to_str().unwrap(),
        ];
        if !robots {
            args.push("--ignore-robots");
        }
        let run = ringcrawl(&args);
        (run, out, warc)
    };

    let (good, out, warc) = run(&squid.url(Some(("ann", "s3cret%3Ax"))), "good", true);
    let stderr = String::from_utf8_lossy(&good.stderr);
    assert_eq!(good.status.code(), Some(0), "{stderr}\n{}", squid.log());
    for origin in [&a, &b] {
        let got = outcomes(&out, origin);
        let urls: BTreeSet<&str> = got.iter().map(|(u, ..)| u.as_str()).collect();
        let want =
            BTreeSet::from([origin.as_str(), &*format!("{origin}page.html")].map(String::from));
        assert_eq!(urls, want.iter().map(String::as_str).collect(), "{got:?}");
        for (url, status, kind, ip) in &got {
            // Through an HTTP proxy the crawler never knows the address.
            assert_eq!((*status, kind, ip), (Some(200), &None, &None), "{url}");
        }
    }
    // The WARC holds the targets' exchanges: origin-form requests, no
    // proxy credentials, no CONNECT.
    let mut requests = Vec::new();
    for file in std::fs::read_dir(&warc).unwrap() {
        let path = file.unwrap().path();
        if path.to_string_lossy().ends_with(".warc.gz") {
            for record in read_records(&std::fs::read(&path).unwrap()).unwrap() {
                if record.header("WARC-Type") == Some("request") {
                    requests.push(String::from_utf8_lossy(&record.block).into_owned());
                }
            }
        }
    }
    assert!(requests.len() >= 4, "{requests:?}");
    for request in &requests {
        assert!(request.starts_with("GET /"), "{request}");
        assert!(
            !request.to_ascii_lowercase().contains("proxy-authorization"),
            "{request}"
        );
    }

    // Wrong credentials: the proxy's fault, named as such, both ways in.
    let (bad, out, _) = run(&squid.url(Some(("ann", "wrong"))), "bad", false);
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        !stderr.contains("wrong"),
        "the password is not repeated: {stderr}"
    );
    for origin in [&a, &b] {
        let got = outcomes(&out, origin);
        assert!(!got.is_empty());
        for (url, status, kind, _) in &got {
            assert_eq!(
                (*status, kind.as_deref()),
                (None, Some("proxy_auth")),
                "{url}"
            );
        }
    }

    let seen = squid.stop();
    let has = |method: &str, url: &str, status: u16| {
        seen.iter()
            .any(|(m, u, s)| m == method && u == url && *s == status)
    };
    assert!(has("GET", &format!("{a}page.html"), 200), "{seen:?}");
    assert!(
        has("CONNECT", &format!("b.test:{}", secure.port()), 200),
        "{seen:?}"
    );
    assert!(
        has("CONNECT", &format!("b.test:{}", secure.port()), 407),
        "{seen:?}"
    );
    let plain_log = plain.stop();
    assert!(plain_log
        .iter()
        .any(|s| s.host == "a.test" && s.uri == "/page.html"));
    let secure_log = secure.stop();
    assert!(secure_log
        .iter()
        .any(|s| s.server_name == "b.test" && s.uri == "/page.html"));
}

#[test]
fn socks5_resolves_here_socks5h_at_the_proxy_and_bad_credentials_are_the_proxys_fault() {
    let test = "socks5_resolves_here_socks5h_at_the_proxy";
    if !tools::require("nginx", test) || !tools::require("microsocks", test) {
        return;
    }
    let mut web = site(TWO_PAGES, None);
    let socks = Microsocks::start(Some(("me", "pw")));
    let dir = Scratch::new("proxies-socks");
    let port = web.port();
    let by_name = format!("http://a.test:{port}/");
    let by_ip = format!("http://127.0.0.1:{port}/");
    let pin = format!("a.test:{port}:127.0.0.1");
    // Without robots.txt: through a proxy that refuses the credentials it
    // is unavailable (no fault of the site's), and asked again for a while.
    let crawl = |proxy: String, root: &str, name: &str| {
        let out = dir.join(format!("{name}.jsonl"));
        let run = ringcrawl(&[
            root,
            "--proxy",
            &proxy,
            "--resolve",
            &pin,
            "--no-sitemaps",
            "--ignore-robots",
            "-q",
            "-o",
            out.to_str().unwrap(),
        ]);
        (run, outcomes(&out, root))
    };
    let sp = socks.port();

    // socks5://: the name resolved here (by --resolve), the address sent.
    let (run, got) = crawl(format!("socks5://me:pw@127.0.0.1:{sp}"), &by_name, "local");
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(got.len(), 2, "{got:?}");
    for (url, status, kind, ip) in &got {
        assert_eq!(
            (*status, kind, ip.as_deref()),
            (Some(200), &None, Some("127.0.0.1")),
            "{url}"
        );
    }
    // socks5h://: the proxy is given the host; the crawler knows no address.
    let (run, got) = crawl(format!("socks5h://me:pw@127.0.0.1:{sp}"), &by_ip, "remote");
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(got.len(), 2, "{got:?}");
    for (url, status, kind, ip) in &got {
        assert_eq!((*status, kind, ip), (Some(200), &None, &None), "{url}");
    }
    // A wrong password: proxy_auth, never blamed on the site.
    let (_, got) = crawl(format!("socks5h://me:nope@127.0.0.1:{sp}"), &by_ip, "bad");
    assert!(!got.is_empty());
    for (url, status, kind, _) in &got {
        assert_eq!(
            (*status, kind.as_deref()),
            (None, Some("proxy_auth")),
            "{url}"
        );
    }
    let log = web.stop();
    assert_eq!(
        log.iter().filter(|s| s.uri == "/page.html").count(),
        2,
        "{log:?}"
    );
}

#[test]
fn a_dead_proxy_among_live_ones_is_passed_over_and_alone_it_is_the_proxys_fault() {
    let test = "a_dead_proxy_among_live_ones_is_passed_over";
    if !tools::require("nginx", test) || !tools::require("squid", test) {
        return;
    }
    let mut web = site(TWO_PAGES, None);
    let hosts: Vec<String> = (0..8).map(|i| format!("h{i}.test")).collect();
    let names: Vec<&str> = hosts.iter().map(String::as_str).collect();
    let mut squid = Squid::start(&names, None);
    // A port nothing listens on: bound, then let go.
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dead = format!("http://u:secret@127.0.0.1:{dead}");
    let dir = Scratch::new("proxies-dead");
    let roots: Vec<String> = hosts
        .iter()
        .map(|h| format!("http://{h}:{}/", web.port()))
        .collect();
    let out = dir.join("records.jsonl");
    let mut args: Vec<&str> = roots.iter().map(String::as_str).collect();
    let live = squid.url(None);
    args.extend([
        "--proxy",
        &dead,
        "--proxy",
        &live,
        "--ignore-robots",
        "--no-sitemaps",
        "--max-tries",
        "4",
    ]);
    args.extend(["-q", "-o", out.to_str().unwrap()]);
    let run = ringcrawl(&args);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    for root in &roots {
        let got = outcomes(&out, root);
        assert_eq!(got.len(), 2, "{root}: {got:?}");
        for (url, status, kind, _) in &got {
            assert_eq!((*status, kind), (Some(200), &None), "{url}");
        }
    }

    // The dead one alone: proxy_connect, its password not shown.
    let out = dir.join("dead.jsonl");
    let run = ringcrawl(&[
        &roots[0],
        "--proxy",
        &dead,
        "--ignore-robots",
        "--no-sitemaps",
        "-q",
        "-o",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!stderr.contains("secret"), "{stderr}");
    let records = records_at(&out, &roots[0]);
    assert_eq!(records.len(), 1, "{records:?}");
    let (_, r) = &records[0];
    assert_eq!(r["error_kind"], "proxy_connect", "{r}");
    assert!(
        r["error"].as_str().unwrap().contains("http://127.0.0.1:"),
        "{r}"
    );
    squid.stop();
    web.stop();
}

#[test]
fn http_proxy_and_no_proxy_are_read_from_the_environment_as_curl_does() {
    let test = "http_proxy_and_no_proxy_are_read_from_the_environment";
    if !tools::require("nginx", test) || !tools::require("squid", test) {
        return;
    }
    let mut web = site(TWO_PAGES, None);
    let mut squid = Squid::start(&["a.test"], None);
    let dir = Scratch::new("proxies-env");
    let root = format!("http://a.test:{}/", web.port());
    let pin = format!("a.test:{}:127.0.0.1", web.port());
    let run = |name: &str, env: &[(&str, &str)]| {
        let out = dir.join(format!("{name}.jsonl"));
        let mut command = Command::new(env!("CARGO_BIN_EXE_ringcrawl"));
        for var in PROXY_VARS {
            command.env_remove(var);
        }
        let output = command
            .envs(env.iter().copied())
            .args([
                &root,
                "--resolve",
                &pin,
                "--no-sitemaps",
                "--ignore-robots",
                "-q",
                "-o",
                out.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        outcomes(&out, &root)
    };
    let proxy = squid.url(None);
    let got = run("env", &[("http_proxy", &proxy)]);
    assert_eq!(got.len(), 2, "{got:?}");
    // Through the proxy: no address known here.
    assert!(
        got.iter()
            .all(|(_, s, _, ip)| *s == Some(200) && ip.is_none()),
        "{got:?}"
    );
    // HTTP_PROXY in upper case is not read (a CGI's request can set it);
    // no_proxy sends a.test direct.
    for (name, env) in [
        ("upper", vec![("HTTP_PROXY", proxy.as_str())]),
        (
            "bypassed",
            vec![
                ("http_proxy", proxy.as_str()),
                ("no_proxy", "localhost,.a.test"),
            ],
        ),
    ] {
        let got = run(name, &env);
        assert_eq!(got.len(), 2, "{name}: {got:?}");
        assert!(
            got.iter()
                .all(|(_, s, _, ip)| *s == Some(200) && ip.as_deref() == Some("127.0.0.1")),
            "{name}: {got:?}"
        );
    }
    let seen = squid.stop();
    assert_eq!(
        seen.iter().filter(|(m, ..)| m == "GET").count(),
        2,
        "{seen:?}"
    );
    web.stop();
}

/// Each proxy's health in the report, `--report-json` and `/metrics`:
/// squid's access log counts the exchanges that went through the live
/// proxy; every try through the dead one failed, and failing three times
/// in a row parked it. On one core, so the one rotation sees every try;
/// the hosts are named so that at least three of them pick the dead
/// proxy first (a fixed hash of the name decides).
#[test]
fn each_proxys_fetches_failures_and_parkings_are_reported_and_served_as_metrics() {
    let test = "each_proxys_fetches_failures_and_parkings_are_reported";
    if !tools::require("nginx", test) || !tools::require("squid", test) {
        return;
    }
    let mut web = site(TWO_PAGES, None);
    let hosts: Vec<String> = (0..12).map(|i| format!("h{i}.test")).collect();
    let on_dead = hosts
        .iter()
        .filter(|h| crate::common::hosts::host_key(h).is_multiple_of(2))
        .count();
    assert!(on_dead >= 3, "{on_dead} hosts pick the dead proxy first");
    let names: Vec<&str> = hosts.iter().map(String::as_str).collect();
    let mut squid = Squid::start(&names, None);
    let dead_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dead = format!("http://u:secret@127.0.0.1:{dead_port}");
    let live = squid.url(None);
    let roots: Vec<String> = hosts
        .iter()
        .map(|h| format!("http://{h}:{}/", web.port()))
        .collect();
    let mut args: Vec<&str> = roots.iter().map(String::as_str).collect();
    args.extend([
        "--proxy",
        &dead,
        "--proxy",
        &live,
        "--cores",
        "1",
        "--ignore-robots",
        "--no-sitemaps",
    ]);
    let crawl = crate::status_server::Crawl::run("proxy-health", &args);
    let metrics = crawl.final_metrics();
    let (code, report, stderr) = crawl.stop_with_stderr();
    // The requests squid took for our hosts (not its start-up probe's
    // connection, logged as NONE).
    let seen = squid.stop();
    let through_squid = seen
        .iter()
        .filter(|(_, url, _)| url.contains(".test:"))
        .count() as u64;
    web.stop();
    assert_eq!(code, Some(0), "{stderr}");

    let proxies = report["proxies"].as_array().unwrap();
    let shown = format!("http://127.0.0.1:{dead_port}");
    let entry = |name: &str| {
        proxies
            .iter()
            .find(|p| p["proxy"] == name)
            .unwrap_or_else(|| panic!("{name} in {proxies:?}"))
    };
    let n = |p: &serde_json::Value, key: &str| p[key].as_u64().unwrap();
    let (d, l) = (entry(&shown), entry(&live));
    assert_eq!(proxies.len(), 2, "{proxies:?}");
    assert_eq!(n(l, "fetches"), through_squid, "{l} {seen:?}");
    assert_eq!(through_squid, 2 * hosts.len() as u64, "every page, once");
    assert_eq!((n(l, "failures"), n(l, "parked_times")), (0, 0), "{l}");
    assert_eq!(l["parked"], false);
    assert!(n(d, "fetches") >= 3, "{d}");
    assert_eq!(n(d, "failures"), n(d, "fetches"), "{d}");
    assert!(n(d, "parked_times") >= 1, "{d}");

    for p in [d, l] {
        let name = p["proxy"].as_str().unwrap();
        let series = |family: &str| {
            crate::status_server::sample(&metrics, &format!("{family}{{proxy=\"{name}\"}}"))
        };
        assert_eq!(series("ringcrawl_proxy_fetches_total"), n(p, "fetches"));
        assert_eq!(series("ringcrawl_proxy_failures_total"), n(p, "failures"));
        assert_eq!(series("ringcrawl_proxy_parks_total"), n(p, "parked_times"));
        assert_eq!(
            series("ringcrawl_proxy_parked"),
            u64::from(p["parked"].as_bool().unwrap())
        );
        let line = format!(
            "proxy {name}: {} fetches, {} failed, parked {} times",
            n(p, "fetches"),
            n(p, "failures"),
            n(p, "parked_times")
        );
        assert!(stderr.contains(&line), "{line:?} in the report:\n{stderr}");
    }
    for text in [&metrics, &report.to_string(), &stderr] {
        assert!(!text.contains("secret"), "no password shown: {text}");
    }
    crate::status_server::promtool_passes(test, &metrics);
}
