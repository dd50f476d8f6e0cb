//! Connection reuse: pages share keep-alive connections when the server keeps
//! them open, a connection the server closed while idle is replaced without
//! costing a try, an answer with bytes after its body ends its connection,
//! and `--no-keep-alive` opens one connection per page.
//!
//! The server here is a small blocking one on std::net (the test server of
//! `ringcrawl::site` closes after every answer, as HTTP/1.0 servers do).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::{by_url, crawl, settings, Outcome};

const PAGES: usize = 30;

#[derive(Clone, Copy)]
enum Mode {
    /// Every answer says keep-alive and the connection stays open.
    KeepAlive,
    /// HTTP/1.1 answers, chunked (as a server that compresses on the fly
    /// sends them), kept alive by default: no `Connection` header.
    Chunked,
    /// The same, with bytes after the last chunk.
    ChunkedTrailingBytes,
    /// HTTP/1.0 answers that say keep-alive and come chunked anyway.
    Http10Chunked,
    /// HTTP/1.1 chunked answers with a Content-Length too (its value
    /// right).
    ChunkedWithLength,
    /// Every answer says keep-alive, then the server closes anyway.
    ClosesAfterEach,
    /// Every answer says keep-alive and has bytes after its body.
    TrailingBytes,
    /// The first answer on a connection says keep-alive; the second request
    /// on it is never answered.
    SilentAfterFirst,
    /// Every answer says keep-alive; 20 ms after it, more body bytes than
    /// its Content-Length said arrive in a segment of their own.
    LateExcessBody,
    /// Every answer says keep-alive; 20 ms after it the server sends an
    /// idle `408 Request Timeout` and closes, as servers do to idle
    /// keep-alive connections.
    LateTimeout408,
    /// Every answer says keep-alive; 20 ms after it a whole second answer
    /// follows, that nobody asked for, unless the client has asked again
    /// by then (a starved server thread: the crawler could not tell the
    /// forged answer from the one it asked for, so that round is not one
    /// of this case's).
    LateSecondAnswer,
}

/// What the server saw.
#[derive(Default)]
struct Seen {
    connections: AtomicUsize,
    requests: AtomicUsize,
    /// `Connection` header of every request.
    connection_headers: Mutex<Vec<String>>,
    /// Answers nobody asked for, sent on a connection with no request
    /// waiting.
    unasked: AtomicUsize,
}

impl Seen {
    /// Every request's `Connection` header was `value`.
    fn every_request_said(&self, value: &str) -> bool {
        self.connection_headers
            .lock()
            .unwrap()
            .iter()
            .all(|h| h == value)
    }
}

fn body_of(path: &str) -> String {
    if path == "/" {
        let links: String = (0..PAGES)
            .map(|i| format!("<a href=\"/p/{i}\">{i}</a>\n"))
            .collect();
        format!("<html><body>{links}</body></html>")
    } else {
        format!("<html><body>page {path}</body></html>")
    }
}

fn serve(mode: Mode) -> (SocketAddr, Arc<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let seen = Arc::new(Seen::default());
    let counted = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            counted.connections.fetch_add(1, Ordering::SeqCst);
            let seen = counted.clone();
            std::thread::spawn(move || answer(stream, mode, &seen));
        }
    });
    (addr, seen)
}

