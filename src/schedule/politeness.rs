//! The politeness scheduler: Mercator's back queues (survey §2.3.1).
//!
//! URLs leave the frontier into per-host queues (a host is host:port). A min-heap orders the
//! hosts that have work by the earliest instant they may be contacted again. A worker takes the
//! ready host, fetches one URL, and the host becomes ready again at
//! `now + delay_factor × response_time`, clamped to [min_delay, max_delay] and never earlier
//! than robots.txt's Crawl-delay. A host is busy while a worker holds it, so no host ever has
//! two requests in flight. Before a host's first page its robots.txt is fetched, through the same
//! queue and delay, and every URL is checked against it as it leaves the queue.
//!
//! This is a plain data structure: the caller owns locking, threads and the clock.

use crate::frontier::entry::Entry;
use crate::schedule::robots::RobotsRules;
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::{Duration, Instant};
use url::Url;

/// The delay rule's parameters.
#[derive(Clone, Copy, Debug)]
pub struct DelayRule {
    pub factor: f64,
    pub min: Duration,
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

/// A unit of work for one worker.
#[derive(Debug)]
pub enum Work {
    /// Fetch the host's robots.txt (`url`) and report it with `robots_done`.
    Robots { host: usize, url: String },
    /// Fetch a page and report with `page_done`.
    Page { host: usize, entry: Entry },
}

/// What the scheduler has for a worker right now.
#[derive(Debug)]
pub enum Next {
    Work(Work),
    /// Nothing is ready before this instant.
    WaitUntil(Instant),
    /// No host has queued work.
    Empty,
}

struct Host {
    origin: String,
    queue: VecDeque<Entry>,
    ready_at: Instant,
    busy: bool,
    /// In the ready heap (has work, not busy).
    scheduled: bool,
    robots: Option<(RobotsRules, Instant)>,
}

/// Per-host queues and the ready heap.
pub struct Scheduler {
    rule: DelayRule,
    hosts: Vec<Host>,
    by_key: FxHashMap<String, usize>,
    ready: BinaryHeap<Reverse<(Instant, usize)>>,
    queued: usize,
    /// URLs dropped because robots.txt disallows them (or could not be had).
    pub robots_blocked: u64,
}

impl Scheduler {
    pub fn new(rule: DelayRule) -> Scheduler {
        Scheduler {
            rule,
            hosts: Vec::new(),
            by_key: FxHashMap::default(),
            ready: BinaryHeap::new(),
            queued: 0,
            robots_blocked: 0,
        }
    }

    /// URLs waiting in host queues (the frontier holds the rest, on disk).
    pub fn queued(&self) -> usize {
        self.queued
    }

    /// Hosts known so far, and how many are in a worker's hands now.
    pub fn hosts(&self) -> (usize, usize) {
        (
            self.hosts.len(),
            self.hosts.iter().filter(|h| h.busy).count(),
        )
    }

    /// Queues a URL behind its host's other URLs.
    pub fn add(&mut self, entry: Entry, url: &Url, now: Instant) {
        let id = self.host_id(url, now);
        self.hosts[id].queue.push_back(entry);
        self.queued += 1;
        self.schedule(id);
    }

    fn host_id(&mut self, url: &Url, now: Instant) -> usize {
        let key = crate::url::normalize::host_key(url);
        if let Some(&id) = self.by_key.get(&key) {
            return id;
        }
        let id = self.hosts.len();
        self.hosts.push(Host {
            origin: url.origin().ascii_serialization(),
            queue: VecDeque::new(),
            ready_at: now,
            busy: false,
            scheduled: false,
            robots: None,
        });
        self.by_key.insert(key, id);
        id
    }

    /// Restores what an earlier run knew of a host (see `hoststate`): when it may be contacted
    /// again, and its robots.txt rules with the instant they were fetched.
    pub fn restore(
        &mut self,
        origin: &Url,
        ready_at: Option<Instant>,
        robots: Option<(RobotsRules, Instant)>,
        now: Instant,
    ) {
        let id = self.host_id(origin, now);
        let host = &mut self.hosts[id];
        if let Some(at) = ready_at {
            host.ready_at = host.ready_at.max(at);
        }
        if robots.is_some() {
            host.robots = robots;
        }
    }

    /// Every known host's origin and the instant it may be contacted again.
    pub fn ready_times(&self) -> impl Iterator<Item = (&str, Instant)> {
        self.hosts.iter().map(|h| (h.origin.as_str(), h.ready_at))
    }

    /// The URLs waiting in host queues (for a checkpoint of the frontier).
    pub fn queued_entries(&self) -> impl Iterator<Item = &Entry> {
        self.hosts.iter().flat_map(|h| h.queue.iter())
    }

    /// The next piece of work whose host may be contacted at `now`.
    pub fn next(&mut self, now: Instant) -> Next {
        while let Some(&Reverse((at, id))) = self.ready.peek() {
            if at > now {
                return Next::WaitUntil(at);
            }
            self.ready.pop();
            let host = &mut self.hosts[id];
            host.scheduled = false;
            let fresh = host.robots.as_ref().is_some_and(|(rules, at)| {
                let ttl = if rules.disallows_everything() {
                    ROBOTS_RETRY
                } else {
                    ROBOTS_TTL
                };
                now.duration_since(*at) < ttl
            });
            if !fresh {
                host.busy = true;
                return Next::Work(Work::Robots {
                    host: id,
                    url: format!("{}/robots.txt", host.origin),
                });
            }
            let rules = &host.robots.as_ref().expect("fresh robots").0;
            while let Some(entry) = host.queue.pop_front() {
                self.queued -= 1;
                if host.queue.is_empty() {
                    release_queue(&mut host.queue);
                }
                if rules.is_allowed(path_and_query(&entry.url)) {
                    host.busy = true;
                    return Next::Work(Work::Page { host: id, entry });
                }
                self.robots_blocked += 1;
            }
        }
        Next::Empty
    }

