//! The cache of URLs recently sent to other shards (Broder, Najork and Wiener 2003, §7: a
//! cache of the URLs a crawler sent to its peers removes most of the traffic between them,
//! since popular URLs are linked again and again from many pages).
//!
//! It is the seen set's CLOCK cache (`seen::clock`) keyed by the URL's checksum, with counts of
//! hits (a URL not sent again) and misses (a URL appended to its destination's outbox). A hit
//! is only ever an optimisation: the owning shard's DUE would drop the duplicate anyway, so the
//! cache starts empty on a resume and forgets by CLOCK without loss.

use crate::seen::clock::ClockCache;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Entries of the sent cache by default (8 bytes and an index cell each: about 2 MiB).
pub const SENT_CACHE_ENTRIES: usize = 1 << 17;

/// Recently sent URL checksums, shared by the workers.
pub struct SentCache {
    clock: Mutex<ClockCache>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl SentCache {
    pub fn new(entries: usize) -> SentCache {
        SentCache {
            clock: Mutex::new(ClockCache::new(entries)),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// True when `key` was sent recently (do not send it again); otherwise remembers it as sent
    /// and returns false.
    pub fn already_sent(&self, key: u64) -> bool {
        let hit = self.clock.lock().unwrap().check_and_insert(key);
        let counter = if hit { &self.hits } else { &self.misses };
        counter.fetch_add(1, Ordering::Relaxed);
        hit
    }

    /// (hits, misses) so far.
    pub fn counts(&self) -> (u64, u64) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_sent_once_is_not_sent_again_while_cached() {
        let cache = SentCache::new(2);
        assert!(!cache.already_sent(1));
        assert!(cache.already_sent(1));
        assert!(!cache.already_sent(2));
        assert_eq!(cache.counts(), (1, 2));
    }

    #[test]
    fn a_url_evicted_by_clock_is_sent_again() {
        let cache = SentCache::new(2);
        for key in [1, 2, 3] {
            assert!(!cache.already_sent(key));
        }
        // 1 was the first unmarked entry under the hand: evicted by 3.
        assert!(!cache.already_sent(1));
        assert_eq!(cache.counts(), (0, 4));
    }
}
