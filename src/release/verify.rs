//! Checking files against a manifest: each output's bytes on disk against the BLAKE3 and
//! size the manifest records.

use std::path::Path;

use serde::Serialize;

use super::manifest::{Manifest, OutputFile};

/// How one listed file compares.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "state")]
pub enum FileState {
    /// Same bytes.
    Same,
    /// Different bytes.
    Modified {
        /// What the file hashes to now.
        now_blake3: String,
        /// Its size now.
        now_bytes: u64,
    },
    /// Not there (or unreadable).
    Missing,
}

/// One file's verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Checked {
    /// The file as the manifest lists it.
    #[serde(flatten)]
    pub file: OutputFile,
    /// How it compares.
    #[serde(flatten)]
    pub state: FileState,
}

/// Compares every output (and the store) the manifest lists with the files under `root`.
pub fn check_files(manifest: &Manifest, root: &Path) -> Vec<Checked> {
    manifest
        .outputs
        .iter()
        .chain(manifest.store.iter())
        .map(|file| {
            let state = match OutputFile::read(root, &file.path, &file.step) {
                Ok(now) if now.blake3 == file.blake3 => FileState::Same,
                Ok(now) => FileState::Modified { now_blake3: now.blake3, now_bytes: now.bytes },
                Err(_) => FileState::Missing,
            };
            Checked { file: file.clone(), state }
        })
        .collect()
}

/// The fields in which two manifests differ, as `path: old → new` lines (for a rebuild
/// that does not reproduce a manifest, or a pipeline changed since it).
pub fn differences(expected: &Manifest, actual: &Manifest) -> Vec<String> {
    let keyed = |m: &Manifest| {
        let mut v = serde_json::to_value(m).unwrap_or_default();
        // Lists of files compare by path: an added file is one difference, not a shift.
        for list in ["outputs", "game_files"] {
            if let Some(serde_json::Value::Array(items)) = v.get_mut(list).map(std::mem::take) {
                let by_path = items.into_iter().map(|mut item| {
                    let path =
                        item.get("path").and_then(|p| p.as_str()).unwrap_or_default().to_string();
                    if let Some(o) = item.as_object_mut() {
                        o.remove("path");
                    }
                    (path, item)
                });
                v[list] = serde_json::Value::Object(by_path.collect());
            }
        }
        v
    };
    let (a, b) = (keyed(expected), keyed(actual));
    let mut out = Vec::new();
    diff_values("", &a, &b, &mut out);
    out
}

fn diff_values(at: &str, a: &serde_json::Value, b: &serde_json::Value, out: &mut Vec<String>) {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let path = if at.is_empty() { key.clone() } else { format!("{at}.{key}") };
                diff_values(
                    &path,
                    x.get(key).unwrap_or(&Value::Null),
                    y.get(key).unwrap_or(&Value::Null),
                    out,
                );
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                diff_values(&format!("{at}[{i}]"), p, q, out);
            }
        }
        _ if a != b => out.push(format!("{at}: {a} → {b}")),
        _ => {}
    }
}
