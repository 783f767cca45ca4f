//! What the crawl knows of each host, kept across runs: its robots.txt and when it may be
//! contacted again.
//!
//! - `DIR/robots/HASH`: each robots.txt answer as fetched, written (atomically) when it
//!   arrives: a first line `STATUS UNIX_SECONDS ORIGIN` (status 0: no answer), then the body's
//!   first 512 KiB (RFC 9309 asks parsers to read at least 500 KiB). The rules are read back
//!   (`load_robots`) when a host that left the scheduler's memory has URLs again, in this run or
//!   a resumed one, while they are fresh (24 hours; 5 minutes for an unavailable file).
//!   `--restart` removes them all, a recrawl the unavailable ones (`forget_unreachable`).
//! - `DIR/hosts.tsv`: `ORIGIN TAB UNIX_MILLISECONDS` for every host resting past the moment it
//!   was saved (the dispatcher saves it every 30 seconds and at the end), so a resumed crawl
//!   does not contact a host sooner than the delay rule allows.
//!
//! Wall-clock times are stored, and turned back into `Instant`s on loading.

use crate::schedule::politeness::Scheduler;
use crate::schedule::robots::RobotsRules;
use crate::state::durable;
use anyhow::{Context, Result};
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use url::Url;

/// How much of a robots.txt body is kept.
const ROBOTS_KEPT: usize = 512 * 1024;

/// Records a robots.txt answer (`status` 0 when there was none) under `robots_dir`.
pub fn save_robots(robots_dir: &Path, origin: &str, status: u16, body: &[u8]) -> Result<()> {
    let mut file = format!("{status} {} {origin}\n", unix_secs(SystemTime::now())).into_bytes();
    file.extend_from_slice(&body[..body.len().min(ROBOTS_KEPT)]);
    let path = robots_dir.join(file_name(origin));
    // A cache: lost to a power cut, the answer is fetched again (a kill cannot tear it).
    durable::replace_unsynced(&path, &file).with_context(|| format!("writing {}", path.display()))
}

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

/// The robots.txt answer `save_robots` recorded for `origin`, parsed for `token`, with the
/// instant it was fetched, if it is still fresh (24 hours; 5 minutes for an unavailable file).
/// A missing, torn or damaged file is no answer: the host's robots.txt is fetched again.
pub fn load_robots(robots_dir: &Path, origin: &str, token: &str) -> Option<(RobotsRules, Instant)> {
    let bytes = fs::read(robots_dir.join(file_name(origin))).ok()?;
    let (status, fetched, saved_origin, body) = parse_robots(&bytes)?;
    if saved_origin.origin().ascii_serialization() != origin {
        return None; // a checksum collision: not this host's file
    }
    let rules = if status == 0 {
        RobotsRules::unreachable(token)
    } else {
        RobotsRules::from_response(token, status, body)
    };
    let ttl = if rules.disallows_everything() {
        crate::schedule::politeness::ROBOTS_RETRY
    } else {
        crate::schedule::politeness::ROBOTS_TTL
    };
    let age = SystemTime::now()
        .duration_since(fetched)
        .unwrap_or_default();
    let at = Instant::now().checked_sub(age)?;
    (age < ttl).then_some((rules, at))
}

/// Forgets the robots.txt answers that were not had (no answer, a 5xx: "unreachable", which
/// blocks the host for `ROBOTS_RETRY`), and damaged files, so that a new crawl generation (a
/// recrawl) asks those hosts again at once; answers that were had stay while fresh. Removing
/// a cache file is safe at any moment: a missing answer is fetched again.
pub fn forget_unreachable(robots_dir: &Path) -> Result<()> {
    let entries = match fs::read_dir(robots_dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", robots_dir.display())),
    };
    for entry in entries {
        let path = entry
            .with_context(|| format!("reading {}", robots_dir.display()))?
            .path();
        // The first line is the head; an origin is far shorter than this.
        let mut head = Vec::new();
        if let Ok(file) = fs::File::open(&path) {
            let _ = std::io::Read::read_to_end(&mut std::io::Read::take(file, 4096), &mut head);
        }
        let had = parse_robots(&head).is_some_and(|(status, ..)| {
            status != 0 && !RobotsRules::from_response("crawl", status, b"").disallows_everything()
        });
        if !had {
            durable::remove_if_present(&path)
                .with_context(|| format!("removing {}", path.display()))?;
        }
    }
    Ok(())
}

/// Loads the resting times `save` recorded into a new scheduler (robots.txt answers are read
/// one host at a time, as hosts come back: `load_robots`). A damaged file is reported with its
/// name (it is the state directory's, not the user's input).
pub fn load(out: &Path, scheduler: &mut Scheduler) -> Result<()> {
    let robots_dir = out.join("robots");
    fs::create_dir_all(&robots_dir)
        .with_context(|| format!("creating {}", robots_dir.display()))?;
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

fn parse_robots(bytes: &[u8]) -> Option<(u16, SystemTime, Url, &[u8])> {
    let end = bytes.iter().position(|&b| b == b'\n')?;
    let head = std::str::from_utf8(&bytes[..end]).ok()?;
    let mut parts = head.splitn(3, ' ');
    let status = parts.next()?.parse().ok()?;
    let secs: u64 = parts.next()?.parse().ok()?;
    let origin = Url::parse(parts.next()?).ok()?;
    Some((
        status,
        UNIX_EPOCH + Duration::from_secs(secs),
        origin,
        &bytes[end + 1..],
    ))
}

fn file_name(origin: &str) -> String {
    format!(
        "{:016x}",
        crate::seen::checksum::checksum(origin.as_bytes())
    )
}

fn unix_secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontier::entry::Entry;
    use crate::schedule::politeness::{DelayRule, Next, RobotsStore, Work};

    #[test]
    fn robots_rules_and_rest_come_back_in_a_new_scheduler() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("robots")).unwrap();
        let rule = DelayRule {
            factor: 10.0,
            min: Duration::ZERO,
            max: Duration::from_secs(60),
        };
        save_robots(
            &dir.path().join("robots"),
            "http://a.test",
            200,
            b"User-agent: *\nDisallow: /private\n",
        )
        .unwrap();
        let mut first = Scheduler::new(rule);
        let url = Url::parse("http://a.test/").unwrap();
        first.restore(
            &url,
            Instant::now() + Duration::from_secs(30),
            Instant::now(),
        );
        save(&dir.path().join("hosts.tsv"), &first).unwrap();

        let store = RobotsStore {
            dir: dir.path().join("robots"),
            token: "crawl".into(),
        };
        let mut second = Scheduler::with_connections(rule, 1, Some(store));
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
