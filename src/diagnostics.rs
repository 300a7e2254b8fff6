//! Warnings about bad input that okb skipped, and how they are shown.
//!
//! Fatal problems are `miette` errors; problems that let the build go on (a broken TSV
//! row, an orphan line) become [`Warning`]s carried inside the step output that found
//! them, so a step served from the cache reports the same warnings as when it ran.

use serde::{Deserialize, Serialize};
use std::fmt;

/// One problem in an input that okb skipped or worked around.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// What kind of problem, a short stable word used for counting (e.g. `illegal-move`).
    pub kind: String,
    /// The file (source name or path) the problem is in.
    pub file: String,
    /// 1-based line number, when the problem has one.
    pub line: Option<u32>,
    /// What is wrong.
    pub message: String,
    /// The offending text, shortened.
    pub text: Option<String>,
}

impl Warning {
    /// A warning at `file:line`.
    pub fn at(
        kind: &str,
        file: &str,
        line: u32,
        message: impl Into<String>,
        text: &str,
    ) -> Warning {
        Warning {
            kind: kind.to_string(),
            file: file.to_string(),
            line: Some(line),
            message: message.into(),
            text: Some(shorten(text, 120)),
        }
    }
}

impl Warning {
    /// Notes describe the data rather than a defect in it (an orphan line: its previous
    /// position has no name in any source). They are counted and shown, but `--strict`
    /// does not fail on them.
    pub fn is_note(&self) -> bool {
        self.kind == "orphan"
    }

    /// Its name for `[strict] allow`: `kind:file:line` (or `kind:file` without a line).
    pub fn name(&self) -> String {
        match self.line {
            Some(line) => format!("{}:{}:{line}", self.kind, self.file),
            None => format!("{}:{}", self.kind, self.file),
        }
    }

    /// Whether an `allow` entry names it: its kind, `kind:file`, or `kind:file:line`.
    pub fn is_allowed_by(&self, pattern: &str) -> bool {
        pattern == self.kind
            || pattern == format!("{}:{}", self.kind, self.file)
            || pattern == self.name()
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        write!(f, ": {}", self.message)?;
        if let Some(text) = &self.text {
            write!(f, ": {text:?}")?;
        }
        Ok(())
    }
}

/// `text` cut to at most `max` characters, with an ellipsis when cut.
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(max).collect();
        s.push('…');
        s
    }
}

/// Decodes a line that should be UTF-8; falls back to Latin-1 (every byte is a char),
/// which is what the older ECO files (SCID) use.
pub fn decode_text(bytes: &[u8]) -> (String, bool) {
    match std::str::from_utf8(bytes) {
        Ok(s) => (s.to_string(), true),
        Err(_) => (bytes.iter().map(|&b| b as char).collect(), false),
    }
}

/// An error and its sources on one line (`error sending request: connection refused`).
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
