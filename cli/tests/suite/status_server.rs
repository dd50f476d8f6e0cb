//! `--status-addr`: the live numbers served over HTTP while the demo site
//! is crawled, scraped as Prometheus and a browser would, and checked
//! against the end report (`--report-json`) and `promtool check metrics`
//! (Debian's `prometheus` package; skipped without it unless
//! `RINGCRAWL_REQUIRE_TOOLS=1`).
//!
//! The crawler binds port 0 and prints the address it got; the tests read
//! it from stderr (no free port is assumed), and `--status-linger` keeps the
//! final numbers up until the test has read them and sends SIGINT.
//!
//! The live page is read in headless Chromium (`--dump-dom`, and a
//! screenshot at target/status.png; `report_page.rs` does the same for
//! `ringcrawl report`'s page); skipped without it unless
//! `RINGCRAWL_REQUIRE_TOOLS=1`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::tools::require_tool;

/// A crawl with a status server, and the address it serves on.
pub(crate) struct Crawl {
    child: Child,
    pub(crate) status: SocketAddr,
    pub(crate) dir: std::path::PathBuf,
    /// Every line it wrote to stderr so far, and the thread reading them.
    stderr: Arc<Mutex<Vec<String>>>,
    reader: std::thread::JoinHandle<()>,
}

impl Crawl {
    /// Start `ringcrawl --demo PAGES` with a status server on port 0 and
    /// the report written to `report.json` in a temp dir; `extra` flags
    /// added.
    fn start(name: &str, pages: &str, extra: &[&str]) -> Crawl {
        let mut args = vec!["--demo", pages, "--max-tasks", "8"];
        args.extend(extra);
        Crawl::run(name, &args)
    }

