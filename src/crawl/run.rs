//! The crawl: wires the components together and runs the worker pool.
//!
//! seeds → filter → DUE → frontier → dispatcher (politeness, robots) → workers: fetch, log,
//! extract links → filter → DUE. Each worker loops over `Dispatcher::next_work` until the
//! dispatcher says the crawl is over. A failure on one URL is a line in the URL log; only
//! failures of the state directory (the WARC archive included) are fatal.
//!
//! Every response, robots.txt included, goes to the archive: workers hand an owned record to
//! one WARC writer thread (`archive`), which reports each batch's pages done once they are
//! written. The link graph (`links`, with `--link-graph`) has its own writer thread;
//! `--save files` copies (`save`) are written by the workers themselves, one file each. A
//! reporter thread shows `progress` while workers run.
//!
//! `run` is three steps. `Stages::open`: the WARC archive first (an unusable directory stops the
//! crawl before anything else starts), the link log (`--link-graph`), frontier, robots.txt store,
//! the dispatcher (configured once: `DispatchConfig`), the DUE and the fetch log; a recrawl's
//! previous fetches replayed, the seeds offered, the WARC writer started. `Stages::spawn`: the
//! workers, the progress reporter, with `--shard` the exchange's receiver and coordinator, and the
//! stop watchdog, all until the workers end. `Stages::finish`, once every thread has ended, in this
//! order: the WARC and link writers (their own errors come first: they explain a worker's "the …
//! writer stopped"), then the workers' error, then the DUE (its last merge reaches the frontier),
//! then the dispatcher (a last checkpoint of the frontier, hosts and budgets, holding every page
//! the archive reported done and every URL the DUE merged), then the exchange (the lease dropped
//! and the senders stopped, after that checkpoint fsynced the outboxes). Last, how the crawl went
//! (`outcome`): a crawl that completed without failing records the URLs given up with their
//! unreachable hosts in `fetched.tsv` (status 0), so that its next recrawl asks for them; one that
//! failed keeps them for its resume.

use crate::crawl::config::CrawlConfig;
use crate::crawl::counters::Counters;
use crate::crawl::outcome::RunOutcome;
use crate::crawl::sinks::PageSinks;
use crate::crawl::worker::{Fetching, WorkerContext};
use crate::fetch::client::Fetcher;
use crate::fetch::reactor::{Answer, Reactor};
use crate::frontier::focus::Window;
use crate::frontier::{Entry, Frontier};
use crate::output::archive::Archive;
use crate::output::links::LinkLog;
use crate::output::progress::{self, Gauges};
use crate::output::urllog::{UrlLog, Written};
use crate::output::warc::{WarcStats, WarcWriter};
use crate::recrawl::budget::RecrawlBudget;
use crate::recrawl::{FetchLog, Generation, LASTMODS, Lastmods};
use crate::schedule::dispatch::{DispatchConfig, DispatchParts, Dispatcher, Ending, FrontierSink};
use crate::schedule::politeness::Scheduler;
use crate::schedule::pool;
use crate::schedule::robotstore::RobotsStore;
use crate::schedule::stop::{Reason, Stop};
use crate::seen::checksum::checksum;
use crate::seen::due::{Due, DueStats, Recovery};
use crate::shard::ExchangeStats;
use crate::shard::exchange::Hunted;
use anyhow::{Context, Result};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::{JoinHandle, Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};
use url::Url;

/// How often the spawner of an elastic pool looks at its workers while none is asked for.
const SPAWNER_LOOK: Duration = Duration::from_millis(500);

