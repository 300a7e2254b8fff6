//! Deep evaluations as pinned inputs: a Lichess evaluation dump (`kind = "lichess-evals"`)
//! serves the engine phase, the engine cache serves only the exact search asked, and
//! okb's evaluations go out in the same format and come back identical.

use crate::common;
use std::path::PathBuf;

use common::{Project, Run, python_check, shared_sources};

/// fixtures/evals/stockfish-d12.jsonl: real Stockfish 15.1 searches (depth 12, MultiPV 3)
/// of every position of the Lichess taxonomy's tree to ply 3 and of the mini tree, made
/// by fixtures/evals/make_dump.py.
fn dump() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/evals/stockfish-d12.jsonl")
}

/// The Lichess taxonomy (from ../shared), a tree of its own lines, `engine` as the
/// `[engine]` table and `sources` appended.
fn taxonomy_project(engine: &str, sources: &str) -> Project {
    let mut text = String::new();
    for f in ["a", "b", "c", "d", "e"] {
        let path = shared_sources().join(format!("lichess-chess-openings/{f}.tsv"));
        text.push_str(&format!(
            "[sources.lichess-{f}]\nkind = \"lichess-tsv\"\npath = \"{}\"\n",
            path.display()
        ));
    }
    text.push_str(sources);
    text.push_str(&format!(
        "\n[engine]\n{engine}\n\n[exports.csv]\nformat = \"csv\"\noutput = \"out/nodes.csv\"\n"
    ));
    Project::with_pipeline(&text)
}

/// An `[engine]` that must not start: its binary does not exist.
const NO_ENGINE: &str = "path = \"/nonexistent/stockfish\"\nmultipv = 3\nmax_ply = 3\ndepth_branching = 10\ndepth_leaf = 10\ndepth_popular = 10\nsources = [\"evals\"]";

/// The source of the dump, which [`with_dump`] puts into the project.
const EVALS: &str = "[sources.evals]\nkind = \"lichess-evals\"\npath = \"evals.jsonl.zst\"\n";

/// `p` with the dump compressed by zstd as `evals.jsonl.zst`.
fn with_dump(p: Project) -> Project {
    let bytes = zstd::bulk::compress(&std::fs::read(dump()).unwrap(), 3).unwrap();
    std::fs::write(p.path("evals.jsonl.zst"), bytes).unwrap();
    p
}

fn engine_line(run: &Run) -> String {
    run.stderr.lines().find(|l| l.contains(" engine (")).unwrap_or_default().to_string()
}

fn node(p: &Project, moves: &str) -> serde_json::Value {
    serde_json::from_str(&p.okb(&["query", "moves", moves, "--json"]).stdout).unwrap()
}

#[test]
fn a_dump_covering_the_tree_builds_without_an_engine_at_the_dump_s_depth() {
    let p = with_dump(taxonomy_project(NO_ENGINE, EVALS));
    let run = p.make(&[]);
    let line = engine_line(&run);
    assert!(line.contains("427 positions: 427 from evals (median depth 12), 0 cached, 0 analysed, 0 failed, 0 engines started"), "{}", run.stderr);
    let pin = blake3::hash(&p.read("evals.jsonl.zst")).to_hex().to_string();
    let sicilian = node(&p, "1. e4 c5");
    assert_eq!(
        sicilian["stockfish_depth"], 12,
        "the dump's depth, deeper than the 10 asked: {sicilian}"
    );
    assert_eq!(sicilian["eval_source"], format!("evals@{}", &pin[..12]));
    assert!(sicilian["eval_nodes"].as_i64().unwrap() >= 1000);
    assert_eq!(sicilian["stockfish_lines"].as_array().unwrap().len(), 3);
    let csv = String::from_utf8(p.read("out/nodes.csv")).unwrap();
    assert!(
        csv.lines().next().unwrap().ends_with("eval_source,eval_nodes,cp_loss,win_chance_loss"),
        "{}",
        csv.lines().next().unwrap()
    );
    moves_lose_what_the_parents_eval_gives_over_the_childs(&p, &sicilian, &csv);
    let again = p.make(&[]);
    assert!(again.stderr.contains("nothing to do"), "{}", again.stderr);
}

