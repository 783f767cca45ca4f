//! The dispatcher: hands work to workers, in breadth-first order and within politeness.
//!
//! It owns the frontier and the politeness scheduler under one lock. URLs move from the
//! frontier (disk, Mercator's front queue) into the scheduler's host queues (the back queues),
//! whose heads are in memory and whose rest spills to disk (`frontier::spill`). At most
//! `slots` hosts hold a queue (a quarter of `queue_limit`, sized by the delay rule:
//! `host_slots_for`).
//!
//! So that a large host always has work, the dispatcher reads the frontier ahead while a held
//! host has nothing queued (it may have URLs further on) or while a slot is free (with
//! `--focus`, only while the host queues hold fewer than the window allows), `READ_AHEAD` URLs
//! per call at most. A URL
//! whose host holds no slot is not left blocking that read: it goes to the deferred FIFO
//! (`spill::Deferred`), which is served first whenever a slot frees, and stops at its first URL
//! whose host has no slot while none is free (Mercator's rule, so new hosts come in frontier
//! order). Breadth-first order within each host holds because a URL joins its host's queue only
//! if no URL of that host is deferred: `deferred_hosts` counts deferred URLs per bucket of
//! host hashes (a collision only defers a URL that could have gone straight to its host).
//!
//! It also decides when the crawl is over: no work in flight, none queued, none on the frontier, and the DUE idle (nothing
//! buffered, no merge running). When the work queued runs low (nothing on the frontier, the host
//! queues under a quarter of their limit) while the DUE still holds misses, it asks the DUE to
//! merge early, so a small crawl never stalls on a half-empty buffer; not merely because a
//! worker is idle, which with more workers than hosts is always so. While a held host has
//! nothing queued it asks too, whatever waits elsewhere, but no sooner than the DUE's spacing
//! of early merges allows (`merge_early`): a worker refused for the spacing waits with a
//! timeout until it passes, so that a host waiting for URLs never waits on an idle DUE.
//!
//! It also keeps the frontier resumable: it remembers the pages handed to workers until they are
//! done (`entry_done`), and every few seconds checkpoints the frontier with them, the host
//! queues' heads as outstanding and the spill files' ranges (the numbered steps are in
//! `frontier::spill`), and saves the hosts' politeness state (`hoststate`) and whatever the
//! `on_checkpoint` hook saves (the cookie jar).
//!
//! Its configuration is fixed before it is built: `DispatchConfig` (plain values from the
//! command line) and `DispatchParts` (the stages it owns, opened by the crawl); nothing is set
//! after `open`.
//!
//! With `--max-pages-per-host`, `refill` is where the per-host budget (`budget`) turns URLs
//! away: a URL takes its host's place when it joins its host's queue (`join_host`), whether it
//! comes from the frontier or from the deferred FIFO, never when it is set aside; a URL in the
//! deferred FIFO holds no place yet. The budget's counts are saved with each checkpoint.
//!
//! Hosts held unreachable (`politeness`: robots.txt never answered, or a parked host failed
//! again): `next_work` gives up their queued URLs, each told to `not_asked`
//! (`NotAsked::HostUnreachable`: a URL-log line, no request) and kept in the given-up FIFO on
//! disk (`given_up`, a `Deferred` never read in this run), whose ranges each checkpoint names
//! first: a resumed crawl asks for them again. A crawl that completes hands them to
//! `given_up_entries` (the fetch log, for the next recrawl). They give their budget places back.
//!
//! With `--max-rate N`, requests (pages, robots.txt, sitemaps) are handed out at least 1/N s
//! apart across all hosts: `State::rate_slot` is the earliest instant the next may go, set at
//! each hand-out to that instant plus the gap (no burst after a pause). A worker that finds the
//! slot in the future waits for it like a host's rest (`wait_until`: one worker timed, the
//! lock released while it waits), and no page is chained (`host_free_or_next`) before it.
//!
//! Wake-ups: a worker with nothing it can take parks on one condvar (`park`, counted in
//! `parked`). An event that lets one worker take work (a host freed, a retry or a robots.txt
//! answer queued) wakes one parked worker, if any; a worker given work wakes another only if
//! more is ready (a chain, never a herd); a worker reports its finished page in its next
//! `next_work`, so with nothing left in flight it looks for the end itself. Only the end, a
//! failure and a signal wake every worker: waking all of them whenever nothing was in flight
//! made a herd of context switches for every page of a single-host crawl, and a DUE merge
//! that woke thousands of parked workers a few times a second did the same at scale; a merge
//! wakes one, which chains. A page finished by a processing thread while others stay in
//! flight under the cap (`work_finished`) wakes nobody: no parked worker acts on that count
//! but for the end and the cap, and at 10,000 hosts it was a wake-up a page, each waking a
//! worker that parked again at once. The cap (`at_cap`) is on requests: the event loop's
//! answers queued for a processing thread count apart (`answers_queued`, `answer_taken`,
//! each crossing back under the cap waking one worker), bounded by the same number.
//! A host that needs no rest after a response is not freed at all: its next page goes to the
//! worker that received the response (`host_free_or_next`), which wakes nobody. Otherwise
//! that worker takes the page `next_work` would give first (a ready host's, not a robots.txt
//! fetch) and sends its request ahead; it wakes a parked worker only if a host is still ready.
//!
//! Workers wanted: with an elastic pool (`schedule::pool`, no `-j`), an event that would wake a
//! parked worker for a ready host (or a host due with no worker watching the clock) finds none
//! parked when every worker is busy; it then asks the spawner (`workers_wanted`) for one more,
//! up to the pool's `max`, one request at a time outstanding. Workers the pool did not need
//! leave it (`retire_idle`): the fewest parked at any instant over a window were spare all
//! along, and half of them leave, down to the pool's `start`. With `-j N` no worker is ever
//! asked for and none leaves.
//!
//! Lock order: the dispatcher's lock may be held while taking the DUE's, never the reverse (the
//! DUE's merge thread calls the `FrontierSink` holding no DUE lock).

use crate::frontier::focus::Window;
use crate::frontier::spill::Deferred;
use crate::frontier::{Entry, Frontier};
use crate::schedule::budget::Budget;
use crate::schedule::hoststate;
use crate::schedule::politeness::{Census, Fate, Next, Reply, Scheduler, Work};
use crate::schedule::pool::Workers;
use crate::schedule::robots::RobotsRules;
use crate::schedule::stop::{Reason, Stop};
use crate::seen::batch::Sink;
use crate::seen::due::{Due, EarlyMerge};
use anyhow::{Context, Result, anyhow};
use rustc_hash::FxHashMap;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The frontier is checkpointed after this many pages are done, or this long after the last
/// checkpoint, whichever comes first: the bound on the done log a resume reads (512 KiB).
/// A checkpoint holds the dispatcher's lock through its fsyncs (one per spill file appended
/// to, then the head and the done log), so every worker waits for it, for milliseconds and up
/// to a second on a busy disk: checkpoints must be seconds apart, not thousands of pages. At
/// the web's speed the two seconds decide.
const CHECKPOINT_PAGES: u64 = 65_536;
const CHECKPOINT_EVERY: Duration = Duration::from_secs(2);
/// `CHECKPOINT_PAGES`, or the hidden `CRAWL_CHECKPOINT_PAGES` with which the kill-and-resume
/// tests make checkpoints frequent.
fn checkpoint_pages() -> u64 {
    static PAGES: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    crate::state::failpoint::knob(&PAGES, "CRAWL_CHECKPOINT_PAGES", CHECKPOINT_PAGES)
}

/// The most URLs one `refill` reads from the frontier (it runs under the lock).
const READ_AHEAD: usize = 1024;

/// Buckets of host hashes counting deferred URLs (`State::deferred_hosts`).
const DEFERRED_BUCKETS: usize = 1 << 16;

/// Hosts that may hold a queue at least, and at most: a held host costs its queue's in-memory
/// head and tail (`frontier::spill`; `examples/host_memory` measures a few KiB per host with
/// 10 to 32 URLs queued), so the ceiling bounds the host queues' memory to a few hundred MiB.
pub const MIN_HOST_SLOTS: usize = 256;
pub const MAX_HOST_SLOTS: usize = 32_768;

/// Hosts with queued work needed to keep `requests` requests in flight: a host of `lanes`
/// lanes takes `lanes` requests per (1 + `factor`) response times (one in flight, then its
/// rest), so about (1 + factor) × requests / lanes hosts must hold work, and a quarter more
/// so that a host whose next URLs are still coming does not leave a connection idle. Within
/// [`MIN_HOST_SLOTS`, `MAX_HOST_SLOTS`].
pub fn host_slots_for(requests: usize, factor: f64, lanes: usize) -> usize {
    let hosts = (1.0 + factor.max(0.0)) * requests as f64 / lanes.max(1) as f64 * 1.25;
    (hosts.ceil().min(MAX_HOST_SLOTS as f64) as usize).max(MIN_HOST_SLOTS)
}

/// Hosts that may hold a queue: `queue_limit / 4`, or the hidden `CRAWL_HOST_SLOTS` with which
/// the kill-and-resume tests make URLs wait in the deferred FIFO.
fn host_slots(queue_limit: usize) -> usize {
    static SLOTS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    crate::state::failpoint::knob(&SLOTS, "CRAWL_HOST_SLOTS", (queue_limit / 4) as u64) as usize
}

/// Host politeness state is saved at most this often (it is only a few seconds' worth of
/// waiting that a crash can lose).
const HOSTS_EVERY: Duration = Duration::from_secs(30);

/// Why the dispatcher stopped handing out work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Nothing left anywhere: the crawl is complete.
    Complete,
    /// --max-pages reached.
    PageLimit,
    /// --max-time passed (`Reason::TimeLimit`): stopped resumably.
    TimeLimit,
    /// --max-bytes received (`Reason::ByteLimit`): stopped resumably.
    ByteLimit,
    /// A signal, the URL log's reader went away, or a failure (`schedule::stop::Reason`).
    Stopped,
    /// `--find` found its text.
    Found,
}

/// Why a URL leaves without a request (`Dispatcher::next_work`'s `not_asked`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotAsked {
    /// Its host had used its `--max-pages-per-host` budget: not fetched in this crawl.
    HostBudget,
    /// Its host is held unreachable: given up in this run, asked for again on resume.
    HostUnreachable,
}

/// How the dispatcher ended, for the summary.
pub struct Closed {
    pub ending: Ending,
    /// URLs not fetched: on the frontier, in host queues, or abandoned in flight.
    pub frontier_left: u64,
    /// URLs robots.txt disallowed.
    pub robots_blocked: u64,
    /// URLs not fetched for their host's `--max-pages-per-host` budget.
    pub host_budget: u64,
    /// URLs given up because their host was held unreachable (counted in `frontier_left` too:
    /// a resumed crawl asks for them).
    pub host_unreachable: u64,
}

/// The dispatcher's live figures.
pub struct DispatchGauges {
    /// URLs on the disk frontier (and the focus window).
    pub frontier: u64,
    /// URLs in the in-memory host queues.
    pub queued: usize,
    /// Hosts in memory: with queued work or a request in flight.
    pub hosts_active: usize,
    /// Hosts with a request in flight.
    pub hosts_busy: usize,
    /// Work handed to workers and not reported back: the requests in flight.
    pub in_flight: usize,
    /// Workers running, and the most that may (`--max-connections`, or `-j`).
    pub workers: usize,
    pub max_workers: usize,
    /// What the held hosts are doing (`Scheduler::census`): ready ones wait for a worker,
    /// resting ones for the delay rule, starved ones for URLs.
    pub census: Census,
}

