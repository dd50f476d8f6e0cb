//! The server's scenarios, over real sockets: the synthetic site, hang-ups,
//! scripts and resets, attempts and bad requests, stopping and dropping,
//! many connections, delays, several threads and addresses, keep-alive;
//! and the response encoding.
//!
//! What this is not: a test of the crawler (the crawler's suite in `tests/`
//! runs it against this server).

use super::reply::encode;
use super::request::strip_port;
use super::*;
use crate::synth::{SiteSpec, SynthSite};
use std::io::{Read, Write};
use std::net::TcpStream as StdStream;
use std::time::{Duration, Instant};

/// Sends `request` and reads until EOF (or error); returns the bytes and
/// whether the read ended in an error (e.g. a reset).
fn exchange(addr: SocketAddr, request: &[u8]) -> (Vec<u8>, bool) {
    let mut s = StdStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(request).unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return (out, false),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(_) => return (out, true),
        }
    }
}

fn get(addr: SocketAddr, path: &str, host: &str) -> (Vec<u8>, bool) {
    let req = format!("GET {path} HTTP/1.0\r\nHost: {host}\r\nUser-Agent: test\r\n\r\n");
    exchange(addr, req.as_bytes())
}

fn split(resp: &[u8]) -> (String, Vec<u8>) {
    let end = resp.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    (
        String::from_utf8(resp[..end].to_vec()).unwrap(),
        resp[end + 4..].to_vec(),
    )
}

fn scripted() -> Handler {
    Arc::new(|req: &Request| match req.path.as_str() {
        "/hangup" => Reply::Hangup,
        "/slow" => Reply::Script(vec![
            Step::Sleep(Duration::from_millis(100)),
            Step::Write(b"HTTP/1.0 200 OK\r\n\r\npartial".to_vec()),
            Step::Sleep(Duration::from_millis(50)),
            Step::Write(b" body".to_vec()),
        ]),
        "/forever" => Reply::Script(vec![
            Step::Write(b"HTTP/1.0 200 OK\r\n".to_vec()),
            Step::Sleep(Duration::from_secs(3600)),
        ]),
        "/reset" => Reply::Script(vec![
            Step::Write(b"HTTP/1.0 200 OK\r\n".to_vec()),
            Step::Sleep(Duration::from_millis(20)),
            Step::Reset,
        ]),
        "/attempt" => Reply::html(200, format!("{} {}", req.host, req.attempt)),
        "/panic" => panic!("handler panic (expected by a test)"),
        _ => Reply::not_found(),
    })
}

#[test]
fn serves_the_synthetic_site() {
    let site = Arc::new(SynthSite::new(SiteSpec::default()));
    let server = Server::start(site.clone().handler()).unwrap();
    let authority = format!("127.0.0.1:{}", server.port());
    let (resp, err) = get(server.addr(), "/", &authority);
    assert!(!err);
    let (head, body) = split(&resp);
    assert!(head.starts_with("HTTP/1.0 200 OK\r\n"), "{head}");
    assert!(head.contains(&format!("Content-Length: {}", body.len())));
    assert!(head.contains("Content-Type: text/html"));
    let expected = site.page_html(0, &authority).unwrap();
    assert_eq!(String::from_utf8(body).unwrap(), expected);
    assert!(expected.starts_with("<!DOCTYPE html>"));

    let (resp, _) = get(server.addr(), "/r/0", "127.0.0.1");
    let (head, _) = split(&resp);
    assert!(head.starts_with("HTTP/1.0 301 Moved Permanently\r\n"));
    assert!(head.contains("\r\nLocation: /p/1.html"));
    let (resp, _) = get(server.addr(), "/missing/0.html", "127.0.0.1");
    assert!(resp.starts_with(b"HTTP/1.0 404 Not Found\r\n"));

    assert_eq!(server.hits("127.0.0.1", "/"), 1);
    assert_eq!(server.hits("127.0.0.1", "/r/0"), 1);
    assert_eq!(server.total_hits(), 3);
    server.stop();
}

