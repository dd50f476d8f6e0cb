//! What the two families of one lookup (AAAA and A, asked at once) come
//! to: when the lookup may answer its callers, with what, for how long,
//! and which question still out is worth waiting for after that.
//!
//! The rules (RFC 8305 §3, and one family never spoils the other):
//!
//! - AAAA with addresses: answer at once, with the A addresses too if they
//!   are in. A still out goes on (its attempt under way, no new one), and
//!   its addresses join the cached answer when they come: IPv6 may not
//!   work here, and a retry or the host's next fetch then has IPv4.
//! - A with addresses first: wait at most [`RESOLUTION_DELAY`] for AAAA,
//!   then answer with what is there. AAAA still out is dropped: IPv4
//!   reaches the host, and a lost AAAA must not hold a query slot.
//! - NXDOMAIN first: the name is gone for every type (RFC 8020), so wait at
//!   most the same delay for the other family (a broken server may say
//!   NXDOMAIN for one type only), then answer. The other family goes on,
//!   and addresses it brings replace the cached failure.
//! - Anything else first (no address of the type, SERVFAIL, a time-out):
//!   wait for the other family, however long its questions take.
//! - Both in: addresses if either has some; else NXDOMAIN if either said
//!   so; else the failure (not definite: asked again after `negative_ttl`);
//!   else "no address".
//!
//! Pure: no I/O, no clock. The lookup that runs the questions is
//! [`super::lookup`].

use std::net::IpAddr;
use std::time::Duration;

use super::addresses::{happy_order, Families};
use super::{Answer, ResolverOptions, NO_ADDRESS, WRONG_FAMILY};
use ringcrawl_dns_wire::Rcode;

/// How long an answer that came first waits for the other family (RFC
/// 8305 §3's Resolution Delay, 50 ms recommended).
pub(super) const RESOLUTION_DELAY: Duration = Duration::from_millis(50);

/// What one family's questions came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Family {
    /// Addresses (never empty), their TTL in seconds (the least along the
    /// CNAME chain) and the nameserver that gave them.
    Found {
        ips: Vec<IpAddr>,
        ttl: u32,
        server: IpAddr,
    },
    /// No address by a definite answer: NXDOMAIN, or a NOERROR without one
    /// (NODATA); how long that may be kept by the SOA that came with it.
    Absent { nxdomain: bool, ttl: Option<u32> },
    /// No usable answer (time-out, SERVFAIL, REFUSED, a bad response): why.
    Failed(String),
}

impl Family {
    fn found(&self) -> bool {
        matches!(self, Family::Found { .. })
    }

    fn nxdomain(&self) -> bool {
        matches!(self, Family::Absent { nxdomain: true, .. })
    }
}

/// Where one family's questions are.
#[derive(Debug, Clone, Copy)]
pub(super) enum State<'a> {
    /// Not asked (`-4`, `-6`) or given up.
    None,
    /// Still out.
    Out,
    Done(&'a Family),
}

/// What a lookup does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Next {
    /// Wait for the family still out.
    Wait,
    /// Wait for it at most [`RESOLUTION_DELAY`] from now.
    Delay,
    /// Answer the callers with [`combine`].
    Answer,
}

/// What to do, given where AAAA (`v6`) and A (`v4`) are.
pub(super) fn next(v6: State, v4: State) -> Next {
    use State::{Done, Out};
    match (v6, v4) {
        (Done(f), _) if f.found() => Next::Answer,
        (Out, Done(f)) if f.found() || f.nxdomain() => Next::Delay,
        (Done(f), Out) if f.nxdomain() => Next::Delay,
        (Out, _) | (_, Out) => Next::Wait,
        _ => Next::Answer,
    }
}

/// After the callers were answered with `answer`: whether the family
/// still out (`v6`: AAAA) is worth waiting for.
pub(super) fn keep_asking(v6: bool, answer: &Family) -> bool {
    !(v6 && answer.found())
}

