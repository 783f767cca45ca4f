//! The duplicate-URL eliminator (DUE), as Mercator built it.
//!
//! `offer` answers "seen before?" for each checksum: the CLOCK cache answers most lookups; a miss
//! is inserted into the cache and appended to the current batch (see `batch`: payloads spooled
//! to disk, checksums in sorted runs). When the batch is full (or when the caller asks, because
//! the crawl would otherwise idle) it is handed to a background merge thread and a fresh batch
//! takes new misses, so workers go on during a merge. The merge streams the batch's sorted runs
//! through the sorted checksum file in one pass, keeping each checksum's first occurrence, and
//! hands the novel payloads to the sink in discovery order, which keeps the crawl
//! breadth-first. Membership is thus delayed until a batch merges.
//!
//! Why the cost per URL stays flat: a merge reads and rewrites the whole seen set (N keys), so
//! a batch is only closed once it holds at least N / `GROWTH` misses (and at least
//! `buffer_entries`). Each miss then carries at most 2 × 8 × `GROWTH` bytes of store I/O,
//! whatever N is (IRLbot's DRUM amortizes the same way). Batches that large live on disk, so
//! memory does not grow with them. A caller may close a batch early: `flush` when the crawl
//! would otherwise run out of work, `flush_early` when hosts wait for URLs while the crawl goes
//! on; early merges are spaced by the last merge's duration (`EARLY_SPACING_FACTOR`), so
//! their cost is bounded by a share of the wall time rather than by the batch size.
//!
//! The payload type is the caller's: the crawler passes URLs with their depth, `crawl dedupe`
//! passes input lines. The DUE knows nothing of URLs.
//!
//! Crash safety: `offer` hands every miss to the kernel before it returns, and a merge commits
//! in steps (see `batch`), so a killed process leaves batches `open` can finish or undo. With
//! `Recovery::Replay` (the crawler) their misses are offered again; with `Recovery::Discard`
//! (`crawl dedupe`, whose output cannot be taken back) unmerged input counts as never seen.

use crate::seen::batch::{self, Batch, ClosedBatch, Leftover, Payload};
use crate::seen::clock::ClockCache;
use crate::seen::store::SortedStore;
use anyhow::{Context, Result, anyhow};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{SyncSender, sync_channel};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub use crate::seen::batch::Sink;

/// What `open` does with batches a killed process left unmerged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// Offer their misses again (the crawler: no discovered URL is lost).
    Replay,
    /// Forget them (`crawl dedupe`: their lines count as never seen).
    Discard,
}

/// Called after each merge has been delivered and the DUE counts as idle again, so a caller
/// waiting for "no work anywhere" can look again.
pub type OnMerged = Box<dyn Fn() + Send>;

/// A batch is closed once it holds stored / GROWTH misses (see the module doc).
pub const GROWTH: u64 = 4;
/// Novel payloads are handed to the sink in groups of at most this many.
const DELIVERY_GROUP: usize = 4096;
/// An early merge (`flush_early`) starts no sooner than this after the last merge ended...
/// Short: while the seen set is small a merge is a few fsyncs, and at a crawl's start every
/// host waits on the next one for the pages its last page led to (10 ms instead of 100 took
/// the 50-host loopback web's first 10 % of pages from ~0.20 to ~0.15 s, BENCHMARKS.md); the
/// multiple of the last merge's duration below still bounds the merge thread's share.
pub(crate) const EARLY_SPACING_MIN: Duration = Duration::from_millis(10);
/// ...nor sooner than this many times the last merge's duration: the merge thread is busy with
/// early merges at most 1 / (1 + `EARLY_SPACING_FACTOR`) of the time, however large the seen
/// set grows, so its cost stays a bounded share of the crawl's while batches stay small.
const EARLY_SPACING_FACTOR: u32 = 2;
/// Freed memory is given back to the system after a merge at most this often.
const TRIM_EVERY: Duration = Duration::from_secs(1);

