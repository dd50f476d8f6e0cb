//! SURT, the sort-friendly URI form that CDX indexes are keyed by
//! (`com,example)/path?query`), computed exactly as the `surt` Python
//! package does by default (what cdxj-indexer and pywb use): Google's
//! canonicalisation (percent-escapes undone then redone once, dot segments
//! and repeated slashes removed) then the Internet Archive's (everything
//! lower-cased, a leading `www`/`wwwN.` dropped, session ids stripped from
//! path and query, query arguments sorted, a trailing slash dropped, default
//! ports and user info dropped), the host's labels reversed and joined with
//! commas, no scheme.
//!
//! Written for the URLs the crawler queues (already normalised by the `url`
//! crate); any input gives some key and nothing panics. Not a URL parser
//! for anything else.

use std::sync::OnceLock;

use regex::bytes::Regex;

/// The SURT key of `url`.
pub fn surt(url: &str) -> String {
    if url.is_empty() {
        return "-".into();
    }
    let bytes: Vec<u8> = url
        .trim()
        .bytes()
        .filter(|b| !matches!(b, b'\n' | b'\r' | b'\t'))
        .collect();
    let parts = split(&bytes);
    let mut out: Vec<u8> = Vec::with_capacity(url.len());
    let has_host = parts.host.as_ref().is_some_and(|h| !h.is_empty());
    if let (Some(host), true) = (&parts.host, has_host) {
        out.extend(reversed_host(&canonical_host(host, &parts.scheme)));
        if let Some(port) = parts.port {
            if Some(port) != default_port(&parts.scheme) {
                out.extend(format!(":{port}").bytes());
            }
        }
        out.push(b')');
    } else {
        out.extend(&parts.scheme);
        out.push(b':');
    }
    let path = canonical_path(parts.path.as_deref().unwrap_or(b""), has_host);
    let query = parts.query.as_deref().and_then(canonical_query);
    match &path {
        Some(p) if !p.is_empty() => out.extend(p),
        _ if query.is_some() => out.push(b'/'),
        _ => {}
    }
    if let Some(q) = query {
        out.push(b'?');
        out.extend(q);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A URL's parts as `handyurl.parse` splits them (RFC 2396's regex).
struct Parts {
    scheme: Vec<u8>,
    host: Option<Vec<u8>>,
    port: Option<u16>,
    path: Option<Vec<u8>>,
    query: Option<Vec<u8>>,
}

fn split(url: &[u8]) -> Parts {
    static SCHEME: OnceLock<Option<Regex>> = OnceLock::new();
    let has_scheme = SCHEME
        .get_or_init(|| Regex::new(r"^[a-zA-Z][a-zA-Z0-9+\-.]*:").ok())
        .as_ref()
        .is_some_and(|re| re.is_match(url));
    let mut owned;
    let mut url = url;
    if !has_scheme {
        owned = b"http://".to_vec();
        owned.extend_from_slice(url);
        url = &owned;
    }
    // Several leading http(s):// become one.
    while let Some(rest) = strip_protocol(url).and_then(|r| strip_protocol(r).map(|_| r)) {
        url = rest;
    }
    let colon = url.iter().position(|&b| b == b':').unwrap_or(0);
    let scheme = url.get(..colon).unwrap_or_default().to_vec();
    let mut rest = url.get(colon.saturating_add(1)..).unwrap_or_default();
    if let Some(hash) = rest.iter().position(|&b| b == b'#') {
        rest = rest.get(..hash).unwrap_or_default();
    }
    let (before_query, query) = match rest.iter().position(|&b| b == b'?') {
        Some(q) => (
            rest.get(..q).unwrap_or_default(),
            Some(rest.get(q.saturating_add(1)..).unwrap_or_default()),
        ),
        None => (rest, None),
    };
    let (netloc, path) = match before_query.strip_prefix(b"//") {
        Some(auth) => {
            let end = auth.iter().position(|&b| b == b'/').unwrap_or(auth.len());
            (
                Some(auth.get(..end).unwrap_or_default()),
                auth.get(end..).unwrap_or_default(),
            )
        }
        None => (None, before_query),
    };
    let (mut host, port) = netloc.map_or((None, None), host_and_port);
    let mut path = (!path.is_empty()).then(|| path.to_vec());
    if scheme.starts_with(b"http") && host.is_none() {
        if let Some(p) = path.take() {
            let p = trim_start(&p, b'/');
            let slash = p.iter().position(|&b| b == b'/').unwrap_or(p.len());
            host = Some(p.get(..slash).unwrap_or_default().to_vec());
            let mut rest = b"/".to_vec();
            rest.extend(p.get(slash.saturating_add(1)..).unwrap_or_default());
            path = Some(rest);
        }
    }
    Parts {
        scheme,
        host,
        port,
        path,
        query: query.filter(|q| !q.is_empty()).map(<[u8]>::to_vec),
    }
}

fn strip_protocol(url: &[u8]) -> Option<&[u8]> {
    url.strip_prefix(b"http://".as_slice())
        .or_else(|| url.strip_prefix(b"https://".as_slice()))
}

fn trim_start(s: &[u8], b: u8) -> &[u8] {
    let start = s.iter().position(|&c| c != b).unwrap_or(s.len());
    s.get(start..).unwrap_or_default()
}

/// Python's `SplitResult.hostname` (lower-cased, brackets and user info
/// dropped) and `.port` (a trailing bare `:` ignored).
fn host_and_port(netloc: &[u8]) -> (Option<Vec<u8>>, Option<u16>) {
    let netloc = netloc.strip_suffix(b":").unwrap_or(netloc);
    let hostport = match netloc.iter().rposition(|&b| b == b'@') {
        Some(at) => netloc.get(at.saturating_add(1)..).unwrap_or_default(),
        None => netloc,
    };
    let (host, port) = if let Some(inner) = hostport.strip_prefix(b"[") {
        let close = inner.iter().position(|&b| b == b']').unwrap_or(inner.len());
        let after = inner.get(close.saturating_add(1)..).unwrap_or_default();
        (
            inner.get(..close).unwrap_or_default(),
            after.strip_prefix(b":"),
        )
    } else {
        match hostport.iter().rposition(|&b| b == b':') {
            Some(c) => (
                hostport.get(..c).unwrap_or_default(),
                hostport.get(c.saturating_add(1)..),
            ),
            None => (hostport, None),
        }
    };
    let port = port
        .and_then(|p| std::str::from_utf8(p).ok())
        .and_then(|p| p.parse::<u16>().ok())
        .filter(|&p| p != 0);
    let host = host.to_ascii_lowercase();
    ((!host.is_empty()).then_some(host), port)
}

fn default_port(scheme: &[u8]) -> Option<u16> {
    match scheme.to_ascii_lowercase().as_slice() {
        b"http" => Some(80),
        b"https" => Some(443),
        _ => None,
    }
}

fn canonical_host(host: &[u8], scheme: &[u8]) -> Vec<u8> {
    let mut host = unescape_repeatedly(host);
    while let Some(i) = host.windows(2).position(|w| w == b"..") {
        host.remove(i);
    }
    let host = trim_dots(&host);
    let mut host = escape_once(&host.to_ascii_lowercase());
    if scheme != b"dns" {
        host = strip_www(&host).to_vec();
    }
    host
}

fn trim_dots(s: &[u8]) -> &[u8] {
    let start = s.iter().position(|&b| b != b'.').unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|&b| b != b'.')
        .map_or(start, |e| e.saturating_add(1));
    s.get(start..end.max(start)).unwrap_or_default()
}

