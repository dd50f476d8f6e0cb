//! The independent checkers from PyPI, each set installed into a venv of
//! its own under the target dir's `tmp` (reused across runs, shared by
//! the suite and the library's unit tests): warcio and cdxj-indexer for
//! WARC files and indexes, py-wacz (`wacz validate`) for WACZ packages.
//! Tests that need one skip with a message when python3 or PyPI is
//! missing, unless RINGCRAWL_REQUIRE_WARCIO (or RINGCRAWL_REQUIRE_TOOLS)
//! is set. `tmp` is the directory the venvs go in: an integration test's
//! `CARGO_TARGET_TMPDIR`, or [`target_tmpdir`] for a unit test, which has
//! none.

use std::path::{Path, PathBuf};
use std::process::Command;

/// warcio, pinned.
pub const WARCIO: &str = "warcio==1.8.1";
/// cdxj-indexer, pinned.
pub const CDXJ_INDEXER: &str = "cdxj-indexer==1.5.0";
/// py-wacz, whose `wacz validate` checks a WACZ package (it brings
/// frictionless, which checks the manifest as a data package).
pub const WACZ: &str = "wacz==0.6.0";

/// `cmd`'s stdout if it succeeds, else what it printed and how it ended.
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

/// The target dir's `tmp` seen from a test binary that Cargo built
/// (`TARGET/PROFILE/deps/NAME`): where an integration test's
/// `CARGO_TARGET_TMPDIR` is, for a unit test, which is given none.
pub fn target_tmpdir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let target = exe.ancestors().nth(3).unwrap();
    target.join("tmp")
}

/// The bin dir of the venv `name` under `tmp` with `packages` installed
/// (once: a marker file names them), or why not.
pub fn venv(tmp: &Path, name: &str, packages: &[&str]) -> Result<PathBuf, String> {
    let venv = tmp.join(name);
    let bin = venv.join("bin");
    let marker = venv.join(format!("installed-{}", packages.join("-")));
    // Two test binaries may get here at once: one builds, the other waits.
    std::fs::create_dir_all(tmp).map_err(|e| e.to_string())?;
    let lock =
        std::fs::File::create(tmp.join(format!("{name}.lock"))).map_err(|e| e.to_string())?;
    // SAFETY: flock on a file we hold open; released when it is closed.
    unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&lock), libc::LOCK_EX) };
    if marker.exists() {
        return Ok(bin);
    }
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
    run(Command::new(bin.join("pip"))
        .args([
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--timeout",
            "30",
            "--retries",
            "2",
        ])
        .args(packages))?;
    std::fs::write(&marker, b"").map_err(|e| e.to_string())?;
    Ok(bin)
}

/// The venv's bin dir with warcio and cdxj-indexer installed, or why not.
pub fn warcio_venv(tmp: &Path) -> Result<PathBuf, String> {
    venv(tmp, "warcio-venv", &[WARCIO, CDXJ_INDEXER])
}

/// A venv's bin dir with py-wacz (and the warcio and cdxj-indexer it
/// uses, pinned as above) installed, or why not.
pub fn wacz_venv(tmp: &Path) -> Result<PathBuf, String> {
    venv(tmp, "wacz-venv", &[WACZ, WARCIO, CDXJ_INDEXER])
}

/// `bin`'s tool `name` run with `args` on `file`, its output printed;
/// a panic if it fails.
pub fn tool(bin: &Path, name: &str, args: &[&str], file: &Path) -> String {
    let out =
        run(Command::new(bin.join(name)).args(args).arg(file)).unwrap_or_else(|e| panic!("{e}"));
    println!("$ {name} {} {}\n{out}", args.join(" "), file.display());
    out
}

/// The warcio venv's bin dir, or None after printing why the caller
/// skips.
pub fn warcio_or_skip(tmp: &Path, test: &str) -> Option<PathBuf> {
    or_skip(test, "warcio", warcio_venv(tmp))
}

/// The py-wacz venv's bin dir, or None after printing why the caller
/// skips.
pub fn wacz_or_skip(tmp: &Path, test: &str) -> Option<PathBuf> {
    or_skip(test, "wacz", wacz_venv(tmp))
}

/// The venv's bin dir, or None after printing why `test` skips (a panic
/// instead when RINGCRAWL_REQUIRE_WARCIO or RINGCRAWL_REQUIRE_TOOLS is set).
pub fn or_skip(test: &str, what: &str, venv: Result<PathBuf, String>) -> Option<PathBuf> {
    match venv {
        Ok(bin) => Some(bin),
        Err(why)
            if std::env::var_os("RINGCRAWL_REQUIRE_WARCIO").is_none()
                && std::env::var_os(crate::tools::REQUIRE_TOOLS).is_none() =>
        {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED {test}: cannot install {what} (set RINGCRAWL_REQUIRE_WARCIO=1 to make this fail):\n{why}"
            );
            None
        }
        Err(why) => {
            panic!("RINGCRAWL_REQUIRE_TOOLS (or _WARCIO) is set and {what} cannot be installed:\n{why}")
        }
    }
}
