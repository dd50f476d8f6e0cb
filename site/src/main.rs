//! `ringcrawl-site`: serve, list or export the deterministic synthetic site.
//!
//! ```text
//! ringcrawl-site [--addr 127.0.0.1:8080]... [--pages N] [--links N] [--seed N]
//!                [--page-bytes N] [--faults PERCENT] [--delay-ms SPEC]
//!                [--hosts N] [--threads N] [--tls [--ca-file FILE]]
//!                [--list | --list-good | --list-faulty | --list-faults | --roots
//!                 | --export DIR | --write-certs DIR]
//! ringcrawl-site --endless [--addr 127.0.0.1:8080]... [--pages N] [--hosts N]
//!                [--links N] [--seed N] [--page-bytes N] [--threads N]
//!                [--tls [--ca-file FILE]] [--roots | --pins]
//! ```
//!
//! With `--endless` it serves the endless site instead (see
//! `ringcrawl_site::endless`): a billion pages (`--pages`) over 4096 hosts
//! `h{k}.endless.test` (`--hosts`), ~2 KB each, generated per request, with
//! keep-alive, for crawls at scale. `--roots` prints one root per host and
//! `--pins` the crawler's `--resolve` values (`h{k}.endless.test:PORT:ADDR`)
//! for the first `--addr`. On SIGINT/SIGTERM it prints its count of
//! requests: `endless site: requests=R pages=P duplicates=D not_found=N`
//! (`duplicates`: requests for a page served before), and the first
//! duplicated URLs if any.
//!
//! With `--tls` the site (either one) is served over https with a
//! certificate (for localhost, 127.0.0.1, ::1, *.site.test and
//! *.endless.test) from a certificate authority
//! made for the run, whose certificate is written to `--ca-file` for the
//! client to trust (`ringcrawl --ca-cert FILE`); the listed URLs and the
//! pages' absolute links are `https://`.
//!
//! With `--hosts N` (N > 1) the site lives on `h0.site.test` ...
//! `h{N-1}.site.test`; a crawler must pin every name to a loopback address,
//! e.g. `--resolve h3.site.test:8080:127.0.0.1`, and start from every root
//! (`--roots` prints them) or use `--lenient`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::Parser;
use ringcrawl_site::endless::{EndlessSite, EndlessSpec};
use ringcrawl_site::server::{Options, Reply, Server};
use ringcrawl_site::synth::{Delay, SiteSpec, SynthSite};
use ringcrawl_site::tls::TestCa;

