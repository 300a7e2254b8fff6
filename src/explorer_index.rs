//! The explorer index (`[explorer]` in pipeline.toml): what `okb serve` needs to answer
//! `/masters` and `/lichess` like the Lichess opening explorer, with filters, game
//! references and PGN.
//!
//! The game files are read again, with the same readers, filter and counting rule as the
//! `games` step ([`crate::games::aggregate`]: a position counts once per game, a move
//! once per game and position, only the first `max_ply` plies, only games with a
//! result), and every count is kept per *slice* of games:
//!
//! - a game with a `TimeControl` (an online game) is sliced by month (from `Date`, else
//!   `UTCDate`), speed (Lichess's thresholds on base + 40 × increment) and rating group
//!   (Lichess's groups 0, 1000, 1200, 1400, 1600, 1800, 2000, 2200, 2500 on the average
//!   of both ratings);
//! - any other game (an over-the-board game, like the masters corpus) by year only, so
//!   that a 1749–2025 corpus stays small; for month filters it counts as January of its
//!   year, and speed or rating filters leave it out.
//!
//! A filter is a set of slices, so a filtered count is a sum of the node's cells in those
//! slices, and the sum over all slices is exactly the tree's count. Only positions of
//! the tree are indexed, and only moves that are edges of the tree.
//!
//! Game references: per position and slice, the [`ExplorerParams::top_games`] games with
//! the highest rating sum (mover + opponent, Lichess's order for masters top games) and
//! the [`ExplorerParams::recent_games`] most recent, each with the move it played there;
//! per move and slice, the game when exactly one game played it (Lichess's `game`). A
//! filter's top games are the best of its slices' kept games, which holds the filter's
//! true top games. Games from BGN files are counted but not referenced (BGN keeps no
//! names).
//!
//! Game ids: a Lichess `Site` URL (`https://lichess.org/abcdefgh`) gives its 8-character
//! id; any other game gets the first 8 base-62 digits of the BLAKE3 of its PGN text (line
//! endings normalized to `\n`, surrounding blank space trimmed), so the same game in two
//! files has one id. Two different texts with the same 8 digits (about one chance in 10^5
//! for a million games) are told apart by hashing the text again with `#1`, `#2`…, in file
//! order. The PGN text of every counted game is kept, zstd-compressed in blocks of
//! [`BLOCK_GAMES`] games, for `GET /masters/pgn/{id}`.

use std::collections::HashMap;
use std::path::PathBuf;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::games::GamesError;
use crate::games::dedup::location;
use crate::games::filter::{GameFilter, GameResult, GameTags};
use crate::games::input::{Boundary, Chunker, DEFAULT_CHUNK_BYTES};
use crate::games::pgn::{ChunkOrigin, GameEnd, GameVisitor, IdentityKeys, read_chunk_at};
use crate::games::report::BadGames;
use crate::position::{KeyMap, MoveKey};
use crate::tree::Tree;

/// `[explorer]`: build the explorer index (absent: `okb serve` answers `/masters` and
/// `/lichess` from the tree's counts only, without filters or game references).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExplorerParams {
    /// Best-rated game references kept per position and slice (Lichess's masters
    /// explorer lists at most 15).
    pub top_games: usize,
    /// Most recent game references kept per position and slice (Lichess lists at most 8).
    pub recent_games: usize,
}

impl Default for ExplorerParams {
    fn default() -> Self {
        ExplorerParams { top_games: 15, recent_games: 8 }
    }
}

/// Games per compressed PGN block.
pub const BLOCK_GAMES: usize = 256;

/// Lichess's rating groups (lower bounds), in order.
pub const RATING_GROUPS: [u32; 9] = [0, 1000, 1200, 1400, 1600, 1800, 2000, 2200, 2500];

/// Lichess's speed names, in [`Speed`](crate::games::filter::Speed) order.
pub const SPEEDS: [&str; 6] =
    ["ultraBullet", "bullet", "blitz", "rapid", "classical", "correspondence"];

/// "No game" in [`MoveCell::single`].
pub const NO_GAME: u32 = u32::MAX;

