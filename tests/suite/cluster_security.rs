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
