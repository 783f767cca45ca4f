//! Per-host page budgets (`--max-pages-per-host N`): IRLbot's budget idea in its simplest form.
//! A host stops receiving URLs from the frontier once N of its pages are done or under way, so
//! a trap (an endless calendar) costs N pages, whatever its depth.
//!
//! The dispatcher asks `admit` for every URL it moves into a host queue, from the frontier or
//! from the deferred FIFO (a URL set aside there, its host holding no slot, has no place yet). A
//! host's count is its pages *done* (fetched, or failed for good: `Dispatcher::entry_done`) plus
//! its URLs *pending* (admitted: queued or in flight). A URL is admitted while that sum is under
//! N; a refused URL is counted (`refused`, the summary's `filtered.host_budget`) and noted in
//! the URL log by the worker, never silently dropped. A pending URL robots.txt forbids gives its
//! place back (`dropped`), so only fetched pages use the budget; a 429/503 retry keeps its place.
//!
//! With `--host-rules`, a host's `pages=` replaces N for it (`pages=none` lifts it); a host
//! without a budget is not counted at all (its URLs pass, holding no place), so the rules must
//! not change while a crawl is resumed for its counts to stay exact.
//!
//! Memory is bounded, not one record per host ever seen: `live` holds the hosts with pending
//! URLs (at most the hosts holding a queue slot plus those with fetches in flight) and those whose count
//! changed since the last save (at most the pages done between two checkpoints); `recent` keeps
//! the last `RECENT` counts read. Every other count is in `DIR/budget/HASH` (a line
//! `HOST:PORT DONE`), read back when the host's URLs come again.
//!
//! Crash safety: the dispatcher calls `save` whenever it checkpoints the frontier, under the
//! same lock, so the saved counts and the frontier's head agree: the pages the head still lists
//! (queued or in flight) are not counted as done, and on resume they are admitted again. Files
//! are replaced atomically (`durable::replace_unsynced`: a kill cannot tear one; a power cut
//! may lose a few counts, which costs at most a few pages more). A kill loses the counts of pages
//! done since the last checkpoint (2 s of crawling), which the frontier will not fetch again:
//! those hosts may exceed N by that many pages after a resume.

use crate::frontier::Entry;
use crate::lru::Lru;
use crate::schedule::hostrules::HostRules;
use crate::state::durable;
use crate::url::normalize::origin_and_key;
use anyhow::{Context, Result};
use rustc_hash::FxHashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Counts of hosts not in `live` kept in memory, so a host whose URLs come in bursts is not
/// read from disk at each one.
const RECENT: usize = 4096;

/// One host's count.
#[derive(Clone, Copy, Debug, Default)]
struct Count {
    done: u64,
    pending: u64,
    /// `done` changed since it was last saved.
    dirty: bool,
}

/// The budget of every host (see the module doc).
pub struct Budget {
    /// `--max-pages-per-host`, for hosts no rule gives a budget of their own.
    max: Option<u64>,
    rules: Arc<HostRules>,
    dir: PathBuf,
    live: FxHashMap<String, Count>,
    recent: Lru<String, u64>,
    /// URLs refused because their host's budget was used.
    pub refused: u64,
}

impl Budget {
    /// A budget of `max` pages per host, its counts kept in `dir` (created if missing; the counts
    /// of an earlier run are found there).
    #[cfg(test)]
    pub fn open(dir: &Path, max: u64) -> Result<Budget> {
        Budget::with_rules(dir, Some(max), Arc::default())
    }

    /// A budget of `max` pages per host (none: no budget) unless `rules` give a host its own.
    pub fn with_rules(dir: &Path, max: Option<u64>, rules: Arc<HostRules>) -> Result<Budget> {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(Budget {
            max,
            rules,
            dir: dir.to_owned(),
            live: FxHashMap::default(),
            recent: Lru::new(RECENT),
            refused: 0,
        })
    }

