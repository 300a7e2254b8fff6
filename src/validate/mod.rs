//! Phase 3: validation of the tree against a PGN corpus whose games carry `Opening`
//! tags (Lichess exports do).
//!
//! A game whose tag names none of the tree positions it passes through (own names,
//! inherited names and other sources' aliases all count) reaches a named variation the
//! tree lacks. It is counted under (the first position of the game the tree does not
//! have, the tag); pairs with at least `min_games` games are reported. Only positions
//! outside the tree can be reported, so a position the tree has is never reported;
//! a game whose positions are all in the tree under other names is counted as
//! "renamed", not reported. Corrupt games are counted by reason (E6), never fatal.

pub mod report;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use shakmaty::Move;

use crate::eco::EcoSkeleton;
use crate::games::GamesError;
use crate::games::filter::GameResult;
use crate::games::input::{Chunk, ChunkBatches, DEFAULT_CHUNK_BYTES};
use crate::games::pgn::{ChunkOrigin, GameEnd, GameVisitor, IdentityKeys, read_chunk_at};
use crate::games::report::BadGames;
use crate::games::stats::Outcomes;
use crate::position::KeyMap;
use crate::tree::Tree;

/// `[validate]` in pipeline.toml.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ValidateParams {
    /// Game sources (names of `[sources.*]` of kind pgn) whose Opening tags are checked.
    pub sources: Vec<String>,
    /// Report a (position, name) pair reached by at least this many games.
    pub min_games: u64,
    /// Also write the reported variations as stub lines (`validation-stubs.tsv`, Lichess
    /// TSV format, names marked `(stub)`), ready to be added as a source.
    pub stubs: bool,
    /// Plies of each game examined.
    pub max_ply: usize,
}

impl Default for ValidateParams {
    fn default() -> Self {
        ValidateParams { sources: Vec::new(), min_games: 10, stubs: false, max_ply: 40 }
    }
}

/// The tree's positions and the names each one answers to.
#[derive(Debug, Default)]
pub struct TreeNames {
    nodes: KeyMap<u128, u32>,
    names: Vec<Vec<String>>,
}

/// Names are compared without case and surrounding blanks.
fn normalise(name: &str) -> String {
    name.trim().to_lowercase()
}

impl TreeNames {
    /// Every node of `tree` with its own or inherited name and its entry's aliases.
    pub fn new(tree: &Tree, skeleton: &EcoSkeleton) -> TreeNames {
        let mut t = TreeNames::default();
        for (i, node) in tree.nodes.iter().enumerate() {
            let Ok(pos) = crate::position::parse_fen(&node.fen) else { continue };
            t.nodes.insert(crate::position::key(&pos).0, i as u32);
            let mut names: Vec<String> =
                node.opening.iter().map(|o| normalise(o.name.trim_end_matches(" (i)"))).collect();
            if let Some(e) = node.entry.and_then(|e| skeleton.entries.get(e as usize)) {
                names.push(normalise(&e.name));
                names.extend(e.aliases.values().map(|a| normalise(a)));
            }
            t.names.push(names);
        }
        t
    }
}

/// What became of one tagged game.
enum Verdict {
    /// A position on its path answers to the tag.
    Known,
    /// Every position examined is in the tree, under other names.
    Renamed,
    /// The tag names none of its tree positions; the game leaves the tree at `exit` plies.
    Missing { exit: usize },
}

fn judge(names: &TreeNames, keys: &[u128], tag: &str) -> Verdict {
    let tag = normalise(tag);
    let mut exit = None;
    for (ply, key) in keys.iter().enumerate() {
        match names.nodes.get(key) {
            Some(&node) if names.names[node as usize].contains(&tag) => return Verdict::Known,
            Some(_) => {}
            None if exit.is_none() => exit = Some(ply),
            None => {}
        }
    }
    match exit {
        Some(exit) => Verdict::Missing { exit },
        None => Verdict::Renamed,
    }
}

/// Games under one (position, name) pair.
#[derive(Debug, Clone)]
struct Pair {
    games: u64,
    /// The moves of the first game (input order) up to the position.
    line: Vec<Move>,
    /// ECO tags seen, with counts.
    eco: BTreeMap<String, u64>,
    /// Results of the games with a decided result.
    outcomes: Outcomes,
}

/// Counts of one validation run.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Counts {
    /// Games seen, bad ones included.
    pub games_read: u64,
    /// Readable standard games with an Opening tag.
    pub games_tagged: u64,
    /// Tagged games whose name the tree has on their path.
    pub games_known: u64,
    /// Tagged games whose positions the tree has, under other names.
    pub games_renamed: u64,
    /// Tagged games reaching a name the tree lacks, at a position it lacks.
    pub games_missing: u64,
}

