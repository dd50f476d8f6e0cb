//! A sorted run on disk: every fingerprint the seen-set has moved out of
//! RAM, in one file `run-{generation}`.
//!
//! Format: u64 fingerprints, little-endian, strictly ascending (so
//! deduplicated), none of them 0, in 4 KiB blocks of 512 keys; the last
//! block is padded with zeros, so the file is whole blocks and every read
//! is one aligned block. Nothing else: the key count is where the zeros
//! start.
//!
//! In RAM a run keeps its open file, a sparse index (the first key of each
//! block: 8 bytes per 512 keys, ~0.016 B a key) and a Bloom filter over all
//! its keys (~1.25 B a key), both built while the run is written or, on
//! reopening, by streaming it once.
//!
//! All file I/O is glommio's (O_DIRECT through io_uring): `DmaStreamWriter`
//! to write, `DmaStreamReader` to stream, `DmaFile::read_many` for lookups;
//! `rename`, `remove` and a directory fsync through glommio too. The only
//! blocking calls are metadata: `Path::exists` and `read_dir` when a
//! directory is created or reopened.

use std::io;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use futures_lite::{AsyncWriteExt, StreamExt};
use glommio::io::{
    Directory, DmaFile, DmaStreamReader, DmaStreamReaderBuilder, DmaStreamWriter,
    DmaStreamWriterBuilder, MergedBufferLimit, ReadAmplificationLimit,
};

use super::bloom::Bloom;

/// Bytes in a block.
pub(crate) const BLOCK_BYTES: usize = 4096;
/// Keys in a full block.
pub(crate) const BLOCK_KEYS: u64 = (BLOCK_BYTES / 8) as u64;
/// Keys written or read between two offers to yield the CPU.
const YIELD_EVERY: u64 = 4096;
/// Block reads in flight at once for one lookup batch. A shard's executor
/// runs its lookups between a hundred fetch tasks, so each round of reads
/// waits for a turn: with 16 in flight the lookups of a 10M-page crawl fell
/// behind (170K URLs pending a shard at the end, their pages' records held
/// in RAM); with 64 they kept up (11K at most), at the same pages/s.
const READS_IN_FLIGHT: usize = 64;
/// Streaming buffers (one being read, one read ahead; same for writes).
const STREAM_BUFFER: usize = 128 << 10;

/// One sorted run, open for lookups.
pub(crate) struct Run {
    file: Rc<DmaFile>,
    path: PathBuf,
    generation: u64,
    keys: u64,
    /// First key of each block.
    index: Vec<u64>,
    bloom: Bloom,
}

/// The file name of a run of `generation`.
pub(crate) fn file_name(generation: u64) -> String {
    format!("run-{generation}")
}

/// The file a merge writes before it publishes it by renaming.
pub(crate) fn tmp_name(generation: u64) -> String {
    format!("run-{generation}.tmp")
}

/// What a file in a seen-set directory is.
#[derive(Debug, PartialEq, Eq)]
#[cfg(test)]
pub(crate) enum Name {
    Run(u64),
    Tmp(u64),
}

#[cfg(test)]
pub(crate) fn parse_name(name: &str) -> Option<Name> {
    let rest = name.strip_prefix("run-")?;
    let digits_only = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match rest.strip_suffix(".tmp") {
        Some(g) if digits_only(g) => g.parse().ok().map(Name::Tmp),
        None if digits_only(rest) => rest.parse().ok().map(Name::Run),
        _ => None,
    }
}

impl Run {
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    pub(crate) fn keys(&self) -> u64 {
        self.keys
    }

    /// RAM held: the sparse index and the Bloom filter.
    pub(crate) fn memory(&self) -> usize {
        self.index.capacity() * 8 + self.bloom.bytes()
    }

    /// False: `fp` is certainly not in this run.
    pub(crate) fn may_contain(&self, fp: u64) -> bool {
        self.bloom.may_contain(fp)
    }

