//! One column of the node row: its name, where it shows, its SQL declaration, and how to
//! read and write its value, so that the table, its insert and selects, the CSV export
//! and the API's node JSON all follow [`super::COLUMNS`] instead of listing columns by
//! hand.

use serde::ser::{Serialize, Serializer};

/// One value of a row as SQL sees it, borrowed from the record that holds it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cell<'a> {
    /// SQL NULL.
    Null,
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Real(f64),
    /// Text, borrowed.
    Text(&'a str),
}

impl Cell<'_> {
    /// The value as text, as the store's changelog records it (`None` for NULL).
    pub fn as_text(self) -> Option<String> {
        match self {
            Cell::Null => None,
            Cell::Int(n) => Some(n.to_string()),
            Cell::Real(x) => Some(format!("{x}")),
            Cell::Text(s) => Some(s.to_string()),
        }
    }
}

impl<'a> From<&'a str> for Cell<'a> {
    fn from(text: &'a str) -> Cell<'a> {
        Cell::Text(text)
    }
}

impl<'a> From<&'a String> for Cell<'a> {
    fn from(text: &'a String) -> Cell<'a> {
        Cell::Text(text)
    }
}

impl<'a, T: Into<Cell<'a>>> From<Option<T>> for Cell<'a> {
    fn from(value: Option<T>) -> Cell<'a> {
        value.map_or(Cell::Null, Into::into)
    }
}

impl From<i64> for Cell<'_> {
    fn from(n: i64) -> Self {
        Cell::Int(n)
    }
}

impl From<bool> for Cell<'_> {
    fn from(b: bool) -> Self {
        Cell::Int(b as i64)
    }
}

impl From<f64> for Cell<'_> {
    fn from(x: f64) -> Self {
        Cell::Real(x)
    }
}

/// What a column's value is outside SQL (in JSON and CSV), where SQL's integers are
/// also booleans and its text is also JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Text.
    Text,
    /// A signed integer.
    Int,
    /// A count.
    Count,
    /// A number with decimals.
    Real,
    /// `true` or `false`, stored as 1 or 0.
    Bool,
    /// JSON, stored as its text (`json` in PostgreSQL, a value in the API's JSON).
    Json,
}

/// A field type of the node row: how it becomes a [`Cell`] and is set from one.
pub trait Field {
    /// Its shape outside SQL.
    const SHAPE: Shape;
    /// The value as a cell.
    fn cell(&self) -> Cell<'_>;
    /// Sets the value from a cell read back from the store; says what was wrong otherwise.
    fn set(&mut self, cell: Cell<'_>) -> Result<(), String>;
}

fn mismatch(cell: Cell<'_>, wanted: &str) -> String {
    format!("{cell:?} where {wanted} was expected")
}

impl Field for String {
    const SHAPE: Shape = Shape::Text;
    fn cell(&self) -> Cell<'_> {
        Cell::Text(self)
    }
    fn set(&mut self, cell: Cell<'_>) -> Result<(), String> {
        match cell {
            Cell::Text(s) => {
                *self = s.to_string();
                Ok(())
            }
            other => Err(mismatch(other, "text")),
        }
    }
}

impl Field for bool {
    const SHAPE: Shape = Shape::Bool;
    fn cell(&self) -> Cell<'_> {
        Cell::Int(*self as i64)
    }
    fn set(&mut self, cell: Cell<'_>) -> Result<(), String> {
        match cell {
            Cell::Int(n) => {
                *self = n != 0;
                Ok(())
            }
            other => Err(mismatch(other, "0 or 1")),
        }
    }
}

