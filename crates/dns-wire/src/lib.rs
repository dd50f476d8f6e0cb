//! DNS messages on the wire (RFC 1035) for a stub resolver that asks for
//! addresses: the query bytes of an A or AAAA question, and the answer
//! read and checked against it. No I/O, no clocks, no cache: sockets,
//! timeouts, retries and which server to ask are the caller's (in
//! [ringcrawl], its per-shard resolver, `net::dns`). A crate of its own so
//! that it is tested and fuzzed without the crawler, and can be reused.
//!
//! # Map
//!
//! - [`build_query`] makes an A or AAAA question (recursion desired, with
//!   an EDNS0 OPT record offering [`EDNS_UDP_SIZE`]-byte UDP answers);
//!   [`encode_name`] a name's uncompressed wire form.
//! - [`parse_response`] checks an answer against the question it was for
//!   (id, QR bit, opcode, question name, type and class), reads RCODE and
//!   the TC flag, follows the CNAME chain that starts at the question name
//!   inside the answer section, and collects the chain's final A or AAAA
//!   addresses with the smallest TTL on the way ([`Response`]). From the
//!   authority section it reads the SOA a negative answer carries, for
//!   how long the absence may be cached (RFC 2308 §5: the lesser of the
//!   SOA record's TTL and its MINIMUM field); the additional section is
//!   not read.
//! - [`WireError`]: why a name cannot be asked or an answer not used;
//!   [`WireError::is_mismatch`] tells "not our answer" (keep waiting)
//!   from a bad one.
//!
//! Not here: other record types, zone transfers, DNSSEC, DNS over TLS or
//! HTTPS, a server side, `search` domains and `ndots`.
//!
//! # Invariants
//!
//! Every byte comes from the network, so nothing here may panic or loop:
//!
//! 1. All reads are bounds-checked (the crate denies indexing, `unwrap`,
//!    `expect` and `panic!` outside its tests).
//! 2. A compression pointer must point strictly before every position the
//!    name has visited, so a chain of pointers always ends.
//! 3. Names are capped at 255 octets and CNAME chains at [`MAX_CHAIN`]
//!    links.
//!
//! A property test feeds arbitrary bytes, and `fuzz/`'s `dns_wire` target
//! too.
//!
//! [ringcrawl]: https://github.com/ringcrawl/ringcrawl

// The workspace's panic-free lints (Cargo.toml's [workspace.lints]), and
// a stricter one this crate passes (not every member does): no needless `pub`.
#![warn(unreachable_pub)]

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use thiserror::Error;

/// Record type A: an IPv4 address.
pub const TYPE_A: u16 = 1;
/// Record type CNAME: the canonical name of an alias.
pub const TYPE_CNAME: u16 = 5;
/// Record type SOA: a zone's authority, whose MINIMUM bounds negative caching.
pub const TYPE_SOA: u16 = 6;
/// Record type AAAA: an IPv6 address.
pub const TYPE_AAAA: u16 = 28;
/// Pseudo-record type OPT (EDNS0, RFC 6891).
pub const TYPE_OPT: u16 = 41;
/// Class IN: the Internet.
pub const CLASS_IN: u16 = 1;
/// UDP payload size offered in the OPT record (the DNS flag day 2020 value).
pub const EDNS_UDP_SIZE: u16 = 1232;
/// CNAME links followed inside one answer.
pub const MAX_CHAIN: usize = 16;

/// Longest name on the wire, length octets and the root label included.
const MAX_NAME: usize = 255;
const MAX_LABEL: usize = 63;
const HEADER: usize = 12;

const FLAG_QR: u16 = 0x8000;
const FLAG_TC: u16 = 0x0200;
const FLAG_RD: u16 = 0x0100;

/// The address record asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum QType {
    /// IPv4 addresses.
    A,
    /// IPv6 addresses.
    Aaaa,
}

impl QType {
    /// Its record type on the wire.
    pub fn code(self) -> u16 {
        match self {
            QType::A => TYPE_A,
            QType::Aaaa => TYPE_AAAA,
        }
    }
}

