//! Back queues that spill to disk, and the deferred FIFO: how a ready host can always be fed.
//!
//! Mercator's shape (survey §2.3.1): the global frontier (`queue`) is the front queue; a
//! bounded number of hosts own a back queue (`HostQueue`, one per host slot of the scheduler);
//! the dispatcher reads the front queue far ahead, and a URL whose host has no slot is set
//! aside, in order, in the deferred FIFO (`Deferred`) instead of blocking the read-ahead. So a
//! large host whose URLs lie deep in the frontier gets them as soon as it can use them, while
//! memory holds only a bounded head of each back queue.
//!
//! Files: every spill file is `frontier/spill/ID.q`, frontier lines (`Entry`), append-only,
//! read from the front, never appended to again once a run has ended (a resumed run reads the
//! ranges its head names and writes new files with larger IDs). A file is opened only for one
//! append or one read (batches of `SpillDir::at` lines, or 256 for the deferred FIFO), so open
//! descriptors do not grow with hosts.
//!
//! Invariants:
//! - A host queue is `head` (memory, at most `at` URLs but for retries), then its file's unread
//!   range, then `tail` (memory, at most `at`; written to the file when full): FIFO in that
//!   order. Memory per slot is at most `2 × at` URLs, whatever the host's size.
//! - For every host, its URLs in flight or queued come before its URLs in its spill file, which
//!   come before its URLs in the deferred FIFO, which come before its URLs still in the
//!   frontier: breadth-first order within each host (the dispatcher keeps this, see
//!   `dispatch`).
//!
//! Crash safety (numbered as `dispatch::checkpoint` runs them):
//! 1. Appends go to the kernel at once (one `write` per batch) but are not fsynced; a kill may
//!    leave any suffix of them, which no head names.
//! 2. The checkpoint writes each host's `tail` to its file (a host without a file keeps its
//!    tail as head lines), fsyncs every file appended to since the last checkpoint, and
//!    collects each live file's unread range `(ID, READ, END)`; a range starts at the first
//!    URL not yet handed to the scheduler (URLs read into memory are recorded as head lines or
//!    lie before `READ`).
//! 3. `frontier/head` is replaced atomically with the head lines and the ranges (`queue`).
//! 4. Only then are files the new head does not name deleted (drained files, and what a
//!    crashed run left past its last head).
//!
//! A resumed crawl reads the head lines, then the ranges in the head's order, then the
//! frontier: per host, the order above.

use crate::frontier::Entry;
use crate::state::failpoint;
use anyhow::{Context, Result, bail};
use std::collections::VecDeque;
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// A host's back queue keeps this many URLs in memory (at its head, and again at its tail
/// before they are written); the rest waits in its spill file.
pub const SPILL_AT: usize = 32;

/// The deferred FIFO is written and read in batches of this many URLs.
const DEFERRED_BATCH: usize = 256;

/// A deferred file is closed for appends at this size, so read files can be deleted.
const DEFERRED_FILE_BYTES: u64 = 16 << 20;

/// `SPILL_AT`, or the hidden `CRAWL_SPILL_AT` with which the kill-and-resume tests make hosts
/// spill after a couple of URLs.
pub fn spill_at() -> usize {
    static AT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    failpoint::knob(&AT, "CRAWL_SPILL_AT", SPILL_AT as u64).max(1) as usize
}

/// A file's unread range, as the frontier's head records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    pub id: u64,
    pub read: u64,
    pub end: u64,
}

/// The spill directory and the next file ID.
pub struct SpillDir {
    /// Empty for a scheduler that never spills (`in_memory`).
    dir: PathBuf,
    next_id: u64,
    /// URLs a host queue keeps in memory before spilling (`spill_at`).
    pub at: usize,
}

impl SpillDir {
    /// Opens `dir` (creating it); new files get IDs above every file in it, so a file a crashed
    /// run left behind is never appended to.
    pub fn open(dir: &Path, at: usize) -> Result<SpillDir> {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let next_id = list(dir)?.into_iter().max().map_or(0, |id| id + 1);
        Ok(SpillDir {
            dir: dir.to_owned(),
            next_id,
            at: at.max(1),
        })
    }

    /// Host queues that never spill (a scheduler without a state directory, in unit tests).
    pub fn in_memory() -> SpillDir {
        SpillDir {
            dir: PathBuf::new(),
            next_id: 0,
            at: usize::MAX,
        }
    }

