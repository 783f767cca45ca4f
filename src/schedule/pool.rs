//! How many workers a crawl runs: `-j N` starts N and no more; without it the pool is elastic.
//!
//! Each worker does one blocking request at a time, so the workers bound the requests in
//! flight: at 100 ms a response, 16 workers cannot fetch more than 160 pages/s whatever the
//! web. An elastic pool starts `START` workers, and the dispatcher asks for another whenever a
//! host is ready (or due with no worker watching the clock) while every worker is busy
//! (`Dispatcher::workers_wanted`), up to `--max-connections`. An idle worker parks on the
//! dispatcher's condvar and costs its stack and nothing else; the workers that were all parked
//! at once over a few seconds were spare, and half of them leave, down to `START`
//! (`Dispatcher::retire_idle`), so memory falls back after a burst (every host's robots.txt
//! at the start of a large crawl).
//!
//! Invariants: the workers running never exceed `Workers::max` nor, in an elastic pool, fall
//! below `Workers::start`; with `-j N`, `start == max` and no worker is ever added or leaves.

use crate::fetch::client::RESERVED_FILES;

/// The workers an elastic pool starts with.
pub const START: usize = 8;

/// The most connections `--max-connections` defaults to, however large the machine.
pub const MAX_CONNECTIONS: usize = 4096;

/// The fewest connections `--max-connections` defaults to, however small the machine.
pub const MIN_CONNECTIONS: usize = 16;

/// Memory budgeted per connection for the default `--max-connections`: its worker's stack
/// (touched, not reserved), its read buffer and TLS state, the page it holds and the records
/// queued for the archive. Measured well under this; the margin covers large pages.
pub const CONNECTION_MEMORY: u64 = 1 << 20;

/// A worker thread's stack. The deepest paths (a TLS handshake, the HTML tokenizer, a gzip
/// body) use a small part of it; the default 2 MiB would reserve 8 GiB of address space at
/// 4,096 workers.
pub const WORKER_STACK: usize = 512 * 1024;

/// The worker pool: `start` workers at first, at most `max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Workers {
    pub start: usize,
    pub max: usize,
}

impl Workers {
    /// `-j N`: N workers from the start, never more.
    pub fn fixed(n: usize) -> Workers {
        Workers { start: n, max: n }
    }

    /// No `-j`: `START` workers, more as work needs them, up to `max`.
    pub fn elastic(max: usize) -> Workers {
        Workers {
            start: START.min(max),
            max,
        }
    }

    /// Whether workers are added while the crawl runs.
    pub fn is_elastic(&self) -> bool {
        self.max > self.start
    }
}

/// The default `--max-connections`: min((open files − 256) / 3, MemAvailable / 4 / 1 MiB),
/// within [16, 4096]. A connection holds a socket in use and the idle pool may keep two more
/// per worker (`fetch::client::idle_hosts`); a quarter of the memory available at the start
/// is left to connections, at `CONNECTION_MEMORY` each. Unknown limits count as unlimited.
pub fn default_max_connections(open_files: Option<u64>, available_memory: Option<u64>) -> usize {
    let by_files = open_files.map_or(u64::MAX, |n| n.saturating_sub(RESERVED_FILES) / 3);
    let by_memory = available_memory.map_or(u64::MAX, |bytes| bytes / 4 / CONNECTION_MEMORY);
    let cap = by_files.min(by_memory).min(MAX_CONNECTIONS as u64) as usize;
    cap.max(MIN_CONNECTIONS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_cap_follows_the_tighter_of_files_and_memory_within_bounds() {
        assert_eq!(default_max_connections(None, None), MAX_CONNECTIONS);
        assert_eq!(default_max_connections(Some(1024), None), 256);
        assert_eq!(default_max_connections(Some(1 << 20), Some(512 << 20)), 128);
        assert_eq!(
            default_max_connections(Some(100), Some(1 << 40)),
            MIN_CONNECTIONS
        );
        assert_eq!(
            default_max_connections(Some(1 << 20), Some(1 << 40)),
            MAX_CONNECTIONS
        );
    }

    #[test]
    fn fixed_pools_never_grow() {
        assert!(!Workers::fixed(16).is_elastic());
        assert!(Workers::elastic(100).is_elastic());
        assert_eq!(Workers::elastic(4), Workers { start: 4, max: 4 });
    }
}