/// A slice of games, packed: `year << 12 | month << 8 | speed << 4 | rating`, where 0
/// means unknown for each part, `speed` is 1 + the [`Speed`](crate::games::filter::Speed) index and `rating` is 1 +
/// the index in [`RATING_GROUPS`].
#[derive(
    Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Slice(pub u32);

impl Slice {
    /// The slice of a game.
    pub fn new(year: u16, month: u8, speed: u8, rating: u8) -> Slice {
        Slice(
            u32::from(year) << 12
                | u32::from(month & 15) << 8
                | u32::from(speed & 15) << 4
                | u32::from(rating & 15),
        )
    }
    /// Year (0: unknown).
    pub fn year(self) -> u16 {
        (self.0 >> 12) as u16
    }
    /// Month 1–12 (0: unknown or not kept).
    pub fn month(self) -> u8 {
        (self.0 >> 8 & 15) as u8
    }
    /// 1 + the [`Speed`](crate::games::filter::Speed) index (0: unknown).
    pub fn speed(self) -> u8 {
        (self.0 >> 4 & 15) as u8
    }
    /// 1 + the [`RATING_GROUPS`] index (0: unknown).
    pub fn rating(self) -> u8 {
        (self.0 & 15) as u8
    }
}

/// The rating group index of an average rating.
pub fn rating_group(average: u32) -> u8 {
    RATING_GROUPS.iter().rposition(|&g| average >= g).unwrap_or(0) as u8
}

/// Games of one slice that reached a position.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PosCell {
    /// The slice.
    pub slice: Slice,
    /// White wins.
    pub white: u32,
    /// Draws.
    pub draws: u32,
    /// Black wins.
    pub black: u32,
}

/// Games of one slice that played a move from a position.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveCell {
    /// The move.
    pub mv: MoveKey,
    /// The slice.
    pub slice: Slice,
    /// White wins.
    pub white: u32,
    /// Draws.
    pub draws: u32,
    /// Black wins.
    pub black: u32,
    /// Games where the mover's rating is known.
    pub rated: u32,
    /// Sum of those ratings.
    pub rating_sum: u64,
    /// The game, when exactly one game of the slice played the move ([`NO_GAME`] otherwise).
    pub single: u32,
}

impl MoveCell {
    /// Games counted.
    pub fn games(&self) -> u64 {
        u64::from(self.white) + u64::from(self.draws) + u64::from(self.black)
    }
}

/// A kept game reference at a position.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameAt {
    /// The game's slice.
    pub slice: Slice,
    /// The move the game played from the position.
    pub mv: MoveKey,
    /// Index in [`ExplorerIndex::games`].
    pub game: u32,
}

/// One position's index.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeIndex {
    /// Games reaching the position, by slice (sorted).
    pub positions: Vec<PosCell>,
    /// Moves of the tree's edges, by (move, slice) (sorted).
    pub moves: Vec<MoveCell>,
    /// Kept game references, sorted by (slice, game).
    pub games: Vec<GameAt>,
}

/// A referenced game.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameRef {
    /// The id (see the module docs).
    pub id: String,
    /// White's name.
    pub white: String,
    /// Black's name.
    pub black: String,
    /// White's rating (0: unknown).
    pub white_rating: u16,
    /// Black's rating (0: unknown).
    pub black_rating: u16,
    /// Year (0: unknown).
    pub year: u16,
    /// Month 1–12 (0: unknown).
    pub month: u8,
    /// 1: White won, 2: Black won, 0: draw.
    pub winner: u8,
    /// 1 + the [`Speed`](crate::games::filter::Speed) index (0: unknown).
    pub speed: u8,
    /// [`MODE_RATED`] or [`MODE_CASUAL`], from a Lichess `Event` tag ("Rated Blitz
    /// game", "Casual Bullet game"); 0 when the Event does not say.
    pub mode: u8,
    /// When it was played, `yyyymmddhhmmss` with unknown parts 0 (for "most recent").
    pub played: u64,
    /// Its PGN block.
    pub block: u32,
    /// Byte offset of its text in the decompressed block.
    pub start: u32,
    /// Length of its text.
    pub len: u32,
}