/// After a stop signal, fetches still in flight this long are abandoned (they are fetched
/// again on resume): a stop takes a few seconds, not `--timeout`.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// What a finished (or stopped) crawl reports.
pub struct Report {
    pub ending: Ending,
    /// How the crawl went: its ending, or that it mostly failed (`crawl::outcome`).
    pub outcome: RunOutcome,
    pub elapsed: Duration,
    pub counters: Arc<Counters>,
    pub due: DueStats,
    pub frontier_left: u64,
    pub robots_blocked: u64,
    /// URLs not fetched because their host had used its `--max-pages-per-host` budget.
    pub host_budget: u64,
    /// URLs given up because their host was held unreachable (asked for again on resume).
    pub host_unreachable: u64,
    /// What the WARC writer wrote; `None` when archiving was off.
    pub warc: Option<WarcStats>,
    pub generation: Generation,
    /// With `--shard`: what crossed between this shard and the others.
    pub exchange: Option<ExchangeStats>,
    /// With `--extract`: what it took and wrote.
    pub extract: Option<crate::crawl::extract::ExtractStats>,
    /// With `--shard` and `--find`: the shard that found the text, and the page (this shard's
    /// own find or another's stop mark); `None` when the text was not found.
    pub found_by: Option<String>,
    /// With `RunOutcome::SeedsRefused`: the refused request, and why.
    pub seed_refusal: Option<String>,
}

/// Runs a crawl to its end, or until `config.stop` is requested: opens its stages, runs its
/// threads, and closes the stages in order (see the module doc).
pub fn run(config: CrawlConfig, log: &UrlLog) -> Result<Report> {
    let stages = Stages::open(&config, log.written())?;
    let result = stages.spawn(&config, log);
    stages.finish(&config, result)
}

/// What a crawl's threads share, opened before any of them starts and closed after all have
/// ended.
struct Stages {
    started: Instant,
    /// The WARC writer thread; `None` with `--no-warc`.
    archive: Option<Archive>,
    /// The link graph's writer thread; `None` without `--link-graph`.
    links: Option<LinkLog>,
    robots: RobotsStore,
    dispatcher: Arc<Dispatcher>,
    due: Due<Entry>,
    fetched: FetchLog,
    counters: Arc<Counters>,
    /// The HTTP client, made before the dispatcher, whose scheduler resolves names through it.
    fetcher: Fetcher,
    /// A recrawl's `--recrawl-budget` selection (`recrawl::budget`).
    budget: Option<RecrawlBudget>,
}

impl Stages {
    /// Opens the stores and the dispatcher, replays a recrawl's previous fetches, offers the
    /// seeds, and starts the WARC writer: everything but the crawl's own threads.
    fn open(config: &CrawlConfig, logged: Written) -> Result<Stages> {
        let started = Instant::now();
        // First, so that an unusable WARC directory stops the crawl before anything else starts.
        let warc =
            match &config.warc {
                Some(warc) => Some(WarcWriter::open(warc.clone()).with_context(|| {
                    format!("opening the WARC archive in {}", warc.dir.display())
                })?),
                None => None,
            };
        // `--text`: WET files beside the WARC files, of the same prefix and compression.
        let wet = match (&config.warc, config.text) {
            (Some(warc), Some(_)) => Some(
                WarcWriter::open_wet(warc.clone())
                    .with_context(|| format!("opening the WET files in {}", warc.dir.display()))?,
            ),
            _ => None,
        };
        let links = (config.link_graph)
            .then(|| LinkLog::start(&config.out, 512 * 1024))
            .transpose()?;
        let frontier = Frontier::open(&config.out.join("frontier"))?;
        let robots = RobotsStore::open(&config.out.join("robots"), &config.robots_token)?;
        let fetcher = Fetcher::new(&config.fetch);
        let dispatcher = Arc::new(open_dispatcher(
            config, frontier, &robots, &fetcher, logged,
        )?);
        let wake_dispatcher = Arc::clone(&dispatcher);
        let due = Due::open_with(
            &config.out,
            config.due,
            Box::new(FrontierSink(Arc::clone(&dispatcher))),
            Box::new(move || wake_dispatcher.wake_one_parked()),
            Recovery::Replay,
        )?;
        let fetched = FetchLog::open(&config.out)?;
        let counters = Arc::new(Counters::default());
        let mut budget = None;
        if config.generation == Generation::Recrawl {
            if let Some(pages) = config.recrawl_budget {
                let now = crate::state::history::now();
                budget = Some(RecrawlBudget::select(&config.out, pages, now)?);
            }
            replay_previous(config, &due, &counters)?;
        }
        // Every shard reads all the seeds (the scope is theirs) and crawls those it owns.
        let owned = |url: &&Url| (config.exchange.as_ref()).is_none_or(|x| x.owns(url.as_str()));
        due.offer(config.seeds.iter().filter(owned).map(|url| {
            (
                checksum(url.as_str().as_bytes()),
                Entry::new(url.to_string(), 0, 0),
            )
        }))?;
        due.flush()?;
        let archive = match warc {
            Some(warc) => {
                let done = Arc::clone(&dispatcher);
                Some(Archive::start(
                    warc,
                    wet,
                    config.dispatch.workers.max,
                    move |keys| done.entries_done(keys),
                )?)
            }
            None => None,
        };
        Ok(Stages {
            started,
            archive,
            links,
            robots,
            dispatcher,
            due,
            fetched,
            counters,
            fetcher,
            budget,
        })
    }

