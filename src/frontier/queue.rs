//! The frontier: a first-in first-out queue of URLs to fetch, kept on disk.
//!
//! Memory does not grow with the crawl: entries are appended to segment files
//! (`frontier/NNNNNNNNNNNN.seg`, one line per entry, see `Entry`) and read back in order. FIFO
//! order is what makes the crawl breadth-first.
//!
//! Crash safety (a kill at any instant loses no URL and refetches only pages in flight):
//! - Appends are made durable by `commit` (before the DUE records them as seen) and become
//!   visible to `pop` only at `publish` (after it has), so `rollback` can cut off a delivery a
//!   crash interrupted without taking back anything handed out (see `batch`).
//! - A popped entry is not done until its page is fetched, its links are spooled by the DUE,
//!   its response is archived and its URL-log line has reached the kernel
//!   (`urllog::Written`); then `done` appends the URL's checksum to `frontier/done` (one write
//!   to the kernel, so a kill cannot lose it). So every URL the seen set admitted is, at any
//!   kill, either done (fetched, archived and logged) or to be handed out again by the resume
//!   (on a segment past the head's position, a pending line of the head, or a spill range).
//! - `checkpoint` replaces `frontier/head` atomically with the read position, the entries
//!   popped but not yet done (host queues' heads, fetches in flight) and the unread ranges of
//!   the spill files (`spill`: host queues' overflow, the deferred FIFO), then starts a fresh
//!   `done` log, and deletes segments and spill files the head has left behind.
//!
//! Opening resumes from `head`: its pending entries first, then its spill ranges in order, then
//! the segments from its position, skipping every entry whose checksum is in `done`. A torn
//! last line is cut off.

use crate::frontier::Entry;
use crate::frontier::spill::{self, Range, RangeReader, SpillDir, SpillFile};
use crate::state::durable;
use crate::state::failpoint;
use anyhow::{Context, Result, bail};
use rustc_hash::FxHashSet;
use std::collections::VecDeque;
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Segments roll over at this size, so fully read ones can be deleted.
pub const SEGMENT_BYTES: u64 = 64 << 20;

/// A position in the segment files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pos {
    segment: u64,
    offset: u64,
}

pub struct Frontier {
    dir: PathBuf,
    writer: BufWriter<File>,
    /// Where the next append goes.
    write: Pos,
    /// The end of what `publish` made visible: `pop` reads no further. Appends past it are
    /// one delivery's, made durable by `commit` before they are published.
    published: Pos,
    reader: BufReader<File>,
    read: Pos,
    /// Entries popped before a crash and not done then, handed out again first.
    pending: VecDeque<Entry>,
    /// Then the spill ranges the head named (host queues and deferred URLs of the last run).
    recovered: VecDeque<RangeReader>,
    /// `frontier/spill`, for the scheduler to take (`take_spill_dir`).
    spill_dir: Option<SpillDir>,
    /// Checksums of entries done since the last checkpoint that `pop` has not passed yet.
    skip: FxHashSet<u64>,
    done_log: File,
    /// Committed entries not yet popped (skipped ones excluded).
    len: u64,
    /// Appended entries not yet published.
    unpublished: u64,
    line: String,
}

