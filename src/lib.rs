//! okb: a compiler for chess opening knowledge bases.
//!
//! See ARCHITECTURE.md for a map of the modules.

pub mod engine;
pub mod games;
pub mod position;
