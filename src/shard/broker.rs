//! The exchange between shards, behind one small trait, so that another broker (NATS
//! JetStream, Kafka) can take Redis's place without touching the crawl.
//!
//! What every implementation must keep:
//! - **At least once.** A batch `publish` accepted stays in the destination's stream until the
//!   destination `ack`s it; a batch read and not acknowledged (the reader was killed, or its
//!   connection broke) is read again. Duplicates are harmless: the receiving DUE drops them.
//! - **Counters that balance.** `published` grows in the same atomic step that appends a batch,
//!   `acked` in the one that acknowledges it (a batch acknowledged twice counts once), so
//!   Σ published − Σ acked is exactly the number of batches still in some stream: the end of the
//!   crawl needs it to be zero.
//! - **Bounded streams.** `publish` refuses (Ok(false)) while the destination's stream holds its
//!   limit of batches; the backlog waits in the sender's outbox on disk, not in broker memory.

use crate::exit::Failure;
use anyhow::anyhow;
use std::fmt;
use std::time::Duration;

/// A URL crossing to the shard that owns its host; depth travels with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Handoff {
    /// Canonical, so it holds no tab or line break.
    pub url: String,
    /// The depth of the page that linked it, plus one.
    pub depth: u32,
}

/// A batch read from this shard's stream, to acknowledge once its URLs are durable here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// The broker's id of the batch, what `ack` takes.
    pub id: String,
    /// The shard that published it.
    pub from: u32,
    pub urls: Vec<Handoff>,
}

/// What a shard tells the others, for the end of the crawl (all counters monotonic).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShardReport {
    pub idle: bool,
    /// Batches this shard has published (to every destination).
    pub published: u64,
    /// Batches this shard has acknowledged (read from its own stream).
    pub acked: u64,
    /// Pages this shard has fetched.
    pub pages: u64,
}

/// The exchange as the crawl sees it. Shared by the sender threads and the receiver.
pub trait Broker: Send + Sync {
    /// Appends one batch to shard `to`'s stream; Ok(false) when the stream is full (caller
    /// retries later, the batch stays in its outbox). Ok(true) once the broker has it.
    fn publish(&self, to: u32, batch: &[Handoff]) -> Result<bool, BrokerError>;
    /// Up to `max` batches for this shard: first those read before and never acknowledged
    /// (a killed run's), then new ones; waits at most `wait` when there are none.
    fn read(&self, max: usize, wait: Duration) -> Result<Vec<Delivery>, BrokerError>;
    /// Acknowledges and deletes (XACK + XDEL) batches whose URLs are durable in this shard,
    /// and adds their count to this shard's `acked` in the same transaction.
    fn ack(&self, ids: &[String]) -> Result<(), BrokerError>;
    /// Publishes this shard's report: `idle` and `pages`. (`published` and `acked` are the
    /// broker's own counts, kept in the steps that publish and acknowledge, so the values
    /// given here are not written: a caller cannot make them disagree with the streams.)
    fn report(&self, report: &ShardReport) -> Result<(), BrokerError>;
    /// All N shards' reports (None for a shard that never reported: a late starter).
    fn reports(&self) -> Result<Vec<Option<ShardReport>>, BrokerError>;
    /// Takes (or renews) this shard's lease; Err(Claimed) if another live process holds it.
    fn lease(&self, ttl: Duration) -> Result<(), BrokerError>;
    /// Drops the lease at a clean exit.
    fn release(&self) -> Result<(), BrokerError>;
    /// Marks the crawl as stopped for `--find TEXT`: a shard found `text`, `by` says which and
    /// where. The first mark for a text stays (two shards finding it at once agree on one).
    fn stop(&self, text: &str, by: &str) -> Result<(), BrokerError>;
    /// The stop mark for `text`, if a shard set one (`by` as `stop` was given it).
    fn stopped(&self, text: &str) -> Result<Option<String>, BrokerError>;
    /// Records that this shard saw its run end (every shard idle, nothing in transit): the
    /// next run may start, and this one's keys expire once it has.
    fn end_run(&self) -> Result<(), BrokerError>;
}

/// Why the exchange failed. Every message names the broker or the shard concerned.
#[derive(Debug)]
pub enum BrokerError {
    /// Another live process holds this shard's lease.
    Claimed {
        shard: u32,
        count: u32,
        holder: String,
        expires_in: Duration,
    },
    /// The crawl was started with a different number of shards.
    WrongCount {
        namespace: String,
        stored: u32,
        given: u32,
    },
    /// The shard comes for another run than the broker's (`given` 0: a fresh directory).
    WrongRun {
        namespace: String,
        shard: u32,
        count: u32,
        given: u64,
        current: u64,
    },
    /// The broker did not answer within the reconnect limit.
    Unavailable {
        url: String,
        tried_for: Duration,
        attempts: u32,
        last: String,
    },
    /// The broker answered with an error that retrying does not mend.
    Refused {
        url: String,
        command: &'static str,
        message: String,
    },
    /// An entry of a stream is not what a shard writes.
    Malformed {
        stream: String,
        id: String,
        why: String,
    },
    /// The broker URL itself is unusable.
    BadUrl { url: String, message: String },
}

