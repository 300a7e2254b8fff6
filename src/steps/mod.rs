//! The pipeline's steps, declared as data: one module per step rule, each with its
//! [`Rule`](crate::dataflow::Rule) and a `plan` function that declares the rule's steps
//! ([`Decl`](crate::dataflow::Decl)s) from one [`planning::Planning`].
//! [`crate::make::plan`] asks every module of [`PLANNERS`] in turn; the scheduler in
//! [`crate::dataflow`] runs the steps.
//!
//! A rule's code fingerprint is its module and everything that module uses, so these
//! modules never name each other: editing one step's declaration reruns that step only.
//! They share [`planning`] (the resolved pipeline and the ids of the steps they read),
//! which is in no fingerprint.

pub mod cloud_eval;
pub mod counts;
pub mod coverage;
pub mod crawl;
pub mod eco;
pub mod engine;
pub mod evals;
pub mod explorer;
pub mod export_classified;
pub mod export_csv;
pub mod export_eco_json;
pub mod export_lichess_evals;
pub mod export_neo4j;
pub mod export_openingiq;
pub mod export_packed;
pub mod export_pgn;
pub mod export_polyglot;
pub mod game_file;
pub mod manifest;
pub mod games;
pub mod node_records;
pub mod parse;
pub mod planning;
pub mod player_games;
pub mod repertoire;
pub mod repertoire_export;
pub mod repertoire_games;
pub mod repertoire_report;
pub mod store;
pub mod store_entries;
pub mod store_postgres;
pub mod structure_labels;
pub mod structure_review;
pub mod structures;
pub mod tree;
pub mod validate;
pub mod validation_report;

use crate::dataflow::Rule;
use planning::Planner;

/// Every step module, in pipeline order: [`crate::make::plan`] asks each in turn for its
/// steps (a module sees the steps of the modules before it: the store reads the engine's
/// evaluations when there are any, and the manifest describes every output). A new
/// step rule is a module here and its line in this list.
pub static PLANNERS: &[Planner] = &[
    Planner { rules: &[&parse::RULE], plan: parse::plan },
    Planner { rules: &[&eco::RULE], plan: eco::plan },
    Planner { rules: &[&game_file::RULE], plan: game_file::plan },
    Planner { rules: &[&counts::RULE], plan: counts::plan },
    Planner { rules: &[&crawl::RULE], plan: crawl::plan },
    Planner { rules: &[&games::RULE], plan: games::plan },
    Planner { rules: &[&coverage::RULE], plan: coverage::plan },
    Planner { rules: &[&tree::RULE], plan: tree::plan },
    Planner { rules: &[&evals::RULE], plan: evals::plan },
    Planner { rules: &[&cloud_eval::RULE], plan: cloud_eval::plan },
    Planner { rules: &[&engine::RULE], plan: engine::plan },
    Planner { rules: &[&structure_labels::RULE], plan: structure_labels::plan },
    Planner { rules: &[&structures::RULE], plan: structures::plan },
    Planner { rules: &[&structure_review::RULE], plan: structure_review::plan },
    Planner { rules: &[&validate::RULE], plan: validate::plan },
    Planner { rules: &[&validation_report::RULE], plan: validation_report::plan },
    Planner { rules: &[&explorer::RULE], plan: explorer::plan },
    Planner { rules: &[&player_games::RULE], plan: player_games::plan },
    Planner { rules: &[&store_entries::RULE], plan: store_entries::plan },
    Planner { rules: &[&node_records::RULE], plan: node_records::plan },
    Planner { rules: &[&store::RULE], plan: store::plan },
    Planner { rules: &[&store_postgres::RULE], plan: store_postgres::plan },
    Planner { rules: &[&export_eco_json::RULE], plan: export_eco_json::plan },
    Planner { rules: &[&export_csv::RULE], plan: export_csv::plan },
    Planner { rules: &[&export_polyglot::RULE], plan: export_polyglot::plan },
    Planner { rules: &[&export_pgn::RULE], plan: export_pgn::plan },
    Planner { rules: &[&export_packed::RULE], plan: export_packed::plan },
    Planner { rules: &[&export_openingiq::RULE], plan: export_openingiq::plan },
    Planner { rules: &[&export_neo4j::RULE], plan: export_neo4j::plan },
    Planner { rules: &[&export_lichess_evals::RULE], plan: export_lichess_evals::plan },
    Planner { rules: &[&export_classified::PGN_RULE, &export_classified::BGN_RULE], plan: export_classified::plan },
    Planner { rules: &[&repertoire::RULE], plan: repertoire::plan },
    Planner { rules: &[&repertoire_report::RULE], plan: repertoire_report::plan },
    Planner { rules: &[&repertoire_games::RULE], plan: repertoire_games::plan },
    Planner { rules: &[&repertoire_export::RULE], plan: repertoire_export::plan },
    Planner { rules: &[&manifest::RULE], plan: manifest::plan },
];

