//! `GET /masters` and `GET /lichess`: a position in the Lichess opening explorer's JSON
//! shapes, so tools written for `explorer.lichess.ovh` can point at an okb build; and
//! `GET /masters/pgn/{id}`, a referenced game's PGN.
//!
//! Without filters, the counts and moves are the knowledge base's own (the tree's
//! counting rule), exactly as `GET /node/fen` reports them. With a store built with
//! `[explorer]` ([`crate::explorer_index`]), the answers also carry game references
//! (`topGames`, `recentGames`, a move's single `game`), and the filters `since`/`until`
//! (years for `/masters`, `YYYY-MM` months for `/lichess`), `speeds` and `ratings`
//! restrict every count to the matching games: a sum of the position's cells in the
//! matching slices. Filters on a store without the index are refused (400).
//!
//! Differences from Lichess, also stated in the OpenAPI document:
//! - a position's `white`/`draws`/`black` count the games that *reached* it (okb's
//!   counting rule: games ending there included, moves past the tree's `max_ply` not
//!   counted), where Lichess sums its moves; a move's counts are the same on both;
//! - `averageRating` is the mover's average over the games whose mover is rated,
//!   truncated as Lichess does;
//! - `/lichess` top games are the best-rated by the average of both ratings (Lichess
//!   first keeps the games of its two highest rating groups) and recent games the latest
//!   by date and time;
//! - `history` counts the games that reached the position each month, through the last
//!   month with games (Lichess leaves out its last month, which it may still be
//!   indexing; okb's index is complete);
//! - over-the-board games (no `TimeControl`) are indexed by year only: a month filter
//!   counts them in January, a speed or rating filter leaves them out;
//! - a legal position outside the knowledge base answers zero counts, as Lichess does for
//!   positions nobody played; when a position with zero counts lies deeper than every
//!   position the knowledge base counted games for (the tree counts to its `max_ply`),
//!   the answer also says so in
//!   `okbBeyondDepth`, a field Lichess does not send, so that zero is not read as "never
//!   played".

use std::collections::HashMap;

use serde::Serialize;

use crate::explorer_index::{GameRef, MoveCell, NO_GAME, NodeIndex, Slice};
use crate::games::stats::Outcomes;
use crate::graph::{Graph, Node};
use crate::position::MoveKey;

/// Moves listed when `moves` is not given (Lichess's default).
pub const DEFAULT_MOVES: usize = 12;
/// The most moves an answer lists (the OpenAPI document's maximum).
pub const MAX_MOVES: usize = 1000;
/// `/masters` top games: default and maximum (Lichess's).
pub const MASTERS_TOP_GAMES: usize = 15;
/// `/lichess` top games: default and maximum (Lichess's).
pub const LICHESS_TOP_GAMES: usize = 4;
/// `/lichess` recent games: default and maximum (Lichess's).
pub const LICHESS_RECENT_GAMES: (usize, usize) = (4, 8);

/// An opening as the explorer names it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ExplorerOpening {
    /// ECO code.
    pub eco: String,
    /// Full name.
    pub name: String,
}

/// A player of a referenced game.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Player {
    /// Name as the game's tag writes it.
    pub name: String,
    /// Rating (0 when unknown).
    pub rating: u32,
}

/// A referenced game.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ExplorerGame {
    /// Game id (`GET /masters/pgn/{id}`).
    pub id: String,
    /// `"white"`, `"black"`, or `null` for a draw.
    pub winner: Option<&'static str>,
    /// Speed (`/lichess` only, when known).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed: Option<&'static str>,
    /// `"rated"` or `"casual"` (`/lichess` only, when the game's Event says).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<&'static str>,
    /// White.
    pub white: Player,
    /// Black.
    pub black: Player,
    /// Year (0 when unknown).
    pub year: u32,
    /// `"YYYY-MM"`; `null` when unknown, on both endpoints, as Lichess's explorer writes
    /// it (clients read `game["month"]`).
    pub month: Option<String>,
}

/// A top or recent game: the move it played from the position, and the game.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct GameRow {
    /// The move in UCI.
    pub uci: String,
    /// The game.
    #[serde(flatten)]
    pub game: ExplorerGame,
}

