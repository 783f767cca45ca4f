//! A page's change history across recrawls, and how likely it is to have changed since.
//!
//! Each line of `fetched.tsv` (format 2, see `recrawl`) carries, after the previous
//! fetch's fields, the page's `History`: visits, changes seen, first visit, last visit, last
//! change seen. A visit is a fetch that got a response; it is a change when its status or
//! payload digest differs from the visit before (`recrawl::Outcome`: `changed` or `gone`); a
//! 304 is a visit without a change. Only the digest counts, not a near-duplicate distance: a
//! page whose only change is a date stamp counts as changed (a fingerprint of its text would
//! say less, but the estimate below only needs "same bytes or not").
//!
//! The change rate λ of a page is Cho and Garcia-Molina's improved estimator for visits at
//! regular intervals, with changes detected rather than counted ("Estimating frequency of
//! change", 2003): from n intervals of mean length I, X of which showed a change,
//! λ̂ = −ln((n − X + 0.5) / (n + 0.5)) / I. It corrects for the changes a visit misses (two
//! changes between visits look like one) and stays finite when every visit saw a change. The
//! visits of a budgeted recrawl are not regular; I is then their mean interval, which is what
//! summary statistics allow (the irregular-interval MLE would need every interval's length).
//! A page visited once has no interval: it gets the prior `Prior` gives, the rate pooled over
//! the pages that have one. A page never seen changing would get λ̂ = 0 and never be asked
//! again: it gets a floor, the estimate with half a change seen, but no more than the prior
//! (`History::rate`; with one quiet interval, half a change would rate it above most pages of
//! a web where most pages rarely change). The probability that a page changed in the t seconds
//! since its last visit is then 1 − e^(−λ·t) (Poisson changes).
//!
//! Times are Unix seconds from `now`, which the environment variable `CRAWL_CLOCK` (Unix
//! seconds) overrides, for benchmarks and tests that simulate days of changes between rounds
//! run minutes apart. It is read once per process.

use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

/// What the recrawls so far saw of one page (see the module doc). All zero: never visited
/// (a URL known but not fetched yet, or whose every fetch got no response).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct History {
    /// Fetches that got a response.
    pub visits: u32,
    /// Visits that found the status or payload changed since the visit before.
    pub changes: u32,
    /// When it was first visited.
    pub first: u64,
    /// When it was last visited.
    pub last: u64,
    /// When a visit last found it changed (0: never).
    pub last_change: u64,
}

impl History {
    /// The history of a format-1 line (no history fields): one visit at its fetch `date`, or
    /// none if it got no response (`status` 0).
    pub fn of_format_1(status: u16, date: u64) -> History {
        match status {
            0 => History::default(),
            _ => History {
                visits: 1,
                changes: 0,
                first: date,
                last: date,
                last_change: 0,
            },
        }
    }

    /// The history after one more visit at `at` that found the page `changed` (or not).
    pub fn visited(self, changed: bool, at: u64) -> History {
        if self.visits == 0 {
            return History {
                visits: 1,
                changes: 0,
                first: at,
                last: at,
                last_change: 0,
            };
        }
        History {
            visits: self.visits.saturating_add(1),
            changes: self.changes.saturating_add(u32::from(changed)),
            first: self.first,
            last: at.max(self.last),
            last_change: if changed { at } else { self.last_change },
        }
    }

    /// `visits TAB changes TAB first TAB last TAB last-change` onto the end of `line`.
    pub fn push_fields(self, line: &mut String) {
        let mut digits = itoa::Buffer::new();
        let numbers = [
            self.visits.into(),
            self.changes.into(),
            self.first,
            self.last,
        ];
        for n in numbers {
            line.push_str(digits.format(n));
            line.push('\t');
        }
        line.push_str(digits.format(self.last_change));
    }

