//! Recrawls (`--since`): the synthetic site exported as files for nginx
//! (whose ETag and Last-Modified come from the files, and which answers
//! conditional requests itself), crawled with `--warc`; a tenth of its
//! pages changed; crawled again against the first crawl's records. Only
//! the changed pages come back in full (nginx's log), every URL is
//! reached again (the unchanged pages' links read from the first crawl's
//! WARC records), the report counts both, and pywb replays the second
//! crawl's WACZ, with the first crawl's WARC files beside it, byte for
//! byte as the pages are now. A capture whose WARC file is gone is asked
//! for again in full.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::cli::ringcrawl;
use crate::common::nginx::{Nginx, Seen};
use crate::common::pywb::Pywb;
use crate::common::{records_at, tools};
use ringcrawl_site::server::Reply;
use ringcrawl_site::synth::{SiteSpec, SynthSite};
use ringcrawl_warc::timestamp;

const PAGES: usize = 200;

/// The synthetic site's answers at `authority`: files to write (by URL
/// path) and the nginx `location` lines of its redirects.
fn export(site: &SynthSite, authority: &str) -> (BTreeMap<String, Vec<u8>>, String) {
    let mut files = BTreeMap::new();
    let mut redirects = String::new();
    for path in site.expected_paths() {
        let Reply::Http {
            status,
            headers,
            body,
        } = site.clean_reply(authority, &path)
        else {
            continue;
        };
        match status {
            200 => {
                files.insert(path, body);
            }
            301 | 302 | 303 | 307 | 308 => {
                let location = headers
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("location"))
                    .map_or("/", |(_, v)| v.as_str());
                redirects.push_str(&format!(
                    "location = {path} {{ return {status} {location}; }}\n"
                ));
            }
            _ => {}
        }
    }
    (files, redirects)
}

/// Where the file of URL path `path` lies under `dir/site`.
fn file_of(dir: &Path, path: &str) -> PathBuf {
    let rel = if path == "/" {
        "index.html"
    } else {
        path.trim_start_matches('/')
    };
    dir.join("site").join(rel)
}

fn write(dir: &Path, path: &str, body: &[u8]) {
    let file = file_of(dir, path);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, body).unwrap();
}

/// nginx serving the synthetic site from `dir/site`; the files it
/// serves, by URL path.
fn serve(dir: &Path, site: &SynthSite) -> (Nginx, BTreeMap<String, Vec<u8>>) {
    let nginx = Nginx::start(dir.to_path_buf(), |port| {
        let (_, redirects) = export(site, &format!("127.0.0.1:{port}"));
        format!(
            "server {{ listen 127.0.0.1:{port}; root site; absolute_redirect off;\n\
             types {{ text/html html; text/css css; image/png png; }}\n{redirects}}}\n"
        )
    });
    let (files, _) = export(site, &format!("127.0.0.1:{}", nginx.port()));
    for (path, body) in &files {
        write(dir, path, body);
    }
    (nginx, files)
}

/// The access log's lines so far.
fn logged(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("access.log"))
        .unwrap_or_default()
        .lines()
        .count()
}

/// The tests' crawls: no robots.txt or sitemap asked for, quiet.
const FLAGS: [&str; 3] = ["--ignore-robots", "--no-sitemaps", "-q"];

/// Where a test's two crawls write under `dir`: their WARC directories
/// (made) and records.
struct Crawls {
    w1: PathBuf,
    w2: PathBuf,
    one: PathBuf,
    two: PathBuf,
}

impl Crawls {
    fn in_dir(dir: &Path) -> Crawls {
        let crawls = Crawls {
            w1: dir.join("w1"),
            w2: dir.join("w2"),
            one: dir.join("one.jsonl"),
            two: dir.join("two.jsonl"),
        };
        std::fs::create_dir_all(&crawls.w1).unwrap();
        std::fs::create_dir_all(&crawls.w2).unwrap();
        crawls
    }

    /// The first crawl of `root`, archived in `w1`, its records `one`.
    fn first(&self, root: &str) {
        run(&[root, "--warc", text(&self.w1), "-o", text(&self.one)]);
    }
}

