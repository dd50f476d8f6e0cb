//! `Retry-After` (RFC 9110 §10.2.3): how long a server asks a client to
//! wait, as a number of seconds or an HTTP date (the three forms RFC 9110
//! §5.6.7 has recipients read, through the `httpdate` crate). A date in
//! the past is no wait; what is neither form is no answer.
//!
//! Pure. Not what is done with it (the shard queues the page again).

use std::time::{Duration, SystemTime};

/// The wait a `Retry-After` value asks for, from `now`; None if it is not
/// one.
pub fn retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // More digits than u64 holds: longer than any bound, not an error.
        return Some(Duration::from_secs(value.parse().unwrap_or(u64::MAX)));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_and_every_date_form_are_read() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        for (value, want) in [
            ("120", Some(120)),
            (" 0 ", Some(0)),
            ("99999999999999999999999", Some(u64::MAX)),
            ("Sun, 06 Nov 1994 08:50:37 GMT", Some(60)),
            ("Sunday, 06-Nov-94 08:49:47 GMT", Some(10)),
            ("Sun Nov  6 08:49:38 1994", Some(1)),
            ("Sun, 06 Nov 1994 08:00:00 GMT", Some(0)),
            ("-5", None),
            ("1.5", None),
            ("soon", None),
            ("", None),
        ] {
            assert_eq!(
                retry_after(value, now),
                want.map(Duration::from_secs),
                "{value:?}"
            );
        }
    }
}
