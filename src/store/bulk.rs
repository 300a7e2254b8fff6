//! Bulk inserts that bind borrowed values without copying them.
//!
//! rusqlite binds every string with `SQLITE_TRANSIENT`, so SQLite allocates and copies
//! each one before it copies it again into the row; a store write binds about half a
//! million strings. [`BulkInsert`] binds them with `SQLITE_STATIC` instead: the row's
//! values are only borrowed for the duration of [`BulkInsert::row`], which steps the
//! statement and clears every binding before it returns, so SQLite never holds a
//! pointer past the borrow.

use std::ffi::{CString, c_int};
use std::marker::PhantomData;

use rusqlite::{Connection, ffi};

pub use crate::record::column::Cell;

/// A prepared `INSERT` of a connection, run once per [`BulkInsert::row`].
pub struct BulkInsert<'conn> {
    db: *mut ffi::sqlite3,
    stmt: *mut ffi::sqlite3_stmt,
    columns: usize,
    _conn: PhantomData<&'conn Connection>,
}

impl<'conn> BulkInsert<'conn> {
    /// Prepares `sql` (one statement with `columns` parameters) on `conn`.
    pub fn new(
        conn: &'conn Connection,
        sql: &str,
        columns: usize,
    ) -> rusqlite::Result<BulkInsert<'conn>> {
        let text = CString::new(sql).map_err(|_| rusqlite::Error::InvalidQuery)?;
        // SAFETY: the handle is valid while `conn` is borrowed, which `'conn` ensures.
        let db = unsafe { conn.handle() };
        let mut stmt = std::ptr::null_mut();
        // SAFETY: `db` is a valid connection and `text` a NUL-terminated string.
        let rc = unsafe {
            ffi::sqlite3_prepare_v2(db, text.as_ptr(), -1, &mut stmt, std::ptr::null_mut())
        };
        if rc != ffi::SQLITE_OK {
            return Err(error(db, rc));
        }
        // SAFETY: `stmt` was just prepared.
        let parameters = unsafe { ffi::sqlite3_bind_parameter_count(stmt) } as usize;
        let insert = BulkInsert { db, stmt, columns, _conn: PhantomData };
        if parameters != columns {
            return Err(rusqlite::Error::InvalidParameterCount(columns, parameters));
        }
        Ok(insert)
    }

    /// Inserts one row; `cells` holds exactly one value per parameter, in order.
    pub fn row(&mut self, cells: &[Cell<'_>]) -> rusqlite::Result<()> {
        if cells.len() != self.columns {
            return Err(rusqlite::Error::InvalidParameterCount(cells.len(), self.columns));
        }
        let result = self.bind_and_step(cells);
        // SAFETY: `stmt` is valid. Resetting and clearing drop every pointer into `cells`
        // before the borrow ends, whatever the outcome of the step.
        unsafe {
            ffi::sqlite3_reset(self.stmt);
            ffi::sqlite3_clear_bindings(self.stmt);
        }
        result
    }

    fn bind_and_step(&mut self, cells: &[Cell<'_>]) -> rusqlite::Result<()> {
        for (i, cell) in cells.iter().enumerate() {
            let index = i as c_int + 1;
            // SAFETY: `stmt` is valid, `index` within its parameters (checked in `new`),
            // and text outlives its binding (cleared in `row` before returning).
            let rc = unsafe {
                match *cell {
                    Cell::Null => ffi::sqlite3_bind_null(self.stmt, index),
                    Cell::Int(n) => ffi::sqlite3_bind_int64(self.stmt, index, n),
                    Cell::Real(x) => ffi::sqlite3_bind_double(self.stmt, index, x),
                    Cell::Text(s) => ffi::sqlite3_bind_text64(
                        self.stmt,
                        index,
                        s.as_ptr().cast(),
                        s.len() as ffi::sqlite3_uint64,
                        ffi::SQLITE_STATIC(),
                        ffi::SQLITE_UTF8 as u8,
                    ),
                }
            };
            if rc != ffi::SQLITE_OK {
                return Err(error(self.db, rc));
            }
        }
        // SAFETY: `stmt` is valid and fully bound.
        match unsafe { ffi::sqlite3_step(self.stmt) } {
            ffi::SQLITE_DONE => Ok(()),
            ffi::SQLITE_ROW => Err(rusqlite::Error::ExecuteReturnedResults),
            rc => Err(error(self.db, rc)),
        }
    }
}

impl Drop for BulkInsert<'_> {
    fn drop(&mut self) {
        // SAFETY: `stmt` was prepared by `new` and is finalized once.
        unsafe { ffi::sqlite3_finalize(self.stmt) };
    }
}

/// The error `rc` of `db`, with SQLite's message.
fn error(db: *mut ffi::sqlite3, rc: c_int) -> rusqlite::Error {
    // SAFETY: `db` is a valid connection; the message is copied out at once.
    let message = unsafe {
        let text = ffi::sqlite3_errmsg(db);
        (!text.is_null()).then(|| std::ffi::CStr::from_ptr(text).to_string_lossy().into_owned())
    };
    rusqlite::Error::SqliteFailure(ffi::Error::new(rc), message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_written_with_their_values_and_errors_name_the_constraint() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (a TEXT PRIMARY KEY, b INTEGER, c REAL, d TEXT)")
            .unwrap();
        let mut insert =
            BulkInsert::new(&conn, "INSERT INTO t VALUES (?1, ?2, ?3, ?4)", 4).unwrap();
        for i in 0..100 {
            // Each row's text is freed right after its insert: SQLite must not keep it.
            let key = format!("key {i}");
            let note = (i % 2 == 0).then(|| "é".repeat(i));
            insert
                .row(&[
                    Cell::from(&key),
                    Cell::Int(i as i64),
                    Cell::Real(i as f64 / 4.0),
                    note.as_ref().into(),
                ])
                .unwrap();
        }
        let duplicate =
            insert.row(&[Cell::Text("key 7"), Cell::Null, Cell::Null, Cell::Null]).unwrap_err();
        assert!(duplicate.to_string().contains("UNIQUE constraint failed: t.a"), "{duplicate}");
        assert!(matches!(
            insert.row(&[Cell::Null]),
            Err(rusqlite::Error::InvalidParameterCount(1, 4))
        ));
        // The statement is usable after an error.
        insert.row(&[Cell::Text("last"), true.into(), Cell::Null, Cell::Null]).unwrap();
        drop(insert);
        let (count, sum): (i64, i64) = conn
            .query_row("SELECT count(*), sum(b) FROM t", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        assert_eq!((count, sum), (101, (0..100).sum::<i64>() + 1));
        let note: String =
            conn.query_row("SELECT d FROM t WHERE a = 'key 4'", [], |r| r.get(0)).unwrap();
        assert_eq!(note, "éééé");
        let quarter: f64 =
            conn.query_row("SELECT c FROM t WHERE a = 'key 3'", [], |r| r.get(0)).unwrap();
        assert_eq!(quarter, 0.75);
        assert!(BulkInsert::new(&conn, "INSERT INTO t VALUES (?1)", 1).is_err());
        assert!(matches!(
            BulkInsert::new(&conn, "INSERT INTO t VALUES (?1, ?2, ?3, ?4)", 3),
            Err(rusqlite::Error::InvalidParameterCount(3, 4))
        ));
    }
}
