//! Copying a built SQLite store into a PostgreSQL schema, atomically.
//!
//! The load runs in one transaction: into `<schema>__okb_new` (dropped first, should an
//! older okb have left one), table by table with binary `COPY` (JSON columns as `json`),
//! then keys and indexes, then the schemas are renamed and the transaction commits.
//! Readers see the old knowledge base until the commit and the new one after; an
//! interrupted load leaves nothing behind. Tables that SQLite keys by rowid get a
//! `sqlite_rowid` column, so the copy back ([`super::read`]) restores rows in the same
//! order and answers are byte-identical.

use std::path::Path;

use postgres::binary_copy::BinaryCopyInWriter;
use postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use rusqlite::types::ValueRef;

use super::{PgError, PgTarget};

/// Columns beside the node row's that hold JSON text in SQLite (see [`is_json`]).
const JSON_COLUMNS: &[(&str, &str)] = &[
    ("opening_entries", "aliases"),
    ("pawn_structures", "white_plans"),
    ("pawn_structures", "black_plans"),
];

/// Whether `table.column` holds JSON text in SQLite: `json` in PostgreSQL (validated and
/// queryable with `->>`; unlike `jsonb` it keeps the text as written, so answers stay
/// byte-identical). The node row's JSON columns are those of its JSON shape.
fn is_json(table: &str, column: &str) -> bool {
    let of_node_row = || {
        crate::record::column(column).is_some_and(|c| c.shape == crate::record::column::Shape::Json)
    };
    if table == "opening_nodes" { of_node_row() } else { JSON_COLUMNS.contains(&(table, column)) }
}

/// Indexes beyond the SQLite store's, for SQL users who look openings up by ECO code
/// (`{s}` is the schema). Nodes by code or by structure are left to a scan, as in SQLite:
/// each index costs the load about a tenth of its time.
const EXTRA_INDEXES: &[&str] = &["CREATE INDEX opening_entries_eco ON {s}.opening_entries (eco)"];

/// A column's storage class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Text,
    Int,
    Real,
    /// Bytes (the explorer index's blobs): `bytea`.
    Blob,
}

impl Kind {
    /// From SQLite's declared type, by its affinity rules.
    pub(super) fn of(declared: &str) -> Kind {
        let upper = declared.to_ascii_uppercase();
        if upper.contains("INT") {
            Kind::Int
        } else if upper.contains("REAL") || upper.contains("FLOA") || upper.contains("DOUB") {
            Kind::Real
        } else if upper.contains("BLOB") {
            Kind::Blob
        } else {
            Kind::Text
        }
    }

    pub(super) fn pg_type(self) -> Type {
        match self {
            Kind::Text => Type::TEXT,
            Kind::Int => Type::INT8,
            Kind::Real => Type::FLOAT8,
            Kind::Blob => Type::BYTEA,
        }
    }

    fn sql(self) -> &'static str {
        match self {
            // Byte order, as SQLite's BINARY collation: the same ORDER BY answers, and
            // index builds that compare with memcmp instead of the locale's rules.
            Kind::Text => "text COLLATE \"C\"",
            Kind::Int => "bigint",
            Kind::Real => "double precision",
            Kind::Blob => "bytea",
        }
    }
}

/// One column of an SQLite table.
#[derive(Clone, Debug)]
pub(super) struct Column {
    pub name: String,
    pub kind: Kind,
    pub not_null: bool,
    /// 1-based position in the primary key, 0 when not part of it.
    pub pk: usize,
}

/// The columns of `table`.
pub(super) fn columns(conn: &rusqlite::Connection, table: &str) -> rusqlite::Result<Vec<Column>> {
    let mut stmt = conn.prepare(&format!("PRAGMA table_info({table})"))?;
    let rows = stmt.query_map([], |r| {
        let declared: String = r.get(2)?;
        Ok(Column {
            name: r.get(1)?,
            kind: Kind::of(&declared),
            not_null: r.get::<_, i64>(3)? != 0,
            pk: r.get::<_, i64>(5)? as usize,
        })
    })?;
    rows.collect()
}

