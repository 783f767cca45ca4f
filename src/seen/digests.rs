//! The payload digests already archived, and where each payload's first capture is: what makes
//! a page whose payload was archived before a `revisit` record instead of a second copy
//! (`output::archive`, WARC 1.1 §6.7.2).
//!
//! A revisit names its original by URI and date, so "seen?" alone (the DUE's question) is not
//! enough: the store answers with the first capture. It lives under `--out`, in `digests/`:
//!
//! - `log`: one line per archived payload, `DIGEST TAB WARC-DATE TAB URI`, append-only (the
//!   payload digest as the records carry it, `sha1:` and base32). This is the truth.
//! - `index`: a 32-byte header (magic `CRWLDGST`, format version, hash id, record count, and
//!   the length of the log it covers), then 16-byte records `(checksum, offset)`, big-endian,
//!   sorted: the 8-byte checksum (`seen::checksum`) of each digest and where its line starts.
//!   It is only ever replaced whole (`state::durable`).
//!
//! In memory: the index entries of the log's lines past what `index` covers (`tail`, at most
//! `TAIL_ENTRIES`; then merged into a new `index` in one sequential pass, as the DUE merges its
//! batches), and the claims of pages in flight. A lookup probes the tail, then the index on
//! disk (interpolation search: checksums are uniform, so a few 16-byte reads), then reads the
//! log line at the offset found and compares the whole digest (a checksum collision is never
//! taken for a duplicate). Memory does not grow with the archive.
//!
//! Invariants:
//! - One line per digest: a digest is appended only when no line and no claim has it, and
//!   only one page at a time can claim it (`first_capture`, under the store's lock).
//! - A line is appended only after its capture's record reached the kernel (`archived`, called
//!   by the WARC writer after its flush); a page is reported done only after that. A claim a
//!   kill discards was never written: the page is not done, so the resumed crawl fetches it
//!   again and claims it again.
//! - A revisit is written only after its original's record (`waiting`: the writer holds a
//!   revisit whose original is claimed but not yet written), so a WARC file cut by a kill never
//!   holds a revisit without the record it refers to.
//!
//! Crash safety: the log is cut back to its last whole line on open (`durable::open_log`); the
//! index covers a prefix of the log and is renamed into place whole, so open reads the lines
//! past what it covers into the tail. An index that covers more than the log holds (a log
//! removed or cut by hand) is rebuilt from the log. A kill between a WARC flush and the log
//! append loses only the line of a page not yet done: the resume fetches that page again, finds
//! no line and archives it whole (its earlier record stays in the WARC file, as any record of a
//! page in flight at a kill does).

use crate::seen::checksum::{HASH_ID, checksum};
use crate::state::{durable, failpoint};
use anyhow::{Context, Result, bail, ensure};
use rustc_hash::FxHashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{BufReader, BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

const MAGIC: &[u8; 8] = b"CRWLDGST";
const VERSION: u32 = 1;
const HEADER_LEN: u64 = 32;
const RECORD_LEN: u64 = 16;
/// Index entries held in memory before they are merged into `index` (1 MiB of entries). A
/// merge rewrites the index: 16 bytes × digests stored, once per `TAIL_ENTRIES` new digests.
const TAIL_ENTRIES: usize = 1 << 16;

/// The first capture of a payload: what a revisit refers to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Original {
    /// The payload digest (`sha1:` and base32).
    pub digest: String,
    /// Its `WARC-Target-URI`.
    pub uri: String,
    /// Its `WARC-Date` (`YYYY-MM-DDThh:mm:ssZ`).
    pub date: String,
}

impl Original {
    fn line(&self) -> String {
        format!("{}\t{}\t{}\n", self.digest, self.date, self.uri)
    }

    fn parse(line: &str) -> Option<Original> {
        let mut fields = line.splitn(3, '\t');
        let (digest, date, uri) = (fields.next()?, fields.next()?, fields.next()?);
        Some(Original {
            digest: digest.to_owned(),
            uri: uri.to_owned(),
            date: date.to_owned(),
        })
    }
}

