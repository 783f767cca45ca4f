//! The frontier's record: one URL to fetch, as a line of text.
//!
//! `depth TAB redirects TAB url`, and during a recrawl the previous fetch's fields after another
//! tab (`Previous`). A sitemap to read (not a page) has `sN` for its depth, N its nesting level
//! below robots.txt (`Entry::sitemap`); a binary older than sitemaps refuses such a line rather
//! than fetch it as a page (see CHANGELOG, frontier line format 2). The same line is used in frontier segments, the frontier head, DUE spool
//! batches and `fetched.tsv` (see ARCHITECTURE.md, "On-disk formats"), so it lives here, below
//! both the frontier and the recrawl bookkeeping that read it.

use crate::seen::checksum::checksum;
use crate::state::history::History;
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
    /// Times this URL's fetch failed transiently (no answer, or a 502/504) and was put back
    /// (`fetch::retry::Transient`; in memory only, as `retries`).
    pub failures: u32,
    /// `Some(level)`: a sitemap to read, not a page. Level 0 is named by robots.txt (or is a
    /// seed host's `/sitemap.xml`); a sitemap listed by an index at level N is at N + 1.
    /// Its depth is 0, and the pages it lists are at depth 1.
    pub sitemap: Option<u32>,
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
            failures: 0,
            sitemap: None,
        }
    }

    /// A sitemap to read, at nesting `level` (see `Entry::sitemap`).
    pub fn sitemap(url: String, level: u32, redirects: u32) -> Entry {
        Entry {
            sitemap: Some(level),
            ..Entry::new(url, 0, redirects)
        }
    }

    /// Whether this is a second (or later) attempt at the URL: it was put back after a 429/503
    /// or a transient failure. A retry is not another page: it is not counted again.
    pub fn is_retry(&self) -> bool {
        self.retries > 0 || self.failures > 0
    }

    /// The checksum that names this entry in the seen set and the done log.
    /// A sitemap's is not its URL's: reading a sitemap and fetching the same URL as a page (a
    /// link to `/sitemap.xml`) are different work, and neither hides the other from the DUE.
    pub fn key(&self) -> u64 {
        key_of(self.url.as_bytes(), self.sitemap.is_some())
    }

    /// The key of the entry a line written by `to_line` holds, without parsing all of it.
    pub fn key_of_line(line: &[u8]) -> u64 {
        let mut fields = line.splitn(4, |&b| b == b'\t');
        let sitemap = fields.next().is_some_and(|depth| depth.starts_with(b"s"));
        let url = fields.nth(1).unwrap_or_default();
        key_of(url.strip_suffix(b"\n").unwrap_or(url), sitemap)
    }

    /// The entry as a line without its newline (the segment, spool and `fetched.tsv` format).
    pub fn to_line(&self) -> String {
        let mut line = String::with_capacity(self.url.len() + LINE_EXTRA);
        self.push_line(&mut line);
        line
    }

    /// `to_line` onto the end of `line`: numbers written digit by digit, not through
    /// `fmt` (a line per page fetched and per URL queued).
    pub fn push_line(&self, line: &mut String) {
        let first = match self.sitemap {
            None => self.depth,
            Some(level) => {
                line.push('s');
                level
            }
        };
        push_fields(line, &[first, self.redirects]);
        line.push_str(&self.url);
        if let Some(previous) = &self.previous {
            line.push('\t');
            previous.push_fields(line);
        }
    }

    /// Parses a line written by `to_line`.
    pub fn from_line(line: &str) -> Option<Entry> {
        let mut fields = line.trim_end_matches('\n').splitn(4, '\t');
        let first = fields.next()?;
        let (depth, sitemap) = match first.strip_prefix('s') {
            Some(level) => (0, Some(level.parse().ok()?)),
            None => (first.parse().ok()?, None),
        };
        Some(Entry {
            depth,
            redirects: fields.next()?.parse().ok()?,
            url: fields.next()?.to_owned(),
            previous: match fields.next() {
                Some(rest) => Some(Previous::from_fields(rest)?),
                None => None,
            },
            retries: 0,
            failures: 0,
            sitemap,
        })
    }
}

