//! Filters: speed buckets, ratings, dates, BOT, variant, FEN start and `*`.

use std::path::Path;

use okb::games::aggregate::aggregate_file;
use okb::games::filter::{GameFilter, Speed};
use okb::games::report::FilterReason;

fn run(filter: GameFilter) -> (u64, Vec<(FilterReason, u64)>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/games/filters.pgn");
    let agg = aggregate_file(&path, &filter, 15).unwrap();
    assert_eq!(agg.counters.games_read, 9);
    assert!(agg.bad.is_empty(), "{}", agg.bad.render_table());
    (agg.counters.games_counted, agg.counters.filtered.into_iter().collect())
}

const FIXED: [(FilterReason, u64); 4] = [
    (FilterReason::Variant, 1),
    (FilterReason::NonStandardStart, 1),
    (FilterReason::Bot, 1),
    (FilterReason::NoResult, 1),
];

fn with(extra: Option<(FilterReason, u64)>) -> Vec<(FilterReason, u64)> {
    let mut v: Vec<_> = FIXED.into_iter().chain(extra).collect();
    v.sort();
    v
}

#[test]
fn fixed_rules_apply_without_configuration() {
    // Counted: blitz, bullet, classical, standard-FEN game, correspondence.
    assert_eq!(run(GameFilter::default()), (5, with(None)));
}

#[test]
fn ratings() {
    let f = GameFilter { min_rating: Some(2000), ..Default::default() };
    assert_eq!(run(f), (2, with(Some((FilterReason::Rating, 3)))));
    let f = GameFilter { min_avg_rating: Some(2000), ..Default::default() };
    assert_eq!(run(f), (3, with(Some((FilterReason::Rating, 2)))));
}

#[test]
fn speeds() {
    let f = GameFilter { speeds: vec![Speed::Blitz, Speed::Bullet], ..Default::default() };
    assert_eq!(run(f), (2, with(Some((FilterReason::Speed, 3)))));
    let f = GameFilter { speeds: vec![Speed::Correspondence], ..Default::default() };
    assert_eq!(run(f), (1, with(Some((FilterReason::Speed, 4)))));
}

#[test]
fn dates() {
    let f = GameFilter {
        date_from: Some("2013.01.06".into()),
        date_to: Some("2013.01.31".into()),
        ..Default::default()
    };
    assert_eq!(run(f), (1, with(Some((FilterReason::Date, 4)))));
    let f = GameFilter { date_to: Some("1999.??.??".into()), ..Default::default() };
    assert_eq!(run(f), (1, with(Some((FilterReason::Date, 4)))));
}

#[test]
fn filters_parse_from_toml_names() {
    let f: GameFilter = serde_json::from_str(
        r#"{"min_avg_rating":1800,"min_rating":1500,"speeds":["blitz","rapid","classical"],"date_from":"2013.01.01","date_to":"2013.12.31"}"#,
    )
    .unwrap();
    assert_eq!(f.speeds, vec![Speed::Blitz, Speed::Rapid, Speed::Classical]);
    assert!(f.compile().is_ok());
}
