//! The status servers' HTTP: a listener on a thread of its own that
//! answers GET and HEAD, one request a connection (`Connection: close`),
//! one connection at a time, each bounded by a time-out and a head of
//! 8 KiB: a status page for one operator and a scraper, not a web server.
//! Requests are parsed with httparse (hand-written code would only be the
//! socket loop around it). It binds exactly the address it is given
//! ([`bind`]), no other.
//!
//! Not what is served: a crawl's numbers (`mod.rs`) or a cluster
//! crawl's (`cluster.rs`) route requests to their answers.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Context;

/// The longest a request's head may be.
const MAX_HEAD: usize = 8 * 1024;
/// The longest a client may take to send its request or read the answer.
const IO_TIMEOUT: Duration = Duration::from_secs(5);

/// Listen on exactly `addr` (port 0: one the system picks); `flag` names
/// it in the error.
pub fn bind(addr: SocketAddr, flag: &str) -> anyhow::Result<TcpListener> {
    TcpListener::bind(addr).with_context(|| format!("{flag} {addr}: cannot listen there"))
}

/// What a server says on stderr once it listens (the tests read the
/// address from it), and the warning for an address beyond this machine
/// (`what`: whose numbers).
pub fn announce(flag: &str, asked: SocketAddr, bound: SocketAddr, what: &str, quiet: bool) {
    if quiet {
        return;
    }
    if !asked.ip().is_loopback() {
        eprintln!(
            "ringcrawl: {flag} {asked}: {what} served beyond this machine, to anyone who reaches it"
        );
    }
    eprintln!("status: serving http://{bound}/ (/metrics, /status.json)");
}

/// A running server.
pub struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Serve `listener` on a thread named `name`, answering each request
    /// with `route`; `after` runs on that thread once it stops.
    pub fn start(
        listener: TcpListener,
        name: &str,
        route: impl Fn(&Request) -> Answer + Send + 'static,
        after: impl FnOnce() + Send + 'static,
    ) -> anyhow::Result<Server> {
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                for stream in listener.incoming() {
                    if stopped.load(Ordering::Relaxed) {
                        break;
                    }
                    if let Ok(stream) = stream {
                        serve(stream, &route);
                    }
                }
                after();
            })?;
        Ok(Server {
            addr,
            stop,
            thread: Some(thread),
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stop listening (the thread ends after the request it serves).
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wake the accept with a connection of our own.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One connection: read a request, answer it, close.
fn serve(mut stream: TcpStream, route: &impl Fn(&Request) -> Answer) {
    let _ = stream.set_read_timeout(Some(IO_TIMEOUT));
    let _ = stream.set_write_timeout(Some(IO_TIMEOUT));
    let answer = match read_request(&mut stream) {
        Ok(Some(request)) => {
            let mut answer = route(&request);
            answer.head_only = request.head_only;
            answer
        }
        Ok(None) => return,
        Err(status) => Answer::error(status),
    };
    let _ = stream.write_all(&answer.bytes());
    let _ = stream.flush();
}

/// A request as routed: its method, its path (without the query), and
/// the query's `since=T` (`/status.json`: only the history after second
/// `T`).
#[derive(Debug, Default, PartialEq)]
pub struct Request {
    pub head_only: bool,
    pub path: String,
    pub since: Option<f64>,
}

/// Read and parse a request head; None if the client sent nothing; an
/// error status for one this server will not take.
fn read_request(stream: &mut TcpStream) -> Result<Option<Request>, u16> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        let n = stream.read(&mut chunk).map_err(|_| 408u16)?;
        if n == 0 {
            return if buf.is_empty() { Ok(None) } else { Err(400) };
        }
        buf.extend_from_slice(chunk.get(..n).unwrap_or_default());
        match parse(&buf) {
            Ok(Some(request)) => return Ok(Some(request)),
            Ok(None) if buf.len() < MAX_HEAD => continue,
            Ok(None) => return Err(431),
            Err(status) => return Err(status),
        }
    }
}

/// Parse `buf` as a request head: None while it is partial.
pub fn parse(buf: &[u8]) -> Result<Option<Request>, u16> {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(buf) {
        Ok(httparse::Status::Partial) => Ok(None),
        Ok(httparse::Status::Complete(_)) => {
            let head_only = match req.method {
                Some("GET") => false,
                Some("HEAD") => true,
                _ => return Err(405),
            };
            let target = req.path.unwrap_or("/");
            let target = target.split('#').next().unwrap_or("/");
            let (path, query) = target.split_once('?').unwrap_or((target, ""));
            // A `since` that is not a number is ignored: the whole
            // history, as without one.
            let since = query
                .split('&')
                .find_map(|pair| pair.strip_prefix("since="))
                .and_then(|t| t.parse::<f64>().ok())
                .filter(|t| t.is_finite());
            Ok(Some(Request {
                head_only,
                path: path.to_string(),
                since,
            }))
        }
        Err(httparse::Error::TooManyHeaders) => Err(431),
        Err(_) => Err(400),
    }
}

/// What the server sends back.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
    pub head_only: bool,
}

impl Answer {
    pub fn ok(content_type: &'static str, body: impl Into<Vec<u8>>) -> Answer {
        Answer {
            status: 200,
            content_type,
            body: body.into(),
            head_only: false,
        }
    }

    pub fn error(status: u16) -> Answer {
        Answer {
            status,
            content_type: "text/plain; charset=utf-8",
            body: format!("{} {}\n", status, reason(status)).into_bytes(),
            head_only: false,
        }
    }

    /// The whole answer, head and body.
    pub fn bytes(&self) -> Vec<u8> {
        let mut out = format!(
            "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n{}\r\n",
            self.status,
            reason(self.status),
            self.content_type,
            self.body.len(),
            if self.status == 405 { "Allow: GET, HEAD\r\n" } else { "" },
        )
        .into_bytes();
        if !self.head_only {
            out.extend_from_slice(&self.body);
        }
        out
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_parse_to_a_path_without_the_query() {
        assert_eq!(parse(b"GET /metrics HTTP/1.1\r\nHost: x\r\n"), Ok(None));
        assert_eq!(
            parse(b"GET /metrics?x=1 HTTP/1.1\r\nHost: x\r\n\r\n"),
            Ok(Some(Request {
                path: "/metrics".into(),
                ..Request::default()
            }))
        );
        let since = |target: &str| {
            parse(format!("GET {target} HTTP/1.1\r\n\r\n").as_bytes())
                .unwrap()
                .unwrap()
                .since
        };
        assert_eq!(since("/status.json?since=12.5"), Some(12.5));
        assert_eq!(since("/status.json?x=1&since=3#frag"), Some(3.0));
        assert_eq!(since("/status.json?since=NaN"), None);
        assert_eq!(since("/status.json?since=soon"), None);
        assert_eq!(since("/status.json"), None);
        assert!(
            parse(b"HEAD / HTTP/1.0\r\n\r\n")
                .unwrap()
                .unwrap()
                .head_only
        );
        assert_eq!(parse(b"POST / HTTP/1.1\r\n\r\n"), Err(405));
        assert_eq!(parse(b"GET / HTTP/1.1\r\nbad header\r\n\r\n"), Err(400));
    }

    #[test]
    fn a_head_answer_has_no_body() {
        let head = Answer {
            head_only: true,
            ..Answer::error(404)
        }
        .bytes();
        let text = String::from_utf8(head).unwrap();
        assert!(text.starts_with("HTTP/1.1 404 Not Found\r\n"), "{text}");
        assert!(text.ends_with("\r\n\r\n"), "HEAD: no body: {text}");
    }
}