/// Serve a deterministic synthetic web site over HTTP/1.0 (for the crawler's
/// demo and benchmarks), list the URLs a complete crawl must fetch, or export
/// the site as static files for another web server.
#[derive(Debug, Parser)]
#[command(name = "ringcrawl-site", version)]
struct Args {
    /// Address to listen on (repeatable: the site is served on every one);
    /// the first one's host:port is what the --list options print (its port
    /// only, with --hosts).
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: Vec<SocketAddr>,
    /// Number of HTML pages [default: 1000; with --endless 1000000000].
    #[arg(long)]
    pages: Option<u64>,
    /// Links per page.
    #[arg(long, default_value_t = SiteSpec::default().links)]
    links: usize,
    /// Seed of the site's pseudo-random choices.
    #[arg(long, default_value_t = SiteSpec::default().seed)]
    seed: u64,
    /// Approximate size of each HTML page in bytes [default: 5000; with
    /// --endless 2048].
    #[arg(long)]
    page_bytes: Option<usize>,
    /// Percentage of pages (never `/`) answered with a fault: hang-up,
    /// reset, short body, bad status line, garbage, huge head, conflicting
    /// Content-Length, 500, 503, a body too slow to finish, bad chunking.
    #[arg(long = "faults", value_name = "PERCENT", default_value_t = 0,
          value_parser = clap::value_parser!(u32).range(0..=100))]
    faults: u32,
    /// Latency before every response, in ms: N (fixed), A-B (uniform) or
    /// exp:MEAN (exponential); the same URL always gets the same delay.
    #[arg(long = "delay-ms", value_name = "SPEC", default_value = "0")]
    delay_ms: Delay,
    /// Split the site over N host names h0.site.test .. h{N-1}.site.test
    /// (pin them to the server with the crawler's --resolve) [default: 1,
    /// at most 100,000; with --endless 4096, at most 10,000,000,
    /// h{k}.endless.test].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    hosts: Option<u64>,
    /// Serve the endless site: pages generated per request over many
    /// hosts, with keep-alive; on SIGINT/SIGTERM it prints how many
    /// requests it served, for how many pages, and how many asked for a
    /// page served before.
    #[arg(long, conflicts_with_all = ["faults", "list", "list_good",
        "list_faulty", "list_faults", "export", "write_certs"])]
    endless: bool,
    /// With --endless: print the crawler's --resolve value for every host
    /// (HOST:PORT:ADDR, from the first --addr), and exit.
    #[arg(long, requires = "endless", group = "action")]
    pins: bool,
    /// Serve over https (TLS 1.2 and 1.3) with a certificate from a CA made
    /// for this run; list and link https URLs.
    #[arg(long)]
    tls: bool,
    /// Where --tls writes its CA certificate (PEM) for clients to trust.
    #[arg(long = "ca-file", value_name = "FILE", requires = "tls")]
    ca_file: Option<PathBuf>,
    /// Write a new CA (DIR/ca.pem) and the site's certificate chain and key
    /// signed by it (DIR/cert.pem, DIR/key.pem: for nginx's ssl_certificate
    /// and ssl_certificate_key), and exit.
    #[arg(long = "write-certs", value_name = "DIR", group = "action")]
    write_certs: Option<PathBuf>,
    /// Server executor threads, all accepting on the listening socket(s).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=64))]
    threads: u64,
    /// Print the full URL of every path a complete crawl must fetch, one per
    /// line, and exit.
    #[arg(long, group = "action")]
    list: bool,
    /// Print the expected URLs whose fetch must succeed (2xx or 3xx, complete), and exit.
    #[arg(long = "list-good", group = "action")]
    list_good: bool,
    /// Print the expected URLs whose fetch must fail (an error, or a status
    /// of 400 or more: injected faults and 404s), and exit.
    #[arg(long = "list-faulty", group = "action")]
    list_faulty: bool,
    /// Print every faulty URL with its kind, tab-separated (`not_found` for
    /// 404s), and exit.
    #[arg(long = "list-faults", group = "action")]
    list_faults: bool,
    /// Print the roots a crawl starts from (one per host), and exit.
    #[arg(long, group = "action")]
    roots: bool,
    /// Write the site as static files into DIR (index.html, p/N.html,
    /// static/, img/) plus DIR/redirects.conf for nginx, and exit (not with
    /// --faults, --delay-ms or --hosts).
    #[arg(long, value_name = "DIR", group = "action")]
    export: Option<PathBuf>,
}

fn main() -> Result<()> {
    let args = Args::parse();
    if args.endless {
        return endless(&args);
    }
    let defaults = SiteSpec::default();
    let hosts = args.hosts.unwrap_or(1);
    if hosts > 100_000 {
        bail!("--hosts: at most 100,000 without --endless (got {hosts})");
    }
    let site = SynthSite::new(SiteSpec {
        pages: args.pages.map_or(defaults.pages, |p| p as usize),
        links: args.links,
        seed: args.seed,
        page_bytes: args.page_bytes.unwrap_or(defaults.page_bytes),
        fault_percent: args.faults,
        delay: args.delay_ms,
        hosts: hosts as usize,
        tls: args.tls,
    });
    let authority = args.addr[0].to_string();
    let lines: Option<Vec<String>> = if args.list {
        Some(site.expected_urls(&authority))
    } else if args.list_good {
        Some(site.good_urls(&authority))
    } else if args.list_faulty {
        Some(site.faulty_urls(&authority))
    } else if args.list_faults {
        Some(
            site.faulty_urls(&authority)
                .into_iter()
                .map(|url| {
                    let path = url.splitn(4, '/').nth(3).unwrap_or("");
                    let kind = site
                        .fault_at(&format!("/{path}"))
                        .map_or("not_found", |f| f.name());
                    format!("{url}\t{kind}")
                })
                .collect(),
        )
    } else if args.roots {
        Some(site.roots(&authority))
    } else {
        None
    };
    if let Some(lines) = lines {
        return match print_lines(&lines) {
            // `ringcrawl-site --list | head` is fine.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            other => Ok(other?),
        };
    }
    if let Some(dir) = &args.write_certs {
        return write_certs(dir);
    }
    if let Some(dir) = &args.export {
        if args.faults > 0 || hosts > 1 || args.delay_ms != Delay::None {
            bail!("--export writes the plain site: drop --faults, --delay-ms and --hosts");
        }
        return export(&site, &authority, dir);
    }
    let tls = tls_config(&args)?;
    serve(site, &args.addr, args.threads as usize, tls)
}