    /// Start `ringcrawl ARGS` with a status server on port 0 and the
    /// report written to `report.json` in a temp dir (the proxies' clear
    /// of the environment is the caller's: `args` names any).
    pub(crate) fn run(name: &str, args: &[&str]) -> Crawl {
        let dir = std::env::temp_dir().join(format!("ringcrawl-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_ringcrawl"));
        for var in crate::cli::PROXY_VARS {
            command.env_remove(var);
        }
        let mut child = command
            .args(args)
            .args(["--status-addr", "127.0.0.1:0", "--status-linger", "300s"])
            .arg("--report-json")
            .arg(dir.join("report.json"))
            .arg("-o")
            .arg(dir.join("records.jsonl"))
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        // Read stderr on a thread of its own (the pipe must be drained),
        // handing the status line over.
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let kept = lines.clone();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.strip_prefix("status: serving http://") {
                    let addr = rest.split('/').next().unwrap().to_string();
                    let _ = tx.send(addr);
                }
                kept.lock().unwrap().push(line);
            }
        });
        let status = rx
            .recv_timeout(Duration::from_secs(120))
            .expect("the status line on stderr")
            .parse()
            .unwrap();
        Crawl {
            child,
            status,
            dir,
            stderr: lines,
            reader,
        }
    }

    /// GET `path`: the status code and the body.
    pub(crate) fn get(&self, path: &str) -> (u16, String) {
        get(self.status, path)
    }

    /// Scrape /metrics until the crawl is over, and return the final
    /// text (the scrapes during the crawl must answer 200, or 503 before
    /// it starts).
    pub(crate) fn final_metrics(&self) -> String {
        let deadline = Instant::now() + Duration::from_secs(300);
        loop {
            let (status, text) = self.get("/metrics");
            if status == 200 {
                if text.lines().any(|l| l == "ringcrawl_finished 1") {
                    return text;
                }
            } else {
                assert_eq!(status, 503, "before the crawl starts only: {text}");
            }
            assert!(Instant::now() < deadline, "the crawl never finished");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The end report, once the crawl has returned (it is written before
    /// the linger, after the records are).
    pub(crate) fn report_written(&self) -> Value {
        let deadline = Instant::now() + Duration::from_secs(300);
        loop {
            if let Some(report) = std::fs::read(self.dir.join("report.json"))
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
            {
                return report;
            }
            assert!(Instant::now() < deadline, "no report.json");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// End the linger with SIGINT; the crawl's exit code and its report.
    pub(crate) fn stop(self) -> (Option<i32>, Value) {
        let (code, report, _) = self.stop_with_stderr();
        (code, report)
    }

    /// [`Crawl::stop`], and all it wrote to stderr (the end report too).
    pub(crate) fn stop_with_stderr(mut self) -> (Option<i32>, Value, String) {
        let pid = self.child.id() as i32;
        // SAFETY: a plain kill(2) of the child this test started.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
        let code = self.child.wait().unwrap().code();
        self.reader.join().unwrap();
        let stderr = self.stderr.lock().unwrap().join("\n");
        let report =
            serde_json::from_slice(&std::fs::read(self.dir.join("report.json")).unwrap()).unwrap();
        std::fs::remove_dir_all(&self.dir).ok();
        (code, report, stderr)
    }
}

/// GET `path` from `addr` over a new connection: the status and the body.
pub(crate) fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, body.to_string())
}

/// The value of the sample `series` (name and labels as written).
pub(crate) fn sample(text: &str, series: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no {series} in:\n{text}"))
        .parse::<f64>()
        .unwrap() as u64
}

#[test]
fn status_metrics_pass_promtool_and_equal_the_end_report() {
    let crawl = Crawl::start("status-metrics", "3000", &[]);
    let text = crawl.final_metrics();
    let (code, report) = crawl.stop();
    assert_eq!(code, Some(0), "a finished crawl's code, the linger cut");

    let n = |key: &str| report[key].as_u64().unwrap();
    let classes: u64 = ["1xx", "2xx", "3xx", "4xx", "5xx", "none"]
        .iter()
        .map(|c| {
            sample(
                &text,
                &format!("ringcrawl_pages_total{{status_class=\"{c}\"}}"),
            )
        })
        .sum();
    assert_eq!(classes, n("urls"));
    for (status, count) in report["statuses"].as_object().unwrap() {
        assert_eq!(
            sample(
                &text,
                &format!("ringcrawl_responses_total{{code=\"{status}\"}}")
            ),
            count.as_u64().unwrap(),
            "{status}"
        );
    }
    let status_class = |class: u64| -> u64 {
        report["statuses"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(s, _)| s.parse::<u64>().unwrap() / 100 == class)
            .map(|(_, c)| c.as_u64().unwrap())
            .sum()
    };
    assert_eq!(
        sample(&text, "ringcrawl_pages_total{status_class=\"2xx\"}"),
        status_class(2)
    );
    assert!(status_class(2) > 3000, "{report}");
    for (kind, key) in [
        ("html", "html"),
        ("other", "other"),
        ("redirect", "redirects"),
        ("error", "errors"),
    ] {
        assert_eq!(
            sample(
                &text,
                &format!("ringcrawl_records_total{{kind=\"{kind}\"}}")
            ),
            n(key),
            "{kind}"
        );
    }
    for kind in ringcrawl::ErrorKind::ALL {
        let want = report["errors_by_kind"][kind.name()].as_u64().unwrap_or(0);
        let series = format!("ringcrawl_errors_total{{kind=\"{}\"}}", kind.name());
        assert_eq!(sample(&text, &series), want, "{kind}");
    }
    assert_eq!(sample(&text, "ringcrawl_body_bytes_total"), n("bytes"));
    assert_eq!(sample(&text, "ringcrawl_links_total"), n("links"));
    assert_eq!(
        sample(
            &text,
            "ringcrawl_fetch_latency_seconds_count{phase=\"total\"}"
        ),
        report["total"]["count"].as_u64().unwrap()
    );
    let shards = report["shards"].as_array().unwrap();
    let by_shard: u64 = (0..shards.len())
        .map(|i| {
            sample(
                &text,
                &format!("ringcrawl_shard_pages_total{{shard=\"{i}\"}}"),
            )
        })
        .sum();
    assert_eq!(by_shard, n("urls"));
    for (i, shard) in shards.iter().enumerate() {
        assert_eq!(
            sample(
                &text,
                &format!("ringcrawl_shard_pages_total{{shard=\"{i}\"}}")
            ),
            shard["urls"].as_u64().unwrap()
        );
    }
    assert_eq!(
        sample(&text, "ringcrawl_dns_queries_total"),
        report["dns"]["queries"].as_u64().unwrap()
    );
    assert_eq!(sample(&text, "ringcrawl_fetches_in_flight"), 0);
    // Every fetch is over: no connection is open outside the shards'
    // pools (a connection counted open and never closed would show here).
    assert_eq!(
        sample(&text, "ringcrawl_connections_open"),
        sample(&text, "ringcrawl_connections_idle")
    );
    assert!(sample(&text, "ringcrawl_resident_memory_bytes") > 0);

    promtool_passes(
        "status_metrics_pass_promtool_and_equal_the_end_report",
        &text,
    );
}

/// `promtool check metrics` finds nothing wrong with `text` (skipped
/// without promtool unless the tools are required).
pub(crate) fn promtool_passes(test: &str, text: &str) {
    if let Some(promtool) = require_tool(test, "promtool", "apt-get install prometheus") {
        let mut check = Command::new(promtool)
            .args(["check", "metrics"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        check
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        let out = check.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "promtool: {}{}\n{text}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn status_server_answers_only_get_and_head_and_bad_paths_404() {
    let crawl = Crawl::start("status-misc", "50", &[]);
    let _ = crawl.final_metrics();
    assert_eq!(crawl.get("/nothing-here").0, 404);
    let mut stream = TcpStream::connect(crawl.status).unwrap();
    stream
        .write_all(b"POST /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 405 "), "{answer}");
    let (code, report) = crawl.stop();
    assert_eq!(code, Some(0));
    assert!(report["urls"].as_u64().unwrap() > 50);
}

/// The `data-value` of the element with id `id` in `dom` (the attributes
/// of its tag, in any order).
pub(crate) fn dom_value(dom: &str, id: &str) -> Option<String> {
    let at = dom.find(&format!(" id=\"{id}\""))?;
    let start = dom[..at].rfind('<')?;
    let end = at + dom[at..].find('>')?;
    let tag = &dom[start..end];
    let value = tag.split(" data-value=\"").nth(1)?;
    Some(value.split('"').next()?.to_string())
}

#[test]
fn status_page_renders_the_numbers_of_status_json_in_headless_chromium() {
    let test = "status_page_renders_the_numbers_of_status_json_in_headless_chromium";
    let Some(chromium) = require_tool(test, "chromium", "apt-get install chromium") else {
        return;
    };
    let crawl = Crawl::start("status-page", "10000", &["--max-pages", "6000"]);
    let _ = crawl.final_metrics();
    let (code, json) = crawl.get("/status.json");
    assert_eq!(code, 200);
    let status: Value = serde_json::from_str(&json).unwrap();
    let now = &status["now"];
    assert_eq!(now["finished"], true);
    assert!(!status["history"].as_array().unwrap().is_empty());

    let shot = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/status.png");
    let dom = render_in_chromium(
        &chromium,
        &crawl.dir.join("chromium-profile"),
        &format!("http://{}/", crawl.status),
        &shot,
    );

    let rendered = |id: &str| {
        dom_value(&dom, id).unwrap_or_else(|| panic!("no #{id} with a data-value in:\n{dom}"))
    };
    let number = |id: &str| rendered(id).parse::<f64>().unwrap() as u64;
    let json_u64 = |v: &Value| v.as_u64().unwrap();
    let summary = &now["summary"];
    assert!(dom.contains(">finished</span>"), "{dom}");
    assert_eq!(number("pages"), json_u64(&summary["urls"]));
    assert_eq!(number("bytes"), json_u64(&summary["bytes"]));
    assert_eq!(number("errors"), json_u64(&summary["errors"]));
    assert_eq!(number("in-flight"), json_u64(&now["in_flight"]));
    assert_eq!(
        number("connections-open"),
        json_u64(&now["connections_open"])
    );
    assert_eq!(
        number("connections-idle"),
        json_u64(&now["connections_idle"])
    );
    assert_eq!(number("queued"), json_u64(&now["queued"]));
    assert_eq!(number("queued-disk"), json_u64(&now["queued_on_disk"]));
    assert_eq!(number("hosts-live"), json_u64(&now["hosts_live"]));
    assert_eq!(number("hosts-resting"), json_u64(&now["hosts_resting"]));
    for (code, n) in summary["statuses"].as_object().unwrap() {
        assert_eq!(number(&format!("status-{code}")), json_u64(n), "{code}");
    }
    for (kind, n) in summary["errors_by_kind"].as_object().unwrap() {
        assert_eq!(number(&format!("error-{kind}")), json_u64(n), "{kind}");
    }
    for shard in now["shards"].as_array().unwrap() {
        let id = format!("shard-{}-pages", shard["shard"]);
        assert_eq!(number(&id), json_u64(&shard["pages"]), "{id}");
    }
    assert_eq!(number("mem-seen"), json_u64(&now["memory"]["seen"]));
    assert_eq!(number("budget-pages"), json_u64(&now["budgets"]["pages"]));
    assert_eq!(json_u64(&now["budgets"]["max_pages"]), 6000);
    assert!(
        dom.contains("id=\"chart-pages\"") && dom.contains("data-points="),
        "the charts were drawn"
    );

    let (code, report) = crawl.stop();
    assert_eq!(code, Some(0), "a spent budget exits 0");
    assert_eq!(
        report["urls"], summary["urls"],
        "the page's numbers are the report's"
    );
}

/// Chromium's DOM of `url` (a file or a page), and a screenshot of it at
/// `shot`.
pub(crate) fn render_in_chromium(
    chromium: &std::path::Path,
    profile: &std::path::Path,
    url: &str,
    shot: &std::path::Path,
) -> String {
    let run = |extra: &[String]| {
        let out = Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .args(extra)
            .arg(url)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "chromium: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let dom = run(&["--dump-dom".to_string()]);
    std::fs::remove_file(shot).ok();
    run(&[
        format!("--screenshot={}", shot.display()),
        "--window-size=1280,1100".to_string(),
    ]);
    assert!(
        std::fs::metadata(shot).is_ok_and(|m| m.len() > 1000),
        "a screenshot at {}",
        shot.display()
    );
    dom
}
