//! Faults ([`SiteSpec::fault_percent`](super::SiteSpec::fault_percent)):
//! which pages are faulty, and the reply each [`Fault`] gets.
//!
//! That percentage of pages (seeded; never `/`) is answered with a [`Fault`]
//! instead of the page: a hang-up, a reset or a short body, a broken head, a
//! 500 or 503, a body too slow to finish, bad chunking. A faulty page yields
//! no links to a crawler (fault bodies hold no links, and the 500/503 bodies
//! that do are not 2xx), so the walk does not follow them: a page reachable
//! only through faulty pages is not expected. [`SynthSite::good_paths`] and
//! [`SynthSite::faulty_paths`] split the expected set.
//!
//! What this is not: the list of kinds and their names (`spec.rs`) or the
//! choice between a fault and the page for a request (`respond.rs`).

use std::time::Duration;

use super::graph::parse_index;
use super::rng::{Rng, STREAM_FAULT};
use super::{Fault, SynthSite};
use crate::server::{Reply, Step};

impl SynthSite {
    /// The fault page `i` is answered with, if any (never for page 0).
    pub fn page_fault(&self, i: usize) -> Option<Fault> {
        if i == 0 || i >= self.page_count() || self.spec.fault_percent == 0 {
            return None;
        }
        let mut rng = Rng::new(self.spec.seed, STREAM_FAULT, i as u64);
        if rng.below(100) >= self.spec.fault_percent as usize {
            return None;
        }
        Some(Fault::ALL[rng.below(Fault::ALL.len())])
    }

    /// The fault a path is answered with on the host it lives on, if any.
    pub fn fault_at(&self, path: &str) -> Option<Fault> {
        let path = path.split(['?', '#']).next().unwrap_or_default();
        let i = path
            .strip_prefix("/p/")
            .and_then(|rest| rest.strip_suffix(".html"))
            .and_then(parse_index)?;
        self.page_fault(i)
    }

    /// A faulty page's reply.
    pub(super) fn fault_reply(&self, fault: Fault, i: usize, authority: &str) -> Reply {
        const HEAD: &str = "HTTP/1.0 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n";
        let mut rng = Rng::new(self.spec.seed, STREAM_FAULT, i as u64 ^ (1 << 63));
        let raw = |bytes: Vec<u8>| Reply::Script(vec![Step::Write(bytes), Step::Close]);
        match fault {
            Fault::Hangup => Reply::Hangup,
            Fault::ResetMidBody => {
                let sent = 1000 + rng.below(3000);
                let mut bytes = format!("{HEAD}Content-Length: {}\r\n\r\n", sent * 4).into_bytes();
                bytes.extend(filler(sent));
                Reply::Script(vec![
                    Step::Write(bytes),
                    Step::Sleep(Duration::from_millis(100)),
                    Step::Reset,
                ])
            }
            Fault::ShortBody => {
                let sent = 500 + rng.below(3000);
                let mut bytes = format!("{HEAD}Content-Length: {}\r\n\r\n", sent * 2).into_bytes();
                bytes.extend(filler(sent));
                raw(bytes)
            }
            Fault::BadStatusLine => {
                let line = *[
                    "HTTP/1.1 abc OK",
                    "HTTP/1.0 2000 OK",
                    "HTTP/9 200 OK",
                    "HTTP/1.0200 OK",
                ]
                .get(rng.below(4))
                .unwrap_or(&"HTTP/1.1 abc OK");
                raw(
                    format!("{line}\r\nContent-Type: text/html\r\n\r\n<p>status</p>\n")
                        .into_bytes(),
                )
            }
            Fault::Garbage => raw(if rng.below(2) == 0 {
                b"SSH-2.0-OpenSSH_9.6\r\n".to_vec()
            } else {
                let mut noise: Vec<u8> = (0..64).map(|_| rng.next() as u8 | 0x80).collect();
                noise.extend_from_slice(b"\r\n\r\n");
                noise
            }),
            Fault::HugeHead => {
                let mut head = String::from(HEAD);
                head.push_str("X-Padding: ");
                head.push_str(&"p".repeat(70_000 + rng.below(30_000)));
                head.push_str("\r\nContent-Length: 2\r\n\r\nok");
                raw(head.into_bytes())
            }
            Fault::ConflictingLength => raw(format!(
                "{HEAD}Content-Length: 5\r\nContent-Length: {}\r\n\r\nhello",
                6 + rng.below(100)
            )
            .into_bytes()),
            Fault::ServerError => Reply::html(500, self.render_page(i, authority)),
            Fault::Unavailable => Reply::Http {
                status: 503,
                headers: vec![
                    ("Retry-After".to_string(), (1 + rng.below(120)).to_string()),
                    (
                        "Content-Type".to_string(),
                        "text/html; charset=utf-8".to_string(),
                    ),
                ],
                body: self.render_page(i, authority).into_bytes(),
            },
            Fault::SlowBody => {
                let mut steps = vec![Step::Write(
                    format!("{HEAD}Content-Length: 100000\r\n\r\n").into_bytes(),
                )];
                for _ in 0..40 {
                    steps.push(Step::Write(filler(64)));
                    steps.push(Step::Sleep(Duration::from_millis(250)));
                }
                steps.push(Step::Close);
                Reply::Script(steps)
            }
            Fault::BadChunk => raw(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\
                  Transfer-Encoding: chunked\r\n\r\n\
                  5\r\n<p>x \r\nzz\r\nboom\r\n0\r\n\r\n"
                .to_vec()),
        }
    }
}

