//! The focused crawl (`--focus TEXT`): a bounded priority window between the disk frontier and
//! the politeness scheduler, so the crawl favours URLs linked from topical pages and good hubs.
//!
//! Two parts:
//! - [`Focus`], shared by the workers: the links of the topical pages seen so far (pages that
//!   contain the topic; bounded: beyond `MAX_EDGES` links the older half is forgotten), and hub
//!   scores from HITS (`hits`) over that graph, recomputed every so many pages on a snapshot,
//!   outside the lock. A URL's score is the sum, over the topical pages linking to it, of 1 plus
//!   the page's hub score scaled so that the best hub counts 1. HITS runs on the topical part
//!   only, as Kleinberg ran it on a query's base set: over the whole graph the dominant hubs
//!   are those of the bulk of the web, and their links would outrank topical ones (topic
//!   drift; measured on the community test web, it made the focused crawl no better than
//!   breadth-first). Links of non-topical pages score nothing, so until a topical page is
//!   found the crawl is breadth-first.
//! - [`Window`], owned by the dispatcher: up to `window` URLs, best score first and, among equal
//!   scores, first in first out, so with nothing topical found the crawl stays breadth-first.
//!   The window tops itself up from the frontier's head, so it looks `window` URLs ahead of
//!   breadth-first order: topical links jump the queue when they are within that look-ahead
//!   (the whole frontier, for crawls the size of the default window). Memory stays flat: the
//!   frontier is still the disk FIFO, and every URL the DUE finds novel goes to it first, so a
//!   kill loses none of them; URLs in the window count as taken but not done and are kept by
//!   the frontier's checkpoints (see `frontier`).
//!
//! Membership in the DUE is delayed until a batch merges, so when topical links are waiting in
//! the DUE, [`Focus::record`] asks for an early merge, at most once per max(16, seen/64) pages
//! (each merge rewrites the seen set: 16 bytes × seen/64 pages is ≤ 1 KiB of I/O per page).
//! The worker that asked waits for that merge (the others go on), after one already running if
//! need be (`Due::merge_now`), so the topical links are in the window before its next fetch:
//! with one worker the order depends on pages alone, not on how long a merge takes on a loaded
//! machine.
//!
//! This module does not touch the frontier's or the DUE's internals: the dispatcher and the
//! workers call it through a few hooks.