/// `www.`, `www2.`: dropped from the front.
fn strip_www(host: &[u8]) -> &[u8] {
    let Some(rest) = host.strip_prefix(b"www") else {
        return host;
    };
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    match rest.get(digits..).and_then(|r| r.strip_prefix(b".")) {
        Some(r) => r,
        None => host,
    }
}

fn reversed_host(host: &[u8]) -> Vec<u8> {
    let parts: Vec<&[u8]> = host.split(|&b| b == b'.').rev().collect();
    parts.join(&b','.to_owned())
}

/// The path canonicalised, or None for none.
fn canonical_path(path: &[u8], has_host: bool) -> Option<Vec<u8>> {
    let path = unescape_repeatedly(path);
    let path = if has_host {
        normalize_path(&path)
    } else {
        path
    };
    let path = escape_once(&path).to_ascii_lowercase();
    let path = strip_path_session_id(&path);
    if path.is_empty() {
        return None;
    }
    if path.len() > 1 && path.ends_with(b"/") {
        return Some(
            path.get(..path.len().saturating_sub(1))
                .unwrap_or_default()
                .to_vec(),
        );
    }
    Some(path)
}

/// Dot segments resolved, empty segments dropped but a trailing slash kept.
fn normalize_path(path: &[u8]) -> Vec<u8> {
    if path.is_empty() {
        return b"/".to_vec();
    }
    let mut kept: Vec<&[u8]> = Vec::new();
    for p in path.split(|&b| b == b'/').skip(1) {
        match p {
            b"." => {}
            b".." => {
                if kept.pop().is_none() {
                    kept.push(p);
                }
            }
            _ => kept.push(p),
        }
    }
    let mut out = b"/".to_vec();
    if let Some((last, init)) = kept.split_last() {
        for p in init {
            if !p.is_empty() {
                out.extend_from_slice(p);
                out.push(b'/');
            }
        }
        out.extend_from_slice(last);
    }
    out
}

fn canonical_query(query: &[u8]) -> Option<Vec<u8>> {
    let query = escape_once(&unescape_repeatedly(query));
    let query = strip_query_session_id(&query).to_ascii_lowercase();
    let query = if query.len() <= 1 {
        query
    } else {
        let mut args: Vec<(&[u8], Option<&[u8]>)> = query
            .split(|&b| b == b'&')
            .map(|arg| match arg.iter().position(|&b| b == b'=') {
                Some(eq) => (
                    arg.get(..eq).unwrap_or_default(),
                    arg.get(eq.saturating_add(1)..),
                ),
                None => (arg, None),
            })
            .collect();
        args.sort();
        let mut out = Vec::with_capacity(query.len());
        for (i, (k, v)) in args.iter().enumerate() {
            if i > 0 {
                out.push(b'&');
            }
            out.extend_from_slice(k);
            if let Some(v) = v {
                out.push(b'=');
                out.extend_from_slice(v);
            }
        }
        out
    };
    (!query.is_empty()).then_some(query)
}

