//! Which shard owns a URL: the host-partitioning rule every shard of a crawl applies alike.
//!
//! A URL belongs to the shard its politeness key (`host:port`, canonical: the key the
//! scheduler's per-host queues use, `url::normalize::origin_and_key`) maps to, so each host is
//! crawled by exactly one shard and politeness needs no coordination (Mercator, UbiCrawler).
//! The map is Lamping and Veach's jump consistent hash ("A Fast, Minimal Memory, Consistent
//! Hash Algorithm", 2014) of the key's XXH3-64: buckets are balanced, and going from N to N+1
//! shards moves only 1/(N+1) of the hosts. XXH3-64 is the checksum the seen set already uses
//! (`seen::checksum`), frozen with it: changing either would reassign hosts between shards of a
//! running crawl, so the state directory records N and refuses another.

use crate::seen::checksum::checksum;
use anyhow::{Result, bail};

/// Shard `index` of `count` (0-based), as `--shard K/N` gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

/// The most shards a crawl may have (a stream and a sender thread per shard).
pub const MAX_SHARDS: u32 = 4096;

impl Shard {
    /// Parses `K/N` with 0 ≤ K < N ≤ `MAX_SHARDS`.
    pub fn parse(text: &str) -> Result<Shard> {
        let Some((k, n)) = text.split_once('/') else {
            bail!("--shard {text:?}: expected K/N, such as 2/8 (shard K of N, counted from 0)");
        };
        let (Ok(index), Ok(count)) = (k.trim().parse::<u32>(), n.trim().parse::<u32>()) else {
            bail!("--shard {text:?}: K and N must be whole numbers, such as 2/8");
        };
        if count == 0 || count > MAX_SHARDS {
            bail!("--shard {text:?}: N must be between 1 and {MAX_SHARDS}");
        }
        if index >= count {
            bail!("--shard {text:?}: K counts from 0, so it must be below N ({count})");
        }
        Ok(Shard { index, count })
    }

    /// The shard that owns the host `host_key` (`host:port`).
    pub fn owner(&self, host_key: &str) -> u32 {
        jump_hash(checksum(host_key.as_bytes()), self.count)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Jump consistent hash: the bucket in `0..buckets` of `key` (the paper's Figure 1, verbatim).
pub fn jump_hash(mut key: u64, buckets: u32) -> u32 {
    let (mut b, mut j): (i64, i64) = (-1, 0);
    while j < i64::from(buckets) {
        b = j;
        key = key.wrapping_mul(2_862_933_555_777_941_757).wrapping_add(1);
        j = ((b + 1) as f64 * ((1u64 << 31) as f64 / ((key >> 33) + 1) as f64)) as i64;
    }
    b as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_k_of_n_and_names_bad_input() {
        assert_eq!(Shard::parse("2/8").unwrap(), Shard { index: 2, count: 8 });
        assert_eq!(Shard::parse("0/1").unwrap().to_string(), "0/1");
        for (bad, says) in [
            ("8/8", "below N"),
            ("1/0", "between 1"),
            ("2", "K/N"),
            ("a/4", "whole numbers"),
            ("-1/4", "whole numbers"),
            ("0/5000", "between 1"),
        ] {
            let err = Shard::parse(bad).unwrap_err().to_string();
            assert!(err.contains(says) && err.contains(bad), "{bad}: {err}");
        }
    }

    #[test]
    fn jump_hash_matches_the_papers_reference_values() {
        // Values of an independent transcription of the paper's C++ code (Python, exact
        // integers for the LCG, floats for the jump).
        assert_eq!(jump_hash(0, 1), 0);
        assert_eq!(jump_hash(0, 100), 0);
        assert_eq!(jump_hash(1, 100), 55);
        assert_eq!(jump_hash(0xDEAD_BEEF, 100), 87);
        assert_eq!(jump_hash(123_456_789, 10), 7);
        assert_eq!(jump_hash(u64::MAX, 1000), 313);
    }

    #[test]
    fn hosts_spread_evenly_over_shards() {
        let shard = Shard { index: 0, count: 8 };
        let mut counts = [0u32; 8];
        for i in 0..80_000 {
            counts[shard.owner(&format!("host{i}.test:80")) as usize] += 1;
        }
        // 10,000 expected per shard; a binomial's standard deviation is ~94.
        for (k, &c) in counts.iter().enumerate() {
            assert!(
                (9_600..=10_400).contains(&c),
                "shard {k} got {c}: {counts:?}"
            );
        }
    }

    #[test]
    fn growing_by_one_shard_moves_only_its_share_of_hosts() {
        let hosts: Vec<String> = (0..20_000).map(|i| format!("h{i}.test:8080")).collect();
        let four = Shard { index: 0, count: 4 };
        let five = Shard { index: 0, count: 5 };
        let moved: Vec<&String> = hosts
            .iter()
            .filter(|h| four.owner(h) != five.owner(h))
            .collect();
        // Every moved host went to the new shard, and about a fifth of them moved.
        assert!(moved.iter().all(|h| five.owner(h) == 4));
        assert!((3_600..=4_400).contains(&moved.len()), "{}", moved.len());
    }

    #[test]
    fn the_owner_is_stable_and_depends_on_the_port() {
        let shard = Shard { index: 1, count: 4 };
        // Frozen: a change here reassigns the hosts of every sharded crawl in progress.
        let owners: Vec<u32> = ["a.test:80", "a.test:81", "127.0.0.1:8080", "[::1]:443"]
            .iter()
            .map(|h| shard.owner(h))
            .collect();
        assert_eq!(owners, FROZEN_OWNERS);
    }

    const FROZEN_OWNERS: [u32; 4] = [1, 2, 0, 2];
}