    /// Runs the workers, the progress reporter and (with `--shard`) the exchange's threads
    /// until the workers end, with the stop watchdog beside them; the workers' (and the
    /// exchange's) first error.
    fn spawn(&self, config: &CrawlConfig, log: &UrlLog) -> Result<()> {
        let fetcher = &self.fetcher;
        let lastmods = Lastmods::new(LASTMODS);
        let near_dup_index = match config.near_duplicates {
            crate::url::minhash::NearDuplicates::Off => None,
            _ => Some(
                crate::seen::neardup::NearDupIndex::open(
                    &config.out,
                    config.near_duplicates_threshold,
                )
                .context("opening the near-duplicate index")?,
            ),
        };
        // `--dedupe-against`: the other crawls' near-duplicate indexes too, where they have one.
        let against = (config.warc.as_ref())
            .and_then(|warc| warc.dedupe.as_ref())
            .map_or(&[][..], |dedupe| &dedupe.against[..]);
        if let Some(index) = &near_dup_index {
            for dir in against {
                index.add_earlier(dir).with_context(|| {
                    format!(
                        "--dedupe-against {}: reading its near-duplicate index",
                        dir.display()
                    )
                })?;
            }
        }
        let reactor = match reactor_wanted(config) {
            true => Some(Reactor::new().context("starting the reactor")?),
            false => None,
        };
        let answers = Answers::default();
        let sinks = PageSinks::new(config, log, &self.fetched);
        let worker = WorkerContext {
            sinks: &sinks,
            reactor: reactor.as_ref(),
            config,
            fetcher,
            due: &self.due,
            dispatcher: &self.dispatcher,
            robots: &self.robots,
            counters: &self.counters,
            log,
            archive: self.archive.as_ref(),
            links: self.links.as_ref(),
            fetched: &self.fetched,
            lastmods: &lastmods,
            near_dup_index: near_dup_index.as_ref(),
            budget: self.budget.as_ref(),
        };
        let (done, done_signal) = std::sync::mpsc::channel::<()>();
        let deadline = config.limits.time.map(|limit| self.started + limit);
        let _watchdog = StopWatchdog::start(
            Arc::clone(&config.stop),
            Arc::clone(&self.dispatcher),
            deadline,
        );
        let ran = std::thread::scope(|scope| {
            let read = || gauges(&self.dispatcher, &self.due, &self.counters);
            let (mode, started) = (config.progress, self.started);
            let reporter = std::thread::Builder::new()
                .name("progress".into())
                .spawn_scoped(scope, move || {
                    progress::report(mode, started, read, done_signal)
                })
                .context("starting the progress thread")?;
            let workers = worker_pool(config);
            let reactor_thread = match &reactor {
                Some(reactor) => Some(self.start_reactor(scope, reactor, &answers)?),
                None => None,
            };
            let processing = match reactor {
                Some(_) => start_processing(scope, workers.max, &answers, &worker)?,
                None => Vec::new(),
            };
            let pool = WorkerThreads::start(scope, &worker, workers.start);
            let exchange_threads = self.spawn_exchange(scope, config)?;
            let mut result = pool.grow_and_join(&self.dispatcher, workers, &self.counters);
            if reactor.is_some() {
                // With the reactor a worker is a request in flight, not a thread.
                let in_flight = self.dispatcher.most_in_flight() as u64;
                self.counters
                    .workers
                    .fetch_max(in_flight, Ordering::Relaxed);
            }
            // The reactor answers what it still holds (a stop's requests in flight), then the
            // processing threads finish.
            if let (Some(reactor), Some(thread)) = (&reactor, reactor_thread) {
                reactor.close();
                let ran = thread.join().expect("the reactor panicked");
                result = result.and(ran.context("polling the reactor's sockets"));
            }
            answers.close();
            result = result.and(join_all(processing, "a processing thread"));
            result = result.and(self.end_exchange(config, exchange_threads));
            // The bar is cleared (or the last status line printed) before the summary.
            drop(done);
            reporter.join().expect("the progress thread panicked");
            result
        });
        self.counters.connections.add_all(fetcher.events());
        ran
    }

