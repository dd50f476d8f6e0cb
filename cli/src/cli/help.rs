//! What the help says after the flags (exit codes, examples), and what is
//! generated from the same definitions: shell completions and the man page.

use std::io::Write;

use clap::CommandFactory;

use super::Args;

/// The end of `ringcrawl --help`: the exit codes (main.rs's) and two
/// examples.
pub(super) const AFTER_HELP: &str = "\
Durations take a unit (500ms, 2s, 5m, 1h) or are bare numbers in the flag's unit; sizes take K, M, G (powers of 1024).

Exit codes:
  0    the crawl finished and some page answered 2xx (or a budget stopped it, or a resume found nothing left)
  1    it failed or was aborted (a shard died, an output could not be written, --demo missed pages)
  2    bad flags or roots, an output path that cannot be written, a --state directory in use, or damage in the middle of a resumed crawl's log, index or journal (nothing changed; --resume-discard-damaged accepts the loss) (one line on stderr)
  4    nothing fetched: no server answered (DNS, connect, time-out, robots.txt unreachable)
  5    nothing fetched: a root's certificate is not trusted (--ca-cert FILE or --insecure helps)
  8    nothing fetched: servers answered with errors only (4xx/5xx, kept out by robots.txt)
  130  interrupted (SIGINT/SIGTERM): records and report written

Examples:
  ringcrawl --lenient --exclude '\\.pdf$' --rate 2/s -o pages.jsonl https://www.example.co.uk/
  ringcrawl --state crawl1 --warc warc --max-pages 100000 https://example.com/ && ringcrawl --resume crawl1";

/// `ringcrawl completions SHELL`: the completion script on stdout.
pub fn completions(shell: clap_complete::Shell) -> std::io::Result<()> {
    // Made in memory first: clap_complete panics on a write error, and
    // `ringcrawl completions bash | head` closes the pipe.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Args::command(), "ringcrawl", &mut script);
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()
}

/// `ringcrawl man`: the man page (roff) on stdout.
pub fn man() -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    clap_mangen::Man::new(Args::command()).render(&mut out)?;
    out.flush()
}
