//! A file that may be damaged or not ours, read back at an offset:
//! `read::record_at` and `read::skim` on arbitrary bytes, and the same
//! bytes as a URL to `cdxj::surt::surt`.
//!
//! The first byte picks the cap on the block (0 to 255 bytes, or 1 MiB
//! when it is 255), the rest is the file from the offset on.
//!
//! Invariants checked (beyond "nothing panics"):
//! - a record read back holds at most the cap of its block;
//! - a skimmed record's member is no longer than the bytes given, and
//!   reading that many bytes whole gives the same header fields;
//! - a SURT key is not empty and has no whitespace (an index line is
//!   split at its first two spaces).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ringcrawl_warc::cdxj::surt::surt;
use ringcrawl_warc::read::{record_at, skim};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, file)) = data.split_first() else {
        return;
    };
    let cap = if pick == u8::MAX {
        1 << 20
    } else {
        usize::from(pick)
    };
    if let Ok(stored) = record_at(file, cap) {
        assert!(stored.block.len() <= cap);
    }
    if let Ok(skimmed) = skim(file, cap) {
        assert!(skimmed.record.block.len() <= cap);
        let len = usize::try_from(skimmed.member_len).unwrap();
        assert!(len <= file.len());
        if let Ok(whole) = record_at(&file[..len], 1 << 20) {
            assert_eq!(whole.record_id, skimmed.record.record_id);
            assert_eq!(whole.target_uri, skimmed.record.target_uri);
            assert!(whole.block.starts_with(&skimmed.record.block));
        }
    }
    let key = surt(&String::from_utf8_lossy(file));
    assert!(
        !key.is_empty() && !key.contains(char::is_whitespace),
        "{key:?}"
    );
});
