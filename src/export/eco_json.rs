//! eco.json-compatible files: `ecoA.json` … `ecoE.json` (named entries keyed by FEN),
//! `eco_interpolated.json`, and `fromTo.json` (`[from_fen, to_fen, from_src, to_src]`).

use std::collections::BTreeMap;

use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};

use super::ExportFile;
use crate::eco::{EcoEntry, EcoSkeleton};

/// One entry as eco.json writes it (absent fields are left out, not null).
#[derive(Serialize)]
struct EntryJson<'a> {
    src: &'a str,
    eco: &'a str,
    moves: &'a str,
    name: &'a str,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    aliases: &'a BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    scid: Option<&'a str>,
    #[serde(rename = "isEcoRoot", skip_serializing_if = "std::ops::Not::not")]
    is_eco_root: bool,
}

impl<'a> From<&'a EcoEntry> for EntryJson<'a> {
    fn from(e: &'a EcoEntry) -> Self {
        EntryJson {
            src: &e.src,
            eco: &e.eco,
            moves: &e.movetext,
            name: &e.name,
            aliases: &e.aliases,
            scid: e.scid.as_deref(),
            is_eco_root: e.is_eco_root,
        }
    }
}

/// A JSON object of entries keyed by FEN, in the given order, serialized as it is
/// iterated (no intermediate map).
struct EntriesByFen<'a>(Vec<&'a EcoEntry>);

impl Serialize for EntriesByFen<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for e in &self.0 {
            map.serialize_entry(&e.fen, &EntryJson::from(*e))?;
        }
        map.end()
    }
}

/// `fromTo.json`: `[from_fen, to_fen, from_src, to_src]` per consecutive pair.
struct FromTo<'a>(&'a EcoSkeleton);

impl Serialize for FromTo<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let skeleton = self.0;
        let mut seq = serializer.serialize_seq(Some(skeleton.from_to.len()))?;
        for &(from, to) in &skeleton.from_to {
            let (a, b) = (&skeleton.entries[from as usize], &skeleton.entries[to as usize]);
            seq.serialize_element(&[&a.fen, &b.fen, &a.src, &b.src])?;
        }
        seq.end()
    }
}

/// Serializes `value` into a buffer of `capacity` bytes (an estimate of the output: a
/// buffer grown by doubling copies and faults in megabytes of memory twice).
fn render(value: &impl Serialize, pretty: bool, capacity: usize) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(capacity);
    if pretty {
        serde_json::to_writer_pretty(&mut bytes, value)
    } else {
        serde_json::to_writer(&mut bytes, value)
    }
    .expect("eco.json values serialize");
    bytes.push(b'\n');
    bytes
}

/// About the size of `entries` written by [`EntriesByFen`] (pretty).
fn entries_size(entries: &[&EcoEntry]) -> usize {
    let aliases =
        |e: &EcoEntry| e.aliases.iter().map(|(k, v)| k.len() + v.len() + 16).sum::<usize>();
    entries.iter().map(|e| e.fen.len() + e.movetext.len() + e.name.len() + aliases(e) + 120).sum()
}

/// Renders the skeleton as eco.json files. Keys are full FENs; entries are ordered by
/// ECO code, then line, so diffs between builds stay readable.
pub fn render_all(skeleton: &EcoSkeleton, pretty: bool) -> Vec<ExportFile> {
    let mut ordered: Vec<&EcoEntry> = skeleton.entries.iter().collect();
    // Unstable is enough: the identity (`epd`) makes every key distinct.
    ordered.sort_unstable_by(|a, b| {
        (&a.eco, a.moves.len(), &a.movetext, &a.epd).cmp(&(
            &b.eco,
            b.moves.len(),
            &b.movetext,
            &b.epd,
        ))
    });
    let by_fen = |entries: Vec<&EcoEntry>| {
        let capacity = entries_size(&entries);
        render(&EntriesByFen(entries), pretty, capacity)
    };
    let mut files = Vec::new();
    for letter in ['A', 'B', 'C', 'D', 'E'] {
        let named = ordered
            .iter()
            .copied()
            .filter(|e| e.src != "interpolated" && e.eco.starts_with(letter))
            .collect();
        files.push(ExportFile { name: format!("eco{letter}.json"), bytes: by_fen(named) });
    }
    let interpolated = ordered.iter().copied().filter(|e| e.src == "interpolated").collect();
    files.push(ExportFile { name: "eco_interpolated.json".into(), bytes: by_fen(interpolated) });
    let from_to_size = skeleton
        .from_to
        .iter()
        .map(|&(a, b)| {
            let (a, b) = (&skeleton.entries[a as usize], &skeleton.entries[b as usize]);
            a.fen.len() + b.fen.len() + a.src.len() + b.src.len() + 48
        })
        .sum();
    files.push(ExportFile {
        name: "fromTo.json".into(),
        bytes: render(&FromTo(skeleton), pretty, from_to_size),
    });
    files
}
