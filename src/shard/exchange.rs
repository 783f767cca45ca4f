//! The exchange as the crawl uses it: owner + sent cache + outboxes + senders + receiver, and
//! the rule that ends a sharded crawl.
//!
//! Out: a worker's discovered, in-scope, canonical URLs pass `route` before the DUE. A URL whose
//! host this shard owns stays; any other is checked against the sent cache and, on a miss,
//! appended to its destination's outbox. `route` returns only after those appends reached the
//! kernel, and the worker offers to the DUE after it, so both happen before the page counts done
//! (`dispatch::Dispatcher::entry_done`): a kill loses no URL. A sender thread per destination
//! moves its outbox into the broker.
//!
//! In: the receiver thread reads this shard's stream, offers each batch's URLs to the DUE at
//! their carried depth (durable once `offer` returns, the DUE's own rule), reports this shard
//! busy, and only then acknowledges the batch (XACK + XDEL, and +1 to `acked`). A kill between
//! the offer and the ack makes the batch come again; the DUE drops the duplicates.
//!
//! The end (the coordinator thread, every `POLL`): this shard is idle when nothing read is in
//! hand, it has nothing to fetch (`Dispatcher::quiescent`: nothing in flight, frontier, host
//! queues and DUE empty, or its page limit reached) and every outbox is published; it reports
//! that with its counters. The crawl is over when two consecutive reads of every shard's report,
//! `POLL` apart, are equal and show every shard idle and Σ published = Σ acked (no batch in any
//! stream). Why that is safe: only a batch in transit or a busy shard can make work; a shard
//! reports busy before it acknowledges (so `acked` never moves while a shard holding new URLs
//! still reads as idle), and the idle test runs under the lock the receiver takes to report and
//! acknowledge, checked in the order in-hand → local work → outboxes (nothing can refill what
//! was found empty). A shard that never reported keeps every other waiting.
//!
//! Runs: the broker keeps each run of the crawl (the first, then each recrawl) apart. Once the
//! coordinator has seen the end it marks the run ended in the broker (`Broker::end_run`), before
//! this shard counts its crawl complete: a shard started again for the next run finds the mark
//! and starts that run, with keys of its own.
//!
//! `--find` (`announce_find`, and the coordinator's first step): a shard that found the text
//! sets the broker's stop mark once its workers stopped; every coordinator hunting the same text
//! reads the mark each `POLL`, records it in the hunt and returns, and the crawl stops as after
//! a find of its own (`Ending::Found`, resumable: nothing is marked complete).

use crate::frontier::Entry;
use crate::schedule::dispatch::{Dispatcher, EndGate};
use crate::seen::checksum::checksum;
use crate::seen::due::Due;
use crate::shard::broker::{Broker, Handoff, ShardReport};
use crate::shard::owner::Shard;
use crate::shard::sentcache::SentCache;
use anyhow::{Context, Result, anyhow};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often the coordinator reports and reads the others' reports (also the pause between
/// the two reads that must agree for the crawl to end).
pub const POLL: Duration = Duration::from_millis(200);
/// Batches the receiver reads at once, and how long a read waits for one.
const READ_BATCHES: usize = 32;
const READ_WAIT: Duration = Duration::from_millis(200);
/// The lease on this shard in the broker, renewed every third of it.
pub const LEASE: Duration = Duration::from_secs(15);

/// What the exchange needs of a `--find` hunt (`crawl::hunt::Hunt`): the text whose stop mark
/// it watches, whether the hunt is over, and where to say that another shard found the text.
/// A trait, so that the shard stage does not reach up into the crawl's.
pub trait Hunted {
    /// The text hunted for (the stop mark's key).
    fn text(&self) -> &str;
    /// Found, here or by another shard.
    fn is_over(&self) -> bool;
    /// Another shard found it (`by` names the shard and the page): the crawl stops.
    fn set_found_elsewhere(&self, by: String);
}

/// What a shard's summary.json says of its exchange.
#[derive(Clone, Copy, Debug)]
pub struct ExchangeStats {
    pub shard: Shard,
    /// The run of the crawl this shard took part in (1 for the first crawl, then each recrawl).
    pub run: u64,
    /// URLs appended to outboxes (sent to other shards).
    pub sent: u64,
    pub cache_hits: u64,
    pub cache_misses: u64,
    /// URLs received from other shards (duplicates of a re-read batch included).
    pub received: u64,
    /// Stream entries published (batches of sent URLs), and publishes a full stream refused
    /// (backpressure: the backlog waited in the outbox).
    pub batches: u64,
    pub stream_full: u64,
}