/// Response code of the header (the low four bits; extended RCODEs are not
/// needed for plain A/AAAA lookups).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rcode {
    /// 0: no error (though maybe no record of the type).
    NoError,
    /// 1: the server could not read the query.
    FormErr,
    /// 2: the server failed to answer.
    ServFail,
    /// 3: the name does not exist.
    NxDomain,
    /// 4: the server does not do this kind of query.
    NotImp,
    /// 5: the server will not answer us.
    Refused,
    /// Any other code.
    Other(u8),
}

impl Rcode {
    /// The response code of the header's low four bits.
    pub fn from_code(code: u8) -> Rcode {
        match code {
            0 => Rcode::NoError,
            1 => Rcode::FormErr,
            2 => Rcode::ServFail,
            3 => Rcode::NxDomain,
            4 => Rcode::NotImp,
            5 => Rcode::Refused,
            n => Rcode::Other(n),
        }
    }
}

impl fmt::Display for Rcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rcode::NoError => f.write_str("NOERROR"),
            Rcode::FormErr => f.write_str("FORMERR"),
            Rcode::ServFail => f.write_str("SERVFAIL"),
            Rcode::NxDomain => f.write_str("NXDOMAIN"),
            Rcode::NotImp => f.write_str("NOTIMP"),
            Rcode::Refused => f.write_str("REFUSED"),
            Rcode::Other(n) => write!(f, "RCODE{n}"),
        }
    }
}

/// Why a name cannot be asked or an answer cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum WireError {
    /// The name cannot be asked (empty, a label empty or too long, a space
    /// or control character, too long on the wire).
    #[error("invalid name: {0}")]
    BadName(&'static str),
    /// The message ends inside a section it announces.
    #[error("message too short")]
    Short,
    /// Shorter than a DNS header: it cannot be an answer to anything.
    #[error("datagram shorter than a DNS header")]
    Runt,
    /// QR not set, or an opcode other than QUERY.
    #[error("not a response to a standard query")]
    NotResponse,
    /// Another id than the query's.
    #[error("id does not match the query")]
    IdMismatch,
    /// Another question (name, type or class) than the query's.
    #[error("question does not match the query")]
    QuestionMismatch,
    /// A compression pointer that does not point back.
    #[error("bad compression pointer")]
    BadPointer,
    /// A name in the answer over 255 octets.
    #[error("name longer than 255 octets")]
    NameTooLong,
    /// A label type other than a length or a pointer.
    #[error("unsupported label type")]
    BadLabel,
    /// A record's data not of its type's length or form.
    #[error("bad record data")]
    BadRdata,
}

impl WireError {
    /// The datagram is not the answer to our query (stale, stray, forged
    /// or not DNS at all): a client should ignore it and keep waiting, not
    /// fail the lookup.
    pub fn is_mismatch(&self) -> bool {
        matches!(
            self,
            WireError::IdMismatch
                | WireError::NotResponse
                | WireError::QuestionMismatch
                | WireError::Runt
        )
    }
}

/// What an answer says about the name asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The header's response code.
    pub rcode: Rcode,
    /// TC: the server cut the message; ask again over TCP for the rest.
    pub truncated: bool,
    /// Addresses of the asked type owned by the end of the CNAME chain, in
    /// answer order.
    pub addrs: Vec<IpAddr>,
    /// Smallest TTL (seconds) of the records used: the CNAME links and the
    /// addresses. `None` when no record was used.
    pub ttl: Option<u32>,
    /// End of the CNAME chain, when it is not the name asked and the answer
    /// holds no address for it (the caller may ask for it in turn). `None`
    /// also when the chain loops or its end is not a plain host name.
    pub canonical: Option<String>,
    /// How long a negative answer (NXDOMAIN, or no record of the type) may
    /// be kept, in seconds: min(TTL, MINIMUM) of the authority section's
    /// SOA (the least, if several). `None` without an SOA there, or when
    /// the message was cut before it.
    pub negative_ttl: Option<u32>,
}