impl Frontier {
    /// Opens the frontier in `dir`, creating it if needed, and resumes from its head.
    pub fn open(dir: &Path) -> Result<Frontier> {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let (read, pending, ranges) = read_head(dir)?;
        let mut skip = read_done(dir)?;
        let mut segments = list_segments(dir)?;
        segments.retain(|&s| s >= read.segment);
        let mut pending_left = VecDeque::new();
        for entry in pending {
            if !skip.remove(&entry.key()) {
                pending_left.push_back(entry);
            }
        }
        let mut len = pending_left.len() as u64;
        let spill_dir = SpillDir::open(&dir.join("spill"), spill::spill_at())?;
        let mut recovered = VecDeque::new();
        for range in ranges {
            let (lines, live) = count_range(&dir.join("spill"), range, &skip)?;
            len += live;
            recovered.push_back(RangeReader::new(SpillFile::new(
                range.id, range.read, range.end, lines,
            )));
        }
        for &segment in &segments {
            let start = if segment == read.segment {
                read.offset
            } else {
                0
            };
            len += count_and_repair(&segment_path(dir, segment), start, &skip)?;
        }
        let write_segment = segments.last().copied().unwrap_or(read.segment);
        let writer = open_append(dir, write_segment)?;
        let write = Pos {
            segment: write_segment,
            offset: writer.metadata()?.len(),
        };
        let mut reader = BufReader::with_capacity(1 << 16, open_read(dir, read.segment)?);
        reader.seek(SeekFrom::Start(read.offset))?;
        let done_path = dir.join("done");
        let done_log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&done_path)
            .with_context(|| format!("opening {}", done_path.display()))?;
        Ok(Frontier {
            dir: dir.to_owned(),
            writer: BufWriter::with_capacity(1 << 16, writer),
            write,
            published: write,
            reader,
            read,
            pending: pending_left,
            recovered,
            spill_dir: Some(spill_dir),
            skip,
            done_log,
            len,
            unpublished: 0,
            line: String::new(),
        })
    }

    /// The spill directory (`frontier/spill`), for the host queues and the deferred FIFO;
    /// new files there never reuse the ID of one on disk. Once only.
    pub fn take_spill_dir(&mut self) -> Option<SpillDir> {
        self.spill_dir.take()
    }

    /// Entries that `pop` will still hand out.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends an entry at the tail; `pop` sees it after the next `commit` and `publish`.
    pub fn push(&mut self, entry: &Entry) -> Result<()> {
        debug_assert!(!entry.url.contains(['\n', '\t']));
        if self.write.offset >= segment_bytes() {
            self.writer.flush()?;
            self.writer.get_ref().sync_data()?;
            self.write = Pos {
                segment: self.write.segment + 1,
                offset: 0,
            };
            self.writer =
                BufWriter::with_capacity(1 << 16, open_append(&self.dir, self.write.segment)?);
            durable::sync_dir(&self.dir)?;
        }
        let mut line = entry.to_line();
        line.push('\n');
        let half = line.len() / 2;
        self.writer.write_all(&line.as_bytes()[..half])?;
        if failpoint::armed_for("frontier-append") {
            self.writer.flush()?; // the torn half-line reaches the file, then the process dies
            failpoint::hit("frontier-append");
        }
        self.writer.write_all(&line.as_bytes()[half..])?;
        self.write.offset += line.len() as u64;
        self.unpublished += 1;
        Ok(())
    }

    #[cfg(test)]
    /// Makes every appended entry durable.
    pub fn commit(&mut self) -> Result<()> {
        self.start_commit()?.sync_data()?;
        Ok(())
    }

    /// The first half of `commit`: hands the appends to the kernel and returns the file to
    /// fsync, so that a caller sharing the frontier under a lock can sync without holding it.
    /// (Earlier segments were synced when they rolled over.)
    pub fn start_commit(&mut self) -> Result<File> {
        self.writer.flush()?;
        Ok(self.writer.get_ref().try_clone()?)
    }

    /// Makes the committed entries visible to `pop`.
    pub fn publish(&mut self) {
        self.published = self.write;
        self.len += self.unpublished;
        self.unpublished = 0;
    }

    /// Names the end before a delivery, for `rollback`.
    pub fn mark(&self) -> String {
        debug_assert_eq!(self.published, self.write, "no delivery is under way");
        format!("{} {}", self.published.segment, self.published.offset)
    }

    /// Cuts off everything appended after `mark` (a delivery a crash interrupted). Only called
    /// while opening the crawl, before anything is popped.
    pub fn rollback(&mut self, mark: &str) -> Result<()> {
        let pos = parse_pos(mark).with_context(|| format!("bad frontier mark {mark:?}"))?;
        self.writer.flush()?;
        for segment in list_segments(&self.dir)? {
            let path = segment_path(&self.dir, segment);
            if segment > pos.segment {
                fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
            } else if segment == pos.segment {
                let file = OpenOptions::new().write(true).open(&path)?;
                if file.metadata()?.len() > pos.offset {
                    file.set_len(pos.offset)?;
                    file.sync_all()?;
                }
            }
        }
        *self = Frontier::open(&self.dir)?;
        Ok(())
    }

    /// Takes the next entry: first those a crash left pending, then the committed segments.
    pub fn pop(&mut self) -> Result<Option<Entry>> {
        while self.len > 0 {
            let entry = match self.pending.pop_front() {
                Some(entry) => entry,
                None => match self.pop_recovered()? {
                    Some(entry) => entry,
                    None => self.read_line()?,
                },
            };
            if !self.skip.is_empty() && self.skip.remove(&entry.key()) {
                continue; // done before the crash; `len` never counted it
            }
            self.len -= 1;
            return Ok(Some(entry));
        }
        Ok(None)
    }

    /// The next entry of the spill ranges a resumed head named.
    fn pop_recovered(&mut self) -> Result<Option<Entry>> {
        let dir = self.dir.join("spill");
        while let Some(reader) = self.recovered.front_mut() {
            if let Some(entry) = reader.pop(&dir)? {
                return Ok(Some(entry));
            }
            self.recovered.pop_front();
        }
        Ok(None)
    }

    fn read_line(&mut self) -> Result<Entry> {
        loop {
            self.line.clear();
            let read = self.reader.read_line(&mut self.line)?;
            if read > 0 && self.line.ends_with('\n') {
                self.read.offset += read as u64;
                return Entry::from_line(&self.line).with_context(|| {
                    format!(
                        "{}: bad frontier entry {:?}",
                        segment_path(&self.dir, self.read.segment).display(),
                        self.line
                    )
                });
            }
            // Not a whole line yet: the rest is in the writer's buffer, or in the next segment.
            if read > 0 {
                self.reader.seek_relative(-(read as i64))?;
            }
            if self.read.segment < self.published.segment && read == 0 {
                self.read = Pos {
                    segment: self.read.segment + 1,
                    offset: 0,
                };
                self.reader =
                    BufReader::with_capacity(1 << 16, open_read(&self.dir, self.read.segment)?);
            } else {
                self.writer.flush()?;
                if self.read == self.published {
                    bail!(
                        "frontier says {} entries remain but its files end",
                        self.len
                    );
                }
            }
        }
    }

    /// Records that the entries with checksums `keys` are done (one write to the done log):
    /// their pages will not be fetched again.
    pub fn done_all(&mut self, keys: &[u64]) -> Result<()> {
        failpoint::hit("done");
        let bytes: Vec<u8> = keys.iter().flat_map(|key| key.to_le_bytes()).collect();
        self.done_log
            .write_all(&bytes)
            .context("appending to frontier/done")
    }

    /// Persists the read position with the entries popped and not done (`outstanding`), the
    /// pending ones not yet popped, and the spill ranges still to read (`ranges`, whose files
    /// the caller has synced, then the recovered ones not yet read), then starts a fresh done
    /// log and deletes the segments and spill files left behind.
    pub fn checkpoint<'a>(
        &mut self,
        outstanding: impl Iterator<Item = &'a Entry>,
        ranges: &[Range],
    ) -> Result<()> {
        let mut head = format!("{} {}\n", self.read.segment, self.read.offset);
        for entry in self.pending.iter() {
            head.push_str(&entry.to_line());
            head.push('\n');
        }
        for entry in outstanding {
            head.push_str(&entry.to_line());
            head.push('\n');
        }
        let mut keep = Vec::new();
        let recovered = self.recovered.iter().filter_map(RangeReader::range);
        for range in ranges.iter().copied().chain(recovered) {
            head.push_str(&format!(
                "spill\t{}\t{}\t{}\n",
                range.id, range.read, range.end
            ));
            keep.push(range.id);
        }
        durable::replace(&self.dir.join("head"), head.as_bytes())
            .context("saving frontier/head")?;
        failpoint::hit("checkpoint");
        spill::remove_others(&self.dir.join("spill"), &keep)?;
        // Done entries the reader has not reached yet must still be skipped after a crash.
        let mut done = Vec::with_capacity(self.skip.len() * 8);
        for key in &self.skip {
            done.extend_from_slice(&key.to_le_bytes());
        }
        let done_path = self.dir.join("done");
        durable::replace(&done_path, &done).context("saving frontier/done")?;
        self.done_log = OpenOptions::new()
            .append(true)
            .open(&done_path)
            .with_context(|| format!("opening {}", done_path.display()))?;
        for segment in list_segments(&self.dir)? {
            if segment < self.read.segment {
                fs::remove_file(segment_path(&self.dir, segment))?;
            }
        }
        Ok(())
    }
}

