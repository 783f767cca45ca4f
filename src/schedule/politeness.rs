//! The politeness scheduler: Mercator's back queues (survey §2.3.1).
//!
//! URLs leave the frontier into per-host queues (a host is host:port). A min-heap orders the
//! hosts that have work by the earliest instant they may be contacted again; once that instant
//! has passed, a host moves to the ready heap, where the host with the most queued work goes
//! first: the largest host bounds when a polite crawl can end, so it must never sit ready while
//! a smaller one is served. A worker takes the ready host, fetches one URL, and that host's
//! *lane* may be used again at `now + delay_factor × response_time`, clamped to [min_delay,
//! max_delay] and never earlier than robots.txt's Crawl-delay. A lane is one request at a time
//! with its own rest (not a socket: `fetch::pool` keeps those). A host has `--host-connections`
//! lanes (default 1): no host ever has more requests in flight. With `--rate N` a host's
//! requests also start at least 1/N s apart (`Host::next_start`, across its lanes) and each
//! lane rests at least 1/N s: one more lower bound, the strictest wins. `--host-rules` may give
//! a host other lanes and another rate (`hostrules`). Before a host's first page its
//! robots.txt is fetched, through the same queue and delay, and every URL is checked against it
//! as it leaves the queue.
//!
//! Memory is independent of the number of hosts known and of their sizes: only hosts with work
//! queued or in flight, or drained recently, are held, at most `slots` of them (the dispatcher
//! sets aside URLs of other hosts, see `dispatch`), and each host queue keeps a bounded head and
//! tail in memory and spills the rest to disk (`frontier::spill`). A host that runs dry keeps
//! its slot until a new host needs it (so a host between two batches of its links keeps its
//! place); then it leaves memory. Its resting time (while it lasts) and its robots.txt rules (a bounded cache,
//! then the state directory's `robots/` store, `robotstore`) are what is remembered.
//!
//! What an answer tells politeness is a `Reply`: its response time, by which the lane rests,
//! and an optional not-before instant (a retry's).
//!
//! Pages and hosts that fail (`fetch::retry`) are told apart. A page that got no answer while
//! its host answered the request before it, or a 502/504 (the gateway answered), waits on its
//! own: it is *deferred* in its host's list with its not-before instant (`page_failed`,
//! `page_retry`), the host rests its normal rest and serves its other URLs meanwhile, and the
//! page goes first again once due. Once the failures in a row (no answer between) hold two
//! of new pages (first attempts, or robots.txt), they are the host's: the host rests the
//! page's wait as well, and may be parked; retries of pages known to fail, failing one after
//! the other, stay the pages'. A 429 or 503 rests the whole
//! host until its retry (the server asked it to slow down). A robots.txt that got no answer (or
//! a 5xx) is asked again on the same schedule (`robots_unanswered`) before the host is held
//! unreachable. A host with `PARK_AFTER` connection-level failures in a row is parked: every
//! lane rests the schedule's next wait once more, and if the attempt after it fails too, the
//! host is held unreachable. An unreachable
//! host carries the verdict of an unreachable robots.txt (RFC 9309 §2.3.1.4: everything
//! disallowed, for `ROBOTS_RETRY`, then asked again), and its queued URLs are not dropped as
//! robots blocks: the host is listed for the caller to give them up (`take_unreachable`,
//! `give_up`), each without a request. Any answer from a host clears its failures.
//!
//! This is a data structure: the caller owns locking, threads and the clock; its only I/O is
//! the host queues' spill files.

use crate::fetch::dns::HostAhead;
use crate::fetch::retry::{PARK_AFTER, Transient};
use crate::frontier::entry::Entry;
use crate::frontier::spill::{HostQueue, Range, SpillDir};
use crate::lru::Lru;
use crate::schedule::hostrules::HostRules;
use crate::schedule::robots::RobotsRules;
use crate::schedule::robotstore::RobotsStore;
use crate::url::normalize::origin_and_key;
use anyhow::{Result, bail};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use url::Url;

/// The delay rule's parameters.
#[derive(Clone, Copy, Debug)]
pub struct DelayRule {
    /// A host rests this many times its last response time (`--delay-factor`).
    pub factor: f64,
    /// The shortest rest (`--min-delay`).
    pub min: Duration,
    /// The longest rest (`--max-delay`), Crawl-delay aside.
    pub max: Duration,
}

impl DelayRule {
    /// How long a host rests after a response that took `response_time`.
    pub fn delay(&self, response_time: Duration, crawl_delay: Option<Duration>) -> Duration {
        let scaled = response_time
            .mul_f64(self.factor)
            .clamp(self.min, self.max.max(self.min));
        scaled.max(crawl_delay.unwrap_or_default().min(MAX_CRAWL_DELAY))
    }
}

/// The longest robots.txt Crawl-delay honoured: a hostile value must not stall the crawl forever.
const MAX_CRAWL_DELAY: Duration = Duration::from_secs(3600);

/// How long robots.txt answers are trusted (RFC 9309 §2.4: no more than 24 hours), and how long
/// an unavailable one (5xx, unreachable) blocks the host before it is asked for again.
pub const ROBOTS_TTL: Duration = Duration::from_secs(24 * 3600);
pub const ROBOTS_RETRY: Duration = Duration::from_secs(300);

/// Robots.txt answers of hosts no longer in memory are kept at most this many, parsed; older
/// ones are read again from the state directory (`robotstore`), not fetched again.
const ROBOTS_CACHED: usize = 4096;

/// The table of resting hosts that left memory is pruned of hosts past their rest when it
/// reaches this size (or twice what the last prune kept).
const RESTING_PRUNE_AT: usize = 4096;

/// What an answer tells politeness (`Scheduler::page_done`, `page_retry`, `page_failed`): how
/// long it took, by which the host's lane rests (the delay rule), and an instant before which
/// it may not be asked again, if the answer set one. For a retried page (`page_retry`,
/// `page_failed`) that instant is the page's own, or its host's after a 429/503; for a page
/// done (`page_done`) it is the host's: where a hint read from the response's headers (a
/// Retry-After on a 200, RateLimit) goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reply {
    /// How long the request took (to its answer, or its failure).
    pub response_time: Duration,
    /// Not to be asked again before this instant.
    pub not_before: Option<Instant>,
    /// When the answer arrived, if before it is told (`answered_at`): the rest counts from
    /// then. With the event loop an answer waits for a processing thread; at 10,000 hosts
    /// that wait was a quarter to half a second at the busiest, added to every rest (idle
    /// beyond the rule, p90 1.3 s a host; BENCHMARKS.md, issue 47). `None`: it arrived now.
    pub answered: Option<Instant>,
}

impl Reply {
    /// An answer that asks for nothing but the delay rule's rest.
    pub fn took(response_time: Duration) -> Reply {
        Reply {
            response_time,
            not_before: None,
            answered: None,
        }
    }

    /// An answer after which the page (or its host) waits until `at`, if there is one.
    pub fn retry_at(response_time: Duration, at: Option<Instant>) -> Reply {
        Reply {
            response_time,
            not_before: at,
            answered: None,
        }
    }

    /// The same answer, which arrived at `at` (`Response::answered`).
    pub fn answered_at(self, at: Option<Instant>) -> Reply {
        Reply {
            answered: at,
            ..self
        }
    }
}

impl From<Duration> for Reply {
    fn from(response_time: Duration) -> Reply {
        Reply::took(response_time)
    }
}

/// What became of a page whose fetch got no answer (`Scheduler::page_failed`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Deferred in its host's list (or, with its host failing, first in its queue), asked for
    /// again after the wait.
    Retry(Duration),
    /// Done: not asked for again in this crawl (retries used up, or not a retried kind).
    Done,
    /// Its host failed again after it was parked: the page is back in its host's queue, and
    /// the queue is given up (`host-unreachable`) with it.
    HostUnreachable,
}

/// A unit of work for one worker.
#[derive(Debug)]
pub enum Work {
    /// Fetch the host's robots.txt (`url`) and report it with `robots_done`.
    Robots {
        /// The host's id, to report back with.
        host: usize,
        /// `ORIGIN/robots.txt`.
        url: String,
    },
    /// Fetch a page and report with `page_done`.
    Page {
        /// The host's id, to report back with.
        host: usize,
        /// The page.
        entry: Entry,
    },
}

/// What the scheduler has for a worker right now.
#[derive(Debug)]
pub enum Next {
    /// Work that may start now.
    Work(Work),
    /// Nothing is ready before this instant.
    WaitUntil(Instant),
    /// No host has queued work.
    Empty,
}

/// What the held hosts are doing (`Scheduler::census`). A host with several lanes may be busy
/// and ready (or resting) at once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Census {
    /// With a request (or its robots.txt fetch) in flight.
    pub busy: usize,
    /// With queued work and a lane that may go now: waiting for a worker.
    pub ready: usize,
    /// With queued work, every free lane resting by the delay rule: waiting on politeness.
    pub resting: usize,
    /// Holding a slot with nothing queued and nothing in flight: waiting for URLs.
    pub starved: usize,
}

