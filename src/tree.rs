//! Assembling the knowledge base's node graph: one node per position (Phase 6's rule),
//! every parent edge kept, from the ECO skeleton's lines and the game statistics.
//!
//! Later phases only add fields to existing nodes (engine evaluations, structures); they
//! never add or remove nodes, so node indices are stable within one build.

use serde::{Deserialize, Serialize};
use shakmaty::{Chess, Position};

use crate::eco::EcoSkeleton;
use crate::games::stats::{GameStats, MoveStats, Outcomes};
use crate::position::{self, KeyMap, MoveKey, PositionKey};

/// Parameters of tree assembly (`[tree]` in pipeline.toml).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TreeParams {
    /// Deepest ply of the tree (the start position is ply 0).
    pub max_ply: u16,
    /// Moves played in fewer games are pruned, unless they belong to an ECO line.
    pub min_games: u64,
}

impl Default for TreeParams {
    fn default() -> Self {
        TreeParams { max_ply: 15, min_games: 50 }
    }
}

/// The opening a node belongs to: its own entry's, or its nearest named ancestor's.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Opening {
    /// ECO code.
    pub eco: String,
    /// Full name (`Sicilian Defense: Najdorf Variation`).
    pub name: String,
    /// Where the name comes from (`eco_tsv`, `scid`, `pgn_extract`, `interpolated`).
    pub src: String,
    /// Whether the node has an entry of its own (false: inherited from an ancestor).
    pub own: bool,
}

/// One position of the knowledge base.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// Position identity (see [`position::epd`]).
    pub epd: String,
    /// Full FEN reached by the canonical line.
    pub fen: String,
    /// The canonical line's moves: the entry's own line, else the most-played path.
    pub line: Vec<MoveKey>,
    /// The canonical line as numbered SAN movetext.
    pub movetext: String,
    /// SAN of the canonical line's last move (`None` for the start position).
    pub pgn_move: Option<String>,
    /// Index of the skeleton entry on this position in [`EcoSkeleton::entries`], if any.
    pub entry: Option<u32>,
    /// Opening name and code, own or inherited.
    pub opening: Option<Opening>,
    /// Game results over the games that reached the position.
    pub stats: Option<Outcomes>,
    /// Outgoing edges, sorted by game count descending then SAN.
    pub children: Vec<Edge>,
    /// Indices of nodes with an edge into this one, sorted.
    pub parents: Vec<u32>,
}

impl Node {
    /// Games that reached the position (0 without game data).
    pub fn game_count(&self) -> u64 {
        self.stats.map_or(0, |s| s.games())
    }

    /// A node with two or more children.
    pub fn is_branching(&self) -> bool {
        self.children.len() >= 2
    }
}

/// A move from one node to another.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edge {
    /// Index of the child node.
    pub child: u32,
    /// The move, packed.
    pub key: MoveKey,
    /// The move in SAN.
    pub san: String,
    /// The move in UCI.
    pub uci: String,
    /// Statistics of the games that played it, if any.
    pub stats: Option<MoveStats>,
}

/// The node graph.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Tree {
    /// Nodes sorted by identity.
    pub nodes: Vec<Node>,
    /// Index of the start position.
    pub root: u32,
}

impl Tree {
    /// Index of the node on `epd`.
    pub fn find(&self, epd: &str) -> Option<u32> {
        self.nodes.binary_search_by(|n| n.epd.as_str().cmp(epd)).ok().map(|i| i as u32)
    }

    /// Pairs of distinct parents whose moves reach the same node: `(node, parent_a, parent_b)`
    /// with `parent_a < parent_b`, each pair once.
    pub fn transpositions(&self) -> Vec<(u32, u32, u32)> {
        let mut out = Vec::new();
        for (index, node) in self.nodes.iter().enumerate() {
            for (i, a) in node.parents.iter().enumerate() {
                for b in &node.parents[i + 1..] {
                    out.push((index as u32, *a, *b));
                }
            }
        }
        out
    }

    /// Number of edges.
    pub fn edge_count(&self) -> usize {
        self.nodes.iter().map(|n| n.children.len()).sum()
    }
}

struct Pending {
    pos: Chess,
    ply: u16,
    edges: PendingEdges,
    /// Index of the skeleton entry on this position, if any.
    entry: Option<u32>,
    /// Whether the walk of game moves ([`add_game_moves`]) has queued the position: kept
    /// here rather than in a set of its own, which would cost a second lookup per move.
    queued: bool,
}

impl Pending {
    fn new(pos: Chess, ply: u16) -> Pending {
        Pending { pos, ply, edges: PendingEdges::default(), entry: None, queued: false }
    }
}

/// A pending node's moves, sorted by move: a node has a move or two, so a sorted vector
/// is smaller and faster than a map (one allocation instead of a map node per position).
#[derive(Default)]
struct PendingEdges(Vec<(MoveKey, PositionKey, Option<MoveStats>)>);