    /// The fields `push_fields` wrote; None if any is missing or not a number.
    pub fn from_fields<'a>(mut fields: impl Iterator<Item = &'a str>) -> Option<History> {
        let mut next = || fields.next()?.parse::<u64>().ok();
        let (visits, changes) = (next()?, next()?);
        Some(History {
            visits: u32::try_from(visits).ok()?,
            changes: u32::try_from(changes).ok()?,
            first: next()?,
            last: next()?,
            last_change: next()?,
        })
    }

    /// Intervals between visits.
    fn intervals(&self) -> u32 {
        self.visits.saturating_sub(1)
    }

    /// The span from the first visit to the last, in seconds.
    fn span(&self) -> u64 {
        self.last.saturating_sub(self.first)
    }

    /// Cho and Garcia-Molina's estimate of the change rate, per second; None without an
    /// interval. Zero for a page never seen changing.
    pub fn estimate(&self) -> Option<f64> {
        let n = self.intervals();
        let span = self.span();
        if n == 0 || span == 0 {
            return None;
        }
        let n = f64::from(n);
        Some(improved_estimate(
            n,
            f64::from(self.changes).min(n),
            span as f64 / n,
        ))
    }

    /// The change rate the budget goes by, per second (see the module doc): the estimate;
    /// `prior` without one; for a page never seen changing, the estimate with half a change
    /// seen, but no more than `prior`.
    pub fn rate(&self, prior: f64) -> f64 {
        match self.estimate() {
            None => prior,
            Some(rate) if self.changes > 0 => rate,
            Some(_) => {
                let n = f64::from(self.intervals());
                improved_estimate(n, 0.5, self.span() as f64 / n).min(prior)
            }
        }
    }

    /// The probability that the page changed since its last visit, at `now`, with `prior` the
    /// pooled rate (`Prior`).
    pub fn changed_probability(&self, now: u64, prior: f64) -> f64 {
        changed_probability(self.rate(prior), now.saturating_sub(self.last))
    }
}

/// Cho and Garcia-Molina's improved estimator: `changes` of `n` intervals of `interval`
/// seconds showed a change; the change rate per second.
pub fn improved_estimate(n: f64, changes: f64, interval: f64) -> f64 {
    -((n - changes + 0.5) / (n + 0.5)).ln() / interval
}

/// 1 − e^(−λ·t): a Poisson process of rate `rate` per second changed in `seconds`.
pub fn changed_probability(rate: f64, seconds: u64) -> f64 {
    -(-rate * seconds as f64).exp_m1()
}

/// The prior change rate: the changes seen over the time observed, pooled over every page with
/// an interval (the rate's maximum-likelihood estimate if all pages changed alike). Pages
/// visited once get it; before any page has an interval it is one change a day, which only
/// orders pages by how long ago they were visited.
#[derive(Default)]
pub struct Prior {
    changes: u64,
    seconds: u64,
}

impl Prior {
    const FIRST: f64 = 1.0 / 86_400.0;

    pub fn add(&mut self, history: &History) {
        if history.intervals() > 0 {
            self.changes += u64::from(history.changes);
            self.seconds += history.span();
        }
    }

    /// Per second.
    pub fn rate(&self) -> f64 {
        match self.seconds {
            0 => Prior::FIRST,
            seconds => (self.changes as f64 + 0.5) / seconds as f64,
        }
    }
}

/// Now, in Unix seconds: `CRAWL_CLOCK` if set (see the module doc), else the system clock.
pub fn now() -> u64 {
    injected().unwrap_or_else(|| secs(SystemTime::now()))
}

/// `at` in Unix seconds, or `CRAWL_CLOCK` if set.
pub fn at(at: SystemTime) -> u64 {
    injected().unwrap_or_else(|| secs(at))
}

fn secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs()
}