/// One shard's side of the exchange, shared by the workers, the receiver and the coordinator.
pub struct Exchange {
    shard: Shard,
    /// The run joined in the broker.
    run: u64,
    broker: Arc<dyn Broker>,
    sent_cache: SentCache,
    outboxes: crate::shard::sender::Outboxes,
    sent: AtomicU64,
    received: AtomicU64,
    /// Batches read and not yet acknowledged; also the lock under which the coordinator
    /// decides "idle" and the receiver reports busy and acknowledges.
    in_hand: Mutex<u64>,
    /// The whole crawl is over (every shard idle, nothing in transit).
    done: AtomicBool,
    /// The crawl of this process ended (or failed): the threads return.
    stop: AtomicBool,
}

impl EndGate for Exchange {
    fn all_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }
}

impl Exchange {
    pub fn new(
        shard: Shard,
        run: u64,
        broker: Arc<dyn Broker>,
        outboxes: crate::shard::sender::Outboxes,
        sent_cache_entries: usize,
    ) -> Exchange {
        Exchange {
            shard,
            run,
            broker,
            sent_cache: SentCache::new(sent_cache_entries),
            outboxes,
            sent: AtomicU64::new(0),
            received: AtomicU64::new(0),
            in_hand: Mutex::new(0),
            done: AtomicBool::new(false),
            stop: AtomicBool::new(false),
        }
    }

    /// Whether this shard crawls `url` (a canonical http(s) URL).
    pub fn owns(&self, url: &str) -> bool {
        self.owner(url) == self.shard.index
    }

    fn owner(&self, url: &str) -> u32 {
        crate::url::normalize::with_host_key(url, |key| self.shard.owner(key))
            .unwrap_or(self.shard.index)
    }

    /// Keeps the URLs this shard owns; sends the others (unless sent recently) to their owners'
    /// outboxes, in the kernel's hands before this returns.
    pub fn route(&self, wanted: Vec<(u64, Entry)>) -> Result<Vec<(u64, Entry)>> {
        let mut kept = Vec::with_capacity(wanted.len());
        let mut outgoing: Vec<(u32, Handoff)> = Vec::new();
        for (key, entry) in wanted {
            let owner = self.owner(&entry.url);
            if owner == self.shard.index {
                kept.push((key, entry));
            } else if !self.sent_cache.already_sent(key) {
                outgoing.push((
                    owner,
                    Handoff {
                        url: entry.url,
                        depth: entry.depth,
                    },
                ));
            }
        }
        if !outgoing.is_empty() {
            self.sent
                .fetch_add(outgoing.len() as u64, Ordering::Relaxed);
            self.outboxes.append(outgoing)?;
        }
        Ok(kept)
    }

    pub fn stats(&self) -> ExchangeStats {
        let (cache_hits, cache_misses) = self.sent_cache.counts();
        let (_, batches, stream_full) = self.outboxes.sent();
        ExchangeStats {
            shard: self.shard,
            run: self.run,
            sent: self.sent.load(Ordering::Relaxed),
            cache_hits,
            cache_misses,
            received: self.received.load(Ordering::Relaxed),
            batches,
            stream_full,
        }
    }

    /// Makes the outboxes' appends so far survive a power cut (at each frontier checkpoint,
    /// before the done log it covers is saved).
    pub fn flush(&self) -> Result<()> {
        self.outboxes.flush()
    }

