//! Building the index: the game files read again (in parallel, one accumulator per
//! worker), each counted game's cells added per slice, the best and latest references
//! kept per position and slice, then the games numbered in file order and the nodes laid
//! out ([`build`]).

use std::collections::HashMap;

use rayon::prelude::*;

use super::pgn::{base62_id, describe};
use super::{
    BLOCK_GAMES, ExplorerIndex, ExplorerParams, FileSpec, GameAt, GameRef, MoveCell, NO_GAME,
    NodeIndex, PosCell, Slice, game_text, slice_of,
};
use crate::games::GamesError;
use crate::games::dedup::location;
use crate::games::filter::{GameResult, GameTags};
use crate::games::input::{Boundary, Chunker, DEFAULT_CHUNK_BYTES};
use crate::games::pgn::{ChunkOrigin, GameEnd, GameVisitor, IdentityKeys, read_chunk_at};
use crate::games::report::BadGames;
use crate::position::{KeyMap, MoveKey};
use crate::tree::Tree;

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
