//! An external sort of `(u64, u64)` pairs in bounded memory, for an
//! in-run compaction ([`super::in_run`]): pairs gather in RAM up to a
//! chunk, which is sorted and written to a run file; the runs are merged,
//! at most [`FAN_IN`] at a time, so neither the pairs nor the open files
//! grow with the input.
//!
//! What it is not: what the pairs mean (fingerprints and discovery
//! numbers: `in_run.rs`), nor a general-purpose sorter (fixed-size
//! little-endian pairs, runs in one scratch folder the caller owns and
//! removes).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use super::super::{io_err, StateError};

/// Runs merged at once (each holds a read buffer of [`BUFFER`] bytes).
const FAN_IN: usize = 16;

/// The read and write buffer of one run file.
const BUFFER: usize = 1 << 16;

/// One pair.
pub(super) type Pair = (u64, u64);

/// Pairs pushed so far: those in RAM, and the runs written.
pub(super) struct Sorter {
    dir: PathBuf,
    name: &'static str,
    chunk: usize,
    pairs: Vec<Pair>,
    runs: Vec<PathBuf>,
    written: usize,
    /// The most pairs held in RAM at once (what the bound is checked by).
    pub most_held: usize,
}

impl Sorter {
    /// A sorter holding at most `chunk` pairs in RAM (at least one),
    /// writing its runs to `dir` as `{name}-{n}.run`.
    pub(super) fn new(dir: &Path, name: &'static str, chunk: usize) -> Sorter {
        Sorter {
            dir: dir.to_path_buf(),
            name,
            chunk: chunk.max(1),
            pairs: Vec::new(),
            runs: Vec::new(),
            written: 0,
            most_held: 0,
        }
    }

    /// Add a pair.
    pub(super) fn push(&mut self, pair: Pair) -> Result<(), StateError> {
        // Grown by doubling up to the chunk exactly, never past it, and
        // kept from run to run: the chunk is what the sort holds.
        let len = self.pairs.len();
        if len == self.pairs.capacity() {
            let want = len.saturating_mul(2).max(1024).min(self.chunk);
            self.pairs.reserve_exact(want.saturating_sub(len).max(1));
        }
        self.pairs.push(pair);
        self.most_held = self.most_held.max(self.pairs.len());
        if self.pairs.len() >= self.chunk {
            let mut pairs = std::mem::take(&mut self.pairs);
            pairs.sort_unstable();
            let run = self.write_run(pairs.iter().copied().map(Ok))?;
            self.runs.push(run);
            pairs.clear();
            self.pairs = pairs;
        }
        Ok(())
    }

    /// The pairs' buffer's capacity (what the chunk bounds).
    #[cfg(test)]
    fn capacity(&self) -> usize {
        self.pairs.capacity()
    }

    /// Write `pairs` (in order) to a new run file.
    fn write_run(
        &mut self,
        pairs: impl Iterator<Item = Result<Pair, StateError>>,
    ) -> Result<PathBuf, StateError> {
        let path = self.dir.join(format!("{}-{}.run", self.name, self.written));
        self.written += 1;
        let file = File::create(&path).map_err(io_err("creating", &path))?;
        let mut out = BufWriter::with_capacity(BUFFER, file);
        for pair in pairs {
            let (a, b) = pair?;
            out.write_all(&a.to_le_bytes())
                .and_then(|()| out.write_all(&b.to_le_bytes()))
                .map_err(io_err("writing", &path))?;
        }
        out.flush().map_err(io_err("writing", &path))?;
        Ok(path)
    }

