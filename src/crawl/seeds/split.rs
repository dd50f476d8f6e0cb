//! The first pass over the seed lists, before any shard starts: every line
//! is read once, each root goes to a file of its owning shard (its URL
//! normalised), each bad line to the file of one shard (to be recorded
//! there), and the seeds' hosts are gathered into the scope's
//! [`SeedHosts`].
//!
//! Why a first pass: a link to a seed's host may be found before that seed
//! is reached, and the scope must already say yes to it. The shards then
//! read their own file as the crawl goes (`crate::crawl::shard`), so the
//! seeds wait on disk, not in RAM, and a shard parses no line twice.
//! Standard input and a library caller's reader are read once, like files.
//!
//! Blocking `std::fs` I/O: it runs on the calling thread before the
//! executors exist.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use ringcrawl_links::urls;

use crate::config::SeedSource;
use crate::keys::shard_for;
use crate::web::scope::ScopeMode;

use super::{parse_line, shorten, SeedLine, MAX_LINE};
use crate::web::scope::{SeedHosts, SeedHostsBuilder};

/// What the first pass left for the shards.
#[derive(Debug)]
pub(crate) struct Split {
    /// Shard `i`'s file (see [`Entry`] for its lines).
    pub files: Vec<SeedFile>,
    pub hosts: SeedHosts,
    /// Roots written (each in one shard's file).
    pub roots: u64,
    /// Lines that were not roots (blank lines and comments aside).
    pub bad: u64,
    /// Taken from a state directory, as an earlier run left it.
    pub kept: bool,
}

/// One shard's file of seeds, and where its reading starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SeedFile {
    pub path: PathBuf,
    /// Bytes of the file taken by earlier runs (0 for a new crawl).
    pub start: u64,
    /// Where the shard keeps the position it reached ([`position_path`]),
    /// with a state directory only.
    pub position: Option<PathBuf>,
}

/// A line of a shard's file.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Entry<'a> {
    /// A root, normalised.
    Root(&'a str),
    /// A bad line: where it was and why, and its text (shortened).
    Bad { at: &'a str, text: &'a str },
}

impl Entry<'_> {
    /// Parse a line of a shard's file (without its `\n`); None if it is
    /// not one this module wrote.
    pub(crate) fn parse(line: &str) -> Option<Entry<'_>> {
        let (kind, rest) = line.split_once('\t')?;
        match kind {
            "U" => Some(Entry::Root(rest)),
            "B" => {
                let (at, text) = rest.split_once('\t')?;
                Some(Entry::Bad { at, text })
            }
            _ => None,
        }
    }
}

/// Why the first pass failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SplitError {
    #[error("--seeds {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("writing the seeds for the shards in {dir}: {source}")]
    Write { dir: String, source: std::io::Error },
    /// A list that can be read only once (standard input, a reader) was
    /// being split into the state directory when the crawl stopped.
    #[error("the seeds from {0} were not all kept in the state directory before the crawl stopped: start the crawl again")]
    Lost(String),
}

