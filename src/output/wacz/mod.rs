//! `--wacz FILE`: the crawl's WARC files packaged as a WACZ 1.1.1 file (a
//! ZIP that ReplayWeb.page and pywb open as it is): `archive/` holds each
//! WARC file under its own name, `indexes/index.cdxj` the crawl's CDXJ
//! index sorted (its `filename`s are those names already),
//! `pages/pages.jsonl` the HTML pages answered 2xx ([`pages`]), and
//! `datapackage.json` and `datapackage-digest.json` the manifest
//! ([`manifest`]): every file's path, size and SHA-256 (`sha2`).
//!
//! It runs once, after the crawl: every shard has closed its WARC files and
//! the index writer has finished. So it is plain blocking `std` file I/O on
//! the thread that ran the crawl (the main thread for the binary), no
//! glommio: no executor is left to block. WARC files are streamed, never
//! held in memory: each is copied into the ZIP through one buffer and
//! hashed on the way. Only the index is read whole, to sort it (about
//! 300 bytes per archived response; a crawl whose index does not fit in
//! memory would need an external sort, which is not done here).
//!
//! Every entry is stored, not deflated: the spec asks it for the WARC
//! files (gzip already, and read at random offsets by replay tools) and
//! allows it for the rest, so the `zip` crate needs no compressor. The
//! package is written to `FILE.tmp` and renamed to `FILE` when whole; on
//! an error `FILE.tmp` is removed and the WARC files stay as they are.
//!
//! Not what decides the index's order and the pages ([`pages`]), nor the
//! manifest's JSON ([`manifest`]).

pub(crate) mod manifest;
pub(crate) mod pages;

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use sha2::{Digest, Sha256};
use thiserror::Error;
use zip::result::ZipError;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

use manifest::{About, Resource};

/// Bytes copied at a time, and the ZIP file's write buffer.
const BUFFER: usize = 256 << 10;

/// Entries this long or longer need ZIP64 sizes.
const LARGE: u64 = u32::MAX as u64;

/// What to package.
#[derive(Debug, Clone)]
pub(crate) struct Package<'a> {
    /// The crawl's WARC files, each to be `archive/` and its file name.
    pub warcs: &'a [PathBuf],
    /// The crawl's CDXJ index of those files (unsorted).
    pub index: &'a Path,
    /// The page a replay opens first, if it is among the pages (the
    /// crawl's first root).
    pub main_url: Option<&'a str>,
    /// One line naming the collection.
    pub title: &'a str,
}

/// What was packaged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Written {
    /// Entries of `pages/pages.jsonl`.
    pub pages: usize,
    /// Size of the WACZ file.
    pub bytes: u64,
}

/// Why no WACZ file was written.
#[derive(Debug, Error)]
pub(crate) enum WaczError {
    /// Reading a WARC file or the index, or writing the package.
    #[error("{action} {}: {error}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        error: io::Error,
    },
    /// The ZIP could not be written (an entry, or its central directory).
    #[error("writing {}: {error}", path.display())]
    Zip { path: PathBuf, error: ZipError },
    /// A WARC file whose name is not UTF-8, or two with one name.
    #[error("cannot put {} into archive/: {problem}", path.display())]
    WarcName {
        path: PathBuf,
        problem: &'static str,
    },
}

/// `path` with `suffix` appended to its file name.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Where the crawl writes its index when the WACZ needs one and `--cdxj`
/// did not ask for it: beside the package, removed once it is made.
pub(crate) fn scratch_index(out: &Path) -> PathBuf {
    with_suffix(out, ".index.tmp")
}

