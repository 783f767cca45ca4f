//! Recrawls: running again on a state directory whose crawl completed.
//!
//! Every fetched page is recorded in `DIR/fetched.tsv` (see `FetchLog`): its URL, depth,
//! status, validators (`ETag`, `Last-Modified`), payload digest and date, and its history over
//! the recrawls (`state::history`: visits, changes, first and last visit, last change). Format 2
//! starts with a header line (`HEADER`); format 1 had none and no history fields, and is still
//! read (each page as visited once, at its date). A recrawl starts a
//! new generation: `fetched.tsv` becomes `previous.tsv` (by a rename), the seen set and frontier
//! start empty, and the seeds and every previously fetched URL are offered again carrying what
//! the previous crawl got (`Previous`). With `--recrawl-budget` only the pages `recrawl::budget`
//! selects are asked for; the others are handed out and carried over (outcome `deferred`). Those are fetched with conditional requests
//! (`If-None-Match`, `If-Modified-Since`); the outcome is one of `Outcome`, counted in the
//! summary and noted in the URL log. Links of changed and new pages lead to new pages as in any
//! crawl; an unchanged page's links were all fetched last time and are offered again anyway.
//!
//! Sitemap `lastmod`: sitemaps are recorded in `fetched.tsv` too, and a recrawl offers the
//! previous sitemaps ahead of the previous pages, so each host's sitemaps are read (after its
//! robots.txt, before its pages: a sitemap holds its host while it is read) before its pages
//! are asked for. While reading them, a recrawl keeps each listed URL's `lastmod` in
//! `Lastmods`, a bounded map in memory (`LASTMODS` entries, the last read kept). A previous page
//! that answered 2xx, whose `lastmod` says it has not changed since its previous fetch began,
//! is not asked for again: outcome `lastmod` (URL-log status 0, no WARC record, its previous
//! capture carried into the new `fetched.tsv`). Only the `lastmod` of this generation's
//! sitemaps counts, never one read by an earlier crawl (that would hide a change made since);
//! a `lastmod` the map no longer holds means an ordinary conditional request, never a skip, and
//! so does a page of a resumed recrawl whose sitemap was read before the kill (the map is not
//! saved). A skipped page was handed out like any: it counts towards `--max-pages` and its
//! host's `--max-pages-per-host` place.

pub mod budget;

use crate::fetch::client::Response;
use crate::frontier::entry::{Entry, Previous, validator};
use crate::lru::Lru;
use crate::state::durable;
use crate::state::history::{self, History};
use anyhow::{Context, Result, bail};
use budget::RecrawlBudget;
use std::fs::{self, File};
use std::io::{BufRead, BufReader, Write};
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
/// recrawl compares with, and the page's history with this visit (`state::history`). After a
/// 304 that is still the previous capture.
pub fn capture(previous: Option<&Previous>, response: &Response, digest: &str) -> Previous {
    let outcome = Outcome::of(previous, response.status, digest);
    let changed = matches!(outcome, Outcome::Changed | Outcome::Gone);
    let history = (previous.map(|p| p.history).unwrap_or_default())
        .visited(changed, history::at(response.started));
    match previous {
        Some(previous) if response.status == 304 => Previous {
            etag: validator(response.header("etag")).or_else(|| previous.etag.clone()),
            history,
            ..previous.clone()
        },
        _ => Previous {
            status: response.status,
            etag: validator(response.header("etag")),
            last_modified: validator(response.header("last-modified")),
            digest: digest.to_owned(),
            date: unix_secs(response.started),
            history,
        },
    }
}

/// What `fetched.tsv` records of a fetch that got no response and had no earlier capture (and
/// of a URL a budgeted recrawl put off): never visited.
pub fn no_capture() -> Previous {
    Previous {
        status: 0,
        etag: None,
        last_modified: None,
        digest: String::new(),
        date: history::now(),
        history: History::default(),
    }
}

fn unix_secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs()
}

