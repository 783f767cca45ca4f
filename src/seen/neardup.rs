//! The near-duplicate index: every signed page of the crawl (`url::minhash` signatures), on
//! disk beside the DUE, searched by locality-sensitive hashing (Indyk and Motwani 1998; Broder's
//! MinHash bands). A page is a near-duplicate when some page recorded before it has an
//! estimated resemblance of at least the threshold (`--near-duplicates-threshold`).
//!
//! Files, in `DIR/neardup/`:
//! - `pages`: the signatures, append-only, one fixed record of [`RECORD`] bytes per page, by
//!   page number: [`HASHES`] 16-bit values, where the page's URL is in `urls`, and the number
//!   of the first page of its cluster.
//! - `urls`: the pages' URLs, append-only, one a line.
//! - runs `run.N`: sorted files of (band key, page number) entries, [`ENTRY`] bytes each, big
//!   endian so byte order is numeric order; and `index`, the list of the runs and how many
//!   pages they hold (replaced whole, `state::durable`).
//!
//! Bands: the first `BANDS × ROWS` values of a signature make [`BANDS`] band keys (a hash of
//! each band's [`ROWS`] values and its number). Two pages of resemblance `s` share a band key
//! with probability `1 - (1 - s^8)^16`: 0.9999 at 0.9, 0.99 at 0.85, 0.95 at 0.8, 0.06 at 0.5.
//! The pages sharing one are the candidates; each is verified by the share of all [`HASHES`]
//! values the two signatures agree on, earliest page first, and the first at or above the
//! threshold is the earlier page the note names; when that is the same URL (a page fetched again
//! on a resume or a recrawl) the page is the original of its cluster and no near-duplicate. At most [`MAX_PER_KEY`] pages are read per band key and
//! [`MAX_VERIFIED`] verified per page, so a page costs bounded work however large a cluster.
//!
//! Another crawl (`--dedupe-against DIR`, [`NearDupIndex::add_earlier`]): its index in
//! `DIR/neardup` is opened read-only and its pages count as crawled before this crawl's: they
//! are searched first, and a page near one of them names that crawl's URL (and its cluster's
//! first page there). Its records stay in its files; this crawl holds its runs' fences or
//! entries and the band keys of its pages past its last run, as for its own (bounded alike).
//!
//! Memory, nearly flat in the number of pages: the band keys of at most [`BATCH_PAGES`] recent
//! pages in a hash map (`Batch`: a key's first page inline, 16 bytes, no allocation per key);
//! past it they are sorted into a new run, and runs are merged while the newer is at least half
//! the size of the older (a log-structured merge: at most log2(pages / `BATCH_PAGES`) runs, each
//! entry rewritten at most that many times; each run more than twice the next newer). A run of
//! at most [`RESIDENT_BATCHES`] batches' entries (3 MiB) is held in memory as well as on disk
//! (the file stays what `open` reads) and looked up there by interpolation search
//! (`first_at_or_above_each`), with no system call: these are the newest runs, at most 4 batches'
//! entries together in this merge order (3 MiB; a unit test holds it), and a merge reads its run
//! back only once the two it replaces are dropped. A crawl of fewer than 5 batches of signed
//! pages (20,480) thus never reads a run from disk. A lookup in an older run reads one block of
//! [`STRIDE`] entries (1.5 KiB), found by the run's fence keys (every `STRIDE`th key, 8 bytes
//! per 1,536 bytes of run) — the one part that grows with the crawl, 16 entries × 8 / 128 = 1
//! byte a page. The records of the newest [`CACHED_RECORDS`] pages, and of those read since,
//! are kept too (2.1 MiB, whatever the crawl's size): a page's candidates are mostly pages of
//! its own templates crawled near it, verified then without a `pread` each.
//!
//! Crash safety, in the DUE's style: `pages` and `urls` are handed to the kernel before a check
//! returns; a run is written, fsynced and complete before `index` names it, and `index` names
//! only pages whose records are fsynced. `open` cuts a torn record or URL, removes runs `index`
//! does not name, and puts the band keys of pages past `index`'s count back into the batch
//! (they are recomputed from `pages`). A killed crawl thus loses nothing it reported.

use crate::state::durable;
use anyhow::{Context, Result, bail, ensure};
use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry;
use std::fs::{self, File, OpenOptions};
use std::io::{BufReader, BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Values of a signature.
pub const HASHES: usize = 256;
/// Bands of the LSH index, and values per band.
pub const BANDS: usize = 16;
pub const ROWS: usize = 8;
/// Bytes of a page's record in `pages`: the values, the URL's offset (8) and length (4), and
/// its cluster's first page (4).
pub const RECORD: usize = 2 * HASHES + 16;
/// Bytes of a run entry: band key and page number.
pub const ENTRY: usize = 12;
/// Pages whose band keys are kept in memory before they go to a run.
pub const BATCH_PAGES: u32 = 4096;
/// Entries between two fence keys of a run.
pub const STRIDE: usize = 128;
/// Batches whose entries a run may hold and still be kept in memory (module doc): 4 × 4,096
/// pages × 16 keys × 12 bytes, 3 MiB.
pub const RESIDENT_BATCHES: u64 = 4;
/// Records of recent and recently read pages kept in memory per index (`Store::record`), by
/// page number modulo this: 4,096 × 528 bytes, 2.1 MiB.
pub const CACHED_RECORDS: usize = 4096;
/// Pages read per band key at most (the earliest).
pub const MAX_PER_KEY: usize = 64;
/// Candidates verified per page at most (the earliest).
pub const MAX_VERIFIED: usize = 256;
/// The directory under the crawl's state directory.
pub const DIR: &str = "neardup";
/// The cluster file, in the crawl's state directory: first page, member, resemblance, earlier.
pub const CLUSTERS: &str = "neardups.tsv";

/// Version 2: words hashed by `minhash::Word` (version 1's signatures, XXH3 words, differ).
const INDEX_HEADER: &str = "crawl neardup index 2";

/// A page's MinHash signature (`url::minhash`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// Per bin, the low 16 bits of its least shingle hash.
    pub values: [u16; HASHES],
}

