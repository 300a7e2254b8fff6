//! The guide's picture of the pipeline's rules (docs/step-graph.md) is `okb graph`
//! output, so it cannot drift from the declared steps; the fixture it is drawn from uses
//! every rule; and the modules keep the layering ARCHITECTURE.md describes.

use std::process::Command;

fn graph(args: &[&str]) -> String {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new(env!("CARGO_BIN_EXE_okb"))
        .current_dir(root)
        .args(["graph", "--pipeline", "fixtures/every-step.toml"])
        .args(args)
        .output()
        .expect("okb runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn the_architecture_picture_is_okb_graph_output() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/step-graph.md"))
        .unwrap();
    let start = doc.find("```mermaid\n").expect("a mermaid block") + "```mermaid\n".len();
    let end = start + doc[start..].find("```").unwrap();
    let drawn = graph(&["--rules", "--format", "mermaid"]);
    assert_eq!(
        &doc[start..end],
        drawn,
        "redraw docs/step-graph.md's picture with: okb graph --rules --format mermaid --pipeline fixtures/every-step.toml"
    );
}

#[test]
fn the_fixture_declares_a_step_of_every_rule_and_graph_formats_agree() {
    let json: serde_json::Value = serde_json::from_str(&graph(&["--format", "json"])).unwrap();
    let steps = json["steps"].as_array().unwrap();
    let rules: std::collections::BTreeSet<&str> =
        steps.iter().map(|s| s["rule"].as_str().unwrap()).collect();
    for rule in okb::steps::rules() {
        assert!(
            rules.contains(rule.name),
            "fixtures/every-step.toml declares no {} step",
            rule.name
        );
    }
    // Every step says what it reads, where its code is and whether it is fresh.
    let tree = steps.iter().find(|s| s["id"] == "tree").unwrap();
    assert_eq!(
        tree["reads"],
        serde_json::json!([
            "eco",
            "games",
            "state:games:games/openings.pgn",
            "counts-state:spark-state"
        ])
    );
    assert_eq!(tree["code"], "src/steps/tree.rs");
    assert!(tree["params"].as_array().unwrap().contains(&serde_json::json!("tree")));
    assert!(matches!(tree["state"].as_str(), Some("fresh" | "stale")));
    let dot = graph(&["--format", "dot"]);
    assert!(dot.starts_with("digraph okb {") && dot.contains("eco -> tree;"), "{dot}");
    let text = graph(&[]);
    assert!(
        text.lines()
            .any(|l| l.contains("tree") && l.contains("← counts-state:spark-state, eco, games")),
        "{text}"
    );
}

#[test]
fn modules_import_each_other_in_one_direction_only() {
    use okb::dataflow::code::FILES;
    use std::collections::{BTreeMap, BTreeSet};
    // The top-level module of a source file: src/eco/merge.rs → eco, src/tree.rs → tree.
    let module = |path: &str| {
        path.strip_prefix("src/")
            .map(|p| p.split('/').next().unwrap().trim_end_matches(".rs").to_string())
    };
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (path, _, deps) in FILES {
        let Some(from) = module(path) else { continue };
        for &d in *deps {
            if let Some(to) = module(FILES[usize::from(d)].0).filter(|to| *to != from) {
                uses.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    // Depth-first search for a path back to where it started.
    fn reaches(
        uses: &BTreeMap<String, BTreeSet<String>>,
        from: &str,
        target: &str,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        uses.get(from).into_iter().flatten().any(|next| {
            next == target || (seen.insert(next.clone()) && reaches(uses, next, target, seen))
        })
    }
    for (from, targets) in &uses {
        for to in targets {
            assert!(
                !reaches(&uses, to, from, &mut BTreeSet::new()),
                "{from} uses {to}, and {to} leads back to {from}"
            );
        }
    }
    // Files are below everything: they use no other module of okb.
    assert!(
        uses.get("files").is_none_or(BTreeSet::is_empty),
        "files must use no other module: {:?}",
        uses.get("files")
    );
    // Only the build's own layers use the build engine: the phases, stores, exports and
    // the server know nothing of it.
    let engine_users = ["steps", "make", "cli", "main", "lib"];
    for (from, targets) in &uses {
        assert!(
            engine_users.contains(&from.as_str()) || !targets.contains("dataflow"),
            "{from} must not use the build engine (dataflow)"
        );
    }
    // The layering ARCHITECTURE.md describes.
    let never = [
        ("dataflow", "steps"),
        ("tree", "store"),
        ("eco", "tree"),
        ("games", "export"),
        ("export", "store"),
        ("graph", "export"),
        ("structure", "record"),
        ("pipeline", "make"),
    ];
    for (from, to) in never {
        assert!(!uses.get(from).is_some_and(|t| t.contains(to)), "{from} must not use {to}");
    }
}

#[test]
fn no_source_file_leads_back_to_itself() {
    use okb::dataflow::code::FILES;
    // A module's file (`x/mod.rs` or `x.rs`) lists its children's files (`pub mod`), so
    // an edge from it to its own children is structure, not use; every other edge is a use.
    let parent_of = |child: &str, parent: &str| {
        let dir = parent
            .strip_suffix("mod.rs")
            .map(str::to_string)
            .or_else(|| parent.strip_suffix(".rs").map(|p| format!("{p}/")));
        dir.is_some_and(|dir| child.starts_with(&dir))
    };
    let edges: Vec<Vec<usize>> = FILES
        .iter()
        .map(|(path, _, deps)| {
            deps.iter().map(|&d| usize::from(d)).filter(|&d| !parent_of(FILES[d].0, path)).collect()
        })
        .collect();
    // Depth-first search for a file reached again from itself.
    fn reaches(edges: &[Vec<usize>], from: usize, target: usize, seen: &mut Vec<bool>) -> bool {
        edges[from].iter().any(|&next| {
            next == target
                || (!std::mem::replace(&mut seen[next], true) && reaches(edges, next, target, seen))
        })
    }
    let mut circles = Vec::new();
    for (file, targets) in edges.iter().enumerate() {
        for &to in targets {
            if reaches(&edges, to, file, &mut vec![false; FILES.len()]) {
                circles.push(format!("{} → {}", FILES[file].0, FILES[to].0));
            }
        }
    }
    assert!(circles.is_empty(), "files that lead back to themselves:\n{}", circles.join("\n"));
}