/// Every rule, in pipeline order (for `okb graph` and the docs).
pub fn rules() -> impl Iterator<Item = &'static Rule> {
    PLANNERS.iter().flat_map(|p| p.rules.iter().copied())
}

#[cfg(test)]
mod tests {
    use super::rules;
    use crate::dataflow::code::{CARGO_LOCK, FILES, fingerprint};
    use std::collections::BTreeSet;

    /// The rules whose fingerprint changes when `file`'s bytes change.
    fn invalidated_by(file: &str) -> BTreeSet<&'static str> {
        let edited: Vec<(&str, String, &[u16])> =
            FILES.iter().map(|&(path, hash, deps)| (path, if path == file { format!("{hash}-edited") } else { hash.to_string() }, deps)).collect();
        let edited: Vec<(&str, &str, &[u16])> = edited.iter().map(|(p, h, d)| (*p, h.as_str(), *d)).collect();
        assert!(edited.iter().any(|f| f.0 == file), "{file} is not a source file");
        rules()
            .filter(|rule| fingerprint(FILES, CARGO_LOCK, rule.file) != fingerprint(&edited, CARGO_LOCK, rule.file))
            .map(|rule| rule.name)
            .collect()
    }

    #[test]
    fn editing_a_phase_reruns_its_steps_and_what_uses_its_code_only() {
        // A step's own declaration: that step only.
        assert_eq!(invalidated_by("src/steps/store.rs"), BTreeSet::from(["store"]));
        assert_eq!(invalidated_by("src/steps/tree.rs"), BTreeSet::from(["tree"]));
        // One export format: that export only.
        assert_eq!(invalidated_by("src/export/csv.rs"), BTreeSet::from(["export:csv"]));
        // (the repertoire's Polyglot book is written by the same code)
        assert_eq!(invalidated_by("src/export/polyglot.rs"), BTreeSet::from(["export:polyglot", "repertoire-export"]));
        // A repertoire's reports: not the knowledge base.
        assert_eq!(invalidated_by("src/repertoire/flow.rs"), BTreeSet::from(["repertoire-report"]));
        // The tree's code: the tree and the steps whose code uses it, never the phases before it.
        let tree = invalidated_by("src/tree.rs");
        assert!(tree.contains("tree") && tree.contains("store") && tree.contains("structures"), "{tree:?}");
        for earlier in ["parse", "eco", "games-file", "games", "export:eco-json"] {
            assert!(!tree.contains(earlier), "{earlier} does not use the tree's code: {tree:?}");
        }
        // A taxonomy parser: the parse step, not the game counting.
        let scid = invalidated_by("src/eco/scid_eco.rs");
        assert!(scid.contains("parse") && !scid.contains("games-file"), "{scid:?}");
        // The build engine, the planning and the command line are in no fingerprint.
        assert!(invalidated_by("src/steps/planning.rs").is_empty());
        assert!(invalidated_by("src/steps/mod.rs").is_empty());
        assert!(invalidated_by("src/dataflow/schedule.rs").is_empty());
        assert!(invalidated_by("src/cli/make.rs").is_empty());
        assert!(invalidated_by("src/make.rs").is_empty());
    }

    #[test]
    fn every_rule_is_declared_in_its_own_file_of_this_folder() {
        for rule in rules() {
            assert!(rule.file.starts_with("src/steps/"), "{}", rule.file);
            assert!(FILES.iter().any(|f| f.0 == rule.file), "{} missing from the fingerprint table", rule.file);
        }
        let names: BTreeSet<&str> = rules().map(|r| r.name).collect();
        assert_eq!(names.len(), rules().count(), "rule names are unique");
    }
}