    /// The reactor's thread (`fetch::reactor`): a failed poll stops the crawl (the requests in
    /// flight are answered as failed), so the workers stop submitting.
    fn start_reactor<'scope>(
        &'scope self,
        scope: &'scope Scope<'scope, '_>,
        reactor: &'scope Reactor<Fetching>,
        answers: &'scope Answers,
    ) -> Result<ScopedJoinHandle<'scope, std::io::Result<()>>> {
        let (fetcher, dispatcher) = (&self.fetcher, &*self.dispatcher);
        std::thread::Builder::new()
            .name("reactor".into())
            .spawn_scoped(scope, move || {
                let stop = |e: &std::io::Error| {
                    let e = anyhow::anyhow!("{e}").context("polling the reactor's sockets");
                    dispatcher.fail(&e)
                };
                let deliver = |batch: &mut Vec<_>| {
                    // Counted before queued: a processing thread's `answer_taken` follows.
                    dispatcher.answers_queued(batch.len());
                    answers.push_all(batch)
                };
                reactor.run(fetcher, &deliver, &stop)
            })
            .context("starting the reactor thread")
    }

    /// With `--shard`, once the workers ended: a `--find` that found its text here sets the
    /// mark that stops every other shard at its next report; then the exchange's threads stop.
    fn end_exchange(
        &self,
        config: &CrawlConfig,
        threads: Vec<ScopedJoinHandle<'_, Result<()>>>,
    ) -> Result<()> {
        let Some(exchange) = &config.exchange else {
            return Ok(());
        };
        let mut result = Ok(());
        if let Some((hunt, found)) = config.hunt.as_ref().and_then(|h| Some((h, h.found()?))) {
            result = exchange.announce_find(&hunt.text, &found.url);
        }
        exchange.stop();
        result.and(join_all(threads, "an exchange thread"))
    }

    /// With `--shard`: the receiver of other shards' URLs and the coordinator of the end.
    fn spawn_exchange<'scope>(
        &'scope self,
        scope: &'scope std::thread::Scope<'scope, '_>,
        config: &'scope CrawlConfig,
    ) -> Result<Vec<std::thread::ScopedJoinHandle<'scope, Result<()>>>> {
        let Some(exchange) = &config.exchange else {
            return Ok(Vec::new());
        };
        let (due, dispatcher, pages) = (&self.due, &*self.dispatcher, &self.counters.pages);
        let (hunt, stop) = (config.hunt.as_deref(), &*config.stop);
        let mut threads = Vec::new();
        for (name, coordinator) in [("receiver", false), ("coordinator", true)] {
            let thread = std::thread::Builder::new()
                .name(name.into())
                .spawn_scoped(scope, move || {
                    let result = match coordinator {
                        true => exchange.coordinate(
                            due,
                            dispatcher,
                            pages,
                            hunt.map(|h| h as &dyn Hunted),
                        ),
                        false => exchange.receive(due, dispatcher, pages),
                    };
                    if let Err(e) = &result {
                        dispatcher.fail(e);
                    }
                    // Another shard found --find's text (the hunt requested the stop): the
                    // workers waiting for work see the stop when woken.
                    if stop.is_stopped() {
                        dispatcher.wake_all();
                    }
                    result
                })
                .context("starting a thread of the exchange")?;
            threads.push(thread);
        }
        Ok(threads)
    }

    /// Closes the stages in the module doc's order once every thread has ended, and reports.
    fn finish(self, config: &CrawlConfig, result: Result<()>) -> Result<Report> {
        // The writers' own errors come first: they explain a worker's "the … writer stopped".
        let warc = self.archive.map(Archive::finish).transpose()?;
        self.links.map(LinkLog::finish).transpose()?;
        let extract = config.extract.as_ref().map(|x| x.finish()).transpose()?;
        result?;
        let due_stats = self.due.finish()?;
        let closed = self.dispatcher.close()?;
        if let Some(exchange) = &config.exchange {
            exchange.finish()?;
        }
        let counters = &self.counters;
        let failed = counters.failed.load(Ordering::Relaxed) + closed.host_unreachable;
        let fetches = counters.pages.load(Ordering::Relaxed) + closed.host_unreachable;
        let outcome = RunOutcome::of(
            closed.ending,
            config.seed_hosts.verdict(),
            failed,
            fetches,
            config.max_error_ratio,
        );
        if outcome == RunOutcome::Ended(Ending::Complete) {
            self.dispatcher.given_up_entries(&mut |entry| {
                let got = entry.previous.clone();
                let got = got.unwrap_or_else(crate::recrawl::no_capture);
                self.fetched.record(&Entry {
                    previous: Some(got),
                    ..entry.clone()
                })
            })?;
        }
        Ok(Report {
            ending: closed.ending,
            outcome,
            seed_refusal: (outcome == RunOutcome::SeedsRefused)
                .then(|| config.seed_hosts.refusal())
                .flatten(),
            elapsed: self.started.elapsed(),
            counters: self.counters,
            due: due_stats,
            frontier_left: closed.frontier_left,
            robots_blocked: closed.robots_blocked,
            host_budget: closed.host_budget,
            host_unreachable: closed.host_unreachable,
            warc,
            generation: config.generation,
            exchange: config.exchange.as_ref().map(|x| x.stats()),
            extract,
            found_by: match (&config.exchange, &config.hunt) {
                (Some(exchange), Some(hunt)) => hunt
                    .found_elsewhere()
                    .map(str::to_owned)
                    .or_else(|| hunt.found().map(|found| exchange.finder(&found.url))),
                _ => None,
            },
        })
    }
}

