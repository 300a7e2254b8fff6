//! Reading a whole store as a stream, for exports of any size: every node record in
//! identity order, every edge with its parent's FEN. Each holds one row (and one small
//! statement cache) at a time, so memory does not follow the store's size.
//!
//! The node records are those the build's `node-records` step made: the store keeps the
//! number of children as edges, and a move's loss as the two evaluations it comes from,
//! so both are found again here (a count of the node's edges; the evaluation of its
//! canonical parent, the parent whose line the node's extends by one move).

use rusqlite::Connection;

use super::StoreError;
use super::row::{node_columns, read_node, stored_count};
use crate::games::stats::Outcomes;
use crate::record::NodeRecord;

/// The order [`each_record`] reads the nodes in.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RecordOrder {
    /// By position identity: the order of the build's tree and of its CSV export. The
    /// rows are read in the table's order and sorted by SQLite's external sort (in its
    /// temporary folder, in memory bounded by the page cache): through the position
    /// index instead, each row was a random read, three times slower on a store larger
    /// than memory.
    Identity,
    /// By node id: the node table's own order, read and handed out in one sequential
    /// pass (no sort).
    Id,
}

/// Calls `visit` with every node record of the store on `conn` (`path` names it in
/// errors), in `order`, with its number of children and its move's loss filled in.
pub fn each_record<E: From<StoreError>>(
    conn: &Connection,
    path: &str,
    order: RecordOrder,
    mut visit: impl FnMut(NodeRecord) -> Result<(), E>,
) -> Result<(), E> {
    let err = super::sql(path);
    let order = match order {
        // `+` keeps the planner off the position index: a scan, then a sort.
        RecordOrder::Identity => "ORDER BY +n.position_key",
        RecordOrder::Id => "ORDER BY n.node_id",
    };
    // The edge count is a probe of the edge table's primary key (parent first): in id
    // order, the probes walk that table in its own order too.
    let sql = format!(
        "SELECT {}, (SELECT count(*) FROM node_children c WHERE c.parent_id = n.node_id)
         FROM opening_nodes n {order}",
        node_columns("n")
    );
    let mut nodes = conn.prepare(&sql).map_err(err)?;
    let mut parents = conn
        .prepare(
            "SELECT p.moves, p.fen, p.stockfish_eval FROM node_children c
             JOIN opening_nodes p ON p.node_id = c.parent_id
             WHERE c.child_id = ?1 AND p.ply = ?2",
        )
        .map_err(err)?;
    let mut rows = nodes.query([]).map_err(err)?;
    while let Some(row) = rows.next().map_err(err)? {
        let mut record = read_node(row).map_err(err)?;
        record.children = row.get::<_, i64>(stored_count()).map_err(err)?.max(0) as usize;
        judge_move(&mut parents, &mut record).map_err(err)?;
        visit(record)?;
    }
    Ok(())
}

/// Sets `record`'s move loss from its evaluation and its canonical parent's, as the
/// build's records have it: `parents` finds the node's parents one ply shorter.
fn judge_move(
    parents: &mut rusqlite::Statement<'_>,
    record: &mut NodeRecord,
) -> rusqlite::Result<()> {
    // Without an evaluation of its own a node has no loss to find.
    let (Some(child), Some(before)) = (record.stockfish_eval, record.ply.checked_sub(1)) else {
        return Ok(());
    };
    let mut candidates = parents.query(rusqlite::params![record.node_id, before as i64])?;
    while let Some(parent) = candidates.next()? {
        let moves: String = parent.get(0)?;
        if !extends_by_one_move(&record.moves, &moves) {
            continue;
        }
        let fen: String = parent.get(1)?;
        if let Some(eval) = parent.get::<_, Option<i32>>(2)? {
            let mover = crate::engine::loss::side_to_move(&fen);
            let loss = crate::engine::loss::move_loss(eval, child, mover);
            record.cp_loss = Some(loss.cp);
            record.win_chance_loss = Some(loss.win_chance);
        }
        break;
    }
    Ok(())
}