use crate::frontier::hits::{self, Stop};
use crate::frontier::{Entry, Frontier};
use crate::seen::checksum::checksum;
use anyhow::{Context, Result};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Edges kept at most; beyond it the older half is forgotten (about 8 bytes per edge plus
/// about 40 per page).
const MAX_EDGES: usize = 1 << 20;
/// HITS is recomputed after at least this many pages (and at least edges / 100).
const RERANK_PAGES: u64 = 100;
/// The fewest pages between two early merges asked for by the focus.
const MERGE_PAGES: u64 = 16;

/// The topic, the topical pages' links seen so far and their hub scores.
pub struct Focus {
    topic: regex::bytes::Regex,
    window: usize,
    graph: Mutex<Graph>,
    /// Bumped when scores change (new hub scores, forgotten edges): windows rescore.
    version: AtomicU64,
}

#[derive(Default)]
struct Graph {
    ids: FxHashMap<u64, u32>,
    /// URL checksum by id.
    keys: Vec<u64>,
    /// Topical pages linking to the page.
    topic_in: Vec<u32>,
    /// Σ hub(p) / max hub over pages p linking to the page, from the last HITS.
    hub_in: Vec<f32>,
    edges: Vec<(u32, u32)>,
    /// Bumped when ids are renumbered, so a HITS result on an old snapshot is dropped.
    epoch: u64,
    pages_since_rank: u64,
    pages_since_merge: u64,
    topical_waiting: bool,
    ranking: bool,
}

impl Graph {
    fn id(&mut self, key: u64) -> u32 {
        let next = self.keys.len() as u32;
        *self.ids.entry(key).or_insert_with(|| {
            self.keys.push(key);
            self.topic_in.push(0);
            self.hub_in.push(0.0);
            next
        })
    }

    fn score(&self, key: u64) -> f64 {
        self.ids.get(&key).map_or(0.0, |&i| {
            f64::from(self.topic_in[i as usize]) + f64::from(self.hub_in[i as usize])
        })
    }

    /// Forgets the older half of the edges and renumbers the pages still linked.
    fn forget_older_half(&mut self) {
        let old = std::mem::take(self);
        let keep = &old.edges[old.edges.len() / 2..];
        self.edges.reserve(keep.len());
        for &(from, to) in keep {
            let (f, t) = (
                self.id(old.keys[from as usize]),
                self.id(old.keys[to as usize]),
            );
            self.hub_in[t as usize] = old.hub_in[to as usize];
            self.topic_in[t as usize] += 1;
            self.edges.push((f, t));
        }
        self.epoch = old.epoch + 1;
        (self.pages_since_rank, self.pages_since_merge) = (old.pages_since_rank, 0);
        self.topical_waiting = old.topical_waiting;
        self.ranking = old.ranking;
    }
}

impl Focus {
    /// A focus on pages containing `topic` (ASCII case-insensitive), with a window of `window`
    /// URLs.
    pub fn new(topic: &str, window: usize) -> Result<Focus> {
        let topic = regex::bytes::RegexBuilder::new(&regex::escape(topic))
            .case_insensitive(true)
            .unicode(false)
            .build()
            .with_context(|| format!("--focus {topic:?}"))?;
        Ok(Focus {
            topic,
            window: window.max(1),
            graph: Mutex::new(Graph::default()),
            version: AtomicU64::new(0),
        })
    }

    /// Whether a page (its decoded HTML) matches the topic.
    pub fn matches(&self, page: &[u8]) -> bool {
        self.topic.is_match(page)
    }

    /// Records a fetched page's links (canonical, filtered: as in links.tsv) and whether it
    /// matched the topic; recomputes HITS when due. Returns true when the caller should ask the
    /// DUE for an early merge (topical links wait in it); `seen` is the DUE's stored count.
    pub fn record<'a>(
        &self,
        from: &str,
        topical: bool,
        links: impl Iterator<Item = &'a str>,
        seen: u64,
    ) -> bool {
        let mut graph = self.graph.lock().unwrap();
        graph.pages_since_rank += 1;
        graph.pages_since_merge += 1;
        if topical {
            let from = graph.id(checksum(from.as_bytes()));
            let mut targets: Vec<u32> = links.map(|l| graph.id(checksum(l.as_bytes()))).collect();
            targets.sort_unstable();
            targets.dedup();
            targets.retain(|&t| t != from);
            for &to in &targets {
                graph.topic_in[to as usize] += 1;
                graph.edges.push((from, to));
            }
            if graph.edges.len() > MAX_EDGES {
                graph.forget_older_half();
                self.version.fetch_add(1, Ordering::Relaxed);
            }
            graph.topical_waiting |= !targets.is_empty();
        }
        let merge = graph.topical_waiting && graph.pages_since_merge >= MERGE_PAGES.max(seen / 64);
        if merge {
            (graph.topical_waiting, graph.pages_since_merge) = (false, 0);
        }
        let due = graph.pages_since_rank >= RERANK_PAGES.max(graph.edges.len() as u64 / 100);
        if due && !graph.ranking && !graph.edges.is_empty() {
            graph.ranking = true;
            graph.pages_since_rank = 0;
            let (n, edges, epoch) = (graph.keys.len(), graph.edges.clone(), graph.epoch);
            drop(graph);
            self.rerank(n, edges, epoch);
        }
        merge
    }

    /// HITS on a snapshot of the graph, then each page's hub_in from it.
    fn rerank(&self, n: usize, mut edges: Vec<(u32, u32)>, epoch: u64) {
        let stop = Stop {
            max_rounds: 20,
            tolerance: 1e-4,
            ..Stop::default()
        };
        let hub = hits::hits(n, &mut edges, &stop)
            .expect("HITS on edges in memory cannot fail")
            .hub;
        let best = hub.iter().copied().fold(0.0, f64::max);
        let mut hub_in = vec![0f32; n];
        if best > 0.0 {
            for &(from, to) in &edges {
                hub_in[to as usize] += (hub[from as usize] / best) as f32;
            }
        }
        let mut graph = self.graph.lock().unwrap();
        graph.ranking = false;
        if graph.epoch == epoch {
            graph.hub_in[..n].copy_from_slice(&hub_in);
            self.version.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The dispatcher's priority window (see the module doc).
pub struct Window {
    focus: Arc<Focus>,
    /// Keyed by (score bits, Reverse(arrival)): the last is the best and oldest.
    urls: BTreeMap<(u64, Reverse<u64>), Entry>,
    arrivals: u64,
    version: u64,
    scheduler_urls: usize,
}

impl Window {
    /// A window for `focus`; `workers` sizes what the scheduler may hold (see
    /// [`Window::queue_limit`]).
    pub fn new(focus: Arc<Focus>, workers: usize) -> Window {
        Window {
            version: focus.version.load(Ordering::Relaxed),
            focus,
            urls: BTreeMap::new(),
            arrivals: 0,
            scheduler_urls: (4 * workers).max(16),
        }
    }

    pub fn len(&self) -> usize {
        self.urls.len()
    }

    pub fn is_empty(&self) -> bool {
        self.urls.is_empty()
    }

    /// How many URLs the scheduler's host queues may hold: few, so that the order comes from
    /// the window, yet enough to keep `workers` busy.
    pub fn queue_limit(&self, limit: usize) -> usize {
        limit.min(self.scheduler_urls)
    }

    /// The best URL, after topping the window up from the frontier's head.
    pub fn pop(&mut self, frontier: &mut Frontier) -> Result<Option<Entry>> {
        let version = self.focus.version.load(Ordering::Relaxed);
        if version != self.version {
            self.version = version;
            self.rescore();
        }
        if self.urls.len() < self.focus.window && !frontier.is_empty() {
            let graph = self.focus.graph.lock().unwrap();
            let mut fresh = Vec::new();
            while self.urls.len() + fresh.len() < self.focus.window {
                match frontier.pop()? {
                    Some(entry) => fresh.push((graph.score(key(&entry)), entry)),
                    None => break,
                }
            }
            drop(graph);
            for (score, entry) in fresh {
                self.insert(score, entry);
            }
        }
        Ok(self.urls.pop_last().map(|(_, entry)| entry))
    }

    /// The URLs in the window (taken from the frontier, not handed out yet).
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.urls.values()
    }

    fn insert(&mut self, score: f64, entry: Entry) {
        self.arrivals += 1;
        self.urls
            .insert((score.to_bits(), Reverse(self.arrivals)), entry);
    }

    /// New scores for every URL in the window, arrival order kept.
    fn rescore(&mut self) {
        let graph = self.focus.graph.lock().unwrap();
        let old = std::mem::take(&mut self.urls);
        for ((_, arrival), entry) in old {
            let score = graph.score(key(&entry));
            self.urls.insert((score.to_bits(), arrival), entry);
        }
    }
}

fn key(entry: &Entry) -> u64 {
    checksum(entry.url.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A URL the DUE found novel reaching the frontier, as a merge delivers it.
    fn arrive(frontier: &mut Frontier, url: &str) {
        frontier.push(&Entry::new(url.into(), 1, 0)).unwrap();
        frontier.commit().unwrap();
        frontier.publish();
    }

    fn pop_all(window: &mut Window, frontier: &mut Frontier) -> Vec<String> {
        std::iter::from_fn(|| window.pop(frontier).unwrap())
            .map(|e| e.url)
            .collect()
    }

    #[test]
    fn without_topical_pages_the_order_stays_first_in_first_out() {
        let dir = tempfile::tempdir().unwrap();
        let mut frontier = Frontier::open(dir.path()).unwrap();
        let focus = Arc::new(Focus::new("orchid", 3).unwrap());
        let mut window = Window::new(Arc::clone(&focus), 1);
        let urls: Vec<String> = (0..7).map(|i| format!("http://a/{i}")).collect();
        let links = urls.iter().map(String::as_str);
        assert!(!focus.record("http://a/", false, links, 0));
        for url in &urls {
            arrive(&mut frontier, url);
        }
        assert_eq!(pop_all(&mut window, &mut frontier), urls);
    }

    #[test]
    fn links_of_topical_pages_jump_the_queue_and_the_window_stays_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let mut frontier = Frontier::open(dir.path()).unwrap();
        let focus = Arc::new(Focus::new("Orchid", 10).unwrap());
        assert!(focus.matches(b"<p>ORCHIDS</p>") && !focus.matches(b"<p>roses</p>"));
        let mut window = Window::new(Arc::clone(&focus), 1);
        for i in 0..6 {
            arrive(&mut frontier, &format!("http://a/{i}"));
        }
        focus.record(
            "http://a/t1",
            true,
            ["http://a/x", "http://a/y"].into_iter(),
            0,
        );
        focus.record(
            "http://a/t2",
            true,
            ["http://a/y", "http://a/y"].into_iter(),
            0,
        );
        // The front of the FIFO enters the window before the topical URLs arrive.
        assert_eq!(
            window.pop(&mut frontier).unwrap().unwrap().url,
            "http://a/0"
        );
        arrive(&mut frontier, "http://a/x");
        arrive(&mut frontier, "http://a/y");
        // Within the window's look-ahead, y (two topical parents; duplicates within a page
        // count once) and x (one) jump ahead of the rest.
        let order = pop_all(&mut window, &mut frontier);
        assert_eq!(order[..2], ["http://a/y", "http://a/x"]);
        assert_eq!(order.len(), 7, "{order:?}");
        assert!(window.is_empty());
    }

    #[test]
    fn early_merges_are_asked_for_only_when_topical_links_wait() {
        let focus = Focus::new("orchid", 10).unwrap();
        let plain = |i: u32| focus.record(&format!("http://a/{i}"), false, std::iter::empty(), 0);
        assert!((0..40).all(|i| !plain(i)));
        assert!(focus.record("http://a/t", true, ["http://a/u"].into_iter(), 0));
        // Just merged: the next topical page waits for MERGE_PAGES pages.
        assert!(!focus.record("http://a/t2", true, ["http://a/v"].into_iter(), 0));
        assert!((0..14).all(|i| !plain(100 + i)));
        assert!(plain(200));
    }

    #[test]
    fn forgetting_keeps_the_newer_edges_and_their_scores() {
        let mut graph = Graph::default();
        for (f, t) in [(1, 2), (3, 4), (5, 4)] {
            let (f, t) = (graph.id(f), graph.id(t));
            graph.topic_in[t as usize] += 1;
            graph.edges.push((f, t));
        }
        graph.forget_older_half();
        assert_eq!(graph.edges.len(), 2);
        assert_eq!((graph.score(2), graph.score(4)), (0.0, 2.0));
        assert_eq!(graph.epoch, 1);
    }
}