impl GameRef {
    /// The sum of both ratings (Lichess's masters top-game order).
    pub fn score(&self) -> u32 {
        u32::from(self.white_rating) + u32::from(self.black_rating)
    }
}

/// The whole index: one [`NodeIndex`] per tree node (in tree order), the referenced
/// games and the PGN blocks.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExplorerIndex {
    /// Per tree node.
    pub nodes: Vec<NodeIndex>,
    /// Referenced games.
    pub games: Vec<GameRef>,
    /// zstd-compressed PGN texts, [`BLOCK_GAMES`] games each.
    pub blocks: Vec<Vec<u8>>,
    /// Games counted.
    pub counted: u64,
}

/// A game file to index.
#[derive(Clone, Debug)]
pub struct FileSpec {
    /// The file.
    pub path: PathBuf,
    /// BGN rather than PGN.
    pub bgn: bool,
    /// Its source's filter.
    pub filter: GameFilter,
    /// The locations of its repeated games, sorted: left out, as the counts leave them
    /// out (`games::dedup`).
    pub repeats: Vec<u64>,
}

/// The tree's positions and moves, for lookups while games are read.
struct TreeKeys {
    nodes: KeyMap<crate::position::PositionKey, u32>,
    /// Per node, its edges' move keys (sorted).
    edges: Vec<Vec<MoveKey>>,
}

impl TreeKeys {
    fn of(tree: &Tree) -> TreeKeys {
        let keyed: Vec<(crate::position::PositionKey, Vec<MoveKey>)> = tree
            .nodes
            .par_iter()
            .map(|n| {
                let pos = crate::position::parse_fen(&n.epd).expect("tree positions parse");
                let mut edges: Vec<MoveKey> = n.children.iter().map(|e| e.key).collect();
                edges.sort();
                (crate::position::key(&pos), edges)
            })
            .collect();
        let mut nodes = KeyMap::default();
        let mut edges = Vec::with_capacity(keyed.len());
        for (i, (key, e)) in keyed.into_iter().enumerate() {
            nodes.insert(key, i as u32);
            edges.push(e);
        }
        TreeKeys { nodes, edges }
    }
}

/// A game's place: (file index, game number in the file), ordered as the files are.
type GameKey = u64;

#[derive(Clone, Copy, Default)]
struct MoveAcc {
    white: u32,
    draws: u32,
    black: u32,
    rated: u32,
    rating_sum: u64,
    first: GameKey,
}

/// Candidate references of one (node, slice): (score, played, game, move).
type Candidates = Vec<(u32, u64, GameKey, MoveKey)>;

/// One file's games: their references (in file order) and compressed texts.
struct FileGames {
    games: Vec<(GameRef, u128)>,
    blocks: Vec<Vec<u8>>,
}

#[derive(Default)]
struct Acc {
    positions: HashMap<(u32, Slice), [u32; 3]>,
    moves: HashMap<(u32, MoveKey, Slice), MoveAcc>,
    candidates: HashMap<(u32, Slice), Candidates>,
    files: Vec<(usize, FileGames)>,
    counted: u64,
}

/// Keeps the best `top` by score and the `recent` latest of `c` (ties: file order).
fn prune(c: &mut Candidates, top: usize, recent: usize) {
    if c.len() <= top + recent {
        return;
    }
    let mut keep: Candidates = Vec::with_capacity(top + recent);
    c.sort_by(|a, b| b.0.cmp(&a.0).then(a.2.cmp(&b.2)));
    keep.extend_from_slice(&c[..top.min(c.len())]);
    let first = top.min(c.len());
    let rest = &mut c[first..];
    rest.sort_by(|a, b| b.1.cmp(&a.1).then(a.2.cmp(&b.2)));
    keep.extend_from_slice(&rest[..recent.min(rest.len())]);
    *c = keep;
}

struct Ctx<'a> {
    tree: &'a TreeKeys,
    max_ply: usize,
    params: &'a ExplorerParams,
}

