//! The frontier: a first-in first-out queue of URLs to fetch, kept on disk.
//!
//! Memory does not grow with the crawl: entries are appended to segment files
//! (`frontier/NNNNNNNNNNNN.seg`, one `depth TAB redirects TAB url` line per entry) and read back
//! in order; `frontier/head` records the read position (segment, offset), replaced atomically.
//! A segment is deleted once the persisted head has moved past it. FIFO order is what makes the
//! crawl breadth-first.

use crate::durable;
use anyhow::{Context, Result, bail};
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Segments roll over at this size, so fully read ones can be deleted.
const SEGMENT_BYTES: u64 = 64 << 20;

/// A URL waiting to be fetched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Link hops from a seed (seeds are 0).
    pub depth: u32,
    /// Redirects followed to reach this URL since the last link (bounds redirect chains).
    pub redirects: u32,
    pub url: String,
}

pub struct Frontier {
    dir: PathBuf,
    writer: BufWriter<File>,
    write_segment: u64,
    write_offset: u64,
    reader: BufReader<File>,
    read_segment: u64,
    read_offset: u64,
    /// Entries pushed and not yet popped.
    len: u64,
    line: String,
}

impl Frontier {
    /// Opens the frontier in `dir`, creating it if needed. An existing queue resumes from its
    /// persisted head; a torn last line (a crash mid-append) is cut off.
    pub fn open(dir: &Path) -> Result<Frontier> {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let (read_segment, read_offset) = read_head(dir)?;
        let mut segments = list_segments(dir)?;
        segments.retain(|&s| s >= read_segment);
        let write_segment = segments.last().copied().unwrap_or(read_segment);
        let mut len = 0;
        for &segment in &segments {
            let start = if segment == read_segment {
                read_offset
            } else {
                0
            };
            len += count_and_repair(&segment_path(dir, segment), start)?;
        }
        let writer = open_append(dir, write_segment)?;
        let write_offset = writer.metadata()?.len();
        let mut reader = BufReader::with_capacity(1 << 16, open_read(dir, read_segment)?);
        reader.seek(SeekFrom::Start(read_offset))?;
        Ok(Frontier {
            dir: dir.to_owned(),
            writer: BufWriter::with_capacity(1 << 16, writer),
            write_segment,
            write_offset,
            reader,
            read_segment,
            read_offset,
            len,
            line: String::new(),
        })
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends an entry at the tail.
    pub fn push(&mut self, entry: &Entry) -> Result<()> {
        debug_assert!(!entry.url.contains(['\n', '\t']));
        if self.write_offset >= SEGMENT_BYTES {
            self.writer.flush()?;
            self.write_segment += 1;
            self.writer =
                BufWriter::with_capacity(1 << 16, open_append(&self.dir, self.write_segment)?);
            self.write_offset = 0;
        }
        let line = format!("{}\t{}\t{}\n", entry.depth, entry.redirects, entry.url);
        self.writer.write_all(line.as_bytes())?;
        self.write_offset += line.len() as u64;
        self.len += 1;
        Ok(())
    }

    /// Takes the entry at the head, if any.
    pub fn pop(&mut self) -> Result<Option<Entry>> {
        if self.len == 0 {
            return Ok(None);
        }
        loop {
            self.line.clear();
            let read = self.reader.read_line(&mut self.line)?;
            if read > 0 && self.line.ends_with('\n') {
                self.read_offset += read as u64;
                self.len -= 1;
                return parse_line(&self.line).map(Some).with_context(|| {
                    format!(
                        "{}: bad frontier entry {:?}",
                        segment_path(&self.dir, self.read_segment).display(),
                        self.line
                    )
                });
            }
            // Not a whole line yet: the rest is in the writer's buffer, or in the next segment.
            if read > 0 {
                self.reader.seek_relative(-(read as i64))?;
            }
            if self.read_segment < self.write_segment && read == 0 {
                self.read_segment += 1;
                self.read_offset = 0;
                self.reader =
                    BufReader::with_capacity(1 << 16, open_read(&self.dir, self.read_segment)?);
            } else {
                self.writer.flush()?;
                if self.read_segment == self.write_segment && self.read_offset >= self.write_offset
                {
                    bail!(
                        "frontier says {} entries remain but its files end",
                        self.len
                    );
                }
            }
        }
    }

    /// Makes everything pushed so far durable and records the read position, then deletes
    /// segments the head has left behind.
    pub fn persist(&mut self) -> Result<()> {
        self.writer.flush()?;
        self.writer.get_ref().sync_data()?;
        let head = format!("{} {}\n", self.read_segment, self.read_offset);
        durable::replace(&self.dir.join("head"), head.as_bytes())?;
        for segment in list_segments(&self.dir)? {
            if segment < self.read_segment {
                fs::remove_file(segment_path(&self.dir, segment))?;
            }
        }
        Ok(())
    }
}

/// Entries wait in DUE batches in the frontier's own line format.
impl crate::batch::Payload for Entry {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(
            format!("{}\t{}\t{}", self.depth, self.redirects, self.url).as_bytes(),
        );
    }
    fn decode(bytes: &[u8]) -> Result<Self> {
        let line = std::str::from_utf8(bytes).context("a spooled entry is not UTF-8")?;
        parse_line(line).with_context(|| format!("bad spooled entry {line:?}"))
    }
}

