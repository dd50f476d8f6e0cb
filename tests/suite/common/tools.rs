//! External programs some tests run (dnsmasq, ...): found on `PATH` or in
//! the sbin directories, or the test skips, saying so, unless the
//! environment asks for every tool (`RINGCRAWL_REQUIRE_TOOLS=1`), when a
//! missing one fails the test instead of hiding a gap in the setup.

use std::path::PathBuf;

/// The environment variable that turns a missing tool into a failure.
pub const REQUIRE_TOOLS: &str = "RINGCRAWL_REQUIRE_TOOLS";

/// `name`'s executable on `PATH` or in /usr/sbin, /sbin, /usr/local/sbin.
pub fn find_tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// `name`'s executable, or None after printing why `test` skips; a panic
/// instead when `RINGCRAWL_REQUIRE_TOOLS=1`. `install` says how to get it.
pub fn require_tool(test: &str, name: &str, install: &str) -> Option<PathBuf> {
    if let Some(bin) = find_tool(name) {
        return Some(bin);
    }
    if std::env::var(REQUIRE_TOOLS).is_ok_and(|v| v == "1") {
        panic!("{test}: {name} is not installed and {REQUIRE_TOOLS}=1 ({install})");
    }
    println!(
        "SKIPPED {test}: {name} is not installed ({install}; {REQUIRE_TOOLS}=1 makes this fail)"
    );
    None
}
