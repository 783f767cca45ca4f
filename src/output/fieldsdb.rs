//! `--extract-db FILE`: `--extract`'s fields as rows of an SQLite database, one table per rule
//! set (`content::fields`).
//!
//! A rule set `NAME` is the table `NAME (url TEXT PRIMARY KEY, fetched TEXT, FIELD…)`: a page's
//! latest values, a list field as a JSON array's text; and `NAME_history`, the same columns
//! and `replaced` (when the row was replaced), the rows a later fetch of the page replaced
//! with different values. The same database across runs (a recrawl on the same --out, or
//! another --out) updates its rows; a field added to the rules since adds its column.
//!
//! Invariants and crash safety:
//! - A page's row and the history row it replaces are one transaction: a kill leaves the old
//!   row or both new ones, never a page without its row.
//! - Journal in WAL mode with `synchronous = NORMAL`: a commit is in the file once `put`
//!   returns, so a killed crawl loses no row of a page it counted done; a power cut may lose
//!   the last commits (SQLite syncs at its checkpoints), as it may the last URL-log lines.
//! - Writing the same values again (a page fetched again after a kill, an unchanged page in a
//!   recrawl) only updates `fetched`: no history row.

use crate::content::fields::{Extracted, Rules, Value};
use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension, params_from_iter};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The database and each rule set's statements.
pub struct FieldsDb {
    path: PathBuf,
    conn: Mutex<Connection>,
    tables: HashMap<String, Statements>,
}

/// A rule set's SQL, kept prepared in the connection's cache.
struct Statements {
    select: String,
    keep: String,
    upsert: String,
}

impl FieldsDb {
    /// Opens (or creates) the database at `path` with a table and a history table for each
    /// rule set of `rules`, adding the columns of fields new since the tables were made.
    pub fn open(path: &Path, rules: &Rules) -> Result<FieldsDb> {
        let what = || format!("opening the SQLite database {}", path.display());
        let conn = Connection::open(path).with_context(what)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .with_context(what)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .with_context(what)?;
        let mut tables = HashMap::new();
        for set in &rules.sets {
            let name = &set.name;
            let columns: Vec<String> = set
                .fields
                .iter()
                .map(|f| format!("\"{}\"", f.name))
                .collect();
            conn.execute_batch(&format!(
                "CREATE TABLE IF NOT EXISTS \"{name}\" (url TEXT PRIMARY KEY, fetched TEXT NOT NULL);
                 CREATE TABLE IF NOT EXISTS \"{name}_history\" (url TEXT NOT NULL, fetched TEXT NOT NULL, replaced TEXT NOT NULL);
                 CREATE INDEX IF NOT EXISTS \"{name}_history_url\" ON \"{name}_history\" (url);"
            ))
            .with_context(|| format!("creating the tables of [{name}] in {}", path.display()))?;
            for table in [name.clone(), format!("{name}_history")] {
                add_missing_columns(&conn, &table, &columns)
                    .with_context(|| format!("adding columns to {table} in {}", path.display()))?;
            }
            let list = columns.join(", ");
            let marks = vec!["?"; columns.len()].join(", ");
            let updates: Vec<String> = (columns.iter())
                .map(|c| format!("{c} = excluded.{c}"))
                .collect();
            tables.insert(
                name.clone(),
                Statements {
                    select: format!("SELECT {list} FROM \"{name}\" WHERE url = ?"),
                    keep: format!(
                        "INSERT INTO \"{name}_history\" (url, fetched, replaced, {list})
                         SELECT url, fetched, ?, {list} FROM \"{name}\" WHERE url = ?"
                    ),
                    upsert: format!(
                        "INSERT INTO \"{name}\" (url, fetched, {list}) VALUES (?, ?, {marks})
                         ON CONFLICT(url) DO UPDATE SET fetched = excluded.fetched, {}",
                        updates.join(", ")
                    ),
                },
            );
        }
        Ok(FieldsDb {
            path: path.to_owned(),
            conn: Mutex::new(conn),
            tables,
        })
    }