impl PendingEdges {
    fn slot(&self, m: MoveKey) -> Result<usize, usize> {
        self.0.binary_search_by_key(&m, |e| e.0)
    }

    fn contains(&self, m: MoveKey) -> bool {
        self.slot(m).is_ok()
    }

    /// Adds the move unless it is there already.
    fn add(&mut self, m: MoveKey, child: PositionKey) {
        if let Err(at) = self.slot(m) {
            self.0.insert(at, (m, child, None));
        }
    }

    /// Adds the move, or replaces what it had, with `stats`.
    fn set(&mut self, m: MoveKey, child: PositionKey, stats: MoveStats) {
        match self.slot(m) {
            Ok(at) => self.0[at] = (m, child, Some(stats)),
            Err(at) => self.0.insert(at, (m, child, Some(stats))),
        }
    }
}

/// Builds the tree: every position on an ECO line, and every position reached within
/// `max_ply` by moves played in at least `min_games` games.
pub fn build(skeleton: &EcoSkeleton, games: Option<&GameStats>, params: &TreeParams) -> Tree {
    let (pending, root_key) = skeleton_pending(skeleton);
    let (nodes, root, _) = frozen(pending, root_key, skeleton, games, params);
    linked(nodes, root, skeleton)
}

/// [`build`] with statistics that `games` reads once the skeleton's positions are known,
/// keeping only what [`Needed`] says the tree can use: a corpus of any size then costs
/// the tree only the positions it keeps.
pub fn build_streaming<E>(
    skeleton: &EcoSkeleton,
    params: &TreeParams,
    games: impl FnOnce(&Needed<'_>) -> Result<GameStats, E>,
) -> Result<Built, E> {
    let (pending, root_key) = skeleton_pending(skeleton);
    let mut cut_skeleton: Vec<u128> =
        pending.keys().map(|k| crate::games::state::codec::state_key(*k)).collect();
    cut_skeleton.sort_unstable();
    cut_skeleton.dedup();
    let stats = games(&Needed { skeleton: &pending, cut_skeleton, min_games: params.min_games })?;
    let (nodes, root, shared_keys) = frozen(pending, root_key, skeleton, Some(&stats), params);
    // The statistics are in the nodes now: their memory goes to the lines.
    drop(stats);
    Ok(Built { tree: linked(nodes, root, skeleton), shared_keys })
}

/// A tree built from statistics ([`build_streaming`]), with the positions whose keys the
/// statistics could not tell apart.
pub struct Built {
    /// The tree.
    pub tree: Tree,
    /// Pairs of nodes (indexes, the lower first, sorted) whose keys agree on the bits the
    /// statistics keep (`GameStats::key_mask`: a counts state keeps 72) while the
    /// statistics hold that key: both were given its counts, the sum of both positions'.
    pub shared_keys: Vec<(u32, u32)>,
}

/// Which game statistics the tree can use (the pruning rule, applied before statistics
/// are kept): those of skeleton positions and moves from them, whatever their count, and
/// any other played in at least `min_games` games. A position the tree reaches by a move
/// it keeps was reached by every game that played the move, so its own count passes too.
pub struct Needed<'a> {
    skeleton: &'a KeyMap<PositionKey, Pending>,
    /// The skeleton's keys as a counts state keys them (`games::state::codec::state_key`),
    /// sorted.
    cut_skeleton: Vec<u128>,
    min_games: u64,
}

impl Needed<'_> {
    /// Whether to keep a statistic of position `key` (its own, or a move's from it) over
    /// `games` games.
    pub fn keeps(&self, key: PositionKey, games: u64) -> bool {
        games >= self.min_games || self.skeleton.contains_key(&key)
    }

    /// [`Needed::keeps`] for keys cut to a counts state's 72 bits.
    pub fn of_state(&self) -> crate::games::state::Wanted<'_> {
        crate::games::state::Wanted { min_games: self.min_games, pinned: &self.cut_skeleton }
    }
}

/// The skeleton's positions linked by every legal move between them, with the root's key.
fn skeleton_pending(skeleton: &EcoSkeleton) -> (KeyMap<PositionKey, Pending>, PositionKey) {
    // Sized for the skeleton; games add positions beyond it.
    let mut pending: KeyMap<PositionKey, Pending> =
        KeyMap::with_capacity_and_hasher(skeleton.entries.len() + 1, Default::default());
    let root = Chess::default();
    let root_key = position::key(&root);
    pending.insert(root_key, Pending::new(root, 0));
    add_skeleton(&mut pending, skeleton);
    for (parent, m, child) in skeleton_links(&pending) {
        pending.get_mut(&parent).expect("listed by skeleton_links").edges.add(m, child);
    }
    (pending, root_key)
}

