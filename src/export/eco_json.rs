//! eco.json-compatible files: `ecoA.json` … `ecoE.json` (named entries keyed by FEN),
//! `eco_interpolated.json`, and `fromTo.json` (`[from_fen, to_fen, from_src, to_src]`).

use serde_json::{Map, Value, json};

use super::ExportFile;
use crate::eco::{EcoEntry, EcoSkeleton};

fn entry_json(e: &EcoEntry) -> Value {
    let mut v = Map::new();
    v.insert("src".into(), json!(e.src));
    v.insert("eco".into(), json!(e.eco));
    v.insert("moves".into(), json!(e.movetext));
    v.insert("name".into(), json!(e.name));
    if !e.aliases.is_empty() {
        v.insert("aliases".into(), json!(e.aliases));
    }
    if let Some(scid) = &e.scid {
        v.insert("scid".into(), json!(scid));
    }
    if e.is_eco_root {
        v.insert("isEcoRoot".into(), json!(true));
    }
    Value::Object(v)
}

fn render(value: &Value, pretty: bool) -> Vec<u8> {
    let mut bytes = if pretty { serde_json::to_vec_pretty(value) } else { serde_json::to_vec(value) }
        .expect("JSON values serialize");
    bytes.push(b'\n');
    bytes
}

/// Renders the skeleton as eco.json files. Keys are full FENs; entries are ordered by
/// ECO code, then line, so diffs between builds stay readable.
pub fn render_all(skeleton: &EcoSkeleton, pretty: bool) -> Vec<ExportFile> {
    let mut ordered: Vec<&EcoEntry> = skeleton.entries.iter().collect();
    ordered.sort_by(|a, b| (&a.eco, a.moves.len(), &a.movetext, &a.epd).cmp(&(&b.eco, b.moves.len(), &b.movetext, &b.epd)));
    let mut files = Vec::new();
    for letter in ['A', 'B', 'C', 'D', 'E'] {
        let mut map = Map::new();
        for e in ordered.iter().filter(|e| e.src != "interpolated" && e.eco.starts_with(letter)) {
            map.insert(e.fen.clone(), entry_json(e));
        }
        files.push(ExportFile { name: format!("eco{letter}.json"), bytes: render(&Value::Object(map), pretty) });
    }
    let mut interpolated = Map::new();
    for e in ordered.iter().filter(|e| e.src == "interpolated") {
        interpolated.insert(e.fen.clone(), entry_json(e));
    }
    files.push(ExportFile { name: "eco_interpolated.json".into(), bytes: render(&Value::Object(interpolated), pretty) });
    let from_to: Vec<Value> = skeleton
        .from_to
        .iter()
        .map(|&(from, to)| {
            let (a, b) = (&skeleton.entries[from as usize], &skeleton.entries[to as usize]);
            json!([a.fen, b.fen, a.src, b.src])
        })
        .collect();
    files.push(ExportFile { name: "fromTo.json".into(), bytes: render(&Value::Array(from_to), pretty) });
    files
}
