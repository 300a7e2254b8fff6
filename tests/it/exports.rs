//! The per-opening PGN and packed move-record exports on the fixture pipeline: insta
//! snapshots, byte-identical rebuilds across thread counts, and independent readers
//! (python-chess for PGN, `okb inspect` for packed records) that get the tree back.

use crate::common;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::process::Command;

use common::{Project, fixture, mini_sources, tree_bytes};

/// The small fixture taxonomies plus ten hand-written games (QGD, Sicilian, 1. e4 e5 …).
fn project(extra: &str) -> Project {
    let games =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/games/openings.pgn");
    Project::with_pipeline(&format!(
        r#"{}
[sources.pgn-extract]
kind = "eco-pgn"
path = "{}"
[sources.games]
kind = "pgn"
path = "{}"
[tree]
max_ply = 10
min_games = 1
[exports.pgn]
format = "pgn"
output = "out/pgn"
max_depth = 6
[exports.packed]
format = "packed"
output = "out/moves.okbm"
{extra}
"#,
        mini_sources(),
        fixture("mini-eco.pgn"),
        games.display()
    ))
}

#[test]
fn pgn_export_matches_its_snapshot_and_is_identical_across_thread_counts() {
    let p = project("");
    p.make(&["-j", "1"]);
    let files = tree_bytes(&p.path("out/pgn"));
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "B00-king-s-pawn-game.pgn",
            "B20-sicilian-defense.pgn",
            "B50-sicilian-defense-modern-variations.pgn",
            "C20-king-s-pawn-game.pgn",
            "D06-queen-s-gambit.pgn",
            "D30-queen-s-gambit-declined.pgn",
            "D35-queen-s-gambit-declined-normal-defense.pgn",
            "E00-indian-defense-normal-variation.pgn",
        ]
    );
    let mut all = String::new();
    for (name, bytes) in &files {
        all.push_str(&format!("===== {name}\n{}", String::from_utf8(bytes.clone()).unwrap()));
    }
    snapshot!("fixture_pgn_export", all);

    let again = project("");
    again.make(&["-j", "2"]);
    assert_eq!(tree_bytes(&again.path("out/pgn")), files, "same bytes with 1 and 2 threads");
}

/// python-chess's view of a PGN file: headers, every (position, move) edge, and the
/// `[%eval]` of every position reached (centipawns, or ±100000 + the mate distance, the
/// sign saying who mates).
const READ_PGN: &str = r#"
import json, sys, chess, chess.pgn
out = []
for path in sys.argv[1:]:
    with open(path) as f:
        game = chess.pgn.read_game(f)
        assert chess.pgn.read_game(f) is None, "one game per file"
    assert not game.errors, game.errors
    edges, evals, stack = [], {}, [game]
    while stack:
        node = stack.pop()
        board = node.board()
        for child in node.variations:
            edges.append([board.epd(), child.move.uci()])
            e = child.eval()
            if e is not None:
                w = e.white()
                if w.mate() is None:
                    evals[child.board().epd()] = w.score()
                else:
                    # Mate 0: the side to move has been mated, so the other side won.
                    won = w.mate() > 0 if w.mate() != 0 else child.board().turn == chess.BLACK
                    evals[child.board().epd()] = (100000 if won else -100000) + w.mate()
            stack.append(child)
    mainline = [m.uci() for m in game.mainline_moves()]
    out.append({"file": path.split("/")[-1], "eco": game.headers["ECO"], "opening": game.headers["Opening"],
                "edges": edges, "evals": evals, "mainline": mainline})
print(json.dumps(out))
"#;

/// The store's edges: parent position key → [(uci, child position key)].
fn store_edges(db: &rusqlite::Connection) -> BTreeMap<String, Vec<(String, String)>> {
    let mut stmt = db
        .prepare(
            "SELECT p.position_key, c.move_uci, k.position_key FROM node_children c
             JOIN opening_nodes p ON p.node_id = c.parent_id JOIN opening_nodes k ON k.node_id = c.child_id",
        )
        .unwrap();
    let mut edges: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let rows = stmt
        .query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?))
        })
        .unwrap();
    for row in rows {
        let (parent, uci, child) = row.unwrap();
        edges.entry(parent).or_default().push((uci, child));
    }
    edges
}

