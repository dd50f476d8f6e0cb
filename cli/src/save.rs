//! `--save DIR`: a mirror of the pages fetched, one file per URL, laid out
//! as `wget -x -P DIR` lays them out: `DIR/HOST/PATH`, with `HOST:PORT`
//! for a port other than the scheme's, `index.html` for a path that ends
//! in `/`, and the query kept in the file name (`page?id=1`). Bodies are
//! written as received with their content codings undone (at most
//! `--max-body`). Only answers with a 2xx status are saved (wget keeps
//! no error pages and no redirects).
//!
//! Where a URL's path is both a file and a directory (`/a` and `/a/b`),
//! the file is `a/index.html`: the first to come takes its place and the
//! other one moves or goes there. A name longer than 200 bytes is cut and
//! ends in a hash of the whole, so two long names stay apart.
//!
//! The pages come from the crawl's bounded [`ringcrawl::PageStream`] to a
//! thread of their own, so writing never blocks a shard; when the disk is
//! slower than the crawl, the crawl waits. Not the WARC output (which
//! keeps every answer, heads and all): this is the browsable copy.

use std::fs;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, ErrorKind};
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use url::Url;

/// Bytes of pages that may wait for the writer thread.
pub const SAVE_BUDGET: usize = 32 << 20;

/// Longest file or directory name written, in bytes.
const MAX_NAME: usize = 200;

/// What the mirror did, for the end of the crawl.
#[derive(Debug, Default)]
pub struct Saved {
    pub files: u64,
    pub bytes: u64,
    pub failed: u64,
    /// The first failure, with its path.
    pub first_error: Option<String>,
}

/// Write every 2xx page of `pages` under `dir`, on a thread of its own.
pub fn spawn(dir: PathBuf, pages: ringcrawl::PageStream) -> io::Result<JoinHandle<Saved>> {
    std::thread::Builder::new()
        .name("ringcrawl-save".into())
        .spawn(move || {
            let mut saved = Saved::default();
            for page in pages {
                let page = page.page();
                if !page.status().is_some_and(|s| (200..300).contains(&s)) {
                    continue;
                }
                let Ok(url) = Url::parse(page.url()) else {
                    continue;
                };
                let Some(relative) = path_for(&url) else {
                    continue;
                };
                match write(&dir, &relative, page.body()) {
                    Ok(()) => {
                        saved.files += 1;
                        saved.bytes += page.body().len() as u64;
                    }
                    Err(e) => {
                        saved.failed += 1;
                        saved.first_error.get_or_insert_with(|| {
                            format!("{}: {e}", dir.join(&relative).display())
                        });
                    }
                }
            }
            saved
        })
}

/// Where `url` is saved, under the mirror's directory: `HOST[:PORT]/PATH`
/// (see the module docs). `None` for a URL with no host.
pub fn path_for(url: &Url) -> Option<PathBuf> {
    let host = url.host_str()?;
    let mut path = PathBuf::from(name(&match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    }));
    let segments: Vec<&str> = url.path().split('/').skip(1).collect();
    let (last, dirs) = segments.split_last().unwrap_or((&"", &[]));
    for segment in dirs {
        path.push(name(segment));
    }
    let file = if last.is_empty() { "index.html" } else { last };
    match url.query() {
        Some(query) => path.push(name(&format!("{file}?{query}"))),
        None => path.push(name(file)),
    }
    Some(path)
}

/// `segment` as a file name: `_` for an empty one or one of `.` and `..`
/// (a normalised URL has none, a library caller's might), cut past
/// [`MAX_NAME`] bytes with a hash of the whole.
fn name(segment: &str) -> String {
    if segment.is_empty() || segment == "." || segment == ".." {
        return "_".into();
    }
    if segment.len() <= MAX_NAME {
        return segment.to_string();
    }
    let mut cut = MAX_NAME - 17;
    while !segment.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut hasher = foldhash::fast::FixedState::with_seed(0).build_hasher();
    hasher.write(segment.as_bytes());
    format!(
        "{}-{:016x}",
        segment.get(..cut).unwrap_or(""),
        hasher.finish()
    )
}

