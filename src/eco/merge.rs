//! Joining the taxonomies by position, and interpolating the gaps between named lines.
//!
//! The Lichess TSV is the authority for a position's ECO code, moves and name; names
//! from the other sources become aliases keyed by source, and the SCID code is kept.
//! A position that only SCID or pgn-extract names takes its entry from that source.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use shakmaty::{Chess, Position};

use super::{EcoFormat, EcoRow, ParsedSource};
use crate::diagnostics::Warning;
use crate::position::{self, KeyMap, MoveKey, PositionKey};

/// One entry of the skeleton: a named or interpolated opening on one position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EcoEntry {
    /// Position identity (see [`crate::position::epd`]).
    pub epd: String,
    /// Full FEN after the entry's own line, move counters included.
    pub fen: String,
    /// Where the name comes from: `eco_tsv`, `scid`, `pgn_extract` or `interpolated`.
    pub src: String,
    /// Three-character ECO code.
    pub eco: String,
    /// The entry's line, from the start position.
    pub moves: Vec<MoveKey>,
    /// The line as numbered SAN movetext (`1. e4 e5 2. Nf3`).
    pub movetext: String,
    /// Name of the opening.
    pub name: String,
    /// Names other sources give this position, keyed by source.
    pub aliases: BTreeMap<String, String>,
    /// SCID's extended code, where SCID names the position (or, for interpolated
    /// entries, their named ancestor).
    pub scid: Option<String>,
    /// For each ECO code, true on the authoritative row with the shortest line.
    pub is_eco_root: bool,
    /// Index in [`EcoSkeleton::entries`] of the previous position on the entry's own
    /// line (its `from`), if that position has an entry.
    pub from: Option<u32>,
}

/// How many rows and distinct positions one source contributed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceCount {
    /// Source name as `src` writes it.
    pub src: String,
    /// Rows that parsed.
    pub rows: usize,
    /// Distinct positions among them.
    pub positions: usize,
}

/// The merged taxonomy.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EcoSkeleton {
    /// All entries, named and interpolated, sorted by identity.
    pub entries: Vec<EcoEntry>,
    /// Every consecutive pair of entry positions along any entry's line, as indices into
    /// `entries` (from, to), sorted and without repeats.
    pub from_to: Vec<(u32, u32)>,
    /// Per-source counts, in merge order.
    pub sources: Vec<SourceCount>,
    /// Distinct named positions over all sources.
    pub named_positions: usize,
    /// Orphans and duplicates found while merging.
    pub warnings: Vec<Warning>,
}

impl EcoSkeleton {
    /// The entry on position `epd`, if any.
    pub fn entry(&self, epd: &str) -> Option<&EcoEntry> {
        self.entries.binary_search_by(|e| e.epd.as_str().cmp(epd)).ok().map(|i| &self.entries[i])
    }
}

/// A parsed source handed to [`merge`], with the name used in messages.
pub struct MergeInput<'a> {
    /// Taxonomy format (decides authority and the alias key).
    pub format: EcoFormat,
    /// File name for messages.
    pub file: &'a str,
    /// Its parsed rows.
    pub parsed: &'a ParsedSource,
}

/// A row played out: the trie nodes of every position on its line (start position first).
struct PlayedRow<'a> {
    format: EcoFormat,
    file: &'a str,
    row: &'a EcoRow,
    path: Vec<u32>,
    keys: Vec<PositionKey>,
}

/// Every distinct line prefix of all rows, played once: rows share most of their moves.
///
/// Built in two passes so that the second core helps: [`TrieShape`] numbers the prefixes
/// from the moves alone, in row order; [`LineTrie::play`] then plays them level by
/// level, each level in parallel, since a prefix needs only its parent's position.
struct LineTrie {
    nodes: Vec<TrieNode>,
}

struct TrieNode {
    key: PositionKey,
    pos: Chess,
    movetext: String,
    /// Index of the node one move shorter (the root is its own parent).
    parent: u32,
}

