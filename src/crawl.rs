//! The crawl: wires the components together and runs the worker pool.
//!
//! seeds → filter → DUE → frontier → dispatcher (politeness, robots) → workers: fetch, log,
//! extract links → filter → DUE. Each worker loops over `Dispatcher::next_work` until the
//! dispatcher says the crawl is over. A failure on one URL is a line in the URL log; only
//! failures of the state directory (the WARC archive included) are fatal.
//!
//! Every response, robots.txt included, goes to the archive: workers hand an owned record to
//! one WARC writer thread over a bounded channel (many workers, one owner per output). The
//! link graph (`links`) works the same way; `--save files` copies (`save`) are written by the
//! workers themselves, one file each. A reporter thread shows `progress` while workers run.

use crate::checksum::checksum;
use crate::dispatch::{Dispatcher, Ending};
use crate::due::{Due, DueConfig, DueStats};
use crate::extract::extract_links;
use crate::fetch::{FetchConfig, Fetched, Fetcher};
use crate::frontier::{Entry, Frontier};
use crate::links::LinkLog;
use crate::normalize::{Filter, Rejection, canonicalize};
use crate::politeness::{DelayRule, Scheduler, Work};
use crate::progress::{self, Gauges};
use crate::robots::RobotsRules;
use crate::urllog::{LogLine, UrlLog};
use crate::warc::{Exchange, WarcConfig, WarcStats, WarcWriter};
use anyhow::{Context, Result, anyhow};
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{SyncSender, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};
use url::Url;

/// A redirect chain longer than this is abandoned (its last target is not followed).
pub const MAX_REDIRECTS: u32 = 10;
/// Links read from one page at most.
const MAX_LINKS_PER_PAGE: usize = 20_000;

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
    pub due: DueConfig,
    /// Where responses are archived; `None` with `--no-warc`.
    pub warc: Option<WarcConfig>,
    /// Where `--save files` writes HTML pages (`DIR/pages`); `None` without it.
    pub pages: Option<PathBuf>,
    /// How progress is shown while the crawl runs.
    pub progress: progress::Mode,
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
}