/// Write the package to `out` (through `out.tmp`, renamed when whole).
pub(crate) fn write(package: &Package, out: &Path) -> Result<Written, WaczError> {
    let tmp = with_suffix(out, ".tmp");
    let written = write_to(package, &tmp).and_then(|written| {
        std::fs::rename(&tmp, out).map_err(|error| WaczError::Io {
            action: "renaming to",
            path: out.to_path_buf(),
            error,
        })?;
        Ok(written)
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Write the whole package to `tmp`.
fn write_to(package: &Package, tmp: &Path) -> Result<Written, WaczError> {
    let io_err = |action: &'static str, path: &Path| {
        let path = path.to_path_buf();
        move |error| WaczError::Io {
            action,
            path,
            error,
        }
    };
    let file = File::create(tmp).map_err(io_err("creating", tmp))?;
    let mut zip = Zip {
        writer: ZipWriter::new(BufWriter::with_capacity(BUFFER, file)),
        path: tmp,
        options: SimpleFileOptions::default()
            .compression_method(CompressionMethod::Stored)
            .last_modified_time(zip_time(SystemTime::now()))
            .unix_permissions(0o644),
    };
    let mut resources = Vec::new();

    let mut warcs: Vec<&PathBuf> = package.warcs.iter().collect();
    warcs.sort();
    let mut names = HashSet::new();
    let mut buffer = vec![0; BUFFER];
    for warc in warcs {
        let name =
            warc.file_name()
                .and_then(|n| n.to_str())
                .ok_or_else(|| WaczError::WarcName {
                    path: warc.clone(),
                    problem: "no UTF-8 file name",
                })?;
        if !names.insert(name) {
            return Err(WaczError::WarcName {
                path: warc.clone(),
                problem: "another WARC file has its name",
            });
        }
        let mut source = File::open(warc).map_err(io_err("opening", warc))?;
        let len = source.metadata().map_err(io_err("reading", warc))?.len();
        resources.push(zip.entry(&format!("archive/{name}"), len, |out| {
            copy(&mut source, out, &mut buffer).map_err(io_err("copying", warc))
        })?);
    }

    let index = std::fs::read(package.index).map_err(io_err("reading", package.index))?;
    let lines = pages::sorted_lines(&index);
    let pages = pages::pages(&lines);
    let index_len = lines.iter().map(|l| l.len() as u64 + 1).sum();
    resources.push(zip.entry("indexes/index.cdxj", index_len, |out| {
        lines
            .iter()
            .try_for_each(|line| {
                out.write_all(line)?;
                out.write_all(b"\n")
            })
            .map_err(io_err("writing the index into", tmp))
    })?);
    drop(lines);
    drop(index);

    let jsonl = pages::pages_jsonl(&pages);
    resources.push(zip.entry("pages/pages.jsonl", jsonl.len() as u64, |out| {
        out.write_all(&jsonl).map_err(io_err("writing into", tmp))
    })?);

    let about = About {
        title: package.title,
        created: SystemTime::now(),
        main_page: package
            .main_url
            .and_then(|url| pages.iter().find(|p| p.url == url)),
    };
    let datapackage = manifest::datapackage(&about, &resources);
    let digest = manifest::digest(&datapackage);
    for (path, bytes) in [
        ("datapackage.json", &datapackage),
        ("datapackage-digest.json", &digest),
    ] {
        zip.entry(path, bytes.len() as u64, |out| {
            out.write_all(bytes).map_err(io_err("writing into", tmp))
        })?;
    }

    let zip_err = |error| WaczError::Zip {
        path: tmp.to_path_buf(),
        error,
    };
    let buffered = zip.writer.finish().map_err(zip_err)?;
    let file = buffered
        .into_inner()
        .map_err(|e| io_err("writing", tmp)(e.into_error()))?;
    file.sync_all().map_err(io_err("syncing", tmp))?;
    let bytes = file.metadata().map_err(io_err("reading", tmp))?.len();
    Ok(Written {
        pages: pages.len(),
        bytes,
    })
}

/// The ZIP being written.
struct Zip<'a, W: Write + Seek> {
    writer: ZipWriter<W>,
    /// Its path, for errors.
    path: &'a Path,
    options: SimpleFileOptions,
}

impl<W: Write + Seek> Zip<'_, W> {
    /// Add the entry `path`, `len` bytes long, with what `fill` writes;
    /// its resource (size and SHA-256 of what was written).
    fn entry(
        &mut self,
        path: &str,
        len: u64,
        fill: impl FnOnce(&mut dyn Write) -> Result<(), WaczError>,
    ) -> Result<Resource, WaczError> {
        let options = self.options.large_file(len >= LARGE);
        self.writer
            .start_file(path, options)
            .map_err(|error| WaczError::Zip {
                path: self.path.to_path_buf(),
                error,
            })?;
        let mut out = Hashing {
            inner: &mut self.writer,
            sha: Sha256::new(),
            bytes: 0,
        };
        fill(&mut out)?;
        let Hashing { sha, bytes, .. } = out;
        Ok(Resource::new(path, &sha.finalize(), bytes))
    }
}

/// Copy all of `from` to `to` through `buffer`.
fn copy(from: &mut impl Read, to: &mut dyn Write, buffer: &mut [u8]) -> io::Result<()> {
    loop {
        let n = match from.read(buffer) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        to.write_all(buffer.get(..n).unwrap_or_default())?;
    }
}

