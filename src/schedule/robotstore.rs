//! robots.txt answers on disk, for hosts that left the scheduler's memory and for resumed
//! crawls: two files in `DIR/robots/`, and no file per host.
//!
//! - `answers`: an append-only log of answers as fetched, each a head line
//!   `STATUS UNIX_SECONDS BODY_LENGTH ORIGIN` (status 0: no answer) and the body's first
//!   512 KiB (RFC 9309 asks parsers to read at least 500 KiB).
//! - `index`: a hash table on disk, open addressing with linear probing, of 16-byte slots
//!   `CHECKSUM OFFSET+1` (little-endian; all zero is an empty slot) from an origin's XXH3 to
//!   its latest answer in `answers`. It is at most half full: past that it is rebuilt with
//!   twice the slots into `index.tmp`, renamed over `index`.
//!
//! Memory does not grow with hosts: a lookup is one 16-byte read per probe and one read of the
//! answer; only the file lengths are held. A file per host was one inode created and one
//! rename per host, the largest cost of a crawl over thousands of small hosts (#12).
//!
//! Crash safety: an answer is appended before its slot points to it, so a kill leaves at worst
//! an answer no slot names (never read). Nothing is fsynced: this is a cache, and whatever a
//! power cut tears (a slot pointing to garbage, a checksum collision) fails the origin check
//! or the head's parse and is no answer: the host's robots.txt is fetched again.
//!
//! Compaction: a later answer for an origin (a re-fetch after 24 h, an unreachable host asked
//! again every 5 minutes) leaves the earlier one dead in the log. The bytes of the answers the
//! index names (`live`) are counted at open and kept up to date; once the log is more than
//! twice that, it is rewritten with only those answers, in four steps, so that no index ever
//! names offsets of a log it was not built for:
//! 1. the live answers are copied into `answers.tmp` and a new index naming their new offsets
//!    is written into `index.tmp`;
//! 2. `index` is removed and the directory fsynced (from here a kill leaves no index: an empty
//!    store, every host's robots.txt fetched again, never a stale offset read);
//! 3. `answers.tmp` is renamed over `answers`;
//! 4. `index.tmp` is renamed over `index`.
//!
//! On open, an index that is missing is an empty one (and the orphaned log is compacted to
//! nothing); leftover `.tmp` files are overwritten by the next compaction. Each compaction
//! copies at most as many bytes as died since the last one, so its cost per answer saved is
//! constant.

use crate::schedule::robots::RobotsRules;
use crate::state::durable;
use anyhow::{Context, Result};
use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use url::Url;

/// How much of a robots.txt body is kept.
const ROBOTS_KEPT: usize = 512 * 1024;
/// Slots of a new index (64 KiB).
const FIRST_SLOTS: u64 = 4096;
const SLOT: u64 = 16;
/// A head line is far shorter: an origin is a scheme, a host name of at most 253 bytes and a
/// port.
const HEAD_MAX: usize = 1024;

/// Which answers a rebuilt index keeps.
type Keep = dyn Fn(&[u8]) -> bool;

/// The robots.txt answers of a crawl directory; clones share the files.
#[derive(Clone)]
pub struct RobotsStore {
    files: Arc<Mutex<Files>>,
    /// The user-agent token the rules are read for.
    token: String,
}

struct Files {
    dir: PathBuf,
    answers: File,
    /// Where the next answer goes (the log's length).
    end: u64,
    index: File,
    slots: u64,
    /// Slots in use.
    used: u64,
    /// Bytes of the answers the index names (the rest of the log is dead).
    live: u64,
}

impl RobotsStore {
    /// Opens (creating) the store in `dir`, for rules read as `token`.
    pub fn open(dir: &Path, token: &str) -> Result<RobotsStore> {
        let files = Files::open(dir).with_context(|| format!("opening {}", dir.display()))?;
        Ok(RobotsStore {
            files: Arc::new(Mutex::new(files)),
            token: token.to_owned(),
        })
    }

