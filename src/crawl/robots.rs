//! Pure robots.txt policy (RFC 9309, with Google's status rules): what a
//! robots.txt answer means for a host, and whether a URL may be fetched.
//! Parsing is texting_robots'; fetching robots.txt is the shard's.
//!
//! Status rules: 2xx → the rules in the body; 3xx past the redirect limit
//! and 4xx → allow all; 5xx or unreachable → disallow all. Google retries
//! "for a while"; so does ringcrawl: the frontier asks again on a schedule
//! (`config::DEFAULT_RETRY_SCHEDULE`, about a minute) while the origin's pages
//! wait, and only then keeps the origin out for the rest of the crawl,
//! recording each URL as `robots_unavailable`.

// Network data flows through here: a panic would take down a whole shard.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::unreachable
)]

use std::time::Duration;

use texting_robots::Robot;

use crate::job::Verdict;

/// Redirects followed when fetching robots.txt.
pub const MAX_ROBOTS_REDIRECTS: u32 = 5;

/// robots.txt bytes read at most (Google reads 500 KiB).
pub const MAX_ROBOTS_BYTES: usize = 500 << 10;

/// Heap bytes a parsed rule costs beyond its text, roughly (a `MinRegex`
/// pattern `String` and its slot in the rules `Vec`, measured from
/// texting_robots 0.2's layout: 24 + 24 bytes).
const RULE_OVERHEAD: usize = 48;

/// Why an origin's robots.txt could not be had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreachable {
    /// How its fetch ended, in one line: `HTTP 503`, or the fetch's error
    /// kind and message (`connect_refused: connect: Connection refused`).
    /// The records of the URLs it keeps out carry it.
    pub cause: Box<str>,
    /// Nothing listens on that port (the connection was refused): a
    /// mistyped port, or a service that is down; asked again on a short
    /// schedule, not the one for 5xx and time-outs.
    pub refused: bool,
}

/// The robots policy of one host.
pub enum Rules {
    /// No robots.txt (4xx), or robots ignored.
    AllowAll,
    /// robots.txt unreachable or 5xx.
    Unavailable(Unreachable),
    /// Parsed rules for our user-agent token.
    Parsed {
        robot: Box<Robot>,
        /// What the rules cost in memory, estimated from the text they
        /// came from (see [`Rules::weight`]).
        bytes: usize,
    },
}

impl Rules {
    /// The policy for a robots.txt fetch that ended with `status` (None:
    /// no answer) and `body`, for the agent `token`.
    pub fn from_answer(status: Option<u16>, body: &[u8], token: &str) -> Rules {
        match status {
            Some(200..=299) => {
                let body = body.get(..MAX_ROBOTS_BYTES).unwrap_or(body);
                match Robot::new(token, body) {
                    Ok(robot) => Rules::Parsed {
                        robot: Box::new(robot),
                        bytes: body.len()
                            + RULE_OVERHEAD * body.iter().filter(|&&b| b == b'\n').count(),
                    },
                    // Unparseable rules say nothing: allow, as for a 404.
                    Err(_) => Rules::AllowAll,
                }
            }
            Some(300..=499) => Rules::AllowAll,
            Some(status) => Rules::unavailable(format!("HTTP {status}")),
            None => Rules::unavailable("no answer"),
        }
    }

    /// Unavailable for `cause` (not a refused connection).
    pub fn unavailable(cause: impl Into<Box<str>>) -> Rules {
        Rules::Unavailable(Unreachable {
            cause: cause.into(),
            refused: false,
        })
    }

    /// Why the rules could not be had, if they could not.
    pub fn unreachable(&self) -> Option<&Unreachable> {
        match self {
            Rules::Unavailable(why) => Some(why),
            _ => None,
        }
    }

    /// May `url` be fetched?
    pub fn verdict(&self, url: &str) -> Verdict {
        match self {
            Rules::AllowAll => Verdict::Allowed,
            Rules::Unavailable(_) => Verdict::Unavailable,
            Rules::Parsed { robot, .. } if robot.allowed(url) => Verdict::Allowed,
            Rules::Parsed { .. } => Verdict::Disallowed,
        }
    }

    /// Heap bytes these rules hold, estimated: the robots.txt text (at most
    /// [`MAX_ROBOTS_BYTES`]) plus a rule's overhead per line. An upper
    /// bound in practice: only our group's rules are kept.
    pub fn weight(&self) -> usize {
        match self {
            Rules::Parsed { bytes, .. } => *bytes,
            _ => 0,
        }
    }

