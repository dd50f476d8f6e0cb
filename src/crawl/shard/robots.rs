//! robots.txt as a shard's job: fetch a host's robots.txt (following a few
//! redirects) for the frontier, archive each answer with `--warc`, queue
//! its `Sitemap:` lines when asked to, and record the URLs its rules keep
//! out.
//!
//! The policy itself (status rules, parsing, verdicts) is the pure
//! `ringcrawl-robots` crate's.

use ringcrawl_links::urls;
use ringcrawl_robots::{agent_token, Rules, MAX_ROBOTS_BYTES, MAX_ROBOTS_REDIRECTS};
use url::Url;

use crate::job::{ErrorKind, Job, Verdict};
use crate::net::fetch::FetchError;
use crate::output::record::Record;

use super::decode::decode_body;
use super::exchange::Tried;
use super::failure::fail;
use super::Shard;

impl Shard {
    /// robots.txt of the origin of `example`, with Google's status rules
    /// and up to [`MAX_ROBOTS_REDIRECTS`] redirects followed. A server that
    /// refuses our TLS (certificate, version, handshake) counts as having
    /// none: its pages then fail on their own records with the TLS error.
    /// With `sitemaps`, the sitemaps its `Sitemap:` lines name are queued.
    /// None: held back, its address had `--per-ip` fetches running (a
    /// redirect's target's too): to be asked again.
    pub(super) async fn fetch_robots(&self, example: &str, sitemaps: bool) -> Option<Rules> {
        let token = agent_token(&self.config.user_agent);
        let Some(mut url) = Url::parse(example)
            .ok()
            .and_then(|u| u.join("/robots.txt").ok())
        else {
            return Some(Rules::AllowAll);
        };
        for _ in 0..=MAX_ROBOTS_REDIRECTS {
            if !matches!(url.scheme(), "http" | "https") {
                // Not fetchable here; its pages are recorded as such anyway.
                return Some(Rules::AllowAll);
            }
            let result = match self.fetch_with_retries(&url, None, true, None).await {
                Tried::Done(result, _) => result,
                Tried::Held => return None,
                // The crawl is ending; its pages stay queued.
                Tried::Late => {
                    return Some(Rules::unavailable(
                        "--max-time was up before its name was known",
                    ))
                }
            };
            self.recording.stats.borrow_mut().robots_fetches += 1;
            let mut response = match result {
                Ok(response) => response,
                // The server would not speak TLS with us (certificate,
                // version, handshake): its pages will fail the same way,
                // each recorded with that error rather than hidden behind
                // robots_unavailable.
                Err(FetchError::Tls(e)) if !e.is_retryable() => return Some(Rules::AllowAll),
                // The name has no address, definitely: the same, with the
                // DNS error (cached, so at once) on each page's record.
                Err(FetchError::Dns(e)) if e.is_definite() => return Some(Rules::AllowAll),
                Err(e) => {
                    let cause = format!("{}: {e}", e.kind());
                    return Some(if e.kind() == ErrorKind::ConnectRefused {
                        Rules::refused(cause)
                    } else {
                        Rules::unavailable(cause)
                    });
                }
            };
            self.recording.stats.borrow_mut().robots_answered += 1;
            // Archived like a page (Heritrix archives it as a prerequisite):
            // replay tools and auditors see what the crawl obeyed.
            if let Some(encoded) = self.encode_exchange(url.as_str(), &mut response, None) {
                self.store(encoded, false).await;
            }
            let status = response.head.status;
            if (300..400).contains(&status) {
                match response
                    .head
                    .location
                    .as_deref()
                    .and_then(|l| urls::join_redirect(&url, l))
                {
                    Some(next) => {
                        url = next;
                        continue;
                    }
                    None => return Some(Rules::AllowAll),
                }
            }
            // Read as sent, a robots.txt compressed in transit (we offer
            // gzip, deflate and br; CDNs take the offer for text/plain) was
            // garbage to the parser, and so allowed everything.
            let codings = &response.head.content_encoding;
            let decoded;
            let body = if codings.is_empty() {
                &response.body[..]
            } else {
                decoded = decode_body(codings, &response.body, MAX_ROBOTS_BYTES)
                    .await
                    .body;
                &decoded[..]
            };
            let mut rules = Rules::from_answer(Some(status), body, token);
            let lines = rules.take_sitemaps();
            if sitemaps && !lines.is_empty() {
                self.queue_robots_sitemaps(&url, &lines);
            }
            return Some(rules);
        }
        // Too many redirects: as if there were no robots.txt.
        Some(Rules::AllowAll)
    }

    /// Record a URL that robots.txt keeps out, and count it out.
    pub(super) fn refuse(&self, job: Job, verdict: Verdict) {
        let message = match verdict {
            Verdict::Unavailable => match self.frontier.borrow().robots_cause(&job.url) {
                Some(cause) => {
                    format!("robots.txt unavailable ({cause}): its origin is not crawled")
                }
                None => "robots.txt unavailable: its origin is not crawled".to_string(),
            },
            _ => "disallowed by robots.txt".to_string(),
        };
        let mut record = Record::new(job.url, self.id);
        fail(&mut record, ErrorKind::from(verdict), &message);
        self.record_answered(record);
        if self.outstanding.finish(1) {
            self.stop();
        }
    }
}