    /// Records a robots.txt answer for `origin` (`status` 0 when there was none); a later
    /// answer replaces an earlier one.
    pub fn save(&self, origin: &str, status: u16, body: &[u8]) -> Result<()> {
        let body = &body[..body.len().min(ROBOTS_KEPT)];
        let head = format!(
            "{status} {} {} {origin}\n",
            unix_secs(SystemTime::now()),
            body.len()
        );
        let mut files = self.files.lock().unwrap();
        let dir = files.dir.clone();
        files
            .insert(checksum(origin), head.as_bytes(), body)
            .with_context(|| format!("writing a robots.txt answer in {}", dir.display()))
    }

    /// The answer `save` recorded for `origin`, parsed, with the instant it was fetched, if it
    /// is still fresh (24 hours; 5 minutes for an unavailable file). A missing or damaged
    /// answer is none: the host's robots.txt is fetched again.
    pub fn load(&self, origin: &str) -> Option<(RobotsRules, Instant)> {
        let answer = self.files.lock().unwrap().find(checksum(origin))?;
        let (status, fetched, saved_origin, body) = parse(&answer)?;
        if saved_origin.origin().ascii_serialization() != origin {
            return None; // a checksum collision: not this host's answer
        }
        let rules = rules_of(&self.token, status, body);
        let ttl = if rules.disallows_everything() {
            crate::schedule::politeness::ROBOTS_RETRY
        } else {
            crate::schedule::politeness::ROBOTS_TTL
        };
        let age = SystemTime::now()
            .duration_since(fetched)
            .unwrap_or_default();
        let at = Instant::now().checked_sub(age)?;
        (age < ttl).then_some((rules, at))
    }
}

/// Forgets the answers that were not had (no answer, a 5xx: "unreachable", which blocks the
/// host for `ROBOTS_RETRY`) and damaged ones, so that a new crawl generation (a recrawl) asks
/// those hosts again at once; answers that were had stay while fresh. The index is rebuilt
/// without them (the log keeps their bytes).
pub fn forget_unreachable(dir: &Path) -> Result<()> {
    if !dir.join("index").exists() {
        return Ok(());
    }
    let mut files = Files::open(dir).with_context(|| format!("opening {}", dir.display()))?;
    let slots = files.slots;
    files
        .rebuild(
            slots,
            Some(&|answer: &[u8]| {
                parse(answer).is_some_and(|(status, ..)| {
                    !rules_of("crawl", status, b"").disallows_everything()
                })
            }),
        )
        .with_context(|| format!("rebuilding {}", dir.join("index").display()))
}

impl Files {
    fn open(dir: &Path) -> std::io::Result<Files> {
        fs::create_dir_all(dir)?;
        let open = |name: &str| {
            OpenOptions::new()
                .read(true)
                .append(name == "answers")
                .write(true)
                .create(true)
                .truncate(false)
                .open(dir.join(name))
        };
        let answers = open("answers")?;
        let end = answers.metadata()?.len();
        let index = open("index")?;
        let mut slots = index.metadata()?.len() / SLOT;
        if slots == 0 {
            slots = FIRST_SLOTS;
            index.set_len(slots * SLOT)?;
        }
        let mut files = Files {
            dir: dir.to_owned(),
            answers,
            end,
            index,
            slots,
            used: 0,
            live: 0,
        };
        (files.used, files.live) = files.count_used()?;
        files.compact_if_mostly_dead()?;
        Ok(files)
    }

    /// Slots in use, and the bytes of the answers they name (one read of a head each).
    fn count_used(&self) -> std::io::Result<(u64, u64)> {
        let (mut used, mut live) = (0, 0);
        self.each_slot(|_, offset| {
            used += 1;
            live += self.length_at(offset).unwrap_or(0);
            Ok(())
        })?;
        Ok((used, live))
    }

    /// Calls `f(hash, offset)` for every slot in use, reading the index in 64 KiB chunks.
    fn each_slot(&self, mut f: impl FnMut(u64, u64) -> std::io::Result<()>) -> std::io::Result<()> {
        let mut chunk = vec![0u8; 4096 * SLOT as usize];
        let mut at = 0;
        while at < self.slots * SLOT {
            let n = chunk.len().min((self.slots * SLOT - at) as usize);
            self.index.read_exact_at(&mut chunk[..n], at)?;
            for slot in chunk[..n].chunks_exact(SLOT as usize) {
                let (hash, offset) = decode(slot);
                if offset != 0 {
                    f(hash, offset - 1)?;
                }
            }
            at += n as u64;
        }
        Ok(())
    }

