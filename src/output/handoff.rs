//! Many workers, one writer thread, few wake-ups: the hand-off behind the URL log, the link
//! graph and the WARC archive.
//!
//! Workers add to one shared batch under a short lock; the writer thread takes the whole batch
//! at once and writes it while the workers fill the next. A busy writer finds the next batch
//! waiting and costs nobody a wake-up; one that has written its batch lingers (a bounded wait)
//! until the next holds `wake_at` units, woken only then, so it wakes about once per batch
//! rather than once per page (a channel wakes its receiver for every message: three channels
//! made ~13 futex calls per page, BENCHMARKS.md "Speed at the web's shape"). Only a writer that
//! lingered and got nothing sleeps until the first item, which wakes it, and then lingers for
//! the rest: while pages flow, that is one wake-up per batch, not two.
//!
//! A thread is woken after the lock is released, never under it: woken under it, it would
//! first block again on the lock its waker still holds, a second switch for one wake-up.
//!
//! Invariants: a batch holds at most `cap` units (bytes, records) beyond its first item (a
//! worker waits while it is full, and waiting workers are woken one at a time, each passing the
//! turn on while there is room), so memory is bounded by two batches: the one being filled and
//! the one being written. An item waits at most `linger` before the writer takes it. Items keep
//! the order in which workers added them. After `close`, the writer drains what is left and
//! then sees the end; after `reader_gone`, items are dropped and `push` says so.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// The shared batch and who waits for it.
pub struct Handoff<B> {
    shared: Mutex<Shared<B>>,
    /// The writer waits here for a batch.
    ready: Condvar,
    /// Workers wait here for room in a full batch.
    room: Condvar,
    cap: usize,
    wake_at: usize,
    linger: Duration,
}

struct Shared<B> {
    batch: B,
    /// Units in `batch` (as the workers count them).
    size: usize,
    /// What the writer waits for, if it waits (`take`).
    reader: ReaderWait,
    writers_waiting: usize,
    /// Of those, woken and not yet running: no further wake-up is sent for them (std's
    /// `notify_one` is a futex call even when the one it would wake is already woken).
    writers_woken: usize,
    closed: bool,
    reader_gone: bool,
    /// Someone waits for what is queued to be written (`hurry`): the writer takes it at once.
    hurried: bool,
    /// An emptied batch the writer gave back (`give_back`): the one filled after `batch`,
    /// its room kept.
    spare: Option<B>,
}

/// What a waiting writer is to be woken for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReaderWait {
    /// It does not wait: it is writing.
    No,
    /// A batch of `wake_at` units, for `linger` at most (the batch is empty or small).
    Batch,
    /// Any item: it lingered and nothing came.
    First,
}

impl<B> Shared<B> {
    /// Whether a worker waits for room that no earlier wake-up is meant for; if so it counts
    /// as woken, and the caller wakes it once the lock is released.
    fn wake_a_writer(&mut self) -> bool {
        let wake = self.writers_waiting > self.writers_woken;
        self.writers_woken += usize::from(wake);
        wake
    }
}

/// The writer thread has stopped: nothing pushed now will be written.
#[derive(Debug)]
pub struct ReaderGone;

impl<B: Default> Handoff<B> {
    /// A hand-off whose batch holds `cap` units at most (at least one item); the writer takes
    /// a batch once it holds `wake_at` units, or after `linger`.
    pub fn new(cap: usize, wake_at: usize, linger: Duration) -> Handoff<B> {
        Handoff {
            shared: Mutex::new(Shared {
                batch: B::default(),
                size: 0,
                reader: ReaderWait::No,
                writers_waiting: 0,
                writers_woken: 0,
                closed: false,
                reader_gone: false,
                hurried: false,
                spare: None,
            }),
            ready: Condvar::new(),
            room: Condvar::new(),
            cap: cap.max(1),
            wake_at: wake_at.clamp(1, cap.max(1)),
            linger,
        }
    }

