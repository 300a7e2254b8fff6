//! The relational schema.

/// Bumped whenever the schema changes; part of the store step's code version.
pub const SCHEMA_VERSION: u32 = 8;

/// Settings of a connection that writes a store (or a part of one) from scratch: no
/// journal, no syncs (a store is written under a temporary name and renamed when
/// complete), a small page cache that spills to the file as it fills.
pub const WRITER_PRAGMAS: &str = r#"
PRAGMA journal_mode = OFF;
PRAGMA foreign_keys = OFF;
PRAGMA synchronous = OFF;
PRAGMA locking_mode = EXCLUSIVE;
PRAGMA temp_store = MEMORY;
PRAGMA cache_size = -2048;
"#;

/// DDL for a fresh store (after [`WRITER_PRAGMAS`]): the node table from
/// [`crate::record::COLUMNS`], between [`TABLES_BEFORE_NODES`] and [`TABLES_AFTER_NODES`].
pub fn schema() -> &'static str {
    static SCHEMA: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| {
        format!("{TABLES_BEFORE_NODES}{}{TABLES_AFTER_NODES}", super::row::node_table())
    })
}

/// The store's settings and its first table, before the node table.
const TABLES_BEFORE_NODES: &str = r#"
PRAGMA page_size = 16384;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"#;

/// The tables after the node table.
const TABLES_AFTER_NODES: &str = r#"CREATE TABLE opening_entries (
    node_id TEXT PRIMARY KEY REFERENCES opening_nodes (node_id),
    src TEXT NOT NULL,
    eco TEXT NOT NULL,
    scid TEXT,
    name TEXT NOT NULL,
    moves TEXT NOT NULL,
    is_eco_root INTEGER NOT NULL,
    from_node_id TEXT,
    aliases TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE node_children (
    parent_id TEXT NOT NULL REFERENCES opening_nodes (node_id),
    child_id TEXT NOT NULL REFERENCES opening_nodes (node_id),
    move_san TEXT NOT NULL,
    move_uci TEXT NOT NULL,
    rank INTEGER NOT NULL,
    game_count INTEGER NOT NULL DEFAULT 0,
    white_wins INTEGER NOT NULL DEFAULT 0,
    draws INTEGER NOT NULL DEFAULT 0,
    black_wins INTEGER NOT NULL DEFAULT 0,
    avg_rating REAL,
    PRIMARY KEY (parent_id, move_uci)
) WITHOUT ROWID;
CREATE TABLE node_transpositions (
    node_id TEXT NOT NULL REFERENCES opening_nodes (node_id),
    transposed_node_id TEXT NOT NULL REFERENCES opening_nodes (node_id),
    target_node_id TEXT NOT NULL REFERENCES opening_nodes (node_id),
    PRIMARY KEY (node_id, transposed_node_id, target_node_id),
    CHECK (node_id < transposed_node_id)
);
CREATE TABLE pawn_structures (
    name TEXT PRIMARY KEY,
    description TEXT NOT NULL,
    white_plans TEXT NOT NULL,
    black_plans TEXT NOT NULL
);
CREATE TABLE explorer_nodes (
    node_id TEXT PRIMARY KEY REFERENCES opening_nodes (node_id),
    data BLOB NOT NULL
);
CREATE TABLE explorer_games (
    game INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    white TEXT NOT NULL,
    black TEXT NOT NULL,
    white_rating INTEGER NOT NULL,
    black_rating INTEGER NOT NULL,
    year INTEGER NOT NULL,
    month INTEGER NOT NULL,
    winner INTEGER NOT NULL,
    speed INTEGER NOT NULL,
    mode INTEGER NOT NULL,
    played INTEGER NOT NULL,
    block INTEGER NOT NULL,
    start INTEGER NOT NULL,
    len INTEGER NOT NULL
);
CREATE TABLE explorer_pgn (
    block INTEGER PRIMARY KEY,
    data BLOB NOT NULL
);
CREATE TABLE player_names (
    name TEXT PRIMARY KEY,
    spellings TEXT NOT NULL
);
CREATE TABLE player_games (
    row INTEGER PRIMARY KEY,
    player TEXT NOT NULL,
    color TEXT NOT NULL,
    id TEXT NOT NULL,
    white TEXT NOT NULL,
    black TEXT NOT NULL,
    white_rating INTEGER NOT NULL,
    black_rating INTEGER NOT NULL,
    year INTEGER NOT NULL,
    month INTEGER NOT NULL,
    winner INTEGER NOT NULL,
    speed INTEGER NOT NULL,
    mode INTEGER NOT NULL,
    played INTEGER NOT NULL,
    moves BLOB NOT NULL
);
CREATE TABLE node_changelog (
    build INTEGER NOT NULL,
    node_id TEXT NOT NULL,
    field TEXT NOT NULL,
    old_value TEXT,
    new_value TEXT
);
"#;

/// Indexes on the node-side tables, created after their bulk insert (faster than
/// maintaining them row by row). Only what lookups need: a node by position, the
/// transpositions of a node, its log. Columns such as `eco_code` or
/// `resulting_structure` have no index of their own: a scan of every node answers a
/// query on them in a few milliseconds, while each index cost about as much on every
/// store write (a sort of all nodes, and a tenth of the file).
pub const NODE_INDEXES: &str = r#"
CREATE UNIQUE INDEX opening_nodes_position ON opening_nodes (position_key);
CREATE INDEX node_transpositions_other ON node_transpositions (transposed_node_id);
CREATE INDEX node_transpositions_target ON node_transpositions (target_node_id);
CREATE INDEX node_changelog_node ON node_changelog (node_id);
"#;

/// Index on the edge table, built with the table in a side database, then transferred
/// into the store with it.
pub const EDGE_INDEXES: &str = r#"
CREATE INDEX node_children_child ON node_children (child_id);
"#;

/// The node fields whose changes are logged in `node_changelog`.
pub const TRACKED_FIELDS: &[&str] = &[
    "fen",
    "moves",
    "eco_code",
    "opening_name",
    "variation_name",
    "game_count",
    "white_win_pct",
    "draw_pct",
    "is_branching_node",
    "stockfish_eval",
    "stockfish_depth",
    "eval_source",
    "best_move",
    "is_dubious",
    "is_busted",
    "resulting_structure",
];