/// One move of the answer.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ExplorerMove {
    /// The move in UCI.
    pub uci: String,
    /// The move in SAN.
    pub san: String,
    /// The mover's average rating (0 when unknown, as Lichess writes it).
    pub average_rating: u32,
    /// White wins after the move.
    pub white: u64,
    /// Draws after the move.
    pub draws: u64,
    /// Black wins after the move.
    pub black: u64,
    /// The game, when exactly one game played the move (needs the explorer index).
    pub game: Option<ExplorerGame>,
    /// The opening the move leads to, if the resulting position is named (own or inherited).
    pub opening: Option<ExplorerOpening>,
}

/// The whole answer.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ExplorerAnswer {
    /// White wins from the position.
    pub white: u64,
    /// Draws from the position.
    pub draws: u64,
    /// Black wins from the position.
    pub black: u64,
    /// Moves played from the position, most played first.
    pub moves: Vec<ExplorerMove>,
    /// The best-rated games that reached the position (needs the explorer index).
    pub top_games: Vec<GameRow>,
    /// `/lichess` only: the latest games that reached it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recent_games: Option<Vec<GameRow>>,
    /// The position's opening as Lichess's explorer names it: the Lichess taxonomy's name
    /// of the position, else of the last position along the asked line (`fen`, then
    /// each move of `play`) that the taxonomy names, else none. Never an inherited or
    /// SCID name: the start position has none.
    pub opening: Option<ExplorerOpening>,
    /// `/lichess` with `history=true`: the admitted games per month.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<HistoryMonth>>,
    /// okb's own: the position's counts are zero and it is deeper than every position
    /// the knowledge base counted games for, so they say nothing of how often it was played.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub okb_beyond_depth: Option<BeyondDepth>,
}

/// A position deeper than the knowledge base counted: its ply, and the deepest ply with
/// counted games.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct BeyondDepth {
    /// The position's ply (half-moves from the start, from its move number and side).
    pub ply: u32,
    /// The ply of the deepest position the knowledge base counted games for.
    pub counted_to_ply: u32,
}

impl BeyondDepth {
    /// Some when `pos` lies deeper than `deepest`, the deepest ply with counted games.
    pub fn of(pos: &shakmaty::Chess, deepest: u32) -> Option<BeyondDepth> {
        use shakmaty::Position;
        let black = u32::from(pos.turn() == shakmaty::Color::Black);
        let ply = (pos.fullmoves().get() - 1).saturating_mul(2) + black;
        (ply > deepest).then_some(BeyondDepth { ply, counted_to_ply: deepest })
    }
}

/// One month of `history`: the games that reached the position that month.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct HistoryMonth {
    /// `YYYY-MM`.
    pub month: String,
    /// White wins.
    pub white: u64,
    /// Draws.
    pub draws: u64,
    /// Black wins.
    pub black: u64,
}

/// Which games count: every part is a set of slices; `None` admits all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    /// Years, inclusive (`/masters` since/until).
    pub years: Option<(u16, u16)>,
    /// Months as `year * 12 + month - 1`, inclusive (`/lichess` since/until).
    pub months: Option<(u32, u32)>,
    /// Bit `1 << code` per admitted speed code (1 + speed index).
    pub speeds: Option<u16>,
    /// Bit `1 << code` per admitted rating code (1 + group index).
    pub ratings: Option<u16>,
}

impl Filter {
    /// Whether it admits every game.
    pub fn is_all(&self) -> bool {
        *self == Filter::default()
    }

    /// Whether games of `slice` count.
    pub fn admits(&self, slice: Slice) -> bool {
        let year = slice.year();
        if let Some((a, b)) = self.years
            && (year == 0 || year < a || year > b)
        {
            return false;
        }
        if let Some((a, b)) = self.months {
            let m = u32::from(year) * 12 + u32::from(slice.month().max(1)) - 1;
            if year == 0 || m < a || m > b {
                return false;
            }
        }
        if let Some(mask) = self.speeds
            && (slice.speed() == 0 || mask & (1 << slice.speed()) == 0)
        {
            return false;
        }
        if let Some(mask) = self.ratings
            && (slice.rating() == 0 || mask & (1 << slice.rating()) == 0)
        {
            return false;
        }
        true
    }
}