/// The line of `Entry::new(url, depth, redirects)` (`to_line`), written without building the
/// entry: a page's links reach the DUE this way (`crawl::offer`), nearly all never needing one.
pub struct FoundLine<'a> {
    pub url: &'a str,
    pub depth: u32,
    pub redirects: u32,
}

impl FoundLine<'_> {
    /// The line onto the end of `out`.
    pub fn push_to(&self, out: &mut Vec<u8>) {
        let mut digits = itoa::Buffer::new();
        for n in [self.depth, self.redirects] {
            out.extend_from_slice(digits.format(n).as_bytes());
            out.push(b'\t');
        }
        out.extend_from_slice(self.url.as_bytes());
    }
}

/// Room beyond the URL `Entry::to_line` reserves: the numbers, the tabs and a recrawl's fields.
const LINE_EXTRA: usize = 128;

/// Each number of `numbers` onto the end of `line`, a tab after each.
fn push_fields<N: itoa::Integer>(line: &mut String, numbers: &[N]) {
    let mut digits = itoa::Buffer::new();
    for &n in numbers {
        line.push_str(digits.format(n));
        line.push('\t');
    }
}

/// `Entry::key`: a page's URL's checksum, or a sitemap's, told apart by a prefix.
fn key_of(url: &[u8], sitemap: bool) -> u64 {
    match sitemap {
        false => checksum(url),
        true => checksum(&[b"sitemap ", url].concat()),
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
    /// The page's visits and changes over the recrawls (`state::history`).
    pub history: History,
}

impl Previous {
    /// `status TAB etag TAB last-modified TAB digest TAB date`, empty for a missing value, then
    /// the history's fields (`History::push_fields`), onto the end of `line`.
    pub fn push_fields(&self, line: &mut String) {
        push_fields(line, &[self.status]);
        for text in [self.etag.as_deref(), self.last_modified.as_deref()] {
            line.push_str(text.unwrap_or(""));
            line.push('\t');
        }
        line.push_str(&self.digest);
        line.push('\t');
        push_fields(line, &[self.date]);
        self.history.push_fields(line);
    }

    pub fn from_fields(text: &str) -> Option<Previous> {
        let mut fields = text.trim_end_matches('\n').split('\t');
        let optional = |s: &str| (!s.is_empty()).then(|| s.to_owned());
        let (status, etag, last_modified, digest, date) = (
            fields.next()?.parse().ok()?,
            optional(fields.next()?),
            optional(fields.next()?),
            fields.next()?.to_owned(),
            fields.next()?.parse().ok()?,
        );
        // A line without history fields is format 1 (`recrawl`).
        let history = History::from_fields(fields).unwrap_or(History::of_format_1(status, date));
        Some(Previous {
            status,
            etag,
            last_modified,
            digest,
            date,
            history,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sitemap_entry_round_trips_and_has_its_own_key() {
        let sitemap = Entry::sitemap("http://a.test/sitemap.xml".into(), 2, 1);
        assert_eq!(sitemap.to_line(), "s2\t1\thttp://a.test/sitemap.xml");
        assert_eq!(Entry::from_line(&sitemap.to_line()), Some(sitemap.clone()));
        let page = Entry::new("http://a.test/sitemap.xml".into(), 0, 1);
        assert_eq!(Entry::from_line(&page.to_line()), Some(page.clone()));
        assert_ne!(sitemap.key(), page.key());
        for entry in [&sitemap, &page] {
            assert_eq!(Entry::key_of_line(entry.to_line().as_bytes()), entry.key());
        }
        assert_eq!(Entry::from_line("sx\t0\thttp://a.test/"), None);
    }
}