struct State {
    frontier: Frontier,
    scheduler: Scheduler,
    in_flight: usize,
    /// Of `in_flight`, the event loop's answers queued for a processing thread
    /// (`answers_queued`, `answer_taken`): received, no longer requests (`at_cap`).
    queued_answers: usize,
    /// The most requests in flight at once (answers queued for processing not counted).
    most_in_flight: usize,
    pages_started: u64,
    ending: Option<Ending>,
    failure: Option<String>,
    /// The deadline the one worker waiting with a timeout wakes at (the others wait untimed).
    timed_wait: Option<Instant>,
    /// Workers parked on `wake` (`Dispatcher::park`): an event wakes one only if one waits.
    parked: usize,
    /// Parked workers woken one at a time (`wake_one`, `call_worker`), for the tests.
    wakes: u64,
    /// Workers running (or asked for and about to start), at most `max_workers`.
    workers: usize,
    max_workers: usize,
    /// Workers asked of the spawner and not yet taken (`Dispatcher::workers_wanted`).
    workers_asked: usize,
    /// Workers told to leave the pool and not yet gone: the next to look for work leave
    /// (`retire_idle`); already uncounted from `workers`.
    retiring: usize,
    /// The fewest workers parked at any instant since `spare_since` (`retire_idle`).
    fewest_parked: usize,
    spare_since: Instant,
    /// The instant the one worker waiting for the DUE's spacing of early merges wakes at
    /// (`Dispatcher::park_for_merge`); apart from `timed_wait`, which says that a worker
    /// watches the hosts' rests.
    merge_wait: Option<Instant>,
    /// Pages handed to workers and not done yet, by checksum.
    handed: FxHashMap<u64, Entry>,
    done_since_checkpoint: u64,
    last_checkpoint: Instant,
    last_hosts_save: Instant,
    /// With `--focus`: the priority window between the frontier and the scheduler.
    focus: Option<Window>,
    /// URLs read ahead whose host held no slot, in frontier order.
    deferred: Deferred,
    /// URLs given up because their host was held unreachable: on disk, never read in this run,
    /// named by every checkpoint (see the module doc).
    given_up: Deferred,
    host_unreachable: u64,
    /// Deferred URLs per bucket of host hashes: a URL joins its host's queue only at 0.
    deferred_hosts: Vec<u32>,
    /// With `--max-pages-per-host`: which URLs the frontier may give their host.
    budget: Option<Budget>,
    /// Run at each checkpoint, before the frontier is saved (the cookie jar's save).
    on_checkpoint: Option<CheckpointHook>,
    /// With `--max-rate`: the earliest instant the next request may be handed out.
    rate_slot: Instant,
    /// With `--shard`: what the end also waits for (every shard idle, nothing in transit).
    gate: Option<Arc<dyn EndGate>>,
}

impl State {
    /// Work in flight that is not an answer queued for processing: requests, and pages being
    /// processed (`Dispatcher::at_cap`).
    fn requests(&self) -> usize {
        self.in_flight.saturating_sub(self.queued_answers)
    }
}

/// With `--shard`, running out of local work is not the end: other shards may still send URLs.
/// The end (or the page limit's) waits until the gate says every shard is done.
pub trait EndGate: Send + Sync {
    /// True once the whole crawl is over (`shard::Exchange`'s rule); cheap, called under the
    /// dispatcher's lock.
    fn all_done(&self) -> bool;
}

/// The window over which an elastic pool's spare workers are counted (`retire_idle`).
const SPARE_WINDOW: Duration = Duration::from_secs(2);

/// How often a worker that found no work looks at the gate (and merges what was received).
const GATE_POLL: Duration = Duration::from_millis(100);

/// Saves some other state with each checkpoint of the frontier (every few seconds and at the
/// end), before the frontier is saved; its error stops the crawl like a failure to save the
/// frontier.
pub type CheckpointHook = Box<dyn Fn() -> Result<()> + Send>;

/// Waits, before pages are recorded done, for what they left behind that a resume could not
/// redo: their URL-log lines (`urllog::Written`). Called without the dispatcher's lock.
pub type DoneHook = Box<dyn Fn() + Send + Sync>;

impl State {
    /// No URL waits outside the scheduler (frontier and focus window empty).
    fn nothing_pending(&self) -> bool {
        self.frontier.is_empty()
            && self.focus.as_ref().is_none_or(Window::is_empty)
            && self.deferred.is_empty()
    }

    /// A page given to a worker: counted for `--max-pages` (a sitemap is no page:
    /// `crawl::sitemaps`; nor is a retry, counted at its first attempt) and held in `handed`
    /// until it is done.
    fn hand_out(&mut self, entry: &Entry) {
        self.pages_started += u64::from(entry.sitemap.is_none() && !entry.is_retry());
        self.handed.insert(entry.key(), entry.clone());
    }

    /// Whether `key`'s URLs must wait behind some in the deferred FIFO.
    fn deferred_bucket(&mut self, key: &str) -> &mut u32 {
        let bucket = crate::seen::checksum::checksum(key.as_bytes()) as usize % DEFERRED_BUCKETS;
        &mut self.deferred_hosts[bucket]
    }
}

/// How the dispatcher hands out work: plain values decided before it is built (`cli::config`
/// fills them from the command line) and never changed after. A new limit on the handing out
/// of work is a field here, read where `next_work` decides.
#[derive(Clone, Debug)]
pub struct DispatchConfig {
    /// URLs the host queues may hold at most; a quarter of it is the hosts that may hold one.
    pub queue_limit: usize,
    /// The worker pool: how many start, how many may run (`schedule::pool`).
    pub workers: Workers,
    /// `--max-pages`: pages handed out at most (sitemaps are not counted).
    pub max_pages: Option<u64>,
    /// `--max-pages-per-host`: pages one host is given at most (`budget`, saved in
    /// `DIR/budget`), unless the scheduler's `--host-rules` give it its own.
    pub max_pages_per_host: Option<u64>,
    /// `--max-rate`: requests handed out per second at most, across all hosts.
    pub max_rate: Option<f64>,
}

/// What the dispatcher owns or calls, opened or made by the crawl (`crawl::run`) before it is
/// built.
pub struct DispatchParts {
    pub frontier: Frontier,
    /// The politeness scheduler (its robots.txt store and delay rule already given).
    pub scheduler: Scheduler,
    /// The state directory (`--out`): the hosts' politeness state (`hosts.tsv`) is restored from
    /// it and saved to it, the host budgets too.
    pub dir: PathBuf,
    /// With `--focus`: the priority window between the frontier and the scheduler.
    pub focus: Option<Window>,
    /// With `--shard`: what the end also waits for (`EndGate`).
    pub gate: Option<Arc<dyn EndGate>>,
    /// Run at each checkpoint, before the frontier is saved (see `CheckpointHook`).
    pub on_checkpoint: Option<CheckpointHook>,
    /// Run before pages are recorded done (see `DoneHook`).
    pub before_done: Option<DoneHook>,
    /// The crawl's stop: read before handing out work, requested on a failure.
    pub stop: Arc<Stop>,
}

pub struct Dispatcher {
    state: Mutex<State>,
    wake: Condvar,
    /// The spawner waits on it for workers to be asked for (`workers_wanted`).
    spawn: Condvar,
    /// An elastic pool's workers never leave below this (`Workers::start`).
    workers_floor: usize,
    elastic: bool,
    /// Work handed out and not finished at most (`with_in_flight_cap`); unbounded here when
    /// the workers bound it, each holding one.
    in_flight_cap: usize,
    queue_limit: usize,
    max_pages: Option<u64>,
    /// `--max-rate`'s gap between two requests handed out.
    rate_gap: Option<Duration>,
    /// Where the hosts' politeness state is saved (`DIR/hosts.tsv`).
    hosts_file: PathBuf,
    /// The crawl's stop: read before handing out work, requested on a failure.
    stop: Arc<Stop>,
    before_done: Option<DoneHook>,
}

/// Opening: the dispatcher over its frontier and stores, and the cap on work in flight.
impl Dispatcher {
    /// A dispatcher configured once: restores the hosts' politeness state and robots.txt rules
    /// an earlier run saved, and opens the host budgets with `--max-pages-per-host`.
    pub fn open(config: &DispatchConfig, parts: DispatchParts) -> Result<Dispatcher> {
        let DispatchParts {
            mut frontier,
            mut scheduler,
            dir,
            focus,
            gate,
            on_checkpoint,
            before_done,
            stop,
        } = parts;
        let now = Instant::now();
        if let Some(spill) = frontier.take_spill_dir() {
            scheduler.spill_to(spill, host_slots(config.queue_limit));
        }
        hoststate::load(&dir, &mut scheduler)?;
        let rules = Arc::clone(scheduler.rules());
        let budget = match config.max_pages_per_host.is_some() || rules.sets_pages() {
            true => {
                scheduler.blocked_urls = Some(Vec::new());
                let dir = dir.join("budget");
                Some(Budget::with_rules(&dir, config.max_pages_per_host, rules)?)
            }
            false => None,
        };
        Ok(Dispatcher {
            state: Mutex::new(State {
                frontier,
                scheduler,
                in_flight: 0,
                queued_answers: 0,
                most_in_flight: 0,
                pages_started: 0,
                ending: None,
                failure: None,
                timed_wait: None,
                parked: 0,
                wakes: 0,
                workers: config.workers.start,
                max_workers: config.workers.max,
                workers_asked: 0,
                retiring: 0,
                fewest_parked: 0,
                spare_since: now,
                merge_wait: None,
                handed: FxHashMap::default(),
                done_since_checkpoint: 0,
                last_checkpoint: now,
                last_hosts_save: now,
                focus,
                deferred: Deferred::default(),
                given_up: Deferred::default(),
                host_unreachable: 0,
                deferred_hosts: vec![0; DEFERRED_BUCKETS],
                budget,
                on_checkpoint,
                rate_slot: now,
                gate,
            }),
            wake: Condvar::new(),
            spawn: Condvar::new(),
            workers_floor: config.workers.start,
            elastic: config.workers.is_elastic(),
            in_flight_cap: usize::MAX,
            queue_limit: config.queue_limit,
            max_pages: config.max_pages,
            rate_gap: (config.max_rate).map(|rate| Duration::from_secs_f64(1.0 / rate)),
            hosts_file: dir.join("hosts.tsv"),
            stop,
            before_done,
        })
    }

    /// Caps the work in flight at `cap` (`-j`, or `--max-connections`): with the reactor
    /// (`fetch::reactor`) a worker hands a request over and takes more, so the threads no
    /// longer bound the requests. Set once, before the dispatcher is shared.
    pub fn with_in_flight_cap(mut self, cap: usize) -> Dispatcher {
        self.in_flight_cap = cap;
        self
    }
}

