//! squid on loopback, an HTTP proxy that is not ours (absolute-form
//! requests, `CONNECT` tunnels, Basic proxy credentials): one process
//! (`-N`), its config, logs and hosts file in a temp dir of its own, its
//! cache off. It resolves names from that hosts file only, so a name the
//! crawler could not resolve reaching a server proves the proxy resolved
//! it. Its access log says what it was asked (`method URL status`, a
//! `CONNECT`'s URL being `host:port`). Stopped on drop, or by
//! [`Squid::stop`]. Whether squid is installed is `tools::require`'s to
//! say, before.

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::tools::find_tool;

const START_LIMIT: Duration = Duration::from_secs(30);
const ATTEMPTS: usize = 8;

/// A running squid.
pub struct Squid {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
}

impl Squid {
    /// squid resolving each of `names` to 127.0.0.1 (and nothing else),
    /// asking `user:password` with Basic if given.
    pub fn start(names: &[&str], credentials: Option<(&str, &str)>) -> Squid {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("ringcrawl-squid-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // squid started by root runs as its own user: it writes its logs
        // here.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::fs::write(
            dir.join("hosts"),
            format!("127.0.0.1 {}\n", names.join(" ")),
        )
        .unwrap();
        let access = match credentials {
            None => "http_access allow all\n".to_string(),
            Some((user, password)) => {
                let hash = Command::new("openssl")
                    .args(["passwd", "-1", password])
                    .output()
                    .expect("openssl runs");
                let hash = String::from_utf8(hash.stdout).unwrap();
                std::fs::write(dir.join("passwd"), format!("{user}:{}", hash.trim())).unwrap();
                format!(
                    "auth_param basic program /usr/lib/squid/basic_ncsa_auth {}\n\
                     auth_param basic realm test\n\
                     acl users proxy_auth REQUIRED\n\
                     http_access allow users\n\
                     http_access deny all\n",
                    dir.join("passwd").display()
                )
            }
        };
        let bin = find_tool("squid").expect("squid is installed (tools::require first)");
        let mut last_error = String::new();
        for _ in 0..ATTEMPTS {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free port")
                .port();
            let d = dir.display();
            let conf = format!(
                "http_port 127.0.0.1:{port}\n\
                 pid_filename {d}/squid.pid\n\
                 cache_log {d}/cache.log\n\
                 logformat seen %rm %ru %>Hs\n\
                 access_log stdio:{d}/access.log seen\n\
                 cache_store_log none\n\
                 cache deny all\n\
                 cache_mem 4 MB\n\
                 coredump_dir {d}\n\
                 hosts_file {d}/hosts\n\
                 dns_nameservers 127.0.0.1\n\
                 shutdown_lifetime 0 seconds\n\
                 netdb_filename none\n\
                 pinger_enable off\n\
                 logfile_rotate 0\n\
                 {access}"
            );
            std::fs::write(dir.join("squid.conf"), conf).unwrap();
            let _ = std::fs::remove_file(dir.join("squid.pid"));
            let child = Command::new(&bin)
                .arg("-N")
                .arg("-f")
                .arg(dir.join("squid.conf"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("squid starts");
            let mut squid = Squid {
                child: Some(child),
                port,
                dir: dir.clone(),
            };
            let started = Instant::now();
            loop {
                let child = squid.child.as_mut().unwrap();
                if let Ok(Some(status)) = child.try_wait() {
                    squid.child = None;
                    last_error = format!("squid exited ({status}): {}", squid.log());
                    break;
                }
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return squid;
                }
                assert!(
                    started.elapsed() < START_LIMIT,
                    "squid did not listen on {port}: {}",
                    squid.log()
                );
                std::thread::sleep(Duration::from_millis(50));
            }
            if !last_error.contains("Address already in use") {
                break;
            }
        }
        panic!("squid did not start: {last_error}");
    }

    /// The proxy's URL, with `user:password@` if given.
    pub fn url(&self, credentials: Option<(&str, &str)>) -> String {
        match credentials {
            Some((user, password)) => format!("http://{user}:{password}@127.0.0.1:{}", self.port),
            None => format!("http://127.0.0.1:{}", self.port),
        }
    }

    /// squid's own log so far (for a failing assertion's message).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("cache.log")).unwrap_or_default()
    }

    /// Stops squid and returns its access log: `(method, URL, status)`.
    pub fn stop(&mut self) -> Vec<(String, String, u16)> {
        if let Some(mut child) = self.child.take() {
            // SIGTERM: with shutdown_lifetime 0 it exits at once, its log
            // written. Our own child, by its pid.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
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
        std::fs::read_to_string(self.dir.join("access.log"))
            .unwrap_or_default()
            .lines()
            .map(|line| {
                let f: Vec<&str> = line.split(' ').collect();
                (
                    f[0].to_string(),
                    f[1].to_string(),
                    f[2].parse().unwrap_or(0),
                )
            })
            .collect()
    }
}

impl Drop for Squid {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// microsocks, a SOCKS5 server, on loopback, asking `user:password` if
/// given. It resolves names with the system's resolver. Stopped on drop.
pub struct Microsocks {
    child: Child,
    port: u16,
}

impl Microsocks {
    pub fn start(credentials: Option<(&str, &str)>) -> Microsocks {
        let bin = find_tool("microsocks").expect("microsocks is installed (tools::require first)");
        for _ in 0..ATTEMPTS {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free port")
                .port();
            let mut command = Command::new(&bin);
            command.args(["-i", "127.0.0.1", "-p", &port.to_string()]);
            if let Some((user, password)) = credentials {
                command.args(["-u", user, "-P", password]);
            }
            let child = command
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("microsocks starts");
            let mut socks = Microsocks { child, port };
            let started = Instant::now();
            while started.elapsed() < START_LIMIT {
                if let Ok(Some(_)) = socks.child.try_wait() {
                    break;
                }
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return socks;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = socks.child.kill();
        }
        panic!("microsocks did not start");
    }

    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for Microsocks {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
