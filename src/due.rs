//! The duplicate-URL eliminator (DUE), as Mercator built it.
//!
//! `offer` answers "seen before?" for each checksum: the CLOCK cache answers most lookups; a miss
//! is inserted into the cache and appended to the miss buffer with its payload. When the buffer
//! is full (or when the caller asks, because the crawl would otherwise idle) it is handed to a
//! background merge thread and a fresh buffer takes new misses, so workers go on during a merge.
//! The merge sorts the batch, drops repeats (keeping the first occurrence), merges it with the
//! sorted checksum file, and hands the novel payloads to the sink in discovery order, which keeps
//! the crawl breadth-first. Membership is thus delayed until a batch merges.
//!
//! The payload type is the caller's: the crawler passes URLs with their depth, `crawl dedupe`
//! passes input lines. The DUE knows nothing of URLs.

use crate::clock::ClockCache;
use crate::store::SortedStore;
use anyhow::{Result, anyhow};
use std::path::Path;
use std::sync::mpsc::{SyncSender, sync_channel};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// Receives each merge's novel payloads, in the order they were offered.
pub type Sink<T> = Box<dyn FnMut(Vec<T>) -> Result<()> + Send>;

/// Called after each merge has been delivered and the DUE counts as idle again, so a caller
/// waiting for "no work anywhere" can look again.
pub type OnMerged = Box<dyn Fn() + Send>;

/// Sizes of the DUE's two memory-bound parts.
#[derive(Clone, Copy, Debug)]
pub struct DueConfig {
    pub cache_entries: usize,
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

struct State<T> {
    cache: ClockCache,
    buffer: Vec<(u64, T)>,
    buffer_entries: usize,
    merging: bool,
    failed: Option<String>,
    stats: DueStats,
}

struct Shared<T> {
    state: Mutex<State<T>>,
    merged: Condvar,
}

/// The DUE: cheap to share between worker threads by reference.
pub struct Due<T: Send + 'static> {
    shared: Arc<Shared<T>>,
    to_merger: Option<SyncSender<Vec<(u64, T)>>>,
    merger: Option<JoinHandle<()>>,
}

impl<T: Send + 'static> Due<T> {
    /// Opens (or creates) the seen set at `store_path` and starts the merge thread.
    pub fn open(store_path: &Path, config: DueConfig, sink: Sink<T>) -> Result<Due<T>> {
        Self::open_with_notify(store_path, config, sink, Box::new(|| ()))
    }

    /// Like `open`, with a callback run after every merge (see `OnMerged`).
    pub fn open_with_notify(
        store_path: &Path,
        config: DueConfig,
        mut sink: Sink<T>,
        on_merged: OnMerged,
    ) -> Result<Due<T>> {
        let mut store = SortedStore::open(store_path)?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                cache: ClockCache::new(config.cache_entries),
                buffer: Vec::with_capacity(config.buffer_entries.min(1 << 20)),
                buffer_entries: config.buffer_entries.max(1),
                merging: false,
                failed: None,
                stats: DueStats {
                    stored: store.len(),
                    ..DueStats::default()
                },
            }),
            merged: Condvar::new(),
        });
        let (to_merger, batches) = sync_channel::<Vec<(u64, T)>>(1);
        let merger_shared = Arc::clone(&shared);
        let merger = std::thread::Builder::new()
            .name("due-merge".into())
            .spawn(move || {
                for batch in batches {
                    // A panic here must not leave `merging` set with workers waiting on it.
                    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        merge_batch(&mut store, batch).and_then(|novel| {
                            let count = novel.len() as u64;
                            sink(novel).map(|()| count)
                        })
                    }))
                    .unwrap_or_else(|_| Err(anyhow!("the merge thread panicked")));
                    let mut state = merger_shared.state.lock().unwrap();
                    state.merging = false;
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
                    on_merged();
                }
            })?;
        Ok(Due {
            shared,
            to_merger: Some(to_merger),
            merger: Some(merger),
        })
    }

    /// Offers items with their checksums. Items whose checksum the cache holds are dropped as
    /// seen; the others are buffered for the next merge. Blocks only when the buffer is full
    /// while the previous merge is still running.
    pub fn offer(&self, items: impl IntoIterator<Item = (u64, T)>) -> Result<()> {
        let mut state = self.lock()?;
        for (key, item) in items {
            state.stats.lookups += 1;
            if state.cache.check_and_insert(key) {
                state.stats.cache_hits += 1;
                continue;
            }
            state.buffer.push((key, item));
            if state.buffer.len() >= state.buffer_entries {
                while state.merging {
                    state = self.shared.merged.wait(state).unwrap();
                }
                state = self.hand_off(state)?;
            }
        }
        Ok(())
    }

    /// Starts a merge of whatever is buffered, unless a merge is running or nothing is buffered.
    /// Called when the crawl would otherwise wait for work. Returns whether a merge started.
    pub fn flush(&self) -> Result<bool> {
        let state = self.lock()?;
        if state.merging || state.buffer.is_empty() {
            return Ok(false);
        }
        drop(self.hand_off(state)?);
        Ok(true)
    }

    /// True when nothing is buffered and no merge is running: every offered item has been
    /// either dropped or delivered to the sink.
    pub fn is_idle(&self) -> Result<bool> {
        let state = self.lock()?;
        Ok(!state.merging && state.buffer.is_empty())
    }

    /// Blocks until the running merge (if any) is done.
    pub fn wait_for_merge(&self) -> Result<()> {
        let mut state = self.lock()?;
        while state.merging {
            state = self.shared.merged.wait(state).unwrap();
        }
        drop(state);
        self.lock().map(drop)
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
        Ok(self.stats())
    }

    pub fn stats(&self) -> DueStats {
        self.shared.state.lock().unwrap().stats
    }

    fn lock(&self) -> Result<MutexGuard<'_, State<T>>> {
        let state = self.shared.state.lock().unwrap();
        match &state.failed {
            Some(reason) => Err(anyhow!("merging the seen set failed: {reason}")),
            None => Ok(state),
        }
    }

    fn hand_off<'a>(
        &'a self,
        mut state: MutexGuard<'a, State<T>>,
    ) -> Result<MutexGuard<'a, State<T>>> {
        let capacity = state.buffer_entries.min(1 << 20);
        let batch = std::mem::replace(&mut state.buffer, Vec::with_capacity(capacity));
        state.merging = true;
        let sender = self.to_merger.as_ref().expect("merge thread running");
        // The channel has room: a batch is only sent when no merge is running.
        sender
            .send(batch)
            .map_err(|_| anyhow!("the merge thread stopped"))?;
        Ok(state)
    }
}

