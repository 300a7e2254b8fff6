//! okb: a compiler for chess opening knowledge bases.
//!
//! See ARCHITECTURE.md for a map of the modules.

pub mod build;
pub mod cli_book;
pub mod cli_inspect;
pub mod commands;
pub mod convert;
pub mod diagnostics;
pub mod eco;
pub mod engine;
pub mod export;
pub mod games;
pub mod make;
pub mod pipeline;
pub mod position;
pub mod progress;
pub mod record;
pub mod sources;
pub mod store;
pub mod tree;