/// Issue 44 item 14: each child of `parent` (White to move) loses the parent's eval minus
/// its own, in centipawns and in Lichess's winning chances; the CSV row of a child gives
/// the same loss for the move into it.
fn moves_lose_what_the_parents_eval_gives_over_the_childs(
    p: &Project,
    parent: &serde_json::Value,
    csv: &str,
) {
    let wins = |cp: f64| {
        50.0 + 50.0 * (2.0 / (1.0 + (-0.003_682_08 * cp.clamp(-1000.0, 1000.0)).exp()) - 1.0)
    };
    let best = parent["stockfish_eval"].as_f64().unwrap();
    let children = parent["children"].as_array().unwrap();
    let judged: Vec<&serde_json::Value> =
        children.iter().filter(|c| !c["stockfish_eval"].is_null()).collect();
    assert!(judged.len() >= 3, "{parent}");
    for c in &judged {
        let played = c["stockfish_eval"].as_f64().unwrap();
        assert_eq!(c["cp_loss"].as_f64().unwrap(), (best - played).max(0.0), "{c}");
        let lost = (wins(best) - wins(played)).max(0.0);
        assert!((c["win_chance_loss"].as_f64().unwrap() - lost).abs() < 0.006, "{c}: {lost}");
    }
    // The two are the CSV's last columns (names before them may hold quoted commas).
    let nf3 = judged.iter().find(|c| c["pgn_move"] == "Nf3").expect("2. Nf3 is evaluated");
    let row = node(p, "1. e4 c5 2. Nf3");
    let line = csv.lines().find(|l| l.starts_with(row["node_id"].as_str().unwrap())).unwrap();
    let last: Vec<&str> = line.rsplitn(3, ',').take(2).collect();
    assert_eq!(last, [nf3["win_chance_loss"].to_string(), nf3["cp_loss"].to_string()], "{line}");
}

#[test]
fn python_chess_reads_the_same_best_moves_and_scores_from_the_dump() {
    let p = with_dump(taxonomy_project(NO_ENGINE, EVALS));
    p.make(&[]);
    let compared = python_check(
        "check_evals.py",
        &[dump().to_str().unwrap(), p.path("out/nodes.csv").to_str().unwrap(), "3", "200"],
    );
    assert!(compared.trim().parse::<usize>().unwrap() >= 400, "{compared}");
}

#[test]
fn positions_the_dump_cannot_serve_need_the_engine_and_the_error_says_so() {
    let deeper = NO_ENGINE.replace("depth_branching = 10", "depth_branching = 14");
    let p = with_dump(taxonomy_project(&deeper, EVALS));
    let run = p.okb(&["make"]);
    assert_ne!(run.status, 0);
    assert!(
        run.stderr.contains("/nonexistent/stockfish")
            && run.stderr.contains("positions no evaluation source covers"),
        "{}",
        run.stderr
    );
}

/// Hand-written lines in the published format, about positions of the taxonomy's tree.
const EDGE: &str = concat!(
    // 1: the start position three times: deeper with fewer lines, or shallower with three.
    r#"{"fen":"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -","evals":[{"pvs":[{"cp":18,"line":"e2e4"}],"knodes":900,"depth":20},{"pvs":[{"cp":17,"line":"d2d4 d7d5"},{"cp":16,"line":"e2e4 e7e5"},{"cp":12,"line":"g1f3"}],"knodes":80000,"depth":30},{"pvs":[{"cp":20,"line":"e2e4"},{"cp":19,"line":"d2d4"}],"knodes":100000,"depth":45}]}"#,
    "\n",
    // 2: after 1. e4, written with a pseudo-legal en-passant square no capture can use.
    r#"{"fen":"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3","evals":[{"pvs":[{"cp":31,"line":"c7c5"},{"cp":33,"line":"e7e5"},{"cp":35,"line":"e7e6"}],"knodes":5000,"depth":33}]}"#,
    "\n",
    // 3: not JSON.
    r#"{"fen":"rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq -","evals":[{"pvs":"#,
    "\n",
    // 4: 1. e4 d5 2. exd5 e5, whose en-passant capture dxe6 is legal, keys in another order.
    r#"{"evals":[{"depth":28,"knodes":700,"pvs":[{"line":"d5e6 f7e6","cp":40},{"line":"d2d4 e5d4","cp":35},{"line":"c2c4 c7c6","cp":20}]}],"fen":"rnbqkbnr/ppp2ppp/8/3Pp3/8/8/PPPP1PPP/RNBQKBNR w KQkq e6"}"#,
    "\n",
    // 5: the same placement with castling rights the tree's position does not have.
    r#"{"fen":"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQ -","evals":[{"pvs":[{"cp":-500,"line":"c7c5"},{"cp":-501,"line":"e7e5"},{"cp":-502,"line":"e7e6"}],"knodes":1,"depth":60}]}"#,
    "\n",
    "\n",
    // 7: a PV with both scores.
    r#"{"fen":"rnbqkbnr/pppppppp/8/8/2P5/8/PP1PPPPP/RNBQKBNR b KQkq -","evals":[{"pvs":[{"cp":1,"mate":3,"line":"e7e5"}],"knodes":1,"depth":40}]}"#,
    "\n",
);

