//! One worker: takes work from the dispatcher, fetches it, and hands the results on.
//!
//! A page goes through these steps (`crawl_page`):
//! 0. During a recrawl, a page this recrawl's sitemaps date (`lastmod`) before its previous
//!    fetch, or one `--recrawl-budget` leaves out, is not asked for (`not_asked_again`, see
//!    `recrawl::not_asked`).
//! 1. `request`: the GET, conditional during a recrawl. A failure is a URL-log line, not an
//!    error.
//! 2. A 429/503 with a usable wait, or a 502/504 or a fetch without an answer (timeout,
//!    refused, reset, closed) while its `--retries` last, goes back to the front of its host's
//!    queue, the host resting the wait (`fetch::retry`); only its URL-log line is written (and
//!    a response archived). A page is counted once, at its first attempt, however often it is
//!    asked again; a host that keeps failing is parked, then held unreachable
//!    (`schedule::politeness`).
//! 3. The host is freed: the delay rule counts from the response, and nothing below holds it.
//!    Outside a recrawl, this worker is handed its next page now (`Dispatcher::host_free_or_next`):
//!    the host's own when it needs no rest (`--delay-factor 0`), else a ready host's. The worker
//!    fetches it right after this one's steps, without a hand-over to another worker; its
//!    request is sent at once on its host's kept connection (`Fetcher::send_ahead`), so the
//!    server works on it while this page is processed, and its response is read then
//!    (`Fetcher::finish`).
//! 4. The page is built once (`crawl::page::Page`): its body decoded on first use, for every
//!    reader. `discover`: its links, from its source (`crawl::links::Source`): a redirect's
//!    target, an HTML page's links or a stylesheet's, page-level robots directives obeyed; a
//!    URL fetched only as a page requisite is noted so, and leads only to requisites.
//! 5. Its note (`Note`), digests, recrawl outcome and revisit are decided, and its links
//!    offered to the DUE (`offer`).
//! 6. The page sinks (`crawl::sinks`) take it in order: the URL log, `fetched.tsv`,
//!    `--save files`, `--find`.
//! 7. The archive takes it by move (`archive_page`), and the page is done once it is written
//!    (see `dispatch::Dispatcher::entry_done`).
//!
//! A sitemap (`Entry::sitemap`) takes the path of `crawl::sitemaps` instead.
//!
//! Only failures of the state directory (the archive included) are errors; they stop the crawl.

use crate::crawl::config::CrawlConfig;
use crate::crawl::counters::Counters;
use crate::crawl::links::{Discovered, LinkReader, Links, Source, redirect};
use crate::crawl::note::Note;
use crate::crawl::offer::Wanted;
use crate::crawl::page::Page;
use crate::crawl::sinks::PageSinks;
use crate::fetch::body::Skipped;
use crate::fetch::client::{
    FetchError, Fetcher, ROBOTS_REDIRECTS, Response, Sent, redirect_target,
};
use crate::fetch::error::{ErrorKind, Fail};
use crate::fetch::reactor::{Answer, Reactor};
use crate::fetch::retry::{self, MAX_RETRIES};
use crate::frontier::{Entry, Previous};
use crate::output::archive::{Archive, ArchiveRecord, PageRecord};
use crate::output::digest;
use crate::output::links::LinkLog;
use crate::output::urllog::{LogLine, UrlLog};
use crate::output::warc::Revisit;
use crate::recrawl::budget::RecrawlBudget;
use crate::recrawl::{self, FetchLog, Generation, Lastmods, Outcome};
use crate::schedule::dispatch::Dispatcher;
use crate::schedule::dispatch::NotAsked;
use crate::schedule::politeness::Fate;
use crate::schedule::politeness::Reply;
use crate::schedule::politeness::Work;
use crate::schedule::robots::RobotsRules;
use crate::schedule::robotstore::RobotsStore;
use crate::seen::due::Due;
use crate::url::normalize::LinkKind;
use anyhow::Result;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use url::Url;

/// What every worker thread shares (the configuration, the stages it feeds, the outputs); each
/// thread runs `WorkerContext::run`, and a page's steps are its methods.
pub struct WorkerContext<'a> {
    pub config: &'a CrawlConfig,
    pub fetcher: &'a Fetcher,
    pub due: &'a Due<Entry>,
    pub dispatcher: &'a Dispatcher,
    /// Where robots.txt answers are kept (`schedule::robotstore`).
    pub robots: &'a RobotsStore,
    pub counters: &'a Counters,
    pub log: &'a UrlLog,
    pub archive: Option<&'a Archive>,
    /// The link graph (`links.tsv`); `None` without `--link-graph`.
    pub links: Option<&'a LinkLog>,
    pub fetched: &'a FetchLog,
    /// A recrawl's sitemap `lastmod`s (`recrawl::Lastmods`).
    pub lastmods: &'a Lastmods,
    /// The near-duplicate index (`--near-duplicates`; `None` when off).
    pub near_dup_index: Option<&'a crate::seen::neardup::NearDupIndex>,
    /// A recrawl's `--recrawl-budget` (`recrawl::budget`).
    pub budget: Option<&'a RecrawlBudget>,
    /// Where each answered page goes after its links are offered (`crawl::sinks`).
    pub sinks: &'a PageSinks<'a>,
    /// The reactor HTTP(S) requests go to (`fetch::reactor`), their answers processed by
    /// `process`; None: every request blocks its worker.
    pub reactor: Option<&'a Reactor<Fetching>>,
}