    fn insert(&mut self, hash: u64, head: &[u8], body: &[u8]) -> std::io::Result<()> {
        if 2 * (self.used + 1) > self.slots {
            self.rebuild(2 * self.slots, None)?;
        }
        let offset = self.end;
        let mut record = Vec::with_capacity(head.len() + body.len());
        record.extend_from_slice(head);
        record.extend_from_slice(body);
        // The answer first, then the slot naming it (see the module doc).
        self.answers.write_all(&record)?;
        self.end += record.len() as u64;
        self.live += record.len() as u64;
        match put(&self.index, self.slots, hash, offset)? {
            None => self.used += 1,
            Some(old) => self.live -= self.length_at(old).unwrap_or(0).min(self.live),
        }
        self.compact_if_mostly_dead()
    }

    /// Rewrites the log with only its live answers once it is more than twice their bytes.
    fn compact_if_mostly_dead(&mut self) -> std::io::Result<()> {
        if self.end > 2 * self.live {
            self.compact()?;
        }
        Ok(())
    }

    /// The log rewritten with only the answers the index names, in the module doc's four steps.
    fn compact(&mut self) -> std::io::Result<()> {
        let answers_tmp = self.dir.join("answers.tmp");
        let index_tmp = self.dir.join("index.tmp");
        // Step 1: the live answers and an index of their new offsets, beside the old ones.
        durable::remove_if_present(&answers_tmp)?;
        let new_answers = OpenOptions::new()
            .read(true)
            .append(true)
            .create_new(true)
            .open(&answers_tmp)?;
        let new_index = empty_index(&index_tmp, self.slots)?;
        let mut out = std::io::BufWriter::new(&new_answers);
        let (mut end, mut used) = (0u64, 0u64);
        self.each_slot(|hash, offset| {
            // A damaged answer (never readable) is dropped with its slot.
            if let Some(answer) = self.answer_at(offset) {
                out.write_all(&answer)?;
                if put(&new_index, self.slots, hash, end)?.is_none() {
                    used += 1;
                }
                end += answer.len() as u64;
            }
            Ok(())
        })?;
        out.flush()?;
        drop(out);
        // Step 2: no index names the old log any more, durably before the new log takes its
        // name.
        durable::remove_if_present(&self.dir.join("index"))?;
        durable::sync_dir(&self.dir)?;
        // Steps 3 and 4.
        fs::rename(&answers_tmp, self.dir.join("answers"))?;
        fs::rename(&index_tmp, self.dir.join("index"))?;
        self.answers = new_answers;
        self.index = new_index;
        self.end = end;
        self.live = end;
        self.used = used;
        Ok(())
    }

    /// The latest answer recorded under `hash`, as stored (head line and body).
    fn find(&self, hash: u64) -> Option<Vec<u8>> {
        let offset = probe(&self.index, self.slots, hash).ok()?.1?;
        self.answer_at(offset)
    }

    /// The answer at `offset` of the log, if its head parses and its body is all there.
    fn answer_at(&self, offset: u64) -> Option<Vec<u8>> {
        let mut answer = vec![0u8; self.length_at(offset)? as usize];
        self.answers.read_exact_at(&mut answer, offset).ok()?;
        Some(answer)
    }

    /// The length of the answer at `offset` (head line and body), if its head parses and its
    /// body is all there.
    fn length_at(&self, offset: u64) -> Option<u64> {
        let mut head = vec![0u8; HEAD_MAX.min((self.end - offset.min(self.end)) as usize)];
        self.answers.read_exact_at(&mut head, offset).ok()?;
        let line = head.iter().position(|&b| b == b'\n')?;
        let length: usize = std::str::from_utf8(&head[..line])
            .ok()?
            .split(' ')
            .nth(2)?
            .parse()
            .ok()?;
        let whole = (line + 1 + length) as u64;
        (length <= ROBOTS_KEPT && offset + whole <= self.end).then_some(whole)
    }

