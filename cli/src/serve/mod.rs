//! The status servers: `--status-addr ADDR`, a small HTTP/1.1 server on a
//! thread of its own that shows a running crawl: `/metrics` (Prometheus
//! text), `/status.json` (the same numbers and a second-by-second
//! history, `history.rs`) and `/`, a live page (`page.rs`); and `ringcrawl
//! cluster status --serve ADDR`, the same for a whole cluster crawl read
//! from its Redis (`cluster.rs`). Both speak the HTTP of `http.rs`.
//!
//! Where it lives, and why: the library exposes the numbers
//! ([`ringcrawl::Crawler::live`], read as a [`ringcrawl::LiveSnapshot`],
//! and [`ringcrawl::prometheus_text`], a pure function of them); the
//! command serves them. A library that embeds the crawler opens no socket
//! it was not asked for, and the imports stay one way: this module uses
//! the library's public API only. The shards never wait for it: they
//! publish a copy of their counters about once a second, off their record
//! path, and this thread reads the copies ([`ringcrawl::Live`]).
//!
//! It binds exactly the address it is given, no other: a non-loopback one
//! only when the user names it, and then anyone who reaches it reads the
//! crawl's numbers (no authentication; docs/status.md).
//!
//! Not the numbers (the library's) and not their text.

use std::net::SocketAddr;

use ringcrawl::Live;

pub mod cluster;
mod history;
mod http;
mod page;

use history::History;
use http::{Answer, Request};

/// The running server of a crawl.
pub struct StatusServer {
    server: http::Server,
}

impl StatusServer {
    /// Bind `addr` (port 0: one the system picks) and serve `live`; say
    /// where on stderr unless `quiet`.
    pub fn start(addr: SocketAddr, live: Live, quiet: bool) -> anyhow::Result<StatusServer> {
        let listener = http::bind(addr, "--status-addr")?;
        let (history, sampler) = History::start(live.clone())?;
        let site = Site {
            live,
            history: history.clone(),
        };
        let server = http::Server::start(
            listener,
            "ringcrawl-status",
            move |request| route(request, &site),
            move || {
                history.stop();
                sampler.thread().unpark();
                let _ = sampler.join();
            },
        )?;
        http::announce(
            "--status-addr",
            addr,
            server.addr(),
            "the crawl's numbers are",
            quiet,
        );
        Ok(StatusServer { server })
    }

    /// Stop listening (the thread ends after the request it serves).
    pub fn stop(self) {
        self.server.stop();
    }
}

/// What the server serves: the numbers, and their history.
pub struct Site {
    live: Live,
    history: History,
}

/// The answer to `request`.
pub fn route(request: &Request, site: &Site) -> Answer {
    if let Some((content_type, body)) = page::asset(&request.path) {
        return Answer::ok(content_type, body);
    }
    let snapshot = || site.live.snapshot();
    match request.path.as_str() {
        // Not started yet: nothing to say, as a scrape sees it.
        "/metrics" | "/status.json" | "/" => match (request.path.as_str(), snapshot()) {
            (_, None) => Answer::error(503),
            ("/metrics", Some(now)) => Answer::ok(
                ringcrawl::PROMETHEUS_CONTENT_TYPE,
                ringcrawl::prometheus_text(&now),
            ),
            ("/status.json", Some(now)) => Answer::ok(
                "application/json",
                history::status_json(&now, &site.history, request.since),
            ),
            (_, Some(now)) => Answer::ok(
                "text/html; charset=utf-8",
                page::html(
                    page::CRAWL,
                    &history::status_json(&now, &site.history, None),
                ),
            ),
        },
        _ => Answer::error(404),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_before_the_crawl_starts_and_for_unknown_paths() {
        let site = Site {
            live: Live::new(),
            history: History::default(),
        };
        let get = |path: &str| {
            route(
                &Request {
                    path: path.into(),
                    ..Request::default()
                },
                &site,
            )
        };
        assert_eq!(get("/metrics").status, 503);
        assert_eq!(get("/status.json").status, 503);
        assert_eq!(get("/status.js").status, 200);
        assert_eq!(get("/common.js").status, 200);
        assert_eq!(get("/nope").status, 404);
    }
}