#[test]
fn hangup_script_attempts_and_errors() {
    let server = Server::start(scripted()).unwrap();
    let addr = server.addr();

    let (resp, err) = get(addr, "/hangup", "a.test");
    assert!(resp.is_empty() && !err, "{resp:?} {err}");

    let start = Instant::now();
    let (resp, err) = get(addr, "/slow", "a.test");
    assert!(!err);
    assert_eq!(resp, b"HTTP/1.0 200 OK\r\n\r\npartial body");
    assert!(start.elapsed() >= Duration::from_millis(150));

    let (resp, err) = get(addr, "/reset", "a.test");
    assert!(err, "expected a reset, got {resp:?}");

    for n in 1..=3 {
        let (resp, _) = get(addr, "/attempt", "B.Test:8080");
        let (_, body) = split(&resp);
        assert_eq!(body, format!("b.test {n}").as_bytes());
    }
    assert_eq!(server.hits("b.test", "/attempt"), 3);
    assert_eq!(server.hits("B.TEST", "/attempt"), 3);
    assert_eq!(server.hits("a.test", "/hangup"), 1);

    // No Host header: host "".
    let (resp, _) = exchange(addr, b"GET /attempt HTTP/1.0\r\n\r\n");
    assert!(
        resp.ends_with(b"\r\n\r\n 1"),
        "{:?}",
        String::from_utf8_lossy(&resp)
    );

    // Malformed request and oversized head: 400, not counted.
    let total = server.total_hits();
    let (resp, _) = exchange(addr, b"GET\x01 / HTTP/1.0\r\n\r\n");
    assert!(resp.starts_with(b"HTTP/1.0 400 "));
    let big = format!("GET / HTTP/1.0\r\nX: {}\r\n\r\n", "x".repeat(20_000));
    let (resp, _) = exchange(addr, big.as_bytes());
    assert!(resp.starts_with(b"HTTP/1.0 400 "));
    assert_eq!(server.total_hits(), total);

    // A panicking handler gives a 500 and the server keeps going.
    let (resp, _) = get(addr, "/panic", "a.test");
    assert!(resp.starts_with(b"HTTP/1.0 500 "));
    let (resp, _) = get(addr, "/nothing", "a.test");
    assert!(resp.starts_with(b"HTTP/1.0 404 "));

    // A request with a body: the response still arrives intact.
    let (resp, err) = exchange(
        addr,
        b"POST /attempt HTTP/1.0\r\nHost: c.test\r\nContent-Length: 5\r\n\r\nhello",
    );
    assert!(!err && resp.ends_with(b"c.test 1"));
    server.stop();
}

#[test]
fn stop_is_prompt_with_a_sleeping_connection() {
    let server = Server::start(scripted()).unwrap();
    let addr = server.addr();
    let mut client = StdStream::connect(addr).unwrap();
    client
        .write_all(b"GET /forever HTTP/1.0\r\nHost: x\r\n\r\n")
        .unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut buf = [0u8; 64];
    let n = client.read(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"HTTP/1.0 200 OK\r\n");
    let start = Instant::now();
    server.stop();
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    // The sleeping connection was closed (not leaked), and nothing
    // listens any more.
    let n = client.read(&mut buf);
    assert!(matches!(n, Ok(0)), "{n:?}");
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    assert!(StdStream::connect(addr).is_err());
}

#[test]
fn drop_stops_and_port_is_reusable() {
    let server = Server::start(scripted()).unwrap();
    let addr = server.addr();
    // A second server on the same port must fail, not share it.
    assert!(Server::start_on(addr, scripted()).is_err());
    drop(server);
    let again = Server::start_on(addr, scripted()).unwrap();
    let (resp, _) = get(addr, "/attempt", "z");
    assert!(resp.ends_with(b"z 1"));
    drop(again);
}

