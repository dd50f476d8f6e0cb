//! What the server sends: a handler's [`Reply`] (a complete response, a
//! hang-up, or a fault-injection script of [`Step`]s), the constructors of
//! the usual replies, and the bytes of a response (status line, headers,
//! framing, body).
//!
//! What this is not: the writing itself (`connection.rs`). Headers go out
//! verbatim, without validation, so a handler can send a broken response on
//! purpose.

use std::time::Duration;

/// One step of a fault-injection [`Reply::Script`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Write these bytes (all of them).
    Write(Vec<u8>),
    /// Wait, keeping the connection open.
    Sleep(Duration),
    /// Close normally (FIN; with TLS `close_notify` first) now, skipping
    /// the remaining steps.
    Close,
    /// Close the TCP connection now without TLS `close_notify` (a truncation
    /// for a TLS client; as [`Step::Close`] without TLS), skipping the
    /// remaining steps.
    Cut,
    /// Close with RST (`SO_LINGER` 0) now, skipping the remaining steps.
    Reset,
}

/// What the server does with a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// A complete response: `HTTP/1.0 {status} {reason}`, the headers, a
    /// `Content-Length` (unless a `Content-Length` or `Transfer-Encoding`
    /// header is given), a blank line, the body; then close. Headers are
    /// written verbatim (no validation), so they can be used to send broken
    /// responses on purpose.
    Http {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// Close the connection without writing anything (a network error for
    /// the client).
    Hangup,
    /// Fault injection: perform the steps in order, then close.
    Script(Vec<Step>),
}

impl Reply {
    /// The same reply after a pause: a [`Reply::Script`] that sleeps for
    /// `delay` (without holding up the server) and then does what `self`
    /// does.
    pub fn delayed(self, delay: Duration) -> Reply {
        let mut steps = vec![Step::Sleep(delay)];
        match self {
            Reply::Http {
                status,
                headers,
                body,
            } => steps.push(Step::Write(encode(status, &headers, &body))),
            Reply::Hangup => steps.push(Step::Close),
            Reply::Script(more) => steps.extend(more),
        }
        Reply::Script(steps)
    }

    /// A response with a `Content-Type` and a body.
    pub fn with_type(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Reply {
        Reply::Http {
            status,
            headers: vec![("Content-Type".to_string(), content_type.to_string())],
            body: body.into(),
        }
    }

    /// A `text/html; charset=utf-8` response.
    pub fn html(status: u16, body: impl Into<Vec<u8>>) -> Reply {
        Reply::with_type(status, "text/html; charset=utf-8", body)
    }

    /// A redirect to `location` (written verbatim) with a small HTML body.
    pub fn redirect(status: u16, location: &str) -> Reply {
        let body = format!(
            "<!DOCTYPE html>\n<html><head><title>Moved</title></head>\n\
             <body><p>Moved to <a href=\"{location}\">{location}</a>.</p></body></html>\n"
        );
        Reply::Http {
            status,
            headers: vec![
                ("Location".to_string(), location.to_string()),
                (
                    "Content-Type".to_string(),
                    "text/html; charset=utf-8".to_string(),
                ),
            ],
            body: body.into_bytes(),
        }
    }

    /// A 404 with a small HTML body (no links).
    pub fn not_found() -> Reply {
        Reply::html(
            404,
            "<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head>\n\
             <body><h1>Not Found</h1><p>No such page.</p></body></html>\n",
        )
    }
}

pub(super) fn encode(status: u16, headers: &[(String, String)], body: &[u8]) -> Vec<u8> {
    encode_as("HTTP/1.0", status, headers, body)
}

/// A response on a connection that stays open: HTTP/1.1 and
/// `Connection: keep-alive` (for an HTTP/1.0 client that asked for it).
pub(super) fn encode_kept(status: u16, headers: &[(String, String)], body: &[u8]) -> Vec<u8> {
    let mut kept = Vec::with_capacity(headers.len() + 1);
    kept.extend_from_slice(headers);
    kept.push(("Connection".to_string(), "keep-alive".to_string()));
    encode_as("HTTP/1.1", status, &kept, body)
}

fn encode_as(version: &str, status: u16, headers: &[(String, String)], body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(128 + body.len() + headers.len() * 48);
    out.extend_from_slice(format!("{version} {status} {}\r\n", reason(status)).as_bytes());
    let mut framed = false;
    for (name, value) in headers {
        framed |= name.eq_ignore_ascii_case("content-length")
            || name.eq_ignore_ascii_case("transfer-encoding");
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if !framed {
        out.extend_from_slice(format!("Content-Length: {}\r\n", body.len()).as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    out
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        206 => "Partial Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        410 => "Gone",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Unknown",
    }
}