impl Acc {
    #[allow(clippy::too_many_arguments)]
    fn count(
        &mut self,
        cx: &Ctx<'_>,
        keys: &[u128],
        moves: &[shakmaty::Move],
        tags: &GameTags,
        result: Option<GameResult>,
        game: GameKey,
        meta: Option<&GameRef>,
    ) -> bool {
        let (w, d, b) = match result {
            Some(GameResult::WhiteWins) => (1, 0, 0),
            Some(GameResult::Draw) => (0, 1, 0),
            Some(GameResult::BlackWins) => (0, 0, 1),
            _ => return false,
        };
        self.counted += 1;
        let slice = slice_of(tags);
        let elos = [tags.white_elo, tags.black_elo];
        let keys = &keys[..keys.len().min(cx.max_ply + 1)];
        let moves = &moves[..moves.len().min(cx.max_ply)];
        let move_keys: Vec<MoveKey> = moves.iter().map(MoveKey::new).collect();
        for (i, k) in keys.iter().enumerate() {
            let Some(&node) = cx.tree.nodes.get(&crate::position::PositionKey(*k)) else {
                continue;
            };
            if !keys[..i].contains(k) {
                let c = self.positions.entry((node, slice)).or_default();
                c[0] += w;
                c[1] += d;
                c[2] += b;
                if let (Some(meta), Some(&mv)) = (meta, move_keys.get(i)) {
                    let list = self.candidates.entry((node, slice)).or_default();
                    list.push((meta.score(), meta.played, game, mv));
                    if list.len() >= 2 * (cx.params.top_games + cx.params.recent_games).max(1) {
                        prune(list, cx.params.top_games, cx.params.recent_games);
                    }
                }
            }
            let Some(&mv) = move_keys.get(i) else { continue };
            if (0..i).any(|j| keys[j] == *k && move_keys[j] == mv)
                || cx.tree.edges[node as usize].binary_search(&mv).is_err()
            {
                continue;
            }
            let c = self
                .moves
                .entry((node, mv, slice))
                .or_insert(MoveAcc { first: game, ..Default::default() });
            c.white += w;
            c.draws += d;
            c.black += b;
            c.first = c.first.min(game);
            if let Some(elo) = elos[i % 2] {
                c.rated += 1;
                c.rating_sum += u64::from(elo);
            }
        }
        true
    }

    fn merge(mut self, other: Acc, cx: &Ctx<'_>) -> Acc {
        let (mut big, small) = if self.moves.len() >= other.moves.len() {
            (self, other)
        } else {
            (other, std::mem::take(&mut self))
        };
        for (k, v) in small.positions {
            let c = big.positions.entry(k).or_default();
            for i in 0..3 {
                c[i] += v[i];
            }
        }
        for (k, v) in small.moves {
            match big.moves.entry(k) {
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(v);
                }
                std::collections::hash_map::Entry::Occupied(mut e) => {
                    let c = e.get_mut();
                    c.white += v.white;
                    c.draws += v.draws;
                    c.black += v.black;
                    c.rated += v.rated;
                    c.rating_sum += v.rating_sum;
                    c.first = c.first.min(v.first);
                }
            }
        }
        for (k, v) in small.candidates {
            let list = big.candidates.entry(k).or_default();
            list.extend(v);
            prune(list, cx.params.top_games, cx.params.recent_games);
        }
        big.files.extend(small.files);
        big.counted += small.counted;
        big
    }
}

/// The slice of a game with these tags (see the module docs).
pub fn slice_of(tags: &GameTags) -> Slice {
    let (year, month) = match tags.date {
        Some(d) if d.earliest / 10000 == d.latest / 10000 => {
            let (m0, m1) = (d.earliest / 100 % 100, d.latest / 100 % 100);
            ((d.earliest / 10000) as u16, if m0 == m1 { m0 as u8 } else { 0 })
        }
        _ => (0, 0),
    };
    match tags.speed {
        None => Slice::new(year, 0, 0, 0),
        Some(speed) => {
            let rating = match (tags.white_elo, tags.black_elo) {
                (Some(w), Some(b)) => rating_group((w + b) / 2) + 1,
                _ => 0,
            };
            Slice::new(year, month, speed as u8 + 1, rating)
        }
    }
}

