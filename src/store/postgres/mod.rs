//! The knowledge base in PostgreSQL: the same tables as the SQLite store, for teams that
//! serve openings from a shared database server.
//!
//! The SQLite store stays the build's artifact (memoized, diffed, hashed into the
//! manifest); [`load`] copies it table by table into a PostgreSQL schema with binary
//! `COPY`, builds the keys and indexes after the load, and swaps the new schema in under
//! the configured name in one transaction, so readers never see a half-written knowledge
//! base and an interrupted load leaves the previous one in place. [`read`] brings a
//! schema back as an SQLite file, so `okb serve` and `okb query` answer from PostgreSQL
//! with exactly the code (and the bytes) they use for SQLite.
//!
//! Passwords never live in `pipeline.toml` or in messages: a URL with one is refused;
//! the password comes from the environment (`PGPASSWORD` or the variable `[store]
//! password_env` names) or from `~/.pgpass` (`PGPASSFILE`), as libpq does.

pub mod load;
pub mod read;

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

/// Errors from PostgreSQL, each naming the server and database (never the password).
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    /// The URL does not parse, or carries a password.
    #[error("store URL {url}: {message}")]
    Url {
        /// The URL with any password removed.
        url: String,
        /// What is wrong.
        message: String,
    },
    /// The server refused, failed or went away.
    #[error("PostgreSQL {target}: {what}: {detail}")]
    Server {
        /// `user@host:port/database`.
        target: String,
        /// What okb was doing.
        what: String,
        /// The driver's error with its causes (it never contains the password).
        detail: String,
    },
    /// Reading the SQLite side failed.
    #[error("PostgreSQL {target}: {what}: {message}")]
    Local {
        /// `user@host:port/database`.
        target: String,
        /// What okb was doing.
        what: String,
        /// The error.
        message: String,
    },
}

/// Where a knowledge base lives in PostgreSQL.
#[derive(Clone)]
pub struct PgTarget {
    config: postgres::Config,
    /// The schema holding the tables.
    pub schema: String,
}

/// Whether `text` is a PostgreSQL URL rather than a file path.
pub fn is_url(text: &str) -> bool {
    text.starts_with("postgres://") || text.starts_with("postgresql://")
}

/// `url` with the password part (if any) removed, for messages.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    match rest.split_once('@') {
        Some((user, host)) => format!("{scheme}://{}@{host}", user.split(':').next().unwrap_or("")),
        None => url.to_string(),
    }
}

impl PgTarget {
    /// A reader's target from `--store URL`: the schema is the URL's `schema=` parameter
    /// (`postgres://okb@host/kb?schema=kb2`), `okb` by default; the password comes from
    /// `PGPASSWORD` or `~/.pgpass`.
    pub fn from_reader_url(url: &str) -> Result<PgTarget, PgError> {
        let (base, query) = url.split_once('?').unwrap_or((url, ""));
        let mut schema = "okb".to_string();
        let mut rest = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            match pair.strip_prefix("schema=") {
                Some(name) => schema = name.to_string(),
                None => rest.push(pair),
            }
        }
        let url =
            if rest.is_empty() { base.to_string() } else { format!("{base}?{}", rest.join("&")) };
        PgTarget::new(&url, &schema, None)
    }

    /// Parses `url` (`postgres://user@host:port/database`); `schema` names the schema
    /// (a plain identifier) and `password_env` the variable holding the password.
    pub fn new(url: &str, schema: &str, password_env: Option<&str>) -> Result<PgTarget, PgError> {
        let bad = |message: String| PgError::Url { url: redact(url), message };
        let mut config = postgres::Config::from_str(url).map_err(|e| bad(e.to_string()))?;
        if config.get_password().is_some() {
            return Err(bad("a password does not belong in the URL (or pipeline.toml): set PGPASSWORD, [store] password_env, or ~/.pgpass".into()));
        }
        if !is_identifier(schema) {
            return Err(bad(format!(
                "schema {schema:?} must be a lowercase identifier (letters, digits, _)"
            )));
        }
        if config.get_dbname().is_none() {
            return Err(bad("no database name (postgres://user@host:port/DATABASE)".into()));
        }
        config.connect_timeout(Duration::from_secs(10));
        let mut target = PgTarget { config, schema: schema.to_string() };
        if let Some(password) = target.password(password_env) {
            target.config.password(password);
        }
        Ok(target)
    }

    /// `user@host:port/database`, for messages.
    pub fn shown(&self) -> String {
        let [host, port, db, user] = self.parts();
        format!("{user}@{host}:{port}/{db}")
    }

    /// Host, port, database and user, as `.pgpass` lines match them.
    fn parts(&self) -> [String; 4] {
        let host = match self.config.get_hosts().first() {
            Some(postgres::config::Host::Tcp(h)) => h.clone(),
            #[cfg(unix)]
            Some(postgres::config::Host::Unix(p)) => p.display().to_string(),
            None => "localhost".into(),
        };
        let port = self.config.get_ports().first().copied().unwrap_or(5432).to_string();
        let db = self.config.get_dbname().unwrap_or("").to_string();
        let user = self
            .config
            .get_user()
            .map(str::to_string)
            .unwrap_or_else(|| std::env::var("USER").unwrap_or_default());
        [host, port, db, user]
    }

    /// Connects.
    pub fn connect(&self) -> Result<postgres::Client, PgError> {
        self.config.connect(postgres::NoTls).map_err(|source| self.error("connecting", source))
    }

    /// A server error while doing `what`.
    pub fn error(&self, what: &str, source: postgres::Error) -> PgError {
        PgError::Server { target: self.shown(), what: what.to_string(), detail: describe(&source) }
    }

    /// The password: `$password_env`, else `$PGPASSWORD`, else the first matching line
    /// of the password file (`$PGPASSFILE` or `~/.pgpass`).
    fn password(&self, password_env: Option<&str>) -> Option<Vec<u8>> {
        let from_env = |name: &str| {
            std::env::var_os(name).filter(|v| !v.is_empty()).map(|v| v.into_encoded_bytes())
        };
        if let Some(found) = password_env.and_then(from_env).or_else(|| from_env("PGPASSWORD")) {
            return Some(found);
        }
        let file = std::env::var_os("PGPASSFILE")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pgpass")))?;
        let text = std::fs::read_to_string(file).ok()?;
        let [host, port, db, user] = self.parts();
        pgpass_lookup(&text, [&host, &port, &db, &user])
    }
}

