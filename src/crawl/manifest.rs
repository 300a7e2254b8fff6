//! A finished crawl: its parameters and, per position asked about, the request and the
//! BLAKE3 of the answer, sorted by request. Its canonical bytes (compact JSON, one
//! position per line) are what the pin hashes, so the same answers to the same
//! questions always give the same pin, whichever server or mirror they came from.

use serde::{Deserialize, Serialize};

use super::CrawlParams;
use crate::files::Hash;

/// The manifest format's version.
pub const FORMAT: u32 = 1;

/// One position asked about.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The position (FEN with counters `0 1`).
    pub fen: String,
    /// The fewest plies from the start position to it in the crawl.
    pub ply: u16,
    /// The request (path and query).
    pub request: String,
    /// The answer's BLAKE3.
    pub answer: Hash,
}

/// A finished crawl.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`FORMAT`].
    pub okb_crawl: u32,
    /// What was crawled.
    pub params: CrawlParams,
    /// The positions, sorted by request.
    pub positions: Vec<Entry>,
}

impl Manifest {
    /// The manifest of `positions` (in any order).
    pub fn new(params: CrawlParams, mut positions: Vec<Entry>) -> Manifest {
        positions.sort_by(|a, b| a.request.cmp(&b.request));
        Manifest { okb_crawl: FORMAT, params, positions }
    }

    /// The index of the crawl's root: the shallowest position asked about.
    pub fn root_index(&self) -> Option<usize> {
        self.positions.iter().enumerate().min_by_key(|(_, e)| e.ply).map(|(i, _)| i)
    }

    /// The canonical bytes: one position per line, so two manifests diff well as text too.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = format!(
            "{{\"okb_crawl\":{},\"params\":{},\"positions\":[",
            self.okb_crawl,
            json(&self.params)
        );
        for (i, entry) in self.positions.iter().enumerate() {
            out.push_str(if i == 0 { "\n" } else { ",\n" });
            out.push_str(&json(entry));
        }
        out.push_str("\n]}\n");
        out.into_bytes()
    }

    /// Reads manifest bytes.
    pub fn parse(bytes: &[u8]) -> Result<Manifest, String> {
        let manifest: Manifest =
            serde_json::from_slice(bytes).map_err(|e| format!("not a crawl manifest: {e}"))?;
        if manifest.okb_crawl != FORMAT {
            return Err(format!(
                "crawl manifest format {} (this okb reads format {FORMAT})",
                manifest.okb_crawl
            ));
        }
        Ok(manifest)
    }
}

/// A value as compact JSON.
fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("manifest values serialize")
}

/// What changed between two crawls of the same source.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CrawlDiff {
    /// Positions only the new crawl asked about.
    pub added: Vec<String>,
    /// Positions only the old crawl asked about.
    pub removed: Vec<String>,
    /// Positions in both whose games changed: (FEN, old games, new games), largest change
    /// first.
    pub changed: Vec<(String, u64, u64)>,
    /// Positions in both with the same answer.
    pub same: usize,
}

/// Compares two crawls; `games` gives a position's game count from an answer's hash.
pub fn diff(old: &Manifest, new: &Manifest, games: impl Fn(&str) -> Option<u64>) -> CrawlDiff {
    use std::collections::BTreeMap;
    let by_fen = |m: &Manifest| {
        m.positions.iter().map(|e| (e.fen.clone(), e.answer.clone())).collect::<BTreeMap<_, _>>()
    };
    let (old, new) = (by_fen(old), by_fen(new));
    let mut out = CrawlDiff::default();
    for (fen, answer) in &new {
        match old.get(fen) {
            None => out.added.push(fen.clone()),
            Some(before) if before == answer => out.same += 1,
            Some(before) => {
                let (a, b) = (games(before).unwrap_or(0), games(answer).unwrap_or(0));
                out.changed.push((fen.clone(), a, b));
            }
        }
    }
    out.removed = old.keys().filter(|fen| !new.contains_key(*fen)).cloned().collect();
    out.changed.sort_by_key(|(fen, a, b)| (std::cmp::Reverse(a.abs_diff(*b)), fen.clone()));
    out
}

impl CrawlDiff {
    /// A few lines for people: counts, then the largest changes.
    pub fn render(&self, limit: usize) -> String {
        let mut out = format!(
            "{} positions added, {} removed, {} with other counts, {} unchanged\n",
            self.added.len(),
            self.removed.len(),
            self.changed.len(),
            self.same
        );
        for (fen, a, b) in self.changed.iter().take(limit) {
            out.push_str(&format!(
                "  {:>+10} games  {a:>10} → {b:<10} {fen}\n",
                *b as i128 - *a as i128
            ));
        }
        for fen in self.added.iter().take(limit) {
            out.push_str(&format!("  added    {fen}\n"));
        }
        for fen in self.removed.iter().take(limit) {
            out.push_str(&format!("  removed  {fen}\n"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crawl::Database;

    fn params() -> CrawlParams {
        CrawlParams {
            database: Database::Masters,
            root: String::new(),
            max_ply: 2,
            min_games: 1,
            moves: 12,
            speeds: vec![],
            ratings: vec![],
            since: None,
            until: None,
        }
    }

    fn entry(fen: &str, answer: &str) -> Entry {
        Entry {
            fen: fen.into(),
            ply: 0,
            request: format!("/masters?fen={fen}"),
            answer: answer.into(),
        }
    }

    #[test]
    fn the_bytes_are_canonical_and_read_back() {
        let a = Manifest::new(params(), vec![entry("b", "2"), entry("a", "1")]);
        let b = Manifest::new(params(), vec![entry("a", "1"), entry("b", "2")]);
        assert_eq!(a.to_bytes(), b.to_bytes());
        assert_eq!(Manifest::parse(&a.to_bytes()).unwrap(), a);
        let text = String::from_utf8(a.to_bytes()).unwrap();
        assert_eq!(text.lines().count(), 4, "{text}");
        assert!(Manifest::parse(b"{\"okb_crawl\":9}").is_err());
    }

    #[test]
    fn a_diff_names_what_moved() {
        let old = Manifest::new(params(), vec![entry("a", "1"), entry("b", "2"), entry("c", "3")]);
        let new = Manifest::new(params(), vec![entry("a", "1"), entry("b", "4"), entry("d", "5")]);
        let games = |h: &str| Some(h.parse::<u64>().unwrap() * 10);
        let d = diff(&old, &new, games);
        assert_eq!((d.added, d.removed, d.same), (vec!["d".to_string()], vec!["c".to_string()], 1));
        assert_eq!(d.changed, vec![("b".to_string(), 20, 40)]);
    }
}
