//! A queued URL as a line of a stream entry, and back: what another node
//! needs to fetch it as the node that found it would have (depth, hop path,
//! redirects left, referrer), in text a person can read with `XRANGE`.
//!
//! ```text
//! url TAB depth TAB redirects_left TAB hops (hex) TAB via
//! ```
//!
//! `via` is empty for none and `=` for the previous line's (the links of
//! one page travel together and share it). URLs hold no tab or line break
//! (the URL standard strips them), and none is ever `=`. Decoding takes
//! anything Redis hands back: a line that is not one of these is `None`,
//! never a panic.
//!
//! Pure; not the streams themselves (`store`).

use std::fmt::Write as _;
use std::sync::Arc;

use crate::job::hops::Hops;
use crate::job::Job;

/// The lines of `jobs`, one a job, each ending in a line break.
pub(crate) fn encode(jobs: &[Job]) -> String {
    let mut out = String::with_capacity(jobs.iter().map(|j| j.url.len() + 16).sum());
    let mut previous: Option<&Arc<str>> = None;
    for job in jobs {
        let _ = write!(
            out,
            "{}\t{}\t{}\t{:x}\t",
            job.url,
            job.depth,
            job.redirects_left,
            job.hops.to_u64()
        );
        match (&job.via, previous) {
            (Some(via), Some(prev)) if Arc::ptr_eq(via, prev) || via == prev => out.push('='),
            (Some(via), _) => out.push_str(via),
            (None, _) => {}
        }
        out.push('\n');
        previous = job.via.as_ref();
    }
    out
}

/// Decodes lines as [`encode`] wrote them; a line that is not one is
/// skipped and counted in the second value. Jobs of one referrer share
/// one `Arc<str>`, as they did when queued.
pub(crate) fn decode(text: &str) -> (Vec<Job>, usize) {
    let mut jobs = Vec::new();
    let mut bad = 0;
    let mut previous: Option<Arc<str>> = None;
    for line in text.split('\n').filter(|l| !l.is_empty()) {
        match decode_line(line, previous.as_ref()) {
            Some(job) => {
                previous = job.via.clone();
                jobs.push(job);
            }
            None => bad += 1,
        }
    }
    (jobs, bad)
}

fn decode_line(line: &str, previous: Option<&Arc<str>>) -> Option<Job> {
    let mut fields = line.split('\t');
    let url = fields.next().filter(|u| !u.is_empty())?;
    let depth = fields.next()?.parse().ok()?;
    let redirects_left: u32 = fields.next()?.parse().ok()?;
    let redirects_left = u16::try_from(redirects_left).unwrap_or(u16::MAX);
    let hops = u64::from_str_radix(fields.next()?, 16).ok()?;
    let via = match fields.next()? {
        "" => None,
        "=" => Some(previous?.clone()),
        via => Some(Arc::from(via)),
    };
    if fields.next().is_some() {
        return None;
    }
    Some(Job {
        retries: 0,
        url: url.to_string(),
        redirects_left,
        depth,
        hops: Hops::from_u64(hops),
        via,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::hops::Hop;

    fn job(url: &str, via: Option<&Arc<str>>) -> Job {
        Job {
            retries: 0,
            url: url.to_string(),
            redirects_left: 7,
            depth: 3,
            hops: Hops::root().then(Hop::Link).then(Hop::Embed),
            via: via.cloned(),
        }
    }

    #[test]
    fn jobs_come_back_as_they_went_with_one_referrer_shared() {
        let page: Arc<str> = Arc::from("http://a.test/page");
        let other: Arc<str> = Arc::from("http://b.test/");
        let jobs = vec![
            Job::root("http://a.test/".into(), 10),
            job("http://a.test/1", Some(&page)),
            job("http://a.test/2", Some(&page)),
            job("http://c.test/x?q=1", Some(&other)),
            job("http://c.test/y", None),
        ];
        let text = encode(&jobs);
        assert_eq!(text.lines().count(), 5);
        assert!(
            text.contains("\t=\n"),
            "a repeated referrer is written once: {text}"
        );
        let (back, bad) = decode(&text);
        assert_eq!(bad, 0);
        assert_eq!(back.len(), jobs.len());
        for (a, b) in jobs.iter().zip(&back) {
            assert_eq!(
                (&a.url, a.depth, a.redirects_left, a.hops, &a.via),
                (&b.url, b.depth, b.redirects_left, b.hops, &b.via)
            );
        }
        assert!(Arc::ptr_eq(
            back[1].via.as_ref().unwrap(),
            back[2].via.as_ref().unwrap()
        ));
    }

    /// cli/tests/suite/cluster_security.rs appends jobs to a stream as
    /// anyone who can write to Redis could, its lines written by hand
    /// from the format above: they read as the jobs it means, and are
    /// what [`encode`] writes for those jobs.
    #[test]
    fn lines_written_by_hand_as_the_suite_does_read_as_the_jobs_they_mean() {
        let via: Arc<str> = Arc::from("http://h0.test:8080/");
        for (hex, hops) in [
            ("0", Hops::root()),
            ("200000000000001", Hops::root().then(Hop::Link)),
            ("200000000000003", Hops::root().then(Hop::Embed)),
        ] {
            let text = format!("http://outside.test/x\t1\t5\t{hex}\thttp://h0.test:8080/\n");
            let (jobs, bad) = decode(&text);
            assert_eq!((jobs.len(), bad), (1, 0), "{text:?}");
            let meant = Job {
                retries: 0,
                url: "http://outside.test/x".to_string(),
                redirects_left: 5,
                depth: 1,
                hops,
                via: Some(via.clone()),
            };
            assert_eq!(
                (
                    &jobs[0].url,
                    jobs[0].depth,
                    jobs[0].redirects_left,
                    jobs[0].hops,
                    &jobs[0].via
                ),
                (
                    &meant.url,
                    meant.depth,
                    meant.redirects_left,
                    meant.hops,
                    &meant.via
                ),
                "{text:?}"
            );
            assert_eq!(encode(&[meant]), text);
        }
    }

    #[test]
    fn lines_that_are_not_jobs_are_skipped_and_counted() {
        let text = "http://a.test/\t0\t10\t1\t\n\
                    garbage\n\
                    http://a.test/x\tdeep\t10\t1\t\n\
                    http://a.test/y\t1\t10\tzz\t\n\
                    http://a.test/z\t1\t10\t1\t=\n\
                    \t1\t10\t1\t\n\
                    http://a.test/w\t1\t10\t1\t\textra\n\
                    http://a.test/v\t1\t10\t1\thttp://a.test/\n";
        let (jobs, bad) = decode(text);
        let urls: Vec<&str> = jobs.iter().map(|j| j.url.as_str()).collect();
        assert_eq!(urls, ["http://a.test/", "http://a.test/v"]);
        assert_eq!(bad, 6, "no referrer before '=' is a bad line too");
    }

    #[test]
    fn any_bytes_decode_without_panic() {
        for text in [
            "",
            "\n\n",
            "\t\t\t\t",
            "=\t=\t=\t=\t=",
            "a\t1\t1\t1\t=\n",
            "\u{0}\t9999999999999999999999\t1\t1\t",
        ] {
            let _ = decode(text);
        }
    }
}