/// One edge of the store, as [`each_edge`] hands it out.
pub struct EdgeRow<'a> {
    /// The FEN of the position the move is played in.
    pub parent_fen: &'a str,
    /// The move in UCI.
    pub uci: &'a str,
    /// The games that played it.
    pub games: Outcomes,
    /// Nodes the scan has read so far (for progress: it ends at the store's node count).
    pub nodes_read: u64,
}

/// Calls `visit` with every edge of the store on `conn` (`path` names it in errors) and
/// its parent's FEN, in the order of the parents' ids: both tables are read in their
/// primary keys' order at once (a merge join), so the scan reads each page once.
pub fn each_edge<E: From<StoreError>>(
    conn: &Connection,
    path: &str,
    mut visit: impl FnMut(EdgeRow<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let err = super::sql(path);
    let mut nodes =
        conn.prepare("SELECT node_id, fen FROM opening_nodes ORDER BY node_id").map_err(err)?;
    let mut edges = conn
        .prepare(
            "SELECT parent_id, move_uci, white_wins, draws, black_wins
             FROM node_children ORDER BY parent_id, move_uci",
        )
        .map_err(err)?;
    let mut nodes = nodes.query([]).map_err(err)?;
    let mut edges = edges.query([]).map_err(err)?;
    let (mut node_id, mut fen) = (String::new(), String::new());
    let mut nodes_read = 0;
    let text = |row: &rusqlite::Row<'_>, i: usize| -> Result<String, StoreError> {
        let value = row.get_ref(i).map_err(err)?;
        Ok(value.as_str().map_err(|e| err(e.into()))?.to_string())
    };
    while let Some(edge) = edges.next().map_err(err)? {
        let parent = text(edge, 0)?;
        // The nodes up to the edge's parent (both in the same byte order).
        while node_id < parent {
            let Some(node) = nodes.next().map_err(err)? else { break };
            nodes_read += 1;
            node_id = text(node, 0)?;
            fen = text(node, 1)?;
        }
        if node_id != parent {
            let lacking = format!("{path} (an edge leaves node {parent}, which it lacks)");
            return Err(StoreError::Corrupt(lacking).into());
        }
        let count = |i: usize| edge.get::<_, i64>(i).map(|n| n.max(0) as u64).map_err(err);
        let games = Outcomes { white: count(2)?, draws: count(3)?, black: count(4)? };
        let uci = text(edge, 1)?;
        visit(EdgeRow { parent_fen: &fen, uci: &uci, games, nodes_read })?;
    }
    Ok(())
}

/// Whether movetext `child` is movetext `parent` and one more move (`1. e4 c5` after
/// `1. e4`, `1. e4 c5 2. Nf3` after `1. e4 c5`, `1. e4` after the empty line).
pub fn extends_by_one_move(child: &str, parent: &str) -> bool {
    let Some(rest) = child.strip_prefix(parent) else { return false };
    let rest = if parent.is_empty() {
        rest
    } else {
        match rest.strip_prefix(' ') {
            Some(rest) => rest,
            None => return false,
        }
    };
    // What is left is `SAN` or `N. SAN` (a White move after a Black one).
    let san = match rest.split_once(". ") {
        Some((number, san)) if number.bytes().all(|b| b.is_ascii_digit()) && !number.is_empty() => {
            san
        }
        _ => rest,
    };
    !san.is_empty() && !san.contains(' ')
}

#[cfg(test)]
mod tests {
    use super::extends_by_one_move;

    #[test]
    fn a_line_extends_its_parent_by_exactly_one_move() {
        assert!(extends_by_one_move("1. e4", ""));
        assert!(extends_by_one_move("1. e4 c5", "1. e4"));
        assert!(extends_by_one_move("1. e4 c5 2. Nf3", "1. e4 c5"));
        assert!(extends_by_one_move(
            "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O-O",
            "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6"
        ));
        assert!(!extends_by_one_move("1. e4 c5 2. Nf3", "1. e4"), "two moves");
        assert!(!extends_by_one_move("1. e4 c5", "1. d4"));
        assert!(
            !extends_by_one_move("1. e4 c5 2. O-O-O", "1. e4 c5 2. O-O"),
            "not at a move's end"
        );
        assert!(!extends_by_one_move("1. e4", "1. e4"));
        assert!(!extends_by_one_move("1. e4 c5", ""));
    }
}