/// A query for `name` (dotted, one trailing dot allowed) and `qtype`, with
/// id `id`, RD set and an EDNS0 OPT record.
pub fn build_query(id: u16, name: &str, qtype: QType) -> Result<Vec<u8>, WireError> {
    let qname = encode_name(name)?;
    let mut out = Vec::with_capacity(HEADER + qname.len() + 4 + 11);
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&FLAG_RD.to_be_bytes());
    out.extend_from_slice(&1u16.to_be_bytes()); // QDCOUNT
    out.extend_from_slice(&0u16.to_be_bytes()); // ANCOUNT
    out.extend_from_slice(&0u16.to_be_bytes()); // NSCOUNT
    out.extend_from_slice(&1u16.to_be_bytes()); // ARCOUNT: the OPT record
    out.extend_from_slice(&qname);
    out.extend_from_slice(&qtype.code().to_be_bytes());
    out.extend_from_slice(&CLASS_IN.to_be_bytes());
    // OPT: root name, type, UDP size as class, extended RCODE/version/flags
    // as TTL (all zero), no options.
    out.push(0);
    out.extend_from_slice(&TYPE_OPT.to_be_bytes());
    out.extend_from_slice(&EDNS_UDP_SIZE.to_be_bytes());
    out.extend_from_slice(&0u32.to_be_bytes());
    out.extend_from_slice(&0u16.to_be_bytes());
    Ok(out)
}

/// `name` in uncompressed wire form (length-prefixed labels and the root
/// label), case kept.
pub fn encode_name(name: &str) -> Result<Vec<u8>, WireError> {
    let name = name.strip_suffix('.').unwrap_or(name);
    if name.is_empty() {
        return Err(WireError::BadName("empty"));
    }
    let mut out = Vec::with_capacity(name.len() + 2);
    for label in name.split('.') {
        let bytes = label.as_bytes();
        if bytes.is_empty() {
            return Err(WireError::BadName("empty label"));
        }
        if bytes.len() > MAX_LABEL {
            return Err(WireError::BadName("label longer than 63 octets"));
        }
        if bytes
            .iter()
            .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
        {
            return Err(WireError::BadName("space or control character"));
        }
        out.push(bytes.len() as u8);
        out.extend_from_slice(bytes);
    }
    out.push(0);
    if out.len() > MAX_NAME {
        return Err(WireError::BadName("longer than 255 octets"));
    }
    Ok(out)
}

