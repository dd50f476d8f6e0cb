//! OpenSSL's `s_server` on loopback, for TLS tests against a server that
//! is not ours: started with a certificate made by the test, on a port the
//! kernel picks (it says which on its first line, `ACCEPT 127.0.0.1:PORT`),
//! killed and its files removed on drop. Whether openssl is installed is
//! `tools::require`'s to say, before.

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ringcrawl_site::tls::ServerCert;

/// How long `s_server` may take to listen.
const START_LIMIT: Duration = Duration::from_secs(10);

/// A running `openssl s_server`.
pub struct SServer {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl SServer {
    /// `openssl s_server` serving `cert` on 127.0.0.1 with `args` (the
    /// versions, `-www`, ...); returns once it accepts connections.
    pub fn start(cert: &ServerCert, args: &[&str]) -> SServer {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("ringcrawl-s_server-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("cert.pem"), cert.chain_pem()).unwrap();
        std::fs::write(dir.join("key.pem"), cert.key_pem()).unwrap();
        let mut child = Command::new("openssl")
            .arg("s_server")
            .args(args)
            .args(["-accept", "127.0.0.1:0"])
            .arg("-cert")
            .arg(dir.join("cert.pem"))
            .arg("-key")
            .arg(dir.join("key.pem"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("openssl s_server starts");
        // Its output is read to the end on a thread of its own, so a full
        // pipe never stops it; the first ACCEPT line says the port.
        let stdout = child.stdout.take().unwrap();
        let (said, port) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut said = Some(said);
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(rest) = line.strip_prefix("ACCEPT") {
                    if let Some(said) = said.take() {
                        let port = rest.rsplit(':').next().and_then(|p| p.trim().parse().ok());
                        let _ = said.send((port, line.clone()));
                    }
                }
            }
        });
        let mut server = SServer {
            child,
            port: 0,
            dir,
        };
        let (port, line) = port
            .recv_timeout(START_LIMIT)
            .expect("openssl s_server says where it listens");
        server.port = port.unwrap_or_else(|| {
            panic!("no port in openssl s_server's {line:?} (OpenSSL 3 says it)")
        });
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", server.port)).is_err() {
            assert!(
                started.elapsed() < START_LIMIT,
                "openssl s_server did not listen on {}",
                server.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for SServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
