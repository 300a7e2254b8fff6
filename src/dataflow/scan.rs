//! Which source files a Rust source file uses: the input of code fingerprints.
//!
//! `fingerprints.rs` (the library's build script) runs this over `src/` (it includes this file with `#[path]`, so it must
//! depend on `std` only) and writes, for every file, its content hash and the files it
//! uses; [`super::code`] turns that into one fingerprint per step rule. A file *uses*:
//! - the module file of every `crate::a::b` path it names (the longest prefix that is a
//!   file: `src/a/b.rs`, `src/a/b/mod.rs`, `src/a.rs`, …), `self::` and `super::` paths
//!   resolved from its own module, and in a module with children, each child it names
//!   (`merge::run`, `pub use merge::X`);
//! - every file it `include_str!`s or `include_bytes!`s.
//!
//! Comments, strings and char literals are skipped, so a path in a doc comment or a
//! message does not count. Over-counting is safe (a step reruns when it did not need to);
//! under-counting is what must not happen, so the rules lean to counting.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The module path of a file under `src/`: `src/eco/merge.rs` → `["eco", "merge"]`,
/// `src/eco/mod.rs` → `["eco"]`, `src/lib.rs` → `[]`.
pub fn module_of(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> =
        relative.iter().skip(1).map(|p| p.to_string_lossy().into_owned()).collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs");
        if stem != "mod" && stem != "lib" && stem != "main" {
            parts.push(stem.to_string());
        }
    }
    parts
}

/// Rust source reduced to its tokens of interest: identifiers, `::`, braces, commas,
/// and `include_str!("…")` arguments (returned apart).
fn tokens(text: &str) -> (Vec<String>, Vec<String>) {
    let bytes = text.as_bytes();
    let (mut out, mut includes) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && bytes.get(i + 1) == Some(&b'*') {
            i = skip_block_comment(bytes, i);
        } else if c == b'"'
            || (c == b'r' && matches!(bytes.get(i + 1), Some(b'"' | b'#')))
            || (c == b'b' && bytes.get(i + 1) == Some(&b'"'))
        {
            let (end, literal) = skip_string(bytes, i);
            let macro_before =
                out.len().checked_sub(2).and_then(|i| out.get(i)).map(String::as_str);
            if out.last().map(String::as_str) == Some("(")
                && matches!(macro_before, Some("include_str!" | "include_bytes!"))
            {
                includes.push(literal);
            }
            i = end;
        } else if c == b'\'' {
            i = skip_char_or_lifetime(bytes, i);
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let mut word = text[start..i].to_string();
            if bytes.get(i) == Some(&b'!') {
                word.push('!');
                i += 1;
            }
            out.push(word);
        } else if c == b':' && bytes.get(i + 1) == Some(&b':') {
            out.push("::".into());
            i += 2;
        } else {
            if matches!(c, b'{' | b'}' | b',' | b';' | b'(') {
                out.push((c as char).to_string());
            }
            i += 1;
        }
    }
    (out, includes)
}

fn skip_block_comment(bytes: &[u8], mut i: usize) -> usize {
    let mut depth = 0;
    while i < bytes.len() {
        if bytes[i] == b'/' && bytes.get(i + 1) == Some(&b'*') {
            depth += 1;
            i += 2;
        } else if bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    i
}

/// Skips a string literal (plain, byte or raw) starting at `i`; returns the index after
/// it and its text (escapes kept as written).
fn skip_string(bytes: &[u8], mut i: usize) -> (usize, String) {
    if bytes[i] == b'b' {
        i += 1;
    }
    if bytes[i] == b'r' {
        i += 1;
        let hashes = bytes[i..].iter().take_while(|&&b| b == b'#').count();
        i += hashes + 1;
        let start = i;
        while i < bytes.len() {
            if bytes[i] == b'"'
                && bytes[i + 1..].iter().take(hashes).filter(|&&b| b == b'#').count() == hashes
            {
                let text = String::from_utf8_lossy(&bytes[start..i]).into_owned();
                return (i + 1 + hashes, text);
            }
            i += 1;
        }
        return (i, String::new());
    }
    i += 1;
    let start = i;
    while i < bytes.len() && bytes[i] != b'"' {
        i += if bytes[i] == b'\\' { 2 } else { 1 };
    }
    let end = i.min(bytes.len());
    (end + 1, String::from_utf8_lossy(&bytes[start..end]).into_owned())
}

/// Skips `'x'`, `'\n'`, `'\u{..}'`, or a lifetime `'a` (which has no closing quote).
fn skip_char_or_lifetime(bytes: &[u8], i: usize) -> usize {
    if bytes.get(i + 1) == Some(&b'\\') {
        let mut j = i + 2;
        while j < bytes.len() && bytes[j] != b'\'' {
            j += 1;
        }
        return j + 1;
    }
    if bytes.get(i + 2) == Some(&b'\'') {
        return i + 3;
    }
    // A multi-byte char literal such as '×', or a lifetime.
    let rest = std::str::from_utf8(&bytes[i + 1..]).ok().and_then(|s| s.chars().next());
    if let Some(ch) = rest {
        let after = i + 1 + ch.len_utf8();
        if bytes.get(after) == Some(&b'\'') {
            return after + 1;
        }
    }
    i + 1
}

/// The module paths named by `use` trees and expressions in `tokens` that start at
/// `crate::`, `self::` or `super::`, resolved to absolute module paths.
fn named_paths(tokens: &[String], module: &[String]) -> Vec<Vec<String>> {
    let is = |i: usize, word: &str| tokens.get(i).map(String::as_str) == Some(word);
    let mut found = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let mut base = match tokens[i].as_str() {
            "crate" | "self" | "super" if is(i + 1, "::") && (i == 0 || !is(i - 1, "::")) => {
                module.to_vec()
            }
            _ => {
                i += 1;
                continue;
            }
        };
        if tokens[i] == "crate" {
            base.clear();
            i += 2;
        } else if tokens[i] == "self" {
            i += 2;
        } else {
            while is(i, "super") && is(i + 1, "::") {
                base.pop();
                i += 2;
            }
        }
        found.push(base.clone());
        i = use_tree(tokens, i, &base, &mut found).max(i);
    }
    found
}