/// The segment size; a hidden knob lets the kill-and-resume tests roll segments often.
fn segment_bytes() -> u64 {
    static BYTES: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    failpoint::knob(&BYTES, "CRAWL_SEGMENT_BYTES", SEGMENT_BYTES)
}

fn segment_path(dir: &Path, segment: u64) -> PathBuf {
    dir.join(format!("{segment:012}.seg"))
}

fn open_append(dir: &Path, segment: u64) -> Result<File> {
    let path = segment_path(dir, segment);
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("opening {}", path.display()))
}

fn open_read(dir: &Path, segment: u64) -> Result<File> {
    open_append(dir, segment)?; // make sure it exists
    let path = segment_path(dir, segment);
    File::open(&path).with_context(|| format!("opening {}", path.display()))
}

fn parse_pos(text: &str) -> Option<Pos> {
    let mut parts = text.split_whitespace().map(str::parse::<u64>);
    match (parts.next(), parts.next()) {
        (Some(Ok(segment)), Some(Ok(offset))) => Some(Pos { segment, offset }),
        _ => None,
    }
}

/// The head file: the read position, then the entries that were pending at the checkpoint and
/// the spill ranges (`spill TAB ID TAB READ TAB END`).
fn read_head(dir: &Path) -> Result<(Pos, Vec<Entry>, Vec<Range>)> {
    let path = dir.join("head");
    let text = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok((
                Pos {
                    segment: 0,
                    offset: 0,
                },
                Vec::new(),
                Vec::new(),
            ));
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    let Some(pos) = parse_pos(first) else {
        bail!(
            "{}:1: expected \"SEGMENT OFFSET\", found {first:?}",
            path.display()
        );
    };
    let mut pending = Vec::new();
    let mut ranges = Vec::new();
    for (i, line) in lines.enumerate() {
        if let Some(range) = line.strip_prefix("spill\t") {
            let mut n = range.split('\t').map(str::parse::<u64>);
            match (n.next(), n.next(), n.next(), n.next()) {
                (Some(Ok(id)), Some(Ok(read)), Some(Ok(end)), None) if read <= end => {
                    ranges.push(Range { id, read, end })
                }
                _ => bail!(
                    "{}:{}: expected \"spill ID READ END\", found {line:?}",
                    path.display(),
                    i + 2
                ),
            }
            continue;
        }
        match Entry::from_line(line) {
            Some(entry) => pending.push(entry),
            None => bail!("{}:{}: bad entry {line:?}", path.display(), i + 2),
        }
    }
    Ok((pos, pending, ranges))
}

