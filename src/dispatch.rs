//! The dispatcher: hands work to workers, in breadth-first order and within politeness.
//!
//! It owns the frontier and the politeness scheduler under one lock. URLs move from the
//! frontier (disk) into the scheduler's per-host queues until those hold `queue_limit` URLs, so
//! memory stays bounded even when every URL belongs to one host. It also decides when the crawl
//! is over: no work in flight, none queued, none on the frontier, and the DUE idle (nothing
//! buffered, no merge running). When workers would idle while the DUE still holds misses, it
//! asks the DUE to merge early, so a small crawl never stalls on a half-empty buffer.
//!
//! Lock order: the dispatcher's lock may be held while taking the DUE's, never the reverse (the
//! DUE's merge thread calls `push_novel` holding no DUE lock).

use crate::due::Due;
use crate::focus::Window;
use crate::frontier::{Entry, Frontier};
use crate::politeness::{Next, Scheduler, Work};
use crate::robots::RobotsRules;
use anyhow::{Context, Result, anyhow};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use url::Url;

/// Why the dispatcher stopped handing out work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Nothing left anywhere: the crawl is complete.
    Complete,
    /// --max-pages reached.
    PageLimit,
    /// A signal, or the URL log's reader went away.
    Stopped,
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
    /// With `--focus`: the priority window between the frontier and the scheduler.
    focus: Option<Window>,
}

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
}

impl Dispatcher {
    pub fn new(
        frontier: Frontier,
        scheduler: Scheduler,
        queue_limit: usize,
        max_pages: Option<u64>,
    ) -> Dispatcher {
        Dispatcher {
            state: Mutex::new(State {
                frontier,
                scheduler,
                in_flight: 0,
                pages_started: 0,
                ending: None,
                failure: None,
                timed_wait: None,
                focus: None,
            }),
            wake: Condvar::new(),
            queue_limit,
            max_pages,
        }
    }

    /// Makes the crawl focused: URLs pass through `window` (see `focus`).
    pub fn set_focus(&self, window: Window) {
        self.state.lock().unwrap().focus = Some(window);
    }

    /// The DUE's sink: novel URLs join the frontier's tail (or the focus window).
    pub fn push_novel(&self, entries: Vec<Entry>) -> Result<()> {
        let mut guard = self.state.lock().unwrap();
        let state = &mut *guard;
        for entry in &entries {
            match &mut state.focus {
                Some(window) => window.push(entry, &mut state.frontier)?,
                None => state.frontier.push(entry)?,
            }
        }
        drop(guard);
        if !entries.is_empty() {
            self.wake.notify_all();
        }
        Ok(())
    }

    /// Wakes every waiting worker to look again (after a merge, a signal, a failure).
    pub fn wake_all(&self) {
        let _guard = self.state.lock().unwrap();
        self.wake.notify_all();
    }

    /// Blocks until there is work for this worker, or returns None when the crawl is over.
    pub fn next_work(&self, due: &Due<Entry>, stop: &AtomicBool) -> Result<Option<Work>> {
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
            self.refill(&mut state)?;
            let now = Instant::now();
            match state.scheduler.next(now) {
                Next::Work(work) => {
                    state.in_flight += 1;
                    if matches!(work, Work::Page { .. }) {
                        state.pages_started += 1;
                    }
                    // Chain the wake-up: another host may be ready now, or soon with no worker
                    // yet watching the clock for it.
                    if let Some(at) = state.scheduler.next_ready_at()
                        && (at <= now || state.timed_wait.is_none())
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

    /// A page fetch finished (after its links were offered to the DUE).
    pub fn page_done(&self, host: usize, response_time: Duration) {
        let mut state = self.state.lock().unwrap();
        state.in_flight -= 1;
        state
            .scheduler
            .page_done(host, response_time, Instant::now());
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

    /// After the workers have stopped: URLs still in host queues go back to the frontier (so a
    /// resumed crawl has them), and the frontier is made durable.
    pub fn close(self) -> Result<(Ending, u64, u64)> {
        let mut state = self.state.into_inner().unwrap();
        let ending = state.ending.unwrap_or(Ending::Stopped);
        let State {
            frontier,
            scheduler,
            focus,
            ..
        } = &mut state;
        for entry in scheduler.drain() {
            frontier.push(&entry)?;
        }
        for entry in focus.as_mut().map(Window::drain).unwrap_or_default() {
            frontier.push(&entry)?;
        }
        frontier.persist().context("saving the frontier")?;
        Ok((ending, state.frontier.len(), state.scheduler.robots_blocked))
    }

    /// Live figures for progress lines: (frontier, queued in memory, hosts known, hosts busy).
    pub fn gauges(&self) -> (u64, usize, usize, usize) {
        let state = self.state.lock().unwrap();
        let (hosts, busy) = state.scheduler.hosts();
        let window = state.focus.as_ref().map_or(0, Window::len) as u64;
        (
            state.frontier.len() + window,
            state.scheduler.queued(),
            hosts,
            busy,
        )
    }

    fn refill(&self, state: &mut MutexGuard<'_, State>) -> Result<()> {
        let now = Instant::now();
        while state.scheduler.queued() < self.limit(state) {
            let state = &mut **state;
            let popped = match &mut state.focus {
                Some(window) => window.pop(&mut state.frontier)?,
                None => state.frontier.pop()?,
            };
            let Some(entry) = popped else { break };
            match Url::parse(&entry.url) {
                Ok(url) => state.scheduler.add(entry, &url, now),
                Err(e) => return Err(anyhow!("frontier entry {:?} is not a URL: {e}", entry.url)),
            }
        }
        Ok(())
    }

    /// URLs the scheduler's host queues may hold (fewer with a focus window).
    fn limit(&self, state: &State) -> usize {
        state
            .focus
            .as_ref()
            .map_or(self.queue_limit, |w| w.queue_limit(self.queue_limit))
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
