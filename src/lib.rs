//! okb: a compiler for chess opening knowledge bases.
//!
//! See ARCHITECTURE.md for a map of the modules.

pub mod classify;
pub mod cli;
pub mod convert;
pub mod crawl;
pub mod dataflow;
pub mod diagnostics;
pub mod diff;
pub mod eco;
pub mod engine;
pub mod evals;
pub mod explorer_index;
pub mod export;
pub mod files;
pub mod games;
pub mod graph;
pub mod make;
pub mod pipeline;
pub mod position;
pub mod progress;
pub mod record;
pub mod release;
pub mod repertoire;
pub mod search;
pub mod serve;
pub mod sources;
pub mod steps;
pub mod store;
pub mod structure;
pub mod tree;
pub mod validate;
