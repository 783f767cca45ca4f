//! The dispatcher: hands work to workers, in breadth-first order and within politeness.
//!
//! It owns the frontier and the politeness scheduler under one lock. URLs move from the
//! frontier (disk) into the scheduler's per-host queues until those hold `queue_limit` URLs, so
//! memory stays bounded even when every URL belongs to one host. It also decides when the crawl
//! is over: no work in flight, none queued, none on the frontier, and the DUE idle (nothing
//! buffered, no merge running). When workers would idle while the DUE still holds misses, it
//! asks the DUE to merge early, so a small crawl never stalls on a half-empty buffer.
//!
//! It also keeps the frontier resumable: it remembers the pages handed to workers until they are
//! done (`entry_done`), and every few seconds checkpoints the frontier with them and the host
//! queues as outstanding, and saves the hosts' politeness state (`hoststate`) and whatever the
//! `on_checkpoint` hook saves (the cookie jar).
//!
//! With `--max-pages-per-host`, `refill` is where the per-host budget (`budget`) turns URLs
//! away; the budget's counts are saved with each checkpoint.
//!
//! Lock order: the dispatcher's lock may be held while taking the DUE's, never the reverse (the
//! DUE's merge thread calls the `FrontierSink` holding no DUE lock).

use crate::frontier::focus::Window;
use crate::frontier::{Entry, Frontier};
use crate::schedule::budget::Budget;
use crate::schedule::hoststate;
use crate::schedule::politeness::{Next, Scheduler, Work};
use crate::schedule::robots::RobotsRules;
use crate::seen::batch::Sink;
use crate::seen::due::Due;
use anyhow::{Context, Result, anyhow};
use rustc_hash::FxHashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The frontier is checkpointed after this many pages are done, or this long after the last
/// checkpoint, whichever comes first: the bound on the done log a resume reads.
const CHECKPOINT_PAGES: u64 = 4096;
const CHECKPOINT_EVERY: Duration = Duration::from_secs(2);
/// `CHECKPOINT_PAGES`, or the hidden `CRAWL_CHECKPOINT_PAGES` with which the kill-and-resume
/// tests make checkpoints frequent.
fn checkpoint_pages() -> u64 {
    static PAGES: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    crate::state::failpoint::knob(&PAGES, "CRAWL_CHECKPOINT_PAGES", CHECKPOINT_PAGES)
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
    /// A signal, or the URL log's reader went away.
    Stopped,
    /// `--find` found its text.
    Found,
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
}

struct State {
    frontier: Frontier,
    scheduler: Scheduler,
    in_flight: usize,
    pages_started: u64,
    ending: Option<Ending>,
    failure: Option<String>,
    /// The deadline the one worker waiting with a timeout wakes at (the others wait untimed).
    timed_wait: Option<Instant>,
    /// Pages handed to workers and not done yet, by checksum.
    handed: FxHashMap<u64, Entry>,
    done_since_checkpoint: u64,
    last_checkpoint: Instant,
    last_hosts_save: Instant,
    /// With `--focus`: the priority window between the frontier and the scheduler.
    focus: Option<Window>,
    /// With `--max-pages-per-host`: which URLs the frontier may give their host.
    budget: Option<Budget>,
    /// Run at each checkpoint, before the frontier is saved (the cookie jar's save).
    on_checkpoint: Option<CheckpointHook>,
}

/// Saves some other state with each checkpoint of the frontier.
pub type CheckpointHook = Box<dyn Fn() -> Result<()> + Send>;

impl State {
    /// No URL waits outside the scheduler (frontier and focus window empty).
    fn nothing_pending(&self) -> bool {
        self.frontier.is_empty() && self.focus.as_ref().is_none_or(Window::is_empty)
    }
}

pub struct Dispatcher {
    state: Mutex<State>,
    wake: Condvar,
    queue_limit: usize,
    max_pages: Option<u64>,
    /// Where the hosts' politeness state is saved (`DIR/hosts.tsv`).
    hosts_file: PathBuf,
}

