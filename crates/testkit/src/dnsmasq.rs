//! A real dnsmasq on a free loopback port for the DNS tests, with the
//! names and options a test gives, killed (by its PID) when dropped, also
//! when a test panics. Where dnsmasq is missing the test skips
//! ([`crate::tools::require_tool`]).

use std::fs;
use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::dns::wire_name;
use crate::tools::require_tool;

/// A dnsmasq of a test's own (see the module's doc).
pub struct Dnsmasq {
    child: Child,
    /// Where it answers (UDP and TCP).
    pub addr: SocketAddr,
    dir: PathBuf,
}

impl Drop for Dnsmasq {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = fs::remove_dir_all(&self.dir);
    }
}

fn scratch_dir() -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "ringcrawl-dnsmasq-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    fs::create_dir_all(&dir).unwrap();
    dir
}

impl Dnsmasq {
    /// A dnsmasq on 127.0.0.1 that reads no system file and asks no
    /// upstream of its own, serving `hosts` (hosts-file text) and whatever
    /// `args` add; it must answer A for `probe` (a name of `hosts` or
    /// `args`) to count as up. `None` (after saying why) when dnsmasq is
    /// not installed.
    pub fn start(test: &str, hosts: &str, args: &[String], probe: &str) -> Option<Dnsmasq> {
        let bin = require_tool(
            test,
            "dnsmasq",
            "Debian package dnsmasq-base; .ci/run installs it when apt-get can",
        )?;
        let dir = scratch_dir();
        fs::write(dir.join("hosts"), hosts).unwrap();
        for _ in 0..10 {
            let port = {
                let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
                let port = udp.local_addr().unwrap().port();
                if TcpListener::bind(("127.0.0.1", port)).is_err() {
                    continue;
                }
                port
            };
            let log = fs::File::create(dir.join("log")).unwrap();
            let mut child = Command::new(&bin)
                .arg("--keep-in-foreground")
                .arg("--conf-file=/dev/null")
                .arg("--pid-file=")
                .arg("--no-resolv")
                .arg("--no-hosts")
                .arg(format!("--port={port}"))
                .arg("--listen-address=127.0.0.1")
                .arg("--bind-interfaces")
                .arg(format!("--addn-hosts={}", dir.join("hosts").display()))
                .args(args)
                .arg(format!(
                    "--log-facility={}",
                    dir.join("dnsmasq.log").display()
                ))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .expect("dnsmasq starts");
            let addr = SocketAddr::from(([127, 0, 0, 1], port));
            if wait_ready(&mut child, addr, probe) {
                return Some(Dnsmasq { child, addr, dir });
            }
            let _ = child.kill();
            let _ = child.wait();
            eprintln!(
                "dnsmasq on port {port} did not come up: {}",
                fs::read_to_string(dir.join("log")).unwrap_or_default()
            );
        }
        panic!("dnsmasq would not start; see above");
    }
}

/// Asks `addr` for `probe`'s A until it answers (or dnsmasq exits).
fn wait_ready(child: &mut Child, addr: SocketAddr, probe: &str) -> bool {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let mut q = vec![0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
    q.extend_from_slice(&wire_name(probe));
    q.extend_from_slice(&[0, 1, 0, 1]);
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut buf = [0u8; 512];
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return false;
        }
        let _ = socket.send_to(&q, addr);
        if let Ok((n, _)) = socket.recv_from(&mut buf) {
            if n > 12 && buf[..2] == [0x12, 0x34] {
                return true;
            }
        }
    }
    false
}

/// Hosts of one [`broken_aaaa`] dnsmasq: `h{i}.drop.test` (A from a hosts
/// file; dnsmasq forwards their AAAA questions to `silent`, which never
/// answers, so dnsmasq never answers them either) and `h{i}.nx6.test` (A
/// from `--address`, NXDOMAIN for AAAA: a `--local` domain).
pub const BROKEN_AAAA_HOSTS: usize = 4;

/// A dnsmasq broken on purpose: it never answers AAAA for the
/// `h{i}.drop.test` names and says NXDOMAIN to AAAA for the
/// `h{i}.nx6.test` ones, while A answers 127.0.0.1 for both
/// ([`BROKEN_AAAA_HOSTS`] of each); `silent` is a socket nobody reads.
/// `None` as [`Dnsmasq::start`].
pub fn broken_aaaa(test: &str, silent: SocketAddr) -> Option<Dnsmasq> {
    let hosts: String = (0..BROKEN_AAAA_HOSTS)
        .map(|i| format!("127.0.0.1 h{i}.drop.test\n"))
        .collect();
    let mut args = vec![
        format!("--server=/drop.test/{}#{}", silent.ip(), silent.port()),
        "--local=/nx6.test/".to_string(),
        "--local-ttl=300".to_string(),
    ];
    args.extend((0..BROKEN_AAAA_HOSTS).map(|i| format!("--address=/h{i}.nx6.test/127.0.0.1")));
    Dnsmasq::start(test, &hosts, &args, "h0.nx6.test")
}