/// The nodes from the skeleton's pending positions and the game statistics, with their
/// counts and child edges, the root's index and the nodes sharing a statistics key
/// ([`Built::shared_keys`]). The pending positions and the maps between keys and nodes
/// are dropped on return, before [`linked`] gives every node its line: at millions of
/// nodes they were a third of the tree's peak memory.
fn frozen(
    mut pending: KeyMap<PositionKey, Pending>,
    root_key: PositionKey,
    skeleton: &EcoSkeleton,
    games: Option<&GameStats>,
    params: &TreeParams,
) -> (Vec<Node>, u32, Vec<(u32, u32)>) {
    if let Some(games) = games {
        add_game_moves(&mut pending, root_key, games, params);
    }
    let keyed = identity_order(&pending, skeleton);
    let index_of: KeyMap<PositionKey, u32> =
        keyed.iter().enumerate().map(|(i, (_, k))| (*k, i as u32)).collect();
    let shared = games.map_or_else(Vec::new, |games| shared_keys(&index_of, games));
    let nodes = frozen_nodes(&pending, &keyed, &index_of, skeleton, games);
    (nodes, index_of[&root_key], shared)
}

/// The tree of `nodes`: their parents linked, and their lines and inherited openings.
fn linked(mut nodes: Vec<Node>, root: u32, skeleton: &EcoSkeleton) -> Tree {
    link_parents(&mut nodes);
    assign_lines(&mut nodes, root, skeleton);
    Tree { nodes, root }
}

/// The pairs of nodes (see [`Built::shared_keys`]) whose keys agree under
/// `games.key_mask` on a key the statistics hold. Whole keys never agree: nothing to do.
fn shared_keys(index_of: &KeyMap<PositionKey, u32>, games: &GameStats) -> Vec<(u32, u32)> {
    if games.key_mask == u128::MAX {
        return Vec::new();
    }
    let mut masked: Vec<(u128, u32)> =
        index_of.iter().map(|(key, &node)| (key.0 & games.key_mask, node)).collect();
    masked.sort_unstable();
    let held = |key: u128| {
        let key = PositionKey(key);
        games.position(key).is_some() || !games.moves_from(key).is_empty()
    };
    let mut pairs = Vec::new();
    for run in masked.chunk_by(|a, b| a.0 == b.0).filter(|run| run.len() > 1 && held(run[0].0)) {
        for (n, a) in run.iter().enumerate() {
            pairs.extend(run[n + 1..].iter().map(|b| (a.1.min(b.1), a.1.max(b.1))));
        }
    }
    pairs.sort_unstable();
    pairs
}

/// Every skeleton position is a node, whatever its counts and depth. Interpolation makes
/// every prefix of a named line an entry; where it is off, the missing prefix positions
/// are added by replaying the line.
fn add_skeleton(pending: &mut KeyMap<PositionKey, Pending>, skeleton: &EcoSkeleton) {
    let entry_positions = entry_positions(skeleton);
    for (index, (entry, pos)) in skeleton.entries.iter().zip(entry_positions).enumerate() {
        let ply = entry.moves.len() as u16;
        pending.entry(position::key(&pos)).or_insert_with(|| Pending::new(pos, ply)).entry =
            Some(index as u32);
        if entry.from.is_none() && !entry.moves.is_empty() {
            let mut pos = Chess::default();
            for (ply, m) in entry.moves.iter().enumerate() {
                let mv = m.to_move(&pos).expect("skeleton lines are legal");
                pos.play_unchecked(mv);
                let key = position::key(&pos);
                pending.entry(key).or_insert_with(|| Pending::new(pos.clone(), ply as u16 + 1));
            }
        }
    }
}

/// Transpositions inside the skeleton: a legal move between two skeleton positions is an
/// edge even when no single named line plays it (1. d4 Nf6 2. c4 e6 3. Nc3 d5 reaches
/// the position named by 1. d4 d5 2. c4 e6 3. Nc3 Nf6).
fn skeleton_links(
    pending: &KeyMap<PositionKey, Pending>,
) -> Vec<(PositionKey, MoveKey, PositionKey)> {
    use rayon::prelude::*;
    let positions: Vec<(&PositionKey, &Pending)> = pending.iter().collect();
    // Most moves lead nowhere known, and the occupied squares after a move say so for a
    // fraction of the cost of the position's key.
    let occupancies =
        OccupancyFilter::new(positions.iter().map(|(_, p)| p.pos.board().occupied().0));
    positions
        .par_iter()
        .flat_map_iter(|(key, p)| {
            let mut found = Vec::new();
            let occupied = p.pos.board().occupied();
            for m in p.pos.legal_moves() {
                if occupied_after(occupied, &m).is_some_and(|after| !occupancies.may_contain(after))
                {
                    continue;
                }
                let child_key = position::child_key(&p.pos, **key, &m);
                if pending.contains_key(&child_key) {
                    found.push((**key, MoveKey::new(&m), child_key));
                }
            }
            found
        })
        .collect()
}