    fn create(&mut self) -> SpillFile {
        self.next_id += 1;
        SpillFile::new(self.next_id - 1, 0, 0, 0)
    }
}

/// Deletes every spill file in `dir` whose ID is not in `keep` (step 4: after the head naming
/// `keep` has replaced the last one).
pub fn remove_others(dir: &Path, keep: &[u64]) -> Result<()> {
    for id in list(dir)? {
        if !keep.contains(&id) {
            let path = file_path(dir, id);
            fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        }
    }
    Ok(())
}

pub fn file_path(dir: &Path, id: u64) -> PathBuf {
    dir.join(format!("{id}.q"))
}

/// The IDs of the spill files in `dir`.
pub fn list(dir: &Path) -> Result<Vec<u64>> {
    list_numbered(dir, ".q")
}

/// The numbers `N` of the files `N{suffix}` in `dir`, ascending (none if `dir` is missing).
pub fn list_numbered(dir: &Path, suffix: &str) -> Result<Vec<u64>> {
    let mut ids = Vec::new();
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ids),
        Err(e) => return Err(e).with_context(|| format!("listing {}", dir.display())),
    };
    for entry in entries {
        let name = entry?.file_name();
        if let Some(id) = name
            .to_str()
            .and_then(|n| n.strip_suffix(suffix))
            .and_then(|n| n.parse().ok())
        {
            ids.push(id);
        }
    }
    ids.sort_unstable();
    Ok(ids)
}

/// One append-only file of frontier lines, read from the front: `[read, end)` is unread.
#[derive(Debug)]
pub struct SpillFile {
    id: u64,
    read: u64,
    end: u64,
    /// Unread URLs.
    len: u64,
    /// Appended to since the last `sync`.
    dirty: bool,
}

impl SpillFile {
    /// A file's range with `len` URLs in it (as a head names it).
    pub fn new(id: u64, read: u64, end: u64, len: u64) -> SpillFile {
        SpillFile {
            id,
            read,
            end,
            len,
            dirty: false,
        }
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn range(&self) -> Range {
        Range {
            id: self.id,
            read: self.read,
            end: self.end,
        }
    }

    /// Appends `entries` in one write (crash-safety step 1).
    fn append<'a>(&mut self, dir: &Path, entries: impl Iterator<Item = &'a Entry>) -> Result<()> {
        let mut text = String::new();
        let mut n = 0;
        for entry in entries {
            text.push_str(&entry.to_line());
            text.push('\n');
            n += 1;
        }
        if n == 0 {
            return Ok(());
        }
        if dir.as_os_str().is_empty() {
            bail!("a queue spilled without a spill directory");
        }
        let path = file_path(dir, self.id);
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        if file.metadata()?.len() != self.end {
            bail!("{} does not end where its queue says", path.display());
        }
        file.write_all(text.as_bytes())
            .with_context(|| format!("appending to {}", path.display()))?;
        self.end += text.len() as u64;
        self.len += n;
        self.dirty = true;
        failpoint::hit("spill");
        Ok(())
    }

    /// Reads up to `max` URLs from the front into `out`, each with the offset just past it.
    fn read_into(
        &mut self,
        dir: &Path,
        max: usize,
        out: &mut VecDeque<(Entry, u64)>,
    ) -> Result<()> {
        if self.len == 0 || max == 0 {
            return Ok(());
        }
        let path = file_path(dir, self.id);
        let mut file = File::open(&path).with_context(|| format!("opening {}", path.display()))?;
        file.seek(SeekFrom::Start(self.read))?;
        let want = (self.end - self.read).min(1 << 16) as usize;
        let mut reader = BufReader::with_capacity(want.max(256), file);
        let mut line = String::new();
        let mut n = 0;
        while n < max && self.read < self.end {
            line.clear();
            let read = reader
                .read_line(&mut line)
                .with_context(|| format!("reading {}", path.display()))?;
            if read == 0 || !line.ends_with('\n') || self.read + read as u64 > self.end {
                bail!(
                    "{} ends before its recorded end {}",
                    path.display(),
                    self.end
                );
            }
            let entry = Entry::from_line(&line)
                .with_context(|| format!("{}: bad frontier entry {line:?}", path.display()))?;
            self.read += read as u64;
            self.len -= 1;
            n += 1;
            out.push_back((entry, self.read));
        }
        if self.read == self.end {
            self.len = 0;
        }
        Ok(())
    }