    /// Adds `size` units to the batch with `add`, waiting while the batch is full.
    pub fn push(&self, size: usize, add: impl FnOnce(&mut B)) -> Result<(), ReaderGone> {
        let mut shared = self.lock();
        while shared.size > 0 && shared.size >= self.cap && !shared.reader_gone {
            shared.writers_waiting += 1;
            shared = self.room.wait(shared).unwrap();
            shared.writers_waiting -= 1;
            shared.writers_woken = shared.writers_woken.saturating_sub(1);
        }
        if shared.reader_gone {
            return Err(ReaderGone);
        }
        add(&mut shared.batch);
        shared.size += size;
        let wake_reader = match shared.reader {
            ReaderWait::No => false,
            ReaderWait::Batch => shared.size >= self.wake_at,
            ReaderWait::First => true,
        };
        if wake_reader {
            shared.reader = ReaderWait::No; // woken once
        }
        // The next waiting worker's turn.
        let pass_turn = shared.size < self.cap && shared.wake_a_writer();
        drop(shared);
        self.notify(wake_reader, pass_turn);
        Ok(())
    }

    /// Wakes the writer and/or one waiting worker, after the lock is released: woken under
    /// it, a thread first blocks again on the lock its waker still holds.
    fn notify(&self, reader: bool, one_writer: bool) {
        if reader {
            self.ready.notify_one();
        }
        if one_writer {
            self.room.notify_one();
        }
    }

    /// The writer's side: the whole batch, waiting for one; `None` once closed and drained.
    /// A batch smaller than `wake_at` is given `linger` to grow; a writer that lingered and got
    /// nothing waits for the first item, then lingers again.
    pub fn take(&self) -> Option<B> {
        let mut shared = self.lock();
        let mut lingered = false;
        while !shared.closed && shared.size < self.wake_at && !(shared.hurried && shared.size > 0) {
            if lingered && shared.size > 0 {
                break;
            }
            if lingered {
                shared.reader = ReaderWait::First;
                shared = self.ready.wait(shared).unwrap();
                lingered = false;
            } else {
                shared.reader = ReaderWait::Batch;
                shared = self.ready.wait_timeout(shared, self.linger).unwrap().0;
                lingered = true;
            }
            shared.reader = ReaderWait::No;
        }
        shared.reader = ReaderWait::No;
        self.take_locked(shared)
    }

    /// The writer's side without waiting: the batch if there is one.
    pub fn try_take(&self) -> Option<B> {
        self.take_locked(self.lock())
    }

    fn take_locked(&self, mut shared: MutexGuard<'_, Shared<B>>) -> Option<B> {
        if shared.size == 0 {
            return None;
        }
        shared.size = 0;
        shared.hurried = false;
        let next = shared.spare.take().unwrap_or_default();
        let batch = std::mem::replace(&mut shared.batch, next);
        // Who gets room passes the turn on (`push`).
        let waiting = shared.wake_a_writer();
        drop(shared);
        self.notify(false, waiting);
        Some(batch)
    }

    /// The writer's side: a batch it has written, emptied, to be filled again (its room
    /// reused rather than grown anew from nothing for every batch).
    pub fn give_back(&self, batch: B) {
        self.lock().spare = Some(batch);
    }

    /// The writer takes what is queued now, without lingering for more.
    pub fn hurry(&self) {
        let mut shared = self.lock();
        shared.hurried = true;
        let wake = shared.reader != ReaderWait::No;
        drop(shared);
        self.notify(wake, false);
    }

    /// No more pushes: the writer drains the batch, then `take` returns `None`.
    pub fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_all();
    }

    /// The writer stopped (an error, a closed pipe): pending and later items are dropped, and
    /// workers waiting for room return `ReaderGone`.
    pub fn reader_gone(&self) {
        let mut shared = self.lock();
        shared.reader_gone = true;
        shared.size = 0;
        shared.batch = B::default();
        self.room.notify_all();
    }

    fn lock(&self) -> MutexGuard<'_, Shared<B>> {
        self.shared.lock().unwrap()
    }
}

