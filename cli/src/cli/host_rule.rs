//! The syntax of `--host-rule 'PATTERN:KEY=VALUE,...'`: a host pattern
//! and the politeness it gets, as the library's [`HostRule`]. The keys
//! are the names of the flags they override, their values written as
//! those flags take them: `per-host=N`, `delay=DURATION` (a bare number
//! is milliseconds, as `--delay`), `rate=N/s` (the same as a delay, as
//! `--rate`), `delay-factor=F`, `max-delay=DURATION` (a bare number is
//! seconds), `max-pages-per-host=N`.
//!
//! Pure. Not what a pattern may be (`*.example.com`, a name, an address:
//! the library's to check, with the values' ranges) nor which rule a host
//! gets.

use ringcrawl::HostRule;

use super::units;

/// `PATTERN:KEY=VALUE[,KEY=VALUE...]`: the pattern (an IPv6 address in
/// brackets) and its rule; the error says why, for the rule named in the
/// message ([`super::ArgsError::HostRule`]).
pub(super) fn parse_host_rule(text: &str) -> Result<(&str, HostRule), String> {
    let text = text.trim();
    let split = if text.starts_with('[') {
        text.find("]:").and_then(|at| {
            let (pattern, rest) = text.split_at(at + 1);
            Some((pattern, rest.strip_prefix(':')?))
        })
    } else {
        text.split_once(':')
    };
    let (pattern, keys) = split.ok_or("expected PATTERN:KEY=VALUE[,KEY=VALUE...]")?;
    if pattern.trim().is_empty() {
        return Err("no host pattern before the ':'".into());
    }
    let mut rule = HostRule::new();
    for pair in keys.split(',') {
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| format!("{:?} is not KEY=VALUE", pair.trim()))?;
        let (key, value) = (key.trim(), value.trim());
        let count = || {
            value
                .parse::<usize>()
                .map_err(|_| format!("{key}={value:?}: expected a whole number"))
        };
        rule = match key {
            "per-host" => rule.per_host(count()?),
            "max-pages-per-host" => rule.max_pages_per_host(count()?),
            "delay" => rule.delay(units::millis(value).map_err(|e| format!("{key}: {e}"))?),
            "rate" => rule.delay(units::rate(value).map_err(|e| format!("{key}: {e}"))?),
            "max-delay" => {
                rule.max_delay(units::seconds(value).map_err(|e| format!("{key}: {e}"))?)
            }
            "delay-factor" => rule.delay_factor(
                value
                    .parse::<f64>()
                    .ok()
                    .filter(|f| f.is_finite())
                    .ok_or_else(|| format!("{key}={value:?}: expected a number"))?,
            ),
            _ => {
                return Err(format!(
                    "unknown key {key:?} (per-host, delay, rate, delay-factor, max-delay, \
                     max-pages-per-host)"
                ))
            }
        };
    }
    Ok((pattern.trim(), rule))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_rule_sets_the_keys_it_names_and_leaves_the_others_to_the_flags() {
        let (pattern, rule) = parse_host_rule("example.com:per-host=4,delay=500ms").unwrap();
        assert_eq!(pattern, "example.com");
        assert_eq!(
            rule,
            HostRule::new()
                .per_host(4)
                .delay(Duration::from_millis(500))
        );
        let (pattern, rule) = parse_host_rule(
            " *.example.com : delay = 250 , delay-factor=3, max-delay=2, max-pages-per-host=10",
        )
        .unwrap();
        assert_eq!(pattern, "*.example.com");
        assert_eq!(
            rule,
            HostRule::new()
                .delay(Duration::from_millis(250))
                .delay_factor(3.0)
                .max_delay(Duration::from_secs(2))
                .max_pages_per_host(10)
        );
        let (_, rule) = parse_host_rule("a.test:rate=2/s").unwrap();
        assert_eq!(rule.delay, Some(Duration::from_millis(500)));
    }

    #[test]
    fn an_ipv6_pattern_keeps_its_brackets_and_colons() {
        let (pattern, rule) = parse_host_rule("[::1]:per-host=1").unwrap();
        assert_eq!((pattern, rule.per_host), ("[::1]", Some(1)));
    }

    #[test]
    fn a_bad_rule_says_what_is_wrong_in_one_line() {
        for bad in [
            "example.com",
            ":per-host=1",
            "example.com:",
            "example.com:per-host",
            "example.com:per-host=x",
            "example.com:per-host=-1",
            "example.com:delay=soon",
            "example.com:delay-factor=nan",
            "example.com:speed=1",
            "[::1:per-host=1",
            "[::1]per-host=1",
        ] {
            let why = parse_host_rule(bad).expect_err(bad);
            assert!(!why.is_empty() && !why.contains('\n'), "{bad}: {why}");
        }
    }

    proptest::proptest! {
        #[test]
        fn no_input_panics(text in "\\PC{0,60}") {
            let _ = parse_host_rule(&text);
        }
    }
}
