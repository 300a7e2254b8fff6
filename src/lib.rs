//! okb: a compiler for chess opening knowledge bases.
//!
//! See ARCHITECTURE.md for a map of the modules.

pub mod cli_book;
pub mod export;
pub mod games;
pub mod position;
