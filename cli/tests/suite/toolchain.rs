//! The toolchain the workspace says it needs is the one it does need: the
//! `rust-version` of every member covers every locked dependency's.

use std::process::Command;

/// `1.88` or `1.88.0` as comparable numbers (major, minor, patch).
fn version(text: &str) -> [u64; 3] {
    let mut parts = text.split('.').map(|n| n.parse::<u64>().unwrap());
    [(); 3].map(|()| parts.next().unwrap_or(0))
}

#[test]
fn declared_rust_version_covers_every_locked_dependency() {
    let target = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version=1",
            "--locked",
            "--offline",
            "--filter-platform",
            &target,
            "--manifest-path",
            concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"),
        ])
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = meta["packages"].as_array().unwrap();
    let (needed, by) = packages
        .iter()
        .filter_map(|p| Some((version(p["rust_version"].as_str()?), p["name"].as_str()?)))
        .max()
        .expect("some package declares a rust-version");
    for member in meta["workspace_members"].as_array().unwrap() {
        let package = packages.iter().find(|p| p["id"] == *member).unwrap();
        let name = package["name"].as_str().unwrap();
        let declared = package["rust_version"].as_str().map(version);
        assert!(
            declared.as_ref().is_some_and(|d| *d >= needed),
            "{name} declares rust-version {declared:?}; {by} needs {needed:?}"
        );
    }
}