/// A writer that hashes and counts what it passes on.
struct Hashing<W: Write> {
    inner: W,
    sha: Sha256,
    bytes: u64,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        let written = buf.get(..n).unwrap_or_default();
        self.sha.update(written);
        self.bytes += written.len() as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// `t` as a ZIP entry's time (UTC; the ZIP format's earliest, 1980, if
/// it does not fit).
fn zip_time(t: SystemTime) -> zip::DateTime {
    let at = time::OffsetDateTime::from(t);
    u16::try_from(at.year())
        .ok()
        .and_then(|year| {
            zip::DateTime::from_date_and_time(
                year,
                at.month().into(),
                at.day(),
                at.hour(),
                at.minute(),
                at.second(),
            )
            .ok()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    /// A fresh directory for one test.
    fn dir(test: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("ringcrawl-wacz-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn temporary_names_are_the_package_name_and_a_suffix() {
        let out = Path::new("/x/crawl.wacz");
        assert_eq!(scratch_index(out), Path::new("/x/crawl.wacz.index.tmp"));
        assert_eq!(with_suffix(out, ".tmp"), Path::new("/x/crawl.wacz.tmp"));
    }

    #[test]
    fn entries_keep_their_time_to_the_second_and_fall_back_to_1980() {
        let t = zip_time(UNIX_EPOCH + Duration::from_secs(1_700_000_000));
        assert_eq!(
            (
                t.year(),
                t.month(),
                t.day(),
                t.hour(),
                t.minute(),
                t.second()
            ),
            (2023, 11, 14, 22, 13, 20)
        );
        assert_eq!(zip_time(UNIX_EPOCH), zip::DateTime::default());
    }

    #[test]
    fn a_package_stores_every_file_with_the_hash_and_size_the_manifest_gives() {
        let dir = dir("package");
        let warc = dir.join("a-s0-00000.warc.gz");
        // More than one copy buffer.
        let warc_bytes: Vec<u8> = (0..BUFFER * 2 + 7).map(|i| (i % 251) as u8).collect();
        std::fs::write(&warc, &warc_bytes).unwrap();
        let index = dir.join("index.cdxj");
        std::fs::write(
            &index,
            "test,a)/b 20240101000001 {\"url\": \"http://a.test/b\", \"mime\": \"text/html\", \"status\": \"200\", \"digest\": \"sha1:B\", \"length\": \"1\", \"offset\": \"1\", \"filename\": \"a-s0-00000.warc.gz\"}\n\
             test,a)/ 20240101000000 {\"url\": \"http://a.test/\", \"mime\": \"text/html\", \"status\": \"200\", \"digest\": \"sha1:A\", \"length\": \"1\", \"offset\": \"0\", \"filename\": \"a-s0-00000.warc.gz\"}\n",
        )
        .unwrap();
        let out = dir.join("crawl.wacz");
        let written = write(
            &Package {
                warcs: std::slice::from_ref(&warc),
                index: &index,
                main_url: Some("http://a.test/"),
                title: "a test",
            },
            &out,
        )
        .unwrap();
        assert_eq!(written.pages, 2);
        assert!(!with_suffix(&out, ".tmp").exists());
        assert_eq!(written.bytes, std::fs::metadata(&out).unwrap().len());

        let mut zip = zip::ZipArchive::new(File::open(&out).unwrap()).unwrap();
        let mut read = |name: &str| {
            let mut entry = zip.by_name(name).unwrap();
            assert_eq!(entry.compression(), CompressionMethod::Stored, "{name}");
            let mut bytes = Vec::new();
            entry.read_to_end(&mut bytes).unwrap();
            bytes
        };
        assert_eq!(read("archive/a-s0-00000.warc.gz"), warc_bytes);
        let sorted = String::from_utf8(read("indexes/index.cdxj")).unwrap();
        assert!(sorted.starts_with("test,a)/ 2024"), "{sorted}");
        assert_eq!(sorted.lines().count(), 2);
        let datapackage = read("datapackage.json");
        let manifest: serde_json::Value = serde_json::from_slice(&datapackage).unwrap();
        assert_eq!(manifest["mainPageUrl"], "http://a.test/");
        assert_eq!(manifest["title"], "a test");
        let resources = manifest["resources"].as_array().unwrap();
        let paths: Vec<&str> = resources
            .iter()
            .map(|r| r["path"].as_str().unwrap())
            .collect();
        assert_eq!(
            paths,
            [
                "archive/a-s0-00000.warc.gz",
                "indexes/index.cdxj",
                "pages/pages.jsonl"
            ]
        );
        for r in resources {
            let bytes = read(r["path"].as_str().unwrap());
            assert_eq!(r["bytes"], bytes.len() as u64);
            assert_eq!(r["hash"], manifest::sha256_text(&Sha256::digest(&bytes)));
        }
        let digest: serde_json::Value =
            serde_json::from_slice(&read("datapackage-digest.json")).unwrap();
        assert_eq!(
            digest["hash"],
            manifest::sha256_text(&Sha256::digest(&datapackage))
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_missing_warc_file_is_an_error_and_leaves_no_package() {
        let dir = dir("missing");
        let index = dir.join("index.cdxj");
        std::fs::write(&index, "").unwrap();
        let out = dir.join("crawl.wacz");
        let gone = dir.join("gone.warc.gz");
        let err = write(
            &Package {
                warcs: std::slice::from_ref(&gone),
                index: &index,
                main_url: None,
                title: "t",
            },
            &out,
        )
        .unwrap_err();
        assert!(err.to_string().contains("gone.warc.gz"), "{err}");
        assert!(!out.exists());
        assert!(!with_suffix(&out, ".tmp").exists());

        let twice = [dir.join("a/x.warc.gz"), dir.join("b/x.warc.gz")];
        for p in &twice {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, b"w").unwrap();
        }
        let err = write(
            &Package {
                warcs: &twice,
                index: &index,
                main_url: None,
                title: "t",
            },
            &out,
        )
        .unwrap_err();
        assert!(matches!(err, WaczError::WarcName { .. }), "{err}");
        assert!(!out.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