/// One value on its way into `COPY`.
/// Text borrows from the SQLite row: no copy per value.
#[derive(Debug)]
enum Cell<'a> {
    Text(Option<&'a str>),
    /// JSON text, sent as PostgreSQL's `json` (whose binary form is the text itself).
    Json(Option<&'a str>),
    Int(Option<i64>),
    Real(Option<f64>),
    Blob(Option<&'a [u8]>),
}

impl ToSql for Cell<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Cell::Text(v) => v.to_sql(ty, out),
            Cell::Json(None) => Ok(IsNull::Yes),
            Cell::Json(Some(text)) => {
                out.extend_from_slice(text.as_bytes());
                Ok(IsNull::No)
            }
            Cell::Int(v) => v.to_sql(ty, out),
            Cell::Real(v) => v.to_sql(ty, out),
            Cell::Blob(v) => v.to_sql(ty, out),
        }
    }

    fn accepts(ty: &Type) -> bool {
        matches!(*ty, Type::TEXT | Type::JSON | Type::INT8 | Type::FLOAT8 | Type::BYTEA)
    }

    to_sql_checked!();
}

/// The value of a column of `kind`. The store writes each column with its declared type;
/// text that is not UTF-8 (never written by okb) travels as NULL rather than corrupt.
fn cell(kind: Kind, value: ValueRef<'_>) -> Cell<'_> {
    match (kind, value) {
        (Kind::Int, ValueRef::Integer(i)) => Cell::Int(Some(i)),
        (Kind::Int, _) => Cell::Int(None),
        (Kind::Real, ValueRef::Real(f)) => Cell::Real(Some(f)),
        (Kind::Real, ValueRef::Integer(i)) => Cell::Real(Some(i as f64)),
        (Kind::Real, _) => Cell::Real(None),
        (Kind::Text, ValueRef::Text(t)) => Cell::Text(std::str::from_utf8(t).ok()),
        (Kind::Text, _) => Cell::Text(None),
        (Kind::Blob, ValueRef::Blob(b)) => Cell::Blob(Some(b)),
        (Kind::Blob, _) => Cell::Blob(None),
    }
}

/// What a load wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LoadSummary {
    /// The schema now holding the knowledge base.
    pub schema: String,
    /// Tables copied.
    pub tables: usize,
    /// Rows copied, all tables.
    pub rows: u64,
}

/// Copies the SQLite store at `sqlite` into `target`'s schema, replacing what was there
/// in one transaction.
pub fn load(sqlite: &Path, target: &PgTarget) -> Result<LoadSummary, PgError> {
    let local = |what: &str, e: &dyn std::fmt::Display| PgError::Local {
        target: target.shown(),
        what: what.into(),
        message: e.to_string(),
    };
    let conn =
        rusqlite::Connection::open_with_flags(sqlite, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| local(&format!("opening {}", sqlite.display()), &e))?;
    let objects =
        sqlite_objects(&conn).map_err(|e| local(&format!("reading {}", sqlite.display()), &e))?;
    let mut client = target.connect()?;
    let staging = format!("{}__okb_new", target.schema);
    // One transaction: a single commit (one WAL flush, not one per statement), and an
    // interrupted load leaves nothing behind.
    let mut client = client.transaction().map_err(|e| target.error("starting the load", e))?;
    client
        .batch_execute(&format!("SET LOCAL client_min_messages = warning; DROP SCHEMA IF EXISTS {staging} CASCADE; CREATE SCHEMA {staging}"))
        .map_err(|e| target.error(&format!("creating schema {staging}"), e))?;
    let mut summary = LoadSummary { schema: target.schema.clone(), ..Default::default() };
    let tables: Vec<&SqliteObject> = objects.iter().filter(|o| o.kind == "table").collect();
    let total = row_count(&conn, &tables)
        .map_err(|e| local(&format!("counting the rows of {}", sqlite.display()), &e))?;
    let bar = crate::progress::start(total, "rows copied");
    for object in tables {
        bar.set_message(format!("rows copied ({})", object.name));
        let rows = copy_table(&conn, &mut client, &staging, object, &bar).map_err(|e| match e {
            CopyError::Pg(e) => target.error(&format!("loading table {}", object.name), e),
            CopyError::Sqlite(e) => {
                local(&format!("reading table {} of {}", object.name, sqlite.display()), &e)
            }
        })?;
        summary.tables += 1;
        summary.rows += rows;
    }
    bar.set_message("rows copied, indexes being built".into());
    save_schema(&mut client, target, &staging, &objects)?;
    for sql in finishing_ddl(&conn, &staging, &objects)
        .map_err(|e| local("reading the keys of the SQLite store", &e))?
    {
        client.batch_execute(&sql).map_err(|e| target.error(&format!("running {sql}"), e))?;
    }
    swap(&mut client, target, &staging)?;
    client.commit().map_err(|e| target.error("committing the load", e))?;
    Ok(summary)
}

