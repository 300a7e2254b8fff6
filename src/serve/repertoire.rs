//! `GET /repertoire/{name}`: a repertoire's report as the last `okb make` wrote it into
//! `build/repertoire-<name>/` beside the store (the manifest there names the
//! repertoires built): `gaps.json` with the coverage of `coverage.json` and the flags of
//! `flags.json`, plus `book`, every position of the repertoire with its moves (read
//! back from `repertoire.pgn`), so the explorer page can mark them. Read from the build
//! rather than the store so that editing a repertoire rebuilds only its own steps.

use std::collections::BTreeMap;
use std::path::Path;

use axum::body::Bytes;
use serde_json::{Value, json};

use crate::repertoire::{Repertoire, Side};
use crate::store::StoreError;

/// The repertoires' answers by name.
#[derive(Debug, Default)]
pub struct Repertoires {
    answers: BTreeMap<String, Bytes>,
}

fn corrupt(path: &Path, what: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("{}: {what}", path.display()))
}

fn read_json(path: &Path) -> Result<Value, StoreError> {
    let bytes = std::fs::read(path).map_err(|e| corrupt(path, e))?;
    serde_json::from_slice(&bytes).map_err(|e| corrupt(path, e))
}

/// The names of the repertoires the manifest at `manifest` lists a report of.
fn built(manifest: &Path) -> Result<Vec<String>, StoreError> {
    if !manifest.exists() {
        return Ok(Vec::new());
    }
    let value = read_json(manifest)?;
    let outputs = value["outputs"].as_array().cloned().unwrap_or_default();
    let mut names: Vec<String> = outputs
        .iter()
        .filter_map(|o| o["step"].as_str()?.strip_prefix("repertoire-report:").map(str::to_string))
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

/// Every position of `rep` with moves: its EPD and the moves in UCI.
fn book(rep: &Repertoire) -> Value {
    let rows: Vec<Value> = rep
        .nodes
        .iter()
        .filter(|n| !n.moves.is_empty())
        .map(|n| json!({"epd": n.epd, "moves": n.moves.iter().map(|m| &m.uci).collect::<Vec<_>>()}))
        .collect();
    Value::Array(rows)
}

/// One repertoire's answer from its folder `dir`.
fn answer(name: &str, dir: &Path) -> Result<Bytes, StoreError> {
    let mut v = read_json(&dir.join("gaps.json"))?;
    v["coverage"] = read_json(&dir.join("coverage.json"))?["coverage"].clone();
    let flags = read_json(&dir.join("flags.json"))?;
    v["engine"] = flags["engine"].clone();
    v["flags"] = flags["flags"].clone();
    let side = if v["color"] == "white" { Side::White } else { Side::Black };
    let pgn = dir.join("repertoire.pgn");
    let text = std::fs::read(&pgn).map_err(|e| corrupt(&pgn, e))?;
    let rep = crate::repertoire::parse::parse(
        name,
        side,
        &pgn.display().to_string(),
        &String::from_utf8_lossy(&text),
    )
    .map_err(|e| corrupt(&pgn, e))?;
    v["book"] = book(&rep);
    Ok(Bytes::from(serde_json::to_vec(&v).expect("JSON serializes")))
}

impl Repertoires {
    /// The repertoires built beside the store at `store` (none for a store without a
    /// manifest beside it, such as a copy or a PostgreSQL knowledge base).
    pub fn load(store: &Path) -> Result<Repertoires, StoreError> {
        let dir = store.parent().unwrap_or(Path::new("."));
        let mut answers = BTreeMap::new();
        for name in built(&dir.join("manifest.json"))? {
            let bytes = answer(&name, &dir.join(format!("repertoire-{name}")))?;
            answers.insert(name, bytes);
        }
        Ok(Repertoires { answers })
    }

    /// The answer of repertoire `name`.
    pub fn get(&self, name: &str) -> Option<Bytes> {
        self.answers.get(name).cloned()
    }

    /// Repertoire names, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.answers.keys().map(String::as_str).collect()
    }

    /// Every answer, in name order (what the server's `ETag` covers beside the store).
    pub fn bytes(&self) -> impl Iterator<Item = &Bytes> {
        self.answers.values()
    }
}
