//! Cookies against nginx, as its access log sees them: off by default;
//! with `--cookies` a cookie a host sets comes back to that host only,
//! a Domain that is a public suffix is refused, a page that sets
//! hundreds is cut at the domain's cap, `Max-Age=0` deletes, the
//! Netscape file is read at the start and `--save-cookies` writes it at
//! the end; a file that is no cookies file is a one-line error.

use crate::cli::ringcrawl;
use crate::common::nginx::Nginx;
use crate::common::tools;

/// Host, URI and Cookie header of each request, `|`-separated.
const COOKIE_LOG: &str = "$host|$request_uri|$http_cookie";

fn read_log(path: &std::path::Path) -> Vec<(String, String, String)> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| {
            let f: Vec<&str> = line.splitn(3, '|').collect();
            let cookie = if f[2] == "-" { "" } else { f[2] };
            (f[0].to_string(), f[1].to_string(), cookie.to_string())
        })
        .collect()
}

/// nginx for a.test (which sets cookies) and b.test (which sets none).
fn sites() -> Nginx {
    let dir = Nginx::dir();
    for (site, files) in [
        (
            "a",
            &[
                ("index.html", "<a href=/page.html>p</a>"),
                ("page.html", "<a href=/monster.html>m</a>"),
                ("monster.html", "<a href=/after.html>a</a>"),
                ("after.html", "the end"),
            ][..],
        ),
        (
            "b",
            &[
                ("index.html", "<a href=/other.html>o</a>"),
                ("other.html", "b"),
            ][..],
        ),
    ] {
        std::fs::create_dir_all(dir.join(site)).unwrap();
        for (name, body) in files {
            std::fs::write(dir.join(site).join(name), body).unwrap();
        }
    }
    let monster: String = (0..120)
        .map(|i| format!("add_header Set-Cookie \"c{i}=v\";\n"))
        .collect();
    Nginx::start(dir, move |port| {
        format!(
            "log_format cookies '{COOKIE_LOG}';\n\
             server {{ listen 127.0.0.1:{port}; server_name a.test; root a;\n\
               access_log cookies.log cookies;\n\
               location = /index.html {{ add_header Set-Cookie \"session=abc; Path=/\";\n\
                 add_header Set-Cookie \"temp=1; Path=/\";\n\
                 add_header Set-Cookie \"steal=1; Domain=test; Path=/\"; }}\n\
               location = /page.html {{ add_header Set-Cookie \"temp=; Max-Age=0; Path=/\"; }}\n\
               location = /monster.html {{ {monster} }} }}\n\
             server {{ listen 127.0.0.1:{port}; server_name b.test; root b;\n\
               access_log cookies.log cookies; }}\n"
        )
    })
}

/// A crawl of both sites with `extra` flags, quiet unless `loud`.
fn crawl_with(nginx: &Nginx, extra: &[&str], loud: bool) -> std::process::Output {
    let port = nginx.port();
    let roots = [
        format!("http://a.test:{port}/"),
        format!("http://b.test:{port}/"),
    ];
    let pins = [
        format!("a.test:{port}:127.0.0.1"),
        format!("b.test:{port}:127.0.0.1"),
    ];
    let mut args = vec![
        roots[0].as_str(),
        &roots[1],
        "--resolve",
        &pins[0],
        "--resolve",
        &pins[1],
        "--no-sitemaps",
    ];
    if !loud {
        args.push("-q");
    }
    args.extend_from_slice(extra);
    ringcrawl(&args)
}

fn crawl(nginx: &Nginx, extra: &[&str]) -> std::process::Output {
    crawl_with(nginx, extra, false)
}

fn cookie_of<'a>(log: &'a [(String, String, String)], host: &str, uri: &str) -> &'a str {
    &log.iter()
        .find(|(h, u, _)| h == host && u == uri)
        .unwrap_or_else(|| panic!("no request of {host}{uri}: {log:#?}"))
        .2
}

