//! What the state directory's two JSON files hold: the [`Manifest`]
//! (written once, when the crawl starts: what a resume may not change) and
//! the [`Checkpoint`] (replaced at every checkpoint: how far the crawl got).
//!
//! Plain serde structs and their checks; the files themselves are read and
//! written by [`super::StateDir`].

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::web::scope::{Scope, ScopeMode};
use ringcrawl_warc::timestamp::rfc3339_millis;

use super::StateError;

/// The version of the state directory's layout this build reads and writes.
/// A directory of another version is refused, never half-read.
pub(crate) const FORMAT: u32 = 1;

/// The settings of a crawl that must stay the same across a resume, and
/// what identifies it. Written once, at [`super::StateDir::create`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Manifest {
    /// The layout version ([`FORMAT`]).
    pub format: u32,
    /// `ringcrawl/VERSION` that created the directory.
    pub software: String,
    /// When the crawl was started (RFC 3339 UTC, milliseconds).
    pub created: String,
    /// The crawl's roots, normalised, as given to the first run.
    pub roots: Vec<String>,
    /// Which URLs may be fetched.
    pub scope: ScopeSettings,
    /// Shards the crawl runs on: each host's state lives in the shard
    /// `shard_for(host, shards)` names, so a resume must use as many.
    pub shards: usize,
    /// The per-crawl key of URL fingerprints (the seen runs are sorted
    /// by fingerprint, so it must not change).
    pub fingerprint_key: FingerprintKey,
    /// The output files the crawl appends to.
    pub outputs: OutputPaths,
    /// The command line's flags that made the crawl (`ringcrawl --resume`
    /// applies them again, then its own); empty from the library.
    #[serde(default)]
    pub args: Vec<String>,
}

/// Strict or lenient hosts, `--exclude`, `--include` and `--no-parent`.
/// (The last two are left out when not set, so a crawl made before they
/// existed reads the same.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ScopeSettings {
    /// `strict` or `lenient`.
    #[serde(with = "scope_mode")]
    pub mode: ScopeMode,
    /// The `--exclude` regex, as given.
    pub exclude: Option<String>,
    /// The `--include` regexes, as given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<String>,
    /// `--no-parent`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_parent: bool,
}

impl ScopeSettings {
    /// The settings of `scope`, as a manifest keeps them.
    pub(crate) fn of(scope: &Scope) -> ScopeSettings {
        ScopeSettings {
            mode: scope.mode(),
            exclude: scope.exclude().map(str::to_string),
            include: scope.include().into_iter().map(str::to_string).collect(),
            no_parent: scope.no_parent(),
        }
    }

    /// What differs between the crawl's scope (`self`) and `now`, in
    /// words, one phrase each (none if they are the same).
    pub(crate) fn differences(&self, now: &ScopeSettings) -> Vec<String> {
        let mode = |m: ScopeMode| match m {
            ScopeMode::Strict => "--strict",
            ScopeMode::Lenient => "--lenient",
        };
        let regex = |r: Option<&str>| match r {
            Some(r) => format!("{r:?}"),
            None => "none".to_string(),
        };
        let list = |l: &[String]| match l {
            [] => "none".to_string(),
            l => l
                .iter()
                .map(|r| format!("{r:?}"))
                .collect::<Vec<_>>()
                .join(", "),
        };
        let on = |b: bool| if b { "on" } else { "off" };
        let mut out = Vec::new();
        if self.mode != now.mode {
            out.push(format!(
                "the crawl is {}, this run {}",
                mode(self.mode),
                mode(now.mode)
            ));
        }
        if self.exclude != now.exclude {
            out.push(format!(
                "the crawl's --exclude is {}, this run's {}",
                regex(self.exclude.as_deref()),
                regex(now.exclude.as_deref())
            ));
        }
        if self.include != now.include {
            out.push(format!(
                "the crawl's --include is {}, this run's {}",
                list(&self.include),
                list(&now.include)
            ));
        }
        if self.no_parent != now.no_parent {
            out.push(format!(
                "the crawl has --no-parent {}, this run {}",
                on(self.no_parent),
                on(now.no_parent)
            ));
        }
        out
    }
}

/// Where a crawl's outputs go; absolute paths (a resume may run from
/// another working directory). None: that output is off. JSONL to stdout
/// cannot be resumed, so it has no place here.
///
/// In the manifest's file, a path inside the state directory is written
/// relative to it ([`OutputPaths::within`]) and read back against the
/// directory it is found in ([`OutputPaths::resolved_in`]): a copy or a
/// move of the directory takes those outputs along, and a copy resumed
/// writes its own, not the original's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct OutputPaths {
    /// `-o FILE`.
    pub jsonl: Option<PathBuf>,
    /// `--warc DIR` and the prefix of its files' names
    /// (`PREFIX-sSHARD-SEQ.warc.gz`).
    pub warc: Option<WarcOutput>,
    /// `--cdxj FILE`.
    pub cdxj: Option<PathBuf>,
}

impl OutputPaths {
    /// These paths as the manifest's file keeps them: those inside `dir`
    /// (absolute, as every path here) relative to it.
    pub(crate) fn within(&self, dir: &Path) -> OutputPaths {
        let inside = |path: &PathBuf| match path.strip_prefix(dir) {
            Ok(rest) if !rest.as_os_str().is_empty() => rest.to_path_buf(),
            _ => path.clone(),
        };
        self.map(inside)
    }

    /// Paths read from the manifest of the state directory `dir`: those
    /// relative to it made absolute again.
    pub(crate) fn resolved_in(&self, dir: &Path) -> OutputPaths {
        self.map(|path| dir.join(path))
    }

