//! Per-host overrides of politeness (`--host-rule`): a [`HostRule`] (the
//! knobs it sets: fetches in flight, delay, adaptive delay, page budget)
//! for a host pattern, and [`HostRules`], the table that says which rule
//! a host gets.
//!
//! A pattern is a host name (`example.com`, an IPv4 address, a bracketed
//! IPv6 one), a wildcard of its subdomains (`*.example.com` matches
//! `a.example.com` and `a.b.example.com`, not `example.com` itself), or
//! `*`, every host. Precedence: an exact name beats any wildcard; among
//! wildcards the longest suffix wins (`*.a.example.com` over
//! `*.example.com` over `*`). The one rule that matches applies alone: a
//! knob it leaves unset is the crawl's own setting, not a less specific
//! rule's. The same pattern given twice is one rule, the later keys
//! winning. Wildcards match names only, never an IP address.
//!
//! Pure: no I/O. Not the rule text (the command's `--host-rule` parser),
//! not the range checks of the values (the builder's), and not their use:
//! the frontier looks a host's rule up once, when the host's state is
//! made, so a rule costs nothing per URL and a host holds a small index.

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::time::Duration;

use thiserror::Error;

/// Rules a crawl may have (a host holds its rule's index in 16 bits).
pub(crate) const MAX_RULES: usize = u16::MAX as usize - 1;

/// Politeness for the hosts of one pattern: each knob set overrides the
/// crawl's own setting of the same name for those hosts.
///
/// ```
/// use std::time::Duration;
/// let rule = ringcrawl::HostRule::new()
///     .per_host(4)
///     .delay(Duration::from_millis(500));
/// # let _ = rule;
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[non_exhaustive]
pub struct HostRule {
    /// Fetches in flight to the host (`per-host`).
    pub per_host: Option<usize>,
    /// Least time between two request starts (`delay`); a robots.txt
    /// `Crawl-delay` may still lengthen it.
    pub delay: Option<Duration>,
    /// Adaptive delay factor (`delay-factor`; 0 turns it off for the host).
    pub delay_factor: Option<f64>,
    /// Longest adaptive delay (`max-delay`).
    pub max_delay: Option<Duration>,
    /// URLs accepted for the host (`max-pages-per-host`).
    pub max_pages_per_host: Option<usize>,
}

impl HostRule {
    /// A rule that sets nothing (the crawl's settings apply).
    pub fn new() -> HostRule {
        HostRule::default()
    }

    /// Fetches in flight to the host.
    pub fn per_host(mut self, n: usize) -> HostRule {
        self.per_host = Some(n);
        self
    }

    /// Least time between two request starts to the host.
    pub fn delay(mut self, delay: Duration) -> HostRule {
        self.delay = Some(delay);
        self
    }

    /// The adaptive delay's factor for the host (0: off).
    pub fn delay_factor(mut self, factor: f64) -> HostRule {
        self.delay_factor = Some(factor);
        self
    }

    /// The longest adaptive delay of the host.
    pub fn max_delay(mut self, limit: Duration) -> HostRule {
        self.max_delay = Some(limit);
        self
    }

    /// URLs accepted for the host.
    pub fn max_pages_per_host(mut self, n: usize) -> HostRule {
        self.max_pages_per_host = Some(n);
        self
    }

    /// This rule with the knobs `later` sets taken from it.
    fn then(self, later: HostRule) -> HostRule {
        HostRule {
            per_host: later.per_host.or(self.per_host),
            delay: later.delay.or(self.delay),
            delay_factor: later.delay_factor.or(self.delay_factor),
            max_delay: later.max_delay.or(self.max_delay),
            max_pages_per_host: later.max_pages_per_host.or(self.max_pages_per_host),
        }
    }
}

/// Why a pattern cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub(crate) enum HostRuleError {
    #[error("{0:?} is not a host name, an address, *.SUFFIX or *")]
    Pattern(String),
    #[error("more than {MAX_RULES} host rules")]
    TooMany,
}