    /// Writes an index of `slots` slots holding the answers `keep` accepts (all without it)
    /// into `index.tmp`, then renames it over `index` (a kill before the rename leaves the old
    /// index whole).
    fn rebuild(&mut self, slots: u64, keep: Option<&Keep>) -> std::io::Result<()> {
        let tmp_path = self.dir.join("index.tmp");
        let tmp = empty_index(&tmp_path, slots)?;
        let (mut used, mut live) = (0, 0);
        self.each_slot(|hash, offset| {
            let kept = match keep {
                None => true,
                Some(keep) => self.answer_at(offset).is_some_and(|answer| keep(&answer)),
            };
            if kept && put(&tmp, slots, hash, offset)?.is_none() {
                used += 1;
                live += self.length_at(offset).unwrap_or(0);
            }
            Ok(())
        })?;
        fs::rename(&tmp_path, self.dir.join("index"))?;
        self.index = tmp;
        self.slots = slots;
        self.used = used;
        self.live = live;
        self.compact_if_mostly_dead()
    }
}

/// A new index file of `slots` empty slots at `path` (replacing what was there).
fn empty_index(path: &Path, slots: u64) -> std::io::Result<File> {
    let index = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    index.set_len(slots * SLOT)?;
    Ok(index)
}

/// Points `hash`'s slot at `offset`; the offset it named before (none: it took an empty slot).
fn put(index: &File, slots: u64, hash: u64, offset: u64) -> std::io::Result<Option<u64>> {
    let (slot, old) = probe(index, slots, hash)?;
    let mut bytes = [0u8; SLOT as usize];
    bytes[..8].copy_from_slice(&hash.to_le_bytes());
    bytes[8..].copy_from_slice(&(offset + 1).to_le_bytes());
    index.write_all_at(&bytes, slot * SLOT)?;
    Ok(old)
}

/// The slot holding `hash`, or the empty slot where it would go, and the offset it holds.
fn probe(index: &File, slots: u64, hash: u64) -> std::io::Result<(u64, Option<u64>)> {
    let mut slot = hash % slots;
    let mut bytes = [0u8; SLOT as usize];
    for _ in 0..slots {
        index.read_exact_at(&mut bytes, slot * SLOT)?;
        let (found, offset) = decode(&bytes);
        if offset == 0 {
            return Ok((slot, None));
        }
        if found == hash {
            return Ok((slot, Some(offset - 1)));
        }
        slot = (slot + 1) % slots;
    }
    Err(std::io::Error::new(ErrorKind::InvalidData, "index full"))
}

fn decode(slot: &[u8]) -> (u64, u64) {
    let word = |i: usize| u64::from_le_bytes(slot[i..i + 8].try_into().expect("8 bytes"));
    (word(0), word(8))
}

fn checksum(origin: &str) -> u64 {
    crate::seen::checksum::checksum(origin.as_bytes())
}

fn rules_of(token: &str, status: u16, body: &[u8]) -> RobotsRules {
    if status == 0 {
        RobotsRules::unreachable(token)
    } else {
        RobotsRules::from_response(token, status, body)
    }
}

/// An answer's status, fetch time, origin and body.
fn parse(answer: &[u8]) -> Option<(u16, SystemTime, Url, &[u8])> {
    let end = answer.iter().position(|&b| b == b'\n')?;
    let head = std::str::from_utf8(&answer[..end]).ok()?;
    let mut parts = head.splitn(4, ' ');
    let status = parts.next()?.parse().ok()?;
    let secs: u64 = parts.next()?.parse().ok()?;
    let _length = parts.next()?;
    let origin = Url::parse(parts.next()?).ok()?;
    Some((
        status,
        UNIX_EPOCH + Duration::from_secs(secs),
        origin,
        &answer[end + 1..],
    ))
}