/// The server's own message (with its SQLSTATE) or the driver's error and its causes,
/// with a hint where the fix is okb's business.
fn describe(error: &postgres::Error) -> String {
    if let Some(db) = error.as_db_error() {
        return format!("{} (SQLSTATE {})", db.message(), db.code().code());
    }
    let mut text = error.to_string();
    let mut cause = std::error::Error::source(error);
    while let Some(c) = cause {
        text.push_str(&format!(": {c}"));
        cause = c.source();
    }
    if text.contains("password missing") {
        text.push_str(" (set PGPASSWORD, [store] password_env, or a ~/.pgpass line)");
    }
    text
}

/// The password of the first `host:port:database:user:password` line matching `wanted`
/// (`*` matches anything; `\:` and `\\` are escapes), as libpq reads `.pgpass`.
fn pgpass_lookup(text: &str, wanted: [&str; 4]) -> Option<Vec<u8>> {
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let mut fields = Vec::new();
        let mut field = String::new();
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => field.extend(chars.next()),
                ':' if fields.len() < 4 => fields.push(std::mem::take(&mut field)),
                _ => field.push(c),
            }
        }
        fields.push(field);
        if fields.len() == 5 && fields.iter().zip(wanted).all(|(f, w)| f == "*" || f == w) {
            return Some(fields[4].clone().into_bytes());
        }
    }
    None
}

/// A plain lowercase SQL identifier (no quoting needed).
fn is_identifier(text: &str) -> bool {
    text.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && text.len() <= 40
        && text.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_with_passwords_are_refused_and_never_shown() {
        let err = PgTarget::new("postgres://okb:s3cret@db.example:5433/kb", "okb", None)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("postgres://okb@db.example:5433/kb") && !err.contains("s3cret"),
            "{err}"
        );
        assert!(PgTarget::new("postgres://okb@h/kb", "Bad-Name", None).is_err());
        assert!(PgTarget::new("postgres://okb@h", "okb", None).is_err());
        let target = PgTarget::new("postgres://okb@db.example:5433/kb", "okb", None).unwrap();
        assert_eq!(target.shown(), "okb@db.example:5433/kb");
    }

    #[test]
    fn pgpass_lines_match_with_wildcards_and_escapes() {
        let file =
            "# comment\nother:5432:kb:okb:no\ndb.example:*:kb:okb:pa\\:ss\n*:*:*:*:fallback\n";
        assert_eq!(
            pgpass_lookup(file, ["db.example", "5433", "kb", "okb"]),
            Some(b"pa:ss".to_vec())
        );
        assert_eq!(pgpass_lookup(file, ["else", "1", "x", "y"]), Some(b"fallback".to_vec()));
        assert_eq!(pgpass_lookup("a:b:c:d:e\n", ["x", "b", "c", "d"]), None);
    }
}
