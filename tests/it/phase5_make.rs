//! Phases 3 and 5 through `okb make`: structures on every terminal node, the
//! pawn_structures table, the classified-pgn and -bgn exports (equal to `okb classify` on the
//! store), and validation against Opening tags.

use crate::common;
use common::{Project, mini_sources};

fn games() -> String {
    common::classify_games()
}

fn project() -> Project {
    project_with_stubs(false)
}

/// [`common::validation_pipeline`] with the classified exports.
fn project_with_stubs(stubs: bool) -> Project {
    Project::with_pipeline(&format!(
        r#"{}
[exports.classified]
format = "classified-pgn"
output = "out/classified.pgn"
sources = ["games"]
[exports.classified-bgn]
format = "classified-bgn"
output = "out/classified.bgn"
sources = ["games"]
"#,
        common::validation_pipeline(stubs)
    ))
}

fn store(p: &Project) -> rusqlite::Connection {
    rusqlite::Connection::open(p.path("build/okb.sqlite")).unwrap()
}

/// The tags of the game whose Event is `event`.
fn tags_of(pgn: &str, event: &str) -> Vec<String> {
    let start = pgn.find(&format!("[Event \"{event}\"]")).unwrap();
    pgn[start..].lines().take_while(|l| l.starts_with('[')).map(str::to_string).collect()
}