/// Sizes of the DUE's memory-bound parts.
#[derive(Clone, Copy, Debug)]
pub struct DueConfig {
    pub cache_entries: usize,
    /// Misses held in memory before they are sorted and spilled; also the smallest batch.
    pub buffer_entries: usize,
}

/// Counters for the progress line and the summary.
#[derive(Clone, Copy, Debug, Default)]
pub struct DueStats {
    pub lookups: u64,
    pub cache_hits: u64,
    pub merges: u64,
    pub novel: u64,
    /// Checksums in the on-disk seen set after the last merge.
    pub stored: u64,
}

impl DueStats {
    pub fn hit_rate(&self) -> f64 {
        if self.lookups == 0 {
            0.0
        } else {
            self.cache_hits as f64 / self.lookups as f64
        }
    }
}

struct State {
    cache: ClockCache,
    batch: Batch,
    next_batch: u64,
    buffer_entries: usize,
    merging: bool,
    /// When the running merge was handed off (meaningful while `merging`).
    merge_started: Instant,
    /// When the last merge ended and how long it took: the spacing of early merges.
    last_merge: Option<(Instant, Duration)>,
    failed: Option<String>,
    stats: DueStats,
}

/// What `flush_early` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EarlyMerge {
    /// A merge of what was buffered started.
    Started,
    /// Nothing to start: nothing is buffered, or a merge is running (its end wakes the caller:
    /// `OnMerged`, the sink's publish).
    Nothing,
    /// Misses are buffered but the last merge ended too recently: ask again at this instant.
    NotBefore(Instant),
}

struct Shared {
    state: Mutex<State>,
    merged: Condvar,
    batches: PathBuf,
}

/// The DUE: cheap to share between worker threads by reference.
pub struct Due<T: Payload> {
    shared: Arc<Shared>,
    to_merger: Option<SyncSender<ClosedBatch>>,
    merger: Option<JoinHandle<()>>,
    _payload: std::marker::PhantomData<fn(T)>,
}

impl<T: Payload> Due<T> {
    /// Opens (or creates) the seen set in `dir` (`dir/seen`, batches under `dir/due/`) and
    /// starts the merge thread. Unmerged batches of a killed run are discarded.
    pub fn open(dir: &Path, config: DueConfig, sink: Box<dyn Sink<T>>) -> Result<Due<T>> {
        Self::open_with(dir, config, sink, Box::new(|| ()), Recovery::Discard)
    }