#[test]
fn edge_lines_normalise_en_passant_prefer_depth_with_lines_and_warn_about_bad_lines() {
    let sources =
        format!("{EVALS}[sources.edge]\nkind = \"lichess-evals\"\npath = \"edge.jsonl\"\n");
    let p = with_dump(taxonomy_project(
        &NO_ENGINE.replace("[\"evals\"]", "[\"edge\", \"evals\"]"),
        &sources,
    ));
    std::fs::write(p.path("edge.jsonl"), EDGE).unwrap();
    let run = p.make(&[]);
    assert!(
        run.stderr.contains("edge.jsonl:3") && run.stderr.contains("edge.jsonl:7"),
        "malformed lines are named: {}",
        run.stderr
    );
    // Lines 1, 2 and 4 name positions of the tree (4 beyond the engine's ply 3); 5 does not.
    assert!(
        run.stderr.contains("evals:edge (3 of 7852 positions found in 7 lines, 2 malformed lines)"),
        "{}",
        run.stderr
    );
    assert!(
        engine_line(&run)
            .contains("2 from edge (median depth 33), 425 from evals (median depth 12)"),
        "{}",
        run.stderr
    );
    let start = node(&p, "");
    assert_eq!(
        (start["stockfish_depth"].as_i64(), start["best_move"].as_str()),
        (Some(30), Some("d4")),
        "multipv 3 needs three lines: {start}"
    );
    assert!(start["eval_source"].as_str().unwrap().starts_with("edge@"));
    let e4 = node(&p, "1. e4");
    assert_eq!(
        (e4["stockfish_depth"].as_i64(), e4["stockfish_eval"].as_i64()),
        (Some(33), Some(31)),
        "the e3 field is normalised away, not the castling rights: {e4}"
    );
    let strict = p.okb(&["make", "--strict"]);
    assert_ne!(strict.status, 0, "--strict fails on the malformed lines: {}", strict.stderr);
    // A truncated compressed dump is an error naming the file, not a silent half read.
    let whole = zstd::bulk::compress(EDGE.repeat(2000).as_bytes(), 3).unwrap();
    std::fs::write(p.path("edge.jsonl"), &whole[..whole.len() / 2]).unwrap();
    let cut = p.okb(&["make"]);
    assert_ne!(cut.status, 0);
    assert!(cut.stderr.contains("edge.jsonl") && cut.stderr.contains("line"), "{}", cut.stderr);
}

/// A mate a source finds is answered as its distance beside the ±1000 evaluation (Lichess's
/// scores are White's: a positive mate is White mating, whoever is to move).
#[test]
fn a_mate_a_source_finds_is_answered_with_its_distance() {
    const MATES: &str = concat!(
        r#"{"fen":"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -","evals":[{"pvs":[{"mate":12,"line":"c7c5 g1f3"},{"cp":300,"line":"e7e5 g1f3"},{"cp":250,"line":"e7e6 d2d4"}],"knodes":9,"depth":45}]}"#,
        "\n"
    );
    let sources =
        format!("{EVALS}[sources.mates]\nkind = \"lichess-evals\"\npath = \"mates.jsonl\"\n");
    let p = with_dump(taxonomy_project(
        &NO_ENGINE.replace("[\"evals\"]", "[\"mates\", \"evals\"]"),
        &sources,
    ));
    std::fs::write(p.path("mates.jsonl"), MATES).unwrap();
    p.make(&[]);
    let e4 = node(&p, "1. e4");
    assert_eq!(
        (
            e4["stockfish_eval"].as_i64(),
            e4["stockfish_mate"].as_i64(),
            e4["stockfish_depth"].as_i64()
        ),
        (Some(1000), Some(12), Some(45)),
        "{e4}"
    );
    let sicilian = node(&p, "1. e4 c5");
    assert!(
        sicilian["stockfish_mate"].is_null() && sicilian["stockfish_eval"].is_i64(),
        "no mate found there: {sicilian}"
    );
}

