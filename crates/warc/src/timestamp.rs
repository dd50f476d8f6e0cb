//! UTC time as the archive formats write it: `WARC-Date` (microseconds),
//! the crawl log's RFC 3339 with milliseconds, the WACZ manifest's to the
//! second, and the 14-digit timestamp of CDX indexes and replay URLs,
//! through the `time` crate's formatting; and RFC 3339 read back (a
//! recrawl reads an earlier crawl's log and WARC dates).
//! Pure: no clock is read here.
//!
//! Not what time a record carries: the caller decides (in ringcrawl, when
//! the request was sent, for a fetched URL).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use time::format_description::BorrowedFormatItem;
use time::macros::format_description;
use time::OffsetDateTime;

/// 9999-12-31T23:59:59.999999: the last instant with a four-digit year.
const LAST: Duration = Duration::new(253_402_300_799, 999_999_000);

/// `WARC-Date` text of `t`: UTC, `YYYY-MM-DDThh:mm:ss.ffffffZ` (microseconds,
/// as WARC 1.1 allows and warcio writes). Times before 1970 or after 9999
/// are clamped into that range (so are those of the other formats).
pub fn format_date(t: SystemTime) -> String {
    format(
        t,
        format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6]Z"),
    )
}

/// RFC 3339 text of `t` with milliseconds: `YYYY-MM-DDThh:mm:ss.fffZ`, as
/// the crawl log's `timestamp`.
pub fn rfc3339_millis(t: SystemTime) -> String {
    format(
        t,
        format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"),
    )
}

/// RFC 3339 text of `t` to the second, `YYYY-MM-DDThh:mm:ssZ`, as WACZ
/// manifests write their `created`.
pub fn rfc3339_seconds(t: SystemTime) -> String {
    format(
        t,
        format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z"),
    )
}

/// The 14-digit `YYYYMMDDhhmmss` of CDX lines and replay URLs.
pub fn timestamp14(t: SystemTime) -> String {
    format(
        t,
        format_description!("[year][month][day][hour][minute][second]"),
    )
}

/// The instant of an RFC 3339 text (`2023-11-14T22:13:20.123456Z`, any
/// offset, any fraction), if it is one after 1970.
pub fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    let at = OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()?;
    // Whole seconds since 1970 (none for an instant before it, as the
    // seconds of any instant before 1970 are negative), then the fraction.
    let secs = u64::try_from(at.unix_timestamp()).ok()?;
    UNIX_EPOCH.checked_add(Duration::new(secs, at.nanosecond()))
}

fn format(t: SystemTime, how: &[BorrowedFormatItem<'_>]) -> String {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default().min(LAST);
    // In range by the clamp: neither conversion nor formatting can fail,
    // but an empty text is the answer if one ever did.
    time::Duration::try_from(since)
        .ok()
        .and_then(|d| OffsetDateTime::UNIX_EPOCH.checked_add(d))
        .and_then(|at| at.format(how).ok())
        .unwrap_or_default()
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    fn at(secs: u64, micros: u32) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_micros(u64::from(micros))
    }

    #[test]
    fn warc_dates_have_microseconds_and_stay_in_four_digit_years() {
        assert_eq!(format_date(UNIX_EPOCH), "1970-01-01T00:00:00.000000Z");
        assert_eq!(
            format_date(at(951_782_400, 0)),
            "2000-02-29T00:00:00.000000Z"
        );
        assert_eq!(
            format_date(at(1_700_000_000, 123_456)),
            "2023-11-14T22:13:20.123456Z"
        );
        assert_eq!(
            format_date(at(4_102_444_799, 0)),
            "2099-12-31T23:59:59.000000Z"
        );
        assert_eq!(
            format_date(UNIX_EPOCH - Duration::from_secs(1)),
            "1970-01-01T00:00:00.000000Z"
        );
        assert_eq!(
            format_date(at(u64::MAX / 2, 0)),
            "9999-12-31T23:59:59.999999Z"
        );
    }

    #[test]
    fn rfc3339_reads_back_what_the_formats_wrote() {
        let t = at(1_700_000_000, 123_456);
        assert_eq!(parse_rfc3339(&format_date(t)), Some(t));
        assert_eq!(
            parse_rfc3339("2023-11-14T22:13:20.123Z"),
            Some(at(1_700_000_000, 123_000))
        );
        assert_eq!(
            parse_rfc3339("2023-11-14T23:13:20+01:00"),
            Some(at(1_700_000_000, 0))
        );
        assert_eq!(parse_rfc3339("1969-12-31T23:59:59Z"), None);
        assert_eq!(parse_rfc3339("yesterday"), None);
    }

    #[test]
    fn the_crawl_log_and_cdx_forms_of_one_instant_agree() {
        let t = at(1_700_000_000, 123_456);
        assert_eq!(rfc3339_millis(t), "2023-11-14T22:13:20.123Z");
        assert_eq!(timestamp14(t), "20231114221320");
        assert_eq!(rfc3339_seconds(t), "2023-11-14T22:13:20Z");
        assert_eq!(rfc3339_millis(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        assert_eq!(timestamp14(at(u64::MAX / 2, 0)), "99991231235959");
    }
}