/// Checks `msg` against the query (`id`, `name`, `qtype`) and reads it.
///
/// Mismatches ([`WireError::is_mismatch`]) mean "not our answer". A
/// truncated message (TC) whose answer section is cut mid-record still
/// parses: the records before the cut are used and `truncated` is set.
pub fn parse_response(
    msg: &[u8],
    id: u16,
    name: &str,
    qtype: QType,
) -> Result<Response, WireError> {
    if msg.len() < HEADER {
        return Err(WireError::Runt);
    }
    let mut r = Reader { msg, pos: 0 };
    if r.u16()? != id {
        return Err(WireError::IdMismatch);
    }
    let flags = r.u16()?;
    let opcode = (flags >> 11) & 0xF;
    if flags & FLAG_QR == 0 || opcode != 0 {
        return Err(WireError::NotResponse);
    }
    let truncated = flags & FLAG_TC != 0;
    let rcode = Rcode::from_code((flags & 0xF) as u8);
    let qdcount = r.u16()?;
    let ancount = r.u16()?;
    let nscount = r.u16()?;
    r.pos = HEADER; // ARCOUNT: the additional section is not read

    let want = lower(&encode_name(name)?);
    match qdcount {
        1 => {
            let qname = r.name()?;
            let qt = r.u16()?;
            let qc = r.u16()?;
            if qname != want || qt != qtype.code() || qc != CLASS_IN {
                return Err(WireError::QuestionMismatch);
            }
        }
        // Servers may drop the question from a FORMERR/NOTIMP/REFUSED-like
        // answer; an answer with data must repeat it.
        0 if !matches!(rcode, Rcode::NoError | Rcode::NxDomain) => {}
        _ => return Err(WireError::QuestionMismatch),
    }

    let mut records = Vec::new();
    let mut cut = false;
    for _ in 0..ancount {
        match r.record() {
            Ok(Some(rec)) => records.push(rec),
            Ok(None) => {}
            Err(_) if truncated => {
                cut = true;
                break;
            }
            Err(e) => return Err(e),
        }
    }
    // The authority section only says how long an absence lasts: a record
    // there that cannot be read ends the reading, it does not spoil the
    // answer (the negative TTL then falls back to the caller's default).
    let mut negative_ttl: Option<u32> = None;
    for _ in 0..if cut { 0 } else { nscount } {
        match r.record() {
            Ok(Some(Record {
                ttl,
                data: Data::Soa { minimum },
                ..
            })) => {
                let t = ttl.min(minimum);
                negative_ttl = Some(negative_ttl.map_or(t, |n| n.min(t)));
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }

    let chain = follow_chain(&want, &records, qtype);
    Ok(Response {
        rcode,
        truncated,
        addrs: chain.addrs,
        ttl: chain.ttl,
        canonical: chain.canonical,
        negative_ttl,
    })
}

/// One answer record we may use.
struct Record {
    owner: Vec<u8>,
    ttl: u32,
    data: Data,
}

enum Data {
    Addr(IpAddr),
    Cname(Vec<u8>),
    /// An SOA record: only its MINIMUM field is kept.
    Soa {
        minimum: u32,
    },
}

struct Chain {
    addrs: Vec<IpAddr>,
    ttl: Option<u32>,
    canonical: Option<String>,
}

fn follow_chain(qname: &[u8], records: &[Record], qtype: QType) -> Chain {
    let mut current: &[u8] = qname;
    let mut ttl: Option<u32> = None;
    let min = |ttl: Option<u32>, t: u32| Some(ttl.map_or(t, |m| m.min(t)));
    for _ in 0..=MAX_CHAIN {
        let mut addrs = Vec::new();
        let mut addr_ttl = None;
        for rec in records.iter().filter(|r| r.owner == current) {
            if let Data::Addr(ip) = rec.data {
                let wanted = match qtype {
                    QType::A => ip.is_ipv4(),
                    QType::Aaaa => ip.is_ipv6(),
                };
                if wanted {
                    addrs.push(ip);
                    addr_ttl = min(addr_ttl, rec.ttl);
                }
            }
        }
        if !addrs.is_empty() {
            return Chain {
                addrs,
                ttl: addr_ttl.and_then(|t| min(ttl, t)),
                canonical: None,
            };
        }
        let next = records.iter().find_map(|r| match &r.data {
            Data::Cname(target) if r.owner == current => Some((target, r.ttl)),
            _ => None,
        });
        match next {
            Some((target, t)) => {
                ttl = min(ttl, t);
                current = target;
            }
            None => {
                let canonical = if current == qname {
                    None
                } else {
                    dotted(current)
                };
                return Chain {
                    addrs: Vec::new(),
                    ttl,
                    canonical,
                };
            }
        }
    }
    // The chain loops or is longer than we follow.
    Chain {
        addrs: Vec::new(),
        ttl,
        canonical: None,
    }
}

/// Wire-form name as a dotted host name, if every label is letters, digits,
/// `-` or `_` (anything else could not be asked for again faithfully).
fn dotted(wire: &[u8]) -> Option<String> {
    let mut out = String::new();
    let mut rest = wire;
    loop {
        let (&len, tail) = rest.split_first()?;
        if len == 0 {
            break;
        }
        let label = tail.get(..usize::from(len))?;
        if !label
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'-' || *b == b'_')
        {
            return None;
        }
        if !out.is_empty() {
            out.push('.');
        }
        out.extend(label.iter().map(|&b| char::from(b)));
        rest = tail.get(usize::from(len)..)?;
    }
    (!out.is_empty()).then_some(out)
}

fn lower(wire: &[u8]) -> Vec<u8> {
    wire.iter().map(u8::to_ascii_lowercase).collect()
}

/// Bounds-checked cursor over a message.
struct Reader<'a> {
    msg: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], WireError> {
        let end = self.pos.checked_add(n).ok_or(WireError::Short)?;
        let bytes = self.msg.get(self.pos..end).ok_or(WireError::Short)?;
        self.pos = end;
        Ok(bytes)
    }

    fn u16(&mut self) -> Result<u16, WireError> {
        match *self.take(2)? {
            [a, b] => Ok(u16::from_be_bytes([a, b])),
            _ => Err(WireError::Short),
        }
    }

    fn u32(&mut self) -> Result<u32, WireError> {
        match *self.take(4)? {
            [a, b, c, d] => Ok(u32::from_be_bytes([a, b, c, d])),
            _ => Err(WireError::Short),
        }
    }

    /// The name at the cursor (compression followed), lower-cased, in
    /// uncompressed wire form; the cursor moves past it.
    fn name(&mut self) -> Result<Vec<u8>, WireError> {
        let (name, end) = read_name(self.msg, self.pos)?;
        self.pos = end;
        Ok(name)
    }

    /// One resource record; `None` for records that are not IN A, AAAA,
    /// CNAME or SOA (skipped).
    fn record(&mut self) -> Result<Option<Record>, WireError> {
        let owner = self.name()?;
        let rtype = self.u16()?;
        let class = self.u16()?;
        let raw_ttl = self.u32()?;
        // RFC 2181 section 8: a TTL with the top bit set counts as zero.
        let ttl = if raw_ttl > i32::MAX as u32 {
            0
        } else {
            raw_ttl
        };
        let rdlen = usize::from(self.u16()?);
        let start = self.pos;
        let rdata = self.take(rdlen)?;
        if class != CLASS_IN {
            return Ok(None);
        }
        let data = match rtype {
            TYPE_A => {
                let octets: [u8; 4] = rdata.try_into().map_err(|_| WireError::BadRdata)?;
                Data::Addr(IpAddr::V4(Ipv4Addr::from(octets)))
            }
            TYPE_AAAA => {
                let octets: [u8; 16] = rdata.try_into().map_err(|_| WireError::BadRdata)?;
                Data::Addr(IpAddr::V6(Ipv6Addr::from(octets)))
            }
            TYPE_CNAME => {
                // Compression pointers in RDATA refer to the whole message.
                let (target, end) = read_name(self.msg, start)?;
                if end != self.pos {
                    return Err(WireError::BadRdata);
                }
                Data::Cname(target)
            }
            TYPE_SOA => {
                // MNAME and RNAME (compressed or not), then SERIAL, REFRESH,
                // RETRY, EXPIRE and MINIMUM, 32 bits each, to the end.
                let (_, after_mname) = read_name(self.msg, start)?;
                let (_, after_rname) = read_name(self.msg, after_mname)?;
                let fixed = self
                    .msg
                    .get(after_rname..self.pos)
                    .ok_or(WireError::BadRdata)?;
                match *fixed {
                    [_, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, a, b, c, d] => Data::Soa {
                        minimum: u32::from_be_bytes([a, b, c, d]),
                    },
                    _ => return Err(WireError::BadRdata),
                }
            }
            _ => return Ok(None),
        };
        Ok(Some(Record { owner, ttl, data }))
    }
}