/// The dispatcher, configured once (`DispatchConfig` from the command line, the parts opened
/// here).
fn open_dispatcher(
    config: &CrawlConfig,
    frontier: Frontier,
    robots: &RobotsStore,
    fetcher: &Fetcher,
    logged: Written,
) -> Result<Dispatcher> {
    // Saved with each checkpoint of the frontier: the cookie jar, and with --shard the outboxes
    // fsynced, so that a page the done log counts survives a power cut with its links sent.
    let (jar, exchange) = (config.fetch.cookies.clone(), config.exchange.clone());
    let on_checkpoint = (jar.is_some() || exchange.is_some()).then(|| {
        Box::new(move || {
            if let Some(exchange) = &exchange {
                exchange.flush()?;
            }
            jar.as_ref().map_or(Ok(()), |jar| jar.save_if_changed())
        }) as _
    });
    let mut scheduler =
        Scheduler::with_lanes(config.delay, config.host_connections, Some(robots.clone()))
            .with_retries(config.retry)
            .with_rates(config.rate, Arc::clone(&config.host_rules));
    if let Some(ahead) = fetcher.resolver_ahead() {
        scheduler.foresee_with(ahead);
    }
    let parts = DispatchParts {
        frontier,
        scheduler,
        dir: config.out.clone(),
        focus: (config.focus.as_ref()).map(|f| Window::new(Arc::clone(f), focus_workers(config))),
        gate: config.exchange.clone().map(|x| x as _),
        on_checkpoint,
        // A page is done only once its URL-log line is written (`frontier::queue`).
        before_done: Some(Box::new(move || logged.wait())),
        stop: Arc::clone(&config.stop),
    };
    let dispatch = DispatchConfig {
        workers: worker_pool(config),
        ..config.dispatch.clone()
    };
    let dispatcher = Dispatcher::open(&dispatch, parts)?;
    Ok(match reactor_wanted(config) {
        true => dispatcher.with_in_flight_cap(config.dispatch.workers.max),
        false => dispatcher,
    })
}

