//! Recrawls: running again on a state directory whose crawl completed.
//!
//! Every fetched page is recorded in `DIR/fetched.tsv` (see `FetchLog`): its URL, depth,
//! status, validators (`ETag`, `Last-Modified`), payload digest and date. A recrawl starts a
//! new generation: `fetched.tsv` becomes `previous.tsv`, the seen set and frontier start
//! empty, and the seeds and every previously fetched URL are offered again carrying what the
//! previous crawl got (`Previous`). Those are fetched with conditional requests
//! (`If-None-Match`, `If-Modified-Since`); the outcome is one of `Outcome`, counted in the
//! summary and noted in the URL log. Links of changed and new pages lead to new pages as in any
//! crawl; an unchanged page's links were all fetched last time and are offered again anyway.

use crate::fetch::client::Response;
use crate::frontier::entry::{Entry, Previous, validator};
use crate::state::durable;
use anyhow::{Context, Result, bail};
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// The conditional request for a page the previous crawl fetched.
pub fn conditional_headers(previous: &Previous) -> Vec<(&'static str, String)> {
    let mut headers = Vec::new();
    if let Some(etag) = &previous.etag {
        headers.push(("if-none-match", etag.clone()));
    }
    if let Some(date) = &previous.last_modified {
        headers.push(("if-modified-since", date.clone()));
    }
    headers
}

/// What `fetched.tsv` records of a response (`digest` is its payload's): the capture the next
/// recrawl compares with. After a 304 that is still the previous capture.
pub fn capture(previous: Option<&Previous>, response: &Response, digest: &str) -> Previous {
    match previous {
        Some(previous) if response.status == 304 => Previous {
            etag: validator(response.header("etag")).or_else(|| previous.etag.clone()),
            ..previous.clone()
        },
        _ => Previous {
            status: response.status,
            etag: validator(response.header("etag")),
            last_modified: validator(response.header("last-modified")),
            digest: digest.to_owned(),
            date: unix_secs(response.started),
        },
    }
}

/// What `fetched.tsv` records of a fetch that got no response and had no earlier capture.
pub fn no_capture() -> Previous {
    Previous {
        status: 0,
        etag: None,
        last_modified: None,
        digest: String::new(),
        date: unix_secs(SystemTime::now()),
    }
}

fn unix_secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs()
}

/// How a recrawled page compares with the previous crawl.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Not fetched by the previous crawl.
    New,
    /// Fetched before; now a different status or payload.
    Changed,
    /// 304 Not Modified, or the same status and payload digest.
    Unchanged,
    /// Now 404 or 410, and it was not before.
    Gone,
}

impl Outcome {
    pub const ALL: [Outcome; 4] = [
        Outcome::New,
        Outcome::Changed,
        Outcome::Unchanged,
        Outcome::Gone,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Outcome::New => "new",
            Outcome::Changed => "changed",
            Outcome::Unchanged => "unchanged",
            Outcome::Gone => "gone",
        }
    }

    /// Compares a response (`status`, payload `digest`) with what the previous crawl got.
    pub fn of(previous: Option<&Previous>, status: u16, digest: &str) -> Outcome {
        let Some(previous) = previous else {
            return Outcome::New;
        };
        let was_gone = matches!(previous.status, 404 | 410);
        match status {
            304 => Outcome::Unchanged,
            404 | 410 if !was_gone => Outcome::Gone,
            _ if status == previous.status && digest == previous.digest => Outcome::Unchanged,
            _ => Outcome::Changed,
        }
    }
}

/// What a run does with the state directory it is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generation {
    /// A first crawl, or the resumption of an unfinished one.
    Crawl,
    /// A recrawl (started now, or resumed): previous fetches are in `previous.tsv`.
    Recrawl,
}

/// The files of a crawl generation: what a recrawl or `--restart` starts afresh (a recrawl gives
/// every host its `--max-pages-per-host` budget again).
const GENERATION_STATE: [&str; 6] = [
    "seen",
    "seen.tmp",
    "frontier",
    "due",
    "fetched.tsv",
    "budget",
];

/// Readies the state directory (locked by the caller). If its crawl completed (`DIR/complete`),
/// starts a recrawl, or with `restart` a fresh crawl; otherwise resumes what is there. Each step
/// can be repeated, and `complete` is removed last, so a crash half-way is finished next time.
///
/// The robots.txt answers (`DIR/robots/`, a cache) go too with `restart`, which crawls as if
/// new; a recrawl forgets only those that were not had (`hoststate::forget_unreachable`):
/// otherwise a host whose robots.txt was unreachable stays blocked, all of it, for the first
/// minutes of the new generation (all of a run that soon after).
pub fn prepare(out: &Path, restart: bool) -> Result<Generation> {
    let complete = out.join(COMPLETE);
    let previous = out.join(PREVIOUS);
    if complete.exists() {
        let fetched = out.join(FETCHED);
        if restart {
            remove(&previous)?;
            remove(&out.join(ROBOTS))?;
        } else if fetched.exists() {
            fs::rename(&fetched, &previous).with_context(|| {
                format!("moving {} to {}", fetched.display(), previous.display())
            })?;
            durable::sync_dir(out)?;
        }
        for name in GENERATION_STATE {
            remove(&out.join(name))?;
        }
        crate::schedule::hoststate::forget_unreachable(&out.join(ROBOTS))?;
        durable::sync_dir(out)?;
        fs::remove_file(&complete).with_context(|| format!("removing {}", complete.display()))?;
        durable::sync_dir(out)?;
    } else if restart {
        // Not finished: `--restart` still means "forget this crawl", say after changed seeds.
        for name in GENERATION_STATE.iter().chain(&[PREVIOUS, ROBOTS]) {
            remove(&out.join(name))?;
        }
    }
    Ok(if previous.exists() {
        Generation::Recrawl
    } else {
        Generation::Crawl
    })
}

