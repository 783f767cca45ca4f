//! The crawl: wires the components together and runs the worker pool.
//!
//! seeds → filter → DUE → frontier → dispatcher (politeness, robots) → workers: fetch, log,
//! extract links → filter → DUE. Each worker loops over `Dispatcher::next_work` until the
//! dispatcher says the crawl is over. A failure on one URL is a line in the URL log; only
//! failures of the state directory (the WARC archive included) are fatal.
//!
//! Every response, robots.txt included, goes to the archive: workers hand an owned record to
//! one WARC writer thread (`archive`), which reports each page done once it is written. The
//! link graph (`links`) has its own writer thread; `--save files` copies (`save`) are written by the
//! workers themselves, one file each. A reporter thread shows `progress` while workers run.

use crate::fetch::client::{FetchConfig, Fetched, Fetcher};
use crate::frontier::Previous;
use crate::frontier::focus::{Focus, Window};
use crate::frontier::{Entry, Frontier};
use crate::output::archive::{Archive, ArchiveRecord, PageRecord};
use crate::output::links::LinkLog;
use crate::output::progress::{self, Gauges};
use crate::output::urllog::{LogLine, UrlLog};
use crate::output::warc::{Revisit, WarcConfig, WarcStats, WarcWriter};
use crate::schedule::dispatch::{Dispatcher, Ending, FrontierSink};
use crate::schedule::politeness::{DelayRule, RobotsStore, Scheduler, Work};
use crate::schedule::robots::RobotsRules;
use crate::seen::checksum::checksum;
use crate::seen::due::{Due, DueConfig, DueStats, Recovery};
use crate::state::recrawl::{FetchedLog, Generation, Outcome};
use crate::url::extract::extract_links;
use crate::url::normalize::{Filter, Rejection, canonicalize};
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use url::Url;

/// A redirect chain longer than this is abandoned (its last target is not followed).
pub const MAX_REDIRECTS: u32 = 10;
/// Links read from one page at most.
const MAX_LINKS_PER_PAGE: usize = 20_000;
/// After a stop signal, fetches still in flight this long are abandoned (they are fetched
/// again on resume): a stop takes a few seconds, not `--timeout`.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// Everything a crawl needs, validated.
pub struct CrawlConfig {
    pub out: PathBuf,
    pub seeds: Vec<Url>,
    pub workers: usize,
    pub max_pages: Option<u64>,
    pub filter: Filter,
    pub delay: DelayRule,
    pub fetch: FetchConfig,
    pub robots_token: String,
    /// Requests in flight per host at most (`--host-connections`).
    pub host_connections: usize,
    pub due: DueConfig,
    /// Where responses are archived; `None` with `--no-warc`.
    pub warc: Option<WarcConfig>,
    /// Where `--save files` writes HTML pages (`DIR/pages`); `None` without it.
    pub pages: Option<PathBuf>,
    /// How progress is shown while the crawl runs.
    pub progress: progress::Mode,
    /// A first crawl (or its resumption), or a recrawl (see `recrawl`).
    pub generation: Generation,
    /// `--find`: pages are searched, and the crawl stops at the first match.
    pub hunt: Option<Arc<crate::crawl::hunt::Hunt>>,
    /// With `--focus`: the topic and link graph that order the frontier.
    pub focus: Option<Arc<Focus>>,
}

/// Counters shared by the workers.
#[derive(Default)]
pub struct Counters {
    pub pages: AtomicU64,
    pub bytes: AtomicU64,
    /// By status class: [no response, 1xx, 2xx, 3xx, 4xx, 5xx].
    pub by_class: [AtomicU64; 6],
    pub robots_fetches: AtomicU64,
    pub links: AtomicU64,
    pub truncated: AtomicU64,
    /// By `Rejection` (in `Rejection::ALL` order).
    pub filtered: [AtomicU64; Rejection::ALL.len()],
    /// During a recrawl, pages by `Outcome` (in `Outcome::ALL` order).
    pub outcomes: [AtomicU64; Outcome::ALL.len()],
}

/// What a finished (or stopped) crawl reports.
pub struct Report {
    pub ending: Ending,
    pub elapsed: Duration,
    pub counters: Arc<Counters>,
    pub due: DueStats,
    pub frontier_left: u64,
    pub robots_blocked: u64,
    /// What the WARC writer wrote; `None` when archiving was off.
    pub warc: Option<WarcStats>,
    pub generation: Generation,
}