/// Read `sources` in order and split their roots by owner among `shards`
/// files in `dir` (made if missing).
pub(crate) fn split(
    sources: &[SeedSource],
    shards: usize,
    mode: ScopeMode,
    dir: &Path,
) -> Result<Split, SplitError> {
    let write_err = write_error(dir);
    std::fs::create_dir_all(dir).map_err(&write_err)?;
    let files: Vec<PathBuf> = (0..shards).map(|i| part(dir, i)).collect();
    let mut out = files
        .iter()
        .map(|p| File::create(p).map(|f| BufWriter::with_capacity(64 << 10, f)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(&write_err)?;
    let mut hosts = SeedHostsBuilder::new(mode);
    let (mut roots, mut bad) = (0u64, 0u64);
    for source in sources {
        let name = source.name();
        let read_err = |source| SplitError::Read {
            path: name.clone(),
            source,
        };
        let reader: Box<dyn Read> = match source {
            SeedSource::File(path) => Box::new(File::open(path).map_err(read_err)?),
            SeedSource::Stdin => Box::new(std::io::stdin().lock()),
            SeedSource::Reader(reader) => match reader.take() {
                Some(reader) => reader,
                None => continue,
            },
        };
        let mut lines = Lines::new(BufReader::with_capacity(64 << 10, reader));
        let mut number = 0u64;
        while let Some(line) = lines.next_line().map_err(read_err)? {
            number += 1;
            let (shard, entry) = match parse_line(line) {
                SeedLine::Skip => continue,
                SeedLine::Root(url) => {
                    hosts.add(&url);
                    roots += 1;
                    let shard = shard_for(urls::host(&url), shards);
                    (shard, format!("U\t{url}\n"))
                }
                SeedLine::Bad(why) => {
                    bad += 1;
                    let text = String::from_utf8_lossy(line);
                    let text = shorten(text.trim()).replace(['\t', '\n', '\r'], " ");
                    let at =
                        format!("{name} line {number}: {why}").replace(['\t', '\n', '\r'], " ");
                    (
                        (number % shards.max(1) as u64) as usize,
                        format!("B\t{at}\t{text}\n"),
                    )
                }
            };
            if let Some(file) = out.get_mut(shard) {
                file.write_all(entry.as_bytes()).map_err(&write_err)?;
            }
        }
    }
    for file in out {
        file.into_inner()
            .map_err(|e| e.into_error())
            .and_then(|f| f.sync_data().map(|()| f))
            .map_err(&write_err)?;
    }
    Ok(Split {
        files: files
            .into_iter()
            .map(|path| SeedFile {
                path,
                start: 0,
                position: None,
            })
            .collect(),
        hosts: hosts.finish(),
        roots,
        bad,
        kept: false,
    })
}

/// The file that says the split in a state directory is whole: the roots
/// and bad lines it holds, written after every other file of it is on
/// disk.
const COMPLETE: &str = "seeds-complete";

/// The seeds' hosts ([`SeedHosts::encode`]), kept beside the split so a
/// resume need not read it all again.
const HOSTS: &str = "seeds-hosts";

/// Shard `shard`'s part of the split in `dir`.
fn part(dir: &Path, shard: usize) -> PathBuf {
    dir.join(format!("seeds-{shard}"))
}

/// A write to the split's folder `dir` failed.
fn write_error(dir: &Path) -> impl Fn(std::io::Error) -> SplitError + '_ {
    move |source| SplitError::Write {
        dir: dir.display().to_string(),
        source,
    }
}

/// The file where a shard keeps how many bytes of its seed file it has
/// taken: 8 bytes, little-endian, never ahead of its journal.
pub(crate) fn position_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".pos");
    PathBuf::from(name)
}

/// Whether `dir` holds a whole split that an earlier run kept.
pub(crate) fn is_kept(dir: &Path) -> bool {
    dir.join(COMPLETE).exists()
}

/// The split of a crawl with a state directory: made once, by the
/// crawl's first run, in `dir`, and taken as it is by every resume, each
/// shard starting where it stopped. So a resume reads no list again (a
/// list on standard input included) and queues no seed twice.
pub(crate) fn split_kept(
    sources: &[SeedSource],
    shards: usize,
    mode: ScopeMode,
    dir: &Path,
) -> Result<Split, SplitError> {
    let write_err = write_error(dir);
    let complete = dir.join(COMPLETE);
    if complete.exists() {
        return open_kept(shards, mode, dir);
    }
    let once = sources
        .iter()
        .find(|s| !matches!(s, SeedSource::File(_)))
        .filter(|_| part(dir, 0).exists());
    if let Some(source) = once {
        return Err(SplitError::Lost(source.name()));
    }
    let mut split = split(sources, shards, mode, dir)?;
    write_synced(&dir.join(HOSTS), &split.hosts.encode()).map_err(&write_err)?;
    write_synced(
        &complete,
        format!("{} {}\n", split.roots, split.bad).as_bytes(),
    )
    .map_err(&write_err)?;
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(&write_err)?;
    for file in &mut split.files {
        file.position = Some(position_path(&file.path));
    }
    split.kept = true;
    Ok(split)
}

