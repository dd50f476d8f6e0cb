//! Durations, sizes and rates as the flags take them: one parser each,
//! exact (decimal arithmetic, no floats for what has a unit), checked for
//! overflow, and never panicking on any input.
//!
//! - A duration is a number and a unit: `500ms`, `2s`, `1.5s`, `5m` (or
//!   `5min`), `1h`, `1d`. A bare number is in the flag's own unit, as before units
//!   were accepted: milliseconds for `--delay`, seconds elsewhere.
//! - A size is a number of bytes, or a number and a binary unit: `512K`,
//!   `16M`, `1G`, `1T` (also `KiB`, `MiB`, ...; any case).
//! - A rate is requests per unit of time: `2/s`, `30/m`, `100/h`; as a
//!   delay between two requests, one unit divided by the count.
//!
//! Whether a value is in range for its flag (a timeout of at most a day,
//! a body of at most 4 GiB) is the library's builder to say.

use std::time::Duration;

const NANOS_PER_SEC: u128 = 1_000_000_000;

/// Fraction digits kept: beyond 18 they are below a nanosecond of any
/// unit here, and 10^18 times the largest unit stays far below u128::MAX.
const MAX_FRACTION_DIGITS: usize = 18;

/// The unit of a bare number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Bare {
    Seconds,
    Millis,
}

/// A duration flag whose bare numbers are seconds (`--timeout 60`).
pub(super) fn seconds(text: &str) -> Result<Duration, String> {
    duration(text, Bare::Seconds)
}

/// A duration flag whose bare numbers are milliseconds (`--delay 250`).
pub(super) fn millis(text: &str) -> Result<Duration, String> {
    duration(text, Bare::Millis)
}

/// `500ms`, `2s`, `1.5m`, `1h`, `1d`, or a bare number in `bare`'s unit.
pub(super) fn duration(text: &str, bare: Bare) -> Result<Duration, String> {
    let text = text.trim();
    let bare_unit = match bare {
        Bare::Seconds => "seconds",
        Bare::Millis => "milliseconds",
    };
    let not = || {
        format!("{text:?} is not a duration (e.g. 500ms, 2s, 5m, 1h; a bare number is {bare_unit})")
    };
    let (number, unit) = split_unit(text);
    let unit_nanos = match unit {
        "" => match bare {
            Bare::Seconds => NANOS_PER_SEC,
            Bare::Millis => NANOS_PER_SEC / 1000,
        },
        "ms" => NANOS_PER_SEC / 1000,
        "s" => NANOS_PER_SEC,
        "m" | "min" => 60 * NANOS_PER_SEC,
        "h" => 3600 * NANOS_PER_SEC,
        "d" => 86_400 * NANOS_PER_SEC,
        _ => return Err(not()),
    };
    match Decimal::parse(number) {
        Some(n) => {
            let nanos = n.times(unit_nanos).ok_or_else(|| out_of_range(text))?;
            from_nanos(nanos).ok_or_else(|| out_of_range(text))
        }
        // A bare number in another notation (`1e3`, `+5`) parses as it
        // did before units: as a float, refused if negative, NaN or
        // too large.
        None if unit.is_empty() => {
            let value: f64 = number.parse().map_err(|_| not())?;
            if value.is_sign_negative() || !value.is_finite() {
                return Err(not());
            }
            let secs = match bare {
                Bare::Seconds => value,
                Bare::Millis => value / 1000.0,
            };
            Duration::try_from_secs_f64(secs).map_err(|_| out_of_range(text))
        }
        None => Err(not()),
    }
}