/// Runs a crawl to its end. `stop` is raised by a signal handler.
pub fn run(config: CrawlConfig, log: &UrlLog, stop: &Arc<AtomicBool>) -> Result<Report> {
    let started = Instant::now();
    // First, so that an unusable WARC directory stops the crawl before anything else starts.
    let warc = match &config.warc {
        Some(warc) => Some(
            WarcWriter::open(warc.clone())
                .with_context(|| format!("opening the WARC archive in {}", warc.dir.display()))?,
        ),
        None => None,
    };
    let links = LinkLog::start(&config.out, config.workers.clamp(4, 256))?;
    let frontier = Frontier::open(&config.out.join("frontier"))?;
    let queue_limit = (config.workers * 16).max(1024);
    let dispatcher = Arc::new(Dispatcher::new(
        frontier,
        Scheduler::with_connections(
            config.delay,
            config.host_connections,
            Some(RobotsStore {
                dir: config.out.join("robots"),
                token: config.robots_token.clone(),
            }),
        ),
        queue_limit,
        config.max_pages,
        config.out.join("hosts.tsv"),
    ));
    dispatcher.restore_hosts(|s| crate::schedule::hoststate::load(&config.out, s))?;
    if let Some(focus) = &config.focus {
        dispatcher.set_focus(Window::new(Arc::clone(focus), config.workers));
    }
    let wake_dispatcher = Arc::clone(&dispatcher);
    let due = Due::open_with(
        &config.out,
        config.due,
        Box::new(FrontierSink(Arc::clone(&dispatcher))),
        Box::new(move || wake_dispatcher.wake_all()),
        Recovery::Replay,
    )?;
    let fetched = FetchedLog::open(&config.out)?;
    let counters = Arc::new(Counters::default());
    if config.generation == Generation::Recrawl {
        // Every page the previous crawl fetched, with what it got, ahead of the seeds.
        crate::state::recrawl::read_previous(&config.out, &mut |group| {
            let wanted = group.into_iter().filter_map(|entry| {
                let url = Url::parse(&entry.url).ok()?;
                match config.filter.check(&url, entry.depth) {
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
    due.offer(config.seeds.iter().map(|url| {
        (
            checksum(url.as_str().as_bytes()),
            Entry::new(url.to_string(), 0, 0),
        )
    }))?;
    due.flush()?;
    let archive = match warc {
        Some(warc) => {
            let done = Arc::clone(&dispatcher);
            Some(Archive::start(warc, config.workers, move |key| {
                done.entry_done(key)
            })?)
        }
        None => None,
    };

    let fetcher = Fetcher::new(&config.fetch);
    let worker = Worker {
        config: &config,
        fetcher: &fetcher,
        due: &due,
        dispatcher: &dispatcher,
        counters: &counters,
        log,
        archive: archive.as_ref(),
        links: &links,
        fetched: &fetched,
    };
    let stop_or_closed = AtomicBool::new(false);
    let (done, done_signal) = std::sync::mpsc::channel::<()>();
    let watchdog = StopWatchdog::start(Arc::clone(stop), Arc::clone(&dispatcher));
    let stop: &AtomicBool = stop;
    let result: Result<()> = std::thread::scope(|scope| {
        let (dispatcher, due, counters) = (&dispatcher, &due, &counters);
        let read = move || gauges(dispatcher, due, counters);
        let mode = config.progress;
        let reporter = std::thread::Builder::new()
            .name("progress".into())
            .spawn_scoped(scope, move || {
                progress::report(mode, started, read, done_signal)
            })
            .context("starting the progress thread")?;
        let handles: Vec<_> = (0..config.workers)
            .map(|i| {
                let worker = &worker;
                let stop_or_closed = &stop_or_closed;
                std::thread::Builder::new()
                    .name(format!("worker-{i}"))
                    .spawn_scoped(scope, move || worker.run(stop, stop_or_closed))
                    .expect("spawning a worker")
            })
            .collect();
        let result = handles
            .into_iter()
            .try_for_each(|h| h.join().expect("a worker panicked"));
        // The bar is cleared (or the last status line printed) before the summary.
        drop(done);
        reporter.join().expect("the progress thread panicked");
        result
    });
    drop(watchdog);
    // The writers' own errors come first: they explain a worker's "the … writer stopped".
    let warc = archive.map(Archive::finish).transpose()?;
    links.finish()?;
    result?;
    let due_stats = due.finish()?;
    let (mut ending, frontier_left, robots_blocked) = dispatcher.close()?;
    if config.hunt.as_ref().is_some_and(|h| h.is_found()) {
        ending = Ending::Found;
    }
    Ok(Report {
        ending,
        elapsed: started.elapsed(),
        counters,
        due: due_stats,
        frontier_left,
        robots_blocked,
        warc,
        generation: config.generation,
    })
}

/// After a stop signal, gives in-flight fetches `STOP_GRACE` to end; then checkpoints the
/// frontier (those fetches stay outstanding, so a resume fetches them again) and exits with the
/// "interrupted" status rather than wait out a slow server.
struct StopWatchdog {
    finished: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl StopWatchdog {
    fn start(stop: Arc<AtomicBool>, dispatcher: Arc<Dispatcher>) -> StopWatchdog {
        let (finished, finished_signal) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("stop-watchdog".into())
            .spawn(move || {
                use std::sync::mpsc::RecvTimeoutError::Timeout;
                while !stop.load(Ordering::Relaxed) {
                    if finished_signal.recv_timeout(Duration::from_millis(100)) != Err(Timeout) {
                        return; // the crawl ended by itself
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
                std::process::exit(crate::cli::exit::Status::Interrupted as i32);
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
    let (frontier, queued, hosts_known, hosts_active) = dispatcher.gauges();
    let due = due.stats();
    Gauges {
        pages: counters.pages.load(Ordering::Relaxed),
        bytes: counters.bytes.load(Ordering::Relaxed),
        frontier: frontier + queued as u64,
        seen: due.novel,
        cache_hit_rate: due.hit_rate(),
        hosts_active,
        hosts_known,
        errors: counters.by_class[0].load(Ordering::Relaxed),
    }
}

struct Worker<'a> {
    config: &'a CrawlConfig,
    fetcher: &'a Fetcher,
    due: &'a Due<Entry>,
    dispatcher: &'a Dispatcher,
    counters: &'a Counters,
    log: &'a UrlLog,
    archive: Option<&'a Archive>,
    links: &'a LinkLog,
    fetched: &'a FetchedLog,
}

impl Worker<'_> {
    fn run(&self, stop: &AtomicBool, stopped: &AtomicBool) -> Result<()> {
        let result = self.work(stop, stopped);
        if let Err(e) = &result {
            self.dispatcher.fail(e);
        }
        result
    }

    fn work(&self, stop: &AtomicBool, stopped: &AtomicBool) -> Result<()> {
        loop {
            let found = self.config.hunt.as_ref().is_some_and(|h| h.is_found());
            if stop.load(Ordering::Relaxed) || self.log.is_closed() || found {
                stopped.store(true, Ordering::Relaxed);
            }
            let Some(work) = self.dispatcher.next_work(self.due, stopped)? else {
                return Ok(());
            };
            match work {
                Work::Robots { host, url } => {
                    let (rules, elapsed) = self.fetch_robots(&url)?;
                    self.dispatcher.robots_done(host, rules, elapsed);
                }
                Work::Page { host, entry } => match self.fetch_page(host, &entry)? {
                    Fetch::Done => self.dispatcher.page_finished(),
                    Fetch::Retry { elapsed, at } => {
                        let entry = Entry {
                            retries: entry.retries + 1,
                            ..entry
                        };
                        self.dispatcher.page_retry(host, entry, elapsed, at);
                    }
                },
            }
        }
    }

    /// Fetches, logs and archives a robots.txt; only an archive failure is an error.
    fn fetch_robots(&self, url: &str) -> Result<(RobotsRules, Duration)> {
        self.counters.robots_fetches.fetch_add(1, Ordering::Relaxed);
        let token = &self.config.robots_token;
        Ok(match self.fetcher.get_robots(url) {
            Ok(response) => {
                self.log_response(&response, 0, url, "robots");
                let rules = RobotsRules::from_response(token, response.status, &response.body);
                self.save_robots(url, response.status, &response.body)?;
                let elapsed = response.elapsed;
                // After redirects, the record is of the URL that answered.
                let answered = response.final_url.clone();
                self.archive(answered.as_deref().unwrap_or(url), response, None)?;
                (rules, elapsed)
            }
            Err(e) => {
                self.log.write(&LogLine {
                    status: 0,
                    depth: 0,
                    bytes: 0,
                    millis: e.elapsed.as_millis(),
                    content_type: None,
                    url,
                    note: e.kind,
                });
                self.save_robots(url, 0, b"")?;
                (RobotsRules::unreachable(token), e.elapsed)
            }
        })
    }

    /// Keeps a robots.txt answer for a resumed crawl (see `hoststate`).
    fn save_robots(&self, robots_url: &str, status: u16, body: &[u8]) -> Result<()> {
        let origin = robots_url.strip_suffix("/robots.txt").unwrap_or(robots_url);
        crate::schedule::hoststate::save_robots(
            &self.config.out.join("robots"),
            origin,
            status,
            body,
        )
    }

    /// Fetches one page, logs it, offers what it links to (or redirects to) to the DUE, records
    /// it in `fetched.tsv` and archives it; the page is done once archived. A 429 or 503 is
    /// asked for again later, `MAX_RETRIES` times at most (see `retry_after`).
    fn fetch_page(&self, host: usize, entry: &Entry) -> Result<Fetch> {
        self.counters.pages.fetch_add(1, Ordering::Relaxed);
        let previous = entry.previous.as_ref();
        let conditional = previous.map(conditional_headers).unwrap_or_default();
        let response = match self.fetcher.get_conditional(&entry.url, &conditional) {
            Ok(response) => response,
            Err(e) => {
                self.dispatcher.host_free(host, e.elapsed);
                self.counters.by_class[0].fetch_add(1, Ordering::Relaxed);
                let line = LogLine {
                    status: 0,
                    depth: entry.depth,
                    bytes: 0,
                    millis: e.elapsed.as_millis(),
                    content_type: None,
                    url: &entry.url,
                    note: e.kind,
                };
                self.log.write(&line);
                // A failure keeps the last good capture as the one a recrawl compares with.
                let got = previous.cloned().unwrap_or_else(|| Previous {
                    status: 0,
                    etag: None,
                    last_modified: None,
                    digest: String::new(),
                    date: unix_secs(SystemTime::now()),
                });
                self.record_fetched(entry, got)?;
                self.dispatcher.entry_done(entry.key())?;
                return Ok(Fetch::Done);
            }
        };
        if let Some(wait) = retry_after(&response, entry.retries) {
            let note = format!("retry-after:{}", wait.as_secs());
            self.log_response(&response, entry.depth, &entry.url, &note);
            let (elapsed, at) = (response.elapsed, Instant::now() + wait);
            self.archive(&entry.url, response, None)?;
            return Ok(Fetch::Retry { elapsed, at });
        }
        // The host is free from here: what follows is this worker's own work.
        self.dispatcher.host_free(host, response.elapsed);
        let class = (response.status / 100).clamp(0, 5) as usize;
        self.counters.by_class[class].fetch_add(1, Ordering::Relaxed);
        self.counters
            .bytes
            .fetch_add(response.body.len() as u64, Ordering::Relaxed);
        let page_url = Url::parse(&entry.url).context("a frontier URL does not parse")?;
        let mut found = Vec::new();
        let mut links_from = None;
        let mut note = String::new();
        if (300..400).contains(&response.status) && response.status != 304 {
            if let Some(target) = response
                .header("location")
                .and_then(|l| page_url.join(l.trim()).ok())
            {
                let target = canonicalize(target);
                note = format!("redirect:{target}");
                if entry.redirects < MAX_REDIRECTS {
                    found.push(Found {
                        url: target,
                        depth: entry.depth,
                        redirects: entry.redirects + 1,
                    });
                } else {
                    note = "too-many-redirects".into();
                }
            } else {
                note = "bad-location".into();
            }
        } else if (200..300).contains(&response.status) && response.is_html() {
            let body = response.decoded_body(self.config.fetch.max_body);
            let links_note;
            (found, links_note) = self.links_of(&body, &response, &page_url, entry.depth + 1);
            note = links_note.unwrap_or_default().into();
            let topical = self.config.focus.as_ref().is_some_and(|f| f.matches(&body));
            links_from = Some((entry.url.as_str(), topical));
            if let Some(pages) = &self.config.pages {
                crate::output::save::save(pages, &page_url, &body)
                    .with_context(|| format!("saving {} under {}", entry.url, pages.display()))?;
            }
        }
        if response.truncated {
            self.counters.truncated.fetch_add(1, Ordering::Relaxed);
            // A cut body explains cut links too.
            if note.is_empty() || note.starts_with("links-") {
                note = "truncated".into();
            }
        }
        if matches!(response.status, 429 | 503) && note.is_empty() {
            note = if entry.retries >= MAX_RETRIES {
                "retries-exhausted".into()
            } else {
                "retry-after-too-long".into()
            };
        }
        let digest = crate::output::warc::payload_digest(&response.body);
        let outcome = (self.config.generation == Generation::Recrawl)
            .then(|| Outcome::of(previous, response.status, &digest));
        if let Some(outcome) = outcome {
            self.counters.outcomes[outcome as usize].fetch_add(1, Ordering::Relaxed);
            if note.is_empty() {
                note = outcome.name().into();
            }
        }
        self.log_response(&response, entry.depth, &entry.url, &note);
        self.offer(found, links_from)?;
        let got = match previous {
            // Not modified: the capture compared with next time is still the previous one.
            Some(previous) if response.status == 304 => Previous {
                etag: crate::frontier::entry::validator(response.header("etag"))
                    .or_else(|| previous.etag.clone()),
                ..previous.clone()
            },
            _ => Previous {
                status: response.status,
                etag: crate::frontier::entry::validator(response.header("etag")),
                last_modified: crate::frontier::entry::validator(response.header("last-modified")),
                digest: digest.clone(),
                date: unix_secs(response.started),
            },
        };
        self.record_fetched(entry, got)?;
        let revisit = match (outcome, previous) {
            (Some(Outcome::Unchanged), Some(previous)) if response.status == 304 => {
                Some(Revisit::NotModified {
                    refers_to_date: UNIX_EPOCH + Duration::from_secs(previous.date),
                })
            }
            (Some(Outcome::Unchanged), Some(previous)) => Some(Revisit::IdenticalPayload {
                digest: digest.clone(),
                refers_to_date: UNIX_EPOCH + Duration::from_secs(previous.date),
            }),
            _ => None,
        };
        if let Some(hunt) = &self.config.hunt {
            hunt.search(
                &entry.url,
                entry.depth,
                &response,
                self.config.fetch.max_body,
            );
        }
        let page = PageRecord {
            key: entry.key(),
            payload_digest: digest,
            revisit,
        };
        self.archive(&entry.url, response, Some(page))?;
        Ok(Fetch::Done)
    }

    fn record_fetched(&self, entry: &Entry, got: Previous) -> Result<()> {
        self.fetched.record(&Entry {
            previous: Some(got),
            ..entry.clone()
        })
    }

    /// Hands a response to the WARC writer thread (if archiving), body moved, not copied. A
    /// `page` is done once archived, or at once without an archive.
    fn archive(&self, target_uri: &str, response: Fetched, page: Option<PageRecord>) -> Result<()> {
        let Some(archive) = self.archive else {
            return match page {
                Some(page) => self.dispatcher.entry_done(page.key),
                None => Ok(()),
            };
        };
        archive.write(ArchiveRecord {
            target_uri: target_uri.to_owned(),
            date: response.started,
            ip: response.ip,
            request_head: response.request_head,
            response_head: response.response_head,
            body: response.body,
            truncated: response.truncated,
            page,
        })
    }

    /// The links of an HTML page, and a note when not all of them could be read: `links-capped`
    /// (over `MAX_LINKS_PER_PAGE`) or `links-cut` (the parser's memory cap stopped it).
    fn links_of(
        &self,
        body: &[u8],
        response: &Fetched,
        page_url: &Url,
        depth: u32,
    ) -> (Vec<Found>, Option<&'static str>) {
        let extracted = extract_links(body, page_url, response.charset(), MAX_LINKS_PER_PAGE);
        self.counters
            .links
            .fetch_add(extracted.links.len() as u64, Ordering::Relaxed);
        let note = match (extracted.truncated, extracted.parser_stopped) {
            (true, _) => Some("links-capped"),
            (_, true) => Some("links-cut"),
            _ => None,
        };
        let found = extracted
            .links
            .into_iter()
            .map(|url| Found {
                url,
                depth,
                redirects: 0,
            })
            .collect();
        (found, note)
    }

    /// Canonicalizes and filters discovered URLs, records them in the link graph as links of
    /// `from` (a page, and whether it matched `--focus`; `None` for a redirect), then offers
    /// the wanted ones to the DUE.
    fn offer(&self, found: Vec<Found>, from: Option<(&str, bool)>) -> Result<()> {
        let mut wanted = Vec::with_capacity(found.len());
        for Found {
            url,
            depth,
            redirects,
        } in found
        {
            let url = canonicalize(url);
            match self.config.filter.check(&url, depth) {
                Ok(()) => {
                    let entry = Entry::new(url.into(), depth, redirects);
                    wanted.push((checksum(entry.url.as_bytes()), entry));
                }
                Err(reason) => {
                    self.counters.filtered[reason as usize].fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        let mut merge = None;
        if let Some((from, topical)) = from {
            let urls = || wanted.iter().map(|(_, e)| e.url.as_str());
            self.links.write(from, urls())?;
            let seen = || self.due.stats().stored;
            if let Some(focus) = &self.config.focus
                && focus.record(from, topical, urls(), seen())
            {
                merge = Some(focus);
            }
        }
        self.due.offer(wanted)?;
        if let Some(focus) = merge
            && !self.due.flush()?
        {
            focus.merge_refused();
        }
        Ok(())
    }

    fn log_response(&self, response: &Fetched, depth: u32, url: &str, note: &str) {
        let content_type = response.header("content-type");
        self.log.write(&LogLine {
            status: response.status,
            depth,
            bytes: response.body.len() as u64,
            millis: response.elapsed.as_millis(),
            content_type,
            url,
            note,
        });
    }
}

/// How a page fetch ended, for the politeness scheduler.
enum Fetch {
    /// Done (whatever the status); the host was freed when the response arrived.
    Done,
    /// 429 or 503: ask again at `at`.
    Retry { elapsed: Duration, at: Instant },
}

/// A page answered 429 or 503 is asked for again this many times at most.
pub const MAX_RETRIES: u32 = 3;
/// The longest Retry-After honoured; a server asking for more is not asked again.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(3600);

/// When to ask again after a 429 (Too Many Requests) or 503 (Service Unavailable), or None
/// when the page is done: other statuses, retries used up, or a wait over `MAX_RETRY_AFTER`.
/// Retry-After is seconds or an HTTP date (RFC 9110 §10.2.3); without one the wait doubles
/// from 10 seconds. The host rests until then (`Scheduler::page_retry`).
fn retry_after(response: &Fetched, retries: u32) -> Option<Duration> {
    if !matches!(response.status, 429 | 503) || retries >= MAX_RETRIES {
        return None;
    }
    let given = response.header("retry-after").map(str::trim);
    let wait = match given {
        Some(value) if value.bytes().all(|b| b.is_ascii_digit()) && !value.is_empty() => {
            Duration::from_secs(value.parse().unwrap_or(u64::MAX))
        }
        Some(value) => match httpdate::parse_http_date(value) {
            Ok(at) => at.duration_since(SystemTime::now()).unwrap_or_default(),
            Err(_) => Duration::from_secs(10 << retries),
        },
        None => Duration::from_secs(10 << retries),
    };
    (wait <= MAX_RETRY_AFTER).then_some(wait)
}

/// A URL found in a page or a Location header, not yet canonicalized or filtered. It stays a
/// parsed `Url` until then, so each link is parsed once.
struct Found {
    url: Url,
    depth: u32,
    redirects: u32,
}

/// The conditional request for a page the previous crawl fetched.
fn conditional_headers(previous: &Previous) -> Vec<(&'static str, String)> {
    let mut headers = Vec::new();
    if let Some(etag) = &previous.etag {
        headers.push(("if-none-match", etag.clone()));
    }
    if let Some(date) = &previous.last_modified {
        headers.push(("if-modified-since", date.clone()));
    }
    headers
}

fn unix_secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs()
}