impl Signature {
    /// The estimated resemblance: the share of values the two agree on.
    pub fn resemblance(&self, other: &Signature) -> f64 {
        let same = (self.values.iter().zip(&other.values))
            .filter(|(a, b)| a == b)
            .count();
        same as f64 / HASHES as f64
    }

    /// The band keys: each band's values (little endian) hashed by XXH3 seeded with its
    /// number. One-shot: the streaming hasher gives the same keys (a unit test holds the two
    /// equal, so runs written before stay readable) but derives a secret from its seed at each
    /// of the 16 starts.
    pub fn band_keys(&self) -> [u64; BANDS] {
        let mut keys = [0u64; BANDS];
        for (band, key) in keys.iter_mut().enumerate() {
            let mut bytes = [0u8; 2 * ROWS];
            for (i, v) in self.values[band * ROWS..(band + 1) * ROWS]
                .iter()
                .enumerate()
            {
                bytes[2 * i..2 * i + 2].copy_from_slice(&v.to_le_bytes());
            }
            *key = xxhash_rust::xxh3::xxh3_64_with_seed(&bytes, band as u64);
        }
        keys
    }
}

/// What a check found: the earlier page and its cluster's first page, with the estimated
/// resemblance.
#[derive(Clone, Debug, PartialEq)]
pub struct Match {
    pub earlier: String,
    pub first: String,
    pub resemblance: f64,
}

/// The index (module doc); shared by the workers, one check at a time.
pub struct NearDupIndex {
    inner: Mutex<Inner>,
    threshold: f64,
}

struct Inner {
    dir: PathBuf,
    /// This crawl's pages and band keys (`store.batch` the pages past the runs).
    store: Store,
    clusters: File,
    /// Pages recorded, and bytes of `urls`.
    count: u32,
    urls_len: u64,
    /// Pages the runs hold (`index`'s count); the rest are in the batch.
    covered: u32,
    next_run: u64,
    /// Pages a batch holds before it becomes a run.
    batch_pages: u32,
    /// Other crawls' indexes (`--dedupe-against`), searched before this one's.
    earlier: Vec<Store>,
}

/// An index's pages and band keys: what a search reads.
struct Store {
    pages: File,
    urls: File,
    batch: Batch,
    runs: Vec<Run>,
    /// Records by page number modulo [`CACHED_RECORDS`], with their page: the newest pages
    /// (a page's candidates are often of the same pages' templates, crawled near it) and
    /// those read since, without a `pread` each. Records never change once written.
    cache: Vec<Option<(u32, Record)>>,
}

impl Store {
    /// Another crawl's index, opened read-only (`NearDupIndex::add_earlier`). That crawl may
    /// be running: its runs named by `index` when this one read it are open here, and stay
    /// readable when it merges them away (a removed file lives on while open); its pages past
    /// them are read into a batch of this one's. Nothing of it is cut, removed or written.
    fn open_earlier(crawl: &Path, batch_pages: u32) -> Result<Option<Store>> {
        let dir = crawl.join(DIR);
        if !dir.join("pages").exists() {
            return Ok(None);
        }
        let (mut runs, covered, _) = read_index(&dir)?;
        let open = |name: &str| {
            let path = dir.join(name);
            File::open(&path).with_context(|| format!("opening {}", path.display()))
        };
        let (pages, urls) = (open("pages")?, open("urls")?);
        let (count, _) = whole_pages(&dir, &pages, &urls, covered)?;
        read_bodies(&mut runs, batch_pages)?;
        let batch = batch_of(&pages, covered..count)?;
        Ok(Some(Store {
            pages,
            urls,
            batch,
            runs,
            cache: no_records(),
        }))
    }
}

/// What a search of one index found.
enum Found {
    /// The earliest page at or above the threshold, its cluster's first page, the resemblance.
    Near(u32, u32, f64),
    /// The earliest such page has the page's own URL: an earlier capture of it.
    Itself,
    Nothing,
}

/// The pages of `dir`'s `pages` whose record and URL are whole (a kill may tear the last), and
/// the length of `urls` they use; at least `covered`, the pages its `index` names.
fn whole_pages(dir: &Path, pages: &File, urls: &File, covered: u32) -> Result<(u32, u64)> {
    let urls_len = urls.metadata()?.len();
    let mut count = (pages.metadata()?.len() / RECORD as u64) as u32;
    let mut kept_urls = 0;
    while count > 0 {
        let record = read_record(pages, count - 1)?;
        if record.url_end() <= urls_len {
            kept_urls = record.url_end();
            break;
        }
        count -= 1;
    }
    ensure!(
        count >= covered,
        "{}: the index holds {covered} pages but `pages` only {count}; the near-duplicate index \
         is damaged (remove {} to start it afresh)",
        dir.display(),
        dir.display()
    );
    Ok((count, kept_urls))
}

/// Reads the runs' entries into memory (runs of at most `RESIDENT_BATCHES` batches) or their
/// fences.
fn read_bodies(runs: &mut [Run], batch_pages: u32) -> Result<()> {
    let resident = resident_entries(batch_pages);
    for run in runs {
        run.body = match run.entries <= resident {
            true => load(run)?,
            false => Body::Disk {
                fences: fences(&run.file, run.entries)?,
            },
        };
    }
    Ok(())
}

