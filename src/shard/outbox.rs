//! A destination's outbox: URLs for another shard, durable on disk until the broker has them.
//!
//! `DIR/shard/outbox/<dest>/` holds segment files (`NNNNNNNNNNNN.seg`, `depth TAB url` lines,
//! the broker's own batch encoding) appended to by the workers, and `cursor` (`SEGMENT OFFSET`),
//! how far the sender has published. Memory holds no URL: the backlog of a slow or full
//! destination waits here.
//!
//! Crash safety:
//! - `append` hands its lines to the kernel in one write before it returns (what the DUE's
//!   `offer` does: a kill loses nothing appended); `flush` fsyncs them, and the directory when
//!   a segment was created since, for a power cut.
//! - The cursor moves only after the broker accepted every batch before it (`commit`, called by
//!   the sender), and is replaced atomically (`state::durable`). A kill between a publish and
//!   its commit re-publishes those batches on the next run: a duplicate, which the receiving
//!   DUE drops.
//! - Segments wholly before the cursor are deleted after it is committed (crash point
//!   `outbox-committed` lies between); `open` deletes any a kill left, so the disk holds the
//!   unpublished backlog plus at most one segment's published prefix.
//! - A torn last line (a kill inside a write) is cut off at open; it belonged to a page not yet
//!   done, which is fetched again.
//!
//! One sender per outbox: `pending` and `commit` are its calls; `append` and `flush` may come
//! from any thread.

use crate::shard::broker::{Handoff, decode, encode};
use crate::state::{durable, failpoint};
use anyhow::{Context, Result, anyhow, bail};
use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// Segments roll over at this size, so published ones can be deleted.
pub const SEGMENT_BYTES: u64 = 4 << 20;

/// A place in the segment files: before the byte `offset` of segment `segment`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    segment: u64,
    offset: u64,
}

/// One batch for the broker, and where the outbox stands once it is published.
#[derive(Debug)]
pub struct Pending {
    pub urls: Vec<Handoff>,
    pub end: Position,
}

/// Sizes of the batches `pending` makes.
#[derive(Clone, Copy, Debug)]
pub struct Batching {
    /// URLs in one batch (one stream entry) at most.
    pub urls: usize,
    /// Batches handed out by one `pending` call at most.
    pub batches: usize,
}

/// One destination's outbox (see the module doc).
pub struct Outbox {
    dir: PathBuf,
    segment_bytes: u64,
    state: Mutex<State>,
    /// Signalled on each append, for a sender waiting for work.
    appended: Condvar,
}

struct State {
    file: File,
    /// Where the next append goes (the tail segment and its length).
    end: Position,
    /// How far the broker has everything (the durable cursor).
    cursor: Position,
    /// A segment was created since the last `flush`: the directory needs an fsync too.
    dir_dirty: bool,
}

impl Outbox {
    /// Opens (or creates) the outbox in `dir`, finishing what a killed run left: segments
    /// before the cursor deleted, a torn last line cut off.
    pub fn open(dir: &Path) -> Result<Outbox> {
        Self::open_with(dir, SEGMENT_BYTES)
    }

    /// `open` with segments rolling over at `segment_bytes` (tests use small ones).
    pub fn open_with(dir: &Path, segment_bytes: u64) -> Result<Outbox> {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let cursor = read_cursor(&dir.join("cursor"))?;
        let mut segments = list_segments(dir)?;
        for &segment in segments.iter().filter(|&&s| s < cursor.segment) {
            durable::remove_if_present(&segment_path(dir, segment))?;
        }
        segments.retain(|&s| s >= cursor.segment);
        let tail = segments.last().copied().unwrap_or(cursor.segment);
        let path = segment_path(dir, tail);
        let (file, len) =
            durable::open_log(&path).with_context(|| format!("opening {}", path.display()))?;
        if tail == cursor.segment && len < cursor.offset {
            bail!(
                "{}: {len} bytes, but {} says {} were published",
                path.display(),
                dir.join("cursor").display(),
                cursor.offset
            );
        }
        Ok(Outbox {
            dir: dir.to_owned(),
            segment_bytes: segment_bytes.max(1),
            state: Mutex::new(State {
                file,
                end: Position {
                    segment: tail,
                    offset: len,
                },
                cursor,
                dir_dirty: true,
            }),
            appended: Condvar::new(),
        })
    }

