//! Where the records go, as a user of `-o -` meets it: a reader that is
//! slow costs no fetch its deadline (shards never wait on the output), and
//! a reader that goes away (`ringcrawl -o - | head`) ends the crawl quietly
//! and at once.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ringcrawl_site::server::{Reply, Request, Server, Step};

/// `/` links to `/p/0` .. `/p/{pages-1}`; every page is 256 KiB sent in
/// four parts 100 ms apart, so a fetch reads on after its first read, and
/// more than one read's worth comes at a time.
fn slow_big_pages(pages: usize) -> Server {
    Server::start(Arc::new(move |req: &Request| {
        let (body, media) = if req.path == "/" {
            let links: String = (0..pages)
                .map(|i| format!("<a href=\"/p/{i}\">{i}</a>\n"))
                .collect();
            (links.into_bytes(), "text/html")
        } else {
            (vec![b'x'; 256 << 10], "text/plain")
        };
        let head = format!(
            "HTTP/1.0 200 OK\r\nContent-Type: {media}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        let mut steps = vec![Step::Write(head.into_bytes())];
        for part in body.chunks(body.len().div_ceil(4)) {
            steps.push(Step::Write(part.to_vec()));
            steps.push(Step::Sleep(Duration::from_millis(100)));
        }
        Reply::Script(steps)
    }))
    .unwrap()
}

fn crawler(root: &str, extra: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ringcrawl"));
    cmd.args(["-q", "--ignore-robots", "-o", "-"])
        .args(extra)
        .arg(root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// The reader of `-o -` reads nothing for 4 s while fetches with a 2 s
/// deadline (each takes 0.4 s) run: none of them may fail for it, and every
/// record arrives.
#[test]
fn a_slow_reader_of_the_records_costs_no_fetch_its_deadline() {
    const PAGES: usize = 600;
    let server = slow_big_pages(PAGES);
    let root = format!("http://{}/", server.addr());
    let mut child = crawler(
        &root,
        &["--timeout", "2", "--max-tasks", "100", "--per-host", "100"],
    )
    .spawn()
    .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    std::thread::sleep(Duration::from_secs(4));
    let mut text = String::new();
    stdout.read_to_string(&mut text).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("whole JSON lines"))
        .collect();
    assert_eq!(records.len(), PAGES + 1);
    let failed: Vec<&serde_json::Value> = records
        .iter()
        .filter(|r| !r["error_kind"].is_null())
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {} pages failed while the reader was slow, e.g. {}",
        failed.len(),
        records.len(),
        failed[0]
    );
}

/// `ringcrawl -o - | head -1`: once the reader is gone the crawl ends at
/// once, exit code 0 and nothing on stderr, as other tools in a pipe do.
#[test]
fn a_reader_that_goes_away_ends_the_crawl_quietly_and_at_once() {
    // 2,000 pages of 20 ms each, 4 at a time: ten seconds of crawling.
    let server = Server::start(Arc::new(|req: &Request| {
        let reply = if req.path == "/" {
            Reply::html(
                200,
                (0..2000)
                    .map(|i| format!("<a href=\"/p/{i}\">{i}</a>\n"))
                    .collect::<String>(),
            )
        } else {
            Reply::html(200, "<html>page</html>")
        };
        reply.delayed(Duration::from_millis(20))
    }))
    .unwrap();
    let root = format!("http://{}/", server.addr());
    let started = Instant::now();
    let mut child = crawler(&root, &["--max-tasks", "4", "--per-host", "4"])
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with('{'), "a record: {first:?}");
    // The reader is gone (the pipe's only read end was just dropped).
    let closed = Instant::now();
    let out = child.wait_with_output().unwrap();
    let took = closed.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        took < Duration::from_secs(2),
        "the crawl went on for {took:?} after its reader left ({:?} in all)",
        started.elapsed()
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.trim().is_empty(), "quietly: {stderr}");
}