/// The frontier's side: pages done (each once its outputs are durable), and whether any
/// work is left anywhere.
impl Dispatcher {
    /// Whether this process has nothing to fetch now: nothing in flight and either its page
    /// limit reached or no URL anywhere (frontier, host queues, the DUE). Only URLs received
    /// from other shards can change that (the `shard::Exchange`'s idle rule).
    pub fn quiescent(&self, due: &Due<Entry>) -> Result<bool> {
        let state = self.state.lock().unwrap();
        if state.in_flight > 0 {
            return Ok(false);
        }
        if self.page_limit(&state) {
            return Ok(true);
        }
        Self::no_work_left(&state, due)
    }

    /// Whether `--max-pages` pages have been given out.
    fn page_limit(&self, state: &State) -> bool {
        self.max_pages.is_some_and(|max| state.pages_started >= max)
    }

    /// Whether no URL waits anywhere in this process: frontier, focus window, deferred FIFO,
    /// host queues, the DUE (unmerged or merging). With nothing in flight too, the crawl (or,
    /// with `--shard`, this shard until others send more) is over.
    fn no_work_left(state: &State, due: &Due<Entry>) -> Result<bool> {
        Ok(state.nothing_pending() && state.scheduler.queued() == 0 && due.is_idle()?)
    }

    /// Whether nothing holds the end open beyond this process (no gate, or its crawl is over).
    fn gate_open(state: &State) -> bool {
        state.gate.as_ref().is_none_or(|g| g.all_done())
    }

    /// A page is done: fetched, its links spooled by the DUE, its response archived, its
    /// URL-log line written (`before_done`). It will not be fetched again after a crash.
    pub fn entry_done(&self, key: u64) -> Result<()> {
        self.entries_done(&[key])
    }

    /// Several pages are done (a batch of the archive): `entry_done` under one lock.
    pub fn entries_done(&self, keys: &[u64]) -> Result<()> {
        if let Some(wait) = &self.before_done {
            wait();
        }
        let mut state = self.state.lock().unwrap();
        for key in keys {
            let entry = state.handed.remove(key);
            if let (Some(budget), Some(entry)) = (&mut state.budget, entry) {
                budget.done(&entry)?;
            }
        }
        state.frontier.done_all(keys)?;
        state.done_since_checkpoint += keys.len() as u64;
        if state.done_since_checkpoint >= checkpoint_pages()
            || state.last_checkpoint.elapsed() >= CHECKPOINT_EVERY
        {
            self.checkpoint(&mut state)?;
        }
        Ok(())
    }

    /// Saves the frontier's head with every page not done yet, and now and then the hosts.
    fn checkpoint(&self, state: &mut State) -> Result<()> {
        if let Some(hook) = &state.on_checkpoint {
            hook()?;
        }
        let State {
            frontier,
            scheduler,
            handed,
            focus,
            deferred,
            given_up,
            ..
        } = state;
        // Steps 1-2 of `frontier::spill`: the given-up URLs' files (first on resume: they were
        // queued before anything still queued), host queues' files, then the deferred FIFO's,
        // synced.
        let mut ranges = given_up.checkpoint(scheduler.spill_dir())?;
        ranges.extend(scheduler.checkpoint_queues()?);
        ranges.extend(deferred.checkpoint(scheduler.spill_dir())?);
        let window = focus.iter().flat_map(Window::entries);
        // Steps 3-4: the head (URLs in memory as lines, then the ranges), then orphans removed.
        frontier
            .checkpoint(
                handed
                    .values()
                    .chain(scheduler.queued_entries())
                    .chain(window),
                &ranges,
            )
            .context("saving the frontier")?;
        if let Some(budget) = &mut state.budget {
            budget.save().context("saving the host budgets")?;
        }
        state.done_since_checkpoint = 0;
        state.last_checkpoint = Instant::now();
        if state.last_hosts_save.elapsed() >= HOSTS_EVERY {
            hoststate::save(&self.hosts_file, &state.scheduler)?;
            state.last_hosts_save = Instant::now();
        }
        Ok(())
    }
}

/// Parking and the elastic pool: which worker is woken for what, and how many there are.
impl Dispatcher {
    /// Wakes one parked worker, if any, to look at URLs offered from outside the workers (the
    /// shard receiver's): it merges them early if queued work is running low, and the merge
    /// wakes the rest (`FrontierSink::publish`).
    pub fn wake_one_parked(&self) {
        self.wake_one(self.state.lock().unwrap());
    }

    /// Wakes every waiting worker to look again (after a merge, a signal, a failure).
    pub fn wake_all(&self) {
        let _guard = self.state.lock().unwrap();
        self.wake.notify_all();
        self.spawn.notify_all();
    }

    /// For the spawner of an elastic pool, every `SPARE_WINDOW` at most: workers that were all
    /// parked at once throughout the last window were not needed in it, and half of them
    /// leave (the next workers to look for work), down to the pool's `start`. Returns how many
    /// were told to leave. Parked workers are woken in turn, so none stays parked long while
    /// others work: the fewest parked, not how long each waited, shows what is spare.
    pub fn retire_idle(&self) -> usize {
        self.retire_idle_at(Instant::now())
    }

    fn retire_idle_at(&self, now: Instant) -> usize {
        let mut state = self.state.lock().unwrap();
        if !self.elastic || now.duration_since(state.spare_since) < SPARE_WINDOW {
            return 0;
        }
        let spare = state.fewest_parked.min(state.parked);
        let leave = (spare / 2).min(state.workers.saturating_sub(self.workers_floor));
        state.workers -= leave;
        state.retiring += leave;
        state.fewest_parked = state.parked;
        state.spare_since = now;
        drop(state);
        for _ in 0..leave {
            self.wake.notify_one();
        }
        leave
    }

    /// For the spawner of an elastic pool: blocks until workers are asked for, and returns how
    /// many to start (counted as running already), or 0 once the crawl is over, failed or
    /// stopping, or after `timeout` (the caller then looks at its workers and asks again).
    pub fn workers_wanted(&self, timeout: Duration) -> usize {
        let mut state = self.state.lock().unwrap();
        let deadline = Instant::now() + timeout;
        loop {
            if state.ending.is_some() || state.failure.is_some() || self.stop.is_stopped() {
                return 0;
            }
            if state.workers_asked > 0 {
                return std::mem::take(&mut state.workers_asked);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return 0;
            }
            state = self.spawn.wait_timeout(state, left).unwrap().0;
        }
    }

    /// Whether no more workers will be wanted: the crawl is over, failed or stopping.
    pub fn workers_over(&self) -> bool {
        let state = self.state.lock().unwrap();
        state.ending.is_some() || state.failure.is_some() || self.stop.is_stopped()
    }

    /// A worker asked for could not be started (the system refused a thread): the pool stops
    /// growing at the workers it has.
    pub fn worker_not_started(&self) {
        let mut state = self.state.lock().unwrap();
        state.workers -= 1;
        state.max_workers = state.workers;
    }
}

/// Work handed out, and what comes back: a page's answer (a `Reply`: its response time and
/// any not-before instant), a retry, a failure, a robots.txt.
impl Dispatcher {
    /// Blocks until there is work for this worker, or returns None when the crawl is over (or
    /// this worker is to leave an elastic pool: `retire_idle`).
    /// `finished`: the page this worker was given last is finished (its links offered to the
    /// DUE, its outputs queued), so it no longer holds the crawl open (the end is declared only
    /// with nothing in flight). It leaves the in-flight count in this same lock round trip,
    /// and with nothing left in flight it is this worker that looks for the end, no other
    /// woken for it. `not_asked` is told of each URL the host budget turns away and of each
    /// URL of a host held unreachable given up (under the lock: it must not call the
    /// dispatcher). Once the crawl's stop is requested, it ends the
    /// crawl (`Ending::Stopped`) and hands out nothing more.
    pub fn next_work(
        &self,
        due: &Due<Entry>,
        finished: bool,
        not_asked: &dyn Fn(&Entry, NotAsked),
    ) -> Result<Option<Work>> {
        let mut state = self.state.lock().unwrap();
        state.in_flight -= usize::from(finished);
        loop {
            if let Some(reason) = &state.failure {
                return Err(anyhow!("{reason}"));
            }
            if state.ending.is_some() {
                return Ok(None);
            }
            if self.stop.is_stopped() {
                return Ok(self.end(&mut state, Ending::Stopped));
            }
            if state.retiring > 0 {
                state.retiring -= 1;
                // The wake-up this worker took may have been for a ready host: passed on.
                self.call_worker(&mut state, Instant::now());
                return Ok(None);
            }
            if self.page_limit(&state) {
                if state.in_flight == 0 && Self::gate_open(&state) {
                    // The limit's last page may have been the crawl's last: then it completed.
                    let ending = match Self::no_work_left(&state, due)? {
                        true => Ending::Complete,
                        false => Ending::PageLimit,
                    };
                    return Ok(self.end(&mut state, ending));
                }
                let poll = (state.in_flight == 0).then_some(GATE_POLL);
                state = self.park(state, poll);
                continue;
            }
            self.refill(&mut state, not_asked)?;
            let now = Instant::now();
            // `--max-rate`: work that could go before the slot waits for it; with none, the
            // scheduler's answer (a later instant, or nothing: perhaps the end) stands.
            let slot = state.rate_slot;
            let scheduler = &state.scheduler;
            if self.rate_gap.is_some()
                && slot > now
                && (scheduler.has_ready() || scheduler.next_ready_at().is_some_and(|t| t <= slot))
            {
                state = self.wait_until(state, slot);
                continue;
            }
            // The requests in flight are at their cap (with the reactor, not bounded by the
            // workers): woken when one finishes.
            if self.at_cap(&state) {
                state = self.park(state, None);
                continue;
            }
            let next = state.scheduler.next(now)?;
            self.free_blocked_places(&mut state);
            Self::give_up_unreachable(&mut state, now, not_asked)?;
            match next {
                Next::Work(work) => {
                    self.take_rate_slot(&mut state, now);
                    state.in_flight += 1;
                    state.most_in_flight = state.most_in_flight.max(state.requests());
                    if let Work::Page { entry, .. } = &work {
                        state.hand_out(entry);
                    }
                    // Chain the wake-up: another host may be ready now, or soon with no worker
                    // yet watching the clock for it.
                    self.call_worker(&mut state, now);
                    return Ok(Some(work));
                }
                // Robots.txt dropped everything that was queued: refill can make progress.
                Next::Empty
                    if !state.nothing_pending()
                        && state.scheduler.has_free_slot()
                        && state.scheduler.queued() < self.limit(&state) =>
                {
                    continue;
                }
                Next::Empty => {
                    let idle = state.in_flight == 0 && Self::no_work_left(&state, due)?;
                    if idle && Self::gate_open(&state) {
                        return Ok(self.end(&mut state, Ending::Complete));
                    }
                    // Every host with work is busy, or all work is still in the DUE: merge
                    // early if it is wanted (`merge_early`).
                    let retry = self.merge_early(&state, due, now)?;
                    // With shards, other shards may send work (the receiver offers it to the DUE,
                    // which merges on this flush) or the gate may open: look again soon.
                    let poll = (state.gate.is_some() && state.in_flight == 0).then_some(GATE_POLL);
                    state = match (poll, retry) {
                        (None, Some(at)) => self.park_for_merge(state, at),
                        (poll, _) => self.park(state, poll),
                    };
                }
                Next::WaitUntil(at) => {
                    let retry = self.merge_early(&state, due, now)?;
                    state = self.wait_until(state, retry.map_or(at, |r| r.min(at)));
                }
            }
        }
    }