/// What a request handed to the reactor is for, carried back with its answer.
pub enum Fetching {
    /// A page of `host`.
    Page { host: usize, entry: Entry },
    /// `host`'s robots.txt, at `url`; `hop` once a redirect of it is followed.
    Robots {
        host: usize,
        url: String,
        hop: Option<RobotsHop>,
    },
}

/// A robots.txt's redirect followed through the reactor: the answer will be the robots.txt's.
pub struct RobotsHop {
    /// Redirects followed so far (RFC 9309 §2.3.1.2: at least five are followed).
    redirects: u32,
    /// When the robots.txt's first request started (its record's date).
    started: SystemTime,
}

/// How a recrawl's unchanged page is archived: a `revisit` of its previous capture (a 304's
/// as not modified, else as an identical payload); `None` for any other page.
fn revisit_of(page: &Page) -> Option<Revisit> {
    let previous = page.entry.previous.as_ref()?;
    if page.outcome != Some(Outcome::Unchanged) {
        return None;
    }
    let refers_to_date = UNIX_EPOCH + Duration::from_secs(previous.date);
    Some(match page.response.status {
        304 => Revisit::NotModified { refers_to_date },
        _ => Revisit::IdenticalPayload {
            digest: page.digest.clone(),
            refers_to_date,
        },
    })
}

/// A job `Fetcher::reactor_job` declined although the worker checked it would take it.
fn unreachable_job() -> ! {
    unreachable!("the reactor takes HTTP(S) URLs without a proxy")
}

/// Whether `url` is one the reactor takes (without a proxy).
fn is_http_or_https(url: &str) -> bool {
    url.starts_with("http:") || url.starts_with("https:")
}

/// Where `begin_page` left a page.
enum Begun {
    /// Its request is the reactor's; its answer comes to `process`.
    Submitted,
    /// Not asked for (`before_fetch`): finished.
    Done,
    /// Not for the reactor: crawled by this thread.
    Blocking(usize, Entry),
    /// Failed before a request (its URL, a name, an address refused): its URL if parsed.
    Failed(usize, Entry, Option<Url>, FetchError),
}

/// How a page fetch ended, for the dispatcher.
pub(super) enum PageOutcome {
    /// Done, whatever the status (the host was freed when the response arrived).
    Done,
    /// 429 or 503 (`transient` false), or 502/504 (true): the host rests and the page is
    /// asked for again at `at`.
    Retry {
        elapsed: Duration,
        at: Instant,
        transient: bool,
    },
    /// Back in its host's queue already (no answer: `Dispatcher::page_failed`); not finished.
    PutBack,
}

/// The page handed to the worker that just received its previous one: the same host's next,
/// or the first ready host's (`Dispatcher::host_free_or_next`; not while the crawl stops:
/// `schedule::stop`).
struct Chain {
    /// The request for the page being crawled, if it was sent ahead.
    sent: Option<Sent>,
    /// The next page for this worker, its host, and its request if sent ahead.
    next: Option<(usize, Entry, Option<Sent>)>,
    /// With the reactor: the next page, handed to it (or failed, or not asked for) while
    /// this one is processed.
    begun: Option<Begun>,
}

impl Chain {
    fn new(sent: Option<Sent>) -> Chain {
        Chain {
            sent,
            next: None,
            begun: None,
        }
    }

    /// What follows the page just done: the next page, if any, to crawl here or answered.
    fn step(&mut self) -> Step {
        match self.begun.take() {
            Some(Begun::Submitted) => Step::Finished(false),
            Some(Begun::Done) => Step::Finished(true),
            Some(Begun::Blocking(host, entry)) => Step::Crawl(host, entry, None),
            Some(Begun::Failed(host, entry, url, e)) => Step::Failed(host, entry, url, e),
            None => match self.next.take() {
                Some((host, entry, sent)) => Step::Crawl(host, entry, sent),
                None => Step::Finished(true),
            },
        }
    }
}

/// What follows a page done (`Chain::step`): a value of the moment, moved once, never kept.
#[allow(clippy::large_enum_variant)]
enum Step {
    /// No page chained to it here: whether the last is finished.
    Finished(bool),
    /// The next page, to crawl here (its request sent ahead, or not).
    Crawl(usize, Entry, Option<Sent>),
    /// The next page failed before its request.
    Failed(usize, Entry, Option<Url>, FetchError),
}