/// Whether HTTP(S) requests go to the reactor (`fetch::reactor`). Not with a proxy (whose
/// requests block a worker each), nor with `--focus` (whose window orders the fetches by the
/// workers' pace: a worker waits for its topical links to reach the window before its next
/// fetch), nor with `-j N`: N worker threads, each one request at a time, the cheaper path when
/// few requests are in flight and the CPU is the limit (the reactor hands every answer from
/// its thread to another: wake-ups that cost CPU per page). The hidden `CRAWL_REACTOR=1` or
/// `0` overrides the last.
fn reactor_wanted(config: &CrawlConfig) -> bool {
    if config.fetch.proxy.is_some() || config.focus.is_some() {
        return false;
    }
    match std::env::var("CRAWL_REACTOR").as_deref() {
        Ok("1") => true,
        Ok("0") => false,
        _ => config.dispatch.workers.is_elastic(),
    }
}

/// The worker threads: `config.dispatch.workers`, but with the reactor an elastic pool up to
/// the same `max` even with `-j` (workers then block only on requests the reactor does not
/// take); `max` stays the cap on work in flight (`Dispatcher`).
fn worker_pool(config: &CrawlConfig) -> pool::Workers {
    let workers = config.dispatch.workers;
    match reactor_wanted(config) {
        true => pool::Workers::elastic(workers.max),
        false => workers,
    }
}

/// The threads that process the reactor's answers: one per core, at least two, at most the
/// work that may be in flight (`max`): with `-j 1` pages are processed one at a time, in the
/// order of their answers, as one worker would.
fn processing_threads(max: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
    cores.min(max).max(1)
}

/// The threads that process the reactor's answers (`processing_threads` of them), each until
/// the queue is closed and empty; a failed page stops none of them (the first error is kept).
fn start_processing<'scope>(
    scope: &'scope Scope<'scope, '_>,
    max: usize,
    answers: &'scope Answers,
    worker: &'scope WorkerContext<'_>,
) -> Result<Vec<ScopedJoinHandle<'scope, Result<()>>>> {
    (0..processing_threads(max))
        .map(|i| {
            std::thread::Builder::new()
                .name(format!("process-{i}"))
                .stack_size(pool::WORKER_STACK)
                .spawn_scoped(scope, move || {
                    let mut result = Ok(());
                    while let Some(answer) = answers.pop() {
                        worker.dispatcher.answer_taken();
                        result = result.and(worker.process(answer));
                    }
                    result
                })
        })
        .collect::<std::io::Result<_>>()
        .context("starting the processing threads")
}

/// Joins `threads` (`what` names them if one panicked); the first error.
fn join_all(threads: Vec<ScopedJoinHandle<'_, Result<()>>>, what: &str) -> Result<()> {
    let mut result = Ok(());
    for thread in threads {
        let ended = thread.join().unwrap_or_else(|_| panic!("{what} panicked"));
        result = result.and(ended);
    }
    result
}

/// The worker threads of a crawl, each running `WorkerContext::run`.
struct WorkerThreads<'scope, 'env> {
    scope: &'scope Scope<'scope, 'env>,
    worker: &'scope WorkerContext<'env>,
    handles: Vec<ScopedJoinHandle<'scope, Result<()>>>,
    /// Threads started so far (their names' numbers).
    started: u64,
    /// The most running at once.
    most: usize,
}

impl<'scope, 'env> WorkerThreads<'scope, 'env> {
    /// `count` workers, started now.
    fn start(
        scope: &'scope Scope<'scope, 'env>,
        worker: &'scope WorkerContext<'env>,
        count: usize,
    ) -> Self {
        let mut threads = WorkerThreads {
            scope,
            worker,
            handles: Vec::new(),
            started: 0,
            most: 0,
        };
        for _ in 0..count {
            let handle = threads.spawn().expect("spawning a worker");
            threads.handles.push(handle);
        }
        threads.most = count;
        threads
    }