/// Runs a crawl to its end. `stop` is raised by a signal handler.
pub fn run(config: CrawlConfig, log: &UrlLog, stop: &AtomicBool) -> Result<Report> {
    let started = Instant::now();
    // First, so that an unusable WARC directory stops the crawl before anything else starts.
    let archive = match &config.warc {
        Some(warc) => Some(Archive::start(warc.clone(), config.workers)?),
        None => None,
    };
    let links = LinkLog::start(&config.out, config.workers.clamp(4, 256))?;
    let frontier = Frontier::open(&config.out.join("frontier"))?;
    let queue_limit = (config.workers * 16).max(1024);
    let dispatcher = Arc::new(Dispatcher::new(
        frontier,
        Scheduler::new(config.delay),
        queue_limit,
        config.max_pages,
    ));
    let sink_dispatcher = Arc::clone(&dispatcher);
    let wake_dispatcher = Arc::clone(&dispatcher);
    let due = Due::open_with_notify(
        &config.out,
        config.due,
        Box::new(move |novel| sink_dispatcher.push_novel(novel)),
        Box::new(move || wake_dispatcher.wake_all()),
    )?;
    let counters = Arc::new(Counters::default());
    due.offer(config.seeds.iter().map(|url| {
        (
            checksum(url.as_str().as_bytes()),
            Entry {
                depth: 0,
                redirects: 0,
                url: url.to_string(),
            },
        )
    }))?;
    due.flush()?;

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
    };
    let stop_or_closed = AtomicBool::new(false);
    let (done, done_signal) = std::sync::mpsc::channel::<()>();
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
    // The writers' own errors come first: they explain a worker's "the … writer stopped".
    let warc = archive.map(Archive::finish).transpose()?;
    links.finish()?;
    result?;
    let due_stats = due.finish()?;
    let dispatcher = Arc::into_inner(dispatcher).context("the dispatcher is still shared")?;
    let (ending, frontier_left, robots_blocked) = dispatcher.close()?;
    Ok(Report {
        ending,
        elapsed: started.elapsed(),
        counters,
        due: due_stats,
        frontier_left,
        robots_blocked,
        warc,
    })
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
            if stop.load(Ordering::Relaxed) || self.log.is_closed() {
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
                Work::Page { host, entry } => {
                    let elapsed = self.fetch_page(&entry)?;
                    self.dispatcher.page_done(host, elapsed);
                }
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
                let elapsed = response.elapsed;
                // After redirects, the record is of the URL that answered.
                let answered = response.final_url.clone();
                self.archive(answered.as_deref().unwrap_or(url), response)?;
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
                (RobotsRules::unreachable(token), e.elapsed)
            }
        })
    }

    /// Fetches one page, logs it, and offers what it links to (or redirects to) to the DUE.
    /// Returns the response time for the politeness rule.
    fn fetch_page(&self, entry: &Entry) -> Result<Duration> {
        self.counters.pages.fetch_add(1, Ordering::Relaxed);
        let response = match self.fetcher.get(&entry.url) {
            Ok(response) => response,
            Err(e) => {
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
                return Ok(e.elapsed);
            }
        };
        let class = (response.status / 100).clamp(0, 5) as usize;
        self.counters.by_class[class].fetch_add(1, Ordering::Relaxed);
        self.counters
            .bytes
            .fetch_add(response.body.len() as u64, Ordering::Relaxed);
        let page_url = Url::parse(&entry.url).context("a frontier URL does not parse")?;
        let mut found = Vec::new();
        let mut links_from = None;
        let mut note = String::new();
        if (300..400).contains(&response.status) {
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
            found = self.links_of(&body, &response, &page_url, entry.depth + 1);
            links_from = Some(entry.url.as_str());
            if let Some(pages) = &self.config.pages {
                crate::save::save(pages, &page_url, &body)
                    .with_context(|| format!("saving {} under {}", entry.url, pages.display()))?;
            }
        }
        if response.truncated {
            self.counters.truncated.fetch_add(1, Ordering::Relaxed);
            if note.is_empty() {
                note = "truncated".into();
            }
        }
        self.log_response(&response, entry.depth, &entry.url, &note);
        self.offer(found, links_from)?;
        let elapsed = response.elapsed;
        self.archive(&entry.url, response)?;
        Ok(elapsed)
    }

    /// Hands a response to the WARC writer thread (if archiving), body moved, not copied.
    fn archive(&self, target_uri: &str, response: Fetched) -> Result<()> {
        let Some(archive) = self.archive else {
            return Ok(());
        };
        archive.write(ArchiveRecord {
            target_uri: target_uri.to_owned(),
            date: response.started,
            ip: response.ip,
            request_head: response.request_head,
            response_head: response.response_head,
            body: response.body,
            truncated: response.truncated,
        })
    }

    fn links_of(&self, body: &[u8], response: &Fetched, page_url: &Url, depth: u32) -> Vec<Found> {
        let extracted = extract_links(body, page_url, response.charset(), MAX_LINKS_PER_PAGE);
        self.counters
            .links
            .fetch_add(extracted.links.len() as u64, Ordering::Relaxed);
        extracted
            .links
            .into_iter()
            .map(|url| Found {
                url,
                depth,
                redirects: 0,
            })
            .collect()
    }

    /// Canonicalizes and filters discovered URLs, records them in the link graph as links of
    /// `from` (a page; `None` for a redirect), then offers the wanted ones to the DUE.
    fn offer(&self, found: Vec<Found>, from: Option<&str>) -> Result<()> {
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
                    let entry = Entry {
                        depth,
                        redirects,
                        url: url.into(),
                    };
                    wanted.push((checksum(entry.url.as_bytes()), entry));
                }
                Err(reason) => {
                    self.counters.filtered[reason as usize].fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        if let Some(from) = from {
            self.links
                .write(from, wanted.iter().map(|(_, e)| e.url.as_str()))?;
        }
        self.due.offer(wanted)
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

/// A URL found in a page or a Location header, not yet canonicalized or filtered. It stays a
/// parsed `Url` until then, so each link is parsed once.
struct Found {
    url: Url,
    depth: u32,
    redirects: u32,
}

/// One exchange for the archive, owned so that it can cross to the writer thread.
struct ArchiveRecord {
    target_uri: String,
    date: SystemTime,
    ip: Option<IpAddr>,
    request_head: Vec<u8>,
    response_head: Vec<u8>,
    body: Vec<u8>,
    truncated: bool,
}

/// The WARC writer thread: workers queue records, one thread owns the `WarcWriter`.
///
/// The queue holds at most one record per worker (at least 4, at most 256), so a slow disk
/// slows the workers down instead of filling memory with bodies: at most about twice the
/// bodies the workers hold anyway.
struct Archive {
    sender: SyncSender<ArchiveRecord>,
    writer: JoinHandle<Result<WarcStats>>,
}

impl Archive {
    /// Opens the archive (repairing what a crash left) on this thread, so that a bad WARC
    /// directory fails the crawl before anything is fetched, then starts the writer.
    fn start(config: WarcConfig, workers: usize) -> Result<Archive> {
        let dir = config.dir.clone();
        let mut warc = WarcWriter::open(config)
            .with_context(|| format!("opening the WARC archive in {}", dir.display()))?;
        let (sender, records) = sync_channel::<ArchiveRecord>(workers.clamp(4, 256));
        let writer = std::thread::Builder::new()
            .name("warc".into())
            .spawn(move || {
                // On an error the receiver is dropped, so workers see the writer stop; the
                // file being written stays `.open` and the next run repairs it.
                for r in records {
                    let exchange = Exchange {
                        target_uri: &r.target_uri,
                        date: r.date,
                        ip: r.ip,
                        request_head: &r.request_head,
                        response_head: &r.response_head,
                        response_body: &r.body,
                        truncated: r.truncated.then_some("length"),
                    };
                    warc.write_exchange(&exchange)
                        .with_context(|| format!("archiving {}", r.target_uri))?;
                }
                warc.finish()
            })
            .context("starting the WARC writer thread")?;
        Ok(Archive { sender, writer })
    }

    /// Queues a record, waiting while the queue is full.
    fn write(&self, record: ArchiveRecord) -> Result<()> {
        self.sender
            .send(record)
            .map_err(|_| anyhow!("the WARC writer stopped"))
    }

    /// Writes what is queued, closes the last file and returns what was written, or the error
    /// that stopped the writer.
    fn finish(self) -> Result<WarcStats> {
        drop(self.sender);
        self.writer
            .join()
            .map_err(|_| anyhow!("the WARC writer panicked"))?
            .context("writing the WARC archive")
    }
}