/// A number of bytes: `1048576`, `512K`, `16M`, `1G`, `1.5G`, `1T`
/// (powers of 1024; `KiB` etc. too, any case).
pub(super) fn size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let not = || format!("{text:?} is not a size (e.g. 1048576, 512K, 16M, 1G)");
    let (number, unit) = split_unit(text);
    let unit = unit.to_ascii_lowercase();
    let shift = match unit.strip_suffix("ib").unwrap_or(&unit) {
        "" if unit.is_empty() => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return Err(not()),
    };
    let n = Decimal::parse(number).ok_or_else(not)?;
    if shift == 0 && n.digits > 0 {
        return Err(format!("{text:?} is not a whole number of bytes"));
    }
    n.times(1u128 << shift)
        .and_then(|bytes| u64::try_from(bytes).ok())
        .ok_or_else(|| out_of_range(text))
}

/// A size above zero (a memory bound, a file size, a budget).
pub(super) fn nonzero_size(text: &str) -> Result<u64, String> {
    match size(text)? {
        0 => Err(format!("{:?} must be above 0", text.trim())),
        n => Ok(n),
    }
}

/// `N/s`, `N/m`, `N/h` (N above 0, fractions allowed: `0.5/s` is one
/// request every 2 s): the delay between two requests that gives that
/// rate, rounded down to the nanosecond.
pub(super) fn rate(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let not = || {
        format!("{text:?} is not a rate (e.g. 2/s, 30/m, 100/h: requests a second, minute, hour)")
    };
    let (count, per) = text.split_once('/').ok_or_else(not)?;
    let per_nanos = match per.trim() {
        "s" | "sec" => NANOS_PER_SEC,
        "m" | "min" => 60 * NANOS_PER_SEC,
        "h" | "hour" => 3600 * NANOS_PER_SEC,
        _ => return Err(not()),
    };
    let n = Decimal::parse(count.trim()).ok_or_else(not)?;
    // The delay is per / (mantissa / 10^digits) = per * 10^digits / mantissa.
    if n.mantissa == 0 {
        return Err(format!("{text:?}: the count must be above 0"));
    }
    let nanos = 10u128
        .checked_pow(n.digits)
        .and_then(|scale| per_nanos.checked_mul(scale))
        .map(|scaled| scaled / n.mantissa)
        .ok_or_else(|| out_of_range(text))?;
    from_nanos(nanos).ok_or_else(|| out_of_range(text))
}

/// A duration as a flag writes it, read back exactly by [`duration`]: in
/// the largest unit that divides it (`5m`, `30s`, `250ms`; `0s`), else
/// seconds with the fraction (`1.000000001s`). How `--help` shows the
/// library's defaults.
pub(super) fn show_duration(d: Duration) -> String {
    let nanos = d.as_nanos();
    if nanos == 0 {
        return "0s".to_string();
    }
    const UNITS: [(u128, &str); 5] = [
        (86_400 * NANOS_PER_SEC, "d"),
        (3600 * NANOS_PER_SEC, "h"),
        (60 * NANOS_PER_SEC, "m"),
        (NANOS_PER_SEC, "s"),
        (NANOS_PER_SEC / 1000, "ms"),
    ];
    for (unit, name) in UNITS {
        if nanos.is_multiple_of(unit) {
            return format!("{}{name}", nanos / unit);
        }
    }
    let fraction = format!("{:09}", nanos % NANOS_PER_SEC);
    format!(
        "{}.{}s",
        nanos / NANOS_PER_SEC,
        fraction.trim_end_matches('0')
    )
}

/// A size as a flag writes it, read back exactly by [`size`]: in the
/// largest binary unit that divides it (`16M`, `1G`), else in bytes.
pub(super) fn show_size(bytes: u64) -> String {
    for (shift, name) in [(40, "T"), (30, "G"), (20, "M"), (10, "K")] {
        if bytes != 0 && bytes.is_multiple_of(1u64 << shift) {
            return format!("{}{name}", bytes >> shift);
        }
    }
    bytes.to_string()
}

fn out_of_range(text: &str) -> String {
    format!("{text:?} is out of range")
}

