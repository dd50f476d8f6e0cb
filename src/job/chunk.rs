//! A chunk: jobs of one stretch of a host's queue, encoded for a segment
//! file (the frontier's spill, `crate::crawl::frontier`) and decoded when
//! the host's turn comes near; the state directory's journals of
//! discovered URLs are chunks too (`crate::state::journal`).
//!
//! ```text
//! header  "RCQ1" | jobs: u32 LE | length of the records: u32 LE | crc32 of the records: u32 LE
//! record  url length (varint) | url | redirects_left (varint) | depth (varint)
//!         | hops: u64 LE | via: 0 none, 1 the previous record's, 2 + length (varint) + text
//! ```
//!
//! Links of one page travel together, so a record usually shares the
//! previous one's referrer: it is written once per run (tag 1) and decoded
//! into one shared `Arc<str>`, as it was queued. Decoding takes any bytes:
//! whatever was not written by [`encode`] is an error, never a panic.

use std::fmt;
use std::sync::Arc;

use super::Job;
use crate::job::hops::Hops;

/// The first bytes of every chunk (a reader resyncs on them).
pub(crate) const MAGIC: [u8; 4] = *b"RCQ1";

/// Bytes of a chunk's header.
pub(crate) const HEADER: usize = 16;

/// Why bytes read back are not a chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ChunkError {
    /// Fewer bytes than the header says.
    Short,
    /// Not a chunk's header.
    Magic,
    /// The records do not match their checksum.
    Checksum,
    /// A record is cut short or malformed, or the count is off.
    Record(&'static str),
}

impl fmt::Display for ChunkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChunkError::Short => f.write_str("chunk cut short"),
            ChunkError::Magic => f.write_str("not a chunk header"),
            ChunkError::Checksum => f.write_str("chunk checksum mismatch"),
            ChunkError::Record(why) => write!(f, "bad chunk record: {why}"),
        }
    }
}

impl std::error::Error for ChunkError {}

/// Append `jobs`, in order, to `out` as one chunk; its length.
pub(crate) fn encode(jobs: &[Job], out: &mut Vec<u8>) -> usize {
    let start = out.len();
    out.extend_from_slice(&[0; HEADER]);
    let mut previous: Option<&Arc<str>> = None;
    for job in jobs {
        put_varint(out, job.url.len() as u64);
        out.extend_from_slice(job.url.as_bytes());
        put_varint(out, u64::from(job.redirects_left));
        put_varint(out, u64::from(job.depth));
        out.extend_from_slice(&job.hops.to_u64().to_le_bytes());
        match &job.via {
            None => out.push(0),
            Some(via) if previous.is_some_and(|p| Arc::ptr_eq(p, via) || **p == **via) => {
                out.push(1)
            }
            Some(via) => {
                out.push(2);
                put_varint(out, via.len() as u64);
                out.extend_from_slice(via.as_bytes());
            }
        }
        if job.via.is_some() {
            previous = job.via.as_ref();
        }
    }
    let records = out.get(start + HEADER..).unwrap_or_default();
    let length = records.len() as u32;
    let crc = crc32fast::hash(records);
    let mut header = [0u8; HEADER];
    for (to, from) in header.iter_mut().zip(
        MAGIC
            .into_iter()
            .chain((jobs.len() as u32).to_le_bytes())
            .chain(length.to_le_bytes())
            .chain(crc.to_le_bytes()),
    ) {
        *to = from;
    }
    if let Some(at) = out.get_mut(start..start + HEADER) {
        at.copy_from_slice(&header);
    }
    out.len() - start
}

/// The whole length of the chunk whose header `header` holds (at least
/// [`HEADER`] bytes); None if it is not a chunk's header.
pub(crate) fn len(header: &[u8]) -> Option<usize> {
    let mut r = Reader {
        bytes: header,
        at: 0,
    };
    if r.take(4)? != MAGIC {
        return None;
    }
    let _count = r.u32()?;
    let length = r.u32()? as usize;
    HEADER.checked_add(length)
}

/// The count of jobs of the chunk that `bytes` hold (exactly one chunk),
/// checked by its header and checksum and its records walked by
/// [`decode`]'s rules ([`walk`]) without building them: for a reader that
/// only checks a file. A chunk this accepts decodes. (The checksum covers
/// the records, not the header's count: a count damaged with the checksum
/// intact shows only in the walk.)
pub(crate) fn verify(bytes: &[u8]) -> Result<u32, ChunkError> {
    let (count, records) = frame(bytes)?;
    walk(count, records, |_| {})?;
    Ok(count)
}

