//! The library's sources as `tests/layers` reads them: its files and their
//! module paths, and every path each file names, resolved to the module
//! file it reaches. A small lexer blanks out comments and literals first,
//! so a path in a doc comment or a string is no import.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// One import: the file and line it is written at, and the module path it
/// reaches (the deepest module with a file of its own).
#[derive(Debug, Clone)]
pub struct Import {
    pub file: PathBuf,
    pub line: usize,
    pub target: Vec<String>,
    /// In a `#[cfg(test)]` item.
    pub in_test: bool,
}

/// The library's files, their modules and what they import.
pub struct Crate {
    /// Module path of every file (`src/a/b.rs` and `src/a/b/mod.rs` are `a::b`).
    modules: BTreeMap<PathBuf, Vec<String>>,
    /// The inverse.
    files: BTreeMap<Vec<String>, PathBuf>,
    /// The top-level modules.
    pub tops: BTreeSet<String>,
    pub imports: Vec<Import>,
}

impl Crate {
    pub fn read() -> Crate {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut paths = Vec::new();
        walk(&src, &mut paths);
        let mut modules = BTreeMap::new();
        for path in paths {
            let rel = path.strip_prefix(&src).expect("under src").to_path_buf();
            let mut module: Vec<String> = rel
                .with_extension("")
                .iter()
                .map(|c| c.to_string_lossy().into_owned())
                .collect();
            if module.last().is_some_and(|m| m == "mod") {
                module.pop();
            }
            if module == ["lib"] {
                continue;
            }
            modules.insert(Path::new("src").join(rel), module);
        }
        let files: BTreeMap<Vec<String>, PathBuf> = modules
            .iter()
            .map(|(f, m)| (m.clone(), f.clone()))
            .collect();
        let tops = modules
            .values()
            .filter_map(|m| m.first().cloned())
            .collect();
        let mut crate_ = Crate {
            modules,
            files,
            tops,
            imports: Vec::new(),
        };
        let root = src.parent().expect("the crate");
        let mut imports = Vec::new();
        for (file, module) in &crate_.modules {
            let text = clean(&fs::read_to_string(root.join(file)).expect("a source file"));
            let tests = test_blocks(&text);
            let children = declared_modules(&text);
            for (offset, path) in paths_in(&text, &children) {
                let Some(target) = crate_.resolve(module, &path) else {
                    continue;
                };
                imports.push(Import {
                    file: file.clone(),
                    line: text[..offset].matches('\n').count() + 1,
                    target,
                    in_test: tests.iter().any(|r| r.contains(&offset)),
                });
            }
        }
        crate_.imports = imports;
        crate_
    }

    pub fn module_of(&self, file: &Path) -> &[String] {
        self.modules.get(file).map(Vec::as_slice).unwrap_or(&[])
    }

    pub fn file_of(&self, module: &[String]) -> Option<&PathBuf> {
        self.files.get(module)
    }

