//! One sender thread per destination shard: moves its outbox into the broker.
//!
//! Each round takes up to `batching.batches` batches from the outbox's cursor, publishes them
//! in order, and commits the cursor past the last one the broker accepted (crash point
//! `outbox-published` lies between: a kill there publishes the round again on restart, which
//! is harmless). When the destination's stream is full (`publish` says Ok(false)) the sender
//! waits, with doubling pauses up to `full_pause`, and the backlog stays in the outbox on disk:
//! Redis holds at most its stream limit per destination whatever the imbalance between shards.
//!
//! A broker that stays unreachable past its reconnect limit ends the thread with the broker's
//! error (`Sender::failure`, `Sender::stop`); the outbox keeps everything not published, for
//! the next run.

use crate::shard::broker::Broker;
use crate::shard::broker::Handoff;
use crate::shard::outbox::{Batching, Outbox};
use crate::state::failpoint;
use anyhow::{Context, Result, bail};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How a sender batches and waits.
#[derive(Clone, Copy, Debug)]
pub struct SenderConfig {
    /// URLs per stream entry, and entries per round (one cursor commit).
    pub batching: Batching,
    /// The longest pause between tries while the destination's stream is full.
    pub full_pause: Duration,
    /// How long an idle sender waits for an append before it looks again (and at `stop`).
    pub idle_wait: Duration,
}

impl Default for SenderConfig {
    fn default() -> SenderConfig {
        SenderConfig {
            batching: Batching {
                urls: 512,
                batches: 16,
            },
            full_pause: Duration::from_millis(200),
            idle_wait: Duration::from_millis(200),
        }
    }
}

/// What a sender has done, for the summary and the benchmark.
#[derive(Debug, Default)]
pub struct SenderStats {
    /// URLs and batches the broker accepted.
    pub urls: AtomicU64,
    pub batches: AtomicU64,
    /// Publishes refused because the destination's stream was full.
    pub refused: AtomicU64,
}

/// A running sender; stopping it (or dropping it) ends the thread.
pub struct Sender {
    dest: u32,
    outbox: Arc<Outbox>,
    stop: Arc<AtomicBool>,
    stats: Arc<SenderStats>,
    failure: Arc<Mutex<Option<String>>>,
    thread: Mutex<Option<JoinHandle<Result<()>>>>,
}

impl Sender {
    /// Starts the thread sending `outbox` to shard `dest` through `broker`.
    pub fn spawn(
        dest: u32,
        outbox: Arc<Outbox>,
        broker: Arc<dyn Broker>,
        config: SenderConfig,
    ) -> Result<Sender> {
        let stop = Arc::new(AtomicBool::new(false));
        let stats = Arc::new(SenderStats::default());
        let failure = Arc::new(Mutex::new(None));
        let job = Job {
            dest,
            outbox: outbox.clone(),
            broker,
            config,
            stop: stop.clone(),
            stats: stats.clone(),
        };
        let failed = failure.clone();
        let thread = std::thread::Builder::new()
            .name(format!("sender-{dest}"))
            .spawn(move || {
                let result = job.run();
                if let Err(e) = &result {
                    *failed.lock().unwrap_or_else(|e| e.into_inner()) = Some(format!("{e:#}"));
                }
                result
            })
            .context("starting a sender thread")?;
        Ok(Sender {
            dest,
            outbox,
            stop,
            stats,
            failure,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// What it has sent so far.
    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }

    /// Why the thread ended, if it failed (the broker unreachable past its limit, a bad outbox).
    pub fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Stops the thread (after the round it is in) and returns how it ended.
    #[cfg_attr(not(test), allow(dead_code))] // its tests'; the crawl stops all via `Outboxes`
    pub fn stop(self) -> Result<()> {
        self.halt()
    }

    fn halt(&self) -> Result<()> {
        self.stop.store(true, Ordering::Relaxed);
        self.outbox.wake();
        let thread = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(thread) = &thread {
            thread.thread().unpark();
        }
        match thread {
            Some(thread) => thread
                .join()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("sender {} panicked", self.dest))),
            None => Ok(()),
        }
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        let _ = self.halt();
    }
}

struct Job {
    dest: u32,
    outbox: Arc<Outbox>,
    broker: Arc<dyn Broker>,
    config: SenderConfig,
    stop: Arc<AtomicBool>,
    stats: Arc<SenderStats>,
}