/// Write `body` to `dir/relative`, making the directories; a file in the
/// way of a directory becomes its `index.html`, and a directory in the
/// way of a file gets the file as its `index.html`.
fn write(dir: &Path, relative: &Path, body: &[u8]) -> io::Result<()> {
    let target = dir.join(relative);
    if let Some(parent) = target.parent() {
        make_dirs(dir, parent)?;
    }
    if target.is_dir() {
        return fs::write(target.join("index.html"), body);
    }
    fs::write(&target, body)
}

/// `create_dir_all(path)`, where a file in the way (a page saved earlier
/// as `a`, now needed as the directory `a/`) moves into the new directory
/// as its `index.html`.
fn make_dirs(root: &Path, path: &Path) -> io::Result<()> {
    match fs::create_dir_all(path) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() != ErrorKind::NotADirectory && e.kind() != ErrorKind::AlreadyExists => {
            return Err(e)
        }
        Err(_) => {}
    }
    let mut at = root.to_path_buf();
    let below = path
        .strip_prefix(root)
        .map_err(|_| io::Error::other("outside the mirror"))?;
    for part in below.components() {
        at.push(part);
        if at.is_file() {
            let moved = at.with_extension("ringcrawl-moving");
            fs::rename(&at, &moved)?;
            fs::create_dir(&at)?;
            fs::rename(&moved, at.join("index.html"))?;
        }
    }
    fs::create_dir_all(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(url: &str) -> String {
        path_for(&Url::parse(url).unwrap())
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn urls_map_to_files_as_wget_lays_them_out() {
        assert_eq!(path("http://a.test/"), "a.test/index.html");
        assert_eq!(path("http://a.test/x/y.html"), "a.test/x/y.html");
        assert_eq!(path("http://a.test/x/"), "a.test/x/index.html");
        assert_eq!(path("http://a.test:8080/x"), "a.test:8080/x");
        assert_eq!(path("https://a.test:443/x"), "a.test/x");
        assert_eq!(path("http://a.test/p?id=1&b=2"), "a.test/p?id=1&b=2");
        assert_eq!(path("http://a.test/?q"), "a.test/index.html?q");
        assert_eq!(
            path("http://a.test/%E6%97%A5/"),
            "a.test/%E6%97%A5/index.html"
        );
        assert_eq!(path("http://[::1]:8080/"), "[::1]:8080/index.html");
        assert_eq!(path("http://a.test/x//y"), "a.test/x/_/y");
    }

    #[test]
    fn a_long_name_is_cut_with_a_hash_that_keeps_two_apart() {
        let a = path(&format!("http://a.test/{}a", "x".repeat(300)));
        let b = path(&format!("http://a.test/{}b", "x".repeat(300)));
        assert_ne!(a, b);
        let file = a.rsplit('/').next().unwrap();
        assert!(file.len() <= MAX_NAME, "{}", file.len());
    }

    #[test]
    fn a_page_that_is_also_a_directory_becomes_its_index() {
        let dir = std::env::temp_dir().join(format!("ringcrawl-save-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let save = |url: &str, body: &str| {
            write(
                &dir,
                &path_for(&Url::parse(url).unwrap()).unwrap(),
                body.as_bytes(),
            )
            .unwrap()
        };
        // The file first, then a page under it.
        save("http://a.test/a", "A");
        save("http://a.test/a/b", "B");
        // A directory first, then the page that has its name.
        save("http://a.test/c/d", "D");
        save("http://a.test/c", "C");
        let read = |p: &str| fs::read_to_string(dir.join(p)).unwrap();
        assert_eq!(read("a.test/a/index.html"), "A");
        assert_eq!(read("a.test/a/b"), "B");
        assert_eq!(read("a.test/c/d"), "D");
        assert_eq!(read("a.test/c/index.html"), "C");
        fs::remove_dir_all(&dir).unwrap();
    }
}