    /// Appends URLs for this destination: handed to the kernel (one write) before it returns.
    pub fn append(&self, urls: &[Handoff]) -> Result<()> {
        if urls.is_empty() {
            return Ok(());
        }
        let lines = encode(urls);
        let mut state = self.lock();
        if state.end.offset >= self.segment_bytes {
            self.roll(&mut state)?;
        }
        let segment = state.end.segment;
        state.file.write_all(lines.as_bytes()).with_context(|| {
            format!(
                "appending to {}",
                segment_path(&self.dir, segment).display()
            )
        })?;
        state.end.offset += lines.len() as u64;
        drop(state);
        self.appended.notify_all();
        Ok(())
    }

    /// Makes every append so far survive a power cut (fsync of the tail segment, and of the
    /// directory when a segment was created since the last flush).
    pub fn flush(&self) -> Result<()> {
        let mut state = self.lock();
        state.file.sync_data().context("fsync of the outbox")?;
        if state.dir_dirty {
            durable::sync_dir(&self.dir)?;
            state.dir_dirty = false;
        }
        Ok(())
    }

    /// Whether everything appended has been published (the shard's "outboxes all published").
    pub fn is_drained(&self) -> Result<bool> {
        Ok(self.backlog_bytes()? == 0)
    }

    /// Bytes appended and not yet published: what waits here for the broker.
    pub fn backlog_bytes(&self) -> Result<u64> {
        let (cursor, end) = self.bounds();
        let mut bytes = 0;
        for segment in cursor.segment..=end.segment {
            let len = if segment == end.segment {
                end.offset
            } else {
                match fs::metadata(segment_path(&self.dir, segment)) {
                    Ok(meta) => meta.len(),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
                    Err(e) => return Err(e).context("reading an outbox segment's length"),
                }
            };
            let from = if segment == cursor.segment {
                cursor.offset
            } else {
                0
            };
            bytes += len.saturating_sub(from);
        }
        Ok(bytes)
    }

    /// The published position and the end of what was appended.
    pub fn bounds(&self) -> (Position, Position) {
        let state = self.lock();
        (state.cursor, state.end)
    }

    /// Waits until something is appended after `end` (an end `bounds` gave) or `timeout`
    /// passes: the sender's idle wait.
    pub fn wait_for_append(&self, end: Position, timeout: Duration) {
        let state = self.lock();
        if state.end != end {
            return;
        }
        let _ = self.appended.wait_timeout(state, timeout);
    }

    /// Wakes a sender waiting in `wait_for_append` (to stop it).
    pub fn wake(&self) {
        self.appended.notify_all();
    }

    /// The next unpublished batches from the cursor, each with the position after it.
    pub fn pending(&self, batching: Batching) -> Result<Vec<Pending>> {
        let (mut at, end) = self.bounds();
        let mut out: Vec<Pending> = Vec::new();
        let mut batch = Vec::new();
        while at < end && out.len() < batching.batches {
            let path = segment_path(&self.dir, at.segment);
            let limit = if at.segment == end.segment {
                end.offset
            } else {
                u64::MAX
            };
            let mut file =
                File::open(&path).with_context(|| format!("opening {}", path.display()))?;
            file.seek(SeekFrom::Start(at.offset))?;
            let mut reader = BufReader::new(file).take(limit - at.offset.min(limit));
            let mut line = String::new();
            loop {
                line.clear();
                let n = reader
                    .read_line(&mut line)
                    .with_context(|| format!("reading {}", path.display()))?;
                if n == 0 {
                    break;
                }
                if !line.ends_with('\n') {
                    bail!(
                        "{}: a record at byte {} has no line end",
                        path.display(),
                        at.offset
                    );
                }
                let mut urls = decode(&line).map_err(|e| {
                    anyhow!("{}: bad record at byte {}: {e}", path.display(), at.offset)
                })?;
                at.offset += n as u64;
                batch.append(&mut urls);
                if batch.len() >= batching.urls {
                    out.push(Pending {
                        urls: std::mem::take(&mut batch),
                        end: at,
                    });
                    if out.len() >= batching.batches {
                        break;
                    }
                }
            }
            if at.segment < end.segment && out.len() < batching.batches {
                at = Position {
                    segment: at.segment + 1,
                    offset: 0,
                };
            }
        }
        if !batch.is_empty() {
            out.push(Pending {
                urls: batch,
                end: at,
            });
        }
        Ok(out)
    }