    /// Tells the receiver and the coordinator to return (the crawl of this process is over).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Release);
    }

    /// The receiver thread's loop (see the module doc); an error stops the crawl.
    pub fn receive(
        &self,
        due: &Due<Entry>,
        dispatcher: &Dispatcher,
        pages: &AtomicU64,
    ) -> Result<()> {
        while !self.stop.load(Ordering::Acquire) {
            let deliveries = self
                .broker
                .read(READ_BATCHES, READ_WAIT)
                .map_err(|e| anyhow!("reading shard {}'s stream: {e}", self.shard))?;
            if deliveries.is_empty() {
                continue;
            }
            *self.in_hand.lock().unwrap() += deliveries.len() as u64;
            let mut ids = Vec::with_capacity(deliveries.len());
            let mut offered = Vec::new();
            for delivery in deliveries {
                ids.push(delivery.id);
                for handoff in delivery.urls {
                    let entry = Entry::new(handoff.url, handoff.depth, 0);
                    offered.push((checksum(entry.url.as_bytes()), entry));
                }
            }
            let urls = offered.len() as u64;
            due.offer(offered)?;
            // Crash point: offered, not acknowledged; the batches must come again.
            crate::state::failpoint::hit("shard-received");
            dispatcher.wake_one_parked();
            let mut in_hand = self.in_hand.lock().unwrap();
            // Busy first, then the acknowledgement (module doc).
            self.report(false, pages)?;
            self.broker
                .ack(&ids)
                .map_err(|e| anyhow!("acknowledging batches of shard {}: {e}", self.shard))?;
            self.received.fetch_add(urls, Ordering::Relaxed);
            *in_hand -= ids.len() as u64;
        }
        Ok(())
    }

    /// Publishes this shard's report (the counters are the broker's own).
    fn report(&self, idle: bool, pages: &AtomicU64) -> Result<()> {
        let report = ShardReport {
            idle,
            pages: pages.load(Ordering::Relaxed),
            ..ShardReport::default()
        };
        self.broker
            .report(&report)
            .map_err(|e| anyhow!("reporting shard {}: {e}", self.shard))
    }

    /// The coordinator thread's loop: reports this shard's state every `POLL`, renews its
    /// lease, and decides the end (see the module doc). Sets `done` and wakes the workers.
    /// With `--find` (`hunt`), it also looks for another shard's stop mark for its text: once
    /// there, the hunt is over here too and the workers stop (as after a find of this shard's).
    pub fn coordinate(
        &self,
        due: &Due<Entry>,
        dispatcher: &Dispatcher,
        pages: &AtomicU64,
        hunt: Option<&dyn Hunted>,
    ) -> Result<()> {
        let mut last: Option<Vec<Option<ShardReport>>> = None;
        let mut leased = Instant::now();
        while !self.stop.load(Ordering::Acquire) {
            if let Some(hunt) = hunt.filter(|h| !h.is_over()) {
                let mark = self
                    .broker
                    .stopped(hunt.text())
                    .map_err(|e| anyhow!("reading the shards' stop mark: {e}"))?;
                if let Some(by) = mark {
                    hunt.set_found_elsewhere(by);
                    return Ok(());
                }
            }
            if leased.elapsed() >= LEASE / 3 {
                self.broker
                    .lease(LEASE)
                    .map_err(|e| anyhow!("renewing the lease: {e}"))?;
                leased = Instant::now();
            }
            let idle = {
                let in_hand = self.in_hand.lock().unwrap();
                let idle =
                    *in_hand == 0 && dispatcher.quiescent(due)? && self.outboxes.all_published();
                self.report(idle, pages)?;
                idle
            };
            let reports = match idle {
                true => Some(
                    self.broker
                        .reports()
                        .map_err(|e| anyhow!("reading the shards' reports: {e}"))?,
                ),
                false => None,
            };
            match (&last, reports) {
                (Some(before), Some(now)) if *before == now && settled(&now) => {
                    // Before this shard counts the run complete: the next run may then start.
                    self.broker
                        .end_run()
                        .map_err(|e| anyhow!("marking run {} ended: {e}", self.run))?;
                    self.done.store(true, Ordering::Release);
                    dispatcher.wake_all();
                    return Ok(());
                }
                (_, now) => last = now.filter(|r| settled(r)),
            }
            self.pause(POLL);
        }
        Ok(())
    }

    /// With `--find`: once this shard found `text` on the page `found_at`, sets the broker's
    /// stop mark (which shard, and the page) so that every other shard stops too.
    pub fn announce_find(&self, text: &str, found_at: &str) -> Result<()> {
        let by = self.finder(found_at);
        self.broker
            .stop(text, &by)
            .map_err(|e| anyhow!("setting the shards' stop mark: {e}"))
    }

    /// How a find of this shard's on the page `found_at` is named in the stop mark and the
    /// summaries.
    pub fn finder(&self, found_at: &str) -> String {
        format!("shard {} at {}", self.shard, found_at)
    }

    /// Waits `period` or until `stop`, whichever comes first (in short steps).
    fn pause(&self, period: Duration) {
        let until = Instant::now() + period;
        while !self.stop.load(Ordering::Acquire) && Instant::now() < until {
            std::thread::park_timeout(Duration::from_millis(20).min(period));
        }
    }

    /// At a clean exit: drops this shard's lease, and stops the senders once their outboxes are
    /// published (with `wait`, at the end of the crawl) or at once (a stop: the outboxes keep
    /// the rest for the resume).
    pub fn finish(&self) -> Result<()> {
        self.stop();
        self.outboxes.finish().context("stopping the senders")?;
        self.broker
            .release()
            .map_err(|e| anyhow!("releasing the lease of shard {}: {e}", self.shard))
    }
}

/// Every shard has reported, each is idle, and no batch is in any stream.
pub(crate) fn settled(reports: &[Option<ShardReport>]) -> bool {
    let mut published = 0;
    let mut acked = 0;
    for report in reports {
        match report {
            Some(r) if r.idle => {
                published += r.published;
                acked += r.acked;
            }
            _ => return false,
        }
    }
    published == acked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(idle: bool, published: u64, acked: u64) -> Option<ShardReport> {
        Some(ShardReport {
            idle,
            published,
            acked,
            pages: 0,
        })
    }

    #[test]
    fn settled_needs_every_shard_idle_and_nothing_in_transit() {
        assert!(settled(&[report(true, 3, 1), report(true, 0, 2)]));
        assert!(!settled(&[report(true, 3, 1), report(false, 0, 2)]));
        assert!(
            !settled(&[report(true, 3, 1), report(true, 0, 1)]),
            "a batch in transit"
        );
        assert!(!settled(&[report(true, 0, 0), None]), "a late starter");
    }
}
