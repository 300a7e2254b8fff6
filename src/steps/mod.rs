//! The pipeline's steps, declared as data: one module per step rule, each with its
//! [`Rule`](crate::dataflow::Rule) and a `plan` function that declares the rule's steps
//! ([`Decl`](crate::dataflow::Decl)s) from one [`planning::Planning`].
//! [`crate::make::plan`] asks every module of [`PLANNERS`] in turn; the scheduler in
//! [`crate::dataflow`] runs the steps.
//!
//! A rule's code fingerprint is its module and everything that module uses, so these
//! modules never name each other: editing one step's declaration reruns that step only.
//! They share [`planning`] (the resolved pipeline) and [`ids`] (the ids of the steps
//! they read, typed), which are in no fingerprint.

pub mod ids;
pub mod planning;

use crate::dataflow::Rule;
use planning::Planner;

/// Declares the step modules and [`PLANNERS`], their list in pipeline order: a step
/// module is one name here.
macro_rules! step_modules {
    ($($module:ident),* $(,)?) => {
        $(pub mod $module;)*

        /// Every step module, in pipeline order: [`crate::make::plan`] asks each in turn
        /// for its steps (a module sees the steps of the modules before it: the store
        /// reads the engine's evaluations when there are any, and the manifest describes
        /// every output).
        pub static PLANNERS: &[&Planner] = &[$(&$module::PLANNER),*];
    };
}

step_modules![
    parse,
    eco,
    game_file,
    counts,
    crawl,
    duplicates,
    games,
    state,
    counts_state,
    coverage,
    tree,
    evals,
    cloud_eval,
    engine,
    structure_labels,
    structures,
    structure_review,
    validate,
    validation_report,
    explorer,
    player_games,
    store_entries,
    store_edges,
    node_records,
    store,
    store_postgres,
    export_eco_json,
    export_csv,
    export_polyglot,
    export_pgn,
    export_packed,
    export_openingiq,
    export_neo4j,
    export_lichess_evals,
    export_classified,
    repertoire,
    repertoire_evals,
    repertoire_report,
    repertoire_games,
    repertoire_export,
    manifest,
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
        let edited: Vec<(&str, String, &[u16])> = FILES
            .iter()
            .map(|&(path, hash, deps)| {
                (path, if path == file { format!("{hash}-edited") } else { hash.to_string() }, deps)
            })
            .collect();
        let edited: Vec<(&str, &str, &[u16])> =
            edited.iter().map(|(p, h, d)| (*p, h.as_str(), *d)).collect();
        assert!(edited.iter().any(|f| f.0 == file), "{file} is not a source file");
        rules()
            .filter(|rule| {
                fingerprint(FILES, CARGO_LOCK, rule.file)
                    != fingerprint(&edited, CARGO_LOCK, rule.file)
            })
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
        assert_eq!(
            invalidated_by("src/export/polyglot.rs"),
            BTreeSet::from(["export:polyglot", "repertoire-export"])
        );
        // A repertoire's reports: not the knowledge base.
        assert_eq!(invalidated_by("src/repertoire/flow.rs"), BTreeSet::from(["repertoire-report"]));
        // The tree's code: the tree and the steps whose code uses it, never the phases before it.
        let tree = invalidated_by("src/tree.rs");
        assert!(
            tree.contains("tree") && tree.contains("store") && tree.contains("structures"),
            "{tree:?}"
        );
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
        // `okb diff`'s comparison: no build step (the store keeps its previous copy
        // through files::write).
        assert!(invalidated_by("src/diff/mod.rs").is_empty());
        assert!(invalidated_by("src/diff/render.rs").is_empty());
    }

    #[test]
    fn every_rule_is_declared_in_its_own_file_of_this_folder() {
        for rule in rules() {
            assert!(rule.file.starts_with("src/steps/"), "{}", rule.file);
            assert!(
                FILES.iter().any(|f| f.0 == rule.file),
                "{} missing from the fingerprint table",
                rule.file
            );
        }
        let names: BTreeSet<&str> = rules().map(|r| r.name).collect();
        assert_eq!(names.len(), rules().count(), "rule names are unique");
    }
}
