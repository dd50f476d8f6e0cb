//! `ringcrawl`: parse the flags, run the crawl (or a subcommand: `cluster
//! status`, `completions`, `man`), print the report, map the
//! outcome to an exit code. Chosen after wget's (4 network failure, 8
//! server error response), but about the crawl as a whole, since a crawl
//! where some pages failed has done its job:
//!
//! - 0 the crawl finished and fetched something (some page answered 2xx),
//!   or the reader of `-o -` went away (EPIPE: the crawl stopped at once);
//! - 1 it failed or was aborted (a shard died, the records, the WARC
//!   files, the `--wacz` package or a `--save` file could not be written,
//!   `--demo` missed pages);
//! - 2 bad usage: flags or roots, an output path that cannot be written, a
//!   state directory in use, a resume's other scope (one line on stderr),
//!   or damage before the end of a file a resume reads (nothing changed;
//!   `--resume-discard-damaged` accepts the loss);
//! - 4 nothing fetched, no server answered at all (every root failed on
//!   DNS, connect, time-out, reset, or an unsupported scheme; robots.txt
//!   unreachable);
//! - 5 nothing fetched, and a root's certificate was not trusted (wget's
//!   "SSL verification failure"): the line says `--ca-cert FILE` or
//!   `--insecure` helps;
//! - 8 nothing fetched, servers answered with errors only (every root got
//!   a 4xx/5xx, was kept out by robots.txt, or redirected nowhere useful);
//! - 130 interrupted by SIGINT/SIGTERM (see `signals` for a second one).

use std::process::ExitCode;
use std::sync::Arc;

mod cli;
mod logger;
mod report;
mod save;
mod serve;
mod signals;
mod status;

use anyhow::Context;
use clap::Parser;
use cli::{Args, ClusterCommand, Command};
use ringcrawl::Fetched;
use ringcrawl_site::server::Server;
use ringcrawl_site::synth::{SiteSpec, SynthSite};
use ringcrawl_site::tls::TestCa;

fn main() -> ExitCode {
    let (mut args, given) = match parse_args() {
        Ok(parsed) => parsed,
        Err(code) => return code,
    };
    if let Some(command) = args.command.take() {
        return subcommand(command);
    }
    logger::install(args.verbosity());
    match run(args, given) {
        Ok(code) => code,
        // Damage a resume would not cut, a resume that asks for what the
        // crawl cannot change, a state directory in use: nothing was
        // changed, and the user decides (exit 2, as for a usage error).
        Err(e)
            if matches!(
                e.downcast_ref::<ringcrawl::CrawlError>(),
                Some(
                    ringcrawl::CrawlError::Damaged(_)
                        | ringcrawl::CrawlError::ResumeRefused(_)
                        | ringcrawl::CrawlError::StateLocked { .. }
                )
            ) =>
        {
            eprintln!("ringcrawl: {e:#}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("ringcrawl: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// The flags, and the command line as given (a new `--state` crawl keeps
/// it). With `--resume DIR`: the flags the crawl was made with, then the
/// ones given now (later ones win), so a resume needs only what changes.
fn parse_args() -> Result<(Args, Vec<String>), ExitCode> {
    let given: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let args = Args::try_parse().map_err(usage)?;
    if args.command.is_some() {
        return Ok((args, given));
    }
    if args.demo.is_some() && args.cluster.is_some() {
        eprintln!("ringcrawl: --demo cannot join a cluster crawl (its site lives in this process)");
        return Err(ExitCode::from(2));
    }
    if args.demo.is_some() && (args.state.is_some() || args.resume.is_some()) {
        eprintln!("ringcrawl: --demo cannot be resumed (its site lives in this process)");
        return Err(ExitCode::from(2));
    }
    let Some(dir) = &args.resume else {
        return Ok((args, given));
    };
    if !args.roots.is_empty() || args.demo.is_some() {
        eprintln!("ringcrawl: --resume: a resumed crawl keeps its roots; give none");
        return Err(ExitCode::from(2));
    }
    let stored = match ringcrawl::Crawler::stored_args(dir) {
        Ok(stored) => stored,
        Err(e) => {
            eprintln!("ringcrawl: {e}");
            return Err(ExitCode::from(2));
        }
    };
    let refused = cli::stored_args(&stored)
        .ok()
        .and_then(|then| cli::refused_at_resume(&args, &then));
    if let Some(why) = refused {
        eprintln!("ringcrawl: {why}");
        return Err(ExitCode::from(2));
    }
    // The flags given now go before a stored `--` (after it all is roots).
    let split = stored
        .iter()
        .position(|a| a == "--")
        .unwrap_or(stored.len());
    let (flags, roots) = stored.split_at(split);
    let argv = std::iter::once("ringcrawl".to_string())
        .chain(flags.iter().cloned())
        .chain(given.iter().cloned())
        .chain(roots.iter().cloned());
    match Args::try_parse_from(argv) {
        Ok(args) => Ok((args, given)),
        Err(e) => Err(usage(e)),
    }
}

/// `ringcrawl cluster status`, `ringcrawl completions SHELL`, `ringcrawl man`,
/// `ringcrawl report`.
fn subcommand(command: Command) -> ExitCode {
    let printed = match command {
        Command::Cluster {
            command: ClusterCommand::Status(args),
        } => return status::main(args),
        Command::Completions { shell } => cli::completions(shell),
        Command::Man => cli::man(),
        Command::Report(args) => {
            return match report::main(&args.files, &args.output) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("ringcrawl: report: {e:#}");
                    ExitCode::from(1)
                }
            };
        }
    };
    match printed {
        Ok(()) => ExitCode::SUCCESS,
        // `ringcrawl man | head` is fine.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ringcrawl: {e}");
            ExitCode::from(1)
        }
    }
}

/// What clap says instead of flags: help and version as clap prints them,
/// a usage error in one line (exit code 2).
fn usage(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
        _ => {
            eprintln!("ringcrawl: {}", cli::one_line(&e));
            ExitCode::from(2)
        }
    }
}