/// The band keys of `pages`, recomputed from their records.
fn batch_of(pages: &File, range: std::ops::Range<u32>) -> Result<Batch> {
    let mut batch = Batch::default();
    for page in range {
        let record = read_record(pages, page)?;
        batch.add(page, &record.signature.band_keys());
    }
    Ok(batch)
}

/// The band keys of the pages not yet in a run: each key's first page, and the pages after it
/// of the few keys that more than one page has. No allocation for a key of one page: 16 bytes
/// an entry, not a vector each.
#[derive(Default)]
struct Batch {
    first: FxHashMap<u64, u32>,
    more: FxHashMap<u64, Vec<u32>>,
}

impl Batch {
    fn add(&mut self, page: u32, keys: &[u64; BANDS]) {
        for &key in keys {
            match self.first.entry(key) {
                Entry::Vacant(entry) => {
                    entry.insert(page);
                }
                Entry::Occupied(_) => self.more.entry(key).or_default().push(page),
            }
        }
    }

    /// Adds the pages of `key` (at most `MAX_PER_KEY`, the earliest) to `out`.
    fn lookup(&self, key: u64, out: &mut Vec<u32>) {
        if let Some(&page) = self.first.get(&key) {
            out.push(page);
            if let Some(more) = self.more.get(&key) {
                out.extend(more.iter().take(MAX_PER_KEY - 1));
            }
        }
    }

    /// Every (key, page), emptying the batch (its tables keep their room for the next).
    fn drain(&mut self) -> Vec<(u64, u32)> {
        let mut entries: Vec<(u64, u32)> = self.first.drain().collect();
        for (key, pages) in self.more.drain() {
            entries.extend(pages.into_iter().map(|page| (key, page)));
        }
        entries
    }
}

struct Run {
    id: u64,
    file: File,
    entries: u64,
    body: Body,
}

/// How a run's entries are found.
enum Body {
    /// In the file, a block of [`STRIDE`] entries at a time, by every `STRIDE`th key.
    Disk { fences: Vec<u64> },
    /// In memory as well (a run of at most [`RESIDENT_BATCHES`] batches): the keys and their
    /// pages in order.
    Memory { keys: Vec<u64>, pages: Vec<u32> },
}

impl NearDupIndex {
    /// Opens (or creates) the index in `state/neardup`, and the cluster file beside it.
    pub fn open(state: &Path, threshold: f64) -> Result<NearDupIndex> {
        NearDupIndex::open_with(state, threshold, BATCH_PAGES)
    }

    /// `open` with batches of `batch_pages` pages (tests use small ones).
    pub fn open_with(state: &Path, threshold: f64, batch_pages: u32) -> Result<NearDupIndex> {
        let dir = state.join(DIR);
        fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let (mut runs, covered, next_run) = read_index(&dir)?;
        remove_stray_runs(&dir, &runs)?;
        let open = |name: &str| {
            let path = dir.join(name);
            OpenOptions::new()
                .create(true)
                .read(true)
                .append(true)
                .open(&path)
                .with_context(|| format!("opening {}", path.display()))
        };
        let (pages, urls) = (open("pages")?, open("urls")?);
        let (clusters, _) = durable::open_log(&state.join(CLUSTERS))
            .with_context(|| format!("opening {}", state.join(CLUSTERS).display()))?;
        let (count, kept_urls) = whole_pages(&dir, &pages, &urls, covered)?;
        pages.set_len(u64::from(count) * RECORD as u64)?;
        urls.set_len(kept_urls)?;
        read_bodies(&mut runs, batch_pages)?;
        let batch = batch_of(&pages, covered..count)?;
        let inner = Inner {
            dir,
            store: Store {
                pages,
                urls,
                batch,
                runs,
                cache: no_records(),
            },
            clusters,
            count,
            urls_len: kept_urls,
            covered,
            next_run,
            batch_pages,
            earlier: Vec::new(),
        };
        Ok(NearDupIndex {
            inner: Mutex::new(inner),
            threshold,
        })
    }

    /// Adds another crawl's index (`--dedupe-against`; `crawl` is its state directory), read
    /// and never written: its pages count as crawled before this crawl's. `Ok(false)` when it
    /// has none (a crawl without `--near-duplicates`).
    pub fn add_earlier(&self, crawl: &Path) -> Result<bool> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let batch_pages = inner.batch_pages;
        let Some(earlier) = Store::open_earlier(crawl, batch_pages)? else {
            return Ok(false);
        };
        inner.earlier.push(earlier);
        Ok(true)
    }

    /// Compares a page with every page recorded before it, records it, and returns the earlier
    /// page it nearly repeats, if any (also written to the cluster file).
    pub fn check(&self, url: &str, signature: &Signature) -> Result<Option<Match>> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let keys = signature.band_keys();
        // Another crawl's pages come before this one's, the first crawl named first. A page
        // that joins a cluster begun there is the first of it in this crawl's index.
        let mut prior = None;
        for earlier in &mut inner.earlier {
            match earlier.find(url, signature, &keys, self.threshold)? {
                Found::Near(page, root, resemblance) => {
                    prior = Some(Some(Match {
                        earlier: earlier.url(page)?,
                        first: earlier.url(root)?,
                        resemblance,
                    }));
                    break;
                }
                Found::Itself => {
                    prior = Some(None);
                    break;
                }
                Found::Nothing => {}
            }
        }
        let (found, root) = match prior {
            Some(found) => (found, inner.count),
            None => {
                let own = &mut inner.store;
                match own.find(url, signature, &keys, self.threshold)? {
                    Found::Near(page, root, resemblance) => {
                        let found = Match {
                            earlier: own.url(page)?,
                            first: own.url(root)?,
                            resemblance,
                        };
                        (Some(found), root)
                    }
                    Found::Itself | Found::Nothing => (None, inner.count),
                }
            }
        };
        inner.record(url, signature, &keys, root)?;
        let Some(found) = found else {
            return Ok(None);
        };
        let line = format!(
            "{}\t{}\t{:.3}\t{}\n",
            found.first, url, found.resemblance, found.earlier
        );
        inner.clusters.write_all(line.as_bytes())?;
        Ok(Some(found))
    }

    /// Pages recorded.
    pub fn len(&self) -> u32 {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).count
    }

    /// Whether no page is recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Runs on disk, oldest first: their entries, and whether they are in memory as well (for
    /// tests of the merge policy).
    pub fn runs(&self) -> Vec<(u64, bool)> {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        (inner.store.runs.iter())
            .map(|r| (r.entries, matches!(r.body, Body::Memory { .. })))
            .collect()
    }
}