/// What the families that are in (`None`: not asked, or still out) come to.
pub(super) fn combine(v6: Option<&Family>, v4: Option<&Family>) -> Family {
    let families = || v6.into_iter().chain(v4);
    let mut ips = Vec::new();
    let mut ttl = u32::MAX;
    let mut server = None;
    for family in families() {
        if let Family::Found {
            ips: more,
            ttl: t,
            server: from,
        } = family
        {
            ips.extend_from_slice(more);
            ttl = ttl.min(*t);
            server = server.or(Some(*from));
        }
    }
    if let Some(server) = server {
        return Family::Found { ips, ttl, server };
    }
    let negative_ttl = families()
        .filter_map(|f| match f {
            Family::Absent { ttl, .. } => *ttl,
            _ => None,
        })
        .min();
    if families().any(Family::nxdomain) {
        return Family::Absent {
            nxdomain: true,
            ttl: negative_ttl,
        };
    }
    if let Some(reason) = families().find_map(|f| match f {
        Family::Failed(reason) => Some(reason),
        _ => None,
    }) {
        return Family::Failed(reason.clone());
    }
    Family::Absent {
        nxdomain: false,
        ttl: negative_ttl,
    }
}

/// `family` as the resolver's answer: the addresses of `families` in the
/// order to try, or the one-line reason there are none.
pub(super) fn answer(family: &Family, families: Families) -> Answer {
    match family {
        Family::Found { ips, .. } => happy_order(ips, families).ok_or_else(|| WRONG_FAMILY.into()),
        Family::Absent { nxdomain: true, .. } => Err(Rcode::NxDomain.to_string()),
        Family::Absent { .. } => Err(NO_ADDRESS.to_string()),
        Family::Failed(reason) => Err(reason.clone()),
    }
}

