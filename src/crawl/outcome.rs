//! How a finished crawl went, for cron: `summary.json`'s `outcome` and the exit status.
//!
//! A crawl can end `complete` with nothing fetched: every host down, every URL given up. That is
//! no success, and a cron job must see it. So at the end of a crawl that ended `complete` or at
//! a run limit (`--max-pages`, `--max-time`, `--max-bytes`), two questions are asked:
//! - Did no seed host answer at all (`nothing-answered`)? Some request (robots.txt, a page) went
//!   to a seed's host in this run and none of them got any response, whatever its status.
//!   With `--shard`, only the seed hosts this shard owns count; a resumed run that asked no
//!   seed host does not count.
//! - Did more than `--max-error-ratio` of the fetches fail (`mostly-failed`)? A fetch is a page
//!   asked for (once, however often it was retried) or a URL given up because its host was
//!   held unreachable. A failure is a page whose last attempt got no response (every error kind
//!   but the crawler's own refusals, `private-address` and `bad-url`, where nothing was sent),
//!   or a URL given up. A 4xx or 5xx is the server's answer, not the crawler's failure.
//!
//! Either makes exit status 3, and the crawl is not marked complete: the next run resumes it
//! (its given-up URLs are asked for again) rather than recrawling. Any other ending keeps its
//! own name and status (`stopped`, `found`).

use crate::schedule::dispatch::Ending;
use crate::url::normalize::origin_and_key;
use rustc_hash::FxHashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use url::Url;

/// How the crawl went (`summary.json`'s `outcome`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunOutcome {
    /// The dispatcher's ending, and nothing says the crawl failed.
    Ended(Ending),
    /// No seed host answered at all.
    NothingAnswered,
    /// More than `--max-error-ratio` of the fetches failed.
    MostlyFailed,
}

impl RunOutcome {
    /// The outcome of a crawl that ended `ending`, with `failed` of `fetches` failed (see the
    /// module doc) and `nothing_answered` from `SeedHosts`.
    pub fn of(
        ending: Ending,
        nothing_answered: bool,
        failed: u64,
        fetches: u64,
        max_error_ratio: f64,
    ) -> RunOutcome {
        if !matches!(
            ending,
            Ending::Complete | Ending::PageLimit | Ending::TimeLimit | Ending::ByteLimit
        ) {
            return RunOutcome::Ended(ending);
        }
        if nothing_answered {
            return RunOutcome::NothingAnswered;
        }
        if fetches > 0 && failed as f64 > max_error_ratio * fetches as f64 {
            return RunOutcome::MostlyFailed;
        }
        RunOutcome::Ended(ending)
    }

    /// The name `summary.json` gives it.
    pub fn name(self) -> &'static str {
        match self {
            RunOutcome::Ended(ending) => ending_name(ending),
            RunOutcome::NothingAnswered => "nothing-answered",
            RunOutcome::MostlyFailed => "mostly-failed",
        }
    }

    /// Whether the crawl finished but mostly failed (exit status 3, not marked complete).
    pub fn failed(self) -> bool {
        matches!(self, RunOutcome::NothingAnswered | RunOutcome::MostlyFailed)
    }
}

/// The seeds' hosts, and whether any of them was asked and any answered in this run.
#[derive(Default)]
pub struct SeedHosts {
    /// `host:port` of every seed.
    keys: FxHashSet<String>,
    asked: AtomicBool,
    answered: AtomicBool,
}

impl SeedHosts {
    pub fn new(seeds: &[Url]) -> SeedHosts {
        let keys = seeds
            .iter()
            .filter_map(|url| Some(origin_and_key(url.as_str())?.1))
            .collect();
        SeedHosts {
            keys,
            ..SeedHosts::default()
        }
    }

    /// A request to `url` is about to be made; noted if its host is a seed's.
    pub fn asked(&self, url: &str) {
        if !self.asked.load(Ordering::Relaxed) && self.is_seed_host(url) {
            self.asked.store(true, Ordering::Relaxed);
        }
    }

    /// `url` got a response (any status); noted if its host is a seed's.
    pub fn answered(&self, url: &str) {
        if !self.answered.load(Ordering::Relaxed) && self.is_seed_host(url) {
            self.answered.store(true, Ordering::Relaxed);
        }
    }

    /// Whether a seed host was asked in this run and none answered.
    pub fn nothing_answered(&self) -> bool {
        self.asked.load(Ordering::Relaxed) && !self.answered.load(Ordering::Relaxed)
    }

    fn is_seed_host(&self, url: &str) -> bool {
        origin_and_key(url).is_some_and(|(_, key)| self.keys.contains(&key))
    }
}

/// The name `summary.json` gives an ending (`ending`, and `outcome` when the crawl did not fail).
pub fn ending_name(ending: Ending) -> &'static str {
    match ending {
        Ending::Complete => "complete",
        Ending::PageLimit => "page-limit",
        Ending::TimeLimit => "time-limit",
        Ending::ByteLimit => "byte-limit",
        Ending::Stopped => "stopped",
        Ending::Found => "found",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_needs_a_finished_crawl_and_more_than_the_ratio() {
        let of = |ending, nothing, failed, fetches| {
            RunOutcome::of(ending, nothing, failed, fetches, 0.5)
        };
        assert_eq!(
            of(Ending::Complete, false, 5, 10),
            RunOutcome::Ended(Ending::Complete)
        );
        assert_eq!(of(Ending::Complete, false, 6, 10), RunOutcome::MostlyFailed);
        assert_eq!(
            of(Ending::PageLimit, false, 6, 10),
            RunOutcome::MostlyFailed
        );
        assert_eq!(
            of(Ending::Complete, true, 0, 10),
            RunOutcome::NothingAnswered
        );
        assert_eq!(
            of(Ending::Complete, false, 0, 0),
            RunOutcome::Ended(Ending::Complete)
        );
        assert_eq!(
            of(Ending::Stopped, true, 9, 10),
            RunOutcome::Ended(Ending::Stopped)
        );
        assert_eq!(
            of(Ending::Found, false, 9, 10),
            RunOutcome::Ended(Ending::Found)
        );
        assert_eq!(
            RunOutcome::of(Ending::Complete, false, 10, 10, 1.0),
            RunOutcome::Ended(Ending::Complete)
        );
        assert!(RunOutcome::MostlyFailed.failed() && !RunOutcome::Ended(Ending::Complete).failed());
        assert_eq!(RunOutcome::NothingAnswered.name(), "nothing-answered");
        assert_eq!(RunOutcome::Ended(Ending::Complete).name(), "complete");
    }

    #[test]
    fn only_seed_hosts_count_and_only_once_asked() {
        let seeds = [Url::parse("http://a.test/x").unwrap()];
        let hosts = SeedHosts::new(&seeds);
        assert!(!hosts.nothing_answered(), "nothing asked yet");
        hosts.asked("http://b.test/");
        assert!(!hosts.nothing_answered(), "not a seed host");
        hosts.asked("http://a.test/robots.txt");
        assert!(hosts.nothing_answered());
        hosts.answered("http://b.test/");
        assert!(hosts.nothing_answered());
        hosts.answered("http://a.test:80/y");
        assert!(!hosts.nothing_answered());
    }
}