impl<T: Send + 'static> Drop for Due<T> {
    fn drop(&mut self) {
        self.to_merger.take();
        if let Some(merger) = self.merger.take() {
            let _ = merger.join();
        }
    }
}

/// Sorts a batch by checksum, keeps each checksum's first occurrence, merges the checksums into
/// the store and returns the novel items in the order they were offered.
fn merge_batch<T>(store: &mut SortedStore, batch: Vec<(u64, T)>) -> Result<Vec<T>> {
    let mut order: Vec<(u64, u32)> = batch
        .iter()
        .enumerate()
        .map(|(i, (k, _))| (*k, i as u32))
        .collect();
    order.sort_unstable();
    order.dedup_by_key(|(key, _)| *key);
    let keys: Vec<u64> = order.iter().map(|(k, _)| *k).collect();
    let novel_flags = store.merge(&keys)?;
    let mut novel_positions: Vec<u32> = order
        .iter()
        .zip(novel_flags)
        .filter(|(_, novel)| *novel)
        .map(|((_, i), _)| *i)
        .collect();
    novel_positions.sort_unstable();
    let mut items: Vec<Option<T>> = batch.into_iter().map(|(_, item)| Some(item)).collect();
    Ok(novel_positions
        .into_iter()
        .map(|i| items[i as usize].take().expect("each position once"))
        .collect())
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
        let sink: Sink<u64> = Box::new(move |novel| {
            tx.send(novel).unwrap();
            Ok(())
        });
        let config = DueConfig {
            cache_entries: cache,
            buffer_entries: buffer,
        };
        (Due::open(&dir.join("seen"), config, sink).unwrap(), rx)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// The DUE's novel output equals the first occurrences of a reference HashSet, in order,
        /// across many merges with a tiny cache and buffer, and across a reopen of the store.
        #[test]
        fn novel_output_is_first_occurrences_in_order(
            first in proptest::collection::vec(0u64..300, 0..2000),
            second in proptest::collection::vec(0u64..400, 0..1000),
            cache in 1usize..16,
            buffer in 1usize..64,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let mut reference = HashSet::new();
            for stream in [&first, &second] {
                let expected: Vec<u64> = stream.iter().copied().filter(|v| reference.insert(*v)).collect();
                let (due, rx) = collecting_due(dir.path(), cache, buffer);
                for chunk in stream.chunks(7) {
                    // The payload is the value itself; its checksum is its hash, so values collide
                    // in the cache index in realistic ways.
                    due.offer(chunk.iter().map(|&v| (crate::checksum::checksum(&v.to_le_bytes()), v))).unwrap();
                }
                let stats = due.finish().unwrap();
                let got: Vec<u64> = rx.try_iter().flatten().collect();
                prop_assert_eq!(&got, &expected);
                prop_assert_eq!(stats.stored, reference.len() as u64);
            }
        }
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

    #[test]
    fn a_panicking_merge_is_reported_not_a_hang() {
        let dir = tempfile::tempdir().unwrap();
        let sink: Sink<u64> = Box::new(|_| panic!("sink bug"));
        let config = DueConfig {
            cache_entries: 4,
            buffer_entries: 2,
        };
        let due = Due::open(&dir.path().join("seen"), config, sink).unwrap();
        due.offer([(1, 1), (2, 2)]).unwrap();
        let err = due.wait_for_merge().unwrap_err();
        assert!(format!("{err:#}").contains("panicked"), "{err:#}");
    }

    #[test]
    fn a_failing_sink_is_reported_not_swallowed() {
        let dir = tempfile::tempdir().unwrap();
        let sink: Sink<u64> = Box::new(|_| Err(anyhow!("disk full")));
        let due = Due::open(
            &dir.path().join("seen"),
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