    /// A page chained to one still being processed is handed to the reactor: it counts in
    /// flight apart from that one, whose processing another thread's may overtake
    /// (`work_finished` for each).
    pub fn work_started(&self) {
        self.state.lock().unwrap().in_flight += 1;
    }

    /// A page handed to the reactor (`fetch::reactor`) is finished: what `next_work`'s
    /// `finished` tells for a page its worker fetched. A parked worker is woken only when
    /// that may give it something to do: with nothing left in flight (to look for the end), or
    /// with the requests in flight just under their cap again. Otherwise no worker's decision
    /// depends on the count, and a wake-up per page would be a context switch for nothing.
    pub fn work_finished(&self) {
        let mut state = self.state.lock().unwrap();
        let was_at_cap = self.at_cap(&state);
        state.in_flight -= 1;
        if state.in_flight == 0 || (was_at_cap && !self.at_cap(&state)) {
            self.wake_one(state);
        }
    }

    /// The event loop answered `n` requests, now queued for the processing threads: they
    /// count in flight until processed, but no longer against the cap on requests
    /// (`at_cap`), and a worker parked at the cap is woken.
    pub fn answers_queued(&self, n: usize) {
        let mut state = self.state.lock().unwrap();
        let was_at_cap = self.at_cap(&state);
        state.queued_answers += n;
        if was_at_cap && !self.at_cap(&state) {
            self.wake_one(state);
        }
    }

    /// A processing thread took one of the queued answers (`answers_queued`).
    pub fn answer_taken(&self) {
        let mut state = self.state.lock().unwrap();
        let was_at_cap = self.at_cap(&state);
        state.queued_answers -= 1;
        if was_at_cap && !self.at_cap(&state) {
            self.wake_one(state);
        }
    }

    /// Whether no more work may be handed out for now: the requests in flight are at the cap
    /// (`with_in_flight_cap`), or as many answers wait for a processing thread. Answers queued
    /// are counted apart: when the processing threads fall behind (a burst of new HTTPS hosts
    /// on a busy machine), answers waiting their turn took places of requests, and hosts past
    /// their rest waited for them (10,000 hosts: the cap of 4,096 reached, hosts handed out up
    /// to 1.8 s after their rest; issue 47). Each side is bounded by the cap, so the memory
    /// the cap protects is at most twice its share.
    fn at_cap(&self, state: &State) -> bool {
        state.requests() >= self.in_flight_cap || state.queued_answers >= self.in_flight_cap
    }

    /// A page's response has been received (or its fetch failed): its host may serve its next
    /// request when its rest is over, counted from the answer's arrival (`Reply::answered`),
    /// else from now. Parsing, logging, offering links and
    /// archiving happen after this, without holding the host. The page stays in flight until
    /// its worker comes back for more (`next_work`'s `finished`).
    pub fn host_free(&self, host: usize, reply: impl Into<Reply>) {
        let mut state = self.state.lock().unwrap();
        state.scheduler.page_done(host, reply, Instant::now());
        self.wake_one(state);
    }

    /// `host_free`, and the page (with its host) this worker is to fetch next, taken now so
    /// that its request is sent ahead while the page just received is processed. When the
    /// host may serve its next request right now (see `Scheduler::page_done_or_next`: no rest
    /// by the delay rule, robots.txt fresh, no ready host with more work), that is its next
    /// page: the host keeps its connection and never enters the heaps. Otherwise it is the
    /// page `next_work` would give first (`Scheduler::next_page`: the ready heap's order, not
    /// a robots.txt fetch), another host's. A host of ten pages rarely chains (its queue runs
    /// dry, or a host with more queued outranks it): its next page then went to a worker's
    /// `next_work`, whose request waited for its answer, with no page to process meanwhile
    /// (2,000 hosts of 10 pages: 0.75 more blocking reads per page than 50 of 400).
    /// The page is counted as `next_work` counts one (`pages_started`, `handed`), but takes
    /// over the place in `in_flight` of the page just received: that one is finished by the
    /// same worker before it goes on to this one, so the count of work out never drops to
    /// zero between the two (the end needs nothing in flight), and the worker reports only
    /// the last page of its chain finished (`next_work`'s `finished`). Not while stopping,
    /// failed, ended or at `--max-pages`: then it is `host_free`.
    pub fn host_free_or_next(
        &self,
        host: usize,
        reply: impl Into<Reply>,
    ) -> Result<Option<(usize, Entry)>> {
        let reply = reply.into();
        let mut state = self.state.lock().unwrap();
        let page_limit = self.page_limit(&state);
        let open = state.failure.is_none() && state.ending.is_none();
        let now = Instant::now();
        let rate_open = self.rate_gap.is_none() || state.rate_slot <= now;
        // The page chained takes the place of the one just received, still counted (`at_cap`
        // counts it as a request): it may go if the cap holds with the one for the other.
        let room =
            state.requests() <= self.in_flight_cap && state.queued_answers < self.in_flight_cap;
        let next = if open && !page_limit && rate_open && room && !self.stop.is_stopped() {
            let next = match state.scheduler.page_done_or_next(host, reply, now)? {
                Some(entry) => Some((host, entry)),
                None => state.scheduler.next_page(now)?,
            };
            self.free_blocked_places(&mut state);
            next
        } else {
            state.scheduler.page_done(host, reply, now);
            None
        };
        let Some((next_host, entry)) = next else {
            self.wake_one(state);
            return Ok(None);
        };
        self.take_rate_slot(&mut state, now);
        state.hand_out(&entry);
        // The freed host may be ready (or due with no worker watching the clock for it): a
        // worker is woken (or asked for) for it, as `host_free` would.
        if next_host != host {
            self.call_worker(&mut state, now);
        }
        Ok(Some((next_host, entry)))
    }

    /// A page was answered 429 or 503 (`host_wide`), or 502/504 (see
    /// `Scheduler::page_retry`): it is not done, it waits until the reply's not-before
    /// instant, at the front of its host's queue or deferred.
    pub fn page_retry(&self, host: usize, entry: Entry, reply: Reply, host_wide: bool) {
        let mut state = self.state.lock().unwrap();
        state.in_flight -= 1;
        state.handed.remove(&entry.key());
        let now = Instant::now();
        (state.scheduler).page_retry(host, entry, reply, host_wide, now);
        self.wake_one(state);
    }

    /// A page's fetch got no answer (a connection-level failure): the reply's not-before
    /// instant is its retry's, if its retries are not used up. Retried (or given up with its
    /// host, held unreachable), it is back with its host and no longer in flight; done, the
    /// worker finishes it as a failure (`Scheduler::page_failed`).
    pub fn page_failed(&self, host: usize, entry: &Entry, reply: Reply) -> Fate {
        let mut state = self.state.lock().unwrap();
        let again = Entry {
            failures: entry.failures + 1,
            ..entry.clone()
        };
        let now = Instant::now();
        let fate = (state.scheduler).page_failed(host, again, reply, now);
        if fate != Fate::Done {
            state.in_flight -= 1;
            state.handed.remove(&entry.key());
        }
        self.wake_one(state);
        fate
    }

    /// A robots.txt fetch got no answer (none, or a 5xx): asked for again after the wait it
    /// returns (no longer in flight), or None when its retries are used up (still in flight:
    /// the worker reports the unreachable rules with `robots_done`).
    pub fn robots_unanswered(
        &self,
        host: usize,
        response_time: Duration,
        connection_level: bool,
    ) -> Option<Duration> {
        let mut state = self.state.lock().unwrap();
        let now = Instant::now();
        let wait =
            (state.scheduler).robots_unanswered(host, response_time, now, connection_level)?;
        state.in_flight -= 1;
        self.wake_one(state);
        Some(wait)
    }

    /// A robots.txt fetch finished.
    pub fn robots_done(&self, host: usize, rules: RobotsRules, reply: impl Into<Reply>) {
        let mut state = self.state.lock().unwrap();
        state.in_flight -= 1;
        state
            .scheduler
            .robots_done(host, rules, reply, Instant::now());
        self.wake_one(state);
    }
}

/// The end of the crawl: a failure that stops it, the close, the pages given up.
impl Dispatcher {
    /// A worker (or an exchange thread) hit a fatal error: every worker stops, and every
    /// other thread sees the crawl's stop (`Reason::Failed`).
    pub fn fail(&self, error: &anyhow::Error) {
        let mut state = self.state.lock().unwrap();
        state.failure.get_or_insert_with(|| format!("{error:#}"));
        self.stop.request(Reason::Failed);
        drop(state);
        self.wake.notify_all();
        self.spawn.notify_all();
    }

    /// After the workers have stopped (and the DUE has finished): a last checkpoint, so a
    /// resumed crawl starts with the URLs still queued (and any fetch abandoned in flight), and
    /// the hosts' state. A crawl
    /// stopped because `--find` found (here or, with `--shard`, in another shard, which may be
    /// read after this shard ran out of work) ended `Found`; this is where a reason is mapped
    /// to an ending.
    pub fn close(&self) -> Result<Closed> {
        let mut state = self.state.lock().unwrap();
        // A run limit names the ending of a crawl it stopped, not one that had already ended
        // (the deadline may pass between the last page and this close).
        let ending = match (self.stop.reason(), state.ending) {
            (Some(Reason::Found), _) => Ending::Found,
            (_, Some(ending)) if ending != Ending::Stopped => ending,
            (Some(Reason::TimeLimit), _) => Ending::TimeLimit,
            (Some(Reason::ByteLimit), _) => Ending::ByteLimit,
            (_, ending) => ending.unwrap_or(Ending::Stopped),
        };
        state.last_hosts_save = Instant::now() - HOSTS_EVERY;
        self.checkpoint(&mut state)?;
        let window = state.focus.as_ref().map_or(0, Window::len) as u64;
        let frontier_left = state.frontier.len()
            + state.deferred.len()
            + state.given_up.len()
            + window
            + state.scheduler.queued() as u64
            + state.handed.len() as u64;
        // A run limit reached with nothing left to fetch (the DUE has finished: none waits
        // there either) stopped a crawl that had in fact completed.
        let ending = match ending {
            Ending::TimeLimit | Ending::ByteLimit
                if frontier_left == 0 && Self::gate_open(&state) =>
            {
                Ending::Complete
            }
            ending => ending,
        };
        Ok(Closed {
            ending,
            frontier_left,
            robots_blocked: state.scheduler.robots_blocked,
            host_budget: state.budget.as_ref().map_or(0, |b| b.refused),
            host_unreachable: state.host_unreachable,
        })
    }

    /// Every URL given up in this run (`given_up`), read back from disk once the crawl is
    /// over (after `close`): a crawl that completed records them for its next recrawl.
    pub fn given_up_entries(&self, each: &mut dyn FnMut(&Entry) -> Result<()>) -> Result<()> {
        let mut state = self.state.lock().unwrap();
        let state = &mut *state;
        while let Some(entry) = state.given_up.peek(state.scheduler.spill_dir())? {
            each(entry)?;
            state.given_up.pop();
        }
        Ok(())
    }