impl BrokerError {
    /// Whether the crawl's command line or setup is at fault (exit status 2), not the run.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            BrokerError::Claimed { .. }
                | BrokerError::WrongCount { .. }
                | BrokerError::WrongRun { .. }
                | BrokerError::BadUrl { .. }
        )
    }

    /// The failure to exit with: bad input (exit status 2) for a usage error, else fatal.
    pub fn into_failure(self) -> Failure {
        match self.is_usage() {
            true => Failure::bad_input(anyhow!("{self}")),
            false => Failure::fatal(anyhow!("{self}")),
        }
    }
}

impl fmt::Display for BrokerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BrokerError::Claimed {
                shard,
                count,
                holder,
                expires_in,
            } => write!(
                f,
                "shard {shard}/{count} is already claimed by {holder} (its lease expires in \
                 {:.1} s unless renewed)",
                expires_in.as_secs_f64()
            ),
            BrokerError::WrongCount {
                namespace,
                stored,
                given,
            } => write!(
                f,
                "this crawl ({namespace}) runs with {stored} shards, not {given}: \
                 the N of --shard K/N must be the same for every shard and every run"
            ),
            BrokerError::WrongRun {
                namespace,
                shard,
                count,
                given,
                current,
            } => {
                write!(
                    f,
                    "shard {shard}/{count} comes for run {given} of this crawl ({namespace}), "
                )?;
                match given > current {
                    true => write!(
                        f,
                        "but the broker's run {current} has not ended: a run starts once the \
                         shards of the one before have ended it; finish run {current} first \
                         (run each unfinished shard's command again, without --restart)"
                    ),
                    false => write!(
                        f,
                        "but the broker is at run {current}: the other shards went on without \
                         this directory; start it with --restart (it joins run {current} \
                         afresh) or give it a new --out"
                    ),
                }
            }
            BrokerError::Unavailable {
                url,
                tried_for,
                attempts,
                last,
            } => write!(
                f,
                "exchange {url}: no answer after {attempts} attempts over {:.1} s ({last})",
                tried_for.as_secs_f64()
            ),
            BrokerError::Refused {
                url,
                command,
                message,
            } => {
                write!(f, "exchange {url}: {command} refused: {message}")
            }
            BrokerError::Malformed { stream, id, why } => {
                write!(f, "exchange stream {stream}, entry {id}: {why}")
            }
            BrokerError::BadUrl { url, message } => write!(f, "--exchange {url}: {message}"),
        }
    }
}

impl std::error::Error for BrokerError {}

/// The payload of one batch: `depth TAB url` lines. Canonical URLs hold no tab or line break
/// (they are percent-encoded), so the lines need no escaping.
pub fn encode(batch: &[Handoff]) -> String {
    let mut text = String::with_capacity(batch.iter().map(|h| h.url.len() + 12).sum());
    for handoff in batch {
        debug_assert!(!handoff.url.contains(['\t', '\n']), "{}", handoff.url);
        text.push_str(&handoff.depth.to_string());
        text.push('\t');
        text.push_str(&handoff.url);
        text.push('\n');
    }
    text
}

/// Reads `encode`'s lines back; the error says which line is wrong.
pub fn decode(text: &str) -> Result<Vec<Handoff>, String> {
    let mut batch = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let parsed = line
            .split_once('\t')
            .and_then(|(depth, url)| Some((depth.parse().ok()?, url)))
            .filter(|(_, url)| !url.is_empty());
        match parsed {
            Some((depth, url)) => batch.push(Handoff {
                url: url.to_owned(),
                depth,
            }),
            None => return Err(format!("line {} is not `depth TAB url`: {line:?}", n + 1)),
        }
    }
    Ok(batch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_survives_its_encoding_and_a_bad_line_is_named() {
        let batch = vec![
            Handoff {
                url: "http://a.test/x?q=1%09".into(),
                depth: 3,
            },
            Handoff {
                url: "http://b.test:8080/".into(),
                depth: 0,
            },
        ];
        assert_eq!(decode(&encode(&batch)).unwrap(), batch);
        assert_eq!(decode("").unwrap(), vec![]);
        let err = decode("1\thttp://a.test/\nx\thttp://b.test/\n").unwrap_err();
        assert!(err.starts_with("line 2 "), "{err}");
        assert!(decode("7\t\n").is_err());
    }
}