#[test]
fn every_terminal_node_has_a_structure_and_structures_are_entities() {
    let p = project();
    p.make(&[]);
    let db = store(&p);
    let (terminal, tagged): (i64, i64) = db
        .query_row(
            "SELECT COUNT(*), COUNT(resulting_structure) FROM opening_nodes
             WHERE node_id NOT IN (SELECT parent_id FROM node_children)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(terminal >= 3);
    assert_eq!(terminal, tagged);
    // Inner nodes carry no structure: the tag describes where a line ends.
    let inner: i64 = db
        .query_row(
            "SELECT COUNT(resulting_structure) FROM opening_nodes WHERE node_id IN (SELECT parent_id FROM node_children)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(inner, 0);
    // Every tag is a pawn_structures entity with plans as JSON arrays.
    let orphans: i64 = db
        .query_row(
            "SELECT COUNT(*) FROM opening_nodes WHERE resulting_structure IS NOT NULL
             AND resulting_structure NOT IN (SELECT name FROM pawn_structures)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(orphans, 0);
    let rows: Vec<(String, String, String)> = db
        .prepare("SELECT name, white_plans, black_plans FROM pawn_structures")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rows.len(), okb::structure::STRUCTURES.len() + 1);
    for (name, white, black) in &rows {
        let w: Vec<String> = serde_json::from_str(white).unwrap();
        let b: Vec<String> = serde_json::from_str(black).unwrap();
        assert_eq!(w.is_empty(), name == "Unknown", "{name}");
        assert_eq!(b.is_empty(), name == "Unknown", "{name}");
    }
    // Every name says how it was found; Unknown has no confidence.
    let confidence = |sql: &str| -> i64 { db.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(
        confidence(
            "SELECT COUNT(*) FROM opening_nodes WHERE resulting_structure = 'Unknown' AND structure_confidence IS NOT NULL"
        ),
        0
    );
    assert_eq!(
        confidence(
            "SELECT COUNT(*) FROM opening_nodes WHERE resulting_structure != 'Unknown' AND structure_confidence NOT IN ('exact', 'near', 'rule')"
        ),
        0
    );
    assert_eq!(
        confidence(
            "SELECT COUNT(*) FROM opening_nodes WHERE resulting_structure != 'Unknown' AND structure_confidence IS NULL"
        ),
        0
    );
    // The review lists exactly the Unknown and near terminal nodes.
    let review: serde_json::Value =
        serde_json::from_slice(&p.read("build/structures-review.json")).unwrap();
    let unknown = confidence(
        "SELECT COUNT(*) FROM opening_nodes WHERE resulting_structure = 'Unknown' OR structure_confidence = 'near'",
    );
    assert_eq!(review["unknown"].as_array().unwrap().len() as i64, unknown);
    assert_eq!(review["terminal_nodes"].as_i64().unwrap(), terminal);
    let review_table = String::from_utf8(p.read("build/structures-review.txt")).unwrap();
    assert!(review_table.contains("Pawn structures of"));
    snapshot!("fixture_structures_review.txt", review_table);
}

#[test]
fn classified_export_rewrites_tags_transposition_aware_and_equals_okb_classify() {
    let p = project();
    let run = p.make(&[]);
    assert!(
        run.stderr.contains(
            "export:classified (6 games, 4 classified, 1 without a known position, 1 unreadable)"
        ),
        "{}",
        run.stderr
    );
    let out = String::from_utf8(p.read("out/classified.pgn")).unwrap();
    // Reached by 1. d4 Nf6 2. c4 e6 3. Nc3 d5: the QGD line's name, old tags replaced in place.
    assert_eq!(
        tags_of(&out, "transposition"),
        [
            "[Event \"transposition\"]",
            "[ECO \"D35\"]",
            "[Opening \"Queen's Gambit Declined\"]",
            "[Variation \"Normal Defense\"]",
            "[Result \"1-0\"]"
        ]
    );
    assert_eq!(
        tags_of(&out, "sicilian")[1..4],
        ["[Opening \"Sicilian Defense\"]", "[Result \"1/2-1/2\"]", "[ECO \"B50\"]"]
    );
    // Games without a known position and unreadable ones pass through unchanged.
    let input = std::fs::read_to_string(games()).unwrap();
    for event in ["no known position", "illegal"] {
        assert_eq!(tags_of(&out, event), tags_of(&input, event));
    }
    assert!(out.contains("1. e4 e5 2. Ke3 Nc6 1-0"));
    snapshot!("fixture_classified.pgn", out);
    // The command on the built store writes the same bytes, whatever the thread count.
    for jobs in ["1", "2"] {
        let run = p.okb(&["classify", "-j", jobs, &games()]);
        assert_eq!(run.status, 0, "{}", run.stderr);
        assert_eq!(run.stdout, out);
        assert!(run.stderr.contains("6 games: 4 classified"), "{}", run.stderr);
    }
}

#[test]
fn classified_bgn_carries_the_knowledge_base_opening_from_classify_and_convert_alike() {
    let p = project();
    let run = p.make(&[]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "export:classified-bgn (6 games, 4 classified, 0 named by their tags, 1 unreadable)"
        ),
        "{}",
        run.stderr
    );
    let run = p.okb(&["classify", "-o", "classified.bgn", &games()]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("6 games: 4 classified, 0 named by their own tags, 1 unreadable"),
        "{}",
        run.stderr
    );
    let bgn = String::from_utf8(p.read("classified.bgn")).unwrap();
    let written: Vec<serde_json::Value> =
        bgn.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let event = |e: &str| {
        written.iter().find(|g| g["tags"]["Event"] == e).unwrap_or_else(|| panic!("no game {e}"))
    };
    // Transposition-aware, and the game's own (wrong) tags stay in `tags` only.
    assert_eq!(
        event("transposition")["opening"],
        serde_json::json!({"eco": "D35", "name": "Queen's Gambit Declined: Normal Defense", "src": "okb"})
    );
    assert_eq!(event("transposition")["tags"]["Opening"], "Wrong");
    assert_eq!(event("sicilian")["opening"]["eco"], "B50");
    assert!(event("no known position").get("opening").is_none());
    assert!(
        written.iter().all(|g| g["tags"]["Event"] != "illegal"),
        "unreadable games are skipped in BGN"
    );
    // `okb convert --store` is the same conversion.
    let run = p.okb(&["convert", "--store", "build/okb.sqlite", "-o", "converted.bgn", &games()]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("4 games from the knowledge base, 0 from their own tags"),
        "{}",
        run.stderr
    );
    assert_eq!(p.read("converted.bgn"), bgn.as_bytes());
    // The pipeline export (classifier from the tree) writes the same games.
    assert_eq!(p.read("out/classified.bgn"), bgn.as_bytes());
    // Without --store the tags name the games.
    assert_eq!(p.okb(&["convert", "-o", "tagged.bgn", &games()]).status, 0);
    let tagged = String::from_utf8(p.read("tagged.bgn")).unwrap();
    assert!(
        tagged.contains(r#""opening":{"eco":"A00","name":"Wrong: Old","src":"tags"}"#),
        "{tagged}"
    );
    // --store names openings in BGN only.
    let run = p.okb(&["convert", "--store", "build/okb.sqlite", "-o", "back.pgn", "converted.bgn"]);
    assert_ne!(run.status, 0);
    assert!(run.stderr.contains("--store names openings in BGN output"), "{}", run.stderr);
}

#[test]
fn validation_reports_names_the_tree_lacks_never_positions_it_has_and_stubs_them() {
    let p = project_with_stubs(true);
    let run = p.make(&[]);
    assert!(run.stderr.contains("Building validate"), "{}", run.stderr);
    let report: serde_json::Value =
        serde_json::from_slice(&p.read("build/validation.json")).unwrap();
    assert_eq!(report["counts"]["games_tagged"], 4);
    assert_eq!(report["counts"]["games_known"], 1);
    assert_eq!(report["counts"]["games_missing"], 3);
    assert_eq!(report["corrupt_games"], 1);
    let missing = report["missing"].as_array().unwrap();
    assert_eq!(missing.len(), 1, "{missing:?}");
    assert_eq!(missing[0]["name"], "Mystery Gambit");
    assert_eq!(missing[0]["games"], 2);
    assert_eq!(missing[0]["eco"], "B20");
    assert_eq!(missing[0]["stub"], true);
    // Pairs below min_games are counted, not listed (the QGD transposition game).
    assert_eq!(report["pairs_below_threshold"], 1);
    let db = store(&p);
    for m in missing {
        let epd: String =
            m["fen"].as_str().unwrap().split(' ').take(4).collect::<Vec<_>>().join(" ");
        let known: i64 = db
            .query_row("SELECT COUNT(*) FROM opening_nodes WHERE position_key = ?1 AND name_src IS NOT 'stub'", [&epd], |r| r.get(0))
            .unwrap();
        assert_eq!(known, 0, "reported a position the tree has: {epd}");
    }
    // The stub is a node of the store: a named leaf below the position the games left the
    // tree from, with their results and a structure, marked by its name source.
    let stub: (String, String, String, Option<String>, i64, i64, i64, String, i64) = db
        .query_row(
            "SELECT fen, moves, opening_name, variation_name, game_count, white_wins, black_wins, resulting_structure,
             (SELECT COUNT(*) FROM node_children WHERE parent_id = n.node_id)
             FROM opening_nodes n WHERE name_src = 'stub'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?, r.get(8)?)),
        )
        .unwrap();
    assert_eq!(stub.0, missing[0]["fen"].as_str().unwrap());
    assert_eq!(
        (stub.1.as_str(), stub.2.as_str(), stub.3),
        ("1. e4 c5 2. b4", "Mystery Gambit", None)
    );
    // The two Mystery Gambit games: 1-0 and 0-1.
    assert_eq!((stub.4, stub.5, stub.6, stub.8), (2, 1, 1, 0));
    assert_ne!(stub.7, "");
    let (parent_moves, san, edge_games, branching): (String, String, i64, bool) = db
        .query_row(
            "SELECT p.moves, c.move_san, c.game_count, p.is_branching_node FROM node_children c
             JOIN opening_nodes p ON p.node_id = c.parent_id JOIN opening_nodes k ON k.node_id = c.child_id
             WHERE k.name_src = 'stub'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!((parent_moves.as_str(), san.as_str(), edge_games), ("1. e4 c5", "b4", 2));
    let parent_children: i64 = db
        .query_row("SELECT COUNT(*) FROM node_children c JOIN opening_nodes p ON p.node_id = c.parent_id WHERE p.moves = ?1", [&parent_moves], |r| r.get(0))
        .unwrap();
    assert_eq!(branching, parent_children >= 2);
    // `okb query` and the classifier see it as what it is.
    let run = p.okb(&["query", "fen", missing[0]["fen"].as_str().unwrap(), "--json"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let node: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        (node["name_src"].as_str(), node["opening_name"].as_str()),
        (Some("stub"), Some("Mystery Gambit"))
    );
    let run = p.okb(&["classify", &games()]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    // A stub names no game: the mystery games keep the tree's name for where they are.
    for event in ["mystery 1", "mystery 2"] {
        let tags = tags_of(&run.stdout, event);
        assert!(tags.contains(&"[Opening \"Sicilian Defense\"]".to_string()), "{event}: {tags:?}");
    }
    let stubs = String::from_utf8(p.read("build/validation-stubs.tsv")).unwrap();
    assert!(stubs.starts_with("eco\tname\tpgn\n"));
    assert!(stubs.contains("B20\tMystery Gambit (stub)\t1. e4 c5 2. b4"), "{stubs}");
    let table = String::from_utf8(p.read("build/validation.txt")).unwrap();
    assert!(table.contains("Mystery Gambit"));
    // Pairs under the threshold are counted and said to be unlisted, never promised "below".
    assert!(
        !table.contains("below")
            && table
                .contains("1 (position, name) pair reached by fewer games is counted, not listed"),
        "{table}"
    );
    // Corrupt games are located by the path the pipeline gives, here an absolute one.
    snapshot!("fixture_validation.txt", table.replace(env!("CARGO_MANIFEST_DIR"), "<repo>"));
    snapshot!("fixture_validation_stubs.tsv", stubs);
}

#[test]
fn validate_sources_must_be_game_sources() {
    let p = Project::with_pipeline(&format!(
        "{}\n[validate]\nsources = [\"lichess\"]\n",
        mini_sources()
    ));
    let run = p.okb(&["make"]);
    assert_eq!(run.status, 1);
    assert!(run.stderr.contains("is not a game source"), "{}", run.stderr);
}

/// The review loop: `okb review structures` writes a form; filled in and declared as a
/// `structure-labels` source, it names those skeletons everywhere in the tree, and a
/// make rebuilds only the structures and what reads them.
#[test]
fn a_filled_in_review_form_names_its_skeletons_and_rebuilds_only_structures() {
    let p = project();
    p.make(&[]);
    let run =
        p.okb(&["review", "structures", "--no-build", "--limit", "2", "-o", "review/labels.tsv"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stdout.contains("to review"), "{}", run.stdout);
    let form = String::from_utf8(p.read("review/labels.tsv")).unwrap();
    let mut lines: Vec<String> = form.lines().map(str::to_string).collect();
    assert!(
        lines[0].starts_with("label\tgames\tstructure\tconfidence\tnearest\tdistance"),
        "{}",
        lines[0]
    );
    // Every terminal position of the fixture is named: relabel its most played one.
    let (fen, moves): (String, String) = store(&p)
        .query_row(
            "SELECT fen, moves FROM opening_nodes WHERE structure_confidence IS NOT NULL ORDER BY game_count DESC, node_id LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    lines.insert(1, format!("Hedgehog\t9\tx\trule\t\t\t\t\t{moves}\t{fen}"));
    lines.insert(2, format!("Najdorff\t1\tUnknown\tnone\t\t\t\t\t\t{fen}"));
    std::fs::write(p.path("review/labels.tsv"), lines.join("\n") + "\n").unwrap();
    let mut pipeline = std::fs::read_to_string(p.path("pipeline.toml")).unwrap();
    pipeline
        .push_str("[sources.mine]\nkind = \"structure-labels\"\npath = \"review/labels.tsv\"\n");
    std::fs::write(p.path("pipeline.toml"), pipeline).unwrap();

    let run = p.make(&[]);
    let built = run.steps("Building");
    for step in ["structure-labels:mine", "structures", "structure-review", "node-records", "store"]
    {
        assert!(built.contains(&step.to_string()), "{step} not rebuilt: {built:?}");
    }
    for step in ["tree", "eco", "games"] {
        assert!(run.steps("Fresh").contains(&step.to_string()), "{step} rebuilt:\n{}", run.stderr);
    }
    assert!(
        run.stderr.contains("mine:3: \"Najdorff\" is not a structure okb knows (closest: Najdorf"),
        "{}",
        run.stderr
    );
    let db = store(&p);
    let pos = okb::position::parse_fen(&fen).unwrap();
    let key = okb::position::epd(&pos);
    let (structure, confidence): (String, String) = db
        .query_row("SELECT resulting_structure, structure_confidence FROM opening_nodes WHERE position_key = ?1", [&key], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!((structure.as_str(), confidence.as_str()), ("Hedgehog", "label"));

    // Writing the form again keeps the labelled row, and a make with nothing changed
    // since does nothing.
    let run = p.okb(&["review", "structures", "--no-build", "-o", "review/labels.tsv"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.contains("kept 2 labelled rows"), "{}", run.stderr);
    let form = String::from_utf8(p.read("review/labels.tsv")).unwrap();
    assert!(form.lines().nth(1).unwrap().starts_with("Hedgehog\t"), "{form}");
    assert!(
        !form.lines().skip(3).any(|l| l.ends_with(&fen)),
        "the labelled position is listed again:\n{form}"
    );
}

/// `[structures] review_limit`: the review lists the head of the whole review, in its
/// order, says how many positions there are to review, and a new limit rebuilds only the
/// review.
#[test]
fn a_review_over_its_limit_lists_the_most_played_of_the_whole_review() {
    let p = Project::full();
    let make = |limit: u32| {
        let text = format!("{}[structures]\nreview_limit = {limit}\n", common::FULL_PIPELINE);
        std::fs::write(p.path("pipeline.toml"), text).unwrap();
        p.make(&[])
    };
    let json = || -> serde_json::Value {
        serde_json::from_slice(&p.read("build/structures-review.json")).unwrap()
    };
    make(0);
    let all = json();
    let whole = all["unknown"].as_array().unwrap().clone();
    assert!(whole.len() > 100, "the taxonomy alone leaves {} to review", whole.len());
    assert_eq!(all["to_review"].as_u64().unwrap() as usize, whole.len());
    let run = make(100);
    let said = format!("{} positions to review, the 100 most played listed", whole.len());
    assert!(run.stderr.contains(&said), "{}", run.stderr);
    let built = run.steps("Building");
    assert!(built.contains(&"structure-review".to_string()), "{}", run.stderr);
    assert!(!built.iter().any(|s| s == "structures" || s == "store"), "{}", run.stderr);
    let cut = json();
    assert_eq!(cut["to_review"], all["to_review"]);
    assert_eq!(cut["unknown"].as_array().unwrap()[..], whole[..100]);
    assert_eq!(cut["terminal_nodes"], all["terminal_nodes"]);
    assert_eq!(cut["by_structure"], all["by_structure"], "the counts cover every terminal node");
    let table = String::from_utf8(p.read("build/structures-review.txt")).unwrap();
    let heading = format!("Positions to review ({}, the 100 most played listed)", whole.len());
    assert!(table.contains(&heading), "{table}");
    assert_eq!(
        String::from_utf8(p.read("build/structures-review.tsv")).unwrap().lines().count(),
        101
    );
    let shown = p.okb(&["review", "structures", "--no-build", "--limit", "5"]);
    assert!(
        shown.stdout.contains(&format!("{} to review, the 5 most played:", whole.len())),
        "{}",
        shown.stdout
    );
}
