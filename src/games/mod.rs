//! Phase 2: the move tree's statistics from game collections.

pub mod stats;
