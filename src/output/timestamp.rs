//! UTC time as the archive formats write it: `WARC-Date` (microseconds),
//! the crawl log's RFC 3339 with milliseconds, and the 14-digit timestamp
//! of CDX indexes and replay URLs. Pure: no clock is read here.
//!
//! Not what time a record carries (the shard decides: when the request was
//! sent, for a fetched URL).
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::arithmetic_side_effects
)]

use std::time::{SystemTime, UNIX_EPOCH};

/// `WARC-Date` text of `t`: UTC, `YYYY-MM-DDThh:mm:ss.ffffffZ` (microseconds,
/// as WARC 1.1 allows and warcio writes). Times before 1970 or after 9999 are
/// clamped into that range (so are those of the other formats).
pub fn format_date(t: SystemTime) -> String {
    let c = Civil::of(t);
    format!("{}.{:06}Z", c.seconds_text(), c.micros)
}

/// RFC 3339 text of `t` with milliseconds: `YYYY-MM-DDThh:mm:ss.fffZ`, as
/// the crawl log's `timestamp`.
pub fn rfc3339_millis(t: SystemTime) -> String {
    let c = Civil::of(t);
    format!("{}.{:03}Z", c.seconds_text(), c.micros / 1000)
}

/// The 14-digit `YYYYMMDDhhmmss` of CDX lines and replay URLs.
pub fn timestamp14(t: SystemTime) -> String {
    let c = Civil::of(t);
    format!(
        "{:04}{:02}{:02}{:02}{:02}{:02}",
        c.year, c.month, c.day, c.hour, c.minute, c.second
    )
}

/// A UTC calendar time.
struct Civil {
    year: u64,
    month: u64,
    day: u64,
    hour: u64,
    minute: u64,
    second: u64,
    micros: u32,
}

impl Civil {
    fn of(t: SystemTime) -> Civil {
        /// 9999-12-31T23:59:59: the last second with a four-digit year.
        const MAX_SECS: u64 = 253_402_300_799;
        let (secs, micros) = match t.duration_since(UNIX_EPOCH) {
            Ok(d) if d.as_secs() <= MAX_SECS => (d.as_secs(), d.subsec_micros()),
            Ok(_) => (MAX_SECS, 999_999),
            Err(_) => (0, 0),
        };
        let (days, rem) = (secs / 86_400, secs % 86_400);
        let (year, month, day) = civil_from_days(days);
        Civil {
            year,
            month,
            day,
            hour: rem / 3600,
            minute: rem % 3600 / 60,
            second: rem % 60,
            micros,
        }
    }

    /// `YYYY-MM-DDThh:mm:ss`.
    fn seconds_text(&self) -> String {
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

/// (year, month, day) of `days` since 1970-01-01, for days in the range
/// `Civil::of` clamps to (Howard Hinnant's `civil_from_days`, restricted to
/// non-negative days so unsigned arithmetic suffices).
#[allow(clippy::arithmetic_side_effects)] // days <= 2_932_896: nothing overflows or underflows
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468; // days since 0000-03-01
    let era = z / 146_097;
    let doe = z - era * 146_097; // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365], from March 1
    let mp = (5 * doy + 2) / 153; // [0, 11], March = 0
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(secs: u64, micros: u32) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_micros(u64::from(micros))
    }

    #[test]
    fn dates() {
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
    fn civil_from_days_round_trips_every_day_near_the_present() {
        // Walk day by day from 1970 to 2200 and check the calendar advances by one.
        let (mut y, mut m, mut d) = (1970, 1, 1);
        for days in 0..84_000u64 {
            assert_eq!(civil_from_days(days), (y, m, d), "day {days}");
            let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
            let len = match m {
                2 if leap => 29,
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            d += 1;
            if d > len {
                d = 1;
                m += 1;
                if m > 12 {
                    m = 1;
                    y += 1;
                }
            }
        }
    }

    #[test]
    fn the_crawl_log_and_cdx_forms_of_one_instant_agree() {
        let t = at(1_700_000_000, 123_456);
        assert_eq!(rfc3339_millis(t), "2023-11-14T22:13:20.123Z");
        assert_eq!(timestamp14(t), "20231114221320");
        assert_eq!(rfc3339_millis(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        assert_eq!(timestamp14(at(u64::MAX / 2, 0)), "99991231235959");
    }
}
