//! The request side of a connection: reading a request head (at most
//! [`MAX_HEAD`] bytes) and parsing it into the [`Request`] a handler sees,
//! noting whether the client asked to keep the connection and whether it
//! sent (or announced) bytes past the head.
//!
//! What this is not: an HTTP parser (httparse parses; request bodies are
//! never read, only noted), and it does not time the client out
//! (`connection.rs` does).

use futures_lite::{AsyncRead, AsyncReadExt};

/// Largest request head accepted; longer ones get a 400.
pub const MAX_HEAD: usize = 16 * 1024;

/// One request, as the handler sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// `Host` header without the port, lower-cased; `""` if absent.
    pub host: String,
    /// `Host` header as sent (port kept), lower-cased; `""` if absent.
    /// Handlers that write absolute links to themselves use this.
    pub authority: String,
    /// Request target as sent, e.g. `/a?b=1`.
    pub path: String,
    /// 1 for the first request of this host+path, 2 for the second, ...
    pub attempt: usize,
    /// Every header as sent, names lower-cased, values trimmed (lossy
    /// UTF-8), in order.
    pub headers: Vec<(String, String)>,
}

impl Request {
    /// The first value of header `name` (lower-case), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

pub(super) struct Head {
    pub(super) request: Request,
    /// The client sent (or announced) bytes we did not read.
    pub(super) unread: bool,
    /// The client asked to keep the connection: HTTP/1.1 without
    /// `Connection: close`, or a `keep-alive` token.
    pub(super) keep_alive: bool,
}

pub(super) enum ReadHead {
    Ok(Head),
    Bad,
    Gone,
}

pub(super) async fn read_head(stream: &mut (impl AsyncRead + Unpin)) -> ReadHead {
    let mut buf = vec![0u8; 2048];
    let mut filled = 0;
    loop {
        if filled == buf.len() {
            if buf.len() >= MAX_HEAD {
                return ReadHead::Bad;
            }
            buf.resize((buf.len() * 2).min(MAX_HEAD), 0);
        }
        match stream.read(&mut buf[filled..]).await {
            Ok(0) | Err(_) => return ReadHead::Gone,
            Ok(n) => filled += n,
        }
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut req = httparse::Request::new(&mut headers);
        match req.parse(&buf[..filled]) {
            Ok(httparse::Status::Partial) => continue,
            Err(_) => return ReadHead::Bad,
            Ok(httparse::Status::Complete(len)) => {
                return match parse_head(&req, filled > len) {
                    Some(head) => ReadHead::Ok(head),
                    None => ReadHead::Bad,
                }
            }
        }
    }
}

fn parse_head(req: &httparse::Request<'_, '_>, extra_bytes: bool) -> Option<Head> {
    let path = req.path?.to_string();
    let mut authority = String::new();
    let mut unread = extra_bytes;
    let (mut close, mut keep) = (false, false);
    for h in req.headers.iter() {
        if h.name.eq_ignore_ascii_case("connection") {
            for token in h.value.split(|&b| b == b',') {
                close |= token.trim_ascii().eq_ignore_ascii_case(b"close");
                keep |= token.trim_ascii().eq_ignore_ascii_case(b"keep-alive");
            }
        } else if h.name.eq_ignore_ascii_case("host") {
            authority = std::str::from_utf8(h.value)
                .ok()?
                .trim()
                .to_ascii_lowercase();
        } else if h.name.eq_ignore_ascii_case("transfer-encoding")
            || (h.name.eq_ignore_ascii_case("content-length") && h.value.trim_ascii() != b"0")
        {
            unread = true;
        }
    }
    Some(Head {
        request: Request {
            host: strip_port(&authority).to_string(),
            authority,
            path,
            attempt: 0,
            headers: req
                .headers
                .iter()
                .map(|h| {
                    (
                        h.name.to_ascii_lowercase(),
                        String::from_utf8_lossy(h.value.trim_ascii()).into_owned(),
                    )
                })
                .collect(),
        },
        unread,
        keep_alive: !close && (keep || req.version == Some(1)),
    })
}

/// `example.com:80` -> `example.com`, `[::1]:80` -> `[::1]`.
pub(crate) fn strip_port(authority: &str) -> &str {
    if authority.starts_with('[') {
        return match authority.find(']') {
            Some(end) => &authority[..=end],
            None => authority,
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => authority,
    }
}