#[test]
fn many_concurrent_connections() {
    let site = Arc::new(SynthSite::new(SiteSpec {
        pages: 100,
        ..SiteSpec::default()
    }));
    let server = Server::start(site.handler()).unwrap();
    let addr = server.addr();
    // Open many connections before sending anything, then use them all.
    let mut conns: Vec<StdStream> = (0..256)
        .map(|_| StdStream::connect(addr).unwrap())
        .collect();
    for (i, c) in conns.iter_mut().enumerate() {
        let req = format!("GET /p/{}.html HTTP/1.0\r\nHost: h\r\n\r\n", i % 99 + 1);
        c.write_all(req.as_bytes()).unwrap();
    }
    for c in &mut conns {
        c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut out = Vec::new();
        c.read_to_end(&mut out).unwrap();
        assert!(out.starts_with(b"HTTP/1.0 200 OK\r\n"));
    }
    assert_eq!(server.total_hits(), 256);
}

#[test]
fn delayed_replies_wait_without_blocking_the_server() {
    let server = Server::start(Arc::new(|req: &Request| {
        let reply = match req.path.as_str() {
            "/gone" => Reply::Hangup,
            _ => Reply::html(200, "late"),
        };
        reply.delayed(Duration::from_millis(300))
    }))
    .unwrap();
    let addr = server.addr();
    let start = Instant::now();
    let clients: Vec<_> = (0..20)
        .map(|_| std::thread::spawn(move || get(addr, "/x", "d")))
        .collect();
    for c in clients {
        let (resp, err) = c.join().unwrap();
        assert!(!err && resp.starts_with(b"HTTP/1.0 200 OK\r\n") && resp.ends_with(b"late"));
    }
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_millis(2500),
        "{took:?}: delays overlap"
    );
    let start = Instant::now();
    let (resp, err) = get(addr, "/gone", "d");
    assert!(resp.is_empty() && !err);
    assert!(start.elapsed() >= Duration::from_millis(300));
}

#[test]
fn several_threads_and_addresses() {
    let addrs = [
        SocketAddr::from(([127, 0, 0, 1], 0)),
        SocketAddr::from(([127, 0, 0, 2], 0)),
    ];
    let server = Server::start_many(
        &addrs,
        3,
        Arc::new(|req: &Request| Reply::html(200, req.path.clone())),
    )
    .unwrap();
    assert_eq!(server.addrs().len(), 2);
    assert_eq!(server.addr(), server.addrs()[0]);
    for addr in server.addrs().to_vec() {
        assert_ne!(addr.port(), 0);
        let clients: Vec<_> = (0..50)
            .map(|i| std::thread::spawn(move || get(addr, &format!("/{i}"), "t")))
            .collect();
        for (i, c) in clients.into_iter().enumerate() {
            let (resp, _) = c.join().unwrap();
            assert!(resp.ends_with(format!("/{i}").as_bytes()));
        }
    }
    assert_eq!(server.total_hits(), 100);
    let first = server.addr();
    let start = Instant::now();
    server.stop();
    assert!(start.elapsed() < Duration::from_secs(2));
    assert!(StdStream::connect(first).is_err());
}

#[test]
fn listening_sockets_shared_by_executors_stay_non_blocking() {
    // The executors' duplicates share these sockets' flags: a blocking
    // one let a racing accept block an executor thread (see
    // `start_many_with`).
    let server = Server::start_many(
        &[SocketAddr::from(([127, 0, 0, 1], 0))],
        2,
        Arc::new(|req: &Request| Reply::html(200, req.path.clone())),
    )
    .unwrap();
    let (resp, _) = get(server.addr(), "/x", "t");
    assert!(resp.ends_with(b"/x"));
    for listener in &server.listeners {
        let flags = unsafe { libc::fcntl(listener.as_raw_fd(), libc::F_GETFL) };
        assert!(flags >= 0 && flags & libc::O_NONBLOCK != 0, "{flags:#x}");
    }
}