    /// Makes the appends durable (crash-safety step 2).
    fn sync(&mut self, dir: &Path) -> Result<()> {
        if self.dirty {
            let path = file_path(dir, self.id);
            File::open(&path)
                .and_then(|f| f.sync_data())
                .with_context(|| format!("syncing {}", path.display()))?;
            self.dirty = false;
        }
        Ok(())
    }
}

/// Reads every URL of a range a head named (on resume, before the frontier's segments):
/// `pop` hands them out one by one, reading `DEFERRED_BATCH` at a time.
pub struct RangeReader {
    file: SpillFile,
    buffer: VecDeque<(Entry, u64)>,
    /// Where the first buffered URL starts (the range a checkpoint records).
    start: u64,
}

impl RangeReader {
    pub fn new(file: SpillFile) -> RangeReader {
        RangeReader {
            start: file.read,
            file,
            buffer: VecDeque::new(),
        }
    }

    /// URLs not yet popped.
    pub fn len(&self) -> u64 {
        self.file.len + self.buffer.len() as u64
    }

    pub fn pop(&mut self, dir: &Path) -> Result<Option<Entry>> {
        if self.buffer.is_empty() {
            self.file.read_into(dir, DEFERRED_BATCH, &mut self.buffer)?;
        }
        Ok(self.buffer.pop_front().map(|(entry, end)| {
            self.start = end;
            entry
        }))
    }

    /// What is not popped yet, for a checkpoint; `None` once everything was.
    pub fn range(&self) -> Option<Range> {
        (self.len() > 0).then_some(Range {
            id: self.file.id,
            read: self.start,
            end: self.file.end,
        })
    }
}

/// A host's back queue: `head` in memory, then its spill file, then `tail` in memory.
#[derive(Debug, Default)]
pub struct HostQueue {
    head: VecDeque<Entry>,
    file: Option<SpillFile>,
    tail: Vec<Entry>,
}