/// Answer requests on one connection until the client closes it (or, in
/// `ClosesAfterEach`, after the first).
fn answer(mut stream: TcpStream, mode: Mode, seen: &Seen) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut pending = Vec::new();
    let mut buf = [0u8; 4096];
    let mut answered = 0;
    loop {
        let end = loop {
            if let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                break end + 4;
            }
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => pending.extend_from_slice(&buf[..n]),
            }
        };
        if answered == 1 && matches!(mode, Mode::SilentAfterFirst) {
            std::thread::sleep(Duration::from_secs(3));
            return;
        }
        answered += 1;
        let request = String::from_utf8_lossy(&pending[..end]).into_owned();
        pending.drain(..end);
        seen.requests.fetch_add(1, Ordering::SeqCst);
        let header = request
            .lines()
            .find_map(|l| l.strip_prefix("Connection: "))
            .unwrap_or("")
            .to_string();
        seen.connection_headers.lock().unwrap().push(header);
        let path = request.split(' ').nth(1).unwrap_or("/").to_string();
        let body = body_of(&path);
        let mut reply = match mode {
            Mode::Chunked
            | Mode::ChunkedTrailingBytes
            | Mode::Http10Chunked
            | Mode::ChunkedWithLength => {
                let (a, b) = body.split_at(body.len() / 2);
                let chunks = format!(
                    "{:x}\r\n{a}\r\n{:x};ext=1\r\n{b}\r\n0\r\n\r\n",
                    a.len(),
                    b.len()
                );
                let (version, extra) = match mode {
                    Mode::Http10Chunked => ("1.0", "Connection: keep-alive\r\n".to_string()),
                    Mode::ChunkedWithLength => {
                        ("1.1", format!("Content-Length: {}\r\n", chunks.len()))
                    }
                    _ => ("1.1", String::new()),
                };
                format!(
                    "HTTP/{version} 200 OK\r\nContent-Type: text/html\r\n{extra}Transfer-Encoding: chunked\r\n\r\n{chunks}"
                )
            }
            _ => format!(
                "HTTP/1.0 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: keep-alive\r\n\r\n{body}",
                body.len()
            ),
        };
        if let Mode::TrailingBytes | Mode::ChunkedTrailingBytes = mode {
            reply.push_str("HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nforged");
        }
        if stream.write_all(reply.as_bytes()).is_err() {
            return;
        }
        let late: &[u8] = match mode {
            Mode::LateExcessBody => b"</html>\n<!-- and more -->",
            Mode::LateTimeout408 => b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
            Mode::LateSecondAnswer => b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\nContent-Length: 6\r\nConnection: keep-alive\r\n\r\nforged",
            _ => b"",
        };
        if !late.is_empty() {
            std::thread::sleep(Duration::from_millis(20));
            let unasked = matches!(mode, Mode::LateSecondAnswer);
            if unasked && (!pending.is_empty() || asked_again(&stream)) {
                continue;
            }
            if stream.write_all(late).is_err() {
                return;
            }
            if unasked {
                seen.unasked.fetch_add(1, Ordering::SeqCst);
            }
        }
        if matches!(mode, Mode::ClosesAfterEach | Mode::LateTimeout408) {
            return;
        }
    }
}

/// Whether the client's next request (or its close) is already here.
fn asked_again(stream: &TcpStream) -> bool {
    let mut byte = [0u8; 1];
    if stream.set_nonblocking(true).is_err() {
        return true;
    }
    let waiting =
        !matches!(stream.peek(&mut byte), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock);
    let _ = stream.set_nonblocking(false);
    waiting
}

fn crawl_with(mode: Mode, keep_alive: bool) -> (Arc<Seen>, Outcome) {
    let (addr, seen) = serve(mode);
    let mut config = settings(&[format!("http://{addr}/")]);
    config = config.max_tasks(4);
    config = config.per_host(4);
    config = config.keep_alive(keep_alive);
    let outcome = crawl(config);
    (seen, outcome)
}

/// Every page once, complete and its own, first try.
fn assert_every_page_is_right(outcome: &Outcome) {
    let records = by_url(outcome);
    assert_eq!(records.len(), PAGES + 1);
    for (url, record) in &records {
        let path = url.split_once("//").unwrap().1;
        let path = &path[path.find('/').unwrap()..];
        assert_eq!(record.status, Some(200), "{url}: {record:?}");
        assert_eq!(record.error_kind, None, "{url}");
        assert_eq!(record.tries, 1, "{url}");
        assert!(!record.truncated, "{url}");
        assert_eq!(record.size, body_of(path).len() as u64, "{url}");
    }
}

#[test]
fn pages_share_connections_when_the_server_keeps_them_alive() {
    let (seen, outcome) = crawl_with(Mode::KeepAlive, true);
    assert_every_page_is_right(&outcome);
    let connections = seen.connections.load(Ordering::SeqCst);
    assert_eq!(seen.requests.load(Ordering::SeqCst), PAGES + 1);
    // At most one connection per fetch slot on each shard.
    assert!(
        connections <= 8,
        "{connections} connections for {} requests",
        PAGES + 1
    );
    assert!(seen.every_request_said("keep-alive"));
}

#[test]
fn chunked_http11_answers_share_connections_too() {
    let (seen, outcome) = crawl_with(Mode::Chunked, true);
    assert_every_page_is_right(&outcome);
    let connections = seen.connections.load(Ordering::SeqCst);
    assert!(
        connections <= 8,
        "{connections} connections for {} requests",
        PAGES + 1
    );
}

#[test]
fn bytes_after_the_last_chunk_end_the_connection() {
    let (seen, outcome) = crawl_with(Mode::ChunkedTrailingBytes, true);
    assert_every_page_is_right(&outcome);
    assert_eq!(seen.connections.load(Ordering::SeqCst), PAGES + 1);
}

/// RFC 9112 §6.1: an HTTP/1.0 answer with a Transfer-Encoding is read,
/// and its connection closed after it.
#[test]
fn an_http10_answer_with_transfer_encoding_ends_its_connection() {
    let (seen, outcome) = crawl_with(Mode::Http10Chunked, true);
    assert_every_page_is_right(&outcome);
    assert_eq!(seen.connections.load(Ordering::SeqCst), PAGES + 1);
}