#[test]
fn slow_script_stops_writing_when_the_client_is_gone() {
    let site = Arc::new(SynthSite::new(SiteSpec {
        pages: 300,
        fault_percent: 100,
        ..SiteSpec::default()
    }));
    let slow = (1..300)
        .find(|&i| site.page_fault(i) == Some(crate::synth::Fault::SlowBody))
        .unwrap();
    let server = Server::start(site.handler()).unwrap();
    let mut client = StdStream::connect(server.addr()).unwrap();
    let req = format!("GET /p/{slow}.html HTTP/1.0\r\nHost: h\r\n\r\n");
    client.write_all(req.as_bytes()).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut buf = [0u8; 256];
    let n = client.read(&mut buf).unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.0 200 OK\r\n"));
    assert_eq!(server.open_connections(), 1);
    drop(client);
    let start = Instant::now();
    while server.open_connections() > 0 {
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "still writing to a closed connection"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Reads one response with a `Content-Length` body from `s`.
fn read_response(s: &mut StdStream) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        if let Some(end) = out.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&out[..end]).to_ascii_lowercase();
            let len: usize = head
                .split("content-length: ")
                .nth(1)
                .and_then(|v| v.split("\r\n").next())
                .unwrap()
                .parse()
                .unwrap();
            if out.len() >= end + 4 + len {
                return out;
            }
        }
        let n = s.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "closed mid-response: {:?}",
            String::from_utf8_lossy(&out)
        );
        out.extend_from_slice(&buf[..n]);
    }
}

#[test]
fn a_kept_connection_serves_requests_in_turn_until_the_client_says_close() {
    let options = Options {
        keep_alive: true,
        count_paths: false,
        ..Options::default()
    };
    let server = Server::start_with(
        &[SocketAddr::from(([127, 0, 0, 1], 0))],
        Arc::new(|req: &Request| Reply::html(200, format!("{} {}", req.path, req.attempt))),
        None,
        options,
    )
    .unwrap();
    let mut s = StdStream::connect(server.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    for path in ["/a", "/b", "/a"] {
        let req = format!("GET {path} HTTP/1.1\r\nHost: k\r\n\r\n");
        s.write_all(req.as_bytes()).unwrap();
        let resp = read_response(&mut s);
        assert!(resp.starts_with(b"HTTP/1.1 200 OK\r\n"));
        // Not counted per path: attempt stays 0.
        assert!(resp.ends_with(format!("{path} 0").as_bytes()));
    }
    // HTTP/1.0 asking for keep-alive is kept too.
    s.write_all(b"GET /c HTTP/1.0\r\nHost: k\r\nConnection: keep-alive\r\n\r\n")
        .unwrap();
    let resp = read_response(&mut s);
    assert!(String::from_utf8_lossy(&resp).contains("\r\nConnection: keep-alive\r\n"));
    // `Connection: close`: an HTTP/1.0 answer, then EOF.
    s.write_all(b"GET /d HTTP/1.1\r\nHost: k\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut rest = Vec::new();
    s.read_to_end(&mut rest).unwrap();
    assert!(rest.starts_with(b"HTTP/1.0 200 OK\r\n") && rest.ends_with(b"/d 0"));
    assert_eq!(server.total_hits(), 5);
    assert_eq!(server.hits("k", "/a"), 0);
    assert!(server.hit_counts().is_empty());

    // A plain HTTP/1.0 request is answered and closed, as without keep-alive.
    let (resp, err) = get(server.addr(), "/e", "k");
    assert!(!err && resp.starts_with(b"HTTP/1.0 200 OK\r\n"));
    server.stop();
}

#[test]
fn encode_and_strip_port() {
    let bytes = encode(
        299,
        &[("Transfer-Encoding".into(), "chunked".into())],
        b"0\r\n\r\n",
    );
    assert_eq!(
        bytes,
        b"HTTP/1.0 299 Unknown\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
    );
    assert_eq!(strip_port("a.b:80"), "a.b");
    assert_eq!(strip_port("a.b"), "a.b");
    assert_eq!(strip_port("[::1]:8080"), "[::1]");
    assert_eq!(strip_port(""), "");
}
