//! The syntax of the flags whose values are more than a number:
//! `--resolve`, `--dns-server`, `--robots-retries`, and seconds as
//! durations.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use super::ArgsError;

/// A number of seconds as a duration (whether it is in range is the
/// builder's to say).
pub(super) fn seconds(flag: &'static str, value: f64) -> Result<Duration, ArgsError> {
    Duration::try_from_secs_f64(value).map_err(|_| ArgsError::Seconds(flag, value))
}

/// `SECONDS,...` or `none`.
pub(super) fn parse_retries(list: &str) -> Result<Vec<Duration>, ArgsError> {
    if list.trim() == "none" {
        return Ok(Vec::new());
    }
    list.split(',')
        .map(|s| {
            let value: f64 = s
                .trim()
                .parse()
                .map_err(|_| ArgsError::Retries(list.to_string()))?;
            seconds("robots-retries", value)
        })
        .collect()
}

/// `HOST:PORT:ADDR[,ADDR...]`, an IPv6 ADDR possibly in brackets.
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
            if host.trim_end_matches('.').is_empty() {
                return Err(bad());
            }
            Ok(((host.to_string(), port), addrs))
        })
        .collect()
}

/// `ADDR` (port 53) or `ADDR:PORT`, an IPv6 ADDR in brackets with a port.
pub(super) fn parse_dns_server(text: &str) -> Result<SocketAddr, ArgsError> {
    text.parse::<SocketAddr>()
        .or_else(|_| text.parse::<IpAddr>().map(|ip| SocketAddr::new(ip, 53)))
        .map_err(|_| ArgsError::DnsServer(text.to_string()))
}