/// A host with queued or in-flight work (an "active" host, Mercator's back queue).
struct Host {
    /// `host:port`, the politeness unit.
    key: String,
    /// `scheme://host[:port]`, where robots.txt lives.
    origin: String,
    queue: HostQueue,
    /// Pages that failed and wait for their own retry instant, served before `queue` once due
    /// (`Scheduler::defer`); few (the failing pages of one host), so a list.
    deferred: Vec<(Instant, Entry)>,
    /// When each lane not in use may send its next request (`--host-connections` of
    /// them in all, with `in_flight`, or its `--host-rules` connections).
    idle: Vec<Instant>,
    /// The shortest gap between two of its requests (`--rate`, or its rule's), zero without.
    interval: Duration,
    /// When its next request may start, whatever lane: the last one's start plus `interval`.
    next_start: Instant,
    in_flight: usize,
    /// Nothing queued and a request in flight (`Scheduler::hungry` counts these).
    hungry: bool,
    /// In the waiting or ready heap (has work, a free lane, and no robots.txt fetch
    /// under way).
    scheduled: bool,
    robots: Option<(RobotsRules, Instant)>,
    /// Its robots.txt is being fetched: no page may go before the answer.
    robots_pending: bool,
    /// Drained but kept in its slot (with bounded slots), stamped for `Scheduler::drained`.
    drained: Option<u64>,
    /// Connection-level failures in a row (pages and robots.txt); an answer clears them.
    failures: u32,
    /// The response time of its last answer: the rest after a failure that is a page's own
    /// (`Scheduler::page_failed`).
    last_answer: Option<Duration>,
    /// Of `failures`, those of a page's first attempt or of robots.txt: with two, the failures
    /// in a row are the host's, not only its failing pages' retries (`Scheduler::page_failed`).
    first_failures: u32,
    /// `PARK_AFTER` failures in a row: resting its last wait; the next failure gives it up.
    parked: bool,
    /// robots.txt fetches without an answer in a row (`robots_unanswered`).
    robots_failures: u32,
    /// Held unreachable with URLs queued: listed in `Scheduler::unreachable` to give them up.
    giving_up: bool,
}

impl Host {
    /// Whether it has pages to give, queued or deferred.
    fn has_work(&self) -> bool {
        !self.queue.is_empty() || !self.deferred.is_empty()
    }

    /// When its first deferred page comes due.
    fn first_due(&self) -> Option<Instant> {
        self.deferred.iter().map(|(at, _)| *at).min()
    }

    /// Takes its deferred page due first, if due at `now`.
    fn take_due(&mut self, now: Instant) -> Option<Entry> {
        let (i, _) = (self.deferred.iter().enumerate())
            .filter(|(_, (at, _))| *at <= now)
            .min_by_key(|(_, (at, _))| *at)?;
        Some(self.deferred.swap_remove(i).1)
    }

    /// When every lane has rested: what a host leaving memory must remember.
    fn rested_at(&self) -> Option<Instant> {
        let lanes = self.idle.iter().max().copied()?;
        Some(lanes.max(self.next_start))
    }

    /// When its next request may go: its first lane rested and its rate's gap past.
    fn next_at(&self) -> Option<Instant> {
        let lane = self.idle.iter().min().copied()?;
        Some(lane.max(self.next_start))
    }
}

/// Per-host queues, the heaps that order them, and what is remembered of hosts that left.
///
/// Only active hosts (queued or in-flight work) are held, so memory follows the in-memory
/// queue budget, not the number of hosts the crawl has met. A host whose queue runs dry and
/// has nothing in flight leaves: its resting time goes to `resting` (dropped once past), its
/// robots.txt rules to a bounded cache, and both come back if its URLs arrive again.
pub struct Scheduler {
    rule: DelayRule,
    /// Requests a host may have in flight at once (`--host-connections`, default 1).
    lanes: usize,
    /// `--rate`: requests per second per host, unless a rule says otherwise.
    rate: Option<f64>,
    /// `--host-rules`: other lanes and rates for some hosts.
    rules: Arc<HostRules>,
    hosts: Vec<Option<Host>>,
    free_ids: Vec<usize>,
    by_key: FxHashMap<String, usize>,
    /// Hosts with work whose next lane is resting, by the instant it may go.
    waiting: BinaryHeap<Reverse<(Instant, usize)>>,
    /// Hosts that may be contacted now, the one with the most queued work first (it bounds
    /// the crawl's end); among equals, the one that became ready last, whose connection is
    /// the likeliest to be still open.
    ready: BinaryHeap<(usize, u64, usize)>,
    ready_seq: u64,
    /// Hosts not in memory that may not be contacted before the instant: `key → (origin, at)`.
    resting: FxHashMap<String, (String, Instant)>,
    resting_prune_at: usize,
    robots_cache: Lru<String, (RobotsRules, Instant)>,
    robots_store: Option<RobotsStore>,
    /// URLs queued in host queues, in memory and spilled.
    queued: usize,
    /// Held hosts with nothing queued and a request in flight (`has_hungry_host`), kept as
    /// their queues and lanes change (`note_hunger`): the dispatcher asks at every refill, and
    /// a scan costs one step per held host.
    hungry: usize,
    /// Where host queues spill (in memory only unless `spill_to` was called).
    spill: SpillDir,
    /// The most hosts held at once (Mercator's number of back queues).
    slots: usize,
    /// With bounded slots, a drained host keeps its slot until a new host needs it (the
    /// longest-drained first), so that a host between two batches of its URLs, like a large
    /// one whose links are still being merged, need not queue again for a slot.
    drained: std::collections::VecDeque<(usize, u64)>,
    drained_hosts: usize,
    drained_seq: u64,
    /// URLs dropped because robots.txt disallows them (or could not be had).
    pub robots_blocked: u64,
    /// With `--max-pages-per-host`, the URLs of `robots_blocked` not yet taken by the budget.
    pub blocked_urls: Option<Vec<Entry>>,
    /// When failing pages and robots.txt are asked again (`--retries`, `--retry-wait`).
    transient: Transient,
    /// Hosts held unreachable whose queued URLs wait to be given up (`take_unreachable`).
    unreachable: Vec<usize>,
    /// Told of each host as it is first held or set aside for a slot (`foresee`).
    ahead: Option<HostAhead>,
}

/// The rules of a host held unreachable (no token applies: everything is disallowed).
fn unreachable_rules() -> RobotsRules {
    RobotsRules::unreachable("*")
}

impl Scheduler {
    /// A scheduler with one lane per host and no robots.txt store.
    #[cfg(test)]
    pub fn new(rule: DelayRule) -> Scheduler {
        Scheduler::with_lanes(rule, 1, None)
    }

    /// A scheduler allowing `lanes` requests in flight per host, each lane
    /// resting by `rule`; robots.txt answers of hosts that left memory are looked up in
    /// `robots_store`.
    pub fn with_lanes(
        rule: DelayRule,
        lanes: usize,
        robots_store: Option<RobotsStore>,
    ) -> Scheduler {
        Scheduler {
            rule,
            lanes: lanes.max(1),
            rate: None,
            rules: Arc::default(),
            hosts: Vec::new(),
            free_ids: Vec::new(),
            by_key: FxHashMap::default(),
            waiting: BinaryHeap::new(),
            ready: BinaryHeap::new(),
            ready_seq: 0,
            resting: FxHashMap::default(),
            resting_prune_at: RESTING_PRUNE_AT,
            robots_cache: Lru::new(ROBOTS_CACHED),
            robots_store,
            queued: 0,
            hungry: 0,
            spill: SpillDir::in_memory(),
            slots: usize::MAX,
            drained: std::collections::VecDeque::new(),
            drained_hosts: 0,
            drained_seq: 0,
            robots_blocked: 0,
            blocked_urls: None,
            transient: Transient::default(),
            unreachable: Vec::new(),
            ahead: None,
        }
    }

    /// The same scheduler, asking failing pages and robots.txt again by `transient`.
    pub fn with_retries(mut self, transient: Transient) -> Scheduler {
        self.transient = transient;
        self
    }

    /// This scheduler with `--rate` (per host) and the `--host-rules`, which may give a host
    /// other lanes and another rate.
    pub fn with_rates(mut self, rate: Option<f64>, rules: Arc<HostRules>) -> Scheduler {
        self.rate = rate;
        self.rules = rules;
        self
    }

    /// The `--host-rules` (also the page budget's).
    pub fn rules(&self) -> &Arc<HostRules> {
        &self.rules
    }

    /// Bounds the hosts held to `slots`, whose queues spill to `spill` past `spill.at` URLs.
    pub fn spill_to(&mut self, spill: SpillDir, slots: usize) {
        self.spill = spill;
        self.slots = slots.max(1);
    }

    /// Tells `ahead` of every host as soon as it is known (`foresee`).
    pub fn foresee_with(&mut self, ahead: HostAhead) {
        self.ahead = Some(ahead);
    }

    /// A host is known: held now, or set aside until a slot frees (the dispatcher's deferred
    /// FIFO). Its name is resolved meanwhile.
    pub fn foresee(&self, key: &str) {
        if let Some(ahead) = &self.ahead {
            ahead(key);
        }
    }

    /// Where the host queues spill (the deferred FIFO shares it).
    pub fn spill_dir(&mut self) -> &mut SpillDir {
        &mut self.spill
    }