/// Reads `files` and indexes the games that reach `tree`'s positions within `max_ply`
/// plies.
pub fn build(
    tree: &Tree,
    files: &[FileSpec],
    max_ply: usize,
    params: &ExplorerParams,
) -> Result<ExplorerIndex, GamesError> {
    let keys = TreeKeys::of(tree);
    let cx = Ctx { tree: &keys, max_ply, params };
    // One accumulator per worker, not per file: merging maps costs as much as filling them.
    let acc = files
        .par_iter()
        .enumerate()
        .try_fold(Acc::default, |mut acc, (i, f)| read_file(&cx, &mut acc, i, f).map(|()| acc))
        .try_reduce(Acc::default, |a, b| Ok(a.merge(b, &cx)))?;
    Ok(assemble(acc, tree, params))
}

fn read_file(
    cx: &Ctx<'_>,
    acc: &mut Acc,
    file_index: usize,
    file: &FileSpec,
) -> Result<(), GamesError> {
    let compiled = file.filter.compile()?;
    let boundary = if file.bgn { Boundary::Line } else { Boundary::Pgn };
    let mut chunker = Chunker::open(&file.path, DEFAULT_CHUNK_BYTES, boundary)?;
    let shown = file.path.display().to_string();
    let mut games = FileGames { games: Vec::new(), blocks: Vec::new() };
    let mut block = Vec::new();
    let mut in_block = 0;
    let mut seq: u64 = 0;
    let base = (file_index as u64) << 32;
    loop {
        let chunk = match chunker.next_chunk() {
            Ok(Some(c)) => c,
            Ok(None) => break,
            Err(GamesError::Read { .. }) if chunker.broken().is_some() => break,
            Err(e) => return Err(e),
        };
        let origin = ChunkOrigin::of(&shown, &chunk);
        let mut bad = BadGames::default();
        if file.bgn {
            crate::games::bgn::read_chunk(&chunk.data, origin, cx.max_ply, &mut bad, |game| {
                if compiled.check_tags(&game.tags).is_none() {
                    acc.count(
                        cx,
                        &game.keys,
                        &game.moves,
                        &game.tags,
                        game.result,
                        base | seq,
                        None,
                    );
                    seq += 1;
                }
            });
            continue;
        }
        let mut visitor = GameVisitor::<IdentityKeys>::new(cx.max_ply, Some(&compiled));
        let data = &chunk.data;
        let repeated = |offset| file.repeats.binary_search(&location(chunk.index, offset)).is_ok();
        read_chunk_at(data, origin, &mut visitor, &mut bad, |v, end, offset| {
            if end != GameEnd::Done
                || repeated(offset)
                || !matches!(
                    v.result(),
                    Some(GameResult::WhiteWins | GameResult::Draw | GameResult::BlackWins)
                )
            {
                return;
            }
            let text = game_text(data, offset);
            let (mut meta, hash) = describe(&text, &v.tags, v.result());
            meta.block = (games.blocks.len()) as u32;
            meta.start = block.len() as u32;
            meta.len = text.len() as u32;
            block.extend_from_slice(text.as_bytes());
            in_block += 1;
            if acc.count(cx, &v.keys, &v.moves, &v.tags, v.result(), base | seq, Some(&meta)) {
                games.games.push((meta, hash));
                seq += 1;
            }
            if in_block == BLOCK_GAMES {
                games.blocks.push(
                    zstd::bulk::compress(&block, 3).expect("compressing to memory does not fail"),
                );
                block.clear();
                in_block = 0;
            }
        });
    }
    if !block.is_empty() {
        games
            .blocks
            .push(zstd::bulk::compress(&block, 3).expect("compressing to memory does not fail"));
    }
    acc.files.push((file_index, games));
    Ok(())
}