/// An empty record cache (`Store::cache`).
fn no_records() -> Vec<Option<(u32, Record)>> {
    std::iter::repeat_with(|| None)
        .take(CACHED_RECORDS)
        .collect()
}

/// A page's record in `pages`.
struct Record {
    signature: Signature,
    url_offset: u64,
    url_len: u32,
    root: u32,
}

impl Record {
    fn url_end(&self) -> u64 {
        self.url_offset + u64::from(self.url_len) + 1
    }

    fn bytes(&self) -> [u8; RECORD] {
        let mut out = [0u8; RECORD];
        for (i, v) in self.signature.values.iter().enumerate() {
            out[2 * i..2 * i + 2].copy_from_slice(&v.to_le_bytes());
        }
        let rest = &mut out[2 * HASHES..];
        rest[..8].copy_from_slice(&self.url_offset.to_le_bytes());
        rest[8..12].copy_from_slice(&self.url_len.to_le_bytes());
        rest[12..16].copy_from_slice(&self.root.to_le_bytes());
        out
    }

    fn parse(bytes: &[u8; RECORD]) -> Record {
        let mut values = [0u16; HASHES];
        for (i, v) in values.iter_mut().enumerate() {
            *v = u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]);
        }
        let rest = &bytes[2 * HASHES..];
        let int = |r: std::ops::Range<usize>| {
            let mut b = [0u8; 8];
            b[..r.len()].copy_from_slice(&rest[r]);
            u64::from_le_bytes(b)
        };
        Record {
            signature: Signature { values },
            url_offset: int(0..8),
            url_len: int(8..12) as u32,
            root: int(12..16) as u32,
        }
    }
}

fn read_record(pages: &File, page: u32) -> Result<Record> {
    let mut bytes = [0u8; RECORD];
    pages
        .read_exact_at(&mut bytes, u64::from(page) * RECORD as u64)
        .with_context(|| format!("reading the signature of page {page}"))?;
    Ok(Record::parse(&bytes))
}

impl Store {
    /// The earliest page whose estimated resemblance is at or above the threshold.
    fn find(
        &mut self,
        url: &str,
        signature: &Signature,
        keys: &[u64; BANDS],
        threshold: f64,
    ) -> Result<Found> {
        let mut candidates = Vec::with_capacity(64);
        for &key in keys {
            self.batch.lookup(key, &mut candidates);
        }
        for run in &self.runs {
            run.lookup_each(keys, &mut candidates)?;
        }
        candidates.sort_unstable();
        candidates.dedup();
        for &page in candidates.iter().take(MAX_VERIFIED) {
            let record = self.record(page)?;
            let (resemblance, root) = (signature.resemblance(&record.signature), record.root);
            if resemblance >= threshold {
                // The earliest near page is this URL's own earlier capture (a resume or a
                // recrawl): the page is the original of its cluster, whatever came after it.
                if self.url(page)? == url {
                    return Ok(Found::Itself);
                }
                return Ok(Found::Near(page, root, resemblance));
            }
        }
        Ok(Found::Nothing)
    }

    /// A page's record, from the cache or read into it.
    fn record(&mut self, page: u32) -> Result<&Record> {
        let slot = page as usize % CACHED_RECORDS;
        if self.cache[slot]
            .as_ref()
            .is_none_or(|(cached, _)| *cached != page)
        {
            self.cache[slot] = Some((page, read_record(&self.pages, page)?));
        }
        Ok(&self.cache[slot].as_ref().expect("filled above").1)
    }