    /// The deepest module with a file that `path` (written in `module`'s
    /// file) reaches; None for a path out of the crate.
    fn resolve(&self, module: &[String], path: &[String]) -> Option<Vec<String>> {
        let (mut base, rest): (Vec<String>, &[String]) = match path.first()?.as_str() {
            "crate" => (Vec::new(), &path[1..]),
            // `super` of `a/b.rs` and of `a/b/mod.rs` alike is `a`.
            "self" | "super" => {
                let mut base = module.to_vec();
                let mut i = 0;
                while i < path.len() && (path[i] == "super" || path[i] == "self") {
                    if path[i] == "super" {
                        base.pop()?;
                    }
                    i += 1;
                }
                (base, &path[i..])
            }
            _ => (module.to_vec(), path), // a child module of this file
        };
        for segment in rest {
            base.push(segment.clone());
            if !self.files.contains_key(&base) {
                base.pop();
                break;
            }
        }
        if base.is_empty() {
            None // the crate root itself (lib.rs's re-exports)
        } else {
            Some(base)
        }
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .expect("a source directory")
        .map(|e| e.expect("an entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `text` with comments, string and char literals blanked out (newlines
/// kept, so offsets keep their lines).
fn clean(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !chars
                .get(i.wrapping_sub(1))
                .is_some_and(|p| p.is_alphanumeric() || *p == '_')
        {
            // A raw string: r"…", r#"…"#, …
            let mut j = i + 1;
            while chars.get(j) == Some(&'#') {
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let hashes = j - i - 1;
            let mut k = j + 1;
            while k < chars.len() {
                if chars[k] == '"' && (0..hashes).all(|h| chars.get(k + 1 + h) == Some(&'#')) {
                    k += 1 + hashes;
                    break;
                }
                k += 1;
            }
            for &ch in &chars[i..k.min(chars.len())] {
                out.push(blank(ch));
            }
            i = k;
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < chars.len() {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}'), or a lifetime ('a).
            let end = if next == Some('\\') {
                (i + 2..chars.len()).find(|&k| chars[k] == '\'')
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    for &ch in &chars[i..=end] {
                        out.push(blank(ch));
                    }
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The byte ranges of `#[cfg(test)]` items (a test module, a test-only
/// function) in cleaned text.
fn test_blocks(text: &str) -> Vec<std::ops::Range<usize>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find("#[cfg(test)]") {
        let start = from + at;
        // The item runs to its matching brace (or its `;`).
        let mut depth = 0usize;
        let mut end = bytes.len();
        for (k, &b) in bytes.iter().enumerate().skip(start + "#[cfg(test)]".len()) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = k + 1;
                        break;
                    }
                }
                b';' if depth == 0 => {
                    end = k + 1;
                    break;
                }
                _ => {}
            }
        }
        out.push(start..end);
        from = end.max(start + 1);
    }
    out
}

/// The modules a file declares with `mod name;` (its children).
fn declared_modules(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(i) = words.iter().position(|w| *w == "mod") else {
            continue;
        };
        if let Some(name) = words.get(i + 1).and_then(|w| w.strip_suffix(';')) {
            if words[..i].iter().all(|w| w.starts_with("pub")) {
                out.push(name.to_string());
            }
        }
    }
    out
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Every path in `text` that starts at `crate`, `super`, `self` or one of
/// the file's `children`, with the offset it starts at; a group
/// (`a::{b, c::d}`) gives one path per member.
fn paths_in(text: &str, children: &[String]) -> Vec<(usize, Vec<String>)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !is_ident(bytes[i]) || (i > 0 && (is_ident(bytes[i - 1]) || bytes[i - 1] == b':')) {
            i += 1;
            continue;
        }
        let end = (i..bytes.len())
            .find(|&k| !is_ident(bytes[k]))
            .unwrap_or(bytes.len());
        let word = &text[i..end];
        let starts =
            matches!(word, "crate" | "super" | "self") || children.iter().any(|c| c == word);
        if starts && text[end..].starts_with("::") {
            let mut paths = Vec::new();
            let stop = parse_path(text, i, Vec::new(), &mut paths);
            for path in paths {
                out.push((i, path));
            }
            i = stop;
        } else {
            i = end;
        }
    }
    out
}

/// Reads the path at `at` (after `prefix`) into `out`; returns where it ends.
fn parse_path(text: &str, mut at: usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    let bytes = text.as_bytes();
    let skip_space = |mut k: usize| {
        while k < bytes.len() && bytes[k].is_ascii_whitespace() {
            k += 1;
        }
        k
    };
    let mut path = prefix;
    loop {
        at = skip_space(at);
        if at < bytes.len() && bytes[at] == b'{' {
            at += 1;
            loop {
                at = skip_space(at);
                if at >= bytes.len() || bytes[at] == b'}' {
                    at += 1;
                    break;
                }
                if bytes[at] == b',' {
                    at += 1;
                    continue;
                }
                at = parse_path(text, at, path.clone(), out);
            }
            return at;
        }
        let end = (at..bytes.len())
            .find(|&k| !is_ident(bytes[k]))
            .unwrap_or(bytes.len());
        if end == at {
            // `*` or something else: the path so far.
            out.push(path);
            return at + 1;
        }
        let word = &text[at..end];
        // `self` in a group (`a::{self, b}`) is the group's own path.
        if word != "self" || path.is_empty() {
            path.push(word.to_string());
        }
        at = end;
        if text[at..].starts_with("::") {
            at += 2;
        } else {
            out.push(path);
            return at;
        }
    }
}