fn parse_line(line: &str) -> Option<Entry> {
    let mut fields = line.trim_end_matches('\n').splitn(3, '\t');
    Some(Entry {
        depth: fields.next()?.parse().ok()?,
        redirects: fields.next()?.parse().ok()?,
        url: fields.next()?.to_owned(),
    })
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

fn read_head(dir: &Path) -> Result<(u64, u64)> {
    let path = dir.join("head");
    match fs::read_to_string(&path) {
        Ok(text) => {
            let mut parts = text.split_whitespace().map(str::parse::<u64>);
            match (parts.next(), parts.next()) {
                (Some(Ok(segment)), Some(Ok(offset))) => Ok((segment, offset)),
                _ => bail!(
                    "{}: expected \"SEGMENT OFFSET\", found {text:?}",
                    path.display()
                ),
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((0, 0)),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

fn list_segments(dir: &Path) -> Result<Vec<u64>> {
    let mut segments = Vec::new();
    for entry in fs::read_dir(dir)? {
        let name = entry?.file_name();
        if let Some(n) = name
            .to_str()
            .and_then(|n| n.strip_suffix(".seg"))
            .and_then(|n| n.parse().ok())
        {
            segments.push(n);
        }
    }
    segments.sort_unstable();
    Ok(segments)
}

/// Counts whole lines from `start`, truncating a torn last line.
fn count_and_repair(path: &Path, start: u64) -> Result<u64> {
    let bytes = fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let tail = bytes.get(start as usize..).unwrap_or_default();
    let whole = tail.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
    if whole < tail.len() {
        let file = OpenOptions::new().write(true).open(path)?;
        file.set_len(start + whole as u64)?;
        file.sync_all()?;
    }
    Ok(tail[..whole].iter().filter(|&&b| b == b'\n').count() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    fn entry(i: u32) -> Entry {
        Entry {
            depth: i % 7,
            redirects: i % 3,
            url: format!("http://h{}.test/p/{i}", i % 5),
        }
    }

    proptest! {
        /// The frontier behaves as a VecDeque under any interleaving of pushes, pops and reopens.
        #[test]
        fn agrees_with_vecdeque(ops in proptest::collection::vec(0u8..10, 0..600)) {
            let dir = tempfile::tempdir().unwrap();
            let mut frontier = Frontier::open(dir.path()).unwrap();
            let mut model = VecDeque::new();
            for (i, op) in ops.into_iter().enumerate() {
                match op {
                    0..=4 => { frontier.push(&entry(i as u32)).unwrap(); model.push_back(entry(i as u32)); }
                    5..=8 => prop_assert_eq!(frontier.pop().unwrap(), model.pop_front()),
                    _ => { frontier.persist().unwrap(); drop(frontier); frontier = Frontier::open(dir.path()).unwrap(); }
                }
                prop_assert_eq!(frontier.len(), model.len() as u64);
            }
        }
    }

    #[test]
    fn torn_last_line_is_cut_on_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let mut frontier = Frontier::open(dir.path()).unwrap();
        frontier.push(&entry(1)).unwrap();
        frontier.persist().unwrap();
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
        frontier.write_offset = SEGMENT_BYTES; // force a roll on the next push
        frontier.push(&entry(1)).unwrap();
        frontier.push(&entry(2)).unwrap();
        assert_eq!(frontier.pop().unwrap(), Some(entry(1)));
        frontier.persist().unwrap();
        assert_eq!(list_segments(dir.path()).unwrap(), vec![1]);
        assert_eq!(frontier.pop().unwrap(), Some(entry(2)));
    }
}