    /// Records that the broker has everything before `to`: the cursor file is replaced
    /// atomically, then segments wholly before it are deleted.
    pub fn commit(&self, to: Position) -> Result<()> {
        let from = self.lock().cursor;
        if to <= from {
            return Ok(());
        }
        let path = self.dir.join("cursor");
        durable::replace(&path, format!("{} {}\n", to.segment, to.offset).as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
        self.lock().cursor = to;
        failpoint::hit("outbox-committed");
        for segment in from.segment..to.segment {
            durable::remove_if_present(&segment_path(&self.dir, segment))?;
        }
        Ok(())
    }

    /// Starts a new tail segment; the full one is fsynced first, so a `flush` need only sync
    /// the tail.
    fn roll(&self, state: &mut MutexGuard<'_, State>) -> Result<()> {
        state
            .file
            .sync_data()
            .context("fsync of an outbox segment")?;
        let next = state.end.segment + 1;
        let path = segment_path(&self.dir, next);
        (state.file, _) =
            durable::open_log(&path).with_context(|| format!("creating {}", path.display()))?;
        state.end = Position {
            segment: next,
            offset: 0,
        };
        state.dir_dirty = true;
        Ok(())
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn segment_path(dir: &Path, segment: u64) -> PathBuf {
    dir.join(format!("{segment:012}.seg"))
}

fn list_segments(dir: &Path) -> Result<Vec<u64>> {
    let mut segments = Vec::new();
    for entry in fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let name = entry?.file_name();
        let name = name.to_string_lossy();
        if let Some(n) = name.strip_suffix(".seg").and_then(|n| n.parse().ok()) {
            segments.push(n);
        }
    }
    segments.sort_unstable();
    Ok(segments)
}

/// The durable cursor; (0, 0) before the first commit.
fn read_cursor(path: &Path) -> Result<Position> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Position {
                segment: 0,
                offset: 0,
            });
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let parsed = text.trim_end().split_once(' ').and_then(|(s, o)| {
        Some(Position {
            segment: s.parse().ok()?,
            offset: o.parse().ok()?,
        })
    });
    parsed.with_context(|| {
        format!(
            "{}:1: expected `SEGMENT OFFSET`, found {text:?}",
            path.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::OpenOptions;

    fn urls(range: std::ops::Range<u32>) -> Vec<Handoff> {
        range
            .map(|i| Handoff {
                url: format!("http://h{}.test/p{i}", i % 3),
                depth: i,
            })
            .collect()
    }

    const PAIRS: Batching = Batching {
        urls: 2,
        batches: 100,
    };

    fn pending_urls(outbox: &Outbox, batching: Batching) -> Vec<Vec<Handoff>> {
        outbox
            .pending(batching)
            .unwrap()
            .into_iter()
            .map(|p| p.urls)
            .collect()
    }

    fn segments(dir: &Path) -> Vec<u64> {
        list_segments(dir).unwrap()
    }

    #[test]
    fn only_a_commit_moves_the_cursor_and_a_reopened_outbox_publishes_the_rest_again() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("outbox/1");
        let outbox = Outbox::open(&dir).unwrap();
        assert!(outbox.is_drained().unwrap());
        outbox.append(&urls(0..3)).unwrap();
        outbox.append(&urls(3..5)).unwrap();
        outbox.flush().unwrap();
        assert!(!outbox.is_drained().unwrap());
        let want = vec![urls(0..2), urls(2..4), urls(4..5)];
        assert_eq!(pending_urls(&outbox, PAIRS), want);
        let two = Batching {
            urls: 2,
            batches: 2,
        };
        assert_eq!(
            pending_urls(&outbox, two),
            want[..2],
            "at most `batches` at a time"
        );
        // Killed after publishing everything, before any commit: all of it again.
        drop(outbox);
        let outbox = Outbox::open(&dir).unwrap();
        let pending = outbox.pending(PAIRS).unwrap();
        assert_eq!(pending.len(), 3);
        // Killed after committing the first two batches: the third again, only.
        outbox.commit(pending[1].end).unwrap();
        assert_eq!(pending_urls(&outbox, PAIRS), want[2..]);
        drop(outbox);
        let outbox = Outbox::open(&dir).unwrap();
        assert_eq!(pending_urls(&outbox, PAIRS), want[2..]);
        let last = outbox.pending(PAIRS).unwrap().pop().unwrap();
        outbox.commit(last.end).unwrap();
        assert!(outbox.is_drained().unwrap());
        drop(outbox);
        let outbox = Outbox::open(&dir).unwrap();
        assert!(outbox.is_drained().unwrap() && pending_urls(&outbox, PAIRS).is_empty());
        outbox.append(&urls(5..6)).unwrap();
        assert_eq!(pending_urls(&outbox, PAIRS), vec![urls(5..6)]);
    }

    #[test]
    fn a_torn_last_line_is_cut_off_and_appends_go_on_after_it() {
        let tmp = tempfile::tempdir().unwrap();
        let outbox = Outbox::open(tmp.path()).unwrap();
        outbox.append(&urls(0..2)).unwrap();
        drop(outbox);
        // A kill inside a write: half a record at the end.
        let mut file = OpenOptions::new()
            .append(true)
            .open(segment_path(tmp.path(), 0))
            .unwrap();
        file.write_all(b"7\thttp://torn.test/pa").unwrap();
        let outbox = Outbox::open(tmp.path()).unwrap();
        outbox.append(&urls(2..3)).unwrap();
        assert_eq!(pending_urls(&outbox, PAIRS), vec![urls(0..2), urls(2..3)]);
    }

    #[test]
    fn published_segments_are_deleted_so_the_disk_holds_only_the_backlog() {
        let tmp = tempfile::tempdir().unwrap();
        let outbox = Outbox::open_with(tmp.path(), 64).unwrap();
        for i in 0..40 {
            outbox.append(&urls(i..i + 1)).unwrap();
        }
        let written = segments(tmp.path());
        assert!(written.len() >= 10, "{written:?}");
        let backlog = outbox.backlog_bytes().unwrap();
        let mut received = Vec::new();
        let small = Batching {
            urls: 3,
            batches: 2,
        };
        loop {
            let pending = outbox.pending(small).unwrap();
            let Some(last) = pending.last() else { break };
            outbox.commit(last.end).unwrap();
            received.extend(pending.into_iter().flat_map(|p| p.urls));
            assert!(outbox.backlog_bytes().unwrap() < backlog);
            assert!(segments(tmp.path()).len() <= written.len());
        }
        assert_eq!(received, urls(0..40), "in order, each once");
        assert!(outbox.is_drained().unwrap());
        let tail = *written.last().unwrap();
        assert_eq!(segments(tmp.path()), vec![tail], "the tail only");
        let tail_len = fs::metadata(segment_path(tmp.path(), tail)).unwrap().len();
        assert!(tail_len < 64 + 40, "{tail_len}");
        drop(outbox);

        // Killed after a commit, before its segments were deleted (crash point
        // `outbox-committed`): open deletes them.
        let outbox = Outbox::open_with(tmp.path(), 64).unwrap();
        for i in 0..10 {
            outbox.append(&urls(i..i + 1)).unwrap();
        }
        let before = segments(tmp.path());
        let cut = before[before.len() - 2];
        drop(outbox);
        durable::replace(&tmp.path().join("cursor"), format!("{cut} 0\n").as_bytes()).unwrap();
        let outbox = Outbox::open_with(tmp.path(), 64).unwrap();
        assert_eq!(segments(tmp.path()), before[before.len() - 2..]);
        assert!(!pending_urls(&outbox, PAIRS).is_empty());
    }

    #[test]
    fn a_drained_outbox_whose_new_tail_is_empty_is_drained() {
        let tmp = tempfile::tempdir().unwrap();
        let outbox = Outbox::open_with(tmp.path(), 8).unwrap();
        outbox.append(&urls(0..1)).unwrap();
        let pending = outbox.pending(PAIRS).unwrap();
        outbox.commit(pending[0].end).unwrap();
        drop(outbox);
        // Killed just after a roll: an empty tail segment after the published one.
        File::create(segment_path(tmp.path(), 1)).unwrap();
        let outbox = Outbox::open_with(tmp.path(), 8).unwrap();
        assert!(outbox.is_drained().unwrap());
        assert!(outbox.pending(PAIRS).unwrap().is_empty());
    }

    #[test]
    fn a_cursor_that_is_not_one_is_an_error_naming_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join("cursor"), "twelve\n").unwrap();
        let err = Outbox::open(tmp.path()).err().expect("refused").to_string();
        assert!(err.contains("cursor:1: expected `SEGMENT OFFSET`"), "{err}");
    }
}