fn text(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The binary with `args` and [`FLAGS`]; it must exit 0.
fn run(args: &[&str]) {
    let args = [args, &FLAGS[..]].concat();
    let out = ringcrawl(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The WARC files in `dir`.
fn warcs(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".warc.gz"))
        .collect();
    files.sort();
    files
}

/// The WARC files packed in the WACZ at `wacz`, extracted into `into`
/// (pywb's `wb-manager` takes WACZ indexes named `.cdx` only; it indexes
/// the WARC files itself).
fn unpack_warcs(wacz: &Path, into: &Path) -> Vec<PathBuf> {
    std::fs::create_dir_all(into).unwrap();
    let mut zip = zip::ZipArchive::new(File::open(wacz).unwrap()).unwrap();
    let mut out = Vec::new();
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).unwrap();
        let name = entry.name().unwrap().to_string();
        if let Some(file) = name.strip_prefix("archive/") {
            let path = into.join(file);
            std::io::copy(&mut entry, &mut File::create(&path).unwrap()).unwrap();
            out.push(path);
        }
    }
    out
}

/// A record's `timestamp` as 14 digits, as replay URLs name it.
fn timestamp14(record: &serde_json::Value) -> String {
    record["timestamp"]
        .as_str()
        .unwrap()
        .chars()
        .filter(char::is_ascii_digit)
        .take(14)
        .collect()
}

#[test]
fn a_recrawl_downloads_only_the_changed_pages_reaches_every_page_and_replays() {
    let test = "a_recrawl_downloads_only_the_changed_pages_reaches_every_page_and_replays";
    if !tools::require("nginx", test) {
        return;
    }
    let site = SynthSite::new(SiteSpec {
        pages: PAGES,
        ..SiteSpec::default()
    });
    let dir = Nginx::dir();
    let (mut nginx, files) = serve(&dir, &site);
    let origin = format!("http://127.0.0.1:{}", nginx.port());
    let root = format!("{origin}/");
    let crawls = Crawls::in_dir(&dir);
    let Crawls { w1, w2, one, two } = &crawls;
    crawls.first(&root);
    let before = logged(&dir);
    // Replay tells captures apart by the second (14-digit timestamps):
    // the recrawl starts in a later one than the crawl's last capture.
    let first_records = records_at(one, &origin);
    let last = first_records
        .iter()
        .map(|(_, record)| timestamp14(record))
        .max()
        .unwrap();
    while timestamp::timestamp14(SystemTime::now()) <= last {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }

    // A tenth of the HTML pages changed (their links kept): a comment
    // added, so nginx's ETag (mtime and size) changes.
    let html: Vec<&String> = files
        .keys()
        .filter(|p| p.ends_with(".html") || *p == "/")
        .collect();
    let changed: BTreeSet<String> = html.iter().step_by(10).map(|p| p.to_string()).collect();
    for path in &changed {
        let mut body = files[path].clone();
        body.extend_from_slice(b"\n<!-- changed for the recrawl -->\n");
        write(&dir, path, &body);
    }

    let wacz = dir.join("two.wacz");
    let report = dir.join("two.json");
    run(&[
        &root,
        "--since",
        text(one),
        "--since-warc",
        text(w1),
        "--warc",
        text(w2),
        "--wacz",
        text(&wacz),
        "--report-json",
        text(&report),
        "-o",
        text(two),
    ]);
    let mut seen: Vec<Seen> = nginx.stop();
    let again = seen.split_off(before);

    // Of the files the first crawl fetched, only the changed ones came
    // back whole; the others were 304s.
    let fetched: BTreeSet<&str> = seen
        .iter()
        .filter(|s| s.status == 200)
        .map(|s| s.uri.as_str())
        .collect();
    let whole: BTreeSet<&str> = again
        .iter()
        .filter(|s| s.status == 200)
        .map(|s| s.uri.as_str())
        .collect();
    let not_modified: BTreeSet<&str> = again
        .iter()
        .filter(|s| s.status == 304)
        .map(|s| s.uri.as_str())
        .collect();
    assert_eq!(whole, changed.iter().map(String::as_str).collect());
    let unchanged: BTreeSet<&str> = fetched.difference(&whole).copied().collect();
    assert_eq!(not_modified, unchanged);
    assert_eq!(
        again
            .iter()
            .filter(|s| matches!(s.status, 200 | 304))
            .count(),
        fetched.len(),
        "each file asked for once: {again:?}"
    );

    // Every URL reached again, each once; the unchanged ones as 304s
    // that name their earlier capture.
    let second_records = records_at(two, &origin);
    let urls = |records: &[(String, serde_json::Value)]| -> BTreeSet<String> {
        records.iter().map(|(p, _)| p.clone()).collect()
    };
    assert_eq!(urls(&second_records), urls(&first_records));
    assert_eq!(second_records.len(), first_records.len());
    let mut saved = 0;
    for (path, record) in &second_records {
        if changed.contains(path) {
            assert_eq!(record["revalidation"], "modified", "{path}");
            assert_eq!(record["status"], 200, "{path}");
        } else if unchanged.contains(path.as_str()) {
            assert_eq!(record["revalidation"], "not_modified", "{path}");
            assert_eq!(record["status"], 304, "{path}");
            assert_eq!(record["size"], 0, "{path}");
            let size = files[path].len() as u64;
            assert_eq!(record["earlier"]["encoded_size"], size, "{path}");
            saved += size;
            let earlier = &first_records.iter().find(|(p, _)| p == path).unwrap().1;
            assert_eq!(record["earlier"]["warc_offset"], earlier["warc_offset"]);
            // Its links were read from the earlier capture.
            assert_eq!(record["num_urls"], earlier["num_urls"], "{path}");
        } else {
            assert!(record.get("revalidation").is_none(), "{path}: {record}");
        }
    }
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let counts = &summary["revalidations"];
    assert_eq!(counts["modified"], changed.len());
    assert_eq!(counts["not_modified"], unchanged.len());
    assert_eq!(counts["refetched"], 0);
    assert_eq!(counts["bytes_saved"], saved);

    // Replayed from the second crawl's WACZ, with the first crawl's WARC
    // files beside it: each page as it is now, unchanged ones included.
    let mut archives = warcs(w1);
    archives.extend(unpack_warcs(&wacz, &dir.join("unpacked")));
    let Some(pywb) = Pywb::serve_or_skip(test, &archives) else {
        return;
    };
    for path in html.iter().step_by(3) {
        let url = format!("{origin}{path}");
        let record = &second_records.iter().find(|(p, _)| p == *path).unwrap().1;
        let when = timestamp14(record);
        let replayed = pywb.get(&when, &url);
        assert_eq!(replayed.status, 200, "{url}");
        let now = std::fs::read(file_of(&dir, path)).unwrap();
        assert!(
            replayed.body == now,
            "{url} (changed: {}) replayed other bytes at {when}: {} bytes, {:?}, not {} bytes",
            changed.contains(*path),
            replayed.body.len(),
            replayed.headers,
            now.len()
        );
    }
}