    /// Whether the frontier may give `entry` to its host; if so, it holds a place until it is
    /// `done` or `dropped`. A sitemap (not a page) or a URL without an http(s) host is not this
    /// module's to count: it passes, holding no place.
    pub fn admit(&mut self, entry: &Entry) -> Result<bool> {
        let Some(key) = page_key(entry) else {
            return Ok(true);
        };
        let Some(max) = self.rules.pages(&key, self.max) else {
            return Ok(true);
        };
        let count = self.count(key)?;
        if count.done + count.pending >= max {
            self.refused += 1;
            return Ok(false);
        }
        count.pending += 1;
        Ok(true)
    }

    /// A page of `entry`'s host is done: its place becomes a done page.
    pub fn done(&mut self, entry: &Entry) -> Result<()> {
        if let Some(key) = page_key(entry)
            && self.rules.pages(&key, self.max).is_some()
        {
            let count = self.count(key)?;
            count.pending = count.pending.saturating_sub(1);
            count.done += 1;
            count.dirty = true;
        }
        Ok(())
    }

    /// An admitted URL will not be fetched after all (robots.txt forbids it): its place is free.
    pub fn dropped(&mut self, entry: &Entry) {
        if let Some(key) = page_key(entry)
            && let Some(count) = self.live.get_mut(&key)
        {
            count.pending = count.pending.saturating_sub(1);
        }
    }

    /// The places `url`'s host's URLs hold now (queued or in flight).
    #[cfg(test)]
    pub fn pending(&self, url: &str) -> u64 {
        origin_and_key(url)
            .and_then(|(_, key)| self.live.get(&key))
            .map_or(0, |count| count.pending)
    }

    /// Writes every count that changed, and lets hosts with nothing pending leave `live`.
    pub fn save(&mut self) -> Result<()> {
        for (key, count) in self.live.iter_mut().filter(|(_, c)| c.dirty) {
            let path = self.dir.join(file_name(key));
            durable::replace_unsynced(&path, format!("{key} {}\n", count.done).as_bytes())
                .with_context(|| format!("writing {}", path.display()))?;
            count.dirty = false;
        }
        let idle: Vec<String> = self
            .live
            .iter()
            .filter(|(_, c)| c.pending == 0)
            .map(|(key, _)| key.clone())
            .collect();
        for key in idle {
            let count = self.live.remove(&key).expect("an idle live host");
            self.recent.insert(key, count.done);
        }
        Ok(())
    }

    /// Hosts whose count is in memory outside the recent cache (for tests of the bound).
    #[cfg(test)]
    fn live_hosts(&self) -> usize {
        self.live.len()
    }

    /// `key`'s count, brought into `live` from the recent cache or the disk if needed.
    fn count(&mut self, key: String) -> Result<&mut Count> {
        if !self.live.contains_key(&key) {
            let done = match self.recent.remove(key.as_str()) {
                Some(done) => done,
                None => self.load(&key)?,
            };
            self.live.insert(
                key.clone(),
                Count {
                    done,
                    ..Count::default()
                },
            );
        }
        Ok(self.live.get_mut(&key).expect("just inserted"))
    }

    /// The saved count of `key`: 0 without a file, or with another host's (a checksum
    /// collision). A damaged file is an error naming it (it is the state directory's).
    fn load(&self, key: &str) -> Result<u64> {
        let path = self.dir.join(file_name(key));
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let parsed = text
            .strip_suffix('\n')
            .and_then(|line| line.rsplit_once(' '))
            .and_then(|(saved, done)| Some((saved, done.parse::<u64>().ok()?)));
        match parsed {
            Some((saved, done)) if saved == key => Ok(done),
            Some(_) => Ok(0),
            None => anyhow::bail!("{}: not a host budget line: {text:?}", path.display()),
        }
    }
}

/// The host key `entry` counts under: none for a sitemap (sitemaps are not pages, so they use
/// no place) or a URL without an http(s) host.
fn page_key(entry: &Entry) -> Option<String> {
    match entry.sitemap {
        Some(_) => None,
        None => origin_and_key(&entry.url).map(|(_, key)| key),
    }
}