/// With `--tls`: a CA made for this run, written to `--ca-file` for
/// clients to trust, and a server configuration with the site's
/// certificate signed by it.
fn tls_config(args: &Args) -> Result<Option<Arc<rustls::ServerConfig>>> {
    if !args.tls {
        return Ok(None);
    }
    let ca_file = args
        .ca_file
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join("ringcrawl-site-ca.pem"));
    let ca = TestCa::new("ringcrawl-site CA").map_err(|e| anyhow::anyhow!("{e}"))?;
    std::fs::write(&ca_file, ca.pem()).with_context(|| format!("writing {}", ca_file.display()))?;
    eprintln!(
        "CA certificate written to {} (trust it with: ringcrawl --ca-cert {})",
        ca_file.display(),
        ca_file.display()
    );
    let config = ca
        .site_cert()
        .and_then(|cert| cert.server_config(&[]))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(Some(config))
}

/// `--write-certs DIR`: a CA and the site's certificate, as PEM files.
fn write_certs(dir: &Path) -> Result<()> {
    let ca = TestCa::new("ringcrawl-site CA").map_err(|e| anyhow::anyhow!("{e}"))?;
    let cert = ca.site_cert().map_err(|e| anyhow::anyhow!("{e}"))?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for (name, pem) in [
        ("ca.pem", ca.pem()),
        ("cert.pem", cert.chain_pem()),
        ("key.pem", cert.key_pem()),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, pem).with_context(|| format!("writing {}", path.display()))?;
    }
    eprintln!("wrote ca.pem, cert.pem and key.pem to {}", dir.display());
    Ok(())
}

fn print_lines(lines: &[String]) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for line in lines {
        writeln!(out, "{line}")?;
    }
    out.flush()
}

/// `--endless`: list its roots or pins, or serve it until a signal, then
/// print the count of requests.
fn endless(args: &Args) -> Result<()> {
    let defaults = EndlessSpec::default();
    let site = EndlessSite::new(EndlessSpec {
        pages: args.pages.unwrap_or(defaults.pages),
        hosts: args.hosts.unwrap_or(defaults.hosts),
        links: args.links,
        page_bytes: args.page_bytes.unwrap_or(defaults.page_bytes),
        seed: args.seed,
        delay: args.delay_ms,
        tls: args.tls,
    })
    .map_err(anyhow::Error::msg)?;
    let first = args.addr[0];
    if args.roots || args.pins {
        let lines = if args.roots {
            site.roots(first.port())
        } else {
            site.pins(first.port(), &first.ip().to_string())
        };
        return match print_lines(&lines) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            other => Ok(other?),
        };
    }
    let set = block_stop_signals()?;
    let site = Arc::new(site);
    let options = Options {
        threads: args.threads as usize,
        keep_alive: true,
        count_paths: false,
    };
    // Made only to serve: listing roots needs no certificate.
    let tls = tls_config(args)?;
    let server = Server::start_with(&args.addr, site.clone().handler(), tls, options)
        .with_context(|| format!("cannot serve on {:?}", args.addr))?;
    let spec = site.spec();
    eprintln!(
        "listening on {} (endless site: {} pages, {} hosts h0..h{}.{}, {} links, ~{} bytes a page, delay {} ms, {} thread{})",
        server
            .addrs()
            .iter()
            .map(|a| format!("{}://{a}/", site.scheme()))
            .collect::<Vec<_>>()
            .join(" "),
        spec.pages,
        spec.hosts,
        spec.hosts - 1,
        ringcrawl_site::endless::DOMAIN,
        spec.links,
        spec.page_bytes,
        spec.delay,
        args.threads,
        if args.threads == 1 { "" } else { "s" },
    );
    let sig = wait_for(&set)?;
    let requests = server.total_hits();
    server.stop();
    eprintln!(
        "signal {sig}: stopped\nendless site: requests={requests} {}",
        site.counts()
    );
    for url in site.duplicated(10) {
        eprintln!("endless site: served more than once: {url}");
    }
    Ok(())
}

