//! A batch of DUE misses, spooled to disk so memory stays flat however large batches grow.
//!
//! Each miss gets a sequence number (its discovery order within the batch). Its checksum and
//! payload (a URL with its depth, or an input line) are appended to `misses`, length-prefixed.
//! Its (checksum, sequence) pair goes to an in-memory chunk; a full chunk is sorted and written
//! as a run file. Closing the batch leaves a set of sorted runs (plus the last chunk, sorted in
//! memory) and the spool. `merge_into` streams the runs through a k-way merge into the store's
//! single sequential pass, marks novel sequence numbers in a bitmap, then replays the spool and
//! yields the novel payloads in discovery order. Memory: one chunk, one bitmap bit per miss, and
//! the runs' read buffers, which share a fixed budget (`READ_BUDGET`): each open run gets an
//! equal share, never less than a floor. When a batch has more runs than the budget can give
//! the floor to (a batch of stored/4 misses at 10^9 URLs has ~3,800 runs), runs are first merged
//! a group at a time into longer runs (same format) until few enough remain, which also bounds
//! the open files.
//!
//! Crash safety. The spool is the batch's write-ahead log: `flush` hands it to the kernel, and
//! a batch directory left by a killed process is read back with `read_leftover`. A merge is
//! made in steps a crash can stop between, each leaving a state `due` knows how to finish or
//! undo: (1) the new seen set is written to `seen.tmp` and fsynced; (2) `delivering` records
//! where the sink's end was; (3) the novel payloads are delivered and the sink makes them
//! durable; (4) `seen.tmp` is renamed over `seen`: the commit point; (5) the sink publishes the
//! payloads (the crawl's workers may now take them); (6) the batch is removed. A batch left
//! with `delivering` and no `seen.tmp` was committed; with `seen.tmp` still there it was not:
//! the sink is rolled back to the mark and the batch merged again. Nothing delivered is used
//! before the commit point, so a rollback never takes back a URL already handed out.

use crate::seen::store::SortedStore;
use crate::state::durable;
use crate::state::failpoint;
use anyhow::{Context, Result};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::{self, File};
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// A payload the DUE can spool: encoded to bytes and back.
pub trait Payload: Sized + Send + 'static {
    fn encode(&self, out: &mut Vec<u8>);
    fn decode(bytes: &[u8]) -> Result<Self>;
}

/// Raw lines (`crawl dedupe`).
impl Payload for Vec<u8> {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self);
    }
    fn decode(bytes: &[u8]) -> Result<Self> {
        Ok(bytes.to_vec())
    }
}

/// Where a merge sends novel payloads, with the hooks crash safety needs (see the module doc).
/// Any `FnMut(Vec<T>) -> Result<()>` is a sink whose deliveries are final as made (stdout).
pub trait Sink<T>: Send {
    /// Names the sink's current end, saved before a delivery so that a crash can undo it.
    fn mark(&mut self) -> Result<String> {
        Ok(String::new())
    }
    /// Takes novel payloads, in discovery order.
    fn deliver(&mut self, items: Vec<T>) -> Result<()>;
    /// Makes everything delivered durable; called before the seen set is replaced.
    fn commit(&mut self) -> Result<()> {
        Ok(())
    }
    /// The merge is committed: what was delivered may be used.
    fn publish(&mut self) {}
    /// After a crash in the middle of a delivery: drops what was delivered after `mark`.
    fn rollback(&mut self, _mark: &str) -> Result<()> {
        Ok(())
    }
}

impl<T, F: FnMut(Vec<T>) -> Result<()> + Send> Sink<T> for F {
    fn deliver(&mut self, items: Vec<T>) -> Result<()> {
        self(items)
    }
}

/// The spool of a batch: `len u32 LE, checksum u64 LE, payload` per miss.
const SPOOL: &str = "misses";
/// Written (with the sink's mark) before a delivery starts.
const DELIVERING: &str = "delivering";

/// Read-buffer memory for the runs open at once in one merge pass, and the least any run gets.
#[derive(Clone, Copy, Debug)]
struct ReadBudget {
    total: usize,
    floor: usize,
}

/// 8 MiB shared by at most 128 open runs (64 KiB each at the floor, 256 KiB at most).
const READ_BUDGET: ReadBudget = ReadBudget {
    total: 8 << 20,
    floor: 64 << 10,
};

impl ReadBudget {
    /// How many runs one pass may open.
    fn fan_in(self) -> usize {
        (self.total / self.floor.max(1)).max(2)
    }