/// The text of the game starting at `offset`: its tag lines and movetext, up to the next
/// tag line after the movetext, `\r\n` as `\n`, blank space around trimmed.
pub fn game_text(data: &[u8], offset: usize) -> String {
    let rest = &data[offset.min(data.len())..];
    let mut end = rest.len();
    let mut in_movetext = false;
    let mut at = 0;
    for line in rest.split_inclusive(|&b| b == b'\n') {
        let t = line.trim_ascii();
        if t.starts_with(b"[") && in_movetext {
            end = at;
            break;
        }
        if !t.is_empty() && !t.starts_with(b"[") {
            in_movetext = true;
        }
        at += line.len();
    }
    let text = decode(&rest[..end]);
    text.replace("\r\n", "\n").trim().to_string()
}

/// UTF-8, or Latin-1 when not.
fn decode(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => bytes.iter().map(|&b| char::from(b)).collect(),
    }
}

/// [`GameRef::mode`] of a rated game.
pub const MODE_RATED: u8 = 1;
/// [`GameRef::mode`] of a casual game.
pub const MODE_CASUAL: u8 = 2;

/// The mode an `Event` tag names, as Lichess writes it: "Rated …" or "Casual …".
fn mode_of(event: &str) -> u8 {
    match event.split_whitespace().next() {
        Some(word) if word.eq_ignore_ascii_case("rated") => MODE_RATED,
        Some(word) if word.eq_ignore_ascii_case("casual") => MODE_CASUAL,
        _ => 0,
    }
}

/// Lichess's name of [`GameRef::mode`] (`None` when unknown).
pub fn mode_name(mode: u8) -> Option<&'static str> {
    match mode {
        MODE_RATED => Some("rated"),
        MODE_CASUAL => Some("casual"),
        _ => None,
    }
}

/// The tag pairs of a game's text (its leading tag lines), values unquoted and unescaped.
pub fn tag_pairs(text: &str) -> Vec<(&str, String)> {
    let mut pairs = Vec::new();
    for line in text.lines() {
        let Some(inner) = line.trim().strip_prefix('[').and_then(|l| l.strip_suffix(']')) else {
            if !line.trim().is_empty() {
                break;
            }
            continue;
        };
        let Some((name, value)) = inner.split_once(' ') else { continue };
        let value = value.trim();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .unwrap_or(value)
            .replace("\\\"", "\"")
            .replace("\\\\", "\\");
        pairs.push((name, value));
    }
    pairs
}

/// A game's reference fields read from its text alone (the tags the readers would have
/// collected are read again from its tag lines), for readers that keep only the text;
/// the same id and fields as the index gives the game.
pub fn reference_of_text(text: &str) -> GameRef {
    let mut tags = GameTags::default();
    for (name, value) in tag_pairs(text) {
        tags.add(name.as_bytes(), value.as_bytes());
    }
    describe(text, &tags, tags.result).0
}

/// A game's reference fields from its text and tags, and the BLAKE3 of the text.
fn describe(text: &str, tags: &GameTags, result: Option<GameResult>) -> (GameRef, u128) {
    let mut r = GameRef::default();
    let (mut site, mut time) = (String::new(), String::new());
    for (name, value) in tag_pairs(text) {
        match name {
            "White" => r.white = value,
            "Black" => r.black = value,
            "Site" => site = value,
            "Event" => r.mode = mode_of(&value),
            "UTCTime" | "Time" => time = value,
            _ => {}
        }
    }
    let hash = blake3::hash(text.as_bytes());
    let lichess = site
        .strip_prefix("https://lichess.org/")
        .or_else(|| site.strip_prefix("http://lichess.org/"));
    r.id = match lichess {
        Some(id) if id.len() == 8 && id.bytes().all(|b| b.is_ascii_alphanumeric()) => {
            id.to_string()
        }
        _ => base62_id(hash.as_bytes()),
    };
    r.white_rating = tags.white_elo.unwrap_or(0) as u16;
    r.black_rating = tags.black_elo.unwrap_or(0) as u16;
    if let Some(d) = tags.date
        && d.earliest / 10000 == d.latest / 10000
    {
        r.year = (d.earliest / 10000) as u16;
        if d.earliest / 100 == d.latest / 100 {
            r.month = (d.earliest / 100 % 100) as u8;
        }
        let day = if d.earliest == d.latest { d.earliest % 100 } else { 0 };
        r.played = u64::from(r.year) * 10_000_000_000
            + u64::from(r.month) * 100_000_000
            + u64::from(day) * 1_000_000;
    }
    let digits: String = time.chars().filter(char::is_ascii_digit).take(6).collect();
    if digits.len() == 6 && r.played > 0 {
        r.played += digits.parse::<u64>().unwrap_or(0);
    }
    r.winner = match result {
        Some(GameResult::WhiteWins) => 1,
        Some(GameResult::BlackWins) => 2,
        _ => 0,
    };
    r.speed = tags.speed.map_or(0, |s| s as u8 + 1);
    let mut h = [0u8; 16];
    h.copy_from_slice(&hash.as_bytes()[..16]);
    (r, u128::from_le_bytes(h))
}

