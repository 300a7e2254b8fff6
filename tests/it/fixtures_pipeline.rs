//! The small hand-written fixtures: exports pinned as insta snapshots, queries, and
//! transpositions between named lines.

use crate::common;
use common::{Project, fixture, mini_sources};

fn mini_project() -> Project {
    Project::with_pipeline(&format!(
        r#"{}
[sources.pgn-extract]
kind = "eco-pgn"
path = "{}"
[exports.eco]
format = "eco-json"
output = "out/eco"
[exports.csv]
format = "csv"
output = "out/nodes.csv"
"#,
        mini_sources(),
        fixture("mini-eco.pgn")
    ))
}

#[test]
fn eco_json_exports_match_their_snapshots() {
    let p = mini_project();
    p.make(&[]);
    for file in ["ecoB.json", "ecoD.json", "ecoE.json", "eco_interpolated.json", "fromTo.json"] {
        let text = String::from_utf8(p.read(&format!("out/eco/{file}"))).unwrap();
        snapshot!(format!("mini_{file}"), text);
    }
    // Every file is valid JSON that eco.json consumers can load.
    let b: serde_json::Value = serde_json::from_slice(&p.read("out/eco/ecoB.json")).unwrap();
    let sicilian = &b["rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"];
    assert_eq!(sicilian["src"], "eco_tsv");
    assert_eq!(sicilian["scid"], "B20a");
    assert_eq!(sicilian["aliases"]["scid"], "Sicilian");
    assert_eq!(sicilian["isEcoRoot"], true);
}

#[test]
fn csv_export_matches_its_snapshot() {
    let p = mini_project();
    p.make(&[]);
    snapshot!("mini_nodes.csv", String::from_utf8(p.read("out/nodes.csv")).unwrap());
}

#[test]
fn transposed_named_lines_are_one_node_listed_from_both_orders() {
    let p = mini_project();
    p.make(&[]);
    let a = p.okb(&["query", "moves", "1. d4 Nf6 2. c4 e6 3. Nc3 d5", "--json"]);
    let b = p.okb(&["query", "moves", "1. d4 d5 2. c4 e6 3. Nc3 Nf6", "--json"]);
    assert_eq!(a.status, 0, "{}", a.stderr);
    assert_eq!(a.stdout, b.stdout, "one node for both move orders");
    let node: serde_json::Value = serde_json::from_str(&a.stdout).unwrap();
    assert_eq!(node["opening_name"], "Queen's Gambit Declined");
    assert_eq!(node["variation_name"], "Normal Defense");
    let mut orders: Vec<&str> = node["transpositions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["moves"].as_str().unwrap())
        .collect();
    orders.sort();
    assert_eq!(orders, vec!["1. d4 Nf6 2. c4 e6 3. Nc3 d5", "1. d4 d5 2. c4 e6 3. Nc3 Nf6"]);
    snapshot!("mini_query_qgd.json", a.stdout);
}

#[test]
fn fen_queries_ignore_counters_and_en_passant_convention() {
    let p = mini_project();
    p.make(&[]);
    let forms = [
        "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq c6 0 2",
        "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
        "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq -",
        "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq c6 7 30",
    ];
    let answers: Vec<String> =
        forms.iter().map(|f| p.okb(&["query", "fen", f, "--json"]).stdout).collect();
    assert!(answers.iter().all(|a| a == &answers[0]));
    assert!(answers[0].contains("\"eco_code\": \"B20\""), "{}", answers[0]);
}

#[test]
fn eco_and_name_queries() {
    let p = mini_project();
    p.make(&[]);
    let eco = p.okb(&["query", "eco", "D35", "--json"]);
    let nodes: Vec<serde_json::Value> = serde_json::from_str(&eco.stdout).unwrap();
    assert_eq!(nodes.len(), 1);
    assert_eq!(nodes[0]["moves"], "1. d4 d5 2. c4 e6 3. Nc3 Nf6");
    let scid = p.okb(&["query", "eco", "D37a", "--json"]);
    let nodes: Vec<serde_json::Value> = serde_json::from_str(&scid.stdout).unwrap();
    assert_eq!(nodes[0]["name_src"], "scid");
    let by_name = p.okb(&["query", "name", "sicilian", "--json"]);
    let nodes: Vec<serde_json::Value> = serde_json::from_str(&by_name.stdout).unwrap();
    let moves: Vec<&str> = nodes.iter().map(|n| n["moves"].as_str().unwrap()).collect();
    // Ranked as /opening/search: named lines only (interpolated gap names such as
    // "Sicilian Defense (i)" on 1. e4 c5 2. Nf3 are not names anyone searches for).
    assert_eq!(moves, vec!["1. e4 c5", "1. e4 c5 2. Nf3 d6"]);
    // Latin-1 names from scid.eco are decoded.
    let latin = p.okb(&["query", "name", "Grünfeld-like", "--json"]);
    assert_eq!(latin.status, 0, "{}", latin.stderr);
    let none = p.okb(&["query", "name", "Bongcloud", "--json"]);
    assert_eq!(none.status, 1);
    assert_eq!(none.stdout.trim(), "[]");
}

#[test]
fn interpolated_entries_carry_their_ancestors_name() {
    let p = mini_project();
    p.make(&[]);
    // 1. e4 c5 2. Nf3 is named by no source: interpolated from "Sicilian Defense".
    let q = p.okb(&["query", "moves", "1. e4 c5 2. Nf3", "--json"]);
    let node: serde_json::Value = serde_json::from_str(&q.stdout).unwrap();
    assert_eq!(node["name_src"], "interpolated");
    assert_eq!(node["opening_name"], "Sicilian Defense (i)");
    assert_eq!(node["aliases"]["scid"], "Sicilian");
}