/// What an answer lists.
#[derive(Clone, Debug)]
pub struct Query {
    /// Which games count.
    pub filter: Filter,
    /// Most moves.
    pub moves: usize,
    /// Most top games.
    pub top_games: usize,
    /// Most recent games (`/lichess`); `None` on `/masters`.
    pub recent_games: Option<usize>,
    /// Whether to answer `history` (`/lichess`), from `since` when given.
    pub history: bool,
}

/// One node's part of the index, ready to answer.
struct NodeData {
    /// Cells, and kept games sorted best rated first (sum of ratings, then game order).
    index: NodeIndex,
    /// The move key of each graph edge of the node (graph order).
    keys: Vec<MoveKey>,
    /// Positions in `index.games`, latest first (then game order).
    recent: Vec<u32>,
}

impl NodeData {
    /// Node `node`'s `index` ready to answer, its games' references in `games`.
    fn new(node: &Node, mut index: NodeIndex, games: &dyn Games) -> Result<NodeData, String> {
        let pos = crate::position::parse_fen(&node.epd).map_err(|e| e.to_string())?;
        let keys = node
            .children
            .iter()
            .map(|e| {
                e.uci
                    .parse::<shakmaty::uci::UciMove>()
                    .ok()
                    .and_then(|u| u.to_move(&pos).ok())
                    .map_or(MoveKey(u16::MAX), |m| MoveKey::new(&m))
            })
            .collect();
        // Answers walk these orders and stop after a few admitted games.
        let score = |g: &crate::explorer_index::GameAt| games.game(g.game).score();
        index.games.sort_by(|a, b| score(b).cmp(&score(a)).then(a.game.cmp(&b.game)));
        let played = |i: &u32| {
            let g = &index.games[*i as usize];
            (std::cmp::Reverse(games.game(g.game).played), g.game)
        };
        let mut recent: Vec<u32> = (0..index.games.len() as u32).collect();
        recent.sort_by_key(played);
        Ok(NodeData { index, keys, recent })
    }
}

/// The referenced games an answer reads, by index: the whole index's, held in memory,
/// or the few one node's answer names, read from the store file.
pub trait Games {
    /// Game `index`; every index a node's data names is there.
    fn game(&self, index: u32) -> &GameRef;
}

impl Games for Vec<GameRef> {
    fn game(&self, index: u32) -> &GameRef {
        &self[index as usize]
    }
}

impl Games for HashMap<u32, GameRef> {
    fn game(&self, index: u32) -> &GameRef {
        &self[&index]
    }
}

/// A node's part of the index with the games it references: what an answer reads.
#[derive(Clone, Copy)]
pub struct NodeExplorer<'a> {
    games: &'a dyn Games,
    data: &'a NodeData,
}

/// The explorer index as the server keeps it.
pub struct Explorer {
    /// Per graph node.
    nodes: Vec<Option<NodeData>>,
    games: Vec<GameRef>,
    by_id: HashMap<String, u32>,
    pgn: crate::store::explorer::PgnReader,
}

impl Explorer {
    /// The index `loaded` over `graph`, PGN texts read from the store at `path`.
    pub fn new(
        graph: &Graph,
        loaded: crate::store::explorer::Loaded,
        path: &std::path::Path,
    ) -> Result<Explorer, crate::store::StoreError> {
        let mut nodes: Vec<Option<NodeData>> = Vec::new();
        nodes.resize_with(graph.nodes.len(), || None);
        let games = &loaded.games;
        for (id, index) in loaded.nodes {
            let Some(at) = graph.find_id(&id) else { continue };
            let data = NodeData::new(graph.node(at), index, games).map_err(|e| {
                crate::store::StoreError::Corrupt(format!("{}: {e}", path.display()))
            })?;
            nodes[at as usize] = Some(data);
        }
        let mut by_id = HashMap::with_capacity(loaded.games.len());
        for (i, g) in loaded.games.iter().enumerate() {
            by_id.entry(g.id.clone()).or_insert(i as u32);
        }
        Ok(Explorer {
            nodes,
            games: loaded.games,
            by_id,
            pgn: crate::store::explorer::PgnReader::open(path)?,
        })
    }