    /// URLs waiting in host queues, in memory and spilled (the frontier holds the rest).
    pub fn queued(&self) -> usize {
        self.queued
    }

    /// Whether the host `key` (`host:port`) is held: its URLs may join its queue.
    pub fn has_host(&self, key: &str) -> bool {
        self.by_key.contains_key(key)
    }

    /// Whether one more host may be held (a slot is free or held by a drained host).
    pub fn has_free_slot(&self) -> bool {
        self.by_key.len() < self.slots || self.drained_hosts > 0
    }

    /// Whether a held host has nothing queued and a request in flight: more of its URLs may
    /// lie further on in the frontier, and it will want one when its rest is over.
    pub fn has_hungry_host(&self) -> bool {
        debug_assert_eq!(
            self.hungry,
            self.live()
                .filter(|h| h.queue.is_empty() && h.in_flight > 0)
                .count()
        );
        self.hungry > 0
    }

    /// Counts host `id` in `hungry` or not, after its queue or its requests in flight changed.
    fn note_hunger(&mut self, id: usize) {
        let host = self.hosts[id].as_mut().expect("a live host id");
        let hungry = host.queue.is_empty() && host.in_flight > 0;
        if hungry != host.hungry {
            host.hungry = hungry;
            match hungry {
                true => self.hungry += 1,
                false => self.hungry -= 1,
            }
        }
    }

    /// Whether a held host has nothing queued (in flight, resting or drained): it waits for
    /// URLs, which may still be in the DUE's unmerged batch (`Dispatcher::merge_early`).
    pub fn has_host_without_work(&self) -> bool {
        self.drained_hosts > 0 || self.has_hungry_host()
    }

    /// Hosts in memory (with work queued or in flight), and how many have a request in flight.
    pub fn hosts(&self) -> (usize, usize) {
        let busy = self.live().filter(|h| h.in_flight > 0).count();
        (self.by_key.len() - self.drained_hosts, busy)
    }

    /// What the held hosts are doing at `now`, for progress: what limits the crawl.
    pub fn census(&self, now: Instant) -> Census {
        let mut census = Census::default();
        for host in self.live() {
            if host.in_flight > 0 || host.robots_pending {
                census.busy += 1;
            }
            if host.scheduled {
                match host.next_at() {
                    Some(at) if at > now => census.resting += 1,
                    _ => census.ready += 1,
                }
            } else if !host.has_work() && host.in_flight == 0 && !host.robots_pending {
                census.starved += 1;
            }
        }
        census
    }

    fn live(&self) -> impl Iterator<Item = &Host> {
        self.hosts.iter().flatten()
    }

    fn host(&mut self, id: usize) -> &mut Host {
        self.hosts[id].as_mut().expect("a live host id")
    }

    /// Queues a URL behind its host's other URLs. The URL is in canonical form.
    pub fn add(&mut self, entry: Entry, now: Instant) -> Result<()> {
        let Some((origin, key)) = origin_and_key(&entry.url) else {
            bail!("frontier entry {:?} is not an http(s) URL", entry.url);
        };
        let id = self.host_id(origin, &key, now);
        let host = self.hosts[id].as_mut().expect("a live host id");
        host.queue.push_back(entry, &mut self.spill)?;
        self.queued += 1;
        self.note_hunger(id);
        self.schedule(id);
        Ok(())
    }

    /// The live host for `key`, brought into memory with what was remembered of it if needed.
    fn host_id(&mut self, origin: &str, key: &str, now: Instant) -> usize {
        if let Some(&id) = self.by_key.get(key) {
            if self.host(id).drained.take().is_some() {
                self.drained_hosts -= 1;
            }
            return id;
        }
        if self.by_key.len() >= self.slots {
            self.evict_drained(now);
        }
        let ready_at = match self.resting.remove(key) {
            Some((_, at)) => at.max(now),
            None => now,
        };
        let robots = self
            .robots_cache
            .remove(key)
            .or_else(|| self.robots_store.as_ref()?.load(origin));
        let lanes = self.rules.connections(key, self.lanes).max(1);
        let host = Host {
            key: key.to_owned(),
            origin: origin.to_owned(),
            queue: HostQueue::default(),
            deferred: Vec::new(),
            idle: vec![ready_at; lanes],
            interval: (self.rules.interval(key, self.rate)).unwrap_or_default(),
            next_start: ready_at,
            in_flight: 0,
            hungry: false,
            scheduled: false,
            robots,
            robots_pending: false,
            drained: None,
            failures: 0,
            last_answer: None,
            first_failures: 0,
            parked: false,
            robots_failures: 0,
            giving_up: false,
        };
        let id = match self.free_ids.pop() {
            Some(id) => {
                self.hosts[id] = Some(host);
                id
            }
            None => {
                self.hosts.push(Some(host));
                self.hosts.len() - 1
            }
        };
        self.by_key.insert(key.to_owned(), id);
        self.foresee(key);
        id
    }

    /// Restores when a host may be contacted again, as an earlier run saved it (`hoststate`).
    pub fn restore(&mut self, origin: &Url, ready_at: Instant, now: Instant) {
        let origin = origin.origin().ascii_serialization();
        let Some((origin, key)) = origin_and_key(&origin) else {
            return;
        };
        if let Some(&id) = self.by_key.get(&key) {
            let host = self.host(id);
            host.idle.iter_mut().for_each(|t| *t = (*t).max(ready_at));
        } else if ready_at > now {
            self.resting.insert(key, (origin.to_owned(), ready_at));
        }
    }

    /// Every host that may not be contacted before some instant: its origin and that instant.
    pub fn ready_times(&self) -> impl Iterator<Item = (&str, Instant)> {
        let live = self
            .live()
            .filter_map(|h| Some((h.origin.as_str(), h.rested_at()?)));
        let resting = self.resting.values().map(|(o, at)| (o.as_str(), *at));
        live.chain(resting)
    }

    /// Crash-safety step 2 of `frontier::spill` for every host queue: the spill files'
    /// unread ranges, for the frontier's head.
    pub fn checkpoint_queues(&mut self) -> Result<Vec<Range>> {
        let mut ranges = Vec::new();
        for host in self.hosts.iter_mut().flatten() {
            ranges.extend(host.queue.checkpoint(&mut self.spill)?);
        }
        Ok(ranges)
    }

    /// The URLs of host queues held in memory, for the frontier's head: call after
    /// `checkpoint_queues`, whose ranges hold the rest.
    pub fn queued_entries(&self) -> impl Iterator<Item = &Entry> {
        self.live().flat_map(|h| {
            let deferred = h.deferred.iter().map(|(_, entry)| entry);
            h.queue.memory_entries().chain(deferred)
        })
    }

    /// The next piece of work whose host may be contacted at `now`.
    pub fn next(&mut self, now: Instant) -> Result<Next> {
        if let Some(work) = self.next_ready(now, true)? {
            return Ok(Next::Work(work));
        }
        Ok(match self.waiting.peek() {
            Some(&Reverse((at, _))) => Next::WaitUntil(at),
            None => Next::Empty,
        })
    }

    /// The page `next` would hand out now, but only if it is a page: a ready host that must
    /// fetch robots.txt first is left in the heap for `next` (`Dispatcher::host_free_or_next`,
    /// which sends the page's request ahead on the host's kept connection).
    pub fn next_page(&mut self, now: Instant) -> Result<Option<(usize, Entry)>> {
        Ok(match self.next_ready(now, false)? {
            Some(Work::Page { host, entry }) => Some((host, entry)),
            _ => None,
        })
    }

    /// The ready heap's first host's work (its robots.txt fetch only if `robots`), or None.
    fn next_ready(&mut self, now: Instant, robots: bool) -> Result<Option<Work>> {
        loop {
            self.promote_due(now);
            let Some(&(_, _, id)) = self.ready.peek() else {
                return Ok(None);
            };
            let fresh = self.fresh_robots(id, now);
            if !fresh && !robots {
                return Ok(None);
            }
            self.ready.pop();
            self.host(id).scheduled = false;
            if !fresh {
                let host = self.host(id);
                host.robots_pending = true;
                let url = format!("{}/robots.txt", host.origin);
                self.take_lane(id, now);
                return Ok(Some(Work::Robots { host: id, url }));
            }
            if let Some(entry) = self.pop_allowed(id, now)? {
                self.take_lane(id, now);
                return Ok(Some(Work::Page { host: id, entry }));
            }
            // Robots.txt dropped all it had queued (or the host is held unreachable, its
            // pages to be given up), or only deferred pages are left, none due yet: the host
            // waits for the first.
            if !self.host(id).giving_up {
                self.schedule(id);
            }
            self.retire_if_idle(id, now);
        }
    }

    /// Hands out the host's lane that has rested longest at `now`, and schedules the host
    /// again if another lane is free and work remains (not before its rate's gap).
    fn take_lane(&mut self, id: usize, now: Instant) {
        let host = self.host(id);
        host.next_start = now + host.interval;
        let first = (0..host.idle.len())
            .min_by_key(|&i| host.idle[i])
            .expect("a scheduled host has a free lane");
        host.idle.swap_remove(first);
        host.in_flight += 1;
        self.note_hunger(id);
        self.schedule(id);
    }