    fn url(&mut self, page: u32) -> Result<String> {
        let record = self.record(page)?;
        let (offset, len) = (record.url_offset, record.url_len);
        let mut bytes = vec![0u8; len as usize];
        self.urls
            .read_exact_at(&mut bytes, offset)
            .with_context(|| format!("reading the URL of page {page}"))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

impl Inner {
    /// Appends the page's URL and record, and its band keys to the batch (a full batch becomes
    /// a run).
    fn record(
        &mut self,
        url: &str,
        signature: &Signature,
        keys: &[u64; BANDS],
        root: u32,
    ) -> Result<()> {
        let url = url.replace('\n', "%0A");
        let mut line = url.clone().into_bytes();
        line.push(b'\n');
        self.store.urls.write_all(&line)?;
        let record = Record {
            signature: signature.clone(),
            url_offset: self.urls_len,
            url_len: url.len() as u32,
            root,
        };
        self.urls_len += line.len() as u64;
        self.store.pages.write_all(&record.bytes())?;
        let page = self.count;
        self.store.cache[page as usize % CACHED_RECORDS] = Some((page, record));
        self.count += 1;
        self.store.batch.add(page, keys);
        if self.count - self.covered >= self.batch_pages {
            self.spill()?;
        }
        Ok(())
    }

    /// Writes the batch as a run, merges runs of like sizes, and commits `index`.
    fn spill(&mut self) -> Result<()> {
        let mut entries = self.store.batch.drain();
        entries.sort_unstable();
        let id = self.take_run_id();
        let expected = entries.len() as u64;
        let mut run = write_run(&self.dir, id, expected, entries.iter().copied().map(Ok))?;
        let resident = resident_entries(self.batch_pages);
        if expected <= resident {
            run.body = Body::Memory {
                keys: entries.iter().map(|e| e.0).collect(),
                pages: entries.iter().map(|e| e.1).collect(),
            };
        }
        drop(entries);
        self.store.runs.push(run);
        while let [.., older, newer] = &self.store.runs[..]
            && newer.entries * 2 >= older.entries
        {
            let id = self.next_run;
            let mut merged = merge_runs(&self.dir, id, older, newer)?;
            self.next_run += 1;
            // Closed, and their entries out of memory, before the merged run is read back
            // into it: a merge holds the two runs' entries or its own, not both.
            let gone: Vec<u64> = (self
                .store
                .runs
                .split_off(self.store.runs.len() - 2)
                .into_iter())
            .map(|run| run.id)
            .collect();
            if merged.entries <= resident {
                merged.body = load(&merged)?;
            }
            self.store.runs.push(merged);
            self.commit()?;
            for id in gone {
                let path = run_path(&self.dir, id);
                durable::remove_if_present(&path)
                    .with_context(|| format!("removing {}", path.display()))?;
            }
        }
        self.commit()
    }

    fn take_run_id(&mut self) -> u64 {
        self.next_run += 1;
        self.next_run - 1
    }

    /// Makes the pages durable, then names the runs and the pages they hold in `index`.
    fn commit(&mut self) -> Result<()> {
        self.store.urls.sync_data()?;
        self.store.pages.sync_data()?;
        self.covered = self.count;
        let mut text = format!(
            "{INDEX_HEADER}\npages {}\nnext {}\n",
            self.count, self.next_run
        );
        for run in &self.store.runs {
            text.push_str(&format!("run {} {}\n", run.id, run.entries));
        }
        let path = self.dir.join("index");
        durable::replace(&path, text.as_bytes())
            .with_context(|| format!("writing {}", path.display()))
    }
}

/// Entries a run may have and be held in memory, for batches of `batch_pages`.
fn resident_entries(batch_pages: u32) -> u64 {
    RESIDENT_BATCHES * u64::from(batch_pages) * BANDS as u64
}

impl Run {
    /// Adds the pages of each of `wanted` (at most `MAX_PER_KEY` a key) to `out`.
    fn lookup_each(&self, wanted: &[u64; BANDS], out: &mut Vec<u32>) -> Result<()> {
        let (keys, pages) = match &self.body {
            Body::Memory { keys, pages } => (keys, pages),
            Body::Disk { fences } => {
                return (wanted.iter()).try_for_each(|&key| self.lookup_on_disk(fences, key, out));
            }
        };
        for (start, key) in first_at_or_above_each(keys, wanted).into_iter().zip(wanted) {
            let n = (keys[start..].iter().take(MAX_PER_KEY))
                .take_while(|&k| k == key)
                .count();
            out.extend_from_slice(&pages[start..start + n]);
        }
        Ok(())
    }

    /// Adds the pages of `key` (at most `MAX_PER_KEY`) to `out`, from a run on disk.
    fn lookup_on_disk(&self, fences: &[u64], key: u64, out: &mut Vec<u32>) -> Result<()> {
        // The block before the first fence not below `key` may end with it.
        let block = fences.partition_point(|&f| f < key).saturating_sub(1);
        let mut at = (block * STRIDE) as u64;
        let mut found = 0;
        // One block on the stack (1.5 KiB): a lookup is 16 a page per run, no allocation.
        let mut buf = [0u8; STRIDE * ENTRY];
        while at < self.entries {
            let n = (self.entries - at).min(STRIDE as u64) as usize;
            let bytes = &mut buf[..n * ENTRY];
            self.file.read_exact_at(bytes, at * ENTRY as u64)?;
            for entry in bytes.chunks_exact(ENTRY) {
                let (k, page) = parse_entry(entry);
                if k > key {
                    return Ok(());
                }
                if k == key {
                    out.push(page);
                    found += 1;
                    if found == MAX_PER_KEY {
                        return Ok(());
                    }
                }
            }
            at += n as u64;
        }
        Ok(())
    }
}

fn parse_entry(entry: &[u8]) -> (u64, u32) {
    let key = u64::from_be_bytes(entry[..8].try_into().expect("8 bytes"));
    let page = u32::from_be_bytes(entry[8..12].try_into().expect("4 bytes"));
    (key, page)
}

fn run_path(dir: &Path, id: u64) -> PathBuf {
    dir.join(format!("run.{id}"))
}

/// Writes sorted entries to run `id`, fsynced, with its fences.
fn write_run(
    dir: &Path,
    id: u64,
    expected: u64,
    entries: impl Iterator<Item = Result<(u64, u32)>>,
) -> Result<Run> {
    let path = run_path(dir, id);
    let file = File::create(&path).with_context(|| format!("creating {}", path.display()))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    // Sized for the `expected` entries: a vector grown by doubling would hold up to twice the
    // fences for as long as the run lives, and the largest merge is when memory peaks.
    let mut fences = Vec::with_capacity((expected as usize).div_ceil(STRIDE));
    let mut count = 0u64;
    for entry in entries {
        let (key, page) = entry?;
        if count.is_multiple_of(STRIDE as u64) {
            fences.push(key);
        }
        out.write_all(&key.to_be_bytes())?;
        out.write_all(&page.to_be_bytes())?;
        count += 1;
    }
    let file = out.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()?;
    drop(file);
    let file = File::open(&path).with_context(|| format!("opening {}", path.display()))?;
    Ok(Run {
        id,
        file,
        entries: count,
        body: Body::Disk { fences },
    })
}

/// For each of `wanted`, the first place in `keys` (sorted) whose key is not below it. Band
/// keys are hashes, spread evenly over the u64s, so the place is guessed from the key's value,
/// the guess corrected once by the key found there (interpolation search), and the place
/// bracketed by steps doubling from there and searched within the bracket: a few neighbouring
/// cache lines for even keys, where a binary search of a whole run misses the cache at each of
/// its first steps (most of a lookup's time), and O(log n) steps whatever the keys.
///
/// A step of all 16 at a time: the keys each step reads are loaded together, so the cache
/// misses of a page's band keys overlap instead of following one another (a lookup's time was
/// mostly those misses).
fn first_at_or_above_each(keys: &[u64], wanted: &[u64; BANDS]) -> [usize; BANDS] {
    let n = keys.len();
    if n == 0 {
        return [0; BANDS];
    }
    let guess = wanted.map(|key| guessed_place(n, key));
    let found: [u64; BANDS] = std::array::from_fn(|i| keys[guess[i]]);
    let at: [usize; BANDS] =
        std::array::from_fn(|i| corrected_place(n, guess[i], found[i], wanted[i]));
    let near: [u64; BANDS] = std::array::from_fn(|i| keys[at[i]]);
    std::array::from_fn(|i| {
        // Most corrected guesses are the place already (the key there, the one before below).
        match near[i] >= wanted[i] && (at[i] == 0 || keys[at[i] - 1] < wanted[i]) {
            true => at[i],
            false => bracketed_place(keys, wanted[i], at[i]),
        }
    })
}

/// Places among `n` even keys that a distance `d` between two keys spans: its share of the u64s.
fn places(n: usize, d: u64) -> usize {
    ((u128::from(d) * n as u128) >> 64) as usize
}

/// Where `key` would be among `n` even keys.
fn guessed_place(n: usize, key: u64) -> usize {
    places(n, key).min(n - 1)
}

/// The guess moved by how far the key `found` there is from `key`, in places.
fn corrected_place(n: usize, guess: usize, found: u64, key: u64) -> usize {
    match found < key {
        true => (guess + places(n, key - found)).min(n - 1),
        false => guess.saturating_sub(places(n, found - key)),
    }
}

/// The first place not below `key`, bracketed by steps doubling from `at` and searched within.
fn bracketed_place(keys: &[u64], key: u64, at: usize) -> usize {
    let n = keys.len();
    if keys[at] < key {
        // The place is after `at`: every key before `low` is below `key`.
        let (mut low, mut step) = (at + 1, 1);
        loop {
            let probe = at + step;
            if probe >= n {
                return low + keys[low..].partition_point(|&k| k < key);
            }
            if keys[probe] >= key {
                return low + keys[low..probe].partition_point(|&k| k < key);
            }
            (low, step) = (probe + 1, step * 2);
        }
    }
    // The place is at `at` or before: every key from `high` on is at or above `key`.
    let (mut high, mut step) = (at, 1);
    loop {
        if step > at {
            return keys[..high].partition_point(|&k| k < key);
        }
        let probe = at - step;
        if keys[probe] < key {
            return probe + 1 + keys[probe + 1..high].partition_point(|&k| k < key);
        }
        (high, step) = (probe, step * 2);
    }
}

/// A run's entries read into memory.
fn load(run: &Run) -> Result<Body> {
    let mut keys = Vec::with_capacity(run.entries as usize);
    let mut pages = Vec::with_capacity(run.entries as usize);
    for entry in entries(run) {
        let (key, page) = entry?;
        keys.push(key);
        pages.push(page);
    }
    Ok(Body::Memory { keys, pages })
}

/// The entries of a run, in order (from memory when they are there).
fn entries(run: &Run) -> impl Iterator<Item = Result<(u64, u32)>> + '_ {
    let buffer = match run.body {
        Body::Memory { .. } => 0,
        Body::Disk { .. } => 1 << 20,
    };
    let mut reader = BufReader::with_capacity(buffer, &run.file);
    let mut left = run.entries;
    let mut at = 0;
    std::iter::from_fn(move || {
        if left == 0 {
            return None;
        }
        left -= 1;
        if let Body::Memory { keys, pages } = &run.body {
            at += 1;
            return Some(Ok((keys[at - 1], pages[at - 1])));
        }
        let mut entry = [0u8; ENTRY];
        Some(
            reader
                .read_exact(&mut entry)
                .map(|()| parse_entry(&entry))
                .map_err(Into::into),
        )
    })
}

/// Merges two runs into run `id`.
fn merge_runs(dir: &Path, id: u64, a: &Run, b: &Run) -> Result<Run> {
    let expected = a.entries + b.entries;
    let (mut a, mut b) = (entries(a).peekable(), entries(b).peekable());
    let merged = std::iter::from_fn(move || {
        let take_a = match (a.peek(), b.peek()) {
            (None, None) => return None,
            (Some(Ok(x)), Some(Ok(y))) => x <= y,
            (Some(_), None) | (Some(Err(_)), _) => true,
            (None, Some(_)) | (_, Some(Err(_))) => false,
        };
        if take_a { a.next() } else { b.next() }
    });
    // Each read uses its own file position: the runs were opened anew for reading.
    write_run(dir, id, expected, merged)
}

/// Every `STRIDE`th key of a run.
fn fences(file: &File, entries: u64) -> Result<Vec<u64>> {
    let mut fences = Vec::with_capacity((entries as usize).div_ceil(STRIDE));
    let mut entry = [0u8; ENTRY];
    let mut at = 0;
    while at < entries {
        file.read_exact_at(&mut entry, at * ENTRY as u64)?;
        fences.push(parse_entry(&entry).0);
        at += STRIDE as u64;
    }
    Ok(fences)
}

/// The runs `index` names (opened, bodies not yet read), the pages they hold, the next run id.
fn read_index(dir: &Path) -> Result<(Vec<Run>, u32, u64)> {
    let path = dir.join("index");
    let text = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), 0, 0)),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let damaged = || {
        format!(
            "{}: not a near-duplicate index (remove {} to start afresh)",
            path.display(),
            dir.display()
        )
    };
    let mut lines = text.lines();
    ensure!(lines.next() == Some(INDEX_HEADER), "{}", damaged());
    let (mut runs, mut pages, mut next) = (Vec::new(), 0, 0);
    for line in lines {
        let fields: Vec<&str> = line.split(' ').collect();
        match fields[..] {
            ["pages", n] => pages = n.parse().with_context(damaged)?,
            ["next", n] => next = n.parse().with_context(damaged)?,
            ["run", id, n] => {
                let id: u64 = id.parse().with_context(damaged)?;
                let entries: u64 = n.parse().with_context(damaged)?;
                let run_file = run_path(dir, id);
                let file = File::open(&run_file)
                    .with_context(|| format!("opening {}", run_file.display()))?;
                ensure!(
                    file.metadata()?.len() == entries * ENTRY as u64,
                    "{}: {} has the wrong size",
                    damaged(),
                    run_file.display()
                );
                runs.push(Run {
                    id,
                    file,
                    entries,
                    body: Body::Disk { fences: Vec::new() },
                });
            }
            _ => bail!("{}", damaged()),
        }
    }
    Ok((runs, pages, next))
}

