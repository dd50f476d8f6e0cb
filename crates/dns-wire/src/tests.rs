//! Tests of the query bytes and of answers, hand-made and arbitrary.

use super::*;
use proptest::prelude::*;

/// A response to `build_query(id, qname, qtype)`: the question copied,
/// then `answers` appended raw (the caller encodes them).
fn response(id: u16, flags: u16, qname: &str, qtype: QType, answers: &[Vec<u8>]) -> Vec<u8> {
    let mut m = Vec::new();
    m.extend_from_slice(&id.to_be_bytes());
    m.extend_from_slice(&(FLAG_QR | FLAG_RD | 0x0080 | flags).to_be_bytes());
    m.extend_from_slice(&1u16.to_be_bytes());
    m.extend_from_slice(&(answers.len() as u16).to_be_bytes());
    m.extend_from_slice(&0u16.to_be_bytes());
    m.extend_from_slice(&0u16.to_be_bytes());
    m.extend_from_slice(&encode_name(qname).unwrap());
    m.extend_from_slice(&qtype.code().to_be_bytes());
    m.extend_from_slice(&CLASS_IN.to_be_bytes());
    for a in answers {
        m.extend_from_slice(a);
    }
    m
}

fn rr(owner: &[u8], rtype: u16, ttl: u32, rdata: &[u8]) -> Vec<u8> {
    let mut r = owner.to_vec();
    r.extend_from_slice(&rtype.to_be_bytes());
    r.extend_from_slice(&CLASS_IN.to_be_bytes());
    r.extend_from_slice(&ttl.to_be_bytes());
    r.extend_from_slice(&(rdata.len() as u16).to_be_bytes());
    r.extend_from_slice(rdata);
    r
}

/// Pointer to the question name (always at offset 12).
const QPTR: [u8; 2] = [0xC0, 12];