    /// When the earliest scheduled host may be contacted.
    pub fn next_ready_at(&self) -> Option<Instant> {
        self.ready.peek().map(|Reverse((at, _))| *at)
    }

    /// A page fetch on `host` ended at `now` after `response_time`.
    pub fn page_done(&mut self, host: usize, response_time: Duration, now: Instant) {
        let crawl_delay = self.hosts[host]
            .robots
            .as_ref()
            .and_then(|(r, _)| r.crawl_delay());
        self.release(host, now + self.rule.delay(response_time, crawl_delay));
    }

    /// The host answered `entry` 429 or 503: it rests until `retry_at` (or longer, by the delay
    /// rule) and `entry` goes back to the front of its queue, to be asked for again first.
    pub fn page_retry(
        &mut self,
        host: usize,
        entry: Entry,
        response_time: Duration,
        now: Instant,
        retry_at: Instant,
    ) {
        let crawl_delay = self.hosts[host]
            .robots
            .as_ref()
            .and_then(|(r, _)| r.crawl_delay());
        self.hosts[host].queue.push_front(entry);
        self.queued += 1;
        let rule = now + self.rule.delay(response_time, crawl_delay);
        self.release(host, rule.max(retry_at));
    }

    /// The host's robots.txt fetch ended at `now`; its rules apply from here on.
    pub fn robots_done(
        &mut self,
        host: usize,
        rules: RobotsRules,
        response_time: Duration,
        now: Instant,
    ) {
        let crawl_delay = rules.crawl_delay();
        self.hosts[host].robots = Some((rules, now));
        self.release(host, now + self.rule.delay(response_time, crawl_delay));
    }

    fn release(&mut self, id: usize, ready_at: Instant) {
        let host = &mut self.hosts[id];
        host.busy = false;
        host.ready_at = ready_at;
        self.schedule(id);
    }

    fn schedule(&mut self, id: usize) {
        let host = &mut self.hosts[id];
        if !host.busy && !host.scheduled && !host.queue.is_empty() {
            host.scheduled = true;
            self.ready.push(Reverse((host.ready_at, id)));
        }
    }
}

/// Frees a drained host queue's buffer. A queue grows to the most URLs its host ever had waiting
/// (up to the dispatcher's whole in-memory budget); kept for every host, those buffers would add
/// up with the number of hosts a crawl meets instead of staying within the budget.
fn release_queue(queue: &mut VecDeque<Entry>) {
    if queue.capacity() > 16 {
        *queue = VecDeque::new();
    }
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

    fn entry(url: &str) -> (Entry, Url) {
        (Entry::new(url.to_owned(), 0, 0), Url::parse(url).unwrap())
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
            let (e, url) = entry(u);
            s.add(e, &url, t0);
        }
        let Next::Work(Work::Robots { host, url }) = s.next(t0) else {
            panic!("robots first")
        };
        assert_eq!(url, "http://a.test/robots.txt");
        assert!(matches!(s.next(t0), Next::Empty), "the host is busy");
        let rules =
            RobotsRules::from_response("crawl", 200, b"User-agent: *\nDisallow: /private\n");
        s.robots_done(host, rules, Duration::from_millis(10), t0);
        let Next::WaitUntil(at) = s.next(t0) else {
            panic!("must wait")
        };
        assert_eq!(at, t0 + Duration::from_millis(100));
        let Next::Work(Work::Page { entry, .. }) = s.next(at) else {
            panic!("page")
        };
        assert_eq!(entry.url, "http://a.test/1");
        s.page_done(host, Duration::from_millis(20), at);
        let Next::Work(Work::Page { entry, .. }) = s.next(at + Duration::from_millis(200)) else {
            panic!()
        };
        assert_eq!(entry.url, "http://a.test/3", "/private/2 is disallowed");
        assert_eq!(s.robots_blocked, 1);
        assert_eq!(s.queued(), 0);
    }

    #[test]
    fn hosts_are_served_in_ready_order() {
        let t0 = Instant::now();
        let mut s = Scheduler::new(rule(0.0));
        for u in ["http://a.test/", "http://b.test:81/"] {
            let (e, url) = entry(u);
            s.add(e, &url, t0);
        }
        let mut hosts = Vec::new();
        while let Next::Work(Work::Robots { host, .. }) = s.next(t0) {
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
            let (e, url) = entry(&format!("http://a.test/{i}"));
            s.add(e, &url, t0);
        }
        let Next::Work(Work::Robots { host, .. }) = s.next(t0) else {
            panic!("robots first")
        };
        s.robots_done(
            host,
            RobotsRules::from_response("crawl", 404, b""),
            Duration::ZERO,
            t0,
        );
        let mut fetched = 0;
        while let Next::Work(Work::Page { host, .. }) = s.next(t0) {
            fetched += 1;
            s.page_done(host, Duration::ZERO, t0);
        }
        assert_eq!(fetched, 100);
        assert_eq!(
            s.hosts[host].queue.capacity(),
            0,
            "the empty queue still holds a buffer"
        );
    }
}
