//! The pipeline's steps, declared as data: one module per step rule, each with its
//! [`Rule`](crate::dataflow::Rule) and a `declare` function that returns the step's
//! [`Decl`](crate::dataflow::Decl). [`crate::make::plan`] declares the steps a pipeline
//! asks for; the scheduler in [`crate::dataflow`] runs them.
//!
//! A rule's code fingerprint is its module and everything that module uses, so these
//! modules never name each other (`super::`): editing one step's declaration reruns that
//! step only.

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

/// Every rule, in pipeline order (for `okb graph` and the docs).
pub static RULES: &[&crate::dataflow::Rule] = &[
    &parse::RULE,
    &eco::RULE,
    &game_file::RULE,
    &counts::RULE,
    &crawl::RULE,
    &games::RULE,
    &coverage::RULE,
    &tree::RULE,
    &evals::RULE,
    &cloud_eval::RULE,
    &engine::RULE,
    &structure_labels::RULE,
    &structures::RULE,
    &structure_review::RULE,
    &validate::RULE,
    &validation_report::RULE,
    &explorer::RULE,
    &player_games::RULE,
    &store_entries::RULE,
    &node_records::RULE,
    &store::RULE,
    &store_postgres::RULE,
    &export_eco_json::RULE,
    &export_csv::RULE,
    &export_polyglot::RULE,
    &export_pgn::RULE,
    &export_packed::RULE,
    &export_openingiq::RULE,
    &export_neo4j::RULE,
    &export_lichess_evals::RULE,
    &export_classified::PGN_RULE,
    &export_classified::BGN_RULE,
    &repertoire::RULE,
    &repertoire_report::RULE,
    &repertoire_games::RULE,
    &repertoire_export::RULE,
    &manifest::RULE,
];

#[cfg(test)]
mod tests {
    use super::RULES;
    use crate::dataflow::code::{CARGO_LOCK, FILES, fingerprint};
    use std::collections::BTreeSet;

    /// The rules whose fingerprint changes when `file`'s bytes change.
    fn invalidated_by(file: &str) -> BTreeSet<&'static str> {
        let edited: Vec<(&str, String, &[u16])> =
            FILES.iter().map(|&(path, hash, deps)| (path, if path == file { format!("{hash}-edited") } else { hash.to_string() }, deps)).collect();
        let edited: Vec<(&str, &str, &[u16])> = edited.iter().map(|(p, h, d)| (*p, h.as_str(), *d)).collect();
        assert!(edited.iter().any(|f| f.0 == file), "{file} is not a source file");
        RULES
            .iter()
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
        // The build engine and the command line are in no fingerprint.
        assert!(invalidated_by("src/dataflow/schedule.rs").is_empty());
        assert!(invalidated_by("src/cli/make.rs").is_empty());
        assert!(invalidated_by("src/make.rs").is_empty());
    }

    #[test]
    fn every_rule_is_declared_in_its_own_file_of_this_folder() {
        for rule in RULES {
            assert!(rule.file.starts_with("src/steps/"), "{}", rule.file);
            assert!(FILES.iter().any(|f| f.0 == rule.file), "{} missing from the fingerprint table", rule.file);
        }
        let names: BTreeSet<&str> = RULES.iter().map(|r| r.name).collect();
        assert_eq!(names.len(), RULES.len(), "rule names are unique");
    }
}