/// RFC 9112 §6.3: Transfer-Encoding and Content-Length together may be a
/// smuggling attempt: the answer is read by its chunks, and its
/// connection closed after it.
#[test]
fn an_answer_with_transfer_encoding_and_content_length_ends_its_connection() {
    let (seen, outcome) = crawl_with(Mode::ChunkedWithLength, true);
    assert_every_page_is_right(&outcome);
    assert_eq!(seen.connections.load(Ordering::SeqCst), PAGES + 1);
}

#[test]
fn a_connection_closed_while_idle_is_replaced_without_a_try() {
    let (seen, outcome) = crawl_with(Mode::ClosesAfterEach, true);
    assert_every_page_is_right(&outcome);
    assert_eq!(seen.requests.load(Ordering::SeqCst), PAGES + 1);
}

#[test]
fn bytes_after_the_body_end_the_connection() {
    let (seen, outcome) = crawl_with(Mode::TrailingBytes, true);
    assert_every_page_is_right(&outcome);
    // A connection with more bytes than the answer said is never reused, so
    // the forged answer is never read as another page's.
    assert_eq!(seen.connections.load(Ordering::SeqCst), PAGES + 1);
}

#[test]
fn a_reused_connection_that_goes_silent_is_a_read_timeout_not_a_reconnect() {
    let (addr, _seen) = serve(Mode::SilentAfterFirst);
    let mut config = settings(&[format!("http://{addr}/p/0"), format!("http://{addr}/p/1")]);
    config = config.cores(1);
    config = config.max_tasks(1);
    config = config.per_host(1);
    config = config.read_timeout(Duration::from_millis(300));
    let outcome = crawl(config);
    let records = by_url(&outcome);
    let kinds: Vec<_> = records.values().map(|r| r.error_kind).collect();
    // One root is answered; the other goes out on the same connection and
    // waits in vain: the server's silence is recorded, not hidden by a new
    // connection that it would answer.
    assert_eq!(records.len(), 2, "{records:?}");
    assert!(kinds.contains(&None), "{kinds:?}");
    assert!(
        kinds.contains(&Some(ringcrawl::ErrorKind::ReadTimeout)),
        "{kinds:?}"
    );
}

/// Bytes that arrive after an answer that ended at its Content-Length are
/// not the next request's answer: the connection is dropped before reuse
/// if they are already there, and if they come after the next request was
/// sent (unparseable as a head), that request goes again on a fresh
/// connection without costing a try.
#[test]
fn late_excess_body_bytes_are_never_read_as_the_next_answer() {
    let (_, outcome) = crawl_with(Mode::LateExcessBody, true);
    assert_every_page_is_right(&outcome);
}

/// A server's idle 408 is not the answer to a page: the connection it
/// came on is stale, whether the 408 was waiting before the request went
/// out (requests 50 ms apart here) or came after it.
#[test]
fn an_idle_408_is_a_stale_connection_not_an_answer() {
    for delay_ms in [0, 50] {
        let (addr, _seen) = serve(Mode::LateTimeout408);
        let mut config = settings(&[format!("http://{addr}/")]);
        config = config.max_tasks(4);
        config = config.per_host(1);
        config = config.delay(Duration::from_millis(delay_ms));
        assert_every_page_is_right(&crawl(config));
    }
}

/// A whole second answer 20 ms after the first, before the connection is
/// used again (requests 150 ms apart; a server thread so late that the
/// next request is already there sends none that round, since an answer
/// after the next request is that request's to any client): seen waiting
/// on the idle connection, which is dropped, never read as the next page.
#[test]
fn an_unasked_second_answer_waiting_on_an_idle_connection_drops_it() {
    let (addr, seen) = serve(Mode::LateSecondAnswer);
    let mut config = settings(&[format!("http://{addr}/")]);
    config = config.max_tasks(4);
    config = config.per_host(1);
    config = config.delay(Duration::from_millis(150));
    assert_every_page_is_right(&crawl(config));
    assert_eq!(seen.requests.load(Ordering::SeqCst), PAGES + 1);
    assert!(
        seen.unasked.load(Ordering::SeqCst) > 0,
        "no unasked answer was sent"
    );
}

#[test]
fn no_keep_alive_opens_one_connection_per_page() {
    let (seen, outcome) = crawl_with(Mode::KeepAlive, false);
    assert_every_page_is_right(&outcome);
    assert_eq!(seen.connections.load(Ordering::SeqCst), PAGES + 1);
    assert!(seen.every_request_said("close"));
}