/// The first 8 base-62 digits of `bytes` read as a number.
fn base62_id(bytes: &[u8]) -> String {
    const DIGITS: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut n = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
    (0..8)
        .map(|_| {
            let d = DIGITS[(n % 62) as usize];
            n /= 62;
            char::from(d)
        })
        .collect()
}

/// Numbers the games in file order, resolves id collisions and lays out the nodes.
fn assemble(acc: Acc, tree: &Tree, params: &ExplorerParams) -> ExplorerIndex {
    let Acc { positions, moves, mut candidates, mut files, counted } = acc;
    files.sort_by_key(|f| f.0);
    // Workers prune their own lists: what they keep depends on how files were shared out,
    // the final pruning does not (it keeps the same games from any superset of them).
    for list in candidates.values_mut() {
        prune(list, params.top_games, params.recent_games);
    }
    // Game keys of referenced games.
    let mut referenced: Vec<GameKey> = Vec::new();
    for list in candidates.values() {
        referenced.extend(list.iter().map(|c| c.2));
    }
    referenced.extend(moves.values().filter(|m| m.white + m.draws + m.black == 1).map(|m| m.first));
    referenced.sort_unstable();
    referenced.dedup();
    let mut index = ExplorerIndex { counted, ..Default::default() };
    let mut number: HashMap<GameKey, u32> = HashMap::with_capacity(referenced.len());
    let mut ids: HashMap<String, u128> = HashMap::new();
    let mut block_base = 0u32;
    let mut wanted = referenced.iter().peekable();
    for (file_index, file) in files {
        let base = (file_index as u64) << 32;
        while let Some(&&key) = wanted.peek() {
            if key >> 32 != file_index as u64 {
                break;
            }
            wanted.next();
            let Some((meta, hash)) = file.games.get((key - base) as usize) else { continue };
            let mut meta = meta.clone();
            meta.block += block_base;
            let mut attempt = 0;
            while ids.get(&meta.id).is_some_and(|h| h != hash) {
                attempt += 1;
                let mut again = blake3::Hasher::new();
                again.update(&hash.to_le_bytes());
                again.update(format!("#{attempt}").as_bytes());
                meta.id = base62_id(again.finalize().as_bytes());
            }
            ids.insert(meta.id.clone(), *hash);
            number.insert(key, index.games.len() as u32);
            index.games.push(meta);
        }
        block_base += file.blocks.len() as u32;
        index.blocks.extend(file.blocks);
    }
    index.nodes = vec![NodeIndex::default(); tree.nodes.len()];
    for ((node, slice), [white, draws, black]) in positions {
        index.nodes[node as usize].positions.push(PosCell { slice, white, draws, black });
    }
    for ((node, mv, slice), m) in moves {
        let single = if m.white + m.draws + m.black == 1 {
            number.get(&m.first).copied().unwrap_or(NO_GAME)
        } else {
            NO_GAME
        };
        index.nodes[node as usize].moves.push(MoveCell {
            mv,
            slice,
            white: m.white,
            draws: m.draws,
            black: m.black,
            rated: m.rated,
            rating_sum: m.rating_sum,
            single,
        });
    }
    for ((node, slice), list) in candidates {
        let games = &mut index.nodes[node as usize].games;
        games.extend(
            list.iter().filter_map(|c| Some(GameAt { slice, mv: c.3, game: *number.get(&c.2)? })),
        );
    }
    index.nodes.par_iter_mut().for_each(|n| {
        n.positions.sort_by_key(|c| c.slice);
        n.moves.sort_by_key(|c| (c.mv, c.slice));
        n.games.sort_by_key(|g| (g.slice, g.game));
    });
    index
}

