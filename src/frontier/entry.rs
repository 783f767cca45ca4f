//! The frontier's record: one URL to fetch, as a line of text.
//!
//! `depth TAB redirects TAB url`, and during a recrawl the previous fetch's fields after another
//! tab (`Previous`). The same line is used in frontier segments, the frontier head, DUE spool
//! batches and `fetched.tsv` (see ARCHITECTURE.md, "On-disk formats"), so it lives here, below
//! both the frontier and the recrawl bookkeeping that read it.

use crate::seen::checksum::checksum;
use anyhow::{Context, Result};

/// A URL waiting to be fetched. On disk: `depth TAB redirects TAB url`, and during a recrawl
/// the previous fetch's fields after another tab (see `Previous`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Link hops from a seed (seeds are 0).
    pub depth: u32,
    /// Redirects followed to reach this URL since the last link (bounds redirect chains).
    pub redirects: u32,
    /// The canonical URL.
    pub url: String,
    /// During a recrawl, what the previous crawl got for this URL (for conditional requests).
    pub previous: Option<Previous>,
    /// Times this URL was answered 429 or 503 and put back (in memory only: a resumed crawl
    /// starts counting again).
    pub retries: u32,
}

impl Entry {
    /// A URL found by this crawl (not known to a previous one).
    pub fn new(url: String, depth: u32, redirects: u32) -> Entry {
        Entry {
            depth,
            redirects,
            url,
            previous: None,
            retries: 0,
        }
    }

    /// The checksum that names this entry in the seen set and the done log.
    pub fn key(&self) -> u64 {
        checksum(self.url.as_bytes())
    }

    /// The entry as a line without its newline (the segment, spool and `fetched.tsv` format).
    pub fn to_line(&self) -> String {
        let mut line = format!("{}\t{}\t{}", self.depth, self.redirects, self.url);
        if let Some(previous) = &self.previous {
            line.push('\t');
            line.push_str(&previous.to_fields());
        }
        line
    }

    /// Parses a line written by `to_line`.
    pub fn from_line(line: &str) -> Option<Entry> {
        let mut fields = line.trim_end_matches('\n').splitn(4, '\t');
        Some(Entry {
            depth: fields.next()?.parse().ok()?,
            redirects: fields.next()?.parse().ok()?,
            url: fields.next()?.to_owned(),
            previous: match fields.next() {
                Some(rest) => Some(Previous::from_fields(rest)?),
                None => None,
            },
            retries: 0,
        })
    }
}

/// Entries wait in DUE batches in the frontier's own line format.
impl crate::seen::batch::Payload for Entry {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.to_line().as_bytes());
    }
    fn decode(bytes: &[u8]) -> Result<Self> {
        let line = std::str::from_utf8(bytes).context("a spooled entry is not UTF-8")?;
        Entry::from_line(line).with_context(|| format!("bad spooled entry {line:?}"))
    }
}

/// What the previous crawl got for a URL, carried by its frontier entry during a recrawl.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Previous {
    pub status: u16,
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    /// `sha1:BASE32` of the payload, as in the WARC record.
    pub digest: String,
    /// When it was fetched, in seconds since the Unix epoch.
    pub date: u64,
}

impl Previous {
    /// `status TAB etag TAB last-modified TAB digest TAB date`, empty for a missing value.
    pub fn to_fields(&self) -> String {
        format!(
            "{}\t{}\t{}\t{}\t{}",
            self.status,
            self.etag.as_deref().unwrap_or(""),
            self.last_modified.as_deref().unwrap_or(""),
            self.digest,
            self.date
        )
    }

    pub fn from_fields(text: &str) -> Option<Previous> {
        let mut fields = text.trim_end_matches('\n').split('\t');
        let optional = |s: &str| (!s.is_empty()).then(|| s.to_owned());
        Some(Previous {
            status: fields.next()?.parse().ok()?,
            etag: optional(fields.next()?),
            last_modified: optional(fields.next()?),
            digest: fields.next()?.to_owned(),
            date: fields.next()?.parse().ok()?,
        })
    }
}

/// A header value fit to be stored in a tab-separated line and sent back: no control
/// characters, bounded length. Anything else is dropped (the request is then unconditional).
pub fn validator(value: Option<&str>) -> Option<String> {
    let value = value?.trim();
    (!value.is_empty() && value.len() <= 512 && !value.chars().any(char::is_control))
        .then(|| value.to_owned())
}