/// Whether a recrawled page is to be asked for: if not, its outcome (`Deferred` by the
/// `--recrawl-budget`, or `Lastmod`) and what `fetched.tsv` keeps of it.
pub fn not_asked(
    budget: Option<&RecrawlBudget>,
    lastmods: &Lastmods,
    entry: &Entry,
) -> Option<(Outcome, Previous)> {
    if let Some(kept) = budget.and_then(|budget| budget.defers(entry)) {
        return Some((Outcome::Deferred, kept));
    }
    let previous = entry.previous.as_ref()?;
    lastmods
        .unchanged_since(entry.key(), previous)
        .then(|| (Outcome::Lastmod, previous.clone()))
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
    /// Not asked for: a sitemap's `lastmod` is older than the previous fetch (see `Lastmods`).
    Lastmod,
    /// Not asked for: `--recrawl-budget` went to pages likelier to have changed
    /// (`recrawl::budget`).
    Deferred,
}

impl Outcome {
    pub const ALL: [Outcome; 6] = [
        Outcome::New,
        Outcome::Changed,
        Outcome::Unchanged,
        Outcome::Gone,
        Outcome::Lastmod,
        Outcome::Deferred,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Outcome::New => "new",
            Outcome::Changed => "changed",
            Outcome::Unchanged => "unchanged",
            Outcome::Gone => "gone",
            Outcome::Lastmod => "lastmod",
            Outcome::Deferred => "deferred",
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

/// `lastmod`s a recrawl's sitemaps gave, kept at most: about 112 bytes each when full (the map
/// and its recency queue, measured), so some 15 MB.
pub const LASTMODS: usize = 131_072;

/// The `lastmod` of URLs this generation's sitemaps listed, by page key (`Entry::key`), as the
/// latest Unix second the text can mean (`lastmod_until`). Bounded: the least recently listed
/// are forgotten first, and a forgotten one only costs a request.
pub struct Lastmods {
    map: Mutex<Lru<u64, u64>>,
}

impl Lastmods {
    pub fn new(capacity: usize) -> Lastmods {
        Lastmods {
            map: Mutex::new(Lru::new(capacity)),
        }
    }

    /// Keeps a sitemap's `lastmod` text for the page `key`; one that is no W3C datetime is
    /// ignored (and forgets an earlier listing's).
    pub fn note(&self, key: u64, lastmod: &str) {
        let mut map = self.map.lock().unwrap();
        match lastmod_until(lastmod) {
            Some(until) => map.insert(key, until),
            None => {
                map.remove(&key);
            }
        }
    }

    /// Whether the page `key` need not be asked for again: its previous fetch answered 2xx and
    /// began after the latest moment its sitemap `lastmod` can mean.
    pub fn unchanged_since(&self, key: u64, previous: &Previous) -> bool {
        if !(200..300).contains(&previous.status) {
            return false;
        }
        let until = self.map.lock().unwrap().get(&key).copied();
        until.is_some_and(|until| until < previous.date)
    }
}

/// The latest Unix second a W3C datetime (the sitemap protocol's `lastmod`: `YYYY`, `YYYY-MM`,
/// `YYYY-MM-DD`, or with `Thh:mm[:ss[.s]]` and a zone `Z`/`±hh:mm`) can mean: the end of a date
/// without time, and 14 hours later when no zone is given (the widest zone offset), so a
/// comparison with it never takes a page for older than it is. `None` for anything else.
pub fn lastmod_until(text: &str) -> Option<u64> {
    const NO_ZONE: i64 = 14 * 3600;
    let text = text.trim();
    let num = |s: &str| -> Option<i64> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let (date, time) = match text.split_once('T') {
        Some((date, time)) => (date, Some(time)),
        None => (text, None),
    };
    let parts: Vec<&str> = date.split('-').collect();
    let (year, month, day) = match parts[..] {
        [y] if y.len() == 4 => (num(y)?, None, None),
        [y, m] if y.len() == 4 && m.len() == 2 => (num(y)?, Some(num(m)?), None),
        [y, m, d] if y.len() == 4 && m.len() == 2 && d.len() == 2 => {
            (num(y)?, Some(num(m)?), Some(num(d)?))
        }
        _ => return None,
    };
    if month.is_some_and(|m| !(1..=12).contains(&m)) || day.is_some_and(|d| !(1..=31).contains(&d))
    {
        return None;
    }
    let days = |y: i64, m: i64, d: i64| days_from_civil(y, m, d) * 86_400;
    let secs = match (month, day, time) {
        (None, _, None) => days(year + 1, 1, 1) + NO_ZONE,
        (Some(12), None, None) => days(year + 1, 1, 1) + NO_ZONE,
        (Some(m), None, None) => days(year, m + 1, 1) + NO_ZONE,
        (Some(m), Some(d), None) => days(year, m, d) + 86_400 + NO_ZONE,
        (Some(m), Some(d), Some(time)) => days(year, m, d) + time_until(time)?,
        (None, _, Some(_)) | (Some(_), None, Some(_)) => return None,
    };
    u64::try_from(secs).ok()
}

/// `hh:mm[:ss[.s]]` and a zone, as the latest second after midnight UTC it can mean.
fn time_until(time: &str) -> Option<i64> {
    let (clock, offset) = if let Some(clock) = time.strip_suffix('Z') {
        (clock, 0)
    } else if let Some(i) = time.rfind(['+', '-']) {
        let (h, m) = time[i + 1..].split_once(':')?;
        let (h, m): (i64, i64) = (h.parse().ok()?, m.parse().ok()?);
        let sign = if time.as_bytes()[i] == b'+' { 1 } else { -1 };
        (&time[..i], sign * (h * 3600 + m * 60))
    } else {
        (time, -14 * 3600)
    };
    let fields: Vec<&str> = clock.split(':').collect();
    let (h, m, s) = match fields[..] {
        [h, m] => (h, m, "0"),
        [h, m, s] => (h, m, s),
        _ => return None,
    };
    let (whole, fraction) = s.split_once('.').unwrap_or((s, ""));
    let (h, m, whole): (i64, i64, i64) = (h.parse().ok()?, m.parse().ok()?, whole.parse().ok()?);
    if h > 24 || m > 59 || whole > 60 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let up = i64::from(fraction.bytes().any(|b| b != b'0'));
    Some(h * 3600 + m * 60 + whole + up - offset)
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
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

/// The near-duplicate index and its clusters (`seen::neardup`): kept by a recrawl, whose pages
/// are compared with the previous crawls' too; forgotten by `--restart`.
const NEAR_DUPLICATES: [&str; 2] = ["neardup", "neardups.tsv"];

/// Readies the state directory (locked by the caller). If its crawl completed (`DIR/complete`),
/// starts a recrawl, or with `restart` a fresh crawl; otherwise resumes what is there. Each step
/// can be repeated, and `complete` is removed last, so a crash half-way is finished next time.
///
/// The robots.txt answers (`DIR/robots/`, a cache) go too with `restart`, which crawls as if
/// new; every other run (a recrawl, a resume) forgets only those that were not had
/// (`robotstore::forget_unreachable`): otherwise a host whose robots.txt was unreachable stays
/// held unreachable, all of it, for the first minutes of the next run (all of a run that soon
/// after), and a resumed crawl would give up its URLs again without asking.
pub fn prepare(out: &Path, restart: bool) -> Result<Generation> {
    let complete = out.join(COMPLETE);
    let previous = out.join(PREVIOUS);
    if complete.exists() {
        let fetched = out.join(FETCHED);
        if restart {
            remove(&previous)?;
            remove(&out.join(ROBOTS))?;
            for name in NEAR_DUPLICATES {
                remove(&out.join(name))?;
            }
        } else if fetched.exists() {
            fs::rename(&fetched, &previous).with_context(|| {
                format!("moving {} to {}", fetched.display(), previous.display())
            })?;
            durable::sync_dir(out)?;
        }
        for name in GENERATION_STATE {
            remove(&out.join(name))?;
        }
        durable::sync_dir(out)?;
        fs::remove_file(&complete).with_context(|| format!("removing {}", complete.display()))?;
        durable::sync_dir(out)?;
    } else if restart {
        // Not finished: `--restart` still means "forget this crawl", say after changed seeds.
        let forgotten = [PREVIOUS, ROBOTS].into_iter().chain(NEAR_DUPLICATES);
        for name in GENERATION_STATE.iter().copied().chain(forgotten) {
            remove(&out.join(name))?;
        }
    }
    crate::schedule::robotstore::forget_unreachable(&out.join(ROBOTS))?;
    Ok(if previous.exists() {
        Generation::Recrawl
    } else {
        Generation::Crawl
    })
}

/// Marks the crawl complete, so that the next run recrawls.
pub fn mark_complete(out: &Path) -> Result<()> {
    mark_complete_with(out, "")
}

/// `mark_complete` with `text` in the mark (a shard's names its run: `shard::mark_complete`).
pub fn mark_complete_with(out: &Path, text: &str) -> Result<()> {
    let path = out.join(COMPLETE);
    durable::replace(&path, text.as_bytes()).with_context(|| format!("writing {}", path.display()))
}

/// Whether the crawl in `out` completed (a run on it now is a recrawl).
pub fn is_complete(out: &Path) -> bool {
    out.join(COMPLETE).exists()
}

/// Reads `previous.tsv` in order, calling `each` with groups of its entries: the sitemaps
/// (`sitemaps`) or the pages.
pub fn read_previous(
    out: &Path,
    sitemaps: bool,
    each: &mut dyn FnMut(Vec<Entry>) -> Result<()>,
) -> Result<()> {
    let path = out.join(PREVIOUS);
    let file = File::open(&path).with_context(|| format!("opening {}", path.display()))?;
    let mut group = Vec::new();
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line = line.with_context(|| format!("reading {}", path.display()))?;
        if i == 0 && line.starts_with('#') {
            check_header(&path, &line)?;
            continue;
        }
        match Entry::from_line(&line) {
            Some(entry) if entry.previous.is_some() => {
                if entry.sitemap.is_some() == sitemaps {
                    group.push(entry);
                }
            }
            _ => bail!("{}:{}: not a fetched-page record", path.display(), i + 1),
        }
        if group.len() >= 4096 {
            each(std::mem::take(&mut group))?;
        }
    }
    each(group)
}

/// The first line of `fetched.tsv` since format 2 (format 1 had none).
pub const HEADER: &str = "# crawl fetched.tsv format 2: depth redirects url status etag \
     last-modified payload-digest date visits changes first-visit last-visit last-change";

/// Accepts the header of a format this build reads (1 has none, 2 is `HEADER`).
fn check_header(path: &Path, line: &str) -> Result<()> {
    let format = line
        .strip_prefix("# crawl fetched.tsv format ")
        .and_then(|rest| rest.split(':').next())
        .and_then(|n| n.trim().parse::<u32>().ok());
    match format {
        Some(1 | 2) => Ok(()),
        Some(n) => bail!(
            "{}: format {n} was written by a newer crawl; recrawl with that build, or start afresh with --restart",
            path.display()
        ),
        None => bail!("{}:1: not a fetched.tsv header: {line:?}", path.display()),
    }
}

fn remove(path: &Path) -> Result<()> {
    durable::remove_if_present(path).with_context(|| format!("removing {}", path.display()))
}

pub const COMPLETE: &str = "complete";
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
        let (mut file, len) =
            durable::open_log(&path).with_context(|| format!("opening {}", path.display()))?;
        if len == 0 {
            file.write_all(format!("{HEADER}\n").as_bytes())
                .with_context(|| format!("writing {}", path.display()))?;
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::OpenOptions;

    fn previous(status: u16, digest: &str) -> Previous {
        Previous {
            status,
            etag: None,
            last_modified: None,
            digest: digest.into(),
            date: 0,
            history: History::default(),
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
    fn lastmod_means_the_latest_moment_it_can() {
        let day = |y, m, d| days_from_civil(y, m, d) as u64 * 86_400;
        let zone = 14 * 3600;
        assert_eq!(day(1970, 1, 1), 0);
        assert_eq!(day(2000, 3, 1), 951_868_800);
        assert_eq!(lastmod_until("2024"), Some(day(2025, 1, 1) + zone));
        assert_eq!(lastmod_until("2024-12"), Some(day(2025, 1, 1) + zone));
        assert_eq!(lastmod_until("2024-02"), Some(day(2024, 3, 1) + zone));
        assert_eq!(lastmod_until(" 2024-02-29 "), Some(day(2024, 3, 1) + zone));
        let noon = day(2024, 5, 1) + 12 * 3600;
        assert_eq!(lastmod_until("2024-05-01T12:00Z"), Some(noon));
        assert_eq!(
            lastmod_until("2024-05-01T12:00:00+02:00"),
            Some(noon - 7200)
        );
        assert_eq!(
            lastmod_until("2024-05-01T12:00:00-01:30"),
            Some(noon + 5400)
        );
        assert_eq!(lastmod_until("2024-05-01T12:00:00.25Z"), Some(noon + 1));
        assert_eq!(lastmod_until("2024-05-01T12:00:00"), Some(noon + zone));
        for bad in [
            "",
            "yesterday",
            "2024-13",
            "24-01-01",
            "2024-1-1",
            "2024-05-01T",
            "2024T12:00Z",
        ] {
            assert_eq!(lastmod_until(bad), None, "{bad}");
        }
    }

    #[test]
    fn only_a_lastmod_before_a_good_previous_fetch_skips() {
        let lastmods = Lastmods::new(2);
        let fetched = |status| Previous {
            date: lastmod_until("2024-06-01").unwrap() + 1,
            ..previous(status, "sha1:A")
        };
        lastmods.note(1, "2024-06-01");
        lastmods.note(2, "2024-06-03");
        assert!(lastmods.unchanged_since(1, &fetched(200)));
        assert!(
            !lastmods.unchanged_since(1, &fetched(404)),
            "not a good capture"
        );
        assert!(!lastmods.unchanged_since(2, &fetched(200)), "changed since");
        assert!(!lastmods.unchanged_since(3, &fetched(200)), "not listed");
        lastmods.note(1, "garbage");
        assert!(
            !lastmods.unchanged_since(1, &fetched(200)),
            "no longer a date"
        );
        lastmods.note(1, "2024-06-01");
        lastmods.note(3, "2024-06-01");
        lastmods.note(4, "2024-06-01");
        assert!(
            !lastmods.unchanged_since(1, &fetched(200)),
            "forgotten: bounded"
        );
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
        read_previous(dir.path(), false, &mut |group| {
            got.extend(group);
            Ok(())
        })
        .unwrap();
        assert_eq!(got, vec![entry.clone(), entry]);
    }

    fn read_back(dir: &Path) -> Result<Vec<Entry>> {
        let mut got = Vec::new();
        read_previous(dir, false, &mut |group| {
            got.extend(group);
            Ok(())
        })?;
        Ok(got)
    }

    #[test]
    fn fetched_tsv_format_2_round_trips_and_format_1_still_reads() {
        let dir = tempfile::tempdir().unwrap();
        let mut entry = Entry::new("http://a.test/p".into(), 1, 0);
        entry.previous = Some(Previous {
            etag: Some("\"v3\"".into()),
            date: 1_700_000_000,
            history: History {
                visits: 4,
                changes: 2,
                first: 1_699_000_000,
                last: 1_700_100_000,
                last_change: 1_699_500_000,
            },
            ..previous(200, "sha1:A")
        });
        let log = FetchLog::open(dir.path()).unwrap();
        log.record(&entry).unwrap();
        drop(log);
        let text = fs::read_to_string(dir.path().join(FETCHED)).unwrap();
        assert!(text.starts_with(&format!("{HEADER}\n")), "{text}");
        assert!(
            text.ends_with(
                "\t200\t\"v3\"\t\tsha1:A\t1700000000\t4\t2\t1699000000\t1700100000\t1699500000\n"
            ),
            "{text}"
        );
        fs::rename(dir.path().join(FETCHED), dir.path().join(PREVIOUS)).unwrap();
        assert_eq!(read_back(dir.path()).unwrap(), vec![entry]);

        // Format 1: no header, five fields: one visit at the fetch's date, or none (status 0).
        let old = "1\t0\thttp://a.test/p\t200\t\t\tsha1:A\t1700000000\n\
                   1\t0\thttp://a.test/q\t0\t\t\t\t1700000001\n";
        fs::write(dir.path().join(PREVIOUS), old).unwrap();
        let got = read_back(dir.path()).unwrap();
        let history: Vec<History> = got
            .iter()
            .map(|e| e.previous.as_ref().unwrap().history)
            .collect();
        assert_eq!(history[0], History::of_format_1(200, 1_700_000_000));
        assert_eq!(history[0].visits, 1);
        assert_eq!(history[1], History::default());

        // A later format is refused with a way out.
        fs::write(
            dir.path().join(PREVIOUS),
            "# crawl fetched.tsv format 3: x\n",
        )
        .unwrap();
        let e = read_back(dir.path()).unwrap_err().to_string();
        assert!(e.contains("format 3") && e.contains("--restart"), "{e}");
    }
}