/// The prefixes of all lines as a tree of moves, nodes numbered parent before child.
struct TrieShape {
    /// Per node: its parent and the move from it (the root's entry is unused).
    parent: Vec<(u32, MoveKey)>,
    /// Per node: its ply (the root is ply 0).
    ply: Vec<u16>,
    children: KeyMap<(u32, MoveKey), u32>,
}

impl TrieShape {
    fn with_capacity(nodes: usize) -> TrieShape {
        let mut parent = Vec::with_capacity(nodes);
        parent.push((0, MoveKey(0)));
        let mut ply = Vec::with_capacity(nodes);
        ply.push(0);
        TrieShape {
            parent,
            ply,
            children: KeyMap::with_capacity_and_hasher(nodes, Default::default()),
        }
    }

    /// The nodes along `moves`, creating the missing ones.
    fn walk(&mut self, moves: &[MoveKey]) -> Vec<u32> {
        let mut path = Vec::with_capacity(moves.len() + 1);
        let mut at = 0u32;
        path.push(at);
        for (ply, m) in moves.iter().enumerate() {
            let next = self.parent.len() as u32;
            at = *self.children.entry((at, *m)).or_insert_with(|| next);
            if at == next {
                self.parent.push((path[ply], *m));
                self.ply.push(ply as u16 + 1);
            }
            path.push(at);
        }
        path
    }
}

impl LineTrie {
    /// Plays every node of `shape`. Returns the trie and, per shape node, its index in
    /// the trie's nodes (which are in ply order).
    fn play(shape: &TrieShape) -> (LineTrie, Vec<u32>) {
        use rayon::prelude::*;
        let count = shape.parent.len();
        // Counting sort by ply; within a ply, shape order.
        let plies = shape.ply.iter().copied().max().unwrap_or(0) as usize + 1;
        let mut starts = vec![0usize; plies + 1];
        for &p in &shape.ply {
            starts[p as usize + 1] += 1;
        }
        for p in 0..plies {
            starts[p + 1] += starts[p];
        }
        let mut by_ply = vec![0u32; count];
        let mut index_of = vec![0u32; count];
        let mut next = starts.clone();
        for (node, &p) in shape.ply.iter().enumerate() {
            by_ply[next[p as usize]] = node as u32;
            index_of[node] = next[p as usize] as u32;
            next[p as usize] += 1;
        }
        let pos = Chess::default();
        let mut nodes = Vec::with_capacity(count);
        nodes.push(TrieNode { key: position::key(&pos), pos, movetext: String::new(), parent: 0 });
        for ply in 1..plies {
            let done = &nodes;
            let level: Vec<TrieNode> = by_ply[starts[ply]..starts[ply + 1]]
                .par_iter()
                .map(|&node| {
                    let (parent, m) = shape.parent[node as usize];
                    let parent_index = index_of[parent as usize];
                    let parent = &done[parent_index as usize];
                    let mv = m.to_move(&parent.pos).expect("rows were played legally when parsed");
                    let san = position::san(&parent.pos, &mv);
                    let key = position::child_key(&parent.pos, parent.key, &mv);
                    let mut pos = parent.pos.clone();
                    pos.play_unchecked(mv);
                    let movetext = match (ply % 2, ply) {
                        (1, 1) => format!("1. {san}"),
                        (1, _) => format!("{} {}. {san}", parent.movetext, ply / 2 + 1),
                        _ => format!("{} {san}", parent.movetext),
                    };
                    TrieNode { key, pos, movetext, parent: parent_index }
                })
                .collect();
            nodes.extend(level);
        }
        (LineTrie { nodes }, index_of)
    }
}