impl Job {
    fn run(&self) -> Result<()> {
        let mut pause = Duration::from_millis(1);
        while !self.stop.load(Ordering::Relaxed) {
            let (_, end) = self.outbox.bounds();
            let pending = self.outbox.pending(self.config.batching)?;
            if pending.is_empty() {
                self.outbox.wait_for_append(end, self.config.idle_wait);
                continue;
            }
            let mut accepted = None;
            let mut full = false;
            for batch in &pending {
                let published = self
                    .broker
                    .publish(self.dest, &batch.urls)
                    .with_context(|| format!("sending to shard {}", self.dest))?;
                if !published {
                    full = true;
                    break;
                }
                accepted = Some(batch.end);
                self.stats
                    .urls
                    .fetch_add(batch.urls.len() as u64, Ordering::Relaxed);
                self.stats.batches.fetch_add(1, Ordering::Relaxed);
            }
            failpoint::hit("outbox-published");
            if let Some(end) = accepted {
                self.outbox.commit(end)?;
            }
            if full {
                self.stats.refused.fetch_add(1, Ordering::Relaxed);
                // The destination reads and acknowledges at its own pace: look again soon,
                // less often while it stays full.
                // (`halt` unparks it; an early wake only means an earlier try.)
                std::thread::park_timeout(pause);
                pause = (pause * 2).min(self.config.full_pause);
            } else {
                pause = Duration::from_millis(1);
            }
        }
        Ok(())
    }
}

/// Every destination's outbox and its sender: what the crawl appends a page's cross-shard URLs
/// to (`DIR/shard/outbox/<dest>/`).
pub struct Outboxes {
    /// Indexed by destination; None for this shard's own.
    boxes: Vec<Option<(Arc<Outbox>, Sender)>>,
}

impl Outboxes {
    /// Opens the outboxes of shard `own` of `count` under `dir` and starts a sender for each.
    pub fn open(dir: &Path, own: u32, count: u32, broker: Arc<dyn Broker>) -> Result<Outboxes> {
        let mut boxes = Vec::new();
        for dest in 0..count {
            if dest == own {
                boxes.push(None);
                continue;
            }
            let outbox = Arc::new(Outbox::open(&dir.join(dest.to_string()))?);
            let sender = Sender::spawn(
                dest,
                outbox.clone(),
                broker.clone(),
                SenderConfig::default(),
            )?;
            boxes.push(Some((outbox, sender)));
        }
        Ok(Outboxes { boxes })
    }

    /// Appends URLs to their destinations' outboxes; they are in the kernel's hands on return.
    /// Fails once a sender has failed (the broker unreachable past its limit): the crawl stops.
    pub fn append(&self, mut urls: Vec<(u32, Handoff)>) -> Result<()> {
        urls.sort_by_key(|(dest, _)| *dest);
        let mut urls = urls.into_iter().peekable();
        while let Some((dest, first)) = urls.next() {
            // This destination's URLs, moved out of `urls`, not copied.
            let mut batch = vec![first];
            while let Some((_, url)) = urls.next_if(|(next, _)| *next == dest) {
                batch.push(url);
            }
            let Some(Some((outbox, sender))) = self.boxes.get(dest as usize) else {
                bail!("a URL for shard {dest} is no other shard's");
            };
            if let Some(failure) = sender.failure() {
                bail!("sending to shard {dest}: {failure}");
            }
            outbox.append(&batch)?;
        }
        Ok(())
    }

    /// Makes every append so far survive a power cut (each outbox fsynced).
    pub fn flush(&self) -> Result<()> {
        self.boxes
            .iter()
            .flatten()
            .try_for_each(|(outbox, _)| outbox.flush())
    }

    /// Whether the broker has every URL appended so far (an outbox that cannot be read counts
    /// as not published: its sender fails and says why).
    pub fn all_published(&self) -> bool {
        self.boxes
            .iter()
            .flatten()
            .all(|(outbox, _)| outbox.is_drained().unwrap_or(false))
    }

    /// URLs and batches published, and publishes refused by a full stream, over all senders.
    pub fn sent(&self) -> (u64, u64, u64) {
        let mut totals = (0, 0, 0);
        for (_, sender) in self.boxes.iter().flatten() {
            let stats = sender.stats();
            totals.0 += stats.urls.load(Ordering::Relaxed);
            totals.1 += stats.batches.load(Ordering::Relaxed);
            totals.2 += stats.refused.load(Ordering::Relaxed);
        }
        totals
    }