    /// The read buffer of each run when `runs` are open at once.
    fn per_run(self, runs: usize) -> usize {
        (self.total / runs.max(1)).min(IO_BUFFER).max(self.floor)
    }
}

/// A run entry on disk: checksum big-endian, then sequence little-endian.
const RUN_ENTRY: usize = 12;
const IO_BUFFER: usize = 1 << 18;

/// A batch being filled.
pub struct Batch {
    dir: PathBuf,
    spool: BufWriter<File>,
    chunk: Vec<(u64, u32)>,
    chunk_limit: usize,
    runs: Vec<PathBuf>,
    count: u32,
    scratch: Vec<u8>,
}

/// A closed batch, ready to merge.
pub struct ClosedBatch {
    dir: PathBuf,
    runs: Vec<PathBuf>,
    last_chunk: Vec<(u64, u32)>,
    count: u32,
    budget: ReadBudget,
    /// Runs written by merge passes so far (names the next one).
    merged_runs: usize,
}

impl Batch {
    /// Starts a batch in `dir` (created; must not hold another batch).
    pub fn create(dir: &Path, chunk_limit: usize) -> Result<Batch> {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let spool_path = dir.join(SPOOL);
        let spool = File::create(&spool_path)
            .with_context(|| format!("creating {}", spool_path.display()))?;
        Ok(Batch {
            dir: dir.to_owned(),
            spool: BufWriter::with_capacity(IO_BUFFER, spool),
            chunk: Vec::with_capacity(chunk_limit.min(1 << 20)),
            chunk_limit: chunk_limit.max(1),
            runs: Vec::new(),
            count: 0,
            scratch: Vec::new(),
        })
    }

    /// The batch's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Misses in the batch so far.
    pub fn len(&self) -> u32 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Whether the batch can take no more (sequence numbers are u32).
    pub fn is_full(&self) -> bool {
        self.count == u32::MAX - 1
    }

    /// Appends a miss.
    pub fn push<T: Payload>(&mut self, key: u64, payload: &T) -> Result<()> {
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        payload.encode(&mut scratch);
        let result = self.push_encoded(key, &scratch);
        self.scratch = scratch;
        result
    }

    /// Appends a miss whose payload is already encoded.
    pub fn push_encoded(&mut self, key: u64, encoded: &[u8]) -> Result<()> {
        let len = u32::try_from(encoded.len()).context("a payload over 4 GiB")?;
        self.spool.write_all(&len.to_le_bytes())?;
        self.spool.write_all(&key.to_le_bytes())?;
        self.spool.write_all(encoded)?;
        self.chunk.push((key, self.count));
        self.count += 1;
        if self.chunk.len() >= self.chunk_limit {
            self.spill()?;
        }
        Ok(())
    }

    /// Hands what was spooled to the kernel, so that a killed process loses none of it.
    pub fn flush(&mut self) -> Result<()> {
        self.spool
            .flush()
            .with_context(|| format!("writing {}", self.dir.join(SPOOL).display()))
    }

    /// Sorts the chunk and writes it as a run file.
    fn spill(&mut self) -> Result<()> {
        self.chunk.sort_unstable();
        let path = self.dir.join(format!("run-{:06}", self.runs.len()));
        write_run(&path, self.chunk.iter().map(|&entry| Ok(entry)))?;
        self.runs.push(path);
        self.chunk.clear();
        Ok(())
    }

    /// Ends the batch: the spool is flushed, the last chunk sorted in memory.
    pub fn close(mut self) -> Result<ClosedBatch> {
        self.spool.flush()?;
        self.chunk.sort_unstable();
        Ok(ClosedBatch {
            dir: self.dir,
            runs: self.runs,
            last_chunk: self.chunk,
            count: self.count,
            budget: READ_BUDGET,
            merged_runs: 0,
        })
    }
}

impl ClosedBatch {
    /// Merges the batch into `store` and delivers the novel payloads, in discovery order, to
    /// `sink` in groups of at most `group` items, in the crash-safe steps of the module doc.
    /// Deletes the batch's files when done.
    pub fn merge_into<T: Payload>(
        self,
        store: &mut SortedStore,
        group: usize,
        sink: &mut dyn Sink<T>,
    ) -> Result<u64> {
        Ok(self.merge_measured(store, group, sink)?.novel)
    }

