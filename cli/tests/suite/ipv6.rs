//! IPv6 and Happy Eyeballs end to end, on loopback: a site on `::1` only,
//! a site on 127.0.0.1 only behind a name with both addresses, and a name
//! with both where IPv6 is black-holed (its SYNs are dropped, so a connect
//! there hangs): every one is crawled, the last within the Happy Eyeballs
//! delay rather than the connect timeout; `-4` and `-6` restrict.

use std::net::{SocketAddr, TcpStream};
use std::os::fd::{FromRawFd, OwnedFd};
use std::time::Duration;

use crate::common::*;
use ringcrawl::Families;
use ringcrawl_site::server::Server;

fn pages() -> impl Fn(&ringcrawl_site::server::Request) -> Option<ringcrawl_site::server::Reply>
       + Send
       + Sync
       + 'static {
    |req| match req.path.as_str() {
        "/" => Some(page(&["/a", "/b", "/c"])),
        "/a" | "/b" | "/c" => Some(page(&["/"])),
        _ => None,
    }
}

fn on(addr: &str) -> Server {
    let route = pages();
    Server::start_on(
        addr.parse().unwrap(),
        std::sync::Arc::new(move |req: &ringcrawl_site::server::Request| {
            route(req).unwrap_or_else(|| status(404))
        }),
    )
    .expect("server starts")
}

/// A listener on `[::1]:port` that never accepts, its one-slot backlog
/// filled: the kernel drops further SYNs, so a connect to it hangs until
/// the connecting side gives up (the black hole of a broken IPv6 path).
struct BlackHole {
    _listener: OwnedFd,
    _queued: Vec<TcpStream>,
}

fn black_hole(port: u16) -> BlackHole {
    // SAFETY: plain socket calls on a descriptor this function owns; the
    // sockaddr is a correctly sized, zeroed sockaddr_in6.
    let listener = unsafe {
        let fd = libc::socket(libc::AF_INET6, libc::SOCK_STREAM, 0);
        assert!(fd >= 0);
        let owned = OwnedFd::from_raw_fd(fd);
        let one: libc::c_int = 1;
        let size = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        libc::setsockopt(
            fd,
            libc::IPPROTO_IPV6,
            libc::IPV6_V6ONLY,
            (&one as *const libc::c_int).cast(),
            size,
        );
        let mut addr: libc::sockaddr_in6 = std::mem::zeroed();
        addr.sin6_family = libc::AF_INET6 as libc::sa_family_t;
        addr.sin6_port = port.to_be();
        addr.sin6_addr.s6_addr[15] = 1;
        let len = std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t;
        assert_eq!(
            libc::bind(fd, (&addr as *const libc::sockaddr_in6).cast(), len),
            0,
            "bind [::1]:{port}"
        );
        assert_eq!(libc::listen(fd, 0), 0);
        owned
    };
    let target: SocketAddr = format!("[::1]:{port}").parse().unwrap();
    // Fill the accept queue; the connect that finds it full times out.
    let mut queued = Vec::new();
    for _ in 0..8 {
        match TcpStream::connect_timeout(&target, Duration::from_millis(200)) {
            Ok(s) => queued.push(s),
            Err(_) => break,
        }
    }
    assert!(
        TcpStream::connect_timeout(&target, Duration::from_millis(300)).is_err(),
        "the black hole answers"
    );
    BlackHole {
        _listener: listener,
        _queued: queued,
    }
}

fn expected(b: &str) -> Vec<String> {
    ["/", "/a", "/b", "/c"]
        .iter()
        .map(|p| format!("{b}{p}"))
        .collect()
}

#[test]
fn a_site_on_ipv6_only_is_crawled() {
    let server = on("[::1]:0");
    let b = format!("http://[::1]:{}", server.port());
    let outcome = crawl(settings(&[format!("{b}/")]));
    assert_eq!(
        urls_of(&outcome).into_iter().collect::<Vec<_>>(),
        expected(&b)
    );
    // The same through a name.
    let b = format!("http://v6.test:{}", server.port());
    let mut cfg = settings(&[format!("{b}/")]);
    cfg = cfg.resolve("v6.test", server.port(), vec!["::1".parse().unwrap()]);
    let outcome = crawl(cfg);
    assert!(outcome.records.iter().all(|r| r.status == Some(200)));
    assert_eq!(outcome.records.len(), 4);
}

#[test]
fn a_name_with_both_reaches_a_site_on_ipv4_only() {
    let server = on("127.0.0.1:0");
    let port = server.port();
    let b = format!("http://both.test:{port}");
    let mut cfg = settings(&[format!("{b}/")]);
    // Nothing listens on [::1]:port: IPv6 is refused at once, IPv4 goes next.
    cfg = cfg.resolve(
        "both.test",
        port,
        vec!["::1".parse().unwrap(), "127.0.0.1".parse().unwrap()],
    );
    let outcome = crawl(cfg);
    assert_eq!(
        urls_of(&outcome).into_iter().collect::<Vec<_>>(),
        expected(&b)
    );
    for r in &outcome.records {
        assert_eq!(r.status, Some(200), "{}", r.url);
        let connect = r.connect_ms.unwrap();
        assert!(connect < 240.0, "no Happy Eyeballs wait: {connect} ms");
    }
}

#[test]
fn a_black_holed_ipv6_costs_the_happy_eyeballs_delay_once() {
    let server = on("127.0.0.1:0");
    let port = server.port();
    let _hole = black_hole(port);
    let b = format!("http://both.test:{port}");
    let both = || {
        let mut cfg = settings(&[format!("{b}/")]);
        cfg = cfg.resolve(
            "both.test",
            port,
            vec!["::1".parse().unwrap(), "127.0.0.1".parse().unwrap()],
        );
        // A connection per page: every fetch connects, and the address
        // that won is what the next ones try first.
        cfg = cfg.keep_alive(false);
        cfg = cfg.per_host(1);
        cfg = cfg.connect_timeout(Duration::from_secs(5));
        cfg
    };
    let outcome = crawl(both());
    assert_eq!(
        urls_of(&outcome).into_iter().collect::<Vec<_>>(),
        expected(&b)
    );
    for (url, r) in by_url(&outcome) {
        assert_eq!(r.status, Some(200), "{url}");
        let connect = r.connect_ms.unwrap();
        if url == format!("{b}/") {
            assert!(
                (240.0..1000.0).contains(&connect),
                "the first connect waits the 250 ms delay: {connect} ms"
            );
        } else {
            assert!(
                connect < 240.0,
                "later connects try IPv4 first: {url} {connect} ms"
            );
        }
    }

    // -4: no wait at all; -6: only the black hole, so the connect times out.
    let outcome = crawl(both().ip_families(Families::V4));
    assert!(outcome
        .records
        .iter()
        .all(|r| r.connect_ms.unwrap() < 240.0));
    let v6 = both()
        .ip_families(Families::V6)
        .connect_timeout(Duration::from_millis(500))
        .max_tries(1);
    let outcome = crawl(v6);
    let root = &by_url(&outcome)[&format!("{b}/")];
    assert_eq!(
        root.error_kind,
        Some(ringcrawl::ErrorKind::ConnectTimeout),
        "{root:?}"
    );
}