/// The file of `key`'s count: its checksum in hex.
fn file_name(key: &str) -> String {
    format!("{:016x}", crate::seen::checksum::checksum(key.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(url: &str) -> Entry {
        Entry::new(url.to_owned(), 0, 0)
    }

    fn admitted(budget: &mut Budget, url: &str, n: usize) -> usize {
        (0..n).filter(|_| budget.admit(&page(url)).unwrap()).count()
    }

    #[test]
    fn a_host_gets_max_places_and_robots_drops_give_them_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut b = Budget::open(dir.path(), 3).unwrap();
        assert_eq!(admitted(&mut b, "http://a.test/x", 5), 3);
        assert_eq!(b.refused, 2);
        // Other hosts, and other ports of the same name, have their own budget.
        assert_eq!(admitted(&mut b, "http://a.test:8080/x", 5), 3);
        assert_eq!(admitted(&mut b, "http://b.test/", 1), 1);
        b.dropped(&page("http://a.test/1"));
        assert_eq!(admitted(&mut b, "http://a.test/y", 2), 1);
        b.done(&page("http://a.test/1")).unwrap();
        assert_eq!(admitted(&mut b, "http://a.test/z", 1), 0);
        assert_eq!(b.refused, 6);
        // Not an http(s) URL: not refused.
        assert!(b.admit(&page("ftp://a.test/")).unwrap());
    }

    #[test]
    fn sitemaps_are_not_pages_and_hold_no_place() {
        let dir = tempfile::tempdir().unwrap();
        let mut b = Budget::open(dir.path(), 1).unwrap();
        let mut sitemap = page("http://a.test/sitemap.xml");
        sitemap.sitemap = Some(0);
        for _ in 0..3 {
            assert!(b.admit(&sitemap).unwrap());
            b.done(&sitemap).unwrap();
        }
        b.dropped(&sitemap);
        assert_eq!(b.pending("http://a.test/"), 0);
        // The host's one page place is still free, and then used.
        assert_eq!(admitted(&mut b, "http://a.test/x", 2), 1);
        assert_eq!(b.refused, 1);
    }

    #[test]
    fn counts_leave_memory_and_survive_a_new_run() {
        let dir = tempfile::tempdir().unwrap();
        let mut b = Budget::open(dir.path(), 2).unwrap();
        for host in 0..10_000 {
            let url = format!("http://h{host}.test/");
            assert!(b.admit(&page(&url)).unwrap());
            b.done(&page(&url)).unwrap();
            if host % 1000 == 999 {
                b.save().unwrap();
                assert_eq!(b.live_hosts(), 0, "hosts with nothing pending leave");
            }
        }
        // A host in neither `live` nor `recent` is read back from disk.
        assert_eq!(admitted(&mut b, "http://h0.test/", 3), 1);
        // A pending place is not saved: a new run admits it again (the frontier lists it).
        b.save().unwrap();
        assert_eq!(b.live_hosts(), 1, "h0 has a page pending");
        let mut again = Budget::open(dir.path(), 2).unwrap();
        assert_eq!(admitted(&mut again, "http://h0.test/", 3), 1);
        assert_eq!(admitted(&mut again, "http://h9999.test/", 3), 1);
        assert_eq!(admitted(&mut again, "http://new.test/", 3), 2);
    }

    #[test]
    fn a_damaged_count_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(file_name("a.test:80")), "garbage").unwrap();
        let mut b = Budget::open(dir.path(), 2).unwrap();
        let err = b.admit(&page("http://a.test/")).unwrap_err();
        assert!(
            format!("{err:#}").contains(&file_name("a.test:80")),
            "{err:#}"
        );
        // Another host's file under this name (a checksum collision) is no count.
        fs::write(dir.path().join(file_name("b.test:80")), "other.test:80 7\n").unwrap();
        assert!(b.admit(&page("http://b.test/")).unwrap());
    }
}