    fn spawn(&mut self) -> std::io::Result<ScopedJoinHandle<'scope, Result<()>>> {
        let worker = self.worker;
        let handle = std::thread::Builder::new()
            .name(format!("worker-{}", self.started))
            .stack_size(pool::WORKER_STACK)
            .spawn_scoped(self.scope, move || worker.run())?;
        self.started += 1;
        Ok(handle)
    }

    /// An elastic pool grows while the crawl runs: workers are started as the dispatcher asks
    /// for them, and spare ones leave (`Dispatcher::retire_idle`), until it says the crawl is
    /// over; then every worker is joined. A worker that failed has stopped the crawl
    /// (`WorkerContext::run`). Records the most running at once and the cap in `counters`;
    /// the workers' first error.
    fn grow_and_join(
        mut self,
        dispatcher: &Dispatcher,
        workers: pool::Workers,
        counters: &Counters,
    ) -> Result<()> {
        let (mut leaving, mut result) = (0, Ok(()));
        while workers.is_elastic() && !dispatcher.workers_over() {
            let wanted = dispatcher.workers_wanted(SPAWNER_LOOK);
            for _ in 0..wanted {
                match self.spawn() {
                    Ok(handle) => self.handles.push(handle),
                    Err(e) => {
                        let running = self.handles.len();
                        eprintln!(
                            "crawl: could not start worker {} ({e}); going on with {running}",
                            running + 1,
                        );
                        dispatcher.worker_not_started();
                    }
                }
            }
            self.most = self.most.max(self.handles.len());
            leaving += dispatcher.retire_idle();
            // Workers that left are joined (and one that panicked is seen), while some are
            // leaving or when none was wanted: not for every worker added.
            if leaving == 0 && wanted > 0 {
                continue;
            }
            let (gone, running): (Vec<_>, Vec<_>) =
                self.handles.into_iter().partition(|h| h.is_finished());
            self.handles = running;
            leaving = leaving.saturating_sub(gone.len());
            result = result.and(join_all(gone, "a worker"));
        }
        counters.workers.store(self.most as u64, Ordering::Relaxed);
        counters
            .max_workers
            .store(workers.max as u64, Ordering::Relaxed);
        result.and(join_all(self.handles, "a worker"))
    }
}

/// The reactor's answers, queued for the processing threads; closed once the reactor ended.
/// A batch wakes as many waiting threads as it has answers, at most: none when every thread
/// is busy (they take the queued answers before they wait again).
#[derive(Default)]
struct Answers {
    queue: std::sync::Mutex<AnswerQueue>,
    ready: std::sync::Condvar,
}

#[derive(Default)]
struct AnswerQueue {
    answers: std::collections::VecDeque<Answer<Fetching>>,
    closed: bool,
    /// Threads waiting in `pop`.
    waiting: usize,
}

impl Answers {
    /// Queues `batch` (emptied), waking waiting threads for it.
    fn push_all(&self, batch: &mut Vec<Answer<Fetching>>) {
        let n = batch.len();
        let waiting = {
            let mut queue = self.queue.lock().unwrap();
            queue.answers.extend(batch.drain(..));
            queue.waiting
        };
        for _ in 0..n.min(waiting) {
            self.ready.notify_one();
        }
    }

    /// The next answer, waiting for one; None once closed and empty.
    fn pop(&self) -> Option<Answer<Fetching>> {
        let mut queue = self.queue.lock().unwrap();
        loop {
            if let Some(answer) = queue.answers.pop_front() {
                return Some(answer);
            }
            if queue.closed {
                return None;
            }
            queue.waiting += 1;
            queue = self.ready.wait(queue).unwrap();
            queue.waiting -= 1;
        }
    }

    fn close(&self) {
        self.queue.lock().unwrap().closed = true;
        self.ready.notify_all();
    }
}

/// The workers a focus window keeps busy: `-j`'s, or with an elastic pool the 16 that were
/// the default before it, so that the window, not the host queues, still decides the order.
fn focus_workers(config: &CrawlConfig) -> usize {
    let workers = config.dispatch.workers;
    match workers.is_elastic() {
        true => workers.max.min(16),
        false => workers.max,
    }
}