impl Dispatcher {
    pub fn new(
        frontier: Frontier,
        scheduler: Scheduler,
        queue_limit: usize,
        max_pages: Option<u64>,
        hosts_file: PathBuf,
    ) -> Dispatcher {
        let now = Instant::now();
        Dispatcher {
            state: Mutex::new(State {
                frontier,
                scheduler,
                in_flight: 0,
                pages_started: 0,
                ending: None,
                failure: None,
                timed_wait: None,
                handed: FxHashMap::default(),
                done_since_checkpoint: 0,
                last_checkpoint: now,
                last_hosts_save: now,
                focus: None,
                budget: None,
                on_checkpoint: None,
            }),
            wake: Condvar::new(),
            queue_limit,
            max_pages,
            hosts_file,
        }
    }

    /// Makes the crawl focused: URLs pass through `window` (see `focus`).
    pub fn set_focus(&self, window: Window) {
        self.state.lock().unwrap().focus = Some(window);
    }

    /// Gives every host a budget of pages (`--max-pages-per-host`).
    pub fn set_budget(&self, budget: Budget) {
        let mut state = self.state.lock().unwrap();
        state.scheduler.blocked_urls = Some(Vec::new());
        state.budget = Some(budget);
    }

    /// Runs `hook` at each checkpoint (every few seconds and at the end), before the frontier
    /// is saved; its error stops the crawl like a failure to save the frontier.
    pub fn on_checkpoint(&self, hook: CheckpointHook) {
        self.state.lock().unwrap().on_checkpoint = Some(hook);
    }

    /// A page is done: fetched, its links spooled by the DUE, its response archived. It will
    /// not be fetched again after a crash.
    pub fn entry_done(&self, key: u64) -> Result<()> {
        self.entries_done(&[key])
    }

