//! `--recrawl-budget N`: a recrawl that asks for at most N pages, those likeliest to have
//! changed since their last visit.
//!
//! Before the recrawl offers its previous pages, `RecrawlBudget::select` reads `previous.tsv`
//! once and keeps the keys of the pages to ask for:
//! - up to `NEW_SHARE_PERCENT` % of N (rounded up) for pages never visited (no response yet:
//!   URLs a budgeted recrawl found and put off, URLs given up with an unreachable host), those
//!   known longest first; the share they leave unused goes to the visited pages;
//! - the rest for the visited pages with the highest probability of having changed since their
//!   last visit (`History::changed_probability`; a page visited once has the pooled prior).
//!
//! Every previous page is still offered as without a budget (so none is lost, and links to it
//! are not taken for new URLs); one not selected is handed out and not asked for: outcome
//! `deferred`, its line carried into the new `fetched.tsv` unchanged. A URL the previous crawl
//! did not know (found by a link, or a new seed) is asked for while the budget the selection
//! left (N minus the pages selected) lasts; after that it is deferred too and recorded with
//! status 0, never visited, so the next budgeted recrawl gives it its share. Sitemaps are
//! read as without a budget and do not count. A resumed budgeted recrawl selects again at its
//! own time, so its pages may differ a little from the first run's and its total may pass N.
//!
//! Memory: while it reads, the selection holds two bounded heaps (pages visited, pages never
//! visited) of at most N candidates of 16 bytes each, 32 to 64 bytes per page of the budget
//! with their growth; then only the selected keys, in a hash set (10 to 20 bytes each).
//! Nothing is held per page left out. It reads `previous.tsv` twice (the pooled prior first,
//! then the pages) before the recrawl reads it to offer them.

use crate::frontier::{Entry, Previous};
use crate::recrawl;
use crate::state::history::Prior;
use anyhow::Result;
use rustc_hash::FxHashSet;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// The share of the budget kept for pages never visited, in percent.
pub const NEW_SHARE_PERCENT: u64 = 15;

/// The pages a budgeted recrawl asks for (see the module doc).
pub struct RecrawlBudget {
    selected: FxHashSet<u64>,
    /// What is left of the budget for URLs the previous crawl did not know.
    new_left: AtomicU64,
}

/// A bounded min-heap keeping the `cap` largest `(score, key)`.
struct Top {
    heap: BinaryHeap<Reverse<(u64, u64)>>,
    cap: usize,
}

impl Top {
    fn new(cap: usize) -> Top {
        Top {
            heap: BinaryHeap::new(),
            cap,
        }
    }

    fn offer(&mut self, score: u64, key: u64) {
        if self.heap.len() < self.cap {
            self.heap.push(Reverse((score, key)));
        } else if self
            .heap
            .peek()
            .is_some_and(|Reverse(low)| *low < (score, key))
        {
            self.heap.pop();
            self.heap.push(Reverse((score, key)));
        }
    }

    fn into_vec(self) -> Vec<(u64, u64)> {
        self.heap.into_iter().map(|Reverse(item)| item).collect()
    }
}

/// A probability as a score that orders like it (non-negative floats' bits do).
fn score(probability: f64) -> u64 {
    probability.max(0.0).to_bits()
}

impl RecrawlBudget {
    /// Reads `DIR/previous.tsv` and selects at most `budget` pages at `now` (Unix seconds).
    pub fn select(out: &Path, budget: u64, now: u64) -> Result<RecrawlBudget> {
        // First the pooled prior, which every visited page's rate may depend on.
        let mut prior = Prior::default();
        recrawl::read_previous(out, false, &mut |group| {
            for previous in group.iter().filter_map(|e| e.previous.as_ref()) {
                prior.add(&previous.history);
            }
            Ok(())
        })?;
        let prior = prior.rate();
        let cap = usize::try_from(budget).unwrap_or(usize::MAX).min(1 << 30);
        let (mut visited, mut never, mut visited_pages) = (Top::new(cap), Top::new(cap), 0);
        recrawl::read_previous(out, false, &mut |group| {
            for entry in group {
                let Some(previous) = &entry.previous else {
                    continue;
                };
                let history = previous.history;
                if history.visits == 0 {
                    never.offer(now.saturating_sub(previous.date), entry.key());
                } else {
                    visited_pages += 1;
                    let p = history.changed_probability(now, prior);
                    visited.offer(score(p), entry.key());
                }
            }
            Ok(())
        })?;
        let share = usize::try_from(budget.saturating_mul(NEW_SHARE_PERCENT).div_ceil(100))
            .unwrap_or(usize::MAX);
        let never = sorted_best_first(never.into_vec());
        let for_visited = cap
            .saturating_sub(never.len().min(share))
            .min(visited_pages);
        let never_taken = never.len().min(cap - for_visited);
        let visited = sorted_best_first(visited.into_vec());
        let selected: FxHashSet<u64> = (visited.iter().take(for_visited))
            .chain(never.iter().take(never_taken))
            .map(|&(_, key)| key)
            .collect();
        let new_left = budget.saturating_sub(selected.len() as u64);
        Ok(RecrawlBudget {
            selected,
            new_left: AtomicU64::new(new_left),
        })
    }

