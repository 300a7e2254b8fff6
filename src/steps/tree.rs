//! `tree`: the move tree, one node per position, with counts and transpositions
//! (Phases 2 and 6).


use super::ids::{self, ECO, GAMES};
use crate::dataflow::{BuildError, CorruptCache, Ctx, Decl, Declaring, Input, Produced, Rule};
use super::planning::{Planner, Planning, counts_state_id, state_id};
use crate::eco::EcoSkeleton;
use crate::games::runs::{self, MoveRecord, PosRecord, Record, RunError, Source};
use crate::games::state::codec::KEY_MASK;
use crate::games::state::folder::StateFolder;
use crate::games::state::merge::{MergeError, RunGroups, ShardStore};
use crate::games::state::{self, CountsState};
use crate::games::stats::GameStats;
use crate::games::stored::{MergedCounts, StoredRun};
use crate::tree::{self, Built, Needed, Tree, TreeParams};

/// The rule.
pub static RULE: Rule = Rule { name: "tree", about: "the move tree: one node per position, counts, transpositions", file: file!() };


/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// The tree of the skeleton and, when there are counting steps, the `games` counts.
pub fn plan(p: &Planning<'_>, declared: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    let mut d = p.declare(ids::TREE, &RULE);
    let eco: Input<EcoSkeleton> = d.input(ECO);
    let params: TreeParams = d.param("tree")?;
    let games: Option<Input<MergedCounts>> = d.input_if(declared, GAMES);
    let states = state_inputs(p, &mut d);
    let run = move |cx: &Ctx<'_>| {
        let skeleton = cx.get(&eco)?;
        let built = match (&games, one_state(cx, &states)?) {
            (games, Some(state)) => tree::build_streaming(&skeleton, &params, |needed| from_state(cx, state, games.as_ref(), needed))?,
            (Some(input), None) => {
                let counts = cx.get(input)?;
                tree::build_streaming(&skeleton, &params, |needed| pruned(cx, input, &counts, needed))?
            }
            (None, None) => Built { tree: tree::build(&skeleton, None, &params), shared_keys: Vec::new() },
        };
        let Built { tree, shared_keys } = built;
        let mut text = format!("{} nodes, {} edges", tree.nodes.len(), tree.edge_count());
        if !shared_keys.is_empty() {
            text.push_str(&format!(", {} pairs of positions on one state key", shared_keys.len()));
            cx.warn(shared_keys.iter().map(|&(a, b)| shared_key_warning(&tree, a, b)));
        }
        Ok(Produced::encoded(tree, text, encode_tree))
    };
    Ok(vec![d.value(run).priority(700)])
}

/// The tree's counts state: the last `state` step's (shards in the cache), or a
/// counts-state source's (shards in its folder).
struct StateInput {
    input: Input<CountsState>,
    folder: Option<std::path::PathBuf>,
}

/// The counts states the tree reads: the last `state` step's, then the counts-state
/// sources' (a tree reads one at most: [`one_state`]).
fn state_inputs(p: &Planning<'_>, d: &mut Declaring<'_>) -> Vec<(String, StateInput)> {
    let local = p.state_files().last().map(|file| {
        let shown = format!("the state of `state = true` source {}", file.source);
        (shown, StateInput { input: d.input(state_id(file)), folder: None })
    });
    let folders = p.counts_state_files().map(|f| {
        let input = StateInput { input: d.input(counts_state_id(&f.name)), folder: Some(f.path.clone()) };
        (format!("counts-state source {}", f.name), input)
    });
    local.into_iter().chain(folders.collect::<Vec<_>>()).collect()
}

/// The one counts state of `states`, if any: two cannot be summed key by key.
fn one_state<'s>(cx: &Ctx<'_>, states: &'s [(String, StateInput)]) -> Result<Option<&'s StateInput>, BuildError> {
    match states {
        [] => Ok(None),
        [(_, one)] => Ok(Some(one)),
        many => {
            let names: Vec<&str> = many.iter().map(|(name, _)| name.as_str()).collect();
            Err(cx.fail(format!("a tree reads one counts state, not {}: keep one of them", names.join(" and "))))
        }
    }
}

/// The merged counts the tree can use, read as streams and pruned on the way (positions
/// and moves at once), so that only what is kept is ever held.
fn pruned(cx: &Ctx<'_>, input: &Input<MergedCounts>, games: &MergedCounts, needed: &Needed<'_>) -> Result<GameStats, BuildError> {
    let (positions, moves) = rayon::join(
        || kept(cx, &games.positions, |r: &PosRecord| needed.keeps(r.0, r.1.games())),
        || kept(cx, &games.moves, |r: &MoveRecord| needed.keeps(r.0, r.2.outcomes.games())),
    );
    use std::io::ErrorKind::{InvalidData, NotFound, UnexpectedEof};
    // A missing or corrupt run is the games step's: discarding its value reruns it.
    let failed = |run: String| {
        move |e: RunError| match e {
            RunError::Input { source, .. } if matches!(source.kind(), InvalidData | NotFound | UnexpectedEof) => {
                BuildError::from(CorruptCache { step: input.id().into(), hash: cx.hash_of(input), found: run })
            }
            other => cx.fail(other),
        }
    };
    Ok(GameStats::new(positions.map_err(failed(games.positions.name.clone()))?, moves.map_err(failed(games.moves.name.clone()))?))
}

