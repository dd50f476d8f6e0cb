//! nginx on loopback, for tests against a web server that is not ours:
//! one process (`master_process off`, `daemon off`), its config, logs,
//! temp files and site in a temp dir of its own (nothing of /etc/nginx is
//! read). nginx cannot listen on port 0, so a port the kernel just gave
//! out is tried, and another one if nginx finds it taken. Its access log
//! says what the server saw of each request (`LOG_FORMAT`). Stopped on
//! drop, or by [`Nginx::stop`], which waits for the logs. Whether nginx
//! is installed is `tools::require`'s to say, before.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::tools::find_tool;

/// How long nginx may take to listen, or to stop.
const START_LIMIT: Duration = Duration::from_secs(20);

/// Ports tried before giving up (each one taken by someone else).
const ATTEMPTS: usize = 8;

/// The access log's format, `log_format seen` in the config: one request
/// a line, fields separated by `|`, `-` for none: TLS version, whether the
/// session was resumed (`r`) or not (`.`), the SNI name, the Host header,
/// the request URI, the status, the gzip ratio, the Accept-Encoding header.
pub const LOG_FORMAT: &str = "$ssl_protocol|$ssl_session_reused|$ssl_server_name|$host|$request_uri|$status|$gzip_ratio|$http_accept_encoding";

/// One line of the access log ([`LOG_FORMAT`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub protocol: String,
    pub resumed: bool,
    pub server_name: String,
    pub host: String,
    pub uri: String,
    pub status: u16,
    pub gzip_ratio: String,
    pub accept_encoding: String,
}

impl Seen {
    fn parse(line: &str) -> Option<Seen> {
        let f: Vec<&str> = line.split('|').collect();
        let [protocol, reused, server_name, host, uri, status, gzip_ratio, accept_encoding] =
            f.as_slice()
        else {
            return None;
        };
        Some(Seen {
            protocol: protocol.to_string(),
            resumed: *reused == "r",
            server_name: server_name.to_string(),
            host: host.to_string(),
            uri: uri.to_string(),
            status: status.parse().ok()?,
            gzip_ratio: gzip_ratio.to_string(),
            accept_encoding: accept_encoding.to_string(),
        })
    }
}

/// A running nginx.
pub struct Nginx {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
}

impl Nginx {
    /// A temp dir for an nginx: write the site, certificates and keys in it
    /// before [`Nginx::start`].
    pub fn dir() -> PathBuf {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("ringcrawl-nginx-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("tmp")).unwrap();
        dir
    }

    /// nginx in `dir` (from [`Nginx::dir`]) with the `server { ... }`
    /// blocks `servers(port)` writes for the port it is to listen on
    /// (`listen 127.0.0.1:{port} ssl;` or plain); paths in them are
    /// relative to `dir`. The access log `access.log` has [`LOG_FORMAT`].
    /// Returns once nginx listens.
    pub fn start(dir: PathBuf, servers: impl Fn(u16) -> String) -> Nginx {
        let bin = find_tool("nginx").expect("nginx is installed (tools::require first)");
        let mut last_error = String::new();
        for _ in 0..ATTEMPTS {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free port")
                .port();
            let conf = format!(
                "master_process off;\n\
                 daemon off;\n\
                 worker_processes 1;\n\
                 pid nginx.pid;\n\
                 error_log error.log info;\n\
                 events {{ worker_connections 256; }}\n\
                 http {{\n\
                 default_type text/html;\n\
                 types {{ text/html html; }}\n\
                 log_format seen '{LOG_FORMAT}';\n\
                 access_log access.log seen;\n\
                 client_body_temp_path tmp/body;\n\
                 proxy_temp_path tmp/proxy;\n\
                 fastcgi_temp_path tmp/fastcgi;\n\
                 uwsgi_temp_path tmp/uwsgi;\n\
                 scgi_temp_path tmp/scgi;\n\
                 {}\n\
                 }}\n",
                servers(port)
            );
            std::fs::write(dir.join("nginx.conf"), conf).unwrap();
            let _ = std::fs::remove_file(dir.join("nginx.pid"));
            let _ = std::fs::remove_file(dir.join("error.log"));
            let child = Command::new(&bin)
                .arg("-p")
                .arg(&dir)
                .arg("-c")
                .arg(dir.join("nginx.conf"))
                .arg("-e")
                .arg(dir.join("error.log"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("nginx starts");
            let mut nginx = Nginx {
                child: Some(child),
                port,
                dir: dir.clone(),
            };
            // nginx writes its pid file once its sockets listen; it exits if
            // it cannot bind (after retrying for a while).
            let started = Instant::now();
            loop {
                let child = nginx.child.as_mut().unwrap();
                if let Ok(Some(status)) = child.try_wait() {
                    nginx.child = None;
                    last_error = format!(
                        "nginx exited ({status}): {}",
                        std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
                    );
                    break;
                }
                let pid = std::fs::read_to_string(dir.join("nginx.pid")).unwrap_or_default();
                if pid.trim() == child.id().to_string() {
                    return nginx;
                }
                assert!(
                    started.elapsed() < START_LIMIT,
                    "nginx did not listen on {port}: {}",
                    std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
                );
                std::thread::sleep(Duration::from_millis(20));
            }
            if !last_error.contains("Address already in use") {
                break;
            }
        }
        panic!("nginx did not start: {last_error}");
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Stops nginx gracefully (requests under way end and are logged) and
    /// returns its access log.
    pub fn stop(&mut self) -> Vec<Seen> {
        if let Some(mut child) = self.child.take() {
            // SIGQUIT: graceful shutdown. Our own child, by its pid.
            let pid = child.id() as libc::pid_t;
            unsafe { libc::kill(pid, libc::SIGQUIT) };
            let started = Instant::now();
            while !matches!(child.try_wait(), Ok(Some(_))) {
                if started.elapsed() > START_LIMIT {
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let log = std::fs::read_to_string(self.dir.join("access.log")).unwrap_or_default();
        log.lines()
            .map(|l| Seen::parse(l).unwrap_or_else(|| panic!("an access log line: {l:?}")))
            .collect()
    }

    /// nginx's error log so far (for a failing assertion's message).
    pub fn errors(&self) -> String {
        std::fs::read_to_string(self.dir.join("error.log")).unwrap_or_default()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