#[test]
fn a_304_whose_earlier_capture_is_gone_is_fetched_again_in_full() {
    let test = "a_304_whose_earlier_capture_is_gone_is_fetched_again_in_full";
    if !tools::require("nginx", test) {
        return;
    }
    let dir = Nginx::dir();
    write(&dir, "/", b"<a href='/a.html'>a</a>");
    write(&dir, "/a.html", b"<a href='/b.html'>b</a>");
    write(&dir, "/b.html", b"leaf");
    let mut nginx = Nginx::start(dir.clone(), |port| {
        format!("server {{ listen 127.0.0.1:{port}; root site; }}\n")
    });
    let origin = format!("http://127.0.0.1:{}", nginx.port());
    let root = format!("{origin}/");
    let crawls = Crawls::in_dir(&dir);
    let Crawls { w1, w2, one, two } = &crawls;
    crawls.first(&root);
    // The first crawl's WARC files are gone; its records are not.
    for file in warcs(w1) {
        std::fs::remove_file(file).unwrap();
    }
    let before = logged(&dir);
    run(&[
        &root,
        "--since",
        text(one),
        "--warc",
        text(w2),
        "-o",
        text(two),
    ]);
    let seen: Vec<Seen> = nginx.stop().split_off(before);
    // Each page: a 304, then the page in full.
    let statuses: BTreeMap<String, Vec<u16>> = seen.iter().fold(BTreeMap::new(), |mut m, s| {
        m.entry(s.uri.clone()).or_default().push(s.status);
        m
    });
    for uri in ["/", "/a.html", "/b.html"] {
        assert_eq!(statuses[uri], [304, 200], "{uri}: {statuses:?}");
    }
    let records = records_at(two, &origin);
    assert_eq!(records.len(), 3, "{records:?}");
    for (path, record) in &records {
        assert_eq!(record["revalidation"], "refetched", "{path}");
        assert_eq!(record["status"], 200, "{path}");
        assert!(record["warc_file"].is_string(), "{path}: archived in full");
    }
}

#[test]
fn a_since_file_that_cannot_be_read_is_a_usage_error() {
    let out = ringcrawl(&[
        "--since",
        "/nonexistent/earlier.jsonl",
        "http://127.0.0.1:9/",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--since") && stderr.contains("/nonexistent/earlier.jsonl"),
        "{stderr}"
    );
    let out = ringcrawl(&[
        "--since",
        "/dev/null",
        "-H",
        "If-None-Match: \"x\"",
        "http://127.0.0.1:9/",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("If-None-Match"));
}