/// Reads a path or `{…}` group starting at `i` under `prefix`, pushing every prefix it
/// names; returns the index after it.
fn use_tree(
    tokens: &[String],
    mut i: usize,
    prefix: &[String],
    found: &mut Vec<Vec<String>>,
) -> usize {
    let mut path = prefix.to_vec();
    loop {
        match tokens.get(i).map(String::as_str) {
            Some("{") => {
                i += 1;
                loop {
                    match tokens.get(i).map(String::as_str) {
                        Some("}") | None => return i + 1,
                        Some(",") => i += 1,
                        _ => i = use_tree(tokens, i, &path, found),
                    }
                }
            }
            Some(word)
                if word.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
                    && word != "self" =>
            {
                path.push(word.to_string());
                found.push(path.clone());
                if tokens.get(i + 1).map(String::as_str) == Some("::") {
                    i += 2;
                } else {
                    return i + 1;
                }
            }
            Some("self") => return i + 1,
            _ => return i,
        }
    }
}

/// The files a source file uses (see the module docs), as paths relative to the crate
/// root, given the set of all source files.
pub fn uses(relative: &Path, text: &str, files: &BTreeSet<PathBuf>) -> BTreeSet<PathBuf> {
    let module = module_of(relative);
    let name = relative.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let is_mod_file = matches!(name, "mod.rs" | "lib.rs" | "main.rs");
    let (tokens, includes) = tokens(text);
    let tokens = without_test_modules(tokens);
    let mut paths = named_paths(&tokens, &module);
    if is_mod_file || has_children(relative, files) {
        // Children named by a bare path (`merge::run`) from their parent.
        for (i, t) in tokens.iter().enumerate() {
            if tokens.get(i + 1).map(String::as_str) == Some("::")
                && (i == 0 || tokens[i - 1] != "::")
            {
                let mut child = module.clone();
                child.push(t.clone());
                paths.push(child);
            }
        }
    }
    let mut out = BTreeSet::new();
    for path in paths {
        if let Some(file) = module_file(&path, files) {
            out.insert(file);
        }
    }
    let dir = relative.parent().unwrap_or(Path::new(""));
    for include in includes {
        out.insert(normalize(&dir.join(include)));
    }
    out.remove(relative);
    out
}

/// The tokens without `#[cfg(test)] mod name { … }` blocks: tests compute no step's output.
fn without_test_modules(tokens: Vec<String>) -> Vec<String> {
    let mut out = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        let at = |k: usize, word: &str| tokens.get(i + k).map(String::as_str) == Some(word);
        if at(0, "cfg") && at(1, "(") && at(2, "test") && at(3, "mod") && at(5, "{") {
            let mut depth = 0;
            i += 5;
            while i < tokens.len() {
                match tokens[i].as_str() {
                    "{" => depth += 1,
                    "}" => depth -= 1,
                    _ => {}
                }
                i += 1;
                if depth == 0 {
                    break;
                }
            }
            continue;
        }
        out.push(tokens[i].clone());
        i += 1;
    }
    out
}

/// Whether `src/a/b.rs` has a folder of children `src/a/b/`.
fn has_children(relative: &Path, files: &BTreeSet<PathBuf>) -> bool {
    let dir = relative.with_extension("");
    files.iter().any(|f| f.starts_with(&dir) && f != relative)
}

/// The file of the longest prefix of `path` that is a module.
fn module_file(path: &[String], files: &BTreeSet<PathBuf>) -> Option<PathBuf> {
    for len in (1..=path.len()).rev() {
        let base: PathBuf =
            std::iter::once("src".to_string()).chain(path[..len].iter().cloned()).collect();
        for candidate in [base.with_extension("rs"), base.join("mod.rs")] {
            if files.contains(&candidate) {
                return Some(candidate);
            }
        }
    }
    None
}

/// `src/a/../b` → `src/b`, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}