/// The rows of `tables`, for the copy's progress: a count reads each table's smallest
/// index, a fraction of the copy's own pass over the table (half a second at 5 M nodes).
fn row_count(conn: &rusqlite::Connection, tables: &[&SqliteObject]) -> rusqlite::Result<u64> {
    tables.iter().try_fold(0, |sum, table| {
        let count = format!("SELECT count(*) FROM \"{}\"", table.name);
        Ok(sum + conn.query_row(&count, [], |r| r.get::<_, i64>(0))?.max(0) as u64)
    })
}

/// A table or index of the SQLite store, with its DDL.
pub(super) struct SqliteObject {
    pub kind: String,
    pub name: String,
    pub table: String,
    pub sql: String,
}

impl SqliteObject {
    /// Whether SQLite keys this table by rowid (the copy keeps the rowids).
    pub fn has_rowid(&self) -> bool {
        !self.sql.to_ascii_uppercase().contains("WITHOUT ROWID")
    }
}

fn sqlite_objects(conn: &rusqlite::Connection) -> rusqlite::Result<Vec<SqliteObject>> {
    let mut stmt = conn.prepare(
        "SELECT type, name, tbl_name, sql FROM sqlite_master
         WHERE type IN ('table', 'index') AND sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(SqliteObject { kind: r.get(0)?, name: r.get(1)?, table: r.get(2)?, sql: r.get(3)? })
    })?;
    rows.collect()
}

enum CopyError {
    Pg(postgres::Error),
    Sqlite(rusqlite::Error),
}

impl From<postgres::Error> for CopyError {
    fn from(e: postgres::Error) -> Self {
        CopyError::Pg(e)
    }
}

impl From<rusqlite::Error> for CopyError {
    fn from(e: rusqlite::Error) -> Self {
        CopyError::Sqlite(e)
    }
}

/// Creates `table` in `staging` and copies its rows; returns how many.
fn copy_table(
    conn: &rusqlite::Connection,
    client: &mut postgres::Transaction<'_>,
    staging: &str,
    table: &SqliteObject,
    bar: &crate::progress::Bar,
) -> Result<u64, CopyError> {
    let columns = columns(conn, &table.name)?;
    let json: Vec<bool> = columns.iter().map(|c| is_json(&table.name, &c.name)).collect();
    let mut defs: Vec<String> = columns
        .iter()
        .zip(&json)
        .map(|(c, &j)| {
            format!(
                "{} {}{}",
                c.name,
                if j { "json" } else { c.kind.sql() },
                if c.not_null { " NOT NULL" } else { "" }
            )
        })
        .collect();
    let mut names: Vec<String> = columns.iter().map(|c| c.name.clone()).collect();
    let mut types: Vec<Type> = columns
        .iter()
        .zip(&json)
        .map(|(c, &j)| if j { Type::JSON } else { c.kind.pg_type() })
        .collect();
    let rowid = table.has_rowid();
    if rowid {
        defs.push("sqlite_rowid bigint NOT NULL".into());
        names.push("sqlite_rowid".into());
        types.push(Type::INT8);
    }
    client.batch_execute(&format!(
        "CREATE TABLE {staging}.{} ({})",
        table.name,
        defs.join(", ")
    ))?;
    let writer = client.copy_in(&format!(
        "COPY {staging}.{} ({}) FROM STDIN (FORMAT binary)",
        table.name,
        names.join(", ")
    ))?;
    let mut writer = BinaryCopyInWriter::new(writer, &types);
    let selected = if rowid { format!("{}, rowid", quoted(&columns)) } else { quoted(&columns) };
    let mut stmt = conn.prepare(&format!(
        "SELECT {selected} FROM {} ORDER BY {}",
        table.name,
        if rowid { "rowid" } else { "1" }
    ))?;
    let mut rows = stmt.query([])?;
    let mut count = 0;
    while let Some(row) = rows.next()? {
        let mut cells: Vec<Cell> = Vec::with_capacity(names.len());
        for (i, c) in columns.iter().enumerate() {
            cells.push(match cell(c.kind, row.get_ref(i)?) {
                Cell::Text(text) if json[i] => Cell::Json(text),
                other => other,
            });
        }
        if rowid {
            cells.push(Cell::Int(Some(row.get(columns.len())?)));
        }
        let refs: Vec<&(dyn ToSql + Sync)> =
            cells.iter().map(|c| c as &(dyn ToSql + Sync)).collect();
        writer.write(&refs)?;
        count += 1;
        // Counted every 4,096 rows: each update of the bar takes the progress lock.
        if count % 4096 == 0 {
            bar.inc(4096);
        }
    }
    bar.inc(count % 4096);
    writer.finish()?;
    Ok(count)
}