    /// If the page is not to be asked for, what `fetched.tsv` keeps of it: its previous line,
    /// or for a URL not known before, a fetch without response (`recrawl::no_capture`). A URL
    /// not known before takes its place from the budget left here, once (not again on retry).
    pub fn defers(&self, entry: &Entry) -> Option<Previous> {
        if entry.sitemap.is_some() {
            return None;
        }
        match &entry.previous {
            Some(previous) => (!self.selected.contains(&entry.key())).then(|| previous.clone()),
            None if entry.is_retry() => None,
            None => {
                let taken =
                    (self.new_left)
                        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
                taken.is_err().then(recrawl::no_capture)
            }
        }
    }
}

/// Highest score first, ties by key (so the selection is the same for the same file).
fn sorted_best_first(mut items: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    items.sort_unstable_by(|a, b| b.cmp(a));
    items
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::history::History;

    const DAY: u64 = 86_400;

    fn page(i: usize, visits: u32, changes: u32, days: u64) -> Entry {
        let mut entry = Entry::new(format!("http://a.test/{i}"), 1, 0);
        let last = 10 * DAY;
        entry.previous = Some(Previous {
            status: if visits == 0 { 0 } else { 200 },
            etag: None,
            last_modified: None,
            digest: String::new(),
            date: last,
            history: History {
                visits,
                changes,
                first: last - days * DAY,
                last,
                last_change: 0,
            },
        });
        entry
    }

    fn write_previous(dir: &Path, entries: &[Entry]) {
        let mut text = String::new();
        for entry in entries {
            text.push_str(&entry.to_line());
            text.push('\n');
        }
        std::fs::write(dir.join("previous.tsv"), text).unwrap();
    }

    #[test]
    fn the_budget_goes_to_the_likeliest_changed_and_keeps_a_share_for_new_pages() {
        let dir = tempfile::tempdir().unwrap();
        // 0..4 change at every visit, 4..20 never did, 20..30 were never visited.
        let mut entries: Vec<Entry> = (0..4).map(|i| page(i, 6, 5, 5)).collect();
        entries.extend((4..20).map(|i| page(i, 6, 0, 5)));
        entries.extend((20..30).map(|i| page(i, 0, 0, 0)));
        write_previous(dir.path(), &entries);
        let budget = RecrawlBudget::select(dir.path(), 10, 11 * DAY).unwrap();
        assert_eq!(budget.selected.len(), 10);
        let asked: Vec<usize> = (0..30)
            .filter(|&i| budget.defers(&entries[i]).is_none())
            .collect();
        assert!(asked.iter().take(4).eq([0, 1, 2, 3].iter()), "{asked:?}");
        // 15 % of 10, rounded up: two never-visited pages.
        assert_eq!(asked.iter().filter(|&&i| i >= 20).count(), 2, "{asked:?}");
        assert_eq!(asked.len(), 10);
        // A deferred previous page keeps its line as it was.
        assert_eq!(budget.defers(&entries[19]), entries[19].previous);
        // The budget is spent: a URL found now is put off, recorded never visited.
        let found = Entry::new("http://a.test/new".into(), 2, 0);
        let kept = budget.defers(&found).expect("no budget left");
        assert_eq!((kept.status, kept.history), (0, History::default()));
    }

    #[test]
    fn an_unused_share_goes_to_the_visited_and_what_is_left_to_new_urls() {
        let dir = tempfile::tempdir().unwrap();
        let entries: Vec<Entry> = (0..5).map(|i| page(i, 2, 0, 1)).collect();
        write_previous(dir.path(), &entries);
        let budget = RecrawlBudget::select(dir.path(), 8, 11 * DAY).unwrap();
        assert_eq!(budget.selected.len(), 5);
        assert!(entries.iter().all(|e| budget.defers(e).is_none()));
        let found = |i| Entry::new(format!("http://a.test/new/{i}"), 2, 0);
        let asked = (0..5)
            .filter(|&i| budget.defers(&found(i)).is_none())
            .count();
        assert_eq!(asked, 3, "the 3 places the previous pages left");
    }

    #[test]
    fn pages_visited_once_are_ordered_by_age_under_the_prior() {
        let dir = tempfile::tempdir().unwrap();
        let mut entries: Vec<Entry> = (0..6).map(|i| page(i, 1, 0, 0)).collect();
        for (i, entry) in entries.iter_mut().enumerate() {
            let previous = entry.previous.as_mut().unwrap();
            previous.history.last = i as u64 * DAY;
            previous.history.first = previous.history.last;
        }
        write_previous(dir.path(), &entries);
        let budget = RecrawlBudget::select(dir.path(), 3, 11 * DAY).unwrap();
        let asked: Vec<usize> = (0..6)
            .filter(|&i| budget.defers(&entries[i]).is_none())
            .collect();
        assert_eq!(asked, vec![0, 1, 2], "the three visited longest ago");
    }
}
