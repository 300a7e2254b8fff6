//! A crawl's answers as the tree's counts, the same [`GameStats`] that game files give.
//!
//! - A position asked about counts the games of its answer (`white`, `draws`, `black`).
//! - Every move of every answer is a move with its games; the explorer's
//!   `averageRating` (both players' average) stands for the mover's and the opponent's.
//! - A position reached by a listed move but not asked about (below `min_games`, or past
//!   the crawl's depth) counts the games of the moves that lead to it.
//! - With a `root`, the moves from the start position to it count the root's games, so
//!   the tree reaches the root from the start position.

use rayon::prelude::*;
use shakmaty::{Chess, Position};

use super::explorer;
use super::manifest::Manifest;
use crate::games::stats::{GameStats, MoveStats, Outcomes};
use crate::position::{KeyMap, MoveKey, PositionKey};

/// One answer, reduced: the position, its games and its moves with their children.
type Reduced = (PositionKey, Outcomes, Vec<(MoveKey, MoveStats, PositionKey)>);

/// The counts of the crawl `manifest`, reading each answer with `read` (by hash); on all
/// cores. The error names the position and the answer.
pub fn from_manifest(
    manifest: &Manifest,
    read: impl Fn(&str) -> Result<Vec<u8>, String> + Sync,
) -> Result<GameStats, String> {
    let reduced: Vec<Reduced> = manifest
        .positions
        .par_iter()
        .map(|entry| {
            let pos = crate::position::parse_fen(&entry.fen)
                .map_err(|e| format!("manifest position {}: {e}", entry.fen))?;
            let body = read(&entry.answer)?;
            let (answer, moves) = explorer::parse(&body, &pos)
                .map_err(|e| format!("answer {} for {}: {e}", entry.answer, entry.request))?;
            Ok(reduce(&pos, &answer, &moves))
        })
        .collect::<Result<_, String>>()?;
    let mut positions: KeyMap<PositionKey, Outcomes> =
        reduced.iter().map(|(k, o, _)| (*k, *o)).collect();
    let mut derived: KeyMap<PositionKey, Outcomes> = KeyMap::default();
    let mut moves = Vec::new();
    for (key, _, listed) in &reduced {
        for (m, stats, child) in listed {
            if !positions.contains_key(child) {
                derived.entry(*child).or_default().add(&stats.outcomes);
            }
            moves.push((*key, *m, *stats));
        }
    }
    positions.extend(derived);
    add_root_path(manifest, &reduced, &mut positions, &mut moves)?;
    let mut positions: Vec<_> = positions.into_iter().collect();
    positions.sort_unstable_by_key(|(k, _)| *k);
    moves.sort_unstable_by_key(|(k, m, _)| (*k, *m));
    moves.dedup_by_key(|(k, m, _)| (*k, *m));
    Ok(GameStats::new(positions, moves))
}

fn reduce(pos: &Chess, answer: &explorer::Answer, moves: &[shakmaty::Move]) -> Reduced {
    let key = crate::position::key(pos);
    let listed = moves
        .iter()
        .zip(&answer.moves)
        .map(|(m, played)| {
            let outcomes = played.outcomes();
            let rated = if played.average_rating > 0 { outcomes.games() } else { 0 };
            let rating_sum = played.average_rating * rated;
            let stats = MoveStats {
                outcomes,
                rating_sum,
                rated_games: rated,
                opponent_rating_sum: rating_sum,
                opponent_rated_games: rated,
            };
            (MoveKey::new(m), stats, crate::position::child_key(pos, key, m))
        })
        .collect();
    (key, answer.outcomes(), listed)
}

/// The moves from the start position to the root, each counting the root's games.
fn add_root_path(
    manifest: &Manifest,
    reduced: &[Reduced],
    positions: &mut KeyMap<PositionKey, Outcomes>,
    moves: &mut Vec<(PositionKey, MoveKey, MoveStats)>,
) -> Result<(), String> {
    let tokens = crate::eco::line::move_tokens(&manifest.params.root);
    let line = crate::eco::line::play_san(&tokens).map_err(|e| {
        format!("root {:?}: move {} ({}): {}", manifest.params.root, e.ply + 1, e.token, e.reason)
    })?;
    let Some(root_games) = manifest.root_index().map(|i| reduced[i].1) else { return Ok(()) };
    let mut pos = Chess::default();
    for m in line {
        let key = crate::position::key(&pos);
        positions.entry(key).or_insert(root_games);
        moves.push((
            key,
            MoveKey::new(&m),
            MoveStats { outcomes: root_games, ..Default::default() },
        ));
        pos.play_unchecked(m);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crawl::manifest::Entry;
    use crate::crawl::{CrawlParams, Database};

    fn answer(white: u64, moves: &[(&str, u64)]) -> String {
        let moves: Vec<String> = moves
            .iter()
            .map(|(uci, n)| format!(r#"{{"uci":"{uci}","san":"?","averageRating":2500,"white":{n},"draws":0,"black":0}}"#))
            .collect();
        format!(
            r#"{{"white":{white},"draws":0,"black":0,"moves":[{}],"opening":null}}"#,
            moves.join(",")
        )
    }

    #[test]
    fn answers_become_counts_with_unasked_children_summed_and_the_root_reached() {
        let params = CrawlParams {
            database: Database::Masters,
            root: "1. e4".into(),
            max_ply: 2,
            min_games: 10,
            moves: 12,
            speeds: vec![],
            ratings: vec![],
            since: None,
            until: None,
        };
        let after_e4 = crate::eco::line::position_after("1. e4").unwrap();
        let fen = format!("{} 0 1", crate::position::epd(&after_e4));
        let bodies = [answer(100, &[("c7c5", 60), ("e7e5", 40)])];
        let manifest = Manifest::new(
            params,
            vec![Entry { fen, ply: 1, request: "/masters?x".into(), answer: "0".into() }],
        );
        let stats = from_manifest(&manifest, |h| {
            Ok(bodies[h.parse::<usize>().unwrap()].as_bytes().to_vec())
        })
        .unwrap();
        let start = crate::position::key(&Chess::default());
        assert_eq!(
            stats.position(start).unwrap().games(),
            100,
            "the start position counts the root's games"
        );
        assert_eq!(stats.moves_from(start).len(), 1);
        let sicilian = crate::eco::line::position_after("1. e4 c5").unwrap();
        assert_eq!(stats.position(crate::position::key(&sicilian)).unwrap().games(), 60);
        let e4 = crate::position::key(&after_e4);
        let rated = stats.moves_from(e4)[0].2;
        assert_eq!(
            (rated.rating_sum / rated.rated_games, rated.opponent_rated_games),
            (2500, rated.rated_games)
        );
        let broken = from_manifest(&manifest, |_| Ok(b"{}".to_vec())).unwrap_err();
        assert!(broken.contains("answer 0 for /masters?x"), "{broken}");
    }
}