/// The count and the records of the chunk that `bytes` hold, checked by
/// its header and checksum.
fn frame(bytes: &[u8]) -> Result<(u32, &[u8]), ChunkError> {
    let mut r = Reader { bytes, at: 0 };
    if r.take(4).ok_or(ChunkError::Short)? != MAGIC {
        return Err(ChunkError::Magic);
    }
    let count = r.u32().ok_or(ChunkError::Short)?;
    let length = r.u32().ok_or(ChunkError::Short)? as usize;
    let crc = r.u32().ok_or(ChunkError::Short)?;
    let records = r.take(length).ok_or(ChunkError::Short)?;
    if r.at != bytes.len() {
        return Err(ChunkError::Record("bytes after the records"));
    }
    if crc32fast::hash(records) != crc {
        return Err(ChunkError::Checksum);
    }
    Ok((count, records))
}

/// The jobs of the chunk that `bytes` hold (exactly one chunk).
pub(crate) fn decode(bytes: &[u8]) -> Result<Vec<Job>, ChunkError> {
    let (count, records) = frame(bytes)?;
    // A record takes at least 12 bytes: no count can make this allocate
    // more than the bytes read.
    let mut jobs = Vec::with_capacity((count as usize).min(records.len() / 12));
    let mut previous: Option<Arc<str>> = None;
    walk(count, records, |record| {
        let via = match record.via {
            Via::None => None,
            // `walk` refuses a repeat before any referrer.
            Via::Previous => previous.clone(),
            Via::New(via) => {
                let via: Arc<str> = Arc::from(via);
                previous = Some(via.clone());
                Some(via)
            }
        };
        jobs.push(Job {
            retries: 0,
            url: record.url.to_string(),
            redirects_left: u16::try_from(record.redirects_left).unwrap_or(u16::MAX),
            depth: record.depth,
            hops: Hops::from_u64(record.hops),
            via,
        });
    })?;
    Ok(jobs)
}

/// One record as the chunk holds it, borrowed from its bytes.
struct Raw<'a> {
    url: &'a str,
    redirects_left: u32,
    depth: u32,
    hops: u64,
    via: Via<'a>,
}

/// A record's referrer: none, the last one written, or a new one.
enum Via<'a> {
    None,
    Previous,
    New(&'a str),
}