    /// Whether each of `keys` is in the run (any order; zeros are never
    /// there). Keys the filter rules out cost nothing; the others are
    /// grouped by block, each block needed is read once, at most 16 reads
    /// in flight (adjacent blocks merged into one read).
    pub(crate) async fn contains_many(&self, keys: &[u64]) -> io::Result<Vec<bool>> {
        let mut found = vec![false; keys.len()];
        // (block, index in `keys`) for each key the filter cannot rule out.
        let mut wanted: Vec<(u64, usize)> = Vec::new();
        for (i, &k) in keys.iter().enumerate() {
            if !self.bloom.may_contain(k) {
                continue;
            }
            if let Some(block) = self
                .index
                .partition_point(|&first| first <= k)
                .checked_sub(1)
            {
                wanted.push((block as u64, i));
            }
        }
        wanted.sort_unstable();
        let mut blocks: Vec<u64> = wanted.iter().map(|&(b, _)| b).collect();
        blocks.dedup();
        if blocks.is_empty() {
            return Ok(found);
        }
        let reads = futures_lite::stream::iter(
            blocks
                .iter()
                .map(|&b| (b * BLOCK_BYTES as u64, BLOCK_BYTES))
                .collect::<Vec<_>>(),
        );
        let mut results = self
            .file
            .read_many(
                reads,
                MergedBufferLimit::Custom(64 << 10),
                ReadAmplificationLimit::NoAmplification,
            )
            .with_concurrency(READS_IN_FLIGHT);
        while let Some(result) = results.next().await {
            let ((pos, _), data) = result.map_err(io::Error::from)?;
            let block = pos / BLOCK_BYTES as u64;
            let in_block = self.keys.saturating_sub(block * BLOCK_KEYS).min(BLOCK_KEYS) as usize;
            let Some(data) = data.get(..in_block * 8) else {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("{}: short read of block {block}", self.path.display()),
                ));
            };
            let from = wanted.partition_point(|&(b, _)| b < block);
            for &(b, i) in wanted.get(from..).unwrap_or(&[]) {
                if b != block {
                    break;
                }
                if let (Some(&k), Some(slot)) = (keys.get(i), found.get_mut(i)) {
                    *slot = block_contains(data, k);
                }
            }
        }
        Ok(found)
    }

    /// Reopens the run at `path`: streams it once to check it (ascending,
    /// padding only at the end) and rebuild the index and Bloom filter.
    #[cfg(test)]
    pub(crate) async fn open(path: PathBuf, generation: u64) -> io::Result<Run> {
        let file = Rc::new(DmaFile::open(&path).await?);
        let size = file.file_size().await?;
        let invalid = |what: &str| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: {what}", path.display()),
            )
        };
        if size % BLOCK_BYTES as u64 != 0 {
            return Err(invalid("not whole 4 KiB blocks"));
        }
        let words = size / 8;
        let mut reader = KeyReader::new(file.clone(), words);
        let mut bloom = Bloom::for_keys(words);
        let mut index = Vec::with_capacity(usize::try_from(words / BLOCK_KEYS).unwrap_or(0));
        let (mut keys, mut last, mut padding) = (0u64, 0u64, false);
        while let Some(k) = reader.next().await? {
            if k == 0 {
                padding = true;
                continue;
            }
            if padding || (keys > 0 && k <= last) {
                return Err(invalid("keys out of order"));
            }
            if keys.is_multiple_of(BLOCK_KEYS) {
                index.push(k);
            }
            bloom.insert(k);
            keys += 1;
            last = k;
            if keys.is_multiple_of(YIELD_EVERY) {
                glommio::yield_if_needed().await;
            }
        }
        if keys.div_ceil(BLOCK_KEYS) != words / BLOCK_KEYS {
            return Err(invalid("a block of padding"));
        }
        Ok(Run {
            file,
            path,
            generation,
            keys,
            index,
            bloom,
        })
    }
}

/// Binary search of one block's keys (little-endian u64s).
fn block_contains(block: &[u8], key: u64) -> bool {
    let at = |i: usize| -> u64 {
        block
            .get(i * 8..i * 8 + 8)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u64::from_le_bytes)
    };
    let (mut lo, mut hi) = (0, block.len() / 8);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let k = at(mid);
        if k == key {
            return true;
        }
        if k < key {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    false
}

