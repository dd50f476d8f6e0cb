//! The binary's `log` sink: the library reports through the `log` facade
//! and prints nothing itself; here its messages go to stderr, as many as
//! `-q`/`-v` ask for (`-q` errors only; default warnings; `-v` one line per
//! URL; `-vv` also retries).
//!
//! Hand-written rather than env_logger: the format is the command line's
//! own (`ringcrawl: ` before warnings, per-URL lines bare), it has no
//! filter syntax to offer, and it is a dozen lines.

use std::io::Write;

use log::{Level, LevelFilter, Log, Metadata, Record};

struct Stderr;

static LOGGER: Stderr = Stderr;

/// Install the sink for verbosity -1 (quiet), 0, 1 or 2+.
pub fn install(verbosity: i8) {
    let level = match verbosity {
        i8::MIN..=-1 => LevelFilter::Error,
        0 => LevelFilter::Warn,
        1 => LevelFilter::Info,
        _ => LevelFilter::Debug,
    };
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(level);
    }
}

impl Log for Stderr {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.level() <= log::max_level() && metadata.target().starts_with("ringcrawl")
    }

    fn log(&self, record: &Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        // A closed stderr (`ringcrawl -v 2>&1 | head`) loses the line; it
        // must not panic a shard, as eprintln! would.
        let mut stderr = std::io::stderr().lock();
        let _ = match record.level() {
            Level::Error | Level::Warn => writeln!(stderr, "ringcrawl: {}", record.args()),
            _ => writeln!(stderr, "{}", record.args()),
        };
    }

    fn flush(&self) {}
}
