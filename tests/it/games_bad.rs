//! Bad games are skipped, counted by reason and located; good games around them count.

use std::path::{Path, PathBuf};

use okb::games::aggregate::aggregate_file;
use okb::games::filter::GameFilter;
use okb::games::report::{BadKind, FilterReason};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/games").join(name)
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
    assert!(table.contains("non_utf8_tag") && table.contains("kept"), "{table}");
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
    assert!(agg.bad.kinds[&BadKind::NonUtf8Tag].count > 0, "Karpov.pgn is Latin-1");
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

/// Where each game of PGN `text` starts (its `[Event ` line after a blank line or at 0).
fn game_starts(text: &[u8]) -> Vec<usize> {
    let mut starts: Vec<usize> = (0..text.len())
        .filter(|&i| {
            text[i..].starts_with(b"[Event ")
                && (i == 0 || text[..i].ends_with(b"\n\n") || text[..i].ends_with(b"\r\n\r\n"))
        })
        .collect();
    starts.dedup();
    starts
}

#[test]
fn a_truncated_zstd_file_keeps_exactly_the_games_before_the_break_and_says_where() {
    let full =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/masters/Abdusattorov.pgn.zst");
    let compressed = std::fs::read(&full).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.pgn.zst");
    std::fs::write(&cut, &compressed[..compressed.len() / 2]).unwrap();

    let agg = aggregate_file(&cut, &GameFilter::default(), 15).unwrap();
    let broken = agg.broken.as_ref().expect("the break is reported");
    assert!(broken.reason.contains("incomplete frame"), "{broken:?}");

    // Independently: the whole file's text up to the break, without the game it cut.
    let text = zstd::decode_all(compressed.as_slice()).unwrap();
    let prefix = &text[..broken.byte as usize];
    assert_eq!(broken.line, 1 + prefix.iter().filter(|&&b| b == b'\n').count() as u64);
    let starts = game_starts(prefix);
    assert!(starts.len() > 100, "half the file holds many games");
    let kept = dir.path().join("kept.pgn");
    std::fs::write(&kept, &prefix[..*starts.last().unwrap()]).unwrap();
    let expected = aggregate_file(&kept, &GameFilter::default(), 15).unwrap();
    assert_eq!(agg.counters, expected.counters);
    assert_eq!(agg.stats, expected.stats);
    assert_eq!(agg.counters.games_read, starts.len() as u64 - 1);
}

#[test]
fn a_corrupt_block_ends_the_file_at_the_damage() {
    let full =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/masters/Abdusattorov.pgn.zst");
    let mut bytes = std::fs::read(&full).unwrap();
    let at = bytes.len() / 3;
    for b in &mut bytes[at..at + 64] {
        *b ^= 0x55;
    }
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.pgn.zst");
    std::fs::write(&bad, &bytes).unwrap();
    let agg = aggregate_file(&bad, &GameFilter::default(), 15).unwrap();
    let broken = agg.broken.as_ref().expect("zstd detects the damage");
    assert!(broken.line > 1 && broken.byte > 0, "{broken:?}");
    assert!(agg.counters.games_read > 0);
    // Readers that cannot skip a file (convert, classify) fail, naming file, line and byte.
    let mut chunker =
        okb::games::input::Chunker::open(&bad, 1 << 20, okb::games::input::Boundary::Pgn).unwrap();
    let error = loop {
        match chunker.next_chunk() {
            Ok(Some(_)) => continue,
            Ok(None) => panic!("the damage went unnoticed"),
            Err(e) => break e.to_string(),
        }
    };
    assert!(
        error.contains(&format!("bad.pgn.zst:{}: read error at byte {}", broken.line, broken.byte)),
        "{error}"
    );
}
