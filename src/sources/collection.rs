//! A collection of many files pinned as one unit: a manifest file, committed beside
//! pipeline.toml and pinned there by its BLAKE3, that lists each file's URL, size and
//! BLAKE3 (tab-separated, a `url<TAB>bytes<TAB>blake3` header, `#` comments). Pinning the
//! manifest pins every byte of every file it names; each file is then resolved like any
//! pinned source (store, mirrors — compressed copies included — download).

use std::path::Path;

use crate::files::FileStates;
use crate::files::Hash;

use super::{Resolved, Resolver, SourceError, Wanted};

/// One file of a collection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Where to download it.
    pub url: String,
    /// Its size in bytes (as published; the hash is what is checked).
    pub size: u64,
    /// The BLAKE3 of its bytes.
    pub blake3: Hash,
}

impl Entry {
    /// The file's name: the last segment of its URL (`Carlsen.pgn`).
    pub fn file_name(&self) -> &str {
        let path = self.url.split(['?', '#']).next().unwrap_or_default();
        path.rsplit('/').next().unwrap_or(path)
    }
}

/// Why a collection's manifest cannot be used.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum ManifestError {
    /// A line is not `url<TAB>bytes<TAB>blake3`.
    #[error("{file}:{line}: {why}")]
    #[diagnostic(
        code(okb::source::collection),
        help("each line is `url<TAB>bytes<TAB>blake3` (64 lowercase hex digits)")
    )]
    Line {
        /// The manifest file.
        file: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        why: String,
    },
}

/// Reads a manifest's text (`file` names it in messages).
pub fn parse(text: &str, file: &str) -> Result<Vec<Entry>, ManifestError> {
    let mut entries = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() || line.starts_with('#') || line == "url\tbytes\tblake3" {
            continue;
        }
        let bad = |why: String| ManifestError::Line { file: file.into(), line: i + 1, why };
        let fields: Vec<&str> = line.split('\t').collect();
        let [url, size, blake3] = fields[..] else {
            return Err(bad(format!("{} fields, expected 3", fields.len())));
        };
        let size =
            size.parse().map_err(|_| bad(format!("size {size:?} is not a number of bytes")))?;
        if blake3.len() != 64
            || !blake3.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return Err(bad(format!("blake3 {blake3:?} is not 64 lowercase hex digits")));
        }
        if !url.contains("://") {
            return Err(bad(format!("url {url:?} has no scheme")));
        }
        entries.push(Entry { url: url.into(), size, blake3: blake3.into() });
    }
    Ok(entries)
}

/// The manifest at `path`, verified against `pin` and read.
pub fn read(
    name: &str,
    path: &Path,
    pin: &str,
    files: &mut FileStates,
) -> Result<Vec<Entry>, SourceError> {
    let io =
        |source| SourceError::Io { name: name.into(), path: path.display().to_string(), source };
    let actual = files.hash(path).map_err(io)?;
    if actual != pin {
        return Err(SourceError::Mismatch {
            name: name.into(),
            location: path.display().to_string(),
            expected: pin.into(),
            actual,
        });
    }
    let text = std::fs::read_to_string(path).map_err(io)?;
    parse(&text, &path.display().to_string())
        .map_err(|e| SourceError::Collection { name: name.into(), error: Box::new(e) })
}

impl Resolver {
    /// Every file of the collection `entries` of source `name`, in manifest order, each
    /// found and verified as a pinned source named `name:<file name>`.
    pub fn resolve_collection(
        &self,
        name: &str,
        entries: &[Entry],
        files: &mut FileStates,
    ) -> Result<Vec<(Entry, Resolved)>, SourceError> {
        let mut resolved = Vec::with_capacity(entries.len());
        for entry in entries {
            let member = format!("{name}:{}", entry.file_name());
            let wanted = Wanted {
                name: &member,
                blake3: Some(&entry.blake3),
                path: None,
                url: Some(&entry.url),
            };
            resolved.push((entry.clone(), self.resolve(&wanted, files)?));
        }
        Ok(resolved)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_header_and_comments() {
        let pin = "ab".repeat(32);
        let text =
            format!("# masters\nurl\tbytes\tblake3\nhttps://h/x/Carlsen.pgn\t12\t{pin}\r\n\n");
        let entries = parse(&text, "m.tsv").unwrap();
        assert_eq!(
            entries,
            vec![Entry { url: "https://h/x/Carlsen.pgn".into(), size: 12, blake3: pin }]
        );
        assert_eq!(entries[0].file_name(), "Carlsen.pgn");
    }

    #[test]
    fn a_bad_line_is_named() {
        let err = parse("https://h/a.pgn\t1\tABC\n", "m.tsv").unwrap_err().to_string();
        assert!(err.starts_with("m.tsv:1: blake3 \"ABC\""), "{err}");
        let err = parse("\nhttps://h/a.pgn 1\n", "m.tsv").unwrap_err().to_string();
        assert!(err.starts_with("m.tsv:2: 1 fields"), "{err}");
    }
}