/// The checksum a digest is indexed by: of its base32 part, so `sha1:X` and a bare `X` (as
/// some indexes write it) are one payload.
pub fn digest_key(digest: &str) -> u64 {
    checksum(bare(digest).as_bytes())
}

fn bare(digest: &str) -> &str {
    let d = digest.trim();
    d.strip_prefix("sha1:")
        .or_else(|| d.strip_prefix("SHA1:"))
        .unwrap_or(d)
}

/// What the store holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DigestStats {
    /// Lines in the log.
    pub stored: u64,
}

/// The store, shared by the workers (who claim) and the WARC writer (who confirms).
pub struct DigestStore {
    inner: Mutex<Inner>,
}

struct Claim {
    original: Original,
    /// Its record is written (not yet flushed): its line goes out with the next `archived`.
    written: bool,
}

struct Inner {
    dir: PathBuf,
    log: File,
    log_len: u64,
    index: Index,
    /// Checksum → log offset of the lines past what `index` covers.
    tail: FxHashMap<u64, u64>,
    /// Payloads claimed by pages in flight, not yet in the log.
    claims: FxHashMap<u64, Claim>,
    /// Claims whose records are written, in write order: their lines go out at `archived`.
    written: Vec<u64>,
    stats: DigestStats,
}

impl DigestStore {
    /// Opens (or creates) the store in `dir`, repairing what a kill left (see the module doc).
    pub fn open(dir: &Path) -> Result<DigestStore> {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let log_path = dir.join("log");
        let (log, log_len) = durable::open_log(&log_path)
            .with_context(|| format!("opening {}", log_path.display()))?;
        let index_path = dir.join("index");
        durable::remove_if_present(&durable::temp_path(&index_path))?;
        let mut index = Index::open(&index_path)?;
        if index.covered > log_len {
            // The log lost lines the index points at: start the index again from the log.
            fs::remove_file(&index_path)?;
            index = Index::open(&index_path)?;
        }
        let mut inner = Inner {
            dir: dir.to_owned(),
            log,
            log_len,
            index,
            tail: FxHashMap::default(),
            claims: FxHashMap::default(),
            written: Vec::new(),
            stats: DigestStats::default(),
        };
        inner.read_tail()?;
        inner.stats.stored = inner.index.count + inner.tail.len() as u64;
        Ok(DigestStore {
            inner: Mutex::new(inner),
        })
    }

    /// The first capture of `digest` if it was archived (or is claimed by a page in flight).
    /// Otherwise, with `claim`, the page (`uri` at `date()`, its WARC date, made only then: most
    /// pages find their payload new and unclaimed or archived, and need none) becomes it: it
    /// must then be archived as a `response`, and the writer confirms it (`written`,
    /// `archived`).
    pub fn first_capture(
        &self,
        digest: &str,
        uri: &str,
        date: impl FnOnce() -> String,
        claim: bool,
    ) -> Result<Option<Original>> {
        let mut inner = self.inner.lock().unwrap();
        let key = digest_key(digest);
        if let Some(claim) = inner.claims.get(&key) {
            return Ok(same_payload(&claim.original, digest).then(|| claim.original.clone()));
        }
        match inner.lookup(key)? {
            Some(found) if same_payload(&found, digest) => return Ok(Some(found)),
            // Another payload with the same checksum (about 2⁻⁶⁴ a pair): archived whole, and
            // not recorded, the checksum being taken.
            Some(_) => return Ok(None),
            None => {}
        }
        if claim && !uri.contains(['\t', '\n']) {
            let original = Original {
                digest: digest.to_owned(),
                uri: uri.to_owned(),
                date: date(),
            };
            let claim = Claim {
                original,
                written: false,
            };
            inner.claims.insert(key, claim);
        }
        Ok(None)
    }

    /// Whether a revisit of `digest` must wait: its original is claimed but not yet written.
    pub fn original_unwritten(&self, digest: &str) -> bool {
        let inner = self.inner.lock().unwrap();
        (inner.claims.get(&digest_key(digest))).is_some_and(|c| !c.written)
    }