    /// Writes `fields` of the page `url` fetched at `fetched` as its rule set's row; a row of
    /// the page with other values moves to the history table first. True when one did.
    pub fn put(&self, url: &str, fetched: &str, fields: &Extracted) -> Result<bool> {
        let sql = &self.tables[&fields.set.name];
        let values: Vec<Option<String>> = fields.values.iter().map(column).collect();
        let mut conn = self.conn.lock().expect("a writer panicked");
        let context = || format!("writing {url} into {}", self.path.display());
        let tx = conn.transaction().with_context(context)?;
        let old: Option<Vec<Option<String>>> = {
            let mut select = tx.prepare_cached(&sql.select).with_context(context)?;
            select
                .query_row([url], |row| (0..values.len()).map(|i| row.get(i)).collect())
                .optional()
                .with_context(context)?
        };
        let replaced = old.is_some_and(|old| old != values);
        if replaced {
            tx.prepare_cached(&sql.keep)
                .and_then(|mut keep| keep.execute([fetched, url]))
                .with_context(context)?;
        }
        let row = [Some(url.to_owned()), Some(fetched.to_owned())];
        tx.prepare_cached(&sql.upsert)
            .and_then(|mut upsert| upsert.execute(params_from_iter(row.iter().chain(&values))))
            .with_context(context)?;
        tx.commit().with_context(context)?;
        Ok(replaced)
    }

    /// Checkpoints the write-ahead log into the database file (which is then whole by itself,
    /// for readers that copy the file alone); the connection closes when dropped.
    pub fn checkpoint(&self) -> Result<()> {
        let conn = self.conn.lock().expect("a writer panicked");
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .with_context(|| format!("checkpointing the SQLite database {}", self.path.display()))
    }
}

/// A value as its column holds it: the text, `NULL`, or a list as a JSON array.
fn column(value: &Value) -> Option<String> {
    match value {
        Value::One(one) => one.clone(),
        many => Some(many.to_json().to_string()),
    }
}

/// Adds to `table` the `columns` (quoted names) it does not have yet.
fn add_missing_columns(conn: &Connection, table: &str, columns: &[String]) -> Result<()> {
    let mut info = conn.prepare(&format!("PRAGMA table_info(\"{table}\")"))?;
    let have: Vec<String> = info
        .query_map([], |row| row.get::<_, String>(1))?
        .collect::<rusqlite::Result<_>>()?;
    for column in columns {
        if !have.iter().any(|h| format!("\"{h}\"") == *column) {
            conn.execute_batch(&format!("ALTER TABLE \"{table}\" ADD COLUMN {column} TEXT"))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_page_keeps_its_old_row_in_history() {
        let dir = tempfile::tempdir().unwrap();
        let rules = Rules::parse("[p]\nurl = .\nt = h1::text\nl[] = li::text\n", "r").unwrap();
        let db = FieldsDb::open(&dir.path().join("f.db"), &rules).unwrap();
        let put = |html: &str, at: &str| {
            let page = rules.extract("http://h/", html, true);
            db.put("http://h/", at, &page.sets[0]).unwrap()
        };
        assert!(!put("<h1>A</h1><li>1<li>2", "t1"));
        assert!(!put("<h1>A</h1><li>1<li>2", "t2"));
        assert!(put("<h1>B</h1>", "t3"));
        db.checkpoint().unwrap();
        drop(db);
        let conn = Connection::open(dir.path().join("f.db")).unwrap();
        let row: (String, String, Option<String>, String) = conn
            .query_row("SELECT url, fetched, t, l FROM p", [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })
            .unwrap();
        assert_eq!(
            row,
            (
                "http://h/".into(),
                "t3".into(),
                Some("B".into()),
                "[]".into()
            )
        );
        let old: (String, String, String, String) = conn
            .query_row("SELECT fetched, replaced, t, l FROM p_history", [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })
            .unwrap();
        assert_eq!(
            old,
            ("t2".into(), "t3".into(), "A".into(), r#"["1","2"]"#.into())
        );
    }
}