/// Marks the crawl complete, so that the next run recrawls.
pub fn mark_complete(out: &Path) -> Result<()> {
    let path = out.join(COMPLETE);
    durable::replace(&path, b"").with_context(|| format!("writing {}", path.display()))
}

/// Reads `previous.tsv` in order, calling `each` with groups of its entries.
pub fn read_previous(out: &Path, each: &mut dyn FnMut(Vec<Entry>) -> Result<()>) -> Result<()> {
    let path = out.join(PREVIOUS);
    let file = File::open(&path).with_context(|| format!("opening {}", path.display()))?;
    let mut group = Vec::new();
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line = line.with_context(|| format!("reading {}", path.display()))?;
        match Entry::from_line(&line) {
            Some(entry) if entry.previous.is_some() => group.push(entry),
            _ => bail!("{}:{}: not a fetched-page record", path.display(), i + 1),
        }
        if group.len() >= 4096 {
            each(std::mem::take(&mut group))?;
        }
    }
    each(group)
}

fn remove(path: &Path) -> Result<()> {
    durable::remove_if_present(path).with_context(|| format!("removing {}", path.display()))
}

const COMPLETE: &str = "complete";
const FETCHED: &str = "fetched.tsv";
const PREVIOUS: &str = "previous.tsv";
const ROBOTS: &str = "robots";

/// `DIR/fetched.tsv`: one line per fetch attempt, in the frontier's line format with what was
/// got (`Entry` with `previous` set to this fetch). Written before the page counts as done, one
/// write(2) per line, so a kill loses no line of a finished page; a torn last line is ignored.
pub struct FetchLog {
    file: Mutex<File>,
}

impl FetchLog {
    pub fn open(out: &Path) -> Result<FetchLog> {
        let path = out.join(FETCHED);
        let file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        cut_torn_line(&file).with_context(|| format!("repairing {}", path.display()))?;
        Ok(FetchLog {
            file: Mutex::new(file),
        })
    }

    pub fn record(&self, entry: &Entry) -> Result<()> {
        let mut line = entry.to_line();
        line.push('\n');
        self.file
            .lock()
            .unwrap()
            .write_all(line.as_bytes())
            .context("appending to fetched.tsv")
    }
}

/// Cuts a torn last line (a kill in the middle of a write) off an append-only file: its page
/// did not count as done and is fetched again.
fn cut_torn_line(mut file: &File) -> std::io::Result<()> {
    let len = file.metadata()?.len();
    let mut end = len;
    let mut chunk = vec![0u8; 64 * 1024];
    while end > 0 {
        let start = end.saturating_sub(chunk.len() as u64);
        let part = &mut chunk[..(end - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(part)?;
        if let Some(i) = part.iter().rposition(|&b| b == b'\n') {
            end = start + i as u64 + 1;
            break;
        }
        end = start;
    }
    if end < len {
        file.set_len(end)?;
        file.sync_all()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn previous(status: u16, digest: &str) -> Previous {
        Previous {
            status,
            etag: None,
            last_modified: None,
            digest: digest.into(),
            date: 0,
        }
    }

    #[test]
    fn outcomes_compare_status_and_digest() {
        let ok = previous(200, "sha1:A");
        assert_eq!(Outcome::of(None, 200, "sha1:A"), Outcome::New);
        assert_eq!(Outcome::of(Some(&ok), 304, ""), Outcome::Unchanged);
        assert_eq!(Outcome::of(Some(&ok), 200, "sha1:A"), Outcome::Unchanged);
        assert_eq!(Outcome::of(Some(&ok), 200, "sha1:B"), Outcome::Changed);
        assert_eq!(Outcome::of(Some(&ok), 404, "sha1:A"), Outcome::Gone);
        assert_eq!(Outcome::of(Some(&ok), 410, "sha1:A"), Outcome::Gone);
        let gone = previous(404, "sha1:N");
        assert_eq!(Outcome::of(Some(&gone), 404, "sha1:N"), Outcome::Unchanged);
        assert_eq!(Outcome::of(Some(&gone), 200, "sha1:A"), Outcome::Changed);
    }

    #[test]
    fn a_torn_fetched_line_is_cut_and_the_log_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut entry = Entry::new("http://a.test/".into(), 0, 0);
        entry.previous = Some(previous(200, "sha1:A"));
        let log = FetchLog::open(dir.path()).unwrap();
        log.record(&entry).unwrap();
        drop(log);
        let path = dir.path().join(FETCHED);
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(b"1\t0\thttp://a.test/torn\t20").unwrap();
        drop(file);
        let log = FetchLog::open(dir.path()).unwrap();
        log.record(&entry).unwrap();
        fs::rename(&path, dir.path().join(PREVIOUS)).unwrap();
        let mut got = Vec::new();
        read_previous(dir.path(), &mut |group| {
            got.extend(group);
            Ok(())
        })
        .unwrap();
        assert_eq!(got, vec![entry.clone(), entry]);
    }
}