    /// The writer wrote a page's `response` record: if the page holds the claim on its payload,
    /// it is now the original (its line is appended at the next `archived`). Returns whether it
    /// was the claim's page.
    pub fn written(&self, digest: &str, uri: &str, date: &str) -> bool {
        let mut inner = self.inner.lock().unwrap();
        let key = digest_key(digest);
        let Some(claim) = inner.claims.get_mut(&key) else {
            return false;
        };
        let o = &claim.original;
        if claim.written || o.uri != uri || o.date != date || !same_payload(o, digest) {
            return false;
        }
        claim.written = true;
        inner.written.push(key);
        true
    }

    /// The records written so far reached the kernel: the lines of the originals among them are
    /// appended to the log (in one write, handed to the kernel before the pages are done).
    pub fn archived(&self) -> Result<()> {
        let mut inner = self.inner.lock().unwrap();
        if inner.written.is_empty() {
            return Ok(());
        }
        failpoint::hit("digest-log");
        let keys = std::mem::take(&mut inner.written);
        let originals: Vec<Original> = keys
            .iter()
            .filter_map(|key| inner.claims.remove(key).map(|c| c.original))
            .collect();
        inner.append(&originals)
    }

    /// Adds the captures listed in the CDXJ indexes of another crawl (`--dedupe-against DIR`:
    /// its `warc/` directory, or DIR itself) whose payloads are not yet known: 2xx responses
    /// with a digest, not revisits. Returns how many were added.
    pub fn import_cdxj(&self, dir: &Path) -> Result<u64> {
        let indexes = cdxj_files(dir)?;
        ensure!(
            !indexes.is_empty(),
            "--dedupe-against {}: no CDXJ index (*.cdxj) in it or in its warc/ directory; name \
             the --out directory of a crawl that archived",
            dir.display()
        );
        self.import_files(&indexes)
    }

    /// Adds the captures of this crawl's own CDXJ indexes in `warc_dir` (for a store new to an
    /// archive written without it); none is fine.
    pub fn import_own_cdxj(&self, warc_dir: &Path) -> Result<u64> {
        self.import_files(&cdxj_files(warc_dir)?)
    }

    fn import_files(&self, indexes: &[PathBuf]) -> Result<u64> {
        let mut added = 0;
        for path in indexes {
            let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
            let mut batch = Vec::new();
            for line in std::io::BufRead::lines(BufReader::new(file)) {
                let line = line.with_context(|| format!("reading {}", path.display()))?;
                if let Some(original) = capture_of_cdxj_line(&line) {
                    batch.push(original);
                }
            }
            added += self.add_unknown(batch)?;
        }
        Ok(added)
    }

    /// Appends the captures among `captures` whose payloads are unknown (the first of each).
    fn add_unknown(&self, captures: Vec<Original>) -> Result<u64> {
        let mut inner = self.inner.lock().unwrap();
        let mut new = Vec::new();
        let mut keys = rustc_hash::FxHashSet::default();
        for original in captures {
            let key = digest_key(&original.digest);
            if inner.claims.contains_key(&key) || !keys.insert(key) {
                continue;
            }
            if inner.lookup(key)?.is_none() {
                new.push(original);
            }
            if new.len() >= TAIL_ENTRIES {
                inner.append(&new)?;
                new.clear();
                keys.clear();
            }
        }
        let added = new.len() as u64;
        inner.append(&new)?;
        Ok(added)
    }

    #[cfg(test)]
    pub fn stats(&self) -> DigestStats {
        self.inner.lock().unwrap().stats
    }

    /// Whether the store holds no line (a new store, or one nothing was archived into).
    pub fn is_empty(&self) -> bool {
        self.inner.lock().unwrap().stats.stored == 0
    }
}

/// Whether an original's payload is `digest` (the checksum matched; this compares the digest).
fn same_payload(original: &Original, digest: &str) -> bool {
    bare(&original.digest).eq_ignore_ascii_case(bare(digest))
}

impl Inner {
    /// The original stored under `key`, if any (the first line with that checksum).
    fn lookup(&self, key: u64) -> Result<Option<Original>> {
        let offset = match self.tail.get(&key) {
            Some(&offset) => Some(offset),
            None => self.index.find(key)?,
        };
        offset.map(|offset| self.read_line(offset)).transpose()
    }