/// A recrawl: the sitemaps the previous crawl read, then every page it fetched, with what it
/// got, ahead of the seeds: a host's sitemaps are read before its pages (`recrawl`).
fn replay_previous(config: &CrawlConfig, due: &Due<Entry>, counters: &Counters) -> Result<()> {
    for sitemaps in [true, false] {
        if sitemaps && config.sitemaps.is_none() {
            continue;
        }
        crate::recrawl::read_previous(&config.out, sitemaps, &mut |group| {
            let wanted = group.into_iter().filter_map(|entry| {
                let url = Url::parse(&entry.url).ok()?;
                // As leniently as a requisite: one the last crawl fetched past the depth or
                // the scope (`--requisites`) is asked for again too.
                let kind = crate::url::normalize::LinkKind::Stylesheet;
                match config.filter.check_as(&url, entry.depth, kind) {
                    Ok(()) => Some((entry.key(), entry)),
                    Err(reason) => {
                        counters.filtered[reason as usize].fetch_add(1, Ordering::Relaxed);
                        None
                    }
                }
            });
            due.offer(wanted.collect::<Vec<_>>())
        })?;
    }
    Ok(())
}

/// After a signal, gives in-flight fetches `STOP_GRACE` to end; then checkpoints the frontier
/// (those fetches stay outstanding, so a resume fetches them again) and ends the process with
/// the "interrupted" status (`Stop::exit_interrupted`) rather than wait out a slow server.
/// With `--max-time` it also requests the time limit's stop once the deadline passes (and
/// wakes the workers to see it); the fetches in flight then finish, as at any stop.
struct StopWatchdog {
    finished: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl StopWatchdog {
    fn start(
        stop: Arc<Stop>,
        dispatcher: Arc<Dispatcher>,
        deadline: Option<Instant>,
    ) -> StopWatchdog {
        let (finished, finished_signal) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("stop-watchdog".into())
            .spawn(move || {
                use std::sync::mpsc::RecvTimeoutError::Timeout;
                while !stop.signalled() {
                    if finished_signal.recv_timeout(Duration::from_millis(100)) != Err(Timeout) {
                        return; // the crawl ended by itself
                    }
                    if deadline.is_some_and(|at| Instant::now() >= at)
                        && stop.request(Reason::TimeLimit)
                    {
                        dispatcher.wake_all();
                    }
                }
                if finished_signal.recv_timeout(STOP_GRACE) != Err(Timeout) {
                    return;
                }
                let busy = dispatcher.in_flight();
                let saved = dispatcher.close();
                eprintln!(
                    "crawl: stopped; {busy} fetches still in flight were abandoned and are fetched again on resume{}",
                    saved.err().map(|e| format!(" (saving the frontier failed: {e:#})")).unwrap_or_default()
                );
                stop.exit_interrupted();
            })
            .ok();
        StopWatchdog {
            finished: Some(finished),
            thread,
        }
    }
}

impl Drop for StopWatchdog {
    fn drop(&mut self) {
        self.finished.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The live figures the progress reporter shows.
fn gauges(dispatcher: &Dispatcher, due: &Due<Entry>, counters: &Counters) -> Gauges {
    let dispatch = dispatcher.gauges();
    let due = due.stats();
    Gauges {
        pages: counters.pages.load(Ordering::Relaxed),
        bytes: counters.bytes.load(Ordering::Relaxed),
        frontier: dispatch.frontier + dispatch.queued as u64,
        seen: due.novel,
        cache_hit_rate: due.hit_rate(),
        hosts_busy: dispatch.hosts_busy,
        hosts_with_work: dispatch.hosts_active,
        errors: counters.by_class[0].load(Ordering::Relaxed),
        in_flight: dispatch.in_flight,
        workers: dispatch.workers,
        max_workers: dispatch.max_workers,
        hosts_ready: dispatch.census.ready,
        hosts_resting: dispatch.census.resting,
        hosts_starved: dispatch.census.starved,
    }
}
