//! Game classification: each game gets the opening of the deepest knowledge-base
//! position it reaches (the job `pgn-extract -e` does with its own eco.pgn).
//!
//! The lookup is by position identity ([`crate::position::key`]), so it is
//! transposition-aware: a game that reaches a named position by another move order gets
//! that name. [`Classifier`] is the public API (from a store or a freshly built tree);
//! [`tags`] rewrites a PGN game's ECO/Opening/Variation tags; [`files`] streams PGN files
//! through both on all cores.

pub mod files;
pub mod tags;

use std::path::Path;

use shakmaty::{Chess, Move, Position};

use crate::position::{self, KeyMap};
use crate::record::split_name;
use crate::store::StoreError;
use crate::tree::Tree;

/// Plies a game is followed beyond the deepest known position, so that a transposition
/// with a few extra moves is still recognised (pgn-extract uses the same margin).
pub const PLY_SLACK: usize = 6;

/// One classifiable position: the opening it is named after.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Known {
    eco: String,
    opening: String,
    variation: Option<String>,
    node_id: String,
}

/// A game's opening, as the knowledge base names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Classification<'a> {
    /// ECO code.
    pub eco: &'a str,
    /// Opening name (`Sicilian Defense`).
    pub opening: &'a str,
    /// Variation name (`Najdorf Variation`), if any.
    pub variation: Option<&'a str>,
    /// The knowledge-base node of the deepest known position.
    pub node_id: &'a str,
    /// The game's ply at which it was reached.
    pub ply: usize,
}

impl Classification<'_> {
    /// The full name, `Opening: Variation`.
    pub fn name(&self) -> String {
        match self.variation {
            Some(v) => format!("{}: {v}", self.opening),
            None => self.opening.to_string(),
        }
    }
}

/// Knowledge-base positions by identity, ready to classify games.
#[derive(Debug, Default)]
pub struct Classifier {
    index: KeyMap<u128, u32>,
    known: Vec<Known>,
    deepest: usize,
}

/// The `src` of interpolated entries.
const INTERPOLATED: &str = "interpolated";

/// Interpolated entries are named `<ancestor> (i)`; a game is given the ancestor's name.
fn without_interpolation_mark(text: &str) -> &str {
    text.strip_suffix(" (i)").unwrap_or(text)
}

impl Classifier {
    fn add(&mut self, epd: &str, ply: usize, eco: &str, opening: &str, variation: Option<&str>) {
        let Ok(pos) = position::parse_fen(epd) else { return };
        let variation = variation.map(without_interpolation_mark).filter(|v| !v.is_empty());
        let opening =
            if variation.is_none() { without_interpolation_mark(opening) } else { opening };
        self.index.insert(position::key(&pos).0, self.known.len() as u32);
        self.known.push(Known {
            eco: eco.to_string(),
            opening: opening.to_string(),
            variation: variation.map(str::to_string),
            node_id: position::node_id(epd),
        });
        self.deepest = self.deepest.max(ply);
    }

    /// The named nodes of a built tree. Only positions named by a taxonomy count:
    /// inherited and interpolated names come from *a* line through the position (its
    /// most-played path, the entry line it lies on), not from the game's own path, so a
    /// game is named after the deepest position a taxonomy names.
    pub fn from_tree(tree: &Tree) -> Classifier {
        let mut c = Classifier::default();
        for node in &tree.nodes {
            if let Some(o) = node.opening.as_ref().filter(|o| o.own && o.src != INTERPOLATED) {
                let (opening, variation) = split_name(&o.name);
                c.add(&node.epd, node.line.len(), &o.eco, &opening, variation.as_deref());
            }
        }
        c
    }