    /// Gives up the queued URLs of the hosts the scheduler holds unreachable: each is told to
    /// `not_asked`, gives its budget place back, and is kept in `given_up` for a resume.
    fn give_up_unreachable(
        state: &mut State,
        now: Instant,
        not_asked: &dyn Fn(&Entry, NotAsked),
    ) -> Result<()> {
        for host in state.scheduler.take_unreachable() {
            let State {
                scheduler,
                given_up,
                budget,
                host_unreachable,
                ..
            } = state;
            let mut give_up = |entry: Entry, spill: &mut crate::frontier::spill::SpillDir| {
                not_asked(&entry, NotAsked::HostUnreachable);
                if let Some(budget) = budget.as_mut() {
                    budget.dropped(&entry);
                }
                *host_unreachable += 1;
                given_up.push(entry, spill)
            };
            scheduler.give_up(host, now, &mut give_up)?;
        }
        Ok(())
    }
}

/// What the progress line and the summary read.
impl Dispatcher {
    /// Live figures for progress lines.
    pub fn gauges(&self) -> DispatchGauges {
        let state = self.state.lock().unwrap();
        let (hosts_active, hosts_busy) = state.scheduler.hosts();
        let window = state.focus.as_ref().map_or(0, Window::len) as u64;
        DispatchGauges {
            frontier: state.frontier.len() + state.deferred.len() + window,
            queued: state.scheduler.queued(),
            hosts_active,
            hosts_busy,
            in_flight: state.in_flight,
            workers: state.workers,
            max_workers: state.max_workers,
            census: state.scheduler.census(Instant::now()),
        }
    }

    /// Moves URLs into host queues: the deferred FIFO's first, then the frontier's, read
    /// ahead past hosts without a slot (see the module doc).
    fn refill(
        &self,
        state: &mut MutexGuard<'_, State>,
        not_asked: &dyn Fn(&Entry, NotAsked),
    ) -> Result<()> {
        let now = Instant::now();
        let limit = self.limit(state);
        let state = &mut **state;
        loop {
            let Some(entry) = state.deferred.peek(state.scheduler.spill_dir())? else {
                break;
            };
            let key = host_key(entry)?;
            if !state.scheduler.has_host(&key) && !state.scheduler.has_free_slot() {
                break; // its host waits for a slot; so does everything behind it
            }
            let entry = state.deferred.pop().expect("peeked");
            *state.deferred_bucket(&key) -= 1;
            join_host(state, entry, now, not_asked)?;
        }
        let mut reads = READ_AHEAD;
        // Free slots are filled whatever the hosts already queued (their memory is bounded per
        // slot), but for a focus window, which keeps the host queues short so that it decides.
        let fill = |state: &State| {
            state.scheduler.has_free_slot()
                && (state.focus.is_none() || state.scheduler.queued() < limit)
        };
        while reads > 0 && (fill(state) || state.scheduler.has_hungry_host()) {
            reads -= 1;
            let popped = match &mut state.focus {
                Some(window) => window.pop(&mut state.frontier)?,
                None => state.frontier.pop()?,
            };
            let Some(entry) = popped else { break };
            let key = host_key(&entry)?;
            let slot = state.scheduler.has_host(&key)
                || state.deferred.is_empty() && state.scheduler.has_free_slot();
            if slot && *state.deferred_bucket(&key) == 0 {
                join_host(state, entry, now, not_asked)?;
            } else {
                if *state.deferred_bucket(&key) == 0 {
                    state.scheduler.foresee(&key);
                }
                // Set aside, it holds no budget place: it takes one when it joins its host.
                state.deferred.push(entry, state.scheduler.spill_dir())?;
                *state.deferred_bucket(&key) += 1;
            }
        }
        Ok(())
    }

    /// URLs robots.txt kept from being fetched give their host's budget places back.
    fn free_blocked_places(&self, state: &mut State) {
        if let (Some(budget), Some(urls)) = (&mut state.budget, &mut state.scheduler.blocked_urls) {
            for entry in urls.drain(..) {
                budget.dropped(&entry);
            }
        }
    }

    /// A request is handed out at `now` (at or after the rate slot): with `--max-rate`, the
    /// next may go one gap later.
    fn take_rate_slot(&self, state: &mut State, now: Instant) {
        if let Some(gap) = self.rate_gap {
            state.rate_slot = now + gap;
        }
    }

    /// Work handed out and not yet reported back.
    pub fn in_flight(&self) -> usize {
        self.state.lock().unwrap().in_flight
    }

    /// The most work that was in flight at once (with the reactor, the requests' high-water
    /// mark, which the worker threads no longer are).
    pub fn most_in_flight(&self) -> usize {
        self.state.lock().unwrap().most_in_flight
    }

    /// No URL waits outside the host queues, and they hold less than a quarter of what they
    /// may: the DUE's misses are wanted soon, so it merges early rather than when full.
    fn running_low(&self, state: &State) -> bool {
        state.nothing_pending() && state.scheduler.queued() < self.limit(state) / 4
    }

    /// Merges the DUE's buffered misses before its batch is full when they are wanted: at
    /// once when the queued work runs low (`running_low`, which also finds the end of a small
    /// crawl), and, spaced by the merges' cost (`Due::flush_early`), whenever a held host
    /// waits for URLs, whatever else is queued or on the frontier: its next URL may be a miss
    /// in the open batch, and a batch stays open for seconds on a large crawl while hosts idle
    /// past their rest. Not merely because a worker is idle (with more workers than busy hosts
    /// one always is): that rewrote the seen set far more often than batches fill. Returns
    /// when to look again if a wanted merge must wait for its spacing.
    fn merge_early(
        &self,
        state: &State,
        due: &Due<Entry>,
        now: Instant,
    ) -> Result<Option<Instant>> {
        if self.running_low(state) {
            due.flush()?;
            return Ok(None);
        }
        if !state.scheduler.has_host_without_work() {
            return Ok(None);
        }
        Ok(match due.flush_early(now)? {
            EarlyMerge::NotBefore(at) => Some(at),
            EarlyMerge::Started | EarlyMerge::Nothing => None,
        })
    }

    /// URLs the scheduler's host queues may hold (fewer with a focus window).
    fn limit(&self, state: &State) -> usize {
        state
            .focus
            .as_ref()
            .map_or(self.queue_limit, |w| w.queue_limit(self.queue_limit))
    }

    /// Parks the calling worker on `wake` (for at most `timeout`), counted in `parked` so that
    /// the events that may give one worker something to do wake one, and only if one waits.
    fn park<'a>(
        &self,
        mut state: MutexGuard<'a, State>,
        timeout: Option<Duration>,
    ) -> MutexGuard<'a, State> {
        state.parked += 1;
        let mut state = match timeout {
            Some(timeout) => self.wake.wait_timeout(state, timeout).unwrap().0,
            None => self.wake.wait(state).unwrap(),
        };
        state.parked -= 1;
        state.fewest_parked = state.fewest_parked.min(state.parked);
        state
    }

    /// Parks until `at`, when the DUE's spacing allows the early merge it refused, if no other
    /// worker waits for it already (then untimed): one worker, not all of them, wakes for it.
    /// Not through `wait_until`: a worker timed there counts as watching the hosts' rests, and
    /// a host freed meanwhile, due before `at`, would wake nobody (`more_ready`).
    fn park_for_merge<'a>(
        &self,
        state: MutexGuard<'a, State>,
        at: Instant,
    ) -> MutexGuard<'a, State> {
        self.park_one_until(state, at, |s| &mut s.merge_wait)
    }

    /// Whether a host is ready at `now`, or will be with no worker yet watching the clock for
    /// it: a worker is wanted for it.
    fn more_ready(&self, state: &State, now: Instant) -> bool {
        let due = |at: Instant| at <= now || state.timed_wait.is_none();
        state.scheduler.has_ready() || state.scheduler.next_ready_at().is_some_and(due)
    }

    /// When a worker is wanted (`more_ready`): wakes a parked one, or with none parked and an
    /// elastic pool under its `max`, asks the spawner for one more.
    fn call_worker(&self, state: &mut State, now: Instant) {
        if !self.more_ready(state, now) || self.at_cap(state) {
            return;
        }
        if state.parked > 0 {
            state.wakes += 1;
            self.wake.notify_one();
        } else if state.workers_asked == 0 && state.workers < state.max_workers {
            state.workers += 1;
            state.workers_asked += 1;
            self.spawn.notify_one();
        }
    }

    /// Wakes one parked worker, if any: `state` changed so that one worker may now take work
    /// (a host freed, a retry or robots.txt queued) or declare the end (nothing in flight).
    /// The worker that takes work chains the wake-up when more is ready (`next_work`); the one
    /// that declares the end wakes them all (`end`). With none parked, a worker is asked for
    /// if one is wanted (`call_worker`).
    fn wake_one(&self, mut state: MutexGuard<'_, State>) {
        let parked = state.parked > 0;
        match parked {
            true => state.wakes += 1,
            false => self.call_worker(&mut state, Instant::now()),
        }
        drop(state);
        if parked {
            self.wake.notify_one();
        }
    }

    fn end(&self, state: &mut MutexGuard<'_, State>, ending: Ending) -> Option<Work> {
        state.ending = Some(ending);
        self.wake.notify_all();
        self.spawn.notify_all();
        None
    }

    /// Waits until `at` if no other worker is already timed for an earlier instant; otherwise
    /// waits to be woken. Keeps one worker, not all of them, polling the clock.
    fn wait_until<'a>(&self, state: MutexGuard<'a, State>, at: Instant) -> MutexGuard<'a, State> {
        self.park_one_until(state, at, |s| &mut s.timed_wait)
    }

    /// Parks until `at` if the instant `slot` holds (the one worker timed for that purpose)
    /// is not already as early; otherwise untimed, to be woken. One worker, not all of them,
    /// watches each clock.
    fn park_one_until<'a>(
        &self,
        mut state: MutexGuard<'a, State>,
        at: Instant,
        slot: fn(&mut State) -> &mut Option<Instant>,
    ) -> MutexGuard<'a, State> {
        if slot(&mut state).is_some_and(|t| t <= at) {
            return self.park(state, None);
        }
        *slot(&mut state) = Some(at);
        let timeout = at.saturating_duration_since(Instant::now());
        let mut state = self.park(state, Some(timeout));
        let timed = slot(&mut state);
        if *timed == Some(at) {
            *timed = None;
        }
        state
    }
}

/// A URL joins its host's queue, taking its host's budget place there (the budget's hook): a
/// host that has used its pages gets no more URLs, which `not_asked` is told of. Sitemaps are not
/// pages: they use no place and pass.
fn join_host(
    state: &mut State,
    entry: Entry,
    now: Instant,
    not_asked: &dyn Fn(&Entry, NotAsked),
) -> Result<()> {
    if let Some(budget) = &mut state.budget
        && !budget.admit(&entry)?
    {
        not_asked(&entry, NotAsked::HostBudget);
        return Ok(());
    }
    state.scheduler.add(entry, now)
}

/// The politeness unit of an entry's URL (`host:port`).
fn host_key(entry: &Entry) -> Result<String> {
    match crate::url::normalize::origin_and_key(&entry.url) {
        Some((_, key)) => Ok(key),
        None => Err(anyhow!(
            "frontier entry {:?} is not an http(s) URL",
            entry.url
        )),
    }
}

/// The DUE's sink in a crawl: novel URLs join the frontier's tail, and become visible to the
/// workers when the DUE commits them (see `frontier` and `due` for the crash-safe protocol).
pub struct FrontierSink(pub Arc<Dispatcher>);