/// The result of validating a corpus: counts and the pairs of every game that reaches a
/// name the tree lacks (filtered by [`ValidateParams::min_games`] in the report).
#[derive(Debug, Default)]
pub struct Validation {
    /// Game counts.
    pub counts: Counts,
    /// Corrupt games by reason.
    pub bad: BadGames,
    pairs: HashMap<(u128, String), Pair>,
    /// Insertion order of `pairs`, for deterministic "first game" examples.
    order: Vec<(u128, String)>,
}

impl Validation {
    fn merge(&mut self, other: Validation) {
        let c = &mut self.counts;
        c.games_read += other.counts.games_read;
        c.games_tagged += other.counts.games_tagged;
        c.games_known += other.counts.games_known;
        c.games_renamed += other.counts.games_renamed;
        c.games_missing += other.counts.games_missing;
        self.bad.merge(&other.bad);
        let mut theirs = other.pairs;
        for key in other.order {
            let pair = theirs.remove(&key).expect("every ordered pair is present");
            self.add_pair(key, pair);
        }
    }

    fn add_pair(&mut self, key: (u128, String), pair: Pair) {
        match self.pairs.get_mut(&key) {
            Some(ours) => {
                ours.games += pair.games;
                ours.outcomes.add(&pair.outcomes);
                for (eco, n) in pair.eco {
                    *ours.eco.entry(eco).or_default() += n;
                }
            }
            None => {
                self.order.push(key.clone());
                self.pairs.insert(key, pair);
            }
        }
    }
}

/// The value of tag `name` in the tag section at the start of `game`.
fn tag_value<'a>(game: &'a [u8], name: &str) -> Option<&'a str> {
    for line in game.split(|&b| b == b'\n') {
        let line = line.trim_ascii();
        if !line.starts_with(b"[") {
            break;
        }
        let rest = &line[1..];
        if rest.starts_with(name.as_bytes())
            && rest.get(name.len()).is_some_and(u8::is_ascii_whitespace)
        {
            let value = rest[name.len()..].trim_ascii().strip_prefix(b"\"")?;
            let end = value.iter().rposition(|&b| b == b'"')?;
            return std::str::from_utf8(&value[..end]).ok();
        }
    }
    None
}

fn validate_chunk(names: &TreeNames, max_ply: usize, file: &str, chunk: &Chunk) -> Validation {
    let mut v = Validation::default();
    let origin = ChunkOrigin::of(file, chunk);
    let mut visitor = GameVisitor::<IdentityKeys>::new(max_ply, None);
    let data = &chunk.data;
    let mut pairs = Vec::new();
    let counts = &mut v.counts;
    let games = read_chunk_at(data, origin, &mut visitor, &mut v.bad, |g, end, offset| {
        if end != GameEnd::Done {
            return;
        }
        let Some(tag) =
            tag_value(&data[offset..], "Opening").filter(|t| !t.trim().is_empty() && *t != "?")
        else {
            return;
        };
        counts.games_tagged += 1;
        match judge(names, &g.keys, tag) {
            Verdict::Known => counts.games_known += 1,
            Verdict::Renamed => counts.games_renamed += 1,
            Verdict::Missing { exit } => {
                counts.games_missing += 1;
                let eco = tag_value(&data[offset..], "ECO").unwrap_or("?").to_string();
                let mut outcomes = Outcomes::default();
                match g.outcome {
                    Some(GameResult::WhiteWins) => outcomes.white = 1,
                    Some(GameResult::Draw) => outcomes.draws = 1,
                    Some(GameResult::BlackWins) => outcomes.black = 1,
                    Some(GameResult::Unknown) | None => {}
                }
                let pair = Pair {
                    games: 1,
                    line: g.moves[..exit].to_vec(),
                    eco: BTreeMap::from([(eco, 1)]),
                    outcomes,
                };
                pairs.push(((g.keys[exit], tag.trim().to_string()), pair));
            }
        }
    });
    v.counts.games_read = games;
    for (key, pair) in pairs {
        v.add_pair(key, pair);
    }
    v
}

/// Validates the games of `paths` (in order) against `names`.
pub fn validate_files(
    names: &TreeNames,
    paths: &[PathBuf],
    max_ply: usize,
) -> Result<Validation, GamesError> {
    let mut total = Validation::default();
    let mut batches =
        ChunkBatches::new(paths, DEFAULT_CHUNK_BYTES, 2 * rayon::current_num_threads().max(1));
    while let Some(batch) = batches.next_batch()? {
        let parts: Vec<Validation> = batch
            .par_iter()
            .map(|(file, chunk)| validate_chunk(names, max_ply, file, chunk))
            .collect();
        for part in parts {
            total.merge(part);
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_values_are_read_from_the_tag_section_only() {
        let game = b"[Event \"x\"]\n[OpeningX \"no\"]\n[Opening \"Sicilian Defense: \\\"Najdorf\\\"\"]\n\n1. e4 {[Opening \"z\"]} *";
        assert_eq!(tag_value(game, "Opening"), Some("Sicilian Defense: \\\"Najdorf\\\""));
        assert_eq!(tag_value(game, "ECO"), None);
    }
}
