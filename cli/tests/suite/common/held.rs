//! A site of the test process that holds every reply a while and logs
//! when each request arrived, by a key of the request's (its host, the
//! address it came to): requests under one key that arrived within the
//! hold of one another ran at once. How many requests a crawl had in
//! flight, at least, whatever the machine's load.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ringcrawl_site::server::{Request, Server};

use super::{page, status};

/// How long the servers hold every reply.
pub const HOLD: Duration = Duration::from_millis(50);

/// When each request arrived, by a key of the request's.
pub type Gauge = Arc<Mutex<HashMap<String, Vec<Instant>>>>;

/// Requests under `key` that were in flight at once, at least: those that
/// arrived within [`HOLD`] of one another overlapped, as none was answered
/// before its hold was over. Never more than the truth, whatever the load.
pub fn peak(gauge: &Gauge, key: &str) -> usize {
    let mut arrivals = gauge
        .lock()
        .unwrap()
        .get(key)
        .cloned()
        .unwrap_or_else(|| panic!("no request under {key}"));
    arrivals.sort();
    (0..arrivals.len())
        .map(|i| {
            arrivals[i..]
                .iter()
                .take_while(|&&t| t < arrivals[i] + HOLD)
                .count()
        })
        .max()
        .unwrap_or(0)
}

/// A site of the test process on `addrs` whose root links to `pages`
/// pages, robots.txt a 404, every reply held [`HOLD`]; arrivals logged by
/// `key` of the request.
pub fn held_site(
    addrs: &[SocketAddr],
    pages: usize,
    key: fn(&Request) -> String,
) -> (Server, Gauge) {
    let gauge: Gauge = Arc::default();
    let g = gauge.clone();
    let server = Server::start_many(
        addrs,
        1,
        Arc::new(move |req: &Request| {
            g.lock()
                .unwrap()
                .entry(key(req))
                .or_default()
                .push(Instant::now());
            let reply = match req.path.as_str() {
                "/robots.txt" => status(404),
                "/" => {
                    let links: Vec<String> = (0..pages).map(|i| format!("/p{i}")).collect();
                    page(&links.iter().map(String::as_str).collect::<Vec<_>>())
                }
                _ => page(&[]),
            };
            reply.delayed(HOLD)
        }),
    )
    .expect("test server starts");
    (server, gauge)
}