impl Sink<Entry> for FrontierSink {
    fn mark(&mut self) -> Result<String> {
        Ok(self.0.state.lock().unwrap().frontier.mark())
    }

    fn deliver(&mut self, entries: Vec<Entry>) -> Result<()> {
        let mut state = self.0.state.lock().unwrap();
        for entry in &entries {
            state.frontier.push(entry)?;
        }
        Ok(())
    }

    /// The fsync happens outside the dispatcher's lock: workers go on meanwhile.
    fn commit(&mut self) -> Result<()> {
        let file = self.0.state.lock().unwrap().frontier.start_commit()?;
        file.sync_data().context("syncing the frontier")
    }

    /// One parked worker is woken to refill from the frontier; it wakes another if it leaves
    /// more hosts ready (`next_work`'s chain).
    fn publish(&mut self) {
        let mut state = self.0.state.lock().unwrap();
        state.frontier.publish();
        self.0.wake_one(state);
    }

    fn rollback(&mut self, mark: &str) -> Result<()> {
        self.0.state.lock().unwrap().frontier.rollback(mark)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::politeness::DelayRule;
    use crate::seen::due::DueConfig;
    use proptest::prelude::*;

    #[test]
    fn host_slots_follow_the_delay_rule_within_bounds() {
        // -j 16 at the default factor keeps the 256 slots it always had.
        assert_eq!(host_slots_for(16, 10.0, 1), MIN_HOST_SLOTS);
        // 1,000 requests in flight at factor 10: 11 hosts each, and a quarter more.
        assert_eq!(host_slots_for(1000, 10.0, 1), 13_750);
        assert_eq!(host_slots_for(1000, 10.0, 4), 3_438);
        assert_eq!(host_slots_for(4096, 10.0, 1), MAX_HOST_SLOTS);
        assert_eq!(host_slots_for(64, 0.0, 1), MIN_HOST_SLOTS);
    }

    fn rule() -> DelayRule {
        DelayRule {
            factor: 0.0,
            min: Duration::ZERO,
            max: Duration::ZERO,
        }
    }

    fn robots_404() -> RobotsRules {
        RobotsRules::from_response("crawl", 404, b"")
    }

    /// A dispatcher over a frontier holding `urls` in order, with 2 host slots (queue limit 8).
    fn dispatcher(dir: &std::path::Path, urls: &[String]) -> Dispatcher {
        let entries: Vec<Entry> = urls.iter().map(|u| Entry::new(u.clone(), 0, 0)).collect();
        dispatcher_of(dir, &entries)
    }

    /// `dispatcher` over any entries (pages and sitemaps).
    fn dispatcher_of(dir: &std::path::Path, entries: &[Entry]) -> Dispatcher {
        dispatcher_with(dir, entries, None)
    }

    /// `dispatcher_of` with `--max-pages-per-host`.
    fn dispatcher_with(
        dir: &std::path::Path,
        entries: &[Entry],
        max_pages_per_host: Option<u64>,
    ) -> Dispatcher {
        let mut frontier = Frontier::open(&dir.join("frontier")).unwrap();
        for entry in entries {
            frontier.push(entry).unwrap();
        }
        frontier.commit().unwrap();
        frontier.publish();
        let config = DispatchConfig {
            queue_limit: 8,
            workers: Workers::fixed(1),
            max_pages: None,
            max_pages_per_host,
            max_rate: None,
        };
        spilling_after_2(reopen(dir, frontier, &config))
    }

    /// A dispatcher on `frontier`, configured by `config`, its state in `dir`.
    fn reopen(dir: &std::path::Path, frontier: Frontier, config: &DispatchConfig) -> Dispatcher {
        reopen_with(dir, frontier, config, rule())
    }

    /// `reopen` with the delay rule `rule`.
    fn reopen_with(
        dir: &std::path::Path,
        frontier: Frontier,
        config: &DispatchConfig,
        rule: DelayRule,
    ) -> Dispatcher {
        let parts = DispatchParts {
            frontier,
            scheduler: Scheduler::new(rule),
            dir: dir.to_owned(),
            focus: None,
            gate: None,
            on_checkpoint: None,
            before_done: None,
            stop: running(),
        };
        Dispatcher::open(config, parts).unwrap()
    }

    /// A crawl's stop not yet requested (no signal ever reaches these tests).
    fn running() -> Arc<Stop> {
        fn no_exit(status: i32) -> ! {
            panic!("exit {status}")
        }
        Arc::new(Stop::new(no_exit))
    }

    /// The scheduler's next answer, every robots.txt fetch on the way answered 404 (no rules).
    fn next_not_robots(scheduler: &mut Scheduler, now: Instant) -> Next {
        loop {
            match scheduler.next(now).unwrap() {
                Next::Work(Work::Robots { host, .. }) => {
                    scheduler.robots_done(host, robots_404(), Duration::ZERO, now)
                }
                other => return other,
            }
        }
    }

    /// Host queues keep 2 URLs in memory (head and tail), the rest in their spill files.
    fn spilling_after_2(d: Dispatcher) -> Dispatcher {
        d.state.lock().unwrap().scheduler.spill_dir().at = 2;
        d
    }

    /// Calls `next_work` on a thread of its own (a worker), its answer sent on `answers`.
    fn worker(
        d: &Arc<Dispatcher>,
        due: &Arc<Due<Entry>>,
        finished: bool,
        answers: &std::sync::mpsc::Sender<Option<Work>>,
    ) {
        let (d, due, answers) = (Arc::clone(d), Arc::clone(due), answers.clone());
        std::thread::spawn(move || {
            let work = d.next_work(&due, finished, &|_, _| {}).unwrap();
            let _ = answers.send(work);
        });
    }

    /// Polls until `n` workers are parked, failing after a deadline.
    fn until_parked(d: &Dispatcher, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while d.state.lock().unwrap().parked != n {
            assert!(Instant::now() < deadline, "{n} workers never parked");
            std::thread::yield_now();
        }
    }

    /// A dispatcher over `urls` whose hosts rest ten times a response's time, for `workers`.
    fn resting(dir: &std::path::Path, urls: &[&str], workers: Workers) -> Arc<Dispatcher> {
        let mut frontier = Frontier::open(&dir.join("frontier")).unwrap();
        for url in urls {
            frontier.push(&Entry::new(url.to_string(), 0, 0)).unwrap();
        }
        frontier.commit().unwrap();
        frontier.publish();
        let config = DispatchConfig {
            queue_limit: 64,
            workers,
            max_pages: None,
            max_pages_per_host: None,
            max_rate: None,
        };
        let rule = DelayRule {
            factor: 10.0,
            min: Duration::ZERO,
            max: Duration::from_secs(600),
        };
        Arc::new(reopen_with(dir, frontier, &config, rule))
    }

    /// Takes work until a page of each of `hosts` hosts is in flight (their robots.txt
    /// answered at once, with no rest); the pages' hosts.
    fn pages_in_flight(d: &Dispatcher, due: &Due<Entry>, hosts: usize) -> Vec<usize> {
        let mut pages = Vec::new();
        while pages.len() < hosts {
            match d.next_work(due, false, &|_, _| {}).unwrap() {
                Some(Work::Robots { host, .. }) => {
                    d.robots_done(host, robots_404(), Duration::ZERO)
                }
                Some(Work::Page { host, .. }) => pages.push(host),
                None => panic!("the crawl ended"),
            }
        }
        pages
    }

    /// A page finished with others in flight under no cap wakes nobody, not even the worker
    /// parked for a host's rest; a failure reaches it.
    #[test]
    fn a_page_finished_under_the_cap_wakes_nobody() {
        let dir = tempfile::tempdir().unwrap();
        let urls = [
            "http://a.test/0",
            "http://a.test/1",
            "http://b.test/0",
            "http://b.test/1",
        ];
        let d = resting(dir.path(), &urls, Workers::fixed(4));
        let due = due_of(dir.path(), &d);
        let hosts = pages_in_flight(&d, &due, 2);
        d.host_free(hosts[0], Duration::from_secs(10));
        let parked = {
            let (d, due) = (Arc::clone(&d), Arc::clone(&due));
            std::thread::spawn(move || d.next_work(&due, false, &|_, _| {}).is_err())
        };
        until_parked(&d, 1);
        assert!(d.state.lock().unwrap().timed_wait.is_some());
        let wakes = d.state.lock().unwrap().wakes;
        d.work_started();
        d.work_finished();
        assert_eq!(d.state.lock().unwrap().wakes, wakes);
        // The end of the crawl reaches the parked worker.
        d.fail(&anyhow!("the test is over"));
        assert!(
            parked.join().unwrap(),
            "the parked worker missed the failure"
        );
    }

    /// Answers waiting for a processing thread are no longer requests: a worker parked with
    /// the requests at their cap is woken when the event loop queues one; as many answers
    /// queued as the cap hold the hand-out again, and so do the requests once processed.
    #[test]
    fn answers_queued_for_processing_free_their_places_of_requests() {
        let dir = tempfile::tempdir().unwrap();
        let urls = ["http://a.test/0", "http://b.test/0", "http://c.test/0"];
        let d = resting(dir.path(), &urls, Workers::fixed(4));
        let d = Arc::new(Arc::into_inner(d).unwrap().with_in_flight_cap(2));
        let due = due_of(dir.path(), &d);
        pages_in_flight(&d, &due, 2);
        assert!(d.at_cap(&d.state.lock().unwrap()));
        let parked = {
            let (d, due) = (Arc::clone(&d), Arc::clone(&due));
            // Woken, it hands out the third host's work, or meets the failure below.
            std::thread::spawn(move || {
                let _ = d.next_work(&due, false, &|_, _| {});
            })
        };
        // Parked at the cap (nothing else stops it: no rest, no rate, no limit).
        until_parked(&d, 1);
        let wakes = d.state.lock().unwrap().wakes;
        d.answers_queued(1);
        assert_eq!(
            d.state.lock().unwrap().wakes,
            wakes + 1,
            "the parked worker woken"
        );
        d.fail(&anyhow!("the test is over"));
        parked.join().unwrap();
        // (requests and answers in flight, answers queued) → at the cap of 2.
        let mut state = d.state.lock().unwrap();
        for (in_flight, queued, at_cap) in [(2, 0, true), (2, 1, false), (3, 2, true), (4, 1, true)]
        {
            (state.in_flight, state.queued_answers) = (in_flight, queued);
            assert_eq!(
                d.at_cap(&state),
                at_cap,
                "{in_flight} in flight, {queued} queued"
            );
        }
    }

    /// An elastic pool: workers parked throughout a window were spare, and half of them leave
    /// (their `next_work` says None while the crawl goes on), the rest stay parked; the first
    /// window only starts the count. A fixed pool never shrinks.
    #[test]
    fn spare_workers_leave_an_elastic_pool_by_halves() {
        let dir = tempfile::tempdir().unwrap();
        let urls = ["http://a.test/0".to_owned(), "http://a.test/1".to_owned()];
        let fixed = dispatcher(dir.path(), &urls);
        assert_eq!(fixed.retire_idle_at(Instant::now() + SPARE_WINDOW * 4), 0);
        let d = Arc::new(Dispatcher {
            elastic: true,
            workers_floor: 1,
            ..fixed
        });
        let due = due_of(dir.path(), &d);
        let Some(Work::Robots { host, .. }) = d.next_work(&due, false, &|_, _| {}).unwrap() else {
            panic!("robots.txt first")
        };
        d.robots_done(host, robots_404(), Duration::ZERO);
        assert!(matches!(
            d.next_work(&due, false, &|_, _| {}).unwrap(),
            Some(Work::Page { .. })
        ));
        // The one host is busy: four more workers park.
        d.state.lock().unwrap().workers = 5;
        let (answers, answered) = std::sync::mpsc::channel();
        for _ in 0..4 {
            worker(&d, &due, false, &answers);
        }
        until_parked(&d, 4);
        let now = Instant::now();
        assert_eq!(d.retire_idle_at(now), 0, "within the first window");
        assert_eq!(d.retire_idle_at(now + SPARE_WINDOW), 0, "the count starts");
        assert_eq!(d.retire_idle_at(now + SPARE_WINDOW * 2), 2);
        for _ in 0..2 {
            let left = answered.recv_timeout(Duration::from_secs(10));
            assert!(matches!(left, Ok(None)), "a spare worker did not leave");
        }
        until_parked(&d, 2);
        assert_eq!(d.state.lock().unwrap().workers, 3);
        // The rest learn of the end.
        d.stop.request(Reason::Signal);
        d.wake_all();
        for _ in 0..2 {
            assert!(matches!(
                answered.recv_timeout(Duration::from_secs(10)),
                Ok(None)
            ));
        }
    }

    /// With more workers than hosts: the workers parked behind a busy host are woken, one, when
    /// it frees; the worker reporting the last page finished ends the crawl itself, and every
    /// parked worker learns of the end. A lost wake-up fails on a deadline, not a hang.
    #[test]
    fn parked_workers_are_woken_by_a_freed_host_and_by_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let urls = ["http://a.test/0".to_owned(), "http://a.test/1".to_owned()];
        let d = Arc::new(dispatcher(dir.path(), &urls));
        let config = DueConfig {
            cache_entries: 16,
            buffer_entries: 16,
        };
        let due = Arc::new(
            Due::open(dir.path(), config, Box::new(FrontierSink(Arc::clone(&d)))).unwrap(),
        );
        let next = |finished| d.next_work(&due, finished, &|_, _| {}).unwrap();
        let Some(Work::Robots { host, .. }) = next(false) else {
            panic!("robots.txt first")
        };
        d.robots_done(host, robots_404(), Duration::ZERO);
        let Some(Work::Page { host, entry }) = next(false) else {
            panic!("a page")
        };
        assert_eq!(entry.url, urls[0]);
        // The one host is busy: three more workers park.
        let (answers, answered) = std::sync::mpsc::channel();
        for _ in 0..3 {
            worker(&d, &due, false, &answers);
        }
        until_parked(&d, 3);
        d.host_free(host, Duration::ZERO);
        let wait = Duration::from_secs(10);
        match answered.recv_timeout(wait) {
            Ok(Some(Work::Page { entry, .. })) => assert_eq!(entry.url, urls[1]),
            other => panic!("the freed host woke no worker: {other:?}"),
        }
        until_parked(&d, 2);
        d.host_free(host, Duration::ZERO);
        // Page 0 finished, reported by its worker's next call: page 1 is still in flight.
        worker(&d, &due, true, &answers);
        until_parked(&d, 3);
        assert!(answered.try_recv().is_err(), "no work and no end yet");
        // Page 1 finished: nothing in flight, queued or on the frontier, the DUE idle. Its
        // worker ends the crawl, and the three parked ones learn of it.
        worker(&d, &due, true, &answers);
        for _ in 0..4 {
            assert!(
                matches!(answered.recv_timeout(wait), Ok(None)),
                "a parked worker missed the end"
            );
        }
    }

