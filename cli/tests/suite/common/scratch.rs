//! Scratch directories: a fresh folder under the system's temporary one
//! for a test's files, removed when the test passes and kept, its path
//! printed, when it fails (for the post-mortem). Without the removal each
//! run of the suite left its crawls' logs, archives and state behind (a
//! cluster test's ~100 MB among them).
//!
//! Not a temporary-file crate: the folder is named after the test and the
//! process, so a kept one is easy to find.

use std::ops::Deref;
use std::path::{Path, PathBuf};

/// A test's folder, removed when it goes out of scope unless the thread
/// is panicking (the test failed). Reads as a [`Path`].
#[derive(Debug)]
pub struct Scratch {
    path: PathBuf,
}

impl Scratch {
    /// An empty `ringcrawl-{name}-{pid}` in the temporary folder (one a
    /// killed earlier run left under that name is emptied).
    pub fn new(name: &str) -> Scratch {
        let path = std::env::temp_dir().join(format!("ringcrawl-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Scratch { path }
    }
}

impl Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("kept {} for the post-mortem", self.path.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}
