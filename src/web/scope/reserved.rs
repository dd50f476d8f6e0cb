//! Hosts a crawl never reaches unless a root names them: link-local
//! addresses (169.254.0.0/16, fe80::/10) and the cloud providers'
//! instance-metadata endpoints (169.254.169.254 and its IPv6 and
//! named forms, Alibaba's 100.100.100.200). From a crawler inside a
//! cloud, a fetch of one of these can hand out the machine's
//! credentials; a page, a redirect or (in a cluster crawl) anyone who
//! can write to Redis could name one.
//!
//! Hosts as the URL gives them ([`is_reserved`]), and addresses
//! ([`is_reserved_ip`]): a name that resolves to such an address is
//! refused after its lookup, by the shard's exchange (no DNS in `web`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Metadata endpoints by name, as the providers document them.
const METADATA_NAMES: &[&str] = &[
    "metadata.google.internal",
    "metadata",
    "instance-data",
    "instance-data.ec2.internal",
];

/// Metadata endpoints outside the link-local ranges.
const METADATA_IPS: &[IpAddr] = &[
    // Alibaba Cloud.
    IpAddr::V4(Ipv4Addr::new(100, 100, 100, 200)),
    // AWS's IPv6 endpoint (fd00:ec2::254).
    IpAddr::V6(Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x254)),
];

/// Whether `host` (canonical: lower-case, no trailing dot, IPv6 in
/// brackets or not) is link-local or a metadata endpoint.
pub(crate) fn is_reserved(host: &str) -> bool {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    match bare.parse::<IpAddr>() {
        Ok(ip) => is_reserved_ip(ip),
        Err(_) => METADATA_NAMES.contains(&bare),
    }
}

/// Whether `ip` is link-local (169.254.0.0/16, fe80::/10, either as an
/// IPv4-mapped IPv6 address) or a metadata endpoint's address.
pub(crate) fn is_reserved_ip(ip: IpAddr) -> bool {
    if METADATA_IPS.contains(&ip) {
        return true;
    }
    match ip {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_reserved_ip(IpAddr::V4(v4)),
            // fe80::/10
            None => (v6.segments().first().copied().unwrap_or(0) & 0xffc0) == 0xfe80,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_local_and_metadata_hosts_are_reserved() {
        for host in [
            "169.254.169.254",
            "169.254.170.2",
            "169.254.0.1",
            "[fe80::1]",
            "fe80::1",
            "[febf::1]",
            "[::ffff:169.254.169.254]",
            "[fd00:ec2::254]",
            "100.100.100.200",
            "metadata.google.internal",
            "metadata",
        ] {
            assert!(is_reserved(host), "{host}");
        }
    }

    #[test]
    fn ordinary_hosts_are_not_reserved() {
        for host in [
            "127.0.0.1",
            "[::1]",
            "10.0.0.1",
            "169.255.0.1",
            "[fec0::1]",
            "100.100.100.201",
            "example.com",
            "metadata.example.com",
            "",
            "[",
            "[]",
        ] {
            assert!(!is_reserved(host), "{host}");
        }
    }
}