/// Reads the possibly compressed name at `start`: returns it lower-cased in
/// uncompressed wire form, and the position just after it (after its first
/// pointer, if any). Every pointer must point strictly before every position
/// read so far, so pointer chains end.
fn read_name(msg: &[u8], start: usize) -> Result<(Vec<u8>, usize), WireError> {
    let mut out = Vec::new();
    let mut pos = start;
    let mut floor = start;
    let mut end = None;
    loop {
        let len = *msg.get(pos).ok_or(WireError::Short)?;
        match len & 0xC0 {
            0x00 if len == 0 => {
                out.push(0);
                let after = pos.checked_add(1).ok_or(WireError::Short)?;
                return Ok((out, end.unwrap_or(after)));
            }
            0x00 => {
                let from = pos.checked_add(1).ok_or(WireError::Short)?;
                let to = from.checked_add(usize::from(len)).ok_or(WireError::Short)?;
                let label = msg.get(from..to).ok_or(WireError::Short)?;
                // +1 for the root label still to come.
                if out.len() + 1 + label.len() + 1 > MAX_NAME {
                    return Err(WireError::NameTooLong);
                }
                out.push(len);
                out.extend(label.iter().map(u8::to_ascii_lowercase));
                pos = to;
            }
            0xC0 => {
                let low = *msg
                    .get(pos.checked_add(1).ok_or(WireError::Short)?)
                    .ok_or(WireError::Short)?;
                let target = (usize::from(len & 0x3F) << 8) | usize::from(low);
                if end.is_none() {
                    end = Some(pos.checked_add(2).ok_or(WireError::Short)?);
                }
                if target >= floor {
                    return Err(WireError::BadPointer);
                }
                floor = target;
                pos = target;
            }
            _ => return Err(WireError::BadLabel),
        }
    }
}

#[cfg(test)]
mod tests;