    /// `host_free_or_next` counts the page it hands on as `next_work` would, but in the place
    /// in flight of the page just received; stopping, it only frees the host.
    #[test]
    fn a_page_handed_on_is_counted_and_held_in_flight_without_a_second_place() {
        let dir = tempfile::tempdir().unwrap();
        let urls: Vec<String> = (0..3).map(|i| format!("http://a.test/{i}")).collect();
        let d = dispatcher(dir.path(), &urls);
        let host = {
            let mut state = d.state.lock().unwrap();
            d.refill(&mut state, &|_, _| {}).unwrap();
            let Next::Work(Work::Page { host, entry }) =
                next_not_robots(&mut state.scheduler, Instant::now())
            else {
                panic!("a page")
            };
            assert_eq!(entry.url, urls[0]);
            state.in_flight = 1;
            host
        };
        let next = d.host_free_or_next(host, Duration::ZERO).unwrap();
        assert_eq!(next.unwrap().1.url, urls[1]);
        {
            let state = d.state.lock().unwrap();
            assert_eq!(state.in_flight, 1, "the received page's place, taken over");
            assert_eq!(state.pages_started, 1);
            assert!(
                state
                    .handed
                    .contains_key(&Entry::new(urls[1].clone(), 0, 0).key())
            );
        }
        d.stop.request(Reason::Signal);
        assert!(d.host_free_or_next(host, Duration::ZERO).unwrap().is_none());
        let state = d.state.lock().unwrap();
        assert_eq!(state.pages_started, 1, "nothing handed on while stopping");
        assert_eq!(state.scheduler.queued(), 1);
    }

