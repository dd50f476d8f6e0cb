//! Per-shard name resolution: `--resolve` pins, IP literals, and a cache in
//! front of the system resolver, which runs on glommio's blocking thread
//! pool so a lookup never stalls the executor thread.
//!
//! Not a DNS client: TTLs and an async resolver are future work; entries
//! (negative ones included) live for the whole crawl.
// Network data flows through here: a panic would take down a whole shard.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::unreachable
)]

use std::cell::RefCell;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::rc::Rc;

use thiserror::Error;

/// A host name that gave no usable address.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("cannot resolve {host}: {reason}")]
pub struct DnsError {
    pub host: String,
    pub reason: String,
}

/// Resolver of one shard (the shard owns every host it resolves).
pub struct Resolver {
    /// `--resolve` pins, keyed by (lower-cased host, port); shared read-only.
    pins: Rc<HashMap<(String, u16), IpAddr>>,
    /// Answers so far, by host (failures included, as the one-line reason).
    cache: RefCell<HashMap<String, Result<IpAddr, String>>>,
}

impl Resolver {
    pub fn new(pins: HashMap<(String, u16), IpAddr>) -> Self {
        Resolver {
            pins: Rc::new(pins),
            cache: RefCell::new(HashMap::new()),
        }
    }

    /// The address to connect to for `host:port`.
    pub async fn resolve(&self, host: &str, port: u16) -> Result<SocketAddr, DnsError> {
        if let Some(ip) = self.pins.get(&(host.to_string(), port)) {
            return Ok(SocketAddr::new(*ip, port));
        }
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = bare.parse::<IpAddr>() {
            return Ok(SocketAddr::new(ip, port));
        }
        let cached = self.cache.borrow().get(host).cloned();
        let answer = match cached {
            Some(answer) => answer,
            None => {
                let name = host.to_string();
                let answer = glommio::executor()
                    .spawn_blocking(move || lookup(&name))
                    .await;
                self.cache
                    .borrow_mut()
                    .insert(host.to_string(), answer.clone());
                answer
            }
        };
        answer
            .map(|ip| SocketAddr::new(ip, port))
            .map_err(|reason| DnsError {
                host: host.to_string(),
                reason,
            })
    }
}

/// Blocking system lookup (getaddrinfo, so /etc/hosts is honoured);
/// IPv4 preferred.
fn lookup(host: &str) -> Result<IpAddr, String> {
    let addrs: Vec<SocketAddr> = (host, 0)
        .to_socket_addrs()
        .map_err(|e| e.to_string())?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .map(SocketAddr::ip)
        .ok_or_else(|| "no addresses".to_string())
}

#[cfg(test)]
#[allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]
mod tests {
    use super::*;

    fn run<T>(f: impl std::future::Future<Output = T>) -> T {
        glommio::LocalExecutorBuilder::new(glommio::Placement::Unbound)
            .io_memory(1 << 20)
            .make()
            .unwrap()
            .run(f)
    }

    #[test]
    fn pins_literals_and_localhost_resolve() {
        let pins = HashMap::from([(
            ("site.test".to_string(), 8080),
            "127.0.0.9".parse().unwrap(),
        )]);
        run(async move {
            let r = Resolver::new(pins);
            assert_eq!(
                r.resolve("site.test", 8080).await.unwrap().to_string(),
                "127.0.0.9:8080"
            );
            assert!(
                r.resolve("site.test", 9090).await.is_err(),
                "a pin is for one port"
            );
            assert_eq!(
                r.resolve("127.0.0.1", 80).await.unwrap().to_string(),
                "127.0.0.1:80"
            );
            assert_eq!(
                r.resolve("[::1]", 80).await.unwrap().to_string(),
                "[::1]:80"
            );
            assert!(r.resolve("localhost", 80).await.unwrap().ip().is_loopback());
        });
    }

    #[test]
    fn unknown_name_is_an_error_and_cached() {
        run(async {
            let r = Resolver::new(HashMap::new());
            let err = r.resolve("no-such-host.invalid", 80).await.unwrap_err();
            assert_eq!(err.host, "no-such-host.invalid");
            assert!(r.cache.borrow().contains_key("no-such-host.invalid"));
        });
    }
}
