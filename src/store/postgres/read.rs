//! Bringing a knowledge base back from PostgreSQL as an SQLite file: the DDL recorded by
//! [`super::load`], then every table with binary `COPY … TO STDOUT`, rowid tables in
//! their original row order. Readers (`okb serve`, `okb query`) then answer from the
//! file with the code they use for a local store, so both stores give the same bytes.

use std::path::Path;

use postgres::binary_copy::BinaryCopyOutIter;
use postgres::fallible_iterator::FallibleIterator;
use rusqlite::types::Value;

use super::load::{Kind, SqliteObject, columns};
use super::{PgError, PgTarget};

/// Writes the knowledge base in `target`'s schema to a new SQLite file at `file`.
pub fn materialize(target: &PgTarget, file: &Path) -> Result<u64, PgError> {
    let local = |what: &str, e: &dyn std::fmt::Display| PgError::Local {
        target: target.shown(),
        what: what.into(),
        message: e.to_string(),
    };
    let mut client = target.connect()?;
    let schema = &target.schema;
    let objects = recorded_objects(&mut client, target)?;
    let mut conn = rusqlite::Connection::open(file)
        .map_err(|e| local(&format!("creating {}", file.display()), &e))?;
    conn.execute_batch(crate::store::schema::WRITER_PRAGMAS)
        .map_err(|e| local("setting up the local copy", &e))?;
    let mut rows = 0;
    for table in objects.iter().filter(|o| o.kind == "table") {
        conn.execute_batch(&table.sql)
            .map_err(|e| local(&format!("creating table {}", table.name), &e))?;
        rows += copy_back(&mut client, &mut conn, target, table).map_err(|e| match e {
            Fault::Pg(e) => target.error(&format!("reading table {schema}.{}", table.name), e),
            Fault::Sqlite(e) => {
                local(&format!("writing table {} to {}", table.name, file.display()), &e)
            }
        })?;
    }
    for index in objects.iter().filter(|o| o.kind == "index") {
        conn.execute_batch(&index.sql)
            .map_err(|e| local(&format!("creating index {}", index.name), &e))?;
    }
    Ok(rows)
}

/// The SQLite DDL the load recorded, in its original order.
fn recorded_objects(
    client: &mut postgres::Client,
    target: &PgTarget,
) -> Result<Vec<SqliteObject>, PgError> {
    let schema = &target.schema;
    let exists = client
        .query_opt(
            "SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = 'okb_sqlite_schema'",
            &[schema],
        )
        .map_err(|e| target.error("looking for the knowledge base", e))?
        .is_some();
    if !exists {
        return Err(PgError::Local {
            target: target.shown(),
            what: format!("reading schema {schema}"),
            message: "no okb knowledge base there: build one with `okb make` and `[store] url` in pipeline.toml".into(),
        });
    }
    let rows = client
        .query(
            &format!(
                "SELECT type, name, tbl_name, sql FROM {schema}.okb_sqlite_schema ORDER BY position"
            ),
            &[],
        )
        .map_err(|e| target.error("reading the recorded schema", e))?;
    Ok(rows
        .iter()
        .map(|r| SqliteObject { kind: r.get(0), name: r.get(1), table: r.get(2), sql: r.get(3) })
        .collect())
}

enum Fault {
    Pg(postgres::Error),
    Sqlite(rusqlite::Error),
}