    /// Whether a host may be contacted now (it is in the ready heap).
    pub fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    /// When the earliest resting host with work may be contacted.
    pub fn next_ready_at(&self) -> Option<Instant> {
        self.waiting.peek().map(|Reverse((at, _))| *at)
    }

    /// A page fetch on `host` ended at `now` with `reply`: the lane rests by the delay rule,
    /// and until the reply's not-before instant if it has one.
    pub fn page_done(&mut self, host: usize, reply: impl Into<Reply>, now: Instant) {
        let reply = reply.into();
        self.answered(host, &reply);
        let ready_at = self.rested(host, reply, now);
        self.release(host, ready_at, now);
    }

    /// When `host`'s lane may go again after `reply`, told at `now`: the delay rule's rest from
    /// the answer's arrival (`Reply::answered`, else `now`), or the
    /// reply's not-before instant if later.
    fn rested(&mut self, host: usize, reply: Reply, now: Instant) -> Instant {
        let arrived = reply.answered.map_or(now, |at| at.min(now));
        let rule = arrived + self.rest(host, reply);
        reply.not_before.map_or(rule, |at| rule.max(at))
    }

    /// A page fetch on `host` ended at `now`: when its lane needs no rest (a delay of
    /// zero by the rule), robots.txt is fresh and no other host that is ready has more work
    /// queued (the ready heap's order), the host's next allowed page is handed straight back
    /// on the same lane, still in flight, without the host entering the heaps. Otherwise
    /// `page_done`, and None (`Dispatcher::host_free_or_next`).
    pub fn page_done_or_next(
        &mut self,
        host: usize,
        reply: impl Into<Reply>,
        now: Instant,
    ) -> Result<Option<Entry>> {
        let reply = reply.into();
        self.answered(host, &reply);
        let ready_at = self.rested(host, reply, now);
        if ready_at <= now && self.fresh_robots(host, now) {
            self.promote_due(now);
            let backlog = self.host(host).queue.len();
            let outranked = self.ready.peek().is_some_and(|&(b, _, _)| b > backlog);
            if !outranked && let Some(entry) = self.pop_allowed(host, now)? {
                return Ok(Some(entry));
            }
        }
        self.release(host, ready_at, now);
        Ok(None)
    }

    /// Whether `host`'s robots.txt answer is known and still trusted at `now`.
    fn fresh_robots(&mut self, host: usize, now: Instant) -> bool {
        self.host(host).robots.as_ref().is_some_and(|(rules, at)| {
            let ttl = if rules.disallows_everything() {
                ROBOTS_RETRY
            } else {
                ROBOTS_TTL
            };
            now.saturating_duration_since(*at) < ttl
        })
    }

    /// Moves the hosts whose rest is over at `now` from the waiting heap to the ready heap.
    fn promote_due(&mut self, now: Instant) {
        while let Some(&Reverse((at, id))) = self.waiting.peek() {
            if at > now {
                break;
            }
            self.waiting.pop();
            let backlog = self.host(id).queue.len();
            self.ready_seq += 1;
            self.ready.push((backlog, self.ready_seq, id));
        }
    }

    /// The host answered (whatever the status): its failures in a row are over.
    fn answered(&mut self, id: usize, reply: &Reply) {
        let host = self.host(id);
        host.last_answer = Some(reply.response_time);
        host.failures = 0;
        host.first_failures = 0;
        host.parked = false;
    }

    /// The host's deferred page due first at `now`, else its next queued page robots.txt
    /// allows, dropping (and counting) the disallowed ones on the way; robots.txt must be
    /// known. A host held unreachable gives none: it is listed for its URLs to be given up
    /// (`take_unreachable`).
    fn pop_allowed(&mut self, id: usize, now: Instant) -> Result<Option<Entry>> {
        let popped = self.pop_allowed_unnoted(id, now);
        self.note_hunger(id);
        popped
    }

    /// `pop_allowed` before the host's hunger is noted.
    fn pop_allowed_unnoted(&mut self, id: usize, now: Instant) -> Result<Option<Entry>> {
        let host = self.hosts[id].as_mut().expect("a live host id");
        let everything = (host.robots.as_ref().expect("known robots").0).disallows_everything();
        if everything {
            self.list_unreachable(id);
            return Ok(None);
        }
        if let Some(entry) = host.take_due(now) {
            self.queued -= 1;
            return Ok(Some(entry));
        }
        let rules = &host.robots.as_ref().expect("known robots").0;
        while let Some(entry) = host.queue.pop_front(&self.spill)? {
            self.queued -= 1;
            if rules.is_allowed(path_and_query(&entry.url)) {
                return Ok(Some(entry));
            }
            self.robots_blocked += 1;
            if let Some(urls) = &mut self.blocked_urls {
                urls.push(entry);
            }
        }
        Ok(None)
    }

    /// The rest `host`'s lane takes after `reply`: the delay rule on its response time, with
    /// its robots.txt's `Crawl-delay` if any.
    fn rest(&mut self, host: usize, reply: Reply) -> Duration {
        let host = self.host(host);
        let crawl_delay = (host.robots.as_ref()).and_then(|(r, _)| r.crawl_delay());
        let interval = host.interval;
        self.rule
            .delay(reply.response_time, crawl_delay)
            .max(interval)
    }

    /// The host answered `entry` 429 or 503 (`host_wide`): it rests until the reply's
    /// not-before instant (or longer, by the delay rule) and `entry` goes back to the front of
    /// its queue, to be asked for again first. Or it answered 502/504, a gateway's transient
    /// failure of this page: `entry` is deferred until then, and the host rests its normal
    /// rest and serves its other pages meanwhile.
    pub fn page_retry(
        &mut self,
        host: usize,
        entry: Entry,
        reply: Reply,
        host_wide: bool,
        now: Instant,
    ) {
        self.answered(host, &reply);
        let retry_at = reply.not_before.unwrap_or(now);
        let ready_at = match host_wide {
            true => {
                self.put_back(host, entry);
                self.rested(host, reply, now)
            }
            false => {
                self.defer(host, entry, retry_at);
                now + self.rest(host, reply)
            }
        };
        self.release(host, ready_at, now);
    }

    /// `entry` waits in `host`'s deferred list until `at`, then goes before its queue.
    fn defer(&mut self, host: usize, entry: Entry, at: Instant) {
        self.host(host).deferred.push((at, entry));
        self.queued += 1;
        self.note_hunger(host);
    }

    /// `entry` first in `host`'s queue again (a retry).
    fn put_back(&mut self, host: usize, entry: Entry) {
        self.host(host).queue.push_front(entry);
        self.queued += 1;
        self.note_hunger(host);
    }

    /// A page fetch on `host` got no answer at `now` (a connection-level failure: see
    /// `ErrorKind::is_connection_level`). `entry` is the page, asked for again at the reply's
    /// not-before instant if it has one (else done). The failure is the page's unless the
    /// failures in a row (no answer between) hold two of pages' first attempts (or of
    /// robots.txt): the page is deferred (`defer`) and the host rests by its last answer (its
    /// normal rest, not the failed request's, which a trickle makes the longest). Retries
    /// of failing pages that fail again, one after the other, are still the pages'. Otherwise
    /// it is the host's: the host also rests until the page's retry, the page first in its
    /// queue, and at `PARK_AFTER` failures in a row the host is parked (every lane rests
    /// `Transient::park_wait`), and a failure while parked holds it unreachable, its queue (the
    /// page put back first) to be given up. What became of the page.
    pub fn page_failed(&mut self, host: usize, entry: Entry, reply: Reply, now: Instant) -> Fate {
        let park_wait = self.transient.park_wait();
        let h = self.host(host);
        h.failures += 1;
        h.first_failures += u32::from(entry.failures <= 1);
        // New pages fail too, not only the retries of pages known to fail: the host's failure.
        let page_only = h.first_failures < 2;
        // A page's own failure tells what the page does (a body that trickles until the
        // low-speed rule or --timeout cuts it), not what load its host is under: the host
        // rests by its last answer, as it would have after it. The host's failure rests by
        // the failed request's time, as the rule says.
        let took = match (page_only, h.last_answer) {
            (true, Some(last)) => last,
            _ => reply.response_time,
        };
        let rest = self.rest(host, Reply::took(took));
        let h = self.host(host);
        // The attempt after a park failed too: the host is held unreachable.
        let unreachable = std::mem::replace(&mut h.parked, false);
        if unreachable {
            h.failures = 0;
            h.first_failures = 0;
            h.robots = Some((unreachable_rules(), now));
        } else if h.failures >= PARK_AFTER && !page_only {
            h.parked = true;
            for lane in &mut h.idle {
                *lane = (*lane).max(now + park_wait);
            }
        }
        let mut ready_at = now + rest;
        if h.parked {
            ready_at = ready_at.max(now + park_wait);
        }
        let fate = match (unreachable, reply.not_before) {
            (true, _) => {
                self.put_back(host, entry);
                Fate::HostUnreachable
            }
            (false, Some(at)) if page_only => {
                self.defer(host, entry, at);
                Fate::Retry(at.saturating_duration_since(now))
            }
            (false, Some(at)) => {
                ready_at = ready_at.max(at);
                self.put_back(host, entry);
                Fate::Retry(at.saturating_duration_since(now))
            }
            (false, None) => Fate::Done,
        };
        if unreachable {
            self.list_unreachable(host);
        }
        self.release(host, ready_at, now);
        fate
    }