/// Game moves: breadth-first from the root, so a position's ply is its shortest distance.
/// Moves below `min_games` are pruned unless the skeleton has them; skeleton children are
/// walked too, so game statistics below them attach.
fn add_game_moves(
    pending: &mut KeyMap<PositionKey, Pending>,
    root_key: PositionKey,
    games: &GameStats,
    params: &TreeParams,
) {
    // Sized for the positions the games keep, about the nodes they add: growing a map
    // of a few hundred thousand positions rehashes it a dozen times, each into fresh memory.
    pending.reserve(games.positions.len().saturating_sub(pending.len()));
    let moves = games.move_index();
    let mut frontier = std::collections::VecDeque::from([root_key]);
    pending.get_mut(&root_key).expect("the root is pending").queued = true;
    while let Some(key) = frontier.pop_front() {
        let (pos, ply, mut edges) = {
            let p = pending.get_mut(&key).expect("walked positions are pending");
            (p.pos.clone(), p.ply, std::mem::take(&mut p.edges))
        };
        if ply >= params.max_ply {
            pending.get_mut(&key).expect("walked positions are pending").edges = edges;
            continue;
        }
        // The position's edges are worked on outside the map, put back once: a move never
        // leads back to its own position (the side to move changes).
        for (_, m, stats) in moves.moves_from(key) {
            let in_skeleton = edges.contains(*m);
            if stats.outcomes.games() < params.min_games && !in_skeleton {
                continue;
            }
            let Some(mv) = m.to_move(&pos) else { continue };
            // The child's key from the parent's, and its position only when it is new:
            // most children are, but skeleton and transposed ones are pending already.
            let child = position::child_key(&pos, key, &mv);
            edges.set(*m, child, *stats);
            let node = pending.entry(child).or_insert_with(|| {
                let mut child_pos = pos.clone();
                child_pos.play_unchecked(mv);
                Pending::new(child_pos, ply + 1)
            });
            // A skeleton position reached earlier by games than by its own line.
            node.ply = node.ply.min(ply + 1);
            if !std::mem::replace(&mut node.queued, true) {
                frontier.push_back(child);
            }
        }
        // Skeleton children are walked too, so game statistics below them attach.
        for (_, child, _) in &edges.0 {
            let node = pending.get_mut(child).expect("edges lead to pending positions");
            if !std::mem::replace(&mut node.queued, true) {
                frontier.push_back(*child);
            }
        }
        pending.get_mut(&key).expect("walked positions are pending").edges = edges;
    }
}