    /// The log line starting at `offset`.
    fn read_line(&self, offset: u64) -> Result<Original> {
        let mut buf = vec![0u8; 1024];
        let mut have = 0;
        loop {
            let n = (self.log)
                .read_at(&mut buf[have..], offset + have as u64)
                .context("reading the digest log")?;
            let end = memchr::memchr(b'\n', &buf[have..have + n]).map(|i| have + i);
            have += n;
            if let Some(end) = end {
                let line = std::str::from_utf8(&buf[..end]).ok();
                return line.and_then(Original::parse).with_context(|| {
                    format!(
                        "{}: no digest line at offset {offset}; the store is damaged (remove \
                         the digests/ directory to start it again)",
                        self.dir.join("log").display()
                    )
                });
            }
            ensure!(n > 0, "the digest log ends inside the line at {offset}");
            if have == buf.len() {
                buf.resize(buf.len() * 2, 0);
            }
        }
    }

    /// Appends `originals` to the log in one write and indexes them.
    fn append(&mut self, originals: &[Original]) -> Result<()> {
        if originals.is_empty() {
            return Ok(());
        }
        let mut text = String::new();
        let mut at = Vec::with_capacity(originals.len());
        for original in originals {
            at.push((
                digest_key(&original.digest),
                self.log_len + text.len() as u64,
            ));
            text.push_str(&original.line());
        }
        let path = self.dir.join("log");
        if let Err(e) = self.log.write_all(text.as_bytes()) {
            // Cut a partial append off, so the log still ends with a whole line.
            let _ = self.log.set_len(self.log_len);
            return Err(e).with_context(|| format!("appending to {}", path.display()));
        }
        self.log_len += text.len() as u64;
        for (key, offset) in at {
            self.tail.entry(key).or_insert(offset);
        }
        self.stats.stored += originals.len() as u64;
        if self.tail.len() >= TAIL_ENTRIES {
            self.merge_tail()?;
        }
        Ok(())
    }

    /// Reads the log past what the index covers into the tail (merging as it fills).
    fn read_tail(&mut self) -> Result<()> {
        let path = self.dir.join("log");
        let mut file = File::open(&path).with_context(|| format!("opening {}", path.display()))?;
        std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(self.index.covered))?;
        let mut reader = BufReader::new(file.take(self.log_len - self.index.covered));
        let mut offset = self.index.covered;
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = std::io::BufRead::read_until(&mut reader, b'\n', &mut line)?;
            if n == 0 {
                break;
            }
            let text = std::str::from_utf8(&line).ok();
            let Some(original) = text.and_then(|t| Original::parse(t.trim_end_matches('\n')))
            else {
                bail!(
                    "{}: line at offset {offset} is not `DIGEST TAB DATE TAB URI`; remove the \
                     digests/ directory to start the store again",
                    path.display()
                );
            };
            self.tail
                .entry(digest_key(&original.digest))
                .or_insert(offset);
            offset += n as u64;
            if self.tail.len() >= TAIL_ENTRIES {
                // Merged up to the end of this line: the index covers what it holds.
                let log_len = std::mem::replace(&mut self.log_len, offset);
                let merged = self.merge_tail();
                self.log_len = log_len;
                merged?;
            }
        }
        Ok(())
    }

    /// Merges the tail into a new index covering the whole log, replacing the old one.
    fn merge_tail(&mut self) -> Result<()> {
        let mut tail: Vec<(u64, u64)> = self.tail.drain().collect();
        tail.sort_unstable();
        let path = self.dir.join("index");
        self.index = self.index.merged(&path, &tail, self.log_len)?;
        Ok(())
    }
}

/// The sorted `(checksum, offset)` file.
struct Index {
    file: Option<File>,
    count: u64,
    covered: u64,
}