fn strip_path_session_id(path: &[u8]) -> Vec<u8> {
    static RES: OnceLock<Vec<Regex>> = OnceLock::new();
    let res = RES.get_or_init(|| {
        [
            r"(?i-u)^(.*/)(\((?:[a-z]\([0-9a-z]{24}\))+\)/)([^\?]+\.aspx.*)$",
            r"(?i-u)^(.*/)(\([0-9a-z]{24}\)/)([^\?]+\.aspx.*)$",
        ]
        .iter()
        .filter_map(|re| Regex::new(re).ok())
        .collect()
    });
    let mut path = path.to_vec();
    for re in res {
        if let Some(c) = re.captures(&path) {
            let mut out = c.get(1).map(|m| m.as_bytes().to_vec()).unwrap_or_default();
            out.extend(c.get(3).map(|m| m.as_bytes()).unwrap_or_default());
            path = out;
        }
    }
    path
}

fn strip_query_session_id(query: &[u8]) -> Vec<u8> {
    static RES: OnceLock<Vec<Regex>> = OnceLock::new();
    let res = RES.get_or_init(|| {
        [
            r"(?i-u)^(.*)(?:jsessionid=[0-9a-zA-Z]{32})(?:&(.*))?$",
            r"(?i-u)^(.*)(?:phpsessid=[0-9a-zA-Z]{32})(?:&(.*))?$",
            r"(?i-u)^(.*)(?:sid=[0-9a-zA-Z]{32})(?:&(.*))?$",
            r"(?i-u)^(.*)(?:ASPSESSIONID[a-zA-Z]{8}=[a-zA-Z]{24})(?:&(.*))?$",
            r"(?i-u)^(.*)(?:cfid=[^&]+&cftoken=[^&]+)(?:&(.*))?$",
        ]
        .iter()
        .filter_map(|re| Regex::new(re).ok())
        .collect()
    });
    let mut query = query.to_vec();
    for re in res {
        if let Some(c) = re.captures(&query) {
            let mut out = c.get(1).map(|m| m.as_bytes().to_vec()).unwrap_or_default();
            if let Some(rest) = c.get(2).filter(|m| !m.as_bytes().is_empty()) {
                out.extend(rest.as_bytes());
            }
            query = out;
        }
    }
    query
}

/// Python's `unquote_to_bytes` until nothing changes.
fn unescape_repeatedly(s: &[u8]) -> Vec<u8> {
    let mut cur = s.to_vec();
    loop {
        let next = unquote(&cur);
        if next == cur {
            return cur;
        }
        cur = next;
    }
}

fn unquote(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while let Some(&b) = s.get(i) {
        if b == b'%' {
            let hex = s.get(i.saturating_add(1)..i.saturating_add(3));
            if let Some(v) = hex
                .and_then(|h| std::str::from_utf8(h).ok())
                .filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit()))
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(v);
                i = i.saturating_add(3);
                continue;
            }
        }
        out.push(b);
        i = i.saturating_add(1);
    }
    out
}

/// Python's `quote_from_bytes` with surt's safe set: every byte outside
/// printable ASCII, and `#`, `%` and space, becomes `%XX` (upper case).
fn escape_once(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    for &b in s {
        if b > b' ' && b < 0x7f && b != b'#' && b != b'%' {
            out.push(b);
        } else {
            out.extend(format!("%{b:02X}").bytes());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_match_the_python_surt_package() {
        // Expected values printed by surt 0.3.1 (`surt.surt(url)`).
        for (url, want) in [
            ("http://www.example.com/", "com,example)/"),
            (
                "http://example.com/A/B/?b=2&A=1",
                "com,example)/a/b?a=1&b=2",
            ),
            ("https://www2.Example.com:443/x", "com,example)/x"),
            ("http://127.0.0.1:8080/p/q.html", "1,0,0,127:8080)/p/q.html"),
            ("http://a.test/a%20b/../c", "test,a)/c"),
            ("http://a.test", "test,a)/"),
            ("http://a.test/?", "test,a)/"),
            (
                "http://a.test/x?jsessionid=0123456789abcdef0123456789abcdef&y=1",
                "test,a)/x?y=1",
            ),
            ("dns:www.example.com", "dns:www.example.com"),
            ("http://a.test//x//y/", "test,a)/x/y"),
            ("http://a.test/%7e%41", "test,a)/~a"),
            ("http://a.test/caf%C3%A9", "test,a)/caf%c3%a9"),
            ("http://a.test/?a&a=&b", "test,a)/?a&a=&b"),
        ] {
            assert_eq!(surt(url), want, "{url}");
        }
    }
}
