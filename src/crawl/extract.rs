//! `--extract RULES`: the page sink that takes each page's fields (`content::fields`) and
//! writes them as JSON lines (`--extract-out`, default `DIR/extract.jsonl`) and, with
//! `--extract-db FILE`, as SQLite rows (`output::fieldsdb`).
//!
//! Each 2xx HTML or text/plain page is offered to the rules; each rule set whose URL pattern
//! matches it gives one object `{"url", "fetched", "rule", FIELD…}` (fields in the file's
//! order) when some field found a value, and is counted `empty` otherwise.
//!
//! Crash safety: a page's lines are one `write` to the file, opened for appending, before
//! `take` returns, and its rows are committed by then (`output::fieldsdb`); the page is done
//! only after its sinks, so a kill loses no page's fields: a page fetched but not done is
//! fetched again on resume and written again (the JSON lines file may then hold its object
//! twice; its SQLite row is the same row). The file and the database are appended to and
//! updated by every run on them.

use crate::content::fields::{Extracted, Rules};
use crate::crawl::page::Page;
use crate::output::fieldsdb::FieldsDb;
use anyhow::{Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Where the JSON lines go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinesTo {
    File(PathBuf),
    Stdout,
}

impl LinesTo {
    /// The output, a file opened to append to (`option` names it in the error), and its name.
    pub fn open(self, option: &str) -> Result<(Box<dyn Write + Send>, String)> {
        Ok(match self {
            LinesTo::Stdout => (Box::new(std::io::stdout()), "stdout".into()),
            LinesTo::File(path) => {
                let file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&path)
                    .with_context(|| format!("cannot open {option} {}", path.display()))?;
                (Box::new(file), path.display().to_string())
            }
        })
    }
}

/// The running extraction: the rules, its outputs and its counts.
pub struct Extract {
    rules: Rules,
    lines: Mutex<Box<dyn Write + Send>>,
    /// Where the lines go, for the errors.
    lines_to: String,
    db: Option<FieldsDb>,
    counts: ExtractCounts,
}

/// What `--extract` did, counted as it goes.
#[derive(Default, Debug)]
struct ExtractCounts {
    /// HTML and text pages some rule set's URL pattern matched.
    pub pages: AtomicU64,
    /// HTML and text pages none matched: no tree parsed, nothing written.
    pub unmatched: AtomicU64,
    /// Pages parsed into an HTML tree (a matched rule set has a CSS or JSON-LD field).
    pub parsed: AtomicU64,
    /// Objects written (and rows put): a page and a rule set with some field found.
    pub objects: AtomicU64,
    /// A page and a rule set whose every field found nothing: nothing written.
    pub empty: AtomicU64,
    /// SQLite rows replaced by other values, the old row kept in `NAME_history`.
    pub replaced: AtomicU64,
}

/// What `--extract` did: summary.json's `extract` (`crawl::summary::KEYS` says each).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ExtractStats {
    pub pages: u64,
    pub unmatched: u64,
    pub parsed: u64,
    pub objects: u64,
    pub empty: u64,
    pub replaced: u64,
}

impl Extract {
    /// Opens the outputs of `rules`: `lines` (appended to), and the database at `db`.
    pub fn open(rules: Rules, lines: LinesTo, db: Option<&Path>) -> Result<Extract> {
        let (out, lines_to) = lines.open("--extract-out")?;
        let db = db.map(|path| FieldsDb::open(path, &rules)).transpose()?;
        Ok(Extract {
            rules,
            lines: Mutex::new(out),
            lines_to,
            db,
            counts: ExtractCounts::default(),
        })
    }

    /// Checkpoints the database into its file (the lines are written as they come); the
    /// counts.
    pub fn finish(&self) -> Result<ExtractStats> {
        if let Some(db) = &self.db {
            db.checkpoint()?;
        }
        let c = &self.counts;
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Ok(ExtractStats {
            pages: load(&c.pages),
            unmatched: load(&c.unmatched),
            parsed: load(&c.parsed),
            objects: load(&c.objects),
            empty: load(&c.empty),
            replaced: load(&c.replaced),
        })
    }

    /// Takes the fields of the page at `url`, fetched at `fetched` (RFC 3339), whose text is
    /// `text`, and writes them.
    fn page(&self, url: &str, fetched: &str, text: &str, html: bool) -> Result<()> {
        let add = |counter: &AtomicU64, n: u64| counter.fetch_add(n, Ordering::Relaxed);
        let fields = self.rules.extract(url, text, html);
        if fields.sets.is_empty() {
            add(&self.counts.unmatched, 1);
            return Ok(());
        }
        add(&self.counts.pages, 1);
        add(&self.counts.parsed, fields.parsed as u64);
        let mut lines = String::new();
        for set in fields.sets.iter().filter(|s| !s.is_empty()) {
            lines.push_str(&object(url, fetched, set));
            lines.push('\n');
            if let Some(db) = &self.db
                && db.put(url, fetched, set)?
            {
                add(&self.counts.replaced, 1);
            }
        }
        let written = lines.bytes().filter(|&b| b == b'\n').count() as u64;
        add(&self.counts.objects, written);
        add(&self.counts.empty, fields.sets.len() as u64 - written);
        if !lines.is_empty() {
            let mut out = self.lines.lock().expect("a writer panicked");
            out.write_all(lines.as_bytes())
                .and_then(|()| out.flush())
                .with_context(|| format!("writing --extract's lines to {}", self.lines_to))?;
        }
        Ok(())
    }
}

/// One JSON object: `url`, `fetched`, `rule`, then the fields in the rules file's order.
fn object(url: &str, fetched: &str, set: &Extracted) -> String {
    let string = |s: &str| serde_json::Value::from(s).to_string();
    let mut json = format!(
        "{{\"url\":{},\"fetched\":{},\"rule\":{}",
        string(url),
        string(fetched),
        string(&set.set.name)
    );
    for (field, value) in set.set.fields.iter().zip(&set.values) {
        json.push_str(&format!(",{}:{}", string(&field.name), value.to_json()));
    }
    json.push('}');
    json
}

impl Extract {
    /// Takes `page`, fetched at `fetched` (RFC 3339): the crawl's sink, and `crawl extract`
    /// with a WARC record's date.
    pub fn take_fetched(&self, page: &Page, fetched: &str) -> Result<()> {
        if !page.is_text() {
            return Ok(());
        }
        // Before the body is decoded: a page no rule set wants costs a few regex searches.
        if !self.rules.wants(&page.entry.url) {
            self.counts.unmatched.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
        let html = page.response.is_html();
        self.page(&page.entry.url, fetched, page.text(), html)
    }
}