/// The warning for two tree positions that a counts state could not tell apart: they
/// agree on the 72 bits of their keys it keeps, so each was given both one's counts.
fn shared_key_warning(tree: &Tree, a: u32, b: u32) -> crate::diagnostics::Warning {
    let (a, b) = (&tree.nodes[a as usize].epd, &tree.nodes[b as usize].epd);
    crate::diagnostics::Warning {
        kind: "state-key-collision".into(),
        file: "counts state".into(),
        line: None,
        message: format!("positions {a:?} and {b:?} agree on the 72 bits of their keys a counts state keeps: both show the counts of both"),
        text: None,
    }
}

/// The counts state and the other sources' merged counts read together in one pass, key
/// by key, and pruned on the way (see `games::state::kept`); keyed by the state's 72 bits.
fn from_state(cx: &Ctx<'_>, state: &StateInput, games: Option<&Input<MergedCounts>>, needed: &Needed<'_>) -> Result<GameStats, BuildError> {
    let input = &state.input;
    let counts_state = cx.get(input)?;
    let merged = games.map(|g| cx.get(g)).transpose()?;
    let cache = &cx.build.cache;
    // A folder's hot cuts at another threshold go to the cache: okb make never writes
    // into a source.
    let cuts = cache.root().join("sides").join("state-hot");
    let folder = state.folder.as_ref().map(|path| StateFolder::open(path).map(|f| f.with_cuts_in(cuts))).transpose().map_err(|e| cx.fail(e))?;
    let store: &dyn ShardStore = match &folder {
        Some(folder) => folder,
        None => cache,
    };
    let kept = (|| -> Result<_, MergeError> {
        let others = match &merged {
            Some(m) => Some(RunGroups::open(cache, "games", &m.positions.name, &m.moves.name)?),
            None => None,
        };
        state::kept(&counts_state, store, others, &needed.of_state())
    })();
    use std::io::ErrorKind::{InvalidData, NotFound, UnexpectedEof};
    let lost = |kind| matches!(kind, InvalidData | NotFound | UnexpectedEof);
    let (positions, moves) = kept.map_err(|e| match (&e, games) {
        (MergeError::Shard { shard, source }, _) if lost(source.kind()) && folder.is_none() => {
            BuildError::from(CorruptCache { step: input.id().into(), hash: cx.hash_of(input), found: shard.clone() })
        }
        (MergeError::Month(RunError::Input { source, .. }), Some(g)) if lost(source.kind()) => {
            BuildError::from(CorruptCache { step: g.id().into(), hash: cx.hash_of(g), found: cx.hash_of(g) })
        }
        _ => cx.fail(e),
    })?;
    Ok(GameStats { positions, moves, key_mask: KEY_MASK })
}

/// The records of the run `blob` (of the `games` step) that `keep` keeps.
fn kept<T: Record + 'static>(cx: &Ctx<'_>, run: &StoredRun, keep: impl Fn(&T) -> bool) -> Result<Vec<T>, RunError> {
    let cache = &cx.build.cache;
    let mut source: Source<'_, T> = runs::from_reader("games".into(), || cache.open_blob(&run.name))()?;
    let mut out = Vec::new();
    while let Some(record) = source()? {
        if keep(&record) {
            out.push(record);
        }
    }
    Ok(out)
}

/// The tree's postcard bytes, its nodes encoded on all cores (as the skeleton's).
pub fn encode_tree(tree: &Tree, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let Tree { nodes, root } = tree;
    crate::dataflow::cache::encode_seq_in_parallel(nodes, out)?;
    postcard::to_io(root, out).map(drop).map_err(std::io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eco::{EcoFormat, merge::MergeInput};

    #[test]
    fn the_tree_encoding_is_postcards() {
        let tsv = "eco\tname\tpgn\nA00\tA\t1. e4\nA01\tB: x\t1. e4 e5 2. Nf3 Nc6\n";
        let parsed = crate::eco::parse(EcoFormat::LichessTsv, "t.tsv", tsv.as_bytes());
        let skeleton = crate::eco::merge(&[MergeInput { format: EcoFormat::LichessTsv, file: "t.tsv", parsed: &parsed }], true);
        let tree = tree::build(&skeleton, None, &Default::default());
        let mut bytes = Vec::new();
        encode_tree(&tree, &mut bytes).unwrap();
        assert_eq!(bytes, postcard::to_allocvec(&tree).unwrap());
    }
}
