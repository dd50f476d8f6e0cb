//! Datagrams off a resolver's UDP socket: `parse_response` on arbitrary
//! bytes, asked as the answer to an A and to an AAAA question.
//!
//! The first byte picks the question name (one of a few, so the checks of
//! the question section are reached), the next two are taken as the id the
//! query had (so the id check passes), the rest is the message.
//!
//! Invariants checked (beyond "nothing panics"):
//! - every address is of the type asked (A: IPv4, AAAA: IPv6);
//! - a response with addresses names no unfinished CNAME chain end;
//! - a TTL and a negative TTL never exceed 2^31 - 1 (RFC 2181 §8);
//! - a mismatch (not our answer) is never also a parsed response.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ringcrawl_dns_wire::{parse_response, QType};

const NAMES: [&str; 4] = ["a.test", "www.example.com", "x", "h0.name.test"];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let name = NAMES[usize::from(pick) % NAMES.len()];
    let id = match rest {
        [a, b, ..] => u16::from_be_bytes([*a, *b]),
        _ => 0,
    };
    for qtype in [QType::A, QType::Aaaa] {
        match parse_response(rest, id, name, qtype) {
            Ok(r) => {
                for ip in &r.addrs {
                    assert_eq!(ip.is_ipv4(), qtype == QType::A, "{ip} for {qtype:?}");
                }
                if !r.addrs.is_empty() {
                    assert_eq!(r.canonical, None);
                }
                assert!(r.ttl.is_none_or(|t| t <= i32::MAX as u32));
                assert!(r.negative_ttl.is_none_or(|t| t <= i32::MAX as u32));
            }
            Err(e) => {
                let _ = e.is_mismatch();
            }
        }
    }
});
