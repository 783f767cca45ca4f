//! `crawl shards --status`: every shard's report in the broker, and their totals. It only reads
//! (`RedisBroker::observe`): N, the reports and `INFO memory`. It stores no N and creates no
//! stream or group, so a status asked before the crawl starts (or with a wrong N) leaves the
//! broker as it was.

use crate::exit::Failure;
use crate::shard::broker::{Broker, BrokerError, ShardReport};
use crate::shard::owner::MAX_SHARDS;
use crate::shard::redis::RedisBroker;
use anyhow::anyhow;
use clap::Parser;
use std::io::Write;

/// Show the state of a sharded crawl: each shard's report in the broker, and the totals.
///
/// First `run R` (the run of the crawl the shards take part in: 1, then one more for each
/// recrawl), then one line per shard: `shard K/N`, `idle`, `busy` or `not started`, pages fetched, batches of
/// URLs it published and acknowledged; then a `total` line with the pages, the batches still
/// in transit and whether the crawl has ended (every shard idle, nothing in transit); then
/// the broker's memory (Redis `INFO memory`: `used_memory`, `used_memory_peak`). Before any
/// shard has connected: one line, `total TAB not started`. It writes nothing to the broker.
#[derive(Parser, Debug)]
#[command(version, max_term_width = 100)]
pub struct ShardsArgs {
    /// The broker the shards exchange URLs through (their --exchange).
    #[arg(long, value_name = "URL")]
    pub exchange: String,

    /// The seed file the shards were started with (it names the crawl in the broker).
    #[arg(long, value_name = "FILE")]
    pub seeds: String,

    /// N, the number of shards (of --shard K/N).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=MAX_SHARDS as i64))]
    pub count: u32,

    /// Print the shards' reports and their totals (the one thing `crawl shards` does so far).
    #[arg(long, required = true)]
    pub status: bool,
}

/// Runs `crawl shards --status`.
pub fn run(args: ShardsArgs) -> Result<(), Failure> {
    let seeds = crate::url::seeds::read_seeds(&args.seeds).map_err(Failure::bad_input)?;
    let namespace = crate::shard::namespace(&seeds);
    // Read-only: a status asked before the crawl starts must not store N or make streams.
    let text = match RedisBroker::observe(&args.exchange, &namespace, args.count)
        .map_err(BrokerError::into_failure)?
    {
        None => format!(
            "total\tnot started\tno shard of this crawl ({namespace}) has connected to {}\n",
            args.exchange
        ),
        Some(broker) => {
            let reports = broker.reports().map_err(BrokerError::into_failure)?;
            let (used, peak) = broker.memory().map_err(BrokerError::into_failure)?;
            let mut text = format!("run\t{}\n", broker.current_run());
            text.push_str(&render(&reports));
            text.push_str(&format!(
                "broker\tused_memory {used}\tused_memory_peak {peak}\n"
            ));
            text
        }
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| Failure::fatal(anyhow!("printing the status: {e}")))
}

/// The status lines of `reports` (shard K's at index K).
pub fn render(reports: &[Option<ShardReport>]) -> String {
    let n = reports.len();
    let mut text = String::new();
    let (mut pages, mut published, mut acked) = (0, 0, 0);
    for (k, report) in reports.iter().enumerate() {
        match report {
            Some(r) => {
                pages += r.pages;
                published += r.published;
                acked += r.acked;
                let state = if r.idle { "idle" } else { "busy" };
                text.push_str(&format!(
                    "shard {k}/{n}\t{state}\tpages {}\tpublished {}\tacked {}\n",
                    r.pages, r.published, r.acked
                ));
            }
            None => text.push_str(&format!("shard {k}/{n}\tnot started\n")),
        }
    }
    let ended = crate::shard::exchange::settled(reports);
    text.push_str(&format!(
        "total\t{}\tpages {pages}\tin transit {}\n",
        if ended { "ended" } else { "running" },
        published.saturating_sub(acked)
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_say_running_until_every_shard_is_idle_and_nothing_in_transit() {
        let idle = |pages, published, acked| {
            Some(ShardReport {
                idle: true,
                pages,
                published,
                acked,
            })
        };
        let text = render(&[idle(5, 2, 1), None]);
        assert_eq!(
            text,
            "shard 0/2\tidle\tpages 5\tpublished 2\tacked 1\nshard 1/2\tnot started\n\
             total\trunning\tpages 5\tin transit 1\n"
        );
        assert!(
            render(&[idle(5, 2, 1), idle(7, 1, 2)])
                .ends_with("total\tended\tpages 12\tin transit 0\n")
        );
    }
}
