//! A TCP proxy on 127.0.0.1:0 that a test can cut: every connection
//! through it is shut down at once and new ones are closed as they come,
//! until it is restored. Stands for a network cut between a node and its
//! Redis (the node sees its connection drop and cannot reconnect). It can
//! also hold the server's replies back for a while (a slow or stalled
//! Redis).

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub struct Proxy {
    addr: SocketAddr,
    cut: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
    stop: Arc<AtomicBool>,
    /// Until when the server's replies are held back.
    hold: Arc<Mutex<Option<Instant>>>,
}

impl Proxy {
    /// A proxy to `target`.
    pub fn start(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let proxy = Proxy {
            addr: listener.local_addr().unwrap(),
            cut: Arc::default(),
            open: Arc::default(),
            stop: Arc::default(),
            hold: Arc::default(),
        };
        let (cut, open, stop) = (proxy.cut.clone(), proxy.open.clone(), proxy.stop.clone());
        let hold = proxy.hold.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((client, _)) if cut.load(Ordering::Relaxed) => drop(client),
                    Ok((client, _)) => {
                        let _ = client.set_nonblocking(false);
                        let Ok(server) = TcpStream::connect(target) else {
                            continue;
                        };
                        // As the ends do: no Nagle delay in the middle.
                        let _ = client.set_nodelay(true);
                        let _ = server.set_nodelay(true);
                        let mut open = open.lock().unwrap();
                        for (from, to, held) in [
                            (&client, &server, None),
                            (&server, &client, Some(hold.clone())),
                        ] {
                            let (from, to) = (from.try_clone().unwrap(), to.try_clone().unwrap());
                            std::thread::spawn(move || pump(from, to, held));
                        }
                        open.push(client);
                        open.push(server);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        proxy
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `redis://` URL of the proxy.
    pub fn redis_url(&self) -> String {
        format!("redis://{}/", self.addr)
    }

    /// Drop every connection, and refuse new ones until [`Proxy::restore`].
    pub fn cut(&self) {
        self.cut.store(true, Ordering::Relaxed);
        for stream in self.open.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }

    /// Hold every reply of the server back for `d` from now (those that
    /// come meanwhile go on at the end of it).
    pub fn hold_replies(&self, d: Duration) {
        *self.hold.lock().unwrap() = Some(Instant::now() + d);
    }

    pub fn restore(&self) {
        self.cut.store(false, Ordering::Relaxed);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.cut();
    }
}

fn pump(mut from: TcpStream, mut to: TcpStream, hold: Option<Arc<Mutex<Option<Instant>>>>) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let until = hold.as_ref().and_then(|h| *h.lock().unwrap());
                if let Some(wait) = until.and_then(|u| u.checked_duration_since(Instant::now())) {
                    std::thread::sleep(wait);
                }
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = to.shutdown(Shutdown::Both);
    let _ = from.shutdown(Shutdown::Both);
}
