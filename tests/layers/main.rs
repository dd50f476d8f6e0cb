//! The crate's layers point one way (docs/architecture.md, "Layers"):
//!
//! ```text
//! api, bench_hooks  >  crawl  >  net, output, state, cluster, config  >  web, job, keys, sync, process, defaults
//! ```
//!
//! Read from the sources alone (no build, no tool): every path a file of
//! the library names (`crate::a::…`, `super::…`, `self::…`, a child
//! module's `name::…`, grouped `{…}` uses included) is resolved to the
//! module file it reaches, and
//!
//! - an import between two top-level modules must point down the table
//!   above, or sideways within the middle row; a leaf imports no other
//!   module of the crate;
//! - the top-level modules import each other in no circle;
//! - no two files import each other in a circle, apart from a file's own
//!   children naming their parent (`super::…`, how a Rust module's files
//!   share it), and apart from test code.
//!
//! A failure names the file and line of every import against the rule.
//! `src/lib.rs` (the root that re-exports the public API) is above every
//! layer. The binary is a crate of its own (`cli/`), above the library.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "a test's helpers may panic too (clippy.toml allows it only in #[test] functions); the workspace's panic-free lints are for what servers send"
)]

mod source;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use source::Crate;

/// The layers, top first. An import may point from a row to any lower
/// row; within the middle row it may point sideways (no circle); a leaf
/// imports nothing of the crate.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "the public face (and the benchmarks' hooks, beside it)",
        &["api", "bench_hooks"],
    ),
    ("the engine", &["crawl"]),
    (
        "one job each: an exchange, what a crawl leaves, resume, many machines, the settings",
        &["net", "output", "state", "cluster", "config"],
    ),
    (
        "leaves: the vocabulary every layer shares",
        &["web", "job", "keys", "sync", "process", "defaults"],
    ),
];

/// The row of a top-level module in [`LAYERS`].
fn row(module: &str) -> Option<usize> {
    LAYERS
        .iter()
        .position(|(_, modules)| modules.contains(&module))
}

/// The leaves' row.
const LEAVES: usize = 3;
/// The row whose modules may import each other (without a circle).
const SIDEWAYS: usize = 2;

#[test]
fn imports_point_down_the_layers() {
    let crate_ = Crate::read();
    let mut wrong = Vec::new();
    for import in &crate_.imports {
        let from = crate_.module_of(&import.file);
        let (Some(a), Some(b)) = (from.first(), import.target.first()) else {
            continue;
        };
        if a == b {
            continue;
        }
        let (Some(ra), Some(rb)) = (row(a), row(b)) else {
            continue; // checked by every_module_has_a_layer
        };
        let fine = if ra == LEAVES {
            false
        } else {
            rb > ra || (ra == rb && ra == SIDEWAYS)
        };
        if !fine {
            wrong.push(format!(
                "{}:{}: `{a}` ({}) imports `{}` ({})",
                import.file.display(),
                import.line,
                LAYERS[ra].0,
                import.target.join("::"),
                LAYERS[rb].0,
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layers ({}):\n{}",
        layers_line(),
        wrong.join("\n")
    );
}

#[test]
fn every_module_has_a_layer() {
    let crate_ = Crate::read();
    let missing: Vec<&String> = crate_.tops.iter().filter(|m| row(m).is_none()).collect();
    assert!(
        missing.is_empty(),
        "top-level modules with no row in LAYERS (tests/layers/main.rs): {missing:?}"
    );
}

#[test]
fn top_level_modules_import_in_no_circle() {
    let crate_ = Crate::read();
    let mut graph = Graph::new();
    for import in &crate_.imports {
        let from = crate_.module_of(&import.file);
        if let (Some(a), Some(b)) = (from.first(), import.target.first()) {
            if a != b {
                graph
                    .entry(a.clone())
                    .or_default()
                    .entry(b.clone())
                    .or_insert((import.file.clone(), import.line));
            }
        }
    }
    let found = circles(&graph);
    assert!(
        found.is_empty(),
        "top-level modules in a circle:\n{}",
        describe(&found, &graph)
    );
}

#[test]
fn files_import_in_no_circle() {
    let crate_ = Crate::read();
    let mut graph = Graph::new();
    for import in crate_.imports.iter().filter(|i| !i.in_test) {
        let Some(to) = crate_.file_of(&import.target) else {
            continue;
        };
        if *to == import.file || is_test_file(&import.file) {
            continue;
        }
        // A child naming its parent (or an ancestor's) module file: one
        // module's files sharing it.
        let from_module = crate_.module_of(&import.file);
        if from_module.starts_with(&import.target) {
            continue;
        }
        graph
            .entry(import.file.display().to_string())
            .or_default()
            .entry(to.display().to_string())
            .or_insert((import.file.clone(), import.line));
    }
    let found = circles(&graph);
    assert!(
        found.is_empty(),
        "files in a circle:\n{}",
        describe(&found, &graph)
    );
}

fn layers_line() -> String {
    LAYERS
        .iter()
        .map(|(_, modules)| modules.join(", "))
        .collect::<Vec<_>>()
        .join("  >  ")
}

fn is_test_file(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == "tests.rs") || path.iter().any(|c| c == "tests")
}

type Graph = BTreeMap<String, BTreeMap<String, (PathBuf, usize)>>;

/// The graph's circles: its strongly connected components of more than
/// one node (Tarjan's algorithm).
fn circles(graph: &Graph) -> Vec<Vec<String>> {
    struct Walk<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        found: Vec<Vec<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, node: &'g str) {
            let i = self.index.len();
            self.index.insert(node, i);
            self.low.insert(node, i);
            self.stack.push(node);
            self.on_stack.insert(node);
            let graph = self.graph;
            for next in graph.get(node).into_iter().flat_map(|m| m.keys()) {
                let next = next.as_str();
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[node].min(self.low[next]);
                    self.low.insert(node, low);
                } else if self.on_stack.contains(next) {
                    let low = self.low[node].min(self.index[next]);
                    self.low.insert(node, low);
                }
            }
            if self.low[node] == self.index[node] {
                let mut component = Vec::new();
                while let Some(top) = self.stack.pop() {
                    self.on_stack.remove(top);
                    component.push(top.to_string());
                    if top == node {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !walk.index.contains_key(node.as_str()) {
            walk.visit(node);
        }
    }
    walk.found
}

/// Every circle with the imports that tie it, one a line.
fn describe(circles: &[Vec<String>], graph: &Graph) -> String {
    let mut lines = Vec::new();
    for (n, circle) in circles.iter().enumerate() {
        lines.push(format!("circle {}:", n + 1));
        for a in circle {
            for (b, (file, line)) in graph.get(a).into_iter().flatten() {
                if circle.contains(b) {
                    lines.push(format!("  {a} -> {b} ({}:{line})", file.display()));
                }
            }
        }
    }
    lines.join("\n")
}
