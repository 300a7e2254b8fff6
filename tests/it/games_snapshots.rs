//! Pinned statistics of well-known positions from the whole masters corpus.

use std::fmt::Write as _;
use std::path::Path;

use okb::games::aggregate::{AggregateOptions, aggregate_files, merge, merge_reports};
use okb::games::filter::GameFilter;
use okb::games::input::expand_paths;
use okb::position::{key, san};
use shakmaty::{Chess, Position};

fn play(line: &[&str]) -> Chess {
    let mut pos = Chess::default();
    for s in line {
        let m = s.parse::<shakmaty::san::San>().unwrap().to_move(&pos).unwrap();
        pos.play_unchecked(m);
    }
    pos
}

#[test]
fn masters_corpus_well_known_positions() {
    let pattern = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/masters/*.pgn.zst");
    let paths = expand_paths(&[pattern.to_string_lossy()]).unwrap();
    assert_eq!(paths.len(), 240);
    let aggs =
        aggregate_files(&paths, &GameFilter::default(), &AggregateOptions::default()).unwrap();
    let refs: Vec<_> = aggs.iter().collect();
    let stats = merge(&refs);
    let (bad, counters) = merge_reports(&refs);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "games read {}, counted {}, bad {}, filtered {}; positions {}, moves {}",
        counters.games_read,
        counters.games_counted,
        counters.games_bad,
        counters.games_filtered(),
        stats.positions.len(),
        stats.moves.len()
    );
    out.push_str(
        &bad.render_table().replace(&format!("{}/", pattern.parent().unwrap().display()), ""),
    );
    let lines: [(&str, &[&str]); 5] = [
        ("start", &[]),
        ("1.e4", &["e4"]),
        ("1.d4", &["d4"]),
        ("Sicilian 1.e4 c5", &["e4", "c5"]),
        ("QGD 1.d4 d5 2.c4 e6", &["d4", "d5", "c4", "e6"]),
    ];
    for (name, line) in lines {
        let pos = play(line);
        let k = key(&pos);
        let o = stats.position(k).unwrap();
        let _ =
            writeln!(out, "\n{name}: {} games (+{} ={} -{})", o.games(), o.white, o.draws, o.black);
        let mut moves: Vec<_> = stats.moves_from(k).to_vec();
        moves.sort_by_key(|(_, m, s)| (std::cmp::Reverse(s.outcomes.games()), *m));
        for (_, mk, s) in moves.iter().take(6) {
            let m = mk.to_move(&pos).unwrap();
            let avg = s.rating_sum.checked_div(s.rated_games).unwrap_or(0);
            let o = &s.outcomes;
            let _ = writeln!(
                out,
                "  {:<6} {:>7} (+{} ={} -{}) avg mover elo {} over {}",
                san(&pos, &m),
                o.games(),
                o.white,
                o.draws,
                o.black,
                avg,
                s.rated_games
            );
        }
    }
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("masters_well_known_positions", out);
    });
}