/// The PGN text of game `game` from its decompressed block `block`.
pub fn game_pgn(game: &GameRef, block: &[u8]) -> Option<String> {
    let bytes = block.get(game.start as usize..(game.start + game.len) as usize)?;
    Some(String::from_utf8_lossy(bytes).into_owned())
}

/// Decompresses a PGN block.
pub fn decompress(block: &[u8]) -> std::io::Result<Vec<u8>> {
    zstd::stream::decode_all(block)
}

/// Lichess's speed name of a packed speed (1 + [`Speed`](crate::games::filter::Speed) index).
pub fn speed_name(speed: u8) -> Option<&'static str> {
    SPEEDS.get(usize::from(speed).checked_sub(1)?).copied()
}

/// The packed speed (1 + [`Speed`](crate::games::filter::Speed) index) of a Lichess speed name.
pub fn speed_code(name: &str) -> Option<u8> {
    SPEEDS.iter().position(|s| *s == name).map(|i| i as u8 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::filter::Speed;

    #[test]
    fn slices_pack_and_unpack() {
        let s = Slice::new(2013, 1, 3, 7);
        assert_eq!((s.year(), s.month(), s.speed(), s.rating()), (2013, 1, 3, 7));
        assert_eq!(rating_group(999), 0);
        assert_eq!(rating_group(1000), 1);
        assert_eq!(rating_group(2499), 7);
        assert_eq!(rating_group(3000), 8);
        assert_eq!(speed_code("blitz"), Some(Speed::Blitz as u8 + 1));
        assert_eq!(speed_name(Speed::Correspondence as u8 + 1), Some("correspondence"));
    }

    #[test]
    fn pruning_in_stages_keeps_what_pruning_once_keeps() {
        let all: Candidates = (0..200u64)
            .map(|i| ((i * 7919 % 97) as u32, i * 104_729 % 1000, i, MoveKey(0)))
            .collect();
        let mut once = all.clone();
        prune(&mut once, 15, 8);
        for split in [1, 37, 100, 199] {
            let (mut a, mut b) = (all[..split].to_vec(), all[split..].to_vec());
            prune(&mut a, 15, 8);
            prune(&mut b, 15, 8);
            a.extend(b);
            prune(&mut a, 15, 8);
            assert_eq!(a, once, "split at {split}");
        }
    }

    #[test]
    fn game_text_stops_at_the_next_game() {
        let data = b"[Event \"a\"]\r\n[Site \"https://lichess.org/abcdefgh\"]\r\n\r\n1. e4 e5 1-0\r\n\r\n[Event \"b\"]\n\n1. d4 0-1\n";
        let text = game_text(data, 0);
        assert_eq!(text, "[Event \"a\"]\n[Site \"https://lichess.org/abcdefgh\"]\n\n1. e4 e5 1-0");
        let (r, _) = describe(&text, &GameTags::default(), Some(GameResult::WhiteWins));
        assert_eq!((r.id.as_str(), r.winner), ("abcdefgh", 1));
        let at = data.windows(11).position(|w| w == b"[Event \"b\"]").unwrap();
        let other = game_text(data, at);
        assert!(other.starts_with("[Event \"b\"]"), "{other}");
        let (r, _) = describe(&other, &GameTags::default(), Some(GameResult::Draw));
        assert_eq!(r.id.len(), 8);
        assert!(r.id.bytes().all(|b| b.is_ascii_alphanumeric()));
    }
}