/// The checksums in the done log (a torn last record is ignored: its page was in flight).
fn read_done(dir: &Path) -> Result<FxHashSet<u64>> {
    let path = dir.join("done");
    let bytes = match fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    Ok(bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect())
}

fn list_segments(dir: &Path) -> Result<Vec<u64>> {
    spill::list_numbered(dir, ".seg")
}

/// The lines in a spill range, and how many of them are not in `skip` (read in a stream: a
/// large host's file may be larger than memory should hold).
fn count_range(dir: &Path, range: Range, skip: &FxHashSet<u64>) -> Result<(u64, u64)> {
    let path = spill::file_path(dir, range.id);
    let mut file = File::open(&path).with_context(|| format!("opening {}", path.display()))?;
    if file.metadata()?.len() < range.end {
        bail!(
            "{} is shorter than the range {}..{} frontier/head names",
            path.display(),
            range.read,
            range.end
        );
    }
    file.seek(SeekFrom::Start(range.read))?;
    let mut reader = BufReader::with_capacity(1 << 16, file.take(range.end - range.read));
    let (mut lines, mut live) = (0, 0);
    let mut line = Vec::new();
    while reader.read_until(b'\n', &mut line)? > 0 {
        lines += 1;
        live += u64::from(skip.is_empty() || !skip.contains(&Entry::key_of_line(&line)));
        line.clear();
    }
    Ok((lines, live))
}