impl Index {
    fn open(path: &Path) -> Result<Index> {
        let mut file = match File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Index {
                    file: None,
                    count: 0,
                    covered: 0,
                });
            }
            Err(e) => return Err(e).with_context(|| format!("opening {}", path.display())),
        };
        let mut h = [0u8; HEADER_LEN as usize];
        file.read_exact(&mut h)
            .with_context(|| format!("{}: too short for its header", path.display()))?;
        let field = |at: usize| u64::from_le_bytes(h[at..at + 8].try_into().unwrap());
        let (version, hash) = (&h[8..12], &h[12..16]);
        ensure!(
            &h[..8] == MAGIC && version == VERSION.to_le_bytes() && hash == HASH_ID.to_le_bytes(),
            "{}: not a digest index of this version; remove it (it is rebuilt from the log)",
            path.display()
        );
        let (count, covered) = (field(16), field(24));
        let len = file.metadata()?.len();
        ensure!(
            len == HEADER_LEN + RECORD_LEN * count,
            "{}: {count} entries in the header, {len} bytes in the file; remove it (it is \
             rebuilt from the log)",
            path.display()
        );
        Ok(Index {
            file: Some(file),
            count,
            covered,
        })
    }

    fn record(&self, file: &File, i: u64) -> Result<(u64, u64)> {
        let mut r = [0u8; RECORD_LEN as usize];
        file.read_exact_at(&mut r, HEADER_LEN + RECORD_LEN * i)
            .context("reading the digest index")?;
        let key = u64::from_be_bytes(r[..8].try_into().unwrap());
        Ok((key, u64::from_be_bytes(r[8..].try_into().unwrap())))
    }

    /// The offset of `key`'s first entry: interpolation search (checksums are uniform, so a
    /// guess lands within a few entries), falling back to halving after a few probes.
    fn find(&self, key: u64) -> Result<Option<u64>> {
        let Some(file) = &self.file else {
            return Ok(None);
        };
        // Entries in [lo, hi) may hold key; every entry below lo is smaller, at or past hi larger
        // or equal: the first entry >= key is in [lo, hi].
        let (mut lo, mut hi) = (0u64, self.count);
        let (mut key_lo, mut key_hi) = (0u64, u64::MAX);
        let mut probes = 0;
        while lo < hi {
            let mid = if probes < 4 && key_hi > key_lo {
                let span = (hi - lo) as u128;
                let at = (key.saturating_sub(key_lo) as u128 * span) / (key_hi - key_lo) as u128;
                lo + (at as u64).min(hi - lo - 1)
            } else {
                lo + (hi - lo) / 2
            };
            probes += 1;
            let (k, _) = self.record(file, mid)?;
            if k < key {
                (lo, key_lo) = (mid + 1, k);
            } else {
                (hi, key_hi) = (mid, k);
            }
        }
        if lo == self.count {
            return Ok(None);
        }
        let (k, offset) = self.record(file, lo)?;
        Ok((k == key).then_some(offset))
    }

    /// Writes a new index: this one's entries and `tail` (sorted), covering `covered` bytes of
    /// the log; fsynced and renamed into place.
    fn merged(&self, path: &Path, tail: &[(u64, u64)], covered: u64) -> Result<Index> {
        let tmp = durable::temp_path(path);
        let file = File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        out.write_all(&[0; HEADER_LEN as usize])?;
        let mut old = match &self.file {
            Some(file) => {
                let mut reader = BufReader::with_capacity(1 << 20, file.try_clone()?);
                std::io::Seek::seek(&mut reader, std::io::SeekFrom::Start(HEADER_LEN))?;
                Some(reader)
            }
            None => None,
        };
        let mut remaining = self.count;
        let mut next_old = || -> Result<Option<(u64, u64)>> {
            let Some(reader) = old.as_mut().filter(|_| remaining > 0) else {
                return Ok(None);
            };
            remaining -= 1;
            let mut r = [0u8; RECORD_LEN as usize];
            reader.read_exact(&mut r)?;
            let key = u64::from_be_bytes(r[..8].try_into().unwrap());
            Ok(Some((key, u64::from_be_bytes(r[8..].try_into().unwrap()))))
        };
        let mut count = 0u64;
        let mut emit = |(key, offset): (u64, u64), out: &mut BufWriter<File>| {
            count += 1;
            out.write_all(&key.to_be_bytes())?;
            out.write_all(&offset.to_be_bytes())
        };
        let mut a = next_old()?;
        let mut new = tail.iter().copied().peekable();
        loop {
            match (a, new.peek().copied()) {
                (Some(x), Some(y)) if x <= y => {
                    emit(x, &mut out)?;
                    a = next_old()?;
                }
                (_, Some(y)) => {
                    emit(y, &mut out)?;
                    new.next();
                }
                (Some(x), None) => {
                    emit(x, &mut out)?;
                    a = next_old()?;
                }
                (None, None) => break,
            }
        }
        let mut file = out.into_inner().map_err(|e| e.into_error())?;
        let mut h = [0u8; HEADER_LEN as usize];
        h[..8].copy_from_slice(MAGIC);
        h[8..12].copy_from_slice(&VERSION.to_le_bytes());
        h[12..16].copy_from_slice(&HASH_ID.to_le_bytes());
        h[16..24].copy_from_slice(&count.to_le_bytes());
        h[24..32].copy_from_slice(&covered.to_le_bytes());
        std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(0))?;
        file.write_all(&h)?;
        file.sync_all()
            .with_context(|| format!("syncing {}", tmp.display()))?;
        drop(file);
        failpoint::hit("digest-index");
        durable::commit(&tmp, path).with_context(|| format!("replacing {}", path.display()))?;
        let file = OpenOptions::new().read(true).open(path)?;
        Ok(Index {
            file: Some(file),
            count,
            covered,
        })
    }
}

