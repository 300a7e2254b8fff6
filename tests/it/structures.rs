//! Phase 5: every structure of the catalogue on a position from opening theory, reached
//! by a real move sequence; the start position and random legal positions.

use okb::structure;
use shakmaty::{Chess, Position, san::San};

fn play(line: &str) -> Chess {
    let mut pos = Chess::default();
    for token in line.split_whitespace().filter(|t| !t.ends_with('.')) {
        let san: San = token.parse().unwrap_or_else(|_| panic!("bad SAN {token} in {line}"));
        let m = san.to_move(&pos).unwrap_or_else(|_| panic!("illegal {token} in {line}"));
        pos.play_unchecked(m);
    }
    pos
}

/// (structure, rule, line reaching it).
const THEORY: &[(&str, &str, &str)] = &[
    (
        "Hedgehog",
        "hedgehog",
        "1. c4 c5 2. Nf3 Nf6 3. Nc3 e6 4. g3 b6 5. Bg2 Bb7 6. O-O Be7 7. d4 cxd4 8. Qxd4 d6 9. e4 a6",
    ),
    ("Maroczy Bind", "maroczy", "1. e4 c5 2. Nf3 Nc6 3. d4 cxd4 4. Nxd4 g6 5. c4"),
    (
        "Nimzo-Indian Doubled C-Pawns",
        "nimzo-doubled-c",
        "1. d4 Nf6 2. c4 e6 3. Nc3 Bb4 4. a3 Bxc3+ 5. bxc3",
    ),
    ("Dutch Stonewall", "dutch-stonewall", "1. d4 f5 2. c4 Nf6 3. g3 e6 4. Bg2 d5 5. Nf3 c6"),
    ("Stonewall", "stonewall", "1. d4 d5 2. e3 Nf6 3. Bd3 c5 4. c3 Nc6 5. f4"),
    ("Benko", "benko", "1. d4 Nf6 2. c4 c5 3. d5 b5 4. cxb5 a6 5. bxa6 Bxa6"),
    ("Benoni", "benoni", "1. d4 Nf6 2. c4 c5 3. d5 e6 4. Nc3 exd5 5. cxd5 d6"),
    (
        "King's Indian",
        "kid-closed",
        "1. d4 Nf6 2. c4 g6 3. Nc3 Bg7 4. e4 d6 5. Nf3 O-O 6. Be2 e5 7. O-O Nc6 8. d5",
    ),
    ("King's Indian", "kid-tension", "1. d4 Nf6 2. c4 g6 3. Nc3 Bg7 4. e4 d6 5. Nf3 O-O 6. Be2 e5"),
    ("French", "french", "1. e4 e6 2. d4 d5 3. e5"),
    (
        "Open Ruy",
        "open-ruy",
        "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Nxe4 6. d4 b5 7. Bb3 d5 8. dxe5",
    ),
    ("Carlsbad", "carlsbad", "1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. cxd5 exd5 5. Bg5 c6"),
    ("Reversed Carlsbad", "reversed-carlsbad", "1. e4 c6 2. d4 d5 3. exd5 cxd5 4. Bd3 Nc6 5. c3"),
    // The technical design's example needs 4. Bxc4 exd4 5. exd4 before the d-pawn is isolated.
    ("Isolated Queen's Pawn", "iqp-white", "1. d4 d5 2. c4 dxc4 3. e3 e5 4. Bxc4 exd4 5. exd4"),
    (
        "Isolated Queen's Pawn",
        "iqp-black",
        "1. e4 e6 2. d4 d5 3. Nd2 c5 4. exd5 exd5 5. Ngf3 Nc6 6. Bb5 Bd6 7. dxc5 Bxc5",
    ),
    (
        "Isolated Queen's Pawn",
        "iqp-symmetric",
        "1. e4 c6 2. d4 d5 3. exd5 cxd5 4. c4 e6 5. Nc3 Nf6 6. Nf3 Be7 7. cxd5 exd5",
    ),
    (
        "Hanging Pawns",
        "hanging-black",
        "1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. Bg5 Be7 5. e3 O-O 6. Nf3 h6 7. Bh4 b6 8. cxd5 Nxd5 9. Bxe7 Qxe7 10. Nxd5 exd5 11. Rc1 Be6 12. Qa4 c5 13. Qa3 Rc8 14. Bb5 a6 15. dxc5 bxc5",
    ),
    (
        "Hanging Pawns",
        "hanging-white",
        "1. c4 Nf6 2. Nc3 e6 3. Nf3 d5 4. e3 c5 5. d4 cxd4 6. exd4 Be7 7. cxd5 Nxd5 8. Bd3 Nxc3 9. bxc3 b6 10. O-O Bb7 11. Qe2 O-O 12. c4",
    ),
    ("Caro-Kann", "caro-kann", "1. e4 c6 2. d4 d5 3. Nc3 dxe4 4. Nxe4 Bf5"),
    ("Caro-Kann", "caro-kann-rubinstein", "1. e4 e6 2. d4 d5 3. Nc3 dxe4 4. Nxe4 Nd7 5. Nf3 Ngf6"),
    ("Grünfeld Centre", "grunfeld", "1. d4 Nf6 2. c4 g6 3. Nc3 d5 4. cxd5 Nxd5 5. e4 Nxc3 6. bxc3"),
    ("Semi-Slav Triangle", "semi-slav", "1. d4 d5 2. c4 c6 3. Nf3 Nf6 4. Nc3 e6"),
    ("Slav", "slav", "1. d4 d5 2. c4 c6 3. Nf3 Nf6 4. Nc3"),
    ("Queen's Gambit Declined", "qgd", "1. d4 d5 2. c4 e6 3. Nc3 Nf6"),
    ("Boleslavsky", "boleslavsky", "1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6 6. Be2 e5"),
    ("Dragon", "dragon", "1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 g6"),
    ("Najdorf", "najdorf", "1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6"),
    ("Scheveningen", "scheveningen", "1. e4 c5 2. Nf3 e6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 d6"),
    ("Sicilian", "open-sicilian", "1. e4 c5 2. Nf3 Nc6 3. d4 cxd4 4. Nxd4 Nf6"),
    ("Botvinnik System", "botvinnik", "1. c4 e5 2. Nc3 Nc6 3. g3 g6 4. Bg2 Bg7 5. e4 d6 6. d3"),
    ("Closed Sicilian", "closed-sicilian", "1. e4 c5 2. Nc3 Nc6 3. g3 g6 4. Bg2 Bg7 5. d3 d6"),
    (
        "Closed Ruy",
        "closed-ruy",
        "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 8. c3 O-O 9. h3 Na5 10. Bc2 c5 11. d4",
    ),
    (
        "Closed Ruy",
        "closed-ruy-d3",
        "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. d3 b5 7. Bb3 d6",
    ),
    ("King's Indian Attack", "kia", "1. e4 e6 2. d3 d5 3. Nd2 Nf6 4. Ngf3 Be7 5. g3"),
    ("London", "london", "1. d4 d5 2. Bf4 Nf6 3. e3 e6 4. Nf3 c5 5. c3"),
    ("Colle", "colle", "1. d4 d5 2. Nf3 Nf6 3. e3 e6 4. Bd3 c5 5. c3"),
    ("Benoni", "benoni-chain", "1. d4 Nf6 2. c4 c5 3. d5 d6 4. Nc3 g6 5. e4 Bg7"),
    ("Benoni", "benoni-no-c4", "1. d4 Nf6 2. Nf3 c5 3. d5 d6 4. Nc3 g6 5. e4 Bg7"),
    ("King's Indian", "kid-main", "1. d4 Nf6 2. c4 g6 3. Nc3 Bg7 4. e4 d6 5. Nf3 O-O 6. Be2"),
    ("King's Indian", "kid-e3", "1. d4 Nf6 2. c4 g6 3. Nc3 Bg7 4. Nf3 O-O 5. Bg5 d6 6. e3"),
    ("King's Indian Attack", "kia-d3", "1. Nf3 d5 2. g3 c6 3. Bg2 Bg4 4. O-O Nd7 5. d3 e6"),
    ("Alapin", "alapin", "1. e4 c5 2. c3 d6 3. d4 Nf6 4. Bd3"),
    ("Alapin", "alapin-e5", "1. e4 c5 2. c3 Nf6 3. e5 Nd5 4. d4 cxd4 5. cxd4 d6 6. Nf3 e6"),
    ("French", "french-dxc5", "1. e4 e6 2. d4 d5 3. Nd2 c5 4. Ngf3 a6 5. dxc5 Bxc5 6. Bd3"),
    ("French", "french-tension", "1. e4 e6 2. d4 d5 3. Nc3 Nf6 4. Bg5 Be7"),
    (
        "Grünfeld",
        "grunfeld-exchanged",
        "1. d4 Nf6 2. c4 g6 3. Nc3 d5 4. cxd5 Nxd5 5. Bd2 Bg7 6. e3",
    ),
    ("Catalan", "catalan-early", "1. d4 Nf6 2. c4 e6 3. g3 Bb4+ 4. Bd2 Be7"),
    (
        "Catalan",
        "catalan-cxd4",
        "1. d4 Nf6 2. c4 e6 3. g3 d5 4. Bg2 Be7 5. Nf3 O-O 6. Qc2 c5 7. O-O cxd4 8. Nxd4",
    ),
    ("Tarrasch", "tarrasch", "1. d4 d5 2. c4 e6 3. Nc3 c5 4. e3 Nf6 5. Nf3 Nc6"),
    (
        "Queen's Gambit Declined",
        "qgd-cxd4",
        "1. d4 Nf6 2. c4 e6 3. Nc3 Bb4 4. e3 O-O 5. Nf3 d5 6. Bd3 c5 7. O-O cxd4 8. exd4",
    ),
    (
        "Queen's Gambit Declined",
        "qgd-dxc5",
        "1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. Nf3 Be7 5. Bf4 O-O 6. e3 c5 7. dxc5 Bxc5",
    ),
    (
        "Sicilian",
        "sicilian-bxc6",
        "1. e4 c5 2. Nf3 e6 3. d4 cxd4 4. Nxd4 Nc6 5. Nc3 a6 6. Nxc6 bxc6 7. Bd3 d5 8. O-O",
    ),
    ("Closed Sicilian", "grand-prix", "1. e4 c5 2. Nc3 Nc6 3. f4 g6 4. Nf3 Bg7 5. Bc4 e6"),
    ("Anti-Sicilian", "anti-sicilian-exd5", "1. e4 c5 2. Nf3 Nf6 3. Nc3 d5 4. exd5 Nxd5"),
    (
        "Closed Ruy",
        "closed-ruy-d5",
        "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 8. c3 O-O 9. h3 Na5 10. Bc2 c5 11. d4 Qc7 12. Nbd2 Nc6 13. d5",
    ),
    ("Caro-Kann", "caro-kann-two-knights", "1. e4 c6 2. Nc3 d5 3. Nf3 Bg4 4. h3 Bxf3 5. Qxf3 e6"),
    (
        "Ruy Lopez Exchange",
        "exchange-ruy-open",
        "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Bxc6 dxc6 5. O-O f6 6. d4 exd4 7. Nxd4",
    ),
    (
        "Pirc–Modern",
        "pirc-d5",
        "1. e4 d6 2. d4 Nf6 3. Nc3 g6 4. Nf3 Bg7 5. Be2 O-O 6. O-O Nc6 7. d5 Nb8",
    ),
    ("Grünfeld", "english-grunfeld", "1. c4 Nf6 2. Nf3 g6 3. g3 Bg7 4. Bg2 d5 5. cxd5 Nxd5"),
    (
        "Sveshnikov",
        "sveshnikov",
        "1. e4 c5 2. Nf3 Nc6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 e5 6. Ndb5 d6 7. Bg5 a6 8. Na3 b5 9. Bxf6 gxf6",
    ),
    (
        "Alekhine Four Pawns",
        "alekhine-four-pawns",
        "1. e4 Nf6 2. e5 Nd5 3. d4 d6 4. c4 Nb6 5. f4 Bf5 6. Nc3 e6",
    ),
    (
        "Alekhine Four Pawns",
        "alekhine-four-pawns-fxe5",
        "1. e4 Nf6 2. e5 Nd5 3. d4 d6 4. c4 Nb6 5. f4 dxe5 6. fxe5 Bf5 7. Nc3 e6 8. Nf3 Be7 9. Be2 O-O 10. O-O f6",
    ),
    ("Colle–Zukertort", "zukertort", "1. d4 d5 2. Nf3 Nf6 3. e3 e6 4. Bd3 c5 5. b3"),
    ("Small Centre", "small-centre", "1. e4 e5 2. Nf3 Nc6 3. d3 Nf6 4. g3 d5 5. exd5 Nxd5 6. Bg2"),
];

