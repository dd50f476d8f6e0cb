//! A little DNS of our own for the tests (independent of
//! the `ringcrawl-dns-wire` crate on purpose): message helpers, and
//! [`AnswerAll`], a UDP nameserver on 127.0.0.1 that gives one address to
//! every A question.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// `name` as DNS labels on the wire (a trailing dot or not), ending in
/// the root's empty label.
pub fn wire_name(name: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for label in name.trim_end_matches('.').split('.') {
        out.push(label.len() as u8);
        out.extend_from_slice(label.as_bytes());
    }
    out.push(0);
    out
}

/// Id, lower-cased name, type and end of the question of a query.
pub fn parse_query(q: &[u8]) -> Option<(u16, String, u16, usize)> {
    let id = u16::from_be_bytes([*q.first()?, *q.get(1)?]);
    let mut pos = 12;
    let mut labels = Vec::new();
    loop {
        let len = usize::from(*q.get(pos)?);
        pos += 1;
        if len == 0 {
            break;
        }
        labels.push(String::from_utf8_lossy(q.get(pos..pos + len)?).to_ascii_lowercase());
        pos += len;
    }
    let qtype = u16::from_be_bytes([*q.get(pos)?, *q.get(pos + 1)?]);
    Some((id, labels.join("."), qtype, pos + 4))
}

/// Type A (an IPv4 address).
pub const A: u16 = 1;
/// Type CNAME (an alias).
pub const CNAME: u16 = 5;
/// Type SOA (a zone's start of authority).
pub const SOA: u16 = 6;
/// Type AAAA (an IPv6 address).
pub const AAAA: u16 = 28;
/// The header flag of a truncated answer.
pub const TC: u16 = 0x0200;

/// An answer to `query`: its question, then `answers` as (type, ttl,
/// rdata), all owned by the question name (a compression pointer).
pub fn reply(
    query: &[u8],
    id: u16,
    qend: usize,
    flags: u16,
    answers: &[(u16, u32, Vec<u8>)],
) -> Vec<u8> {
    reply_with_authority(query, id, qend, flags, answers, &[])
}

/// [`reply`] with `authority` records too, owned by the question name.
pub fn reply_with_authority(
    query: &[u8],
    id: u16,
    qend: usize,
    flags: u16,
    answers: &[(u16, u32, Vec<u8>)],
    authority: &[(u16, u32, Vec<u8>)],
) -> Vec<u8> {
    let mut m = Vec::new();
    m.extend_from_slice(&id.to_be_bytes());
    m.extend_from_slice(&(0x8180 | flags).to_be_bytes());
    m.extend_from_slice(&[0, 1]);
    m.extend_from_slice(&(answers.len() as u16).to_be_bytes());
    m.extend_from_slice(&(authority.len() as u16).to_be_bytes());
    m.extend_from_slice(&[0, 0]);
    m.extend_from_slice(&query[12..qend]);
    for (rtype, ttl, rdata) in answers.iter().chain(authority) {
        m.extend_from_slice(&[0xC0, 12]);
        m.extend_from_slice(&rtype.to_be_bytes());
        m.extend_from_slice(&[0, 1]);
        m.extend_from_slice(&ttl.to_be_bytes());
        m.extend_from_slice(&(rdata.len() as u16).to_be_bytes());
        m.extend_from_slice(rdata);
    }
    m
}

/// An SOA record (owned by the question name) whose TTL is `ttl` and
/// MINIMUM `minimum`.
pub fn soa_record(ttl: u32, minimum: u32) -> (u16, u32, Vec<u8>) {
    let mut rdata = vec![0xC0, 12, 0xC0, 12];
    for n in [1, 3600, 600, 86_400, minimum] {
        rdata.extend_from_slice(&u32::to_be_bytes(n));
    }
    (SOA, ttl, rdata)
}

/// An AAAA record of `addr` (owned by the question name).
pub fn aaaa_record(ttl: u32, addr: std::net::Ipv6Addr) -> (u16, u32, Vec<u8>) {
    (AAAA, ttl, addr.octets().to_vec())
}

/// An A record of `addr` (owned by the question name).
pub fn a_record(ttl: u32, addr: [u8; 4]) -> (u16, u32, Vec<u8>) {
    (A, ttl, addr.to_vec())
}

/// A nameserver on 127.0.0.1 (UDP) answering every A question with one
/// address (TTL [`AnswerAll::TTL`]) and every other question with an empty
/// NOERROR; stops when dropped.
pub struct AnswerAll {
    /// Where it listens.
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl AnswerAll {
    /// The TTL of every answer.
    pub const TTL: u32 = 300;

    /// A nameserver answering every A question with `ip`.
    pub fn start(ip: [u8; 4]) -> AnswerAll {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket
            .set_read_timeout(Some(Duration::from_millis(5)))
            .unwrap();
        let addr = socket.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::thread::spawn({
            let stop = stop.clone();
            move || {
                let mut buf = [0u8; 1500];
                while !stop.load(Ordering::Relaxed) {
                    let Ok((n, from)) = socket.recv_from(&mut buf) else {
                        continue;
                    };
                    let q = &buf[..n];
                    let Some((id, _, qtype, qend)) = parse_query(q) else {
                        continue;
                    };
                    let answers = match qtype {
                        A => vec![a_record(Self::TTL, ip)],
                        _ => Vec::new(),
                    };
                    let _ = socket.send_to(&reply(q, id, qend, 0, &answers), from);
                }
            }
        });
        AnswerAll {
            addr,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for AnswerAll {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
