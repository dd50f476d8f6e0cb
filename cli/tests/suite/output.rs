//! Where the records go, as a user of `-o` meets it: a reader that is slow
//! costs no fetch its deadline (shards never wait on the output) and holds
//! the crawl back instead of filling memory; a reader that goes away
//! (`ringcrawl -o - | head`) ends the crawl quietly and at once; an output
//! that fails (a full disk) ends it at once with the error.

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
    // The site's pages only: its server answers every path, a guessed
    // /sitemap.xml too.
    cmd.args(["-q", "--ignore-robots", "--no-sitemaps", "-o", "-"])
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

/// `-o /dev/full`: the first write fails with ENOSPC; the crawl stops at
/// once (every record after would be lost) and says why in one line.
#[test]
fn an_output_that_fails_ends_the_crawl_at_once_with_the_error() {
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
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_ringcrawl"))
        .args([
            "-q",
            "--ignore-robots",
            "--max-tasks",
            "4",
            "--per-host",
            "4",
            "-o",
            "/dev/full",
        ])
        .arg(format!("http://{}/", server.addr()))
        .output()
        .unwrap();
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        took < Duration::from_secs(3),
        "ran {took:?} writing nothing"
    );
}

/// While the writer cannot write (the reader of a FIFO reads nothing for
/// a while), shards stop starting fetches once its backlog is full, and go
/// on when it drains; nothing is lost.
#[test]
fn a_writer_that_falls_behind_holds_the_crawl_back() {
    const PAGES: usize = 3000;
    let server = Server::start(Arc::new(|req: &Request| {
        if req.path == "/" {
            Reply::html(
                200,
                (0..PAGES)
                    .map(|i| format!("<a href=\"/p/{i}\">{i}</a>\n"))
                    .collect::<String>(),
            )
        } else {
            Reply::html(200, "<html>page</html>")
        }
    }))
    .unwrap();
    let dir = std::env::temp_dir().join(format!("ringcrawl-fifo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("records");
    let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo(3) with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);

    let release = Arc::new(std::sync::Barrier::new(2));
    let reader = std::thread::spawn({
        let (fifo, release) = (fifo.clone(), release.clone());
        move || {
            let mut file = std::fs::File::open(&fifo).unwrap();
            release.wait();
            let mut text = String::new();
            file.read_to_string(&mut text).unwrap();
            text
        }
    });
    let crawl = std::thread::spawn({
        let root = format!("http://{}/", server.addr());
        move || {
            ringcrawl::Crawler::builder()
                .root(root)
                .cores(2)
                .max_tasks(8)
                .per_host(8)
                .obey_robots(false)
                .sitemaps(false)
                .jsonl(&fifo)
                .jsonl_backlog(32 << 10)
                .build()
                .unwrap()
                .run()
                .unwrap()
        }
    });
    // Wait until no fetch has started for half a second.
    let mut hits = server.total_hits();
    let waited = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let now = server.total_hits();
        if now == hits || waited.elapsed() > Duration::from_secs(20) {
            break;
        }
        hits = now;
    }
    assert!(
        hits < PAGES / 2,
        "{hits} of {} pages fetched with nobody reading the records",
        PAGES + 1
    );
    release.wait();
    let text = reader.join().unwrap();
    let outcome = crawl.join().unwrap();
    assert!(!outcome.aborted() && outcome.output_error().is_none());
    assert_eq!(text.lines().count(), PAGES + 1, "every record, once");
    assert_eq!(server.total_hits(), PAGES + 1);
    std::fs::remove_dir_all(&dir).ok();
}