    /// The named nodes of the store at `path` (`okb make`'s output), chosen as in
    /// [`Classifier::from_tree`]; validation stubs (names only games' tags vouch for)
    /// name no game.
    pub fn from_store(path: &Path) -> Result<Classifier, StoreError> {
        if !path.exists() {
            return Err(StoreError::Missing(path.display().to_string()));
        }
        let sql = |source| StoreError::Sqlite { path: path.display().to_string(), source };
        let conn =
            rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .map_err(sql)?;
        let mut stmt = conn
            .prepare(
                "SELECT position_key, ply, eco_code, opening_name, variation_name FROM opening_nodes
                 WHERE eco_code IS NOT NULL AND opening_name IS NOT NULL AND name_inherited = 0
                 AND name_src NOT IN ('interpolated', 'stub') ORDER BY position_key",
            )
            .map_err(sql)?;
        let mut rows = stmt.query([]).map_err(sql)?;
        let mut c = Classifier::default();
        while let Some(row) = rows.next().map_err(sql)? {
            let epd: String = row.get(0).map_err(sql)?;
            let ply: i64 = row.get(1).map_err(sql)?;
            let eco: String = row.get(2).map_err(sql)?;
            let opening: String = row.get(3).map_err(sql)?;
            let variation: Option<String> = row.get(4).map_err(sql)?;
            c.add(&epd, ply.max(0) as usize, &eco, &opening, variation.as_deref());
        }
        Ok(c)
    }

    /// Named positions known.
    pub fn len(&self) -> usize {
        self.known.len()
    }

    /// Whether no position is known.
    pub fn is_empty(&self) -> bool {
        self.known.is_empty()
    }

    /// How many plies of a game are worth playing: the deepest known position's ply plus
    /// [`PLY_SLACK`].
    pub fn depth(&self) -> usize {
        self.deepest + PLY_SLACK
    }

    fn classification(&self, index: u32, ply: usize) -> Classification<'_> {
        let k = &self.known[index as usize];
        Classification {
            eco: &k.eco,
            opening: &k.opening,
            variation: k.variation.as_deref(),
            node_id: &k.node_id,
            ply,
        }
    }

    /// The deepest known position among `keys`: (known index, ply). The start position
    /// does not count (some taxonomies name it): a game has an opening once it has moves.
    fn lookup(&self, keys: &[u128]) -> Option<(u32, usize)> {
        let depth = keys.len().min(self.depth() + 1);
        keys[..depth]
            .iter()
            .enumerate()
            .skip(1)
            .rev()
            .find_map(|(ply, key)| self.index.get(key).map(|&i| (i, ply)))
    }

    /// Classifies a game from the identity keys of its positions (`keys[i]` after `i`
    /// plies, as [`crate::games::pgn::GameVisitor`] collects them): the last known one.
    pub fn classify_keys(&self, keys: &[u128]) -> Option<Classification<'_>> {
        self.lookup(keys).map(|(i, ply)| self.classification(i, ply))
    }

    /// Classifies a game given as legal moves from the standard start position (what a
    /// BGN writer has at hand).
    pub fn classify_moves(&self, moves: &[Move]) -> Option<Classification<'_>> {
        let mut pos = Chess::default();
        let mut keys = Vec::with_capacity(moves.len().min(self.depth()) + 1);
        keys.push(position::key(&pos).0);
        for m in moves.iter().take(self.depth()) {
            let next = position::child_key(
                &pos,
                position::PositionKey(*keys.last().expect("never empty")),
                m,
            );
            pos.play_unchecked(*m);
            keys.push(next.0);
        }
        self.classify_keys(&keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolation_marks_are_dropped_from_names() {
        let mut c = Classifier::default();
        let pos = Chess::default();
        let e4 = pos.legal_moves().into_iter().find(|m| m.to() == shakmaty::Square::E4).unwrap();
        let mut after = pos.clone();
        after.play_unchecked(e4);
        c.add(&position::epd(&after), 1, "B00", "King's Pawn", Some("Line (i)"));
        c.add(&position::epd(&pos), 0, "A00", "Start position", None);
        let got = c.classify_moves(&[e4]).unwrap();
        assert_eq!((got.opening, got.variation, got.ply), ("King's Pawn", Some("Line"), 1));
        assert_eq!(got.name(), "King's Pawn: Line");
        // The start position names no game.
        assert_eq!(c.classify_moves(&[]), None);
    }
}
