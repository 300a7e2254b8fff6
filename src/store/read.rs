//! Answering queries from a built store: the `GET /node/fen` shape of the technical design.

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::{Connection, OpenFlags, OptionalExtension};
use serde::Serialize;

use super::StoreError;
use super::row::{node_columns, read_node};
use crate::record::column::Shown;
use crate::record::{COLUMNS, NodeRecord};

/// A child edge in a node answer.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ChildJson {
    /// Node id of the child.
    pub node_id: String,
    /// The move in SAN.
    pub pgn_move: String,
    /// The move in UCI.
    pub uci: String,
    /// Games that played the move from this position.
    pub game_count: i64,
    /// Percentage of White wins in those games.
    pub white_win_pct: Option<f64>,
    /// Percentage of draws in those games.
    pub draw_pct: Option<f64>,
    /// Average rating of the mover, where known.
    pub avg_rating: Option<f64>,
    /// The child's opening name.
    pub opening_name: Option<String>,
    /// The child's variation name.
    pub variation_name: Option<String>,
    /// Engine evaluation of the position the move leads to (centipawns, White's view).
    pub stockfish_eval: Option<i64>,
    /// The move is dubious for its mover (the engine's verdict on the child).
    pub is_dubious: Option<bool>,
    /// Centipawns the move loses against the best move of this position, from the
    /// mover's side ([`crate::engine::loss`]); `None` unless both positions have an
    /// evaluation.
    pub cp_loss: Option<i32>,
    /// Winning chances the move loses, in percentage points (Lichess's formula).
    pub win_chance_loss: Option<f64>,
}

impl ChildJson {
    /// Fills in the loss of the move against the best move of its parent, evaluated
    /// `parent` (centipawns, White's view) with `mover` to move.
    fn judge(&mut self, parent: Option<i32>, mover: shakmaty::Color) {
        let child = self.stockfish_eval.and_then(|e| i32::try_from(e).ok());
        let loss = parent.zip(child).map(|(p, c)| crate::engine::loss::move_loss(p, c, mover));
        self.cp_loss = loss.map(|l| l.cp);
        self.win_chance_loss = loss.map(|l| l.win_chance);
    }
}

/// Another move order that reaches the same position.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TranspositionJson {
    /// Node id of the node the other move order comes from.
    pub node_id: String,
    /// The other move order: that node's canonical line plus the move into this position.
    pub moves: String,
    /// Name of the opening at that node.
    pub opening_name: Option<String>,
}

/// One node, as `okb query` and `GET /node/fen` answer: the node's row (the columns the
/// API shows, [`crate::record::column::Column::api`]), with its entry's SCID code and
/// aliases, its moves and its transpositions after its name.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeJson {
    /// The node's row.
    pub node: NodeRecord,
    /// SCID code of the node's own entry.
    pub scid: Option<String>,
    /// Names in other sources.
    pub aliases: BTreeMap<String, String>,
    /// Outgoing moves, most played first.
    pub children: Vec<ChildJson>,
    /// Move orders that reach this node from different parents.
    pub transpositions: Vec<TranspositionJson>,
}

/// The column after which a node answer gives its entry, moves and transpositions.
const NAMED_BY: &str = "name_inherited";

impl Serialize for NodeJson {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        for column in COLUMNS.iter().filter(|c| c.api) {
            map.serialize_entry(column.name, &Shown { row: &self.node, column })?;
            if column.name == NAMED_BY {
                map.serialize_entry("scid", &self.scid)?;
                map.serialize_entry("aliases", &self.aliases)?;
                map.serialize_entry("children", &self.children)?;
                map.serialize_entry("transpositions", &self.transpositions)?;
            }
        }
        map.end()
    }
}

