//! `--delay-factor`: a slow server is asked less often. nginx sends each
//! page at 200 KB/s (`limit_rate`), so a 40 KB page takes some 200 ms;
//! with a factor of 3 the next request to the host starts no sooner than
//! three times the last one's time after its end, as nginx's own clock
//! (`$msec`, `$request_time`) shows.

use crate::cli::ringcrawl;
use crate::common::nginx::Nginx;
use crate::common::tools;

#[test]
fn each_request_waits_a_multiple_of_the_last_ones_time() {
    if !tools::require(
        "nginx",
        "each_request_waits_a_multiple_of_the_last_ones_time",
    ) {
        return;
    }
    let dir = Nginx::dir();
    let pages = ["a", "b", "c", "d"];
    let links: Vec<String> = pages
        .iter()
        .map(|p| format!("<a href=/{p}.html>{p}</a>"))
        .collect();
    std::fs::write(dir.join("index.html"), links.join(" ")).unwrap();
    for page in pages {
        std::fs::write(dir.join(format!("{page}.html")), vec![b'x'; 40_000]).unwrap();
    }
    let mut nginx = Nginx::start(dir.clone(), |port| {
        format!(
            "log_format timed '$msec $request_time $request_uri';\n\
             server {{ listen 127.0.0.1:{port}; root .; limit_rate 200k;\n\
               access_log timed.log timed; }}\n"
        )
    });
    let root = format!("http://127.0.0.1:{}/", nginx.port());
    let run = ringcrawl(&[
        &root,
        "-q",
        "--ignore-robots",
        "--no-sitemaps",
        "--per-host",
        "1",
        "--delay-factor",
        "3",
    ]);
    nginx.stop();
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // (start, end) of each request, in seconds, in the order they began.
    let log = std::fs::read_to_string(dir.join("timed.log")).unwrap();
    let mut spans: Vec<(f64, f64, String)> = log
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let (end, took): (f64, f64) = (f[0].parse().unwrap(), f[1].parse().unwrap());
            (end - took, end, f[2].to_string())
        })
        .collect();
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert_eq!(spans.len(), 5, "{spans:?}");
    for pair in spans.windows(2) {
        let ((start, end, uri), (next, _, _)) = (&pair[0], &pair[1]);
        let took = end - start;
        // nginx's clock counts in milliseconds: 10 ms of slack.
        assert!(
            next - end >= 3.0 * took - 0.010,
            "{uri} took {took:.3} s, the next began {:.3} s after: {spans:?}",
            next - end
        );
    }
    let slow: f64 = spans.iter().skip(1).map(|(s, e, _)| e - s).sum();
    assert!(slow > 0.4, "the pages were sent slowly: {spans:?}");
}