thread_local! {
    /// A worker's lines being formatted, kept from one page to the next: they are copied into
    /// the shared batch, so formatting costs no allocation and holds no lock.
    static LINE: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Formats with `fill` into the calling thread's line buffer and hands the bytes to `give`.
pub(crate) fn with_line_buffer<R>(
    fill: impl FnOnce(&mut Vec<u8>),
    give: impl FnOnce(&[u8]) -> R,
) -> R {
    LINE.with_borrow_mut(|line| {
        line.clear();
        fill(line);
        let given = give(line);
        if line.capacity() > 1 << 16 {
            *line = Vec::new();
        }
        given
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::thread::JoinHandle;

    /// The writer's side on its own thread: every item taken and the number of batches, each
    /// checked against `cap`.
    fn read_all(
        handoff: &Arc<Handoff<Vec<u32>>>,
        cap: usize,
    ) -> std::thread::JoinHandle<(Vec<u32>, usize)> {
        let handoff = Arc::clone(handoff);
        std::thread::spawn(move || {
            let (mut got, mut batches) = (Vec::new(), 0);
            while let Some(batch) = handoff.take() {
                assert!(batch.len() <= cap, "a batch of {}", batch.len());
                got.extend(batch);
                batches += 1;
            }
            (got, batches)
        })
    }

    #[test]
    fn the_writer_gets_every_item_in_order_in_few_batches() {
        let handoff = Arc::new(Handoff::<Vec<u32>>::new(64, 16, Duration::from_millis(5)));
        let reader = read_all(&handoff, 64);
        let writers: Vec<_> = (0..4u32)
            .map(|w| {
                let handoff = Arc::clone(&handoff);
                std::thread::spawn(move || {
                    for i in 0..10_000 {
                        handoff.push(1, |b| b.push(w * 100_000 + i)).unwrap();
                    }
                })
            })
            .collect();
        writers.into_iter().for_each(|w| w.join().unwrap());
        handoff.close();
        let (got, batches) = reader.join().unwrap();
        assert_eq!(got.len(), 40_000);
        for w in 0..4 {
            let mine: Vec<u32> = got.iter().copied().filter(|v| v / 100_000 == w).collect();
            assert_eq!(
                mine,
                (0..10_000).map(|i| w * 100_000 + i).collect::<Vec<_>>()
            );
        }
        assert!(batches < 40_000, "one batch per item: no batching");
    }

    #[test]
    fn workers_waiting_for_room_each_get_their_turn() {
        // A batch of 2 and 16 workers: most pushes wait for room, and each is let through by
        // a wake-up sent after the lock is released; a lost one fails on a deadline.
        let handoff = Arc::new(Handoff::<Vec<u32>>::new(2, 1, Duration::from_millis(1)));
        let reader = read_all(&handoff, 2);
        let (done, finished) = std::sync::mpsc::channel();
        for _ in 0..16 {
            let (handoff, done) = (Arc::clone(&handoff), done.clone());
            std::thread::spawn(move || {
                for i in 0..2_000 {
                    handoff.push(1, |b| b.push(i)).unwrap();
                }
                done.send(()).unwrap();
            });
        }
        for _ in 0..16 {
            finished
                .recv_timeout(Duration::from_secs(30))
                .expect("a worker waiting for room was never woken");
        }
        handoff.close();
        assert_eq!(reader.join().unwrap().0.len(), 32_000);
    }

    /// Polls (10 s at most) until a worker waits for room.
    fn until_a_pusher_waits(handoff: &Handoff<Vec<u8>>) {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while handoff.lock().writers_waiting == 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "the pusher never waited"
            );
            std::thread::yield_now();
        }
    }

    #[test]
    fn a_full_batch_makes_workers_wait_until_it_is_taken() {
        let handoff = Arc::new(Handoff::<Vec<u8>>::new(4, 4, Duration::from_millis(5)));
        handoff.push(4, |b| b.extend_from_slice(b"abcd")).unwrap();
        let pusher = {
            let handoff = Arc::clone(&handoff);
            std::thread::spawn(move || handoff.push(1, |b| b.push(b'e')))
        };
        // The pusher waits for room: the batch stays as it was until it is taken.
        until_a_pusher_waits(&handoff);
        assert_eq!(handoff.try_take().as_deref(), Some(&b"abcd"[..]));
        pusher.join().unwrap().unwrap();
        assert_eq!(handoff.try_take().as_deref(), Some(&b"e"[..]));
        assert_eq!(handoff.try_take(), None);
    }

    #[test]
    fn after_the_reader_is_gone_pushes_fail_and_waiting_workers_are_released() {
        let handoff = Arc::new(Handoff::<Vec<u8>>::new(1, 1, Duration::from_millis(5)));
        handoff.push(1, |b| b.push(1)).unwrap();
        let pusher = {
            let handoff = Arc::clone(&handoff);
            std::thread::spawn(move || handoff.push(1, |b| b.push(2)))
        };
        until_a_pusher_waits(&handoff);
        handoff.reader_gone();
        assert!(pusher.join().unwrap().is_err());
        assert!(handoff.push(1, |b| b.push(3)).is_err());
        assert_eq!(handoff.try_take(), None);
    }

    /// Polls until the writer waits for `what` (or has finished), within a deadline.
    fn until_reader(handoff: &Handoff<Vec<u32>>, what: ReaderWait, reader: &JoinHandle<Batch>) {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while handoff.lock().reader != what && !reader.is_finished() {
            let now = std::time::Instant::now();
            assert!(now < deadline, "the reader never waited for {what:?}");
            std::thread::yield_now();
        }
    }

    type Batch = Option<Vec<u32>>;

    #[test]
    fn a_lingering_writer_is_woken_once_by_a_full_batch() {
        // A linger far longer than the test: the writer takes the batch when it is full, and
        // no item before the last wakes it.
        let handoff = Arc::new(Handoff::<Vec<u32>>::new(64, 16, Duration::from_secs(600)));
        let reader = {
            let handoff = Arc::clone(&handoff);
            std::thread::spawn(move || handoff.take())
        };
        until_reader(&handoff, ReaderWait::Batch, &reader);
        for i in 0..15 {
            handoff.push(1, |b| b.push(i)).unwrap();
            assert_eq!(
                handoff.lock().reader,
                ReaderWait::Batch,
                "woken by item {i}"
            );
        }
        handoff.push(1, |b| b.push(15)).unwrap();
        let first = reader.join().unwrap().unwrap();
        assert_eq!(first, (0..16).collect::<Vec<_>>(), "taken before it filled");
    }

    #[test]
    fn a_writer_that_lingered_for_nothing_is_woken_by_the_first_item() {
        let handoff = Arc::new(Handoff::<Vec<u32>>::new(64, 16, Duration::from_millis(1)));
        let reader = {
            let handoff = Arc::clone(&handoff);
            std::thread::spawn(move || handoff.take())
        };
        // Nothing within the linger: it sleeps until an item comes, which wakes it.
        until_reader(&handoff, ReaderWait::First, &reader);
        handoff.push(1, |b| b.push(7)).unwrap();
        assert_eq!(reader.join().unwrap().unwrap()[0], 7);
    }

    #[test]
    fn a_worker_already_woken_is_not_woken_again() {
        // Two workers wait for room (a lost wake-up is what
        // `workers_waiting_for_room_each_get_their_turn` catches; this one counts them).
        let handoff = Handoff::<Vec<u8>>::new(2, 2, Duration::from_millis(5));
        let mut shared = handoff.lock();
        shared.writers_waiting = 2;
        assert!(shared.wake_a_writer(), "the first waiting worker");
        assert!(shared.wake_a_writer(), "the second");
        assert!(
            !shared.wake_a_writer(),
            "both are woken already: no futex call"
        );
        // One runs (`push` counts it out), finds the batch full and waits again.
        shared.writers_waiting -= 1;
        shared.writers_woken -= 1;
        shared.writers_waiting += 1;
        assert!(shared.wake_a_writer(), "waiting again, it is woken again");
    }

    /// A batch given back is filled again once the one the workers fill now is taken: emptied
    /// by the writer, its room kept, and what the workers add goes in it.
    #[test]
    fn a_batch_given_back_is_filled_again() {
        let handoff = Handoff::<Vec<u8>>::new(1 << 10, 1, Duration::from_millis(5));
        handoff.push(3, |b| b.extend_from_slice(b"abc")).unwrap();
        let mut first = handoff.try_take().unwrap();
        assert_eq!(first, b"abc");
        first.clear();
        first.reserve(512);
        let (room, at) = (first.capacity(), first.as_ptr());
        handoff.give_back(first);
        handoff.push(2, |b| b.extend_from_slice(b"de")).unwrap();
        assert_eq!(handoff.try_take().as_deref(), Some(&b"de"[..]));
        handoff.push(1, |b| b.push(b'f')).unwrap();
        let third = handoff.try_take().unwrap();
        assert_eq!(third, b"f");
        assert_eq!((third.capacity(), third.as_ptr()), (room, at));
        // None given back since: a new batch.
        handoff.push(1, |b| b.push(b'g')).unwrap();
        let fourth = handoff.try_take().unwrap();
        assert_eq!(
            (fourth.as_slice(), fourth.capacity() < room),
            (&b"g"[..], true)
        );
    }

    #[test]
    fn close_lets_the_writer_drain_and_stop() {
        let handoff = Handoff::<Vec<u8>>::new(16, 16, Duration::from_millis(5));
        handoff.push(2, |b| b.extend_from_slice(b"hi")).unwrap();
        handoff.close();
        assert_eq!(handoff.take().as_deref(), Some(&b"hi"[..]));
        assert_eq!(handoff.take(), None);
    }
}
