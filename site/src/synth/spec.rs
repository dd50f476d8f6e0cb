//! The parameters of a synthetic site: [`SiteSpec`], and the two kinds of
//! misbehaviour it can ask for, [`Delay`] (latency before every response)
//! and [`Fault`] (how a faulty page breaks), with their parsing and display
//! (`ringcrawl-site --delay-ms`, `--list-faults`).
//!
//! What this is not: where the delay is served (`respond.rs`) or how a
//! fault is written (`faults.rs`); only the seeded draw of a delay,
//! [`Delay::for_key`], is here, next to its distributions.

use std::str::FromStr;
use std::time::Duration;

use super::rng::{Rng, STREAM_DELAY};

/// Parameters of a synthetic site. The same spec gives the same site,
/// byte for byte, everywhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteSpec {
    /// Number of HTML pages, including `/` (values below 1 count as 1).
    pub pages: usize,
    /// Links per page to other pages (tree children plus random pages).
    pub links: usize,
    /// Seed of the pseudo-random choices.
    pub seed: u64,
    /// Approximate size in bytes of each HTML page.
    pub page_bytes: usize,
    /// Percentage (0..=100) of pages other than `/` answered with a
    /// [`Fault`] instead of the page (seeded).
    pub fault_percent: u32,
    /// Latency before every response.
    pub delay: Delay,
    /// Number of host names the site is split over (values below 1 count
    /// as 1). With 1 the site answers on any host.
    pub hosts: usize,
    /// Served over TLS: absolute links, expected URLs and roots are
    /// `https://` (the server must be started with TLS to match).
    pub tls: bool,
}

impl Default for SiteSpec {
    fn default() -> Self {
        SiteSpec {
            pages: 1000,
            links: 10,
            seed: 1,
            page_bytes: 5000,
            fault_percent: 0,
            delay: Delay::None,
            hosts: 1,
            tls: false,
        }
    }
}

/// Latency injected before every response, in whole milliseconds or more
/// precisely; the same URL always gets the same delay for a given seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Delay {
    /// Answer at once.
    #[default]
    None,
    /// Always this long.
    Fixed(Duration),
    /// Uniform in `low..=high`.
    Uniform(Duration, Duration),
    /// Exponential with this mean (capped at 20 times the mean).
    Exp(Duration),
}

impl FromStr for Delay {
    type Err = String;

    /// `N` (fixed), `A-B` (uniform) or `exp:MEAN`, all in milliseconds;
    /// `0` is no delay.
    fn from_str(s: &str) -> Result<Delay, String> {
        let ms = |v: &str| {
            v.trim()
                .parse::<u64>()
                .map(Duration::from_millis)
                .map_err(|_| format!("bad delay {s:?}: expected N, A-B or exp:MEAN (milliseconds)"))
        };
        let delay = if let Some(mean) = s.strip_prefix("exp:") {
            Delay::Exp(ms(mean)?)
        } else if let Some((a, b)) = s.split_once('-') {
            let (a, b) = (ms(a)?, ms(b)?);
            if a > b {
                return Err(format!("bad delay {s:?}: {a:?} > {b:?}"));
            }
            Delay::Uniform(a, b)
        } else {
            Delay::Fixed(ms(s)?)
        };
        Ok(match delay {
            Delay::Fixed(d) | Delay::Exp(d) | Delay::Uniform(_, d) if d.is_zero() => Delay::None,
            d => d,
        })
    }
}

impl Delay {
    /// The delay of the resource `key` of a site seeded `seed`: always
    /// the same for the same two.
    pub fn for_key(self, seed: u64, key: u64) -> Duration {
        let rng = || Rng::new(seed, STREAM_DELAY, key);
        match self {
            Delay::None => Duration::ZERO,
            Delay::Fixed(d) => d,
            Delay::Uniform(low, high) => {
                let span = (high - low).as_micros().min(u128::from(u64::MAX)) as usize;
                low + Duration::from_micros(rng().below(span.saturating_add(1)) as u64)
            }
            Delay::Exp(mean) => {
                let u = rng().unit();
                let factor = (-(1.0 - u).ln()).min(20.0);
                mean.mul_f64(factor)
            }
        }
    }
}

impl std::fmt::Display for Delay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Delay::None => write!(f, "0"),
            Delay::Fixed(d) => write!(f, "{}", d.as_millis()),
            Delay::Uniform(a, b) => write!(f, "{}-{}", a.as_millis(), b.as_millis()),
            Delay::Exp(m) => write!(f, "exp:{}", m.as_millis()),
        }
    }
}