    /// Graph node `index`'s part of the index, if it has one.
    pub fn at(&self, index: u32) -> Option<NodeExplorer<'_>> {
        let data = self.nodes.get(index as usize)?.as_ref()?;
        Some(NodeExplorer { games: &self.games, data })
    }

    /// The PGN of the game with id `id`: `Ok(None)` when no game has it.
    pub fn pgn(&self, id: &str) -> Result<Option<String>, crate::store::StoreError> {
        match self.by_id.get(id) {
            Some(&i) => self.pgn.pgn(&self.games[i as usize]),
            None => Ok(None),
        }
    }

    /// An id of a referenced game (for the OpenAPI document's examples).
    pub fn some_id(&self) -> Option<&str> {
        self.games.first().map(|g| g.id.as_str())
    }
}

/// One node's part of the index read from a store file, with the games it references.
pub struct ReadNode {
    data: NodeData,
    games: HashMap<u32, GameRef>,
}

impl ReadNode {
    /// Node `node`'s `index` (its moves among `node.children`), with the games it names
    /// read by `read_games`.
    pub fn new(
        node: &Node,
        index: NodeIndex,
        read_games: impl FnOnce(Vec<u32>) -> Result<HashMap<u32, GameRef>, crate::store::StoreError>,
    ) -> Result<ReadNode, crate::store::StoreError> {
        let kept = index.games.iter().map(|g| g.game);
        let singles = index.moves.iter().map(|c| c.single).filter(|&g| g != NO_GAME);
        let games = read_games(kept.chain(singles).collect())?;
        let data = NodeData::new(node, index, &games).map_err(|e| {
            crate::store::StoreError::Corrupt(format!("explorer node {}: {e}", node.node_id))
        })?;
        Ok(ReadNode { data, games })
    }

    /// What an answer reads.
    pub fn view(&self) -> NodeExplorer<'_> {
        NodeExplorer { games: &self.games, data: &self.data }
    }
}

/// A referenced game as the explorer answers list it (`/lichess` adds speed and mode).
fn explorer_game(g: &GameRef, lichess: bool) -> ExplorerGame {
    ExplorerGame {
        id: g.id.clone(),
        winner: match g.winner {
            1 => Some("white"),
            2 => Some("black"),
            _ => None,
        },
        speed: if lichess { crate::explorer_index::speed_name(g.speed) } else { None },
        mode: if lichess { crate::explorer_index::mode_name(g.mode) } else { None },
        white: Player { name: g.white.clone(), rating: u32::from(g.white_rating) },
        black: Player { name: g.black.clone(), rating: u32::from(g.black_rating) },
        year: u32::from(g.year),
        month: (g.year > 0 && g.month > 0).then(|| format!("{:04}-{:02}", g.year, g.month)),
    }
}

/// A move's `opening`, as Lichess gives it: the position's own name in the Lichess
/// taxonomy, or none (a SCID or inherited name is one Lichess never shows there).
pub fn move_opening(node: &Node) -> Option<ExplorerOpening> {
    let entry = node.entry.as_ref().filter(|e| e.src == "eco_tsv")?;
    Some(ExplorerOpening { eco: entry.eco.clone(), name: entry.name.clone() })
}

/// A move's sums over the admitted cells.
#[derive(Default, Clone, Copy)]
struct MoveSum {
    games: Outcomes,
    rated: u64,
    rating_sum: u64,
    single: u32,
}

impl MoveSum {
    /// The mover's average rating, truncated as Lichess truncates it (0: none rated).
    fn average_rating(&self) -> u32 {
        self.rating_sum.checked_div(self.rated).map_or(0, |a| a as u32)
    }
}