/// The injected clock. A value that is not a number is an error worth stopping for, but this
/// is read deep in a worker: it is reported once and the system clock used.
fn injected() -> Option<u64> {
    static CLOCK: OnceLock<Option<u64>> = OnceLock::new();
    *CLOCK.get_or_init(|| {
        let text = std::env::var("CRAWL_CLOCK").ok()?;
        match text.trim().parse() {
            Ok(secs) => Some(secs),
            Err(_) => {
                eprintln!("crawl: CRAWL_CLOCK={text:?} is not Unix seconds; using the clock");
                None
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: u64 = 86_400;

    fn history(visits: u32, changes: u32, days: u64) -> History {
        History {
            visits,
            changes,
            first: 1_000,
            last: 1_000 + days * DAY,
            last_change: 0,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1e-300)
    }

    #[test]
    fn the_improved_estimator_gives_the_papers_values() {
        // n = 10 daily visits, X = 4 changes: −ln(6.5 / 10.5) = 0.4796 a day.
        let per_day = improved_estimate(10.0, 4.0, 1.0);
        assert!((per_day - 0.479_573_080).abs() < 1e-8, "{per_day}");
        // Every visit saw a change: finite, unlike the naive −ln(1 − X/n).
        assert!(close(improved_estimate(10.0, 10.0, 1.0), 21f64.ln()));
        // Nothing seen: zero (hence the floor in `History::rate`).
        assert_eq!(improved_estimate(10.0, 0.0, 1.0), 0.0);
        // 11 visits over 10 days, 4 changes: the same rate, per second.
        let rate = history(11, 4, 10).estimate().unwrap();
        assert!(close(rate * DAY as f64, per_day), "{rate}");
        assert_eq!(
            history(11, 4, 10).rate(1.0),
            rate,
            "the prior plays no part"
        );
        // Never seen changing: the estimate with half a change, at most the prior.
        assert_eq!(history(11, 0, 10).estimate(), Some(0.0));
        let floor = history(11, 0, 10).rate(1.0) * DAY as f64;
        assert!(close(floor, -(10.0f64 / 10.5).ln()), "{floor}");
        let low = 0.001 / DAY as f64;
        assert_eq!(history(11, 0, 10).rate(low), low);
        // More changes than intervals cannot be: capped at n.
        assert_eq!(history(3, 5, 2).estimate(), history(3, 2, 2).estimate());
        // No interval: no estimate, the prior.
        assert_eq!(history(1, 0, 0).estimate(), None);
        assert_eq!(history(1, 0, 0).rate(low), low);
        assert_eq!(
            history(4, 1, 0).estimate(),
            None,
            "all visits in one second"
        );
    }

    #[test]
    fn changed_probability_is_poisson_and_grows_with_time() {
        assert_eq!(changed_probability(1.0, 0), 0.0);
        assert!(close(
            changed_probability(1.0 / DAY as f64, DAY),
            1.0 - (-1f64).exp()
        ));
        let h = history(11, 4, 10);
        let (a, b) = (h.last + DAY, h.last + 2 * DAY);
        assert!(h.changed_probability(a, 0.0) < h.changed_probability(b, 0.0));
        // Visited once: the prior decides.
        let once = history(1, 0, 0);
        let p = once.changed_probability(once.last + DAY, 2.0 / DAY as f64);
        assert!(close(p, 1.0 - (-2f64).exp()), "{p}");
    }

    #[test]
    fn visits_count_changes_and_the_first_visit_starts_the_history() {
        let h = History::default().visited(true, 100);
        assert_eq!(
            h,
            History {
                visits: 1,
                changes: 0,
                first: 100,
                last: 100,
                last_change: 0
            }
        );
        let h = h.visited(false, 200).visited(true, 300);
        assert_eq!((h.visits, h.changes, h.first, h.last), (3, 1, 100, 300));
        assert_eq!(h.last_change, 300);
        let mut fields = String::new();
        h.push_fields(&mut fields);
        assert_eq!(History::from_fields(fields.split('\t')), Some(h));
        assert_eq!(History::from_fields("1\t2\t3".split('\t')), None);
        assert_eq!(History::of_format_1(0, 5), History::default());
        assert_eq!(History::of_format_1(200, 5).visits, 1);
    }

    #[test]
    fn the_prior_pools_the_pages_with_an_interval() {
        let mut prior = Prior::default();
        assert!(close(prior.rate(), 1.0 / DAY as f64));
        prior.add(&history(1, 0, 0));
        assert!(
            close(prior.rate(), 1.0 / DAY as f64),
            "no interval: no data"
        );
        prior.add(&history(3, 2, 2));
        prior.add(&history(3, 0, 2));
        assert!(close(prior.rate(), 2.5 / (4 * DAY) as f64));
    }
}
