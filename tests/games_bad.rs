//! Bad games are skipped, counted by reason and located; good games around them count.

use std::path::{Path, PathBuf};

use okb::games::aggregate::aggregate_file;
use okb::games::filter::GameFilter;
use okb::games::report::{BadKind, FilterReason};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/games")
        .join(name)
}

fn lines(agg: &okb::games::aggregate::FileAggregate, kind: BadKind) -> Vec<u64> {
    agg.bad
        .kinds
        .get(&kind)
        .map(|r| r.examples.iter().map(|l| l.line).collect())
        .unwrap_or_default()
}

#[test]
fn each_kind_of_bad_game_is_counted_with_its_line() {
    let agg = aggregate_file(&fixture("bad.pgn"), &GameFilter::default(), 15).unwrap();
    assert_eq!(lines(&agg, BadKind::IllegalSan), vec![6]);
    assert_eq!(lines(&agg, BadKind::AmbiguousSan), vec![11]);
    assert_eq!(lines(&agg, BadKind::Garbage), vec![16]);
    assert_eq!(lines(&agg, BadKind::OverlongComment), vec![18]);
    assert_eq!(lines(&agg, BadKind::NonUtf8Tag), vec![23]);
    assert_eq!(lines(&agg, BadKind::Truncated), vec![34]);
    // ok, illegal, ambiguous, overlong, latin-1, ok, truncated (garbage is not a game).
    assert_eq!(agg.counters.games_read, 7);
    assert_eq!(agg.counters.games_bad, 4);
    assert_eq!(agg.counters.games_counted, 3, "the Latin-1 game counts");
    let table = agg.bad.render_table();
    assert!(table.contains("bad.pgn:6"), "{table}");
    assert!(
        table.contains("non_utf8_tag") && table.contains("kept"),
        "{table}"
    );
    // The three good games: 1.e4 twice (1-0), 1.c4 once (draw).
    let start = okb::position::key(&shakmaty::Chess::default());
    let s = agg.stats.position(start).unwrap();
    assert_eq!((s.white, s.draws, s.black), (2, 1, 0));
}

#[test]
fn latin1_master_files_still_count() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/masters/Karpov.pgn.zst");
    let agg = aggregate_file(&path, &GameFilter::default(), 15).unwrap();
    let c = &agg.counters;
    assert!(
        agg.bad.kinds[&BadKind::NonUtf8Tag].count > 0,
        "Karpov.pgn is Latin-1"
    );
    assert_eq!(c.games_bad, 0, "{}", agg.bad.render_table());
    assert_eq!(c.games_counted + c.games_filtered(), c.games_read);
    assert!(c.games_counted > 3000, "{c:?}");
}

#[test]
fn bgn_lines_are_games_with_piece_checks() {
    let agg = aggregate_file(&fixture("sample.bgn"), &GameFilter::default(), 15).unwrap();
    assert_eq!(lines(&agg, BadKind::PieceMismatch), vec![3]);
    assert_eq!(lines(&agg, BadKind::IllegalMove), vec![4]);
    assert_eq!(lines(&agg, BadKind::BadJson), vec![5]);
    assert_eq!(agg.counters.games_counted, 2);
    assert_eq!(agg.counters.filtered.get(&FilterReason::NoResult), Some(&1));
    let start = okb::position::key(&shakmaty::Chess::default());
    let e4 = agg.stats.moves_from(start);
    assert_eq!(e4.len(), 1);
    assert_eq!(e4[0].2.outcomes.games(), 2);
    assert_eq!((e4[0].2.rated_games, e4[0].2.rating_sum), (1, 2400));
}