fn quoted(columns: &[Column]) -> String {
    columns.iter().map(|c| format!("\"{}\"", c.name)).collect::<Vec<_>>().join(", ")
}

/// Records the SQLite DDL in `okb_sqlite_schema`, for the copy back.
fn save_schema(
    client: &mut postgres::Transaction<'_>,
    target: &PgTarget,
    staging: &str,
    objects: &[SqliteObject],
) -> Result<(), PgError> {
    let what = "recording the SQLite schema";
    client
        .batch_execute(&format!("CREATE TABLE {staging}.okb_sqlite_schema (position integer PRIMARY KEY, type text NOT NULL, name text NOT NULL, tbl_name text NOT NULL, sql text NOT NULL)"))
        .map_err(|e| target.error(what, e))?;
    let insert = format!("INSERT INTO {staging}.okb_sqlite_schema VALUES ($1, $2, $3, $4, $5)");
    for (i, o) in objects.iter().enumerate() {
        client
            .execute(&insert, &[&(i as i32), &o.kind, &o.name, &o.table, &o.sql])
            .map_err(|e| target.error(what, e))?;
    }
    Ok(())
}

/// The DDL that follows the load: primary keys, the SQLite store's indexes and okb's
/// extra ones.
fn finishing_ddl(
    conn: &rusqlite::Connection,
    staging: &str,
    objects: &[SqliteObject],
) -> rusqlite::Result<Vec<String>> {
    let mut ddl = Vec::new();
    for table in objects.iter().filter(|o| o.kind == "table") {
        let mut key: Vec<Column> =
            columns(conn, &table.name)?.into_iter().filter(|c| c.pk > 0).collect();
        key.sort_by_key(|c| c.pk);
        if !key.is_empty() {
            let names: Vec<&str> = key.iter().map(|c| c.name.as_str()).collect();
            ddl.push(format!(
                "ALTER TABLE {staging}.{} ADD PRIMARY KEY ({})",
                table.name,
                names.join(", ")
            ));
        }
    }
    for index in objects.iter().filter(|o| o.kind == "index") {
        ddl.push(index.sql.replacen(
            &format!(" ON {} ", index.table),
            &format!(" ON {staging}.{} ", index.table),
            1,
        ));
    }
    // No ANALYZE: it took as long as the rest of the load; autovacuum gathers the
    // statistics soon after, and the lookups are by key.
    ddl.extend(EXTRA_INDEXES.iter().map(|sql| sql.replace("{s}", staging)));
    Ok(ddl)
}

/// Puts `staging` in place of the target schema (inside the load's transaction).
fn swap(
    tx: &mut postgres::Transaction<'_>,
    target: &PgTarget,
    staging: &str,
) -> Result<(), PgError> {
    let (schema, old) = (&target.schema, format!("{}__okb_old", target.schema));
    let what = format!("replacing schema {schema}");
    let exists = tx
        .query_opt("SELECT 1 FROM pg_namespace WHERE nspname = $1", &[schema])
        .map_err(|e| target.error(&what, e))?
        .is_some();
    let mut sql = format!("DROP SCHEMA IF EXISTS {old} CASCADE;");
    if exists {
        sql.push_str(&format!("ALTER SCHEMA {schema} RENAME TO {old};"));
    }
    sql.push_str(&format!(
        "ALTER SCHEMA {staging} RENAME TO {schema}; DROP SCHEMA IF EXISTS {old} CASCADE;"
    ));
    tx.batch_execute(&sql).map_err(|e| target.error(&what, e))
}
