//! A cluster crawl's Redis as a boundary: its password is never printed,
//! and what its streams hold is untrusted input (anyone who can write to
//! Redis can append a URL), checked again before it is fetched.
//!
//! Same harness as `cluster.rs`: a real `redis-server` on loopback, the
//! `ringcrawl` binary as nodes, the synthetic site served by the test.

use std::net::SocketAddr;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::cluster::{scratch, urls_of, Node};
use crate::common::proxy::Proxy;
use crate::common::redis::redis_with_or_skip;
use crate::common::synth::Site;

/// The server's password: must appear in no output.
const SECRET: &str = "pw-7f3a9c41";

/// A wrong password: must appear in no output either.
const WRONG: &str = "wrong-5e1d2b77";

/// `ringcrawl` with `args`: exit code, stdout and stderr.
fn ringcrawl(args: &[String]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ringcrawl"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_hidden(what: &str, text: &str) {
    for secret in [SECRET, WRONG] {
        assert!(!text.contains(secret), "{what} shows a password: {text}");
    }
}

#[test]
fn a_redis_password_is_never_printed_in_errors_logs_reconnections_or_status() {
    let Some(redis) = redis_with_or_skip("password", &[], Some(SECRET)) else {
        return;
    };
    let dir = scratch("password");
    let site = Site::with_delay(3_000, 16, 2);
    let url = |at: SocketAddr, pw: &str| format!("redis://:{pw}@{at}/");
    let server = SocketAddr::from(([127, 0, 0, 1], redis.port));
    let crawl_args = |redis: &str, node: &str| -> Vec<String> {
        let mut args = site.roots();
        args.extend(site.resolve_args());
        args.extend(
            [
                "--cluster",
                redis,
                "--crawl",
                "pw",
                "--node",
                node,
                "--ignore-robots",
                "-v",
            ]
            .map(String::from),
        );
        args.extend(["-o".into(), dir.join("records.jsonl").display().to_string()]);
        args
    };

    // A wrong password: refused, the server named with the password hidden.
    let (code, out, err) = ringcrawl(&crawl_args(&url(server, WRONG), "w"));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("redis://:***@127.0.0.1"), "{err}");
    assert_hidden("a refused node", &(out + &err));
    let (code, out, err) = ringcrawl(
        &[
            "cluster",
            "status",
            "--cluster",
            &url(server, WRONG),
            "--crawl",
            "pw",
        ]
        .map(String::from),
    );
    assert_eq!(code, Some(1), "{err}");
    assert_hidden("status with a wrong password", &(out + &err));
    // A URL that does not parse is named in the error, its password hidden.
    let bad = format!("redis://:{SECRET}@127.0.0.1:notaport/");
    let (code, out, err) = ringcrawl(&crawl_args(&bad, "b"));
    assert_eq!(code, Some(2), "{err}");
    assert_hidden("a bad URL", &(out + &err));

    // The right password, through a proxy cut for a moment: the node
    // reconnects (and says so, at -v) and finishes the crawl.
    let proxy = Proxy::start(server);
    let start = Instant::now();
    let mut node = Node::spawn("n1", &url(proxy.addr(), SECRET), "pw", &dir, "2", {
        let mut args = site.roots();
        args.extend(site.resolve_args());
        args.extend(["--ignore-robots".into(), "-v".into()]);
        args
    });
    while node.records() < 200 {
        assert!(start.elapsed() < crate::cluster::LIMIT, "no progress");
        std::thread::sleep(Duration::from_millis(10));
    }
    proxy.cut();
    std::thread::sleep(Duration::from_millis(400));
    proxy.restore();
    node.finish(start);
    let err = std::fs::read_to_string(&node.stderr).unwrap();
    assert!(
        err.contains("reconnected to redis://:***@127.0.0.1"),
        "{err}"
    );
    assert_hidden("the node's log", &err);
    assert_hidden("the records", &std::fs::read_to_string(&node.log).unwrap());
    // Every page has a record (how many a cut repeats is not this test's).
    crate::cluster::assert_complete(
        &crate::cluster::records(std::slice::from_ref(&node)),
        &site.expected(),
    );
    let (code, out, err) = ringcrawl(
        &[
            "cluster",
            "status",
            "--cluster",
            &url(server, SECRET),
            "--crawl",
            "pw",
            "--json",
        ]
        .map(String::from),
    );
    assert_eq!(code, Some(0), "{err}");
    assert_hidden("status", &(out + &err));
}