    fn map(&self, f: impl Fn(&PathBuf) -> PathBuf) -> OutputPaths {
        OutputPaths {
            jsonl: self.jsonl.as_ref().map(&f),
            warc: self.warc.as_ref().map(|w| WarcOutput {
                dir: f(&w.dir),
                prefix: w.prefix.clone(),
            }),
            cdxj: self.cdxj.as_ref().map(&f),
        }
    }
}

/// The WARC directory and the file name prefix shared by every shard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct WarcOutput {
    /// `--warc DIR`.
    pub dir: PathBuf,
    /// The prefix of its files' names; a resume keeps it, so the files of
    /// one crawl keep one name.
    pub prefix: String,
}

impl Manifest {
    /// The manifest of a new crawl: stamped with this build and the time,
    /// a fresh [`FingerprintKey`], and the output paths made absolute.
    pub(crate) fn new(
        roots: Vec<String>,
        scope: ScopeSettings,
        shards: usize,
        outputs: OutputPaths,
    ) -> Result<Manifest, StateError> {
        let absolute = |path: PathBuf| -> Result<PathBuf, StateError> {
            std::path::absolute(&path).map_err(|source| StateError::Io {
                what: "making absolute",
                path,
                source,
            })
        };
        let outputs = OutputPaths {
            jsonl: outputs.jsonl.map(absolute).transpose()?,
            warc: match outputs.warc {
                Some(w) => Some(WarcOutput {
                    dir: absolute(w.dir)?,
                    prefix: w.prefix,
                }),
                None => None,
            },
            cdxj: outputs.cdxj.map(absolute).transpose()?,
        };
        Ok(Manifest {
            format: FORMAT,
            software: concat!("ringcrawl/", env!("CARGO_PKG_VERSION")).to_string(),
            created: rfc3339_millis(SystemTime::now()),
            roots,
            scope,
            shards,
            fingerprint_key: FingerprintKey::random().map_err(StateError::Random)?,
            outputs,
            args: Vec::new(),
        })
    }
}

/// How far a crawl had got when its last checkpoint was taken: what its
/// log of records cannot tell a resume (the time spent over every run),
/// and the counters, for whoever watches a long crawl. A resume rebuilds
/// the rest from the journals and the log (`super::session`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Checkpoint {
    /// 1 for the crawl's first checkpoint, one more for each after it.
    pub seq: u64,
    /// When it was taken (RFC 3339 UTC, milliseconds).
    pub taken: String,
    /// Crawl time spent so far over every run, in milliseconds (what
    /// `--max-time` counts).
    pub elapsed_ms: u64,
    /// The budgets spent so far.
    pub spent: Spent,
    /// The report's counters, by name, as the crawl keeps them.
    pub counters: BTreeMap<String, u64>,
}

/// `--max-pages` and `--max-bytes` spent (time is `elapsed_ms`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Spent {
    /// Page fetches granted.
    pub pages: u64,
    /// Body bytes received.
    pub bytes: u64,
}

/// The crawl's 128-bit key for URL fingerprints, drawn from the kernel's
/// random source when the crawl is created; stored as 32 hex digits.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct FingerprintKey(pub [u8; 16]);

impl FingerprintKey {
    /// A fresh key from `getrandom(2)`.
    pub(crate) fn random() -> std::io::Result<FingerprintKey> {
        let mut key = [0u8; 16];
        let mut filled = 0;
        while let Some(rest) = key.get_mut(filled..).filter(|rest| !rest.is_empty()) {
            filled += rustix::rand::getrandom(rest, rustix::rand::GetRandomFlags::empty())?;
        }
        Ok(FingerprintKey(key))
    }

    /// The key as two 64-bit halves (little-endian), as keyed hashes take it.
    pub(crate) fn halves(&self) -> (u64, u64) {
        let [a0, a1, a2, a3, a4, a5, a6, a7, b0, b1, b2, b3, b4, b5, b6, b7] = self.0;
        (
            u64::from_le_bytes([a0, a1, a2, a3, a4, a5, a6, a7]),
            u64::from_le_bytes([b0, b1, b2, b3, b4, b5, b6, b7]),
        )
    }

    fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn from_hex(text: &str) -> Option<FingerprintKey> {
        if text.len() != 32 || !text.is_ascii() {
            return None;
        }
        let mut key = [0u8; 16];
        for (i, byte) in key.iter_mut().enumerate() {
            let digits = text.get(i * 2..i * 2 + 2)?;
            *byte = u8::from_str_radix(digits, 16).ok()?;
        }
        Some(FingerprintKey(key))
    }
}

impl fmt::Debug for FingerprintKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FingerprintKey({})", self.hex())
    }
}

impl Serialize for FingerprintKey {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.hex())
    }
}

impl<'de> Deserialize<'de> for FingerprintKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        FingerprintKey::from_hex(&text)
            .ok_or_else(|| serde::de::Error::custom("expected 32 hex digits"))
    }
}

/// [`ScopeMode`] as `"strict"` or `"lenient"` (the crawl's type has no
/// serde of its own).
mod scope_mode {
    use super::*;

    pub(super) fn serialize<S: Serializer>(mode: &ScopeMode, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(match mode {
            ScopeMode::Strict => "strict",
            ScopeMode::Lenient => "lenient",
        })
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ScopeMode, D::Error> {
        match String::deserialize(d)?.as_str() {
            "strict" => Ok(ScopeMode::Strict),
            "lenient" => Ok(ScopeMode::Lenient),
            other => Err(serde::de::Error::unknown_variant(
                other,
                &["strict", "lenient"],
            )),
        }
    }
}