/// `("1.5", "ms")` from `"1.5ms"`: the number, then the rest (spaces
/// between them allowed).
fn split_unit(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    // `1e3` and `+5` are no unit: leave them whole for the bare parser.
    let (number, rest) = text.split_at(end);
    let rest = rest.trim_start();
    if rest.starts_with(|c: char| c.is_ascii_alphabetic()) && !rest.starts_with(['e', 'E']) {
        (number, rest)
    } else {
        (text, "")
    }
}

fn from_nanos(nanos: u128) -> Option<Duration> {
    let secs = u64::try_from(nanos / NANOS_PER_SEC).ok()?;
    // Below 10^9: fits.
    let sub = (nanos % NANOS_PER_SEC) as u32;
    Some(Duration::new(secs, sub))
}

/// A decimal number without sign or exponent: `12`, `1.5`, `.5`, `2.`;
/// `mantissa / 10^digits`.
#[derive(Debug, PartialEq, Eq)]
struct Decimal {
    mantissa: u128,
    digits: u32,
}

impl Decimal {
    fn parse(text: &str) -> Option<Decimal> {
        let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if (whole.is_empty() && fraction.is_empty()) || !all_digits(whole) || !all_digits(fraction)
        {
            return None;
        }
        let fraction = &fraction[..fraction.len().min(MAX_FRACTION_DIGITS)];
        let mut mantissa: u128 = 0;
        for b in whole.bytes().chain(fraction.bytes()) {
            mantissa = mantissa
                .checked_mul(10)?
                .checked_add(u128::from(b - b'0'))?;
        }
        Some(Decimal {
            mantissa,
            digits: fraction.len() as u32,
        })
    }