/// Merges the sources by position and interpolates. `inputs` may list several files of
/// one format (the five Lichess TSVs); their order decides ties and must be stable.
pub fn merge(inputs: &[MergeInput<'_>], interpolate: bool) -> EcoSkeleton {
    let mut ordered: Vec<&MergeInput<'_>> = inputs.iter().collect();
    ordered.sort_by_key(|i| i.format); // authority first; stable within a format
    let mut skeleton = EcoSkeleton::default();
    let rows: Vec<(&MergeInput<'_>, &EcoRow)> = ordered
        .iter()
        .flat_map(|input| input.parsed.rows.iter().map(move |row| (*input, row)))
        .collect();
    let (trie, played_rows) = play_rows(&rows);
    let formats = deduplicate(&ordered, played_rows, &mut skeleton);
    let named = Named::choose(&formats.played);
    skeleton.named_positions = named.index.len();
    let mut list = named_entries(&named, &formats, &trie);
    let mut keys: Vec<PositionKey> = Vec::with_capacity(list.capacity());
    keys.extend_from_slice(&named.order);
    // Each entry's previous position on its own line, resolved to `from` at the end.
    let mut previous: KeyMap<PositionKey, PositionKey> =
        KeyMap::with_capacity_and_hasher(list.capacity(), Default::default());
    for (key, row) in named.order.iter().zip(&named.rows) {
        if row.keys.len() >= 2 {
            previous.insert(*key, row.keys[row.keys.len() - 2]);
        }
    }
    skeleton.warnings.extend(orphans(&named));
    if interpolate {
        interpolate_gaps(&named, &formats.played, &trie, &mut previous, &mut list, &mut keys);
    }
    freeze(&mut skeleton, list, keys, &previous, &trie, &named.rows);
    skeleton
}

/// Every row's line through the trie: its shape first, then its positions.
fn play_rows<'a>(rows: &[(&MergeInput<'a>, &'a EcoRow)]) -> (LineTrie, Vec<PlayedRow<'a>>) {
    use rayon::prelude::*;
    // Sized up front: the taxonomies hold about one new position per row.
    let mut shape = TrieShape::with_capacity(rows.len() + rows.len() / 4);
    let paths: Vec<Vec<u32>> = rows.iter().map(|(_, row)| shape.walk(&row.moves)).collect();
    let (trie, trie_index) = LineTrie::play(&shape);
    drop(shape);
    let played = rows
        .par_iter()
        .zip(paths)
        .map(|((input, row), path)| {
            let path: Vec<u32> = path.iter().map(|&n| trie_index[n as usize]).collect();
            let keys = path.iter().map(|&n| trie.nodes[n as usize].key).collect();
            PlayedRow { format: input.format, file: input.file, row, path, keys }
        })
        .collect();
    (trie, played)
}

/// The rows that survive deduplication, and per format which row names each position.
struct Formats<'a> {
    /// Per format: position → index in `played` of the first row on it.
    by_format: BTreeMap<EcoFormat, KeyMap<PositionKey, usize>>,
    /// The rows kept, in authority and file order.
    played: Vec<PlayedRow<'a>>,
}

/// Keeps the first row of each format on each position; later ones are `duplicate`
/// warnings. Records the per-source counts.
fn deduplicate<'a>(
    ordered: &[&MergeInput<'_>],
    played_rows: Vec<PlayedRow<'a>>,
    skeleton: &mut EcoSkeleton,
) -> Formats<'a> {
    let mut by_format: BTreeMap<EcoFormat, KeyMap<PositionKey, usize>> = BTreeMap::new();
    let mut played: Vec<PlayedRow<'_>> = Vec::with_capacity(played_rows.len());
    let mut counts: BTreeMap<EcoFormat, (usize, usize)> = BTreeMap::new();
    for row_played in played_rows {
        let (format, row) = (row_played.format, row_played.row);
        let seen = by_format.entry(format).or_insert_with(|| {
            let rows =
                ordered.iter().filter(|i| i.format == format).map(|i| i.parsed.rows.len()).sum();
            KeyMap::with_capacity_and_hasher(rows, Default::default())
        });
        let count = counts.entry(format).or_default();
        count.0 += 1;
        let end = *row_played.keys.last().expect("a line has its start position");
        if let Some(&first) = seen.get(&end) {
            let first = &played[first];
            // Both names in the message: the text after it would read as the one kept.
            let message = format!(
                "{:?} dropped: the position is already named by {}:{} ({:?}), which is kept",
                row.name, first.file, first.row.line, first.row.name
            );
            let mut warning = Warning::at("duplicate", row_played.file, row.line, message, "");
            warning.text = None;
            skeleton.warnings.push(warning);
            continue;
        }
        count.1 += 1;
        seen.insert(end, played.len());
        played.push(row_played);
    }
    for (format, (rows, positions)) in &counts {
        skeleton.sources.push(SourceCount {
            src: format.src_name().to_string(),
            rows: *rows,
            positions: *positions,
        });
    }
    Formats { by_format, played }
}

