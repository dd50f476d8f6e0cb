//! pywb, the Webrecorder replay system, from PyPI: a collection made of a
//! crawl's WARC files (`wb-manager init`/`add`), served by `wayback` on a
//! loopback port for the test's life, and read back in `id_` mode (the
//! archived payload as it was, nothing rewritten). Skips like the warcio
//! tests when it cannot be installed.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::warcio::{or_skip, run, venv};

pub const PYWB: &str = "pywb==2.10.0";

/// A running `wayback` over one collection; killed on drop.
pub struct Pywb {
    child: Child,
    port: u16,
    dir: PathBuf,
}

/// A replayed response: status, headers (names lower-cased), body.
pub struct Replayed {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Pywb {
    /// pywb serving `warcs` as collection `crawl`, or None after printing
    /// why `test` skips.
    pub fn serve_or_skip(test: &str, warcs: &[PathBuf]) -> Option<Pywb> {
        let bin = or_skip(test, "pywb", venv("pywb-venv", &[PYWB]))?;
        let dir = std::env::temp_dir().join(format!(
            "ringcrawl-pywb-{}-{}",
            std::process::id(),
            fastrand::u32(..)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let manager = bin.join("wb-manager");
        run(Command::new(&manager)
            .current_dir(&dir)
            .args(["init", "crawl"]))
        .unwrap_or_else(|e| panic!("{e}"));
        run(Command::new(&manager)
            .current_dir(&dir)
            .args(["add", "crawl"])
            .args(warcs))
        .unwrap_or_else(|e| panic!("{e}"));
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(bin.join("wayback"))
            .current_dir(&dir)
            .args(["--bind", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pywb = Pywb { child, port, dir };
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "wayback did not listen on {port} within 60 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(pywb)
    }

    /// `url` as archived at `timestamp` (14 digits), in `id_` mode.
    pub fn get(&self, timestamp: &str, url: &str) -> Replayed {
        get(
            self.port,
            "127.0.0.1",
            &format!("/crawl/{timestamp}id_/{url}"),
        )
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Pywb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// An HTTP/1.0 GET of `path` from 127.0.0.1:`port` with `Host: host`
/// (the server closes when done, so the body is what is left).
pub fn get(port: u16, host: &str, path: &str) -> Replayed {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n").unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no head in {:?}", String::from_utf8_lossy(&raw)));
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Replayed {
        status,
        headers,
        body: raw[split + 4..].to_vec(),
    }
}