fn run(args: Args, given: Vec<String>) -> anyhow::Result<ExitCode> {
    // Before any thread: the open-file limit up, membarrier registered.
    ringcrawl::process::prepare();
    // --demo: serve the synthetic site in-process and crawl it (--tls: over
    // https, with a CA made here and trusted by this crawl only).
    let scheme = if args.tls { "https" } else { "http" };
    let demo = match args.demo {
        Some(pages) => {
            let site = Arc::new(SynthSite::new(SiteSpec {
                pages: pages.max(1),
                tls: args.tls,
                ..SiteSpec::default()
            }));
            let ca = if args.tls {
                Some(TestCa::new("ringcrawl demo CA").map_err(|e| anyhow::anyhow!("{e}"))?)
            } else {
                None
            };
            let tls = match &ca {
                Some(ca) => Some(
                    ca.site_cert()
                        .and_then(|cert| cert.server_config(&[]))
                        .map_err(|e| anyhow::anyhow!("{e}"))?,
                ),
                None => None,
            };
            let local = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
            let server = Server::start_many_with(&[local], 1, site.clone().handler(), tls)?;
            eprintln!(
                "demo: serving a synthetic site of {} pages on {scheme}://{}/",
                pages,
                server.addr()
            );
            Some((site, server, ca))
        }
        None => None,
    };
    let demo_root: Vec<String> = demo
        .iter()
        .map(|(_, s, _)| format!("{scheme}://{}/", s.addr()))
        .collect();
    let quiet = args.verbosity() < 0;
    let report_json = args.report_json.clone();
    let save_dir = args.save.clone();
    let (status_addr, status_linger) = (args.status_addr, args.status_linger);
    let built = args.into_builder(&demo_root).and_then(|mut builder| {
        builder = builder.keep_records(demo.is_some()).state_args(given);
        if let Some((_, _, Some(ca))) = &demo {
            builder = builder.ca_cert_der(ca.cert().to_vec());
        }
        Ok(builder.build()?)
    });
    let mut crawler = match built {
        Ok(crawler) => crawler,
        Err(e) => {
            eprintln!("ringcrawl: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let interrupt = crawler.interrupt_handle();
    signals::watch(interrupt.flag())?;
    let status = match status_addr {
        Some(addr) => Some(serve::StatusServer::start(addr, crawler.live(), quiet)?),
        None => None,
    };
    let saver = match save_dir {
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("--save {}: cannot make the directory", dir.display()))?;
            Some((
                save::spawn(dir.clone(), crawler.pages(save::SAVE_BUDGET))?,
                dir,
            ))
        }
        None => None,
    };

    let report = crawler.run()?;
    let summary = report.summary();
    // The stream ends with the crawl: the writer is done once it drains.
    let saved = saver.map(|(thread, dir)| {
        let saved = thread.join().unwrap_or_else(|_| save::Saved {
            failed: 1,
            first_error: Some("the writer thread panicked".into()),
            ..save::Saved::default()
        });
        (saved, dir)
    });
    if !quiet {
        eprint!("{}", end_report(&report, &summary));
        if let Some(earlier) = report.resumed() {
            // The report counts this run; a resumed crawl's user also wants
            // where the whole crawl stands.
            eprintln!(
                "  the whole crawl: {} records ({earlier} from earlier runs, {} from this one)",
                earlier + report.urls(),
                report.urls()
            );
        }
        if let Some((saved, dir)) = &saved {
            eprintln!(
                "  saved {} files ({:.1} MiB) under {}",
                saved.files,
                saved.bytes as f64 / f64::from(1 << 20),
                dir.display()
            );
        }
    }
    if let Some((s, _)) = saved.as_ref().filter(|(s, _)| s.failed > 0) {
        eprintln!(
            "ringcrawl: --save: {} pages could not be written; the first: {}",
            s.failed,
            s.first_error.as_deref().unwrap_or("?")
        );
    }
    if let Some(path) = report_json {
        let json = serde_json::to_vec_pretty(&summary)?;
        std::fs::write(&path, json).with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(server) = status {
        // The last numbers, for a scraper's next visit; a signal ends the
        // wait (the crawl's outcome stands).
        linger(status_linger, &interrupt);
        server.stop();
    }
    if report.output_closed() {
        // `ringcrawl -o - | head`: the reader had what it wanted; end
        // quietly, as other tools in a pipe do.
        if let Some((_, server, _)) = demo {
            server.stop();
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some((site, server, _)) = demo {
        let base = format!("{scheme}://{}", server.addr());
        let expected: std::collections::BTreeSet<String> = site
            .expected_paths()
            .into_iter()
            .map(|p| format!("{base}{p}"))
            .collect();
        let fetched: std::collections::BTreeSet<String> =
            report.records().iter().map(|r| r.url.clone()).collect();
        let missing = expected.difference(&fetched).count();
        let extra = fetched.difference(&expected).count();
        let (full, resumed) = server.handshakes();
        let handshakes = if full + resumed > 0 {
            format!(", TLS handshakes {full} full and {resumed} resumed")
        } else {
            String::new()
        };
        eprintln!(
            "demo: {} of {} expected URLs fetched, {} missing, {} unexpected, {} requests served{handshakes}",
            expected.len() - missing,
            expected.len(),
            missing,
            extra,
            server.total_hits()
        );
        server.stop();
        // A spent budget leaves pages unfetched on purpose.
        let missed = if report.budget_spent().is_some() {
            0
        } else {
            missing
        };
        if missed + extra > 0 {
            return Ok(ExitCode::from(1));
        }
    }
    if let Some(e) = report.output_error() {
        eprintln!("ringcrawl: {e}");
        return Ok(ExitCode::from(1));
    }
    if saved.as_ref().is_some_and(|(s, _)| s.failed > 0) {
        return Ok(ExitCode::from(1));
    }
    if let Some(gone) = report
        .cluster()
        .filter(|node| node.crawl_gone)
        .and_then(|node| node.error.as_deref())
    {
        eprintln!("ringcrawl: {gone}; records of finished fetches were written");
        return Ok(ExitCode::from(1));
    }
    if report.cluster().is_some_and(|node| node.superseded) {
        eprintln!("ringcrawl: another process joined the crawl under this node's name while this one was cut off from Redis; this one stopped, writing nothing more");
        return Ok(ExitCode::from(1));
    }
    if report.interrupted() {
        eprintln!("ringcrawl: interrupted; records of finished fetches were written");
        return Ok(ExitCode::from(130));
    }
    if report.aborted() {
        eprintln!("ringcrawl: the crawl was aborted before all work was done");
        return Ok(ExitCode::from(1));
    }
    if report.budget_spent() == Some(ringcrawl::Spent::Disk) {
        eprintln!(
            "ringcrawl: stopped: a file system it writes to has less free space than --min-free-disk; free some, and --resume a crawl made with --state"
        );
        return Ok(ExitCode::from(3));
    }
    if report.cluster_over() == Some(true) {
        // A node of a cluster crawl that ended: done, whatever its share.
        return Ok(ExitCode::SUCCESS);
    }
    if let (Some(earlier), 0) = (report.resumed(), report.urls()) {
        // A resume with nothing left to fetch, or a budget already spent:
        // done, not a failure to fetch.
        match report.budget_spent() {
            Some(spent) => eprintln!(
                "ringcrawl: {} was spent by the earlier runs ({earlier} records): resume with a larger one",
                spent.flag()
            ),
            None => eprintln!("ringcrawl: nothing left to crawl ({earlier} records from earlier runs)"),
        }
        return Ok(ExitCode::SUCCESS);
    }
    Ok(match report.fetched() {
        Fetched::Some => ExitCode::SUCCESS,
        Fetched::OnlyErrors => {
            eprintln!(
                "ringcrawl: nothing fetched: servers answered, never with a 2xx ({})",
                cli::failed_starts(&summary)
            );
            ExitCode::from(NOTHING_BUT_ERRORS)
        }
        Fetched::NoAnswer => match cli::untrusted_certificate(&summary) {
            Some(line) => {
                eprintln!("ringcrawl: nothing fetched: {line}");
                ExitCode::from(CERTIFICATE_REFUSED)
            }
            None => {
                eprintln!(
                    "ringcrawl: nothing fetched: no server answered ({})",
                    cli::failed_starts(&summary)
                );
                // A refused certificate among origins the line had no room for.
                if summary
                    .errors_by_kind
                    .contains_key(&ringcrawl::ErrorKind::TlsCertificate)
                {
                    ExitCode::from(CERTIFICATE_REFUSED)
                } else {
                    ExitCode::from(NO_ANSWER)
                }
            }
        },
        // A case a later library adds: the crawl ran.
        _ => ExitCode::SUCCESS,
    })
}

/// Wait `time`, or until a signal sets `interrupt`: at once if one did
/// already (an interrupted crawl, or a signal since it ended).
fn linger(time: std::time::Duration, interrupt: &ringcrawl::Interrupt) {
    let until = std::time::Instant::now() + time;
    while std::time::Instant::now() < until && !interrupt.is_interrupted() {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The end report: the library's summary, then why the crawl stopped
/// early and what a cluster node did, if either applies.
fn end_report(report: &ringcrawl::Report, summary: &ringcrawl::Summary) -> String {
    let mut text = summary.to_string();
    if let Some(spent) = summary.budget_spent {
        text.push_str(&format!(
            "  stopped: {} reached, {} URLs left queued\n",
            spent.flag(),
            summary.queued_left
        ));
    }
    if let Some(node) = report.cluster() {
        text.push_str(&format!(
            "  cluster: {} records acknowledged, partitions taken {} and given up {}, {} lost connections{}{}{}\n",
            node.records,
            node.taken,
            node.released,
            node.disconnects,
            match node.refused {
                0 => String::new(),
                n => format!(", {n} URLs from the streams refused"),
            },
            match node.lost {
                0 => String::new(),
                n => format!(", {n} URLs fetched for partitions lost meanwhile (not recorded)"),
            },
            if node.over { "; the crawl is over" } else { "; this node left before the end" },
        ));
    }
    text
}

/// Exit code: nothing fetched, no server answered (wget's "network failure").
const NO_ANSWER: u8 = 4;
/// Exit code: nothing fetched, and a certificate was refused (wget's "SSL
/// verification failure").
const CERTIFICATE_REFUSED: u8 = 5;
/// Exit code: nothing fetched, servers answered with errors only (wget's
/// "server issued an error response").
const NOTHING_BUT_ERRORS: u8 = 8;