/// Block SIGINT and SIGTERM (before any server thread starts: they inherit
/// the mask), so that [`wait_for`] can wait for one here.
fn block_stop_signals() -> Result<libc::sigset_t> {
    // SAFETY: plain libc calls on a zeroed, then initialised, sigset_t.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            bail!("pthread_sigmask failed");
        }
        Ok(set)
    }
}

/// Wait for one of the signals in `set`; return its number.
fn wait_for(set: &libc::sigset_t) -> Result<libc::c_int> {
    let mut sig: libc::c_int = 0;
    if unsafe { libc::sigwait(set, &mut sig) } != 0 {
        bail!("sigwait failed");
    }
    Ok(sig)
}

fn serve(
    site: SynthSite,
    addrs: &[SocketAddr],
    threads: usize,
    tls: Option<Arc<rustls::ServerConfig>>,
) -> Result<()> {
    // Block SIGINT and SIGTERM before the server thread starts (it inherits
    // the mask), then wait for one here and shut down cleanly.
    let set = block_stop_signals()?;
    let pages = site.page_count();
    let spec = site.spec().clone();
    let hosts = site.host_count();
    let scheme = if tls.is_some() { "https" } else { "http" };
    let server = Server::start_many_with(addrs, threads, Arc::new(site).handler(), tls)
        .with_context(|| format!("cannot serve on {addrs:?}"))?;
    let listening: Vec<String> = server
        .addrs()
        .iter()
        .map(|a| format!("{scheme}://{a}/"))
        .collect();
    eprintln!(
        "listening on {} ({pages} pages, {hosts} host{}, {}% faults, delay {} ms, {threads} thread{})",
        listening.join(" "),
        if hosts == 1 { "" } else { "s" },
        spec.fault_percent,
        spec.delay,
        if threads == 1 { "" } else { "s" },
    );
    let sig = wait_for(&set)?;
    eprintln!(
        "signal {sig}: stopping after {} requests",
        server.total_hits()
    );
    server.stop();
    Ok(())
}

fn export(site: &SynthSite, authority: &str, dir: &Path) -> Result<()> {
    let mut redirects = String::from(
        "# Generated by ringcrawl-site --export; include inside the server block.\n\
         absolute_redirect off;\n",
    );
    let mut files = 0usize;
    for path in site.expected_paths() {
        let Reply::Http {
            status,
            headers,
            body,
        } = site.clean_reply(authority, &path)
        else {
            continue;
        };
        match status {
            200 => {
                let rel = if path == "/" {
                    "index.html"
                } else {
                    path.trim_start_matches('/')
                };
                let file = dir.join(rel);
                if let Some(parent) = file.parent() {
                    std::fs::create_dir_all(parent)
                        .with_context(|| format!("creating {}", parent.display()))?;
                }
                std::fs::write(&file, &body)
                    .with_context(|| format!("writing {}", file.display()))?;
                files += 1;
            }
            301 | 302 | 303 | 307 | 308 => {
                let location = headers
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("location"))
                    .map(|(_, v)| v.as_str())
                    .unwrap_or("/");
                redirects.push_str(&format!(
                    "location = {path} {{ return {status} {location}; }}\n"
                ));
            }
            _ => {} // 404s need no file
        }
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let conf = dir.join("redirects.conf");
    std::fs::write(&conf, &redirects).with_context(|| format!("writing {}", conf.display()))?;
    let root = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    eprintln!(
        "wrote {files} files and {} to {}\n\
         absolute links in the pages use {}://{authority}/; an nginx server block:\n\n\
         server {{\n    listen {authority};\n    root {};\n    index index.html;\n    \
         include {};\n}}",
        conf.display(),
        dir.display(),
        if site.spec().tls { "https" } else { "http" },
        root.display(),
        root.join("redirects.conf").display(),
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Args;
    use clap::CommandFactory;

    #[test]
    fn flags_are_consistent_and_help_stands_alone() {
        Args::command().debug_assert();
        let help = Args::command().render_long_help().to_string();
        assert!(
            !help.contains("see above"),
            "the module docs are not in --help: {help}"
        );
    }
}