fn mini_project(extra: &str) -> Project {
    Project::with_pipeline(&format!(
        "{}{extra}\n[exports.csv]\nformat = \"csv\"\noutput = \"out/nodes.csv\"\n",
        common::mini_sources()
    ))
}

#[test]
fn okb_s_evaluations_exported_and_pinned_elsewhere_give_the_same_columns_without_stockfish() {
    let engine = "[engine]\nmultipv = 2\ndepth_branching = 7\ndepth_leaf = 6\ndepth_popular = 7\n\n[exports.evals]\nformat = \"lichess-evals\"\noutput = \"out/evals.jsonl\"\n";
    let made = mini_project(engine);
    made.make(&[]);
    let exported = made.read("out/evals.jsonl");
    assert_eq!(String::from_utf8_lossy(&exported).lines().count(), 17);
    let pin = blake3::hash(&exported).to_hex().to_string();
    let source = format!(
        "[sources.okb]\nkind = \"lichess-evals\"\npath = \"okb.jsonl\"\nblake3 = \"{pin}\"\n"
    );
    let elsewhere = mini_project(&format!(
        "{source}[engine]\npath = \"/nonexistent/stockfish\"\nmultipv = 2\ndepth_branching = 7\ndepth_leaf = 6\ndepth_popular = 7\nsources = [\"okb\"]\n\
         [exports.pgn]\nformat = \"pgn\"\noutput = \"out/pgn\"\n"
    ));
    std::fs::write(elsewhere.path("okb.jsonl"), &exported).unwrap();
    let run = elsewhere.make(&[]);
    assert!(engine_line(&run).contains("17 from okb"), "{}", run.stderr);
    assert_eq!(common::eval_columns(&made), common::eval_columns(&elsewhere));
    let (a, b) = (node(&made, "1. e4 c5"), node(&elsewhere, "1. e4 c5"));
    assert_eq!(a["stockfish_lines"], b["stockfish_lines"], "the lines come back too");
    assert_eq!(a["eval_source"].as_str().map(|s| s.starts_with("Stockfish")), Some(true), "{a}");
    assert_eq!(b["eval_source"], format!("okb@{}", &pin[..12]));
    // The PGN export names the evaluations' origin in its Annotator tag.
    let sicilian = String::from_utf8(elsewhere.read("out/pgn/B20-sicilian-defense.pgn")).unwrap();
    assert!(
        sicilian.contains(&format!("[Annotator \"okb; evaluations: okb@{}\"]", &pin[..12])),
        "{sicilian}"
    );
}

#[test]
fn a_shallower_build_after_a_deeper_one_is_the_fresh_shallower_build() {
    let engine = "[engine]\nmultipv = 1\ndepth_branching = 6\ndepth_leaf = 6\ndepth_popular = 6\n\n[profile.deep.engine]\ndepth_branching = 9\ndepth_leaf = 9\ndepth_popular = 9\n";
    let used = mini_project(engine);
    used.make(&["--profile", "deep"]);
    used.make(&[]);
    let fresh = mini_project(engine);
    fresh.make(&[]);
    assert_eq!(
        used.read("out/nodes.csv"),
        fresh.read("out/nodes.csv"),
        "a deeper cached search must not serve a shallower request"
    );
}

#[test]
fn okb_diff_says_where_a_changed_evaluation_came_from() {
    let engine = "[engine]\nmultipv = 3\ndepth_branching = 6\ndepth_leaf = 6\ndepth_popular = 6\n";
    let p = mini_project(engine);
    p.make(&[]);
    let with_dump = format!(
        "[sources.evals]\nkind = \"lichess-evals\"\npath = \"{}\"\n{engine}sources = [\"evals\"]\n",
        dump().display()
    );
    std::fs::write(
        p.path("pipeline.toml"),
        std::fs::read_to_string(p.path("pipeline.toml")).unwrap().replace(engine, &with_dump),
    )
    .unwrap();
    p.make(&[]);
    let diff = p.okb(&["diff"]);
    assert_eq!(diff.status, 1, "the builds differ: {}", diff.stderr);
    let text = common::flat(&diff.stdout);
    assert!(text.contains("(depth 6, Stockfish") && text.contains("(depth 12, evals@"), "{text}");
}