/// How a faulty page is answered. Fault bodies hold no links.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fault {
    /// Close without sending a byte, on every attempt.
    Hangup,
    /// Head and part of the body, then a reset (RST).
    ResetMidBody,
    /// Fewer body bytes than `Content-Length`, then a normal close.
    ShortBody,
    /// A status line that is not one (`HTTP/1.1 abc OK`).
    BadStatusLine,
    /// Bytes that are not HTTP at all (an SSH banner or binary noise).
    Garbage,
    /// A response head of more than 64 KiB.
    HugeHead,
    /// Two different `Content-Length` headers.
    ConflictingLength,
    /// A 500 whose body is the page (with its links).
    ServerError,
    /// A 503 with `Retry-After` whose body is the page (with its links).
    Unavailable,
    /// A body trickled out (a few bytes every 250 ms, never more than 1 s
    /// apart) for 10 s, then a close short of `Content-Length`: a fetch
    /// deadline under 10 s ends it, and a longer one sees it truncated.
    /// Writing stops as soon as the client is gone.
    SlowBody,
    /// `Transfer-Encoding: chunked` with a chunk-size line that is not hex.
    BadChunk,
}

impl Fault {
    /// Every kind, in the order the seeded choice indexes.
    pub const ALL: [Fault; 11] = [
        Fault::Hangup,
        Fault::ResetMidBody,
        Fault::ShortBody,
        Fault::BadStatusLine,
        Fault::Garbage,
        Fault::HugeHead,
        Fault::ConflictingLength,
        Fault::ServerError,
        Fault::Unavailable,
        Fault::SlowBody,
        Fault::BadChunk,
    ];

    /// A short name (`snake_case`), used by `ringcrawl-site --list-faults`.
    pub fn name(self) -> &'static str {
        match self {
            Fault::Hangup => "hangup",
            Fault::ResetMidBody => "reset_mid_body",
            Fault::ShortBody => "short_body",
            Fault::BadStatusLine => "bad_status_line",
            Fault::Garbage => "garbage",
            Fault::HugeHead => "huge_head",
            Fault::ConflictingLength => "conflicting_length",
            Fault::ServerError => "status_500",
            Fault::Unavailable => "status_503",
            Fault::SlowBody => "slow_body",
            Fault::BadChunk => "bad_chunk",
        }
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::{Reply, Step};
    use crate::synth::graph::page_path;
    use crate::synth::SynthSite;
    use std::collections::HashSet;

    #[test]
    fn delays_parse_and_are_seeded_per_url() {
        assert_eq!("0".parse::<Delay>(), Ok(Delay::None));
        assert_eq!(
            "250".parse::<Delay>(),
            Ok(Delay::Fixed(Duration::from_millis(250)))
        );
        assert_eq!(
            "10-20".parse::<Delay>(),
            Ok(Delay::Uniform(
                Duration::from_millis(10),
                Duration::from_millis(20)
            ))
        );
        assert_eq!(
            "exp:100".parse::<Delay>(),
            Ok(Delay::Exp(Duration::from_millis(100)))
        );
        for bad in ["", "x", "20-10", "exp:", "-5", "1-2-3"] {
            assert!(bad.parse::<Delay>().is_err(), "{bad}");
        }
        for d in ["0", "250", "10-20", "exp:100"] {
            assert_eq!(d.parse::<Delay>().unwrap().to_string(), d);
        }
        let delay_of = |reply: Reply| match reply {
            Reply::Script(steps) => match steps.first() {
                Some(Step::Sleep(d)) => *d,
                s => panic!("{s:?}"),
            },
            _ => Duration::ZERO,
        };
        let spec = |delay: &str| SiteSpec {
            pages: 300,
            delay: delay.parse().unwrap(),
            ..SiteSpec::default()
        };
        let fixed = SynthSite::new(spec("250"));
        assert_eq!(
            delay_of(fixed.respond("/p/5.html")),
            Duration::from_millis(250)
        );
        assert_eq!(delay_of(fixed.respond("/nope")), Duration::from_millis(250));
        let uniform = SynthSite::new(spec("10-20"));
        let ds: Vec<Duration> = (1..300)
            .map(|i| delay_of(uniform.respond(&page_path(i))))
            .collect();
        assert!(ds
            .iter()
            .all(|d| (Duration::from_millis(10)..=Duration::from_millis(20)).contains(d)));
        assert!(ds.iter().collect::<HashSet<_>>().len() > 100, "varied");
        assert_eq!(ds[7], delay_of(uniform.respond(&page_path(8))), "seeded");
        let exp = SynthSite::new(spec("exp:100"));
        let ds: Vec<f64> = (1..300)
            .map(|i| delay_of(exp.respond(&page_path(i))).as_secs_f64())
            .collect();
        let mean = ds.iter().sum::<f64>() / ds.len() as f64;
        assert!((0.07..0.13).contains(&mean), "{mean}");
        assert!(ds.iter().all(|&d| d <= 2.0));
        // The delayed reply is the plain one after a sleep.
        let plain = SynthSite::new(spec("0")).respond("/p/5.html");
        assert_eq!(
            fixed.respond("/p/5.html"),
            plain.delayed(Duration::from_millis(250))
        );
    }
}