    /// `merge_into`, also reporting the most run read-buffer memory held at once.
    fn merge_measured<T: Payload>(
        mut self,
        store: &mut SortedStore,
        group: usize,
        sink: &mut dyn Sink<T>,
    ) -> Result<MergeOutcome> {
        let mut read_buffer_peak = self.reduce_runs()?;
        let mut novel = vec![0u64; (self.count as usize).div_ceil(64)];
        let sources = open_runs(&self.runs, self.budget)?;
        read_buffer_peak = read_buffer_peak.max(buffer_bytes(&sources));
        let merged = KWayMerge::new(sources, &self.last_chunk);
        let staged = store.stage_merge(merged, &mut |seq| {
            novel[seq as usize / 64] |= 1 << (seq % 64)
        })?;
        failpoint::hit("merge-staged");
        let total = novel.iter().map(|w| w.count_ones() as u64).sum();
        if total > 0 {
            let mark = sink.mark()?;
            self.write_marker(DELIVERING, mark.as_bytes())?;
            self.replay(&novel, group.max(1), sink)?;
            sink.commit()?;
        }
        failpoint::hit("merge-delivered");
        store.commit(staged)?;
        failpoint::hit("merge-committed");
        sink.publish();
        remove(&self.dir)?;
        Ok(MergeOutcome {
            novel: total,
            read_buffer_peak,
        })
    }

    /// Merges runs a group at a time into longer runs until the final pass can open them all
    /// within the budget. Merged runs join the back of the queue, so the fewest entries are
    /// rewritten. Returns the most read-buffer memory one group held. (A crash here loses
    /// nothing: recovery replays the spool, not the runs.)
    fn reduce_runs(&mut self) -> Result<usize> {
        let fan_in = self.budget.fan_in();
        let mut peak = 0;
        while self.runs.len() > fan_in {
            // Merging g runs into one removes g - 1: take just enough to reach the fan-in.
            let take = (self.runs.len() - fan_in + 1).min(fan_in);
            let group: Vec<PathBuf> = self.runs.drain(..take).collect();
            let sources = open_runs(&group, self.budget)?;
            peak = peak.max(buffer_bytes(&sources));
            let path = self.dir.join(format!("merged-{:06}", self.merged_runs));
            self.merged_runs += 1;
            write_run(&path, KWayMerge::new(sources, &[]))?;
            for done in &group {
                fs::remove_file(done).with_context(|| format!("removing {}", done.display()))?;
            }
            self.runs.push(path);
        }
        Ok(peak)
    }

    fn write_marker(&self, name: &str, contents: &[u8]) -> Result<()> {
        let path = self.dir.join(name);
        durable::replace(&path, contents).with_context(|| format!("writing {}", path.display()))
    }

    fn replay<T: Payload>(
        &self,
        novel: &[u64],
        group: usize,
        sink: &mut dyn Sink<T>,
    ) -> Result<()> {
        let path = self.dir.join(SPOOL);
        let mut spool = SpoolReader::open(&path)?;
        let mut out = Vec::new();
        for seq in 0..self.count {
            let (_, bytes) = spool
                .next()?
                .with_context(|| format!("{}: ends before miss {seq}", path.display()))?;
            if novel[seq as usize / 64] & (1 << (seq % 64)) != 0 {
                out.push(T::decode(bytes)?);
                if out.len() >= group {
                    sink.deliver(std::mem::take(&mut out))?;
                }
            }
            if seq == self.count / 2 {
                failpoint::hit("merge-delivering");
            }
        }
        if !out.is_empty() {
            sink.deliver(out)?;
        }
        Ok(())
    }
}

/// What a merge did: novel keys, and the most run read-buffer memory held at once.
struct MergeOutcome {
    novel: u64,
    #[cfg_attr(not(test), allow(dead_code))] // the bound's witness in tests
    read_buffer_peak: usize,
}

/// Writes sorted (key, seq) entries as a run file.
fn write_run(path: &Path, entries: impl Iterator<Item = Result<(u64, u32)>>) -> Result<()> {
    let file = File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut out = BufWriter::with_capacity(IO_BUFFER, file);
    for entry in entries {
        let (key, seq) = entry?;
        out.write_all(&key.to_be_bytes())?;
        out.write_all(&seq.to_le_bytes())?;
    }
    out.flush()
        .with_context(|| format!("writing {}", path.display()))
}

/// Opens runs for one merge pass, sharing the budget among them.
fn open_runs(paths: &[PathBuf], budget: ReadBudget) -> Result<Vec<RunReader>> {
    let capacity = budget.per_run(paths.len());
    paths.iter().map(|p| RunReader::open(p, capacity)).collect()
}

fn buffer_bytes(runs: &[RunReader]) -> usize {
    runs.iter().map(|r| r.input.capacity()).sum()
}

/// What a killed process left of a batch (see `read_leftover`).
pub enum Leftover {
    /// The batch's merge was committed (its delivery is durable): only cleaning up remains.
    Committed,
    /// Not merged, or merged and not committed: its misses must be offered again, after the
    /// sink is rolled back to `mark` (when a delivery had started).
    Pending { mark: Option<String> },
}

