//! The node row in SQL: the `opening_nodes` table, its insert and its selects, each
//! written from [`crate::record::COLUMNS`].

use crate::record::column::Cell;
use crate::record::{COLUMNS, NodeRecord};

/// The columns the store keeps, in the table's order.
fn stored() -> impl Iterator<Item = &'static crate::record::column::Column<NodeRecord>> {
    COLUMNS.iter().filter(|c| c.stored())
}

/// How many columns the store keeps: where a select of [`node_columns`] goes on.
pub fn stored_count() -> usize {
    stored().count()
}

/// `CREATE TABLE opening_nodes`, one line per stored column of the node row.
pub fn node_table() -> String {
    let columns: Vec<String> =
        stored().filter_map(|c| Some(format!("    {} {}", c.name, c.sql?))).collect();
    format!("CREATE TABLE opening_nodes (\n{}\n) WITHOUT ROWID;\n", columns.join(",\n"))
}

/// `INSERT INTO opening_nodes` of every stored column, numbered `?1`, `?2`, …
pub fn node_insert() -> String {
    let names: Vec<&str> = stored().map(|c| c.name).collect();
    let slots: Vec<String> = (1..=names.len()).map(|i| format!("?{i}")).collect();
    format!("INSERT INTO opening_nodes ({}) VALUES ({})", names.join(", "), slots.join(", "))
}

/// The values [`node_insert`] binds for `record`, appended to `cells`.
pub fn node_cells<'a>(record: &'a NodeRecord, cells: &mut Vec<Cell<'a>>) {
    cells.extend(stored().map(|c| (c.cell)(record)));
}

/// The stored columns of the node row, each prefixed by `table.`, in the table's order
/// (what [`read_node`] reads).
pub fn node_columns(table: &str) -> String {
    stored().map(|c| format!("{table}.{}", c.name)).collect::<Vec<_>>().join(", ")
}

/// The node row at the start of `row`, selected by [`node_columns`]. The number of
/// children, which the store keeps as edges, is left at 0.
pub fn read_node(row: &rusqlite::Row<'_>) -> rusqlite::Result<NodeRecord> {
    let mut node = NodeRecord::default();
    for (i, column) in stored().enumerate() {
        let cell = cell_of(row.get_ref(i)?)
            .map_err(|e| rusqlite::Error::Utf8Error(i, e))?
            .ok_or_else(|| bad_cell(i, column.name, "a blob".into()))?;
        (column.set)(&mut node, cell).map_err(|why| bad_cell(i, column.name, why))?;
    }
    Ok(node)
}

/// A value read from SQLite as the node row's [`Cell`]; `None` for a blob, which no node
/// column holds. The store's changelog compares values read back this way with the
/// cells a rebuild writes, so both take their text from [`Cell::as_text`].
pub fn cell_of(
    value: rusqlite::types::ValueRef<'_>,
) -> Result<Option<Cell<'_>>, std::str::Utf8Error> {
    use rusqlite::types::ValueRef;
    Ok(Some(match value {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(n) => Cell::Int(n),
        ValueRef::Real(x) => Cell::Real(x),
        ValueRef::Text(bytes) => Cell::Text(std::str::from_utf8(bytes)?),
        ValueRef::Blob(_) => return Ok(None),
    }))
}

fn bad_cell(index: usize, name: &str, why: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        index,
        rusqlite::types::Type::Null,
        format!("opening_nodes.{name}: {why}").into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::column::JsonText;

    /// A record with every stored field set to something other than its default.
    fn full_record() -> NodeRecord {
        NodeRecord {
            node_id: "id".into(),
            position_key: "8/8/8/8/8/8/8/8 w - -".into(),
            fen: "8/8/8/8/8/8/8/8 w - - 0 1".into(),
            ply: 7,
            moves: "1. e4".into(),
            pgn_move: Some("e4".into()),
            eco_code: Some("B00".into()),
            opening_name: Some("King's Pawn".into()),
            variation_name: Some("Main".into()),
            name_src: Some("eco_tsv".into()),
            name_inherited: true,
            game_count: 10,
            white_wins: 5,
            draws: 3,
            black_wins: 2,
            white_win_pct: Some(50.0),
            draw_pct: Some(30.0),
            is_branching_node: true,
            children: 0,
            stockfish_eval: Some(-35),
            stockfish_depth: Some(22),
            best_move: Some("Nf3".into()),
            best_move_uci: Some("g1f3".into()),
            is_dubious: Some(true),
            is_busted: Some(false),
            resulting_structure: Some("Carlsbad".into()),
            stockfish_mate: Some(-4),
            stockfish_lines: Some(JsonText("[]".into())),
            structure_confidence: Some("exact".into()),
            eval_source: Some("evals@0123456789ab".into()),
            eval_nodes: Some(64000),
            // Not stored: computed from two nodes' evaluations when records are made.
            cp_loss: None,
            win_chance_loss: None,
        }
    }

    /// Every stored column goes in through the generated insert and comes back through
    /// the generated select: the one list is enough for both ways.
    #[test]
    fn a_node_row_reads_back_as_written() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch(crate::store::schema::schema()).unwrap();
        for record in
            [full_record(), NodeRecord { node_id: "empty".into(), ..NodeRecord::default() }]
        {
            let mut cells = Vec::new();
            node_cells(&record, &mut cells);
            let mut insert =
                super::super::bulk::BulkInsert::new(&conn, &node_insert(), stored_count()).unwrap();
            insert.row(&cells).unwrap();
            drop(insert);
            let sql =
                format!("SELECT {} FROM opening_nodes n WHERE n.node_id = ?1", node_columns("n"));
            let back = conn.query_row(&sql, [&record.node_id], read_node).unwrap();
            assert_eq!(back, record);
        }
    }

    /// A value the field cannot hold is an error naming the column, not a default.
    #[test]
    fn a_corrupt_cell_names_its_column() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch(crate::store::schema::schema()).unwrap();
        conn.execute("INSERT INTO opening_nodes (node_id, position_key, fen, ply, moves, stockfish_depth) VALUES ('x', 'k', 'f', 1, 'm', 'deep')", []).unwrap();
        let sql = format!("SELECT {} FROM opening_nodes n", node_columns("n"));
        let error = conn.query_row(&sql, [], read_node).unwrap_err().to_string();
        assert!(error.contains("opening_nodes.stockfish_depth"), "{error}");
    }
}
