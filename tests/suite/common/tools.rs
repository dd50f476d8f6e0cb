//! Whether an outside program a test runs (openssl, ...) is installed: a
//! test without it says it is skipped and passes, unless the environment
//! sets `RINGCRAWL_REQUIRE_TOOLS` (CI, which installs every tool): then a
//! missing tool fails the test. Not how to run the tool: each test does.

use std::path::{Path, PathBuf};

/// The environment variable that turns a missing tool into a failure.
pub const REQUIRE: &str = "RINGCRAWL_REQUIRE_TOOLS";

/// Where `name` is installed: the first executable file of that name in
/// `PATH`, or in the system directories a non-root `PATH` may lack
/// (`/usr/sbin`, `/sbin`: dnsmasq lives there).
pub fn find(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether `test` can run `name`: true if it is installed; else prints
/// that `test` is skipped and returns false, or fails when
/// [`REQUIRE`] is set.
pub fn require(name: &str, test: &str) -> bool {
    if find(name).is_some() {
        return true;
    }
    assert!(
        std::env::var_os(REQUIRE).is_none(),
        "{REQUIRE} is set and {test} needs {name}, which is not installed"
    );
    eprintln!("SKIPPED {test}: {name} is not installed (set {REQUIRE}=1 to make this fail)");
    false
}