/// Copies one table's rows from PostgreSQL into the SQLite table of the same name.
fn copy_back(
    client: &mut postgres::Client,
    conn: &mut rusqlite::Connection,
    target: &PgTarget,
    table: &SqliteObject,
) -> Result<u64, Fault> {
    let cols = columns(conn, &table.name).map_err(Fault::Sqlite)?;
    let rowid = table.has_rowid();
    // json comes back as its text; everything else in its own binary type.
    let mut selected: Vec<String> =
        cols.iter().map(|c| format!("{}::{}", c.name, pg_cast(c.kind))).collect();
    let mut types: Vec<postgres::types::Type> = cols.iter().map(|c| c.kind.pg_type()).collect();
    if rowid {
        selected.push("sqlite_rowid".into());
        types.push(postgres::types::Type::INT8);
    }
    let order = if rowid { "ORDER BY sqlite_rowid" } else { "" };
    let query = format!(
        "COPY (SELECT {} FROM {}.{} {order}) TO STDOUT (FORMAT binary)",
        selected.join(", "),
        target.schema,
        table.name
    );
    let reader = client.copy_out(&query).map_err(Fault::Pg)?;
    let mut rows = BinaryCopyOutIter::new(reader, &types);
    let mut names: Vec<String> = cols.iter().map(|c| format!("\"{}\"", c.name)).collect();
    if rowid {
        names.push("rowid".into());
    }
    let marks: Vec<String> = (1..=names.len()).map(|i| format!("?{i}")).collect();
    let tx = conn.transaction().map_err(Fault::Sqlite)?;
    let mut count = 0;
    {
        let mut insert = tx
            .prepare(&format!(
                "INSERT INTO {} ({}) VALUES ({})",
                table.name,
                names.join(", "),
                marks.join(", ")
            ))
            .map_err(Fault::Sqlite)?;
        while let Some(row) = rows.next().map_err(Fault::Pg)? {
            let mut values: Vec<Value> = Vec::with_capacity(types.len());
            for (i, c) in cols.iter().enumerate() {
                values.push(value(c.kind, &row, i).map_err(Fault::Pg)?);
            }
            if rowid {
                values.push(Value::Integer(row.try_get::<i64>(cols.len()).map_err(Fault::Pg)?));
            }
            insert.execute(rusqlite::params_from_iter(values)).map_err(Fault::Sqlite)?;
            count += 1;
        }
    }
    tx.commit().map_err(Fault::Sqlite)?;
    Ok(count)
}

fn pg_cast(kind: Kind) -> &'static str {
    match kind {
        Kind::Text => "text",
        Kind::Int => "bigint",
        Kind::Real => "double precision",
        Kind::Blob => "bytea",
    }
}

fn value(
    kind: Kind,
    row: &postgres::binary_copy::BinaryCopyOutRow,
    i: usize,
) -> Result<Value, postgres::Error> {
    Ok(match kind {
        Kind::Text => row.try_get::<Option<String>>(i)?.map_or(Value::Null, Value::Text),
        Kind::Int => row.try_get::<Option<i64>>(i)?.map_or(Value::Null, Value::Integer),
        Kind::Real => row.try_get::<Option<f64>>(i)?.map_or(Value::Null, Value::Real),
        Kind::Blob => row.try_get::<Option<Vec<u8>>>(i)?.map_or(Value::Null, Value::Blob),
    })
}

/// A knowledge base read from PostgreSQL into a temporary SQLite file, removed on drop.
pub struct LocalCopy {
    dir: std::path::PathBuf,
}

impl LocalCopy {
    /// Copies `target`'s knowledge base into a new temporary folder.
    pub fn new(target: &PgTarget) -> Result<LocalCopy, PgError> {
        // Named so that a later okb sweeps it when this one is killed before its drop.
        let dir = crate::files::temp::scratch_dir("okb-pg").map_err(|e| PgError::Local {
            target: target.shown(),
            what: format!("creating a scratch folder in {}", std::env::temp_dir().display()),
            message: e.to_string(),
        })?;
        let copy = LocalCopy { dir };
        materialize(target, &copy.path())?;
        Ok(copy)
    }

    /// The SQLite file.
    pub fn path(&self) -> std::path::PathBuf {
        self.dir.join("okb.sqlite")
    }
}

impl Drop for LocalCopy {
    fn drop(&mut self) {
        // A temporary folder: nothing to report if it is already gone.
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