/// Removes runs a killed merge left that `index` does not name.
fn remove_stray_runs(dir: &Path, runs: &[Run]) -> Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let stray = name.strip_prefix("run.").is_some_and(|id| {
            id.parse::<u64>()
                .map_or(true, |id| !runs.iter().any(|r| r.id == id))
        }) || name.ends_with(".tmp");
        if stray {
            durable::remove_if_present(&entry.path())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signature(seed: u64) -> Signature {
        let mut rng = crate::SplitMix(seed);
        let mut values = [0u16; HASHES];
        for v in &mut values {
            *v = rng.next_u64() as u16;
        }
        Signature { values }
    }

    /// Pages per batch in these tests.
    const BATCH: u32 = 64;

    /// `s` with its last `changed` values changed (resemblance 1 - changed / 256).
    fn changed(s: &Signature, changed: usize) -> Signature {
        let mut out = s.clone();
        for v in &mut out.values[HASHES - changed..] {
            *v = v.wrapping_add(1);
        }
        out
    }

    fn open(dir: &Path) -> NearDupIndex {
        NearDupIndex::open_with(dir, 0.9, BATCH).unwrap()
    }

    /// A page whose cached record another page took (the same slot) is read from `pages`:
    /// each copy names its own original.
    #[test]
    fn records_past_the_cache_are_read_from_disk() {
        let dir = tempfile::tempdir().unwrap();
        let index = open(dir.path());
        let pages = CACHED_RECORDS as u64 + 2;
        for i in 0..pages {
            let url = format!("http://a/{i}");
            assert_eq!(index.check(&url, &signature(i)).unwrap(), None, "{i}");
        }
        for i in [0, 1, CACHED_RECORDS as u64, pages - 1, 0] {
            let copy = changed(&signature(i), 5);
            let found = index.check("http://b/copy", &copy).unwrap().unwrap();
            assert_eq!(found.earlier, format!("http://a/{i}"));
        }
    }

    #[test]
    fn a_page_far_from_its_original_is_found_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let index = open(dir.path());
        let original = signature(0);
        assert_eq!(index.check("http://a/0", &original).unwrap(), None);
        for i in 1..50 * BATCH as u64 {
            let url = format!("http://a/{i}");
            assert_eq!(index.check(&url, &signature(i)).unwrap(), None, "{i}");
        }
        assert!(!index.runs().is_empty());
        let copy = changed(&original, 20);
        let found = index.check("http://b/copy", &copy).unwrap().unwrap();
        assert_eq!(found.earlier, "http://a/0");
        assert_eq!(found.first, "http://a/0");
        assert!((found.resemblance - (1.0 - 20.0 / 256.0)).abs() < 1e-9);
        // Below the threshold: not a near-duplicate.
        let mut far = original.clone();
        for v in &mut far.values[..40] {
            *v = v.wrapping_add(1);
        }
        assert_eq!(index.check("http://b/far", &far).unwrap(), None);
        // A copy of the copy belongs to the first page's cluster.
        let found = index
            .check("http://c/x", &changed(&copy, 1))
            .unwrap()
            .unwrap();
        assert_eq!(found.earlier, "http://a/0");
        let clusters = fs::read_to_string(dir.path().join(CLUSTERS)).unwrap();
        assert!(
            clusters.starts_with("http://a/0\thttp://b/copy\t0.922\thttp://a/0\n"),
            "{clusters}"
        );
    }

    #[test]
    fn the_same_url_again_is_not_its_own_near_duplicate() {
        let dir = tempfile::tempdir().unwrap();
        let index = open(dir.path());
        assert_eq!(index.check("http://a/", &signature(1)).unwrap(), None);
        assert_eq!(index.check("http://a/", &signature(1)).unwrap(), None);
        assert!(index.check("http://b/", &signature(1)).unwrap().is_some());
        // Fetched again after its copy, the original is still the original: its own earlier
        // capture comes before the copy, whichever of the two a recrawl fetches first.
        assert_eq!(index.check("http://a/", &signature(1)).unwrap(), None);
    }

    #[test]
    fn reopening_keeps_every_page_and_cuts_a_torn_record() {
        let dir = tempfile::tempdir().unwrap();
        let pages = BATCH as u64 + 100;
        {
            let index = open(dir.path());
            for i in 0..pages {
                index
                    .check(&format!("http://a/{i}"), &signature(i))
                    .unwrap();
            }
        }
        // A kill in the middle of a record: half of one more.
        let path = dir.path().join(DIR).join("pages");
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(&[7u8; RECORD / 2]).unwrap();
        fs::write(dir.path().join(DIR).join("run.99"), b"stray").unwrap();
        let index = open(dir.path());
        assert_eq!(index.len() as u64, pages);
        assert!(!dir.path().join(DIR).join("run.99").exists());
        // Pages in a run and pages in the batch are both found.
        for i in [0, pages - 1] {
            let found = index
                .check("http://b/", &changed(&signature(i), 2))
                .unwrap();
            assert_eq!(found.unwrap().earlier, format!("http://a/{i}"));
        }
    }

    #[test]
    fn runs_stay_few() {
        let dir = tempfile::tempdir().unwrap();
        let index = open(dir.path());
        for i in 0..9 * BATCH as u64 {
            index
                .check(&format!("http://a/{i}"), &signature(i))
                .unwrap();
        }
        let runs = index.runs();
        assert!(runs.len() <= 4, "{runs:?}");
        let total: u64 = runs.iter().map(|r| r.0).sum();
        assert_eq!(total, 9 * BATCH as u64 * BANDS as u64);
    }

    #[test]
    fn runs_in_memory_stay_within_four_batches() {
        let dir = tempfile::tempdir().unwrap();
        let index = open(dir.path());
        let batch = BATCH as u64 * BANDS as u64;
        for i in 0..60 * BATCH as u64 {
            index
                .check(&format!("http://a/{i}"), &signature(i))
                .unwrap();
            let runs = index.runs();
            let held: u64 = runs.iter().filter(|r| r.1).map(|r| r.0).sum();
            assert!(held <= RESIDENT_BATCHES * batch, "{i}: {runs:?}");
            assert!(
                runs.iter()
                    .all(|r| r.1 == (r.0 <= RESIDENT_BATCHES * batch))
            );
        }
    }

    #[test]
    fn pages_are_found_in_runs_on_disk_and_in_memory_and_after_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let pages = 25 * BATCH as u64 + 10;
        {
            let index = open(dir.path());
            for i in 0..pages {
                index
                    .check(&format!("http://a/{i}"), &signature(i))
                    .unwrap();
            }
            let runs = index.runs();
            assert!(
                runs.iter().any(|r| r.1) && runs.iter().any(|r| !r.1),
                "{runs:?}"
            );
            for i in (0..pages).step_by(89) {
                let copy = changed(&signature(i), 3);
                let found = index.check(&format!("http://c/{i}"), &copy).unwrap();
                assert_eq!(found.unwrap().earlier, format!("http://a/{i}"));
            }
        }
        // Reopened: the runs read back (into memory or their fences).
        let index = open(dir.path());
        for i in (0..pages).step_by(97) {
            let copy = changed(&signature(i), 3);
            let found = index.check(&format!("http://b/{i}"), &copy).unwrap();
            assert_eq!(found.unwrap().earlier, format!("http://a/{i}"));
        }
    }

    #[test]
    fn a_guessed_place_is_the_place() {
        let mut rng = crate::SplitMix(7);
        for n in [0, 1, 5, 600, 5000] {
            let mut keys: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
            // Runs of equal keys, and keys that are not even at all.
            keys.extend([5, 5, 5, 9, u64::MAX, u64::MAX].iter().take(n.min(6)));
            keys.extend((0..n as u64 / 2).map(|i| i * 3));
            keys.sort_unstable();
            let mut probes: Vec<u64> = keys.iter().flat_map(|&k| [k, k.wrapping_add(1)]).collect();
            probes.extend([0, 1, 4, 6, u64::MAX, u64::MAX - 1, 1 << 63]);
            // Looked up 16 at a time, as a page's band keys are.
            probes.resize(probes.len().next_multiple_of(BANDS), 3);
            for sixteen in probes.chunks_exact(BANDS) {
                let places = first_at_or_above_each(&keys, sixteen.try_into().unwrap());
                for (&probe, place) in sixteen.iter().zip(places) {
                    let want = keys.partition_point(|&k| k < probe);
                    assert_eq!(place, want, "{n} {probe}");
                }
            }
        }
    }

    #[test]
    fn band_keys_are_the_streaming_hashers() {
        // Runs written with XXH3's streaming hasher stay readable: the keys are the same.
        for seed in 0..20 {
            let s = signature(seed);
            for (band, key) in s.band_keys().into_iter().enumerate() {
                let mut h = xxhash_rust::xxh3::Xxh3::with_seed(band as u64);
                for v in &s.values[band * ROWS..(band + 1) * ROWS] {
                    h.update(&v.to_le_bytes());
                }
                assert_eq!(key, h.digest());
            }
        }
    }
}