/// Every position a test or okb's table names: (expected structure, line).
fn labelled_lines() -> Vec<(String, String)> {
    let hand = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/structures/hand-checked.tsv"
    ))
    .unwrap();
    let table = include_str!("../../src/structure/skeletons.tsv");
    let rows = |text: &str| -> Vec<(String, String)> {
        text.lines()
            .skip(1)
            .filter_map(|l| l.split_once('\t'))
            .map(|(n, m)| (n.to_string(), m.to_string()))
            .collect()
    };
    let families = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/structures/hand-checked-families.tsv"
    ))
    .unwrap();
    let mut all = rows(&hand);
    all.extend(rows(&families));
    all.extend(rows(table));
    all.extend(THEORY.iter().map(|(n, _, l)| (n.to_string(), l.to_string())));
    all
}

#[test]
fn every_rule_names_its_position_from_theory() {
    for (name, rule, line) in THEORY {
        let pos = play(line);
        assert_eq!(structure::by_rules(pos.board()).map(|r| r.id), Some(*rule), "{line}");
        assert_eq!(structure::classify(&pos).structure.name, *name, "{line}");
    }
}

#[test]
fn every_rule_fires_on_some_labelled_position() {
    let fired: std::collections::BTreeSet<&str> = labelled_lines()
        .iter()
        .filter_map(|(_, line)| structure::by_rules(play(line).board()).map(|r| r.id))
        .collect();
    let dead: Vec<&str> =
        structure::RULES.iter().map(|r| r.id).filter(|id| !fired.contains(id)).collect();
    assert!(dead.is_empty(), "rules no labelled position reaches: {dead:?}");
}