impl HostQueue {
    /// URLs queued, in memory and on disk.
    pub fn len(&self) -> usize {
        self.head.len() + self.file.as_ref().map_or(0, |f| f.len as usize) + self.tail.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// URLs held in memory.
    #[cfg(test)]
    pub fn in_memory(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    /// Queues `entry` last; past `dir.at` URLs in memory it goes to the spill file.
    pub fn push_back(&mut self, entry: Entry, dir: &mut SpillDir) -> Result<()> {
        if self.file.is_none() && self.tail.is_empty() && self.head.len() < dir.at {
            self.head.push_back(entry);
            return Ok(());
        }
        self.tail.push(entry);
        if self.tail.len() >= dir.at {
            self.write_tail(dir)?;
        }
        Ok(())
    }

    /// Puts `entry` back first (a retry after 429/503).
    pub fn push_front(&mut self, entry: Entry) {
        self.head.push_front(entry);
    }

    /// Takes the first URL, reading the next batch from the spill file when the head is empty.
    pub fn pop_front(&mut self, dir: &SpillDir) -> Result<Option<Entry>> {
        if self.head.is_empty() {
            if let Some(file) = self.file.as_mut().filter(|f| f.len > 0) {
                let mut batch = VecDeque::new();
                file.read_into(&dir.dir, dir.at, &mut batch)?;
                self.head.extend(batch.into_iter().map(|(entry, _)| entry));
            } else {
                self.head.extend(self.tail.drain(..));
            }
            // A drained file is forgotten: the next checkpoint names it no more, then deletes it.
            if self.file.as_ref().is_some_and(|f| f.len == 0) {
                self.file = None;
            }
        }
        let entry = self.head.pop_front();
        if self.is_empty() {
            self.head = VecDeque::new(); // its buffer, grown by a retry burst, goes back too
        }
        Ok(entry)
    }

    fn write_tail(&mut self, dir: &mut SpillDir) -> Result<()> {
        if self.tail.is_empty() {
            return Ok(());
        }
        let file = self.file.get_or_insert_with(|| dir.create());
        file.append(&dir.dir, self.tail.iter())?;
        self.tail.clear();
        Ok(())
    }

    /// Crash-safety step 2 for this queue: its spill file (tail written, synced) and its range;
    /// without one, its whole queue is in memory and goes into the head as lines.
    pub fn checkpoint(&mut self, dir: &mut SpillDir) -> Result<Option<Range>> {
        if self.file.is_none() {
            return Ok(None);
        }
        self.write_tail(dir)?;
        let file = self.file.as_mut().expect("a spill file");
        file.sync(&dir.dir)?;
        Ok(Some(file.range()))
    }

    /// The URLs a checkpoint records as head lines: the head, and the tail when there is no
    /// file (with a file, `checkpoint` has written it there).
    pub fn memory_entries(&self) -> impl Iterator<Item = &Entry> {
        let tail = if self.file.is_none() {
            &self.tail[..]
        } else {
            &[]
        };
        self.head.iter().chain(tail)
    }
}

/// URLs whose host had no slot when the dispatcher read past them: a FIFO on disk, in files
/// of `DEFERRED_FILE_BYTES`, with a write batch and a read batch in memory.
#[derive(Default)]
pub struct Deferred {
    /// Read from the front file, not yet popped, each with the offset just past it.
    reading: VecDeque<(Entry, u64)>,
    /// Where the first URL of `reading` starts in the front file.
    reading_start: u64,
    files: VecDeque<SpillFile>,
    writing: Vec<Entry>,
}

impl Deferred {
    pub fn len(&self) -> u64 {
        self.reading.len() as u64
            + self.files.iter().map(SpillFile::len).sum::<u64>()
            + self.writing.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.reading.is_empty() && self.writing.is_empty() && self.files.iter().all(|f| f.len == 0)
    }

    pub fn push(&mut self, entry: Entry, dir: &mut SpillDir) -> Result<()> {
        self.writing.push(entry);
        if self.writing.len() >= DEFERRED_BATCH {
            self.write(dir)?;
        }
        Ok(())
    }

    fn write(&mut self, dir: &mut SpillDir) -> Result<()> {
        if self.writing.is_empty() {
            return Ok(());
        }
        if self
            .files
            .back()
            .is_none_or(|f| f.end >= DEFERRED_FILE_BYTES)
        {
            self.files.push_back(dir.create());
        }
        let file = self.files.back_mut().expect("a deferred file");
        file.append(&dir.dir, self.writing.iter())?;
        self.writing.clear();
        Ok(())
    }

    /// The oldest deferred URL, without taking it.
    pub fn peek(&mut self, dir: &mut SpillDir) -> Result<Option<&Entry>> {
        if self.reading.is_empty() {
            // Read to their ends: the next checkpoint deletes them.
            while self.files.front().is_some_and(|f| f.len == 0) {
                self.files.pop_front();
            }
            if self.files.is_empty() {
                // What is read always comes from a file, so a checkpoint can name it as a range.
                self.write(dir)?;
            }
            if let Some(front) = self.files.front_mut() {
                self.reading_start = front.read;
                front.read_into(&dir.dir, DEFERRED_BATCH, &mut self.reading)?;
            }
        }
        Ok(self.reading.front().map(|(entry, _)| entry))
    }

    /// Takes the URL `peek` showed.
    pub fn pop(&mut self) -> Option<Entry> {
        let (entry, end) = self.reading.pop_front()?;
        self.reading_start = end;
        Some(entry)
    }

    /// Crash-safety step 2: the write batch to disk, appended files synced, and the unread
    /// ranges, oldest first. URLs read but not popped stay inside the first range.
    pub fn checkpoint(&mut self, dir: &mut SpillDir) -> Result<Vec<Range>> {
        self.write(dir)?;
        let mut ranges = Vec::new();
        let reading = !self.reading.is_empty();
        for (i, file) in self.files.iter_mut().enumerate() {
            file.sync(&dir.dir)?;
            let mut range = file.range();
            if i == 0 && reading {
                range.read = self.reading_start;
            }
            if range.read < range.end {
                ranges.push(range);
            }
        }
        Ok(ranges)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every fourth entry is a sitemap: spill files carry `sN` lines too.
    fn entry(i: u32) -> Entry {
        let url = format!("http://a.test/p/{i}");
        match i % 4 {
            0 => Entry::sitemap(url, i % 3, 0),
            _ => Entry::new(url, i % 7, 0),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// A host queue behaves as a VecDeque under any interleaving of pushes, pops, retries
        /// and checkpoints, and what a checkpoint records (head lines, then the range) reads
        /// back as the model's contents in order.
        #[test]
        fn host_queue_agrees_with_vecdeque(ops in proptest::collection::vec(0u8..12, 0..400), at in 1usize..6) {
            let tmp = tempfile::tempdir().unwrap();
            let mut dir = SpillDir::open(tmp.path(), at).unwrap();
            let mut queue = HostQueue::default();
            let mut model = VecDeque::new();
            for (i, op) in ops.into_iter().enumerate() {
                match op {
                    0..=5 => {
                        queue.push_back(entry(i as u32), &mut dir).unwrap();
                        model.push_back(entry(i as u32));
                    }
                    6 => {
                        queue.push_front(entry(i as u32));
                        model.push_front(entry(i as u32));
                    }
                    7 => {
                        let range = queue.checkpoint(&mut dir).unwrap();
                        let mut saved: Vec<Entry> = queue.memory_entries().cloned().collect();
                        if let Some(range) = range {
                            let len = model.len() - saved.len();
                            let mut reader = RangeReader::new(SpillFile::new(range.id, range.read, range.end, len as u64));
                            while let Some(e) = reader.pop(tmp.path()).unwrap() {
                                saved.push(e);
                            }
                        }
                        prop_assert_eq!(saved, model.iter().cloned().collect::<Vec<_>>());
                    }
                    _ => prop_assert_eq!(queue.pop_front(&dir).unwrap(), model.pop_front()),
                }
                prop_assert_eq!(queue.len(), model.len());
            }
        }

        /// The deferred FIFO behaves as a VecDeque, and a checkpoint's lines and ranges read
        /// back as its contents in order.
        #[test]
        fn deferred_agrees_with_vecdeque(ops in proptest::collection::vec(0u8..10, 0..2000)) {
            let tmp = tempfile::tempdir().unwrap();
            let mut dir = SpillDir::open(tmp.path(), 4).unwrap();
            let mut deferred = Deferred::default();
            let mut model = VecDeque::new();
            for (i, op) in ops.into_iter().enumerate() {
                match op {
                    0..=5 => {
                        deferred.push(entry(i as u32), &mut dir).unwrap();
                        model.push_back(entry(i as u32));
                    }
                    6 => {
                        let ranges = deferred.checkpoint(&mut dir).unwrap();
                        let mut saved = Vec::new();
                        for range in ranges {
                            // The count only says "not empty": the range is read to its end.
                            let mut reader = RangeReader::new(SpillFile::new(range.id, range.read, range.end, u64::MAX));
                            while let Some(entry) = reader.pop(tmp.path()).unwrap() {
                                saved.push(entry);
                            }
                        }
                        prop_assert_eq!(saved, model.iter().cloned().collect::<Vec<_>>());
                    }
                    _ => {
                        let peeked = deferred.peek(&mut dir).unwrap().cloned();
                        prop_assert_eq!(&peeked, &model.front().cloned());
                        prop_assert_eq!(deferred.pop(), model.pop_front());
                    }
                }
                prop_assert_eq!(deferred.len(), model.len() as u64);
            }
        }
    }

    #[test]
    fn a_large_host_keeps_only_its_head_and_tail_in_memory() {
        let tmp = tempfile::tempdir().unwrap();
        let mut dir = SpillDir::open(tmp.path(), 8).unwrap();
        let mut queue = HostQueue::default();
        for i in 0..10_000 {
            queue.push_back(entry(i), &mut dir).unwrap();
            assert!(queue.in_memory() <= 16);
        }
        for i in 0..10_000 {
            assert_eq!(queue.pop_front(&dir).unwrap(), Some(entry(i)));
            assert!(queue.in_memory() <= 16);
        }
        assert!(queue.is_empty() && queue.file.is_none());
    }

    #[test]
    fn new_files_never_reuse_an_id_on_disk_and_others_are_removed() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join("7.q"), "garbage").unwrap();
        let mut dir = SpillDir::open(tmp.path(), 1).unwrap();
        let mut queue = HostQueue::default();
        for i in 0..3 {
            queue.push_back(entry(i), &mut dir).unwrap();
        }
        let range = queue.checkpoint(&mut dir).unwrap().unwrap();
        assert_eq!(range.id, 8);
        remove_others(tmp.path(), &[range.id]).unwrap();
        assert_eq!(list(tmp.path()).unwrap(), vec![8]);
    }
}