    /// Like `open`, with a callback run after every merge (see `OnMerged`) and a choice of what
    /// happens to a killed run's batches.
    pub fn open_with(
        dir: &Path,
        config: DueConfig,
        mut sink: Box<dyn Sink<T>>,
        on_merged: OnMerged,
        recovery: Recovery,
    ) -> Result<Due<T>> {
        let seen = dir.join("seen");
        let batches = dir.join("due");
        let (leftovers, next_batch) = finish_or_undo(&seen, &batches, &mut *sink)?;
        let mut store = SortedStore::open(&seen)?;
        let buffer_entries = config.buffer_entries.max(1);
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                cache: ClockCache::new(config.cache_entries),
                batch: Batch::create(&batches.join(format!("batch-{next_batch}")), buffer_entries)?,
                next_batch: next_batch + 1,
                buffer_entries,
                merging: false,
                merge_started: Instant::now(),
                last_merge: None,
                failed: None,
                stats: DueStats {
                    stored: store.len(),
                    ..DueStats::default()
                },
            }),
            merged: Condvar::new(),
            batches,
        });
        let (to_merger, batches) = sync_channel::<ClosedBatch>(1);
        let merger_shared = Arc::clone(&shared);
        let merger = std::thread::Builder::new()
            .name("due-merge".into())
            .spawn(move || {
                let mut trimmed: Option<Instant> = None;
                for batch in batches {
                    // A panic here must not leave `merging` set with workers waiting on it.
                    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        batch.merge_into(&mut store, DELIVERY_GROUP, &mut *sink)
                    }))
                    .unwrap_or_else(|_| Err(anyhow!("the merge thread panicked")));
                    let mut state = merger_shared.state.lock().unwrap();
                    state.merging = false;
                    let ended = Instant::now();
                    state.last_merge = Some((ended, ended - state.merge_started));
                    match outcome {
                        Ok(count) => {
                            state.stats.merges += 1;
                            state.stats.novel += count;
                            state.stats.stored = store.len();
                        }
                        Err(e) => state.failed = Some(format!("{e:#}")),
                    }
                    merger_shared.merged.notify_all();
                    drop(state);
                    // Trimming walks the allocator's arenas under their locks, which every
                    // worker's allocation then waits for: once a second, not after each of
                    // the many small early merges.
                    if trimmed.is_none_or(|at| at.elapsed() >= TRIM_EVERY) {
                        crate::sys::release_free_memory();
                        trimmed = Some(Instant::now());
                    }
                    on_merged();
                }
            })?;
        let due = Due {
            shared,
            to_merger: Some(to_merger),
            merger: Some(merger),
            _payload: std::marker::PhantomData,
        };
        for dir in leftovers {
            if recovery == Recovery::Replay {
                let mut group: Vec<(u64, Vec<u8>)> = Vec::new();
                let offer = |group: &mut Vec<(u64, Vec<u8>)>| {
                    let result = due.offer_encoded(group.iter().map(|(k, b)| (*k, b.as_slice())));
                    group.clear();
                    result
                };
                batch::read_leftover(&dir, &mut |key, bytes| {
                    group.push((key, bytes.to_vec()));
                    if group.len() >= DELIVERY_GROUP {
                        offer(&mut group)?;
                    }
                    Ok(())
                })?;
                offer(&mut group)?;
            }
            // Only now: the misses are in the new batch's spool (offer flushed it).
            batch::remove(&dir)?;
        }
        Ok(due)
    }

    /// Offers items with their checksums. Items whose checksum the cache holds are dropped as
    /// seen; the others join the current batch. Blocks only when a batch is due while the
    /// previous merge is still running.
    pub fn offer(&self, items: impl IntoIterator<Item = (u64, T)>) -> Result<()> {
        self.offer_repeating(items, 0)
    }

    /// `offer`, with `repeats` more lookups the caller answered itself: items it knows are
    /// among these (a page's links that repeat one before them, `crawl::offer`), counted as
    /// lookups that hit, as they would be if offered.
    pub fn offer_repeating(
        &self,
        items: impl IntoIterator<Item = (u64, T)>,
        repeats: u64,
    ) -> Result<()> {
        let mut state = self.lock()?;
        state.stats.lookups += repeats;
        state.stats.cache_hits += repeats;
        for (key, item) in items {
            if !Self::lookup(&mut state, key) {
                state.batch.push(key, &item)?;
                state = self.close_if_due(state)?;
            }
        }
        // A page counts as done only after this returns: its links must survive a kill.
        state.batch.flush()
    }

    /// `offer` for payloads already in their encoded form (`crawl dedupe`'s lines), without
    /// building a `T` per item.
    pub fn offer_encoded<'b>(
        &self,
        items: impl IntoIterator<Item = (u64, &'b [u8])>,
    ) -> Result<()> {
        let mut state = self.lock()?;
        for (key, encoded) in items {
            if !Self::lookup(&mut state, key) {
                state.batch.push_encoded(key, encoded)?;
                state = self.close_if_due(state)?;
            }
        }
        state.batch.flush()
    }

    /// `offer_repeating` for items known by their checksums, the `i`th encoded by
    /// `encode(i, out)` only when the cache misses it: a page's links (`crawl::offer`), nearly
    /// all of them seen, are neither built as a `T` nor encoded.
    pub fn offer_keys_repeating(
        &self,
        keys: impl IntoIterator<Item = u64>,
        repeats: u64,
        mut encode: impl FnMut(usize, &mut Vec<u8>),
    ) -> Result<()> {
        let mut encoded = Vec::new();
        let mut state = self.lock()?;
        state.stats.lookups += repeats;
        state.stats.cache_hits += repeats;
        for (i, key) in keys.into_iter().enumerate() {
            if !Self::lookup(&mut state, key) {
                encoded.clear();
                encode(i, &mut encoded);
                state.batch.push_encoded(key, &encoded)?;
                state = self.close_if_due(state)?;
            }
        }
        state.batch.flush()
    }

    /// The cache lookup; true when the key counts as seen.
    fn lookup(state: &mut State, key: u64) -> bool {
        state.stats.lookups += 1;
        let hit = state.cache.check_and_insert(key);
        state.stats.cache_hits += u64::from(hit);
        hit
    }

    /// Hands the batch to the merge thread once it holds stored / GROWTH misses.
    fn close_if_due<'a>(
        &'a self,
        mut state: MutexGuard<'a, State>,
    ) -> Result<MutexGuard<'a, State>> {
        let target = (state.buffer_entries as u64).max(state.stats.stored / GROWTH);
        if u64::from(state.batch.len()) < target && !state.batch.is_full() {
            return Ok(state);
        }
        while state.merging {
            state = self.shared.merged.wait(state).unwrap();
        }
        self.hand_off(state)
    }

    /// Starts a merge of whatever is buffered, unless a merge is running or nothing is buffered.
    /// Called when the crawl would otherwise wait for work. Returns whether a merge started.
    pub fn flush(&self) -> Result<bool> {
        let state = self.lock()?;
        if state.merging || state.batch.is_empty() {
            return Ok(false);
        }
        drop(self.hand_off(state)?);
        Ok(true)
    }

    /// `flush`, for a crawl whose hosts wait for URLs while their rest is over (the caller
    /// decides that): a merge starts only if it may by the spacing of early merges (see
    /// `EARLY_SPACING_FACTOR`), counted from when the last merge of any kind ended, so that
    /// starving hosts get the misses buffered within about one spacing without merging at
    /// every pause.
    pub fn flush_early(&self, now: Instant) -> Result<EarlyMerge> {
        let state = self.lock()?;
        if state.merging || state.batch.is_empty() {
            return Ok(EarlyMerge::Nothing);
        }
        if let Some((ended, took)) = state.last_merge {
            let at = ended + EARLY_SPACING_MIN.max(took * EARLY_SPACING_FACTOR);
            if now < at {
                return Ok(EarlyMerge::NotBefore(at));
            }
        }
        drop(self.hand_off(state)?);
        Ok(EarlyMerge::Started)
    }

    /// True when nothing is buffered and no merge is running: every offered item has been
    /// either dropped or delivered to the sink.
    pub fn is_idle(&self) -> Result<bool> {
        let state = self.lock()?;
        Ok(!state.merging && state.batch.is_empty())
    }

    /// Blocks until the running merge (if any) is done.
    pub fn wait_for_merge(&self) -> Result<()> {
        let state = self.wait_merged(self.lock()?);
        drop(state);
        self.lock().map(drop)
    }

    /// Merges everything offered so far and returns once it has been delivered to the sink.
    /// A running merge is waited for first, and what is buffered then merged: unlike `flush`,
    /// the outcome does not depend on how far a merge started elsewhere has got (its thread
    /// publishes before it counts as done, so a woken worker can find it still "merging").
    pub fn merge_now(&self) -> Result<()> {
        let mut state = self.wait_merged(self.lock()?);
        if !state.batch.is_empty() && state.failed.is_none() {
            state = self.wait_merged(self.hand_off(state)?);
        }
        drop(state);
        self.lock().map(drop)
    }

    fn wait_merged<'a>(&'a self, mut state: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        while state.merging {
            state = self.shared.merged.wait(state).unwrap();
        }
        state
    }

    /// Merges everything still buffered and stops the merge thread.
    pub fn finish(mut self) -> Result<DueStats> {
        self.wait_for_merge()?;
        self.flush()?;
        self.wait_for_merge()?;
        self.to_merger.take();
        if let Some(merger) = self.merger.take() {
            merger
                .join()
                .map_err(|_| anyhow!("the merge thread panicked"))?;
        }
        // The fresh batch the last merge left behind holds nothing: leave no trace of it.
        let state = self.lock()?;
        if state.batch.is_empty() {
            batch::remove(state.batch.dir())?;
        }
        Ok(state.stats)
    }

    pub fn stats(&self) -> DueStats {
        self.shared.state.lock().unwrap().stats
    }

    fn lock(&self) -> Result<MutexGuard<'_, State>> {
        let state = self.shared.state.lock().unwrap();
        match &state.failed {
            Some(reason) => Err(anyhow!("merging the seen set failed: {reason}")),
            None => Ok(state),
        }
    }

    fn hand_off<'a>(&'a self, mut state: MutexGuard<'a, State>) -> Result<MutexGuard<'a, State>> {
        let dir = self
            .shared
            .batches
            .join(format!("batch-{}", state.next_batch));
        state.next_batch += 1;
        let fresh = Batch::create(&dir, state.buffer_entries)?;
        let batch = std::mem::replace(&mut state.batch, fresh).close()?;
        state.merging = true;
        state.merge_started = Instant::now();
        let sender = self.to_merger.as_ref().expect("merge thread running");
        // The channel has room: a batch is only sent when no merge is running.
        sender
            .send(batch)
            .map_err(|_| anyhow!("the merge thread stopped"))?;
        Ok(state)
    }
}