/// The CDXJ index files of a crawl's `--out` (its `warc/`), or of the directory itself.
fn cdxj_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for d in [dir.join("warc"), dir.to_owned()] {
        let entries = match fs::read_dir(&d) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("reading {}", d.display())),
        };
        for entry in entries {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "cdxj") && path.is_file() {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// The capture of a CDXJ line (`SURT-key timestamp {json}`) that can be an original: a 2xx
/// response (not `warc/revisit`) with a digest.
fn capture_of_cdxj_line(line: &str) -> Option<Original> {
    let mut parts = line.splitn(3, ' ');
    let (_key, timestamp, json) = (parts.next()?, parts.next()?, parts.next()?);
    let fields: serde_json::Map<String, serde_json::Value> = serde_json::from_str(json).ok()?;
    let text = |name: &str| fields.get(name).and_then(|v| v.as_str());
    let status = text("status")?;
    if text("mime") == Some("warc/revisit") || !status.starts_with('2') {
        return None;
    }
    let (uri, digest) = (text("url")?, text("digest")?);
    if uri.contains(['\t', '\n']) || digest.is_empty() {
        return None;
    }
    let t = timestamp.as_bytes();
    if t.len() < 14 || !t[..14].iter().all(u8::is_ascii_digit) {
        return None;
    }
    let date = format!(
        "{}-{}-{}T{}:{}:{}Z",
        &timestamp[..4],
        &timestamp[4..6],
        &timestamp[6..8],
        &timestamp[8..10],
        &timestamp[10..12],
        &timestamp[12..14]
    );
    let digest = match digest.contains(':') {
        true => digest.to_owned(),
        false => format!("sha1:{digest}"),
    };
    Some(Original {
        digest,
        uri: uri.to_owned(),
        date,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(i: u64) -> String {
        format!("sha1:{:032X}", i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }

    /// Claims, writes and archives page `i` as the original of its payload.
    fn archive(store: &DigestStore, i: u64) {
        let (d, uri, date) = (digest(i), format!("http://h/{i}"), "2026-01-01T00:00:00Z");
        assert_eq!(
            store
                .first_capture(&d, &uri, || date.to_owned(), true)
                .unwrap(),
            None
        );
        assert!(store.written(&d, &uri, date));
        store.archived().unwrap();
    }

    #[test]
    fn the_first_capture_is_found_from_memory_the_index_and_after_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let n = TAIL_ENTRIES as u64 + 500;
        {
            let store = DigestStore::open(dir.path()).unwrap();
            for i in 0..n {
                archive(&store, i);
            }
            assert_eq!(store.stats().stored, n);
        }
        let store = DigestStore::open(dir.path()).unwrap();
        assert_eq!(store.stats().stored, n);
        for i in [0, 1, 777, TAIL_ENTRIES as u64 - 1, n - 1] {
            let found = store.first_capture(&digest(i), "http://other/", || "x".to_owned(), true);
            let found = found.unwrap().expect("stored");
            assert_eq!(found.uri, format!("http://h/{i}"));
            assert_eq!(found.date, "2026-01-01T00:00:00Z");
        }
        assert_eq!(
            store
                .first_capture(&digest(n), "u", || "d".to_owned(), false)
                .unwrap(),
            None
        );
    }

    #[test]
    fn a_claim_is_seen_at_once_and_logged_only_once_written_and_archived() {
        let dir = tempfile::tempdir().unwrap();
        let store = DigestStore::open(dir.path()).unwrap();
        let d = digest(1);
        assert_eq!(
            store
                .first_capture(&d, "http://a/", || "D1".to_owned(), true)
                .unwrap(),
            None
        );
        assert!(store.original_unwritten(&d));
        // A second page with the payload, while the first is in flight: a duplicate of it.
        let second = store
            .first_capture(&d, "http://b/", || "D2".to_owned(), true)
            .unwrap();
        assert_eq!(second.unwrap().uri, "http://a/");
        assert!(
            !store.written(&d, "http://b/", "D2"),
            "not the claim's page"
        );
        assert!(store.written(&d, "http://a/", "D1"));
        assert!(!store.original_unwritten(&d));
        // A kill before `archived`: nothing was logged, so the page is claimed again.
        let reopened = DigestStore::open(dir.path()).unwrap();
        assert_eq!(
            reopened
                .first_capture(&d, "u", || "d".to_owned(), false)
                .unwrap(),
            None
        );
        store.archived().unwrap();
        let reopened = DigestStore::open(dir.path()).unwrap();
        let found = reopened
            .first_capture(&d, "u", || "d".to_owned(), false)
            .unwrap();
        assert_eq!(found.unwrap().date, "D1");
        assert_eq!(
            fs::read_to_string(dir.path().join("log"))
                .unwrap()
                .lines()
                .count(),
            1
        );
    }

    #[test]
    fn a_torn_line_is_cut_and_a_lost_log_rebuilds_the_index() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = DigestStore::open(dir.path()).unwrap();
            archive(&store, 1);
        }
        let mut log = OpenOptions::new()
            .append(true)
            .open(dir.path().join("log"))
            .unwrap();
        log.write_all(b"sha1:TORN\t2026").unwrap();
        let store = DigestStore::open(dir.path()).unwrap();
        assert_eq!(store.stats().stored, 1);
        archive(&store, 2);
        drop(store);
        // An index covering more than the log holds is rebuilt from the log.
        {
            let store = DigestStore::open(dir.path()).unwrap();
            let mut inner = store.inner.lock().unwrap();
            inner.merge_tail().unwrap();
        }
        fs::write(dir.path().join("log"), "").unwrap();
        let store = DigestStore::open(dir.path()).unwrap();
        assert_eq!(store.stats().stored, 0);
        assert_eq!(
            store
                .first_capture(&digest(1), "u", || "d".to_owned(), false)
                .unwrap(),
            None
        );
    }

    #[test]
    fn cdxj_lines_give_2xx_responses_with_their_dates() {
        let line = r#"com,example)/ 20260102030405 {"url": "http://example.com/", "mime": "text/html", "status": "200", "digest": "sha1:ABC", "length": "1", "offset": "0", "filename": "f"}"#;
        let got = capture_of_cdxj_line(line).unwrap();
        assert_eq!(got.date, "2026-01-02T03:04:05Z");
        assert_eq!(
            (got.uri.as_str(), got.digest.as_str()),
            ("http://example.com/", "sha1:ABC")
        );
        let revisit = line.replace("text/html", "warc/revisit");
        assert_eq!(capture_of_cdxj_line(&revisit), None);
        assert_eq!(
            capture_of_cdxj_line(&line.replace("\"200\"", "\"404\"")),
            None
        );
        assert_eq!(digest_key("sha1:ABC"), digest_key("ABC"));
    }
}
