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
//! (its given-up URLs are asked for again) rather than recrawling. A crawl where no seed host
//! answered because the address policy refused them (a seed by name whose address is private,
//! link-local or the cloud metadata's; nothing was sent) is `seeds-refused` instead: exit
//! status 2, bad input the user fixes (a seed given as such an address is refused before the
//! crawl starts). Any other ending keeps its own name and status (`stopped`, `found`).

use crate::schedule::dispatch::Ending;
use crate::url::normalize::origin_and_key;
use rustc_hash::FxHashSet;
use std::sync::Mutex;
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
    /// No seed host answered, and the address policy refused a seed host's request.
    SeedsRefused,
}

/// What the seeds' hosts did in this run (`SeedHosts::verdict`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeedVerdict {
    /// One answered, or none was asked (a resumed run).
    Answered,
    /// Some were asked and none answered.
    NothingAnswered,
    /// None answered, and the address policy refused a request to one.
    Refused,
}

impl RunOutcome {
    /// The outcome of a crawl that ended `ending`, with `failed` of `fetches` failed (see the
    /// module doc) and `seeds` from `SeedHosts`.
    pub fn of(
        ending: Ending,
        seeds: SeedVerdict,
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
        match seeds {
            SeedVerdict::Refused => return RunOutcome::SeedsRefused,
            SeedVerdict::NothingAnswered => return RunOutcome::NothingAnswered,
            SeedVerdict::Answered => {}
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
            RunOutcome::SeedsRefused => "seeds-refused",
        }
    }

    /// Whether the crawl finished but failed (exit status 3, or 2 for `SeedsRefused`; not
    /// marked complete).
    pub fn failed(self) -> bool {
        !matches!(self, RunOutcome::Ended(_))
    }
}

/// The seeds' hosts, and whether any of them was asked and any answered in this run.
#[derive(Default)]
pub struct SeedHosts {
    /// `host:port` of every seed.
    keys: FxHashSet<String>,
    asked: AtomicBool,
    answered: AtomicBool,
    /// The first request to a seed host the address policy refused: its URL and why.
    refusal: Mutex<Option<String>>,
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

    /// A request to `url` was refused by the address policy (`why`, the refusal's message);
    /// kept if its host is a seed's and it is the first.
    pub fn refused(&self, url: &str, why: &str) {
        if self.is_seed_host(url) {
            let mut refusal = self.refusal.lock().unwrap_or_else(|e| e.into_inner());
            refusal.get_or_insert_with(|| format!("{url}: {why}"));
        }
    }

    /// The first refusal of a seed host's request (`refused`), if any.
    pub fn refusal(&self) -> Option<String> {
        (self.refusal.lock().unwrap_or_else(|e| e.into_inner())).clone()
    }

    /// Whether a seed host was asked in this run and none answered.
    pub fn nothing_answered(&self) -> bool {
        self.asked.load(Ordering::Relaxed) && !self.answered.load(Ordering::Relaxed)
    }

    /// What the seeds' hosts did in this run.
    pub fn verdict(&self) -> SeedVerdict {
        match (self.nothing_answered(), self.refusal().is_some()) {
            (false, _) => SeedVerdict::Answered,
            (true, false) => SeedVerdict::NothingAnswered,
            (true, true) => SeedVerdict::Refused,
        }
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
        let of = |ending, nothing: bool, failed, fetches| {
            let seeds = match nothing {
                true => SeedVerdict::NothingAnswered,
                false => SeedVerdict::Answered,
            };
            RunOutcome::of(ending, seeds, failed, fetches, 0.5)
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
            RunOutcome::of(Ending::Complete, SeedVerdict::Answered, 10, 10, 1.0),
            RunOutcome::Ended(Ending::Complete)
        );
        assert_eq!(
            RunOutcome::of(Ending::Complete, SeedVerdict::Refused, 0, 1, 0.5),
            RunOutcome::SeedsRefused
        );
        assert!(RunOutcome::SeedsRefused.failed());
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

    /// A seed host refused by the address policy, and none answering: the seeds were
    /// refused; another host's refusal does not count, and an answer outweighs a refusal.
    #[test]
    fn a_refused_seed_host_is_the_verdict_when_none_answered() {
        let seeds = [Url::parse("http://metadata.test/x").unwrap()];
        let hosts = SeedHosts::new(&seeds);
        hosts.asked("http://metadata.test/robots.txt");
        hosts.refused("http://b.test/", "refused to connect to 10.0.0.1 (private)");
        assert_eq!(hosts.verdict(), SeedVerdict::NothingAnswered);
        let why = "refused to connect to 169.254.169.254 (link-local, cloud metadata)";
        hosts.refused("http://metadata.test/robots.txt", why);
        hosts.refused("http://metadata.test/x", "a later one");
        assert_eq!(hosts.verdict(), SeedVerdict::Refused);
        assert_eq!(
            hosts.refusal().unwrap(),
            format!("http://metadata.test/robots.txt: {why}")
        );
        hosts.answered("http://metadata.test/y");
        assert_eq!(hosts.verdict(), SeedVerdict::Answered);
    }
}
