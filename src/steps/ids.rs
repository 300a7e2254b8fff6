//! The ids of the steps other steps read, each with the type of its value: a reader
//! names the constant, so reading a step as another type does not compile.
//!
//! Why here and not beside each producer: a rule's code fingerprint covers every module
//! its file uses, so a reader naming the producer's module would be rebuilt by every
//! edit of the producer's code. This file, like `planning`, is in no fingerprint: an id
//! is part of every key that reads it.

use std::collections::BTreeMap;

use crate::dataflow::StepId;

/// `coverage`: each game source's coverage.
pub const COVERAGE: StepId<BTreeMap<String, crate::release::manifest::Coverage>> =
    StepId::new("coverage");

/// `duplicates`: the repeated games of the game files, counted to be subtracted.
pub const DUPLICATES: StepId<crate::games::stored::Repeats> = StepId::new("duplicates");

/// `eco`: the ECO skeleton (Phase 1).
pub const ECO: StepId<crate::eco::EcoSkeleton> = StepId::new("eco");

/// `engine`: the engine's annotations.
pub const ENGINE: StepId<crate::engine::Annotations> = StepId::new("engine");

/// `explorer`: the explorer index.
pub const EXPLORER: StepId<crate::explorer_index::ExplorerIndex> = StepId::new("explorer");

/// `games`: every counted file's runs merged.
pub const GAMES: StepId<crate::games::stored::MergedCounts> = StepId::new("games");

/// `player-games`: the player collections.
pub const PLAYER_GAMES: StepId<crate::repertoire::collection::Collections> =
    StepId::new("player-games");

/// `node-records`: the per-node records the store and the CSV export share, in memory
/// only (read with `input_in_memory`, which does not check the type).
pub const NODE_RECORDS: StepId<Vec<crate::record::NodeRecord>> = StepId::new("node-records");

/// `store`: the store file, read for its hash only.
pub const STORE: StepId<()> = StepId::new("store");

/// `store:entries`: the entries' part database, read for its hash only.
pub const STORE_ENTRIES: StepId<()> = StepId::new("store:entries");

/// `store:edges`: the tree's edges in a part database, read for its hash only.
pub const STORE_EDGES: StepId<()> = StepId::new("store:edges");

/// `structures`: the pawn-structure tags.
pub const STRUCTURES: StepId<crate::structure::StructureTags> = StepId::new("structures");

/// `tree`: the move tree.
pub const TREE: StepId<crate::tree::Tree> = StepId::new("tree");

/// `validate`: the validation report.
pub const VALIDATE: StepId<crate::validate::report::ValidationReport> = StepId::new("validate");