/// The rules of a crawl, by pattern (see the module docs).
#[derive(Debug, Clone, Default)]
pub(crate) struct HostRules {
    /// Each pattern (normalised) and its rule, in the order first given.
    rules: Vec<(String, HostRule)>,
    /// Exact names, and wildcards by their suffix (`""` for `*`): the
    /// index of their rule.
    exact: HashMap<String, u16>,
    wild: HashMap<String, u16>,
}

impl HostRules {
    /// Add `rule` for `pattern` (merged into an earlier rule of the same
    /// pattern, its keys winning).
    pub(crate) fn add(&mut self, pattern: &str, rule: HostRule) -> Result<(), HostRuleError> {
        let (wild, key) = normalise(pattern)?;
        let map = if wild {
            &mut self.wild
        } else {
            &mut self.exact
        };
        if let Some(&at) = map.get(&key) {
            if let Some((_, old)) = self.rules.get_mut(usize::from(at)) {
                *old = old.then(rule);
            }
            return Ok(());
        }
        if self.rules.len() >= MAX_RULES {
            return Err(HostRuleError::TooMany);
        }
        let at = u16::try_from(self.rules.len()).map_err(|_| HostRuleError::TooMany)?;
        let shown = if wild && key.is_empty() {
            "*".to_string()
        } else if wild {
            format!("*.{key}")
        } else {
            key.clone()
        };
        map.insert(key, at);
        self.rules.push((shown, rule));
        Ok(())
    }

    /// The patterns (as normalised) and their rules, by index.
    pub(crate) fn rules(&self) -> &[(String, HostRule)] {
        &self.rules
    }

    /// No rule at all.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The index of the rule of `host` (a host as the crawl keys it:
    /// lower-case, no trailing dot), if one matches: its exact name's,
    /// else the longest wildcard's.
    pub(crate) fn find(&self, host: &str) -> Option<u16> {
        if self.rules.is_empty() {
            return None;
        }
        if let Some(&at) = self.exact.get(host) {
            return Some(at);
        }
        if host.starts_with('[') || host.parse::<Ipv4Addr>().is_ok() {
            return None;
        }
        let mut suffix = host;
        while let Some((_, rest)) = suffix.split_once('.') {
            if let Some(&at) = self.wild.get(rest) {
                return Some(at);
            }
            suffix = rest;
        }
        self.wild.get("").copied()
    }

    /// The rule of `host`, if one matches.
    #[cfg(test)]
    pub(crate) fn rule_of(&self, host: &str) -> Option<&HostRule> {
        let at = self.find(host)?;
        self.rules.get(usize::from(at)).map(|(_, rule)| rule)
    }
}