impl WorkerContext<'_> {
    /// Works until the dispatcher says the crawl is over; an error stops every worker.
    pub fn run(&self) -> Result<()> {
        let result = self.work();
        if let Err(e) = &result {
            self.dispatcher.fail(e);
        }
        result
    }

    fn work(&self) -> Result<()> {
        // The last page given is finished: told to the dispatcher with the next request.
        let mut finished = false;
        loop {
            let not_asked = |entry: &Entry, why: NotAsked| {
                let note = match why {
                    NotAsked::HostBudget => Note::HostBudget,
                    NotAsked::HostUnreachable => Note::HostUnreachable,
                };
                self.log_not_asked(entry, note);
            };
            let next = self.dispatcher.next_work(self.due, finished, &not_asked)?;
            finished = false;
            let Some(work) = next else {
                return Ok(());
            };
            match work {
                Work::Robots { host, url } => self.start_robots(host, url)?,
                Work::Page { host, entry } => {
                    finished = self.start_page(host, entry)?;
                }
            }
        }
    }

    /// A robots.txt fetch: handed to the reactor when it takes it, else fetched here.
    fn start_robots(&self, host: usize, url: String) -> Result<()> {
        if let Some(reactor) = self.reactor
            && self.reactor_takes(&url)
            && let Ok(parsed) = Url::parse(&url)
        {
            self.robots_asked(&url);
            let token = Fetching::Robots {
                host,
                url,
                hop: None,
            };
            match self.fetcher.reactor_job(token, parsed, &[], false) {
                Some(Ok(job)) => reactor.submit(job),
                Some(Err(answer)) => self.process((answer.0, answer.1, Err(answer.2)))?,
                // Through a proxy: fetched here.
                None => unreachable_job(),
            }
            return Ok(());
        }
        if let Some((rules, reply)) = self.fetch_robots(host, &url)? {
            self.dispatcher.robots_done(host, rules, reply);
        }
        Ok(())
    }

    /// A page: handed to the reactor when it takes it (then not finished here: its answer
    /// is, in `process`), else crawled here with the pages chained to it. Whether it is
    /// finished.
    fn start_page(&self, host: usize, entry: Entry) -> Result<bool> {
        match self.begin_page(host, entry)? {
            Begun::Submitted => Ok(false),
            Begun::Done => Ok(true),
            Begun::Blocking(host, entry) => self.crawl_chain(host, entry),
            Begun::Failed(host, entry, url, e) => self.page_answered(host, entry, url, Err(e)),
        }
    }

    /// A page's request handed to the reactor, if it takes it (see `Begun`).
    fn begin_page(&self, host: usize, entry: Entry) -> Result<Begun> {
        let Some(reactor) = self.reactor.filter(|_| self.for_reactor(&entry)) else {
            return Ok(Begun::Blocking(host, entry));
        };
        // A sitemap is asked for as `crawl_sitemap` asks: no page's bookkeeping, no
        // conditional request.
        let conditional = match entry.sitemap {
            Some(_) => {
                self.sitemap_asked();
                Vec::new()
            }
            None => {
                if self.before_fetch(host, &entry)? {
                    return Ok(Begun::Done);
                }
                (entry.previous.as_ref())
                    .map(recrawl::conditional_headers)
                    .unwrap_or_default()
            }
        };
        let url = match crate::fetch::client::parse(&entry.url) {
            Ok(url) => url,
            Err(e) => return Ok(Begun::Failed(host, entry, None, e)),
        };
        let token = Fetching::Page { host, entry };
        Ok(
            match self.fetcher.reactor_job(token, url, &conditional, true) {
                Some(Ok(job)) => {
                    reactor.submit(job);
                    Begun::Submitted
                }
                Some(Err((Fetching::Page { host, entry }, url, e))) => {
                    Begun::Failed(host, entry, Some(url), e)
                }
                _ => unreachable_job(),
            },
        )
    }

    /// Whether a page (or a sitemap) goes to the reactor (`reactor_takes`).
    fn for_reactor(&self, entry: &Entry) -> bool {
        self.reactor_takes(&entry.url)
    }

    /// Whether a request for `url` goes to the reactor: HTTP(S), no proxy.
    fn reactor_takes(&self, url: &str) -> bool {
        is_http_or_https(url) && self.config.fetch.proxy.is_none()
    }

    /// The reactor's answer to a request: the steps after the fetch, as a worker that fetched
    /// it would take them. An error stops the crawl (`Dispatcher::fail`).
    pub fn process(&self, answer: Answer<Fetching>) -> Result<()> {
        let (token, url, fetched) = answer;
        let result = match token {
            Fetching::Robots {
                host,
                url: robots,
                hop,
            } => {
                let Some(fetched) = self.robots_hop(host, robots.clone(), hop, url, fetched)?
                else {
                    return Ok(());
                };
                match self.robots_answered(host, &robots, fetched) {
                    Ok(Some((rules, reply))) => {
                        self.dispatcher.robots_done(host, rules, reply);
                        Ok(())
                    }
                    Ok(None) => Ok(()),
                    Err(e) => Err(e),
                }
            }
            Fetching::Page { host, entry } => self
                .page_answered(host, entry, Some(url), fetched)
                .map(|finished| {
                    if finished {
                        self.dispatcher.work_finished();
                    }
                }),
        };
        if let Err(e) = &result {
            self.dispatcher.fail(e);
        }
        result
    }

    /// A robots.txt's answer from the reactor, `fetched` from `url`: a redirect (to five in
    /// all, to http(s), which the reactor takes) is asked for through the reactor, so no
    /// processing thread waits for its answer (None: it comes back here), nor for the look-up
    /// of a name not seen before (its job waits for it in the loop: `fetch::reactor`).
    /// The robots.txt's answer is the last one, noted with the URL that gave it (its record is
    /// of that URL) and dated from the first request.
    fn robots_hop(
        &self,
        host: usize,
        robots: String,
        hop: Option<RobotsHop>,
        url: Url,
        fetched: Result<Response, FetchError>,
    ) -> Result<Option<Result<Response, FetchError>>> {
        let redirects = hop.as_ref().map_or(0, |hop| hop.redirects);
        let mut response = match fetched {
            Ok(response) => response,
            Err(e) => return Ok(Some(Err(e))),
        };
        let started = hop.as_ref().map_or(response.started, |hop| hop.started);
        let to = redirect_target(&url, &response, redirects, ROBOTS_REDIRECTS);
        let Some(to) = to else {
            if hop.is_some() {
                response.final_url = Some(url.into());
                response.started = started;
            }
            return Ok(Some(Ok(response)));
        };
        let Some(reactor) = self.reactor else {
            unreachable!("answers come from the reactor")
        };
        let hop = Some(RobotsHop {
            redirects: redirects + 1,
            started,
        });
        let token = Fetching::Robots {
            host,
            url: robots,
            hop,
        };
        match self.fetcher.reactor_job(token, to, &[], false) {
            Some(Ok(job)) => {
                if let Err(job) = reactor.try_submit(job) {
                    // The loop ended (the crawl stops): the redirect is not followed, and the
                    // robots.txt goes unanswered, asked for again by a resumed crawl.
                    let stopped =
                        Fail::new(ErrorKind::Io, "redirect not followed: the crawl stopped");
                    let e = stopped.into_error(job.start);
                    let job = *job;
                    self.process((job.token, job.url, Err(e)))?;
                }
            }
            Some(Err(answer)) => self.process((answer.0, answer.1, Err(answer.2)))?,
            None => unreachable_job(),
        }
        Ok(None)
    }

    /// A page's answer (its URL parsed, unless that failed): its steps, then the pages chained
    /// to it, as `crawl_chain` takes them. Whether the last is finished.
    fn page_answered(
        &self,
        mut host: usize,
        mut entry: Entry,
        mut url: Option<Url>,
        mut fetched: Result<Response, FetchError>,
    ) -> Result<bool> {
        loop {
            let mut chain = Chain::new(None);
            let page = fetched.and_then(|response| match url.take() {
                Some(url) => Ok((url, response)),
                None => crate::fetch::client::parse(&entry.url).map(|url| (url, response)),
            });
            let outcome = match entry.sitemap {
                Some(_) => self.sitemap_answered(host, &entry, page.map(|(_, response)| response)),
                None => self.after_fetch(host, &entry, page, &mut chain),
            };
            match outcome? {
                PageOutcome::Done => match chain.step() {
                    Step::Finished(finished) => return Ok(finished),
                    Step::Crawl(next_host, next, None) => match self.begin_page(next_host, next)? {
                        Begun::Submitted => return Ok(false),
                        Begun::Done => return Ok(true),
                        Begun::Blocking(next_host, next) => {
                            return self.crawl_chain(next_host, next);
                        }
                        Begun::Failed(next_host, next, next_url, e) => {
                            (host, entry, url, fetched) = (next_host, next, next_url, Err(e));
                        }
                    },
                    Step::Crawl(next_host, next, sent) => {
                        return self.crawl_chain_from(next_host, next, sent);
                    }
                    Step::Failed(next_host, next, next_url, e) => {
                        (host, entry, url, fetched) = (next_host, next, next_url, Err(e));
                    }
                },
                outcome => return Ok(self.not_done(host, entry, outcome)),
            }
        }
    }

    /// A page not done (`PageOutcome::Retry` told to the dispatcher, or put back): never
    /// finished here.
    fn not_done(&self, host: usize, entry: Entry, outcome: PageOutcome) -> bool {
        if let PageOutcome::Retry {
            elapsed,
            at,
            transient,
        } = outcome
        {
            let entry = match transient {
                true => Entry {
                    failures: entry.failures + 1,
                    ..entry
                },
                false => Entry {
                    retries: entry.retries + 1,
                    ..entry
                },
            };
            let reply = Reply::retry_at(elapsed, Some(at));
            self.dispatcher.page_retry(host, entry, reply, !transient);
        }
        false
    }

    /// A page, then each next page handed to this worker as it frees the host (`free_host`).
    /// Whether the last one is finished (not to be asked for again, as a retry is).
    fn crawl_chain(&self, host: usize, entry: Entry) -> Result<bool> {
        self.crawl_chain_from(host, entry, None)
    }

    /// `crawl_chain`, the first page's request sent ahead (`sent`) or not.
    fn crawl_chain_from(
        &self,
        mut host: usize,
        mut entry: Entry,
        mut sent: Option<Sent>,
    ) -> Result<bool> {
        loop {
            let mut chain = Chain::new(sent.take());
            match self.crawl(host, &entry, &mut chain)? {
                PageOutcome::Done => match chain.step() {
                    Step::Finished(finished) => return Ok(finished),
                    // This worker was handed its next page (its request probably answered by
                    // now): straight on to it.
                    Step::Crawl(next_host, next, next_sent) => {
                        (host, entry, sent) = (next_host, next, next_sent);
                    }
                    Step::Failed(next_host, next, url, e) => {
                        return self.page_answered(next_host, next, url, Err(e));
                    }
                },
                outcome => return Ok(self.not_done(host, entry, outcome)),
            }
        }
    }

    /// Frees the page's host and, outside a recrawl, takes this worker's next page now, the
    /// host's own or a ready host's (`Dispatcher::host_free_or_next`).
    fn free_host(&self, host: usize, reply: Reply, chain: &mut Chain) -> Result<()> {
        if self.config.generation == Generation::Recrawl {
            self.dispatcher.host_free(host, reply);
            return Ok(());
        }
        let Some((next_host, next)) = self.dispatcher.host_free_or_next(host, reply)? else {
            return Ok(());
        };
        // The reactor takes every page (http(s), no proxy: without a proxy it runs); a thread
        // that processes its answers never blocks on a fetch.
        debug_assert!(self.reactor.is_none() || self.for_reactor(&next));
        self.counters.pages_ahead.fetch_add(1, Ordering::Relaxed);
        // With the reactor, its request goes there now, while this page is processed. Its
        // answer may be processed by another thread before this page's links are offered:
        // it takes a place in flight of its own, so that the end is not declared in between.
        // Not sent (not asked for, or failed at once), it is this thread's next page, and
        // holds this page's place (`Chain::step`).
        if self.reactor.is_some() {
            self.dispatcher.work_started();
            match self.begin_page(next_host, next)? {
                Begun::Submitted => {
                    self.counters.requests_ahead.fetch_add(1, Ordering::Relaxed);
                }
                begun => {
                    self.dispatcher.work_finished();
                    chain.begun = Some(begun);
                }
            }
            return Ok(());
        }
        // Its request goes now, on its host's kept connection (the one just used, for the same
        // host), while this page is processed.
        let sent = match next.sitemap {
            None => crate::fetch::client::parse(&next.url)
                .ok()
                .and_then(|url| self.fetcher.send_ahead(url)),
            Some(_) => None,
        };
        if sent.is_some() {
            self.counters.requests_ahead.fetch_add(1, Ordering::Relaxed);
        }
        chain.next = Some((next_host, next, sent));
        Ok(())
    }

    /// A page, or a sitemap (`crawl::sitemaps`).
    fn crawl(&self, host: usize, entry: &Entry, chain: &mut Chain) -> Result<PageOutcome> {
        match entry.sitemap {
            Some(_) => self.crawl_sitemap(host, entry),
            None => self.crawl_page(host, entry, chain),
        }
    }

    /// Fetches, logs and archives a robots.txt, and offers the sitemaps it leads to: its rules,
    /// or None when it did not answer (no response of a retried kind, or a 5xx) and is asked
    /// for again later (`Dispatcher::robots_unanswered`); after its last retry the rules are
    /// the unreachable ones (everything disallowed: the host is held unreachable). Only a
    /// failure of the state directory is an error.
    fn fetch_robots(&self, host: usize, url: &str) -> Result<Option<(RobotsRules, Reply)>> {
        self.robots_asked(url);
        let fetched = self.fetcher.get_robots(url);
        self.robots_answered(host, url, fetched)
    }

    /// A robots.txt is asked for: counted, and its seed host noted.
    fn robots_asked(&self, url: &str) {
        self.counters.robots_fetches.fetch_add(1, Ordering::Relaxed);
        self.config.seed_hosts.asked(url);
    }

    /// `fetch_robots` once its answer came.
    fn robots_answered(
        &self,
        host: usize,
        url: &str,
        fetched: Result<Response, FetchError>,
    ) -> Result<Option<(RobotsRules, Reply)>> {
        let token = &self.config.robots_token;
        // No answer worth keeping: asked again while its retries last.
        let unanswered = match &fetched {
            Ok(response) => (response.status >= 500).then_some((false, response.elapsed)),
            Err(e) => e.kind.is_retried().then_some((true, e.elapsed)),
        };
        let retry = unanswered.and_then(|(connection_level, elapsed)| {
            (self.dispatcher).robots_unanswered(host, elapsed, connection_level)
        });
        if retry.is_some() {
            self.counters.retried.fetch_add(1, Ordering::Relaxed);
        }
        // The note of a robots.txt line: `first` as it is, or with its retry.
        let noted = |first: Note| match (retry, unanswered) {
            (Some(wait), _) => Note::Retrying(Box::new(first), wait),
            (None, Some(_)) if self.config.retry.retries > 0 => Note::Exhausted(Box::new(first)),
            _ => first,
        };
        Ok(match fetched {
            // Refused before any packet: no rules to read, and the host's pages are each
            // refused (and logged) in their turn. Not saved: a resume with --allow-private asks.
            Err(e) if e.kind == ErrorKind::PrivateAddress => {
                self.config.seed_hosts.refused(url, &e.message);
                self.log_error(&e, 0, url, &Note::Error(e.kind));
                self.counters
                    .private_refused
                    .fetch_add(1, Ordering::Relaxed);
                Some((
                    RobotsRules::from_response(token, 404, b""),
                    e.elapsed.into(),
                ))
            }
            Ok(response) => {
                self.config.seed_hosts.answered(url);
                self.log_response(&response, 0, url, &noted(Note::Robots));
                let rules = RobotsRules::from_response(token, response.status, &response.body);
                if retry.is_none() {
                    self.save_robots(url, response.status, &response.body)?;
                    self.offer_robots_sitemaps(url, &rules)?;
                }
                let reply = Reply::took(response.elapsed).answered_at(response.answered);
                // After redirects, the record is of the URL that answered.
                let answered = response.final_url.clone();
                self.archive(answered.as_deref().unwrap_or(url), response, None)?;
                retry.is_none().then_some((rules, reply))
            }
            Err(e) => {
                self.log_error(&e, 0, url, &noted(Note::Error(e.kind)));
                if retry.is_some() {
                    return Ok(None);
                }
                self.save_robots(url, 0, b"")?;
                Some((RobotsRules::unreachable(token), e.elapsed.into()))
            }
        })
    }

    /// Keeps a robots.txt answer for a resumed crawl (see `hoststate`).
    fn save_robots(&self, robots_url: &str, status: u16, body: &[u8]) -> Result<()> {
        let origin = robots_url.strip_suffix("/robots.txt").unwrap_or(robots_url);
        self.robots.save(origin, status, body)
    }

    /// One page, in the steps of the module doc.
    fn crawl_page(&self, host: usize, entry: &Entry, chain: &mut Chain) -> Result<PageOutcome> {
        if self.before_fetch(host, entry)? {
            return Ok(PageOutcome::Done);
        }
        let fetched = match chain.sent.take() {
            Some(sent) => self.fetcher.finish(sent),
            None => self.request(entry),
        };
        self.after_fetch(host, entry, fetched, chain)
    }

    /// A page's steps before its request (step 0 and its counts); true when it is not asked
    /// for (done already).
    fn before_fetch(&self, host: usize, entry: &Entry) -> Result<bool> {
        if self.config.generation == Generation::Recrawl
            && let Some((outcome, kept)) = recrawl::not_asked(self.budget, self.lastmods, entry)
        {
            self.dispatcher.host_free(host, Duration::ZERO);
            self.not_asked_again(entry, outcome, kept)?;
            return Ok(true);
        }
        if !entry.is_retry() {
            self.counters.pages.fetch_add(1, Ordering::Relaxed);
        }
        self.config.seed_hosts.asked(&entry.url);
        Ok(false)
    }

    /// A page's steps from its answer on (the module doc's 2 to 7).
    fn after_fetch(
        &self,
        host: usize,
        entry: &Entry,
        fetched: Result<(Url, Response), FetchError>,
        chain: &mut Chain,
    ) -> Result<PageOutcome> {
        let (page_url, response) = match fetched {
            Ok(fetched) => fetched,
            Err(e) if e.kind.is_connection_level() => return self.no_answer(host, entry, &e),
            Err(e) => {
                self.free_host(host, Reply::took(e.elapsed), chain)?;
                self.fetch_failed(entry, &e, Note::Error(e.kind))?;
                return Ok(PageOutcome::Done);
            }
        };
        self.config.seed_hosts.answered(&entry.url);
        let response = match self.unless_retried(entry, response)? {
            Ok(response) => response,
            Err(retry) => return Ok(retry),
        };
        // The host is free from here (or gave this worker its next page): what follows is
        // this worker's own work.
        let reply = Reply::took(response.elapsed).answered_at(response.answered);
        self.free_host(host, reply, chain)?;
        self.count(&response);
        let max_body = self.config.fetch.max_body;
        let mut page = Page::new(entry, page_url, response, max_body);
        page.requisite = (self.config.filter).fetched_as_requisite(&page.url, entry.depth);
        let discovered = self.discover(&page)?;
        page.note = self.note_of(&page, discovered.note);
        (page.digest, page.block_sha1) = self.page_digests(&page.response);
        page.outcome = (self.config.generation == Generation::Recrawl)
            .then(|| Outcome::of(entry.previous.as_ref(), page.response.status, &page.digest));
        if let Some(outcome) = page.outcome {
            self.counters.outcomes[outcome as usize].fetch_add(1, Ordering::Relaxed);
            page.note = page.note.merge(Note::Recrawl(outcome));
        }
        let duplicate = self.duplicate_of(&page)?;
        if duplicate.is_some() {
            page.note = page.note.merge(Note::Duplicate);
        }
        page.revisit = duplicate.or_else(|| revisit_of(&page));
        page.keep_content(self.config.text, self.config.markdown);
        let from = discovered.from.map(|topical| (entry.url.as_str(), topical));
        self.offer(discovered.links, from)?;
        self.sinks.take(&page)?;
        self.archive_page(page)?;
        Ok(PageOutcome::Done)
    }

    /// A page's note: what its links' source noted, and whether it was a requisite, truncated,
    /// not read (`--max-body`, `--reject-type`), or a 429/503/502/504 whose retries ran out
    /// (each counted).
    fn note_of(&self, page: &Page, links: Note) -> Note {
        let (entry, response) = (page.entry, &page.response);
        let mut note = links;
        if page.requisite {
            note = note.merge(Note::Requisite);
        }
        if response.truncated {
            self.counters.truncated.fetch_add(1, Ordering::Relaxed);
            note = note.merge(Note::Truncated);
        }
        if let Some(skipped) = response.skipped {
            let counter = match skipped {
                Skipped::Type => &self.counters.type_rejected,
                Skipped::TooLong => &self.counters.too_long,
            };
            counter.fetch_add(1, Ordering::Relaxed);
            note = note.merge(Note::Skipped(skipped));
        }
        if matches!(response.status, 429 | 503) {
            note = note.merge(match entry.retries >= MAX_RETRIES {
                true => Note::RetriesExhausted,
                false => Note::RetryAfterTooLong,
            });
        }
        if retry::is_transient_status(response.status) && entry.failures > 0 {
            note = note.merge(Note::RetriesExhausted);
        }
        note
    }

    /// The response, or, for a 429/503 with a usable wait or a 502/504 with retries left, the
    /// retry it leads to (the response is then logged and archived here, and the host rests
    /// until the retry).
    pub(super) fn unless_retried(
        &self,
        entry: &Entry,
        response: Response,
    ) -> Result<Result<Response, PageOutcome>> {
        let transient = retry::is_transient_status(response.status);
        let wait = match transient {
            true => self.config.retry.wait(entry.failures),
            false => retry::wait(
                response.status,
                response.header("retry-after"),
                entry.retries,
            ),
        };
        let Some(wait) = wait else {
            return Ok(Ok(response));
        };
        self.counters.retried.fetch_add(1, Ordering::Relaxed);
        let note = Note::RetryAfter(wait);
        self.log_response(&response, entry.depth, &entry.url, &note);
        let (elapsed, at) = (response.elapsed, Instant::now() + wait);
        self.archive(&entry.url, response, None)?;
        Ok(Err(PageOutcome::Retry {
            elapsed,
            at,
            transient,
        }))
    }

    /// A page that got no answer at all (a connection-level failure): asked for again after
    /// the transient schedule's wait while its retries last (a retried kind only), given up
    /// with its host if that is now held unreachable, else done as a failure
    /// (`Dispatcher::page_failed`, which frees the host).
    fn no_answer(&self, host: usize, entry: &Entry, e: &FetchError) -> Result<PageOutcome> {
        let wait = match e.kind.is_retried() {
            true => self.config.retry.wait(entry.failures),
            false => None,
        };
        let error = Note::Error(e.kind);
        let reply = Reply::retry_at(e.elapsed, wait.map(|wait| Instant::now() + wait));
        match self.dispatcher.page_failed(host, entry, reply) {
            // Noted with the page's own wait (the scheduler's is from a later clock read).
            Fate::Retry(_) => {
                let wait = wait.unwrap_or_default();
                self.counters.retried.fetch_add(1, Ordering::Relaxed);
                let note = Note::Retrying(Box::new(error), wait);
                self.log_error(e, entry.depth, &entry.url, &note);
                Ok(PageOutcome::PutBack)
            }
            Fate::HostUnreachable => {
                self.log_error(e, entry.depth, &entry.url, &error);
                Ok(PageOutcome::PutBack)
            }
            Fate::Done => {
                let note = match entry.failures > 0 {
                    true => Note::Exhausted(Box::new(error)),
                    false => error,
                };
                self.fetch_failed(entry, e, note)?;
                Ok(PageOutcome::Done)
            }
        }
    }

    /// The GET, with `If-None-Match` / `If-Modified-Since` when a previous crawl got the page.
    /// The page's URL is parsed here once, for the fetch and for its links (`discover`).
    fn request(&self, entry: &Entry) -> Result<(Url, Response), FetchError> {
        let url = crate::fetch::client::parse(&entry.url)?;
        let conditional = entry
            .previous
            .as_ref()
            .map(recrawl::conditional_headers)
            .unwrap_or_default();
        let response = self.fetcher.get_conditional(&url, &conditional)?;
        Ok((url, response))
    }

    /// No response: a URL-log line with `note`, and `fetched.tsv` keeps the last good capture
    /// as the one a recrawl compares with. The page is done (there is nothing to archive).
    fn fetch_failed(&self, entry: &Entry, e: &FetchError, note: Note) -> Result<()> {
        self.counters.by_class[0].fetch_add(1, Ordering::Relaxed);
        if e.kind == ErrorKind::PrivateAddress {
            self.config.seed_hosts.refused(&entry.url, &e.message);
            self.counters
                .private_refused
                .fetch_add(1, Ordering::Relaxed);
        }
        if e.kind.is_crawl_failure() {
            self.counters.failed.fetch_add(1, Ordering::Relaxed);
        }
        self.log_error(e, entry.depth, &entry.url, &note);
        let got = entry.previous.clone().unwrap_or_else(recrawl::no_capture);
        self.record_fetched(entry, got)?;
        self.dispatcher.entry_done(entry.key())
    }

    /// A recrawled page not asked for (`outcome`: its sitemap's `lastmod` says it is
    /// unchanged, or the budget put it off): a URL-log line with status 0 and the outcome's
    /// note, no WARC record, and `kept` (its previous capture) in `fetched.tsv` for the next
    /// recrawl.
    fn not_asked_again(&self, entry: &Entry, outcome: Outcome, kept: Previous) -> Result<()> {
        self.counters.outcomes[outcome as usize].fetch_add(1, Ordering::Relaxed);
        self.log_not_asked(entry, Note::Recrawl(outcome));
        self.record_fetched(entry, kept)?;
        self.dispatcher.entry_done(entry.key())
    }

    fn count(&self, response: &Response) {
        let class = (response.status / 100).clamp(0, 5) as usize;
        self.counters.by_class[class].fetch_add(1, Ordering::Relaxed);
        let body = response.body.len() as u64;
        let received = self.counters.bytes.fetch_add(body, Ordering::Relaxed) + body;
        // `--max-bytes`: no more work is handed out; the workers waiting see the stop.
        if (self.config.limits).bytes_reached(received, &self.config.stop) {
            self.dispatcher.wake_all();
        }
    }

    /// What the link sources read (`crawl::links::LinkReader`).
    fn link_reader(&self) -> LinkReader<'_> {
        let config = self.config;
        LinkReader {
            robots_token: &config.robots_token,
            obey_page_robots: config.obey_page_robots,
            near_duplicates: config.near_duplicates,
            focus: config.focus.as_deref(),
            counters: self.counters,
            near_dup_index: self.near_dup_index,
        }
    }

    /// The URLs a page leads to, from its source (`crawl::links`), and its note so far. A
    /// URL wanted only as a page requisite (`Page::requisite`) leads only to requisites: a
    /// stylesheet's links, a redirect's target; an HTML page's links are not followed.
    fn discover(&self, page: &Page) -> Result<Discovered> {
        Ok(match Source::of(&page.response, false) {
            Some(Source::Redirect) => {
                let mut found = redirect::discovered(page.entry, &page.url, &page.response);
                if page.requisite {
                    found.links.requisite = vec![true; found.links.urls.len()];
                    found.links.requisite_kind = LinkKind::Stylesheet;
                }
                found
            }
            Some(Source::Html) => {
                let mut found = self.link_reader().html_links(page);
                if page.requisite {
                    found.links = Links::default();
                }
                found
            }
            Some(Source::Css) => self.link_reader().css_links(page),
            Some(Source::Unread) => self.link_reader().unread(&page.response),
            Some(Source::Sitemap) => {
                unreachable!("a sitemap is read by WorkerContext::sitemap_answered")
            }
            None => Discovered::nothing(),
        })
    }

    /// Payload dedupe (`Archive::duplicate_of`): the revisit a page whose payload was archived
    /// before is written as. A recrawl's unchanged page only looks (it is a revisit anyway).
    fn duplicate_of(&self, page: &Page) -> Result<Option<Revisit>> {
        let Some(archive) = self.archive else {
            return Ok(None);
        };
        let response = &page.response;
        let whole_2xx = (200..300).contains(&response.status)
            && !response.truncated
            && response.skipped.is_none()
            && !response.body.is_empty();
        let claim = page.outcome != Some(Outcome::Unchanged);
        let (url, started) = (&page.entry.url, response.started);
        archive.duplicate_of(url, started, &page.digest, whole_2xx, claim)
    }

    pub(super) fn record_fetched(&self, entry: &Entry, got: Previous) -> Result<()> {
        self.fetched.record(&Entry {
            previous: Some(got),
            ..entry.clone()
        })
    }

    /// The response's payload digest and, if its record carries a block digest, the block's
    /// SHA-1, in one pass.
    pub(super) fn page_digests(&self, response: &Response) -> (String, Option<[u8; 20]>) {
        let (head, body) = (&response.response_head, &response.body);
        let block_digest = self.archive.is_some_and(|a| a.block_digests());
        digest::page_digests(block_digest, head, body)
    }

    /// The page's last step: to the WARC writer thread (if archiving), its body moved, with
    /// what its record needs; it is done once archived, or at once without an archive.
    fn archive_page(&self, page: Page) -> Result<()> {
        let record = PageRecord {
            key: page.entry.key(),
            payload_digest: page.digest,
            block_sha1: page.block_sha1,
            revisit: page.revisit,
            text: page.text_kept,
        };
        self.archive(&page.entry.url, page.response, Some(record))
    }

    /// Hands a response to the WARC writer thread (if archiving), body moved, not copied. A
    /// `page` is done once archived, or at once without an archive.
    pub(super) fn archive(
        &self,
        target_uri: &str,
        response: Response,
        page: Option<PageRecord>,
    ) -> Result<()> {
        let Some(archive) = self.archive else {
            crate::fetch::conn::recycle_body(response.body);
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
            truncated: match response.skipped {
                Some(skipped) => Some(skipped.warc_truncated()),
                None => response.truncated.then_some("length"),
            },
            page,
        })
    }

    /// Canonicalizes and filters discovered URLs, records them (with `--link-graph`) in the link
    /// graph as links of `from` (a page, and whether it matched `--focus`; `None` for a
    /// redirect), then offers the wanted ones to the DUE (with `--shard`, those this shard owns;
    /// the exchange sends the others to their shards).
    pub(super) fn offer(&self, found: Links, from: Option<(&str, bool)>) -> Result<()> {
        let Links {
            text,
            urls,
            order,
            depth,
            redirects,
            requisite,
            requisite_kind,
        } = found;
        let filter = &self.config.filter;
        let (order, found_at) = (order.as_deref(), (depth, redirects));
        let kinds = (&requisite[..], requisite_kind);
        // The graph holds a page's links (with --link-graph); a redirect's target is none.
        let graph = self.links.filter(|_| from.is_some());
        let wanted = Wanted::of(
            &text,
            urls,
            order,
            filter,
            found_at,
            kinds,
            self.counters,
            graph.is_some(),
        );
        let mut merge = false;
        if let Some((from, topical)) = from {
            if let Some(graph) = graph {
                graph.write(from, wanted.links())?;
            }
            let seen = || self.due.stats().stored;
            // The focus graph counts each target of a page once: the distinct URLs will do.
            merge = (self.config.focus.as_ref())
                .is_some_and(|focus| focus.record(from, topical, wanted.urls(), seen()));
        }
        // With --shard, URLs of other shards' hosts leave here (in their outboxes before the
        // page is done, as the DUE's are).
        match &self.config.exchange {
            Some(exchange) => {
                let mine = exchange.route(wanted.entries())?;
                let repeats = wanted.repeats_of(mine.iter().map(|(key, _)| key));
                self.due.offer_repeating(mine, repeats)?;
            }
            None => {
                let repeats = wanted.repeats.iter().map(|&n| u64::from(n)).sum();
                let keys = wanted.entries.iter().map(|(key, _)| *key);
                let encode = |i, out: &mut Vec<u8>| wanted.encode(i, out);
                self.due.offer_keys_repeating(keys, repeats, encode)?;
            }
        }
        if merge {
            // This worker waits for its topical links to reach the focus window before its
            // next fetch (the others go on), after a merge already running if need be: the
            // focus then orders by pages, not by how fast a merge runs on a loaded machine.
            self.due.merge_now()?;
        }
        Ok(())
    }

    pub(super) fn log_response(&self, response: &Response, depth: u32, url: &str, note: &Note) {
        let note = note.to_string();
        self.log.write(&LogLine {
            status: response.status,
            depth,
            bytes: response.body.len() as u64,
            millis: response.elapsed.as_millis(),
            content_type: response.header("content-type"),
            url,
            note: &note,
            text: None,
            meta: None,
            markdown: None,
        });
    }

    /// A URL not asked for: status 0 (no request was made), and why (`host-budget` when its
    /// host's `--max-pages-per-host` budget kept it, `lastmod` in a recrawl).
    fn log_not_asked(&self, entry: &Entry, note: Note) {
        let note = note.to_string();
        self.log.write(&LogLine {
            status: 0,
            depth: entry.depth,
            bytes: 0,
            millis: 0,
            content_type: None,
            url: &entry.url,
            note: &note,
            text: None,
            meta: None,
            markdown: None,
        });
    }

    /// A fetch without a response: status 0, noted with its error (and its retry, if any).
    pub(super) fn log_error(&self, e: &FetchError, depth: u32, url: &str, note: &Note) {
        let note = note.to_string();
        self.log.write(&LogLine {
            status: 0,
            depth,
            bytes: 0,
            millis: e.elapsed.as_millis(),
            content_type: None,
            url,
            note: &note,
            text: None,
            meta: None,
            markdown: None,
        });
    }
}