    /// Every pair pushed, in order.
    pub(super) fn finish(mut self) -> Result<Sorted, StateError> {
        if self.runs.is_empty() {
            let mut pairs = std::mem::take(&mut self.pairs);
            pairs.sort_unstable();
            return Ok(Sorted::Held(pairs.into_iter()));
        }
        if !self.pairs.is_empty() {
            let mut pairs = std::mem::take(&mut self.pairs);
            pairs.sort_unstable();
            let run = self.write_run(pairs.into_iter().map(Ok))?;
            self.runs.push(run);
        }
        // Merge passes until one merge of at most FAN_IN runs is left.
        while self.runs.len() > FAN_IN {
            let rest = self.runs.split_off(FAN_IN);
            let first = std::mem::replace(&mut self.runs, rest);
            let mut merge = Merge::open(&first)?;
            let merged = self.write_run(std::iter::from_fn(|| merge.next().transpose()))?;
            for path in &first {
                std::fs::remove_file(path).map_err(io_err("removing", path))?;
            }
            self.runs.push(merged);
        }
        Ok(Sorted::Merged(Merge::open(&self.runs)?))
    }
}

/// The sorted pairs.
pub(crate) enum Sorted {
    /// All in RAM (fewer than a chunk).
    Held(std::vec::IntoIter<Pair>),
    /// Merged from run files.
    Merged(Merge),
}

impl Sorted {
    /// The next pair, None after the last.
    pub(crate) fn next(&mut self) -> Result<Option<Pair>, StateError> {
        match self {
            Sorted::Held(pairs) => Ok(pairs.next()),
            Sorted::Merged(merge) => merge.next(),
        }
    }
}

/// A merge of sorted run files.
pub(crate) struct Merge {
    runs: Vec<(PathBuf, BufReader<File>)>,
    heads: BinaryHeap<Reverse<(Pair, usize)>>,
}

impl Merge {
    fn open(paths: &[PathBuf]) -> Result<Merge, StateError> {
        let mut merge = Merge {
            runs: Vec::with_capacity(paths.len()),
            heads: BinaryHeap::with_capacity(paths.len()),
        };
        for (i, path) in paths.iter().enumerate() {
            let file = File::open(path).map_err(io_err("opening", path))?;
            merge
                .runs
                .push((path.clone(), BufReader::with_capacity(BUFFER, file)));
            if let Some(pair) = merge.read(i)? {
                merge.heads.push(Reverse((pair, i)));
            }
        }
        Ok(merge)
    }

    /// The next pair of run `i`.
    fn read(&mut self, i: usize) -> Result<Option<Pair>, StateError> {
        let Some((path, file)) = self.runs.get_mut(i) else {
            return Ok(None);
        };
        let mut bytes = [0u8; 16];
        match file.read_exact(&mut bytes) {
            Ok(()) => {
                let (a, b) = bytes.split_at(8);
                let word = |w: &[u8]| {
                    let mut le = [0u8; 8];
                    le.copy_from_slice(w);
                    u64::from_le_bytes(le)
                };
                Ok(Some((word(a), word(b))))
            }
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
            Err(e) => Err(io_err("reading", path)(e)),
        }
    }

    /// The least pair left.
    fn next(&mut self) -> Result<Option<Pair>, StateError> {
        let Some(Reverse((pair, i))) = self.heads.pop() else {
            return Ok(None);
        };
        if let Some(next) = self.read(i)? {
            self.heads.push(Reverse((next, i)));
        }
        Ok(Some(pair))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_come_out_sorted_whatever_the_chunk_and_the_chunk_bounds_what_is_held() {
        let dir = std::env::temp_dir().join(format!("ringcrawl-sort-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // A fixed pseudo-random sequence with repeats.
        let input: Vec<Pair> = (0u64..1000).map(|i| ((i * 7919) % 613, i % 5)).collect();
        let mut expected = input.clone();
        expected.sort_unstable();
        // 1000 pairs in chunks of 3: 334 runs, more than one merge pass.
        for chunk in [1, 3, 64, 5000] {
            let mut sorter = Sorter::new(&dir, "t", chunk);
            for pair in &input {
                sorter.push(*pair).unwrap();
            }
            assert!(sorter.most_held <= chunk, "chunk {chunk}");
            assert!(sorter.capacity() <= chunk, "chunk {chunk}");
            let mut sorted = sorter.finish().unwrap();
            let mut out = Vec::new();
            while let Some(pair) = sorted.next().unwrap() {
                out.push(pair);
            }
            assert_eq!(out, expected, "chunk {chunk}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