/// Whether `pattern` is a wildcard, and its key: the host name (or the
/// wildcard's suffix, `""` for `*`) as the crawl writes hosts: lower-case,
/// punycode, no trailing dot, an IPv6 address in brackets.
fn normalise(pattern: &str) -> Result<(bool, String), HostRuleError> {
    let bad = || HostRuleError::Pattern(pattern.to_string());
    let text = pattern.trim();
    if text == "*" {
        return Ok((true, String::new()));
    }
    let (wild, name) = match text.strip_prefix("*.") {
        Some(suffix) => (true, suffix),
        None => (false, text),
    };
    let name = name.strip_suffix('.').unwrap_or(name);
    if name.is_empty() || name.contains(['*', '%', '/', ':']) && !name.starts_with('[') {
        return Err(bad());
    }
    let host = url::Host::parse(name).map_err(|_| bad())?;
    let key = match host {
        url::Host::Domain(d) if d.split('.').any(str::is_empty) => return Err(bad()),
        url::Host::Domain(d) => d,
        // A wildcard of an address matches nothing: refused.
        _ if wild => return Err(bad()),
        other => other.to_string(),
    };
    Ok((wild, key))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rules: &[(&str, HostRule)]) -> HostRules {
        let mut t = HostRules::default();
        for (pattern, rule) in rules {
            t.add(pattern, *rule).unwrap();
        }
        t
    }

    fn pattern_of(t: &HostRules, host: &str) -> Option<String> {
        let at = t.find(host)?;
        Some(t.rules()[usize::from(at)].0.clone())
    }

    #[test]
    fn an_exact_name_beats_any_wildcard_and_the_longest_wildcard_wins() {
        let one = HostRule::new().per_host(1);
        let t = table(&[
            ("*", one),
            ("*.example.com", one),
            ("*.a.example.com", one),
            ("a.example.com", one),
        ]);
        assert_eq!(pattern_of(&t, "a.example.com").unwrap(), "a.example.com");
        assert_eq!(
            pattern_of(&t, "x.a.example.com").unwrap(),
            "*.a.example.com"
        );
        assert_eq!(pattern_of(&t, "b.example.com").unwrap(), "*.example.com");
        assert_eq!(pattern_of(&t, "x.y.example.com").unwrap(), "*.example.com");
        assert_eq!(
            pattern_of(&t, "example.com").unwrap(),
            "*",
            "not *.example.com"
        );
        assert_eq!(pattern_of(&t, "other.org").unwrap(), "*");
    }

    #[test]
    fn a_wildcard_matches_subdomains_only_and_never_an_address() {
        let t = table(&[("*.example.com", HostRule::new().per_host(3))]);
        assert!(t.find("example.com").is_none());
        assert!(t.find("notexample.com").is_none());
        assert!(t.find("www.example.com").is_some());
        let t = table(&[("*", HostRule::new().per_host(3))]);
        assert!(t.find("127.0.0.1").is_none());
        assert!(t.find("[::1]").is_none());
        assert!(t.find("localhost").is_some());
        let t = table(&[("127.0.0.1", HostRule::new()), ("[::1]", HostRule::new())]);
        assert!(t.find("127.0.0.1").is_some() && t.find("[::1]").is_some());
    }

    #[test]
    fn patterns_are_written_as_the_crawl_writes_hosts() {
        let t = table(&[
            ("Example.COM.", HostRule::new().per_host(1)),
            ("*.BÜCHER.de", HostRule::new().per_host(2)),
            ("[0:0::1]", HostRule::new().per_host(3)),
        ]);
        assert_eq!(t.rule_of("example.com").unwrap().per_host, Some(1));
        assert_eq!(t.rule_of("www.xn--bcher-kva.de").unwrap().per_host, Some(2));
        assert_eq!(t.rule_of("[::1]").unwrap().per_host, Some(3));
    }

    #[test]
    fn the_same_pattern_twice_is_one_rule_its_later_keys_winning() {
        let t = table(&[
            (
                "a.test",
                HostRule::new()
                    .per_host(1)
                    .delay(Duration::from_millis(100)),
            ),
            ("A.test", HostRule::new().per_host(4)),
        ]);
        assert_eq!(t.rules().len(), 1);
        let rule = t.rule_of("a.test").unwrap();
        assert_eq!(rule.per_host, Some(4));
        assert_eq!(rule.delay, Some(Duration::from_millis(100)));
    }

    #[test]
    fn bad_patterns_are_refused_by_name() {
        for bad in [
            "",
            "*.",
            "*x.com",
            "a.*.com",
            "a..com",
            "a b",
            "a/b",
            "a:80",
            "*.1.2.3.4",
            "**",
            "%41.com",
            ".",
        ] {
            let e = HostRules::default().add(bad, HostRule::new()).unwrap_err();
            assert_eq!(e, HostRuleError::Pattern(bad.to_string()), "{bad:?}");
        }
    }

    #[test]
    fn no_rules_cost_a_lookup_nothing() {
        let t = HostRules::default();
        assert!(t.is_empty() && t.find("a.test").is_none());
    }
}
