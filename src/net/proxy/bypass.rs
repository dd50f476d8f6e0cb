//! The hosts that go direct although proxies are set ([`Bypass`]), by
//! curl's rules for `no_proxy` / `--noproxy`: a comma- or space-separated
//! list of names, IP addresses and address/prefix ranges; `*` alone means
//! every host. A name matches itself and every name under it
//! (`example.com` and `.example.com` both match `www.example.com`), case
//! aside; an address matches only an address host, exactly or inside its
//! range. Names are not resolved to be compared with addresses.
//!
//! Pure.

use std::net::IpAddr;

use super::ProxyError;

/// Hosts that go direct.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Bypass {
    every: bool,
    /// Lower case, no leading or trailing dot.
    names: Vec<String>,
    /// Address and prefix length (a full length for one address).
    ranges: Vec<(IpAddr, u8)>,
}

impl Bypass {
    /// The hosts `list` names (see the module's rules); an empty list
    /// bypasses nothing.
    pub(crate) fn parse(list: &str) -> Result<Bypass, ProxyError> {
        let mut bypass = Bypass::default();
        for entry in list.split([',', ' ', '\t']).map(str::trim) {
            if entry.is_empty() {
                continue;
            }
            if entry == "*" {
                bypass.every = true;
                continue;
            }
            let bare = entry.trim_start_matches('[').trim_end_matches(']');
            if let Some((ip, prefix)) = bare.split_once('/') {
                let bad = || ProxyError::BadBypass(entry.to_string());
                let ip: IpAddr = ip.trim_end_matches(']').parse().map_err(|_| bad())?;
                let prefix: u8 = prefix.parse().map_err(|_| bad())?;
                if prefix > full_length(&ip) {
                    return Err(bad());
                }
                bypass.ranges.push((ip, prefix));
            } else if let Ok(ip) = bare.parse::<IpAddr>() {
                bypass.ranges.push((ip, full_length(&ip)));
            } else {
                let name = entry.trim_matches('.').to_ascii_lowercase();
                if !name.is_empty() {
                    bypass.names.push(name);
                }
            }
        }
        Ok(bypass)
    }

    /// Whether `host` (as a URL gives it: IPv6 in brackets) goes direct.
    pub(crate) fn matches(&self, host: &str) -> bool {
        if self.every {
            return true;
        }
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = bare.parse::<IpAddr>() {
            return self.ranges.iter().any(|&(net, len)| within(ip, net, len));
        }
        let host = host.trim_end_matches('.');
        self.names.iter().any(|name| {
            host.len() >= name.len()
                && host
                    .get(host.len() - name.len()..)
                    .is_some_and(|tail| tail.eq_ignore_ascii_case(name))
                && (host.len() == name.len()
                    || host.as_bytes().get(host.len() - name.len() - 1) == Some(&b'.'))
        })
    }
}

fn full_length(ip: &IpAddr) -> u8 {
    match ip {
        IpAddr::V4(_) => 32,
        IpAddr::V6(_) => 128,
    }
}

/// Whether `ip` is in `net`/`len` (families never match each other).
fn within(ip: IpAddr, net: IpAddr, len: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(b)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
            u32::from(a) & mask == u32::from(b) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(b)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
            u128::from(a) & mask == u128::from(b) & mask
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_bypasses_itself_and_the_names_under_it_only() {
        let b = Bypass::parse("example.com, .Other.test").unwrap();
        assert!(b.matches("example.com"));
        assert!(b.matches("www.EXAMPLE.com"));
        assert!(b.matches("example.com."));
        assert!(b.matches("a.other.test"));
        assert!(b.matches("other.test"));
        assert!(!b.matches("badexample.com"));
        assert!(!b.matches("example.com.evil.test"));
    }

    #[test]
    fn addresses_and_ranges_match_address_hosts_only() {
        let b = Bypass::parse("127.0.0.1 10.0.0.0/8,::1,[fd00::]/8").unwrap();
        assert!(b.matches("127.0.0.1"));
        assert!(!b.matches("127.0.0.2"));
        assert!(b.matches("10.200.3.4"));
        assert!(!b.matches("11.0.0.1"));
        assert!(b.matches("[::1]"));
        assert!(b.matches("[fd12::1]"));
        assert!(!b.matches("[fe80::1]"));
        assert!(!b.matches("localhost"));
        let zero = Bypass::parse("0.0.0.0/0").unwrap();
        assert!(zero.matches("192.0.2.1"));
        assert!(!zero.matches("[::1]"));
    }

    #[test]
    fn a_star_bypasses_everything_and_an_empty_list_nothing() {
        assert!(Bypass::parse("*").unwrap().matches("any.test"));
        assert!(!Bypass::parse("").unwrap().matches("any.test"));
        assert!(!Bypass::parse(" , ").unwrap().matches("any.test"));
    }

    #[test]
    fn a_range_that_is_no_range_is_refused() {
        for bad in ["10.0.0.0/33", "10.0.0.0/x", "name/8", "::/129"] {
            assert!(Bypass::parse(bad).is_err(), "{bad}");
        }
    }
}