/// The authoritative row per position: the first format (in authority order) that names it.
struct Named<'p, 'a> {
    /// Each named position's index in `order` and `rows`, which is also the index of its
    /// entry (named entries come first).
    index: KeyMap<PositionKey, u32>,
    order: Vec<PositionKey>,
    rows: Vec<&'p PlayedRow<'a>>,
    /// Per named row: whether it is its ECO code's root.
    is_root: Vec<bool>,
}

impl<'p, 'a> Named<'p, 'a> {
    fn choose(played: &'p [PlayedRow<'a>]) -> Named<'p, 'a> {
        let mut index: KeyMap<PositionKey, u32> =
            KeyMap::with_capacity_and_hasher(played.len(), Default::default());
        let mut order: Vec<PositionKey> = Vec::with_capacity(played.len());
        let mut rows: Vec<&PlayedRow<'_>> = Vec::with_capacity(played.len());
        for row in played {
            let end = *row.keys.last().expect("a line has its start position");
            if let std::collections::hash_map::Entry::Vacant(e) = index.entry(end) {
                e.insert(order.len() as u32);
                order.push(end);
                rows.push(row);
            }
        }
        let is_root = eco_roots(&rows);
        Named { index, order, rows, is_root }
    }
}

/// ECO roots: per code, the shortest authoritative Lichess line (first in file order on ties).
fn eco_roots(named_rows: &[&PlayedRow<'_>]) -> Vec<bool> {
    let mut roots: HashMap<&str, (usize, usize)> = HashMap::new();
    for (index, row) in named_rows.iter().enumerate() {
        if row.format != EcoFormat::LichessTsv {
            continue;
        }
        let len = row.row.moves.len();
        roots
            .entry(row.row.eco.as_str())
            .and_modify(|best| {
                if len < best.0 {
                    *best = (len, index)
                }
            })
            .or_insert((len, index));
    }
    let mut is_root = vec![false; named_rows.len()];
    for (_, index) in roots.values() {
        is_root[*index] = true;
    }
    is_root
}

/// The named entries in creation order, with room for the interpolated ones: entries are
/// large, so they are written once, in place, and moved once more, into identity order,
/// at the end.
fn named_entries(named: &Named<'_, '_>, formats: &Formats<'_>, trie: &LineTrie) -> Vec<EcoEntry> {
    use rayon::prelude::*;
    let capacity = named.order.len() + named.order.len() / 2;
    let mut list: Vec<EcoEntry> = Vec::with_capacity(capacity);
    list.par_extend(
        named.rows.par_iter().zip(named.order.par_iter()).zip(named.is_root.par_iter()).map(
            |((row, key), &is_eco_root)| {
                let (aliases, scid) = aliases_of(row, key, formats);
                let end =
                    &trie.nodes[*row.path.last().expect("a line has its start position") as usize];
                EcoEntry {
                    epd: position::epd(&end.pos),
                    fen: position::fen(&end.pos),
                    src: row.format.src_name().to_string(),
                    eco: row.row.eco.clone(),
                    moves: row.row.moves.clone(),
                    movetext: end.movetext.clone(),
                    name: row.row.name.clone(),
                    aliases,
                    scid,
                    is_eco_root,
                    from: None,
                }
            },
        ),
    );
    list
}

/// The names the other formats give the position `key` of `row`, and its SCID code
/// (its own, else the first other source's).
fn aliases_of(
    row: &PlayedRow<'_>,
    key: &PositionKey,
    formats: &Formats<'_>,
) -> (BTreeMap<String, String>, Option<String>) {
    let mut aliases = BTreeMap::new();
    let mut scid = row.row.scid.clone();
    for (format, seen) in &formats.by_format {
        if *format == row.format {
            continue;
        }
        if let Some(&other) = seen.get(key) {
            let other = &formats.played[other];
            aliases.insert(format.src_name().to_string(), other.row.name.clone());
            if scid.is_none() {
                scid = other.row.scid.clone();
            }
        }
    }
    (aliases, scid)
}

/// A note per named line whose previous position has no name.
fn orphans(named: &Named<'_, '_>) -> Vec<Warning> {
    named
        .rows
        .iter()
        .filter(|row| {
            row.keys.len() >= 2 && !named.index.contains_key(&row.keys[row.keys.len() - 2])
        })
        .map(|row| {
            let why = "the position before this line's last move has no name; interpolated";
            Warning::at("orphan", row.file, row.row.line, why, &row.row.name)
        })
        .collect()
}

/// Interpolation along every line, in authority and file order: the authoritative lines
/// first, then the lines of rows whose end another source names (a SCID line whose end
/// a Lichess row reaches by another move order still passes through positions no one
/// names; eco.json interpolates those too). Which positions get an interpolated entry,
/// and from which ancestor, is decided in that order (the first line through a position
/// gives it its ancestor); the entries are built in parallel.
fn interpolate_gaps<'p>(
    named: &Named<'p, '_>,
    played: &'p [PlayedRow<'_>],
    trie: &LineTrie,
    previous: &mut KeyMap<PositionKey, PositionKey>,
    list: &mut Vec<EcoEntry>,
    keys: &mut Vec<PositionKey>,
) {
    use rayon::prelude::*;
    let authoritative: std::collections::HashSet<*const PlayedRow<'_>> =
        named.rows.iter().map(|r| std::ptr::from_ref(*r)).collect();
    let aliases = played.iter().filter(|r| !authoritative.contains(&std::ptr::from_ref(*r)));
    let mut gaps: Vec<(&PlayedRow<'_>, usize, PositionKey)> = Vec::new();
    for row in named.rows.iter().copied().chain(aliases) {
        let mut ancestor: Option<PositionKey> = None;
        for (ply, step_key) in row.keys.iter().enumerate() {
            if named.index.contains_key(step_key) {
                ancestor = Some(*step_key);
                continue;
            }
            let Some(ancestor) = ancestor else { continue };
            // Besides the named positions (skipped above), `previous` holds exactly
            // the positions interpolated so far.
            if previous.contains_key(step_key) {
                continue;
            }
            previous.insert(*step_key, row.keys[ply - 1]);
            gaps.push((row, ply, ancestor));
        }
    }
    let interpolated: Vec<EcoEntry> = gaps
        .par_iter()
        .map(|&(row, ply, ancestor)| {
            let parent = &list[named.index[&ancestor] as usize];
            let node = &trie.nodes[row.path[ply] as usize];
            EcoEntry {
                epd: position::epd(&node.pos),
                fen: position::fen(&node.pos),
                src: "interpolated".to_string(),
                eco: parent.eco.clone(),
                moves: row.row.moves[..ply].to_vec(),
                movetext: node.movetext.clone(),
                name: format!("{} (i)", parent.name),
                aliases: parent.aliases.clone(),
                scid: parent.scid.clone(),
                is_eco_root: false,
                from: None,
            }
        })
        .collect();
    keys.extend(gaps.iter().map(|&(row, ply, _)| row.keys[ply]));
    list.extend(interpolated);
}

/// Freezes the entries in identity order, then the `from` relation and every
/// consecutive pair along every line, by index.
fn freeze(
    skeleton: &mut EcoSkeleton,
    mut list: Vec<EcoEntry>,
    mut keys: Vec<PositionKey>,
    previous: &KeyMap<PositionKey, PositionKey>,
    trie: &LineTrie,
    named_rows: &[&PlayedRow<'_>],
) {
    use rayon::prelude::*;
    let mut order: Vec<usize> = (0..list.len()).collect();
    order.par_sort_unstable_by(|&a, &b| list[a].epd.cmp(&list[b].epd));
    permute(order, |a, b| {
        keys.swap(a, b);
        list.swap(a, b);
    });
    let index_of: KeyMap<PositionKey, u32> =
        keys.iter().enumerate().map(|(i, k)| (*k, i as u32)).collect();
    skeleton.from_to = from_to(&index_of, trie, named_rows);
    list.par_iter_mut().zip(keys.par_iter()).for_each(|(entry, key)| {
        entry.from = previous.get(key).and_then(|p| index_of.get(p)).copied();
    });
    skeleton.entries = list;
}

/// Every consecutive pair of entries along the named lines. A trie node has one parent,
/// so the moves along the named lines are the trie nodes on them: each gives one pair,
/// and lines sharing a prefix give it once.
fn from_to(
    index_of: &KeyMap<PositionKey, u32>,
    trie: &LineTrie,
    named_rows: &[&PlayedRow<'_>],
) -> Vec<(u32, u32)> {
    use rayon::prelude::*;
    // The entry on each trie node, looked up once per node rather than once per line.
    let entry_at: Vec<Option<u32>> =
        trie.nodes.par_iter().map(|node| index_of.get(&node.key).copied()).collect();
    let mut on_named_line = vec![false; trie.nodes.len()];
    for row in named_rows {
        for &node in &row.path[1..] {
            on_named_line[node as usize] = true;
        }
    }
    let mut pairs: Vec<(u32, u32)> = trie
        .nodes
        .par_iter()
        .zip(&entry_at)
        .zip(&on_named_line)
        .filter(|(_, on)| **on)
        .filter_map(|((node, to), _)| Some((entry_at[node.parent as usize]?, (*to)?)))
        .collect();
    // Transposed prefixes are distinct trie nodes on one position: a pair may repeat.
    pairs.par_sort_unstable();
    pairs.dedup();
    pairs
}

/// Applies the permutation `order` in place through `swap`: afterwards slot `i` holds
/// what slot `order[i]` held. Each element moves once, and nothing is copied aside.
fn permute(mut order: Vec<usize>, mut swap: impl FnMut(usize, usize)) {
    for start in 0..order.len() {
        let mut at = start;
        loop {
            let from = order[at];
            order[at] = at;
            if from == start || from == at {
                break;
            }
            swap(at, from);
            at = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::permute;

    #[test]
    fn permute_moves_each_slot_where_the_order_says() {
        let orders: [&[usize]; 5] = [&[], &[0], &[2, 0, 1], &[1, 0, 3, 2, 4], &[4, 3, 2, 1, 0]];
        for order in orders {
            let mut items: Vec<char> = "abcde".chars().take(order.len()).collect();
            let expected: Vec<char> = order.iter().map(|&i| items[i]).collect();
            permute(order.to_vec(), |a, b| items.swap(a, b));
            assert_eq!(items, expected, "{order:?}");
        }
        // A larger random order against the copying version.
        let mut order: Vec<usize> = (0..1000).collect();
        order.sort_by_key(|&i| (i * 7919) % 1009);
        let mut items: Vec<usize> = (0..1000).map(|i| i * 3).collect();
        let expected: Vec<usize> = order.iter().map(|&i| items[i]).collect();
        permute(order, |a, b| items.swap(a, b));
        assert_eq!(items, expected);
    }
}