/// `--cluster-password-file` and `RINGCRAWL_CLUSTER_PASSWORD` keep the
/// password off the command line (`ps` shows every user a process's
/// arguments): a node given the password either way crawls and `cluster
/// status` reads, with no password among their arguments; without it the
/// server refuses them; a file beside a URL that holds a password too is
/// refused as a usage error.
#[test]
fn a_redis_password_from_a_file_or_the_environment_works_and_is_never_an_argument() {
    let Some(redis) = redis_with_or_skip("password-file", &[], Some(SECRET)) else {
        return;
    };
    let dir = scratch("password-file");
    let site = Site::new(200, 2);
    let file = dir.join("redis-password");
    std::fs::write(&file, format!("{SECRET}\n")).unwrap();
    let bare = format!("redis://127.0.0.1:{}/", redis.port);
    let node_args = |node: &str, more: &[String]| -> Vec<String> {
        let mut args = site.roots();
        args.extend(site.resolve_args());
        args.extend(
            [
                "--cluster",
                &bare,
                "--crawl",
                "pwfile",
                "--node",
                node,
                "--ignore-robots",
                "--no-sitemaps",
            ]
            .map(String::from),
        );
        // Named after the node: records.NODE.jsonl.
        args.extend(["-o".into(), dir.join("records.jsonl").display().to_string()]);
        args.extend(more.iter().cloned());
        args
    };
    let run = |args: &[String], env: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ringcrawl"));
        cmd.args(args).env_remove("RINGCRAWL_CLUSTER_PASSWORD");
        if let Some(pw) = env {
            cmd.env("RINGCRAWL_CLUSTER_PASSWORD", pw);
        }
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert_hidden("a node's output", &text);
        (out.status.code(), text)
    };

    // No password: the server refuses the node.
    let (code, text) = run(&node_args("n0", &[]), None);
    assert_eq!(code, Some(1), "{text}");
    // From the file: the node crawls the whole site.
    let with_file = [
        "--cluster-password-file".to_string(),
        file.display().to_string(),
    ];
    let (code, text) = run(&node_args("n1", &with_file), None);
    assert_eq!(code, Some(0), "{text}");
    let records = crate::common::whole_lines(&dir.join("records.n1.jsonl"));
    assert_eq!(records.lines().count(), site.expected().len(), "{text}");
    // From the environment: `cluster status` reads the crawl.
    let status: Vec<String> = [
        "cluster",
        "status",
        "--cluster",
        &bare,
        "--crawl",
        "pwfile",
        "--json",
    ]
    .map(String::from)
    .to_vec();
    let (code, text) = run(&status, Some(SECRET));
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("\"partitions\""), "{text}");
    let (code, text) = run(&status, None);
    assert_eq!(code, Some(1), "no password, no status: {text}");
    // A password in the URL and a file: which one? Refused, exit 2.
    let mut both = status.clone();
    both[3] = format!("redis://:{SECRET}@127.0.0.1:{}/", redis.port);
    both.extend(with_file.iter().cloned());
    let (code, text) = run(&both, None);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("give one"), "{text}");
}

/// A hop path as the hex a stream line holds (src/cluster/wire.rs): a
/// root's.
const ROOT: &str = "0";
/// A link's from a root.
const LINK: &str = "200000000000001";
/// A page requisite's from a root.
const EMBED: &str = "200000000000003";

/// One job as a line of a stream entry, written by hand as anyone who can
/// write to Redis could, in the format src/cluster/wire.rs documents (`url
/// TAB depth TAB redirects_left TAB hops (hex) TAB via`): depth 1, 5
/// redirects left, found on `via` by the path `hops`. That test's module
/// reads these very lines back as the jobs meant
/// (`lines_written_by_hand_as_the_suite_does_read_as_the_jobs_they_mean`).
fn line(url: &str, hops: &str, via: &str) -> String {
    format!("{url}\t1\t5\t{hops}\t{via}\n")
}

/// Appends each of `lines` as an entry to the stream of every partition
/// of crawl `crawl` (of the default partition count), as anyone who can
/// write to Redis could: one copy is in its host's own partition (which
/// one is the crawl's hash, not the writer's to know), the others are in
/// partitions it is not of.
fn inject(redis: &str, crawl: &str, lines: &[String]) {
    let mut con = redis::Client::open(redis)
        .unwrap()
        .get_connection()
        .unwrap();
    for line in lines {
        for p in 0..ringcrawl::defaults::PARTITIONS {
            let _: String = redis::cmd("XADD")
                .arg(format!("ringcrawl:{crawl}:stream:{p}"))
                .arg("*")
                .arg("u")
                .arg(line)
                .query(&mut con)
                .unwrap();
        }
    }
}