/// The nodes in identity order with their openings, counts and child edges (most played
/// first); lines and parents are filled in afterwards.
fn frozen_nodes(
    pending: &KeyMap<PositionKey, Pending>,
    keyed: &[(std::borrow::Cow<'_, str>, PositionKey)],
    index_of: &KeyMap<PositionKey, u32>,
    skeleton: &EcoSkeleton,
    games: Option<&GameStats>,
) -> Vec<Node> {
    use rayon::prelude::*;
    keyed
        .par_iter()
        .map(|(epd, key)| {
            let p = &pending[key];
            let own = p.entry.map(|i| &skeleton.entries[i as usize]);
            let mut children: Vec<Edge> = p
                .edges
                .0
                .iter()
                .map(|(m, child, stats)| edge(pending, p, *m, child, *stats, index_of, skeleton))
                .collect();
            children.sort_by(|a, b| {
                let ga = a.stats.map_or(0, |s| s.outcomes.games());
                let gb = b.stats.map_or(0, |s| s.outcomes.games());
                gb.cmp(&ga).then_with(|| a.san.cmp(&b.san))
            });
            Node {
                epd: epd.to_string(),
                fen: String::new(),
                line: Vec::new(),
                movetext: String::new(),
                pgn_move: None,
                opening: own.map(|e| Opening {
                    eco: e.eco.clone(),
                    name: e.name.clone(),
                    src: e.src.clone(),
                    own: true,
                }),
                entry: p.entry,
                stats: games.and_then(|g| g.position(*key).copied()),
                children,
                parents: Vec::new(),
            }
        })
        .collect()
}

/// The edge from pending position `p` by move `m` to `child`.
fn edge(
    pending: &KeyMap<PositionKey, Pending>,
    p: &Pending,
    m: MoveKey,
    child: &PositionKey,
    stats: Option<MoveStats>,
    index_of: &KeyMap<PositionKey, u32>,
    skeleton: &EcoSkeleton,
) -> Edge {
    let mv = m.to_move(&p.pos).expect("edges were played legally");
    // The move that ends the child's own line from this node is already written out in
    // the child's movetext (SAN is the slow part).
    let san = pending[child]
        .entry
        .map(|e| &skeleton.entries[e as usize])
        .filter(|e| p.entry.is_some() && e.from == p.entry && e.moves.last() == Some(&m))
        .and_then(|e| e.movetext.rsplit(' ').next())
        .map_or_else(|| position::san(&p.pos, &mv), str::to_string);
    Edge { child: index_of[child], key: m, san, uci: position::uci(&mv), stats }
}

/// Every node's parents: the nodes with an edge to it, sorted, once each.
fn link_parents(nodes: &mut [Node]) {
    let mut parents: Vec<Vec<u32>> = vec![Vec::new(); nodes.len()];
    for (i, node) in nodes.iter().enumerate() {
        for edge in &node.children {
            parents[edge.child as usize].push(i as u32);
        }
    }
    for (node, mut list) in nodes.iter_mut().zip(parents) {
        list.sort_unstable();
        list.dedup();
        node.parents = list;
    }
}

/// Every pending position with its identity, in identity order. The skeleton's entries
/// are in that order already and know their identity; only the other positions (the
/// start position, positions from games) are written out and sorted, then merged in.
fn identity_order<'a>(
    pending: &KeyMap<PositionKey, Pending>,
    skeleton: &'a EcoSkeleton,
) -> Vec<(std::borrow::Cow<'a, str>, PositionKey)> {
    use rayon::prelude::*;
    let mut with_entry: Vec<(u32, PositionKey)> = Vec::with_capacity(skeleton.entries.len());
    let mut others: Vec<(&PositionKey, &Pending)> = Vec::new();
    for (key, p) in pending {
        match p.entry {
            Some(entry) => with_entry.push((entry, *key)),
            None => others.push((key, p)),
        }
    }
    with_entry.sort_unstable_by_key(|&(entry, _)| entry);
    let mut others: Vec<(String, PositionKey)> =
        others.par_iter().map(|(k, p)| (position::epd(&p.pos), **k)).collect();
    others.par_sort_unstable();
    let mut keyed = Vec::with_capacity(with_entry.len() + others.len());
    let mut others = others.into_iter().peekable();
    for (entry, key) in with_entry {
        let epd = skeleton.entries[entry as usize].epd.as_str();
        while let Some((other, other_key)) = others.next_if(|(other, _)| other.as_str() < epd) {
            keyed.push((std::borrow::Cow::Owned(other), other_key));
        }
        keyed.push((std::borrow::Cow::Borrowed(epd), key));
    }
    keyed.extend(others.map(|(other, key)| (std::borrow::Cow::Owned(other), key)));
    keyed
}

/// The position of every skeleton entry, in entry order. An entry's `from` is the
/// position before its line's last move, so where that is an entry already placed, one
/// move gives the position (several times cheaper than parsing the entry's FEN); other
/// entries replay their line. Entries are placed by line length, each length in
/// parallel: a `from` entry has a shorter line. Move counters may differ from the
/// entry's own FEN: the tree never reads them from these positions.
fn entry_positions(skeleton: &EcoSkeleton) -> Vec<Chess> {
    use rayon::prelude::*;
    let entries = &skeleton.entries;
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by_key(|&i| entries[i].moves.len());
    let mut positions: Vec<Option<Chess>> = vec![None; entries.len()];
    for level in order.chunk_by(|&a, &b| entries[a].moves.len() == entries[b].moves.len()) {
        let placed: Vec<Chess> = level
            .par_iter()
            .map(|&index| {
                let entry = &entries[index];
                let after_from = match (
                    entry.from.and_then(|f| positions[f as usize].as_ref()),
                    entry.moves.last(),
                ) {
                    (Some(before), Some(last)) => last.to_move(before).map(|mv| {
                        let mut pos = before.clone();
                        pos.play_unchecked(mv);
                        pos
                    }),
                    _ => None,
                };
                after_from.unwrap_or_else(|| {
                    let mut pos = Chess::default();
                    for m in &entry.moves {
                        let mv = m.to_move(&pos).expect("skeleton lines are legal");
                        pos.play_unchecked(mv);
                    }
                    pos
                })
            })
            .collect();
        for (&index, pos) in level.iter().zip(placed) {
            positions[index] = Some(pos);
        }
    }
    positions.into_iter().map(|p| p.expect("every entry is placed")).collect()
}

/// A set of occupied-square patterns that answers "certainly not" or "maybe": one bit
/// per hash value, about 64 bits per pattern, so a miss (most moves) costs one probe of
/// a table that stays in cache, and a false "maybe" (1 in 64) only costs the exact check
/// that follows it.
struct OccupancyFilter {
    bits: Vec<u64>,
    shift: u32,
}

impl OccupancyFilter {
    fn new(patterns: impl ExactSizeIterator<Item = u64>) -> OccupancyFilter {
        let slots = (patterns.len() * 64).next_power_of_two().max(1 << 12);
        let mut filter =
            OccupancyFilter { bits: vec![0; slots / 64], shift: 64 - slots.trailing_zeros() };
        for pattern in patterns {
            let slot = filter.slot(pattern);
            filter.bits[slot / 64] |= 1 << (slot % 64);
        }
        filter
    }

    /// Fibonacci hashing: the product's top bits depend on every bit of the pattern.
    fn slot(&self, pattern: u64) -> usize {
        (pattern.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    fn may_contain(&self, pattern: u64) -> bool {
        let slot = self.slot(pattern);
        self.bits[slot / 64] >> (slot % 64) & 1 == 1
    }
}

/// The occupied squares after `m`, where they are quick to work out (not for castling).
fn occupied_after(occupied: shakmaty::Bitboard, m: &shakmaty::Move) -> Option<u64> {
    match *m {
        shakmaty::Move::Normal { from, to, .. } => Some(occupied.without(from).with(to).0),
        shakmaty::Move::EnPassant { from, to } => {
            let captured = shakmaty::Square::from_coords(to.file(), from.rank());
            Some(occupied.without(from).without(captured).with(to).0)
        }
        _ => None,
    }
}

/// Gives every node its canonical line and inherited opening: nodes with an entry use the
/// entry's own line; the others are reached along the most-played path (children are
/// sorted by game count), breadth-first, so the line is also a shortest one.
///
/// The walk itself only records, per node, the node it was reached from and the node
/// whose opening it inherits; the lines, movetexts and FENs are then filled in walk
/// order, each node from its parent ([`walk_lines`]).
fn assign_lines(nodes: &mut [Node], root: u32, skeleton: &EcoSkeleton) {
    use rayon::prelude::*;
    const NONE: u32 = u32::MAX;
    // Per node: (parent on the walk, move from it); NONE for the root and unreached nodes.
    let mut reached_from: Vec<(u32, MoveKey)> = vec![(NONE, MoveKey(0)); nodes.len()];
    // Per node: the node whose opening it shows (itself when it has one), or NONE.
    let mut opening_of: Vec<u32> = vec![NONE; nodes.len()];
    let mut visited = vec![false; nodes.len()];
    let mut order = Vec::with_capacity(nodes.len());
    visited[root as usize] = true;
    if nodes[root as usize].opening.is_some() {
        opening_of[root as usize] = root;
    }
    let mut queue = std::collections::VecDeque::from([root]);
    while let Some(index) = queue.pop_front() {
        for edge in &nodes[index as usize].children {
            let child = edge.child as usize;
            if visited[child] {
                continue;
            }
            visited[child] = true;
            reached_from[child] = (index, edge.key);
            opening_of[child] = if nodes[child].opening.is_some() {
                edge.child
            } else {
                opening_of[index as usize]
            };
            order.push(edge.child);
            queue.push_back(edge.child);
        }
    }
    let filled = walk_lines(nodes, root, &order, &reached_from, skeleton);
    let inherited: Vec<Option<Opening>> = order
        .par_iter()
        .map(|&index| match (&nodes[index as usize].opening, opening_of[index as usize]) {
            (None, from) if from != NONE => {
                nodes[from as usize].opening.as_ref().map(|o| Opening { own: false, ..o.clone() })
            }
            _ => None,
        })
        .collect();
    nodes[root as usize].fen = position::fen(&Chess::default());
    for ((&index, (line, movetext, fen)), inherited) in order.iter().zip(filled).zip(inherited) {
        let node = &mut nodes[index as usize];
        node.pgn_move = movetext.split_whitespace().last().map(str::to_string);
        node.line = line;
        node.movetext = movetext;
        node.fen = fen;
        if inherited.is_some() {
            node.opening = inherited;
        }
    }
}

/// A walked node's line, movetext and FEN.
type Walked = (Vec<MoveKey>, String, String);

/// The line, movetext and FEN of each node of `order` (the walk from `root`, parents
/// first, `reached_from` giving each node's parent and move). A node with an entry has
/// its entry's; any other extends its parent's line by one move, played from the
/// parent's position, so each node costs one move, not a replay of its whole line. The
/// result is what replaying the line from the start gives: the parent's position is
/// the one its own line reaches (an entry's by replaying the entry's moves).
///
/// The walk is breadth-first, so a node's parent is in the level before it: each level
/// is filled on all cores from the positions its parents left.
fn walk_lines(
    nodes: &[Node],
    root: u32,
    order: &[u32],
    reached_from: &[(u32, MoveKey)],
    skeleton: &EcoSkeleton,
) -> Vec<Walked> {
    use rayon::prelude::*;
    // Per node, once it is a parent on the walk: its position and its movetext as the
    // walk writes it (an entry's own movetext is the taxonomy's text).
    let mut played: Vec<Option<Played>> = vec![None; nodes.len()];
    played[root as usize] = Some((Chess::default(), String::new()));
    let mut at: Vec<usize> = vec![usize::MAX; nodes.len()];
    let mut depth: Vec<u16> = vec![0; nodes.len()];
    for &index in order {
        depth[index as usize] = depth[reached_from[index as usize].0 as usize] + 1;
    }
    let mut filled: Vec<Walked> = Vec::with_capacity(order.len());
    for level in order.chunk_by(|&a, &b| depth[a as usize] == depth[b as usize]) {
        let line_of = |parent: usize| match nodes[parent].entry {
            Some(entry) => skeleton.entries[entry as usize].moves.as_slice(),
            None if parent == root as usize => &[],
            None => filled[at[parent]].0.as_slice(),
        };
        // Parents not yet played (entries: their own lines are replayed once).
        for &index in level {
            let parent = reached_from[index as usize].0 as usize;
            if nodes[index as usize].entry.is_none() && played[parent].is_none() {
                let (moves, pos) = replay_moves(line_of(parent));
                played[parent] = Some((pos, crate::eco::line::movetext(&moves)));
            }
        }
        let walked: Vec<(Walked, Option<Played>)> = level
            .par_iter()
            .map(|&index| {
                let (parent, key) = reached_from[index as usize];
                let node = &nodes[index as usize];
                match node.entry.map(|e| &skeleton.entries[e as usize]) {
                    Some(entry) => {
                        ((entry.moves.clone(), entry.movetext.clone(), entry.fen.clone()), None)
                    }
                    None => {
                        let parent = parent as usize;
                        let played = played[parent].as_ref().expect("played above");
                        walk_one(node, &nodes[parent].children, key, line_of(parent), played)
                    }
                }
            })
            .collect();
        for (&index, (walk, next)) in level.iter().zip(walked) {
            at[index as usize] = filled.len();
            filled.push(walk);
            if next.is_some() {
                played[index as usize] = next;
            }
        }
        // A parent's children are all on this level (it is the node they were reached
        // from): its position is not needed again.
        for &index in level {
            played[reached_from[index as usize].0 as usize] = None;
        }
    }
    filled
}

/// A parent's position and its movetext as the walk writes it.
type Played = (Chess, String);

/// A node without an entry, reached by `key` from a parent whose line is `parent_line`,
/// whose edges are `parent_edges`, and which `parent` played: its line, movetext and
/// FEN, and what it leaves its own children when it has any. The move's SAN is its
/// edge's, not worked out again: the edge's was written from a position of the same
/// identity, which decides the SAN (only an edge into a node with an entry may take its
/// text from the taxonomy, and this node has none).
fn walk_one(
    node: &Node,
    parent_edges: &[Edge],
    key: MoveKey,
    parent_line: &[MoveKey],
    (pos, movetext): &Played,
) -> (Walked, Option<Played>) {
    let mv = key.to_move(pos).expect("tree lines are legal");
    let mut line = Vec::with_capacity(parent_line.len() + 1);
    line.extend_from_slice(parent_line);
    line.push(key);
    let movetext = match parent_edges.iter().find(|e| e.key == key) {
        Some(edge) => {
            crate::eco::line::extend_movetext_with(movetext, parent_line.len(), &edge.san)
        }
        None => crate::eco::line::extend_movetext(movetext, parent_line.len(), pos, &mv),
    };
    let mut child = pos.clone();
    child.play_unchecked(mv);
    let fen = position::fen(&child);
    let next = (!node.children.is_empty()).then(|| (child, movetext.clone()));
    ((line, movetext, fen), next)
}

/// The moves of `line` from the start position, and the position they reach.
fn replay_moves(line: &[MoveKey]) -> (Vec<shakmaty::Move>, Chess) {
    let mut pos = Chess::default();
    let mut moves = Vec::with_capacity(line.len());
    for m in line {
        let mv = m.to_move(&pos).expect("tree lines are legal");
        pos.play_unchecked(mv);
        moves.push(mv);
    }
    (moves, pos)
}

#[cfg(test)]
mod tests {
    use super::OccupancyFilter;
    use shakmaty::{Chess, Position};

    #[test]
    fn entry_positions_are_the_positions_of_the_entries_fens() {
        use crate::eco::{EcoFormat, merge::MergeInput};
        let tsv = "eco\tname\tpgn\nA00\tA\t1. e4\nA01\tB\t1. e4 e5 2. Nf3 Nc6\nA02\tC\t1. Nf3 Nc6 2. e4 e5\nA03\tD\t1. d4 d5 2. c4 e6 3. Nc3 Nf6\nA04\tE\t1. d4 Nf6 2. c4 e6 3. Nc3 d5 4. Bg5\n";
        let parsed = crate::eco::parse(EcoFormat::LichessTsv, "t.tsv", tsv.as_bytes());
        let input = MergeInput { format: EcoFormat::LichessTsv, file: "t.tsv", parsed: &parsed };
        for interpolate in [true, false] {
            let skeleton = crate::eco::merge(std::slice::from_ref(&input), interpolate);
            let positions = super::entry_positions(&skeleton);
            assert_eq!(positions.len(), skeleton.entries.len());
            for (entry, pos) in skeleton.entries.iter().zip(&positions) {
                let parsed = crate::position::parse_fen(&entry.fen).unwrap();
                assert_eq!(crate::position::epd(pos), entry.epd);
                assert_eq!(crate::position::key(pos), crate::position::key(&parsed));
            }
        }
    }

    #[test]
    fn positions_that_agree_on_the_kept_bits_of_their_keys_are_all_found() {
        use crate::eco::{EcoFormat, merge::MergeInput};
        use crate::games::stats::{GameStats, Outcomes};
        use crate::position::PositionKey;
        let tsv = "eco\tname\tpgn\nA00\tA\t1. e4 e5\nA01\tB\t1. d4 d5\nA02\tC\t1. c4 c5\nA03\tD\t1. Nf3 Nf6\n";
        let parsed = crate::eco::parse(EcoFormat::LichessTsv, "t.tsv", tsv.as_bytes());
        let input = MergeInput { format: EcoFormat::LichessTsv, file: "t.tsv", parsed: &parsed };
        let skeleton = crate::eco::merge(std::slice::from_ref(&input), true);
        let params = super::TreeParams::default();
        // A deliberately tiny key: 3 bits for the tree's 9 positions, so some must agree.
        // The statistics hold every value but one, which the tree must then not report.
        let mask = !0u128 << 125;
        let stats = |mask: u128| {
            let held = (0..8u128)
                .filter(|&v| v != 5)
                .map(|v| (PositionKey(v << 125), Outcomes { white: 1, draws: 0, black: 0 }));
            let mut stats = GameStats::new(held.collect(), Vec::new());
            stats.key_mask = mask;
            stats
        };
        let tiny = stats(mask);
        let built =
            super::build_streaming(&skeleton, &params, |_| Ok::<_, ()>(tiny.clone())).unwrap();
        let keys: Vec<u128> = built
            .tree
            .nodes
            .iter()
            .map(|n| crate::position::key(&crate::position::parse_fen(&n.epd).unwrap()).0 & mask)
            .collect();
        let mut expected = Vec::new();
        for a in 0..keys.len() {
            for b in a + 1..keys.len() {
                if keys[a] == keys[b] && keys[a] >> 125 != 5 {
                    expected.push((a as u32, b as u32));
                }
            }
        }
        assert!(!expected.is_empty(), "9 positions on 7 held values of 3 bits share some");
        assert_eq!(built.shared_keys, expected);
        let whole = stats(u128::MAX);
        let built =
            super::build_streaming(&skeleton, &params, |_| Ok::<_, ()>(whole.clone())).unwrap();
        assert!(built.shared_keys.is_empty(), "whole keys never agree");
    }

    #[test]
    fn occupancy_filter_keeps_every_pattern_and_rejects_most_others() {
        let patterns: Vec<u64> =
            (0..15_000u64).map(|i| i.wrapping_mul(0x2545_F491_4F6C_DD1D) | 0xFFFF).collect();
        let filter = OccupancyFilter::new(patterns.iter().copied());
        assert!(patterns.iter().all(|&p| filter.may_contain(p)));
        let others =
            (0..15_000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 0xFF00_0000_0000_0000);
        let maybe = others.filter(|&p| filter.may_contain(p)).count();
        assert!(maybe < 15_000 / 20, "{maybe} false maybes");
    }

    #[test]
    fn occupied_after_is_what_playing_the_move_leaves() {
        let fens = [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            // En passant (exd6), promotions with and without capture, castling both ways.
            "r3k2r/1P4P1/8/3pP3/8/8/8/R3K2R w KQkq d6 0 2",
            "rn1qkb1r/pp2pppp/5n2/2pp4/3P1Bb1/2N2N2/PPP1PPPP/R2QKB1R w KQkq - 2 5",
        ];
        let mut checked = 0;
        for fen in fens {
            let pos = crate::position::parse_fen(fen).unwrap();
            let occupied = pos.board().occupied();
            for m in pos.legal_moves() {
                let mut after: Chess = pos.clone();
                after.play_unchecked(m);
                if let Some(predicted) = super::occupied_after(occupied, &m) {
                    assert_eq!(predicted, after.board().occupied().0, "{fen} {m:?}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 60, "{checked}");
    }
}