#[test]
fn query_bytes() {
    let q = build_query(0xBEEF, "Ab.example.", QType::A).unwrap();
    let mut want = vec![0xBE, 0xEF, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 1];
    want.extend_from_slice(b"\x02Ab\x07example\x00\x00\x01\x00\x01");
    want.extend_from_slice(&[0, 0, 41, 0x04, 0xD0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(q, want);
    let q6 = build_query(1, "a.b", QType::Aaaa).unwrap();
    assert_eq!(&q6[17..19], &[0, 28]);
}

#[test]
fn bad_names_are_refused() {
    assert!(build_query(1, "", QType::A).is_err());
    assert!(build_query(1, ".", QType::A).is_err());
    assert!(build_query(1, "a..b", QType::A).is_err());
    assert!(build_query(1, "a b", QType::A).is_err());
    assert!(build_query(1, &"x".repeat(64), QType::A).is_err());
    assert!(build_query(1, &"x".repeat(63), QType::A).is_ok());
    let long = vec!["abcdefghi"; 26].join("."); // 26 * 10 + 1 = 261 octets
    assert_eq!(
        build_query(1, &long, QType::A),
        Err(WireError::BadName("longer than 255 octets"))
    );
}

#[test]
fn a_records_and_min_ttl() {
    let m = response(
        7,
        0,
        "www.example.com",
        QType::A,
        &[
            rr(&QPTR, TYPE_A, 300, &[192, 0, 2, 1]),
            rr(&QPTR, TYPE_A, 60, &[192, 0, 2, 2]),
        ],
    );
    let r = parse_response(&m, 7, "WWW.Example.com.", QType::A).unwrap();
    assert_eq!(r.rcode, Rcode::NoError);
    assert!(!r.truncated);
    assert_eq!(
        r.addrs,
        vec![
            "192.0.2.1".parse::<IpAddr>().unwrap(),
            "192.0.2.2".parse().unwrap()
        ]
    );
    assert_eq!(r.ttl, Some(60));
    assert_eq!(r.canonical, None);
}

#[test]
fn aaaa_only_takes_aaaa() {
    let v6: Ipv6Addr = "2001:db8::1".parse().unwrap();
    let m = response(
        9,
        0,
        "h.test",
        QType::Aaaa,
        &[
            rr(&QPTR, TYPE_A, 5, &[10, 0, 0, 1]),
            rr(&QPTR, TYPE_AAAA, 50, &v6.octets()),
        ],
    );
    let r = parse_response(&m, 9, "h.test", QType::Aaaa).unwrap();
    assert_eq!(r.addrs, vec![IpAddr::V6(v6)]);
    assert_eq!(r.ttl, Some(50));
}

#[test]
fn cname_chain_is_followed_with_compression() {
    // www.example.com CNAME web.example.com (compressed: "web" + pointer
    // to "example.com" inside the question), web.example.com CNAME
    // cdn.net, cdn.net A; later owners point at earlier RDATA.
    let mut web = b"\x03web".to_vec();
    web.extend_from_slice(&[0xC0, 12 + 4]);
    let base = response(1, 0, "www.example.com", QType::A, &[]).len();
    let web_at = base + 2 + 10; // first record: owner pointer, fixed fields
    let first = rr(&QPTR, TYPE_CNAME, 100, &web);
    let cdn_at = web_at + web.len() + 2 + 10;
    let second = rr(&[0xC0, web_at as u8], TYPE_CNAME, 30, b"\x03cdn\x03net\x00");
    let third = rr(&[0xC0, cdn_at as u8], TYPE_A, 200, &[198, 51, 100, 7]);
    let m = response(1, 0, "www.example.com", QType::A, &[first, second, third]);
    let r = parse_response(&m, 1, "www.example.com", QType::A).unwrap();
    assert_eq!(r.addrs, vec!["198.51.100.7".parse::<IpAddr>().unwrap()]);
    assert_eq!(r.ttl, Some(30), "smallest TTL along the chain");
    assert_eq!(r.canonical, None);
}

#[test]
fn cname_chain_order_does_not_matter_and_unfinished_chain_names_its_end() {
    let a = rr(b"\x01b\x04test\x00", TYPE_A, 10, &[127, 0, 0, 2]);
    let c = rr(&QPTR, TYPE_CNAME, 20, b"\x01b\x04test\x00");
    let m = response(3, 0, "a.test", QType::A, &[a, c.clone()]);
    let r = parse_response(&m, 3, "a.test", QType::A).unwrap();
    assert_eq!(r.addrs, vec!["127.0.0.2".parse::<IpAddr>().unwrap()]);
    assert_eq!(r.ttl, Some(10));

    let m = response(3, 0, "a.test", QType::A, &[c]);
    let r = parse_response(&m, 3, "a.test", QType::A).unwrap();
    assert!(r.addrs.is_empty());
    assert_eq!(r.canonical.as_deref(), Some("b.test"));
    assert_eq!(r.ttl, Some(20));
}

#[test]
fn cname_loop_ends() {
    let ab = rr(&QPTR, TYPE_CNAME, 20, b"\x01b\x04test\x00");
    let ba = rr(b"\x01b\x04test\x00", TYPE_CNAME, 20, b"\x01a\x04test\x00");
    let m = response(3, 0, "a.test", QType::A, &[ab, ba]);
    let r = parse_response(&m, 3, "a.test", QType::A).unwrap();
    assert!(r.addrs.is_empty());
    assert_eq!(r.canonical, None);
}

#[test]
fn rcodes_and_truncation() {
    let nx = response(5, 3, "gone.test", QType::A, &[]);
    let r = parse_response(&nx, 5, "gone.test", QType::A).unwrap();
    assert_eq!(r.rcode, Rcode::NxDomain);
    assert_eq!(r.rcode.to_string(), "NXDOMAIN");
    let sf = response(5, 2, "gone.test", QType::A, &[]);
    assert_eq!(
        parse_response(&sf, 5, "gone.test", QType::A).unwrap().rcode,
        Rcode::ServFail
    );
    // TC, and the message ends in the middle of the second record.
    let mut tc = response(
        6,
        FLAG_TC,
        "big.test",
        QType::A,
        &[
            rr(&QPTR, TYPE_A, 9, &[1, 2, 3, 4]),
            rr(&QPTR, TYPE_A, 9, &[1, 2, 3, 5]),
        ],
    );
    tc.truncate(tc.len() - 3);
    let r = parse_response(&tc, 6, "big.test", QType::A).unwrap();
    assert!(r.truncated);
    assert_eq!(r.addrs, vec!["1.2.3.4".parse::<IpAddr>().unwrap()]);
    // Without TC the same cut is an error.
    tc[2] &= !0x02;
    assert_eq!(
        parse_response(&tc, 6, "big.test", QType::A),
        Err(WireError::Short)
    );
}

/// `m` with `records` appended as its authority section.
fn with_authority(mut m: Vec<u8>, records: &[Vec<u8>]) -> Vec<u8> {
    m[8..10].copy_from_slice(&(records.len() as u16).to_be_bytes());
    for r in records {
        m.extend_from_slice(r);
    }
    m
}

/// SOA RDATA: MNAME and RNAME as given (wire form, maybe compressed),
/// then SERIAL, REFRESH, RETRY, EXPIRE and `minimum`.
fn soa(mname: &[u8], rname: &[u8], minimum: u32) -> Vec<u8> {
    let mut d = mname.to_vec();
    d.extend_from_slice(rname);
    for n in [2024, 7200, 900, 1_209_600, minimum] {
        d.extend_from_slice(&u32::to_be_bytes(n));
    }
    d
}

#[test]
fn negative_ttl_is_the_lesser_of_the_soa_ttl_and_minimum() {
    // The zone "test" (a pointer into the question name "gone.test").
    let zone = [0xC0, 12 + 5];
    let nx = response(5, 3, "gone.test", QType::A, &[]);
    let m = with_authority(
        nx.clone(),
        &[rr(
            &zone,
            TYPE_SOA,
            900,
            &soa(b"\x02ns\xC0\x11", b"\x04host\xC0\x11", 300),
        )],
    );
    let r = parse_response(&m, 5, "gone.test", QType::A).unwrap();
    assert_eq!(r.rcode, Rcode::NxDomain);
    assert_eq!(r.negative_ttl, Some(300), "MINIMUM below the TTL");
    let m = with_authority(
        nx.clone(),
        &[rr(&zone, TYPE_SOA, 60, &soa(&zone, &zone, 300))],
    );
    let r = parse_response(&m, 5, "gone.test", QType::A).unwrap();
    assert_eq!(r.negative_ttl, Some(60), "TTL below MINIMUM");
    // NODATA carries its SOA the same way; other authority records
    // (NS) are skipped.
    let nodata = response(6, 0, "v4only.test", QType::Aaaa, &[]);
    let zone = [0xC0, 12 + 7];
    let m = with_authority(
        nodata,
        &[
            rr(&zone, 2, 3600, b"\x02ns\x00"),
            rr(&zone, TYPE_SOA, 120, &soa(&zone, &zone, 3600)),
        ],
    );
    let r = parse_response(&m, 6, "v4only.test", QType::Aaaa).unwrap();
    assert_eq!((r.rcode, r.negative_ttl), (Rcode::NoError, Some(120)));
    assert!(r.addrs.is_empty());
    // No SOA: no negative TTL.
    let r = parse_response(&nx, 5, "gone.test", QType::A).unwrap();
    assert_eq!(r.negative_ttl, None);
}

#[test]
fn a_bad_authority_section_leaves_the_answer_usable() {
    let zone = [0xC0, 12 + 2];
    let ok = response(
        7,
        0,
        "h.test",
        QType::A,
        &[rr(&QPTR, TYPE_A, 30, &[127, 0, 0, 9])],
    );
    // An SOA whose fixed fields are cut short, a forward pointer, and a
    // section that ends early (NSCOUNT 3, one record there).
    let short = rr(&zone, TYPE_SOA, 60, &soa(&zone, &zone, 60)[..14]);
    let forward = rr(&[0xC0, 250], TYPE_SOA, 60, &soa(&zone, &zone, 60));
    for authority in [vec![short], vec![forward]] {
        let m = with_authority(ok.clone(), &authority);
        let r = parse_response(&m, 7, "h.test", QType::A).unwrap();
        assert_eq!(r.addrs, vec!["127.0.0.9".parse::<IpAddr>().unwrap()]);
        assert_eq!(r.negative_ttl, None);
    }
    let mut m = with_authority(ok, &[rr(&zone, TYPE_SOA, 60, &soa(&zone, &zone, 50))]);
    m[8..10].copy_from_slice(&3u16.to_be_bytes());
    let r = parse_response(&m, 7, "h.test", QType::A).unwrap();
    assert_eq!(r.negative_ttl, Some(50), "the records before the end count");
}

#[test]
fn mismatches_are_reported_as_such() {
    let m = response(5, 0, "a.test", QType::A, &[]);
    let e = parse_response(&m, 6, "a.test", QType::A).unwrap_err();
    assert_eq!(e, WireError::IdMismatch);
    assert!(e.is_mismatch());
    assert_eq!(
        parse_response(&m, 5, "b.test", QType::A),
        Err(WireError::QuestionMismatch)
    );
    assert_eq!(
        parse_response(&m, 5, "a.test", QType::Aaaa),
        Err(WireError::QuestionMismatch)
    );
    let q = build_query(5, "a.test", QType::A).unwrap();
    assert_eq!(
        parse_response(&q, 5, "a.test", QType::A),
        Err(WireError::NotResponse),
        "a query is not an answer"
    );
    let runt = parse_response(&m[..11], 5, "a.test", QType::A).unwrap_err();
    assert_eq!(runt, WireError::Runt);
    assert!(runt.is_mismatch(), "too short to be ours: ignored");
}

#[test]
fn pointer_loops_and_forward_pointers_are_refused() {
    // Answer owner is a pointer to itself.
    let m0 = response(1, 0, "a.test", QType::A, &[]);
    let at = m0.len() as u8;
    let m = response(
        1,
        0,
        "a.test",
        QType::A,
        &[rr(&[0xC0, at], TYPE_A, 1, &[1, 1, 1, 1])],
    );
    assert_eq!(
        parse_response(&m, 1, "a.test", QType::A),
        Err(WireError::BadPointer)
    );
    // Label then a pointer back to that label: a loop through a label.
    let m = response(
        1,
        0,
        "a.test",
        QType::A,
        &[rr(&[1, b'x', 0xC0, at], TYPE_A, 1, &[1, 1, 1, 1])],
    );
    assert_eq!(
        parse_response(&m, 1, "a.test", QType::A),
        Err(WireError::BadPointer)
    );
    // Forward pointer.
    let m = response(
        1,
        0,
        "a.test",
        QType::A,
        &[rr(&[0xC0, 200], TYPE_A, 1, &[1, 1, 1, 1])],
    );
    assert_eq!(
        parse_response(&m, 1, "a.test", QType::A),
        Err(WireError::BadPointer)
    );
    // Extended label type.
    let m = response(
        1,
        0,
        "a.test",
        QType::A,
        &[rr(&[0x41, 0], TYPE_A, 1, &[1, 1, 1, 1])],
    );
    assert_eq!(
        parse_response(&m, 1, "a.test", QType::A),
        Err(WireError::BadLabel)
    );
}

#[test]
fn odd_records_are_skipped_or_refused() {
    // A TXT and a CH-class A are skipped; a 5-byte A is malformed.
    let mut ch = rr(&QPTR, TYPE_A, 1, &[9, 9, 9, 9]);
    ch[4] = 0;
    ch[5] = 3;
    let m = response(
        2,
        0,
        "a.test",
        QType::A,
        &[
            rr(&QPTR, 16, 1, b"\x02hi"),
            ch,
            rr(&QPTR, TYPE_A, 1, &[8, 8, 4, 4]),
        ],
    );
    let r = parse_response(&m, 2, "a.test", QType::A).unwrap();
    assert_eq!(r.addrs, vec!["8.8.4.4".parse::<IpAddr>().unwrap()]);
    let m = response(
        2,
        0,
        "a.test",
        QType::A,
        &[rr(&QPTR, TYPE_A, 1, &[1, 2, 3, 4, 5])],
    );
    assert_eq!(
        parse_response(&m, 2, "a.test", QType::A),
        Err(WireError::BadRdata)
    );
    // TTL with the top bit set counts as zero.
    let m = response(
        2,
        0,
        "a.test",
        QType::A,
        &[rr(&QPTR, TYPE_A, 0x8000_0000, &[1, 2, 3, 4])],
    );
    assert_eq!(
        parse_response(&m, 2, "a.test", QType::A).unwrap().ttl,
        Some(0)
    );
}

#[test]
fn name_length_cap_applies_to_decompressed_names() {
    // A 250-octet owner built from labels, then more via a pointer: too long.
    let m0 = response(1, 0, "a.test", QType::A, &[]);
    let mut owner = Vec::new();
    for _ in 0..4 {
        owner.push(62);
        owner.extend_from_slice(&[b'x'; 62]);
    }
    owner.extend_from_slice(&QPTR); // + "a.test" = 252 + 8 > 255
    let m = response(
        1,
        0,
        "a.test",
        QType::A,
        &[rr(&owner, TYPE_A, 1, &[1, 1, 1, 1])],
    );
    assert!(m.len() > m0.len());
    assert_eq!(
        parse_response(&m, 1, "a.test", QType::A),
        Err(WireError::NameTooLong)
    );
}

fn valid_name() -> impl Strategy<Value = String> {
    proptest::collection::vec("[a-z0-9][a-z0-9-]{0,20}", 1..5).prop_map(|l| l.join("."))
}

proptest! {
    #[test]
    fn parse_never_panics_on_arbitrary_bytes(
        bytes in proptest::collection::vec(any::<u8>(), 0..700),
        name in valid_name(),
        aaaa in any::<bool>(),
    ) {
        let qtype = if aaaa { QType::Aaaa } else { QType::A };
        let id = bytes.first().zip(bytes.get(1)).map_or(0, |(a, b)| u16::from_be_bytes([*a, *b]));
        let _ = parse_response(&bytes, id, &name, qtype);
    }

    #[test]
    fn parse_never_panics_on_mutated_answers(
        name in valid_name(),
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8),
        cut in any::<usize>(),
    ) {
        let m = response(
            42,
            0,
            &name,
            QType::A,
            &[
                rr(&QPTR, TYPE_CNAME, 5, b"\x01z\xC0\x0c"),
                rr(b"\x01z\xC0\x0c", TYPE_A, 7, &[127, 0, 0, 1]),
            ],
        );
        let mut m = with_authority(
            m,
            &[rr(&QPTR, TYPE_SOA, 9, &soa(b"\x02ns\xC0\x0c", &QPTR, 3))],
        );
        for (at, byte) in edits {
            let i = at % m.len();
            m[i] = byte;
        }
        m.truncate(cut % (m.len() + 1));
        let _ = parse_response(&m, 42, &name, QType::A);
    }

    #[test]
    fn answers_round_trip(
        name in valid_name(),
        id in any::<u16>(),
        ips in proptest::collection::vec(any::<[u8; 4]>(), 1..6),
        ttl in 0u32..1_000_000,
    ) {
        let answers: Vec<Vec<u8>> = ips.iter().map(|ip| rr(&QPTR, TYPE_A, ttl, ip)).collect();
        let m = response(id, 0, &name, QType::A, &answers);
        let q = build_query(id, &name, QType::A).unwrap();
        prop_assert_eq!(&q[12..q.len() - 11], &m[12..12 + q.len() - 23]);
        let r = parse_response(&m, id, &name.to_uppercase(), QType::A).unwrap();
        let want: Vec<IpAddr> = ips.iter().map(|o| IpAddr::V4(Ipv4Addr::from(*o))).collect();
        prop_assert_eq!(r.addrs, want);
        prop_assert_eq!(r.ttl, Some(ttl));
    }
}