/// The bar: at least 95 % of the hand-checked theory positions named as a strong
/// player names them, and none named where the right answer is Unknown.
#[test]
fn hand_checked_positions_are_named_as_theory_names_them() {
    hand_checked_file_is_named_as_theory_names_it("hand-checked.tsv", 60);
}

/// Positions around the families issue 33 found misnamed (English Hedgehog without e4,
/// Botvinnik before d3, Grob, Hippopotamus against Hippopotamus, Slav main line against
/// Meran, King's Indian Attack with the e5 wedge), written from theory before okb named
/// them: the same bar.
#[test]
fn hand_checked_families_are_named_as_theory_names_them() {
    hand_checked_file_is_named_as_theory_names_it("hand-checked-families.tsv", 30);
}

/// Issue 44 item 13: 50 positions written from theory before okb named them (40 with a
/// structure a strong player names at once, 10 with none: gambit wrecks and short
/// openings). Before the rules changed okb named 22 of the 40 right and gave 6 of the 10
/// a false name, mostly an opening's name; a structure now comes from the skeleton only.
#[test]
fn round_four_positions_are_named_from_the_skeleton_or_unknown() {
    let s = Score::of("hand-checked-round4.tsv");
    assert_eq!((s.named_rows, s.unknown_rows), (40, 10));
    assert!(s.named_unknowns.is_empty(), "named where Unknown is right: {:#?}", s.named_unknowns);
    assert!(s.named_right >= ROUND_FOUR_NAMED_RIGHT, "{:#?}", s.wrong);
}

