//! When each host may be contacted again, kept across runs (its robots.txt answers are kept by
//! `robotstore`).
//!
//! `DIR/hosts.tsv`: `ORIGIN TAB UNIX_MILLISECONDS` for every host resting past the moment it
//! was saved (the dispatcher saves it every 30 seconds and at the end), so a resumed crawl does
//! not contact a host sooner than the delay rule allows.
//!
//! Wall-clock times are stored, and turned back into `Instant`s on loading.

use crate::schedule::politeness::Scheduler;
use crate::state::durable;
use anyhow::{Context, Result};
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use url::Url;

/// Saves every host that is resting past now.
pub fn save(path: &Path, scheduler: &Scheduler) -> Result<()> {
    let (now, wall) = (Instant::now(), SystemTime::now());
    let mut text = String::new();
    for (origin, ready_at) in scheduler.ready_times() {
        if let Some(rest) = ready_at
            .checked_duration_since(now)
            .filter(|d| !d.is_zero())
        {
            let at = (wall + rest).duration_since(UNIX_EPOCH).unwrap_or_default();
            text.push_str(&format!("{origin}\t{}\n", at.as_millis()));
        }
    }
    durable::replace(path, text.as_bytes()).with_context(|| format!("writing {}", path.display()))
}

/// Loads the resting times `save` recorded into a new scheduler (robots.txt answers are read
/// one host at a time, as hosts come back: `robotstore`). A damaged file is reported with its
/// name (it is the state directory's, not the user's input).
pub fn load(out: &Path, scheduler: &mut Scheduler) -> Result<()> {
    let (now, wall) = (Instant::now(), SystemTime::now());
    let hosts = out.join("hosts.tsv");
    let text = match fs::read_to_string(&hosts) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", hosts.display())),
    };
    for (i, line) in text.lines().enumerate() {
        let parsed = line.split_once('\t').and_then(|(origin, millis)| {
            Some((Url::parse(origin).ok()?, millis.parse::<u64>().ok()?))
        });
        let Some((origin, millis)) = parsed else {
            anyhow::bail!(
                "{}:{}: expected ORIGIN TAB MILLISECONDS",
                hosts.display(),
                i + 1
            );
        };
        let at = UNIX_EPOCH + Duration::from_millis(millis);
        if let Ok(rest) = at.duration_since(wall) {
            scheduler.restore(&origin, now + rest, now);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontier::entry::Entry;
    use crate::schedule::politeness::{DelayRule, Next, Work};
    use crate::schedule::robotstore::RobotsStore;

    #[test]
    fn robots_rules_and_rest_come_back_in_a_new_scheduler() {
        let dir = tempfile::tempdir().unwrap();
        let rule = DelayRule {
            factor: 10.0,
            min: Duration::ZERO,
            max: Duration::from_secs(60),
        };
        let store = RobotsStore::open(&dir.path().join("robots"), "crawl").unwrap();
        store
            .save("http://a.test", 200, b"User-agent: *\nDisallow: /private\n")
            .unwrap();
        let mut first = Scheduler::new(rule);
        let url = Url::parse("http://a.test/").unwrap();
        first.restore(
            &url,
            Instant::now() + Duration::from_secs(30),
            Instant::now(),
        );
        save(&dir.path().join("hosts.tsv"), &first).unwrap();

        let store = RobotsStore::open(&dir.path().join("robots"), "crawl").unwrap();
        let mut second = Scheduler::with_lanes(rule, 1, Some(store));
        load(dir.path(), &mut second).unwrap();
        let now = Instant::now();
        for path in ["/private/x", "/open"] {
            let url = Url::parse(&format!("http://a.test{path}")).unwrap();
            second.add(Entry::new(url.to_string(), 0, 0), now).unwrap();
        }
        let Next::WaitUntil(at) = second.next(now).unwrap() else {
            panic!("the host must still be resting, robots.txt known")
        };
        assert!(at > now + Duration::from_secs(25));
        let Next::Work(Work::Page { entry, .. }) = second.next(at).unwrap() else {
            panic!("a page, not robots.txt again")
        };
        assert_eq!(entry.url, "http://a.test/open", "/private is disallowed");
    }
}