impl<T: Payload> Drop for Due<T> {
    fn drop(&mut self) {
        self.to_merger.take();
        if let Some(merger) = self.merger.take() {
            let _ = merger.join();
        }
    }
}

/// Finishes what a killed run left in `batches` (see `batch`): a committed merge only needs
/// cleaning up; an uncommitted delivery is rolled back in the sink and the staged seen set
/// dropped. Returns the batches whose misses must be offered again, oldest first, and the
/// number the next batch gets (above every leftover, so none is overwritten).
fn finish_or_undo<T>(
    seen: &Path,
    batches: &Path,
    sink: &mut dyn Sink<T>,
) -> Result<(Vec<PathBuf>, u64)> {
    let mut numbered = Vec::new();
    if batches.exists() {
        for entry in
            std::fs::read_dir(batches).with_context(|| format!("reading {}", batches.display()))?
        {
            let path = entry?.path();
            let number = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix("batch-"))
                .and_then(|n| n.parse::<u64>().ok());
            match number {
                Some(n) => numbered.push((n, path)),
                None => anyhow::bail!(
                    "{}: not a batch of this crawler; remove it if you put it there",
                    path.display()
                ),
            }
        }
    }
    numbered.sort();
    let next = numbered.last().map_or(0, |(n, _)| n + 1);
    let staged = crate::state::durable::temp_path(seen).exists();
    let mut pending = Vec::new();
    for (_, path) in numbered {
        match batch::leftover_state(&path, staged)? {
            Leftover::Committed => batch::remove(&path)?,
            Leftover::Pending { mark } => {
                if let Some(mark) = mark {
                    sink.rollback(&mark)?;
                    // Rolled back for good: a crash before this batch is gone must not roll
                    // the sink back again, over what later merges deliver.
                    batch::forget_delivery(&path)?;
                }
                pending.push(path);
            }
        }
    }
    SortedStore::discard_leftover(seen)?;
    Ok((pending, next))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;
    use std::sync::mpsc::channel;

    fn collecting_due(
        dir: &Path,
        cache: usize,
        buffer: usize,
    ) -> (Due<u64>, std::sync::mpsc::Receiver<Vec<u64>>) {
        let (tx, rx) = channel();
        let sink: Box<dyn Sink<u64>> = Box::new(move |novel| {
            tx.send(novel).unwrap();
            Ok(())
        });
        let config = DueConfig {
            cache_entries: cache,
            buffer_entries: buffer,
        };
        (Due::open(dir, config, sink).unwrap(), rx)
    }

    impl Payload for u64 {
        fn encode(&self, out: &mut Vec<u8>) {
            out.extend_from_slice(&self.to_le_bytes());
        }
        fn decode(bytes: &[u8]) -> Result<Self> {
            Ok(u64::from_le_bytes(bytes.try_into()?))
        }
    }

    proptest! {
        // Every merge fsyncs (that is its point), so the cases are few and the buffers not tiny.
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// The DUE's novel output equals the first occurrences of a reference HashSet, in order,
        /// across many merges with a tiny cache and buffer, and across a reopen of the store.
        #[test]
        fn novel_output_is_first_occurrences_in_order(
            first in proptest::collection::vec(0u64..300, 0..2000),
            second in proptest::collection::vec(0u64..400, 0..1000),
            cache in 1usize..16,
            buffer in 4usize..64,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let mut reference = HashSet::new();
            for stream in [&first, &second] {
                let expected: Vec<u64> = stream.iter().copied().filter(|v| reference.insert(*v)).collect();
                let (due, rx) = collecting_due(dir.path(), cache, buffer);
                for chunk in stream.chunks(7) {
                    // The payload is the value itself; its checksum is its hash, so values collide
                    // in the cache index in realistic ways.
                    due.offer(chunk.iter().map(|&v| (crate::seen::checksum::checksum(&v.to_le_bytes()), v))).unwrap();
                }
                let stats = due.finish().unwrap();
                let got: Vec<u64> = rx.try_iter().flatten().collect();
                prop_assert_eq!(&got, &expected);
                prop_assert_eq!(stats.stored, reference.len() as u64);
            }
        }
    }

    /// Repeats the caller answered count as the lookups that hit they would have been: the
    /// same stats as offering them.
    #[test]
    fn repeats_answered_by_the_caller_count_as_hits() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (offered, _rx) = collecting_due(a.path(), 64, 1000);
        offered.offer([(1, 1), (2, 2), (1, 1), (1, 1)]).unwrap();
        let (answered, _rx) = collecting_due(b.path(), 64, 1000);
        answered.offer_repeating([(1, 1), (2, 2)], 2).unwrap();
        let (a, b) = (offered.stats(), answered.stats());
        assert_eq!((a.lookups, a.cache_hits), (4, 2));
        assert_eq!((b.lookups, b.cache_hits), (a.lookups, a.cache_hits));
    }

    #[test]
    fn flush_releases_a_partial_buffer_and_waits_for_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let (due, rx) = collecting_due(dir.path(), 4, 1000);
        due.offer([(1, 1), (2, 2), (1, 1)]).unwrap();
        assert!(!due.is_idle().unwrap());
        assert!(due.flush().unwrap());
        due.wait_for_merge().unwrap();
        assert!(due.is_idle().unwrap());
        assert_eq!(rx.try_iter().flatten().collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(due.stats().merges, 1);
        assert_eq!(due.stats().cache_hits, 1);
    }

    /// An early merge starts at once the first time, then no sooner than the spacing after the
    /// last merge ended (`EARLY_SPACING_MIN`, or a multiple of its duration); nothing is
    /// started while nothing is buffered.
    #[test]
    fn early_merges_are_spaced_by_the_last_merges_cost() {
        let dir = tempfile::tempdir().unwrap();
        let (due, rx) = collecting_due(dir.path(), 4, 1000);
        let now = Instant::now();
        assert_eq!(due.flush_early(now).unwrap(), EarlyMerge::Nothing);
        due.offer([(1, 1)]).unwrap();
        assert_eq!(due.flush_early(now).unwrap(), EarlyMerge::Started);
        due.wait_for_merge().unwrap();
        let (ended, took) = due.shared.state.lock().unwrap().last_merge.unwrap();
        due.offer([(2, 2)]).unwrap();
        let spacing = EARLY_SPACING_MIN.max(took * EARLY_SPACING_FACTOR);
        let EarlyMerge::NotBefore(at) = due.flush_early(ended).unwrap() else {
            panic!("an early merge right after the last one")
        };
        assert_eq!(at, ended + spacing);
        assert!(spacing >= EARLY_SPACING_MIN);
        assert_eq!(
            due.flush_early(at - Duration::from_millis(1)).unwrap(),
            EarlyMerge::NotBefore(at)
        );
        assert_eq!(due.stats().merges, 1);
        assert_eq!(due.flush_early(at).unwrap(), EarlyMerge::Started);
        due.wait_for_merge().unwrap();
        assert_eq!(due.stats().merges, 2);
        assert_eq!(rx.try_iter().collect::<Vec<_>>(), [vec![1], vec![2]]);
    }

    /// `merge_now` while another merge is still delivering: it waits for that one, then merges
    /// what was offered since, and returns only once both are delivered (`flush` refuses and
    /// returns at once: the focus's early merge used to take that answer, so whether its links
    /// were merged before the next fetch depended on the merge thread's progress).
    #[test]
    fn merge_now_waits_for_a_running_merge_then_merges_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let (release, held) = channel::<()>();
        let (tx, rx) = channel();
        let sink: Box<dyn Sink<u64>> = Box::new(move |novel: Vec<u64>| {
            if novel == [1] {
                held.recv().unwrap(); // the first merge is held in its delivery
            }
            tx.send(novel).unwrap();
            Ok(())
        });
        let config = DueConfig {
            cache_entries: 4,
            buffer_entries: 1000,
        };
        let due = Arc::new(Due::open(dir.path(), config, sink).unwrap());
        due.offer([(1, 1)]).unwrap();
        assert!(due.flush().unwrap());
        due.offer([(2, 2)]).unwrap();
        let (returned, asked) = channel();
        let asker = {
            let due = Arc::clone(&due);
            std::thread::spawn(move || {
                due.merge_now().unwrap();
                returned.send(()).unwrap();
            })
        };
        // Bounded look for an early return (one shows at once; none can come while held).
        let early = asked.recv_timeout(std::time::Duration::from_millis(200));
        release.send(()).unwrap(); // first, so that a failed test does not leave the merge held
        assert!(
            early.is_err(),
            "merge_now returned while a merge was running"
        );
        asked
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("merge_now returns once both merges are delivered");
        asker.join().unwrap();
        assert_eq!(rx.try_iter().collect::<Vec<_>>(), [vec![1], vec![2]]);
        assert_eq!(due.stats().merges, 2);
    }

    #[test]
    fn a_panicking_merge_is_reported_not_a_hang() {
        let dir = tempfile::tempdir().unwrap();
        let sink: Box<dyn Sink<u64>> = Box::new(|_| panic!("sink bug"));
        let config = DueConfig {
            cache_entries: 4,
            buffer_entries: 2,
        };
        let due = Due::open(dir.path(), config, sink).unwrap();
        due.offer([(1, 1), (2, 2)]).unwrap();
        let err = due.wait_for_merge().unwrap_err();
        assert!(format!("{err:#}").contains("panicked"), "{err:#}");
    }

    #[test]
    fn a_failing_sink_is_reported_not_swallowed() {
        let dir = tempfile::tempdir().unwrap();
        let sink: Box<dyn Sink<u64>> = Box::new(|_| Err(anyhow!("disk full")));
        let due = Due::open(
            dir.path(),
            DueConfig {
                cache_entries: 4,
                buffer_entries: 2,
            },
            sink,
        )
        .unwrap();
        due.offer([(1, 1), (2, 2)]).unwrap();
        let err = due.wait_for_merge().unwrap_err();
        assert!(format!("{err:#}").contains("disk full"), "{err:#}");
    }
}