/// A split an earlier run kept: its files, each shard's position, and the
/// hosts (read from their file, or gathered again from the split if that
/// file is damaged).
fn open_kept(shards: usize, mode: ScopeMode, dir: &Path) -> Result<Split, SplitError> {
    let read_err = |path: &Path| {
        let path = path.display().to_string();
        move |source| SplitError::Read { path, source }
    };
    let complete = dir.join(COMPLETE);
    let text = std::fs::read_to_string(&complete).map_err(read_err(&complete))?;
    let mut counts = text.split_whitespace().map(str::parse::<u64>);
    let (roots, bad) = match (counts.next(), counts.next()) {
        (Some(Ok(roots)), Some(Ok(bad))) => (roots, bad),
        _ => (0, 0),
    };
    let mut files = Vec::with_capacity(shards);
    for i in 0..shards {
        let path = part(dir, i);
        let len = std::fs::metadata(&path).map_err(read_err(&path))?.len();
        let position = position_path(&path);
        let start = match std::fs::read(&position) {
            Ok(bytes) => bytes
                .get(..8)
                .and_then(|b| <[u8; 8]>::try_from(b).ok())
                .map_or(0, u64::from_le_bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
            Err(e) => return Err(read_err(&position)(e)),
        };
        files.push(SeedFile {
            path,
            // A position past the end is damage: read the file again
            // (the seen-set drops what was queued).
            start: if start <= len { start } else { 0 },
            position: Some(position),
        });
    }
    let hosts_path = dir.join(HOSTS);
    let kept = std::fs::read(&hosts_path)
        .ok()
        .and_then(|bytes| SeedHosts::decode(mode, &bytes));
    let hosts = match kept {
        Some(hosts) => hosts,
        None => {
            log::warn!(
                "{}: damaged; the seeds' hosts are gathered again from the split",
                hosts_path.display()
            );
            let mut hosts = SeedHostsBuilder::new(mode);
            for file in &files {
                let reader = File::open(&file.path).map_err(read_err(&file.path))?;
                let mut lines = Lines::new(BufReader::with_capacity(64 << 10, reader));
                while let Some(line) = lines.next_line().map_err(read_err(&file.path))? {
                    let text = std::str::from_utf8(line).unwrap_or("");
                    if let Some(Entry::Root(url)) = Entry::parse(text) {
                        if let Ok(url) = url::Url::parse(url) {
                            hosts.add(&url);
                        }
                    }
                }
            }
            hosts.finish()
        }
    };
    Ok(Split {
        files,
        hosts,
        roots,
        bad,
        kept: true,
    })
}

/// Write `bytes` to a new file at `path` and `fsync` it.
fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = File::create(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Lines of a reader, each at most [`MAX_LINE`] bytes kept (the rest of a
/// longer line is skipped, and the line is then too long for
/// [`parse_line`]), without their `\n` or `\r\n`.
struct Lines<R> {
    reader: R,
    line: Vec<u8>,
}

impl<R: BufRead> Lines<R> {
    fn new(reader: R) -> Self {
        Lines {
            reader,
            line: Vec::new(),
        }
    }

    fn next_line(&mut self) -> std::io::Result<Option<&[u8]>> {
        self.line.clear();
        let mut any = false;
        loop {
            let buf = match self.reader.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                break;
            }
            any = true;
            let (chunk, used, end) = match memchr::memchr(b'\n', buf) {
                Some(i) => (buf.get(..i).unwrap_or(buf), i + 1, true),
                None => (buf, buf.len(), false),
            };
            // One byte past the cap is kept, so that the line is known to
            // be too long.
            let room = (MAX_LINE + 1).saturating_sub(self.line.len());
            self.line
                .extend_from_slice(chunk.get(..room.min(chunk.len())).unwrap_or(chunk));
            self.reader.consume(used);
            if end {
                break;
            }
        }
        if !any {
            return Ok(None);
        }
        if self.line.last() == Some(&b'\r') {
            self.line.pop();
        }
        Ok(Some(&self.line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8]) -> Vec<Vec<u8>> {
        let mut l = Lines::new(BufReader::with_capacity(16, input));
        let mut out = Vec::new();
        while let Some(line) = l.next_line().unwrap() {
            out.push(line.to_vec());
        }
        out
    }

    #[test]
    fn lines_split_on_newlines_with_or_without_carriage_returns() {
        assert_eq!(
            lines(b"a\r\nbb\n\nlast"),
            vec![
                b"a".to_vec(),
                b"bb".to_vec(),
                b"".to_vec(),
                b"last".to_vec()
            ]
        );
        assert!(lines(b"").is_empty());
    }

    #[test]
    fn a_line_longer_than_the_cap_is_cut_just_past_it_and_the_next_line_is_whole() {
        let mut input = vec![b'x'; MAX_LINE * 3];
        input.extend_from_slice(b"\nnext\n");
        let got = lines(&input);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].len(), MAX_LINE + 1);
        assert_eq!(got[1], b"next");
    }

    #[test]
    fn entries_read_back_what_was_written() {
        assert_eq!(
            Entry::parse("U\thttp://a.test/"),
            Some(Entry::Root("http://a.test/"))
        );
        assert_eq!(
            Entry::parse("B\tf line 3: bad\tftp://x"),
            Some(Entry::Bad {
                at: "f line 3: bad",
                text: "ftp://x"
            })
        );
        assert_eq!(Entry::parse("garbage"), None);
    }

    #[test]
    fn a_kept_split_is_taken_again_with_each_shards_position_and_hosts() {
        let dir = std::env::temp_dir().join(format!("ringcrawl-kept-{}", std::process::id()));
        let list = dir.join("list.txt");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(&list, "a.test\nb.test\nc.test\nftp://bad/\n").unwrap();
        let kept = dir.join("seeds");
        let sources = [SeedSource::File(list.clone())];
        assert!(!is_kept(&kept));
        let first = split_kept(&sources, 2, ScopeMode::Strict, &kept).unwrap();
        assert!(is_kept(&kept) && first.kept);
        assert_eq!((first.roots, first.bad), (3, 1));
        assert!(first
            .files
            .iter()
            .all(|f| f.start == 0 && f.position.is_some()));
        // Shard 1 took 5 bytes; the list itself is gone: not read again.
        std::fs::write(
            first.files[1].position.as_ref().unwrap(),
            5u64.to_le_bytes(),
        )
        .unwrap();
        std::fs::remove_file(&list).unwrap();
        let again = split_kept(&sources, 2, ScopeMode::Strict, &kept).unwrap();
        assert_eq!((again.roots, again.bad), (3, 1));
        assert_eq!(again.files[0].start, 0);
        assert_eq!(again.files[1].start, 5);
        assert_eq!(again.files, {
            let mut f = first.files.clone();
            f[1].start = 5;
            f
        });
        assert!(["a.test", "b.test", "c.test"]
            .iter()
            .all(|h| again.hosts.contains(h)));
        assert!(!again.hosts.contains("d.test"));
        // Damaged hosts are gathered again from the split; a position past
        // the end of its file reads the file again.
        std::fs::write(kept.join(HOSTS), b"RCSEEDH1short").unwrap();
        std::fs::write(
            first.files[0].position.as_ref().unwrap(),
            u64::MAX.to_le_bytes(),
        )
        .unwrap();
        let mended = split_kept(&sources, 2, ScopeMode::Strict, &kept).unwrap();
        assert!(["a.test", "b.test", "c.test"]
            .iter()
            .all(|h| mended.hosts.contains(h)));
        assert_eq!(mended.files[0].start, 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_list_readable_once_that_was_cut_off_while_kept_is_refused() {
        let dir = std::env::temp_dir().join(format!("ringcrawl-cut-{}", std::process::id()));
        let kept = dir.join("seeds");
        std::fs::create_dir_all(&kept).unwrap();
        // A first run was killed half way through the split.
        std::fs::write(kept.join("seeds-0"), "U\thttp://a.test/\n").unwrap();
        let err = split_kept(&[SeedSource::Stdin], 1, ScopeMode::Strict, &kept).unwrap_err();
        assert!(matches!(err, SplitError::Lost(_)), "{err}");
        assert!(err.to_string().contains("standard input"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn split_sends_each_root_to_its_owner_and_bad_lines_somewhere() {
        let dir = std::env::temp_dir().join(format!("ringcrawl-split-{}", std::process::id()));
        let list = dir.join("list.txt");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            &list,
            "# top\na.test\nhttps://b.test/x\n\nftp://c.test/\na.test\n",
        )
        .unwrap();
        let out = dir.join("out");
        let s = split(
            &[SeedSource::File(list.clone())],
            3,
            ScopeMode::Strict,
            &out,
        )
        .unwrap();
        assert_eq!((s.roots, s.bad), (3, 1));
        assert!(s.hosts.contains("a.test") && s.hosts.contains("www.b.test"));
        let mut all = Vec::new();
        for (i, file) in s.files.iter().enumerate() {
            for line in std::fs::read_to_string(&file.path).unwrap().lines() {
                match Entry::parse(line).unwrap() {
                    Entry::Root(url) => {
                        assert_eq!(shard_for(urls::host_of(url), 3), i);
                        all.push(url.to_string());
                    }
                    Entry::Bad { at, text } => {
                        assert!(at.ends_with("line 5: unsupported scheme in \"ftp://c.test/\" (only http and https)"), "{at}");
                        assert_eq!(text, "ftp://c.test/");
                    }
                }
            }
        }
        all.sort();
        assert_eq!(
            all,
            ["http://a.test/", "http://a.test/", "https://b.test/x"]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