/// Merges the run `old` (if any) with `new` (ascending keys, `new_len` of
/// them) into a new run `run-{generation}` in `dir`: written to
/// `run-{generation}.tmp`, closed (which fsyncs), renamed (the atomic
/// publish), the directory fsynced, then reopened for reading. Offers to
/// yield every 4096 keys. On error the `.tmp` file is removed (best
/// effort) and `old` is untouched; if the future is dropped, the `.tmp`
/// file stays until the next merge of that generation or a reopen.
pub(crate) async fn write(
    dir: &Path,
    generation: u64,
    old: Option<&Run>,
    new: impl Iterator<Item = u64>,
    new_len: u64,
) -> io::Result<Run> {
    let tmp = dir.join(tmp_name(generation));
    let path = dir.join(file_name(generation));
    let written = write_tmp(&tmp, old, new, new_len).await;
    let (index, bloom, keys) = match written {
        Ok(w) => w,
        Err(e) => {
            let _ = glommio::io::remove(&tmp).await;
            return Err(e);
        }
    };
    glommio::io::rename(&tmp, &path).await?;
    sync_dir(dir).await?;
    let file = DmaFile::open(&path).await?;
    Ok(Run {
        file: Rc::new(file),
        path,
        generation,
        keys,
        index,
        bloom,
    })
}

async fn write_tmp(
    tmp: &Path,
    old: Option<&Run>,
    new: impl Iterator<Item = u64>,
    new_len: u64,
) -> io::Result<(Vec<u64>, Bloom, u64)> {
    let file = DmaFile::create(tmp).await?;
    let out = DmaStreamWriterBuilder::new(file)
        .with_buffer_size(STREAM_BUFFER)
        .with_write_behind(2)
        .build();
    let bound = old.map_or(0, Run::keys).saturating_add(new_len);
    let mut w = RunWriter::new(out, bound);
    let mut old = old.map(|r| KeyReader::new(r.file.clone(), r.keys));
    let mut a = next_of(&mut old).await?;
    let mut new = new.peekable();
    loop {
        let k = match (a, new.peek().copied()) {
            (None, None) => break,
            (Some(x), None) => {
                a = next_of(&mut old).await?;
                x
            }
            (None, Some(y)) => {
                new.next();
                y
            }
            (Some(x), Some(y)) => {
                if x <= y {
                    a = next_of(&mut old).await?;
                    if x == y {
                        new.next();
                    }
                    x
                } else {
                    new.next();
                    y
                }
            }
        };
        w.push(k).await?;
    }
    w.finish().await
}

async fn next_of(reader: &mut Option<KeyReader>) -> io::Result<Option<u64>> {
    match reader {
        Some(r) => r.next().await,
        None => Ok(None),
    }
}

/// Writes keys in blocks and builds the index and filter as it goes.
struct RunWriter {
    out: DmaStreamWriter,
    block: Vec<u8>,
    index: Vec<u64>,
    bloom: Bloom,
    keys: u64,
    last: u64,
}

impl RunWriter {
    fn new(out: DmaStreamWriter, bound: u64) -> RunWriter {
        RunWriter {
            out,
            block: Vec::with_capacity(BLOCK_BYTES),
            index: Vec::with_capacity(usize::try_from(bound / BLOCK_KEYS + 1).unwrap_or(0)),
            bloom: Bloom::for_keys(bound),
            keys: 0,
            last: 0,
        }
    }

    /// Appends `k` unless it is 0 or not above the last key (duplicates).
    async fn push(&mut self, k: u64) -> io::Result<()> {
        if k == 0 || (self.keys > 0 && k <= self.last) {
            return Ok(());
        }
        if self.block.is_empty() {
            self.index.push(k);
        }
        self.block.extend_from_slice(&k.to_le_bytes());
        self.bloom.insert(k);
        self.keys += 1;
        self.last = k;
        if self.block.len() >= BLOCK_BYTES {
            self.out.write_all(&self.block).await?;
            self.block.clear();
        }
        if self.keys.is_multiple_of(YIELD_EVERY) {
            glommio::yield_if_needed().await;
        }
        Ok(())
    }

    /// Pads and writes the last block, closes (fsyncs) the file.
    async fn finish(mut self) -> io::Result<(Vec<u64>, Bloom, u64)> {
        if !self.block.is_empty() {
            self.block.resize(BLOCK_BYTES, 0);
            self.out.write_all(&self.block).await?;
        }
        self.out.close().await?;
        Ok((self.index, self.bloom, self.keys))
    }
}

