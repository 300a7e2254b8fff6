//! Player collections as `okb serve` answers `GET /player` from them: each listed
//! player's games with the references the Lichess explorer shows (id, players, ratings,
//! month, result, speed, mode) and their first [`MAX_PLIES`] moves, as the Lichess
//! player indexer keeps them.
//!
//! A game between two listed players is that of both (one row each, White's first).
//! Games with no result, or no known year (Lichess's answers need a month), are left
//! out; so are the games [`super::games`] leaves out (non-standard, illegal). Ids are
//! the explorer index's ([`crate::explorer_index`]): the same game has the same id in
//! `/player`, `/masters` and `/lichess`.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::PathBuf;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::Side;
use super::games::{self, PlayerGame};
use super::players::{Matcher, PlayerSpec};
use crate::explorer_index::{GameRef, game_text, reference_of_text};
use crate::games::GamesError;
use crate::games::filter::GameResult;
use crate::position::MoveKey;

/// Plies of a game kept (Lichess's player indexer keeps 50).
pub const MAX_PLIES: usize = 50;

/// One game of a listed player.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CollectionGame {
    /// The listed player, as the collection names them.
    pub player: String,
    /// The side they played.
    pub side: Side,
    /// The game's reference (id, names, ratings, date, winner, speed).
    pub game: GameRef,
    /// Its first [`MAX_PLIES`] moves.
    pub moves: Vec<MoveKey>,
}

impl CollectionGame {
    /// Rated (Lichess's `mode`): every game but those whose Event says "Casual".
    pub fn rated(&self) -> bool {
        self.game.mode != crate::explorer_index::MODE_CASUAL
    }
}

/// A listed player: the name and every spelling (the name first, then the aliases).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listed {
    /// The name shown.
    pub name: String,
    /// The name and its aliases.
    pub spellings: Vec<String>,
}

impl Listed {
    /// As a [`PlayerSpec`], for a [`Matcher`].
    pub fn spec(&self) -> PlayerSpec {
        PlayerSpec::Aliased {
            name: self.name.clone(),
            aliases: self.spellings.iter().skip(1).cloned().collect(),
        }
    }
}

/// Every player collection's games, in file order then game order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Collections {
    /// The listed players (one per name, the first collection's spellings).
    pub players: Vec<Listed>,
    /// Their games.
    pub games: Vec<CollectionGame>,
}

/// A file of a player collection: its path, the name it is shown by, its players.
pub type CollectionFile = (PathBuf, String, Vec<PlayerSpec>);

/// Who a file's games name, for the doubts about a collection's `players`
/// ([`super::players::doubts`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Named {
    /// White and Black tag values → games giving them.
    pub names: BTreeMap<String, u64>,
    /// Listed player → rows kept for them.
    pub matched: BTreeMap<String, u64>,
}

impl Named {
    /// Adds another file's.
    pub fn add(&mut self, other: &Named) {
        for (n, g) in &other.names {
            *self.names.entry(n.clone()).or_default() += g;
        }
        for (n, g) in &other.matched {
            *self.matched.entry(n.clone()).or_default() += g;
        }
    }
}

/// A collection's game as read: its fingerprint (`games::dedup`), its place in its file
/// (for the rows of one game: both players may be listed), the row.
type Row = (u128, usize, CollectionGame);

/// Reads `files` (on every core, kept in file order), with who each file's games name;
/// with `deduplicate`, a game the files hold more than once is kept once (its first copy).
pub fn read(
    files: &[CollectionFile],
    deduplicate: bool,
) -> Result<(Collections, Vec<Named>), GamesError> {
    let per_file: Vec<(Vec<Row>, Named)> =
        files.par_iter().map(read_file).collect::<Result<_, _>>()?;
    let mut first = std::collections::HashMap::new();
    let per_file: Vec<(Vec<CollectionGame>, Named)> = per_file
        .into_iter()
        .enumerate()
        .map(|(file, (rows, named))| {
            let rows = rows.into_iter().filter(|(fingerprint, at, _)| {
                !deduplicate || *first.entry(*fingerprint).or_insert((file, *at)) == (file, *at)
            });
            (rows.map(|(_, _, row)| row).collect(), named)
        })
        .collect();
    let mut players: Vec<Listed> = Vec::new();
    for p in files.iter().flat_map(|f| &f.2) {
        if !players.iter().any(|q| q.name == p.name()) {
            players.push(Listed {
                name: p.name().to_string(),
                spellings: p.spellings().into_iter().map(str::to_string).collect(),
            });
        }
    }
    let (games, named): (Vec<_>, Vec<_>) = per_file.into_iter().unzip();
    Ok((Collections { players, games: games.into_iter().flatten().collect() }, named))
}

fn read_file((path, shown, players): &CollectionFile) -> Result<(Vec<Row>, Named), GamesError> {
    let mut bytes = Vec::new();
    crate::games::input::open(path)?
        .read_to_end(&mut bytes)
        .map_err(|source| GamesError::Read { path: path.clone(), line: 0, byte: 0, source })?;
    let matcher = Matcher::new(players);
    let mut out = Vec::new();
    for g in games::read_bytes(&bytes, shown, &matcher, MAX_PLIES, None) {
        // A game without a result has no row: its fingerprint is never compared.
        let (at, fingerprint) = (g.offset, g.fingerprint.unwrap_or(0));
        out.extend(rows(&bytes, &matcher, g).into_iter().map(|row| (fingerprint, at, row)));
    }
    let mut named = Named { names: tag_names(&bytes), ..Named::default() };
    for (_, _, row) in &out {
        *named.matched.entry(row.player.clone()).or_default() += 1;
    }
    Ok((out, named))
}

/// The White and Black tag values of a PGN file's games, with how many games give each.
fn tag_names(bytes: &[u8]) -> BTreeMap<String, u64> {
    let mut names = BTreeMap::new();
    for line in bytes.split(|&b| b == b'\n') {
        let Some(value) =
            line.strip_prefix(b"[White \"").or_else(|| line.strip_prefix(b"[Black \""))
        else {
            continue;
        };
        let end = value.iter().rposition(|&b| b == b'"').unwrap_or(value.len());
        *names.entry(String::from_utf8_lossy(&value[..end]).into_owned()).or_default() += 1;
    }
    names
}

/// The rows of one game: one per listed player in it.
fn rows(bytes: &[u8], matcher: &Matcher, g: PlayerGame) -> Vec<CollectionGame> {
    let text = game_text(bytes, g.offset);
    let game = reference_of_text(&text);
    let known = matches!(
        GameResult::from_tag(g.result.as_bytes()),
        Some(GameResult::WhiteWins | GameResult::Draw | GameResult::BlackWins)
    );
    if game.year == 0 || !known {
        return Vec::new();
    }
    let moves: Vec<MoveKey> = g.moves.iter().map(MoveKey::new).collect();
    let sides = [(Side::White, &g.white), (Side::Black, &g.black)];
    sides
        .into_iter()
        .filter_map(|(side, tag)| matcher.find(tag).map(|p| (side, p.to_string())))
        .map(|(side, player)| CollectionGame {
            player,
            side,
            game: game.clone(),
            moves: moves.clone(),
        })
        .collect()
}
