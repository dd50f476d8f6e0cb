//! The syntax of the flags whose values are more than a number:
//! `--resolve`, `--dns-server`, `--robots-retries`, `-H`, `--auth`.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use super::{units, ArgsError};

/// `DURATION,...` (bare numbers are seconds) or `none`.
pub(super) fn parse_retries(list: &str) -> Result<Vec<Duration>, ArgsError> {
    if list.trim() == "none" {
        return Ok(Vec::new());
    }
    list.split(',')
        .map(|s| units::seconds(s).map_err(|_| ArgsError::Retries(list.to_string())))
        .collect()
}

/// A `--robots-retries` list as the flag writes it (`1s,5s,15s,40s`),
/// read back by [`parse_retries`]; `none` for no wait.
pub(super) fn show_retries(waits: &[Duration]) -> String {
    if waits.is_empty() {
        return "none".to_string();
    }
    let waits: Vec<String> = waits.iter().map(|&w| units::show_duration(w)).collect();
    waits.join(",")
}

/// `HOST:PORT:ADDR[,ADDR...]`, an IPv6 ADDR possibly in brackets; a HOST
/// of `*` pins every name on PORT without a pin of its own.
pub(super) fn parse_resolves(
    specs: &[String],
) -> Result<HashMap<(String, u16), Vec<IpAddr>>, ArgsError> {
    specs
        .iter()
        .map(|spec| {
            let bad = || ArgsError::Resolve(spec.clone());
            let (host, rest) = spec.split_once(':').ok_or_else(bad)?;
            let (port, addrs) = rest.split_once(':').ok_or_else(bad)?;
            let port: u16 = port.parse().map_err(|_| bad())?;
            let addrs = addrs
                .split(',')
                .map(|addr| {
                    let addr = addr.trim().trim_start_matches('[').trim_end_matches(']');
                    addr.parse::<IpAddr>().map_err(|_| bad())
                })
                .collect::<Result<Vec<_>, _>>()?;
            // A name, an IPv4 address, or curl's `*` for any name; not
            // curl's `+HOST` (an expiring pin) or a partial wildcard,
            // which would be kept and never match.
            let name = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_');
            if host != "*" && (host.trim_end_matches('.').is_empty() || !host.chars().all(name)) {
                return Err(ArgsError::ResolveHost(spec.clone()));
            }
            Ok(((host.to_string(), port), addrs))
        })
        .collect()
}

/// `Name: value` (what the name and value may hold is the builder's to
/// check).
pub(super) fn parse_header(line: &str) -> Result<(&str, &str), ArgsError> {
    line.split_once(':')
        .ok_or_else(|| ArgsError::Header(line.to_string()))
}

/// Credentials for `--auth`: host, port if given, user, password.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Auth<'a> {
    pub host: &'a str,
    pub port: Option<u16>,
    pub user: &'a str,
    pub password: &'a str,
}

/// `HOST[:PORT]:USER:PASSWORD`, HOST a name, an IPv4 address or a
/// bracketed IPv6 one; the password is the rest (it may hold `:`), the
/// user may not (RFC 7617). Errors never repeat the value: it holds a
/// password.
pub(super) fn parse_auth(spec: &str) -> Result<Auth<'_>, ArgsError> {
    let (host, rest) = match spec.strip_prefix('[') {
        Some(v6) => {
            let (addr, rest) = v6.split_once(']').ok_or(ArgsError::Auth)?;
            let host = spec.get(..addr.len() + 2).ok_or(ArgsError::Auth)?;
            (host, rest.strip_prefix(':').ok_or(ArgsError::Auth)?)
        }
        None => spec.split_once(':').ok_or(ArgsError::Auth)?,
    };
    let (port, rest) = match rest.split_once(':') {
        Some((port, after)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => {
            (Some(port.parse().map_err(|_| ArgsError::Auth)?), after)
        }
        _ => (None, rest),
    };
    let (user, password) = rest.split_once(':').ok_or(ArgsError::Auth)?;
    if host.is_empty() || user.is_empty() {
        return Err(ArgsError::Auth);
    }
    Ok(Auth {
        host,
        port,
        user,
        password,
    })
}

/// `TYPE=SIZE` of `--max-size-per-type` (what TYPE may be is the
/// builder's to check).
pub(super) fn parse_type_size(rule: &str) -> Result<(&str, usize), ArgsError> {
    let bad = || ArgsError::TypeSize(rule.to_string());
    let (pattern, size) = rule.split_once('=').ok_or_else(bad)?;
    let size = units::size(size).map_err(|_| bad())?;
    Ok((pattern, usize::try_from(size).unwrap_or(usize::MAX)))
}

/// `ADDR` (port 53) or `ADDR:PORT`, an IPv6 ADDR in brackets with a port.
pub(super) fn parse_dns_server(text: &str) -> Result<SocketAddr, ArgsError> {
    text.parse::<SocketAddr>()
        .or_else(|_| text.parse::<IpAddr>().map(|ip| SocketAddr::new(ip, 53)))
        .map_err(|_| ArgsError::DnsServer(text.to_string()))
}