#[test]
fn cookies_go_back_to_their_own_site_within_their_caps_and_survive_in_the_file() {
    let test = "cookies_go_back_to_their_own_site";
    if !tools::require("nginx", test) {
        return;
    }
    let mut nginx = sites();
    let dir = nginx.path().to_path_buf();
    // b.test's cookie from an earlier crawl: a host-only one, and one
    // for a.test's subdomains too.
    let file = dir.join("cookies.txt");
    std::fs::write(
        &file,
        "# Netscape HTTP Cookie File\n\
         b.test\tFALSE\t/\tFALSE\t0\tloaded\tyes\n\
         .a.test\tTRUE\t/\tFALSE\t4102444800\twide\t1\n",
    )
    .unwrap();
    let saved = dir.join("saved.txt");
    let run = crawl(
        &nginx,
        &[
            "--cookies",
            file.to_str().unwrap(),
            "--save-cookies",
            saved.to_str().unwrap(),
        ],
    );
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    nginx.stop();
    let log = read_log(&dir.join("cookies.log"));
    assert_eq!(cookie_of(&log, "a.test", "/"), "wide=1");
    // Set by a.test's root: back on its next page; the public suffix's
    // one never kept.
    let page = cookie_of(&log, "a.test", "/page.html");
    for want in ["session=abc", "temp=1", "wide=1"] {
        assert!(page.contains(want), "{page}");
    }
    assert!(!page.contains("steal"), "{page}");
    // Deleted by Max-Age=0.
    let monster = cookie_of(&log, "a.test", "/monster.html");
    assert!(!monster.contains("temp="), "{monster}");
    // The monster's 120 cut at the domain's 50 (session and what fits).
    let after = cookie_of(&log, "a.test", "/after.html");
    let pairs: Vec<&str> = after.split("; ").collect();
    assert_eq!(pairs.len(), 50, "{after}");
    assert!(
        pairs.contains(&"session=abc") && pairs.contains(&"wide=1"),
        "{after}"
    );
    // b.test: only its own loaded cookie, never a.test's.
    for (host, uri, cookie) in &log {
        if host == "b.test" {
            assert_eq!(cookie, "loaded=yes", "{uri}");
        }
    }
    let saved = std::fs::read_to_string(&saved).unwrap();
    assert!(
        saved.contains("a.test\tFALSE\t/\tFALSE\t0\tsession\tabc\n"),
        "{saved}"
    );
    assert!(
        saved.contains("b.test\tFALSE\t/\tFALSE\t0\tloaded\tyes\n"),
        "{saved}"
    );
    assert!(
        saved.contains(".a.test\tTRUE\t/\tFALSE\t4102444800\twide\t1\n"),
        "{saved}"
    );
    assert!(
        !saved.contains("temp") && !saved.contains("steal"),
        "{saved}"
    );
}

#[test]
fn without_the_flag_no_cookie_is_sent_and_a_damaged_file_is_a_one_line_error() {
    let test = "without_the_flag_no_cookie_is_sent";
    if !tools::require("nginx", test) {
        return;
    }
    let mut nginx = sites();
    let dir = nginx.path().to_path_buf();
    let run = crawl(&nginx, &[]);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let bad = dir.join("bad.txt");
    std::fs::write(&bad, "a.test\tTRUE\t/\n").unwrap();
    let refused = crawl(&nginx, &["--cookies", bad.to_str().unwrap()]);
    nginx.stop();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--cookies") && stderr.contains("line 1"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    let log = read_log(&dir.join("cookies.log"));
    assert!(log.len() >= 6, "{log:#?}");
    assert!(
        log.iter().all(|(_, _, cookie)| cookie.is_empty()),
        "{log:#?}"
    );
}

#[test]
fn a_jar_at_its_memory_refuses_more_cookies_says_so_and_a_file_too_large_is_refused() {
    let test = "a_jar_at_its_memory_refuses_more_cookies";
    if !tools::require("nginx", test) {
        return;
    }
    let mut nginx = sites();
    let dir = nginx.path().to_path_buf();
    // 8 KiB: a.test's domain and some fifteen of its cookies, not the
    // monster's 50.
    let limit = 8192;
    let saved = dir.join("saved.txt");
    let run = crawl_with(
        &nginx,
        &[
            "--save-cookies",
            saved.to_str().unwrap(),
            "--cookie-memory",
            "8K",
        ],
        true,
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    let after = cookie_of(&read_log(&dir.join("cookies.log")), "a.test", "/after.html")
        .split("; ")
        .count();
    assert!((5..50).contains(&after), "{after} cookies sent: {stderr}");
    // "... past --cookie-memory (8192 bytes; N cookies held, B bytes)"
    let said = stderr
        .lines()
        .find(|l| l.contains("cookies refused") && l.contains("--cookie-memory (8192 bytes"))
        .unwrap_or_else(|| panic!("no refusal said: {stderr}"));
    let held: usize = said
        .rsplit("held, ")
        .next()
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{said}"));
    assert!(held <= limit && held > limit / 2, "{said}");
    let file = dir.join("two.txt");
    std::fs::write(
        &file,
        "a.test\tFALSE\t/\tFALSE\t0\tn\tv\nb.test\tFALSE\t/\tFALSE\t0\tn\tv\n",
    )
    .unwrap();
    let refused = crawl(
        &nginx,
        &["--cookies", file.to_str().unwrap(), "--cookie-memory", "2K"],
    );
    nginx.stop();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--cookie-memory"), "{stderr}");
}