    /// `self × unit`, rounded down to a whole number; None on overflow.
    fn times(&self, unit: u128) -> Option<u128> {
        Some(self.mantissa.checked_mul(unit)? / 10u128.checked_pow(self.digits)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn durations_and_sizes_are_shown_as_flags_write_them_and_read_back_exactly() {
        for (d, text) in [
            (Duration::ZERO, "0s"),
            (ms(250), "250ms"),
            (ms(30_000), "30s"),
            (ms(300_000), "5m"),
            (ms(7_200_000), "2h"),
            (ms(86_400_000), "1d"),
            (ms(1500), "1500ms"),
            (Duration::from_nanos(1_000_000_001), "1.000000001s"),
        ] {
            assert_eq!(show_duration(d), text);
            for bare in [Bare::Seconds, Bare::Millis] {
                assert_eq!(duration(text, bare), Ok(d), "{text}");
            }
        }
        for (bytes, text) in [
            (0, "0"),
            (1000, "1000"),
            (512 << 10, "512K"),
            (16 << 20, "16M"),
            (1 << 30, "1G"),
            (3 << 40, "3T"),
            ((1 << 20) + 1, "1048577"),
        ] {
            assert_eq!(show_size(bytes), text);
            assert_eq!(size(text), Ok(bytes), "{text}");
        }
    }

    #[test]
    fn durations_take_units_and_bare_numbers_keep_the_flags_unit() {
        for (text, bare, want) in [
            ("500ms", Bare::Seconds, ms(500)),
            ("2s", Bare::Millis, ms(2000)),
            ("1.5s", Bare::Seconds, ms(1500)),
            ("5m", Bare::Seconds, ms(300_000)),
            ("5min", Bare::Seconds, ms(300_000)),
            ("1h", Bare::Millis, ms(3_600_000)),
            ("1d", Bare::Seconds, ms(86_400_000)),
            (" 250 ms ", Bare::Seconds, ms(250)),
            ("0.1s", Bare::Seconds, ms(100)),
            (".25s", Bare::Seconds, ms(250)),
            // Bare: seconds or milliseconds, as each flag took them.
            ("60", Bare::Seconds, ms(60_000)),
            ("2.5", Bare::Seconds, ms(2500)),
            ("250", Bare::Millis, ms(250)),
            ("0", Bare::Millis, Duration::ZERO),
            ("1e3", Bare::Seconds, ms(1_000_000)),
            ("1.5", Bare::Millis, Duration::from_micros(1500)),
            ("0.000000001s", Bare::Seconds, Duration::from_nanos(1)),
            ("0.0000000019s", Bare::Seconds, Duration::from_nanos(1)),
        ] {
            assert_eq!(duration(text, bare), Ok(want), "{text}");
        }
        assert_eq!(
            millis("18446744073709551615"),
            Ok(ms(u64::MAX)),
            "every u64 of milliseconds --delay took"
        );
    }

    #[test]
    fn bad_durations_are_refused_with_a_one_line_reason() {
        for text in [
            "",
            "s",
            "ms",
            "-1",
            "-1s",
            "1x",
            "1 2s",
            "1..5s",
            "1.2.3",
            "NaN",
            "inf",
            "1e400",
            "2S",
            "1M",
            "5mn",
            "1kibib",
            "99999999999999999999999999999999999999999d",
            "340282366920938463463374607431768211456",
            "1.s.",
            "١s",
        ] {
            let err = seconds(text).expect_err(text);
            assert!(
                !err.contains('\n') && err.contains(text.trim()),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn sizes_take_binary_units() {
        for (text, want) in [
            ("4096", 4096),
            ("0", 0),
            ("512K", 512 << 10),
            ("16M", 16 << 20),
            ("64m", 64 << 20),
            ("1G", 1 << 30),
            ("1T", 1 << 40),
            ("16MiB", 16 << 20),
            ("16mib", 16 << 20),
            ("1.5G", 3 << 29),
            ("0.5K", 512),
            (" 2 K ", 2048),
            ("18446744073709551615", u64::MAX),
        ] {
            assert_eq!(size(text), Ok(want), "{text}");
        }
        for text in [
            "",
            "x",
            "K",
            "-1",
            "1.5",
            "1KB",
            "1P",
            "1e3",
            "16M M",
            "1kibib",
            "18446744073709551616",
            "16777216T",
            "99999999999G",
        ] {
            let err = size(text).expect_err(text);
            assert!(!err.contains('\n'), "{text}: {err}");
        }
        assert!(nonzero_size("0").is_err() && nonzero_size("0K").is_err());
        assert_eq!(nonzero_size("1"), Ok(1));
    }

    #[test]
    fn rates_are_delays_between_requests() {
        for (text, want) in [
            ("2/s", ms(500)),
            ("1/s", ms(1000)),
            ("0.5/s", ms(2000)),
            ("30/m", ms(2000)),
            ("60/min", ms(1000)),
            ("3600/h", ms(1000)),
            ("3/s", Duration::from_nanos(333_333_333)),
            ("1000000000000/s", Duration::ZERO),
            (" 10 / s ", ms(100)),
        ] {
            assert_eq!(rate(text), Ok(want), "{text}");
        }
        for text in [
            "", "2", "2/", "/s", "0/s", "0.0/s", "-1/s", "2/d", "x/s", "1e3/s",
        ] {
            let err = rate(text).expect_err(text);
            assert!(!err.contains('\n'), "{text}: {err}");
        }
    }

    proptest::proptest! {
        #[test]
        fn no_input_panics(text in "\\PC{0,40}") {
            let _ = seconds(&text);
            let _ = millis(&text);
            let _ = size(&text);
            let _ = rate(&text);
        }

        #[test]
        fn numbers_and_units_never_panic(
            number in "[0-9]{0,45}(\\.[0-9]{0,45})?",
            unit in "(ms|s|m|h|d|K|M|G|T|KiB|/s|/m|/h)?",
        ) {
            let text = format!("{number}{unit}");
            let _ = seconds(&text);
            let _ = size(&text);
            let _ = rate(&text);
        }

        #[test]
        fn whole_milliseconds_are_exact(n in proptest::num::u64::ANY) {
            proptest::prop_assert_eq!(millis(&n.to_string()), Ok(Duration::from_millis(n)));
            proptest::prop_assert_eq!(millis(&format!("{n}ms")), Ok(Duration::from_millis(n)));
        }
    }
}