/// The sums of each move of `cells` (sorted by move) over the slices `filter` admits.
fn move_sums(cells: &[MoveCell], filter: &Filter) -> Vec<(MoveKey, MoveSum)> {
    let mut out: Vec<(MoveKey, MoveSum)> = Vec::new();
    for c in cells.iter().filter(|c| filter.admits(c.slice)) {
        if out.last().is_none_or(|l| l.0 != c.mv) {
            out.push((c.mv, MoveSum { single: NO_GAME, ..Default::default() }));
        }
        let s = &mut out.last_mut().expect("pushed above").1;
        s.games.add(&Outcomes {
            white: c.white.into(),
            draws: c.draws.into(),
            black: c.black.into(),
        });
        s.rated += u64::from(c.rated);
        s.rating_sum += c.rating_sum;
        if c.games() == 1 && c.single != NO_GAME {
            s.single = c.single;
        }
    }
    out
}

/// The answer for node `index` (`None`: a position outside the knowledge base), named
/// `opening` (see [`ExplorerAnswer::opening`]).
pub fn answer(
    graph: &Graph,
    explorer: Option<NodeExplorer<'_>>,
    index: Option<u32>,
    opening: Option<ExplorerOpening>,
    q: &Query,
) -> ExplorerAnswer {
    let empty = ExplorerAnswer {
        white: 0,
        draws: 0,
        black: 0,
        moves: Vec::new(),
        top_games: Vec::new(),
        recent_games: q.recent_games.map(|_| Vec::new()),
        opening,
        history: q.history.then(Vec::new),
        okb_beyond_depth: None,
    };
    let Some(index) = index else { return empty };
    let node = graph.node(index);
    let data = explorer;
    let sums = Sums {
        data,
        sums: data.map(|x| move_sums(&x.data.index.moves, &q.filter)).unwrap_or_default(),
        lichess: q.recent_games.is_some(),
    };
    let mut answer = empty;
    if q.filter.is_all() {
        (answer.white, answer.draws, answer.black) =
            (node.games.white, node.games.draws, node.games.black);
        answer.moves = sums.all_moves(graph, node, q.moves);
    } else if let Some(NodeExplorer { data: d, .. }) = data {
        for c in d.index.positions.iter().filter(|c| q.filter.admits(c.slice)) {
            answer.white += u64::from(c.white);
            answer.draws += u64::from(c.draws);
            answer.black += u64::from(c.black);
        }
        answer.moves = sums.filtered_moves(graph, node, &d.keys, q.moves);
    }
    if let Some(x) = data
        && (q.top_games > 0 || q.recent_games.is_some_and(|n| n > 0))
    {
        (answer.top_games, answer.recent_games) = game_rows(node, x, q);
    }
    if let (true, Some(x)) = (q.history, data) {
        answer.history = Some(history(&x.data.index.positions, &q.filter));
    }
    answer
}

/// The admitted games that reached a position, per month (`year * 12 + month - 1`; a
/// game without a month counts in January of its year, as the month filters count it;
/// one without a year in none), from `since` (else the first month with games) through
/// the last month with games, months without games included as zeros (as Lichess).
fn history(cells: &[crate::explorer_index::PosCell], filter: &Filter) -> Vec<HistoryMonth> {
    let mut by_month: std::collections::BTreeMap<u32, Outcomes> = std::collections::BTreeMap::new();
    for c in cells.iter().filter(|c| filter.admits(c.slice) && c.slice.year() > 0) {
        let month = u32::from(c.slice.year()) * 12 + u32::from(c.slice.month().max(1)) - 1;
        by_month.entry(month).or_default().add(&Outcomes {
            white: c.white.into(),
            draws: c.draws.into(),
            black: c.black.into(),
        });
    }
    let Some((&last, _)) = by_month.last_key_value() else { return Vec::new() };
    let first = filter
        .months
        .map_or_else(|| *by_month.keys().next().expect("not empty"), |(since, _)| since);
    (first..=last)
        .map(|m| {
            let o = by_month.get(&m).copied().unwrap_or_default();
            HistoryMonth {
                month: format!("{:04}-{:02}", m / 12, m % 12 + 1),
                white: o.white,
                draws: o.draws,
                black: o.black,
            }
        })
        .collect()
}