    /// Several pages are done (a batch of the archive): `entry_done` under one lock.
    pub fn entries_done(&self, keys: &[u64]) -> Result<()> {
        let mut state = self.state.lock().unwrap();
        for key in keys {
            let entry = state.handed.remove(key);
            // Sitemaps are not pages: they use no budget place (nor give one back).
            if let (Some(budget), Some(entry)) = (&mut state.budget, entry)
                && entry.sitemap.is_none()
            {
                budget.done(&entry.url)?;
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
            ..
        } = state;
        let window = focus.iter().flat_map(Window::entries);
        frontier
            .checkpoint(
                handed
                    .values()
                    .chain(scheduler.queued_entries())
                    .chain(window),
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

    /// Wakes every waiting worker to look again (after a merge, a signal, a failure).
    pub fn wake_all(&self) {
        let _guard = self.state.lock().unwrap();
        self.wake.notify_all();
    }

    /// Blocks until there is work for this worker, or returns None when the crawl is over.
    /// `refused` is told of each URL the host budget turns away (under the lock: it must not
    /// call the dispatcher).
    pub fn next_work(
        &self,
        due: &Due<Entry>,
        stop: &AtomicBool,
        refused: &dyn Fn(&Entry),
    ) -> Result<Option<Work>> {
        let mut state = self.state.lock().unwrap();
        loop {
            if let Some(reason) = &state.failure {
                return Err(anyhow!("{reason}"));
            }
            if state.ending.is_some() {
                return Ok(None);
            }
            if stop.load(Ordering::Relaxed) {
                return Ok(self.end(&mut state, Ending::Stopped));
            }
            let page_limit = self.max_pages.is_some_and(|max| state.pages_started >= max);
            if page_limit {
                if state.in_flight == 0 {
                    return Ok(self.end(&mut state, Ending::PageLimit));
                }
                state = self.wake.wait(state).unwrap();
                continue;
            }
            self.refill(&mut state, refused)?;
            let now = Instant::now();
            let next = state.scheduler.next(now);
            self.free_blocked_places(&mut state);
            match next {
                Next::Work(work) => {
                    state.in_flight += 1;
                    if let Work::Page { entry, .. } = &work {
                        // A sitemap is no page for --max-pages (`crawl::sitemaps`).
                        state.pages_started += u64::from(entry.sitemap.is_none());
                        let entry = entry.clone();
                        state.handed.insert(entry.key(), entry);
                    }
                    // Chain the wake-up: another host may be ready now, or soon with no worker
                    // yet watching the clock for it.
                    let due = |at: Instant| at <= now || state.timed_wait.is_none();
                    if state.scheduler.has_ready()
                        || state.scheduler.next_ready_at().is_some_and(due)
                    {
                        self.wake.notify_one();
                    }
                    return Ok(Some(work));
                }
                // Robots.txt dropped everything that was queued: refill can make progress.
                Next::Empty
                    if !state.nothing_pending()
                        && state.scheduler.queued() < self.limit(&state) =>
                {
                    continue;
                }
                Next::Empty => {
                    if state.in_flight == 0 && state.nothing_pending() && due.is_idle()? {
                        return Ok(self.end(&mut state, Ending::Complete));
                    }
                    // Every host with work is busy, or all work is still in the DUE.
                    if state.nothing_pending() {
                        due.flush()?;
                    }
                    state = self.wake.wait(state).unwrap();
                }
                Next::WaitUntil(at) => {
                    // Hosts are resting, not idle: merge early only when the queued work is
                    // running low, or a politeness-bound crawl would rewrite the seen set at
                    // every pause.
                    if state.nothing_pending() && state.scheduler.queued() < self.limit(&state) / 4
                    {
                        due.flush()?;
                    }
                    state = self.wait_until(state, at);
                }
            }
        }
    }

    /// A page's response has been received (or its fetch failed): its host may serve its next
    /// request when its rest is over, counted from now. Parsing, logging, offering links and
    /// archiving happen after this, without holding the host. The page stays in flight until
    /// `page_finished`.
    pub fn host_free(&self, host: usize, response_time: Duration) {
        let mut state = self.state.lock().unwrap();
        state
            .scheduler
            .page_done(host, response_time, Instant::now());
        drop(state);
        self.wake.notify_one();
    }

    /// A page's links have been offered to the DUE and its outputs queued: it no longer holds
    /// the crawl open (the end is declared only with nothing in flight).
    pub fn page_finished(&self) {
        let mut state = self.state.lock().unwrap();
        state.in_flight -= 1;
        let last = state.in_flight == 0;
        drop(state);
        if last {
            self.wake.notify_all();
        }
    }

    /// A page was answered 429 or 503 (see `Scheduler::page_retry`): it is not done, it waits
    /// at the front of its host's queue until `retry_at`.
    pub fn page_retry(
        &self,
        host: usize,
        entry: Entry,
        response_time: Duration,
        retry_at: Instant,
    ) {
        let mut state = self.state.lock().unwrap();
        state.in_flight -= 1;
        state.handed.remove(&entry.key());
        state
            .scheduler
            .page_retry(host, entry, response_time, Instant::now(), retry_at);
        drop(state);
        self.wake.notify_one();
    }

    /// A robots.txt fetch finished.
    pub fn robots_done(&self, host: usize, rules: RobotsRules, response_time: Duration) {
        let mut state = self.state.lock().unwrap();
        state.in_flight -= 1;
        state
            .scheduler
            .robots_done(host, rules, response_time, Instant::now());
        drop(state);
        self.wake.notify_one();
    }

    /// A worker hit a fatal error: every worker stops.
    pub fn fail(&self, error: &anyhow::Error) {
        let mut state = self.state.lock().unwrap();
        state.failure.get_or_insert_with(|| format!("{error:#}"));
        drop(state);
        self.wake.notify_all();
    }

    /// After the workers have stopped: a last checkpoint, so a resumed crawl starts with the
    /// URLs still queued (and any fetch abandoned in flight), and the hosts' state.
    pub fn close(&self) -> Result<Closed> {
        let mut state = self.state.lock().unwrap();
        let ending = state.ending.unwrap_or(Ending::Stopped);
        state.last_hosts_save = Instant::now() - HOSTS_EVERY;
        self.checkpoint(&mut state)?;
        let window = state.focus.as_ref().map_or(0, Window::len) as u64;
        let frontier_left = state.frontier.len()
            + window
            + state.scheduler.queued() as u64
            + state.handed.len() as u64;
        Ok(Closed {
            ending,
            frontier_left,
            robots_blocked: state.scheduler.robots_blocked,
            host_budget: state.budget.as_ref().map_or(0, |b| b.refused),
        })
    }

    /// Live figures for progress lines.
    pub fn gauges(&self) -> DispatchGauges {
        let state = self.state.lock().unwrap();
        let (hosts_active, hosts_busy) = state.scheduler.hosts();
        let window = state.focus.as_ref().map_or(0, Window::len) as u64;
        DispatchGauges {
            frontier: state.frontier.len() + window,
            queued: state.scheduler.queued(),
            hosts_active,
            hosts_busy,
        }
    }

    fn refill(&self, state: &mut MutexGuard<'_, State>, refused: &dyn Fn(&Entry)) -> Result<()> {
        let now = Instant::now();
        while state.scheduler.queued() < self.limit(state) {
            let state = &mut **state;
            let popped = match &mut state.focus {
                Some(window) => window.pop(&mut state.frontier)?,
                None => state.frontier.pop()?,
            };
            let Some(entry) = popped else { break };
            // The budget's hook: a host that has used its pages gets no more URLs (sitemaps
            // are not pages and pass).
            if let Some(budget) = &mut state.budget
                && entry.sitemap.is_none()
                && !budget.admit(&entry.url)?
            {
                refused(&entry);
                continue;
            }
            state.scheduler.add(entry, now)?;
        }
        Ok(())
    }

    /// URLs robots.txt kept from being fetched give their host's budget places back.
    fn free_blocked_places(&self, state: &mut State) {
        if let (Some(budget), Some(urls)) = (&mut state.budget, &mut state.scheduler.blocked_urls) {
            for url in urls.drain(..) {
                budget.dropped(&url);
            }
        }
    }

    /// Work handed out and not yet reported back.
    pub fn in_flight(&self) -> usize {
        self.state.lock().unwrap().in_flight
    }

    /// URLs the scheduler's host queues may hold (fewer with a focus window).
    fn limit(&self, state: &State) -> usize {
        state
            .focus
            .as_ref()
            .map_or(self.queue_limit, |w| w.queue_limit(self.queue_limit))
    }

    /// Restores the hosts' politeness state and robots.txt rules saved by an earlier run.
    pub fn restore_hosts(&self, restore: impl FnOnce(&mut Scheduler) -> Result<()>) -> Result<()> {
        restore(&mut self.state.lock().unwrap().scheduler)
    }

    fn end(&self, state: &mut MutexGuard<'_, State>, ending: Ending) -> Option<Work> {
        state.ending = Some(ending);
        self.wake.notify_all();
        None
    }

    /// Waits until `at` if no other worker is already timed for an earlier instant; otherwise
    /// waits to be woken. Keeps one worker, not all of them, polling the clock.
    fn wait_until<'a>(
        &self,
        mut state: MutexGuard<'a, State>,
        at: Instant,
    ) -> MutexGuard<'a, State> {
        if state.timed_wait.is_some_and(|t| t <= at) {
            return self.wake.wait(state).unwrap();
        }
        state.timed_wait = Some(at);
        let timeout = at.saturating_duration_since(Instant::now());
        let (mut state, _) = self.wake.wait_timeout(state, timeout).unwrap();
        if state.timed_wait == Some(at) {
            state.timed_wait = None;
        }
        state
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

    fn publish(&mut self) {
        self.0.state.lock().unwrap().frontier.publish();
        self.0.wake.notify_all();
    }

    fn rollback(&mut self, mark: &str) -> Result<()> {
        self.0.state.lock().unwrap().frontier.rollback(mark)
    }
}
