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
        let after = TABLES_AFTER_NODES.replace(GAME_COLUMNS_MARK, &game_columns_ddl());
        format!("{TABLES_BEFORE_NODES}{}{after}{ANSWERS_TABLE}", super::row::node_table())
    })
}

/// The columns of a game reference ([`crate::explorer_index::GameRef`] less its place in
/// the PGN blocks), in order, with their SQL types: `explorer_games` and `player_games`
/// hold them between columns of their own. The DDL, both tables' inserts and their reads
/// are made from this one list ([`game_columns_ddl`], [`game_insert`], [`game_select`]),
/// so a new reference field is added here and in the binding
/// ([`super::explorer::reference_values`]) and reading ([`super::explorer::reference`]).
pub const GAME_COLUMNS: [(&str, &str); 11] = [
    ("id", "TEXT"),
    ("white", "TEXT"),
    ("black", "TEXT"),
    ("white_rating", "INTEGER"),
    ("black_rating", "INTEGER"),
    ("year", "INTEGER"),
    ("month", "INTEGER"),
    ("winner", "INTEGER"),
    ("speed", "INTEGER"),
    ("mode", "INTEGER"),
    ("played", "INTEGER"),
];

/// Where [`TABLES_AFTER_NODES`] lists the [`GAME_COLUMNS`] (not valid SQL, so a mark left
/// in place fails loudly).
const GAME_COLUMNS_MARK: &str = "{game_columns}\n";

/// The DDL lines of the [`GAME_COLUMNS`], as a table lists them.
fn game_columns_ddl() -> String {
    GAME_COLUMNS.iter().map(|(name, kind)| format!("    {name} {kind} NOT NULL,\n")).collect()
}

/// `INSERT INTO {table} VALUES (?1, …)` for a table of `before` columns of its own, the
/// [`GAME_COLUMNS`], then `after` columns of its own.
pub fn game_insert(table: &str, before: usize, after: usize) -> String {
    let count = before + GAME_COLUMNS.len() + after;
    let marks: Vec<String> = (1..=count).map(|i| format!("?{i}")).collect();
    format!("INSERT INTO {table} VALUES ({})", marks.join(", "))
}

/// `SELECT {before}, the game columns, {after} FROM {rest}`.
pub fn game_select(before: &[&str], after: &[&str], rest: &str) -> String {
    let games = GAME_COLUMNS.iter().map(|(name, _)| *name);
    let names: Vec<&str> =
        before.iter().copied().chain(games).chain(after.iter().copied()).collect();
    format!("SELECT {} FROM {rest}", names.join(", "))
}

/// The store's settings and its first table, before the node table.
const TABLES_BEFORE_NODES: &str = r#"
PRAGMA page_size = 16384;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"#;

/// The tables after the node table; `{game_columns}` stands for the [`GAME_COLUMNS`].
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
{game_columns}
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
{game_columns}
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
"#;

/// Index on the changelog, built with the table in a part database, then transferred into
/// the store with it.
pub const CHANGELOG_INDEXES: &str = r#"
CREATE INDEX node_changelog_node ON node_changelog (node_id);
"#;

/// A connection that writes the store, or a part of it, at `path` (see [`WRITER_PRAGMAS`]).
pub(super) fn open_writer(
    path: &std::path::Path,
) -> Result<rusqlite::Connection, super::StoreError> {
    let sql = super::sql_file(path);
    let conn = rusqlite::Connection::open(path).map_err(sql)?;
    conn.execute_batch(WRITER_PRAGMAS).map_err(sql)?;
    Ok(conn)
}

/// The node answers of a large store and their dictionary ([`super::answers`]): the last
/// tables, also created alone in the part database that receives them.
pub const ANSWERS_TABLE: &str = r#"CREATE TABLE IF NOT EXISTS node_answers (
    key INTEGER NOT NULL,
    check_key INTEGER NOT NULL,
    answer BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS node_answers_dictionary (dictionary BLOB NOT NULL);
"#;

/// Index on the node answers of a large store ([`super::answers`]), built with the table
/// in a part database, then transferred into the store with it.
pub const ANSWERS_INDEXES: &str = r#"
CREATE INDEX node_answers_key ON node_answers (key, check_key);
"#;

/// Index on the edge table, built with the table in a side database, then transferred
/// into the store with it.
pub const EDGE_INDEXES: &str = r#"
CREATE INDEX node_children_child ON node_children (child_id);
"#;

#[cfg(test)]
mod tests {
    use super::*;

    /// Both tables hold the game columns, typed as [`GAME_COLUMNS`] says, between their
    /// own; the generated insert binds one value per column and the generated read names
    /// columns that exist.
    #[test]
    fn game_columns_make_the_ddl_the_inserts_and_the_reads() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch(schema()).unwrap();
        let tables: [(&str, &[&str], &[&str]); 2] = [
            ("explorer_games", &["game"], &["block", "start", "len"]),
            ("player_games", &["row", "player", "color"], &["moves"]),
        ];
        for (table, before, after) in tables {
            let mut info = conn.prepare(&format!("PRAGMA table_info({table})")).unwrap();
            let columns: Vec<(String, String)> = info
                .query_map([], |r| Ok((r.get(1)?, r.get(2)?)))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            let names: Vec<&str> = columns.iter().map(|c| c.0.as_str()).collect();
            assert_eq!(names[..before.len()], *before, "{table}");
            assert_eq!(names[names.len() - after.len()..], *after, "{table}");
            let games = &columns[before.len()..columns.len() - after.len()];
            let typed: Vec<(&str, &str)> =
                games.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
            assert_eq!(typed, GAME_COLUMNS, "{table}");
            let insert = conn.prepare(&game_insert(table, before.len(), after.len())).unwrap();
            assert_eq!(insert.parameter_count(), columns.len(), "{table}");
            let read = conn.prepare(&game_select(before, after, table)).unwrap();
            assert_eq!(read.column_count(), columns.len(), "{table}");
        }
    }
}
