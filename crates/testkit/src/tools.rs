//! Outside programs some tests run (dnsmasq, openssl, prlimit, ...): found
//! on `PATH` or in the sbin directories, or the test says it is skipped
//! and passes, unless the environment asks for every tool
//! (`RINGCRAWL_REQUIRE_TOOLS=1`, as CI does, which installs them): then a
//! missing one fails the test instead of hiding a gap in the setup. Not how
//! to run a tool: each test (or its helper module) does.

use std::path::{Path, PathBuf};

/// The environment variable that turns a missing tool into a failure.
pub const REQUIRE_TOOLS: &str = "RINGCRAWL_REQUIRE_TOOLS";

/// `name`'s executable on `PATH` or in /usr/sbin, /sbin, /usr/local/sbin
/// (a non-root `PATH` may lack them: dnsmasq lives there).
pub fn find_tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `name`'s executable, or None after printing why `test` skips; a panic
/// instead when `RINGCRAWL_REQUIRE_TOOLS` is set. `install` says how to
/// get it.
pub fn require_tool(test: &str, name: &str, install: &str) -> Option<PathBuf> {
    if let Some(bin) = find_tool(name) {
        return Some(bin);
    }
    assert!(
        std::env::var_os(REQUIRE_TOOLS).is_none(),
        "{test}: {name} is not installed and {REQUIRE_TOOLS} is set ({install})"
    );
    println!(
        "SKIPPED {test}: {name} is not installed ({install}; {REQUIRE_TOOLS}=1 makes this fail)"
    );
    None
}

/// Whether `test` can run `name` (see [`require_tool`]).
pub fn require(name: &str, test: &str) -> bool {
    require_tool(test, name, ".ci/run installs it").is_some()
}