/// A finished position needs no engine: with the dump covering every other position the
/// engine step asks for (the games' positions, to ply 4), a tree holding the fool's mate
/// builds without Stockfish. The mate is evaluated by the rules (mate 0 against the side
/// to move, no best move), and the lichess-evals export leaves it out: the format has no
/// line without moves, and a reader needs none.
#[test]
fn a_finished_position_needs_no_engine_and_stays_out_of_the_evals_export() {
    const FOOLS_MATE: &str = "[Event \"?\"]\n[White \"a\"]\n[Black \"b\"]\n[Result \"0-1\"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n";
    const MATED: &str = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq -";
    let engine = NO_ENGINE.replace("max_ply = 3", "max_ply = 4\nmin_games = 1");
    let sources = format!(
        "{EVALS}[sources.games]\nkind = \"pgn\"\npaths = [\"games/*.pgn\"]\n[exports.evals]\nformat = \"lichess-evals\"\noutput = \"out/evals.jsonl\"\n"
    );
    let p = with_dump(taxonomy_project(&engine, &sources));
    std::fs::create_dir_all(p.path("games")).unwrap();
    std::fs::write(p.path("games/fool.pgn"), FOOLS_MATE).unwrap();
    let run = p.make(&[]);
    let line = engine_line(&run);
    assert!(line.contains("5 positions: 4 from evals (median depth 12), 1 finished (no search), 0 cached, 0 analysed, 0 failed, 0 engines started"), "{}", run.stderr);
    let mate = node(&p, "1. f3 e5 2. g4 Qh4#");
    assert_eq!(
        (
            mate["stockfish_mate"].as_i64(),
            mate["stockfish_eval"].as_i64(),
            mate["stockfish_depth"].as_i64()
        ),
        (Some(0), Some(-1000), Some(0)),
        "{mate}"
    );
    assert!(mate["best_move"].is_null(), "{mate}");
    assert_eq!(mate["eval_source"], "game over (no search)", "{mate}");
    let exported = String::from_utf8(p.read("out/evals.jsonl")).unwrap();
    assert_eq!(exported.lines().count(), 4, "{exported}");
    for line in exported.lines() {
        let entry: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_ne!(entry["fen"], MATED, "{line}");
        for pv in entry["evals"][0]["pvs"].as_array().unwrap() {
            assert!(!pv["line"].as_str().unwrap().is_empty(), "{line}");
        }
    }
}

/// A principal variation with an illegal move makes its evaluation malformed (named by
/// file:line, and left out whole: it would otherwise serve with its second line as the
/// best move); a principal variation of thousands of moves is kept to its first 64.
#[test]
fn an_illegal_principal_variation_is_a_malformed_eval_and_a_long_one_is_capped() {
    let shuffle = "g8f6 g1f3 f6g8 f3g1 ".repeat(2500);
    let bad = [
        r#"{"fen":"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -","evals":[{"pvs":[{"cp":30,"line":"e2e4 e7e5 e4e5"},{"cp":20,"line":"d2d4"},{"cp":10,"line":"g1f3"}],"knodes":9,"depth":45}]}"#.to_string(),
        format!(r#"{{"fen":"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -","evals":[{{"pvs":[{{"cp":31,"line":"{}"}},{{"cp":33,"line":"e7e5"}},{{"cp":35,"line":"e7e6"}}],"knodes":9,"depth":45}}]}}"#, shuffle.trim_end()),
    ];
    let sources = format!("{EVALS}[sources.bad]\nkind = \"lichess-evals\"\npath = \"bad.jsonl\"\n");
    let p = with_dump(taxonomy_project(
        &NO_ENGINE.replace("[\"evals\"]", "[\"bad\", \"evals\"]"),
        &sources,
    ));
    std::fs::write(p.path("bad.jsonl"), bad.join("\n") + "\n").unwrap();
    let run = p.make(&[]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let said = common::flat(&run.stderr);
    assert!(
        said.contains("bad.jsonl:1")
            && said.contains("evaluation skipped: evals[0].pvs[0]: move 3 e4e5 is not legal in"),
        "{said}"
    );
    assert!(said.contains("malformed-eval"), "{said}");
    let start = node(&p, "");
    assert_eq!(
        (
            start["stockfish_depth"].as_i64(),
            start["eval_source"].as_str().map(|s| s.starts_with("evals@"))
        ),
        (Some(12), Some(true)),
        "{start}"
    );
    let e4 = node(&p, "1. e4");
    assert_eq!(e4["stockfish_depth"].as_i64(), Some(45), "{e4}");
    let best = &e4["stockfish_lines"][0];
    let moves = best.as_object().unwrap().values().filter_map(|v| v.as_array()).map(Vec::len).max();
    assert_eq!(moves, Some(64), "{best}");
}
