//! Shards: many crawl processes, each owning the hosts that hash to it, exchanging the URLs
//! they discover for each other's hosts through a broker. A stage between `url`
//! and `seen` for discovered URLs: those of hosts owned elsewhere leave here.
//!
//! - `owner`: `--shard K/N` and which shard owns a host (jump consistent hash);
//! - `sentcache`: the CLOCK cache of URLs recently sent, checked before an outbox;
//! - `exchange`: what the crawl calls (`route`, the receiver, the end of the crawl);
//! - `broker`: the trait the exchange talks to, and the batch encoding; `redis`: its
//!   implementation on Redis Streams;
//! - `outbox`: a durable per-destination queue on disk, what a page's cross-shard links are
//!   written to before the page counts as done; `sender`: one thread per destination, moving
//!   its outbox into the broker (and `Outboxes`, all of them, as the exchange uses them);
//! - `status`: `crawl shards --status`, the totals of every shard's report.
//!
//! On disk (`DIR/shard/`): `id` (`K/N` and this directory's lease token: a resume with another
//! K/N is refused, and a restart after a kill takes its own lease back at once), `run` (the run
//! of the crawl this directory takes part in, written once the broker accepted it), and
//! `outbox/<dest>/` (see `outbox`). `DIR/complete` of a shard names the run that completed
//! (`run R`), so that the next start comes for run R+1 even if it was cut short after
//! recording R+1 and before `recrawl::prepare` removed the mark. See ARCHITECTURE.md, "shard/".
//!
//! Runs: the first crawl is run 1; a shard started again on a completed directory recrawls in
//! the next run (as does `--restart`, which forgets the previous fetches); an unfinished one
//! resumes its run. The broker refuses a shard of another run than its current one, or the
//! next once the current has ended (`redis`, `JOIN`).

pub mod broker;
pub mod exchange;
pub mod outbox;
pub mod owner;
pub mod redis;
pub mod sender;
pub mod sentcache;
pub mod status;

use crate::exit::Failure;
use crate::recrawl;
use crate::shard::broker::{Broker, BrokerError};
use crate::shard::owner::Shard;
use crate::state::durable;
use anyhow::{Context, Result, bail};
use std::path::Path;
use std::sync::Arc;
use url::Url;

pub use exchange::{Exchange, ExchangeStats};

/// The broker namespace of a crawl: `crawl:` and the hex XXH3 of its sorted, distinct canonical
/// seeds, so that every shard of one crawl agrees on it without another flag. N is not part of
/// it: the broker stores N under the namespace, so a shard started with another N is refused
/// rather than silently starting a crawl of its own.
pub fn namespace(seeds: &[Url]) -> String {
    let mut sorted: Vec<&str> = seeds.iter().map(Url::as_str).collect();
    sorted.sort_unstable();
    sorted.dedup();
    let text = sorted.join("\n");
    format!(
        "crawl:{:016x}",
        crate::seen::checksum::checksum(text.as_bytes())
    )
}

/// Connects shard `shard` of the crawl of `seeds` to the broker at `url`: N checked against the
/// broker's, the directory's run joined, its lease taken (with the directory's token, so a
/// restart after a kill takes it back at once), the directory's K/N and run recorded, its
/// outboxes opened and their senders started. A wrong N or run, a shard held by another
/// process or a bad URL is bad input (exit status 2).
pub fn connect(
    out: &Path,
    shard: Shard,
    url: &str,
    seeds: &[Url],
    claim: &Claim,
) -> Result<Arc<Exchange>, Failure> {
    let broker = redis::RedisBroker::connect_run(
        url,
        &namespace(seeds),
        shard.index,
        shard.count,
        claim.run,
        redis::DEFAULT_RECONNECT_LIMIT,
    )
    .map_err(|e| refused_in(out, e))?
    .with_lease_token(&claim.token);
    broker
        .lease(exchange::LEASE)
        .map_err(BrokerError::into_failure)?;
    if claim.fresh {
        record(out, shard, &claim.token)?;
    }
    let run = broker.current_run();
    record_run(out, run)?;
    let broker: Arc<dyn Broker> = Arc::new(broker);
    let outboxes = sender::Outboxes::open(
        &out.join("shard").join("outbox"),
        shard.index,
        shard.count,
        Arc::clone(&broker),
    )?;
    Ok(Arc::new(Exchange::new(
        shard,
        run,
        broker,
        outboxes,
        sentcache::SENT_CACHE_ENTRIES,
    )))
}

