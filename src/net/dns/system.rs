//! The system's own setup: the hosts file and resolv.conf read as text,
//! and getaddrinfo for when no nameserver is configured.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

use ringcrawl_links::urls::canonical_host;

use super::NO_ADDRESS;

/// Hosts-file text to a map of lower-cased names to their addresses, in
/// the order the file lists them.
pub(crate) fn parse_hosts(text: &str) -> HashMap<String, Vec<IpAddr>> {
    let mut map: HashMap<String, Vec<IpAddr>> = HashMap::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or_default();
        let mut fields = line.split_whitespace();
        let Some(Ok(ip)) = fields.next().map(str::parse::<IpAddr>) else {
            continue;
        };
        for name in fields {
            let ips = map.entry(canonical_host(name).into_owned()).or_default();
            if !ips.contains(&ip) {
                ips.push(ip);
            }
        }
    }
    map
}

/// The `nameserver` addresses of resolv.conf text, port 53 (scoped IPv6
/// addresses are skipped).
pub(crate) fn parse_resolv_conf(text: &str) -> Vec<SocketAddr> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            match (fields.next(), fields.next()) {
                (Some("nameserver"), Some(addr)) => addr.parse::<IpAddr>().ok(),
                _ => None,
            }
        })
        .map(|ip| SocketAddr::new(ip, 53))
        .collect()
}

/// Blocking system lookup (getaddrinfo). Runs on the blocking thread pool,
/// only when no nameserver is configured.
pub(super) fn system_lookup(host: &str) -> Result<Vec<IpAddr>, String> {
    let ips: Vec<IpAddr> = (host, 0)
        .to_socket_addrs()
        .map_err(|e| e.to_string())?
        .map(|a| a.ip())
        .collect();
    if ips.is_empty() {
        return Err(NO_ADDRESS.to_string());
    }
    Ok(ips)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_file_text() {
        let hosts = parse_hosts(
            "# comment\n127.0.0.1 localhost\n::1 localhost ip6-localhost\n\n\
             10.1.2.3  Web.Example.   web # trailing\nnot-an-ip foo\n\
             fe80::1 v6only\n10.9.9.9 web\n",
        );
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(hosts["localhost"], [ip("127.0.0.1"), ip("::1")]);
        assert_eq!(hosts["ip6-localhost"], [ip("::1")]);
        assert_eq!(hosts["web.example"], [ip("10.1.2.3")]);
        assert_eq!(
            hosts["web"],
            [ip("10.1.2.3"), ip("10.9.9.9")],
            "in file order"
        );
        assert_eq!(hosts["v6only"], [ip("fe80::1")]);
        assert!(!hosts.contains_key("foo"));
    }

    #[test]
    fn resolv_conf_text() {
        let servers = parse_resolv_conf(
            "# x\nsearch example.com\nnameserver 192.0.2.53\nnameserver  2001:db8::53\n\
             nameserver fe80::1%eth0\noptions ndots:2\nnameserver\n",
        );
        assert_eq!(
            servers,
            vec![
                "192.0.2.53:53".parse::<SocketAddr>().unwrap(),
                "[2001:db8::53]:53".parse().unwrap()
            ]
        );
    }
}