/// A node's index data (when the store has the index) and its moves' sums over the
/// admitted slices.
struct Sums<'e> {
    data: Option<NodeExplorer<'e>>,
    sums: Vec<(MoveKey, MoveSum)>,
    lichess: bool,
}

impl Sums<'_> {
    fn of(&self, key: MoveKey) -> Option<MoveSum> {
        self.sums.binary_search_by_key(&key, |s| s.0).ok().map(|i| self.sums[i].1)
    }

    /// The move's only game, when exactly one game played it.
    fn single(&self, s: &MoveSum) -> Option<ExplorerGame> {
        self.data
            .filter(|_| s.games.games() == 1 && s.single != NO_GAME)
            .map(|x| explorer_game(x.games.game(s.single), self.lichess))
    }

    /// Every game counts: the graph's own counts, in its order (most played first).
    fn all_moves(&self, graph: &Graph, node: &Node, most: usize) -> Vec<ExplorerMove> {
        node.children
            .iter()
            .enumerate()
            .filter(|(_, e)| e.games.games() > 0)
            .take(most)
            .map(|(i, e)| ExplorerMove {
                uci: e.uci.clone(),
                san: e.san.clone(),
                // Lichess truncates: from the index's exact sums when the store has them.
                average_rating: match self.data.and_then(|x| self.of(x.data.keys[i])) {
                    Some(s) => s.average_rating(),
                    None => e.avg_rating.map_or(0, |r| r.floor() as u32),
                },
                white: e.games.white,
                draws: e.games.draws,
                black: e.games.black,
                game: self
                    .data
                    .and_then(|x| self.of(x.data.keys[i]))
                    .as_ref()
                    .and_then(|s| self.single(s)),
                opening: move_opening(graph.node(e.child)),
            })
            .collect()
    }

    /// A filter: each move's sums over the admitted slices, most played first.
    fn filtered_moves(
        &self,
        graph: &Graph,
        node: &Node,
        keys: &[MoveKey],
        most: usize,
    ) -> Vec<ExplorerMove> {
        let mut moves: Vec<(u64, ExplorerMove)> = node
            .children
            .iter()
            .zip(keys)
            .filter_map(|(e, &key)| {
                let s = self.of(key).filter(|s| s.games.games() > 0)?;
                let average_rating = s.average_rating();
                let game = self.single(&s);
                let (white, draws, black) = (s.games.white, s.games.draws, s.games.black);
                let mv = ExplorerMove {
                    uci: e.uci.clone(),
                    san: e.san.clone(),
                    average_rating,
                    white,
                    draws,
                    black,
                    game,
                    opening: move_opening(graph.node(e.child)),
                };
                Some((s.games.games(), mv))
            })
            .collect();
        moves.sort_by_key(|m| std::cmp::Reverse(m.0));
        moves.into_iter().take(most).map(|m| m.1).collect()
    }
}

/// The top games and (`/lichess`) recent games at a node, among the admitted ones.
fn game_rows(node: &Node, x: NodeExplorer<'_>, q: &Query) -> (Vec<GameRow>, Option<Vec<GameRow>>) {
    let d = x.data;
    let lichess = q.recent_games.is_some();
    let pos = crate::position::parse_fen(&node.epd).ok();
    let row = |g: &crate::explorer_index::GameAt| GameRow {
        uci: pos
            .as_ref()
            .and_then(|p| g.mv.to_move(p))
            .map_or_else(String::new, |m| crate::position::uci(&m)),
        game: explorer_game(x.games.game(g.game), lichess),
    };
    // Both orders are precomputed: take admitted games until enough distinct ids.
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut take = |order: &mut dyn Iterator<Item = &crate::explorer_index::GameAt>, n: usize| {
        let mut rows = Vec::new();
        for g in order.filter(|g| q.filter.admits(g.slice)) {
            if rows.len() >= n {
                break;
            }
            if seen.insert(x.games.game(g.game).id.as_str()) {
                rows.push(row(g));
            }
        }
        rows
    };
    let top = take(&mut d.index.games.iter(), q.top_games);
    let recent =
        q.recent_games.map(|n| take(&mut d.recent.iter().map(|&i| &d.index.games[i as usize]), n));
    (top, recent)
}