/// A refusal of the broker's, naming the directory when it is about its run.
fn refused_in(out: &Path, e: BrokerError) -> Failure {
    match e {
        BrokerError::WrongRun { .. } => {
            Failure::bad_input(anyhow::anyhow!("--out {}: {e}", out.display()))
        }
        e => e.into_failure(),
    }
}

/// What a state directory says of its shard (`DIR/shard/id`, `DIR/shard/run`).
#[derive(Debug)]
pub struct Claim {
    /// The directory's lease token in the broker.
    pub token: String,
    /// The directory has no shard yet: `record` once the broker has accepted it.
    pub fresh: bool,
    /// The run it comes for: None for a fresh directory (the broker's current run, or the next
    /// one if that has ended).
    pub run: Option<u64>,
}

/// Checks that the state directory `out` belongs to `shard` (a fresh one gets a new token),
/// and says which run it comes for: the one recorded when unfinished, the next when complete
/// or with `restart`. Another K/N is refused, and so is a directory of an unsharded crawl (its
/// seen set holds every host's URLs) or a sharded one resumed without `--shard`.
pub fn claim_dir(out: &Path, shard: Option<Shard>, restart: bool) -> Result<Option<Claim>> {
    let path = out.join("shard").join("id");
    let recorded = match std::fs::read_to_string(&path) {
        Ok(text) => {
            let (k_of_n, token) = text
                .trim_end()
                .split_once('\t')
                .unwrap_or((text.trim(), ""));
            let was = Shard::parse(k_of_n)
                .with_context(|| format!("{}: not a shard's record", path.display()))?;
            Some((was, token.to_owned()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    match (shard, recorded) {
        (None, None) => Ok(None),
        (None, Some((was, _))) => bail!(
            "--out {}: this directory holds shard {was} of a sharded crawl; resume it with \
             --shard {was} --exchange URL",
            out.display()
        ),
        (Some(shard), Some((was, token))) if was == shard => {
            let recorded = recorded_run(out)?.unwrap_or(1);
            let run = match completed_run(out)? {
                Some(completed) => completed.unwrap_or(recorded) + 1,
                None if restart => recorded + 1,
                None => recorded,
            };
            Ok(Some(Claim {
                token,
                fresh: false,
                run: Some(run),
            }))
        }
        (Some(shard), Some((was, _))) => bail!(
            "--shard {shard}: --out {} holds shard {was}; a shard keeps its K and N for the \
             whole crawl (N decides which hosts each shard owns)",
            out.display()
        ),
        (Some(shard), None) => {
            if out.join("seen").exists() || out.join("frontier").exists() {
                bail!(
                    "--shard {shard}: --out {} holds an unsharded crawl; give each shard a \
                     directory of its own",
                    out.display()
                );
            }
            // Told to a second claimant: where the holder crawls.
            let token = lease_token(&format!("the shard in {}", out.display()));
            Ok(Some(Claim {
                token,
                fresh: true,
                run: None,
            }))
        }
    }
}

/// Records `shard` and its lease token in `out` (`DIR/shard/id`), once the broker accepted it.
pub fn record(out: &Path, shard: Shard, token: &str) -> Result<()> {
    let dir = out.join("shard");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let path = dir.join("id");
    durable::replace(&path, format!("{shard}\t{token}\n").as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

/// Records the run this directory takes part in (`DIR/shard/run`), once the broker accepted it.
pub fn record_run(out: &Path, run: u64) -> Result<()> {
    let path = out.join("shard").join("run");
    durable::replace(&path, format!("{run}\n").as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

/// The run recorded in `DIR/shard/run` (None before the first connection, or for a directory
/// of a version before runs: its crawl was run 1).
fn recorded_run(out: &Path) -> Result<Option<u64>> {
    let path = out.join("shard").join("run");
    match std::fs::read_to_string(&path) {
        Ok(text) => text
            .trim()
            .parse()
            .map(Some)
            .with_context(|| format!("{}: not a run number: {text:?}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// None if the crawl in `out` is not complete; else the run its mark names (`run R`), or
/// Some(None) for a mark that names none (an unsharded crawl's, or one of before runs).
fn completed_run(out: &Path) -> Result<Option<Option<u64>>> {
    if !recrawl::is_complete(out) {
        return Ok(None);
    }
    let path = out.join(recrawl::COMPLETE);
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    Ok(Some(
        text.trim()
            .strip_prefix("run ")
            .and_then(|r| r.parse().ok()),
    ))
}

/// Marks the crawl in `out` complete (`recrawl::mark_complete`), naming the shard's run when
/// it is a shard's.
pub fn mark_complete(out: &Path) -> Result<()> {
    match recorded_run(out)? {
        Some(run) => recrawl::mark_complete_with(out, &format!("run {run}\n")),
        None => recrawl::mark_complete(out),
    }
}

/// A lease token: `HOLDER on HOST (nonce)`, told to a second claimant of the shard; the nonce
/// (of the holder, the time and the process) tells two holders of one description apart.
pub(crate) fn lease_token(holder: &str) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let nonce = crate::seen::checksum::checksum(
        format!(
            "{holder} {:?} {}",
            std::time::SystemTime::now(),
            std::process::id()
        )
        .as_bytes(),
    );
    format!("{holder} on {} ({nonce:016x})", host.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_namespace_depends_on_the_seeds_as_a_set() {
        let a = Url::parse("http://a.test/").unwrap();
        let b = Url::parse("http://b.test/").unwrap();
        let ab = namespace(&[a.clone(), b.clone()]);
        assert_eq!(ab, namespace(&[b.clone(), a.clone(), a.clone()]));
        assert_ne!(ab, namespace(&[a]));
        assert!(ab.starts_with("crawl:") && ab.len() == 6 + 16, "{ab}");
    }

    #[test]
    fn a_directory_keeps_its_shard_and_says_which_run_it_comes_for() {
        let dir = tempfile::tempdir().unwrap();
        let two_of_four = Shard { index: 2, count: 4 };
        let claim = claim_dir(dir.path(), Some(two_of_four), false)
            .unwrap()
            .unwrap();
        assert!(claim.fresh);
        assert_eq!(claim.run, None, "a fresh directory joins the broker's run");
        // Nothing is written until the broker accepted the shard.
        assert!(claim_dir(dir.path(), Some(Shard { index: 2, count: 5 }), false).is_ok());
        record(dir.path(), two_of_four, &claim.token).unwrap();
        record_run(dir.path(), 1).unwrap();
        let again = claim_dir(dir.path(), Some(two_of_four), false)
            .unwrap()
            .unwrap();
        assert_eq!(
            (again.token, again.fresh, again.run),
            (claim.token, false, Some(1))
        );
        let err = claim_dir(dir.path(), Some(Shard { index: 2, count: 5 }), false).unwrap_err();
        assert!(err.to_string().contains("holds shard 2/4"), "{err}");
        let err = claim_dir(dir.path(), None, false).unwrap_err();
        assert!(err.to_string().contains("--shard 2/4"), "{err}");
        let run = |restart| {
            claim_dir(dir.path(), Some(two_of_four), restart)
                .unwrap()
                .unwrap()
                .run
        };
        assert_eq!(run(true), Some(2), "--restart starts the next run");
        // Complete: the next run, even after recording it before the mark went away.
        mark_complete(dir.path()).unwrap();
        assert_eq!(run(false), Some(2));
        record_run(dir.path(), 2).unwrap();
        assert_eq!((run(false), run(true)), (Some(2), Some(2)));
        recrawl::prepare(dir.path(), false).unwrap();
        assert_eq!(run(false), Some(2), "resumes run 2");
        let plain = tempfile::tempdir().unwrap();
        assert!(claim_dir(plain.path(), None, false).unwrap().is_none());
        std::fs::create_dir(plain.path().join("frontier")).unwrap();
        let err = claim_dir(plain.path(), Some(two_of_four), false).unwrap_err();
        assert!(err.to_string().contains("unsharded"), "{err}");
    }
}
