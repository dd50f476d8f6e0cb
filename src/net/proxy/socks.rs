//! SOCKS5's messages (RFC 1928, and RFC 1929's user/password method) as
//! bytes: the greeting, the credentials, the `CONNECT` request, and the
//! server's answers read back, each answer's length known from its first
//! bytes so the caller reads exactly that much.
//!
//! Pure: no I/O (`tunnel` does it).

use std::net::{IpAddr, SocketAddr};

/// The protocol version byte.
pub(crate) const VERSION: u8 = 5;
const NO_AUTH: u8 = 0;
const USER_PASSWORD: u8 = 2;
const NO_ACCEPTABLE: u8 = 0xff;
const CONNECT: u8 = 1;
const IPV4: u8 = 1;
const DOMAIN: u8 = 3;
const IPV6: u8 = 4;

/// Where the proxy is asked to connect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target<'a> {
    /// A name the proxy resolves (`socks5h://`), and the port.
    Name(&'a str, u16),
    /// An address the crawler resolved.
    Addr(SocketAddr),
}

/// What went wrong, in the protocol's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SocksError {
    /// The server accepts none of the methods offered (with credentials
    /// offered, or none: it wants some).
    NoMethod { offered_credentials: bool },
    /// The server refused the user and password.
    BadCredentials,
    /// The server could not or would not connect (its reply code).
    Refused(u8),
    /// Bytes that are no SOCKS5 answer.
    Protocol(&'static str),
    /// A target name longer than SOCKS5 can carry (255 bytes).
    NameTooLong,
}

impl std::fmt::Display for SocksError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SocksError::NoMethod {
                offered_credentials: true,
            } => {
                f.write_str("the SOCKS5 proxy accepts neither no authentication nor user/password")
            }
            SocksError::NoMethod {
                offered_credentials: false,
            } => f.write_str("the SOCKS5 proxy asks for credentials (give them in the proxy URL)"),
            SocksError::BadCredentials => {
                f.write_str("the SOCKS5 proxy refused the user and password")
            }
            SocksError::Refused(code) => {
                write!(f, "the SOCKS5 proxy answered {code}: {}", reply_text(*code))
            }
            SocksError::Protocol(what) => write!(f, "not a SOCKS5 answer: {what}"),
            SocksError::NameTooLong => {
                f.write_str("a host name over 255 bytes cannot go through SOCKS5")
            }
        }
    }
}

/// RFC 1928 §6's words for a reply code.
fn reply_text(code: u8) -> &'static str {
    match code {
        1 => "general SOCKS server failure",
        2 => "connection not allowed by ruleset",
        3 => "network unreachable",
        4 => "host unreachable",
        5 => "connection refused",
        6 => "TTL expired",
        7 => "command not supported",
        8 => "address type not supported",
        _ => "unassigned code",
    }
}

/// The greeting: no authentication, and user/password if there are
/// credentials.
pub(crate) fn greeting(credentials: bool) -> Vec<u8> {
    if credentials {
        vec![VERSION, 2, NO_AUTH, USER_PASSWORD]
    } else {
        vec![VERSION, 1, NO_AUTH]
    }
}

/// The method the server chose, from its two-byte answer: whether it
/// wants the credentials sent.
pub(crate) fn method_chosen(answer: [u8; 2], credentials: bool) -> Result<bool, SocksError> {
    match answer {
        [VERSION, NO_AUTH] => Ok(false),
        [VERSION, USER_PASSWORD] if credentials => Ok(true),
        [VERSION, NO_ACCEPTABLE] => Err(SocksError::NoMethod {
            offered_credentials: credentials,
        }),
        [VERSION, _] => Err(SocksError::Protocol("a method that was not offered")),
        _ => Err(SocksError::Protocol("wrong version in the method answer")),
    }
}

/// RFC 1929's request; user and password are 1 to 255 bytes (checked
/// when the proxy URL was read; longer ones are cut here).
pub(crate) fn credentials(user: &str, password: &str) -> Vec<u8> {
    let user = user.as_bytes().get(..255).unwrap_or(user.as_bytes());
    let password = password
        .as_bytes()
        .get(..255)
        .unwrap_or(password.as_bytes());
    let mut out = Vec::with_capacity(3 + user.len() + password.len());
    out.push(1);
    out.push(user.len() as u8);
    out.extend_from_slice(user);
    out.push(password.len() as u8);
    out.extend_from_slice(password);
    out
}

/// RFC 1929's two-byte answer: status 0 is success.
pub(crate) fn credentials_accepted(answer: [u8; 2]) -> Result<(), SocksError> {
    match answer {
        [1, 0] => Ok(()),
        [1, _] => Err(SocksError::BadCredentials),
        _ => Err(SocksError::Protocol(
            "wrong version in the credentials answer",
        )),
    }
}

