//! The addresses a name resolves to, in the order a connection should try
//! them, and the address families a crawl may use (`-4`, `-6`).
//!
//! The order is Happy Eyeballs' (RFC 8305 §4): IPv6 first, then the
//! families alternate (v6, v4, v6, v4, ...), each family in the order its
//! source gave. `net::connect` starts the attempts in this order.
//!
//! Pure: no I/O, no clock.

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::rc::Rc;

/// The address families a crawl connects over.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Families {
    /// IPv6 and IPv4, IPv6 preferred.
    #[default]
    Both,
    /// IPv4 only (`-4`).
    V4,
    /// IPv6 only (`-6`).
    V6,
}

impl Families {
    /// May an address of `ip`'s family be used?
    pub fn allows(self, ip: &IpAddr) -> bool {
        match self {
            Families::Both => true,
            Families::V4 => ip.is_ipv4(),
            Families::V6 => ip.is_ipv6(),
        }
    }

    /// Whether IPv4 is resolved and connected over.
    pub fn v4(self) -> bool {
        self != Families::V6
    }

    /// Whether IPv6 is resolved and connected over.
    pub fn v6(self) -> bool {
        self != Families::V4
    }
}

/// `ips` filtered to `families` and put in Happy Eyeballs order; None if
/// no address is left.
pub(crate) fn happy_order(ips: &[IpAddr], families: Families) -> Option<Rc<[IpAddr]>> {
    let mut v6 = ips.iter().filter(|ip| ip.is_ipv6() && families.allows(ip));
    let mut v4 = ips.iter().filter(|ip| ip.is_ipv4() && families.allows(ip));
    let mut ordered = Vec::with_capacity(ips.len());
    loop {
        let (a, b) = (v6.next(), v4.next());
        if a.is_none() && b.is_none() {
            break;
        }
        ordered.extend(a.into_iter().chain(b).copied());
    }
    ordered.dedup();
    (!ordered.is_empty()).then(|| ordered.into())
}

/// Where `host:port` may be reached, in the order to try. One address (an
/// IP literal, the common case) costs no allocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Addresses {
    One(SocketAddr),
    /// Several addresses (at least one), all on one port.
    Many(Rc<[IpAddr]>, u16),
}

impl Addresses {
    /// The addresses in the order to try.
    pub(crate) fn iter(&self) -> impl Iterator<Item = SocketAddr> + '_ {
        let (one, many, port) = match self {
            Addresses::One(addr) => (Some(*addr), &[][..], 0),
            Addresses::Many(ips, port) => (None, &ips[..], *port),
        };
        one.into_iter()
            .chain(many.iter().map(move |ip| SocketAddr::new(*ip, port)))
    }

    /// The address tried first.
    pub(crate) fn first(&self) -> Option<SocketAddr> {
        self.iter().next()
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        match self {
            Addresses::One(_) => 1,
            Addresses::Many(ips, _) => ips.len(),
        }
    }

    /// The addresses in order, as a list that may go to another thread
    /// (`Addresses` shares its list through an `Rc`).
    pub(crate) fn to_vec(&self) -> Vec<SocketAddr> {
        self.iter().collect()
    }

    /// The addresses of [`Addresses::to_vec`] again; None for an empty
    /// list or one whose ports differ (never made by `to_vec`).
    pub(crate) fn from_slice(list: &[SocketAddr]) -> Option<Addresses> {
        match list {
            [] => None,
            [one] => Some(Addresses::One(*one)),
            [first, ..] => {
                let port = first.port();
                list.iter()
                    .all(|a| a.port() == port)
                    .then(|| Addresses::Many(list.iter().map(|a| a.ip()).collect(), port))
            }
        }
    }
}

/// The addresses, comma-separated (`[::1]:80, 127.0.0.1:80`).
impl fmt::Display for Addresses {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, addr) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{addr}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ips(list: &str) -> Vec<IpAddr> {
        list.split(' ').map(|s| s.parse().unwrap()).collect()
    }

    #[test]
    fn families_alternate_ipv6_first() {
        let got = happy_order(&ips("10.0.0.1 10.0.0.2 ::1 ::2 ::3"), Families::Both).unwrap();
        assert_eq!(&got[..], ips("::1 10.0.0.1 ::2 10.0.0.2 ::3"));
        let got = happy_order(&ips("10.0.0.1 10.0.0.1 ::1"), Families::Both).unwrap();
        assert_eq!(&got[..], ips("::1 10.0.0.1"), "duplicates go");
    }

    #[test]
    fn addresses_go_to_a_list_and_back_in_order() {
        let many = Addresses::Many(ips("::1 10.0.0.1").into(), 8080);
        assert_eq!(Addresses::from_slice(&many.to_vec()), Some(many.clone()));
        let one = Addresses::One("10.0.0.1:80".parse().unwrap());
        assert_eq!(Addresses::from_slice(&one.to_vec()), Some(one));
        assert_eq!(Addresses::from_slice(&[]), None);
        let ports: Vec<SocketAddr> =
            vec!["[::1]:80".parse().unwrap(), "10.0.0.1:81".parse().unwrap()];
        assert_eq!(Addresses::from_slice(&ports), None);
    }

    #[test]
    fn a_restricted_family_filters_and_may_leave_nothing() {
        let both = ips("10.0.0.1 ::1");
        assert_eq!(
            &happy_order(&both, Families::V4).unwrap()[..],
            ips("10.0.0.1")
        );
        assert_eq!(&happy_order(&both, Families::V6).unwrap()[..], ips("::1"));
        assert_eq!(happy_order(&ips("::1"), Families::V4), None);
        assert_eq!(happy_order(&[], Families::Both), None);
    }

    #[test]
    fn addresses_iterate_in_order_and_print_as_a_list() {
        let one = Addresses::One("127.0.0.1:80".parse().unwrap());
        assert_eq!(one.to_string(), "127.0.0.1:80");
        assert_eq!(one.len(), 1);
        let many = Addresses::Many(ips("::1 127.0.0.1").into(), 8080);
        assert_eq!(many.to_string(), "[::1]:8080, 127.0.0.1:8080");
        assert_eq!(many.first(), Some("[::1]:8080".parse().unwrap()));
        assert_eq!(many.iter().count(), 2);
    }
}