/// Round 4's positions with a structure that okb names right (of 40). The one miss is the
/// Caro-Kann Advance after ...e6 and ...c5: its skeleton is the French Advance's, and only
/// the bishop outside the chain tells them apart.
const ROUND_FOUR_NAMED_RIGHT: usize = 39;

/// How okb names the positions of one hand-checked file.
struct Score {
    /// Rows whose right answer is a structure.
    named_rows: usize,
    /// Rows whose right answer is Unknown.
    unknown_rows: usize,
    /// Rows with a structure named as expected.
    named_right: usize,
    /// Every row named otherwise, with what okb said.
    wrong: Vec<String>,
    /// Rows where Unknown is right but okb gave a name.
    named_unknowns: Vec<String>,
}

impl Score {
    /// Scores `file` of fixtures/structures (`structure<TAB>moves` rows).
    fn of(file: &str) -> Score {
        let path = format!("{}/fixtures/structures/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let rows: Vec<(&str, &str)> =
            text.lines().skip(1).filter_map(|l| l.split_once('\t')).collect();
        let mut wrong = Vec::new();
        for (expected, line) in &rows {
            let got = structure::classify(&play(line)).structure.name;
            if got != *expected {
                wrong.push(format!("{line}: expected {expected}, got {got}"));
            }
        }
        let unknown_rows = rows.iter().filter(|(e, _)| *e == "Unknown").count();
        let named_unknowns: Vec<String> =
            wrong.iter().filter(|w| w.contains("expected Unknown")).cloned().collect();
        let named_rows = rows.len() - unknown_rows;
        let named_right = named_rows - (wrong.len() - named_unknowns.len());
        println!(
            "{file}: {named_right} of {named_rows} named right, {} of {unknown_rows} \
             no-structure positions named",
            named_unknowns.len()
        );
        Score { named_rows, unknown_rows, named_right, wrong, named_unknowns }
    }
}

/// `file` of fixtures/structures (at least `least` rows of `structure<TAB>moves`): at most
/// 5 % named otherwise, none named where Unknown is right.
fn hand_checked_file_is_named_as_theory_names_it(file: &str, least: usize) {
    let s = Score::of(file);
    let rows = s.named_rows + s.unknown_rows;
    assert!(rows >= least, "{file}: {rows} positions");
    assert!(s.named_unknowns.is_empty(), "named where Unknown is right: {:#?}", s.named_unknowns);
    assert!((rows - s.wrong.len()) * 100 >= rows * 95, "{:#?}", s.wrong);
    assert!(s.unknown_rows >= 5);
}

#[test]
fn no_rule_fires_before_both_sides_have_moved_a_centre_pawn() {
    // The c-, d-, e- and f-pawns: each side here has kept all four at home.
    for line in [
        "1. Nf3 Nf6 2. g3 g6 3. Bg2 Bg7 4. O-O O-O",
        "1. e4 Nf6 2. Nc3 Nc6",
        "1. g3 b6 2. b3 g6 3. Bb2 Bb7",
    ] {
        let pos = play(line);
        assert!(!structure::centre_is_engaged(pos.board()), "{line}");
        assert_eq!(structure::classify(&pos).structure.name, "Unknown", "{line}");
    }
}

#[test]
fn the_iqp_appears_only_once_the_pawn_is_isolated() {
    // 3...e5 is the design's example; the isolated pawn only exists after 5. exd4.
    for line in ["1. d4 d5 2. c4 dxc4 3. e3 e5", "1. d4 d5 2. c4 dxc4 3. e3 e5 4. Bxc4 exd4"] {
        assert_ne!(
            structure::classify(&play(line)).structure.name,
            "Isolated Queen's Pawn",
            "{line}"
        );
    }
}

#[test]
fn the_start_position_and_early_moves_are_unknown() {
    for line in ["", "1. e4", "1. d4 Nf6", "1. Nf3 Nf6 2. c3"] {
        assert_eq!(structure::classify(&play(line)).structure.name, "Unknown", "{line:?}");
    }
    // Both sides have moved a centre pawn, but 1. e4 e5 is an opening, not a structure:
    // no rule names it after the opening (issue 44 item 13).
    assert_eq!(structure::classify(&play("1. e4 e5 2. Nf3 Nc6")).structure.name, "Unknown");
    assert_eq!(structure::classify(&play("1. e4 e6 2. d4 d5 3. e5")).structure.name, "French");
}

#[test]
fn random_legal_positions_never_panic() {
    // A fixed xorshift sequence: deterministic random games of up to 200 plies.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut named = 0;
    let mut positions = 0;
    for _ in 0..300 {
        let mut pos = Chess::default();
        for _ in 0..200 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            let m = moves[(next() % moves.len() as u64) as usize];
            pos.play_unchecked(m);
            let tag = structure::classify(&pos);
            positions += 1;
            if tag.confidence.is_some() {
                named += 1;
            }
        }
    }
    assert!(positions > 10_000);
    // Random play rarely builds a theory skeleton: most positions are Unknown.
    assert!(named < positions / 2, "{named} of {positions} named");
}

fn okb(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_okb")).args(args).output().unwrap()
}

#[test]
fn the_structure_command_prints_the_label_and_the_rule() {
    let fen = "r1bqkb1r/pp3ppp/2n2n2/3p4/3P4/2N2N2/PP3PPP/R1BQKB1R w KQkq - 0 7";
    let out = okb(&["structure", fen]);
    assert_eq!(
        (out.status.code(), String::from_utf8_lossy(&out.stdout).trim()),
        (Some(0), "Isolated Queen's Pawn")
    );
    let out = okb(&["structure", "--json", fen]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["rule"]["id"], "iqp-symmetric");
    assert_eq!(v["rule"]["white"], "d4 -c -e");
    assert!(!v["white_plans"].as_array().unwrap().is_empty());
    let out = okb(&["structure", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "Unknown");
    let out = okb(&["structure", "not a fen"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a fen"));
    assert!(out.stdout.is_empty());
}