/// Counts the entries from `start` that are not in `skip`, truncating a torn last line.
fn count_and_repair(path: &Path, start: u64, skip: &FxHashSet<u64>) -> Result<u64> {
    let bytes = fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let tail = bytes.get(start as usize..).unwrap_or_default();
    let whole = tail.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
    if whole < tail.len() {
        let file = OpenOptions::new().write(true).open(path)?;
        file.set_len(start + whole as u64)?;
        file.sync_all()?;
    }
    let mut count = 0;
    for line in tail[..whole]
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
    {
        let skipped = !skip.is_empty() && skip.contains(&Entry::key_of_line(line));
        count += u64::from(!skipped);
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontier::Previous;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    /// Every fourth entry is a sitemap (its key is not its URL's checksum).
    fn entry(i: u32) -> Entry {
        let url = format!("http://h{}.test/p/{i}", i % 5);
        match i % 4 {
            0 => Entry::sitemap(url, i % 3, i % 2),
            _ => Entry::new(url, i % 7, i % 3),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// The frontier behaves as a VecDeque of published entries under any interleaving of
        /// pushes, publications, pops and reopens (after a checkpoint listing nothing).
        #[test]
        fn agrees_with_vecdeque(ops in proptest::collection::vec(0u8..10, 0..600)) {
            let dir = tempfile::tempdir().unwrap();
            let mut frontier = Frontier::open(dir.path()).unwrap();
            let mut model = VecDeque::new();
            let mut unpublished = Vec::new();
            for (i, op) in ops.into_iter().enumerate() {
                match op {
                    0..=3 => {
                        frontier.push(&entry(i as u32)).unwrap();
                        unpublished.push(entry(i as u32));
                    }
                    4 | 9 => {
                        frontier.commit().unwrap();
                        frontier.publish();
                        model.extend(unpublished.drain(..));
                        if op == 9 {
                            frontier.checkpoint(std::iter::empty(), &[]).unwrap();
                            drop(frontier);
                            frontier = Frontier::open(dir.path()).unwrap();
                        }
                    }
                    _ => prop_assert_eq!(frontier.pop().unwrap(), model.pop_front()),
                }
                prop_assert_eq!(frontier.len(), model.len() as u64);
            }
        }
    }

    #[test]
    fn uncommitted_entries_are_invisible_and_rolled_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut frontier = Frontier::open(dir.path()).unwrap();
        frontier.push(&entry(1)).unwrap();
        frontier.commit().unwrap();
        frontier.publish();
        let mark = frontier.mark();
        frontier.push(&entry(2)).unwrap();
        assert_eq!(frontier.len(), 1);
        assert_eq!(frontier.pop().unwrap(), Some(entry(1)));
        assert_eq!(frontier.pop().unwrap(), None, "2 is not committed");
        frontier.writer.flush().unwrap(); // as a crash after a partial delivery would leave it
        drop(frontier);
        let mut frontier = Frontier::open(dir.path()).unwrap();
        frontier.rollback(&mark).unwrap();
        assert_eq!(
            frontier.pop().unwrap(),
            Some(entry(1)),
            "never checkpointed"
        );
        assert_eq!(frontier.pop().unwrap(), None);
    }

    #[test]
    fn a_reopen_hands_out_outstanding_entries_and_skips_done_ones() {
        let dir = tempfile::tempdir().unwrap();
        let mut frontier = Frontier::open(dir.path()).unwrap();
        for i in 0..6 {
            frontier.push(&entry(i)).unwrap();
        }
        frontier.commit().unwrap();
        frontier.publish();
        let popped: Vec<Entry> = (0..4).map(|_| frontier.pop().unwrap().unwrap()).collect();
        // 0 and 1 are done; 2 and 3 are still in a host queue at the checkpoint.
        frontier
            .done_all(&[popped[0].key(), popped[1].key()])
            .unwrap();
        frontier.checkpoint(popped[2..].iter(), &[]).unwrap();
        // After the checkpoint 2 and 4 finish (4 popped later); then the process is killed.
        frontier.done_all(&[popped[2].key()]).unwrap();
        assert_eq!(frontier.pop().unwrap(), Some(entry(4)));
        frontier.done_all(&[entry(4).key()]).unwrap();
        drop(frontier);
        let mut frontier = Frontier::open(dir.path()).unwrap();
        assert_eq!(frontier.len(), 2);
        assert_eq!(frontier.pop().unwrap(), Some(entry(3)));
        assert_eq!(frontier.pop().unwrap(), Some(entry(5)));
        assert_eq!(frontier.pop().unwrap(), None);
    }

    /// A spill range holds sitemap lines too: a reopen counts and skips the done ones by their
    /// key (a sitemap's is not its URL's checksum).
    #[test]
    fn a_reopen_skips_done_sitemaps_in_spill_ranges() {
        let dir = tempfile::tempdir().unwrap();
        let mut frontier = Frontier::open(dir.path()).unwrap();
        let mut spill_dir = frontier.take_spill_dir().unwrap();
        spill_dir.at = 1;
        let mut queue = spill::HostQueue::default();
        for i in 0..8 {
            queue.push_back(entry(i), &mut spill_dir).unwrap();
        }
        let range = queue
            .checkpoint(&mut spill_dir)
            .unwrap()
            .expect("a spill file");
        let head: Vec<Entry> = queue.memory_entries().cloned().collect();
        assert_eq!(head, [entry(0)]);
        frontier.checkpoint(head.iter(), &[range]).unwrap();
        // 4 (a sitemap) and 5, both in the range, are done; then the process is killed.
        frontier
            .done_all(&[entry(4).key(), entry(5).key()])
            .unwrap();
        drop(frontier);
        let mut frontier = Frontier::open(dir.path()).unwrap();
        assert_eq!(frontier.len(), 6);
        let popped: Vec<Entry> = std::iter::from_fn(|| frontier.pop().unwrap()).collect();
        assert_eq!(popped, [0, 1, 2, 3, 6, 7].map(entry));
    }

    #[test]
    fn torn_last_line_is_cut_on_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let mut frontier = Frontier::open(dir.path()).unwrap();
        frontier.push(&entry(1)).unwrap();
        frontier.commit().unwrap();
        frontier.publish();
        drop(frontier);
        let mut file = OpenOptions::new()
            .append(true)
            .open(segment_path(dir.path(), 0))
            .unwrap();
        file.write_all(b"3\t0\thttp://torn").unwrap();
        let mut frontier = Frontier::open(dir.path()).unwrap();
        assert_eq!(frontier.len(), 1);
        assert_eq!(frontier.pop().unwrap(), Some(entry(1)));
        assert_eq!(frontier.pop().unwrap(), None);
    }

    #[test]
    fn rolls_segments_and_deletes_read_ones() {
        let dir = tempfile::tempdir().unwrap();
        let mut frontier = Frontier::open(dir.path()).unwrap();
        frontier.write.offset = SEGMENT_BYTES; // force a roll on the next push
        frontier.push(&entry(1)).unwrap();
        frontier.push(&entry(2)).unwrap();
        frontier.commit().unwrap();
        frontier.publish();
        assert_eq!(frontier.pop().unwrap(), Some(entry(1)));
        frontier.checkpoint(std::iter::empty(), &[]).unwrap();
        assert_eq!(list_segments(dir.path()).unwrap(), vec![1]);
        assert_eq!(frontier.pop().unwrap(), Some(entry(2)));
    }

    #[test]
    fn previous_fetch_fields_round_trip() {
        let mut e = entry(3);
        e.previous = Some(Previous {
            status: 200,
            etag: Some("\"abc\"".into()),
            last_modified: None,
            digest: "sha1:XYZ".into(),
            date: 1_700_000_000,
            history: Default::default(),
        });
        assert_eq!(Entry::from_line(&e.to_line()), Some(e));
    }
}