/// The form of a node answer: the BLAKE3 of a probe answer with its lists and optional
/// fields filled in (every key, their order, how values are written). A store records
/// the form of the node answers it keeps ([`super::answers`]), so that an okb whose
/// answers have another form does not serve them as its own.
pub fn answer_format() -> &'static str {
    static FORMAT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    FORMAT.get_or_init(|| {
        let child = ChildJson {
            node_id: "child".into(),
            pgn_move: "e4".into(),
            uci: "e2e4".into(),
            game_count: 3,
            white_win_pct: Some(33.3),
            draw_pct: Some(33.4),
            avg_rating: Some(2000.5),
            opening_name: Some("Opening".into()),
            variation_name: Some("Variation".into()),
            stockfish_eval: Some(-12),
            is_dubious: Some(true),
            cp_loss: Some(25),
            win_chance_loss: Some(2.5),
        };
        let transposition = TranspositionJson {
            node_id: "other".into(),
            moves: "1. e4".into(),
            opening_name: Some("Opening".into()),
        };
        let probe = NodeJson {
            node: NodeRecord::default(),
            scid: Some("A00a".into()),
            aliases: BTreeMap::from([("scid".to_string(), "Name".to_string())]),
            children: vec![child],
            transpositions: vec![transposition],
        };
        let json = serde_json::to_vec(&probe).expect("a probe answer serializes");
        blake3::hash(&json).to_hex().to_string()
    })
}

impl NodeJson {
    /// The full name (`Opening: Variation`), own or inherited.
    pub fn full_name(&self) -> Option<String> {
        crate::graph::full_name(
            self.node.opening_name.as_deref(),
            self.node.variation_name.as_deref(),
        )
    }
}

/// A `pawn_structures` row: a structure as the store describes it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct StructureJson {
    /// Its name (`Carlsbad`).
    pub name: String,
    /// What it is, in one line.
    pub description: String,
    /// Typical plans for White.
    pub white_plans: Vec<String>,
    /// Typical plans for Black.
    pub black_plans: Vec<String>,
}

/// The page cache of a lookup connection ([`Store::open_for_lookups`]), in KiB: enough
/// for the interior pages of the node table and the indexes a lookup descends (about
/// 24 MB at 5 M nodes), so that a random lookup reads only its leaf pages from the file.
/// With less, each descent read its interior pages again through a system call and a
/// 16 KiB copy. The server opens one connection per thread, so this bounds its memory.
pub const LOOKUP_CACHE_KIB: i64 = 64 * 1024;

/// A node with an entry of its own, as the choices among entries (an ECO code's root, the
/// named openings) read it.
#[derive(Clone, Debug, PartialEq)]
pub struct EntryNode {
    /// The node's id.
    pub node_id: String,
    /// Its entry's ECO code.
    pub eco: String,
    /// Its entry's name.
    pub name: String,
    /// Its entry is the root of its ECO code.
    pub is_eco_root: bool,
    /// Plies of the node's line.
    pub ply: u32,
    /// The node's line.
    pub moves: String,
}

/// The columns and tables of an edge's row with its child's own columns.
const EDGES_AND_CHILDREN: &str =
    "n.opening_name, n.variation_name, c.parent_id, n.stockfish_eval, n.is_dubious
     FROM node_children c JOIN opening_nodes n ON n.node_id = c.child_id";

/// The columns and table of an edge's row alone, the child's own columns left empty.
const EDGES_ALONE: &str = "NULL, NULL, c.parent_id, NULL, NULL FROM node_children c";

/// A node's own columns that its parents' answers show beside each edge into it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChildFacts {
    /// Opening name (before the `:`).
    pub opening_name: Option<String>,
    /// Variation name (after the `:`).
    pub variation_name: Option<String>,
    /// Engine evaluation, centipawns from White's side.
    pub stockfish_eval: Option<i64>,
    /// The move into the node is dubious for its mover.
    pub is_dubious: Option<bool>,
}

/// The [`ChildFacts`] of a node, by node id, where the caller knows them.
pub type ChildFactsFn<'a> = dyn Fn(&str) -> Option<ChildFacts> + Sync + 'a;

/// A read-only handle on a store.
pub struct Store {
    conn: Connection,
    path: String,
}