/// Removes a batch directory, its `delivering` mark first (a crash half-way through then
/// leaves a batch whose misses are all seen, merged again for nothing).
pub fn remove(dir: &Path) -> Result<()> {
    durable::remove_if_present(&dir.join(DELIVERING))
        .and_then(|()| fs::remove_dir_all(dir))
        .with_context(|| format!("removing {}", dir.display()))
}

/// Drops a leftover batch's `delivering` mark once its delivery has been rolled back.
pub fn forget_delivery(dir: &Path) -> Result<()> {
    fs::remove_file(dir.join(DELIVERING))
        .and_then(|()| durable::sync_dir(dir))
        .with_context(|| format!("removing {}", dir.join(DELIVERING).display()))
}

/// Which step a leftover batch directory reached; `staged` says whether `seen.tmp` exists.
pub fn leftover_state(dir: &Path, staged: bool) -> Result<Leftover> {
    let mark = match fs::read_to_string(dir.join(DELIVERING)) {
        Ok(mark) => Some(mark),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", dir.display())),
    };
    Ok(match mark {
        Some(_) if !staged => Leftover::Committed,
        mark => Leftover::Pending { mark },
    })
}

/// Calls `each(checksum, payload)` for every whole miss a leftover batch spooled, in order.
/// A torn last record (the process died mid-write) is ignored: its page was still in flight.
pub fn read_leftover(dir: &Path, each: &mut dyn FnMut(u64, &[u8]) -> Result<()>) -> Result<u64> {
    let path = dir.join(SPOOL);
    if !path.exists() {
        return Ok(0); // the batch was created and nothing reached it
    }
    let mut spool = SpoolReader::open(&path)?;
    let mut count = 0;
    while let Some((key, bytes)) = spool.next()? {
        each(key, bytes)?;
        count += 1;
    }
    Ok(count)
}

/// Reads a spool record by record.
struct SpoolReader {
    input: BufReader<File>,
    path: PathBuf,
    bytes: Vec<u8>,
}

impl SpoolReader {
    fn open(path: &Path) -> Result<SpoolReader> {
        let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
        Ok(SpoolReader {
            input: BufReader::with_capacity(IO_BUFFER, file),
            path: path.to_owned(),
            bytes: Vec::new(),
        })
    }

    /// The next whole record, or None at the end (a torn last record counts as the end).
    fn next(&mut self) -> Result<Option<(u64, &[u8])>> {
        let mut head = [0u8; 12];
        if !read_whole(&mut self.input, &mut head, &self.path)? {
            return Ok(None);
        }
        let len = u32::from_le_bytes(head[..4].try_into().unwrap()) as usize;
        let key = u64::from_le_bytes(head[4..].try_into().unwrap());
        self.bytes.resize(len, 0);
        if !read_whole(&mut self.input, &mut self.bytes, &self.path)? {
            return Ok(None);
        }
        Ok(Some((key, &self.bytes)))
    }
}

/// Fills `buf`; false when the input ends first.
fn read_whole(input: &mut impl Read, buf: &mut [u8], path: &Path) -> Result<bool> {
    match input.read_exact(buf) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(false),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// Reads one sorted run file.
struct RunReader {
    input: BufReader<File>,
    path: PathBuf,
}

impl RunReader {
    fn open(path: &Path, capacity: usize) -> Result<RunReader> {
        let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
        Ok(RunReader {
            input: BufReader::with_capacity(capacity, file),
            path: path.to_owned(),
        })
    }

    fn next(&mut self) -> Result<Option<(u64, u32)>> {
        let mut entry = [0u8; RUN_ENTRY];
        match self.input.read_exact(&mut entry) {
            Ok(()) => Ok(Some((
                u64::from_be_bytes(entry[..8].try_into().unwrap()),
                u32::from_le_bytes(entry[8..].try_into().unwrap()),
            ))),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
            Err(e) => Err(e).with_context(|| format!("reading {}", self.path.display())),
        }
    }
}

/// Merges sorted runs and one sorted in-memory chunk into one (key, seq) stream, ascending by
/// key then sequence, so a key's first occurrence comes first.
struct KWayMerge<'a> {
    runs: Vec<RunReader>,
    chunk: &'a [(u64, u32)],
    /// (key, seq, source); source == runs.len() is the chunk.
    heap: BinaryHeap<Reverse<(u64, u32, usize)>>,
    started: bool,
}