    /// Lists `host`, held unreachable, for its queued URLs to be given up now, not after its
    /// rest (they will not be asked for anyway).
    fn list_unreachable(&mut self, id: usize) {
        let host = self.hosts[id].as_mut().expect("a live host id");
        if host.has_work() && !host.giving_up {
            host.giving_up = true;
            self.unreachable.push(id);
        }
    }

    /// A robots.txt fetch on `host` got no answer at `now` (no response, or a 5xx): while its
    /// retries last, the host rests the transient schedule's wait and its robots.txt is asked
    /// for again (its pages wait); the wait, or None when they are used up (the caller then
    /// reports the unreachable rules with `robots_done`, the fetch still in flight).
    pub fn robots_unanswered(
        &mut self,
        host: usize,
        response_time: Duration,
        now: Instant,
        connection_level: bool,
    ) -> Option<Duration> {
        let rest = self.rest(host, Reply::took(response_time));
        let transient = self.transient;
        let h = self.host(host);
        h.failures += u32::from(connection_level);
        h.first_failures += u32::from(connection_level);
        let wait = transient.wait(h.robots_failures)?;
        h.robots_failures += 1;
        h.robots_pending = false;
        self.release(host, now + rest.max(wait), now);
        Some(wait)
    }

    /// Takes the hosts held unreachable whose queued URLs are to be given up, each once.
    pub fn take_unreachable(&mut self) -> Vec<usize> {
        std::mem::take(&mut self.unreachable)
    }

    /// Gives up every URL queued for `host`, held unreachable: `each` is told of each one
    /// (none is asked for), with the spill directory to keep it in, and the host leaves its
    /// queue empty.
    pub fn give_up(
        &mut self,
        host: usize,
        now: Instant,
        each: &mut dyn FnMut(Entry, &mut SpillDir) -> Result<()>,
    ) -> Result<()> {
        let Some(h) = self.hosts[host].as_mut().filter(|h| h.giving_up) else {
            return Ok(());
        };
        h.giving_up = false;
        for (_, entry) in std::mem::take(&mut h.deferred) {
            self.queued -= 1;
            each(entry, &mut self.spill)?;
        }
        while let Some(entry) = h.queue.pop_front(&self.spill)? {
            self.queued -= 1;
            each(entry, &mut self.spill)?;
        }
        self.note_hunger(host);
        self.retire_if_idle(host, now);
        Ok(())
    }

    /// The host's robots.txt fetch ended at `now`; its rules apply from here on.
    pub fn robots_done(
        &mut self,
        host: usize,
        rules: RobotsRules,
        reply: impl Into<Reply>,
        now: Instant,
    ) {
        let reply = reply.into();
        let h = self.host(host);
        h.robots_failures = 0;
        let unreachable = rules.disallows_everything();
        if !unreachable {
            h.failures = 0;
            h.first_failures = 0;
            h.last_answer = Some(reply.response_time);
            h.parked = false;
            h.giving_up = false;
        }
        h.robots = Some((rules, now));
        h.robots_pending = false;
        if unreachable {
            self.list_unreachable(host);
        }
        // From the answer's arrival, as a page's rest: the rules wait for a processing thread
        // (and their parse), and that wait is not the host's to rest (gap 1 of a host, robots.txt
        // to its first page, was 255 ms p50 beyond the rule at 10,000 HTTPS hosts; issue 47).
        let ready_at = self.rested(host, reply, now);
        self.release(host, ready_at, now);
    }

    fn release(&mut self, id: usize, ready_at: Instant, now: Instant) {
        let host = self.host(id);
        host.in_flight -= 1;
        host.idle.push(ready_at);
        self.note_hunger(id);
        self.schedule(id);
        self.retire_if_idle(id, now);
    }

    fn schedule(&mut self, id: usize) {
        let host = self.hosts[id].as_mut().expect("a live host id");
        if host.scheduled || host.robots_pending || !host.has_work() {
            return;
        }
        let Some(mut at) = host.next_at() else {
            return;
        };
        // Only deferred pages: not before the first is due.
        if host.queue.is_empty() {
            at = at.max(host.first_due().unwrap_or(at));
        }
        host.scheduled = true;
        self.waiting.push(Reverse((at, id)));
    }

    /// A host with nothing queued and nothing in flight leaves memory; what must survive (its
    /// resting time, its robots.txt rules) is kept in bounded form.
    fn retire_if_idle(&mut self, id: usize, now: Instant) {
        let host = self.hosts[id].as_mut().expect("a live host id");
        if host.in_flight > 0 || host.scheduled || host.robots_pending || host.has_work() {
            return;
        }
        if self.slots != usize::MAX {
            // Bounded slots: it keeps its slot until a new host needs it.
            if host.drained.is_none() {
                self.drained_seq += 1;
                host.drained = Some(self.drained_seq);
                self.drained.push_back((id, self.drained_seq));
                self.drained_hosts += 1;
                if self.drained.len() > 2 * self.drained_hosts + 64 {
                    let hosts = &self.hosts;
                    self.drained
                        .retain(|&(id, stamp)| is_drained(hosts, id, stamp));
                }
            }
            return;
        }
        self.retire(id, now);
    }

    /// Frees the slot of the host drained longest ago, if any.
    fn evict_drained(&mut self, now: Instant) {
        while let Some((id, stamp)) = self.drained.pop_front() {
            if is_drained(&self.hosts, id, stamp) {
                self.drained_hosts -= 1;
                self.retire(id, now);
                return;
            }
        }
    }

    /// The host leaves memory: its rest and robots.txt rules are kept in bounded form.
    fn retire(&mut self, id: usize, now: Instant) {
        let host = self.hosts[id].take().expect("a live host id");
        self.hungry -= usize::from(host.hungry);
        self.free_ids.push(id);
        self.by_key.remove(&host.key);
        if let Some(at) = host.rested_at().filter(|at| *at > now) {
            if self.resting.len() >= self.resting_prune_at {
                self.resting.retain(|_, (_, at)| *at > now);
                // Still full of hosts that rest: let it grow, the prune stays amortized O(1).
                self.resting_prune_at = (2 * self.resting.len()).max(RESTING_PRUNE_AT);
            }
            self.resting.insert(host.key.clone(), (host.origin, at));
        }
        if let Some(robots) = host.robots {
            self.robots_cache.insert(host.key, robots);
        }
    }
}

/// Whether `hosts[id]` is the host drained at `stamp` and still drained (ids are reused).
fn is_drained(hosts: &[Option<Host>], id: usize, stamp: u64) -> bool {
    hosts[id].as_ref().is_some_and(|h| h.drained == Some(stamp))
}