/// About `n` bytes of HTML prose without a single link, for fault bodies.
fn filler(n: usize) -> Vec<u8> {
    const TEXT: &[u8] = b"<p>Nothing to see here, the rest of this page never arrives.</p>\n";
    TEXT.iter().copied().cycle().take(n.max(1)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::tests::{body_of, header};
    use crate::synth::SiteSpec;
    use std::collections::HashSet;

    #[test]
    fn faults_are_seeded_varied_and_linkless() {
        let spec = SiteSpec {
            pages: 3000,
            fault_percent: 20,
            ..SiteSpec::default()
        };
        let site = SynthSite::new(spec.clone());
        let faulty: Vec<usize> = (0..3000)
            .filter(|&i| site.page_fault(i).is_some())
            .collect();
        assert!((500..700).contains(&faulty.len()), "{}", faulty.len());
        assert!(site.page_fault(0).is_none());
        let kinds: HashSet<Fault> = faulty.iter().filter_map(|&i| site.page_fault(i)).collect();
        assert_eq!(kinds.len(), Fault::ALL.len());
        let again = SynthSite::new(spec.clone());
        for i in 0..3000 {
            assert_eq!(site.page_fault(i), again.page_fault(i));
            assert_eq!(site.fault_at(&SynthSite::page_path(i)), site.page_fault(i));
        }
        let none = SynthSite::new(SiteSpec {
            fault_percent: 0,
            ..spec.clone()
        });
        assert!((0..3000).all(|i| none.page_fault(i).is_none()));
        let all = SynthSite::new(SiteSpec {
            fault_percent: 100,
            ..spec
        });
        assert!((1..3000).all(|i| all.page_fault(i).is_some()));
        // Only `/` serves links: `/`, its links, and nothing further.
        let expected = all.expected_paths();
        assert!(expected.len() < 30, "{expected:?}");
    }

    #[test]
    fn fault_replies_break_as_described() {
        let site = SynthSite::new(SiteSpec {
            pages: 3000,
            fault_percent: 30,
            ..SiteSpec::default()
        });
        for fault in Fault::ALL {
            let i = (1..3000)
                .find(|&i| site.page_fault(i) == Some(fault))
                .unwrap();
            let reply = site.respond_to("h:1", &SynthSite::page_path(i));
            let bytes: Vec<u8> = match &reply {
                Reply::Script(steps) => steps
                    .iter()
                    .filter_map(|s| match s {
                        Step::Write(b) => Some(b.clone()),
                        _ => None,
                    })
                    .flatten()
                    .collect(),
                _ => Vec::new(),
            };
            let text = String::from_utf8_lossy(&bytes);
            match fault {
                Fault::Hangup => assert_eq!(reply, Reply::Hangup),
                Fault::ResetMidBody => {
                    let Reply::Script(steps) = &reply else {
                        panic!()
                    };
                    assert_eq!(steps.last(), Some(&Step::Reset));
                }
                Fault::ShortBody => {
                    let head_end = text.find("\r\n\r\n").unwrap() + 4;
                    let len: usize = text
                        .lines()
                        .find_map(|l| l.strip_prefix("Content-Length: "))
                        .unwrap()
                        .trim()
                        .parse()
                        .unwrap();
                    assert!(bytes.len() - head_end < len);
                }
                Fault::BadStatusLine => {
                    assert!(text.starts_with("HTTP/") && !text.starts_with("HTTP/1.1 200 "))
                }
                Fault::Garbage => assert!(!text.starts_with("HTTP/")),
                Fault::HugeHead => {
                    assert!(text.find("\r\n\r\n").unwrap() > 64 * 1024)
                }
                Fault::ConflictingLength => {
                    assert_eq!(text.matches("Content-Length:").count(), 2)
                }
                Fault::ServerError | Fault::Unavailable => {
                    let (status, headers, body) = body_of(&reply);
                    let want = if fault == Fault::ServerError {
                        500
                    } else {
                        503
                    };
                    assert_eq!(status, want);
                    assert_eq!(
                        header(&headers, "retry-after").is_some(),
                        fault == Fault::Unavailable
                    );
                    // The page, links and all (a crawler must not follow them).
                    assert!(String::from_utf8(body).unwrap().contains("href"));
                }
                Fault::SlowBody => {
                    let Reply::Script(steps) = &reply else {
                        panic!()
                    };
                    let sleeps: Vec<Duration> = steps
                        .iter()
                        .filter_map(|s| match s {
                            Step::Sleep(d) => Some(*d),
                            _ => None,
                        })
                        .collect();
                    let total: Duration = sleeps.iter().sum();
                    assert!(sleeps.iter().all(|d| *d < Duration::from_secs(1)));
                    assert!(total >= Duration::from_secs(5), "{total:?}");
                    assert!(text.contains("Content-Length: 100000"));
                    assert!(bytes.len() < 100_000);
                }
                Fault::BadChunk => assert!(text.contains("chunked") && text.contains("zz\r\n")),
            }
        }
    }
}