#[test]
fn python_chess_reads_every_pgn_file_back_to_the_tree_with_the_engine_evals() {
    // Real Stockfish at a low depth annotates every node, so every move carries an eval.
    let p =
        project("[engine]\nengines = 2\ndepth_branching = 5\ndepth_leaf = 5\ndepth_popular = 5\n");
    p.make(&[]);
    let db = rusqlite::Connection::open(p.path("build/okb.sqlite")).unwrap();
    let edges = store_edges(&db);
    let evals: BTreeMap<String, (i64, Option<i64>)> = db
        .prepare("SELECT position_key, stockfish_eval, stockfish_mate FROM opening_nodes WHERE stockfish_eval IS NOT NULL")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let paths: Vec<String> = tree_bytes(&p.path("out/pgn"))
        .iter()
        .map(|(n, _)| p.path("out/pgn").join(n).display().to_string())
        .collect();
    let run = Command::new("python3").arg("-c").arg(READ_PGN).args(&paths).output().unwrap();
    assert!(run.status.success(), "python-chess failed: {}", String::from_utf8_lossy(&run.stderr));
    let games: Vec<serde_json::Value> = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(games.len(), 8);
    let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -".to_string();
    for game in &games {
        let file = game["file"].as_str().unwrap();
        // The named node: the opening's line from the start position, in the store.
        let entry: (String, String) = db
            .query_row(
                "SELECT n.position_key, e.moves FROM opening_entries e JOIN opening_nodes n USING (node_id)
                 WHERE e.src = 'eco_tsv' AND e.eco = ?1 AND e.name = ?2 ORDER BY length(e.moves) LIMIT 1",
                [game["eco"].as_str().unwrap(), game["opening"].as_str().unwrap()],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        let mut expected: BTreeSet<(String, String)> = BTreeSet::new();
        let mut at = start.clone();
        let mainline: Vec<&str> =
            game["mainline"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
        let line_len = entry.1.split_whitespace().filter(|t| !t.ends_with('.')).count();
        for uci in &mainline[..line_len] {
            let (_, child) = edges[&at]
                .iter()
                .find(|(u, _)| u == uci)
                .unwrap_or_else(|| panic!("{file}: {uci} from {at}"));
            expected.insert((at.clone(), uci.to_string()));
            at = child.clone();
        }
        assert_eq!(at, entry.0, "{file}: the main line reaches the named position");
        // Every edge out of every position within 5 plies of the named node (max_depth 6).
        let mut dist = BTreeMap::from([(at.clone(), 0)]);
        let mut queue = VecDeque::from([at]);
        while let Some(node) = queue.pop_front() {
            let d = dist[&node];
            if d >= 6 {
                continue;
            }
            for (uci, child) in edges.get(&node).into_iter().flatten() {
                expected.insert((node.clone(), uci.clone()));
                if !dist.contains_key(child) {
                    dist.insert(child.clone(), d + 1);
                    queue.push_back(child.clone());
                }
            }
        }
        let read: Vec<(String, String)> = game["edges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e[0].as_str().unwrap().to_string(), e[1].as_str().unwrap().to_string()))
            .collect();
        let read_set: BTreeSet<(String, String)> = read.iter().cloned().collect();
        assert_eq!(read.len(), read_set.len(), "{file}: every edge is written once");
        assert_eq!(read_set, expected, "{file}: the file holds the tree");
        // Every position reached has its [%eval], equal to the store's.
        let file_evals = game["evals"].as_object().unwrap();
        assert!(!file_evals.is_empty());
        for (epd, value) in file_evals {
            let (cp, mate) = evals[epd];
            let want = match mate {
                Some(m) => 100000 * cp.signum() + m,
                None => cp,
            };
            assert_eq!(value.as_i64().unwrap(), want, "{file}: eval of {epd}");
        }
        let reached: BTreeSet<&String> = read
            .iter()
            .flat_map(|(from, uci)| edges[from].iter().find(|(u, _)| u == uci).map(|(_, c)| c))
            .collect();
        assert_eq!(reached.len(), file_evals.len(), "{file}: every position reached is annotated");
    }
}

#[test]
fn packed_records_decode_with_okb_inspect_back_to_the_stores_statistics() {
    let p = project("");
    p.make(&[]);
    let table = p.okb(&["inspect", "out/moves.okbm"]);
    assert_eq!(table.status, 0, "{}", table.stderr);
    snapshot!("fixture_packed_inspect", table.stdout);
    let json = p.okb(&["inspect", "out/moves.okbm", "--json"]);
    let entries: Vec<serde_json::Value> = serde_json::from_str(&json.stdout).unwrap();
    // One record per tree move that games played, each matching the store's counts.
    let db = rusqlite::Connection::open(p.path("build/okb.sqlite")).unwrap();
    let played: i64 = db
        .query_row("SELECT count(*) FROM node_children WHERE game_count > 0", [], |r| r.get(0))
        .unwrap();
    assert_eq!(entries.len() as i64, played);
    // 1. e4 from the start: 6 fixture games, White won 3 (50%); White 1600–2400.
    let e4 = entries.iter().find(|e| e["key"] == "463b96181691fc9c" && e["uci"] == "e2e4").unwrap();
    assert_eq!(
        (e4["count"].as_u64(), e4["wdl_result"].as_str(), e4["wdl_pct"].as_u64()),
        (Some(6), Some("win"), Some(50))
    );
    let white = [2301, 2050, 1720, 2400, 1600, 1500];
    let black = [2350, 2010, 1800, 2200, 1650, 1480];
    let avg = |v: &[i64]| (v.iter().sum::<i64>() as f64 / v.len() as f64).round() as i64;
    assert_eq!(e4["white_elo"].as_i64(), Some(avg(&white)));
    assert!((e4["black_elo"].as_i64().unwrap() - avg(&black)).abs() <= 1);
    // Byte-identical across thread counts.
    let again = project("");
    again.make(&["-j", "1"]);
    assert_eq!(again.read("out/moves.okbm"), p.read("out/moves.okbm"));
    // The CLI path counts the same games into the same records.
    let games =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/games/openings.pgn");
    let cli = p.okb(&[
        "convert",
        "--format",
        "packed",
        "--max-ply",
        "10",
        "--min-games",
        "1",
        "-o",
        "cli.okbm",
        &games.display().to_string(),
    ]);
    assert_eq!(cli.status, 0, "{}", cli.stderr);
    assert_eq!(p.read("cli.okbm"), p.read("out/moves.okbm"));
    // A damaged file is an error naming it, not a panic.
    let bytes = p.read("out/moves.okbm");
    std::fs::write(p.path("torn.okbm"), &bytes[..bytes.len() - 5]).unwrap();
    let torn = p.okb(&["inspect", "torn.okbm"]);
    assert_eq!(torn.status, 1);
    assert!(
        torn.stderr.contains("torn.okbm") && torn.stderr.contains("torn one"),
        "{}",
        torn.stderr
    );
}

/// Reads a neo4j-admin CSV: the header and the records.
fn neo4j_csv(bytes: &[u8]) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::Reader::from_reader(bytes);
    let header = reader.headers().unwrap().iter().map(str::to_string).collect();
    let rows = reader.records().map(|r| r.unwrap().iter().map(str::to_string).collect()).collect();
    (header, rows)
}

/// The neo4j export in neo4j-admin's bulk-import layout: typed headers, one node per
/// position, every relationship's endpoints among the nodes, as many MOVE and
/// TRANSPOSES_TO relationships as the store has edges and transpositions. (No Neo4j
/// server is installable here: the files' structure is what is checked.)
#[test]
fn neo4j_export_is_bulk_import_csv_whose_relationships_all_land() {
    let p = project("[exports.graph]\nformat = \"neo4j\"\noutput = \"out/neo4j\"\n");
    p.make(&[]);
    let (header, positions) = neo4j_csv(&p.read("out/neo4j/positions.csv"));
    assert_eq!(header[0], "positionId:ID(Position)");
    assert_eq!(header.last().unwrap(), ":LABEL");
    for field in &header {
        let kind = field.split_once(':').map_or("string", |(_, t)| t);
        assert!(
            ["string", "int", "long", "double", "ID(Position)", "LABEL"].contains(&kind),
            "{field}"
        );
    }
    let ids: BTreeSet<&str> = positions.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(ids.len(), positions.len(), "duplicate ids");
    let typed = |row: &[String], at: usize| row[at].is_empty() || row[at].parse::<f64>().is_ok();
    for row in &positions {
        assert!(
            ["Position", "Position;Opening"].contains(&row.last().unwrap().as_str()),
            "{row:?}"
        );
        for (at, field) in header.iter().enumerate() {
            if field.ends_with(":int") || field.ends_with(":long") || field.ends_with(":double") {
                assert!(typed(row, at), "{field} = {:?}", row[at]);
            }
        }
    }
    let db = rusqlite::Connection::open(p.path("build/okb.sqlite")).unwrap();
    let count =
        |sql: &str| -> usize { db.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap() as usize };
    assert_eq!(positions.len(), count("SELECT count(*) FROM opening_nodes"));
    assert!(positions.iter().any(|r| r.last().unwrap() == "Position;Opening"));
    for (file, kind, expected) in [
        ("out/neo4j/moves.csv", "MOVE", count("SELECT count(*) FROM node_children")),
        (
            "out/neo4j/transpositions.csv",
            "TRANSPOSES_TO",
            count("SELECT count(*) FROM node_transpositions"),
        ),
    ] {
        let (header, rows) = neo4j_csv(&p.read(file));
        assert_eq!(
            (header[0].as_str(), header[1].as_str(), header.last().unwrap().as_str()),
            (":START_ID(Position)", ":END_ID(Position)", ":TYPE")
        );
        assert_eq!(rows.len(), expected, "{file}");
        assert!(expected > 0, "{file}: the fixture has none");
        for row in &rows {
            assert!(
                ids.contains(row[0].as_str()) && ids.contains(row[1].as_str()),
                "{file}: dangling {row:?}"
            );
            assert_eq!(row.last().unwrap(), kind);
        }
    }
    // The store's edges, as MOVE relationships: same moves between the same ids.
    let (_, moves) = neo4j_csv(&p.read("out/neo4j/moves.csv"));
    let from_csv: BTreeSet<(String, String, String)> =
        moves.iter().map(|r| (r[0].clone(), r[1].clone(), r[3].clone())).collect();
    let mut stmt = db.prepare("SELECT parent_id, child_id, move_uci FROM node_children").unwrap();
    let from_store: BTreeSet<(String, String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(from_csv, from_store);
}