/// Streams the words of a run file, in order.
struct KeyReader {
    stream: DmaStreamReader,
    /// Words decoded from the last buffer, and the next one to hand out.
    words: Vec<u64>,
    at: usize,
    /// Words still to hand out (the rest of the file is not read).
    left: u64,
    /// Bytes of a word split across two buffers.
    carry: Vec<u8>,
}

impl KeyReader {
    fn new(file: Rc<DmaFile>, words: u64) -> KeyReader {
        let blocks = words.div_ceil(BLOCK_KEYS);
        KeyReader {
            stream: DmaStreamReaderBuilder::from_rc(file)
                .with_buffer_size(STREAM_BUFFER)
                .with_read_ahead(2)
                .with_end_pos(blocks * BLOCK_BYTES as u64)
                .build(),
            words: Vec::new(),
            at: 0,
            left: words,
            carry: Vec::with_capacity(8),
        }
    }

    async fn next(&mut self) -> io::Result<Option<u64>> {
        while self.at >= self.words.len() {
            if self.left == 0 {
                return Ok(None);
            }
            self.fill().await?;
        }
        let w = self.words.get(self.at).copied();
        self.at += 1;
        Ok(w)
    }

    async fn fill(&mut self) -> io::Result<()> {
        let buf = self
            .stream
            .get_buffer_aligned(STREAM_BUFFER as u64)
            .await
            .map_err(io::Error::from)?;
        if buf.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "run file shorter than its keys",
            ));
        }
        self.words.clear();
        self.at = 0;
        let mut bytes: &[u8] = &buf;
        if !self.carry.is_empty() {
            let need = (8 - self.carry.len()).min(bytes.len());
            let (head, rest) = bytes.split_at(need);
            self.carry.extend_from_slice(head);
            bytes = rest;
            if let Ok(word) = <[u8; 8]>::try_from(self.carry.as_slice()) {
                self.take(u64::from_le_bytes(word));
                self.carry.clear();
            }
        }
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            if let Ok(word) = <[u8; 8]>::try_from(c) {
                self.take(u64::from_le_bytes(word));
            }
        }
        self.carry.extend_from_slice(chunks.remainder());
        Ok(())
    }

    fn take(&mut self, word: u64) {
        if self.left > 0 {
            self.words.push(word);
            self.left -= 1;
        }
    }
}

/// Creates `dir` and its missing parents (each parent fsynced so the new
/// entry is durable).
pub(crate) async fn create_dir_all(dir: &Path) -> io::Result<()> {
    let mut missing = Vec::new();
    let mut at = Some(dir);
    while let Some(p) = at {
        if p.as_os_str().is_empty() || p.exists() {
            break;
        }
        missing.push(p);
        at = p.parent();
    }
    for p in missing.into_iter().rev() {
        Directory::create(p).await?.close().await?;
        if let Some(parent) = p.parent().filter(|q| !q.as_os_str().is_empty()) {
            sync_dir(parent).await?;
        }
    }
    Ok(())
}

/// Makes the directory's entries (a rename, a new file) durable.
pub(crate) async fn sync_dir(dir: &Path) -> io::Result<()> {
    let d = Directory::open(dir).await?;
    let synced = d.sync().await;
    d.close().await?;
    synced.map_err(io::Error::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        assert_eq!(parse_name(&file_name(7)), Some(Name::Run(7)));
        assert_eq!(parse_name(&tmp_name(12)), Some(Name::Tmp(12)));
        for other in [
            "run-",
            "run-.tmp",
            "run-1x",
            "run-+1",
            "runs-1",
            "run-1.tmp.tmp",
            "x",
        ] {
            assert_eq!(parse_name(other), None, "{other}");
        }
    }

    #[test]
    fn a_block_is_binary_searched() {
        let keys: Vec<u64> = (1..=512u64).map(|i| i * 3).collect();
        let bytes: Vec<u8> = keys.iter().flat_map(|k| k.to_le_bytes()).collect();
        for &k in &keys {
            assert!(block_contains(&bytes, k));
            assert!(!block_contains(&bytes, k + 1));
        }
        assert!(!block_contains(&bytes, 0));
        assert!(!block_contains(&[], 5));
    }
}