#[test]
fn urls_appended_to_a_stream_by_others_are_checked_again_before_they_are_fetched() {
    let Some(redis) = crate::common::redis::redis_or_skip("injected") else {
        return;
    };
    let dir = scratch("injected");
    let site = Site::with_delay(3_000, 16, 2);
    let start = Instant::now();
    let mut node = Node::start("n1", &redis.url(), "inj", &site, &dir, true, "2");
    while node.records() < 100 {
        assert!(start.elapsed() < crate::cluster::LIMIT, "no progress");
        std::thread::sleep(Duration::from_millis(10));
    }
    let via = site.roots()[0].clone();
    let injected = [
        // Out of the crawl's scope, as a link and as a root would be.
        ("http://outside.test/x", LINK),
        ("http://outside.test/", ROOT),
        // Cloud metadata and link-local addresses, even as page
        // requisites (which may come from any host).
        ("http://169.254.169.254/latest/meta-data/", EMBED),
        ("http://169.254.170.2/v2/credentials", ROOT),
        ("http://[fe80::1]/", EMBED),
        ("http://metadata.google.internal/computeMetadata/v1/", EMBED),
    ];
    let lines: Vec<String> = injected
        .iter()
        .map(|(url, hops)| line(url, hops, &via))
        .collect();
    inject(&redis.url(), "inj", &lines);
    node.finish(start);
    let urls = urls_of(&node.log);
    for (url, _) in &injected {
        assert!(!urls.iter().any(|u| u == url), "{url} was fetched");
    }
    assert_eq!(
        urls.len(),
        site.expected().len(),
        "the crawl went on to its end"
    );
    let err = std::fs::read_to_string(&node.stderr).unwrap();
    assert!(
        err.contains("refused"),
        "the node says what it refused: {err}"
    );
    // Each URL was refused in its own partition too, for what it is, not
    // only where it is not of the partition.
    for (url, _) in &injected {
        let named = format!("e.g. {url:?}: ");
        assert!(
            err.lines().any(|l| l.contains("refused")
                && l.contains(&named)
                && !l.ends_with("its host is in another partition")),
            "{url} refused in its own partition: {err}"
        );
    }
}

#[test]
fn a_node_warns_when_redis_may_evict_the_crawls_keys() {
    let Some(redis) = redis_with_or_skip("evicting", &["--maxmemory-policy", "allkeys-lru"], None)
    else {
        return;
    };
    let dir = scratch("evicting");
    let site = Site::new(50, 2);
    let start = Instant::now();
    let mut node = Node::start("n1", &redis.url(), "ev", &site, &dir, true, "2");
    node.finish(start);
    let err = std::fs::read_to_string(&node.stderr).unwrap();
    assert!(
        err.contains("maxmemory-policy is allkeys-lru"),
        "a warning names the policy: {err}"
    );
}

/// A free loopback port (bound, read, closed: another process may take
/// it meanwhile, as for the servers' own ports).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_node_crawls_through_redis_over_tls_and_checks_its_certificate() {
    use ringcrawl_site::tls::{TestCa, Validity};
    let dir = scratch("tls");
    let ca = TestCa::new("redis test CA").unwrap();
    let cert = ca.issue(&["127.0.0.1"], Validity::Current).unwrap();
    let file = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let (chain, key, ca_pem) = (
        file("cert.pem", cert.chain_pem()),
        file("key.pem", cert.key_pem()),
        file("ca.pem", ca.pem()),
    );
    let tls_port = free_port().to_string();
    let args = [
        "--tls-port",
        &tls_port,
        "--tls-cert-file",
        &chain,
        "--tls-key-file",
        &key,
        "--tls-ca-cert-file",
        &ca_pem,
        "--tls-auth-clients",
        "no",
    ];
    let Some(_redis) = redis_with_or_skip("tls", &args, None) else {
        return;
    };
    let site = Site::new(200, 4);
    let run = |node: &str, trust: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ringcrawl"));
        cmd.args(site.roots())
            .args(site.resolve_args())
            .args(["--cluster", &format!("rediss://127.0.0.1:{tls_port}/")])
            .args([
                "--crawl",
                "tls",
                "--node",
                node,
                "--ignore-robots",
                "--no-sitemaps",
                "-q",
            ])
            .arg("-o")
            .arg(dir.join("records.jsonl"))
            .env_remove("SSL_CERT_DIR");
        match trust {
            // rustls-native-certs reads the roots from here when set.
            Some(ca) => cmd.env("SSL_CERT_FILE", ca),
            None => cmd.env("SSL_CERT_FILE", dir.join("none.pem")),
        };
        let out = cmd.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // A server whose certificate no trusted authority signed: refused.
    std::fs::write(dir.join("none.pem"), "").unwrap();
    let (code, err) = run("untrusting", None);
    assert_eq!(code, Some(1), "{err}");
    // Trusted: the crawl runs over TLS to its end.
    let (code, err) = run("n1", Some(&ca_pem));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        urls_of(&dir.join("records.n1.jsonl")).len(),
        site.expected().len()
    );
}
