//! A real `redis-server` for the cluster tests: started on a free loopback
//! port in a temporary directory, nothing saved to disk, stopped (by its
//! PID) when dropped. `.ci/run` installs Debian's `redis-server`; where it
//! is missing the tests that need it skip and say so.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `redis-server` of a test's own (see the module's doc).
pub struct RedisServer {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    dir: PathBuf,
    /// How it was started, for [`RedisServer::restart`].
    command: Vec<std::ffi::OsString>,
    password: Option<String>,
}

impl RedisServer {
    /// `redis://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Kill the server (SIGKILL, as a crash) and start it again on the
    /// same port and directory with the same flags: what it kept on disk
    /// (an append-only file, if its flags ask for one) is what it has.
    pub fn restart(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let start = Instant::now();
        // The port was ours a moment ago; another test may take it in
        // between (then this fails, rather than talk to its server).
        while start.elapsed() < Duration::from_secs(10) {
            self.child = spawn(&self.command);
            match self.wait_ready() {
                Ready::Yes => return,
                Ready::Other(pid) => panic!("port {} taken by process {pid}", self.port),
                Ready::No => {}
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("redis-server did not start again on port {}", self.port);
    }

    /// Wait (up to 5 s) until the server on its port says it is this
    /// child.
    fn wait_ready(&mut self) -> Ready {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return Ready::No;
            }
            match server_pid(self.port, self.password.as_deref()) {
                Some(pid) if pid == self.child.id() => return Ready::Yes,
                Some(pid) => return Ready::Other(pid),
                None => {}
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ready::No
    }
}

/// Whether a server just spawned answers on its port.
enum Ready {
    Yes,
    /// It exited, or did not answer in time.
    No,
    /// Another process answers there (another test's server, or a
    /// socket that connected to itself).
    Other(u32),
}

fn spawn(command: &[std::ffi::OsString]) -> Child {
    Command::new(&command[0])
        .args(&command[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn binary() -> Option<PathBuf> {
    ["/usr/bin/redis-server", "/usr/local/bin/redis-server"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// A fresh server, or None (and a line on stderr saying so) where
/// `redis-server` is not installed.
pub fn redis_or_skip(test: &str) -> Option<RedisServer> {
    redis_with_or_skip(test, &[], None)
}

/// A fresh server started with `args` beside the usual ones, asking for
/// `password` if given (`--requirepass`), or None where `redis-server` is
/// not installed.
pub fn redis_with_or_skip(
    test: &str,
    args: &[&str],
    password: Option<&str>,
) -> Option<RedisServer> {
    let Some(bin) = binary() else {
        assert!(
            std::env::var_os(crate::tools::REQUIRE_TOOLS).is_none(),
            "{test}: redis-server is not installed and {} is set (.ci/run installs it)",
            crate::tools::REQUIRE_TOOLS
        );
        eprintln!("SKIP {test}: redis-server is not installed (.ci/run installs it)");
        return None;
    };
    let dir = std::env::temp_dir().join(format!("ringcrawl-redis-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A free port: bound, read, closed, then given to the server. Tests
    // run in parallel, so two of them may be handed the same port: the
    // second server then fails to bind while a probe of the port still
    // answers (the first one's server, or a socket that connected to
    // itself). Ready means the server on the port says it is our child.
    for _ in 0..10 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut command: Vec<std::ffi::OsString> = vec![bin.clone().into()];
        command.extend(
            ["--port", &port.to_string(), "--bind", "127.0.0.1"]
                .into_iter()
                .chain(["--save", "", "--appendonly", "no", "--daemonize", "no"])
                .map(Into::into),
        );
        command.extend(["--dir".into(), dir.clone().into_os_string()]);
        command.extend(args.iter().map(Into::into));
        command.extend(
            password
                .map(|p| ["--requirepass", p])
                .into_iter()
                .flatten()
                .map(Into::into),
        );
        let mut server = RedisServer {
            child: spawn(&command),
            port,
            dir: dir.clone(),
            command,
            password: password.map(str::to_string),
        };
        if let Ready::Yes = server.wait_ready() {
            return Some(server);
        }
        // Dropping `server` kills it (and removes the directory; made again).
        drop(server);
        std::fs::create_dir_all(&dir).unwrap();
    }
    panic!("redis-server did not start");
}

/// The process id of the redis-server answering on `port` (from `INFO
/// server`), or None if nothing answers yet.
fn server_pid(port: u16, password: Option<&str>) -> Option<u32> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(1))).ok()?;
    if let Some(p) = password {
        stream.write_all(format!("AUTH {p}\r\n").as_bytes()).ok()?;
    }
    stream.write_all(b"INFO server\r\n").ok()?;
    let mut reply = Vec::new();
    let mut buf = [0u8; 4096];
    while !reply.ends_with(b"\r\n\r\n") {
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        reply.extend_from_slice(&buf[..n]);
        if let Some(pid) = String::from_utf8_lossy(&reply)
            .lines()
            .find_map(|l| l.strip_prefix("process_id:"))
            .and_then(|v| v.trim().parse().ok())
        {
            return Some(pid);
        }
    }
    None
}
