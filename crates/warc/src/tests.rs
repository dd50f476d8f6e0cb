//! Properties of the crate as a whole: what [`archive`] writes reads back
//! as written, and no bytes make a reader or a key panic or grow past its
//! cap (the unit tests of each module are beside it).

use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, SystemTime};

use proptest::prelude::*;

use crate::read::{record_at, skim};
use crate::{archive, cdxj, digest_text, payload_sha1, Exchange};

fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..max)
}

proptest! {
    #[test]
    fn a_response_record_reads_back_as_it_was_written(
        uri in "\\PC{0,60}",
        request in bytes(200),
        response in bytes(600),
        payload_offset in 0usize..700,
        micros in 0u64..4_000_000_000_000_000,
    ) {
        let ex = Exchange {
            target_uri: &uri,
            ip: Some(IpAddr::V4(Ipv4Addr::LOCALHOST)),
            date: SystemTime::UNIX_EPOCH + Duration::from_micros(micros),
            request: &request,
            response: &response,
            payload_offset,
        };
        let mut out = Vec::new();
        let written = archive(&ex, payload_sha1(&ex), None, None, &mut out);
        prop_assert_eq!(written.start + written.len, out.len());
        let member = &out[written.start..];

        let stored = record_at(member, response.len()).unwrap();
        prop_assert_eq!(&stored.kind, "response");
        prop_assert_eq!(&stored.record_id, &written.record_id);
        prop_assert_eq!(&stored.block, &response);
        prop_assert_eq!(stored.payload_digest, Some(digest_text(&payload_sha1(&ex))));
        // The URI stays on its one header line, whatever it holds.
        let expected: String = uri.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
        prop_assert_eq!(stored.target_uri.as_str(), expected.trim());

        let skimmed = skim(member, 8).unwrap();
        prop_assert_eq!(skimmed.member_len, written.len as u64);
        prop_assert_eq!(&skimmed.record.block[..], &response[..response.len().min(8)]);
        if !response.is_empty() {
            prop_assert!(record_at(member, response.len() - 1).is_err());
        }
    }

    #[test]
    fn arbitrary_bytes_read_as_no_record_or_one_within_the_cap(
        junk in bytes(400),
        cap in 0usize..300,
    ) {
        if let Ok(stored) = record_at(&junk, cap) {
            prop_assert!(stored.block.len() <= cap);
        }
        if let Ok(skimmed) = skim(&junk[..], cap) {
            prop_assert!(skimmed.record.block.len() <= cap);
            prop_assert!(skimmed.member_len <= junk.len() as u64);
        }
    }

    #[test]
    fn a_damaged_record_reads_as_no_record_or_one_within_the_cap(
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
        cut in any::<prop::sample::Index>(),
    ) {
        let ex = Exchange {
            target_uri: "http://a.test/",
            ip: None,
            date: SystemTime::UNIX_EPOCH,
            request: b"GET / HTTP/1.1\r\n\r\n",
            response: b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi",
            payload_offset: 38,
        };
        let mut out = Vec::new();
        let written = archive(&ex, payload_sha1(&ex), None, None, &mut out);
        let mut member = out[written.start..].to_vec();
        let i = at.index(member.len());
        member[i] = byte;
        member.truncate(cut.index(member.len() + 1));
        if let Ok(stored) = record_at(&member, 64) {
            prop_assert!(stored.block.len() <= 64);
        }
        if let Ok(skimmed) = skim(&member[..], 64) {
            prop_assert!(skimmed.record.block.len() <= 64);
        }
    }

    #[test]
    fn an_index_line_is_one_line_whatever_its_values(
        url in "\\PC{0,80}",
        url_controls in "[\\x00-\\x1f\\x7f]{0,4}",
        digest in "\\PC{0,40}",
        filename in "\\PC{0,30}",
        status in proptest::option::of(any::<u16>()),
        length in any::<u64>(),
        offset in any::<u64>(),
    ) {
        let url = format!("{url}{url_controls}");
        let mut out = Vec::new();
        cdxj::write_line(
            &cdxj::Entry {
                url: &url,
                date: SystemTime::UNIX_EPOCH,
                mime: Some(cdxj::mime_of(&filename)),
                status,
                digest: &digest,
                length,
                offset,
                filename: &filename,
            },
            &mut out,
        );
        prop_assert!(out.is_ascii(), "{:?}", String::from_utf8_lossy(&out));
        prop_assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1);
        prop_assert_eq!(out.last(), Some(&b'\n'));
        let json = cdxj::line_json(&out[..out.len() - 1]).unwrap_or_default();
        prop_assert_eq!(json.first(), Some(&b'{'));
        prop_assert_eq!(json.last(), Some(&b'}'));
    }

    #[test]
    fn every_url_has_a_key_of_one_word(url in "\\PC{0,120}") {
        // An index line is split at its first two spaces.
        let key = cdxj::surt::surt(&url);
        prop_assert!(!key.is_empty());
        prop_assert!(!key.contains(|c: char| c.is_whitespace()), "{:?}", key);
    }
}