impl Store {
    /// Opens the store at `path` read-only.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        // Reading every node (a full load) touches each page many times: map the file
        // instead of copying pages through a small cache.
        Store::open_mapping(path, 1 << 30)
    }

    /// Opens the store at `path` read-only for lookups of a few rows at a time (the
    /// server's answers from disk): a page cache of [`LOOKUP_CACHE_KIB`] and no mapping,
    /// so that the process's memory does not grow with the pages that random lookups
    /// touch over a large store (the kernel's page cache keeps the hot pages either way).
    ///
    /// The query planner's stability guarantee is on: the bundled SQLite is built with
    /// STAT4, under which a statement whose plan may depend on a bound value is parsed
    /// and planned again each time a new value is bound, so every lookup paid a full
    /// prepare of each of its three statements (a tenth of the server's time at 5 M nodes).
    pub fn open_for_lookups(path: &Path) -> Result<Store, StoreError> {
        let store = Store::open_mapping(path, 0)?;
        store
            .conn
            .set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
            .map_err(store.err())?;
        store.conn.pragma_update(None, "cache_size", -LOOKUP_CACHE_KIB).map_err(store.err())?;
        Ok(store)
    }

    /// Opens the store at `path` read-only for one pass over whole tables ([`super::scan`]):
    /// no mapping and a page cache of [`LOOKUP_CACHE_KIB`], so the process's memory stays
    /// small whatever the store's size, while the B-tree pages above the leaves that
    /// every row's lookups walk stay cached (with SQLite's default 2 MiB, a third of a
    /// CSV export's time was the kernel copying those pages again).
    pub fn open_for_scans(path: &Path) -> Result<Store, StoreError> {
        let store = Store::open_mapping(path, 0)?;
        store.conn.pragma_update(None, "cache_size", -LOOKUP_CACHE_KIB).map_err(store.err())?;
        Ok(store)
    }

    /// Opens `path` read-only, mapping up to `mmap` bytes of it.
    fn open_mapping(path: &Path, mmap: i64) -> Result<Store, StoreError> {
        let shown = path.display().to_string();
        if !path.exists() {
            return Err(StoreError::Missing(shown));
        }
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|source| StoreError::Sqlite { path: shown.clone(), source })?;
        conn.pragma_update(None, "mmap_size", mmap)
            .map_err(|source| StoreError::Sqlite { path: shown.clone(), source })?;
        Ok(Store { conn, path: shown })
    }

    /// The player collections' games, if the store has them ([`super::players`]).
    pub fn players(
        &self,
    ) -> Result<Option<crate::repertoire::collection::Collections>, StoreError> {
        super::players::load(&self.conn, &self.path)
    }

    /// Whether the store has an explorer index, without reading it.
    pub fn has_explorer(&self) -> Result<bool, StoreError> {
        super::explorer::present(&self.conn, &self.path)
    }

    /// The explorer index, if the store has one ([`super::explorer`]).
    pub fn explorer(&self) -> Result<Option<super::explorer::Loaded>, StoreError> {
        super::explorer::load(&self.conn, &self.path)
    }

    /// Node `node_id`'s part of the explorer index, if it has one.
    pub fn explorer_node(
        &self,
        node_id: &str,
    ) -> Result<Option<crate::explorer_index::NodeIndex>, StoreError> {
        super::explorer::node(&self.conn, &self.path, node_id)
    }

    /// The explorer index's referenced games `games`, by index.
    pub fn explorer_games(
        &self,
        games: impl IntoIterator<Item = u32>,
    ) -> Result<std::collections::HashMap<u32, crate::explorer_index::GameRef>, StoreError> {
        super::explorer::games(&self.conn, &self.path, games)
    }

    /// The id of the explorer index's first referenced game, if any.
    pub fn explorer_first_game_id(&self) -> Result<Option<String>, StoreError> {
        super::explorer::first_game_id(&self.conn, &self.path)
    }

    /// The explorer index's first referenced game with id `id`, and its PGN text.
    pub fn explorer_pgn(&self, id: &str) -> Result<Option<String>, StoreError> {
        match super::explorer::game_by_id(&self.conn, &self.path, id)? {
            Some(game) => super::explorer::game_text(&self.conn, &self.path, &game),
            None => Ok(None),
        }
    }

    /// The `meta` table: schema version, build number, okb version and what each game
    /// source covers (`coverage`, JSON), by key.
    pub fn meta(&self) -> Result<BTreeMap<String, String>, StoreError> {
        let mut stmt = self.conn.prepare("SELECT key, value FROM meta").map_err(self.err())?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(self.err())?;
        rows.collect::<Result<_, _>>().map_err(self.err())
    }

    fn err(&self) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        |source| StoreError::Sqlite { path: self.path.clone(), source }
    }

    /// The node on position identity `epd` (see [`crate::position::epd`]).
    pub fn node_by_position(&self, epd: &str) -> Result<Option<NodeJson>, StoreError> {
        self.query_nodes("n.position_key = ?1", &[&epd]).map(|mut v| v.pop())
    }

    /// Nodes whose own entry has ECO code `code` (SCID codes like `B03a` match their entry's
    /// `scid` field), shortest line first.
    pub fn nodes_by_eco(&self, code: &str) -> Result<Vec<NodeJson>, StoreError> {
        self.query_nodes("(e.eco = ?1 OR e.scid = ?1)", &[&code])
    }

    /// The nodes with these ids, in the order given (ids not in the store are skipped).
    pub fn nodes_by_id(&self, ids: &[&str]) -> Result<Vec<NodeJson>, StoreError> {
        let mut nodes = Vec::with_capacity(ids.len());
        for id in ids {
            nodes.extend(self.query_nodes("n.node_id = ?1", &[id])?);
        }
        Ok(nodes)
    }

    /// `read` within one read transaction: without one, each statement takes and drops
    /// the file's lock and checks for a hot journal (several system calls), which a
    /// batch of thousands of lookups pays once here.
    pub fn in_one_read<T>(
        &self,
        read: impl FnOnce(&Store) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.conn.execute_batch("BEGIN").map_err(self.err())?;
        let result = read(self);
        // A failed read is the error to report, whatever the end of the transaction says.
        let ended = self.conn.execute_batch("COMMIT").map_err(self.err());
        result.and_then(|value| ended.map(|()| value))
    }

    /// The nodes whose ids run from `first` to `last`, in id order, each as
    /// [`Store::nodes_by_id`] gives it: three reads of consecutive rows (the nodes, the
    /// edges from them, the edges into them) where a node at a time takes four lookups,
    /// for a pass over every node (the store's node answers).
    pub fn nodes_in_id_range(&self, first: &str, last: &str) -> Result<Vec<NodeJson>, StoreError> {
        self.nodes_in_id_range_with(first, last, None)
    }

    /// [`Store::nodes_in_id_range`], with each child's own columns (its names and
    /// evaluation) taken from `facts` where it knows the child, instead of from the
    /// child's row: a writer that holds the rows it wrote saves a random read of the node
    /// table per edge, most of a large store's answer time. `facts` must give what the
    /// rows hold; a child it does not know is read from its row.
    pub fn nodes_in_id_range_with(
        &self,
        first: &str,
        last: &str,
        facts: Option<&ChildFactsFn<'_>>,
    ) -> Result<Vec<NodeJson>, StoreError> {
        let range: [&dyn rusqlite::ToSql; 2] = [&first, &last];
        let mut nodes = self.node_rows("n.node_id BETWEEN ?1 AND ?2", &range)?;
        nodes.sort_unstable_by(|a, b| a.node.node_id.cmp(&b.node.node_id));
        let children = match facts {
            None => self.child_rows("c.parent_id BETWEEN ?1 AND ?2", &range)?,
            Some(facts) => self.child_edges_with(&range, facts)?,
        };
        let mut children = children.into_iter().peekable();
        let mut parents = self.parent_counts(first, last)?.into_iter().peekable();
        for node in &mut nodes {
            let id = &node.node.node_id;
            while children.next_if(|(parent, _)| parent < id).is_some() {}
            let own: Vec<ChildJson> =
                std::iter::from_fn(|| children.next_if(|(parent, _)| parent == id))
                    .map(|(_, child)| child)
                    .collect();
            while parents.next_if(|(child, _)| child < id).is_some() {}
            let parent_edges = parents.next_if(|(child, _)| child == id).map_or(0, |(_, n)| n);
            self.complete(node, own.into_iter(), parent_edges)?;
        }
        Ok(nodes)
    }

    /// How many edges lead into each node whose id runs from `first` to `last`, by id
    /// (from the index `node_children_child`).
    fn parent_counts(&self, first: &str, last: &str) -> Result<Vec<(String, u64)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT child_id, count(*) FROM node_children WHERE child_id BETWEEN ?1 AND ?2
                 GROUP BY child_id ORDER BY child_id",
            )
            .map_err(self.err())?;
        let rows = stmt
            .query_map([first, last], |r| Ok((r.get(0)?, r.get::<_, i64>(1)?.max(0) as u64)))
            .map_err(self.err())?;
        rows.collect::<Result<Vec<_>, _>>().map_err(self.err())
    }

    /// Calls `visit` with every node record in `order` ([`super::scan::each_record`]).
    pub fn each_record<E: From<StoreError>>(
        &self,
        order: super::scan::RecordOrder,
        visit: impl FnMut(NodeRecord) -> Result<(), E>,
    ) -> Result<(), E> {
        super::scan::each_record(&self.conn, &self.path, order, visit)
    }

    /// Calls `visit` with every edge and its parent's FEN ([`super::scan::each_edge`]).
    pub fn each_edge<E: From<StoreError>>(
        &self,
        visit: impl FnMut(super::scan::EdgeRow<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        super::scan::each_edge(&self.conn, &self.path, visit)
    }

    /// Calls `visit` with every node id in id order, while it returns `true`.
    pub fn each_node_id(&self, mut visit: impl FnMut(String) -> bool) -> Result<(), StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT node_id FROM opening_nodes ORDER BY node_id")
            .map_err(self.err())?;
        let mut rows = stmt.query([]).map_err(self.err())?;
        while let Some(row) = rows.next().map_err(self.err())? {
            if !visit(row.get(0).map_err(self.err())?) {
                break;
            }
        }
        Ok(())
    }

    /// The `GET /node/fen` answer of the position keyed `key` from the store's node
    /// answers, compressed ([`super::answers::lookup`]), if it has the position.
    pub fn answer(&self, key: crate::position::PositionKey) -> Result<Option<Vec<u8>>, StoreError> {
        super::answers::lookup(&self.conn, &self.path, key)
    }

    /// The dictionary of the store's node answers ([`super::answers`]), if it has them:
    /// a store over `[store] answers_above` nodes.
    pub fn answers_dictionary(&self) -> Result<Option<super::answers::Dictionary>, StoreError> {
        super::answers::dictionary(&self.conn, &self.path)
    }

    /// The form of the node answers the store keeps ([`answer_format`] of the okb that
    /// wrote them), if it records one (stores written before it did record none).
    pub fn answers_format(&self) -> Result<Option<String>, StoreError> {
        let sql = "SELECT value FROM meta WHERE key = 'answers_format'";
        self.conn.query_row(sql, [], |r| r.get(0)).optional().map_err(self.err())
    }

    /// How many nodes the store has.
    ///
    /// A store with node answers records it in its metadata (`nodes`, written with them):
    /// counting the rows of a large store reads gigabytes of its file.
    pub fn node_count(&self) -> Result<u64, StoreError> {
        let recorded = "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'nodes'";
        let count = "SELECT count(*) FROM opening_nodes";
        let ask = |sql: &str| self.conn.query_row(sql, [], |r| r.get::<_, i64>(0)).optional();
        let n = match ask(recorded).map_err(self.err())? {
            Some(n) => n,
            None => ask(count).map_err(self.err())?.unwrap_or(0),
        };
        Ok(n.max(0) as u64)
    }

    /// The graph node on position identity `epd`, without its edges (their children are
    /// indexes into a whole graph).
    pub fn graph_node(&self, epd: &str) -> Result<Option<crate::graph::Node>, StoreError> {
        super::graph::node_at(&self.conn, &self.path, epd)
    }

    /// The piece of the store below one node that tree-shaped answers read
    /// ([`super::graph::piece`]).
    pub fn piece(&self, cut: super::graph::Cut<'_>) -> Result<super::graph::Piece, StoreError> {
        super::graph::piece(&self.conn, &self.path, cut)
    }

    /// The nodes whose own entry has ECO code or SCID code `code`, in identity order.
    pub fn entries_coded(&self, code: &str) -> Result<Vec<EntryNode>, StoreError> {
        self.entry_nodes("e.eco = ?1 OR e.scid = ?1", &[&code])
    }

    /// The nodes whose own entry comes from the Lichess taxonomy (`eco_tsv`: the named
    /// openings), in identity order.
    pub fn entries_named(&self) -> Result<Vec<EntryNode>, StoreError> {
        self.entry_nodes("e.src = 'eco_tsv'", &[])
    }

    fn entry_nodes(
        &self,
        condition: &str,
        args: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<EntryNode>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                // CROSS JOIN keeps the entries outside: ordered by the position index
                // instead, SQLite's plan walked every node of the store.
                "SELECT n.node_id, e.eco, e.name, e.is_eco_root, n.ply, n.moves
                 FROM opening_entries e CROSS JOIN opening_nodes n ON n.node_id = e.node_id
                 WHERE {condition} ORDER BY n.position_key"
            ))
            .map_err(self.err())?;
        let rows = stmt
            .query_map(args, |r| {
                Ok(EntryNode {
                    node_id: r.get(0)?,
                    eco: r.get(1)?,
                    name: r.get(2)?,
                    is_eco_root: r.get(3)?,
                    ply: r.get::<_, i64>(4)?.max(0) as u32,
                    moves: r.get(5)?,
                })
            })
            .map_err(self.err())?;
        rows.collect::<Result<Vec<_>, _>>().map_err(self.err())
    }

    /// The whole store as an in-memory [`Graph`](crate::graph::Graph).
    pub fn graph(&self) -> Result<crate::graph::Graph, StoreError> {
        super::graph::load(&self.conn, &self.path)
    }

    /// The [`NamedTally`](crate::graph::tally::NamedTally) of every node, read in one
    /// pass over the store ([`super::named_summary::tally`]).
    pub fn named_tally(&self) -> Result<crate::graph::tally::NamedTally, StoreError> {
        super::named_summary::tally(&self.conn, &self.path)
    }

    /// The tally the store keeps as its named summary, if it has one
    /// ([`super::named_summary`]: a store with node answers).
    pub fn named_summary(&self) -> Result<Option<crate::graph::tally::NamedTally>, StoreError> {
        super::named_summary::read(&self.conn, &self.path)
    }

    /// Every pawn structure the store describes, by name.
    pub fn structures(&self) -> Result<Vec<StructureJson>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT name, description, white_plans, black_plans FROM pawn_structures ORDER BY name")
            .map_err(self.err())?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                ))
            })
            .map_err(self.err())?;
        let plans = |text: String| -> Result<Vec<String>, StoreError> {
            serde_json::from_str(&text).map_err(|e| {
                StoreError::Corrupt(format!("{}: pawn_structures plans: {e}", self.path))
            })
        };
        let mut structures = Vec::new();
        for row in rows {
            let (name, description, white, black) = row.map_err(self.err())?;
            structures.push(StructureJson {
                name,
                description,
                white_plans: plans(white)?,
                black_plans: plans(black)?,
            });
        }
        Ok(structures)
    }

    fn query_nodes(
        &self,
        condition: &str,
        args: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<NodeJson>, StoreError> {
        let mut nodes = self.node_rows(condition, args)?;
        for node in &mut nodes {
            let id = &node.node.node_id;
            let children = self.child_rows("c.parent_id = ?1", &[id])?;
            let parent_edges = self.parent_edges(id)?;
            self.complete(node, children.into_iter().map(|(_, child)| child), parent_edges)?;
        }
        Ok(nodes)
    }

    /// Gives `node` its `children` (each judged against the node's evaluation) and, when
    /// `parent_edges` lead into it, its transpositions. Most nodes have one parent: counted
    /// from the child index alone, they skip reading their edge and their parent's row
    /// (two pages at random in a large store) for a list that would be empty.
    fn complete(
        &self,
        node: &mut NodeJson,
        children: impl Iterator<Item = ChildJson>,
        parent_edges: u64,
    ) -> Result<(), StoreError> {
        let mover = crate::engine::loss::side_to_move(&node.node.fen);
        let eval = node.node.stockfish_eval;
        node.children = children
            .map(|mut child| {
                child.judge(eval, mover);
                child
            })
            .collect();
        if parent_edges >= 2 {
            let parents = self.transposition_rows("c.child_id = ?1", &[&node.node.node_id])?;
            node.transpositions = only_transpositions(parents.into_iter().map(|r| r.1).collect());
        }
        Ok(())
    }

    /// How many edges lead into node `id` (from the index `node_children_child`).
    fn parent_edges(&self, id: &str) -> Result<u64, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT count(*) FROM node_children WHERE child_id = ?1")
            .map_err(self.err())?;
        stmt.query_row([id], |r| r.get::<_, i64>(0)).map(|n| n.max(0) as u64).map_err(self.err())
    }

    /// Node rows matching `condition`, without children and transpositions.
    fn node_rows(
        &self,
        condition: &str,
        args: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<NodeJson>, StoreError> {
        let sql = format!(
            "SELECT {}, e.scid, e.aliases FROM opening_nodes n LEFT JOIN opening_entries e ON e.node_id = n.node_id
             WHERE {condition} ORDER BY n.ply, n.moves",
            node_columns("n")
        );
        let mut stmt = self.conn.prepare_cached(&sql).map_err(self.err())?;
        let stored = super::row::stored_count();
        let rows = stmt
            .query_map(args, |r| {
                let aliases: Option<String> = r.get(stored + 1)?;
                Ok(NodeJson {
                    node: read_node(r)?,
                    scid: r.get(stored)?,
                    aliases: aliases
                        .and_then(|a| serde_json::from_str(&a).ok())
                        .unwrap_or_default(),
                    children: Vec::new(),
                    transpositions: Vec::new(),
                })
            })
            .map_err(self.err())?;
        rows.collect::<Result<Vec<_>, _>>().map_err(self.err())
    }

    /// The child edges of the parents whose ids run from `range`'s first to its last,
    /// each with its parent's id, in rank order, with each child's own columns from
    /// `facts` (else from its row, [`Store::child_facts`]).
    fn child_edges_with(
        &self,
        range: &[&dyn rusqlite::ToSql],
        facts: &ChildFactsFn<'_>,
    ) -> Result<Vec<(String, ChildJson)>, StoreError> {
        let mut edges =
            self.child_rows_from(EDGES_ALONE, "c.parent_id BETWEEN ?1 AND ?2", range)?;
        for (_, child) in &mut edges {
            let known = facts(&child.node_id);
            let own = match known {
                Some(own) => own,
                None => self.child_facts(&child.node_id)?,
            };
            child.opening_name = own.opening_name;
            child.variation_name = own.variation_name;
            child.stockfish_eval = own.stockfish_eval;
            child.is_dubious = own.is_dubious;
        }
        Ok(edges)
    }

    /// Node `id`'s own columns that its parents' answers show.
    fn child_facts(&self, id: &str) -> Result<ChildFacts, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT opening_name, variation_name, stockfish_eval, is_dubious
                 FROM opening_nodes WHERE node_id = ?1",
            )
            .map_err(self.err())?;
        stmt.query_row([id], |r| {
            Ok(ChildFacts {
                opening_name: r.get(0)?,
                variation_name: r.get(1)?,
                stockfish_eval: r.get(2)?,
                is_dubious: r.get(3)?,
            })
        })
        .map_err(self.err())
    }

    /// Child edges matching `condition`, each with its parent's id, in rank order.
    fn child_rows(
        &self,
        condition: &str,
        args: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<(String, ChildJson)>, StoreError> {
        self.child_rows_from(EDGES_AND_CHILDREN, condition, args)
    }

    /// Child edges matching `condition` from `source` ([`EDGES_AND_CHILDREN`] or
    /// [`EDGES_ALONE`]), each with its parent's id, in rank order.
    fn child_rows_from(
        &self,
        source: &str,
        condition: &str,
        args: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<(String, ChildJson)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT c.child_id, c.move_san, c.move_uci, c.game_count, c.white_wins, c.draws, c.avg_rating,
                 {source} WHERE {condition} ORDER BY c.parent_id, c.rank"
            ))
            .map_err(self.err())?;
        let rows = stmt
            .query_map(args, |r| {
                let games: i64 = r.get(3)?;
                let white: i64 = r.get(4)?;
                let draws: i64 = r.get(5)?;
                Ok((
                    r.get(9)?,
                    ChildJson {
                        node_id: r.get(0)?,
                        pgn_move: r.get(1)?,
                        uci: r.get(2)?,
                        game_count: games,
                        white_win_pct: crate::record::pct(white as u64, games as u64),
                        draw_pct: crate::record::pct(draws as u64, games as u64),
                        avg_rating: r.get(6)?,
                        opening_name: r.get(7)?,
                        variation_name: r.get(8)?,
                        stockfish_eval: r.get(10)?,
                        is_dubious: r.get(11)?,
                        cp_loss: None,
                        win_chance_loss: None,
                    },
                ))
            })
            .map_err(self.err())?;
        rows.collect::<Result<Vec<_>, _>>().map_err(self.err())
    }

    /// The move orders into nodes matching `condition` (one per parent edge), each with
    /// the id of the node they reach.
    fn transposition_rows(
        &self,
        condition: &str,
        args: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<(String, TranspositionJson)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT p.node_id, p.moves, p.ply, c.move_san, p.opening_name, p.variation_name, c.child_id
                 FROM node_children c JOIN opening_nodes p ON p.node_id = c.parent_id
                 WHERE {condition} ORDER BY c.child_id, p.ply, p.moves"
            ))
            .map_err(self.err())?;
        let rows = stmt
            .query_map(args, |r| {
                let moves: String = r.get(1)?;
                let ply: i64 = r.get(2)?;
                let san: String = r.get(3)?;
                let line = match (ply % 2 == 0, moves.is_empty()) {
                    (true, true) => format!("1. {san}"),
                    (true, false) => format!("{moves} {}. {san}", ply / 2 + 1),
                    (false, _) => format!("{moves} {san}"),
                };
                let opening: Option<String> = r.get(4)?;
                let variation: Option<String> = r.get(5)?;
                Ok((
                    r.get(6)?,
                    TranspositionJson {
                        node_id: r.get(0)?,
                        moves: line,
                        opening_name: opening.map(|o| match variation {
                            Some(v) => format!("{o}: {v}"),
                            None => o,
                        }),
                    },
                ))
            })
            .map_err(self.err())?;
        rows.collect::<Result<Vec<_>, _>>().map_err(self.err())
    }
}

/// The move orders into a node are transpositions only when there are two or more.
fn only_transpositions(all: Vec<TranspositionJson>) -> Vec<TranspositionJson> {
    if all.len() >= 2 { all } else { Vec::new() }
}
