//! The pipeline's steps, declared as data: one module per step rule, each with its
//! [`Rule`](crate::dataflow::Rule) and a `declare` function that returns the step's
//! [`Decl`](crate::dataflow::Decl). [`crate::make::plan`] declares the steps a pipeline
//! asks for; the scheduler in [`crate::dataflow`] runs them.
//!
//! A rule's code fingerprint is its module and everything that module uses, so these
//! modules never name each other (`super::`): editing one step's declaration reruns that
//! step only.

pub mod eco;
pub mod engine;
pub mod export_classified;
pub mod export_csv;
pub mod export_eco_json;
pub mod export_openingiq;
pub mod export_packed;
pub mod export_pgn;
pub mod export_polyglot;
pub mod game_file;
pub mod games;
pub mod node_records;
pub mod parse;
pub mod store;
pub mod store_entries;
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
    &games::RULE,
    &tree::RULE,
    &engine::RULE,
    &structures::RULE,
    &structure_review::RULE,
    &validate::RULE,
    &validation_report::RULE,
    &store_entries::RULE,
    &node_records::RULE,
    &store::RULE,
    &export_eco_json::RULE,
    &export_csv::RULE,
    &export_polyglot::RULE,
    &export_pgn::RULE,
    &export_packed::RULE,
    &export_openingiq::RULE,
    &export_classified::PGN_RULE,
    &export_classified::BGN_RULE,
];