/// Integer fields: signed ones as they are, counts never below zero.
macro_rules! integer_field {
    ($($ty:ty => $shape:ident),*) => {$(
        impl Field for $ty {
            const SHAPE: Shape = Shape::$shape;
            fn cell(&self) -> Cell<'_> {
                Cell::Int(*self as i64)
            }
            fn set(&mut self, cell: Cell<'_>) -> Result<(), String> {
                match cell {
                    // A count is never negative, and a wider value than the field is corrupt.
                    Cell::Int(n) => Ok(*self = <$ty>::try_from(if Shape::$shape == Shape::Count { n.max(0) } else { n }).map_err(|e| e.to_string())?),
                    other => Err(mismatch(other, "an integer")),
                }
            }
        }
    )*};
}

integer_field!(i32 => Int, u32 => Count, u64 => Count, usize => Count);

impl Field for f64 {
    const SHAPE: Shape = Shape::Real;
    fn cell(&self) -> Cell<'_> {
        Cell::Real(*self)
    }
    fn set(&mut self, cell: Cell<'_>) -> Result<(), String> {
        match cell {
            Cell::Real(x) => {
                *self = x;
                Ok(())
            }
            Cell::Int(n) => {
                *self = n as f64;
                Ok(())
            }
            other => Err(mismatch(other, "a number")),
        }
    }
}

impl<T: Field + Default> Field for Option<T> {
    const SHAPE: Shape = T::SHAPE;
    fn cell(&self) -> Cell<'_> {
        self.as_ref().map_or(Cell::Null, Field::cell)
    }
    fn set(&mut self, cell: Cell<'_>) -> Result<(), String> {
        if cell == Cell::Null {
            *self = None;
            return Ok(());
        }
        let mut value = T::default();
        value.set(cell)?;
        *self = Some(value);
        Ok(())
    }
}

/// JSON kept as its text: the engine's lines, which the API shows as JSON.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JsonText(pub String);

impl Field for JsonText {
    const SHAPE: Shape = Shape::Json;
    fn cell(&self) -> Cell<'_> {
        Cell::Text(&self.0)
    }
    fn set(&mut self, cell: Cell<'_>) -> Result<(), String> {
        self.0.set(cell)
    }
}

/// One column of a row type `R`.
pub struct Column<R: 'static> {
    /// Its name (in SQL, CSV and JSON).
    pub name: &'static str,
    /// Its declaration in the table (`TEXT NOT NULL`), or `None` for a field the store
    /// does not keep (the number of children, which its edges say).
    pub sql: Option<&'static str>,
    /// Whether the API's node JSON shows it.
    pub api: bool,
    /// Whether the CSV export writes it.
    pub csv: bool,
    /// Its place in the store's changelog (`node_changelog`) when its changes are logged:
    /// a node's changes are logged in this order, kept as the store has always written
    /// them (not the table's order).
    pub tracked: Option<u8>,
    /// Its shape outside SQL.
    pub shape: Shape,
    /// Its value in a row.
    pub cell: fn(&R) -> Cell<'_>,
    /// Sets it in a row from a value read back.
    pub set: fn(&mut R, Cell<'_>) -> Result<(), String>,
}

impl<R> Column<R> {
    /// Whether the store keeps it.
    pub fn stored(&self) -> bool {
        self.sql.is_some()
    }
}

/// The value of `column` in `row`, serialized by its shape (a JSON column as the JSON its
/// text holds, `null` if that text is not JSON).
pub struct Shown<'a, R: 'static> {
    /// The row.
    pub row: &'a R,
    /// The column.
    pub column: &'a Column<R>,
}

impl<R> Serialize for Shown<'_, R> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match ((self.column.cell)(self.row), self.column.shape) {
            (Cell::Null, _) => s.serialize_none(),
            (Cell::Int(n), Shape::Bool) => s.serialize_bool(n != 0),
            (Cell::Int(n), Shape::Count) => s.serialize_u64(n as u64),
            (Cell::Int(n), _) => s.serialize_i64(n),
            (Cell::Real(x), _) => s.serialize_f64(x),
            (Cell::Text(text), Shape::Json) => {
                serde_json::from_str::<serde_json::Value>(text).ok().serialize(s)
            }
            (Cell::Text(text), _) => s.serialize_str(text),
        }
    }
}