/// How long `family` is cached: an answer's TTL within [`min_ttl`,
/// `max_ttl`]; a definite absence its SOA's negative TTL, at least
/// `min_ttl`, at most `negative_ttl` (which it is without an SOA); a
/// failure `negative_ttl`.
///
/// [`min_ttl`]: ResolverOptions::min_ttl
pub(super) fn keep(family: &Family, opts: &ResolverOptions) -> Duration {
    let secs = |t: u32| Duration::from_secs(u64::from(t));
    match family {
        Family::Found { ttl, .. } => secs(*ttl).min(opts.max_ttl).max(opts.min_ttl),
        Family::Absent { ttl: Some(t), .. } => secs(*t).max(opts.min_ttl).min(opts.negative_ttl),
        Family::Absent { ttl: None, .. } | Family::Failed(_) => opts.negative_ttl,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use State::{Done, Out};

    fn found(list: &str, ttl: u32) -> Family {
        Family::Found {
            ips: list.split(' ').map(|s| s.parse().unwrap()).collect(),
            ttl,
            server: "127.0.0.53".parse().unwrap(),
        }
    }

    fn nx(ttl: Option<u32>) -> Family {
        Family::Absent {
            nxdomain: true,
            ttl,
        }
    }

    fn nodata(ttl: Option<u32>) -> Family {
        Family::Absent {
            nxdomain: false,
            ttl,
        }
    }

    fn timeout() -> Family {
        Family::Failed("timeout".into())
    }

    #[test]
    fn aaaa_answers_at_once_a_waits_the_resolution_delay() {
        let (v6, v4) = (found("::1", 60), found("127.0.0.1", 60));
        assert_eq!(next(Done(&v6), Out), Next::Answer);
        assert_eq!(next(Out, Done(&v4)), Next::Delay);
        assert_eq!(next(Done(&v6), Done(&v4)), Next::Answer);
        assert_eq!(next(State::None, Done(&v4)), Next::Answer, "-4");
        assert_eq!(next(Done(&v6), State::None), Next::Answer, "-6");
        assert_eq!(next(Out, Out), Next::Wait);
        // After the answer, A is still worth having; AAAA is not.
        assert!(keep_asking(false, &v6));
        assert!(!keep_asking(true, &v4));
    }

    #[test]
    fn a_failure_or_an_empty_family_waits_for_the_other() {
        for first in [nodata(None), timeout(), Family::Failed("SERVFAIL".into())] {
            assert_eq!(next(Done(&first), Out), Next::Wait, "{first:?}");
            assert_eq!(next(Out, Done(&first)), Next::Wait, "{first:?}");
            assert_eq!(next(Done(&first), Done(&first)), Next::Answer);
        }
        // NXDOMAIN speaks for every type: the other gets the delay only,
        // and is still wanted after the answer.
        assert_eq!(next(Done(&nx(None)), Out), Next::Delay);
        assert_eq!(next(Out, Done(&nx(None))), Next::Delay);
        assert!(keep_asking(true, &nx(None)));
    }

    #[test]
    fn one_family_never_discards_the_other() {
        let v4 = found("127.0.0.1 127.0.0.2", 300);
        for v6 in [nx(Some(5)), nodata(None), timeout()] {
            assert_eq!(combine(Some(&v6), Some(&v4)), v4, "{v6:?}");
            assert_eq!(combine(Some(&v4), Some(&v6)), v4, "{v6:?}");
        }
        assert_eq!(
            combine(Some(&found("::1", 30)), Some(&v4)),
            found("::1 127.0.0.1 127.0.0.2", 30),
            "both families, the lesser TTL"
        );
        assert_eq!(combine(None, Some(&v4)), v4, "AAAA dropped or not asked");
    }

    #[test]
    fn without_addresses_nxdomain_then_a_failure_then_no_address() {
        assert_eq!(combine(Some(&nx(Some(30))), Some(&timeout())), nx(Some(30)));
        assert_eq!(
            combine(Some(&nodata(Some(9))), Some(&nx(None))),
            nx(Some(9))
        );
        assert_eq!(combine(Some(&nodata(None)), Some(&timeout())), timeout());
        assert_eq!(
            combine(Some(&nodata(Some(90))), Some(&nodata(Some(60)))),
            nodata(Some(60))
        );
        assert_eq!(combine(None, None), nodata(None));
        let both = Families::Both;
        assert_eq!(answer(&nx(None), both), Err("NXDOMAIN".into()));
        assert_eq!(answer(&nodata(None), both), Err(NO_ADDRESS.into()));
        assert_eq!(answer(&timeout(), both), Err("timeout".into()));
        let mixed = found("127.0.0.1 ::1", 1);
        assert_eq!(
            answer(&mixed, both).unwrap().to_vec(),
            vec![
                "::1".parse::<IpAddr>().unwrap(),
                "127.0.0.1".parse().unwrap()
            ]
        );
    }

    #[test]
    fn negative_answers_keep_their_soa_ttl_within_the_bounds() {
        let opts = ResolverOptions {
            min_ttl: Duration::from_secs(5),
            max_ttl: Duration::from_secs(3600),
            negative_ttl: Duration::from_secs(60),
            ..ResolverOptions::default()
        };
        let s = Duration::from_secs;
        assert_eq!(keep(&nx(Some(30)), &opts), s(30), "the SOA's");
        assert_eq!(
            keep(&nx(Some(86_400)), &opts),
            s(60),
            "capped by negative_ttl"
        );
        assert_eq!(keep(&nodata(Some(0)), &opts), s(5), "at least min_ttl");
        assert_eq!(keep(&nx(None), &opts), s(60), "no SOA: negative_ttl");
        assert_eq!(keep(&timeout(), &opts), s(60));
        assert_eq!(keep(&found("::1", 1), &opts), s(5));
        assert_eq!(keep(&found("::1", 7200), &opts), s(3600));
        assert_eq!(keep(&found("::1", 300), &opts), s(300));
    }
}
