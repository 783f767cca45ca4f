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
//! K/N is refused, and a restart after a kill takes its own lease back at once), and
//! `outbox/<dest>/` (see `outbox`). See ARCHITECTURE.md, "shard/".

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
/// broker's, its lease taken (with the directory's token, so a restart after a kill takes it
/// back at once), the directory's K/N recorded, its outboxes opened and their senders started.
/// A wrong N, a shard held by another process or a bad URL is bad input (exit status 2).
pub fn connect(
    out: &Path,
    shard: Shard,
    url: &str,
    seeds: &[Url],
    claim: &Claim,
) -> Result<Arc<Exchange>, Failure> {
    let broker = redis::RedisBroker::connect(url, &namespace(seeds), shard.index, shard.count)
        .map_err(BrokerError::into_failure)?
        .with_lease_token(&claim.token);
    broker
        .lease(exchange::LEASE)
        .map_err(BrokerError::into_failure)?;
    if claim.fresh {
        record(out, shard, &claim.token)?;
    }
    let broker: Arc<dyn Broker> = Arc::new(broker);
    let outboxes = sender::Outboxes::open(
        &out.join("shard").join("outbox"),
        shard.index,
        shard.count,
        Arc::clone(&broker),
    )?;
    Ok(Arc::new(Exchange::new(
        shard,
        broker,
        outboxes,
        sentcache::SENT_CACHE_ENTRIES,
    )))
}

/// What a state directory says of its shard (`DIR/shard/id`).
#[derive(Debug)]
pub struct Claim {
    /// The directory's lease token in the broker.
    pub token: String,
    /// The directory has no shard yet: `record` once the broker has accepted it.
    pub fresh: bool,
}

/// Checks that the state directory `out` belongs to `shard` (a fresh one gets a new token).
/// Another K/N is refused, and so is a directory of an unsharded crawl (its seen set holds
/// every host's URLs) or a sharded one resumed without `--shard`.
pub fn claim_dir(out: &Path, shard: Option<Shard>) -> Result<Option<Claim>> {
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
        // Not yet: the broker keeps the finished run's reports (every shard idle, nothing in
        // transit), so a shard recrawling would end before the others had sent it anything.
        (Some(shard), Some((was, _))) if was == shard && recrawl::is_complete(out) => bail!(
            "--shard {shard}: --out {} holds a completed shard; a sharded crawl cannot be \
             recrawled yet (the broker still holds the finished run's reports, so a shard would \
             end before the others sent it their URLs): start every shard in a new --out with a \
             broker database of its own (--exchange redis://HOST:PORT/DB)",
            out.display()
        ),
        (Some(shard), Some((was, token))) if was == shard => Ok(Some(Claim {
            token,
            fresh: false,
        })),
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
            Ok(Some(Claim { token, fresh: true }))
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
    fn a_directory_keeps_its_shard() {
        let dir = tempfile::tempdir().unwrap();
        let two_of_four = Shard { index: 2, count: 4 };
        let claim = claim_dir(dir.path(), Some(two_of_four)).unwrap().unwrap();
        assert!(claim.fresh);
        // Nothing is written until the broker accepted the shard.
        assert!(claim_dir(dir.path(), Some(Shard { index: 2, count: 5 })).is_ok());
        record(dir.path(), two_of_four, &claim.token).unwrap();
        let again = claim_dir(dir.path(), Some(two_of_four)).unwrap().unwrap();
        assert_eq!((again.token, again.fresh), (claim.token, false));
        let err = claim_dir(dir.path(), Some(Shard { index: 2, count: 5 })).unwrap_err();
        assert!(err.to_string().contains("holds shard 2/4"), "{err}");
        let err = claim_dir(dir.path(), None).unwrap_err();
        assert!(err.to_string().contains("--shard 2/4"), "{err}");
        recrawl::mark_complete(dir.path()).unwrap();
        let err = claim_dir(dir.path(), Some(two_of_four)).unwrap_err();
        assert!(err.to_string().contains("cannot be recrawled yet"), "{err}");
        let plain = tempfile::tempdir().unwrap();
        assert!(claim_dir(plain.path(), None).unwrap().is_none());
        std::fs::create_dir(plain.path().join("frontier")).unwrap();
        let err = claim_dir(plain.path(), Some(two_of_four)).unwrap_err();
        assert!(err.to_string().contains("unsharded"), "{err}");
    }
}