/// The `CONNECT` request for `target`. A name that is an IP literal
/// (`[v6]` too) goes as an address.
pub(crate) fn connect(target: Target<'_>) -> Result<Vec<u8>, SocksError> {
    let mut out = vec![VERSION, CONNECT, 0];
    let port = match target {
        Target::Addr(addr) => {
            push_ip(&mut out, addr.ip());
            addr.port()
        }
        Target::Name(name, port) => {
            let bare = name.trim_start_matches('[').trim_end_matches(']');
            match bare.parse::<IpAddr>() {
                Ok(ip) => push_ip(&mut out, ip),
                Err(_) => {
                    let len = u8::try_from(name.len()).map_err(|_| SocksError::NameTooLong)?;
                    out.push(DOMAIN);
                    out.push(len);
                    out.extend_from_slice(name.as_bytes());
                }
            }
            port
        }
    };
    out.extend_from_slice(&port.to_be_bytes());
    Ok(out)
}

fn push_ip(out: &mut Vec<u8>, ip: IpAddr) {
    match ip {
        IpAddr::V4(v4) => {
            out.push(IPV4);
            out.extend_from_slice(&v4.octets());
        }
        IpAddr::V6(v6) => {
            out.push(IPV6);
            out.extend_from_slice(&v6.octets());
        }
    }
}

/// From the first five bytes of the `CONNECT` answer (version, reply,
/// reserved, address type, and the first address byte): an error, or how
/// many bytes of the answer are still to read (the rest of the bound
/// address and the port).
pub(crate) fn reply_rest(first: [u8; 5]) -> Result<usize, SocksError> {
    let [version, reply, _, atyp, first_byte] = first;
    if version != VERSION {
        return Err(SocksError::Protocol("wrong version in the connect answer"));
    }
    if reply != 0 {
        return Err(SocksError::Refused(reply));
    }
    match atyp {
        IPV4 => Ok(3 + 2),
        IPV6 => Ok(15 + 2),
        DOMAIN => Ok(usize::from(first_byte) + 2),
        _ => Err(SocksError::Protocol(
            "unknown address type in the connect answer",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_greeting_offers_credentials_only_when_there_are_some() {
        assert_eq!(greeting(false), [5, 1, 0]);
        assert_eq!(greeting(true), [5, 2, 0, 2]);
        assert_eq!(method_chosen([5, 0], true), Ok(false));
        assert_eq!(method_chosen([5, 2], true), Ok(true));
        assert!(method_chosen([5, 2], false).is_err());
        assert_eq!(
            method_chosen([5, 0xff], false),
            Err(SocksError::NoMethod {
                offered_credentials: false
            })
        );
        assert!(method_chosen([4, 0], false).is_err());
    }

    #[test]
    fn credentials_are_length_prefixed_and_their_answer_read() {
        assert_eq!(credentials("me", "pw!"), b"\x01\x02me\x03pw!");
        assert_eq!(credentials_accepted([1, 0]), Ok(()));
        assert_eq!(
            credentials_accepted([1, 1]),
            Err(SocksError::BadCredentials)
        );
    }

    #[test]
    fn a_connect_names_the_host_or_its_address_and_the_port() {
        assert_eq!(
            connect(Target::Name("a.test", 443)).unwrap(),
            b"\x05\x01\x00\x03\x06a.test\x01\xbb"
        );
        assert_eq!(
            connect(Target::Name("127.0.0.1", 80)).unwrap(),
            [5, 1, 0, 1, 127, 0, 0, 1, 0, 80]
        );
        let v6 = connect(Target::Name("[::1]", 80)).unwrap();
        assert_eq!(v6.len(), 4 + 16 + 2);
        assert_eq!(v6.get(3), Some(&4));
        let addr: SocketAddr = "10.1.2.3:8080".parse().unwrap();
        assert_eq!(
            connect(Target::Addr(addr)).unwrap(),
            [5, 1, 0, 1, 10, 1, 2, 3, 0x1f, 0x90]
        );
        let long = "a".repeat(256);
        assert_eq!(
            connect(Target::Name(&long, 80)),
            Err(SocksError::NameTooLong)
        );
    }

    #[test]
    fn the_connect_answer_says_its_length_or_why_not() {
        assert_eq!(reply_rest([5, 0, 0, 1, 127]), Ok(5));
        assert_eq!(reply_rest([5, 0, 0, 4, 0]), Ok(17));
        assert_eq!(reply_rest([5, 0, 0, 3, 7]), Ok(9));
        assert_eq!(reply_rest([5, 5, 0, 1, 0]), Err(SocksError::Refused(5)));
        assert!(reply_rest([5, 0, 0, 9, 0]).is_err());
        assert!(reply_rest([4, 0, 0, 1, 0]).is_err());
    }
}