/// The part of a URL that robots.txt rules match against.
fn path_and_query(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    url[after_scheme..]
        .find('/')
        .map_or("/", |i| &url[after_scheme + i..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(url: &str) -> Entry {
        Entry::new(url.to_owned(), 0, 0)
    }

    fn robots_404() -> RobotsRules {
        RobotsRules::from_response("crawl", 404, b"")
    }

    fn rule(factor: f64) -> DelayRule {
        DelayRule {
            factor,
            min: Duration::ZERO,
            max: Duration::from_secs(60),
        }
    }

    #[test]
    fn robots_first_then_pages_one_at_a_time_with_the_delay() {
        let t0 = Instant::now();
        let mut s = Scheduler::new(rule(10.0));
        for u in [
            "http://a.test/1",
            "http://a.test/private/2",
            "http://a.test/3",
        ] {
            s.add(entry(u), t0).unwrap();
        }
        let Next::Work(Work::Robots { host, url }) = s.next(t0).unwrap() else {
            panic!("robots first")
        };
        assert_eq!(url, "http://a.test/robots.txt");
        assert!(
            matches!(s.next(t0).unwrap(), Next::Empty),
            "the host is busy"
        );
        let rules =
            RobotsRules::from_response("crawl", 200, b"User-agent: *\nDisallow: /private\n");
        s.robots_done(host, rules, Duration::from_millis(10), t0);
        let Next::WaitUntil(at) = s.next(t0).unwrap() else {
            panic!("must wait")
        };
        assert_eq!(at, t0 + Duration::from_millis(100));
        let Next::Work(Work::Page { entry, .. }) = s.next(at).unwrap() else {
            panic!("page")
        };
        assert_eq!(entry.url, "http://a.test/1");
        s.page_done(host, Duration::from_millis(20), at);
        let Next::Work(Work::Page { entry, .. }) = s.next(at + Duration::from_millis(200)).unwrap()
        else {
            panic!()
        };
        assert_eq!(entry.url, "http://a.test/3", "/private/2 is disallowed");
        assert_eq!(s.robots_blocked, 1);
        assert_eq!(s.queued(), 0);
    }

    #[test]
    fn each_host_is_foreseen_once_when_it_is_first_held() {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut s = Scheduler::new(rule(10.0));
        let log = std::sync::Arc::clone(&seen);
        s.foresee_with(Box::new(move |key| {
            log.lock().unwrap().push(key.to_owned())
        }));
        let t0 = Instant::now();
        for u in [
            "http://a.test/1",
            "http://a.test/2",
            "https://b.test:8443/",
            "http://a.test/3",
        ] {
            s.add(entry(u), t0).unwrap();
        }
        assert_eq!(*seen.lock().unwrap(), ["a.test:80", "b.test:8443"]);
        s.foresee("c.test:80"); // the dispatcher's, for a host set aside until a slot frees
        assert_eq!(seen.lock().unwrap().len(), 3);
    }

    /// Serves `s`'s robots.txt fetches (404) until a page is handed out.
    fn first_page(s: &mut Scheduler, now: Instant) -> (usize, Entry) {
        loop {
            match s.next(now).unwrap() {
                Next::Work(Work::Robots { host, .. }) => {
                    s.robots_done(host, robots_404(), Duration::ZERO, now)
                }
                Next::Work(Work::Page { host, entry }) => return (host, entry),
                other => panic!("no page: {other:?}"),
            }
        }
    }

    #[test]
    fn a_host_needing_no_rest_hands_its_next_page_to_the_same_lane() {
        let t0 = Instant::now();
        let mut s = Scheduler::new(rule(0.0));
        for u in ["http://a.test/1", "http://a.test/2", "http://a.test/3"] {
            s.add(entry(u), t0).unwrap();
        }
        let (host, first) = first_page(&mut s, t0);
        assert_eq!(first.url, "http://a.test/1");
        let rt = Duration::from_millis(5);
        let next = s.page_done_or_next(host, rt, t0).unwrap();
        assert_eq!(next.unwrap().url, "http://a.test/2");
        // Still in flight on its one lane: nothing for another worker.
        assert!(matches!(s.next(t0).unwrap(), Next::Empty));
        assert_eq!(s.hosts(), (1, 1));
        let next = s.page_done_or_next(host, rt, t0).unwrap();
        assert_eq!(next.unwrap().url, "http://a.test/3");
        // Nothing queued: the host is freed as by `page_done`, and drained.
        assert!(s.page_done_or_next(host, rt, t0).unwrap().is_none());
        assert_eq!(s.hosts(), (0, 0));
    }

    #[test]
    fn a_host_that_must_rest_or_is_outranked_is_freed_instead() {
        let t0 = Instant::now();
        let mut s = Scheduler::new(rule(10.0));
        for u in ["http://a.test/1", "http://a.test/2"] {
            s.add(entry(u), t0).unwrap();
        }
        let (host, _) = first_page(&mut s, t0);
        // 10 × 5 ms of rest: freed, waiting in the heap as `page_done` leaves it.
        let rt = Duration::from_millis(5);
        assert!(s.page_done_or_next(host, rt, t0).unwrap().is_none());
        assert!(matches!(s.next(t0).unwrap(), Next::WaitUntil(at) if at == t0 + rt * 10));

        // No rest, but a ready host has more queued: the heap's order decides.
        let mut s = Scheduler::new(rule(0.0));
        for u in ["http://a.test/1", "http://a.test/2"] {
            s.add(entry(u), t0).unwrap();
        }
        let (a, _) = first_page(&mut s, t0);
        for u in ["http://b.test/1", "http://b.test/2", "http://b.test/3"] {
            s.add(entry(u), t0).unwrap();
        }
        let Next::Work(Work::Robots { host: b, .. }) = s.next(t0).unwrap() else {
            panic!("b's robots.txt")
        };
        s.robots_done(b, robots_404(), Duration::ZERO, t0);
        assert!(
            s.page_done_or_next(a, Duration::ZERO, t0)
                .unwrap()
                .is_none()
        );
        let Next::Work(Work::Page { entry, .. }) = s.next(t0).unwrap() else {
            panic!("a page")
        };
        assert_eq!(
            entry.url, "http://b.test/1",
            "the host with more work first"
        );
    }

    /// A robots.txt `Crawl-delay` holds the host after its robots.txt fetch and after each
    /// page, even when the delay rule alone would give no rest (factor 0), and a page is then
    /// never handed straight on to the same lane (`page_done_or_next`).
    #[test]
    fn a_crawl_delay_holds_the_host_after_robots_and_after_each_page() {
        let t0 = Instant::now();
        let delay = Duration::from_secs(3);
        let mut s = Scheduler::new(rule(0.0));
        for u in ["http://a.test/1", "http://a.test/2", "http://a.test/3"] {
            s.add(entry(u), t0).unwrap();
        }
        let Next::Work(Work::Robots { host, .. }) = s.next(t0).unwrap() else {
            panic!("robots first")
        };
        let rules = RobotsRules::from_response("crawl", 200, b"User-agent: *\nCrawl-delay: 3\n");
        assert_eq!(rules.crawl_delay(), Some(delay));
        s.robots_done(host, rules, Duration::ZERO, t0);
        assert!(matches!(s.next(t0).unwrap(), Next::WaitUntil(at) if at == t0 + delay));

        let t1 = t0 + delay;
        let Next::Work(Work::Page { host, .. }) = s.next(t1).unwrap() else {
            panic!("the first page once the delay has passed")
        };
        assert!(
            s.page_done_or_next(host, Duration::ZERO, t1)
                .unwrap()
                .is_none()
        );
        assert!(matches!(s.next(t1).unwrap(), Next::WaitUntil(at) if at == t1 + delay));

        let t2 = t1 + delay;
        let Next::Work(Work::Page { host, .. }) = s.next(t2).unwrap() else {
            panic!("the second page once the delay has passed")
        };
        s.page_done(host, Duration::ZERO, t2);
        assert!(matches!(s.next(t2).unwrap(), Next::WaitUntil(at) if at == t2 + delay));
    }

    #[test]
    fn hosts_are_served_in_ready_order() {
        let t0 = Instant::now();
        let mut s = Scheduler::new(rule(0.0));
        for u in ["http://a.test/", "http://b.test:81/"] {
            s.add(entry(u), t0).unwrap();
        }
        let mut hosts = Vec::new();
        while let Next::Work(Work::Robots { host, .. }) = s.next(t0).unwrap() {
            hosts.push(host);
        }
        assert_eq!(
            hosts.len(),
            2,
            "two distinct hosts, two robots fetches in parallel"
        );
    }

    #[test]
    fn delay_rule_clamps_and_honours_crawl_delay() {
        let r = DelayRule {
            factor: 10.0,
            min: Duration::from_millis(50),
            max: Duration::from_secs(2),
        };
        assert_eq!(
            r.delay(Duration::from_millis(1), None),
            Duration::from_millis(50)
        );
        assert_eq!(
            r.delay(Duration::from_secs(1), None),
            Duration::from_secs(2)
        );
        assert_eq!(
            r.delay(Duration::from_millis(1), Some(Duration::from_secs(5))),
            Duration::from_secs(5)
        );
        assert_eq!(path_and_query("http://h:1/a?b"), "/a?b");
        assert_eq!(path_and_query("http://h"), "/");
    }

    #[test]
    fn a_drained_host_queue_gives_its_memory_back() {
        let t0 = Instant::now();
        let mut s = Scheduler::new(rule(0.0));
        for i in 0..100 {
            s.add(entry(&format!("http://a.test/{i}")), t0).unwrap();
        }
        let Next::Work(Work::Robots { host, .. }) = s.next(t0).unwrap() else {
            panic!("robots first")
        };
        s.robots_done(
            host,
            RobotsRules::from_response("crawl", 404, b""),
            Duration::ZERO,
            t0,
        );
        let mut fetched = 0;
        while let Next::Work(Work::Page { host, .. }) = s.next(t0).unwrap() {
            fetched += 1;
            s.page_done(host, Duration::ZERO, t0);
        }
        assert_eq!(fetched, 100);
        assert!(s.hosts[host].is_none(), "a drained host leaves memory");
        assert_eq!(s.hosts(), (0, 0));
    }

    /// Serves every ready page at once and reports it done, for tests that only count.
    fn serve_all(s: &mut Scheduler, now: Instant) -> Vec<String> {
        let mut served = Vec::new();
        loop {
            match s.next(now).unwrap() {
                Next::Work(Work::Robots { host, .. }) => {
                    s.robots_done(host, robots_404(), Duration::ZERO, now)
                }
                Next::Work(Work::Page { host, entry }) => {
                    served.push(entry.url);
                    s.page_done(host, Duration::ZERO, now);
                }
                _ => return served,
            }
        }
    }

    #[test]
    fn memory_follows_the_queued_work_not_the_hosts_met() {
        let t0 = Instant::now();
        let mut s = Scheduler::new(rule(10.0));
        let mut peak_slots = 0;
        for wave in 0..10 {
            for h in 0..1000 {
                s.add(entry(&format!("http://h{h}.test/{wave}")), t0)
                    .unwrap();
            }
            peak_slots = peak_slots.max(s.hosts.len());
            // The hosts rest 0 s (zero response time): everything is served at once.
            assert_eq!(serve_all(&mut s, t0).len(), 1000);
            assert_eq!(s.hosts(), (0, 0), "every drained host left memory");
        }
        assert_eq!(peak_slots, 1000, "slots are reused, wave after wave");
        assert!(s.robots_cache.len() <= ROBOTS_CACHED);
    }

    #[test]
    fn a_host_that_comes_back_keeps_its_rest_and_its_robots() {
        let t0 = Instant::now();
        let mut s = Scheduler::new(rule(10.0));
        s.add(entry("http://a.test/1"), t0).unwrap();
        let Next::Work(Work::Robots { host, .. }) = s.next(t0).unwrap() else {
            panic!("robots first")
        };
        let rules = RobotsRules::from_response("crawl", 200, b"User-agent: *\nDisallow: /x\n");
        s.robots_done(host, rules, Duration::from_millis(10), t0);
        let t1 = t0 + Duration::from_millis(100);
        let Next::Work(Work::Page { host, .. }) = s.next(t1).unwrap() else {
            panic!("page")
        };
        s.page_done(host, Duration::from_millis(10), t1);
        assert_eq!(s.hosts(), (0, 0), "drained: left memory");
        // It comes back before its rest is over: same rest, same rules, no robots.txt again.
        s.add(entry("http://a.test/x/blocked"), t1).unwrap();
        s.add(entry("http://a.test/2"), t1).unwrap();
        let Next::WaitUntil(at) = s.next(t1).unwrap() else {
            panic!("still resting")
        };
        assert_eq!(at, t1 + Duration::from_millis(100));
        let Next::Work(Work::Page { entry, .. }) = s.next(at).unwrap() else {
            panic!("a page, not robots.txt again")
        };
        assert_eq!(entry.url, "http://a.test/2");
        assert_eq!(s.robots_blocked, 1);
    }

    #[test]
    fn the_ready_host_with_the_most_work_goes_first() {
        let t0 = Instant::now();
        let mut s = Scheduler::new(rule(0.0));
        for u in [
            "http://small.test/1",
            "http://big.test/1",
            "http://big.test/2",
        ] {
            s.add(entry(u), t0).unwrap();
        }
        // Both robots.txt first (the big host's first), answered before any page goes.
        let mut robots = Vec::new();
        while let Next::Work(Work::Robots { host, url }) = s.next(t0).unwrap() {
            robots.push((host, url));
        }
        assert_eq!(robots[0].1, "http://big.test/robots.txt");
        for (host, _) in robots {
            s.robots_done(host, robots_404(), Duration::ZERO, t0);
        }
        let Next::Work(Work::Page { entry, .. }) = s.next(t0).unwrap() else {
            panic!("page")
        };
        assert_eq!(entry.url, "http://big.test/1");
    }

    /// The rest counts from the answer's arrival, not from when a thread got to tell it: an
    /// answer that waited 300 ms for a processing thread leaves 700 ms of a 1 s rest.
    #[test]
    fn the_rest_counts_from_the_answers_arrival() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut s = Scheduler::new(rule(10.0));
        for i in 0..2 {
            s.add(entry(&format!("http://a.test/{i}")), t0).unwrap();
        }
        let Next::Work(Work::Robots { host, .. }) = s.next(t0).unwrap() else {
            panic!("robots first")
        };
        s.robots_done(host, robots_404(), Duration::ZERO, t0);
        let Next::Work(Work::Page { .. }) = s.next(t0).unwrap() else {
            panic!("a page")
        };
        let reply = Reply::took(ms(100)).answered_at(Some(t0 + ms(100)));
        s.page_done(host, reply, t0 + ms(400));
        assert!(
            matches!(s.next(t0 + ms(400)).unwrap(), Next::WaitUntil(at) if at == t0 + ms(1100))
        );
        // Told without its arrival, it rests from when it is told.
        let Next::Work(Work::Page { .. }) = s.next(t0 + ms(1100)).unwrap() else {
            panic!("the second page after the rest")
        };
        s.page_done(host, ms(100), t0 + ms(1300));
        s.add(entry("http://a.test/2"), t0).unwrap();
        assert!(
            matches!(s.next(t0 + ms(1300)).unwrap(), Next::WaitUntil(at) if at == t0 + ms(2300))
        );
    }

    /// robots.txt's rest counts from its arrival too: rules parsed 250 ms after a 100 ms
    /// answer came leave 750 ms of the 1 s rest before the host's first page.
    #[test]
    fn the_rest_after_robots_counts_from_its_arrival() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut s = Scheduler::new(rule(10.0));
        s.add(entry("http://a.test/0"), t0).unwrap();
        let Next::Work(Work::Robots { host, .. }) = s.next(t0).unwrap() else {
            panic!("robots first")
        };
        let reply = Reply::took(ms(100)).answered_at(Some(t0 + ms(100)));
        s.robots_done(host, robots_404(), reply, t0 + ms(350));
        assert!(
            matches!(s.next(t0 + ms(350)).unwrap(), Next::WaitUntil(at) if at == t0 + ms(1100))
        );
        let Next::Work(Work::Page { .. }) = s.next(t0 + ms(1100)).unwrap() else {
            panic!("the first page after the rest")
        };
    }

    #[test]
    fn a_rate_spaces_a_hosts_requests_across_its_lanes_and_rests_each_lane() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let rules = HostRules::parse("a.test connections=2 rate=2\nb.test rate=none\n", "r");
        let mut s = Scheduler::with_lanes(rule(0.0), 1, None)
            .with_rates(Some(10.0), Arc::new(rules.unwrap()));
        for i in 0..4 {
            s.add(entry(&format!("http://a.test/{i}")), t0).unwrap();
        }
        let Next::Work(Work::Robots { host, .. }) = s.next(t0).unwrap() else {
            panic!("robots first")
        };
        s.robots_done(host, robots_404(), Duration::ZERO, t0);
        // robots.txt was a request: the next waits 1/2 s, on either lane.
        assert!(matches!(s.next(t0).unwrap(), Next::WaitUntil(at) if at == t0 + ms(500)));
        let Next::Work(Work::Page { .. }) = s.next(t0 + ms(500)).unwrap() else {
            panic!("a page at 1/2 s")
        };
        // The second lane is free, but the rate's gap is not past.
        assert!(
            matches!(s.next(t0 + ms(500)).unwrap(), Next::WaitUntil(at) if at == t0 + ms(1000))
        );
        let Next::Work(Work::Page { .. }) = s.next(t0 + ms(1000)).unwrap() else {
            panic!("the second lane at 1 s")
        };
        // A lane freed at once rests 1/2 s all the same (the delay rule says none).
        s.page_done(host, ms(1), t0 + ms(1001));
        assert!(
            matches!(s.next(t0 + ms(1001)).unwrap(), Next::WaitUntil(at) if at == t0 + ms(1501))
        );
        // No rate for b.test (rate=none), one lane (--host-connections), no rest.
        s.add(entry("http://b.test/1"), t0).unwrap();
        s.add(entry("http://b.test/2"), t0).unwrap();
        let (b, _) = first_page(&mut s, t0 + ms(1001));
        assert!(
            s.page_done_or_next(b, ms(1), t0 + ms(1001))
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn host_connections_bound_requests_in_flight_each_with_its_own_rest() {
        let t0 = Instant::now();
        let mut s = Scheduler::with_lanes(rule(10.0), 2, None);
        for i in 0..5 {
            s.add(entry(&format!("http://a.test/{i}")), t0).unwrap();
        }
        let Next::Work(Work::Robots { host, .. }) = s.next(t0).unwrap() else {
            panic!("robots first")
        };
        assert!(
            matches!(s.next(t0).unwrap(), Next::Empty),
            "no page before robots.txt"
        );
        s.robots_done(host, robots_404(), Duration::ZERO, t0);
        let Next::Work(Work::Page { .. }) = s.next(t0).unwrap() else {
            panic!("first lane")
        };
        let Next::Work(Work::Page { .. }) = s.next(t0).unwrap() else {
            panic!("second lane")
        };
        assert!(
            matches!(s.next(t0).unwrap(), Next::Empty),
            "both lanes busy"
        );
        s.page_done(host, Duration::from_millis(10), t0);
        let Next::WaitUntil(at) = s.next(t0).unwrap() else {
            panic!("the freed lane rests")
        };
        assert_eq!(at, t0 + Duration::from_millis(100));
    }

    /// Two retries, waiting 1 s, then 4 s (and 16 s parked).
    fn one_second_first() -> Transient {
        Transient {
            retries: 2,
            first_wait: Duration::from_secs(1),
        }
    }

    /// Serves `s` from `t0` until it has nothing queued, robots.txt answering 404: `page` is
    /// given each page (its host, itself, the instant), `waited` each wait for a resting host.
    fn drive(
        s: &mut Scheduler,
        t0: Instant,
        mut page: impl FnMut(&mut Scheduler, usize, Entry, Instant),
        mut waited: impl FnMut(Duration),
    ) -> Instant {
        let mut now = t0;
        loop {
            match s.next(now).unwrap() {
                Next::Work(Work::Robots { host, .. }) => {
                    s.robots_done(host, robots_404(), Duration::ZERO, now);
                }
                Next::Work(Work::Page { host, entry }) => page(s, host, entry, now),
                Next::WaitUntil(at) => {
                    waited(at - now);
                    now = at;
                }
                Next::Empty => return now,
            }
        }
    }

    /// `page` got no answer at `now`: told to `s` with its retry's instant by `transient`.
    fn fail(
        s: &mut Scheduler,
        host: usize,
        page: Entry,
        transient: Transient,
        now: Instant,
    ) -> Fate {
        let wait = transient.wait(page.failures);
        let again = Entry {
            failures: page.failures + 1,
            ..page
        };
        let reply = Reply::retry_at(Duration::ZERO, wait.map(|w| now + w));
        s.page_failed(host, again, reply, now)
    }

    /// Five failures in a row without an answer park the host (every lane rests the
    /// schedule's next wait), in as many requests as when every failure rested the host;
    /// the attempt after the park fails too, and the host's queue is
    /// listed to be given up, the failed page first, without another request.
    #[test]
    fn a_host_failing_in_a_row_is_parked_then_held_unreachable() {
        let t0 = Instant::now();
        let transient = one_second_first();
        let mut s = Scheduler::new(rule(0.0)).with_retries(transient);
        for i in 0..10 {
            s.add(entry(&format!("http://a.test/{i}")), t0).unwrap();
        }
        let fates = std::cell::RefCell::new(Vec::new());
        let now = drive(
            &mut s,
            t0,
            |s, host, page, now| {
                let fate = match fail(s, host, page, transient, now) {
                    Fate::Retry(_) => "retry",
                    Fate::Done => "done",
                    Fate::HostUnreachable => "unreachable",
                };
                fates.borrow_mut().push((fate, Duration::ZERO));
            },
            |wait| fates.borrow_mut().push(("waited", wait)),
        );
        let fates = fates.into_inner();
        let secs = Duration::from_secs;
        assert_eq!(
            fates,
            [
                // The first failure after an answer (robots.txt's) is the page's: it waits
                // on its own, and the host goes on to its next page at once.
                ("retry", secs(0)),
                // A second in a row is the host's: it rests the page's wait too.
                ("retry", secs(0)),
                ("waited", secs(1)),
                ("retry", secs(0)),
                ("waited", secs(4)),
                ("done", secs(0)),
                // The fifth failure in a row: parked for the schedule's next wait (16 s).
                ("retry", secs(0)),
                ("waited", secs(16)),
                ("unreachable", secs(0)),
            ]
        );
        let hosts = s.take_unreachable();
        assert_eq!(hosts.len(), 1);
        let mut given_up = Vec::new();
        let mut keep = |entry: Entry, _: &mut SpillDir| {
            given_up.push(entry.url);
            Ok(())
        };
        s.give_up(hosts[0], now, &mut keep).unwrap();
        assert_eq!(
            given_up.len(),
            9,
            "every URL but the one whose retries ran out"
        );
        assert_eq!(given_up[0], "http://a.test/1", "the failed page first");
        assert_eq!(s.queued(), 0);
        assert_eq!(s.robots_blocked, 0, "not robots blocks");
    }

    /// A page that fails while its host answers the others waits on its own: the host serves
    /// its other pages at once (no rest by the schedule), the page is asked again when its own
    /// wait is over, each time, until its retries are used up; a page failing again after the
    /// others are done counts a failure in a row, but the host is never parked by one page.
    #[test]
    fn a_failing_page_waits_on_its_own_while_its_host_serves_the_others() {
        let t0 = Instant::now();
        let transient = one_second_first();
        let mut s = Scheduler::new(rule(0.0)).with_retries(transient);
        for i in 0..5 {
            s.add(entry(&format!("http://a.test/{i}")), t0).unwrap();
        }
        let mut served = Vec::new();
        drive(
            &mut s,
            t0,
            |s, host, page, now| {
                served.push((page.url.clone(), now.duration_since(t0).as_secs()));
                if page.url.ends_with("/1") {
                    let last = transient.wait(page.failures).is_none();
                    let fate = fail(s, host, page, transient, now);
                    assert_eq!(fate == Fate::Done, last, "{fate:?}");
                } else {
                    s.page_done(host, Duration::ZERO, now);
                }
            },
            |_| {},
        );
        let at = |u: &str, secs| (format!("http://a.test/{u}"), secs);
        assert_eq!(
            served,
            [
                at("0", 0),
                at("1", 0),
                // The others at once, not after the failed page's wait.
                at("2", 0),
                at("3", 0),
                at("4", 0),
                // Its own waits: 1 s, then 4 s.
                at("1", 1),
                at("1", 5),
            ]
        );
        assert_eq!(s.queued(), 0);
        assert!(s.take_unreachable().is_empty());
    }

    /// A page's own failure rests its host by the host's last answer: a trickle cut after
    /// 30 s does not rest the host the rule's longest (clamp(10 × 30 s) = 60 s); its next page
    /// goes 1 s later, as after the answer of 100 ms before it. A second new page failing in a
    /// row is the host's failure, and the host rests by the failed request's time.
    #[test]
    fn a_pages_own_failure_rests_its_host_by_its_last_answer() {
        let t0 = Instant::now();
        let mut s = Scheduler::new(rule(10.0)).with_retries(one_second_first());
        for i in 0..3 {
            s.add(entry(&format!("http://a.test/{i}")), t0).unwrap();
        }
        let secs = Duration::from_secs;
        let answer = Duration::from_millis(100);
        let Next::Work(Work::Robots { host, .. }) = s.next(t0).unwrap() else {
            panic!("robots first")
        };
        s.robots_done(host, robots_404(), answer, t0);
        let page_at = |s: &mut Scheduler, at: Instant| match s.next(at).unwrap() {
            Next::Work(Work::Page { host, entry }) => (host, entry),
            other => panic!("a page at {:?}: {other:?}", at - t0),
        };
        let t1 = t0 + secs(1);
        let (host, first) = page_at(&mut s, t1);
        s.page_done(host, answer, t1);
        let (host, failing) = page_at(&mut s, t1 + secs(1));
        let t2 = t1 + secs(31);
        let failed = |e: Entry, at: Instant| {
            let again = Entry {
                failures: e.failures + 1,
                ..e
            };
            (again, Reply::retry_at(secs(30), Some(at + secs(10))))
        };
        let (again, reply) = failed(failing, t2);
        assert!(matches!(
            s.page_failed(host, again, reply, t2),
            Fate::Retry(_)
        ));
        // The host's rest by its last answer (1 s); the failed page waits its own 10 s.
        let (host, next) = page_at(&mut s, t2 + secs(1));
        assert!(next.url != first.url && next.failures == 0, "{next:?}");
        let t3 = t2 + secs(31);
        let (again, reply) = failed(next, t3);
        assert!(matches!(
            s.page_failed(host, again, reply, t3),
            Fate::Retry(_)
        ));
        match s.next(t3 + secs(2)).unwrap() {
            Next::WaitUntil(at) => assert_eq!(at, t3 + secs(60), "the rule's longest rest"),
            other => panic!("the host rests: {other:?}"),
        }
    }

    /// A robots.txt without an answer is asked again after each wait of the schedule; then
    /// the host is held unreachable, its pages listed to be given up.
    #[test]
    fn an_unanswered_robots_txt_is_asked_again_then_its_host_is_unreachable() {
        let t0 = Instant::now();
        let transient = one_second_first();
        let mut s = Scheduler::new(rule(0.0)).with_retries(transient);
        s.add(entry("http://a.test/1"), t0).unwrap();
        s.add(entry("http://a.test/2"), t0).unwrap();
        let mut now = t0;
        let mut waits = Vec::new();
        loop {
            match s.next(now).unwrap() {
                Next::Work(Work::Robots { host, .. }) => {
                    match s.robots_unanswered(host, Duration::ZERO, now, true) {
                        Some(wait) => waits.push(wait),
                        None => s.robots_done(host, unreachable_rules(), Duration::ZERO, now),
                    }
                }
                Next::WaitUntil(at) => now = at,
                Next::Work(Work::Page { entry, .. }) => panic!("{} was asked for", entry.url),
                Next::Empty => break,
            }
        }
        assert_eq!(waits, [Duration::from_secs(1), Duration::from_secs(4)]);
        assert_eq!(s.take_unreachable().len(), 1);
        assert_eq!(s.queued(), 2, "queued until given up");
    }

    #[test]
    fn with_bounded_slots_a_drained_host_keeps_its_slot_until_a_new_host_needs_it() {
        let t0 = Instant::now();
        let mut s = Scheduler::new(rule(0.0));
        s.spill_to(SpillDir::in_memory(), 2);
        s.add(entry("http://a.test/1"), t0).unwrap();
        s.add(entry("http://b.test/1"), t0).unwrap();
        assert!(!s.has_free_slot());
        assert_eq!(serve_all(&mut s, t0).len(), 2);
        // Both drained: still held (their URLs would join their queues), slots free for others.
        assert!(s.has_host("a.test:80") && s.has_host("b.test:80"));
        assert!(s.has_free_slot());
        assert_eq!(
            s.hosts(),
            (0, 0),
            "drained hosts are not counted as having work"
        );
        s.add(entry("http://a.test/2"), t0).unwrap();
        s.add(entry("http://c.test/1"), t0).unwrap();
        assert!(
            !s.has_host("b.test:80"),
            "the longest-drained host gave its slot to c"
        );
        assert!(s.has_host("a.test:80") && s.has_host("c.test:80"));
        assert!(!s.has_free_slot());
        let mut served = serve_all(&mut s, t0);
        served.sort();
        assert_eq!(
            served,
            ["http://a.test/2", "http://c.test/1"].map(String::from)
        );
    }
}