impl<'a> KWayMerge<'a> {
    fn new(runs: Vec<RunReader>, chunk: &'a [(u64, u32)]) -> KWayMerge<'a> {
        KWayMerge {
            heap: BinaryHeap::with_capacity(runs.len() + 1),
            runs,
            chunk,
            started: false,
        }
    }

    fn refill(&mut self, source: usize) -> Result<()> {
        let next = if source == self.runs.len() {
            let head = self.chunk.first().copied();
            if head.is_some() {
                self.chunk = &self.chunk[1..];
            }
            head
        } else {
            self.runs[source].next()?
        };
        if let Some((key, seq)) = next {
            self.heap.push(Reverse((key, seq, source)));
        }
        Ok(())
    }

    fn step(&mut self) -> Result<Option<(u64, u32)>> {
        if !self.started {
            self.started = true;
            for source in 0..=self.runs.len() {
                self.refill(source)?;
            }
        }
        let Some(Reverse((key, seq, source))) = self.heap.pop() else {
            return Ok(None);
        };
        self.refill(source)?;
        Ok(Some((key, seq)))
    }
}

impl Iterator for KWayMerge<'_> {
    type Item = Result<(u64, u32)>;
    fn next(&mut self) -> Option<Self::Item> {
        self.step().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spilled_runs_and_last_chunk_merge_in_discovery_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SortedStore::open(&dir.path().join("seen")).unwrap();
        store.merge(&[30]).unwrap();
        let mut batch = Batch::create(&dir.path().join("batch-1"), 3).unwrap();
        let items: [(u64, &[u8]); 8] = [
            (50, b"e"),
            (10, b"a"),
            (30, b"old"),
            (50, b"e-again"),
            (20, b"b"),
            (10, b"a-again"),
            (40, b"d"),
            (5, b"z"),
        ];
        for (key, line) in items {
            batch.push(key, &line.to_vec()).unwrap();
        }
        let closed = batch.close().unwrap();
        assert_eq!(
            closed.runs.len(),
            2,
            "two chunks of 3 spilled, 2 left in memory"
        );
        let mut got: Vec<Vec<u8>> = Vec::new();
        let novel = closed.merge_into(&mut store, 2, &mut |group: Vec<Vec<u8>>| {
            assert!(group.len() <= 2);
            got.extend(group);
            Ok(())
        });
        assert_eq!(novel.unwrap(), 5);
        let expected: Vec<Vec<u8>> = [&b"e"[..], b"a", b"b", b"d", b"z"]
            .iter()
            .map(|s| s.to_vec())
            .collect();
        assert_eq!(got, expected);
        assert_eq!(store.len(), 6);
        assert!(!dir.path().join("batch-1").exists());
    }

    #[test]
    fn many_runs_merge_within_a_fixed_read_buffer_budget() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SortedStore::open(&dir.path().join("seen")).unwrap();
        let old: Vec<u64> = (0..150).step_by(7).collect();
        store.merge(&old).unwrap();
        let mut batch = Batch::create(&dir.path().join("batch-1"), 3).unwrap();
        let mut state = 12345u64;
        let keys: Vec<u64> = (0..200)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (state >> 33) % 150
            })
            .collect();
        for (seq, &key) in keys.iter().enumerate() {
            batch.push(key, &seq.to_string().into_bytes()).unwrap();
        }
        let mut closed = batch.close().unwrap();
        assert_eq!(closed.runs.len(), 66);
        // Room for 8 runs at the floor: 66 runs need merge passes first.
        closed.budget = ReadBudget {
            total: 8 << 10,
            floor: 1 << 10,
        };
        let mut got: Vec<Vec<u8>> = Vec::new();
        let outcome = closed
            .merge_measured(&mut store, 16, &mut |group: Vec<Vec<u8>>| {
                got.extend(group);
                Ok(())
            })
            .unwrap();
        assert!(
            outcome.read_buffer_peak <= 8 << 10,
            "run read buffers peaked at {} bytes, over the 8 KiB budget",
            outcome.read_buffer_peak
        );
        let mut seen: std::collections::HashSet<u64> = old.iter().copied().collect();
        let expected: Vec<Vec<u8>> = keys
            .iter()
            .enumerate()
            .filter(|&(_, key)| seen.insert(*key))
            .map(|(seq, _)| seq.to_string().into_bytes())
            .collect();
        assert_eq!(outcome.novel, expected.len() as u64);
        assert_eq!(
            got, expected,
            "novel payloads, first occurrences, in discovery order"
        );
        assert_eq!(store.len(), seen.len() as u64);
        assert!(!dir.path().join("batch-1").exists());
    }
}