    /// A host run dry hands its worker the ready heap's first page, another host's, in the
    /// same place in flight; never a robots.txt fetch, which stays for `next_work`.
    #[test]
    fn a_dry_host_hands_on_a_ready_hosts_page_but_not_its_robots_fetch() {
        let urls: Vec<String> = ["a.test/0", "a.test/1", "b.test/0"]
            .iter()
            .map(|u| format!("http://{u}"))
            .collect();
        for answer_b in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let d = dispatcher(dir.path(), &urls);
            let a = {
                let mut state = d.state.lock().unwrap();
                d.refill(&mut state, &|_, _| {}).unwrap();
                let now = Instant::now();
                let Next::Work(Work::Robots { host: a, .. }) = state.scheduler.next(now).unwrap()
                else {
                    panic!("a.test's robots.txt first (more queued)")
                };
                state
                    .scheduler
                    .robots_done(a, robots_404(), Duration::ZERO, now);
                let Next::Work(Work::Page { entry, .. }) = state.scheduler.next(now).unwrap()
                else {
                    panic!("a page")
                };
                assert_eq!(entry.url, urls[0]);
                if answer_b {
                    let Next::Work(Work::Robots { host: b, .. }) =
                        state.scheduler.next(now).unwrap()
                    else {
                        panic!("b.test's robots.txt")
                    };
                    state
                        .scheduler
                        .robots_done(b, robots_404(), Duration::ZERO, now);
                }
                state.in_flight = 1;
                a
            };
            let next = d.host_free_or_next(a, Duration::ZERO).unwrap();
            assert_eq!(next.map(|(h, e)| (h, e.url)), Some((a, urls[1].clone())));
            let next = d.host_free_or_next(a, Duration::ZERO).unwrap();
            let mut state = d.state.lock().unwrap();
            assert_eq!(state.in_flight, 1, "the received page's place, taken over");
            let now = Instant::now();
            if answer_b {
                let (b, entry) = next.expect("b.test's page");
                assert_ne!(b, a);
                assert_eq!(entry.url, urls[2]);
                assert_eq!(state.pages_started, 2);
                assert!(state.handed.contains_key(&entry.key()));
                assert!(matches!(state.scheduler.next(now).unwrap(), Next::Empty));
            } else {
                assert!(next.is_none(), "no robots.txt fetch handed on");
                assert!(matches!(
                    state.scheduler.next(now).unwrap(),
                    Next::Work(Work::Robots { .. })
                ));
            }
        }
    }

    /// A DUE with a large buffer (no batch closes by itself) delivering to `d`'s frontier.
    fn due_of(dir: &std::path::Path, d: &Arc<Dispatcher>) -> Arc<Due<Entry>> {
        let config = DueConfig {
            cache_entries: 64,
            buffer_entries: 1000,
        };
        Arc::new(Due::open(dir, config, Box::new(FrontierSink(Arc::clone(d)))).unwrap())
    }

    /// A URL offered to the DUE, a miss held in its open batch.
    fn offer(due: &Due<Entry>, url: &str) {
        let entry = Entry::new(url.to_owned(), 1, 0);
        due.offer([(entry.key(), entry)]).unwrap();
    }

    /// Every held host has work queued: an idle worker does not merge the DUE early (the
    /// frontier is not empty). Once a held host has nothing queued (its page in flight), the
    /// open batch is merged though URLs wait on the frontier and in the deferred FIFO; the
    /// next early merge waits for the spacing after that one.
    #[test]
    fn a_host_waiting_for_urls_merges_the_due_early_but_spaced() {
        let dir = tempfile::tempdir().unwrap();
        let mut urls = vec!["http://a.test/0".to_owned(), "http://b.test/0".to_owned()];
        urls.extend((0..20).map(|i| format!("http://c{i}.test/0")));
        let d = Arc::new(dispatcher(dir.path(), &urls));
        let due = due_of(dir.path(), &d);
        let now = Instant::now() + Duration::from_secs(3600); // refill adds hosts ready at its own now
        {
            let mut state = d.state.lock().unwrap();
            d.refill(&mut state, &|_, _| {}).unwrap();
            assert!(!state.nothing_pending());
        }
        offer(&due, "http://a.test/1");
        {
            let state = d.state.lock().unwrap();
            assert_eq!(d.merge_early(&state, &due, now).unwrap(), None);
        }
        assert!(
            !due.is_idle().unwrap(),
            "no merge while every host has work"
        );
        // a.test's page goes in flight: a.test waits for URLs, the c hosts for a slot.
        let before_merge = Instant::now();
        {
            let mut state = d.state.lock().unwrap();
            let Next::Work(Work::Page { .. }) = next_not_robots(&mut state.scheduler, now) else {
                panic!("a page")
            };
            d.refill(&mut state, &|_, _| {}).unwrap();
            assert!(!state.deferred.is_empty() && !state.nothing_pending());
            assert!(state.scheduler.has_host_without_work());
            assert_eq!(d.merge_early(&state, &due, now).unwrap(), None);
        }
        due.wait_for_merge().unwrap();
        assert_eq!(due.stats().merges, 1);
        assert!(due.is_idle().unwrap(), "the open batch was merged");
        // Another miss, asked for at an instant before the last merge ended: the merge waits
        // for its spacing, then starts.
        offer(&due, "http://a.test/2");
        let state = d.state.lock().unwrap();
        let at = d
            .merge_early(&state, &due, before_merge)
            .unwrap()
            .expect("spaced");
        assert!(at >= before_merge + crate::seen::due::EARLY_SPACING_MIN);
        assert_eq!(due.stats().merges, 1);
        assert_eq!(d.merge_early(&state, &due, at).unwrap(), None);
        drop(state);
        due.wait_for_merge().unwrap();
        assert_eq!(due.stats().merges, 2);
    }

    /// A worker refused an early merge for its spacing does not park for good: it wakes when
    /// the spacing is over and merges, with nothing else waking it.
    #[test]
    fn a_worker_refused_for_the_spacing_merges_when_it_is_over() {
        let dir = tempfile::tempdir().unwrap();
        let mut urls = vec!["http://a.test/0".to_owned(), "http://b.test/0".to_owned()];
        urls.extend((0..20).map(|i| format!("http://c{i}.test/0")));
        let d = Arc::new(dispatcher(dir.path(), &urls));
        let due = due_of(dir.path(), &d);
        // The next page handed out, every robots.txt fetch on the way answered.
        let page = || loop {
            match d.next_work(&due, false, &|_, _| {}).unwrap() {
                Some(Work::Robots { host, .. }) => {
                    d.robots_done(host, robots_404(), Duration::ZERO)
                }
                Some(Work::Page { .. }) => return,
                None => panic!("the crawl ended"),
            }
        };
        // a.test's page in flight: it waits for URLs (the c hosts wait for a slot).
        page();
        offer(&due, "http://a.test/1");
        assert!(due.flush().unwrap());
        due.wait_for_merge().unwrap();
        offer(&due, "http://a.test/2");
        // b.test's page in flight too: the next worker finds nothing ready, is refused the
        // merge for the spacing, and waits for it with nothing else to wake it.
        page();
        assert!(!d.state.lock().unwrap().nothing_pending());
        let (answers, _answered) = std::sync::mpsc::channel();
        worker(&d, &due, false, &answers);
        let deadline = Instant::now() + Duration::from_secs(20);
        while due.stats().merges < 2 {
            assert!(
                Instant::now() < deadline,
                "the refused merge never happened"
            );
            std::thread::yield_now();
        }
    }

    #[test]
    fn thousands_of_pages_done_at_once_wait_for_the_timed_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        let d = dispatcher(dir.path(), &[]);
        // 5,000 pages done in batches, as the archive reports them, well within two seconds.
        let keys: Vec<u64> = (0..5_000).collect();
        for batch in keys.chunks(100) {
            d.entries_done(batch).unwrap();
        }
        // No checkpoint started a fresh done log: every key is still in it.
        let done = std::fs::metadata(dir.path().join("frontier/done")).unwrap();
        assert_eq!(done.len(), 5_000 * 8);
    }

    #[test]
    fn a_host_in_flight_gets_its_urls_from_behind_hosts_without_a_slot() {
        let dir = tempfile::tempdir().unwrap();
        let mut urls = vec!["http://big.test/0".to_owned()];
        urls.extend((0..100).map(|i| format!("http://s{i}.test/")));
        urls.extend((1..20).map(|i| format!("http://big.test/{i}")));
        let d = dispatcher(dir.path(), &urls);
        let mut state = d.state.lock().unwrap();
        let now = Instant::now() + Duration::from_secs(3600); // refill adds hosts ready at its own now
        d.refill(&mut state, &|_, _| {}).unwrap();
        // Serve until big.test/0 is in flight (robots.txt answered, other pages done).
        let big = loop {
            match next_not_robots(&mut state.scheduler, now) {
                Next::Work(Work::Page { host, entry }) if entry.url == "http://big.test/0" => {
                    break host;
                }
                Next::Work(Work::Page { host, .. }) => {
                    state.scheduler.page_done(host, Duration::ZERO, now)
                }
                other => panic!("{other:?}"),
            }
        };
        let big_next = |state: &State| {
            state
                .scheduler
                .queued_entries()
                .any(|e| e.url == "http://big.test/1")
        };
        assert!(!big_next(&state));
        // big.test is in flight with nothing queued; its next URL lies past ~99 hosts that
        // cannot all have a slot: they are set aside, and big.test/1 joins its queue.
        d.refill(&mut state, &|_, _| {}).unwrap();
        assert!(big_next(&state), "big.test/1 is queued");
        assert!(state.deferred.len() >= 98, "{}", state.deferred.len());
        state.scheduler.page_done(big, Duration::ZERO, now);
    }

    /// With `--max-pages-per-host`, a URL takes its host's place when it joins its host's
    /// queue, not while it waits in the deferred FIFO; a deferred sitemap comes back as a
    /// sitemap and uses no place.
    #[test]
    fn a_deferred_url_takes_its_budget_place_when_it_joins_its_host() {
        let dir = tempfile::tempdir().unwrap();
        let page = |url: &str| Entry::new(url.to_owned(), 0, 0);
        let sitemap = Entry::sitemap("http://c.test/sitemap.xml".to_owned(), 1, 0);
        let entries = [
            page("http://a.test/0"),
            page("http://b.test/0"),
            page("http://c.test/0"),
            page("http://c.test/1"),
            sitemap.clone(),
            page("http://c.test/2"),
            page("http://a.test/1"),
        ];
        let d = dispatcher_with(dir.path(), &entries, Some(2));
        let refused = std::cell::RefCell::new(Vec::new());
        let refuse = |entry: &Entry, _| refused.borrow_mut().push(entry.url.clone());
        let mut state = d.state.lock().unwrap();
        let now = Instant::now() + Duration::from_secs(3600); // refill adds hosts ready at its own now
        let mut served = Vec::new();
        // a.test and b.test take the 2 slots; once their pages are in flight, a.test with
        // nothing queued, refill reads on: c.test's URLs are set aside, a.test/1 joins its host.
        d.refill(&mut state, &refuse).unwrap();
        let mut busy = Vec::new();
        while busy.len() < 2 {
            match next_not_robots(&mut state.scheduler, now) {
                Next::Work(Work::Page { host, entry }) => {
                    served.push(entry);
                    busy.push(host);
                }
                other => panic!("{other:?}"),
            }
        }
        d.refill(&mut state, &refuse).unwrap();
        assert_eq!(state.deferred.len(), 4, "c.test's URLs are set aside");
        let budget = state.budget.as_ref().unwrap();
        assert_eq!(
            budget.pending("http://c.test/"),
            0,
            "set aside, they hold no place"
        );
        assert_eq!(budget.pending("http://a.test/"), 2);
        for host in busy {
            state.scheduler.page_done(host, Duration::ZERO, now);
        }
        // Served to the end: c.test's URLs join their host when a slot frees.
        for _ in 0..100 {
            d.refill(&mut state, &refuse).unwrap();
            match next_not_robots(&mut state.scheduler, now) {
                Next::Work(Work::Page { host, entry }) => {
                    served.push(entry);
                    state.scheduler.page_done(host, Duration::ZERO, now)
                }
                Next::Empty if state.nothing_pending() => break,
                other => panic!("{other:?}"),
            }
        }
        let of_c: Vec<&Entry> = served.iter().filter(|e| e.url.contains("c.test")).collect();
        assert_eq!(
            of_c,
            [&entries[2], &entries[3], &sitemap],
            "2 pages and the sitemap"
        );
        assert_eq!(*refused.borrow(), ["http://c.test/2"]);
        assert_eq!(state.budget.as_ref().unwrap().refused, 1);
    }

    /// Every host is foreseen once (its name resolved ahead, `fetch::dns`): as it is held, or
    /// as its first URL is set aside for a slot.
    #[test]
    fn hosts_are_foreseen_when_held_or_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        let urls: Vec<String> = ["a", "b", "c", "d", "c"]
            .iter()
            .enumerate()
            .map(|(i, h)| format!("http://{h}.test/{i}"))
            .collect();
        let d = dispatcher(dir.path(), &urls); // 2 host slots
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let mut state = d.state.lock().unwrap();
        (state.scheduler).foresee_with(Box::new(move |key| {
            log.lock().unwrap().push(key.to_owned())
        }));
        d.refill(&mut state, &|_, _| {}).unwrap();
        // A held host's page in flight, its queue empty: the frontier is read past the slots.
        let now = Instant::now() + Duration::from_secs(3600);
        assert!(matches!(
            next_not_robots(&mut state.scheduler, now),
            Next::Work(_)
        ));
        d.refill(&mut state, &|_, _| {}).unwrap();
        assert!(!state.deferred.is_empty(), "c and d wait for a slot");
        drop(state);
        let mut seen = seen.lock().unwrap().clone();
        seen.sort();
        assert_eq!(seen, ["a.test:80", "b.test:80", "c.test:80", "d.test:80"]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        /// Whatever the URLs' hosts and however long fetches stay in flight, every URL is
        /// handed out once and each host's URLs in frontier order, with 2 host slots and queues
        /// spilling past 2 URLs; and a
        /// checkpoint and reopen at any point loses nothing and keeps that order.
        #[test]
        fn every_url_once_in_frontier_order_per_host(
            hosts in proptest::collection::vec(0u8..6, 1..300),
            steps in proptest::collection::vec(0u8..4, 1..2000),
            reopen_at in 0usize..400,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let urls: Vec<String> = hosts
                .iter()
                .enumerate()
                .map(|(i, h)| format!("http://h{h}.test/{i}"))
                .collect();
            let mut d = dispatcher(dir.path(), &urls);
            let now = Instant::now() + Duration::from_secs(3600); // refill adds hosts ready at its own now
            let mut served: Vec<String> = Vec::new();
            let mut in_flight: Vec<(usize, Option<Entry>)> = Vec::new();
            let mut steps = steps.into_iter().cycle();
            for round in 0..20_000 {
                if round == reopen_at && in_flight.is_empty() {
                    // A checkpoint with nothing in flight, then a fresh dispatcher on the state.
                    let mut state = d.state.lock().unwrap();
                    d.checkpoint(&mut state).unwrap();
                    drop(state);
                    let frontier = Frontier::open(&dir.path().join("frontier")).unwrap();
                    let config = DispatchConfig { queue_limit: 8, workers: Workers::fixed(1), max_pages: None, max_pages_per_host: None, max_rate: None };
                    d = spilling_after_2(reopen(dir.path(), frontier, &config));
                }
                let mut state = d.state.lock().unwrap();
                let mut step = steps.next().unwrap();
                if step != 0 || in_flight.is_empty() {
                    d.refill(&mut state, &|_, _| {}).unwrap();
                    match state.scheduler.next(now).unwrap() {
                        Next::Work(Work::Robots { host, .. }) => in_flight.push((host, None)),
                        Next::Work(Work::Page { host, entry }) => {
                            state.handed.insert(entry.key(), entry.clone());
                            in_flight.push((host, Some(entry)));
                        }
                        Next::WaitUntil(_) => unreachable!("no host rests"),
                        Next::Empty if in_flight.is_empty() => {
                            prop_assert!(state.nothing_pending(), "no host queued while URLs wait");
                            break;
                        }
                        Next::Empty => step = 0, // every host with work is busy
                    }
                }
                if step == 0 && !in_flight.is_empty() {
                    let (host, entry) = in_flight.remove(0);
                    match entry {
                        Some(entry) => {
                            state.handed.remove(&entry.key());
                            served.push(entry.url);
                            state.scheduler.page_done(host, Duration::ZERO, now);
                        }
                        None => state.scheduler.robots_done(host, robots_404(), Duration::ZERO, now),
                    }
                }
            }
            prop_assert_eq!(served.len(), urls.len(), "every URL once");
            let mut sorted = served.clone();
            sorted.sort();
            sorted.dedup();
            prop_assert_eq!(sorted.len(), urls.len());
            for h in 0..6 {
                let of = |list: &[String]| -> Vec<String> {
                    list.iter().filter(|u| u.starts_with(&format!("http://h{h}.test/"))).cloned().collect()
                };
                prop_assert_eq!(of(&served), of(&urls), "host h{}'s order", h);
            }
        }
    }
}