/// Read the `count` records of `records` by the format's rules, handing
/// each to `each`: every field whole, a repeated referrer only after a
/// first one, and nothing after the last record. The one reader of
/// records, for [`decode`] and [`verify`] alike.
fn walk<'a>(
    count: u32,
    records: &'a [u8],
    mut each: impl FnMut(Raw<'a>),
) -> Result<(), ChunkError> {
    let mut r = Reader {
        bytes: records,
        at: 0,
    };
    let mut referrer = false;
    for _ in 0..count {
        let url = r.text().ok_or(ChunkError::Record("url"))?;
        let redirects_left = r.small().ok_or(ChunkError::Record("redirects"))?;
        let depth = r.small().ok_or(ChunkError::Record("depth"))?;
        let hops = r.u64().ok_or(ChunkError::Record("hops"))?;
        let via = match r.take(1).and_then(|t| t.first().copied()) {
            Some(0) => Via::None,
            Some(1) if referrer => Via::Previous,
            Some(1) => return Err(ChunkError::Record("no referrer to repeat")),
            Some(2) => {
                referrer = true;
                Via::New(r.text().ok_or(ChunkError::Record("via"))?)
            }
            _ => return Err(ChunkError::Record("via tag")),
        };
        each(Raw {
            url,
            redirects_left,
            depth,
            hops,
            via,
        });
    }
    if r.at != records.len() {
        return Err(ChunkError::Record("more records than counted"));
    }
    Ok(())
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let slice = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(slice)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn varint(&mut self) -> Option<u64> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let byte = *self.take(1)?.first()?;
            v |= u64::from(byte & 0x7f).checked_shl(shift)?;
            if byte & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    fn small(&mut self) -> Option<u32> {
        u32::try_from(self.varint()?).ok()
    }

    fn text(&mut self) -> Option<&'a str> {
        let len = usize::try_from(self.varint()?).ok()?;
        std::str::from_utf8(self.take(len)?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::hops::Hop;
    use proptest::prelude::*;

    fn job(url: &str, via: Option<&Arc<str>>) -> Job {
        Job {
            retries: 0,
            url: url.into(),
            redirects_left: 3,
            depth: 7,
            hops: Hops::root().then(Hop::Link).then(Hop::Redirect),
            via: via.cloned(),
        }
    }

    #[test]
    fn a_chunk_round_trips_and_links_of_one_page_share_one_referrer() {
        let page: Arc<str> = Arc::from("http://a.test/page");
        let other: Arc<str> = Arc::from("http://a.test/other");
        let jobs = vec![
            job("http://a.test/1", Some(&page)),
            job("http://a.test/2", Some(&page)),
            job("http://a.test/3", None),
            job("http://a.test/4", Some(&page)),
            job("http://a.test/5", Some(&other)),
        ];
        let mut bytes = vec![9, 9];
        let len = encode(&jobs, &mut bytes);
        assert_eq!(len, bytes.len() - 2);
        let back = decode(&bytes[2..]).unwrap();
        assert_eq!(back, jobs);
        assert!(Arc::ptr_eq(
            back[0].via.as_ref().unwrap(),
            back[3].via.as_ref().unwrap()
        ));
        // The referrer is written once for the run of one page's links.
        assert!(
            len < HEADER + 5 * 40 + page.len() + other.len() + 10,
            "{len}"
        );
    }

    #[test]
    fn a_corrupt_chunk_is_an_error_not_a_panic() {
        let jobs = vec![job("http://a.test/1", None), job("http://a.test/2", None)];
        let mut bytes = Vec::new();
        encode(&jobs, &mut bytes);
        let mut flipped = bytes.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert_eq!(decode(&flipped), Err(ChunkError::Checksum));
        assert_eq!(decode(&bytes[..bytes.len() - 1]), Err(ChunkError::Short));
        assert_eq!(decode(&[0; 64]), Err(ChunkError::Magic));
        assert_eq!(decode(&[]), Err(ChunkError::Short));
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode(&longer).is_err(), "one chunk, exactly");
    }

    fn any_job() -> impl Strategy<Value = Job> {
        (
            "[a-z0-9/:.%-]{0,80}",
            any::<u16>(),
            any::<u32>(),
            any::<u64>(),
            prop::option::of("[ -~]{0,40}"),
        )
            .prop_map(|(url, redirects_left, depth, hops, via)| Job {
                retries: 0,
                url,
                redirects_left,
                depth,
                hops: Hops::from_u64(hops),
                via: via.map(|v| Arc::from(v.as_str())),
            })
    }

    /// `jobs` encoded, then one bit of the chunk flipped.
    fn encoded_with_a_bit_flipped(jobs: &[Job], at: prop::sample::Index, bit: u8) -> Vec<u8> {
        let mut bytes = Vec::new();
        encode(jobs, &mut bytes);
        let i = at.index(bytes.len());
        bytes[i] ^= 1 << bit;
        bytes
    }

    proptest! {
        #[test]
        fn any_jobs_round_trip(jobs in prop::collection::vec(any_job(), 0..40)) {
            let mut bytes = Vec::new();
            encode(&jobs, &mut bytes);
            prop_assert_eq!(decode(&bytes).unwrap(), jobs);
        }

        #[test]
        fn any_bytes_decode_without_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
            let _ = decode(&bytes);
        }

        #[test]
        fn a_damaged_chunk_never_panics(
            jobs in prop::collection::vec(any_job(), 1..10),
            at in any::<prop::sample::Index>(),
            bit in 0u8..8,
        ) {
            let bytes = encoded_with_a_bit_flipped(&jobs, at, bit);
            prop_assert!(decode(&bytes) != Ok(jobs));
        }

        /// `verify` accepts exactly what `decode` does, checksum recomputed
        /// after the damage (so the records' rules decide, not the CRC).
        #[test]
        fn verify_agrees_with_decode_on_records_whose_checksum_holds(
            jobs in prop::collection::vec(any_job(), 1..10),
            at in any::<prop::sample::Index>(),
            bit in 0u8..8,
        ) {
            let mut bytes = encoded_with_a_bit_flipped(&jobs, at, bit);
            let crc = crc32fast::hash(&bytes[HEADER..]);
            bytes[12..HEADER].copy_from_slice(&crc.to_le_bytes());
            let decoded = decode(&bytes);
            prop_assert_eq!(verify(&bytes).is_ok(), decoded.is_ok());
            if let Ok(jobs) = decoded {
                prop_assert_eq!(verify(&bytes), Ok(jobs.len() as u32));
            }
        }
    }

    #[test]
    fn a_count_damaged_under_an_intact_checksum_fails_verify_as_decode() {
        let mut bytes = Vec::new();
        encode(
            &[job("http://a.test/1", None), job("http://a.test/2", None)],
            &mut bytes,
        );
        assert_eq!(verify(&bytes), Ok(2));
        bytes[4] = 3;
        assert_eq!(verify(&bytes), Err(ChunkError::Record("url")));
        assert!(decode(&bytes).is_err());
        bytes[4] = 1;
        assert_eq!(
            verify(&bytes),
            Err(ChunkError::Record("more records than counted"))
        );
    }
}