    /// Stops the senders (what is not published stays on disk for the resume); the first
    /// failure of any, if one failed.
    pub fn finish(&self) -> Result<()> {
        let mut result = Ok(());
        for (_, sender) in self.boxes.iter().flatten() {
            if let (Err(e), Ok(())) = (sender.halt(), &result) {
                result = Err(e.context(format!("sending to shard {}", sender.dest)));
            }
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shard::redis::RedisBroker;
    use std::collections::BTreeSet;
    use std::time::Instant;
    use testweb::redis::RedisServer;

    const NS: &str = "crawl:sender-test";

    fn urls(range: std::ops::Range<u32>) -> Vec<Handoff> {
        range
            .map(|i| Handoff {
                url: format!("http://h{}.test/p{i}", i % 7),
                depth: i % 5,
            })
            .collect()
    }

    /// Polls `done` until it holds, failing the test after `limit`.
    fn poll(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
        let deadline = Instant::now() + limit;
        while !done() {
            assert!(Instant::now() < deadline, "{what}: not within {limit:?}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Reads and acknowledges shard 1's stream until `want` URLs (with repeats) came, or fails.
    fn receive(reader: &RedisBroker, want: usize, limit: Duration) -> Vec<Handoff> {
        let mut got = Vec::new();
        poll(limit, "receiving", || {
            let deliveries = reader.read(64, Duration::from_millis(20)).unwrap();
            let ids: Vec<String> = deliveries.iter().map(|d| d.id.clone()).collect();
            got.extend(deliveries.into_iter().flat_map(|d| d.urls));
            reader.ack(&ids).unwrap();
            got.len() >= want
        });
        got
    }

    fn config(urls: usize) -> SenderConfig {
        rounds_of(urls, 4)
    }

    fn rounds_of(urls: usize, batches: usize) -> SenderConfig {
        SenderConfig {
            batching: Batching { urls, batches },
            full_pause: Duration::from_millis(20),
            idle_wait: Duration::from_millis(20),
        }
    }

    #[test]
    fn a_full_stream_keeps_the_backlog_in_the_outbox_and_nothing_is_lost() {
        let server = RedisServer::start().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let broker = RedisBroker::connect(&server.url(), NS, 0, 2)
            .unwrap()
            .with_max_stream_len(2);
        let reader = RedisBroker::connect(&server.url(), NS, 1, 2).unwrap();
        let outbox = Arc::new(Outbox::open(tmp.path()).unwrap());
        outbox.append(&urls(0..20)).unwrap();
        let sender = Sender::spawn(1, outbox.clone(), Arc::new(broker), config(1)).unwrap();
        poll(Duration::from_secs(10), "the stream filling", || {
            sender.stats().refused.load(Ordering::Relaxed) > 0
        });
        assert_eq!(
            reader.stream_len(1).unwrap(),
            2,
            "Redis holds the limit, no more"
        );
        assert!(
            outbox.backlog_bytes().unwrap() > 0,
            "the rest waits on disk"
        );
        assert_eq!(sender.stats().urls.load(Ordering::Relaxed), 2);

        let got = receive(&reader, 20, Duration::from_secs(20));
        assert_eq!(got, urls(0..20), "each once, in order");
        poll(Duration::from_secs(10), "the outbox draining", || {
            outbox.is_drained().unwrap()
        });
        assert!(sender.failure().is_none());
        sender.stop().unwrap();
    }

    #[test]
    fn a_sender_rides_out_a_redis_crash_and_nothing_it_published_is_lost() {
        let mut server = RedisServer::start().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let broker = RedisBroker::connect(&server.url(), NS, 0, 2).unwrap();
        let reader = RedisBroker::connect(&server.url(), NS, 1, 2).unwrap();
        let outbox = Arc::new(Outbox::open(tmp.path()).unwrap());
        let sender = Sender::spawn(1, outbox.clone(), Arc::new(broker), config(16)).unwrap();
        let total = 3000;
        let third = total / 3;
        let append = |range: std::ops::Range<u32>| {
            for i in range.step_by(10) {
                outbox.append(&urls(i..i + 10)).unwrap();
            }
        };
        // A third published and not yet read: it lives in Redis only when Redis is killed.
        append(0..third);
        poll(Duration::from_secs(20), "publishing", || {
            outbox.is_drained().unwrap()
        });
        server.kill();
        append(third..2 * third);
        assert!(
            outbox.backlog_bytes().unwrap() > 0,
            "held while Redis is down"
        );
        server.restart().unwrap();
        append(2 * third..total);
        let got = receive(&reader, total as usize, Duration::from_secs(60));
        let distinct: BTreeSet<&str> = got.iter().map(|h| h.url.as_str()).collect();
        let sent = urls(0..total);
        let want: BTreeSet<&str> = sent.iter().map(|h| h.url.as_str()).collect();
        assert_eq!(distinct, want, "every URL arrived");
        assert!(
            got.len() < total as usize + 200,
            "a few repeats at most: {}",
            got.len()
        );
        poll(Duration::from_secs(10), "the outbox draining", || {
            outbox.is_drained().unwrap()
        });
        assert!(sender.failure().is_none(), "{:?}", sender.failure());
        sender.stop().unwrap();
    }

    #[test]
    fn a_sender_gives_up_after_the_reconnect_limit_and_its_outbox_keeps_the_urls() {
        let mut server = RedisServer::start().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let limit = Duration::from_millis(300);
        let broker = RedisBroker::connect_with(&server.url(), NS, 0, 2, limit).unwrap();
        let outbox = Arc::new(Outbox::open(tmp.path()).unwrap());
        server.kill();
        outbox.append(&urls(0..5)).unwrap();
        let sender = Sender::spawn(1, outbox.clone(), Arc::new(broker), config(16)).unwrap();
        poll(Duration::from_secs(10), "the sender failing", || {
            sender.failure().is_some()
        });
        let failure = sender.failure().unwrap();
        assert!(
            failure.contains("sending to shard 1") && failure.contains(&server.url()),
            "{failure}"
        );
        assert!(sender.stop().is_err());
        assert!(!outbox.is_drained().unwrap());
        drop(outbox);

        server.restart().unwrap();
        let outbox = Arc::new(Outbox::open(tmp.path()).unwrap());
        let broker = RedisBroker::connect(&server.url(), NS, 0, 2).unwrap();
        let reader = RedisBroker::connect(&server.url(), NS, 1, 2).unwrap();
        let _sender = Sender::spawn(1, outbox, Arc::new(broker), config(16)).unwrap();
        assert_eq!(receive(&reader, 5, Duration::from_secs(10)), urls(0..5));
    }

    /// The outbox of the kill test: segments of about four URLs, so commits delete some.
    const KILL_SEGMENT_BYTES: u64 = 64;

    /// The kill test's child role: sends the outbox `CRAWL_TEST_OUTBOX` to the Redis at
    /// `CRAWL_TEST_REDIS` until it is drained, or until the crash point armed in
    /// `CRAWL_FAILPOINT` kills the process.
    fn send_until_killed(url: &str) {
        let dir = std::env::var("CRAWL_TEST_OUTBOX").unwrap();
        let outbox = Arc::new(Outbox::open_with(Path::new(&dir), KILL_SEGMENT_BYTES).unwrap());
        let broker = RedisBroker::connect(url, NS, 0, 2).unwrap();
        let sender = Sender::spawn(1, outbox.clone(), Arc::new(broker), rounds_of(10, 2)).unwrap();
        poll(Duration::from_secs(20), "draining", || {
            outbox.is_drained().unwrap()
        });
        sender.stop().unwrap();
    }

    /// Runs this test again as a child process in the sender's role, with `failpoint` armed,
    /// and checks that the crash point killed it.
    fn kill_child_at(server: &RedisServer, outbox: &Path, failpoint: &str) {
        let name = "shard::sender::tests::a_sender_killed_at_its_crash_points_loses_nothing";
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([name, "--exact", "--test-threads", "1"])
            .env("CRAWL_TEST_REDIS", server.url())
            .env("CRAWL_TEST_OUTBOX", outbox)
            .env("CRAWL_FAILPOINT", failpoint)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut status = None;
        poll(Duration::from_secs(30), "the child's end", || {
            status = child.try_wait().unwrap();
            status.is_some()
        });
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.unwrap().signal(), Some(9), "killed at {failpoint}");
    }

    #[test]
    fn a_sender_killed_at_its_crash_points_loses_nothing() {
        if let Ok(url) = std::env::var("CRAWL_TEST_REDIS") {
            return send_until_killed(&url);
        }
        let server = RedisServer::start().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let reader = RedisBroker::connect(&server.url(), NS, 1, 2).unwrap();
        let outbox = Outbox::open_with(tmp.path(), KILL_SEGMENT_BYTES).unwrap();
        for i in 0..100 {
            outbox.append(&urls(i..i + 1)).unwrap();
        }
        drop(outbox);
        let segment_files = || {
            let mut names: Vec<String> = std::fs::read_dir(tmp.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".seg"))
                .collect();
            names.sort();
            names
        };
        let cursor_segment = || {
            let text = std::fs::read_to_string(tmp.path().join("cursor")).unwrap();
            format!(
                "{:012}.seg",
                text.split(' ').next().unwrap().parse::<u64>().unwrap()
            )
        };

        // Rounds are two batches of ten: killed after the second round's cursor was written,
        // before the segments it passed were deleted.
        kill_child_at(&server, tmp.path(), "outbox-committed:2");
        let cut = cursor_segment();
        assert!(segment_files()[0] < cut, "the kill left published segments");
        drop(Outbox::open_with(tmp.path(), KILL_SEGMENT_BYTES).unwrap());
        assert_eq!(segment_files()[0], cut, "open deleted them");
        // Killed after publishing the second round from there (URLs 60..80), before its commit.
        kill_child_at(&server, tmp.path(), "outbox-published:2");

        let outbox = Arc::new(Outbox::open_with(tmp.path(), KILL_SEGMENT_BYTES).unwrap());
        let broker = RedisBroker::connect(&server.url(), NS, 0, 2).unwrap();
        let sender = Sender::spawn(1, outbox.clone(), Arc::new(broker), rounds_of(10, 2)).unwrap();
        let got = receive(&reader, 120, Duration::from_secs(20));
        let mut want = urls(0..100);
        want.extend(urls(60..80));
        let key = |v: &[Handoff]| {
            let mut urls: Vec<String> = v.iter().map(|h| h.url.clone()).collect();
            urls.sort();
            urls
        };
        assert_eq!(
            key(&got),
            key(&want),
            "all, and only the unacknowledged round twice"
        );
        poll(Duration::from_secs(10), "draining", || {
            outbox.is_drained().unwrap()
        });
        sender.stop().unwrap();
    }

    #[test]
    fn outboxes_route_urls_to_their_shards_and_stop_the_crawl_once_a_sender_failed() {
        let mut server = RedisServer::start().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let limit = Duration::from_millis(300);
        let broker = RedisBroker::connect_with(&server.url(), NS, 0, 3, limit).unwrap();
        let outboxes = Outboxes::open(tmp.path(), 0, 3, Arc::new(broker)).unwrap();
        let readers: Vec<RedisBroker> = (1..3)
            .map(|k| RedisBroker::connect(&server.url(), NS, k, 3).unwrap())
            .collect();
        let sent = urls(0..30);
        outboxes
            .append(
                sent.iter()
                    .enumerate()
                    .map(|(i, h)| (1 + i as u32 % 2, h.clone()))
                    .collect(),
            )
            .unwrap();
        outboxes.flush().unwrap();
        assert!(
            outboxes.append(vec![(0, sent[0].clone())]).is_err(),
            "its own shard"
        );
        let one = receive(&readers[0], 15, Duration::from_secs(10));
        let two = receive(&readers[1], 15, Duration::from_secs(10));
        assert_eq!(one, sent.iter().step_by(2).cloned().collect::<Vec<_>>());
        assert_eq!(
            two,
            sent.iter().skip(1).step_by(2).cloned().collect::<Vec<_>>()
        );
        poll(Duration::from_secs(10), "publishing", || {
            outboxes.all_published()
        });
        assert_eq!(outboxes.sent().0, 30);

        server.kill();
        outboxes.append(vec![(2, sent[0].clone())]).unwrap();
        assert!(!outboxes.all_published());
        poll(Duration::from_secs(10), "the sender failing", || {
            outboxes.append(vec![(2, sent[1].clone())]).is_err()
        });
        let err = format!("{:#}", outboxes.finish().unwrap_err());
        assert!(
            err.contains("sending to shard 2") && err.contains(&server.url()),
            "{err}"
        );
    }
}