    /// The origin could not be asked (unreachable or 5xx): worth asking
    /// again later.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Rules::Unavailable(_))
    }

    /// The `Sitemap:` lines (for every agent, as RFC 9309 leaves them
    /// outside the groups), taken out: the rules kept for the rest of the
    /// crawl need not hold them.
    pub fn take_sitemaps(&mut self) -> Vec<String> {
        match self {
            Rules::Parsed { robot, .. } => std::mem::take(&mut robot.sitemaps),
            _ => Vec::new(),
        }
    }

    /// `Crawl-delay` for our agent, if any, capped at `cap`.
    pub fn crawl_delay(&self, cap: Duration) -> Option<Duration> {
        match self {
            Rules::Parsed { robot, .. } => robot
                .delay
                .filter(|d| d.is_finite() && *d > 0.0)
                .map(|d| Duration::from_secs_f32(d.min(cap.as_secs_f32()))),
            _ => None,
        }
    }
}

/// The product token robots groups are matched against: the User-Agent up
/// to the first `/` or space (`ringcrawl/0.1` → `ringcrawl`).
pub fn agent_token(user_agent: &str) -> &str {
    user_agent.split(['/', ' ']).next().unwrap_or(user_agent)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TXT: &[u8] = b"User-agent: *\nDisallow: /private/\nCrawl-delay: 2\n\nUser-agent: ringcrawl\nDisallow: /no-bots/\nAllow: /no-bots/ok\nCrawl-delay: 30\n";

    #[test]
    fn our_group_wins_over_the_star_group() {
        let rules = Rules::from_answer(Some(200), TXT, "ringcrawl");
        assert_eq!(
            rules.verdict("http://a.test/no-bots/x"),
            Verdict::Disallowed
        );
        assert_eq!(rules.verdict("http://a.test/no-bots/ok"), Verdict::Allowed);
        assert_eq!(
            rules.verdict("http://a.test/private/x"),
            Verdict::Allowed,
            "the * group is not ours"
        );
        let other = Rules::from_answer(Some(200), TXT, "otherbot");
        assert_eq!(
            other.verdict("http://a.test/private/x"),
            Verdict::Disallowed
        );
    }

    #[test]
    fn sitemap_lines_are_read_whatever_the_group_and_taken_once() {
        let txt = b"User-agent: other\nDisallow: /\nSitemap: https://a.test/s1.xml\n\nsitemap: /relative.xml\n";
        let mut rules = Rules::from_answer(Some(200), txt, "ringcrawl");
        assert_eq!(
            rules.take_sitemaps(),
            ["https://a.test/s1.xml", "/relative.xml"]
        );
        assert!(rules.take_sitemaps().is_empty());
        assert!(Rules::from_answer(Some(404), txt, "x").take_sitemaps().is_empty());
    }

    #[test]
    fn crawl_delay_is_capped() {
        let rules = Rules::from_answer(Some(200), TXT, "ringcrawl");
        assert_eq!(
            rules.crawl_delay(Duration::from_secs(10)),
            Some(Duration::from_secs(10))
        );
        let star = Rules::from_answer(Some(200), TXT, "otherbot");
        assert_eq!(
            star.crawl_delay(Duration::from_secs(10)),
            Some(Duration::from_secs(2))
        );
    }

    #[test]
    fn status_rules_follow_google() {
        assert_eq!(
            Rules::from_answer(Some(404), b"", "x").verdict("http://a/"),
            Verdict::Allowed
        );
        assert_eq!(
            Rules::from_answer(Some(403), b"", "x").verdict("http://a/"),
            Verdict::Allowed
        );
        assert_eq!(
            Rules::from_answer(Some(503), b"", "x").verdict("http://a/"),
            Verdict::Unavailable
        );
        assert_eq!(
            Rules::from_answer(None, b"", "x").verdict("http://a/"),
            Verdict::Unavailable
        );
    }

    #[test]
    fn garbage_robots_txt_does_not_panic() {
        let junk: Vec<u8> = (0..5000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
            .collect();
        let rules = Rules::from_answer(Some(200), &junk, "ringcrawl");
        let _ = rules.verdict("http://a.test/x");
    }

    #[test]
    fn agent_token_is_the_product_name() {
        assert_eq!(agent_token("ringcrawl/0.1.0"), "ringcrawl");
        assert_eq!(agent_token("MyBot (+http://x)"), "MyBot");
    }
}
