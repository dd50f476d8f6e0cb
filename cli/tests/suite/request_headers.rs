//! What the user adds to requests, as nginx sees it: `-H` headers on every
//! request to every host, an `Accept` that replaces the crawler's, and
//! `--auth` credentials that nginx's `auth_basic` accepts on their own
//! host and that never reach another host, a redirect's target included.
//! Bad values are one-line usage errors, and an error about `--auth`
//! never repeats the password.

use std::collections::BTreeSet;

use crate::cli::ringcrawl;
use crate::common::nginx::Nginx;
use crate::common::records_at;
use crate::common::tools;

/// The headers nginx logs for each request, `|`-separated: host, URI,
/// status, Basic user, Authorization, X-Team, Accept.
const HEADERS_LOG: &str =
    "$host|$request_uri|$status|$remote_user|$http_authorization|$http_x_team|$http_accept";

/// One line of the headers log.
#[derive(Debug)]
struct Seen {
    host: String,
    uri: String,
    status: u16,
    user: String,
    authorization: String,
    team: String,
    accept: String,
}

fn read_log(path: &std::path::Path) -> Vec<Seen> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| {
            let f: Vec<&str> = line.split('|').collect();
            Seen {
                host: f[0].to_string(),
                uri: f[1].to_string(),
                status: f[2].parse().unwrap(),
                user: f[3].to_string(),
                authorization: f[4].to_string(),
                team: f[5].to_string(),
                accept: f[6].to_string(),
            }
        })
        .collect()
}

#[test]
fn headers_go_to_every_host_and_credentials_only_to_theirs() {
    if !tools::require(
        "nginx",
        "headers_go_to_every_host_and_credentials_only_to_theirs",
    ) {
        return;
    }
    let dir = Nginx::dir();
    for (site, files) in [
        (
            "a",
            &[
                ("index.html", "<a href=/page.html>p</a> <a href=/away>b</a>"),
                ("page.html", "a page behind Basic auth"),
            ][..],
        ),
        (
            "b",
            &[
                ("index.html", "<a href=/other.html>o</a>"),
                ("other.html", "b's own page"),
                ("from-a.html", "where a.test sends its visitors"),
            ][..],
        ),
    ] {
        std::fs::create_dir_all(dir.join(site)).unwrap();
        for (name, body) in files {
            std::fs::write(dir.join(site).join(name), body).unwrap();
        }
    }
    // nginx reads {PLAIN} passwords from an htpasswd file (up to a ':',
    // so a password with one is tested by the unit tests only).
    std::fs::write(dir.join("htpasswd"), "ann:{PLAIN}s3cret\n").unwrap();
    let mut nginx = Nginx::start(dir.clone(), |port| {
        format!(
            "log_format headers '{HEADERS_LOG}';\n\
             server {{ listen 127.0.0.1:{port}; server_name a.test; root a;\n\
               access_log headers.log headers;\n\
               auth_basic \"a.test\"; auth_basic_user_file htpasswd;\n\
               location = /away {{ return 302 http://b.test:{port}/from-a.html; }} }}\n\
             server {{ listen 127.0.0.1:{port}; server_name b.test; root b;\n\
               access_log headers.log headers; }}\n"
        )
    });
    let port = nginx.port();
    let out = dir.join("records.jsonl");
    let (a, b) = (
        format!("http://a.test:{port}/"),
        format!("http://b.test:{port}/"),
    );
    let pins = [
        format!("a.test:{port}:127.0.0.1"),
        format!("b.test:{port}:127.0.0.1"),
    ];
    let auth = format!("a.test:{port}:ann:s3cret");
    let run = ringcrawl(&[
        &a,
        &b,
        "--resolve",
        &pins[0],
        "--resolve",
        &pins[1],
        "-H",
        "X-Team: crawl",
        "--header",
        "Accept: text/html",
        "--auth",
        &auth,
        "--no-sitemaps",
        "-q",
        "-o",
        out.to_str().unwrap(),
    ]);
    nginx.stop();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    let seen = read_log(&dir.join("headers.log"));
    let uris = |host: &str| -> BTreeSet<&str> {
        seen.iter()
            .filter(|s| s.host == host)
            .map(|s| s.uri.as_str())
            .collect()
    };
    assert!(
        uris("a.test").is_superset(&BTreeSet::from(["/", "/page.html", "/away"])),
        "{seen:#?}"
    );
    assert!(
        uris("b.test").is_superset(&BTreeSet::from(["/", "/other.html", "/from-a.html"])),
        "{seen:#?}"
    );
    for s in &seen {
        assert_eq!(
            (s.team.as_str(), s.accept.as_str()),
            ("crawl", "text/html"),
            "{s:?}"
        );
        if s.host == "a.test" {
            assert_ne!(s.status, 401, "{s:?}");
            assert_eq!(s.user, "ann", "{s:?}");
        } else {
            assert_eq!(s.authorization, "-", "credentials leaked to b.test: {s:?}");
        }
    }
    let a_origin = format!("http://a.test:{port}");
    let fetched = records_at(&out, &a_origin)
        .into_iter()
        .any(|(path, r)| path == "/page.html" && r["status"] == 200);
    assert!(fetched, "{a_origin}/page.html not fetched with 200");
}

#[test]
fn bad_headers_and_credentials_are_usage_errors_that_hide_the_password() {
    for (args, says) in [
        (
            vec!["-H", "Host: evil.test"],
            "--header: Host is the crawler's own header",
        ),
        (vec!["-H", "User-Agent: x"], "--user-agent"),
        (vec!["-H", "no colon"], "expected 'Name: value'"),
        (vec!["-H", "Bad Name: x"], "is not a header name"),
        (vec!["--auth", "a.test:s3cret"], "HOST[:PORT]:USER:PASSWORD"),
        (vec!["--auth", "a b:ann:s3cret"], "--auth"),
        (
            vec!["--auth", "[::1:ann:s3cret"],
            "HOST[:PORT]:USER:PASSWORD",
        ),
    ] {
        let mut argv = args.clone();
        argv.push("http://example.test/");
        let run = ringcrawl(&argv);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!stderr.contains("s3cret"), "{args:?}: {stderr}");
    }
}