fn unix_secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(store: &RobotsStore, origin: &str, path: &str) -> Option<bool> {
        Some(store.load(origin)?.0.is_allowed(path))
    }

    #[test]
    fn answers_come_back_after_reopening_and_the_latest_wins() {
        let dir = tempfile::tempdir().unwrap();
        let store = RobotsStore::open(dir.path(), "crawl").unwrap();
        store
            .save("http://a.test", 200, b"User-agent: *\nDisallow: /a\n")
            .unwrap();
        store
            .save("http://b.test:8080", 200, b"User-agent: *\nDisallow: /b\n")
            .unwrap();
        assert_eq!(allowed(&store, "http://a.test", "/a"), Some(false));
        assert_eq!(allowed(&store, "http://c.test", "/a"), None, "never saved");
        store
            .save("http://a.test", 200, b"User-agent: *\nDisallow: /z\n")
            .unwrap();
        drop(store);
        let store = RobotsStore::open(dir.path(), "crawl").unwrap();
        assert_eq!(allowed(&store, "http://a.test", "/a"), Some(true), "latest");
        assert_eq!(allowed(&store, "http://a.test", "/z"), Some(false));
        assert_eq!(allowed(&store, "http://b.test:8080", "/b"), Some(false));
        let files: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(files.len(), 2, "answers and index, no file per host");
    }

    /// Thousands of hosts: the index grows past its first size (rebuilt twice) and every
    /// answer is found again, in this run and the next.
    #[test]
    fn the_index_grows_and_keeps_every_host() {
        let dir = tempfile::tempdir().unwrap();
        let store = RobotsStore::open(dir.path(), "crawl").unwrap();
        let hosts = 3 * FIRST_SLOTS;
        for i in 0..hosts {
            let body = format!("User-agent: *\nDisallow: /{i}\n");
            store
                .save(&format!("http://h{i}.test"), 200, body.as_bytes())
                .unwrap();
        }
        assert_eq!(store.files.lock().unwrap().slots, 8 * FIRST_SLOTS);
        drop(store);
        let store = RobotsStore::open(dir.path(), "crawl").unwrap();
        assert_eq!(store.files.lock().unwrap().used, hosts);
        for i in 0..hosts {
            let origin = format!("http://h{i}.test");
            assert_eq!(allowed(&store, &origin, &format!("/{i}")), Some(false));
            assert_eq!(allowed(&store, &origin, "/other"), Some(true));
        }
    }

    #[test]
    fn a_torn_or_foreign_answer_is_no_answer() {
        let dir = tempfile::tempdir().unwrap();
        let store = RobotsStore::open(dir.path(), "crawl").unwrap();
        store.save("http://a.test", 404, b"").unwrap();
        // A slot of b.test's checksum pointing to a.test's answer: a collision.
        {
            let files = store.files.lock().unwrap();
            put(&files.index, files.slots, checksum("http://b.test"), 0).unwrap();
        }
        assert!(store.load("http://a.test").is_some());
        assert!(store.load("http://b.test").is_none());
        // The log cut short (a power cut): the answer's body is gone.
        store
            .save("http://c.test", 200, b"User-agent: *\nDisallow: /\n")
            .unwrap();
        drop(store);
        let answers = dir.path().join("answers");
        let len = fs::metadata(&answers).unwrap().len();
        File::options()
            .write(true)
            .open(&answers)
            .unwrap()
            .set_len(len - 5)
            .unwrap();
        let store = RobotsStore::open(dir.path(), "crawl").unwrap();
        assert!(store.load("http://c.test").is_none());
        assert!(store.load("http://a.test").is_some());
    }

    #[test]
    fn forgetting_the_unreachable_keeps_the_answers_that_were_had() {
        let dir = tempfile::tempdir().unwrap();
        let store = RobotsStore::open(dir.path(), "crawl").unwrap();
        store.save("http://gone.test", 0, b"").unwrap();
        store.save("http://down.test", 503, b"").unwrap();
        store.save("http://none.test", 404, b"").unwrap();
        store
            .save("http://rules.test", 200, b"User-agent: *\nDisallow: /x\n")
            .unwrap();
        drop(store);
        forget_unreachable(dir.path()).unwrap();
        let store = RobotsStore::open(dir.path(), "crawl").unwrap();
        assert!(store.load("http://gone.test").is_none());
        assert!(store.load("http://down.test").is_none());
        assert_eq!(allowed(&store, "http://none.test", "/x"), Some(true));
        assert_eq!(allowed(&store, "http://rules.test", "/x"), Some(false));
        assert!(!dir.path().join("index.tmp").exists());
    }

    /// Bytes of the log the index names, answer by answer.
    fn live_bytes(store: &RobotsStore) -> u64 {
        let files = store.files.lock().unwrap();
        let mut live = 0;
        files
            .each_slot(|_, offset| {
                live += files.answer_at(offset).unwrap().len() as u64;
                Ok(())
            })
            .unwrap();
        assert_eq!(live, files.live, "the running count");
        live
    }

    /// An unreachable host asked again every 5 minutes over a long crawl: its superseded
    /// answers do not stay in the log for good.
    #[test]
    fn superseded_answers_are_compacted_away() {
        let dir = tempfile::tempdir().unwrap();
        let store = RobotsStore::open(dir.path(), "crawl").unwrap();
        let rules = b"User-agent: *\nDisallow: /private\n";
        for i in 0..50 {
            store
                .save(&format!("http://kept{i}.test"), 200, rules)
                .unwrap();
        }
        let log = || fs::metadata(dir.path().join("answers")).unwrap().len();
        let mut largest = 0;
        for round in 0..2_000 {
            store.save("http://down.test", 0, b"").unwrap();
            store
                .save(
                    "http://moving.test",
                    200,
                    format!("User-agent: *\nDisallow: /{round}\n").as_bytes(),
                )
                .unwrap();
            largest = largest.max(log());
            assert!(log() <= 2 * live_bytes(&store), "round {round}");
        }
        assert!(largest < 3 * live_bytes(&store), "{largest} bytes at most");
        assert!(!dir.path().join("answers.tmp").exists());
        assert!(!dir.path().join("index.tmp").exists());
        for store in [
            store.clone(),
            RobotsStore::open(dir.path(), "crawl").unwrap(),
        ] {
            for i in 0..50 {
                let origin = format!("http://kept{i}.test");
                assert_eq!(allowed(&store, &origin, "/private"), Some(false));
            }
            assert_eq!(allowed(&store, "http://down.test", "/"), Some(false));
            assert_eq!(allowed(&store, "http://moving.test", "/1999"), Some(false));
            assert_eq!(allowed(&store, "http://moving.test", "/1998"), Some(true));
            assert_eq!(store.files.lock().unwrap().used, 52);
        }
    }

    /// A kill inside a compaction, after step 2 (the index removed) and before step 4, with
    /// the log renamed or not: the store opens empty (every host asked again), never reading
    /// an answer at an offset of the other log, and works on.
    #[test]
    fn a_compaction_killed_midway_leaves_an_empty_store() {
        for renamed in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let store = RobotsStore::open(dir.path(), "crawl").unwrap();
            for i in 0..20 {
                store
                    .save(
                        &format!("http://h{i}.test"),
                        200,
                        b"User-agent: *\nDisallow: /x\n",
                    )
                    .unwrap();
            }
            // Step 1 by hand: a compacted copy, as if h0..h9 had been superseded.
            let old = fs::read(dir.path().join("answers")).unwrap();
            let cut = old.len() / 2;
            fs::write(dir.path().join("answers.tmp"), &old[cut..]).unwrap();
            fs::copy(dir.path().join("index"), dir.path().join("index.tmp")).unwrap();
            drop(store);
            fs::remove_file(dir.path().join("index")).unwrap(); // step 2
            if renamed {
                fs::rename(dir.path().join("answers.tmp"), dir.path().join("answers")).unwrap();
            }
            let store = RobotsStore::open(dir.path(), "crawl").unwrap();
            for i in 0..20 {
                assert!(store.load(&format!("http://h{i}.test")).is_none(), "h{i}");
            }
            assert_eq!(fs::metadata(dir.path().join("answers")).unwrap().len(), 0);
            store
                .save("http://h3.test", 200, b"User-agent: *\nDisallow: /y\n")
                .unwrap();
            drop(store);
            let store = RobotsStore::open(dir.path(), "crawl").unwrap();
            assert_eq!(allowed(&store, "http://h3.test", "/y"), Some(false));
            assert_eq!(allowed(&store, "http://h3.test", "/x"), Some(true));
        }
    }
}
