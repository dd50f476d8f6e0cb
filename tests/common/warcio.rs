//! warcio, the independent WARC checker, installed from PyPI into a venv
//! under the target dir (reused across runs). Tests that need it skip with
//! a message when python3 or PyPI is missing, unless
//! RINGCRAWL_REQUIRE_WARCIO is set.

use std::path::{Path, PathBuf};
use std::process::Command;

pub const WARCIO: &str = "warcio==1.8.1";
pub const CDXJ_INDEXER: &str = "cdxj-indexer==1.5.0";

pub fn run(cmd: &mut Command) -> Result<String, String> {
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() {
        Ok(stdout)
    } else {
        Err(format!(
            "{cmd:?} exited with {}\nstdout:\n{stdout}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// The venv's bin dir with warcio and cdxj-indexer installed, or why not.
pub fn warcio_venv() -> Result<PathBuf, String> {
    let venv = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("warcio-venv");
    let bin = venv.join("bin");
    let marker = venv.join(format!("installed-{WARCIO}-{CDXJ_INDEXER}"));
    // Two test binaries may get here at once: one builds, the other waits.
    std::fs::create_dir_all(env!("CARGO_TARGET_TMPDIR")).map_err(|e| e.to_string())?;
    let lock =
        std::fs::File::create(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("warcio-venv.lock"))
            .map_err(|e| e.to_string())?;
    // SAFETY: flock on a file we hold open; released when it is closed.
    unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&lock), libc::LOCK_EX) };
    if marker.exists() {
        return Ok(bin);
    }
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
    run(Command::new(bin.join("pip")).args([
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--timeout",
        "30",
        "--retries",
        "2",
        WARCIO,
        CDXJ_INDEXER,
    ]))?;
    std::fs::write(&marker, b"").map_err(|e| e.to_string())?;
    Ok(bin)
}

pub fn tool(bin: &Path, name: &str, args: &[&str], file: &Path) -> String {
    let out =
        run(Command::new(bin.join(name)).args(args).arg(file)).unwrap_or_else(|e| panic!("{e}"));
    println!("$ {name} {} {}\n{out}", args.join(" "), file.display());
    out
}

/// The venv's bin dir, or None after printing why the caller skips.
pub fn warcio_or_skip(test: &str) -> Option<PathBuf> {
    match warcio_venv() {
        Ok(bin) => Some(bin),
        Err(why) if std::env::var_os("RINGCRAWL_REQUIRE_WARCIO").is_none() => {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED {test}: cannot install warcio (set RINGCRAWL_REQUIRE_WARCIO=1 to make this fail):\n{why}"
            );
            None
        }
        Err(why) => {
            panic!("RINGCRAWL_REQUIRE_WARCIO is set and warcio cannot be installed:\n{why}")
        }
    }
}
